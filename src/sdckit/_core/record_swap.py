r"""Targeted record swapping of households: pure NumPy kernels on integer codes (household
layout, household-level checks, risk levels, swap quotas and the donor search).

Households h carry a unit code per level l = 0 (coarsest) .. L-1 (finest) of a nested
geographic hierarchy, a sampling weight w_{h,l} >= 0 per level (the inverse count of the
household's rarest key profile in its unit, or a user risk), the first level at which the
household is risky (L when it never is) and one profile id per similarity profile.

* Random orders: ordering items by E_i / w_i ascending, E_i ~ Exp(1) independent, is a
  weighted random permutation (each next item drawn with probability proportional to its
  weight among those left; Efraimidis & Spirakis 2006). Items of weight 0 never come up.
* Target: P = H * swap_rate / 2 swaps (pairs), rounded up with probability equal to its
  fraction; distributed over the finest units u in proportion to their households n_u
  (floor(P n_u / H) each, the remaining swaps to units chosen by systematic sampling with
  inclusion probability equal to the fraction).
* Levels are processed from the coarsest to the finest. At level l < L-1 the households
  risky first at l seek a donor; at the finest level those risky there and, in each finest
  unit, random households (weights w_{., L-1}) until the unit's quota of swaps is reached.
* A donor is a household not yet swapped, of positive weight, in another unit of level l,
  with the same profile as the requester on the first similarity profile that offers one;
  among those, the first in a weighted random order drawn once per level (weights
  w_{., l}). Requests are served in a weighted random order; a household already taken as a
  donor is swapped and does not seek another.

Efraimidis, P. S. & Spirakis, P. G. (2006), Weighted random sampling with a reservoir,
Information Processing Letters 97(5), 181-185.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DonorIndex",
    "SwapPlan",
    "dense_ids",
    "first_risky_level",
    "household_layout",
    "household_reduce",
    "lowest_quotas",
    "n_varying",
    "plan_swaps",
    "row_ids",
    "source_rows",
    "split_units",
    "stochastic_round",
    "weighted_order",
]


# ----------------------------------------------------------------------------------------------
# households and their checks
# ----------------------------------------------------------------------------------------------
def dense_ids(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids 0..G-1 (in code order) of non-negative integer codes, and G."""
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size == 0:
        return codes.copy(), 0
    present = np.bincount(codes) > 0
    lut = np.cumsum(present) - 1
    return lut[codes], int(np.count_nonzero(present))


def household_layout(hh: np.ndarray, n_households: int) -> tuple[np.ndarray, np.ndarray]:
    """The first record (position) and the number of records of each household."""
    first = np.full(n_households, hh.size, dtype=np.int64)
    np.minimum.at(first, hh, np.arange(hh.size, dtype=np.int64))
    return first, np.bincount(hh, minlength=n_households).astype(np.int64)


def n_varying(hh: np.ndarray, codes: np.ndarray, first_row: np.ndarray) -> int:
    """Number of households whose records do not all have the code of their first record."""
    differs = codes != codes[first_row][hh]
    return int(np.unique(hh[differs]).size) if differs.any() else 0


def household_reduce(hh: np.ndarray, values: np.ndarray, n_households: int, how: str) -> np.ndarray:
    """Per household the ``"min"`` or ``"max"`` of record values (rows of a 2-D array reduce
    column by column)."""
    values = np.asarray(values, dtype=float)
    fill, ufunc = (np.inf, np.minimum) if how == "min" else (-np.inf, np.maximum)
    out = np.full((n_households, *values.shape[1:]), fill)
    ufunc.at(out, hh, values)
    return out


