"""Validation and encoding shared by the public measures (done once, at the boundary)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._encode import EncodedKeys
from ._frame import Table
from .scenario import Scenario

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True)
class Prepared:
    table: Table
    scenario: Scenario
    keys: EncodedKeys
    weights: np.ndarray | None


def prepare(data, keys, *, weight=None, sensitive=None, household=None, strata=None, missing=None,
            allow_degenerate_keys: bool = False, zero_weight: str = "error") -> Prepared:
    """Validate the roles against ``data`` (every problem in one error) and encode the keys."""
    sc = Scenario(keys=keys, weight=weight, sensitive=sensitive or (), household=household,
                  strata=strata or (), missing=missing)
    table, enc = sc._validate(data, allow_degenerate_keys=allow_degenerate_keys, zero_weight=zero_weight)
    w = None
    if sc.weight is not None:
        w = table.column(sc.weight).cast(float).to_numpy().astype(float, copy=False)
    return Prepared(table, sc, enc, w)
