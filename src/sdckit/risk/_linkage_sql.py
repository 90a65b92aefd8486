"""The queries of :func:`sdckit.external_risk` on an engine that keeps the records: the
identifiers of the two files compared by joins in the engine.

Each function builds one query from the engine's dialect (:class:`~sdckit.engines.base.SqlDialect`)
and the names of the tables; the engine runs it (``engine.run(build, *args)``) and returns the
small result. Nothing here names or imports an engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..engines.base import Query, SqlDialect

__all__ = ["id_matches", "id_partners", "n_distinct"]


def n_distinct(d: SqlDialect, table, column: str) -> Query:
    """Distinct non-null values of ``column`` (one row, ``n``)."""
    return d.query(f"SELECT count(DISTINCT {d.quote(column)}) AS n FROM {d.view(table)}")


def _id_expr(d: SqlDialect, left, right, column: str, alias: str) -> str:
    """``column`` in a type both tables share (numbers as DOUBLE, else text)."""
    q = f"{alias}.{d.quote(column)}"
    both = left.is_numeric(column) and right.is_numeric(column)
    return f"CAST({q} AS DOUBLE)" if both else f"CAST({q} AS {d.text_type()})"


def id_matches(d: SqlDialect, left, right, column: str, pos_left, pos_right) -> Query:
    """How many of the record pairs (``pos_left[i]`` of ``left``, ``pos_right[i]`` of
    ``right``; input positions) have the same identifier ``column`` (one row, ``n``)."""
    pairs = d.fresh_name("pairs")
    ida, idd = _id_expr(d, right, left, column, "a"), _id_expr(d, right, left, column, "d")
    sql = (
        f"SELECT count(*) AS n FROM {pairs} x JOIN {d.numbered(left)} a ON a.__rec = x.a "
        f"JOIN {d.numbered(right)} d ON d.__rec = x.d WHERE {ida} = {idd}"
    )
    return d.query(sql, {pairs: {"a": np.asarray(pos_left), "d": np.asarray(pos_right)}})


def id_partners(d: SqlDialect, comp_left, comp_right, column: str) -> Query:
    """The records of ``comp_left``'s table and ``comp_right``'s with the same identifier
    ``column``, counted per pair of compressed-table rows (``ra``: row of ``comp_left``,
    ``rd``: row of ``comp_right``, ``n``: records)."""
    tl, tr = d.source(comp_left), d.source(comp_right)
    ida, idd = _id_expr(d, tr, tl, column, "a"), _id_expr(d, tr, tl, column, "d")
    return d.query(
        f"SELECT pa.__row AS ra, pd.__row AS rd, count(*) AS n FROM {d.view(tl)} a JOIN {d.view(tr)} d ON {ida} = {idd} "
        f"JOIN {d.row_table(comp_left)} pa ON {d.join_rows(comp_left, 'a', 'pa')} "
        f"JOIN {d.row_table(comp_right)} pd ON {d.join_rows(comp_right, 'd', 'pd')} GROUP BY 1, 2"
    )
