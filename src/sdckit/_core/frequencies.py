"""Sample and weighted key frequencies under sdcMicro's missing-value rule."""

from __future__ import annotations

import numpy as np

from .grouping import group_rows, lookup_sums, row_keys
from .nafreq import pattern_frequencies

__all__ = [
    "pattern_table",
    "pattern_frequencies",
    "pattern_frequencies_reference",
    "record_frequencies",
    "strata_correction",
]


def pattern_table(codes: np.ndarray, weights: np.ndarray | None = None, factorize=None, cards=None, multiplicity=None):
    """Aggregate records to distinct key patterns (NA is a value here).

    Parameters
    ----------
    codes : ndarray (n, m) int, ``-1`` = missing (column-major is fastest)
    weights : ndarray (n,) or None
    factorize : callable, optional
        ``factorize(int64 keys) -> (dense ids, number of groups)``; an engine's faster GROUP BY.
        Default: NumPy's sort-based ``np.unique`` (the oracle).
    cards : sequence of int, optional
        Number of categories per column (codes < cards); computed when omitted.
    multiplicity : ndarray (n,) of int, optional
        Records each row stands for (rows of a compressed table); ``weights`` are then the
        weight sums of the rows. Default: one record per row.

    Returns
    -------
    ids : ndarray (n,)   pattern index of every record
    patterns : ndarray (P, m) int32, ``-1`` = missing
    counts : ndarray (P,) float   c_p
    wsum : ndarray (P,) float     W_p (= c_p without weights)
    """
    codes = np.asarray(codes)
    n, m = codes.shape
    if cards is None:
        cards = [int(codes[:, j].max()) + 1 if n else 0 for j in range(m)]
    radix = [max(int(c), 0) + 1 for c in cards]  # one extra slot for "missing"
    key, packed = _combine(codes, radix)
    if factorize is None:
        uniq, ids = np.unique(key, return_inverse=True)
        ids, g = ids.reshape(-1), len(uniq)
    else:
        ids, g = factorize(key)
    if multiplicity is None:
        counts = np.bincount(ids, minlength=g).astype(float)
    else:
        counts = np.bincount(ids, weights=np.asarray(multiplicity, dtype=float), minlength=g)
    wsum = counts.copy() if weights is None else np.bincount(ids, weights=weights, minlength=g)
    if packed:  # decode the patterns from their keys (one scatter instead of m gathers)
        ukey = np.empty(g, dtype=np.int64)
        ukey[ids] = key
        patterns = np.empty((g, m), dtype=np.int32)
        for j in range(m - 1, -1, -1):
            ukey, rem = np.divmod(ukey, radix[j])
            patterns[:, j] = rem - 1
    else:
        first = np.empty(g, dtype=np.int64)
        first[ids] = np.arange(n)  # any record of the pattern will do
        patterns = np.empty((g, m), dtype=np.int32)
        for j in range(m):
            patterns[:, j] = codes[:, j][first]
    return ids, patterns, counts, wsum


def _combine(codes: np.ndarray, radix) -> tuple[np.ndarray, bool]:
    """int64 key of each row of codes (-1 = missing mapped to 0), equal rows <=> equal keys.

    Returns the key and whether it is a plain mixed-radix packing (decodable) or had to be
    densified because the combinations do not fit in 62 bits.
    """
    n, m = codes.shape
    span = 1
    for r in radix:
        span *= r
    if span >= 2**62:
        return row_keys(codes.astype(np.int64) + 1, radix), False
    key = np.zeros(n, dtype=np.int64)
    for j in range(m):
        if j:
            key *= radix[j]
        key += codes[:, j]
        key += 1
    return key, True


