"""The protection search: the least loss that meets a risk target (:func:`search`).

The search space is the lattice of generalisation levels of the key variables (one
hierarchy per key: the caller's or an automatic one, :mod:`._hierarchies`), each node followed by
suppression up to a limit. Every candidate is built with the public methods
(:func:`sdckit.global_recode`, :func:`sdckit.local_suppression`, :func:`sdckit.suppress_by_risk`),
so that its recipe replays, and measured afresh with the public measures.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._errors import SdcError
from .._progress import progress_bar
from .._validation import (
    check_bool,
    check_choice,
    check_max_global_risk,
    check_number,
    check_rule,
    check_t_target,
    raise_problems,
)
from ..assessment.table import generic_targets, search_targets
from ..engines import in_memory_engine
from ..results.search import SearchResult
from ..scenario import Scenario
from ._candidates import Candidate, Outcome, levels_text, plain_step
from ._hierarchies import check_lattice_size, read_hierarchies

__all__ = ["SEARCH_TARGETS", "search"]

#: the names a search target may combine: the targets of the measures table
#: (:data:`sdckit.assessment.table.MEASURES`), each once, in its order
SEARCH_TARGETS = search_targets()
DIVERSITIES = ("distinct", "entropy", "recursive")
#: the ground distances of t-closeness (ARX's equal and hierarchical distance)
T_DISTANCES = ("equal", "hierarchical")
#: a class within t of the file's distribution when measured is within t + T_TOLERANCE: the public
#: measure and ARX's sums (which decide what is suppressed) agree to rounding, not to the last bit
T_TOLERANCE = 1e-12
SUPPRESSIONS = ("cells", "records")
OBJECTIVES = ("loss", "arx", "precision", "discernibility", "entropy")
#: the anonymisation models: None (sdckit's lattice search) or "arx" (ARX's model)
MODELS = ("arx",)
#: the objectives that are ARX's quality models, and the kernel's name of each
ARX_METRICS = {"arx": "loss", "precision": "precision", "discernibility": "discernibility", "entropy": "entropy"}
#: ARX's name of each of its quality models
ARX_NAMES = {
    "arx": "Loss",
    "precision": "precision",
    "discernibility": "discernibility",
    "entropy": "non-uniform entropy",
}
#: at most this many thresholds are tried per node when cells are suppressed for a risk target
MAX_RISK_TRIES = 24
#: the next-best candidates the summary shows (evaluated after the proof when pruned)
RUNNERS_UP = 3
#: a key generalised to one category is kept in the measures (it splits no class)
_ANY_KEYS = {"allow_degenerate_keys": True}


# ----------------------------------------------------------------------------------------------
# the target
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A checked search target (see :func:`search`)."""

    k: int | None = None
    l: int | None = None  # noqa: E741
    sensitive: str | None = None
    diversity: str = "distinct"
    c: float = 2.0
    t: float | None = None
    t_distance: str = "equal"
    max_risk: float | None = None
    max_global_risk: float | None = None
    household: bool = False
    max_suda: float | None = None
    #: the targets a measure's headline declares (``Headline.target``): (name, bound) pairs
    measures: tuple[tuple[str, float], ...] = ()

    @property
    def risk_based(self) -> bool:
        return self.max_risk is not None or self.max_global_risk is not None

    @property
    def monotone(self) -> bool:
        """Only k-anonymity: a generalisation of a node that meets it meets it too."""
        return (
            self.k is not None
            and not self.risk_based
            and self.l is None
            and self.max_suda is None
            and not self.measures
        )

    def to_dict(self) -> dict:
        out: dict = {}
        declared = generic_targets()
        for name in search_targets():
            if name in declared:
                continue
            value = getattr(self, name)
            if name in ("diversity", "c") and self.l is None:
                continue
            if name == "t_distance" and self.t is None:
                continue
            if name == "sensitive" and self.l is None and self.t is None:
                continue
            if name == "household" and not value:
                continue
            if value is not None:
                out[name] = value
        return {**out, **dict(self.measures)}


def check_target(target, scenario: Scenario, table) -> Target:
    """The target mapping checked once: known names, values in range, columns present."""
    names = search_targets()
    if not isinstance(target, Mapping) or not target:
        raise SdcError(
            "target: expected a non-empty mapping such as {'k': 5} or {'max_global_risk': 0.01}; names: "
            + ", ".join(names)
        )
    unknown = [str(k) for k in target if k not in names]
    if unknown:
        raise SdcError(f"target: unknown name(s) {', '.join(unknown)}; expected some of {', '.join(names)}")
    t = dict(target)
    problems: list[str] = []
    out: dict = {}
    for name, check in (
        ("k", lambda v: check_rule("k", v, "target['k']")),
        ("max_risk", lambda v: check_rule("threshold", v, "target['max_risk']")),
        ("max_global_risk", lambda v: check_max_global_risk(v, "target['max_global_risk']")),
        ("max_suda", lambda v: check_number(v, "target['max_suda']", low=0.0)),
        ("t", lambda v: check_t_target(v, "target['t']")),
        ("t_distance", lambda v: check_choice(v, "target['t_distance']", T_DISTANCES)),
        ("household", lambda v: check_bool(v, "target['household']")),
    ):
        if name in t:
            try:
                out[name] = check(t[name])
            except SdcError as exc:
                problems.append(str(exc))
    if "l" in t or "t" in t:
        out.update(_check_diversity(t, scenario, table, problems))
    elif any(n in t for n in ("sensitive", "diversity", "c")):
        problems.append(
            "target: 'sensitive', 'diversity' and 'c' go with 'l' or 't'; expected target['l'] or ['t'] too"
        )
    if "t_distance" in t and "t" not in t:
        problems.append("target['t_distance']: given without t; expected target['t'] with it")
    if out.get("household"):
        if scenario.household is None:
            problems.append(
                "target['household']: the scenario has no household column; expected Scenario(household=...)"
            )
        if "max_global_risk" not in t:
            problems.append("target['household']: the household rule needs target['max_global_risk']")
    measures = _declared_targets(t, problems)
    if not measures and not any(n in out for n in ("k", "l", "t", "max_risk", "max_global_risk", "max_suda")):
        problems.append("target: no risk target; expected k, l, t, max_risk, max_global_risk or max_suda")
    raise_problems(problems)
    return Target(**out, measures=measures)


def _declared_targets(t: dict, problems: list) -> tuple[tuple[str, float], ...]:
    """The targets that bound a measure's headline (``Headline.target``), each a finite number."""
    out = []
    for name in generic_targets():
        if name in t:
            try:
                out.append((name, check_number(t[name], f"target[{name!r}]")))
            except SdcError as exc:
                problems.append(str(exc))
    return tuple(out)


