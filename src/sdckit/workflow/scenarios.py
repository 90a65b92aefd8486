"""The assessment of one release against several disclosure scenarios (intruders with different
key sets, with or without households): every scenario's :class:`AssessmentResult` and the
verdict of the worst of them, per variant."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import SdcError
from .._validation import check_choice, check_new_file
from ..results._base import Summary, fmt_share, freeze
from ..results.assessment import AssessmentResult, plain, report_path

__all__ = ["ScenariosAssessment", "worst_verdicts"]


@dataclass(frozen=True, eq=False)
class ScenariosAssessment:
    """One release judged against several disclosure scenarios: the assessment under each and,
    per variant (the original first), the verdict of the worst scenario.

    A variant is safe when it meets every release rule (the individual rate and, with
    households, the household rate against the target) under every scenario. Its worst
    scenario is the one whose rule lies furthest above its target (value / target); if none
    fails, the one closest to its target.

    Attributes
    ----------
    names : tuple of str
        The scenarios' names, in the order given.
    assessments : tuple of AssessmentResult
        The assessment under each scenario (same order).
    verdicts : tuple of mapping
        Per variant: ``variant``, ``safe`` (True, False, or None without a rule with a target),
        ``scenario`` (the worst one), ``measure``, ``value``, ``target``, and ``by_scenario``
        (per scenario: ``meets_target`` and the deciding ``measure``, ``value``, ``target``).
    release_type : str or None
        "public-use" or "scientific-use", when the scenarios give it.
    direct_identifiers : tuple of str
        The columns the release removes (every scenario's).
    """

    names: tuple = ()
    assessments: tuple = ()
    verdicts: tuple = ()
    release_type: str | None = None
    direct_identifiers: tuple = ()
    notes: tuple = field(default_factory=tuple)

    def __post_init__(self):
        object.__setattr__(self, "verdicts", freeze(tuple(self.verdicts)))

    # -- headline ----------------------------------------------------------------------------
    @property
    def original(self) -> dict:
        """The original file's verdict over every scenario."""
        return self.verdicts[0]

    @property
    def safe(self) -> bool | None:
        """Whether the original meets the release rules under every scenario."""
        return self.original["safe"]

    @property
    def worst(self) -> str | None:
        """The scenario the original's verdict is decided on."""
        return self.original["scenario"]

    @property
    def verdict(self) -> str:
        """The original's verdict in one sentence, naming the worst scenario."""
        return verdict_text(self.original, len(self.names))

    def assessment(self, name: str) -> AssessmentResult:
        """The assessment under the scenario called ``name``."""
        for n, a in zip(self.names, self.assessments):
            if n == name:
                return a
        raise SdcError(f"name: no scenario {name!r}; expected one of {', '.join(map(repr, self.names))}")

    def __repr__(self) -> str:
        return f"ScenariosAssessment(scenarios={len(self.names)}, safe={self.safe}, worst={self.worst!r})"

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Aggregates only, JSON-serialisable: each scenario's assessment and the verdicts."""
        return {
            "measure": "assessment_by_scenario",
            "release_type": self.release_type,
            "direct_identifiers": list(self.direct_identifiers),
            "safe": self.safe,
            "worst": self.worst,
            "verdicts": plain(self.verdicts),
            "scenarios": [{"name": n, "assessment": a.to_dict()} for n, a in zip(self.names, self.assessments)],
            "notes": list(self.notes),
        }

    def summary(self) -> Summary:
        rows: list[tuple] = [("scenarios", ", ".join(self.names))]
        if self.release_type:
            rows.append(("release type", self.release_type))
        if self.direct_identifiers:
            rows.append(("direct identifiers (removed)", ", ".join(self.direct_identifiers)))
        columns = ["variant", "verdict", "worst scenario", "measure", "value", "target", *self.names]
        table = [
            (
                v["variant"],
                _safe_text(v["safe"]),
                v["scenario"],
                v["measure"],
                _share(v["value"]),
                _share(v["target"]),
                *(_safe_text(v["by_scenario"][n]["meets_target"]) for n in self.names),
            )
            for v in self.verdicts
        ]
        sections = [
            ("Release", rows),
            ("Verdict under every scenario (the worst decides)", {"columns": columns, "rows": table}),
        ]
        return Summary(
            "Disclosure risk under several scenarios", tuple(sections), tuple(self.notes), headline=self.verdict
        )

    def to_html(self, path=None, *, audience: str = "internal", overwrite: bool = False) -> str:
        """One self-contained page: the verdicts, then each scenario's report. With ``path``
        (an ``.html`` file name) it is also written there, atomically (an existing file only
        with ``overwrite=True``)."""
        audience = check_choice(audience, "audience", ("internal", "external"))
        target = report_path(path) if path is not None else None
        if target is not None:
            check_new_file(target, overwrite)
        text = self._page(audience)
        if target is not None:
            from ..io import atomic_write

            try:
                atomic_write(target, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), overwrite=overwrite)
            except FileExistsError:
                raise SdcError(
                    f"path: {target} already exists; expected a new file, or overwrite=True to replace it"
                ) from None
        return text

    def _page(self, audience: str) -> str:
        e = html.escape
        parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">']
        parts.append("<title>Disclosure risk under several scenarios</title></head><body>")
        if audience == "internal":
            parts.append(self.summary().to_html())
        for name, a in zip(self.names, self.assessments):
            parts.append(f"<h2>Scenario: {e(name)}</h2>")
            parts.append(a._rendered(document=False, audience=audience))
            if audience == "external":
                break  # what was done to the file is the same under every scenario
        parts.append("</body></html>")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.summary().to_html()


