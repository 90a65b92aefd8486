"""An independent check that a released file meets a protection target (not a test file).

``violations(released, original, keys, target, ...)`` measures the released file from first
principles in plain Python and NumPy, without calling the search, its kernel or sdckit's
measures, and returns the rules of ``target`` the file misses (an empty dict: it meets the
whole target). ``counts(released, original, keys)`` counts the suppressed records and cells on
the file. Used by ``tests/test_search_meets_target.py`` and ``benchmarks/search.py``; tested
on hand-made tables in ``tests/test_target_oracle.py``.

Conventions (the project's spec, ALGORITHMS.md, section by section, and ARX where the spec
is silent):

* Missing values: null, NaN and the values in ``missing``. A suppressed value is a missing
  value in the released file (that is how sdckit writes it); a key at its top level reads
  ``"*"`` (or the single label of its hierarchy's last column).
* k-anonymity (A.1.1, A.2): the frequency of a record is that of its key pattern under the
  "a missing value matches any value" rule with alpha = 1, counted by brute force over the
  pairs of distinct patterns; a record violates k when its frequency is below k.
* With ``suppression="records"`` (ARX's model) a record whose every key not at its top level
  is missing is a suppressed record and is removed before anything is counted (ARX leaves
  suppressed records out of every class), for k, l and t alike.
* l-diversity (A.3): classes by exact equality of the released key tuple (a missing value is
  its own category, the rule of sdcMicro >= 5.8); distinct l = number of non-missing values,
  plus one when some are missing and some are not; entropy l = exp(H) with the missing group
  as one more category (1 when all are missing), the class meets l when H >= log l;
  recursive (c, l) (Machanavajjhala et al. 2007): r_1 < c (r_l + ... + r_t) over the
  non-missing counts in decreasing order (l = 1 always holds). Default c = 2 (A.3).
* t-closeness (A.4; Li, Li & Venkatasubramanian 2007): P is the distribution of the
  sensitive variable over every record of the input (the sensitive variable is not
  changed, and ARX takes P from the whole input too, suppressed records included); Q_E that
  of the class; missing sensitive values are left out of both. Equal distance:
  (1/2) sum |p_j - q_j|. Hierarchical distance (Li et al. 2007, section 4.2): the ground
  distance of two values is the level of their lowest common ancestor over the height H of
  the hierarchy (its number of columns minus one, as ARX), and the EMD is
  sum over inner nodes N of level(N)/H * min(pos(N), neg(N)), pos and neg the sums of the
  positive and negative net extras (p - q) of N's children. A class meets t when D <= t.
* Individual risk (B.2): f and F from A.1.1 on the whole released file (weights summed for
  F); without a weight r = 1/f (B.2.4); with one p = min(f / F, 1), r = (p/q) log(1/p) for
  f = 1, p/q - (p/q)^2 log(1/p) for f = 2, p / (f - 1 + p) for f > 2 (sdcMicro's default
  "approx"), r = 1/f when p = 1. ``max_risk``: max r_i <= max_risk. ``max_global_risk`` (B.3,
  B.4 step 2): the rate sum(r_i)/n is strictly below the target (S < ER*). ``household`` (B.5): the household
  rate sum_i (1 - prod_{j in g(i)} (1 - r_j)) / n is below the target too (a record with a
  missing household id is its own household).

Float comparisons allow 1e-12 for rounding: in the file's favour when a result is checked
(``slack=EPS``), against it when a target is asked to be certainly reachable (``slack=-EPS``:
a rate equal to its target, up to rounding, is not below it).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["counts", "hierarchy_distance", "measure", "tree_emd", "violations"]

EPS = 1e-12
TOP = "*"


# ----------------------------------------------------------------------------------------------
# reading the files
# ----------------------------------------------------------------------------------------------
def _frame(data) -> pl.DataFrame:
    if isinstance(data, pl.DataFrame):
        return data
    return pl.from_pandas(data)


def _is_missing(v, missing) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    return bool(missing) and v in missing


def _label(v) -> str:
    """A value as the text a hierarchy file holds (3.0 and 3 both read "3")."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _column(df: pl.DataFrame, name: str, missing) -> list:
    """The column's values, None for a missing one."""
    return [None if _is_missing(v, missing) else v for v in df[name].to_list()]


def _rows(hierarchy) -> list[list[str]]:
    """A hierarchy (ARX CSV path, rows, ``{value: [level 1, ...]}`` or a frame) as rows of text."""
    if isinstance(hierarchy, (str, Path)):
        lines = Path(hierarchy).read_text(encoding="utf-8-sig").splitlines()
        return [ln.split(";") for ln in lines if ln.strip()]
    if isinstance(hierarchy, dict):
        return [[_label(v), *(_label(x) for x in levels)] for v, levels in hierarchy.items()]
    if isinstance(hierarchy, pl.DataFrame):
        return [[_label(x) for x in row] for row in hierarchy.rows()]
    return [[_label(x) for x in row] for row in hierarchy]


