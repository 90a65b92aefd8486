"""The household risk on an engine that keeps the records: the queries of
``_households_sql.py`` run by the engine, their aggregates gathered in the engine's
:class:`~sdckit.engines.HouseholdStore` (the per-household table stays in the engine, for the
threshold and the per-record output)."""

from __future__ import annotations

import numpy as np

from ..engines import HouseholdStore
from . import _households_sql as sql

__all__ = ["household_key_conflicts", "household_store"]


def household_store(eng, comp, household: str, row_risk: np.ndarray) -> HouseholdStore:
    """Household risk r^h_g = 1 - prod_{i in g} (1 - r_i) in the engine ``eng``: the aggregates
    (households, ER^h, quantiles and mean over households) and the distinct (row, household
    size) counts that the household rule of the threshold needs."""
    with np.errstate(divide="ignore"):
        logs = np.log1p(-np.asarray(row_risk, dtype=float))
    logs[np.isneginf(logs)] = -1e6  # r = 1: exp(sum) underflows to 0, r^h = 1 (exactly, as in memory)
    rec = eng.run(sql.household_records, comp, household, logs)
    hh = eng.run(sql.household_table, rec)
    agg = {k: v[0] for k, v in eng.run(sql.household_aggregates, hh).items()}
    sizes = eng.run(sql.household_sizes, rec, hh)
    return HouseholdStore(
        engine=eng,
        table=hh,
        risk_sql=sql.RISK_COLUMN,
        n_households=int(agg["g"]),
        expected_reidentifications=float(agg["er"] or 0.0),
        mean=float(agg["mean"]) if agg["g"] else None,
        quantiles=tuple(float(v) for v in agg["q"]) if agg["g"] else None,
        n_missing=int(agg["nmiss"] or 0),
        row_sizes=(
            np.asarray(sizes["r"], dtype=np.int64),
            np.asarray(sizes["size"], dtype=float),
            np.asarray(sizes["n"], dtype=np.int64),
        ),
        records_table=rec,
        household_column=household,
        row_logs=logs,
    )


def household_key_conflicts(eng, table, household: str, key: str, missing=()) -> int:
    """Households whose members disagree on the household key ``key``, counted in the engine."""
    return int(eng.run(sql.key_conflicts, table, household, key, missing)["n"][0] or 0)
