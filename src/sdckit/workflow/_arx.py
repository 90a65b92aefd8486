"""The ``arx`` model of the protection search: ARX's full-domain generalisation with record
suppression, ARX's metrics and ARX's optimal answer (internal; ``sdckit.search`` calls it).

The kernel is :mod:`sdckit._core.lattice`; this module reads the data through the engine,
turns each key's hierarchy (an ARX hierarchy CSV or its rows) into integer maps, checks the
parameters, runs the search and maps the answer back to the records.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._categories import category_key, check_hierarchy_rows, hierarchy_rows
from .._core import lattice as _lat
from .._errors import SdcError
from .._progress import progress_bar
from .._validation import check_choice, check_int, check_rule, check_t_target
from ..engines import in_memory_engine
from ._hierarchies import check_lattice_size

__all__ = ["ArxOutcome", "ArxProblem", "arx_problem", "arx_search", "criteria", "run_search"]

_METRICS = tuple(_lat.METRICS)
_DIVERSITY = ("distinct", "entropy", "recursive")
_T_DISTANCES = ("equal", "hierarchical")


@dataclass(frozen=True)
class ArxOutcome:
    """ARX's optimal answer for one search.

    Attributes
    ----------
    levels : dict or None
        ``{key: level}`` of the optimal node (``None``: no node satisfies the criteria).
    suppressed : ndarray of bool, shape (n,)
        The records suppressed, in input order.
    loss : float
        ARX's metric value of the answer (Loss, non-monotonic precision, non-monotonic
        discernibility or non-monotonic non-uniform entropy); NaN without one.
    loss_by_key : dict
        ARX's per-attribute values (``per_attribute_by_qi``); empty for discernibility, which
        has none.
    n_checked, n_pruned, n_nodes : int
        Nodes whose classes were computed, nodes never computed, nodes of the lattice.
    optimal : bool
        Whether the answer is proven optimal (False after ``time_limit`` or ``max_nodes``).
    evaluated : list of (dict, bool, float or None, int)
        For each node looked at, in order: its levels, whether it satisfies the criteria
        within the suppression limit, its metric value (None when it does not) and the records
        it suppresses (those of its violating classes).
    seconds : float
        Wall time of the search (data read to answer).
    """

    levels: dict | None
    suppressed: np.ndarray
    loss: float
    loss_by_key: dict
    n_checked: int
    n_pruned: int
    n_nodes: int
    optimal: bool
    evaluated: list
    seconds: float


def _hierarchy(key: str, text: list[list[str]]) -> tuple[_lat.Hierarchy, dict]:
    """The integer hierarchy and ``{base value: base code}``."""
    width = len(text[0])
    codes = np.empty((len(text), width), dtype=np.int64)
    for lev in range(width):
        index: dict = {}
        codes[:, lev] = [index.setdefault(r[lev], len(index)) for r in text]
    return _lat.hierarchy_from_codes(codes), {r[0]: i for i, r in enumerate(text)}


def _base_codes(eng, enc, j: int, key: str, base_of: dict) -> np.ndarray:
    """The records' level-0 codes of key ``j``; every value must be in the hierarchy."""
    labels = eng.label_values(enc.labels[j])
    lookup = np.array([base_of.get(category_key(v), -1) for v in labels] + [-1], dtype=np.int32)
    codes = lookup[enc.codes[:, j]]  # code -1 (missing) picks the trailing -1
    if (codes < 0).any():
        n_missing = int((enc.codes[:, j] < 0).sum())
        n_out = int((codes < 0).sum()) - n_missing
        if n_out == 0:  # ARX has no missing value: the hierarchy is not at fault
            raise SdcError(
                f"keys: {key} has {n_missing} record(s) with a missing value; expected a value in every record under "
                "ARX's model (model='arx'), which has no missing value: recode the missing values to a category "
                "of their own first, or search with cell suppression (model=None)"
            )
        raise SdcError(
            f"hierarchies[{key!r}]: {n_out} record(s) with a value not in the hierarchy's first column and "
            f"{n_missing} with a missing value; expected every value of {key!r} in its hierarchy"
        )
    return codes