def _check_diversity(t: dict, scenario: Scenario, table, problems: list) -> dict:
    out: dict = {}
    if "l" in t:
        try:
            out["l"] = check_rule("l", t["l"], "target['l']")
            out["diversity"] = check_choice(t.get("diversity", "distinct"), "target['diversity']", DIVERSITIES)
            out["c"] = check_rule("c", t.get("c", 2.0), "target['c']")
        except SdcError as exc:
            problems.append(str(exc))
    sensitive = t.get("sensitive", scenario.sensitive[0] if scenario.sensitive else None)
    if sensitive is None:
        problems.append("target['sensitive']: expected the sensitive column of the l-diversity or t-closeness target")
    elif not isinstance(sensitive, str) or sensitive not in table.columns:
        problems.append("target['sensitive']: not a column of the data; expected a column name")
    else:
        out["sensitive"] = sensitive
    return out


# ----------------------------------------------------------------------------------------------
# one candidate
# ----------------------------------------------------------------------------------------------
class _Search:
    """The state of one search: data, roles, hierarchies, per-level losses, candidates."""

    def __init__(
        self,
        data,
        scenario,
        target,
        hierarchies,
        limit,
        suppression,
        objective,
        weights,
        deadline=None,
        model=None,
        gs_factor=None,
        max_lattice_size=None,
    ):
        self.model, suppression, objective = resolve_model(model, suppression, objective)
        self.max_lattice_size = check_rule("max_lattice_size", max_lattice_size, allow_none=True)
        self.eng = in_memory_engine(None, "search", data)
        self.table = self.eng.table(data)
        if not isinstance(scenario, Scenario):
            raise_problems([f"scenario: got {type(scenario).__name__}; expected an sdckit.Scenario"])
        if not scenario.keys:
            raise SdcError("scenario: no categorical key variables; expected Scenario(keys=[...])")
        _, self._enc = scenario.validate(self.table, require_keys=True, engine=self.eng, encoded=True)
        self.sc = scenario
        self.keys = list(scenario.keys)
        self.missing = list(scenario.missing) or None
        self.target = check_target(target, scenario, self.table)
        if self.model == "arx" and self.target.measures:
            names = ", ".join(n for n, _ in self.target.measures)
            raise SdcError(
                f"target: {names} cannot be combined with model='arx' (ARX's model prunes on k, l and t only)"
            )
        self._check_reachable()
        self.limit = check_rule("suppression_limit", limit)
        self.suppression = check_choice(suppression, "suppression", SUPPRESSIONS)
        self.objective = check_choice(objective, "objective", OBJECTIVES)
        self.gs_factor = _gs_factor(gs_factor, self.objective)
        self.arx_metric = ARX_METRICS.get(self.objective)
        self.weights = _check_weights(weights, self.keys)
        from ..assessment.tradeoff import loss_scales

        self.scales = loss_scales(self.table, scenario, self.keys, self.eng)
        self._check_finite()
        hierarchies, self.t_hierarchies = self._sensitive_hierarchy(hierarchies)
        self.h = read_hierarchies(hierarchies, self.keys, self._values, self._kind, self.eng, self._missing_codes)
        self.n_nodes = check_lattice_size({k: self.h[k].height for k in self.keys}, self.max_lattice_size)
        self.n = self.table.n
        units = self.n if self.suppression == "records" else self.n * len(self.keys)
        self.budget = int(math.floor(self.limit * units + 1e-9))
        self._check_model()
        self.arx = None
        if self.arx_metric is not None and self.suppression == "cells":
            from ._arx_loss import ArxLoss

            self.arx = ArxLoss(self, self.arx_metric, self.gs_factor)
        self.deadline = deadline
        self.lam = {} if self.model == "arx" else self._level_losses()
        self.lam_low = None  # a lower bound per key and level where it is below lam (ARX's precision)
        if self.arx is not None and self.lam:
            self.lam_low = {k: [self.arx.low(k, lv) for lv in range(self.h[k].height + 1)] for k in self.keys}

    def _sensitive_hierarchy(self, hierarchies) -> tuple:
        """The keys' hierarchies and, for hierarchical t-closeness, ``{sensitive: rows}`` of the
        sensitive variable's hierarchy (``hierarchies[sensitive]``), checked before the search
        by measuring the original with it (a tree with one top value, covering every value).
        A hierarchy of the sensitive variable is accepted with any target (ARX's projects give
        one per column) and used by hierarchical t-closeness only."""
        t = self.target
        if t.t is None or t.t_distance != "hierarchical":
            if t.sensitive is not None and isinstance(hierarchies, Mapping) and t.sensitive in hierarchies:
                rest = {k: v for k, v in hierarchies.items() if k != t.sensitive}
                return rest or None, None
            return hierarchies, None
        from ..risk import t_closeness
        from ._hierarchies import _given

        given = dict(hierarchies) if isinstance(hierarchies, Mapping) else {}
        if t.sensitive not in given:
            raise SdcError(
                f"hierarchies: no hierarchy for the sensitive variable {t.sensitive}; expected "
                f"hierarchies[{t.sensitive!r}] with target['t_distance'] = 'hierarchical'"
            )
        rows = _given(t.sensitive, given.pop(t.sensitive), self._values(t.sensitive)[0], self.eng).rows
        spec = {t.sensitive: rows}
        t_closeness(self.table, self.keys, t.sensitive, hierarchies=spec, missing=self.missing, **_ANY_KEYS)
        return given or None, spec

    def _check_model(self) -> None:
        """Whole-record suppression and ARX's objective take the targets of ARX's model."""
        t = self.target
        if self.suppression == "records" and (t.risk_based or t.max_suda is not None):
            raise SdcError(
                "suppression: 'records' suppresses the records of the key classes that fail k, l or t (ARX's model) "
                "and takes the targets k, l and t; expected suppression='cells' for max_risk, max_global_risk or "
                "max_suda"
            )
        if self.arx_metric is not None and self.weights is not None:
            raise SdcError(
                f"weights: ARX's {ARX_NAMES[self.objective]} weighs the keys equally; expected no weights with "
                f"objective={self.objective!r}"
            )

    def _check_reachable(self) -> None:
        """A target some node can meet: k at most the records, l at most the categories of the
        sensitive variable (a missing value one more): no class can hold more."""
        t, problems = self.target, []
        if t.k is not None and t.k > self.table.n:
            problems.append(
                f"target['k']: {t.k} is larger than the {self.table.n} records; expected at most {self.table.n}"
            )
        if t.l is not None:
            codes, labels = self.sensitive_encoded
            n_cat = len(self.eng.label_values(labels)) + int((codes < 0).any())
            if t.l > n_cat:
                problems.append(
                    f"target['l']: {t.l:g} is above the {n_cat} categories of the sensitive variable {t.sensitive!r}; "
                    f"no class can be {t.l:g}-diverse: expected l at most {n_cat}"
                )
        raise_problems(problems)

    def _check_finite(self) -> None:
        """A key on a numeric scale holds finite numbers (NaN and null are missing values)."""
        problems = []
        for key in self.keys:
            if self.scales[key] == "numeric" and self.table.is_numeric(key):
                n_inf = self.table.float_summary(key)["n_inf"]
                if n_inf:
                    problems.append(
                        f"scenario: key {key} holds {n_inf} infinite value(s) (inf or -inf); expected finite "
                        f"numbers (NaN and null are missing values), or {key} on a nominal scale "
                        f"(Scenario(scales={{{key!r}: 'nominal'}})) where inf is a category"
                    )
        raise_problems(problems)

    @property
    def expired(self) -> bool:
        """The time limit passed (checked between the steps that come before the first candidate)."""
        return self.deadline is not None and time.perf_counter() > self.deadline

    # -- hierarchies -------------------------------------------------------------------------
    def _values(self, key: str):
        codes, labels = self.encoded(key)
        values = self.eng.label_values(labels)
        counts = np.bincount(codes[codes >= 0], minlength=len(values)).tolist()
        return [v.item() if isinstance(v, np.generic) else v for v in values], counts

    def _missing_codes(self, key: str) -> list:
        """The scenario's missing-value codes that ``key`` holds (as its values)."""
        if not self.missing:
            return []
        codes, labels = self.eng.encode_column(self.table, key, None)
        values = self.eng.label_values(labels)
        seen = np.bincount(codes[codes >= 0], minlength=len(values)) > 0
        miss = list(self.missing)
        return [v.item() if isinstance(v, np.generic) else v for v, s in zip(values, seen) if s and v in miss]

    def _kind(self, key: str) -> str:
        if self.table.categories(key) is not None:
            return "ordered"
        return "numeric" if self.scales[key] == "numeric" and self.table.is_numeric(key) else "nominal"

    # -- per-level losses: the lower bound of every node ---------------------------------------
    def _level_losses(self) -> dict[str, list[float]]:
        """lambda_j at every level of every key: the generalisation-only loss of a node is the
        weighted mean of its keys' lambda_j (each variable's loss depends on its column only).
        Empty once the time limit has passed (the search then stops before its first candidate)."""
        from ..utility import variant_loss

        if self.arx is not None:
            return {k: [self.arx.free(k, lv) for lv in range(self.h[k].height + 1)] for k in self.keys}
        out = {}
        for key in self.keys:
            lam = [0.0]
            for level in range(1, self.h[key].height + 1):
                if self.expired:
                    return {}
                rec = self._recode(self.table, key, level)
                res = variant_loss(self.table, rec.table, [key], scales={key: self.scales[key]}, missing=self.missing)
                lam.append(float(res.loss))
            out[key] = lam
        return out

    def bound(self, levels: tuple) -> float:
        lam = self.lam if self.lam_low is None else self.lam_low
        return self.combine({k: lam[k][lv] for k, lv in zip(self.keys, levels)})

    def combine(self, by: dict) -> float:
        """The objective from the per-key losses: their (weighted) mean, or ARX's geometric mean."""
        return self.arx.combine(by) if self.arx is not None else _weighted(self.weights, by)

    def _recode(self, table, key: str, level: int):
        return self.step(table, "global_recode", variables=[key], hierarchy=self.h[key].recorded, level=level)

    def step(self, table, method: str, **parameters):
        """One step of a candidate, through the path a recipe replays on (:func:`._steps.run_step`:
        the linked variables follow their keys); ``parameters`` as given, no role filled in."""
        from ._steps import run_step

        return run_step(table, self.sc, method, parameters, engine=self.eng, fill_roles=False)

    # -- evaluation --------------------------------------------------------------------------
    def generalise(self, levels: tuple):
        table, steps = self.table, []
        for key, level in zip(self.keys, levels):
            if level:
                res = self._recode(table, key, level)
                table = res.table
                steps.append(_step("global_recode", res))
        return table, steps

    def evaluate(self, levels: tuple, tagged: bool = False) -> Candidate:
        """Recode to ``levels``; when the target is not met, suppress (within the limit); measure."""
        cand = Candidate(levels, self.bound(levels))
        table, steps = self.generalise(levels)
        meets, risk = (True, {}) if tagged else self.check(table)
        can_suppress = (
            self.target.k is not None
            or self.target.t is not None
            or (self.target.risk_based and self.suppression == "cells")
            or (self.target.l is not None and self.suppression == "records")
        )
        suppressed = False
        if not meets and self.budget > 0 and can_suppress:
            table, extra, units = self.suppress_cells(table)
            steps += extra
            suppressed = bool(units)
            cand.within_limit = units <= self.budget
            if cand.within_limit and suppressed:
                meets, risk = self.check(table)
        cand.meets, cand.risk, cand.steps, cand.table = meets and cand.within_limit, risk, steps, table
        if not cand.within_limit:
            return cand
        if suppressed:
            cand.loss, cand.loss_by_variable, cand.cells, cand.records = self.loss(table, levels)
            if self.suppression == "records":
                cand.records = units
        elif self.arx is not None:  # ARX's metric without suppression (discernibility needs the classes)
            cand.loss, cand.loss_by_variable = self.arx.value(levels)
        else:
            cand.loss = cand.bound
            cand.loss_by_variable = {k: self.lam[k][lv] for k, lv in zip(self.keys, levels)}
        cand.rate, cand.household_rate = self.rates(table)
        return cand

    def loss(self, table, levels: tuple) -> tuple[float, dict, int, int]:
        """The objective of ``table``, lambda_j per key, the cells suppressed and the records
        with every key suppressed."""
        from ..utility import variant_loss

        masks = self._suppressed_masks(table)
        if self.arx is not None:
            total, by = self.arx.value(levels, masks)
            cells = int(sum(int(m.sum()) for m in masks.values()))
            return total, by, cells, self._records_all_suppressed(masks, levels)
        res = variant_loss(self.table, table, self.keys, scales=dict(self.scales), missing=self.missing)
        by = {k: float(v) for k, v in res.loss_by_variable.items()}
        cells = int(sum(res.suppressed_by_variable.values()))
        return self.combine(by), by, cells, self._records_all_suppressed(masks, levels)

    @property
    def keys_encoded(self):
        """The keys of the original encoded (the scenario's missing values -1): the encoding the
        scenario's check made, once."""
        if self._enc is None:
            self._enc = self.eng.encode(self.table, self.keys, self.missing)
        return self._enc

    def encoded(self, key: str) -> tuple:
        """``(codes, labels)`` of one key of the original (see :attr:`keys_encoded`), or of the
        target's sensitive variable."""
        if key not in self.keys:
            return (
                self.sensitive_encoded
                if key == self.target.sensitive
                else self.eng.encode_column(self.table, key, self.missing)
            )
        j = self.keys.index(key)
        return self.keys_encoded.codes[:, j], self.keys_encoded.labels[j]

    @functools.cached_property
    def sensitive_encoded(self) -> tuple:
        """``(codes, labels)`` of the target's sensitive variable in the original (encoded once)."""
        return self.eng.encode_column(self.table, self.target.sensitive, self.missing)

    @functools.cached_property
    def _observed(self) -> dict:
        """Per key, the records with a value in the original (encoded once for every candidate)."""
        return {key: self.encoded(key)[0] >= 0 for key in self.keys}

    def _suppressed_masks(self, table) -> dict:
        """Per key: observed in the original, missing in ``table``."""
        return {
            key: (self.eng.encode_column(table, key, self.missing)[0] < 0) & self._observed[key] for key in self.keys
        }

    def _records_all_suppressed(self, masks: dict, levels: tuple) -> int:
        """Records whose every key not generalised to ``"*"`` was observed in the original and
        is missing now."""
        kept = [k for k, lv in zip(self.keys, levels) if lv < self.h[k].height]
        if not kept:
            return 0
        return int(np.logical_and.reduce([masks[k] for k in kept]).sum())

    def rate(self, table) -> float:
        """The expected re-identification rate (sum r_i / n): the risk axis of the front."""
        from ..risk import individual_risk

        ir = individual_risk(table, self.keys, weight=self.sc.weight, missing=self.missing, **_ANY_KEYS)
        return float(ir.global_risk)

    def rates(self, table) -> tuple[float, float | None]:
        """The re-identification rate and, when the scenario has households, the household
        rate (sum_i r^h_{g(i)} / n, r^h_g = 1 - prod_{i in g} (1 - r_i)), else None."""
        from ..risk import individual_risk

        if self.sc.household is None:
            return self.rate(table), None
        ir = individual_risk(
            table, self.keys, weight=self.sc.weight, household=self.sc.household, missing=self.missing, **_ANY_KEYS
        )
        return float(ir.global_risk), float(ir.household_global_risk)

    def check(self, table) -> tuple[bool, dict]:
        """Whether ``table`` meets every target, measured afresh with the public measures
        (under whole-record suppression: :func:`._search_records.check_records`)."""
        from ..risk import k_anonymity, l_diversity

        if self.suppression == "records":
            from ._search_records import check_records

            met, found, _, _, _ = check_records(self, table, np.stack([self._observed[k] for k in self.keys], axis=1))
            return met, found
        t, ok = self.target, True
        risk: dict[str, float | int | None] = {}
        if t.k is not None:
            ka = k_anonymity(table, self.keys, k=[t.k], missing=self.missing, allow_degenerate_keys=True)
            risk["k_violations"] = int(ka.n_violations[t.k])
            ok &= risk["k_violations"] == 0
        if t.l is not None:
            ld = l_diversity(table, self.keys, t.sensitive, c=t.c, missing=self.missing, allow_degenerate_keys=True)
            risk["l"] = ld.min[t.diversity][t.sensitive]
            ok &= risk["l"] is not None and risk["l"] >= t.l
        return self.check_rest(table, risk, bool(ok))

    def check_rest(self, table, risk: dict, ok: bool) -> tuple[bool, dict]:
        """The targets beyond k and l (t, the risk rules, SUDA) measured on ``table``, added to
        ``risk``; ``ok``: whether k and l are met."""
        from ..risk import individual_risk, suda

        t = self.target
        if t.t is not None:
            risk["t"] = self._t_of(table)
            ok &= risk["t"] is None or risk["t"] <= t.t + T_TOLERANCE
        if t.risk_based:
            household = self.sc.household if t.household else None
            ir = individual_risk(
                table, self.keys, weight=self.sc.weight, household=household, missing=self.missing, **_ANY_KEYS
            )
            risk["max_risk"] = float(ir.risk.max()) if ir.n else 0.0
            risk["global_risk"] = float(ir.global_risk)
            if t.max_risk is not None:
                ok &= risk["max_risk"] <= t.max_risk
            if t.max_global_risk is not None:
                verdict = ir.threshold(t.max_global_risk)
                if household is not None:
                    risk["household_global_risk"] = float(ir.household_global_risk)
                ok &= verdict.safe
        if t.max_suda is not None:
            sd = suda(table, self.keys, missing=self.missing, allow_degenerate_keys=True)
            risk["max_suda"] = float(np.max(sd.score)) if len(sd.score) else 0.0
            ok &= risk["max_suda"] <= t.max_suda
        for name, bound in t.measures:
            risk[name], met = self._declared_target(table, name, bound)
            ok &= met
        return bool(ok), risk

    def _declared_target(self, table, name: str, bound: float) -> tuple[float, bool]:
        """The headline a target names, measured on ``table`` (the measure called as declared,
        with the scenario; against the original for a measure of a variant), and whether it
        is within ``bound``."""
        from ..assessment.measures import declared_call

        entry, head = generic_targets()[name]
        value = float(getattr(declared_call(entry, self.table, table, self.sc), head.attribute))
        return value, bool(value <= bound if head.better == "lower" else value >= bound)

    def _t_of(self, table) -> float | None:
        """The largest distance of a class's distribution of the sensitive variable from the
        file's (:func:`sdckit.t_closeness`, the target's ground distance). With whole-record
        suppression the class of the records whose every key is suppressed is left out (ARX's
        model: a suppressed record is removed); the file's distribution P keeps them, as ARX's."""
        from ..risk import t_closeness

        s = self.target.sensitive
        tc = t_closeness(table, self.keys, s, hierarchies=self.t_hierarchies, missing=self.missing, **_ANY_KEYS)
        dist = np.asarray(tc.class_distance[s], dtype=float)
        if self.suppression == "records":  # a record is kept whole or loses every key it had
            gone = np.logical_or.reduce(list(self._suppressed_masks(table).values()))
            dist = dist.copy()
            dist[np.unique(tc.class_ids[gone])] = np.nan
        dist = dist[~np.isnan(dist)]
        return float(dist.max()) if dist.size else None

    # -- cell suppression --------------------------------------------------------------------
    def suppress_cells(self, table):
        """Local suppression for k, then suppression by risk for the risk targets; returns the
        table, the recipe steps and the cells suppressed."""
        steps, cells = [], 0
        if not self.active(table):
            return table, steps, cells
        if self.suppression == "records":
            return self._suppress_records(table)
        if self.target.k is not None:
            res = self.step(table, "local_suppression", keys=self.active(table), k=self.target.k, missing=self.missing)
            table, cells = res.table, sum(res.n_changed.values())
            steps.append(_step("local_suppression", res))
        if self.target.t is not None and cells <= self.budget:
            res = self.step(table, "suppress_records", **self._far_parameters(table))
            if res.details["n_records"]:
                table = res.table
                cells += sum(res.n_changed.values())
                steps.append(_step("suppress_records", res))
        if self.target.risk_based and cells <= self.budget:
            res = self._suppress_risk(table, self.budget - cells)
            if res is not None:
                table = res.table
                cells += sum(res.n_changed.values())
                steps.append(_step("suppress_by_risk", res))
        return table, steps, cells

    def _suppress_records(self, table):
        """Whole-record suppression of the classes that fail k, l or t (every key of their
        records set missing); the count is in records."""
        t = self.target
        params: dict = {"keys": self.keys, "k": t.k or 1, "missing": self.missing}
        if t.l is not None:
            params.update(l=t.l, sensitive=t.sensitive, diversity=t.diversity, c=t.c)
        if t.t is not None:
            params.update(sensitive=t.sensitive, t=t.t, t_distance=t.t_distance, hierarchies=self.t_hierarchies)
        res = self.step(table, "suppress_records", **params)
        return res.table, [_step("suppress_records", res)], int(res.details["n_records"])

    def _far_parameters(self, table, k: int = 1) -> dict:
        """``suppress_records`` of the classes farther than the target's t (and below ``k``):
        every key of their records set missing. With cell suppression this comes after the
        single values suppressed for k: suppressing single values moves records between classes
        but cannot bring a class's distribution closer to the file's, so a class that is too far
        loses every key; the records with every key suppressed then form one class, measured
        like the others."""
        t = self.target
        return dict(
            keys=self.active(table), k=k, missing=self.missing, sensitive=t.sensitive, t=t.t,
            t_distance=t.t_distance, hierarchies=self.t_hierarchies,
        )  # fmt: skip

    def _suppress_risk(self, table, budget: int):
        """``suppress_by_risk`` at the highest threshold whose result meets the target.

        With ``max_risk`` alone the threshold is ``max_risk``. For ``max_global_risk`` the
        thresholds tried are the distinct individual-risk levels of the file (at most
        ``max_risk``), from r* of the mu-ARGUS rule (or the second-highest level when only the
        household rule fails) down, in doubling steps and then by bisection between the last
        failing and the first passing level (at most MAX_RISK_TRIES calls)."""
        from ..risk import individual_risk

        t = self.target
        if t.max_global_risk is None:
            return self._suppress_at(table, float(t.max_risk))
        ir = individual_risk(table, self.keys, weight=self.sc.weight, missing=self.missing, **_ANY_KEYS)
        levels = np.unique(ir.risk)[::-1]
        levels = levels[levels > 0]
        if t.max_risk is not None:
            levels = levels[levels <= t.max_risk]
        if not levels.size:
            return None
        r_star = ir.threshold(t.max_global_risk).threshold
        if r_star:
            start = int(np.searchsorted(-levels, -r_star, side="left"))
        else:
            start = 0 if t.max_risk is not None and ir.risk.max() > t.max_risk else 1
        return self._bisect(table, levels, min(start, levels.size - 1), budget)

    def _bisect(self, table, levels, start: int, budget: int):
        tries, bad, i, jump, good, res = 0, start - 1, start, 1, None, None
        while tries < MAX_RISK_TRIES:
            res = self._suppress_at(table, float(levels[i]))
            tries += 1
            if sum(res.n_changed.values()) > budget:
                return res
            if self.check(res.table)[0]:
                good = (i, res)
                break
            if i == levels.size - 1:
                return res
            bad, i, jump = i, min(i + jump, levels.size - 1), jump * 2
        if good is None:
            return res
        hi, best = good
        while hi - bad > 1 and tries < MAX_RISK_TRIES:
            mid = (bad + hi) // 2
            res = self._suppress_at(table, float(levels[mid]))
            tries += 1
            if sum(res.n_changed.values()) <= budget and self.check(res.table)[0]:
                hi, best = mid, res
            else:
                bad = mid
        return best

    def _suppress_at(self, table, threshold: float):
        return self.step(
            table,
            "suppress_by_risk",
            keys=self.active(table),
            weight=self.sc.weight,
            threshold=threshold,
            missing=self.missing,
        )

    def active(self, table) -> list[str]:
        """The keys with at least two observed categories in ``table`` (a key generalised to one
        category splits no class: the suppression methods leave it out)."""
        out = []
        for key in self.keys:
            codes, _ = self.eng.encode_column(table, key, self.missing)
            if codes.size and np.unique(codes[codes >= 0]).size > 1:
                out.append(key)
        return out


