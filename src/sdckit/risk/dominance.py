"""``dominance_rules``: the sensitivity rules of magnitude tables of business microdata, the
(n, k)-dominance rule and the p % rule, per cell of a key combination.

Layout: :func:`_validated` checks everything once and reads the arrays through the engine;
the rules are the kernels of :mod:`sdckit._core.dominance`; the result class is in
:mod:`sdckit.results.dominance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core import dominance as K
from .._core.grouping import group_rows
from .._declare import Param, declare
from .._validation import as_missing_codes, as_name_list, raise_problems
from ..engines import in_memory_engine, local_records
from ..results.dominance import DominanceResult
from ..scenario import accepts_scenario

__all__ = ["DominanceResult", "dominance_rules"]


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", role="numeric_keys"),
    Param("n_largest", "int"),
    Param("dominance_percent", "number"),
    Param("p_percent", "number"),
    Param("missing"),
    inputs=("data",),
    excluded="a rule for tables of magnitudes, not for microdata releases",
)
def dominance_rules(
    data,
    keys,
    variables,
    *,
    n_largest: int = 2,
    dominance_percent: float = 85.0,
    p_percent: float = 10.0,
    missing=None,
    engine=None,
) -> DominanceResult:
    r"""Sensitive cells of the magnitude tables of ``variables`` by the combinations of ``keys``.

    A table of enterprises' turnover by activity and region publishes, per cell c, the total
    :math:`T_c = \sum_i x_i` of its contributions :math:`x_1 \ge x_2 \ge \dots \ge 0`. A cell
    whose total is dominated by a few enterprises discloses them:

    * **(n, k)-dominance**: c is sensitive when the ``n_largest`` largest contributions hold
      more than ``dominance_percent`` % of the total,

      .. math:: \sum_{i=1}^{n} x_i > \frac{k}{100}\, T_c;

    * **p % rule**: c is sensitive when the second largest contributor, subtracting its own
      value from the published total, learns the largest one within ``p_percent`` %,

      .. math:: T_c - x_1 - x_2 < \frac{p}{100}\, x_1 .

    A cell of one or two contributors with a positive total is sensitive under the p % rule;
    a cell whose total is 0 under neither.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        Records of the contributors (one record per enterprise).
    keys : str or list of str
        Categorical variables whose combinations are the cells (activity, region, size class).
    variables : str or list of str
        Numeric variables whose totals are published (each its own table): values >= 0.
    n_largest : int, default 2
        n of the (n, k)-dominance rule.
    dominance_percent : float, default 85
        k of the (n, k)-dominance rule, a percentage in [0, 100].
    p_percent : float, default 10
        p of the p % rule, a percentage >= 0.
    missing : value or list of values, optional
        Codes to treat as missing in the key columns (e.g. ``-999``) besides null and NaN.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused.

    Returns
    -------
    DominanceResult
        Per cell the number of contributors and each rule's verdict; counts per variable.
        No contribution, total or share is kept.

    Raises
    ------
    SdcError
        A column absent (:class:`MissingColumnError`), a non-numeric variable, a negative or
        infinite value, a parameter out of its range.

    Notes
    -----
    A record with a missing key value is in no cell; a record with a missing value does not
    contribute to that variable's table (both counted in ``n_excluded``). Each record is one
    contributor: group the records of one enterprise group first when its units must count
    as one. Sampling weights are not used. Cost: one sort of the records per variable.

    References
    ----------
    Hundepool, Domingo-Ferrer, Franconi, Giessing, Schulte Nordholt, Spicer & de Wolf (2012),
    Statistical Disclosure Control, Wiley, section 4.2 (sensitivity rules for magnitude
    tables); Mlodak, Pietrzak & Jozefowski (2022), on the internal risk of business microdata.
    """
    eng = in_memory_engine(engine, "dominance_rules", data)
    inp = _validated(data, keys, variables, n_largest, dominance_percent, p_percent, missing, eng)
    cells: list[dict] = []
    excluded: dict[str, int] = {}
    for j, v in enumerate(inp.variables):
        x = inp.X[:, j]
        use = inp.complete & ~np.isnan(x)
        excluded[v] = int(inp.n - use.sum())
        cells += _cells(inp, v, inp.cell[use], x[use])
    return DominanceResult(
        n=inp.n,
        keys=tuple(inp.keys),
        variables=tuple(inp.variables),
        n_largest=inp.n_largest,
        dominance_percent=inp.dominance_percent,
        p_percent=inp.p_percent,
        cells=tuple(cells),
        n_excluded=excluded,
        backend=inp.backend,
        records=local_records(),
    )


@dataclass(frozen=True)
class _Input:
    """The file read once: each record's cell (complete keys only) and the values."""

    n: int
    keys: list
    variables: list
    cell: np.ndarray
    complete: np.ndarray
    cell_labels: list
    X: np.ndarray
    n_largest: int
    dominance_percent: float
    p_percent: float
    backend: str


