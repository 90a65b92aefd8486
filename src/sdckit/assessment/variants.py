"""The assessment of given variants: every measure that applies to a scenario's roles, for the
original file and for each variant (a table: the data after a protection step, a protected
file). :func:`sdckit.assess`, which also replays recipes, is in :mod:`sdckit.workflow.assess`."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import SdcError
from .._progress import measure_progress
from .._validation import check_bool, check_k_list, check_max_global_risk, raise_problems
from ..engines import in_memory_engine
from ..results.assessment import AssessmentResult, VariantAssessment
from ..scenario import Scenario
from . import measures as M
from . import table as measures_table
from . import tradeoff as T
from .synthetic import synthetic_parts, synthetic_scenario
from .table import applies

__all__ = [
    "Options",
    "Variant",
    "assess_variant_tables",
    "assess_variants",
    "check_options",
    "protected_variant",
    "synthetic_variant",
    "with_register",
]


@dataclass(frozen=True)
class Options:
    k: tuple[int, ...]
    max_global_risk: float
    include_records: bool
    #: (sample, sample_weight, sampling_fraction) when the file is a register
    register: tuple | None = None


@dataclass(frozen=True)
class Variant:
    """A table to assess against the original: its name, kind, the methods that made it and
    the variables they changed."""

    name: str
    kind: str
    table: Any
    steps: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    #: the published PRAM matrices of its PRAM steps (see workflow.assess._pram_of), or None
    pram: dict | None = None
    #: each step as a readable line: the method and its parameters
    step_texts: tuple[str, ...] = ()
    #: a synthetic variant's control file (original records not used to make it), or None
    control: Any = None


def assess_variants(
    data,
    scenario: Scenario,
    variants,
    *,
    k=(2, 3, 5),
    max_global_risk: float = 0.01,
    include_records: bool = False,
    progress=None,
    engine=None,
) -> AssessmentResult:
    """:func:`assess` with the variants given as tables: ``(name, table)``, ``(name, table,
    steps)``, ``(name, table, steps, changed)`` or ``(name, table, steps, changed, pram)``
    (``steps`` the method names that made the table, ``changed`` the variables they changed,
    whose loss is shown besides the roles', ``pram`` the published PRAM matrices
    ``{"matrices": {variable: {from: {to: p}}}, "diagonal": {variable: {category: p}}}``), e.g.
    the data after each step of an :class:`SdcProblem`. Each table must have the records and
    columns of ``data``."""
    opts = check_options(scenario, k, max_global_risk, include_records)
    eng = in_memory_engine(engine, "assess")
    with measure_progress(progress, "assess"):
        table = eng.table(data)
        scenario.validate(table, require_keys=bool(scenario.keys), allow_degenerate_keys=True, engine=eng)
        vs = []
        for name, other, *rest in variants:
            steps = tuple(rest[0]) if rest else ()
            v = _checked(table, eng.table(other, "protected"), str(name), "recipe", steps)
            if len(rest) > 1:
                v = replace(v, changed=tuple(rest[1]))
            vs.append(replace(v, pram=rest[2]) if len(rest) > 2 else v)
        return assess_variant_tables(table, scenario, vs, opts, eng)


def with_register(opts: Options, scenario, sample, weight, fraction, eng) -> Options:
    """The options with the register's reference sample, checked (None: not a register)."""
    if sample is None:
        if weight is not None or fraction is not None:
            raise_problems(
                ["register_sample: a weight or fraction was given without the sample; expected register_sample=..."]
            )
        return opts
    if not scenario.keys:
        raise_problems(["register_sample: the register measures need categorical keys; expected Scenario(keys=[...])"])
    return replace(opts, register=(eng.table(sample, "register_sample"), weight, fraction))


