"""ARX's quality models (Loss, precision, discernibility, non-uniform entropy; the kernel's
:data:`sdckit._core.lattice.METRICS`) of a file protected by full-domain generalisation and
suppression of single values: the objectives of the search with cell suppression, which ARX
itself cannot do.

The file is scored as ARX scores a generalised file with suppressed records, key by key, with
the records whose value of that key is suppressed in the place of the suppressed records: a
suppressed value stands for the top level ``"*"`` and counts as ARX counts a suppressed
record's value, so that a file whose suppressed values make whole records gets ARX's value to
the last bit. A value missing in the original counts as a suppressed one. With n records, m
keys, g and s the generalisation and suppression factors of the gs-factor (1 and 1 at 0.5;
g = min(1, 2 (1 - gs)), s = min(1, 2 gs)), per key j at level L with R_j the records whose
value is suppressed or missing:

* Loss (``MetricMDNMLoss``): share(v) the rows of the hierarchy under v over |D_j|,
  ``S_j = g sum_{r not in R_j} share + sum_{r in R_j} (s == 1 ? 1 : share + s (1 - share))``,
  ``v_j = floor10(max(0, (S_j - g n / |D_j|) / (n - g n / |D_j|)))``, combined as
  ``prod_j (1 + v_j)^(1/m) - 1``;
* precision (``MetricMDNMPrecision``): ``v_j = ((n - |R_j|) g L / height_j + |R_j| s) / n``,
  combined as their mean;
* non-uniform entropy (``MetricMDNUNMEntropy``): ``v_j = floor10(-(g sum_a a log2(a / b) + s
  sum_c c log2(c / |R_j|)))``, a the records of each original value and b those of its
  generalised value, c the records of R_j with each generalised value; summed over the keys;
* discernibility (``MetricSDNMDiscernability``): a record whose every key below the top level
  is suppressed (or missing) counts n, every other record the number of records with the same
  released values (``"*"`` for a suppressed value); no per-key parts.

floor10 keeps ten decimals (ARX's ``Metric.round``); the per-key values are combined in the
order of the data's columns, as ARX does. References: Prasser, Kohlmayer and Kuhn (2016);
ARX's classes named above (Apache 2.0).
"""

from __future__ import annotations

import math

import numpy as np

from .._categories import category_key
from .._core.lattice import METRICS

__all__ = ["ArxLoss"]

_LN2 = math.log(2.0)