def _top_labels(key: str, hierarchies) -> set:
    labels = {TOP}
    if hierarchies and key in hierarchies:
        last = {r[-1] for r in _rows(hierarchies[key])}
        if len(last) == 1:
            labels |= last
    return labels


def _top_keys(released: pl.DataFrame, keys, hierarchies, missing) -> list[str]:
    """The keys generalised to their top level: every released value is a top label."""
    out = []
    for key in keys:
        vals = {_label(v) for v in _column(released, key, missing) if v is not None}
        if vals and vals <= _top_labels(key, hierarchies):
            out.append(key)
    return out


def _suppressed_rows(released, original, keys, hierarchies, missing) -> np.ndarray:
    """Records whose every key not at its top level was observed and is missing now."""
    kept = [k for k in keys if k not in _top_keys(released, keys, hierarchies, missing)]
    n = released.height
    if not kept:
        return np.zeros(n, dtype=bool)
    gone = np.ones(n, dtype=bool)
    for key in kept:
        after = np.array([v is None for v in _column(released, key, missing)], dtype=bool)
        before = np.array([v is not None for v in _column(original, key, missing)], dtype=bool)
        gone &= after & before
    return gone


def counts(released, original, keys, hierarchies=None, missing=None) -> dict:
    """The suppression counted on the file: ``cells`` = key values observed in ``original``
    and missing in ``released``; ``records`` = records whose every key not generalised to its
    top level is such a value (the records suppressed whole)."""
    released, original = _frame(released), _frame(original)
    cells = 0
    for key in keys:
        after = _column(released, key, missing)
        before = _column(original, key, missing)
        cells += sum(a is None and b is not None for a, b in zip(after, before))
    records = int(_suppressed_rows(released, original, keys, hierarchies, missing).sum())
    return {"cells": int(cells), "records": records}


