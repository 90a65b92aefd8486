"""The queries of the household risk (:func:`sdckit.individual_risk` with ``household=``) on an
engine that keeps the records: the households are not small, so the engine joins each record's
risk (one value per row of the compressed table) to the records, sums ``log(1 - r)`` per
household and returns aggregates only.

Each function builds one query from the engine's dialect (:class:`~sdckit.engines.base.SqlDialect`)
and the names of the tables; the engine runs it (``engine.run(build, *args)``). Nothing here
names or imports an engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..engines.base import Query, SqlDialect

__all__ = ["household_aggregates", "household_records", "household_risk", "household_sizes", "household_table"]
__all__ += ["key_conflicts"]

#: the column of the household table that holds r^h
RISK_COLUMN = "hrisk"
#: the quantiles of the household risk over households
QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)


def household_risk(d: SqlDialect, acc: str = "acc") -> str:
    """r^h = 1 - exp(acc), acc = sum log(1 - r_i) over the household."""
    return d.one_minus_exp(acc)


def household_records(d: SqlDialect, comp, household: str, row_logs: np.ndarray) -> Query:
    """Kept in the engine: per record its household ``h``, whether the id is missing
    (``hmiss``), its row ``r`` of the compressed table and log(1 - r_i) (``l``)."""
    src, q = d.source(comp), d.quote
    vals = d.fresh_name("values")
    h = f"s.{q(household)}"
    miss = f"({h} IS NULL OR isnan({h}))" if src.kind(household) == "float" else f"({h} IS NULL)"
    sql = (
        f"SELECT {h} AS h, {miss} AS hmiss, p.__row AS r, v.v0 AS l FROM {d.view(src)} s "
        f"JOIN {d.row_table(comp)} p ON {d.join_rows(comp)} JOIN {vals} v ON v.__row = p.__row"
    )
    uploads = {vals: {"__row": np.arange(len(row_logs), dtype=np.int64), "v0": np.asarray(row_logs)}}
    return d.query(sql, uploads, into=d.fresh_name("hhrec"))


def household_table(d: SqlDialect, rec: str) -> Query:
    """Kept in the engine: per household ``h``, its ``size``, ``acc`` = sum log(1 - r_i) and its
    risk ``hrisk`` (:data:`RISK_COLUMN`); a record without a household id is a household of one
    (``h`` NULL)."""
    sql = (
        f"SELECT h, size, acc, {household_risk(d)} AS {RISK_COLUMN} FROM ("
        f"SELECT h, count(*) AS size, sum(l) AS acc FROM {rec} WHERE NOT hmiss GROUP BY h "
        f"UNION ALL SELECT NULL AS h, 1 AS size, l AS acc FROM {rec} WHERE hmiss) t"
    )
    return d.query(sql, into=d.fresh_name("hh"))


def household_aggregates(d: SqlDialect, hh: str) -> Query:
    """One row: households ``g``, ER^h ``er``, the mean and quantiles ``q`` of r^h over
    households, and the records without a household id ``nmiss``."""
    risk = RISK_COLUMN
    return d.query(
        f"SELECT count(*) AS g, sum(size * {risk}) AS er, avg({risk}) AS mean, "
        f"{d.quantiles_sql(risk, QUANTILES)} AS q, "
        f"sum(CASE WHEN h IS NULL THEN 1 ELSE 0 END) AS nmiss FROM {hh}"
    )


def household_sizes(d: SqlDialect, rec: str, hh: str) -> Query:
    """The records ``n`` per row ``r`` of the compressed table and household ``size`` (the
    household rule of the threshold needs them)."""
    return d.query(
        f"SELECT r.r AS r, CASE WHEN r.hmiss THEN 1 ELSE g.size END AS size, count(*) AS n FROM {rec} r "
        f"LEFT JOIN (SELECT h, size FROM {hh} WHERE h IS NOT NULL) g ON g.h = r.h AND NOT r.hmiss GROUP BY 1, 2"
    )


def key_conflicts(d: SqlDialect, table, household: str, key: str, missing=()) -> Query:
    """One row, ``n``: households (with an id) whose members have more than one observed value
    of ``key`` (missing values, null/NaN and the ``missing`` codes of the column's type, ignored)."""
    q = d.quote
    kmiss = d.missing(table, key)
    codes = [d.literal(v, table.kind(key)) for v in missing or ()]
    codes = [c for c in codes if c is not None]
    if codes:
        kmiss = f"({kmiss} OR {q(key)} IN ({', '.join(codes)}))"
    return d.query(
        f"SELECT count(*) AS n FROM (SELECT {q(household)} FROM {d.view(table)} WHERE NOT {d.missing(table, household)} "
        f"AND NOT {kmiss} GROUP BY {q(household)} HAVING count(DISTINCT {q(key)}) > 1) t"
    )
