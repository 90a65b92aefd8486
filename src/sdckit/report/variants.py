"""The assessment of given variants: every measure that applies to a scenario's roles, for the
original file and for each variant (a table: the data after a protection step, a protected
file). :func:`sdckit.assess`, which also replays recipes, is in :mod:`sdckit.workflow.assess`."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._progress import measure_progress
from .._validation import check_bool, check_k_list, check_max_global_risk, raise_problems
from ..engines import in_memory_engine
from ..scenario import Scenario
from . import measures as M
from .result import AssessmentResult, VariantAssessment

__all__ = ["assess_variants"]


@dataclass(frozen=True)
class _Options:
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
    steps)`` or ``(name, table, steps, changed)`` (``steps`` the method names that made the
    table, ``changed`` the variables they changed, whose loss is shown besides the roles'), e.g.
    the data after each step of an :class:`SdcProblem`. Each table must have the records and
    columns of ``data``."""
    opts = _options(scenario, k, max_global_risk, include_records)
    eng = in_memory_engine(engine, "assess")
    with measure_progress(progress, "assess"):
        table = eng.table(data)
        scenario.validate(table, require_keys=bool(scenario.keys), allow_degenerate_keys=True, engine=eng)
        vs = []
        for name, other, *rest in variants:
            steps = tuple(rest[0]) if rest else ()
            v = _checked(table, eng.table(other, "protected"), str(name), "recipe", steps)
            vs.append(replace(v, changed=tuple(rest[1])) if len(rest) > 1 else v)
        return _assess(table, scenario, vs, opts, eng)


def _with_register(opts: _Options, scenario, sample, weight, fraction, eng) -> _Options:
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


def _options(scenario, k, max_global_risk, include_records) -> _Options:
    if not isinstance(scenario, Scenario):
        raise_problems([f"scenario: got {type(scenario).__name__}; expected an sdckit.Scenario"])
    if not scenario.keys and not scenario.numeric_keys:
        raise_problems(["scenario: no key variables; expected Scenario(keys=[...]) and/or numeric_keys=[...]"])
    xi = check_max_global_risk(max_global_risk)
    return _Options(tuple(check_k_list(k)), xi, check_bool(include_records, "include_records"))


# ----------------------------------------------------------------------------------------------
# variants
# ----------------------------------------------------------------------------------------------
def _protected_variant(table, protected, eng) -> Variant:
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
def _assess(table, scenario, variants: list[Variant], opts: _Options, eng) -> AssessmentResult:
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
    results = [_measure(table, Variant("original", "original", table), scenario, opts, cards, notes, eng)]
    for v in variants:
        results.append(_measure(table, v, scenario, opts, None, notes, eng))
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
    )


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


def _measure(original, v: Variant, sc, opts: _Options, cards, notes: list, eng) -> VariantAssessment:
    """Every measure of one variant that the roles allow (warnings become notes naming it)."""
    prefix = "" if v.kind == "original" else f"{v.name}: "
    parts: dict = {}
    with M.capture(notes, prefix):
        if sc.keys:
            parts["risk"] = M.categorical_risk(v.table, sc, opts.k, opts.max_global_risk)
            parts["suda"] = M.suda_of(v.table, sc)
            if sc.sensitive:
                parts["l_diversity"] = M.l_diversity_of(v.table, sc)
            if cards is None:
                cards = tuple(eng.encode(v.table, list(sc.keys), list(sc.missing) or None).cardinalities)
            parts["loglinear"] = M.loglinear_of(v.table, sc, cards)
            if opts.register is not None:
                parts["register"] = M.register_of(v.table, sc, opts.register)
        if v.kind != "original":
            parts["loss"] = M.information_loss_of(original, v.table, sc, v.changed)
            if sc.numeric_keys:
                local: list[str] = []
                parts["continuous"] = M.continuous_risk(original, v.table, sc, local)
                notes.extend(prefix + n for n in local if prefix + n not in notes)
    return VariantAssessment(v.name, v.kind, v.steps, **parts)


def _scenario_dict(sc: Scenario) -> dict:
    out = {}
    for name in ("keys", "numeric_keys", "weight", "household", "strata", "sensitive", "missing"):
        value = getattr(sc, name)
        if value not in (None, ()):
            out[name] = tuple(value) if isinstance(value, tuple) else value
    return out