def criteria(k, l, sensitive, diversity, c, t=None, t_distance="equal") -> _lat.Criteria:  # noqa: E741
    """The checked criteria of ARX's model (k, l of ``sensitive`` with its diversity and c, t
    with its ground distance)."""
    if k is None and l is None and t is None:
        raise SdcError(
            "k, l, t: all None; expected k (k-anonymity), l with sensitive (l-diversity), t with sensitive "
            "(t-closeness), or several"
        )
    kk = 1 if k is None else check_rule("k", k)
    div = check_choice(diversity, "diversity", _DIVERSITY)
    tt = None if t is None else check_t_target(t, "t")
    dist = check_choice(t_distance, "t_distance", _T_DISTANCES)
    if l is None and t is None:
        if sensitive is not None:
            raise SdcError("sensitive: given without l or t; expected l or t with it")
        return _lat.Criteria(k=kk)
    if sensitive is None:
        raise SdcError("sensitive: None; expected the sensitive attribute of l-diversity or t-closeness")
    if l is None:
        return _lat.Criteria(k=kk, t=tt, t_distance=dist)
    ll = check_rule("l", l)
    if div != "entropy" and not float(ll).is_integer():
        raise SdcError(f"l: {ll:g} is not a whole number; expected an integer >= 1 for {div} diversity")
    cc = check_rule("c", c)
    return _lat.Criteria(k=kk, l=ll, diversity=div, c=float(cc), t=tt, t_distance=dist)


def _sensitive_levels(eng, labels, sensitive: str, spec) -> np.ndarray:
    """Each sensitive value's code at every level of its hierarchy (hierarchical t-closeness):
    (number of values, levels); the hierarchy must be a tree with one value at the top and
    cover every value of the data."""
    if spec is None:
        raise SdcError(
            f"hierarchies[{sensitive!r}]: none; expected the hierarchy of the sensitive attribute for "
            "t_distance='hierarchical'"
        )
    rows, _ = hierarchy_rows(spec, eng)
    text = check_hierarchy_rows(sensitive, rows)
    if len(text[0]) < 2 or len({r[-1] for r in text}) != 1:
        raise SdcError(
            f"hierarchies[{sensitive!r}]: the top level holds several values; expected one value at the top "
            "(a tree, as the hierarchical distance needs)"
        )
    hier, base_of = _hierarchy(sensitive, text)
    values = [category_key(v) for v in eng.label_values(labels)]
    codes = np.array([base_of.get(v, -1) for v in values], dtype=np.int64)
    if (codes < 0).any():
        raise SdcError(
            f"hierarchies[{sensitive!r}]: {int((codes < 0).sum())} value(s) of the sensitive attribute not in the "
            "hierarchy's first column; expected every value of the data in its hierarchy"
        )
    out = np.empty((len(codes), hier.height + 1), dtype=np.int64)
    for lev in range(hier.height + 1):
        out[:, lev] = hier.lift(codes, 0, lev)
    return out