def _validated(data, keys, variables, n_largest, dominance_percent, p_percent, missing, eng) -> _Input:
    params = (int(n_largest), float(dominance_percent), float(p_percent))  # checked by the declaration
    key_names = as_name_list(keys, "keys")
    names = as_name_list(variables, "variables")
    table = eng.table(data, "data")
    table.require(key_names, "keys")
    table.require(names, "variables")
    raise_problems(
        [
            f"variables: column {v} has type {table.dtype_name(v)}; expected numbers (contributions)"
            for v in names
            if not table.is_numeric(v)
        ]
    )
    X = np.asarray(table.floats(names), dtype=float).reshape(table.n, len(names))
    raise_problems(_value_problems(X, names))
    enc = eng.encode(table, key_names, as_missing_codes(missing))
    codes = np.asarray(enc.codes)
    complete = np.asarray((codes >= 0).all(axis=1), dtype=bool)
    cell = np.full(table.n, -1, dtype=np.int64)
    ids, n_cells = group_rows(codes[complete].astype(np.int64))
    cell[complete] = ids
    first_row = np.zeros(n_cells, dtype=np.int64)
    first_row[ids[::-1]] = np.arange(ids.size)[::-1]  # a record of each cell (its codes)
    labels = [eng.label_values(enc.labels[j]) for j in range(len(key_names))]
    cc = codes[complete]
    cell_labels = [{k: _text(labels[j][cc[r, j]]) for j, k in enumerate(key_names)} for r in first_row]
    return _Input(table.n, key_names, names, cell, complete, cell_labels, X, *params, table.backend)


def _value_problems(X, names) -> list[str]:
    """Infinite or negative contributions (counts only, never values)."""
    out = []
    for j, v in enumerate(names):
        x = X[:, j]
        if k := int(np.isinf(x).sum()):
            out.append(f"variables: column {v} has {k} infinite value(s); expected finite contributions >= 0")
        if k := int((x < 0).sum()):
            out.append(
                f"variables: column {v} has {k} negative value(s); the dominance rules need contributions >= 0 "
                "(tabulate a variable such as profit by its absolute value or its positive part)"
            )
    return out


def _text(label) -> str:
    """A category label as text (an integer-valued float as an integer: 3.0 -> "3")."""
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


def _cells(inp: _Input, variable: str, cell: np.ndarray, x: np.ndarray) -> list[dict]:
    """The cells of one variable's table, in key order (cells without a contributor of this
    variable are left out)."""
    c = K.cell_contributions(cell, x, len(inp.cell_labels), inp.n_largest)
    dom = K.dominance_sensitive(c, inp.dominance_percent)
    pp = K.p_percent_sensitive(c, inp.p_percent)
    return [
        {
            "variable": variable,
            "cell": dict(inp.cell_labels[i]),
            "n_contributors": int(c.n_contributors[i]),
            "dominance": bool(dom[i]),
            "p_percent": bool(pp[i]),
            "sensitive": bool(dom[i] or pp[i]),
        }
        for i in np.flatnonzero(c.n_contributors > 0)
    ]
