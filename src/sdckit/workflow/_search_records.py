"""The search under ARX's model and metric (``objective="arx"``): the optimal node comes from
ARX's search (:mod:`._arx`), the candidate is rebuilt with the public methods so that its recipe
replays."""

from __future__ import annotations

import time

from ._candidates import Candidate, Outcome

__all__ = ["records_search"]

#: the candidates after the winner whose rate is measured for the front and the runners-up
N_RUNNERS = 3


def records_search(s, limit_t, progress, limit_n=None, t0=None) -> Outcome:
    """ARX's optimal node for ``s``'s target (k and/or l, whole-record suppression up to the
    limit, ARX's Loss), rebuilt as :func:`sdckit.global_recode` steps and
    :func:`sdckit.suppress_records`. ``limit_t`` (seconds from ``t0``) and ``limit_n`` (nodes
    checked) stop ARX's search early."""
    t = s.target
    if limit_t is not None and t0 is not None:
        limit_t = max(0.0, limit_t - (time.perf_counter() - t0))
    arx_search = _arx_search()
    out = arx_search(
        s.table,
        s.keys,
        {k: s.h[k].recorded for k in s.keys},
        k=t.k,
        l=t.l,
        sensitive=t.sensitive,
        diversity=t.diversity,
        suppression_limit=s.limit,
        metric=s.arx_metric,
        gs_factor=s.gs_factor,
        time_limit=limit_t,
        max_nodes=limit_n,
        progress=progress,
    )
    notes: list[str] = []
    ranked = sorted(
        (e for e in out.evaluated if e[1] and e[2] is not None),
        key=lambda e: (e[2], sum(e[0].values()), tuple(e[0][k] for k in s.keys)),
    )
    best_levels = tuple(out.levels[k] for k in s.keys) if out.levels else None
    evaluated, best = [], None
    for levels_d, _, metric, n_sup in ranked[: N_RUNNERS + 1]:
        levels = tuple(levels_d[k] for k in s.keys)
        cand = _rebuild(s, levels, metric, n_sup)
        evaluated.append(cand)
        if levels == best_levels:
            best = cand
    if best_levels is not None and best is None:
        best = _rebuild(s, best_levels, out.loss, int(out.suppressed.sum()))
        evaluated.insert(0, best)
    if best is not None:
        best.loss_by_variable = dict(out.loss_by_key)
        _check_same_records(s, best, out.suppressed, notes)
    for c in evaluated:
        if c is not best:
            c.table = None
    return Outcome(
        best,
        evaluated,
        out.n_nodes,
        out.n_checked,
        out.n_pruned,
        0,
        bool(out.optimal),
        None if out.optimal else _stopped_at(out, limit_n),
        {"notes": notes},
    )


def _stopped_at(out, limit_n) -> str:
    """The limit that stopped ARX's search."""
    if limit_n is not None and out.n_checked >= limit_n:
        return f"the candidate limit ({limit_n})"
    return "the time limit"


def _arx_search():
    """ARX's model (``sdckit.workflow._arx.arx_search``), or a clear error without it."""
    import importlib

    from .._errors import SdcError

    try:
        return importlib.import_module("sdckit.workflow._arx").arx_search
    except ModuleNotFoundError:
        raise SdcError(
            "objective: 'arx' needs ARX's model (sdckit.workflow._arx), which this installation lacks"
        ) from None


def _rebuild(s, levels: tuple, metric: float, n_suppressed: int) -> Candidate:
    """The candidate of ``levels`` with the public methods; its loss is ARX's metric."""
    cand = Candidate(levels, metric)
    table, steps = s.generalise(levels)
    if n_suppressed and s.target.k is not None:
        table, extra, _ = s.suppress_cells(table)
        steps += extra
    cand.meets, cand.risk = s.check(table)
    cand.steps, cand.table, cand.loss = steps, table, float(metric)
    _, _, cand.cells, cand.records = s.loss(table, levels)
    cand.records = int(n_suppressed)
    cand.rate = s.rate(table)
    return cand


def _check_same_records(s, best: Candidate, suppressed, notes: list) -> None:
    """ARX's suppressed records are those of the replayed recipe (else a note says so)."""
    import numpy as np

    gone = np.zeros(s.n, dtype=bool)
    for key in s.keys:
        before, _ = s.eng.encode_column(s.table, key, s.missing)
        after, _ = s.eng.encode_column(best.table, key, s.missing)
        gone |= (after < 0) & (before >= 0)
    if not np.array_equal(gone, np.asarray(suppressed, dtype=bool)):
        notes.append(
            f"the recipe suppresses {int(gone.sum())} record(s) where ARX's search suppressed "
            f"{int(np.sum(suppressed))}: the recipe's file is the one measured"
        )
