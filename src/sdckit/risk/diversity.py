"""l-diversity and t-closeness of sensitive variables within key classes.

Layout: the data-access helpers come first (the only code that touches the caller's table,
through the engine: role validation, key and sensitive-variable encoding); then, per measure,
the validated input (a frozen dataclass built once at the boundary), the steps on integer codes
(kernels in :mod:`sdckit._core.diversity`) and the public function. The result classes live in
:mod:`sdckit.results.diversity` and are re-exported here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._assessed import Assessed, Headline
from .._categories import hierarchy_levels, sensitive_hierarchies
from .._core.diversity import (
    equivalence_classes,
    ldiversity_classes,
    multi_ldiversity_classes,
    tcloseness_classes,
    tcloseness_hierarchical_classes,
)
from .._declare import Param, declare
from .._deprecation import renamed_parameters
from .._errors import SdcError, SdcWarning, warn
from .._prepare import Prepared, prepare
from .._validation import as_name_list, raise_problems
from ..results.diversity import LDiversityResult, TClosenessResult
from ..scenario import accepts_scenario
from .frequencies import records_fields

__all__ = ["LDiversityResult", "TClosenessResult", "l_diversity", "t_closeness"]


# ----------------------------------------------------------------------------------------------
# data access: the only functions here that touch the caller's table (through the engine)
# ----------------------------------------------------------------------------------------------
#: prepare()'s warning about missing codes absent from the keys: here they may occur in the
#: sensitive variables instead, so :func:`sensitive_codes` warns about both together
_UNUSED_IN_KEYS = r"missing: .* occur\(s\) in none of the key columns"
#: prepare()'s warning about design weights below 1 (F_k below f_k): t-closeness uses the weights
#: only relatively, to weight the distributions, so any positive weights are fine
_WEIGHT_BELOW_1 = r"weight: column .* below 1"
#: prepare()'s census note for weights that are all 1: here equal weights are just equal weights
_ALL_ONE = r"weight: every weight in column .* is 1"


def prepared_roles(
    data,
    keys,
    sensitive,
    *,
    weight=None,
    strata=None,
    missing=None,
    allow_degenerate_keys: bool = False,
    engine=None,
) -> Prepared:
    """Validate the roles against the table (every problem in one error) and encode the keys
    and strata."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_UNUSED_IN_KEYS, category=SdcWarning)
        warnings.filterwarnings("ignore", message=_WEIGHT_BELOW_1, category=SdcWarning)
        warnings.filterwarnings("ignore", message=_ALL_ONE, category=SdcWarning)
        return prepare(
            data,
            keys,
            weight=weight,
            sensitive=sensitive,
            strata=strata,
            missing=missing,
            allow_degenerate_keys=allow_degenerate_keys,
            engine=engine,
        )


@dataclass(frozen=True)
class SensitiveCodes:
    """Integer codes (n, a) of the sensitive variables (-1 = missing, including the user's
    ``missing`` codes) and, per variable, its labels in code order (a Python list)."""

    codes: np.ndarray
    labels: tuple


def sensitive_codes(prep: Prepared, names) -> SensitiveCodes:
    """Encode the sensitive variables as the keys are encoded (same missing values)."""
    table = prep.table
    raise_problems(
        [
            f"sensitive: column {v} has type {table.dtype_name(v)}; expected a categorical or numeric variable"
            for v in names
            if table.kind(v) == "nested"
        ]
    )
    enc = prep.mem.encode(table, list(names), prep.roles.missing)
    unused = [v for v in prep.keys.unused_missing if v in enc.unused_missing]
    if unused:
        warn(
            f"missing: {', '.join(map(repr, unused))} occur(s) in none of the key or sensitive columns "
            f"({', '.join(prep.keys.names + tuple(names))}); check the code and its type (-999 and '-999' differ "
            "for a text column)"
        )
    return SensitiveCodes(enc.codes, tuple(lab.to_list() for lab in enc.labels))