def _gs_factor(gs_factor, objective: str) -> float | None:
    """ARX's gs-factor of an ARX quality model (default 0.5); None for sdckit's loss."""
    if gs_factor is None:
        return 0.5 if objective in ARX_METRICS else None
    gs = check_rule("gs_factor", gs_factor)
    if objective == "loss":
        raise SdcError(
            "gs_factor: given with objective='loss', which has no gs-factor; expected it with one of ARX's "
            "quality models (objective 'arx', 'precision' or 'entropy')"
        )
    if objective == "discernibility":
        raise SdcError(
            "gs_factor: ARX's discernibility does not weigh generalisation against suppression; expected no "
            "gs_factor with objective='discernibility' (or objective 'arx', 'precision' or 'entropy')"
        )
    return gs


def _step(method: str, res) -> dict:
    return plain_step(method, res.parameters)


def _weighted(weights: dict | None, by: dict) -> float:
    if not by:
        return 0.0
    if weights is None:
        return float(sum(by.values()) / len(by))
    total = sum(weights[k] for k in by)
    return float(sum(weights[k] * v for k, v in by.items()) / total)


def _check_weights(weights, keys: list) -> dict | None:
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise SdcError("weights: expected a mapping {key: non-negative weight}")
    extra = [str(k) for k in weights if k not in keys]
    if extra:
        raise SdcError(f"weights: {', '.join(extra)} not among the keys; expected some of {', '.join(keys)}")
    out = {k: check_number(weights.get(k, 1.0), f"weights[{k}]", low=0.0) for k in keys}
    if sum(out.values()) <= 0:
        raise SdcError("weights: every weight is 0; expected at least one positive weight")
    return out


