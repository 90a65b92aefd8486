"""Shared test fixtures: paths to ../shared (data, reference outputs) and the S002 example table."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA = SHARED / "data"
REFERENCE = SHARED / "reference" / "sdcmicro"


def load_reference(name: str) -> dict:
    """Cases of a reference JSON file (sdcMicro 5.8.1 outputs, see shared/reference/sdcmicro/README.md)."""
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"reference file {path} not available")
    return json.loads(path.read_text())


def reference_cases(name: str) -> list[dict]:
    path = REFERENCE / name
    if not path.exists():
        return []
    return json.loads(path.read_text())["cases"]


@pytest.fixture
def s002() -> pl.DataFrame:
    """The 10-record reference table of spec 0.5 (S002 tables 4.1/4.3/4.4/4.5)."""
    return s002_table()


def as_backend(frame: pl.DataFrame, backend: str):
    """The Polars ``frame`` as a ``"polars"``, ``"pandas"`` or ``"pyarrow"`` table (skips the test
    when that library is not installed)."""
    if backend == "polars":
        return frame
    pytest.importorskip(backend)
    if backend == "pandas":
        return frame.to_pandas()
    if backend == "pyarrow":
        return frame.to_arrow()
    raise AssertionError(backend)


def s002_table() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "Residence": ["Urban", "Urban", "Urban", "Urban", "Rural", "Urban", "Urban", "Urban", "Urban", "Urban"],
            "Gender": ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male", "Female", "Female"],
            "Education": [
                "Secondary incomplete", "Secondary incomplete", "Primary incomplete", "Secondary complete",
                "Secondary complete", "Secondary complete", "Primary complete", "Post-secondary",
                "Secondary incomplete", "Secondary incomplete",
            ],
            "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed", "Non-LF", "Unemployed",
                      "Non-LF", "Non-LF"],
            "w": [180.0, 180, 215, 76, 186, 76, 180, 215, 186, 76],
            "Health": ["yes", "yes", "yes", "yes", "yes", "no", "no", "yes", "no", "yes"],
        }
    )


S002_KEYS = ["Residence", "Gender", "Education", "Labor"]
