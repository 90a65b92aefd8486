"""l-diversity and t-closeness kernels on integer codes.

Pure NumPy. Inputs are integer code vectors/matrices with ``-1`` for a missing value; outputs
are per-class arrays (index them with the class ids to get per-record values). Everything is
vectorised over classes and records (sorting, ``np.unique``, ``np.bincount``); the only Python
loops run over sensitive variables.

Grouping: equivalence classes are formed by *exact* equality of the key tuple,
a missing key value being one more value (equal to itself, different from every category).
The "NA matches anything" rule of the frequency measures (A.1.1) is NOT used here.
"""

from __future__ import annotations

import numpy as np

from .grouping import dense_ids, group_rows

__all__ = [
    "equivalence_classes",
    "ldiversity_classes",
    "multi_ldiversity_classes",
    "tcloseness_classes",
    "tcloseness_hierarchical_classes",
]


def equivalence_classes(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Class id (0..G-1) of every row of a key code matrix, missing (-1) as its own value.

    Parameters
    ----------
    codes : ndarray (n, m) of int, ``-1`` = missing

    Returns
    -------
    ids : ndarray (n,) of int64
    n_classes : int
    """
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError("codes must be a 2-D array")
    return group_rows(codes.astype(np.int64) + 1)


def _class_category_counts(class_ids: np.ndarray, n_classes: int, s_codes: np.ndarray, weights=None):
    """Distinct (class, category) pairs of the non-missing values, sorted by class then category.

    Returns ``(pair_class, pair_cat, pair_count)``; ``pair_count`` are record counts, or weight
    sums when ``weights`` is given.
    """
    valid = s_codes >= 0
    cls = class_ids[valid].astype(np.int64, copy=False)
    cat = s_codes[valid].astype(np.int64, copy=False)
    if cls.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float64 if weights is not None else np.int64)
    q = int(cat.max()) + 1
    pair = cls * q + cat  # class < n, q <= n: no overflow for any realistic n
    inv, uniq = dense_ids(pair)
    if weights is None:
        counts = np.bincount(inv, minlength=len(uniq))
    else:
        counts = np.bincount(inv, weights=np.asarray(weights, dtype=float)[valid], minlength=len(uniq))
    return uniq // q, uniq % q, counts


def ldiversity_classes(class_ids: np.ndarray, n_classes: int, s_codes: np.ndarray, c: float = 2.0, counts=None):
    """Distinct, entropy and recursive (c, l) l-diversity of every class.

    For a class E with non-missing counts r_1 >= ... >= r_t and u missing values:

    * distinct  = t + I(u > 0 and t > 0)
    * entropy   = exp(H), H = -sum (r/|E|) log(r/|E|) over the categories, the missing group
      being one more category when u > 0 and t > 0; 1 when t = 0
    * recursive = the largest l in 1..t with r_1 < c (r_l + ... + r_t) (1 when t <= 1; missing
      values ignored).

    Parameters
    ----------
    class_ids : ndarray (n,) of int, values in 0..n_classes-1
    n_classes : int
    s_codes : ndarray (n,) of int, ``-1`` = missing
    c : float > 0
        (sdcMicro silently replaces c <= 0 by 1; here it is an error.)
    counts : ndarray (n,), optional
        Records each row stands for (rows of a compressed table); default one.

    Returns
    -------
    distinct : ndarray (G,) int64
    entropy : ndarray (G,) float64
    recursive : ndarray (G,) int64
    """
    class_ids = np.asarray(class_ids, dtype=np.int64).reshape(-1)
    s_codes = np.asarray(s_codes).reshape(-1)
    c = float(c)
    if not c > 0:
        raise ValueError(f"c must be > 0; got {c}")
    G = int(n_classes)
    cw = None if counts is None else np.asarray(counts, dtype=np.float64).reshape(-1)
    size = np.bincount(class_ids, weights=cw, minlength=G).astype(np.float64)
    miss = s_codes < 0
    u = np.bincount(class_ids[miss], weights=None if cw is None else cw[miss], minlength=G)
    pcls, _pcat, r = _class_category_counts(class_ids, G, s_codes, cw)
    t = np.bincount(pcls, minlength=G)
    has_u = (u > 0) & (t > 0)
    distinct = t + has_u.astype(np.int64)

    # entropy: sum of p log p over categories (and the missing group)
    with np.errstate(divide="ignore", invalid="ignore"):
        pr = r / size[pcls]
        plogp = np.bincount(pcls, weights=pr * np.log(pr), minlength=G)
        pu = np.where(has_u, u / np.where(size > 0, size, 1.0), 1.0)
        plogp = plogp + np.where(has_u, pu * np.log(pu), 0.0)
    entropy = np.exp(-plogp)
    entropy[t == 0] = 1.0

    # recursive: order the counts of each class descending, tail sums T_l = r_l + ... + r_t;
    # the l >= 2 with r_1 < c T_l form a prefix {2..L} (T_l decreases), so L = 1 + their number.
    recursive = np.ones(G, dtype=np.int64)
    if r.size:
        order = np.lexsort((-r, pcls))
        rc = r[order].astype(np.float64)
        cl = pcls[order]
        start = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(t, out=start[1:])
        pos = np.arange(rc.size) - start[cl]  # 0-based rank within the class
        r1 = rc[start[cl]]
        # tail sum from this position to the end of the class (reverse cumsum per class)
        rev = np.cumsum(rc[::-1])[::-1]  # sum from position to the end of the array
        end = start[cl + 1]
        after = np.append(rev, 0.0)[end]  # sum over the following classes
        tail = rev - after
        ok = (pos >= 1) & (r1 < c * tail)
        recursive += np.bincount(cl, weights=ok, minlength=G).astype(np.int64)
    return distinct.astype(np.int64), entropy, recursive


def multi_ldiversity_classes(class_ids: np.ndarray, n_classes: int, s_codes: np.ndarray, c: float = 2.0, counts=None):
    """sdcMicro's multi-attribute entropy and recursive l-diversity of every class.

    For each sensitive variable S_a, the class is split further by the values of all other
    sensitive variables (missing = its own value); entropy and recursive l of S_a are computed
    in every sub-group (as in :func:`ldiversity_classes`, sub-group size as denominator) and
    their minimum taken; the result is the minimum over a. With fewer than two sensitive
    variables both are 0 (sdcMicro convention).

    Parameters
    ----------
    class_ids : ndarray (n,)
    n_classes : int
    s_codes : ndarray (n, a) of int, ``-1`` = missing
    counts : ndarray (n,), optional
        Records each row stands for (rows of a compressed table); default one.

    Returns
    -------
    multi_entropy : ndarray (G,) float64
    multi_recursive : ndarray (G,) int64
    """
    class_ids = np.asarray(class_ids, dtype=np.int64).reshape(-1)
    s_codes = np.asarray(s_codes)
    G = int(n_classes)
    n_var = s_codes.shape[1]
    if n_var < 2:
        return np.zeros(G, dtype=np.float64), np.zeros(G, dtype=np.int64)
    m_ent = np.full(G, np.inf)
    m_rec = np.full(G, np.iinfo(np.int64).max, dtype=np.int64)
    for a in range(n_var):
        others = np.delete(s_codes, a, axis=1).astype(np.int64) + 1
        sub, n_sub = group_rows(np.column_stack([class_ids, others]))
        _d, ent, rec = ldiversity_classes(sub, n_sub, s_codes[:, a], c, counts)
        sub_class = np.zeros(n_sub, dtype=np.int64)
        sub_class[sub] = class_ids
        np.minimum.at(m_ent, sub_class, ent)
        np.minimum.at(m_rec, sub_class, rec)
    return m_ent, m_rec


def tcloseness_classes(
    class_ids: np.ndarray, n_classes: int, s_codes: np.ndarray, n_categories: int, ordered: bool = False, weights=None
) -> np.ndarray:
    """Earth mover's distance between each class's distribution Q_E and the overall P.

    Records with a missing sensitive value (code -1) are excluded from both P and Q_E.

    * nominal: D = (1/2) sum_j |p_j - q_j|  (total variation)
    * ordered (categories 0..q-1 in their order): D = (1/(q-1)) sum_{i<q} |sum_{j<=i} (q_j - p_j)|

    Parameters
    ----------
    class_ids : ndarray (n,)
    n_classes : int
    s_codes : ndarray (n,) of int in -1..n_categories-1 (the code order is the category order)
    n_categories : int
        q, the number of categories (declared, or observed).
    ordered : bool
    weights : ndarray (n,), optional
        Positive weights for P and Q_E; unweighted counts without.

    Returns
    -------
    ndarray (G,) of float in [0, 1]; NaN for a class whose sensitive values are all missing
    (Q_E undefined). D = 0 when q = 1.

    Notes
    -----
    Computed on the sparse (class, category) pairs that occur, so memory is O(n), not
    O(classes x q). For the ordered distance the cumulative C_Q of a class is constant between
    two of its categories while the overall cumulative C_P is non-decreasing; each such run is
    summed in closed form with prefix sums of C_P and a binary search.
    """
    class_ids = np.asarray(class_ids, dtype=np.int64).reshape(-1)
    s_codes = np.asarray(s_codes).reshape(-1).astype(np.int64, copy=False)
    G = int(n_classes)
    q = int(n_categories)
    valid = s_codes >= 0
    w = np.ones(s_codes.size) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    out = np.full(G, np.nan)
    if not valid.any():
        return out
    pc = np.bincount(s_codes[valid], weights=w[valid], minlength=q)[:q]
    total = float(pc.sum())
    cls_w = np.bincount(class_ids[valid], weights=w[valid], minlength=G)
    has = cls_w > 0
    if q <= 1:
        out[has] = 0.0
        return out
    P = pc / total
    pcls, pcat, pw = _class_category_counts(class_ids, G, s_codes, w)
    if not ordered:
        # 0.5 * (sum over the class's categories of |p - q| + sum of p over its other categories)
        qv = pw / cls_w[pcls]
        part = np.bincount(pcls, weights=np.abs(P[pcat] - qv) - P[pcat], minlength=G)
        d = 0.5 * (part + 1.0)
    else:
        CP = np.cumsum(pc) / total  # C_P(i) = p_0 + ... + p_i, non-decreasing
        S = np.concatenate([[0.0], np.cumsum(CP)])  # S[i] = C_P(0) + ... + C_P(i-1)
        start = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(np.bincount(pcls, minlength=G), out=start[1:])
        # C_Q after each pair's category, within its class (exact for integer counts)
        cw = np.cumsum(pw)
        cq = (cw - np.append(0.0, cw)[start[pcls]]) / cls_w[pcls]
        # C_Q is constant on the run [cat, next category of the class); the run of the last
        # category ends at q - 1 (the i = q - 1 term is 0: both cumulatives are 1)
        nxt = np.append(pcat[1:], q)
        nxt[start[1:][has] - 1] = q
        lo, hi = pcat, np.minimum(nxt, q - 1)
        # before the class's first category C_Q = 0: contributes C_P(0) + ... + C_P(first - 1)
        lead = np.zeros(G)
        lead[has] = S[pcat[start[:-1][has]]]
        # within [lo, hi): |cq - C_P(i)| split at the first i with C_P(i) > cq
        k = np.clip(np.searchsorted(CP, cq, side="right"), lo, hi)
        below = cq * (k - lo) - (S[k] - S[lo])
        above = (S[hi] - S[k]) - cq * (hi - k)
        d = (lead + np.bincount(pcls, weights=below + above, minlength=G)) / (q - 1)
    out[has] = np.clip(d[has], 0.0, 1.0)
    return out


def tcloseness_hierarchical_classes(
    class_ids: np.ndarray, n_classes: int, s_codes: np.ndarray, levels: np.ndarray, weights=None
) -> np.ndarray:
    """Earth mover's distance with the hierarchical ground distance between each class's
    distribution Q_E and the overall P (Li, Li & Venkatasubramanian 2007, section 4.2).

    The ground distance of two categories is the level of their lowest common ancestor in the
    hierarchy over its height H; the EMD is then, with the extra of a node N
    ``e_N = p_N - q_N`` (the shares of the file and of the class under N),
    ``D = sum_{inner N} level(N) / H * min(pos_N, neg_N)``, pos_N and neg_N the sums of the
    positive and the negative extras of N's children. Summed level by level this telescopes
    (the root's extra is 0) to the mean over the levels below the top of the total variation
    of the two distributions generalised to that level:

    ``D = (1/H) sum_{L=0}^{H-1} (1/2) sum_{N at level L} |p_N - q_N|``.

    Parameters
    ----------
    class_ids, n_classes, weights : as :func:`tcloseness_classes`
    s_codes : ndarray (n,) of int in -1..q-1 (-1 missing: excluded from P and Q_E)
    levels : ndarray (q, H + 1) of int
        Each category's node code at every level (column 0 the category itself, dense codes
        per column; the last column one node, the top), H >= 1.

    Returns
    -------
    ndarray (G,) of float in [0, 1]; NaN for a class whose sensitive values are all missing.
    """
    s_codes = np.asarray(s_codes).reshape(-1).astype(np.int64, copy=False)
    levels = np.asarray(levels, dtype=np.int64)
    height = levels.shape[1] - 1
    total = np.zeros(int(n_classes))
    valid = s_codes >= 0
    if not levels.shape[0]:
        return np.full(int(n_classes), np.nan)
    for lev in range(height):
        col = levels[:, lev]
        codes = np.where(valid, col[np.where(valid, s_codes, 0)], -1)
        total += tcloseness_classes(class_ids, n_classes, codes, int(col.max()) + 1, weights=weights)
    return np.clip(total / height, 0.0, 1.0)