# ----------------------------------------------------------------------------------------------
# the search
# ----------------------------------------------------------------------------------------------
def search(
    data,
    scenario: Scenario,
    *,
    target,
    hierarchies=None,
    suppression_limit: float = 0.0,
    suppression: str | None = None,
    objective: str | None = None,
    weights=None,
    time_limit: float | None = None,
    max_candidates: int | None = None,
    exhaustive: bool = False,
    progress=None,
    model: str | None = None,
    gs_factor: float | None = None,
    max_lattice_size: int | None = None,
) -> SearchResult:
    r"""The protection with the least loss that meets a risk target.

    The candidates are the nodes of the generalisation lattice: one level per key (0 = the
    original categories, up to ``"*"``, everything merged), each recoded with
    :func:`sdckit.global_recode` (``hierarchy=``, ``level=``) and, when it does not meet the
    target, followed by suppression of at most ``suppression_limit`` of the key cells:
    :func:`sdckit.local_suppression` for k-anonymity, :func:`sdckit.suppress_by_risk` for the
    risk targets (at the highest individual-risk threshold that meets the target). Each
    candidate is measured afresh with the public measures, and the winner is the one that meets
    the target with the least loss

    .. math:: L = \frac{\sum_j w_j \lambda_j}{\sum_j w_j},

    :math:`\lambda_j` the loss of key j of :func:`sdckit.variant_loss` against the original
    (the scales of the assessment; ``w_j`` = ``weights``, default 1).

    **Search.** The generalisation-only loss of a node (its recodes without suppression) is
    computed from the per-level :math:`\lambda_j` without touching the data, and serves as the
    node's lower bound: nodes are visited in increasing bound (ties: fewer levels in all, then
    the levels in lexicographic order) and the search stops at the first node whose bound is
    not below the best loss found: every later node is pruned, generalisations included, and
    the winner is proven optimal. For k-anonymity alone, a generalisation of a node that
    meets it without suppression meets it too (Samarati 2001; LeFevre et al. 2005; ARX's
    FLASH): it is taken as safe without measuring. ``time_limit`` and ``max_candidates``
    stop the search early: the best candidate so far is returned, flagged as best effort. The
    nodes are made one at a time (:class:`LatticeOrder`), never the whole lattice, so both
    limits hold from the first step; a lattice of more than 2,000,000 nodes (the product of the
    keys' numbers of levels) is refused before anything of its size is built.

    Every step of a candidate runs as :meth:`sdckit.SdcProblem.apply` runs it (the scenario's
    linked variables follow their keys), so that ``protected`` is its ``recipe`` replayed. A
    key on a numeric scale must be finite (an infinite value is an error; NaN and null are
    missing values).

    The bound is exact for the nodes that need no suppression; a suppressed cell costs at
    least as much as the generalised value it replaces, except that, for a nominal key, removing
    a value from a merged group makes the group's other values a little more certain (a change
    of the order of one record's share of the group), which the bound ignores.

    Parameters
    ----------
    data : table
        The microdata; never modified.
    scenario : Scenario
        The roles: ``keys`` (the categorical keys searched), ``weight``, ``household``,
        ``missing``, ``scales``.
    target : mapping
        Any combination of ``k`` (k-anonymity), ``l`` with ``sensitive`` (default: the
        scenario's first sensitive variable), ``diversity`` (``"distinct"``, ``"entropy"``,
        ``"recursive"``) and ``c``, ``t`` with ``sensitive`` (t-closeness: the largest earth
        mover's distance between a class's distribution of the sensitive variable and the
        file's; generalisation only, suppression does not fix it), ``max_risk`` (no record's
        individual risk above),
        ``max_global_risk`` (the individual re-identification rate, mu-ARGUS threshold rule),
        ``household`` (True: also the household rule at ``max_global_risk``), ``max_suda``
        (the largest SUDA score allowed).
    hierarchies : mapping, optional
        ``{key: ARX hierarchy CSV path | rows | {category: [level 1, level 2, ...]} | table}``.
        Keys without one get an automatic hierarchy: numbers on a numeric scale are cut into
        intervals of doubling width (the first about a twentieth of the range, rounded to 1, 2
        or 5 times a power of ten), ordered categories merge neighbours two by two, nominal
        categories keep the half, quarter, ... most frequent and merge the rest into
        ``"other"``; the top level is ``"*"``.
    suppression_limit : float in [0, 1], default 0
        The share of the key cells (n times the number of keys) that may be suppressed.
    suppression : {"cells", "records"}, optional
        Suppress single key values (default), or whole records (the model of ARX; the default
        with ``model="arx"``).
    objective : {"loss", "arx", "precision", "discernibility", "entropy"}, optional
        The loss of :func:`sdckit.variant_loss`, or one of ARX's quality models, exactly as ARX
        defines them: ``"arx"``, ARX's Loss (per key, the mean share of its domain a released
        value covers, 1 for a suppressed value, rescaled as (S_j - n/|D_j|) / (n - n/|D_j|),
        aggregated as prod(1 + v_j)^(1/m) - 1); ``"precision"`` (per key, the mean of level /
        height, 1 for a suppressed value, averaged over the keys); ``"discernibility"`` (the
        sum of the squared class sizes, n for each suppressed record); ``"entropy"`` (ARX's
        non-uniform entropy: the bits lost per value, -log2 of the share of its original value
        among the records of its released value, summed). With ``suppression="records"`` the
        search is ARX's own (its optimal node); with cells it finds what ARX cannot (single
        suppressed values, each counted as ARX counts a suppressed record's value). Default
        ``"loss"``; ``"arx"`` with ``model="arx"``.
    weights : mapping, optional
        ``{key: weight}`` of the per-variable losses (default 1 each).
    time_limit : float, optional
        Seconds after which the search stops with the best candidate so far (counted from the
        call: the per-level losses before the first candidate count).
    max_candidates : int, optional
        The number of candidates evaluated after which the search stops (the next-best
        candidates evaluated after the proof count too).
    exhaustive : bool, default False
        Evaluate every candidate, without the bound (exact for every objective, at the cost of
        the whole lattice; with ``objective="loss"`` the bound may, in rare cases, pass over a
        candidate that a suppression makes a little cheaper than its recodes alone).
    progress : bool, optional
        A progress bar counting candidates (None: on a terminal).
    gs_factor : float in [0, 1], optional
        ARX's weight of generalisation against suppression in its quality models (default
        0.5: equal; below, suppression counts s = 2 gs; above, generalisation counts
        g = 2 (1 - gs)); with ``"arx"``, ``"precision"`` and ``"entropy"`` only (an error with
        ``"loss"``, and with ``"discernibility"``, which ARX does not weigh).
    model : {None, "arx"}, optional
        ``"arx"``: ARX's model, one switch: whole-record suppression of the classes that fail
        the target, ARX's optimal node under ARX's Loss (or the ``objective`` among ARX's
        quality models), the file built from the search's own tables and checked against the
        whole target. It cannot be combined with ``suppression="cells"`` nor with
        ``objective="loss"`` (an error says so). ``suppression="records"`` with one of ARX's
        quality models is ARX's model too.
    max_lattice_size : int, optional
        The most nodes the lattice may have (default 2,000,000): a larger lattice is refused
        before anything is built; raise it for a large lattice (its nodes are held in memory,
        one byte per key each).

    Returns
    -------
    SearchResult

    References
    ----------
    Samarati, P. (2001). Protecting respondents' identities in microdata release. *IEEE TKDE*
    13(6). Kohlmayer, F., Prasser, F., Eckert, C., Kemper, A. and Kuhn, K. A. (2012). Flash: efficient,
    stable and optimal k-anonymity. *PASSAT*. Mlodak, A. (2020). Information loss resulting from
    statistical disclosure control of output data. *Statistics in Transition* 21(4).
    """
    t0 = time.perf_counter()
    limit_t = check_rule("time_limit", time_limit, allow_none=True)
    limit_n = check_rule("k", max_candidates, "max_candidates") if max_candidates is not None else None
    prune = not check_bool(exhaustive, "exhaustive")
    deadline = None if limit_t is None else t0 + limit_t
    s = _Search(
        data,
        scenario,
        target,
        hierarchies,
        suppression_limit,
        suppression,
        objective,
        weights,
        deadline,
        model,
        gs_factor,
        max_lattice_size,
    )
    if s.expired or (not s.lam and s.model != "arx"):
        outcome = Outcome(None, [], s.n_nodes, 0, 0, 0, False, f"the time limit ({limit_t:g} s)")
    elif s.model == "arx":
        from ._search_records import records_search

        outcome = records_search(s, limit_t, progress, limit_n, t0)
    else:
        outcome = _lattice_search(s, limit_t, limit_n, progress, t0, prune=prune)
    result = _result(s, outcome, data, time.perf_counter() - t0)
    if s.objective == "loss" and not exhaustive and outcome.n_pruned:
        note = (
            "the loss bound that pruned candidates ignores that suppressing a value of a merged category makes "
            "the rest of its group a little more certain; exhaustive=True evaluates every candidate"
        )
        result = dataclasses.replace(result, notes=(*result.notes, note))
    if s.arx is not None:
        result = dataclasses.replace(result, notes=(*result.notes, *_arx_cell_notes(s)))
    return result


