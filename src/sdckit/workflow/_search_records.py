"""The search under ARX's model (``model="arx"``): whole-record suppression of the classes that
fail the target, ARX's optimal node (the kernel :mod:`sdckit._core.lattice` through
:mod:`._arx`), the file built from the kernel's own tables and checked against the whole target
with the public measures before it is returned.

The file of a node is its keys recoded through their hierarchies (what
:func:`sdckit.global_recode` with ``hierarchy=`` and ``level=`` writes, from the encoding the
kernel read) and the records of the classes that violate the target set missing in every key
(what :func:`sdckit.suppress_records` with the target's k, l and t writes): its recipe replays to
it. The runners-up are not built: their suppressed records and re-identification rate come
from their class counts.
"""

from __future__ import annotations

import numpy as np

from .._core import lattice as _lat
from ._candidates import Candidate, Outcome, levels_text

__all__ = ["build_file", "check_records", "kernel_metric", "records_rate", "records_search", "sdcmicro_rate"]

#: the candidates after the winner shown as runners-up (and on the front)
N_RUNNERS = 3
#: the nodes whose file is built and checked before the search gives up (each one that the
#: kernel says meets the target and whose file does not is reported in a note)
MAX_BUILDS = 4
#: the kernel's metric of an objective of ARX's model where the names differ (the others are
#: the kernel's own names: "precision", and whatever ARX quality model the kernel adds)
KERNEL_METRIC = {"arx": "loss"}
#: relative tolerance of the entropy l-diversity check: the public measure computes
#: exp(entropy), ARX the entropy in bits; the two agree to rounding at the boundary
_ENTROPY_TOL = 1e-12


def kernel_metric(objective: str) -> str:
    """The kernel's name of an objective of ARX's model."""
    return KERNEL_METRIC.get(objective, objective)


def records_search(s, limit_t, progress, limit_n=None, t0=None) -> Outcome:
    """ARX's optimal node for ``s``'s target (k and/or l, whole-record suppression up to the
    limit, ARX's quality model ``s.objective``), its file built and checked; the next nodes of
    least loss as runners-up. ``limit_t`` (seconds from ``t0``) and ``limit_n`` (nodes checked)
    stop the kernel's search early."""
    prob = _problem(s)
    out = _run(prob, limit_t, limit_n, progress, t0)
    ranked = sorted(
        ((x, loss, n_supp) for x, ok, loss, n_supp in out.evaluated if ok and loss is not None),
        key=lambda e: (e[1], int(out.nodes[e[0]].sum()), e[0]),
    )
    notes: list[str] = []
    best, evaluated, built = None, [], 0
    for x, loss, _ in ranked:
        levels = tuple(int(v) for v in out.nodes[x])
        if best is None and built < MAX_BUILDS:
            built += 1
            cand = _winner(s, prob, out, x, levels, loss, notes)
            if cand is not None:
                best = cand
                evaluated.append(cand)
            continue
        if best is None or len(evaluated) > N_RUNNERS:
            break
        evaluated.append(_runner_up(s, prob, levels, loss))
    optimal = bool(out.optimal) and best is not None and (best.levels == _levels(out, out.best))
    if best is None and ranked:
        notes.append(
            f"no file of the {built} node(s) of least loss that the search found within the limit met the target "
            "when measured; nothing is returned"
        )
    stopped = None if out.optimal else _stopped_at(out, limit_n, limit_t)
    return Outcome(best, evaluated, prob.n_nodes, out.n_checked, out.n_pruned, 0, optimal, stopped, {"notes": notes})


def _levels(out, x) -> tuple | None:
    return None if x is None else tuple(int(v) for v in out.nodes[x])


def _problem(s):
    """The kernel's model of the search ``s`` (its table, keys, hierarchies, target, limit and
    objective)."""
    from ._arx import arx_problem, criteria

    t = s.target
    sens = t.sensitive if (t.l is not None or t.t is not None) else None
    crit = criteria(t.k, t.l, sens, t.diversity, t.c, t.t, t.t_distance)
    return arx_problem(
        s.eng,
        s.table,
        s.keys,
        {key: s.h[key].rows for key in s.keys},
        criteria=crit,
        sensitive=sens,
        suppression_limit=s.limit,
        metric=kernel_metric(s.objective),
        gs_factor=0.5 if s.gs_factor is None else s.gs_factor,
        missing=s.missing,
        encoded=s.keys_encoded,
        sensitive_encoded=s.sensitive_encoded if sens is not None else None,
        sensitive_hierarchy=(s.t_hierarchies or {}).get(sens) if sens is not None else None,
        max_lattice_size=s.max_lattice_size,
    )