def check_options(scenario, k, max_global_risk, include_records) -> Options:
    if not isinstance(scenario, Scenario):
        raise_problems([f"scenario: got {type(scenario).__name__}; expected an sdckit.Scenario"])
    if not scenario.keys and not scenario.numeric_keys:
        raise_problems(["scenario: no key variables; expected Scenario(keys=[...]) and/or numeric_keys=[...]"])
    xi = check_max_global_risk(max_global_risk)
    return Options(tuple(check_k_list(k)), xi, check_bool(include_records, "include_records"))


# ----------------------------------------------------------------------------------------------
# variants
# ----------------------------------------------------------------------------------------------
def synthetic_variant(table, scenario, synthetic, control, i: int, eng, name: str | None = None) -> Variant:
    """A synthetic file as a variant: any number of records; the scenario's key variables (and
    numeric keys) must be among its columns."""
    if name is not None:
        pass
    elif isinstance(synthetic, (str, os.PathLike)):
        name = Path(os.fspath(synthetic)).name
    else:
        name = "synthetic file" if i == 0 else f"synthetic file {i + 1}"
    other = eng.table(synthetic, "synthetic")
    absent = [c for c in (*scenario.keys, *scenario.numeric_keys) if c not in other.columns]
    if absent:
        raise_problems(
            [f"synthetic: column(s) {', '.join(absent)} of the scenario's keys are missing in {name}; expected them"]
        )
    ctrl = None if control is None else eng.table(control, "control")
    return Variant(name, "synthetic", other, control=ctrl)


def protected_variant(table, protected, eng) -> Variant:
    name = Path(os.fspath(protected)).name if isinstance(protected, (str, os.PathLike)) else "protected file"
    return _checked(table, eng.table(protected, "protected"), name, "protected", ())


def _checked(table, other, name: str, kind: str, steps: tuple) -> Variant:
    """A variant whose table has the records and the columns of the original (else an error
    saying what differs)."""
    problems = []
    if other.n != table.n:
        problems.append(
            f"protected: {other.n:,} records and {table.n:,} in data; expected the same records in the same order"
        )
    absent = [c for c in table.columns if c not in other.columns]
    extra = [c for c in other.columns if c not in table.columns]
    if absent:
        problems.append(
            f"protected: column(s) {', '.join(absent)} of data are missing; expected the same columns as data"
        )
    if extra:
        problems.append(f"protected: column(s) {', '.join(extra)} are not in data; expected the same columns as data")
    if problems:
        raise_problems([f"{p} (variant {name!r})" if kind != "protected" else p for p in problems])
    return Variant(name, kind, other, steps)


# ----------------------------------------------------------------------------------------------
# measures
# ----------------------------------------------------------------------------------------------
def assess_variant_tables(table, scenario, variants: list[Variant], opts: Options, eng) -> AssessmentResult:
    from .combinations import key_subsets

    notes: list[str] = []
    key_info, cards = _key_info(table, scenario, eng)
    degenerate = [k for k, i in key_info.items() if i["n_categories"] < 2]
    if degenerate:
        notes.append(
            f"key variable(s) {', '.join(degenerate)} have fewer than two categories: they distinguish no record"
        )
    combos = None
    if scenario.keys:
        with M.capture(notes):
            combos = key_subsets(table, scenario, include_records=opts.include_records, engine=eng)
        if combos.skipped_sizes:
            sizes = ", ".join(map(str, combos.skipped_sizes))
            notes.append(f"key combinations of size {sizes} left out: more than {combos.n_subsets:,} subsets")
    variants = [
        v if v.kind in ("recipe", "synthetic") else replace(v, changed=_changed_columns(table, v.table, eng))
        for v in variants
    ]
    masked = [v for v in variants if v.kind != "synthetic"]
    loss_vars = T.loss_variables(scenario, [v.changed for v in masked])
    loss = (loss_vars, T.loss_scales(table, scenario, loss_vars, eng)) if masked else None
    results = [_measure(table, Variant("original", "original", table), scenario, opts, cards, notes, eng, None)]
    for v in variants:
        results.append(_measure(table, v, scenario, opts, None, notes, eng, loss))
    results = _with_deciding_risk(results, opts.max_global_risk)
    if scenario.keys and scenario.strata:
        notes.append("SUDA and the log-linear model ignore the strata (every other measure is within strata)")
    return AssessmentResult(
        n=table.n,
        n_columns=len(table.columns),
        scenario=_scenario_dict(scenario),
        k=opts.k,
        max_global_risk=opts.max_global_risk,
        include_records=opts.include_records,
        key_info=key_info,
        variants=tuple(results),
        combinations=combos,
        notes=tuple(notes),
        loss_scales=loss[1] if loss else {},
    )