def class_ids(prep: Prepared) -> tuple[np.ndarray, int]:
    """Equivalence class of every record: exact equality of the key codes and the strata (a
    missing key value is one more value)."""
    codes = prep.keys.codes
    if prep.strata is not None:
        codes = np.concatenate([codes, prep.strata.codes], axis=1)
    return equivalence_classes(codes)


# ----------------------------------------------------------------------------------------------
# shared checks
# ----------------------------------------------------------------------------------------------
def _sensitive_names(sensitive) -> list[str]:
    if sensitive is None:
        raise SdcError("sensitive: no sensitive variable given; expected a column name or a list of names")
    return as_name_list(sensitive, "sensitive")


def _missing_counts(s: SensitiveCodes, names, counts=None) -> dict:
    """Records with a missing value per sensitive variable (``counts``: records per row)."""
    if counts is None:
        return {v: int(np.count_nonzero(s.codes[:, j] < 0)) for j, v in enumerate(names)}
    return {v: int(counts[s.codes[:, j] < 0].sum()) for j, v in enumerate(names)}


# ----------------------------------------------------------------------------------------------
# l-diversity
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _LDiversityInput:
    prep: Prepared
    names: tuple
    c: float


def _ldiversity_input(
    data, keys, sensitive, *, c, strata, missing, allow_degenerate_keys, engine=None
) -> _LDiversityInput:
    names = _sensitive_names(sensitive)
    cc = float(c)  # checked by the declaration (sdcMicro's silent c <= 0 -> 1 is an error here)
    prep = prepared_roles(
        data, keys, names, strata=strata, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine
    )
    return _LDiversityInput(prep, tuple(names), cc)


def _ldiversity_values(ids, G, s: SensitiveCodes, names, c: float, counts=None):
    """Per-record distinct, entropy and recursive l per variable, and the multi measures
    (``counts``: records per row of a compressed table)."""
    dist, ent, rec = {}, {}, {}
    for j, v in enumerate(names):
        d, e, r = ldiversity_classes(ids, G, s.codes[:, j], c, counts)
        dist[v], ent[v], rec[v] = d[ids], e[ids], r[ids]
    me, mr = multi_ldiversity_classes(ids, G, s.codes, c, counts)
    return dist, ent, rec, me[ids], mr[ids]


