"""The candidates of the lattice search with cell suppression for a k-anonymity target,
evaluated on integer codes (:class:`CellCandidates`): no table is built per candidate.

Every key's categories are encoded once, and every level of its hierarchy once through
:func:`sdckit.global_recode` (the public step a recipe replays), which gives a map from the
original category codes to the codes at that level. A node's file is then the rolled-up codes
(one array lookup per key); its k-anonymity without suppression, under the missing-value rule
(a missing value matches every category), is read from its table of distinct key patterns;
when it misses k the suppression is the kernel of :func:`sdckit.local_suppression`
(:func:`sdckit._core.suppression.greedy_suppression`, the greedy on the distinct key patterns
with their record counts) on the same codes, with the same importance ranks, so that it
suppresses the cells the recipe's step suppresses. The loss, the suppressed cells and records,
the re-identification rate and the household rate are computed from the suppressed codes with
the kernels of the public measures (:func:`sdckit.variant_loss`, ARX's Loss,
:func:`sdckit.individual_risk`), so that each figure is the public measure's on the file the
candidate's recipe replays to (the tests check it).
"""

from __future__ import annotations

import numpy as np

from .._core import change_loss as CL
from .._core.frequencies import pattern_table
from .._core.individual import household_risk, individual_risk_values
from .._core.nafreq import pattern_frequencies
from .._core.suppression import default_importance, greedy_suppression
from ._candidates import Candidate, plain_step

__all__ = ["CellCandidates", "cell_candidates"]


def cell_candidates(s) -> CellCandidates | None:
    """The code-level evaluator of ``s``'s candidates, or None when the search needs the public
    methods per candidate: a target other than k alone, record suppression, an objective
    other than sdckit's loss and ARX's Loss, a k above the number of records, or a recode
    that is not a function of the original categories."""
    t = s.target
    k_alone = t.monotone and t.t is None
    if s.suppression != "cells" or not k_alone or s.objective not in ("loss", "arx") or t.k > s.n:
        return None
    try:
        return CellCandidates(s)
    except _NotCodes:
        return None


class _NotCodes(Exception):
    """A level whose recode the code maps cannot follow (the public path is taken)."""