def _changed_columns(table, other, eng) -> tuple[str, ...]:
    """The columns of a protected file whose values differ from the original's (a value
    suppressed, recoded or perturbed)."""
    out = []
    for c in table.columns:
        (a, b), _ = eng.encode_joint([table, other], c)
        if not np.array_equal(np.asarray(a), np.asarray(b)):
            out.append(c)
    return tuple(out)


def _with_deciding_risk(results: list[VariantAssessment], xi: float) -> list[VariantAssessment]:
    """Each variant with ``risk``: the measure the original's verdict is decided on (the rule it
    fails furthest, or else the one closest to its target), its value, target and whether the
    variant meets it, and every rule with its value (``rules``)."""
    rules = [T.risk_rules(v.categorical_risk, v.continuous, xi) for v in results]
    if not rules[0] and any(r and r[0]["measure"] == T.INTERVAL_RULE for r in rules):
        rules[0] = T.risk_rules(None, {"share_interval_risk": 1.0}, xi)  # the original: every record
    name = T.deciding_rule(rules[0]) or next((T.deciding_rule(r) for r in rules if r), None)
    out = []
    for v, rs in zip(results, rules):
        chosen = next((r for r in rs if r["measure"] == name), None)
        risk = None if chosen is None else {**chosen, "rules": rs}
        out.append(replace(v, risk=risk))
    return out


def _key_info(table, scenario, eng) -> tuple[dict, tuple]:
    """Per key: categories observed and records missing; and the number of categories of each
    key (the log-linear table's shape)."""
    if not scenario.keys:
        return {}, ()
    enc = eng.encode(table, list(scenario.keys), list(scenario.missing) or None)
    miss = enc.missing
    info = {
        name: {"n_categories": enc.n_observed(j), "n_missing": int(miss[:, j].sum())}
        for j, name in enumerate(enc.names)
    }
    return info, tuple(enc.cardinalities)


def _measure(original, v: Variant, sc, opts: Options, cards, notes: list, eng, loss) -> VariantAssessment:
    """Every measure of one variant that the roles allow (warnings become notes naming it);
    ``loss`` = (the variables of the loss, their scales) for a variant."""
    prefix = "" if v.kind == "original" else f"{v.name}: "
    parts: dict = {}
    if v.kind == "synthetic":
        sc = synthetic_scenario(sc, v.table.columns, notes, prefix)
        cards = None
    pram = _usable_pram(v, sc, notes, prefix)
    with M.capture(notes, prefix):
        if applies("individual_risk", sc):
            parts["categorical_risk"] = M.categorical_risk(v.table, sc, opts.k, opts.max_global_risk, pram=pram)
            parts["suda"] = M.suda_of(v.table, sc)
            if applies("l_diversity", sc):
                parts["l_diversity"] = M.l_diversity_of(v.table, sc)
            if cards is None:
                cards = tuple(eng.encode(v.table, list(sc.keys), list(sc.missing) or None).cardinalities)
            parts["loglinear"] = M.loglinear_of(v.table, sc, cards, pram=pram)
            if opts.register is not None:
                parts["register"] = M.register_of(v.table, sc, opts.register)
        if v.kind == "synthetic":
            parts.update(synthetic_parts(original, v.table, v.control, sc, notes, prefix))
        elif v.kind != "original":
            parts.update(_tradeoff(original, v, sc, loss, notes, prefix, eng))
            if applies("interval_disclosure", sc):
                local: list[str] = []
                parts["continuous"] = M.continuous_risk(original, v.table, sc, local)
                notes.extend(prefix + n for n in local if prefix + n not in notes)
        parts["measures"] = _declared_measures(original, v, sc, notes, prefix)
    _gap_notes(parts, notes, prefix)
    return VariantAssessment(v.name, v.kind, v.steps, step_texts=v.step_texts, **parts)