def _share(x) -> str | None:
    return None if x is None else fmt_share(x)


def _safe_text(safe) -> str:
    return "no verdict" if safe is None else "safe" if safe else "unsafe"


def verdict_text(v: dict, n_scenarios: int) -> str:
    """``unsafe under 'B' (household rate 2.10 % above the target 1.00 %)`` and the like."""
    if v["safe"] is None:
        return f"no release rule with a target applies under the {n_scenarios} scenarios"
    where = f"scenario {v['scenario']!r}"
    figures = f"{v['measure']} {fmt_share(v['value'])}, target {fmt_share(v['target'])}"
    if v["safe"]:
        return f"safe under all {n_scenarios} scenarios; closest to its target under {where} ({figures})"
    return f"unsafe: fails under {where} ({figures}), the worst of {n_scenarios} scenarios"


def worst_verdicts(names, assessments) -> tuple[dict, ...]:
    """Per variant, the verdict over every scenario: unsafe if any scenario's rule fails; the
    worst scenario is the one with the largest value / target (failing rules first)."""
    out = []
    for i, v in enumerate(assessments[0].variants):
        candidates, by_scenario = [], {}
        for name, a in zip(names, assessments):
            risk = a.variants[i].risk
            rules = [r for r in (risk or {}).get("rules", ()) if r["target"] and r["value"] is not None]
            worst = _worst_rule(rules)
            by_scenario[name] = {
                "meets_target": None if worst is None else all(r["meets_target"] for r in rules),
                **({} if worst is None else {k: worst[k] for k in ("measure", "value", "target")}),
            }
            if worst is not None:
                candidates.append((name, worst, by_scenario[name]["meets_target"]))
        out.append(_verdict(v.name, candidates, by_scenario))
    return tuple(out)


def _worst_rule(rules: list) -> dict | None:
    """Of the rules a file fails, the one furthest above its target; else the closest to it."""
    if not rules:
        return None
    failing = [r for r in rules if not r["meets_target"]]
    return max(failing or rules, key=lambda r: r["value"] / r["target"])


def _verdict(variant: str, candidates: list, by_scenario: dict) -> dict:
    if not candidates:
        empty = {"measure": None, "value": None, "target": None}
        return {"variant": variant, "safe": None, "scenario": None, **empty, "by_scenario": by_scenario}
    failing = [c for c in candidates if not c[2]]
    name, rule, _ = max(failing or candidates, key=lambda c: _ratio(c[1]))
    return {
        "variant": variant,
        "safe": not failing,
        "scenario": name,
        "measure": rule["measure"],
        "value": rule["value"],
        "target": rule["target"],
        "by_scenario": by_scenario,
    }


def _ratio(rule: dict) -> float:
    r = rule["value"] / rule["target"]
    return r if math.isfinite(r) else math.inf
