"""Local suppression with an out-of-core engine (DuckDB, Spark).

The greedy method decides on distinct key patterns, so it runs on the engine's compressed table
(distinct rows of keys and strata, with their record counts and the position of their first
record). Only its last pass, which puts suppressed values back record by record in input order,
needs records: those of the rows with a suppression, fetched by position. The engine then builds
the protected records as a lazy table (a join of the records to the rows' and those records'
suppression flags), so nothing record-level is collected. When the caller passed an in-memory
frame, the protected data goes back as that frame instead (:func:`_protected`).
"""

from __future__ import annotations

import numpy as np

from .._core.suppression import _strata_rows, greedy_suppression_rows
from .._errors import SdcError
from .._validation import as_name_list, raise_problems
from ..engines import get_engine
from ._common import strata_of
from ._result import ProtectionResult


def local_suppression_engine(eng, data, keys, *, k, importance, combs, strata, alpha, method, missing, checks):
    """:func:`sdckit.local_suppression` on ``eng`` (``checks``: the in-memory function's own
    parameter checks, ``(check_k, importance)``)."""
    if method != "greedy":
        raise SdcError(
            f"method: {method!r} works record by record; with the {eng.name} engine expected method='greedy'"
        )
    if combs is not None:
        raise SdcError(f"combs: not available with the {eng.name} engine; expected combs=None (or engine='polars')")
    check_k, importance_of = checks
    rel = eng.table(data)
    names = tuple(as_name_list(keys, "keys"))
    rel.require(names, "keys")
    st = tuple(as_name_list(strata, "strata", allow_empty=True)) if strata is not None else ()
    rel.require(st, "strata")
    if set(st) & set(names):
        raise_problems([f"strata: {', '.join(sorted(set(st) & set(names)))} also in keys; expected separate columns"])
    comp = eng.compress(rel, names + st, None, first=True)
    mem = eng.local()
    small = mem.table(comp.frame)
    enc = mem.encode(small, list(names), list(missing) or None)
    codes, counts = enc.codes, comp.counts
    ks = check_k(k, None, int(counts.sum()), len(names))
    imp = importance_of(importance, names, codes)
    st_codes, st_labels = strata_of(mem, small, st)
    run = _run(eng, comp, codes, counts, ks[0], imp, alpha, st_codes)
    return _result(eng, comp, names, enc, run, ks[0], imp, alpha, strata, missing, st_codes, st_labels, data)