def resolve_model(model, suppression, objective) -> tuple[str | None, str, str]:
    """``(model, suppression, objective)`` with the defaults filled in.

    ``model="arx"`` is ARX's model: whole-record suppression and ARX's Loss unless another of
    ARX's quality models is given; it cannot be combined with ``suppression="cells"`` nor with
    sdckit's ``objective="loss"``. Without a model, ``suppression="records"`` with one of ARX's
    quality models (``objective="arx"``, ...) is ARX's model too (the older spelling)."""
    if model is not None:
        model = check_choice(model, "model", MODELS)
    if model == "arx":
        if suppression == "cells":
            raise SdcError(
                "model: 'arx' suppresses whole records (ARX's model) and cannot be combined with "
                "suppression='cells'; expected suppression='records' (or none), or model=None for cell suppression"
            )
        if objective == "loss":
            raise SdcError(
                "model: 'arx' optimises one of ARX's quality models and cannot be combined with objective='loss' "
                f"(sdckit's variant loss); expected objective one of {', '.join(o for o in OBJECTIVES if o != 'loss')} "
                "(or none: ARX's Loss), or model=None with suppression='records' for sdckit's lattice search"
            )
        suppression, objective = "records", objective or "arx"
    suppression = check_choice("cells" if suppression is None else suppression, "suppression", SUPPRESSIONS)
    objective = check_choice("loss" if objective is None else objective, "objective", OBJECTIVES)
    if model is None and suppression == "records" and objective != "loss":
        model = "arx"
    return model, suppression, objective