def split_units(child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The child unit codes that occur with more than one parent unit (the hierarchy is not
    nested there), sorted."""
    if child.size == 0:
        return child[:0]
    order = np.lexsort((parent, child))
    c, p = child[order], parent[order]
    broken = (c[1:] == c[:-1]) & (p[1:] != p[:-1])
    return np.unique(c[1:][broken])


def row_ids(matrix: np.ndarray) -> np.ndarray:
    """Dense id of each row of an integer matrix (equal rows, equal ids); one id for all
    rows of a matrix without columns."""
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0], dtype=np.int64)
    if matrix.shape[1] == 1:
        return dense_ids(matrix[:, 0] - matrix[:, 0].min(initial=0))[0]
    _, inv = np.unique(matrix, axis=0, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def first_risky_level(risky: np.ndarray) -> np.ndarray:
    """Per household the first (coarsest) level at which it is risky; L when it never is."""
    L = risky.shape[1]
    return np.where(risky.any(axis=1), risky.argmax(axis=1), L).astype(np.int64)


def source_rows(hh: np.ndarray, first_row: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """For every record, the record whose household-level values it takes: the first record
    of its household's partner when the household was swapped, itself otherwise."""
    src = np.arange(hh.size, dtype=np.int64)
    p = partner[hh]
    moved = p >= 0
    src[moved] = first_row[p[moved]]
    return src


# ----------------------------------------------------------------------------------------------
# random draws
# ----------------------------------------------------------------------------------------------
def stochastic_round(x: float, rng: np.random.Generator) -> int:
    """floor(x), plus one with probability x - floor(x) (unbiased rounding)."""
    base = int(np.floor(x))
    return base + int(rng.random() < x - base)


def weighted_order(items: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``items`` in a weighted random order: by E / w ascending with E ~ Exp(1) (the next item
    is drawn with probability proportional to its weight among those left)."""
    with np.errstate(divide="ignore"):
        key = rng.exponential(size=items.size) / weights
    return items[np.argsort(key, kind="stable")]


def lowest_quotas(n_per_unit: np.ndarray, pairs: int, rng: np.random.Generator) -> np.ndarray:
    """Swaps per finest unit: floor(P n_u / H), and one more for units chosen by systematic
    sampling with inclusion probability (P n_u mod H) / H, so that they sum to P. Integer
    arithmetic throughout (exact)."""
    n_per_unit = np.asarray(n_per_unit, dtype=np.int64)
    H = int(n_per_unit.sum())
    if H == 0 or pairs == 0:
        return np.zeros(n_per_unit.size, dtype=np.int64)
    exact = pairs * n_per_unit
    base, rem = exact // H, exact % H
    cum = np.cumsum(rem)
    start = int(rng.integers(1, H + 1))  # points start, start + H, ... in (0, sum rem]
    extra = (cum - start) // H - (np.concatenate(([0], cum[:-1])) - start) // H
    return base + extra


# ----------------------------------------------------------------------------------------------
# the donor search
# ----------------------------------------------------------------------------------------------
class DonorIndex:
    """The donors of one level for one similarity profile: households of positive weight,
    grouped by profile id and, within a profile, in the level's weighted random order.

    ``first(start, end, unit, used)`` returns the first household of positions
    [start, end) (one profile's block, see :meth:`bounds`) that is not used and lies outside
    ``unit``, or -1. Used households are skipped through a next-free pointer, runs of the
    requester's unit through a "next other unit" pointer; both are path-compressed (a used
    household stays used), so a search costs about as much as the households it returns.
    """

    def __init__(self, unit: np.ndarray, key: np.ndarray, profile: np.ndarray):
        eligible = np.flatnonzero(np.isfinite(key))
        order = eligible[np.lexsort((key[eligible], profile[eligible]))]
        self.values = profile[order]
        u = unit[order]
        m = order.size
        new_run = np.ones(m, dtype=bool)
        new_run[1:] = u[1:] != u[:-1]
        starts = np.append(np.flatnonzero(new_run), m)
        self._other = starts[1:][np.cumsum(new_run) - 1].tolist() if m else []
        self._hh = order.tolist()
        self._unit = u.tolist()
        self._next = list(range(1, m + 1))
        self._m = m

    def bounds(self, values: np.ndarray) -> tuple[list, list]:
        """The block [start, end) of each profile id in ``values``."""
        return (
            np.searchsorted(self.values, values, side="left").tolist(),
            np.searchsorted(self.values, values, side="right").tolist(),
        )

    def _free(self, pos: int, used) -> int:
        """The first position >= pos whose household is not used (m when none)."""
        nxt, hh, m = self._next, self._hh, self._m
        root = pos
        while root < m and used[hh[root]]:
            root = nxt[root]
        while pos < root:  # path compression: every position passed is used for good
            nxt[pos], pos = root, nxt[pos]
        return root

    def first(self, start: int, end: int, unit: int, used) -> int:
        pos = self._free(start, used)
        passed = []
        while pos < end and self._unit[pos] == unit:
            passed.append(pos)
            pos = self._free(self._other[pos], used)
        for p in passed:  # between p and pos every household is used or in p's unit: jump there next time
            self._other[p] = pos
        return self._hh[pos] if pos < end else -1


@dataclass(frozen=True)
class SwapPlan:
    """The swaps: ``partner`` per household (-1: not swapped); per pair (in the order made)
    the requester, the donor, the level, the similarity profile matched and whether the
    requester was a random fill; ``failed`` marks households that sought a donor and found
    none; ``target_pairs`` is P."""

    partner: np.ndarray
    requester: np.ndarray
    donor: np.ndarray
    level: np.ndarray
    profile: np.ndarray
    fill: np.ndarray
    failed: np.ndarray
    target_pairs: int


class _Pairs:
    """The pairs made so far and the households that found no donor."""

    def __init__(self, n_households: int):
        self.used = bytearray(n_households)  # 1: swapped (shared with a NumPy view)
        self.used_np = np.frombuffer(self.used, dtype=np.uint8)
        self.failed = np.zeros(n_households, dtype=bool)
        self.rows: list[tuple[int, int, int, int, bool]] = []

    def column(self, j: int, dtype=np.int64) -> np.ndarray:
        return np.array([r[j] for r in self.rows], dtype=dtype)


def _serve(pairs: _Pairs, requests: np.ndarray, fill: np.ndarray, indexes, profiles, unit, level: int) -> None:
    """Find a donor for each request in turn (first profile first); a request already taken
    as a donor is swapped and skipped."""
    if requests.size == 0:
        return
    blocks = [idx.bounds(profiles[requests, p]) for p, idx in enumerate(indexes)]
    units, fills, used = unit[requests].tolist(), fill.tolist(), pairs.used
    for j, i in enumerate(requests.tolist()):
        if used[i]:
            continue
        for p, idx in enumerate(indexes):
            d = idx.first(blocks[p][0][j], blocks[p][1][j], units[j], used)
            if d >= 0:
                used[i] = used[d] = 1
                pairs.rows.append((i, d, level, p, fills[j]))
                break
        else:
            pairs.failed[i] = True


def _fill_draw(eligible: np.ndarray, unit: np.ndarray, weight: np.ndarray, need: np.ndarray, rng) -> np.ndarray:
    """In every finest unit, need[u] households drawn without replacement among the eligible,
    with probability proportional to their weight (the first need[u] of a weighted order)."""
    cand = np.flatnonzero(eligible & (weight > 0) & (need[unit] > 0))
    if cand.size == 0:
        return cand
    key = rng.exponential(size=cand.size) / weight[cand]
    order = cand[np.lexsort((key, unit[cand]))]
    u = unit[order]
    rank = np.arange(u.size) - np.searchsorted(u, u, side="left")
    return order[rank < need[u]]


def _lowest_level(pairs: _Pairs, indexes, ctx, quota: np.ndarray, rng) -> None:
    """The finest level: the households risky there, and random households per unit until
    the unit's quota of swaps (counted on the requesters' units, over all levels) is met;
    rounds repeat while a unit short of its quota has households left to draw and its last
    draw did not fail altogether."""
    units, weight, risk_level, profiles = ctx
    L = units.shape[1]
    low, w = units[:, L - 1], weight[:, L - 1]
    U = quota.size
    must = (risk_level == L - 1) & (pairs.used_np == 0) & ~pairs.failed
    active = np.ones(U, dtype=bool)  # units that draw again when short
    first_round = True
    while True:
        credited = np.bincount(low[pairs.column(0)], minlength=U)
        need = np.maximum(quota - credited - (np.bincount(low[must], minlength=U) if first_round else 0), 0)
        eligible = (pairs.used_np == 0) & ~pairs.failed & ~must
        fill = _fill_draw(eligible, low, w, np.where(active, need, 0), rng)
        req = np.concatenate((np.flatnonzero(must), fill)) if first_round else fill
        if req.size == 0:
            return
        is_fill = np.zeros(units.shape[0], dtype=bool)
        is_fill[fill] = True
        req = weighted_order(req, w[req], rng)
        _serve(pairs, req, is_fill[req], indexes, profiles, low, L - 1)
        # a unit whose random households all found no donor stops drawing
        drawn = np.bincount(low[fill], minlength=U)
        active &= np.bincount(low[fill[pairs.failed[fill]]], minlength=U) < drawn
        first_round, must = False, np.zeros_like(must)


def plan_swaps(
    units: np.ndarray,
    weight: np.ndarray,
    risk_level: np.ndarray,
    profiles: np.ndarray,
    swap_rate: float,
    rng: np.random.Generator,
) -> SwapPlan:
    """Targeted record swapping of households (see the module text for the rules).

    Parameters
    ----------
    units : (H, L) int, unit code per household and level (nested; dense codes 0..U_l-1)
    weight : (H, L) float >= 0, sampling weight per household and level
    risk_level : (H,) int, first level at which the household is risky (L: never)
    profiles : (H, P) int, profile id per household and similarity profile (P >= 1)
    swap_rate : float in [0, 1]
    rng : numpy Generator
    """
    H, L = units.shape
    pairs = _Pairs(H)
    target = stochastic_round(H * swap_rate / 2, rng) if H else 0
    quota = lowest_quotas(np.bincount(units[:, L - 1], minlength=int(units[:, L - 1].max(initial=-1)) + 1), target, rng)
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=(H, L)) / weight
    for lev in range(L):
        indexes = [DonorIndex(units[:, lev], keys[:, lev], profiles[:, p]) for p in range(profiles.shape[1])]
        if lev < L - 1:
            req = np.flatnonzero((risk_level == lev) & (pairs.used_np == 0) & ~pairs.failed)
            req = weighted_order(req, weight[req, lev], rng)
            _serve(pairs, req, np.zeros(req.size, dtype=bool), indexes, profiles, units[:, lev], lev)
        else:
            _lowest_level(pairs, indexes, (units, weight, risk_level, profiles), quota, rng)
    partner = np.full(H, -1, dtype=np.int64)
    req, don = pairs.column(0), pairs.column(1)
    partner[req], partner[don] = don, req
    return SwapPlan(
        partner=partner,
        requester=req,
        donor=don,
        level=pairs.column(2),
        profile=pairs.column(3),
        fill=pairs.column(4, dtype=bool),
        failed=pairs.failed & (partner < 0),
        target_pairs=int(target),
    )
