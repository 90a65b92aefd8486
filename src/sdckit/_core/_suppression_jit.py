"""The greedy local suppression of :func:`sdckit._core.suppression.greedy_suppression`
compiled by Numba, when Numba is installed (the extra ``sdckit[fast]``): the same passes over
the patterns below k, the same choices and the same restoring pass, so the same suppressed
cells (its tests compare the two).

The NumPy kernel pays a few NumPy calls of overhead for every suppression and every restored
value, each over every distinct pattern. Compiled, only the patterns that can matter are
visited: the patterns are listed by their values (a missing value being one) at every pair of
keys. A pattern with at most one mismatch against p (the only patterns a suppression in p
changes) agrees with p, or is missing, at two of any three keys observed in p at least, so it
is in one of the 12 lists of p's values and missing values at the pairs of three keys; a
pattern compatible with p agrees or is missing at every key observed in p, so it is in one of
the 4 lists of a pair of them. The keys taken are those whose values are the least frequent
among the patterns. The records of a pattern move with it as a linked list. The choices compare sums of record counts, exact in floating point: the
compiled loop is taken with alpha = 1 only (a sum with alpha < 1 may round in another order).

Numba costs once per process: its import and the loading of the machine code (compiled on the
first run ever and cached on disk), about 0.5-1 s. The compiled loop is therefore taken when
Numba is loaded already or when the file has at least :data:`JIT_MIN_PATTERNS` patterns below
k, where the NumPy kernel takes about as long.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

__all__ = ["JIT_MIN_PATTERNS", "greedy_jit", "load", "use_jit"]

#: patterns below k from which the compiled loop is worth Numba's one-off cost
JIT_MIN_PATTERNS = 500
#: the largest key of a pattern (mixed radix of the codes + 1) the compiled loop hashes
_MAX_KEY = 2**62

_compiled = None
_installed: bool | None = None


def _importable() -> bool:
    global _installed
    if _installed is None:
        _installed = importlib.util.find_spec("numba") is not None
    return _installed


def use_jit(n_below: int, alpha: float, radix) -> bool:
    """Whether the compiled loop is taken: Numba installed, alpha = 1, the patterns' keys (and
    those of the pair lists) fit in 62 bits, and Numba loaded already or ``n_below`` patterns below k at least
    :data:`JIT_MIN_PATTERNS`."""
    if alpha != 1.0 or not _importable():
        return False
    total, width = 1, 1
    for r in radix:
        total *= int(r)
        width = max(width, int(r))
    if total >= _MAX_KEY or (len(radix) * width) ** 2 >= _MAX_KEY:
        return False
    return _compiled is not None or "numba" in sys.modules or n_below >= JIT_MIN_PATTERNS


def load() -> bool:
    """Load Numba and the compiled loop now (a caller with many suppressions to make); False
    without Numba."""
    if not _importable():
        return False
    _kernel()
    return True


def _kernel():
    global _compiled, _grow, _grow_pool, _collect, _insert, _write
    if _compiled is None:
        import numba

        jit = numba.njit(cache=True, nogil=True)
        _grow, _grow_pool = jit(_grow_arrays), jit(_grow_pool_arrays)
        _insert = jit(_insert_pattern)
        _write = jit(_write_pattern)
        _collect = jit(_collect_pairs)
        _compiled = jit(_greedy_loop)
    return _compiled


def greedy_jit(codes, pats, ids, cnt, f, types, first, k: float, W, col_order, restore_order, radix, n: float):
    """The suppressed codes of :func:`greedy_suppression` (``pats``, ``ids``, ``cnt``, ``f``,
    ``types``, ``first``: its pattern table; ``k`` = min(k, n))."""
    run = _kernel()
    return run(
        np.ascontiguousarray(codes, dtype=np.int32),
        np.ascontiguousarray(pats, dtype=np.int32),
        np.asarray(ids, dtype=np.int64),
        np.asarray(cnt, dtype=np.float64),
        np.asarray(f, dtype=np.float64),
        np.asarray(types, dtype=np.int8),
        np.asarray(first, dtype=np.int64),
        float(k),
        np.ascontiguousarray(W, dtype=np.float64),
        np.asarray(col_order, dtype=np.int64),
        np.asarray(restore_order, dtype=np.int64),
        np.asarray(radix, dtype=np.int64),
        float(n),
    )


# the helpers below are compiled by _kernel(), which binds these names to the compiled ones
def _grow_arrays(pats, cnt, f, types, first, c, which, seen, size):  # pragma: no cover - compiled
    """The per-pattern arrays with twice the room (the first ``size`` rows kept)."""
    cap = 2 * pats.shape[0]
    m = pats.shape[1]
    pats2 = np.full((cap, m), -1, np.int32)
    pats2[:size] = pats[:size]
    cnt2 = np.zeros(cap)
    cnt2[:size] = cnt[:size]
    f2 = np.zeros(cap)
    f2[:size] = f[:size]
    types2 = np.zeros(cap, np.int8)
    types2[:size] = types[:size]
    first2 = np.full(cap, np.iinfo(np.int64).max, np.int64)
    first2[:size] = first[:size]
    c2 = np.zeros(cap, np.int8)
    c2[:size] = c[:size]
    which2 = np.zeros(cap, np.int8)
    which2[:size] = which[:size]
    seen2 = np.zeros(cap, np.int64)
    seen2[:size] = seen[:size]
    return pats2, cnt2, f2, types2, first2, c2, which2, seen2


def _grow_pool_arrays(pq, pn):  # pragma: no cover - compiled
    """The pair lists' entries (pattern, next entry) with twice the room."""
    used = pq.shape[0]
    pq2 = np.empty(2 * used, np.int64)
    pq2[:used] = pq
    pn2 = np.empty(2 * used, np.int64)
    pn2[:used] = pn
    return pq2, pn2