def arx_search(
    data,
    keys,
    hierarchies,
    *,
    k=None,
    l=None,
    sensitive=None,
    diversity="distinct",
    suppression_limit=0.0,
    metric="loss",
    gs_factor=0.5,
    time_limit=None,
    progress=None,
    max_nodes=None,
    c=1.0,
    exhaustive=False,
    t=None,
    t_distance="equal",
) -> ArxOutcome:
    """ARX's optimal full-domain generalisation with record suppression.

    Parameters
    ----------
    data : DataFrame or path
    keys : list of str
        The quasi-identifiers, each generalised through its hierarchy.
    hierarchies : dict
        ``{key: path to an ARX hierarchy CSV, or its rows (list of lists), or a table}``: column
        0 the key's values, then one column per level, the last usually ``*``.
    k : int, optional
        k-anonymity: every equivalence class of at least ``k`` records.
    l, sensitive, diversity, c : optional
        l-diversity of ``sensitive`` in every class: ``"distinct"`` (at least ``l`` values),
        ``"entropy"`` (entropy at least log2 l) or ``"recursive"`` ((c, l)-diversity).
    t, t_distance : optional
        t-closeness of ``sensitive`` in every class, t in (0, 1]: the earth mover's distance
        between the class's distribution and the whole input's (suppressed records included,
        as ARX) is at most t. ``"equal"``: every two values at distance 1, D = sum |p - q| / 2;
        ``"hierarchical"``: the distance of two values is the level of their lowest common
        ancestor in ``hierarchies[sensitive]`` over its height (Li, Li & Venkatasubramanian
        2007, section 4.2; ARX's ``HierarchicalDistanceTCloseness``).
    suppression_limit : float in [0, 1]
        The share of records that may be suppressed (ARX: at most floor(limit x n)); the
        records of the classes that violate the criteria are suppressed.
    metric : {"loss", "precision", "discernibility", "entropy"}
        ARX's quality model (:data:`sdckit._core.lattice.METRICS`): ``Loss``
        (``MetricMDNMLoss``, geometric mean of 1 + the per-key loss, minus 1), non-monotonic
        precision (``MetricMDNMPrecision``, arithmetic mean), non-monotonic discernibility
        (``MetricSDNMDiscernability``: the sum of the squared class sizes, n per suppressed
        record) or non-monotonic non-uniform entropy (``MetricMDNUNMEntropy``, summed over the
        keys).
    gs_factor : float in [0, 1]
        ARX's weight of generalisation against suppression (0.5: equal): generalisation counts
        g = min(1, 2 (1 - gs)), suppression s = min(1, 2 gs). Discernibility has none (0.5 only).
    time_limit : float, optional
        Seconds; stop with the best node so far (``optimal=False``).
    progress : bool, optional
        A bar of the nodes checked.
    max_nodes : int, optional
        Nodes checked at most; stop with the best so far (``optimal=False``).
    exhaustive : bool
        Check every node, without pruning (a test oracle; slow).

    Returns
    -------
    ArxOutcome

    Notes
    -----
    Per key j, with share(v) the rows of the hierarchy under the generalised value v over
    the rows of the hierarchy |D_j|, ARX's Loss is
    ``L_j = (sum_records share - n/|D_j|) / (n - n/|D_j|)``, a suppressed record counting
    share 1, floored to ten decimals, and the file's ``Loss = prod_j (1 + L_j)^(1/m) - 1``
    (Prasser & Kohlmayer 2015; ARX's ``MetricMDNMLoss``). The optimum is the node of least
    Loss that satisfies the criteria; ties go to the lower sum of levels (as ARX), then to the
    first node in mixed-radix order of the keys' levels.
    """
    t0 = time.perf_counter()
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise SdcError("keys: empty; expected at least one quasi-identifier")
    if len(set(keys)) != len(keys):
        raise SdcError("keys: a key named twice; expected each quasi-identifier once")
    if not isinstance(hierarchies, dict):
        raise SdcError("hierarchies: expected a mapping {key: hierarchy file or rows}")
    missing = [kk for kk in keys if kk not in hierarchies]
    if missing:
        raise SdcError(f"hierarchies: no hierarchy for key(s) {', '.join(map(repr, missing))}; expected one per key")
    crit = criteria(k, l, sensitive, diversity, c, t, t_distance)
    limit = check_rule("suppression_limit", suppression_limit)
    metric = check_choice(metric, "metric", _METRICS)
    gs = check_rule("gs_factor", gs_factor)
    if metric == "discernibility" and gs != 0.5:
        raise SdcError(
            f"gs_factor: got {gs:g}; ARX's discernibility does not weigh generalisation against suppression, "
            "expected the default 0.5 with metric 'discernibility'"
        )
    check_rule("time_limit", time_limit, allow_none=True)
    check_int(max_nodes, "max_nodes", low=1, allow_none=True)
    if sensitive is not None and sensitive in keys:
        raise SdcError(f"sensitive: {sensitive!r} is also a key; expected a column that is not generalised")

    eng = in_memory_engine(None, "search")
    table = eng.table(data)
    absent = [v for v in keys + ([sensitive] if sensitive is not None else []) if v not in table.columns]
    if absent:
        raise SdcError(
            f"data: no column(s) {', '.join(map(repr, absent))}; expected the keys and the sensitive attribute"
        )
    rows = {key: hierarchy_rows(hierarchies[key], eng)[0] for key in keys}
    problem = arx_problem(
        eng,
        table,
        keys,
        rows,
        criteria=crit,
        sensitive=sensitive,
        suppression_limit=limit,
        metric=metric,
        gs_factor=gs,
        sensitive_hierarchy=hierarchies.get(sensitive) if sensitive is not None else None,
    )
    out = run_search(
        problem, time_limit=time_limit, max_nodes=max_nodes, progress=progress, exhaustive=exhaustive, t0=t0
    )
    return _outcome(problem.model, out, keys, t0)


@dataclass(frozen=True)
class ArxProblem:
    """A search under ARX's model, ready to run: the kernel's model of the records, the keys,
    the encoding of the keys (and the sensitive attribute, last) and the lattice's size."""

    model: _lat.Model
    keys: list
    enc: object
    n_nodes: int
    extra: dict = field(default_factory=dict, compare=False)  # what a caller computes once