@accepts_scenario
@renamed_parameters(positional=("c",))
@declare(
    "measure",
    Param("keys"),
    Param("sensitive"),
    Param("c", "number"),
    Param("strata"),
    Param("missing"),
    Param("allow_degenerate_keys"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys", "sensitive"),
        headlines=(
            Headline("n_not_2_diverse", "records in classes with fewer than 2 distinct values", "lower", "n_below"),
        ),
        order=20,
        targets=("l", "sensitive", "diversity", "c"),
        part="l_diversity",
    ),
)
def l_diversity(
    data,
    keys,
    sensitive,
    *,
    c: float = 2,
    strata=None,
    missing=None,
    allow_degenerate_keys: bool = False,
    engine=None,
) -> LDiversityResult:
    r"""Distinct, entropy and recursive (c,l)-diversity of sensitive variables.

    Records are grouped into equivalence classes by exact equality of their key values, a
    missing key value being one more category (sdcMicro >= 5.8; the "missing matches
    anything" rule of :func:`frequencies` is not used). For a class E whose non-missing
    sensitive values have counts r_1 >= ... >= r_t and u missing values:

    .. math::

        l_{dist} = t + I(u > 0, t > 0), \qquad
        l_{ent} = \exp\Big(-\sum \tfrac{r}{|E|}\log\tfrac{r}{|E|}\Big), \qquad
        l_{rec} = \max\{l \le t : r_1 < c\,(r_l + \dots + r_t)\}

    (the entropy includes the missing group as one category when t > 0 and is 1 when t = 0;
    l_rec is 1 when t <= 1 and ignores missing values). With two or more sensitive variables
    sdcMicro's MultiEntropy / MultiRecursive are computed too (each variable within the
    sub-groups of the class defined by all other sensitive variables, minimum over sub-groups
    and variables); with one they are 0.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables.
    sensitive : str or list of str
        Sensitive variables (not key variables).
    c : float > 0, default 2
        Constant of recursive (c,l)-diversity (sdcMicro ``l_recurs_c``). sdcMicro silently
        replaces a value <= 0 by 1; here it is an error.
    strata : str or list of str, optional
        Stratification columns: classes are formed within each stratum (the strata act as
        extra key columns matched exactly), so every per-record value equals the one computed
        on the stratum's records alone. Strata must not be missing.
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN, in the keys and the sensitive
        variables (sdcMicro's ``missing = -999`` corresponds to ``missing=-999``).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`frequencies`): with DuckDB or Spark the
        records are grouped by keys and sensitive values in the engine.

    Returns
    -------
    LDiversityResult

    Notes
    -----
    Deliberate difference from sdcMicro: sdcMicro treats every R ``NA`` in the sensitive
    variable as a new category (class {1, NA, NA, 2} gets distinct l = 4); here all missing
    values of a class form one category (distinct l = 3).

    References
    ----------
    Machanavajjhala, A., Kifer, D., Gehrke, J. and Venkitasubramaniam, M. (2007),
    l-diversity: privacy beyond k-anonymity, *ACM Transactions on Knowledge Discovery from
    Data* 1(1); sdcMicro ``ldiversity``.
    """
    inp = _ldiversity_input(
        data,
        keys,
        sensitive,
        c=c,
        strata=strata,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        engine=engine,
    )
    prep, names = inp.prep, inp.names
    ids, G = class_ids(prep)
    s = sensitive_codes(prep, names)
    dist, ent, rec, me, mr = _ldiversity_values(ids, G, s, names, inp.c, prep.counts)
    return LDiversityResult(
        keys=prep.keys.names,
        strata=prep.roles.strata,
        sensitive=names,
        c=inp.c,
        distinct=dist,
        entropy=ent,
        recursive=rec,
        multi_entropy=me,
        multi_recursive=mr,
        class_ids=ids,
        n=prep.n,
        n_classes=G,
        n_missing_sensitive=_missing_counts(s, names, prep.counts),
        backend=prep.table.backend,
        row_index=prep.table.index,
        **records_fields(prep),
    )


# ----------------------------------------------------------------------------------------------
# t-closeness
# ----------------------------------------------------------------------------------------------
def _ordered_items(ordered) -> list:
    """``ordered`` as (name, categories or None) pairs."""
    if isinstance(ordered, dict):
        return list(ordered.items())
    if isinstance(ordered, (str, int)) and not isinstance(ordered, bool):
        return [(ordered, None)]
    if isinstance(ordered, (list, tuple, set, frozenset)):
        return [(o, None) for o in ordered]
    raise SdcError(
        f"ordered: got {type(ordered).__name__}; expected True/False, a list of sensitive "
        "variables or a dict name -> list of categories in order"
    )


def _declared_categories(name: str, cats) -> list:
    if isinstance(cats, (str, bytes)) or not hasattr(cats, "__iter__"):
        raise SdcError(f"ordered: categories of {name} must be a list of values in order; got {type(cats).__name__}")
    cats = list(cats)
    if not cats:
        raise SdcError(f"ordered: empty category list for {name}; expected the categories in order")
    seen, dup = set(), []
    for x in cats:
        if x in seen:
            dup.append(x)
        seen.add(x)
    if dup:
        raise SdcError(f"ordered: {len(dup)} categor(y/ies) of {name} listed more than once; expected each once")
    return cats


def _ordered_spec(ordered, names) -> dict:
    """Normalise ``ordered`` to {name: None (natural order) | list of categories}."""
    if ordered is None or ordered is False:
        return {}
    if ordered is True:
        return {v: None for v in names}
    out: dict[str, list | None] = {}
    for name, cats in _ordered_items(ordered):
        if isinstance(name, bool) or not isinstance(name, (str, int)):
            raise SdcError(f"ordered: {name!r} is not a column name; expected sensitive variable names")
        name = str(name)
        if name not in names:
            raise SdcError(
                f"ordered: column {name} is not a sensitive variable; sensitive variables: {', '.join(names)}"
            )
        if cats is True or cats is None:
            out[name] = None
        elif cats is not False:
            out[name] = _declared_categories(name, cats)
    return out


