"""Bundled example data.

``survey.csv`` is a fully synthetic household survey sample (1,915 persons in 800
households, made by ``tools/make_example.py`` with a fixed seed): no real person is in it.
Columns: household, region, sex, age_group, education, econ_status, citizenship (key
variables), health (sensitive), income, weight (design weight).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["example_path", "load_example", "EXAMPLE_KEYS"]

EXAMPLE_KEYS = ("region", "sex", "age_group", "education", "econ_status", "citizenship")


def example_path() -> Path:
    """Path of the bundled example CSV file."""
    return Path(str(resources.files(__package__).joinpath("survey.csv")))


def load_example():
    """The bundled example survey sample as a Polars DataFrame."""
    import polars as pl

    return pl.read_csv(example_path())