def arx_problem(
    eng,
    table,
    keys,
    rows: dict,
    *,
    criteria,
    sensitive=None,
    suppression_limit=0.0,
    metric="loss",
    gs_factor=0.5,
    missing=None,
    encoded=None,
    sensitive_encoded=None,
    sensitive_hierarchy=None,
    max_lattice_size=None,
) -> ArxProblem:
    """The kernel's model of ``table`` (an engine table): each key's hierarchy ``rows[key]``
    checked and turned into integer maps, the keys and ``sensitive`` encoded once (``missing``:
    extra missing-value codes; a missing key or sensitive value is an error). ``encoded`` (the
    keys' :class:`EncodedKeys`) and ``sensitive_encoded`` (codes, labels) when the caller holds
    them; ``sensitive_hierarchy``: the sensitive attribute's hierarchy, for t-closeness with the
    hierarchical distance; ``max_lattice_size``: the most nodes (default
    :data:`sdckit._core.lattice.MAX_NODES`)."""
    parsed = [_hierarchy(key, check_hierarchy_rows(key, rows[key])) for key in keys]
    n_nodes = check_lattice_size({key: h.height for key, (h, _) in zip(keys, parsed)}, max_lattice_size)
    enc = eng.encode(table, keys, missing) if encoded is None else encoded
    base = [_base_codes(eng, enc, j, key, base_of) for j, (key, (_, base_of)) in enumerate(zip(keys, parsed))]
    sens, sens_size, sens_levels, sens_order = None, 0, None, None
    if sensitive is not None:
        codes, labels = eng.encode_column(table, sensitive, missing) if sensitive_encoded is None else sensitive_encoded
        sens = np.asarray(codes, dtype=np.int64)
        if (sens < 0).any():
            raise SdcError(
                f"sensitive: {sensitive} has {int((sens < 0).sum())} record(s) with a missing value; expected a value "
                "in every record under ARX's model (model='arx'), which has no missing value: recode the missing "
                "values to a category of their own first, or search with cell suppression (model=None)"
            )
        sens_size = len(eng.label_values(labels))
        if criteria.t is not None and criteria.t_distance == "hierarchical":
            sens_levels = _sensitive_levels(eng, labels, sensitive, sensitive_hierarchy)
            _, first = np.unique(sens, return_index=True)
            sens_order = sens[np.sort(first)]  # ARX's dictionary: the values in their first appearance
    model = _lat.make_model(
        base,
        [h for h, _ in parsed],
        sensitive=sens,
        sens_size=sens_size,
        criteria=criteria,
        suppression_limit=suppression_limit,
        metric=metric,
        gs_factor=gs_factor,
        sens_levels=sens_levels,
        sens_order=sens_order,
        agg_order=sorted(range(len(keys)), key=lambda j: list(table.columns).index(keys[j])),
    )
    return ArxProblem(model, list(keys), enc, n_nodes)


def run_search(problem: ArxProblem, *, time_limit=None, max_nodes=None, progress=None, exhaustive=False, t0=None):
    """The kernel's search of ``problem`` (:func:`sdckit._core.lattice.search`) with a progress
    bar of the nodes checked."""
    with progress_bar(progress, problem.n_nodes, "arx search", unit="nodes") as bar:
        out = _lat.search(
            problem.model,
            time_limit=time_limit,
            max_nodes=max_nodes,
            on_check=lambda: bar.update(1),
            exhaustive=bool(exhaustive),
            started=t0,
        )
        bar.update(out.n_pruned)  # the nodes decided without a check: the bar ends full
    return out


def _outcome(model, out: _lat.SearchOutcome, keys: list[str], t0: float) -> ArxOutcome:
    def as_levels(x: int) -> dict:
        return {key: int(v) for key, v in zip(keys, out.nodes[x])}

    evaluated = [(as_levels(x), ok, loss, n_supp) for x, ok, loss, n_supp in out.evaluated]
    if out.best is None:
        suppressed = np.zeros(model.n, dtype=bool)
        levels, by_key = None, {}
    else:
        suppressed = _lat.suppressed_rows(model, out.nodes[out.best])[model.inverse]
        levels = as_levels(out.best)
        by_key = {key: float(v) for key, v in zip(keys, out.values)}
    return ArxOutcome(
        levels=levels,
        suppressed=suppressed,
        loss=float(out.loss) if out.best is not None else math.nan,
        loss_by_key=by_key,
        n_checked=out.n_checked,
        n_pruned=out.n_pruned,
        n_nodes=len(out.nodes),
        optimal=out.optimal,
        evaluated=evaluated,
        seconds=time.perf_counter() - t0,
    )