# ----------------------------------------------------------------------------------------------
# frequencies with "a missing value matches any value" (spec A.1.1), brute force
# ----------------------------------------------------------------------------------------------
def pattern_frequencies(codes: np.ndarray, weights: np.ndarray | None = None):
    """Per record, f (and F with ``weights``) of its key pattern, alpha = 1.

    ``codes``: (n, m) integers, -1 for a missing value. Patterns p, q are compatible when they
    agree wherever both are observed. A complete pattern counts itself and the compatible
    partial patterns (not the all-missing one, m >= 2); a partial pattern counts every
    compatible pattern, itself included; the all-missing pattern counts every record. With one
    key: a value counts itself and the missing records, the missing pattern every record.
    Compatibility is tested for every partial pattern against every pattern (vectorised per
    partial pattern)."""
    n, m = codes.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    pats, inv = np.unique(codes, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    c = np.bincount(inv, minlength=len(pats)).astype(float)
    W = np.bincount(inv, weights=w, minlength=len(pats))
    miss = pats < 0
    n_miss = miss.sum(axis=1)
    f, F = c.copy(), W.copy()
    all_missing = n_miss == m
    partial = (n_miss > 0) & ~all_missing
    complete = n_miss == 0
    if m == 1:
        f[complete] += c[all_missing].sum()
        F[complete] += W[all_missing].sum()
    for q in np.flatnonzero(partial):
        ok = np.all((pats == pats[q]) | miss | miss[q], axis=1)
        f[q], F[q] = c[ok].sum(), W[ok].sum()
        f[ok & complete] += c[q]
        F[ok & complete] += W[q]
    f[all_missing], F[all_missing] = float(n), float(w.sum())
    return f[inv], F[inv]


def _codes(df: pl.DataFrame, keys, missing) -> np.ndarray:
    cols = []
    for key in keys:
        table: dict = {}
        cols.append([-1 if v is None else table.setdefault(_label(v), len(table)) for v in _column(df, key, missing)])
    return np.array(cols, dtype=np.int64).T.reshape(df.height, len(keys))


# ----------------------------------------------------------------------------------------------
# l-diversity and t-closeness of one class
# ----------------------------------------------------------------------------------------------
def distinct_l(values: list) -> int:
    observed = {_label(v) for v in values if v is not None}
    return len(observed) + int(bool(observed) and any(v is None for v in values))


def entropy_h(values: list) -> float:
    """H of the class (the missing group one more category when some values are observed)."""
    cnt = Counter(None if v is None else _label(v) for v in values)
    if set(cnt) == {None}:
        return 0.0
    total = sum(cnt.values())
    return -sum(r / total * math.log(r / total) for r in cnt.values())


def recursive_l(values: list, c: float) -> int:
    """The largest l with r_1 < c (r_l + ... + r_t) (1 when at most one value is observed)."""
    r = sorted(Counter(_label(v) for v in values if v is not None).values(), reverse=True)
    best = 1
    for ell in range(2, len(r) + 1):
        if r[0] < c * sum(r[ell - 1 :]):
            best = ell
        else:
            break
    return best


def _distribution(values: list) -> dict:
    cnt = Counter(_label(v) for v in values if v is not None)
    total = sum(cnt.values())
    return {k: v / total for k, v in cnt.items()}


def equal_distance(p: dict, q: dict) -> float:
    return 0.5 * sum(abs(p.get(v, 0.0) - q.get(v, 0.0)) for v in set(p) | set(q))


def tree_emd(rows: list[list[str]], p: dict, q: dict) -> float:
    """EMD of ``q`` to ``p`` over the hierarchy ``rows`` (Li et al. 2007, section 4.2).

    A node of level L is identified by its path ``row[L:]``; the net extra of a leaf is
    p - q, of a node the sum over its children; each inner node costs level/H times the
    smaller of its children's positive and negative extras."""
    height = len(rows[0]) - 1
    extra: dict = {}
    for row in rows:
        extra[(0, tuple(row))] = p.get(row[0], 0.0) - q.get(row[0], 0.0)
    missing = (set(p) | set(q)) - {row[0] for row in rows}
    if missing:
        raise ValueError(f"the hierarchy does not cover {len(missing)} value(s) of the distributions")
    cost = 0.0
    for level in range(1, height + 1):
        children: dict = defaultdict(list)
        for (lv, path), e in extra.items():
            if lv == level - 1:
                children[path[1:]].append(e)
        for path, es in children.items():
            pos = sum(e for e in es if e > 0)
            neg = -sum(e for e in es if e < 0)
            cost += level / height * min(pos, neg)
            extra[(level, path)] = pos - neg
    return cost


def hierarchy_distance(rows: list[list[str]], a: str, b: str) -> float:
    """The ground distance of two leaves: the level of their lowest common ancestor over H."""
    height = len(rows[0]) - 1
    ra = next(r for r in rows if r[0] == a)
    rb = next(r for r in rows if r[0] == b)
    level = next(lv for lv in range(height + 1) if ra[lv:] == rb[lv:])
    return level / height


# ----------------------------------------------------------------------------------------------
# individual and household risk
# ----------------------------------------------------------------------------------------------
def individual_risk(f: np.ndarray, F: np.ndarray | None) -> np.ndarray:
    """r per record from f and F (spec B.2.2, B.2.4); None for F: the census value 1/f."""
    if F is None:
        return 1.0 / f
    out = np.empty(len(f))
    for i, (fi, Fi) in enumerate(zip(f, F)):
        p = min(fi / Fi, 1.0)
        q = 1.0 - p
        if p >= 1.0:
            out[i] = 1.0 / fi
        elif fi == 1:
            out[i] = p / q * math.log(1.0 / p)
        elif fi == 2:
            out[i] = p / q - (p / q) ** 2 * math.log(1.0 / p)
        else:
            out[i] = p / (fi - 1.0 + p)
    return out


def household_rate(r: np.ndarray, household: list) -> float:
    """sum_i r^h_{g(i)} / n with r^h_g = 1 - prod (1 - r_j) (a missing id: its own household)."""
    groups: dict = defaultdict(list)
    for i, h in enumerate(household):
        groups[("own", i) if h is None else ("id", _label(h))].append(i)
    total = 0.0
    for members in groups.values():
        rh = 1.0 - math.prod(1.0 - r[i] for i in members)
        total += len(members) * rh
    return total / len(r)


# ----------------------------------------------------------------------------------------------
# the target
# ----------------------------------------------------------------------------------------------
def _classes(codes: np.ndarray) -> dict:
    out: dict = defaultdict(list)
    for i, row in enumerate(map(tuple, codes)):
        out[row].append(i)
    return out


def measure(
    released,
    original,
    keys,
    target,
    hierarchies=None,
    weight=None,
    household=None,
    suppression="cells",
    missing=None,
) -> dict:
    """The measures of ``target``'s rules on ``released`` (see the module's conventions).

    Returns ``{"k": smallest frequency, "k_violations": records below k, "l": smallest l of
    a class, "l_failing": classes below l, "t": largest distance, "t_failing": classes above
    t, "max_risk", "rate", "household_rate", "suppressed": records removed}``, each only when
    the target has the rule."""
    released, original = _frame(released), _frame(original)
    keys = list(keys)
    missing = set(missing or ())
    gone = (
        _suppressed_rows(released, original, keys, hierarchies, missing)
        if suppression == "records"
        else np.zeros(released.height, dtype=bool)
    )
    keep = np.flatnonzero(~gone)
    codes = _codes(released, keys, missing)
    out: dict = {"suppressed": int(gone.sum())}
    if "k" in target:
        f, _ = pattern_frequencies(codes[keep])
        out["k"] = float(f.min()) if f.size else math.inf
        out["k_violations"] = int((f < target["k"]).sum())
    if "l" in target or "t" in target:
        sens = _column(released, target["sensitive"], missing)
        classes = [[sens[keep[i]] for i in idx] for idx in _classes(codes[keep]).values()]
        if "l" in target:
            out.update(_measure_l(classes, target))
        if "t" in target:
            p = _distribution(_column(original, target["sensitive"], missing))
            out.update(_measure_t(classes, p, target, hierarchies))
    if any(n in target for n in ("max_risk", "max_global_risk")):
        out.update(_measure_risk(released, codes, target, weight, household, missing))
    return out


def _measure_l(classes: list, target) -> dict:
    ell, kind = target["l"], target.get("diversity", "distinct")
    c = float(target.get("c", 2.0))
    if kind == "distinct":
        values = [float(distinct_l(v)) for v in classes]
        failing = sum(v < ell for v in values)
    elif kind == "entropy":
        hs = [entropy_h(v) for v in classes]
        values = [math.exp(h) for h in hs]
        failing = sum(h < math.log(ell) - EPS for h in hs)
    elif kind == "recursive":
        values = [float(recursive_l(v, c)) for v in classes]
        failing = sum(v < ell for v in values)
    else:
        raise ValueError(f"unknown diversity {kind!r}")
    return {"l": min(values, default=math.inf), "l_failing": int(failing)}


def _measure_t(classes: list, p: dict, target, hierarchies) -> dict:
    kind = target.get("t_distance", "equal")
    if kind == "hierarchical":
        rows = _rows(hierarchies[target["sensitive"]])

        def dist(q):
            return tree_emd(rows, p, q)
    elif kind == "equal":

        def dist(q):
            return equal_distance(p, q)
    else:
        raise ValueError(f"unknown t_distance {kind!r}")
    ds = [dist(_distribution(v)) for v in classes if any(x is not None for x in v)]
    return {"t": max(ds, default=0.0), "t_failing": int(sum(d > target["t"] + EPS for d in ds))}


def _measure_risk(released, codes, target, weight, household, missing) -> dict:
    w = None if weight is None else np.array(released[weight].to_list(), dtype=float)
    f, F = pattern_frequencies(codes, w)
    r = individual_risk(f, None if weight is None else F)
    out = {"max_risk": float(r.max()) if r.size else 0.0, "rate": float(r.sum() / len(r)) if r.size else 0.0}
    if target.get("household"):
        out["household_rate"] = household_rate(r, _column(released, household, missing))
    return out


def violations(
    released,
    original,
    keys,
    target,
    hierarchies=None,
    weight=None,
    household=None,
    suppression="cells",
    missing=None,
    slack=EPS,
) -> dict:
    """The rules of ``target`` that ``released`` misses: ``{rule: {"value", "required", ...}}``
    (empty: the file meets the whole target). ``suppression="records"`` removes the records
    suppressed whole before measuring (ARX's model); ``slack``: the rounding allowed on the risk
    rules (negative: against the file); see the module's conventions."""
    m = measure(released, original, keys, target, hierarchies, weight, household, suppression, missing)
    out: dict = {}
    if "k" in target and m["k_violations"]:
        out["k"] = {"value": m["k"], "required": target["k"], "records": m["k_violations"]}
    if "l" in target and m["l_failing"]:
        out["l"] = {"value": m["l"], "required": target["l"], "classes": m["l_failing"]}
    if "t" in target and m["t_failing"]:
        out["t"] = {"value": m["t"], "required": target["t"], "classes": m["t_failing"]}
    if "max_risk" in target and m["max_risk"] > target["max_risk"] + slack:
        out["max_risk"] = {"value": m["max_risk"], "required": target["max_risk"]}
    if "max_global_risk" in target:
        xi = target["max_global_risk"]
        if m["rate"] >= xi + slack:
            out["max_global_risk"] = {"value": m["rate"], "required": xi}
        if target.get("household") and m["household_rate"] >= xi + slack:
            out["household"] = {"value": m["household_rate"], "required": xi}
    return out