def _arx_cell_notes(s: _Search) -> list[str]:
    """What ARX's quality model means on a file with suppressed values."""
    notes = [
        f"objective={s.objective!r} with suppression={s.suppression!r} is sdckit's lattice search under that "
        "quality model, not ARX's model (model='arx': whole-record suppression of the classes that fail the "
        "target, ARX's optimal node)",
        f"ARX's {ARX_NAMES[s.objective]} of a file with suppressed values: each counts as ARX counts a suppressed "
        "record's value",
    ]
    if s.arx_metric == "discernibility":
        notes.append(
            "ARX's discernibility has no lower bound under cell suppression (suppressing a value can split a "
            "class): every candidate is evaluated"
        )
    return notes


class LatticeOrder:
    """The nodes of the lattice one at a time in increasing (bound, sum of levels, levels),
    without building the lattice: a best-first walk of a spanning tree of it from the bottom.

    Each key's levels are taken in increasing per-level loss (ties: the lower level; the level
    order itself whenever a key's loss grows with its level, as it does for nested hierarchies),
    so that a step up the tree never lowers the bound and the sum of these ranks grows by one:
    the order is exact. A node's children raise one key's rank, a key at or before its first
    raised key, so that each node has one parent (no set of visited nodes is kept) and the heap
    holds only the frontier. ``generated`` counts the nodes made so far."""

    def __init__(self, s: _Search):
        self.s = s
        self.rank_levels = [_by_loss(s.lam[k]) for k in s.keys]
        self.heap: list = []
        self.generated = 0
        self._push((0,) * len(s.keys))

    def _push(self, ranks: tuple) -> None:
        levels = tuple(order[r] for order, r in zip(self.rank_levels, ranks))
        heapq.heappush(self.heap, (self.s.bound(levels), sum(ranks), ranks, levels))
        self.generated += 1

    def __iter__(self):
        return self

    def peek(self) -> tuple | None:
        """The next node (its levels) without taking it, or None at the end."""
        return self.heap[0][3] if self.heap else None

    def __next__(self) -> tuple:
        if not self.heap:
            raise StopIteration
        _, _, ranks, levels = heapq.heappop(self.heap)
        first = next((j for j, r in enumerate(ranks) if r), len(ranks) - 1)
        for j in range(first + 1):
            if ranks[j] + 1 < len(self.rank_levels[j]):
                self._push((*ranks[:j], ranks[j] + 1, *ranks[j + 1 :]))
        return levels


