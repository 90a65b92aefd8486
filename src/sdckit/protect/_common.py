"""What every protection method shares: reading its input through the engine, the aggregated
change log, and building the :class:`ProtectionResult`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._declare import declaration
from .._validation import as_name_list, check_seed, mixed_type_problems, raise_problems
from ..engines import in_memory_engine, local_records
from ..results.protection import ProtectionResult

__all__ = ["Change", "Input", "common_scale", "finish", "read_input", "resolve_seed", "strata_of"]


@dataclass(frozen=True)
class Input:
    """A protection method's validated input: the engine, the table, the variables it changes
    and the strata (codes per record and one label per stratum, or None)."""

    engine: Any
    table: Any
    variables: tuple[str, ...]
    strata_codes: np.ndarray | None = None
    strata_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """The cells of one variable a method changed: a mask over records, and (for categorical
    variables) the original codes and labels, to count the changes per category."""

    mask: np.ndarray
    codes: np.ndarray | None = None
    labels: Any = None


def read_input(
    data, variables, param: str = "variables", strata=None, engine=None, method: str = "a protection method"
) -> Input:
    """Wrap ``data`` through the engine (which must hold the records in memory: ``method``
    names the method in the refusal) and check that it has records, and that the
    ``variables`` (and ``strata``) exist, do not overlap and hold one value type each."""
    eng = in_memory_engine(engine, method, data)
    table = eng.table(data)
    names = tuple(as_name_list(variables, param))
    if table.n == 0:
        raise_problems(["data: the table has no records; expected at least one"])
    table.require(names, param)
    st = tuple(as_name_list(strata, "strata", allow_empty=True)) if strata is not None else ()
    if st:
        table.require(st, "strata")
        both = sorted(set(st) & set(names))
        if both:
            raise_problems([f"strata: {', '.join(both)} also in {param}; expected separate columns"])
    raise_problems(mixed_type_problems(table, names, param) + mixed_type_problems(table, st, "strata"))
    if not st:
        return Input(eng, table, names)
    codes, labels = strata_of(eng, table, st)
    return Input(eng, table, names, codes, labels)


#: values below this magnitude are used as they are: n squares of them cannot overflow
_SAFE_MAGNITUDE = 2.0**480


def common_scale(X: np.ndarray) -> float:
    """A power of two s with max |X / s| in [0.5, 1) (in [1, 2) from 2^1023 on) when the largest finite magnitude of X is
    at least 2^480 (about 3e144, where squares and sums of squares would overflow); 1 otherwise.

    Dividing by a power of two is exact (short of values 2^1000 times smaller than the largest,
    which become subnormal), and the continuous methods are equivariant under a common scale:
    a method run on X / s and multiplied back by s gives what exact arithmetic gives on X."""
    hi, lo = (float(f.reduce(X, axis=None)) if X.size else math.nan for f in (np.fmax, np.fmin))  # NaN ignored
    if math.isfinite(hi) and math.isfinite(lo):
        top = max(abs(hi), abs(lo))  # no copy of X when it holds no infinite value
    else:
        finite = np.abs(X[np.isfinite(X)])
        if not finite.size:
            return 1.0
        top = float(finite.max())
    if top < _SAFE_MAGNITUDE:
        return 1.0
    return math.ldexp(1.0, min(math.frexp(top)[1], 1023))  # 2^1024 overflows: max |X / s| < 2 there


def resolve_seed(seed) -> int:
    """A random method's seed: as given (large integers exactly), or a fresh one from the
    operating system, which the method records in its ``parameters`` so the step replays."""
    if seed is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # one int when fresh
    return int(check_seed(seed))  # type: ignore[arg-type]


def strata_of(eng, table, strata) -> tuple[np.ndarray | None, tuple[str, ...]]:
    """Stratum number per record (0..S-1) and a label per stratum ("a-b" for several columns);
    a missing stratum value is a stratum of its own, labelled "NA"."""
    if not strata:
        return None, ()
    enc = eng.encode(table, list(strata))
    ids, patterns, _, _ = eng.patterns(enc.codes)
    values = [eng.label_values(lab) for lab in enc.labels]
    labels = []
    for row in patterns:
        parts = ["NA" if c < 0 else str(values[j][int(c)]) for j, c in enumerate(row)]
        labels.append("-".join(parts))
    return np.asarray(ids, dtype=np.int64), tuple(labels)


def _by_category(change: Change, eng) -> dict:
    if change.codes is None:
        return {}
    codes = change.codes[change.mask]
    codes = codes[codes >= 0]
    counts = np.bincount(codes, minlength=len(change.labels)) if codes.size else np.zeros(0, dtype=np.int64)
    values = eng.label_values(change.labels)
    return {str(values[c]): int(n) for c, n in enumerate(counts) if n}


def finish(
    method: Callable,
    parameters: dict,
    inp: Input,
    table,
    changes: dict[str, Change],
    details: dict | None = None,
    notes: tuple = (),
) -> ProtectionResult:
    """The result of the protection step of ``method`` (the public function, whose declaration
    gives the result's name and heading): the new table as the caller's frame type and the log
    of changes per variable, per category and per stratum (counts only)."""
    decl = declaration(method)
    eng = inp.engine
    n_changed = {v: int(np.count_nonzero(c.mask)) for v, c in changes.items()}
    by_category = {v: _by_category(c, eng) for v, c in changes.items() if c.codes is not None}
    by_stratum: dict = {}
    if inp.strata_codes is not None:
        for s, label in enumerate(inp.strata_labels):
            rows = inp.strata_codes == s
            by_stratum[label] = {v: int(np.count_nonzero(c.mask & rows)) for v, c in changes.items()}
    return ProtectionResult(
        method=decl.name,  # type: ignore[union-attr]
        title=decl.heading,  # type: ignore[union-attr]
        parameters=parameters,
        data=eng.native_frame(table),
        n=int(inp.table.n),
        n_changed=n_changed,
        n_changed_by_category=by_category,
        n_changed_by_stratum=by_stratum,
        details=details or {},
        notes=tuple(notes),
        table=table,
        backend=inp.table.backend,
        records=local_records(),
        row_index=inp.table.index,
    )