def _apply_categories(codes: np.ndarray, labels: list, cats: list, name: str):
    """Recode ``codes`` (positions in ``labels``) to positions in the declared ``cats``."""
    pos = {x: i for i, x in enumerate(cats)}
    used = np.zeros(len(labels), dtype=bool)
    used[codes[codes >= 0]] = True
    unknown = [x for x, u in zip(labels, used) if u and x not in pos]
    if unknown:
        raise SdcError(
            f"ordered: column {name} has {len(unknown)} value(s) not in the declared categories; "
            f"expected one of its {len(cats)} declared categories"
        )
    perm = np.array([pos.get(x, -1) for x in labels], dtype=np.int32)
    out = np.full_like(codes, -1)
    ok = codes >= 0
    out[ok] = perm[codes[ok]]
    return out, len(cats)


@dataclass(frozen=True)
class _TClosenessInput:
    prep: Prepared
    names: tuple
    spec: dict
    weighted: bool
    hierarchies: dict = None  # type: ignore[assignment]  # name -> rows of its hierarchy


def _tcloseness_input(
    data, keys, sensitive, *, ordered, hierarchies, weight, weighted, missing, allow_degenerate_keys, engine=None
) -> _TClosenessInput:
    names = _sensitive_names(sensitive)
    wt = bool(weighted)  # checked by the declaration
    if wt and weight is None:
        raise SdcError("weighted: True needs a weight column; expected weight=<column name> too")
    spec = _ordered_spec(ordered, names)
    prep = prepared_roles(
        data, keys, names, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine
    )
    rows = sensitive_hierarchies(hierarchies, names, spec, prep.mem)
    return _TClosenessInput(prep, tuple(names), spec, wt, rows)


def _tcloseness_values(inp: _TClosenessInput, ids, G, s: SensitiveCodes):
    """Per-class distances, per-record distances and the number of categories per variable."""
    w = inp.prep.weights if inp.weighted else inp.prep.counts  # counts: rows of a compressed table
    dist, cdist, ncat = {}, {}, {}
    for j, v in enumerate(inp.names):
        codes, q = s.codes[:, j], len(s.labels[j])
        if v in inp.hierarchies:
            levels = hierarchy_levels(v, inp.hierarchies[v], s.labels[j])
            d = tcloseness_hierarchical_classes(ids, G, codes, levels, weights=w)
        else:
            if inp.spec.get(v) is not None:
                codes, q = _apply_categories(codes, s.labels[j], inp.spec[v], v)
            d = tcloseness_classes(ids, G, codes, q, ordered=v in inp.spec, weights=w)
        cdist[v], dist[v], ncat[v] = d, d[ids], q
    return dist, cdist, ncat


