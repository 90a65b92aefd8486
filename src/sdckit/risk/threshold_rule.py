"""The mu-ARGUS threshold rule: combinations of key variables, each with its own threshold."""

from __future__ import annotations

import math

import numpy as np

from .._core.threshold_rule import all_combinations, threshold_tables
from .._declare import Param, declare
from .._errors import SdcError
from .._prepare import Prepared, prepare
from .._progress import step
from .._validation import as_name_list, check_rule
from ..results.threshold_rule import ThresholdRuleResult
from ..scenario import accepts_scenario
from ._suda_access import label_values
from .frequencies import records_fields

__all__ = ["ThresholdRuleResult", "threshold_rule"]

#: how a missing key value is counted: out of the combination's cells, or as a category
NA_RULES = ("exclude", "own_category")

#: the most combinations one call inspects (all combinations of 20 keys up to dimension 5 are
#: 21,699; more is almost always a mistake in ``max_dimension``)
_MAX_COMBINATIONS = 100_000


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("combinations", "column_sets"),
    Param("max_dimension", "int"),
    Param("frequency_threshold", "numbers"),
    Param("missing"),
    Param("na_rule", "choice", choices=NA_RULES),
    Param("allow_degenerate_keys"),
    out_of_core=True,
    excluded="a rule for tables of counts, with thresholds the user sets",
)
def threshold_rule(
    data,
    keys,
    *,
    combinations=None,
    max_dimension: int | None = None,
    frequency_threshold=1,
    missing=None,
    na_rule: str = "exclude",
    allow_degenerate_keys: bool = False,
    engine=None,
) -> ThresholdRuleResult:
    r"""The mu-ARGUS threshold rule on combinations of key variables, each with its threshold.

    A combination C of key variables splits the records into cells (one value on each variable
    of C). With the sample frequency f_c of cell c and the threshold t_C of the combination,

    .. math:: c \text{ is unsafe} \iff f_c \le t_C,

    (a key that occurs more often than the threshold is safe), and a record is unsafe in C when
    its cell is. The combinations are given one by one (``combinations``, each with its own
    threshold) or generated as every combination of the keys of size 1 to ``max_dimension``
    (mu-ARGUS's automatic specification, with one threshold per dimension). The result counts
    the unsafe cells and records of every combination, per dimension, and per category of each
    variable (mu-ARGUS's table of unsafe combinations).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables; every combination is drawn from them.
    combinations : list of lists of str, optional
        The key combinations to inspect (mu-ARGUS's user-specified tables). Default: the keys
        together, unless ``max_dimension`` is given.
    max_dimension : int, optional
        Inspect every combination of the keys of 1 to ``max_dimension`` variables instead.
    frequency_threshold : int or list of int, default 1
        The frequency at or below which a cell is unsafe: one for every combination, or one per
        combination (with ``combinations``) or per dimension 1..``max_dimension`` (with
        ``max_dimension``).
    missing : value or list of values, optional
        Extra values to treat as missing (e.g. ``-999``).
    na_rule : {"exclude", "own_category"}, default "exclude"
        ``"exclude"``: a record missing on a variable of a combination is in no cell of it
        (neither counted nor unsafe there). ``"own_category"``: a missing value is one more
        category, as in sdcMicro's ``riskyCells`` (its cells are counted and can be unsafe; they
        are left out of ``unsafe_categories``).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`frequencies`): DuckDB or Spark return the
        distinct key patterns with their counts, and the cells are counted on those.

    Returns
    -------
    ThresholdRuleResult

    Notes
    -----
    With ``na_rule="own_category"`` the unsafe cells per combination are those of sdcMicro's
    ``riskyCells`` (``maxDim``, one ``threshold`` per dimension). Frequencies are unweighted
    sample counts, as in mu-ARGUS's threshold rule (the individual
    risk, :func:`individual_risk`, is the weighted model). :func:`k_anonymity` with k = t + 1 on
    one combination flags the same records (f < k iff f <= t), except that k-anonymity matches
    a missing value with every category while here it takes the record out of the cell count.

    References
    ----------
    Hundepool, A. et al. (2012), *Statistical Disclosure Control*, Wiley, section 3.3 (the ARGUS
    threshold rule); de Wolf, P.-P. et al. (2014), *mu-ARGUS version 5.1 user's manual*,
    Statistics Netherlands (specifying combinations and the unsafe-combinations table).
    """
    prep = prepare(data, keys, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine)
    names = prep.keys.names
    combos, thresholds = _combinations(names, combinations, max_dimension, frequency_threshold)
    step("counting the cells of every combination")
    codes, cards = prep.keys.codes, tuple(int(c) for c in prep.keys.cardinalities)
    if na_rule == "own_category":  # missing -> one more code per variable, after the labels
        codes = np.where(codes < 0, np.asarray(cards, dtype=codes.dtype), codes)
        cards = tuple(c + 1 for c in cards)
    tables = threshold_tables(codes, cards, combos, thresholds, multiplicity=prep.counts)
    return ThresholdRuleResult(
        keys=tuple(names),
        combinations=tuple(tuple(names[j] for j in c) for c in combos),
        thresholds=tuple(thresholds),
        n_cells=tuple(int(x) for x in tables.n_cells),
        n_unsafe_cells=tuple(int(x) for x in tables.n_unsafe_cells),
        n_unsafe_records=tuple(int(x) for x in tables.n_unsafe_records),
        unsafe_categories=_category_table(prep, tables.category_counts),
        n_unsafe_combinations=tables.n_unsafe,
        min_unsafe_dimension=tables.min_dimension,
        unsafe_by_dimension=tables.unsafe_by_dimension,
        n=prep.n,
        na_rule=na_rule,
        backend=prep.table.backend,
        row_index=prep.table.index,
        **records_fields(prep),
    )


