"""ARX's "Loss" (``MetricMDNMLoss`` with gs-factor 0.5, geometric-mean aggregation) of a file
protected by full-domain generalisation and suppression, a suppressed value counting as a fully
generalised one (share 1): the objective of the search with ``objective="arx"`` and cell
suppression, which ARX itself cannot do.

For key j with domain D_j (the distinct categories of the hierarchy's first column), the
share of a value generalised to level L is the number of domain categories under its level-L
ancestor over |D_j| (1 at ``"*"`` and for a suppressed value). With S_j the sum of the shares
over the n records,

    v_j = max(0, (S_j - n / |D_j|) / (n - n / |D_j|)),   Loss = prod_j (1 + v_j)^(1/m) - 1

(Prasser, Kohlmayer and Kuhn 2016; ARX's ``MetricMDNMLoss`` and
``ILMultiDimensionalGeometricMean``).
"""

from __future__ import annotations

import math

import numpy as np

from ..protect.recode import _key

__all__ = ["ArxLoss"]


class ArxLoss:
    """Per key: each record's share at every level, from the hierarchy's rows."""

    def __init__(self, s):
        self.n = s.n
        self.keys = list(s.keys)
        self.shares: dict[str, list[np.ndarray]] = {}
        self.domain: dict[str, int] = {}
        for key in self.keys:
            rows = s.h[key].rows
            codes, labels = s.eng.encode_column(s.table, key, s.missing)
            values = [_key(v) for v in s.eng.label_values(labels)]
            self.shares[key], self.domain[key] = _record_shares(rows, values, codes, s.h[key].height)

    def by_key(self, levels: tuple, suppressed: dict[str, np.ndarray] | None = None) -> dict[str, float]:
        """v_j of every key at ``levels``; ``suppressed[key]`` marks the records whose value
        is suppressed (share 1)."""
        out = {}
        for key, level in zip(self.keys, levels):
            share = self.shares[key][level]
            total = float(share.sum())
            if suppressed is not None and key in suppressed:
                mask = suppressed[key]
                total += float(mask.sum() - share[mask].sum())
            low = self.n / self.domain[key]
            out[key] = max(0.0, (total - low) / (self.n - low)) if self.n > low else 0.0
        return out

    @staticmethod
    def combine(by: dict[str, float]) -> float:
        """The geometric-mean aggregation: prod (1 + v_j)^(1/m) - 1."""
        if not by:
            return 0.0
        return math.exp(sum(math.log1p(v) for v in by.values()) / len(by)) - 1.0


def _record_shares(rows: list[list], values: list, codes: np.ndarray, height: int) -> tuple[list[np.ndarray], int]:
    """Each record's share at levels 0..height, and the domain size."""
    first: dict = {}
    for r in rows:
        first.setdefault(_key(r[0]), r)
    size = len(first)
    out = []
    for level in range(height + 1):
        if level == 0:
            per_value = np.full(len(values), 1.0 / size)
        else:
            anc = {k: _key(r[level]) if len(r) > level else None for k, r in first.items()}
            count: dict = {}
            for a in anc.values():
                count[a] = count.get(a, 0) + 1
            per_value = np.array([count[anc[v]] / size for v in values])
        share = np.ones(codes.size)  # a missing value counts as fully generalised
        ok = codes >= 0
        share[ok] = per_value[codes[ok]]
        out.append(share)
    return out, size