def _run(prob, limit_t, limit_n, progress, t0):
    from ._arx import run_search

    return run_search(prob, time_limit=limit_t, max_nodes=limit_n, progress=progress, t0=t0)


def _stopped_at(out, limit_n, limit_t) -> str:
    """The limit that stopped the kernel's search."""
    if limit_n is not None and out.n_checked >= limit_n:
        return f"the candidate limit ({limit_n})"
    return f"the time limit ({limit_t:g} s)" if limit_t is not None else "the time limit"


# ----------------------------------------------------------------------------------------------
# the winner: its file from the kernel's tables, checked
# ----------------------------------------------------------------------------------------------
def _winner(s, prob, out, x: int, levels: tuple, loss: float, notes: list) -> Candidate | None:
    """The candidate of node ``x`` with its file, or None (with a note) when the file misses
    the target."""
    nc = _lat.node_classes(prob.model, out.nodes[x])
    gone = nc.violating[nc.row_class][prob.model.inverse]
    table, steps = build_file(s, prob, levels, gone)
    meets, risk, records, cells, rate = check_records(s, table, prob.enc.codes[:, : len(s.keys)] >= 0)
    if not meets:
        node = levels_text(levels)  # numbers, in the order of the keys
        notes.append(
            f"the node at levels {node} (in the order of the keys) meets the target in the search, but its file "
            f"does not when measured ({_failed(s, risk)}); it is not returned"
        )
        return None
    cand = Candidate(levels, loss, meets=True, loss=float(loss), risk=risk, rate=rate, cells=cells, records=records)
    cand.steps, cand.table = steps, table
    values = out.values if x == out.best else _node_values(prob.model, out.nodes[x])
    cand.loss_by_variable = {key: float(v) for key, v in zip(s.keys, values)}
    return cand


def _failed(s, risk: dict) -> str:
    t = s.target
    parts = []
    if risk.get("k_violations"):
        parts.append(f"{risk['k_violations']} record(s) in classes below k = {t.k}")
    if t.l is not None:
        parts.append(f"l = {risk.get('l')} for l = {t.l:g} required")
    if t.t is not None and risk.get("t") is not None and risk["t"] > t.t:
        parts.append(f"t = {risk['t']:.4g} for t = {t.t:g} required")
    if risk.get("suppressed_records", 0) > s.budget:
        parts.append(f"{risk['suppressed_records']} records suppressed, above the limit of {s.budget}")
    return "; ".join(parts) or "the target is not met"


def _node_values(model, levels) -> list[float]:
    """The kernel's per-key metric of node ``levels`` (its classes computed afresh)."""
    res = _lat.evaluate(model, np.zeros(model.m, dtype=np.int64), model.rows, model.counts, levels)
    return _lat.node_values(model, levels, res.supp_parts, res.n_supp)


def build_file(s, prob, levels: tuple, gone: np.ndarray):
    """The file of ``levels`` with the records ``gone`` suppressed, and its recipe steps: each
    key recoded as :func:`sdckit.global_recode` recodes it (from the encoding the kernel read),
    then every key of the records ``gone`` set missing as :func:`sdckit.suppress_records` with
    the target sets it. With linked variables the steps run through the public methods."""
    steps = [_recode_step(s, key, lv) for key, lv in zip(s.keys, levels) if lv]
    if gone.any():
        steps.append(_suppress_step(s))
    if s.sc.linked:
        return _replayed(s, steps), steps
    from ..protect.recode import map_codes

    table = s.table
    for j, (key, lv) in enumerate(zip(s.keys, levels)):
        if lv:
            ordered = s.table.categories(key) is not None
            codes, labels = prob.enc.codes[:, j], prob.enc.labels[j]
            table = map_codes(s.eng, table, key, codes, labels, s.h[key].mapping(lv), None, ordered)[0]
    if gone.any():
        table = s.eng.with_missing(table, dict.fromkeys(s.keys, gone))
    return table, steps