def _write_pattern(r, target, pats, types, cnt, first, big):  # pragma: no cover - compiled
    """A new pattern r with the values ``target`` and no records: its row, its type (0 every
    key observed, 1 partial, 2 every key missing), no count, no first record."""
    m = pats.shape[1]
    n_miss = 0
    for j in range(m):
        pats[r, j] = target[j]
        if target[j] < 0:
            n_miss += 1
    types[r] = 0 if n_miss == 0 else (2 if n_miss == m else 1)
    cnt[r] = 0.0
    first[r] = big


def _insert_pattern(q, pats, width, phead, pq, pn, used, bsize):  # pragma: no cover - compiled
    """Pattern q put at the head of its list at every pair of keys; returns the entries and
    the number used."""
    m = pats.shape[1]
    for j1 in range(m):
        x1 = pats[q, j1] + 1
        bsize[j1, x1] += 1
        for j2 in range(j1 + 1, m):
            pk = ((j1 * m + j2) * width + x1) * width + pats[q, j2] + 1
            if used == pq.shape[0]:
                pq, pn = _grow_pool(pq, pn)
            pq[used] = q
            pn[used] = phead[pk] if pk in phead else -1
            phead[pk] = used
            used += 1
    return pq, pn, used


def _collect_pairs(row, keys, n_keys, width, phead, pq, pn, seen, visit, out):  # pragma: no cover - compiled
    """The patterns in the lists of ``row``'s values or missing values at every pair of
    ``keys[:n_keys]`` (increasing), each once (``seen`` marked with ``visit``): ``(out, n)``."""
    m = row.shape[0]
    n = 0
    for a in range(n_keys):
        j1 = keys[a]
        for b in range(a + 1, n_keys):
            j2 = keys[b]
            for h1 in range(2):
                x1 = row[j1] + 1 if h1 == 0 else 0
                for h2 in range(2):
                    x2 = row[j2] + 1 if h2 == 0 else 0
                    pk = ((j1 * m + j2) * width + x1) * width + x2
                    if pk not in phead:
                        continue
                    t = phead[pk]
                    while t >= 0:
                        q = pq[t]
                        if seen[q] != visit:
                            seen[q] = visit
                            if n == out.shape[0]:
                                out2 = np.empty(2 * n, np.int64)
                                out2[:n] = out
                                out = out2
                            out[n] = q
                            n += 1
                        t = pn[t]
    return out, n