@accepts_scenario
@renamed_parameters(positional=("ordered",))
@declare(
    "measure",
    Param("keys", help="Categorical key variables"),
    Param("sensitive", help="Sensitive variables (not key variables)"),
    Param("ordered", "any"),  # True/False, names, or name -> categories in order
    Param("hierarchies", "mapping", help="Per sensitive variable, a hierarchy: the hierarchical ground distance"),
    Param("weight"),
    Param("weighted", "bool"),
    Param("missing"),
    Param("allow_degenerate_keys", help="Accept key variables that are entirely missing or have a single category"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys", "sensitive"),
        headlines=(Headline("max", "the largest distance of a class from the file's distribution", "lower", "max"),),
        order=30,
        targets=("t", "sensitive", "t_distance"),
        assess=False,
    ),
)
def t_closeness(
    data,
    keys,
    sensitive,
    *,
    ordered=None,
    hierarchies=None,
    weight=None,
    weighted: bool = False,
    missing=None,
    allow_degenerate_keys: bool = False,
    engine=None,
) -> TClosenessResult:
    r"""t-closeness: distance between each class's sensitive distribution and the file's.

    Classes are formed as for :func:`l_diversity` (exact key equality, a missing key value is a
    category). For a sensitive variable with categories 1..q, P is its distribution in the whole
    file and Q_E in class E; records with a missing sensitive value are excluded from both.
    With earth mover's distance:

    .. math::

        D_{nominal} = \tfrac12 \sum_j |p_j - q_j|, \qquad
        D_{ordered} = \frac{1}{q-1} \sum_{i=1}^{q-1} \Big|\sum_{j \le i} (q_j - p_j)\Big|

    With a hierarchy of the categories (levels 0..H, one value at the top), the ground
    distance of two categories is the level of their lowest common ancestor over H, and

    .. math::

        D_{hierarchical} = \sum_{N} \frac{level(N)}{H} \min(pos_N, neg_N)
        = \frac1H \sum_{L=0}^{H-1} \tfrac12 \sum_{N \in level\ L} |p_N - q_N|

    over the inner nodes N, with pos_N / neg_N the sums of the positive / negative extras
    p_c - q_c of N's children (p_N, q_N: the shares under N); the right side, the mean over
    the levels below the top of the nominal distance of the generalised distributions, is the
    left summed level by level (ARX's ``HierarchicalDistanceTCloseness``).

    A class is t-close iff D <= t; the file's t is the maximum over classes.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
    sensitive : str or list of str
    ordered : bool, list of str or dict, optional
        Which sensitive variables use the ordered ground distance |i - j| / (q - 1): ``True``
        (all), a list of names, or a dict ``name -> list of categories in order`` (q is then the
        number of declared categories; an observed value not in the list raises
        :class:`SdcError`; ``name -> True`` or ``None`` means the natural order).
        Without a declared list the order is the natural one: numeric order for numbers
        (q = number of distinct values), declared order for Enum / ordered categoricals,
        sorted labels for strings. Default: nominal (total variation) for all.
    hierarchies : dict, optional
        ``{sensitive variable: hierarchy}``: these variables use the hierarchical ground
        distance. A hierarchy is an ARX hierarchy file (``;``-separated, no header: the
        category, then one column per level), a list of rows, a table, or
        ``{category: [level 1, level 2, ...]}``; every row of one width, one parent per value,
        one value at the top level, and every observed category in the first column. A
        variable is not both in ``ordered`` and here.
    weight : str, optional
        Weight column, used only with ``weighted=True``.
    weighted : bool, default False
        Weight P and Q_E by ``weight``.
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN (keys and sensitive variables).
    allow_degenerate_keys : bool, default False
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`frequencies`).

    Returns
    -------
    TClosenessResult

    Notes
    -----
    A class whose sensitive values are all missing has no distribution: its distance is NaN
    and it is ignored by :attr:`TClosenessResult.max` and ``is_t_close``. With a single
    category (q = 1) every distance is 0. Not in sdcMicro.

    References
    ----------
    Li, N., Li, T. and Venkatasubramanian, S. (2007), t-closeness: privacy beyond k-anonymity
    and l-diversity, *Proceedings of the 23rd IEEE International Conference on Data
    Engineering*, 106-115 (section 4.2: the hierarchical distance).
    """
    inp = _tcloseness_input(
        data,
        keys,
        sensitive,
        ordered=ordered,
        hierarchies=hierarchies,
        weight=weight,
        weighted=weighted,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        engine=engine,
    )
    prep, names = inp.prep, inp.names
    ids, G = class_ids(prep)
    s = sensitive_codes(prep, names)
    dist, cdist, ncat = _tcloseness_values(inp, ids, G, s)
    return TClosenessResult(
        keys=prep.keys.names,
        sensitive=names,
        ordered=tuple(v for v in names if v in inp.spec),
        hierarchical=tuple(v for v in names if v in inp.hierarchies),
        weighted=inp.weighted,
        distance=dist,
        class_ids=ids,
        class_sizes=np.bincount(ids, weights=prep.counts, minlength=G).astype(np.int64),
        class_distance=cdist,
        n_categories=ncat,
        n=prep.n,
        n_classes=G,
        n_missing_sensitive=_missing_counts(s, names, prep.counts),
        backend=prep.table.backend,
        row_index=prep.table.index,
        **records_fields(prep),
    )