def _by_loss(lam: list[float]) -> list[int]:
    """A key's levels in increasing loss (ties: the lower level)."""
    return sorted(range(len(lam)), key=lambda lv: (lam[lv], lv))


def _next_best(s: _Search, rest, budget: int, deadline: float | None, evaluate=None) -> list:
    """After the proof: the first pruned nodes in bound order, evaluated until RUNNERS_UP of them
    meet the target (at most 4 RUNNERS_UP tried, and within the limits left), to show what the
    next-best candidates cost."""
    out: list = []
    for node in itertools.islice(rest, max(0, min(4 * RUNNERS_UP, budget))):
        if deadline is not None and time.perf_counter() > deadline:
            break
        cand = (evaluate or s.evaluate)(node)
        cand.table = None
        if cand.within_limit:
            out.append(cand)
        if sum(c.meets for c in out) >= RUNNERS_UP:
            break
    return out


def _lattice_search(s: _Search, limit_t, limit_n, progress, t0, prune: bool = True) -> Outcome:
    """sdckit's search of the lattice (see :func:`search`). With cell suppression for k alone
    the candidates are evaluated on codes (:mod:`._cells`) and the winner is then built with the
    public methods and checked against the target (:func:`_built_winner`); the outcome carries
    ``lower_bound``, the least loss a node could have: the best loss when proven, else the
    smallest bound of the nodes not checked (when below the best loss)."""
    from ._cells import cell_candidates

    deadline = None if limit_t is None else t0 + limit_t
    cells = cell_candidates(s)
    evaluate = cells.evaluate if cells is not None else s.evaluate
    out, order = _walk(s, evaluate, limit_t, limit_n, progress, deadline, prune)
    pending = order.peek()
    low = s.bound(pending) if pending is not None and not out.optimal else None
    if cells is not None:
        out = _built_winner(s, out)
    if out.best is not None:
        low = out.best.loss if low is None else min(low, out.best.loss)
    out.extra["lower_bound"] = low
    return out