class ArxLoss:
    """Per key: each record's rows covered and generalised code at every level, from the
    hierarchy's rows; ``metric`` one of :data:`METRICS`, ``gs_factor`` in [0, 1]."""

    def __init__(self, s, metric: str = "loss", gs_factor: float = 0.5):
        self.n = s.n
        self.keys = list(s.keys)
        self.metric = metric
        self.g = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)
        self.s = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
        columns = list(s.table.columns)
        self.order = sorted(self.keys, key=columns.index)
        self.covered: dict[str, list[np.ndarray]] = {}
        self.codes: dict[str, list[np.ndarray]] = {}
        self.domain: dict[str, int] = {}
        self.height: dict[str, int] = {}
        self.missing: dict[str, np.ndarray] = {}
        self.entropy: dict[str, list[float]] = {}
        for key in self.keys:
            rows = s.h[key].rows
            codes, labels = s.eng.encode_column(s.table, key, s.missing)
            values = [category_key(v) for v in s.eng.label_values(labels)]
            self.height[key] = s.h[key].height
            self.missing[key] = codes < 0
            self.covered[key], self.codes[key], self.domain[key] = _record_levels(rows, values, codes, self.height[key])
            if metric == "entropy":
                self.entropy[key] = [_generalisation_entropy(c, codes) for c in self.codes[key]]

    @property
    def per_key(self) -> bool:
        """Whether the metric has per-key values (all but discernibility)."""
        return METRICS[self.metric].aggregate != "none"

    # -- per key -----------------------------------------------------------------------------
    def one(self, key: str, level: int, removed: np.ndarray | None = None) -> float:
        """v_j of ``key`` at ``level``; ``removed`` marks the records whose value is suppressed
        (the missing ones always count as such)."""
        gone = self.missing[key] if removed is None else removed | self.missing[key]
        if self.metric == "precision":
            rel = level / self.height[key] if self.height[key] else 0.0
            ns = float(gone.sum())
            return ((self.n - ns) * rel * self.g + ns * self.s) / self.n
        if self.metric == "entropy":
            return self._entropy(key, level, gone)
        return self._loss(key, level, gone)

    def _loss(self, key: str, level: int, gone: np.ndarray) -> float:
        size, n = float(self.domain[key]), float(self.n)
        covered = self.covered[key][level]
        total = float(covered.sum()) / size
        supp_share = float(covered[gone].sum()) / size
        ns = float(gone.sum())
        removed = ns if self.s == 1.0 else supp_share + self.s * (ns - supp_share)
        raw = (total - supp_share) * self.g + removed
        low = self.g * n / size
        v = (raw - low) / (n - low) if n != low else 0.0
        return math.floor(max(v, 0.0) * 1e10) / 1e10

    def _entropy(self, key: str, level: int, gone: np.ndarray) -> float:
        codes = self.codes[key][level][gone]
        total = float(codes.size)
        counts = np.unique(codes, return_counts=True)[1].tolist() if codes.size else []
        supp = math.fsum(c * (math.log(c / total) / _LN2) for c in counts)
        raw = self.entropy[key][level] * self.g + supp * self.s
        return 0.0 if raw == 0.0 else math.floor(-raw * 1e10) / 1e10

    def free(self, key: str, level: int) -> float:
        """v_j without suppression (the missing values count as suppressed)."""
        return self.one(key, level) if self.per_key else 0.0

    def low(self, key: str, level: int) -> float:
        """A lower bound of v_j whatever is suppressed, never decreasing with the level.

        Loss and entropy: v_j without suppression (a suppressed value counts at least its
        share; the entropy of the suppressed records only grows as records join them).
        Precision: a kept value counts g L / height, a suppressed one s, so the least is
        ``min(g L / height, s)`` per value. Discernibility: none (0): suppressing a value can
        split a class, so a file's DM can fall below its generalisation's."""
        if not self.per_key:
            return 0.0
        if self.metric != "precision":
            return self.free(key, level)
        rel = level / self.height[key] if self.height[key] else 0.0
        ns = float(self.missing[key].sum())
        return ((self.n - ns) * min(rel * self.g, self.s) + ns * self.s) / self.n

    # -- the file ----------------------------------------------------------------------------
    def by_key(self, levels: tuple, suppressed: dict[str, np.ndarray] | None = None) -> dict[str, float]:
        """v_j of every key at ``levels``; ``suppressed[key]`` marks the records whose value
        is suppressed. Empty for discernibility."""
        if not self.per_key:
            return {}
        suppressed = suppressed or {}
        return {key: self.one(key, level, suppressed.get(key)) for key, level in zip(self.keys, levels)}

    def combine(self, by: dict[str, float]) -> float:
        """ARX's aggregate of the per-key values, in the order of the data's columns: the
        geometric mean of 1 + v_j minus 1 (Loss), the mean (precision), the sum (entropy)."""
        order = [k for k in self.order if k in by]
        if not order:
            return 0.0
        m = len(order)
        if self.metric in ("precision", "entropy"):
            result = 0.0
            for k in order:
                result += by[k] / m if self.metric == "precision" else by[k]
            return result
        result = 1.0
        for k in order:
            result *= math.pow(by[k] + 1.0, 1.0 / m)
        return result - 1.0

    def value(self, levels: tuple, suppressed: dict[str, np.ndarray] | None = None) -> tuple[float, dict]:
        """The objective of the file at ``levels`` with the values ``suppressed`` removed, and
        its per-key values."""
        if self.per_key:
            by = self.by_key(levels, suppressed)
            return self.combine(by), by
        return self._discernibility(levels, suppressed or {}), {}

    def _discernibility(self, levels: tuple, suppressed: dict) -> float:
        """Sum over the records of their class size (n for a record whose every key below the
        top level is suppressed or missing)."""
        n = self.n
        key_code = np.zeros(n, dtype=np.int64)
        full = np.ones(n, dtype=bool)
        below_top = False
        for key, level in zip(self.keys, levels):
            gone = self.missing[key] | suppressed.get(key, np.zeros(n, dtype=bool))
            codes = np.where(gone, -1, self.codes[key][level])
            _, dense = np.unique(codes, return_inverse=True)
            key_code = np.unique(key_code * (int(dense.max(initial=0)) + 1) + dense.reshape(-1), return_inverse=True)[1]
            key_code = key_code.reshape(-1).astype(np.int64)
            if level < self.height[key]:
                below_top = True
                full &= gone
        if not below_top:
            full[:] = False
        sizes = np.bincount(key_code[~full]).astype(float)
        return float(np.dot(sizes, sizes)) + float(n) * float(full.sum())


def _record_levels(rows: list[list], values: list, codes: np.ndarray, height: int):
    """Per level 0..height: each record's rows of the hierarchy covered by its generalised
    value (the domain's size for a missing value) and its generalised value's code (-1 for a
    missing value); and the domain size (the distinct values of the first column)."""
    first: dict = {}
    for r in rows:
        first.setdefault(category_key(r[0]), r)
    size = len(first)
    covered, gen_codes = [], []
    ok = codes >= 0
    for level in range(height + 1):
        anc = {k: category_key(r[level]) if len(r) > level else None for k, r in first.items()}
        count: dict = {}
        index: dict = {}
        for a in anc.values():
            count[a] = count.get(a, 0) + 1
            index.setdefault(a, len(index))
        per_value = np.array([count[anc[v]] for v in values] + [size], dtype=np.int64)
        code_of = np.array([index[anc[v]] for v in values] + [-1], dtype=np.int64)
        covered.append(per_value[np.where(ok, codes, len(values))])
        gen_codes.append(code_of[np.where(ok, codes, len(values))])
    return covered, gen_codes, size


def _generalisation_entropy(gen: np.ndarray, base: np.ndarray) -> float:
    """``sum_a a log2(a / b)`` over the observed original values (a records each, b those of
    the value's generalised value), in the order of their first appearance (ARX's)."""
    ok = base >= 0
    base, gen = base[ok], gen[ok]
    if not base.size:
        return 0.0
    uniq, first, a = np.unique(base, return_index=True, return_counts=True)
    gen_of = gen[first]
    b: dict[int, int] = {}
    for g, c in zip(gen_of.tolist(), a.tolist()):
        b[g] = b.get(g, 0) + c
    value = 0.0
    for i in np.argsort(first, kind="stable").tolist():
        value += a[i] * (math.log(a[i] / b[gen_of[i]]) / _LN2)
    return value