def _replayed(s, steps: list):
    """The file of ``steps`` through the public methods (linked variables follow their keys)."""
    from ._steps import run_step

    table = s.table
    for st in steps:
        table = run_step(table, s.sc, st["method"], dict(st["parameters"]), engine=s.eng, fill_roles=False).table
    return table


def _recode_step(s, key: str, level: int) -> dict:
    """The recipe step of :func:`sdckit.global_recode` of ``key`` to ``level`` (its parameters
    as the method records them)."""
    from ..results.protection import jsonable

    params: dict = {"variables": [key], "mapping": None, "breaks": None, "method": "equidistant", "labels": None}
    params.update(hierarchy=s.h[key].recorded, level=int(level))
    return {"method": "global_recode", "parameters": jsonable(params)}


def _suppress_step(s) -> dict:
    """The recipe step of :func:`sdckit.suppress_records` with the target's criteria."""
    t = s.target
    params: dict = {"keys": list(s.keys), "k": int(t.k or 1), "missing": list(s.missing) if s.missing else None}
    if t.l is not None:
        params.update(l=float(t.l), sensitive=t.sensitive, diversity=t.diversity, c=float(t.c))
    if t.t is not None:
        params.update(sensitive=t.sensitive, t=float(t.t), t_distance=t.t_distance, hierarchies=s.t_hierarchies)
    return {"method": "suppress_records", "parameters": params}


# ----------------------------------------------------------------------------------------------
# the check of a file under whole-record suppression
# ----------------------------------------------------------------------------------------------
def check_records(s, table, observed: np.ndarray | None = None):
    """Whether ``table`` meets ``s``'s target under whole-record suppression, measured on the
    file: ``(meets, risk, suppressed records, suppressed cells, re-identification rate)``.

    The file's keys are read and checked as the public measures read them
    (:func:`sdckit.risk.diversity.prepared_roles`) and its records grouped into classes by exact
    equality of their keys. A record whose every key is missing is suppressed: it belongs to
    no class. Every other class must have at least k records and be l-diverse (distinct,
    entropy or recursive (c, l), as :func:`sdckit.l_diversity` measures it:
    :func:`sdckit._core.diversity.ldiversity_classes`), and the suppressed records must be at
    most the limit; t, as :func:`sdckit.t_closeness` measures it, over the kept classes. The rate is that of :func:`sdckit.individual_risk` (sdcMicro's rule).
    ``observed`` (n, m): where the original holds a value (default: read from ``s``)."""
    from .._core.diversity import ldiversity_classes
    from ..risk.diversity import prepared_roles, sensitive_codes

    t = s.target
    sens = [t.sensitive] if t.l is not None else []
    prep = prepared_roles(
        table, s.keys, sens, weight=s.sc.weight, missing=s.missing, allow_degenerate_keys=True, engine=s.eng
    )
    codes = prep.keys.codes
    cards = [int(c) + 1 for c in prep.keys.cardinalities]
    _, rows, counts, ids = _lat.group_rows([codes[:, j] + 1 for j in range(codes.shape[1])], cards, np.ones(prep.n))
    if observed is None:
        observed = np.stack([s._observed[k] for k in s.keys], axis=1)
    cells = int(((codes < 0) & observed).sum())
    gone_p = np.logical_and.reduce([r == 0 for r in rows])  # the classes of records missing every key
    records = int((gone_p[ids] & observed.any(axis=1)).sum())
    kept_p = ~gone_p
    risk: dict = {"suppressed_records": records}
    ok = records <= s.budget
    if t.k is not None:
        risk["k_violations"] = int(counts[kept_p & (counts < t.k)].sum())
        ok &= risk["k_violations"] == 0
    if t.l is not None:
        sc = sensitive_codes(prep, sens).codes[:, 0]
        d, e, r = ldiversity_classes(ids, len(counts), sc, t.c)
        value = {"distinct": d, "entropy": e, "recursive": r}[t.diversity][kept_p]
        risk["l"] = (float(value.min()) if t.diversity == "entropy" else int(value.min())) if value.size else None
        ok &= risk["l"] is not None and risk["l"] >= t.l * (1 - _ENTROPY_TOL if t.diversity == "entropy" else 1)
    partial = np.logical_or.reduce([r == 0 for r in rows]) & ~gone_p
    if partial.any():  # some keys missing, not all: sdcMicro's rule in full
        rate = _rate_of_file(prep)
    else:
        w = None if prep.weights is None else np.bincount(ids, weights=prep.weights, minlength=len(counts))
        rate = sdcmicro_rate(counts, w, gone_p, len(rows))
    ok, risk = s.check_rest(table, risk, bool(ok))
    return bool(ok), risk, records, cells, rate