def _declared_measures(original, v: Variant, sc, notes: list, prefix: str) -> dict:
    """The headlines of the table's measures that have no section of their own (``part`` None,
    ``assess`` true, no option), each called as declared with the scenario: a measure of a
    variant (``variants_only``) for a protection variant only; one that fails is left out with
    a note saying why."""
    out: dict = {}
    for e in measures_table.MEASURES:
        if e.part is not None or not e.assess or e.option is not None or not applies(e.name, sc):
            continue
        if e.variants_only and v.kind in ("original", "synthetic"):
            continue
        try:
            out[e.name] = M.declared_headlines(e, original, v.table, sc)
        except SdcError as exc:
            notes.append(f"{prefix}{e.name.replace('_', ' ')} left out: {exc}")
    return out


def _usable_pram(v: Variant, sc, notes: list, prefix: str) -> dict | None:
    """The keep probabilities of the PRAMed keys (for the PRAM-adjusted risk; a PRAMed variable
    that is not a key changes no key's risk), with notes on what cannot be adjusted."""
    if v.pram is None:
        if v.kind == "protected":
            notes.append(
                f"{prefix}if this file was protected with PRAM, its risk is measured as if the released values "
                "were true (the matrices are not known from a file)"
            )
        return None
    if v.pram.get("stratified"):
        notes.append(
            f"{prefix}{', '.join(v.pram['stratified'])} PRAMed within strata: each record's risk is adjusted with "
            "the matrix of its stratum"
        )
    keys = {x: d for x, d in (v.pram.get("diagonal") or {}).items() if x in sc.keys}
    if keys:
        notes.append(
            f"{prefix}risk PRAM-adjusted for {', '.join(keys)}: a released key is the true one only "
            "with the probability that PRAM kept it; the k-anonymity and SUDA counts are of the released values"
        )
    return keys or None


def _tradeoff(original, v: Variant, sc, loss, notes: list, prefix: str, eng) -> dict:
    """The loss of every change, the estimates, the category tables of recoded variables and
    the PRAM matrices of one variant."""
    variables, scales = loss
    lo = T.loss_of(original, v.table, variables, scales, sc, v.pram)
    notes.extend(prefix + n for n in lo.pop("notes") if prefix + n not in notes)
    recoded = [x for x, c in lo["change_by_variable"].items() if "recoded" in c["kind"]]
    out = {**lo, "estimates": T.estimates_of(original, v.table, sc)}
    out["recodes"] = T.recode_tables(original, v.table, recoded, list(sc.missing) or None, eng)
    out["pram"] = T.pram_tables(v.pram)
    if applies("information_loss", sc):
        out["il1s"] = M.il1s_of(original, v.table, sc)
    return out


def _gap_notes(parts: dict, notes: list, prefix: str) -> None:
    """Every measure that was skipped says why (the tables show "skipped" and point here)."""
    for key, label in (("loglinear", "log-linear risk"), ("register", "register risk"), ("estimates", "estimates")):
        block = parts.get(key)
        if isinstance(block, dict) and "skipped" in block:
            text = f"{prefix}{label} skipped: {block['skipped']}"
            if text not in notes:
                notes.append(text)


def _scenario_dict(sc: Scenario) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in sc.to_dict().items()}
