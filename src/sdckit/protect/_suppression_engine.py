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

from .._core.suppression import greedy_suppression_rows, strata_rows
from .._errors import SdcError
from .._validation import as_name_list, raise_problems
from ..engines import local_engine
from ..results.protection import ProtectionResult
from ._common import strata_of


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
    return _result(eng, comp, names, enc, run, ks[0], imp, alpha, strata, missing, st_codes, st_labels)


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
    groups = [np.arange(len(codes))] if st_codes is None else strata_rows(st_codes)
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


def _protected(eng, comp, keys, row_flags: np.ndarray, pos: np.ndarray, rec_flags: np.ndarray):
    """``(data, table)``: the protected records, key values made missing (``row_flags``, rows x
    keys, for every record of a row; ``rec_flags`` for the records at input positions ``pos``
    instead), as the engine gives them (:meth:`with_suppressed`): the caller's frame type for
    an in-memory input, the engine's lazy table for a file, a DuckDB relation or a Spark
    DataFrame; ``table`` is the in-memory engine's table of them (None out of core)."""
    return eng.with_suppressed(comp, keys, row_flags, pos, rec_flags)


def _native_fields(eng, comp) -> dict:
    """``backend`` (and ``row_index``) of a protection result: the caller's frame type for an
    in-memory input, the engine's name for its lazy table."""
    if comp.source.in_memory:
        return {"backend": comp.source.backend, "row_index": comp.source.index, "records": eng.records()}
    return {"backend": eng.name, "records": eng.records()}


def _result(eng, comp, names, enc, run, k, imp, alpha, strata, missing, st_codes, st_labels) -> ProtectionResult:
    codes, counts = enc.codes, comp.counts.astype(np.int64)
    row_flags = (run["out_rows"] < 0) & (codes >= 0)
    rec_flags = (run["out_rec"] < 0) & (codes[run["row_of"]] >= 0)
    data, table = _protected(eng, comp, names, row_flags, run["pos"], rec_flags)
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
    notes = unresolved_notes(n_unres)
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
        table=table,
        **_native_fields(eng, comp),
    )


def _by_category(per_row: np.ndarray, codes: np.ndarray, labels) -> dict:
    obs = codes >= 0
    sums = np.bincount(codes[obs], weights=per_row[obs], minlength=len(labels)) if obs.any() else np.zeros(0)
    values = local_engine().label_values(labels)
    return {str(values[c]): int(n) for c, n in enumerate(sums) if n}


def unresolved_notes(n_unresolved: int) -> tuple:
    """Why records are still below k: a stratum smaller than k. Both methods reach k
    otherwise (sdcMicro's speed-up leaves out of its search only records that have k identical
    records in it, which end k-anonymous with them)."""
    if not n_unresolved:
        return ()
    return (f"{n_unresolved} record(s) could not be made k-anonymous (a stratum with fewer than k records).",)
