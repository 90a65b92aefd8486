"""Whole-record suppression of the records of small key classes (the model of ARX)."""

from __future__ import annotations

import numpy as np

from .._core import lattice as _lat
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list, check_choice, check_k, check_t_target
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input

__all__ = ["suppress_records"]

#: the ground distances of t-closeness (ARX's equal and hierarchical distance)
T_DISTANCES = ("equal", "hierarchical")


@declare(
    "method",
    Param("keys"),
    Param("k", "int"),
    Param("missing"),
    Param("sensitive"),
    Param("t", "number"),
    Param("t_distance", "choice", choices=T_DISTANCES),
    Param("hierarchies", "mapping", help="The sensitive variable's hierarchy, for t_distance='hierarchical'"),
    changes="every key value of the records whose key class has fewer than k records, or whose distribution of "
    "the sensitive variable is farther than t from the file's (set missing)",
)
def suppress_records(
    data, keys, *, k=2, missing=None, sensitive=None, t=None, t_distance="equal", hierarchies=None, engine=None
) -> ProtectionResult:
    """Whole-record suppression: every key value of each record whose key class has fewer than
    ``k`` records (or, with ``t``, is farther than t from the file's distribution of
    ``sensitive``) is set missing.

    A key class is the set of records with the same values on every key, exact equality, a
    missing value being one more category; a class of size f_c < k is suppressed whole. This
    is the record suppression of ARX and of the k-anonymity literature (Samarati 2001; Sweeney
    2002) after full-domain generalisation: the suppressed records carry no key value, and the
    others are in classes of at least k records. Unlike :func:`local_suppression`, which
    suppresses single values, it removes every key of the record.

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
    missing : value or list of values, optional
        Extra missing-value codes of the key columns.
    sensitive : str, optional
        The sensitive variable of ``t`` (ignored without ``t``).
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
    """
    inp = read_input(data, keys, "keys", None, engine, method="suppress_records")
    kk = check_k(k)
    miss = as_missing_codes(missing)
    enc = inp.engine.encode(inp.table, list(inp.variables), miss or None)
    codes = enc.codes
    rows = np.where(codes < 0, -1, codes).astype(np.int64)
    _, cls, size = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    cls = np.asarray(cls).reshape(-1)
    small = size[cls] < kk
    far = _far_classes(inp, cls, len(size), sensitive, t, t_distance, hierarchies, miss)
    if far is not None:
        small |= far[cls]
    masks = {v: small & (codes[:, j] >= 0) for j, v in enumerate(inp.variables)}
    table = inp.engine.with_missing(inp.table, masks)
    parameters = {"keys": list(inp.variables), "k": kk, "missing": list(miss) or None}
    if far is not None:
        parameters.update(sensitive=sensitive, t=float(t), t_distance=t_distance, hierarchies=hierarchies)
    n_classes = np.count_nonzero(size < kk) if far is None else np.count_nonzero((size < kk) | far)
    details = {"n_records": int(small.sum()), "n_classes": int(n_classes)}
    changes = {v: Change(masks[v], codes[:, j], enc.labels[j]) for j, v in enumerate(inp.variables)}
    return finish("suppress_records", parameters, inp, table, changes, details)


def _far_classes(inp, cls, n_classes: int, sensitive, t, t_distance, hierarchies, miss) -> np.ndarray | None:
    """Per class, whether its distribution of ``sensitive`` is farther than ``t`` from the
    file's (None without ``t``), by the kernel's sums (ARX's)."""
    if t is None:  # a sensitive variable (a scenario's role) or hierarchies without t: no t-closeness
        return None
    tt = check_t_target(t, "t")
    dist = check_choice(t_distance, "t_distance", T_DISTANCES)
    if sensitive is None:
        raise SdcError("sensitive: None; expected the sensitive variable of t-closeness with t")
    name = as_name_list(sensitive, "sensitive")
    if len(name) != 1 or name[0] in inp.variables:
        raise SdcError("sensitive: expected one column that is not a key")
    inp.table.require(name, "sensitive")
    from ..risk.diversity import _hierarchy_levels, _hierarchy_specs

    spec = _hierarchy_specs(hierarchies, name, {}, inp.engine) if hierarchies is not None else {}
    if dist == "hierarchical" and name[0] not in spec:
        raise SdcError(f"hierarchies: no hierarchy for {name[0]}; expected hierarchies[{name[0]!r}] for 'hierarchical'")
    enc = inp.engine.encode(inp.table, name, miss or None)
    sens = enc.codes[:, 0].astype(np.int64)
    ok = sens >= 0
    labels = list(inp.engine.label_values(enc.labels[0]))
    out = np.zeros(n_classes, dtype=bool)
    if not ok.any():
        return out
    levels = _hierarchy_levels(name[0], spec[name[0]], labels) if dist == "hierarchical" else None
    _, first = np.unique(sens[ok], return_index=True)
    tc, codes = _lat.closeness_of(sens[ok], len(labels), levels, sens[ok][np.sort(first)])
    keys, _, counts, _ = _lat.group_rows([cls[ok], codes], [n_classes, len(labels)], np.ones(int(ok.sum())))
    owner = keys // len(labels)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    d = _lat.class_distances(tc, keys % len(labels), counts, starts, np.add.reduceat(counts, starts))
    out[owner[starts]] = ~(d <= tt)
    return out