def _combinations(names, combinations, max_dimension, frequency_threshold) -> tuple[list, list]:
    """The combinations as column positions and the threshold of each, checked."""
    m = len(names)
    if combinations is not None and max_dimension is not None:
        raise SdcError("combinations: given together with max_dimension; expected one of them")
    if max_dimension is not None:
        d = check_rule("max_dimension", max_dimension, high=m)
        count = sum(math.comb(m, s) for s in range(1, d + 1))
        if count > _MAX_COMBINATIONS:
            raise SdcError(
                f"max_dimension: {d} gives {count:,} combinations of {m} keys; expected at most "
                f"{_MAX_COMBINATIONS:,} (a smaller max_dimension, or the combinations themselves)"
            )
        combos = all_combinations(m, d)
        per_dim = _thresholds(frequency_threshold, d, "one per dimension 1..max_dimension")
        return combos, [per_dim[len(c) - 1] for c in combos]
    sets = [list(names)] if combinations is None else _combination_sets(combinations)
    position = {n: j for j, n in enumerate(names)}
    combos, seen = [], set()
    for i, s in enumerate(sets):
        unknown = [v for v in s if v not in position]
        if unknown:
            raise SdcError(
                f"combinations[{i}]: {', '.join(map(str, unknown))} not among the keys ({', '.join(names)}); "
                "expected combinations of the key variables"
            )
        if not s or len(set(s)) != len(s):
            raise SdcError(f"combinations[{i}]: expected one or more distinct key variables")
        combo = tuple(sorted(position[v] for v in s))
        if combo in seen:
            raise SdcError(f"combinations[{i}]: the same variables as an earlier combination; expected each once")
        seen.add(combo)
        combos.append(combo)
    return combos, _thresholds(frequency_threshold, len(combos), "one per combination")


def _combination_sets(value) -> list[list[str]]:
    """``combinations`` as a list of lists of names (one list of names is one combination)."""
    if isinstance(value, str) or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
        return [as_name_list(value, "combinations")]
    if not isinstance(value, (list, tuple)) or not value:
        raise SdcError("combinations: expected a list of lists of key variables")
    return [as_name_list(list(v), f"combinations[{i}]") for i, v in enumerate(value)]


def _thresholds(value, count: int, which: str) -> list[int]:
    """One threshold per item: a single value repeated, or a list of ``count`` of them."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        items = list(value)
        if len(items) != count:
            raise SdcError(f"frequency_threshold: got {len(items)} values; expected one, or {count} ({which})")
        return [check_rule("frequency_threshold", v, f"frequency_threshold[{i}]") for i, v in enumerate(items)]
    return [check_rule("frequency_threshold", value)] * count


def _category_table(prep: Prepared, counts) -> dict:
    """``{variable: {category label: (unsafe cells of dimension 1, 2, ...)}}`` over the observed
    categories of each key."""
    enc = prep.keys
    out = {}
    for j, name in enumerate(enc.names):
        labels = label_values(enc.labels[j])
        observed = enc.observed[j] if enc.observed and enc.observed[j] is not None else range(len(labels))
        out[name] = {labels[c]: tuple(int(x) for x in counts[j][c]) for c in observed}
    return out