def _rate_of_file(prep) -> float:
    """:func:`sdckit.individual_risk`'s rate from the file's prepared keys."""
    from .._core.individual import individual_risk_values
    from ..risk.frequencies import pattern_frequencies_of

    pf = pattern_frequencies_of(prep, 1.0, "sdcmicro")
    rp, _ = individual_risk_values(pf.fp, pf.Fp)
    return float(np.dot(rp, pf.counts) / prep.n) if prep.n else 0.0


def sdcmicro_rate(sizes: np.ndarray, weights, gone: np.ndarray, m: int) -> float:
    """The re-identification rate (:func:`sdckit.individual_risk`, sdcMicro's rule with
    alpha = 1) of a file whose records are either complete or missing every key, from its
    classes: ``sizes`` records per class, ``weights`` their weight sums (None: no weights),
    ``gone`` the classes of records missing every key, ``m`` the keys. A complete record of a
    class of f records (weight sum F) has (f, F); with a single key the S suppressed records
    match it too (f + S, F + their weights); a suppressed record matches every record (n, the
    weight total). Risk of (f, F) as the public measure computes it."""
    from .._core.individual import individual_risk_values

    f_cls = np.asarray(sizes, dtype=float)
    F_cls = f_cls if weights is None else np.asarray(weights, dtype=float)
    n, total_w = float(f_cls.sum()), float(F_cls.sum())
    kept = ~gone
    f, F = f_cls[kept], F_cls[kept]
    n_gone = float(f_cls[gone].sum())
    if m == 1 and n_gone:
        f, F = f + n_gone, F + float(F_cls[gone].sum())
    rp, _ = individual_risk_values(np.r_[f, n], np.r_[F, total_w])
    return float(np.dot(rp, np.r_[f_cls[kept], n_gone]) / n) if n else 0.0


# ----------------------------------------------------------------------------------------------
# runners-up: from their class counts
# ----------------------------------------------------------------------------------------------
def _runner_up(s, prob, levels: tuple, loss: float) -> Candidate:
    """A node the kernel says meets the target, not built: its suppressed records and cells
    and its rate from its class counts, its recipe steps."""
    nc = _lat.node_classes(prob.model, np.asarray(levels))
    gone_rows = nc.violating[nc.row_class]
    records = int(prob.model.counts[gone_rows].sum())
    cand = Candidate(levels, loss, meets=True, loss=float(loss), records=records, cells=records * len(s.keys))
    cand.rate = records_rate(s, prob, nc)
    cand.steps = [_recode_step(s, key, lv) for key, lv in zip(s.keys, levels) if lv]
    if records:
        cand.steps.append(_suppress_step(s))
    return cand


def records_rate(s, prob, nc) -> float:
    """The re-identification rate of a node's file from its classes (:func:`sdcmicro_rate`)."""
    w = None
    if s.sc.weight is not None:
        if "row_weights" not in prob.extra:  # the weight sum of each distinct base row, once
            wt = s.table.floats([s.sc.weight])[:, 0]
            prob.extra["row_weights"] = np.bincount(prob.model.inverse, weights=wt, minlength=len(prob.model.counts))
        w = np.bincount(nc.row_class, weights=prob.extra["row_weights"], minlength=len(nc.sizes))
    return sdcmicro_rate(nc.sizes, w, nc.violating, prob.model.m)
