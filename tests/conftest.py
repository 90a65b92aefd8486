"""Shared test fixtures: the bundled reference data (tests/data), the large shared datasets
(../shared/data, tests marked ``shared_data``) and the S002 example table."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTDATA = ROOT / "tests" / "data"
# Small public data and the sdcMicro reference outputs, copied into the repository (origin and
# licence in tests/data/README.md): a clone of the repository alone runs these tests.
DATA = TESTDATA
REFERENCE = TESTDATA / "reference" / "sdcmicro"
# Large public data that stays outside the repository; tests that read it are marked
# ``shared_data`` and skipped, with the reason shown, when the folder is absent.
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"


def _java_found() -> bool:
    from sdckit.engines.spark import _java_problem  # the engine's own check of JAVA_HOME and PATH

    return _java_problem() is None


def pytest_collection_modifyitems(config, items):
    """Skip ``shared_data`` tests, visibly, when ../shared/data is not beside the repository, and
    ``spark`` tests when no Java runtime is found (CI installs one)."""
    skips = {}
    if not SHARED_DATA.is_dir():
        skips["shared_data"] = pytest.mark.skip(
            reason=f"needs the large shared datasets in {SHARED_DATA} (not in this clone)"
        )
    if not _java_found():
        skips["spark"] = pytest.mark.skip(
            reason="needs a Java runtime for Spark (Debian: apt-get install openjdk-17-jre-headless)"
        )
    for item in items:
        for marker, skip in skips.items():
            if marker in item.keywords:
                item.add_marker(skip)


def read_csv_exactly(path):
    """A CSV file as a pandas frame, read as the command line reads it (Polars): pandas before
    3.0 parses some decimals one unit in the last place off (11.111111111111111), so a file
    written from its frame would differ from the command line's."""
    return pl.read_csv(path).to_pandas()


def shared_file(*parts: str) -> Path:
    """A file under ../shared/data. Only for tests marked ``shared_data``: when the folder is
    present the file must be there (a missing file is a failure, not a skip)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"shared data file {path} is missing")
    return path


def load_reference(name: str) -> dict:
    """A reference JSON file (sdcMicro 5.8.1 outputs, see tests/data/README.md). A missing file is
    a failure: no reference test may disappear silently."""
    path = REFERENCE / name
    if not path.exists():
        raise FileNotFoundError(f"reference file {path} is missing from the repository")
    return json.loads(path.read_text())


def reference_cases(name: str) -> list[dict]:
    """The ``cases`` of a reference file (never empty: an empty list would skip silently)."""
    cases = load_reference(name)["cases"]
    if not cases:
        raise AssertionError(f"reference file {name} has no cases")
    return cases


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
                "Secondary incomplete",
                "Secondary incomplete",
                "Primary incomplete",
                "Secondary complete",
                "Secondary complete",
                "Secondary complete",
                "Primary complete",
                "Post-secondary",
                "Secondary incomplete",
                "Secondary incomplete",
            ],
            "Labor": [
                "Employed",
                "Employed",
                "Non-LF",
                "Employed",
                "Unemployed",
                "Employed",
                "Non-LF",
                "Unemployed",
                "Non-LF",
                "Non-LF",
            ],
            "w": [180.0, 180, 215, 76, 186, 76, 180, 215, 186, 76],
            "Health": ["yes", "yes", "yes", "yes", "yes", "no", "no", "yes", "no", "yes"],
        }
    )


S002_KEYS = ["Residence", "Gender", "Education", "Labor"]


@pytest.fixture(autouse=True)
def _cli_inputs_unchanged(monkeypatch):
    """Every CLI command run by any test: its input files have the same checksum afterwards
    (the command line never writes over the microdata it reads)."""

    import sdckit.cli as cli

    seen: dict = {}
    original = cli.check_output_paths

    def recording(args):
        for _, path in cli.input_files(args):
            if Path(path).is_file():  # by its absolute path: a test may change the current folder
                seen[Path(path).resolve()] = file_digest(path)
        return original(args)

    monkeypatch.setattr(cli, "check_output_paths", recording)
    yield
    for path, digest in seen.items():
        assert file_digest(path) == digest, f"{path} changed"


@pytest.fixture
def data_csv(tmp_path) -> Path:
    """The S002 example table written as a CSV file (for command-line tests)."""
    path = tmp_path / "data.csv"
    s002_table().write_csv(path)
    return path


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes: a file left untouched has the same digest."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def survey_table(n: int, seed: int, household_size: int) -> pl.DataFrame:
    """A small seeded survey for property and bad-input tests: keys a, b, c, a stratum s, a
    weight w, households hh of ``household_size`` consecutive records, a region constant within
    each household, and two continuous variables x, y."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "a": rng.integers(0, 3, n),
            "b": rng.integers(0, 3, n),
            "c": rng.integers(0, 2, n),
            "s": rng.integers(0, 4, n),
            "w": rng.uniform(5, 20, n),
            "hh": np.arange(n) // household_size,
            "region": np.arange(n) // household_size % 3,
            "x": rng.normal(50, 10, n),
            "y": rng.normal(20, 5, n),
        }
    )