def _built_winner(s: _Search, out: Outcome) -> Outcome:
    """The winner evaluated on codes, built with the public methods (its recipe's steps) and
    measured afresh; a file that misses the target is never the answer: the next candidate that
    meets the target is built instead. The built candidate's figures are the file's."""
    ranked = sorted((c for c in out.evaluated if c.meets), key=lambda c: (c.loss, sum(c.levels), c.levels))
    for cand in ranked:
        built = s.evaluate(cand.levels)
        if built.meets and built.within_limit:
            evaluated = [built if c is cand else c for c in out.evaluated]
            return dataclasses.replace(out, best=built, evaluated=evaluated)
        node = levels_text(cand.levels)  # numbers, in the order of the keys
        out.extra.setdefault("notes", []).append(
            f"the candidate at levels {node} (in the order of the keys) missed the target once built with the "
            "public methods and was left out"
        )
        out.evaluated = [c for c in out.evaluated if c is not cand]
    return dataclasses.replace(out, best=None, optimal=False if out.best is not None else out.optimal)


def _walk(s: _Search, evaluate, limit_t, limit_n, progress, deadline, prune: bool):
    """The best-first walk of the lattice with the bound; returns the outcome and the order
    (at the first node not checked)."""
    n_nodes = s.n_nodes
    order = LatticeOrder(s)
    best, evaluated = None, []
    safe_nodes: list[tuple] = []
    n_tagged, stopped, checked = 0, None, 0
    with progress_bar(progress, n_nodes, "search", unit="candidates") as bar:
        while (node := order.peek()) is not None:
            if prune and best is not None and s.bound(node) >= best.loss:
                bar.update(n_nodes - checked)  # the pruned candidates: done
                budget = 4 * RUNNERS_UP if limit_n is None else limit_n - checked
                evaluated += _next_best(s, order, budget, deadline, evaluate)
                return Outcome(best, evaluated, n_nodes, checked, n_nodes - checked, n_tagged, True), order
            if limit_n is not None and checked >= limit_n:
                stopped = f"the candidate limit ({limit_n})"
                break
            if deadline is not None and time.perf_counter() > deadline:
                stopped = f"the time limit ({limit_t:g} s)"
                break
            next(order)
            tagged = s.target.monotone and any(all(a >= b for a, b in zip(node, sn)) for sn in safe_nodes)
            n_tagged += tagged
            cand = evaluate(node, tagged=tagged)
            checked += 1
            bar.update(1)
            if cand.meets and cand.cells == 0 and s.target.monotone:
                safe_nodes.append(node)
            if cand.within_limit:
                cand_table, cand.table = cand.table, None
                evaluated.append(cand)
                if cand.meets and (best is None or cand.loss < best.loss):
                    best, best_table = cand, cand_table
                    best.table = best_table
    return Outcome(best, evaluated, n_nodes, checked, 0, n_tagged, stopped is None, stopped), order


def _result(s: _Search, out: Outcome, data, seconds: float) -> SearchResult:
    """The :class:`SearchResult` of an outcome: the winner's file and recipe, the front and the
    runners-up."""

    def recipe(steps):
        return {"sdckit_recipe": RECIPE_VERSION, "scenario": s.sc.to_dict(), "steps": list(steps)}

    households = s.sc.household is not None

    def entry(c: Candidate) -> dict:
        return {
            "levels": dict(zip(s.keys, c.levels)),
            "loss": c.loss,
            "rate": c.rate,
            **({"household_rate": c.household_rate} if households else {}),
            "meets": c.meets,
            "suppressed_cells": c.cells,
            "recipe": recipe(c.steps),
        }

    best = out.best
    feasible = sorted(
        (c for c in out.evaluated if c.meets and c is not best), key=lambda c: (c.loss, sum(c.levels), c.levels)
    )
    notes = list(out.extra.get("notes", ()))
    if best is None and out.stopped is None:
        notes.append(
            "no candidate meets the target within the suppression limit; raise the limit or add coarser levels"
        )
    common = dict(
        keys=tuple(s.keys),
        n=s.n,
        target=s.target.to_dict(),
        front=tuple(entry(c) for c in pareto_front(out.evaluated)),
        runners_up=tuple(entry(c) for c in feasible[:3]),
        n_candidates=out.n_nodes,
        n_checked=out.n_checked,
        n_pruned=out.n_pruned,
        n_tagged=out.n_tagged,
        optimal=out.optimal and best is not None,
        lower_bound=out.extra.get("lower_bound"),
        stopped=out.stopped,
        objective=s.objective,
        gs_factor=None if s.objective == "discernibility" else s.gs_factor,
        suppression=s.suppression,
        suppression_limit=s.limit,
        seconds=seconds,
        notes=tuple(notes),
        original=data,
        scenario=s.sc,
        assessor=assess_recipes,
        backend=s.table.backend,
        records=s.eng.records(),
    )
    if best is None:
        return SearchResult(**common)
    return SearchResult(
        levels=dict(zip(s.keys, best.levels)),
        suppressed_records=best.records,
        suppressed_cells=best.cells,
        loss=best.loss,
        loss_by_variable=dict(best.loss_by_variable),
        risk={**best.risk, "rate": best.rate, **({"household_rate": best.household_rate} if households else {})},
        recipe=recipe(best.steps),
        protected=s.eng.native_frame(best.table),
        **common,
    )


def pareto_front(cands: list) -> list:
    """The candidates not dominated in (loss, rate): no other has a loss and a rate both at
    most its own and one of them lower; in increasing loss (ties: fewer levels)."""
    ordered = sorted(cands, key=lambda c: (c.loss, c.rate, sum(c.levels), c.levels))
    front, best_rate = [], math.inf
    for c in ordered:
        if c.rate < best_rate:
            front.append(c)
            best_rate = c.rate
    return front


# ----------------------------------------------------------------------------------------------
# recipes and their assessment (without the SdcProblem, which offers the search itself)
# ----------------------------------------------------------------------------------------------
#: the recipe format written (the version SdcProblem.from_recipe reads)
RECIPE_VERSION = 1


def replay(data, scenario: Scenario, steps) -> tuple:
    """The table after the recipe ``steps`` (each ``{"method", "parameters"}``) and the
    variables they changed, each step applied as :meth:`sdckit.SdcProblem.apply` applies it."""
    from ._steps import run_step

    table, changed = data, set()
    for st in steps:
        res = run_step(table, scenario, st["method"], dict(st.get("parameters", {})))
        table = res.table
        changed |= {v for v, c in res.n_changed.items() if c}
    return table, sorted(changed)


def assess_recipes(data, scenario: Scenario, *, recipes, **options):
    """:func:`sdckit.assess` of ``recipes`` (``{"name", "steps"}``) as variants of ``data``."""
    from ..assessment import assess_variants

    variants = []
    for r in recipes:
        table, changed = replay(data, scenario, r["steps"])
        variants.append((r["name"], table, [st["method"] for st in r["steps"]], changed))
    return assess_variants(data, scenario, variants, **options)