def pattern_frequencies_reference(
    patterns: np.ndarray, counts: np.ndarray, wsum: np.ndarray, alpha: float = 1.0, na_rule: str = "sdcmicro"
) -> tuple[np.ndarray, np.ndarray]:
    """f and F of every distinct pattern under the missing-value rule.

    Rule ``"sdcmicro"`` (sdcMicro ``freqCalc``): a missing value matches any
    value. With c_p, W_p the count and weight sum of pattern p and alpha in [0, 1]:

    * complete p:  f_p = c_p + alpha * sum_{q partial, compatible} c_q
      (all-missing patterns are not added when m >= 2);
    * partial p:   f_p = c_p + sum_{q complete, compatible} c_q
      + alpha * sum_{q partial or all-missing, q != p, compatible} c_q;
    * all-missing p (m >= 2): f_p = n;
    * m = 1: a value gets c_v + alpha * #NA; the NA pattern gets n.

    F uses the same formulas with W_p. Patterns are compatible when they agree wherever both
    are observed. Cost: one hash join per (mask, mask) pair of the missing-value masks present,
    never a scan of all pattern pairs.

    Rule ``"own_category"``: a missing value is one more category (f_p = c_p), the meaning
    sdcMicro's documentation gives alpha = 0.

    This is the straightforward mask-pair join, kept as the test oracle of
    :func:`pattern_frequencies`.
    """
    patterns = np.asarray(patterns)
    f = np.asarray(counts, dtype=float).copy()
    F = np.asarray(wsum, dtype=float).copy()
    if na_rule == "own_category":
        return f, F
    if na_rule != "sdcmicro":
        raise ValueError(f"na_rule: {na_rule!r}")
    P, m = patterns.shape
    miss = patterns < 0
    nmiss = miss.sum(axis=1)
    complete = nmiss == 0
    allmiss = nmiss == m
    partial = ~complete & ~allmiss
    n_total, w_total = float(np.sum(counts)), float(np.sum(wsum))
    cw = np.column_stack([counts, wsum]).astype(float)
    c_all = cw[allmiss].sum(axis=0)  # count and weight of the all-missing pattern (0 or 1 pattern)
    if m == 1:
        f[complete] += alpha * c_all[0]
        F[complete] += alpha * c_all[1]
    elif partial.any():
        comp_idx = np.flatnonzero(complete)
        part_idx = np.flatnonzero(partial)
        mask_ids, n_masks = group_rows(miss[part_idx].astype(np.int64))
        groups = [part_idx[mask_ids == s] for s in range(n_masks)]
        observed = [~miss[g[0]] for g in groups]
        add = np.zeros((P, 2))
        comp_rows = patterns[comp_idx]
        for s, (gs, obs_s) in enumerate(zip(groups, observed)):
            rows_s = patterns[gs][:, obs_s]
            # complete patterns compatible with each partial pattern of mask s count fully
            add[gs] += lookup_sums(comp_rows[:, obs_s], cw[comp_idx], rows_s)
            # ... and each complete pattern is credited alpha * (partial patterns of mask s)
            add[comp_idx] += alpha * lookup_sums(rows_s, cw[gs], comp_rows[:, obs_s])
            # partial-partial: other masks t (same mask: compatible means identical = itself)
            for t, (gt, obs_t) in enumerate(zip(groups, observed)):
                if t == s:
                    continue
                common = obs_s & obs_t
                if not common.any():
                    add[gs] += alpha * cw[gt].sum(axis=0)
                else:
                    add[gs] += alpha * lookup_sums(patterns[gt][:, common], cw[gt], patterns[gs][:, common])
            add[gs] += alpha * c_all
        f += add[:, 0]
        F += add[:, 1]
    f[allmiss] = n_total
    F[allmiss] = w_total
    return f, F


def record_frequencies(
    codes: np.ndarray, weights: np.ndarray | None = None, alpha: float = 1.0, na_rule: str = "sdcmicro"
) -> tuple[np.ndarray, np.ndarray]:
    """Per-record f_k and F_k (input row order); the NumPy oracle of ``sdckit.frequencies``."""
    ids, patterns, counts, wsum = pattern_table(codes, weights)
    fp, Fp = pattern_frequencies(patterns, counts, wsum, alpha, na_rule)
    return fp[ids], Fp[ids]


def strata_correction(patterns, counts, wsum, fp, Fp, m, alpha):
    """Turn frequencies over (keys, strata) into sdcMicro frequencies within each stratum.

    With the strata appended as complete key columns the missing-value rule holds within
    strata except for records missing every key variable: in a stratum they must get f = n_h
    (all records of the stratum), and for m >= 2 complete patterns must not count them.
    """
    keyp = patterns[:, :m]
    allmiss = (keyp < 0).all(axis=1)
    if not allmiss.any():
        return fp, Fp
    stratum, n_st = group_rows(patterns[:, m:].astype(np.int64))
    a_c = np.bincount(stratum[allmiss], weights=counts[allmiss], minlength=n_st)
    a_w = np.bincount(stratum[allmiss], weights=wsum[allmiss], minlength=n_st)
    fp, Fp = fp.copy(), Fp.copy()
    if m >= 2:
        complete = (keyp >= 0).all(axis=1)
        fp[complete] -= alpha * a_c[stratum[complete]]
        Fp[complete] -= alpha * a_w[stratum[complete]]
        near = np.round(fp)
        snap = complete & (np.abs(fp - near) <= 1e-9 * np.abs(near))
        fp[snap] = near[snap]
    fp[allmiss] = np.bincount(stratum, weights=counts, minlength=n_st)[stratum[allmiss]]
    Fp[allmiss] = np.bincount(stratum, weights=wsum, minlength=n_st)[stratum[allmiss]]
    return fp, Fp
