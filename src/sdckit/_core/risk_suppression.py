r"""Risk-threshold suppression (mu-ARGUS style; sdcMicro ``localSupp``): pure NumPy kernels on
integer key codes (``-1`` = missing) and per-pattern frequencies.

The individual risk of a record depends only on f and \hat F of its key pattern under the
missing-value rule (a missing value matches every category; matches through a missing value
count ``alpha``; see :func:`sdckit._core.nafreq.pattern_frequencies`). Suppressing key j of a
record moves it from pattern s to the pattern t = s with j missing. Every pattern compatible
with s is compatible with t, so only the patterns compatible with t change, each by the
difference of what one record of t and one record of s contribute to it:

* to a complete pattern: a partial record ``alpha``, an all-missing record 0 (``alpha``
  when m = 1), itself 1;
* to a partial pattern: a complete record 1, a partial or all-missing record ``alpha``,
  itself 1;
* to the all-missing pattern: every record 1 (its f is n).

The iterative method keeps f, \hat F and r per pattern and updates only those patterns;
after the loop everything is recounted from scratch and the loop resumes if a record that
can still be suppressed is above the threshold (rounding in the running weight sums).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from .frequencies import pattern_table
from .individual import individual_risk_values
from .nafreq import pattern_frequencies

__all__ = [
    "NeedRecords",
    "pattern_risk",
    "record_risk",
    "sdcmicro_pass",
    "suppress_households",
    "suppress_iteratively",
    "suppress_iteratively_rows",
]

_STRATEGIES = ("importance", "min_risk")
#: risks within this relative difference are a tie (the quadrature behind fractional f_k can
#: differ in the last bit between evaluations of the same value)
_TIE = 1e-12


def pattern_risk(codes: np.ndarray, weights: np.ndarray | None, alpha: float, factorize=None, multiplicity=None):
    """``(ids, patterns, counts, f, F, r)``: the distinct key patterns, each record's pattern,
    and f, \\hat F (missing-value rule) and the risk (sdcMicro's ``approx`` rule) per pattern
    (``multiplicity``: records per row of a compressed table, ``weights`` their sums)."""
    ids, patterns, counts, wsum = pattern_table(codes, weights, factorize=factorize, multiplicity=multiplicity)
    f, F = pattern_frequencies(patterns, counts, wsum, alpha)
    r, _ = individual_risk_values(f, F)
    return ids, patterns, counts, f, F, r


def record_risk(
    codes: np.ndarray, weights: np.ndarray | None, alpha: float, factorize=None, multiplicity=None
) -> np.ndarray:
    """The individual risk of every record (as ``individual_risk`` computes it)."""
    ids, _, _, _, _, r = pattern_risk(codes, weights, alpha, factorize, multiplicity)
    return r[ids]


def sdcmicro_pass(codes: np.ndarray, risk: np.ndarray, threshold: float, column: int) -> np.ndarray:
    """sdcMicro ``localSupp``: the key ``column`` set missing in every record with risk strictly
    above ``threshold``, once (risks are not recomputed in between)."""
    new = np.array(codes, dtype=np.int32, order="F", copy=True)
    new[risk > threshold, column] = -1
    return new


# ----------------------------------------------------------------------------------------------
# the iterative method
# ----------------------------------------------------------------------------------------------
def _contribution(target_nmiss, source_nmiss, m: int, alpha: float):
    """What one record of a compatible, different source pattern adds to the f of a target
    pattern, from the numbers of missing values (vectorised over either argument)."""
    t = np.asarray(target_nmiss)
    s = np.asarray(source_nmiss)
    to_complete = np.where((s == m) & (m >= 2), 0.0, np.where(s > 0, alpha, 0.0))
    to_partial = np.where(s == 0, 1.0, alpha)
    return np.where(t == 0, to_complete, np.where(t == m, 1.0, to_partial))


@dataclass
class _State:
    """Per-pattern frequencies, risks and members, grown as suppressions create patterns."""

    m: int
    alpha: float
    threshold: float
    weights: np.ndarray
    allowed: np.ndarray  # columns that may be suppressed, least important first
    strategy: str
    pat: np.ndarray  # (capacity, m) int32
    nmiss: np.ndarray
    c: np.ndarray
    W: np.ndarray
    f: np.ndarray
    F: np.ndarray
    r: np.ndarray
    end: np.ndarray  # original members: order[ptr:end] (sorted rows); ptr = the next not moved
    ptr: np.ndarray
    ver: np.ndarray
    order: np.ndarray
    rec_pat: np.ndarray
    P: int
    index: dict = field(default_factory=dict)
    moved: dict = field(default_factory=dict)  # pattern -> heap of rows moved into it
    heap: list = field(default_factory=list)
    steps: int = 0
    #: rows that stand for several records not loaded (a compressed table's row): never moved
    grouped: np.ndarray | None = None

    # -- members ---------------------------------------------------------------------------------
    def min_row(self, p: int) -> int:
        a = int(self.order[self.ptr[p]]) if self.ptr[p] < self.end[p] else 1 << 62
        h = self.moved.get(p)
        return min(a, h[0]) if h else a

    def take_min_row(self, p: int) -> int:
        row = self.min_row(p)
        h = self.moved.get(p)
        if h and h[0] == row:
            heapq.heappop(h)
        else:
            self.ptr[p] += 1
        return row

    # -- patterns --------------------------------------------------------------------------------
    def compatible(self, row: np.ndarray) -> np.ndarray:
        """Indices of the patterns compatible with ``row`` (agree wherever both are observed)."""
        ok = np.ones(self.P, dtype=bool)
        pat = self.pat[: self.P]
        for j in np.flatnonzero(row >= 0):
            col = pat[:, j]
            ok &= (col == row[j]) | (col < 0)
        return np.flatnonzero(ok)

    def frequencies_of_new(self, row: np.ndarray, comp: np.ndarray) -> tuple[float, float]:
        """f and \\hat F of a pattern that has no record yet, from the patterns ``comp``."""
        w = _contribution(int((row < 0).sum()), self.nmiss[comp], self.m, self.alpha)
        return float(w @ self.c[comp]), float(w @ self.W[comp])

    def add_pattern(self, row: np.ndarray, comp: np.ndarray) -> int:
        if self.P == self.pat.shape[0]:
            self._grow()
        p = self.P
        self.pat[p] = row
        self.nmiss[p] = int((row < 0).sum())
        self.f[p], self.F[p] = self.frequencies_of_new(row, comp)
        self.c[p] = self.W[p] = self.r[p] = 0.0
        self.end[p] = self.ptr[p] = 0
        self.index[row.tobytes()] = p
        self.P += 1
        return p

    def _grow(self) -> None:
        cap = max(2 * self.pat.shape[0], 16)
        for name in ("pat", "nmiss", "c", "W", "f", "F", "r", "end", "ptr", "ver"):
            old = getattr(self, name)
            new = np.zeros((cap,) + old.shape[1:], dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)

    def candidates(self, p: int) -> np.ndarray:
        return self.allowed[self.pat[p, self.allowed] >= 0]

    def push(self, ps: np.ndarray) -> None:
        """Invalidate the queue entries of ``ps`` and queue those that are unsafe."""
        self.ver[ps] += 1
        unsafe = ps[(self.c[ps] > 0) & (self.r[ps] > self.threshold)]
        if unsafe.size:
            unsafe = unsafe[(self.pat[unsafe][:, self.allowed] >= 0).any(axis=1)]
        for p in unsafe.tolist():
            heapq.heappush(self.heap, (-float(self.r[p]), self.min_row(p), p, int(self.ver[p])))


def _initial_state(codes, weights, threshold, allowed, strategy, alpha, factorize, multiplicity=None) -> _State:
    ids, patterns, counts, f, F, r = pattern_risk(codes, weights, alpha, factorize, multiplicity)
    P, m = patterns.shape
    order = np.argsort(ids, kind="stable")
    bounds = np.searchsorted(ids[order], np.arange(P + 1))
    if weights is not None:
        w = np.asarray(weights, dtype=float)
    else:  # without weights W counts records (a row of a compressed table: its records)
        w = np.ones(len(ids)) if multiplicity is None else np.asarray(multiplicity, dtype=float)
    st = _State(
        m=m,
        alpha=alpha,
        threshold=threshold,
        weights=w,
        allowed=np.asarray(allowed, dtype=np.int64),
        strategy=strategy,
        pat=np.ascontiguousarray(patterns, dtype=np.int32),
        nmiss=(patterns < 0).sum(axis=1).astype(np.int64),
        c=np.asarray(counts, dtype=float).copy(),
        W=np.bincount(ids, weights=w, minlength=P).astype(float),
        f=f.astype(float),
        F=F.astype(float),
        r=r.astype(float),
        end=bounds[1:].copy(),
        ptr=bounds[:-1].copy(),
        ver=np.zeros(P, dtype=np.int64),
        order=order,
        rec_pat=ids.astype(np.int64),
        P=P,
    )
    st.index = {st.pat[p].tobytes(): p for p in range(P)}
    if multiplicity is not None:
        st.grouped = np.asarray(multiplicity) > 1
    st.push(np.arange(P))
    return st


def _choose(st: _State, s: int, row: int) -> int:
    """The column to suppress in a record of pattern s: the least important one still
    observed, or (``min_risk``) the one giving the record the lowest risk (ties, within a
    relative 1e-12: the less important)."""
    cand = st.candidates(s)
    if st.strategy == "importance" or cand.size == 1:
        return int(cand[0])
    move = 1.0 - float(_contribution(st.nmiss[s] + 1, st.nmiss[s], st.m, st.alpha))  # the record's own weight
    risks = np.empty(cand.size)
    for k, j in enumerate(cand):
        t_row = st.pat[s].copy()
        t_row[j] = -1
        t = st.index.get(t_row.tobytes())
        if t is None:
            f_t, F_t = st.frequencies_of_new(t_row, st.compatible(t_row))
        else:
            f_t, F_t = float(st.f[t]), float(st.F[t])
        risks[k] = individual_risk_values(np.array([f_t + move]), np.array([F_t + move * st.weights[row]]))[0][0]
    return int(cand[np.flatnonzero(risks <= risks.min() * (1.0 + _TIE))[0]])


def _move(st: _State, row: int, s: int, j: int) -> None:
    """Suppress column j of record ``row`` (pattern s) and update the patterns it affects."""
    t_row = st.pat[s].copy()
    t_row[j] = -1
    comp = st.compatible(t_row)
    t = st.index.get(t_row.tobytes())
    if t is None:
        t = st.add_pattern(t_row, comp)
        comp = np.append(comp, t)
    nm = st.nmiss[comp]
    from_s = _contribution(nm, st.nmiss[s], st.m, st.alpha)
    from_s = from_s * ((st.pat[comp, j] == st.pat[s, j]) | (st.pat[comp, j] < 0))  # compatible with s
    from_t = _contribution(nm, st.nmiss[t], st.m, st.alpha)
    from_s[comp == s] = 1.0
    from_t[comp == t] = 1.0
    d = from_t - from_s
    w = st.weights[row]
    st.f[comp] += d
    st.F[comp] += w * d
    st.c[s] -= 1.0
    st.c[t] += 1.0
    st.W[s] -= w
    st.W[t] += w
    heapq.heappush(st.moved.setdefault(t, []), row)
    st.rec_pat[row] = t
    live = comp[st.c[comp] > 0]
    st.r[comp] = 0.0
    if live.size:
        st.r[live] = individual_risk_values(st.f[live], st.F[live])[0]
    st.push(comp)
    st.steps += 1


def _run(st: _State) -> None:
    """Suppress, record by record, until no queued (unsafe, suppressible) pattern is left."""
    while st.heap:
        neg_r, row, p, ver = heapq.heappop(st.heap)
        if ver != st.ver[p]:
            continue
        if st.grouped is not None and st.grouped[st.min_row(p)]:
            raise NeedRecords(st.min_row(p))
        row = st.take_min_row(p)
        j = _choose(st, p, row)
        _move(st, row, p, j)


def _codes_of(st: _State) -> np.ndarray:
    return np.asfortranarray(st.pat[st.rec_pat])


class NeedRecords(Exception):  # noqa: N818 - a signal, not an error
    """The iterative method reached a row that stands for several records: they are needed."""

    def __init__(self, row: int):
        super().__init__(row)
        self.row = row


def suppress_iteratively(
    codes: np.ndarray,
    weights: np.ndarray | None,
    threshold: float,
    allowed,
    *,
    strategy: str = "importance",
    alpha: float = 1.0,
    factorize=None,
    multiplicity=None,
):
    """Suppress key values until no record has risk above ``threshold`` or can be suppressed
    further.

    Repeatedly the record with the highest risk (ties: the first in row order) among the
    records above the threshold that still have a suppressible value gets one suppression:
    the first column of ``allowed`` (least important first) it still has, or with
    ``strategy="min_risk"`` the column whose suppression gives it the lowest risk. Then f,
    \\hat F and r of the affected patterns are updated.

    Parameters
    ----------
    codes : ndarray (n, m) int, -1 = missing
    weights : ndarray (n,) or None
    threshold : float
        r*: a record is unsafe when r_i > r*.
    allowed : sequence of int
        The columns that may be suppressed, from the least to the most important.
    strategy : {"importance", "min_risk"}
    alpha : float
        Weight of matches through missing values.
    factorize : callable, optional
        An engine's GROUP BY for the pattern table.
    multiplicity : ndarray (n,), optional
        Records each row stands for (rows sorted by their first record's position; ``weights``
        their weight sums). A row of several records is never split: when the method would
        suppress in it, :class:`NeedRecords` is raised with the row, to be expanded into its
        records and the call repeated.

    Returns
    -------
    new_codes : ndarray (n, m) int32
    risk : ndarray (n,)
        The risk of every record afterwards (recounted from scratch).
    unresolved : ndarray (n,) of bool
        Records still above the threshold (none of their allowed columns is left).
    steps : int
        Number of suppressions.
    """
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy: {strategy!r}")
    current = np.asfortranarray(codes, dtype=np.int32)
    steps = 0
    while True:
        st = _initial_state(current, weights, threshold, allowed, strategy, alpha, factorize, multiplicity)
        if not st.heap:
            break
        _run(st)
        steps += st.steps
        current = _codes_of(st)
    risk = st.r[st.rec_pat]
    return current, risk, risk > threshold, steps


def suppress_iteratively_rows(codes, counts, first, wsums, threshold, allowed, *, strategy, alpha, records_of):
    """:func:`suppress_iteratively` on the rows of a compressed table, with the same result.

    Rows of one record are records. A row of several records stays one row (with its count
    and weight sum) until the method would suppress in it; then its records are fetched
    (``records_of(rows) -> (positions, row of each, weight of each or None)``) and the method
    starts again (it is deterministic, so it repeats its steps up to that point). The rows
    above the threshold at the start are fetched at once.

    Returns ``(pos, row, mult, new_codes, risk, steps)`` per entry: a record's position, or a
    row's first position with its count (``mult`` > 1: never changed).
    """
    codes = np.asarray(codes, dtype=np.int32)
    counts = np.asarray(counts, dtype=np.int64)
    _, _, _, _, _, r0 = pattern_risk(codes, wsums, alpha, multiplicity=counts)
    ids0 = pattern_table(codes, multiplicity=counts)[0]
    need = set(np.flatnonzero((r0[ids0] > threshold) & (counts > 1)).tolist())
    loaded: dict = {}
    while True:
        if need:
            pos, row_of, w = records_of(np.array(sorted(need), dtype=np.int64))
            for r in need:
                sel = row_of == r
                loaded[r] = (pos[sel], None if w is None else w[sel])
            need = set()
        pos, row, mult, w = _entries(counts, first, wsums, loaded)
        try:
            new, risk, _, steps = suppress_iteratively(
                codes[row], w, threshold, allowed, strategy=strategy, alpha=alpha, multiplicity=mult
            )
        except NeedRecords as sig:
            need = {int(row[sig.row])}
            continue
        return pos, row, mult, new, risk, steps


def _entries(counts, first, wsums, loaded: dict):
    """The rows, with the loaded ones replaced by their records, in position order."""
    pos, row, mult, w = [], [], [], []
    rest = np.array([r for r in range(len(counts)) if r not in loaded], dtype=np.int64)
    pos.append(np.asarray(first, dtype=np.int64)[rest])
    row.append(rest)
    mult.append(counts[rest])
    w.append(None if wsums is None else np.asarray(wsums, dtype=float)[rest])
    for r, (p, wr) in loaded.items():
        pos.append(p)
        row.append(np.full(len(p), r, dtype=np.int64))
        mult.append(np.ones(len(p), dtype=np.int64))
        w.append(wr)
    order = np.argsort(np.concatenate(pos), kind="stable")
    weights = None if wsums is None else np.concatenate(w)[order]
    return np.concatenate(pos)[order], np.concatenate(row)[order], np.concatenate(mult)[order], weights


# ----------------------------------------------------------------------------------------------
# the household rule
# ----------------------------------------------------------------------------------------------
def household_unsafe(risk: np.ndarray, sizes: np.ndarray, household_threshold: float) -> np.ndarray:
    """The mu-ARGUS household rule per record: r_i >= delta_g = r^h* / |g| (the household is
    not guaranteed below r^h* by the union bound r^h_g <= sum_{i in g} r_i)."""
    return np.asarray(risk) >= household_threshold / np.asarray(sizes, dtype=float)


def _one_per_household(risk: np.ndarray, household: np.ndarray, unsafe: np.ndarray) -> np.ndarray:
    """Among the ``unsafe`` records, the one of highest risk in each household (ties: the
    first in row order), in row order."""
    rows = np.flatnonzero(unsafe)
    order = rows[np.lexsort((rows, -risk[rows]))]
    _, first = np.unique(household[order], return_index=True)
    return np.sort(order[first])


def _household_columns(current, rows, allowed, strategy, weights, alpha, factorize) -> np.ndarray:
    """The column to suppress in each of ``rows``: the least important one still observed, or
    (``min_risk``) the one that gives the record the lowest risk when every record of the
    pass loses that column (ties, within a relative 1e-12: the less important)."""
    observed = current[np.ix_(rows, allowed)] >= 0
    if strategy == "importance":
        return allowed[np.argmax(observed, axis=1)]
    risks = np.full(observed.shape, np.inf)
    for k, j in enumerate(allowed):
        trial = np.array(current, order="F", copy=True)
        trial[rows[observed[:, k]], j] = -1
        risks[:, k] = np.where(observed[:, k], record_risk(trial, weights, alpha, factorize)[rows], np.inf)
    best = risks.min(axis=1, keepdims=True)
    return allowed[np.argmax(risks <= best * (1.0 + _TIE), axis=1)]


def suppress_households(
    codes: np.ndarray,
    weights: np.ndarray | None,
    household: np.ndarray,
    sizes: np.ndarray,
    household_threshold: float,
    allowed,
    *,
    threshold: float | None = None,
    strategy: str = "importance",
    alpha: float = 1.0,
    factorize=None,
):
    """Suppress key values until every record meets the individual rule (r_i <= ``threshold``,
    when given) and the mu-ARGUS household rule r_i < delta_g = r^h* / |g|, or can be
    suppressed no further.

    Each round first runs :func:`suppress_iteratively` for the individual rule, then recounts
    the risks and, in every household with a record breaking the household rule, suppresses
    one value of its riskiest such record (ties: the first in row order; the column as
    :func:`suppress_iteratively` chooses it, ``min_risk`` judged with the records of the round
    suppressed together). Rounds repeat until no record that can still be suppressed breaks a
    rule. By the union bound r^h_g = 1 - prod (1 - r_i) <= sum_{i in g} r_i < r^h*, so every
    resolved household has a household risk below r^h*.

    Parameters
    ----------
    codes : ndarray (n, m) int, -1 = missing
    weights : ndarray (n,) or None
    household : ndarray (n,) int
        Household code of every record.
    sizes : ndarray (n,)
        |g|: the size of every record's household (in the whole file).
    household_threshold : float
        r^h*.
    allowed : sequence of int
        The columns that may be suppressed, least important first.
    threshold : float, optional
        r*: also keep every record at r_i <= r*.
    strategy, alpha, factorize
        As in :func:`suppress_iteratively`.

    Returns
    -------
    new_codes : ndarray (n, m) int32
    risk : ndarray (n,)
    unresolved : ndarray (n,) of bool
        Records still breaking a rule (none of their allowed columns left).
    steps : int
        Number of suppressions.
    """
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy: {strategy!r}")
    allowed = np.asarray(allowed, dtype=np.int64)
    household = np.asarray(household)
    current = np.array(codes, dtype=np.int32, order="F", copy=True)
    steps = 0
    while True:
        if threshold is not None:
            current, risk, _, s = suppress_iteratively(
                current, weights, threshold, allowed, strategy=strategy, alpha=alpha, factorize=factorize
            )
            steps += s
        else:
            risk = record_risk(current, weights, alpha, factorize)
        breaks = household_unsafe(risk, sizes, household_threshold)
        left = (current[:, allowed] >= 0).any(axis=1) if allowed.size else np.zeros(len(risk), dtype=bool)
        if not np.any(breaks & left):
            break
        rows = _one_per_household(risk, household, breaks & left)
        cols = _household_columns(current, rows, allowed, strategy, weights, alpha, factorize)
        current[rows, cols] = -1
        steps += rows.size
    unresolved = breaks if threshold is None else breaks | (risk > threshold)
    return current, risk, unresolved, steps