def _local_index(rows: np.ndarray, n_rows: int) -> np.ndarray:
    """Position of each compressed-table row within ``rows`` (a stratum's rows)."""
    local = np.full(n_rows, -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    return local


def _run(eng, comp, codes, counts, k, imp, alpha, st_codes) -> dict:
    """The greedy suppression per stratum; the records with suppressions, their final codes
    and the positions of the records still below k."""
    out_rows = codes.copy()
    pos, row_of, out_rec, unresolved, whole = [], [], [], [], []
    groups = [np.arange(len(codes))] if st_codes is None else _strata_rows(st_codes)
    for rows in groups:
        local = _local_index(rows, len(codes))

        def records_of(sub, rows=rows, local=local):
            p, r = eng.records_of(comp, rows[sub])
            return p, local[r]

        o, p, r, rec, f_rows, f_rec = greedy_suppression_rows(
            codes[rows], counts[rows], comp.first[rows], k, imp, alpha, records_of
        )
        out_rows[rows] = o
        pos.append(p)
        row_of.append(rows[r])
        out_rec.append(rec)
        # below k: the fetched records with f < k, and every record of the other rows with f < k
        # (a row with a suppression had all its records fetched, so these are untouched rows)
        rest = counts[rows].astype(float) - np.bincount(r, minlength=len(rows))
        whole.append(rows[(f_rows < k) & (rest > 0)])
        unresolved.append(np.asarray(p, dtype=np.int64)[f_rec < k])
    untouched = np.concatenate(whole)
    if untouched.size:  # one query for every stratum's untouched rows below k
        unresolved.append(eng.records_of(comp, untouched)[0])
    order = np.argsort(np.concatenate(pos), kind="stable") if pos else np.zeros(0, np.int64)
    return {
        "out_rows": out_rows,
        "pos": np.concatenate(pos)[order],
        "row_of": np.concatenate(row_of)[order],
        "out_rec": np.concatenate(out_rec)[order] if out_rec else codes[:0],
        "unresolved_rows": np.sort(np.concatenate(unresolved)) if unresolved else np.zeros(0, np.int64),
    }


def _protected(eng, comp, keys, row_flags: np.ndarray, pos: np.ndarray, rec_flags: np.ndarray, source):
    """The protected records: key values made missing, ``row_flags`` (rows x keys) for every
    record of a row, ``rec_flags`` for the records at input positions ``pos`` instead.

    A file, a DuckDB relation or a Spark DataFrame (data that may not fit in memory) gives the
    engine's lazy table (:meth:`RelationalEngine.with_suppressed`). An in-memory frame
    ``source`` gives the caller's frame type, written as the in-memory engine writes it (the
    same columns, types and pandas index): the engine returns each record's row (two integers
    per record), and the cells are made missing in a copy of ``source``."""
    if not comp.source.in_memory:
        return eng.with_suppressed(comp, keys, row_flags, pos, rec_flags)
    positions, rows = eng.records_of(comp, np.arange(len(comp.counts)))
    flags = np.zeros((int(comp.counts.sum()), len(keys)), dtype=bool)
    flags[positions] = row_flags[rows]
    flags[np.asarray(pos, dtype=np.int64)] = rec_flags
    mem = eng.local()
    return mem.native_frame(mem.with_missing(mem.table(source), {v: flags[:, j] for j, v in enumerate(keys)}))


def _native_fields(eng, comp) -> dict:
    """``backend`` (and ``row_index``) of a protection result: the caller's frame type for an
    in-memory input, the engine's name for its lazy table."""
    if comp.source.in_memory:
        return {"backend": comp.source.backend, "row_index": comp.source.index}
    return {"backend": eng.name}


def _result(
    eng, comp, names, enc, run, k, imp, alpha, strata, missing, st_codes, st_labels, source
) -> ProtectionResult:
    codes, counts = enc.codes, comp.counts.astype(np.int64)
    row_flags = (run["out_rows"] < 0) & (codes >= 0)
    rec_flags = (run["out_rec"] < 0) & (codes[run["row_of"]] >= 0)
    data = _protected(eng, comp, names, row_flags, run["pos"], rec_flags, source)
    n_changed: dict = {}
    by_category: dict = {}
    by_stratum: dict = {}
    for j, v in enumerate(names):
        per_row = counts * row_flags[:, j]
        np.subtract.at(per_row, run["row_of"], row_flags[run["row_of"], j].astype(np.int64))
        np.add.at(per_row, run["row_of"], rec_flags[:, j].astype(np.int64))
        n_changed[v] = int(per_row.sum())
        by_category[v] = _by_category(per_row, codes[:, j], enc.labels[j])
        if st_codes is not None:
            for s, label in enumerate(st_labels):
                by_stratum.setdefault(label, {})[v] = int(per_row[st_codes == s].sum())
    n_unres = int(run["unresolved_rows"].size)
    notes = (
        (f"{n_unres} record(s) could not be made k-anonymous (a stratum with fewer than k records).",)
        if n_unres
        else ()
    )
    return ProtectionResult(
        method="local_suppression",
        parameters={
            "keys": list(names),
            "k": k,
            "importance": [int(i) for i in imp],
            "combs": None,
            "strata": None if strata is None else [str(v) for v in np.atleast_1d(strata)],
            "alpha": float(alpha),
            "method": "greedy",
            "missing": list(missing) or None,
        },
        data=data,
        n=int(counts.sum()),
        n_changed=n_changed,
        n_changed_by_category=by_category,
        n_changed_by_stratum=by_stratum,
        details={
            "n_suppressed": int(sum(n_changed.values())),
            "importance": {v: int(i) for v, i in zip(names, imp)},
            "n_unresolved": n_unres,
            "unresolved_rows": run["unresolved_rows"],
        },
        notes=notes,
        table=None,
        **_native_fields(eng, comp),
    )


def _by_category(per_row: np.ndarray, codes: np.ndarray, labels) -> dict:
    obs = codes >= 0
    sums = np.bincount(codes[obs], weights=per_row[obs], minlength=len(labels)) if obs.any() else np.zeros(0)
    values = get_engine().label_values(labels)
    return {str(values[c]): int(n) for c, n in enumerate(sums) if n}


# ----------------------------------------------------------------------------------------------
# risk-threshold suppression
# ----------------------------------------------------------------------------------------------
def suppress_by_risk_engine(
    eng,
    data,
    keys,
    *,
    weight,
    threshold,
    max_global_risk,
    variables,
    importance,
    strategy,
    alpha,
    method,
    strata,
    missing,
) -> ProtectionResult:
    """:func:`sdckit.suppress_by_risk` on ``eng``: the risks on the compressed table, the
    records of a pattern fetched when one of them is to be suppressed."""
    from .._core.individual import risk_threshold
    from .._core.risk_suppression import pattern_risk
    from ._common import read_input
    from .risk_suppression import _groups, _plan, _weight_problems

    rel = eng.table(data)
    names = tuple(as_name_list(keys, "keys"))
    rel.require(names, "keys")
    st = tuple(as_name_list(strata, "strata", allow_empty=True)) if strata is not None else ()
    rel.require(st, "strata")
    raise_problems(_weight_problems(rel, list(names), weight))
    comp = eng.compress(rel, names + st, None if weight is None else str(weight), first=True)
    frame = comp.frame if weight is None else comp.frame_with(str(weight), comp.weight_sums)
    inp = read_input(frame, names, "keys", strata=strata)
    plan = _plan(inp, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, missing)
    counts = comp.counts.astype(np.int64)
    groups = _groups(inp)
    before = np.empty(len(counts))
    levels, level_counts = [], []
    for rows in groups:
        w = None if plan.weights is None else plan.weights[rows]
        ids, _, c, _, _, r = pattern_risk(plan.codes[rows], w, plan.alpha, multiplicity=counts[rows])
        before[rows] = r[ids]
        levels.append(r)
        level_counts.append(c)
    r_star = plan.threshold
    if r_star is None:
        r_star = risk_threshold(
            np.concatenate(levels), np.concatenate(level_counts), plan.max_global_risk, counts.sum()
        )
        if r_star == 0.0:
            raise SdcError(
                "max_global_risk: no risk level meets the target (every record would be unsafe); expected a larger "
                "target, or a threshold"
            )
    entries = _risk_entries(eng, comp, plan, groups, counts, before, r_star, weight)
    return _risk_result(eng, comp, names, plan, inp, entries, r_star, weight, strata, data)


def _risk_entries(eng, comp, plan, groups, counts, before, r_star, weight) -> dict:
    """Per entry (a record, or a row of several records left whole): position, row, count,
    codes and risk after."""
    from .._core.risk_suppression import record_risk, sdcmicro_pass, suppress_iteratively_rows

    parts = []
    for rows in groups:
        w = None if plan.weights is None else plan.weights[rows]
        if r_star is None or plan.method == "sdcmicro":
            out = (
                plan.codes[rows]
                if r_star is None
                else sdcmicro_pass(plan.codes[rows], before[rows], r_star, int(plan.allowed[0]))
            )
            after = record_risk(out, w, plan.alpha, multiplicity=counts[rows])
            parts.append((comp.first[rows], rows, counts[rows], np.asarray(out), after))
            continue
        local = _local_index(rows, len(counts))

        def records_of(sub, rows=rows, local=local):
            got = eng.records_of(comp, rows[sub], weight=None if weight is None else str(weight))
            return got[0], local[got[1]], got[2] if weight is not None else None

        pos, row, mult, new, risk, _ = suppress_iteratively_rows(
            plan.codes[rows], counts[rows], comp.first[rows], w, r_star, plan.allowed,
            strategy=plan.strategy, alpha=plan.alpha, records_of=records_of,
        )  # fmt: skip
        parts.append((pos, rows[row], mult, new, risk))
    cat = lambda i: np.concatenate([p[i] for p in parts])  # noqa: E731
    return {"pos": cat(0), "row": cat(1), "mult": cat(2), "new": cat(3), "after": cat(4), "before": before[cat(1)]}


def _risk_result(eng, comp, names, plan, inp, e, r_star, weight, strata, source) -> ProtectionResult:
    from .risk_suppression import _details, _parameters

    codes = plan.codes
    changed = (e["new"] < 0) & (codes[e["row"]] >= 0)
    whole = e["mult"] > 1
    row_flags = np.zeros(codes.shape, dtype=bool)
    row_flags[e["row"][whole]] = changed[whole]
    single = ~whole
    data = _protected(eng, comp, names, row_flags, e["pos"][single], changed[single], source)
    keys_ = list(names)
    per_entry = {v: changed[:, keys_.index(v)].astype(np.int64) * e["mult"] for v in plan.variables}
    masks = {v: per_entry[v] for v in plan.variables}  # counts per entry (summed in the details)
    n_changed = {v: int(m.sum()) for v, m in per_entry.items()}
    by_category = {}
    for v, m in per_entry.items():
        j = keys_.index(v)
        rows_codes = codes[e["row"], j]
        by_category[v] = _by_category(m.astype(float), rows_codes, plan.labels[j])
    by_stratum: dict = {}
    if inp.strata_codes is not None:
        stratum = inp.strata_codes[e["row"]]
        for s, label in enumerate(inp.strata_labels):
            by_stratum[label] = {v: int(m[stratum == s].sum()) for v, m in per_entry.items()}
    details, notes = _details(plan, keys_, r_star, e["before"], e["after"], masks, e["mult"], e["pos"])
    parameters = _parameters(plan, keys_, weight, strata)
    return ProtectionResult(
        method="suppress_by_risk",
        parameters=parameters,
        data=data,
        n=int(e["mult"].sum()),
        n_changed=n_changed,
        n_changed_by_category=by_category,
        n_changed_by_stratum=by_stratum,
        details=details,
        notes=notes,
        table=None,
        **_native_fields(eng, comp),
    )
