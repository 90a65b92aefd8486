"""Whole-record suppression of the records of the key classes that fail k-anonymity or
l-diversity (the model of ARX)."""

from __future__ import annotations

import numpy as np

from .._categories import hierarchy_levels, sensitive_hierarchies
from .._core import lattice as _lat
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list, check_t_target
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input

__all__ = ["suppress_records"]

#: the kinds of l-diversity (ARX's criteria)
DIVERSITIES = ("distinct", "entropy", "recursive")

#: the ground distances of t-closeness (ARX's equal and hierarchical distance)
T_DISTANCES = ("equal", "hierarchical")


@declare(
    "method",
    Param("keys"),
    Param("k", "int"),
    Param("l", "number"),
    Param("sensitive"),
    Param("diversity", "choice", choices=DIVERSITIES),
    Param("c", "number"),
    Param("missing"),
    Param("t", "number"),
    Param("t_distance", "choice", choices=T_DISTANCES),
    Param("hierarchies", "mapping", help="The sensitive variable's hierarchy, for t_distance='hierarchical'"),
    changes="every key value of the records whose key class fails k-anonymity, l-diversity or t-closeness "
    "(set missing)",
    heading="Whole-record suppression",
)
def suppress_records(
    data,
    keys,
    *,
    k=2,
    l=None,  # noqa: E741
    sensitive=None,
    diversity="distinct",
    c=2.0,
    missing=None,
    t=None,
    t_distance="equal",
    hierarchies=None,
    engine=None,
) -> ProtectionResult:
    """Whole-record suppression: every key value of each record whose key class fails the
    criteria is set missing.

    A key class is the set of records with the same values on every key, exact equality, a
    missing value being one more category. A class of ``n`` records fails k-anonymity when
    ``n < k``; with ``l`` it also fails when its values of ``sensitive`` (counts
    ``r_1 >= r_2 >= ...``) are not l-diverse, by ARX's definitions:

    * ``"distinct"``: fewer than ``l`` distinct values;
    * ``"entropy"``: fewer than ``ceil(l)`` values, or
      ``-(sum_s r_s log2 r_s / n - log2 n) < log2 l`` (the Shannon entropy in bits);
    * ``"recursive"``: fewer than ``l`` values, or ``r_1 >= c (r_l + r_{l+1} + ...)``.

    A failing class is suppressed whole. This is the record suppression of ARX and of the
    k-anonymity literature (Samarati 2001; Sweeney 2002; Machanavajjhala et al. 2007) after
    full-domain generalisation: the suppressed records carry no key value, and the others are
    in classes that meet the criteria. Unlike :func:`local_suppression`, which suppresses
    single values, it removes every key of the record.

    With ``t`` (t-closeness, Li, Li & Venkatasubramanian 2007) a class also fails when the
    earth mover's distance D between its distribution of ``sensitive`` and the whole file's
    (before suppression, as ARX's ``EqualDistanceTCloseness`` and
    ``HierarchicalDistanceTCloseness``) is above t: ``"equal"``,
    ``D = (1/2) sum_s |p_s - q_s|``; ``"hierarchical"``, with ``hierarchies[sensitive]``,
    ``D = sum_N level(N) / H * min(pos_N, neg_N)`` over the inner nodes N of the hierarchy
    (pos_N / neg_N the sums of the positive / negative extras p - q of N's children), computed
    as ARX computes it. Records with a missing sensitive value count in neither distribution.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
        The microdata; never modified.
    keys : str or list of str
        Categorical key variables.
    k : int, default 2
        The smallest class size kept, >= 1.
    l : float, optional
        The l-diversity every kept class must have (a whole number for ``"distinct"`` and
        ``"recursive"``); None: k-anonymity alone.
    sensitive : str, optional
        The sensitive variable of ``l`` and ``t`` (one column, not a key; without missing
        values for ``l``); ignored without them.
    diversity : {"distinct", "entropy", "recursive"}, default "distinct"
        The kind of l-diversity.
    c : float > 0, default 2
        The constant of recursive (c, l)-diversity.
    missing : value or list of values, optional
        Extra missing-value codes of the key columns.
    t : float in (0, 1], optional
        The largest distance of a kept class's distribution from the file's (t-closeness).
    t_distance : {"equal", "hierarchical"}, default "equal"
        The ground distance of ``t``.
    hierarchies : dict, optional
        ``{sensitive: hierarchy}`` for the hierarchical distance (the forms of
        :func:`sdckit.t_closeness`).
    engine : str, optional
        The engine (the records must be in memory).

    Returns
    -------
    ProtectionResult
        ``n_changed``: suppressed values per key (values already missing are not counted);
        ``details``: ``n_records`` (records suppressed), ``n_classes`` (classes suppressed).

    References
    ----------
    Samarati, P. (2001). Protecting respondents' identities in microdata release. *IEEE
    Transactions on Knowledge and Data Engineering* 13(6), 1010-1027.
    Machanavajjhala, A., Kifer, D., Gehrke, J. and Venkitasubramaniam, M. (2007).
    l-diversity: privacy beyond k-anonymity. *ACM TKDD* 1(1).
    """
    inp = read_input(data, keys, "keys", None, engine, method="suppress_records")
    crit, sens_name = _criteria(k, l, sensitive, diversity, c, t, t_distance, inp.variables)
    miss = as_missing_codes(missing)
    enc = inp.engine.encode(inp.table, list(inp.variables), miss or None)
    codes = enc.codes
    sizes = [len(lab) + 1 for lab in enc.labels]
    _, _, size, cls = _lat.group_rows([codes[:, j] + 1 for j in range(codes.shape[1])], sizes, np.ones(len(codes)))
    small = _failing(inp, crit, sens_name, miss, cls, size)
    far = _far_classes(inp, cls, len(size), sens_name, crit, hierarchies, miss)
    if far is not None:
        small |= far[cls]
    masks = {v: small & (codes[:, j] >= 0) for j, v in enumerate(inp.variables)}
    table = inp.engine.with_missing(inp.table, masks)
    parameters = {"keys": list(inp.variables), "k": crit.k, "missing": list(miss) or None}
    if crit.l is not None:
        parameters.update(l=crit.l, sensitive=sens_name, diversity=crit.diversity, c=crit.c)
    if crit.t is not None:
        parameters.update(sensitive=sens_name, t=crit.t, t_distance=crit.t_distance, hierarchies=hierarchies)
    n_classes = int(np.unique(cls[small]).size)
    details = {"n_records": int(small.sum()), "n_classes": n_classes}
    changes = {v: Change(masks[v], codes[:, j], enc.labels[j]) for j, v in enumerate(inp.variables)}
    return finish(suppress_records, parameters, inp, table, changes, details)