class CellCandidates:
    """Per key: the original codes, the code map of every level, and what the public loss
    needs; the weights and households of the risk."""

    def __init__(self, s):
        self.s = s
        self.k = int(s.target.k)
        self.base: list[np.ndarray] = []
        self.maps: list[list[np.ndarray]] = []  # per key, per level: original code -> level code
        self.numbers: list[list[np.ndarray | None]] = []  # per key, per level: released numbers (or None)
        self.recode_steps: list[list[dict | None]] = []
        self.x: list[np.ndarray | None] = []  # the original numbers of a numeric key
        for key in s.keys:
            self._read_key(key)
        self.weights = s.table.floats([s.sc.weight])[:, 0] if s.sc.weight is not None else None
        self.households = _household_codes(s) if s.sc.household is not None else None

    def _read_key(self, key: str) -> None:
        from ..utility._access import column_kinds

        s = self.s
        codes, labels = s.eng.encode_column(s.table, key, s.missing)
        codes = codes.astype(np.int32)
        n_cat = len(s.eng.label_values(labels))
        numeric = s.scales[key] == "numeric"
        x = s.table.floats([key], s.missing)[:, 0] if numeric else None
        # each map has one more entry, -1, read by the missing codes (-1: the last entry)
        maps: list[np.ndarray]
        numbers: list[np.ndarray | None]
        steps: list[dict | None]
        maps, numbers, steps = [np.r_[np.arange(n_cat), -1].astype(np.int32)], [x if numeric else None], [None]
        ok = codes >= 0
        for level in range(1, s.h[key].height + 1):
            rec = s._recode(s.table, key, level)
            new = s.eng.encode_column(rec.table, key, s.missing)[0].astype(np.int32)
            m = np.full(n_cat + 1, -1, dtype=np.int32)
            m[codes[ok]] = new[ok]
            if np.any(new[~ok] >= 0) or not np.array_equal(m[codes[ok]], new[ok]):
                raise _NotCodes(key)
            maps.append(m)
            released_numbers = numeric and column_kinds(rec.table, [key])[key] in ("int", "float")
            numbers.append(rec.table.floats([key], s.missing)[:, 0] if released_numbers else None)
            steps.append(plain_step("global_recode", rec.parameters))
        self.base.append(codes)
        self.maps.append(maps)
        self.numbers.append(numbers)
        self.recode_steps.append(steps)
        self.x.append(x)

    # -- one candidate ---------------------------------------------------------------------
    def columns(self, levels: tuple) -> list[np.ndarray]:
        """The codes of every key at ``levels`` (-1 = missing: a missing code reads the map's
        last entry, -1)."""
        return [m[lv][b] for m, lv, b in zip(self.maps, levels, self.base)]

    def evaluate(self, levels: tuple, tagged: bool = False) -> Candidate:
        """The candidate of ``levels``: k-anonymous without suppression (or ``tagged`` so), or
        after the local suppression of the recipe's step within the limit; its loss, counts,
        rates and recipe steps."""
        s = self.s
        cand = Candidate(levels, s.bound(levels))
        cols = self.columns(levels)
        steps = [self.recode_steps[j][lv] for j, lv in enumerate(levels) if lv]
        meets = tagged or _k_anonymous(cols, self.k)
        masks = None
        if not meets and s.budget > 0:
            active = [j for j, c in enumerate(cols) if np.unique(c[c >= 0]).size > 1]
            if active:
                masks, step = self._suppress(cols, active)
                steps.append(step)
                cells = int(sum(int(m.sum()) for m in masks.values()))
                cand.within_limit = cells <= s.budget
                cols = [np.where(masks[key], -1, c) if key in masks else c for key, c in zip(s.keys, cols)]
                meets = cand.within_limit and _k_anonymous(cols, self.k)
        cand.meets, cand.steps, cand.risk = meets, steps, {"k_violations": 0 if meets else None}
        if not cand.within_limit:
            return cand
        if masks is None:
            cand.loss = cand.bound
            cand.loss_by_variable = {k: s.lam[k][lv] for k, lv in zip(s.keys, levels)}
        else:
            cand.loss_by_variable = self._loss_by_key(levels, cols, masks)
            cand.loss = s.combine(cand.loss_by_variable)
            cand.cells = int(sum(int(m.sum()) for m in masks.values()))
            cand.records = s._records_all_suppressed(masks, levels)
        cand.rate, cand.household_rate = self.rates(cols)
        return cand

    def _suppress(self, cols: list, active: list[int]) -> tuple[dict, dict]:
        """The local suppression of the active keys (those with two categories or more), as
        :func:`sdckit.local_suppression` runs it: its masks and its recipe step."""
        from ..protect.suppression import recorded_parameters

        s = self.s
        codes = np.column_stack([cols[j] for j in active]).astype(np.int32)
        importance = default_importance(codes)
        new, _ = greedy_suppression(codes, self.k, importance, 1.0)
        masks = {s.keys[j]: (new[:, i] < 0) & (codes[:, i] >= 0) for i, j in enumerate(active)}
        keys = [s.keys[j] for j in active]
        params = recorded_parameters(keys, self.k, importance, None, None, 1.0, "greedy", s.missing)
        return masks, plain_step("local_suppression", params)

    def _loss_by_key(self, levels: tuple, cols: list, masks: dict) -> dict[str, float]:
        """Per key, the objective's part: unchanged where nothing was suppressed; else
        :func:`sdckit.variant_loss`'s lambda_j (its kernels on the codes) or ARX's v_j."""
        s = self.s
        if s.arx is not None:
            return s.arx.by_key(levels, masks)
        out = {}
        for j, (key, lv) in enumerate(zip(s.keys, levels)):
            mask = masks.get(key)
            if mask is None or not mask.any():
                out[key] = s.lam[key][lv]
            elif self.x[j] is None:  # nominal
                out[key] = float(CL.nominal_change(self.base[j], cols[j]).sum()) / s.n
            elif self.numbers[j][lv] is not None:  # numbers released as numbers
                y = np.where(mask, np.nan, self.numbers[j][lv])
                out[key] = float(CL.numeric_change(self.x[j], y).sum()) / s.n
            else:  # numbers released as labels (intervals)
                out[key] = float(CL.recoded_numeric_change(self.x[j], cols[j]).sum()) / s.n
        return out

    def rates(self, cols: list) -> tuple[float, float | None]:
        """The re-identification rate sum r_i / n of :func:`sdckit.individual_risk` (the
        missing-value rule, sdcMicro's approximation), and the household rate
        sum_i r^h_{g(i)} / n with r^h_g = 1 - prod_{i in g} (1 - r_i) when the scenario has
        households (else None)."""
        codes = np.column_stack(cols).astype(np.int32)
        ids, pats, counts, wsum = pattern_table(codes, self.weights)
        f, F = pattern_frequencies(pats, counts, wsum, 1.0, "sdcmicro")
        risk = individual_risk_values(f, F, "approx")[0][ids]
        n = len(risk)
        rate = float(np.sum(risk)) / n if n else 0.0
        if self.households is None:
            return rate, None
        risk_g, size_g = household_risk(risk, *self.households)
        return rate, (float(np.dot(size_g, risk_g)) / n if n else 0.0)


def _k_anonymous(cols: list, k: int) -> bool:
    """Every record's f_k (missing values matching every category) at least k."""
    codes = np.column_stack(cols).astype(np.int32)
    _, pats, counts, _ = pattern_table(codes)
    f, _ = pattern_frequencies(pats, counts, counts, 1.0, "sdcmicro")
    return bool(np.all(f >= k - 1e-9))


def _household_codes(s) -> tuple[np.ndarray, int]:
    """The household of every record (0..G-1); a record without an id is a household of its
    own, as :func:`sdckit.individual_risk` has it."""
    codes, labels = s.eng.encode_column(s.table, s.sc.household)
    codes = codes.astype(np.int64)
    g = len(s.eng.label_values(labels))
    miss = np.flatnonzero(codes < 0)
    if miss.size:
        codes[miss] = g + np.arange(miss.size)
        g += miss.size
    return codes, g