def _greedy_loop(
    codes, pats0, ids, cnt0, f0, types0, first0, k, W, col_order, restore_order, radix, n_total
):  # pragma: no cover - compiled
    """The passes and the restoring pass of the greedy, on the pattern table (``pats0`` rows,
    ``ids`` the pattern of each record); returns the codes of every record.

    ``phead[pair key]`` is the last entry of a pair list (``pq``: the pattern of an entry,
    ``pn``: the entry before it); ``bsize[j, x + 1]`` counts the patterns whose value at key j
    is x (x = -1: missing). ``cl`` lists the patterns with at most one mismatch against the
    pattern at hand (``c``: their mismatches, ``which``: the key of the one), the only ones its
    suppression changes."""
    n, m = codes.shape
    size = pats0.shape[0]
    cap = max(16, 2 * size)
    big = np.iinfo(np.int64).max
    tol = k - 1e-9
    index = dict()  # the key of a pattern (mixed radix of its codes + 1) -> its row
    index[np.int64(0)] = np.int64(0)
    index.pop(np.int64(0))
    phead = dict()  # the key of a pair list -> its last entry
    phead[np.int64(0)] = np.int64(0)
    phead.pop(np.int64(0))
    width = 0
    for j in range(m):
        if radix[j] > width:
            width = radix[j]
    pats = np.full((cap, m), -1, np.int32)
    pats[:size] = pats0
    cnt = np.zeros(cap)
    cnt[:size] = cnt0
    f = np.zeros(cap)
    f[:size] = f0
    types = np.zeros(cap, np.int8)
    types[:size] = types0
    first = np.full(cap, big, np.int64)
    first[:size] = first0
    c = np.zeros(cap, np.int8)
    which = np.zeros(cap, np.int8)
    seen = np.zeros(cap, np.int64)  # the visit that last listed a pattern as a candidate
    bsize = np.zeros((m, width), np.int64)
    pq = np.empty(max(16, size * max(1, m * (m - 1) // 2)), np.int64)
    pn = np.empty(pq.shape[0], np.int64)
    used = 0
    head = np.full(cap, -1, np.int64)
    tail = np.full(cap, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    for i in range(n):
        p = ids[i]
        if head[p] < 0:
            head[p] = i
        else:
            nxt[tail[p]] = i
        tail[p] = i
    for p in range(size):
        key = 0
        for j in range(m):
            key = key * radix[j] + pats[p, j] + 1
            bsize[j, pats[p, j] + 1] += 1
        index[key] = p
    for j1 in range(m):  # the pair lists, pair by pair (a list's entries near each other)
        for j2 in range(j1 + 1, m):
            for p in range(size):
                pk = ((j1 * m + j2) * width + pats[p, j1] + 1) * width + pats[p, j2] + 1
                pq[used] = p
                pn[used] = phead[pk] if pk in phead else -1
                phead[pk] = used
                used += 1
    target = np.empty(m, np.int32)
    fa = np.empty(m)
    one_v = np.empty(m)
    cl = np.empty(16, np.int64)
    cand = np.empty(16, np.int64)
    keys = np.empty(3, np.int64)
    ksz = np.empty(3, np.int64)
    visit = 0
    # -- the passes -------------------------------------------------------------------------
    while True:
        n_live = 0
        for p in range(size):
            if cnt[p] > 0 and f[p] < tol:
                n_live += 1
        if n_live == 0:
            break
        live = np.empty(n_live, np.int64)
        t = 0
        for p in range(size):
            if cnt[p] > 0 and f[p] < tol:
                live[t] = p
                t += 1
        by_first = live[np.argsort(first[live])]
        order = by_first[np.argsort(f[by_first], kind="mergesort")]
        moved = False
        for p in order:
            if cnt[p] <= 0 or f[p] >= tol:
                continue
            n_obs = 0
            for j in range(m):
                if pats[p, j] >= 0:
                    n_obs += 1
            if n_obs == 0:
                continue
            # the candidates: the pair lists of three observed keys, else every pattern
            visit += 1
            if n_obs >= 3:
                n_keys = 0
                for j in range(m):  # the three observed keys whose value (or missing) is rarest
                    if pats[p, j] < 0:
                        continue
                    sz = bsize[j, pats[p, j] + 1] + bsize[j, 0]
                    if n_keys < 3:
                        keys[n_keys] = j
                        ksz[n_keys] = sz
                        n_keys += 1
                    else:
                        worst = 0
                        for t in range(1, 3):
                            if ksz[t] > ksz[worst]:
                                worst = t
                        if sz < ksz[worst]:
                            keys[worst] = j
                            ksz[worst] = sz
                keys.sort()
                cand, n_cand = _collect(pats[p], keys, 3, width, phead, pq, pn, seen, visit, cand)
            else:
                n_cand = size
                if cand.shape[0] < size:
                    cand = np.empty(2 * size, np.int64)
                for q in range(size):
                    cand[q] = q
            n_cl = 0
            for t in range(n_cand):
                q = cand[t]
                cq = 0
                wq = -1
                for j in range(m):
                    a = pats[p, j]
                    b = pats[q, j]
                    if a >= 0 and b >= 0 and a != b:
                        cq += 1
                        wq = j
                        if cq == 2:
                            break
                if cq <= 1:
                    c[q] = cq
                    which[q] = wq
                    if n_cl == cl.shape[0]:
                        cl2 = np.empty(2 * n_cl, np.int64)
                        cl2[:n_cl] = cl
                        cl = cl2
                    cl[n_cl] = q
                    n_cl += 1
            # f of p's records once each observed key is suppressed in all of them
            for j in range(m):
                fa[j] = -1.0
                one_v[j] = 0.0
            if n_obs == 1:
                for j in range(m):
                    if pats[p, j] >= 0:
                        fa[j] = n_total
            else:
                base = 0.0
                for t in range(n_cl):
                    q = cl[t]
                    if c[q] == 0:
                        base += W[1, types[q]] * cnt[q]
                    else:
                        one_v[which[q]] += W[1, types[q]] * cnt[q]
                for v in range(m):
                    if pats[p, v] < 0:
                        continue
                    total = base + one_v[v]
                    total += cnt[p] * (1.0 - W[1, types[p]])
                    key = 0
                    for j in range(m):
                        key = key * radix[j] + (0 if j == v else pats[p, j] + 1)
                    r = index[key] if key in index else -1
                    if r >= 0 and r != p:
                        total += cnt[r] * (1.0 - W[1, types[r]])
                    fa[v] = total
            # the least important key that lifts p to k, else the one that lifts it most
            v = -1
            for j in col_order:
                if fa[j] >= 0.0 and fa[j] >= k:
                    v = j
                    break
            if v < 0:
                best = -1.0
                for j in range(m):
                    if fa[j] >= 0.0 and fa[j] > best:
                        best = fa[j]
                for j in col_order:
                    if fa[j] >= 0.0 and fa[j] == best:
                        v = j
                        break
            for j in range(m):
                target[j] = pats[p, j]
            target[v] = -1
            key = 0
            for j in range(m):
                key = key * radix[j] + target[j] + 1
            r = index[key] if key in index else -1
            if r < 0:
                if size == cap:
                    pats, cnt, f, types, first, c, which, seen = _grow(pats, cnt, f, types, first, c, which, seen, size)
                    head2 = np.full(2 * cap, -1, np.int64)
                    head2[:size] = head[:size]
                    head = head2
                    tail2 = np.full(2 * cap, -1, np.int64)
                    tail2[:size] = tail[:size]
                    tail = tail2
                    cap *= 2
                r = size
                size += 1
                index[key] = r
                _write(r, target, pats, types, cnt, first, big)
                pq, pn, used = _insert(r, pats, width, phead, pq, pn, used, bsize)
                c[r] = 0  # p and r agree wherever both are observed
                which[r] = -1
                seen[r] = visit
                if n_cl == cl.shape[0]:
                    cl2 = np.empty(2 * n_cl, np.int64)
                    cl2[:n_cl] = cl
                    cl = cl2
                cl[n_cl] = r
                n_cl += 1
                if types[r] == 2:
                    f[r] = n_total
                else:
                    total = 0.0
                    for t in range(n_cl):
                        q = cl[t]
                        if c[q] == 0 or which[q] == v:
                            total += W[types[r], types[q]] * cnt[q]
                    f[r] = total - W[types[r], types[r]] * cnt[r] + cnt[r]
            # p's records move to r: f changes where either is compatible
            moving = cnt[p]
            tf = types[p]
            tt = types[r]
            for t in range(n_cl):
                q = cl[t]
                cp = c[q] == 0
                cr = cp or which[q] == v
                if not (cp or cr):
                    continue
                tq = types[q]
                d = moving * (W[tq, tt] * (1.0 if cr else 0.0) - W[tq, tf] * (1.0 if cp else 0.0))
                if q == p:
                    d += moving * (W[tq, tf] - 1.0) * (1.0 if cp else 0.0)
                if q == r:
                    d += moving * (1.0 - W[tq, tt] * (1.0 if cr else 0.0))
                if tq == 2:
                    d = 0.0
                f[q] += d
            cnt[p] -= moving
            cnt[r] += moving
            if head[p] >= 0:
                if head[r] < 0:
                    head[r] = head[p]
                else:
                    nxt[tail[r]] = head[p]
                tail[r] = tail[p]
                head[p] = -1
                tail[p] = -1
            if first[p] < first[r]:
                first[r] = first[p]
            moved = True
        if not moved:
            break
    rec = np.empty(n, np.int64)
    for p in range(size):
        i = head[p]
        while i >= 0:
            rec[i] = p
            i = nxt[i]
    out = np.empty((n, m), np.int32)
    for i in range(n):
        for j in range(m):
            out[i, j] = pats[rec[i], j]
    # -- the restoring pass -----------------------------------------------------------------
    n_bad = 0
    for p in range(size):
        if cnt[p] > 0 and f[p] < tol:
            n_bad += 1
    for v in restore_order:
        for i in range(n):
            if not (out[i, v] < 0 and codes[i, v] >= 0):
                continue
            a = rec[i]
            for j in range(m):
                target[j] = pats[a, j]
            target[v] = codes[i, v]
            key = 0
            for j in range(m):
                key = key * radix[j] + target[j] + 1
            b = index[key] if key in index else -1
            new_b = b < 0
            if new_b:
                if size == cap:
                    pats, cnt, f, types, first, c, which, seen = _grow(pats, cnt, f, types, first, c, which, seen, size)
                    cap *= 2
                b = size
                size += 1
                index[key] = b
                _write(b, target, pats, types, cnt, first, big)
                pq, pn, used = _insert(b, pats, width, phead, pq, pn, used, bsize)
            # the patterns compatible with a (which = 1 when also with b): in the pair lists of
            # two keys observed in a, else among every pattern
            visit += 1
            n_obs = 0
            for j in range(m):
                if pats[a, j] >= 0:
                    n_obs += 1
            if n_obs >= 2:
                n_keys = 0
                for j in range(m):
                    if pats[a, j] < 0:
                        continue
                    sz = bsize[j, pats[a, j] + 1] + bsize[j, 0]
                    if n_keys < 2:
                        keys[n_keys] = j
                        ksz[n_keys] = sz
                        n_keys += 1
                    else:
                        worst = 0 if ksz[0] >= ksz[1] else 1
                        if sz < ksz[worst]:
                            keys[worst] = j
                            ksz[worst] = sz
                if keys[0] > keys[1]:
                    keys[0], keys[1] = keys[1], keys[0]
                cand, n_cand = _collect(pats[a], keys, 2, width, phead, pq, pn, seen, visit, cand)
            else:
                n_cand = size
                if cand.shape[0] < size:
                    cand = np.empty(2 * size, np.int64)
                for q in range(size):
                    cand[q] = q
            n_cl = 0
            for t in range(n_cand):
                q = cand[t]
                ok = True
                for j in range(m):
                    x = pats[a, j]
                    y = pats[q, j]
                    if x >= 0 and y >= 0 and x != y:
                        ok = False
                        break
                if ok:
                    y = pats[q, v]
                    which[q] = 1 if (y < 0 or y == target[v]) else 0
                    if n_cl == cl.shape[0]:
                        cl2 = np.empty(2 * n_cl, np.int64)
                        cl2[:n_cl] = cl
                        cl = cl2
                    cl[n_cl] = q
                    n_cl += 1
            if new_b:
                if types[b] == 2:
                    f[b] = n_total
                else:
                    total = 0.0
                    for t in range(n_cl):
                        q = cl[t]
                        if which[q] == 1:
                            total += W[types[b], types[q]] * cnt[q]
                    f[b] = total - W[types[b], types[b]] * cnt[b] + cnt[b]
            ta = types[a]
            tb = types[b]
            before = 0
            after = 0
            for t in range(n_cl):
                q = cl[t]
                cb = which[q] == 1
                tq = types[q]
                d = W[tq, tb] * (1.0 if cb else 0.0) - W[tq, ta]
                if q == a:
                    d += W[tq, ta] - 1.0
                if q == b:
                    d += 1.0 - W[tq, tb] * (1.0 if cb else 0.0)
                if tq == 2:
                    d = 0.0
                new_c = cnt[q] - (1.0 if q == a else 0.0) + (1.0 if q == b else 0.0)
                if cnt[q] > 0 and f[q] < tol:
                    before += 1
                if new_c > 0 and f[q] + d < tol:
                    after += 1
            if n_bad - before + after == 0:
                for t in range(n_cl):
                    q = cl[t]
                    cb = which[q] == 1
                    tq = types[q]
                    d = W[tq, tb] * (1.0 if cb else 0.0) - W[tq, ta]
                    if q == a:
                        d += W[tq, ta] - 1.0
                    if q == b:
                        d += 1.0 - W[tq, tb] * (1.0 if cb else 0.0)
                    if tq == 2:
                        d = 0.0
                    f[q] += d
                cnt[a] -= 1.0
                cnt[b] += 1.0
                rec[i] = b
                if i < first[b]:
                    first[b] = i
                out[i, v] = codes[i, v]
                n_bad = 0
    return out


def _grow(pats, cnt, f, types, first, c, which, seen, size):  # pragma: no cover - bound to the compiled one
    return _grow_arrays(pats, cnt, f, types, first, c, which, seen, size)


def _grow_pool(pq, pn):  # pragma: no cover - bound to the compiled one
    return _grow_pool_arrays(pq, pn)


def _insert(q, pats, width, phead, pq, pn, used, bsize):  # pragma: no cover - bound to the compiled one
    return _insert_pattern(q, pats, width, phead, pq, pn, used, bsize)


def _collect(row, keys, n_keys, width, phead, pq, pn, seen, visit, out):  # pragma: no cover - bound to the compiled one
    return _collect_pairs(row, keys, n_keys, width, phead, pq, pn, seen, visit, out)