def _criteria(k, l, sensitive, diversity, c, t, t_distance, keys) -> tuple[_lat.Criteria, str | None]:  # noqa: E741
    """The checked criteria and the sensitive column (None without ``l`` and ``t``)."""
    kk = int(k)  # k, l, diversity, c and t_distance: checked by the declaration
    if l is None and t is None:  # a sensitive variable (a scenario's role) alone: k-anonymity
        return _lat.Criteria(k=kk), None
    ll = div = None
    if l is not None:
        ll, div = float(l), diversity
        if div != "entropy" and not float(ll).is_integer():
            raise SdcError(f"l: {ll:g} is not a whole number; expected an integer >= 1 for {div} diversity")
    cc = float(c)
    tt = check_t_target(t, "t") if t is not None else None  # a target: (0, 1], narrower than t's rule
    dist = t_distance
    what = "l-diversity" if t is None else "t-closeness" if l is None else "l-diversity and t-closeness"
    if sensitive is None:
        raise SdcError(f"sensitive: None; expected the sensitive column of {what}")
    names = as_name_list(sensitive, "sensitive")
    if len(names) != 1:
        raise SdcError(f"sensitive: {len(names)} columns; expected one sensitive column for {what}")
    if names[0] in keys:
        raise SdcError(f"sensitive: {names[0]!r} is also a key; expected a column that is not a key")
    crit = _lat.Criteria(
        k=kk,
        l=None if ll is None else float(ll),
        diversity=div or "distinct",
        c=float(cc),
        t=tt,
        t_distance=dist,
    )
    return crit, names[0]


def _failing(inp, crit: _lat.Criteria, sens_name, miss, cls: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Per record, whether its class (``cls``, records per class ``size``) fails ``crit``."""
    if crit.l is None:
        return size[cls] < crit.k
    inp.table.require([sens_name], "sensitive")
    enc = inp.engine.encode(inp.table, [sens_name], miss or None)
    sens = enc.codes[:, 0].astype(np.int64)
    if (sens < 0).any():
        raise SdcError(
            f"sensitive: {int((sens < 0).sum())} record(s) with a missing value of {sens_name!r}; expected a value "
            "in every record (the l-diversity of a class counts its sensitive values)"
        )
    n_sens = max(len(enc.labels[0]), 1)
    keys, _, counts, inverse = _lat.group_rows([cls, sens], [len(size), n_sens], np.ones(len(cls)))
    return _lat.class_violations(keys, counts, n_sens, crit)[inverse]


def _far_classes(inp, cls, n_classes: int, sens_name, crit: _lat.Criteria, hierarchies, miss) -> np.ndarray | None:
    """Per class, whether its distribution of the sensitive variable is farther than ``t``
    from the file's (None without ``t``), by the kernel's sums (ARX's). Records with a missing
    sensitive value count in neither distribution."""
    if crit.t is None:
        return None
    inp.table.require([sens_name], "sensitive")
    spec = sensitive_hierarchies(hierarchies, [sens_name], {}, inp.engine) if hierarchies is not None else {}
    if crit.t_distance == "hierarchical" and sens_name not in spec:
        raise SdcError(
            f"hierarchies: no hierarchy for {sens_name}; expected hierarchies[{sens_name!r}] for 'hierarchical'"
        )
    enc = inp.engine.encode(inp.table, [sens_name], miss or None)
    sens = enc.codes[:, 0].astype(np.int64)
    ok = sens >= 0
    labels = list(inp.engine.label_values(enc.labels[0]))
    out = np.zeros(n_classes, dtype=bool)
    if not ok.any():
        return out
    levels = hierarchy_levels(sens_name, spec[sens_name], labels) if crit.t_distance == "hierarchical" else None
    _, first = np.unique(sens[ok], return_index=True)
    tc, codes = _lat.closeness_of(sens[ok], len(labels), levels, sens[ok][np.sort(first)])
    keys, _, counts, _ = _lat.group_rows([cls[ok], codes], [n_classes, len(labels)], np.ones(int(ok.sum())))
    owner = keys // len(labels)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    d = _lat.class_distances(tc, keys % len(labels), counts, starts, np.add.reduceat(counts, starts))
    out[owner[starts]] = ~(d <= crit.t)
    return out
