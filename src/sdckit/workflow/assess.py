"""One-command assessment: every measure that applies to a scenario's roles, for the original
file and for each protection variant (replayed recipes, a protected file)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from .._errors import SdcError
from .._progress import measure_progress, step
from .._roles import names
from .._validation import missing_columns_message, raise_problems
from ..assessment.variants import (
    Options,
    Variant,
    assess_variant_tables,
    check_options,
    protected_variant,
    synthetic_variant,
    with_register,
)
from ..engines import in_memory_engine
from ..results.assessment import AssessmentResult
from ..scenario import Scenario, check_scenarios, linked_keys
from .problem import SdcProblem, _published_pram, read_recipe
from .scenarios import ScenariosAssessment, worst_verdicts

__all__ = ["assess"]


def assess(
    data,
    scenario,
    *,
    protected=None,
    recipes=None,
    synthetic=None,
    control=None,
    k=(2, 3, 5),
    max_global_risk: float = 0.01,
    include_records: bool = False,
    progress=None,
    engine=None,
    register_sample=None,
    register_sample_weight: str | None = None,
    register_sampling_fraction: float | None = None,
) -> AssessmentResult | ScenariosAssessment:
    """Run every measure that applies to the scenario's roles, on the original file and on each
    protection variant, and collect the aggregates for one report; with several scenarios, the
    same under each and the verdict of the worst.

    For categorical keys: frequencies and k-anonymity (records with f_k < k), individual risk
    r_i = E(1/F_k | f_k) and the global risk xi = sum r_i / n with the threshold r* for
    ``max_global_risk`` (mu-ARGUS rule; Benedetti & Franconi 1998), household risk
    1 - prod(1 - r_i) with households, SUDA (Elliot et al. 2005), l-diversity of the sensitive
    variables (Machanavajjhala et al. 2007), the log-linear tau_1, tau_2 (Skinner & Holmes
    1998) when design weights give the sampling fractions and the key table is small enough,
    and the records unique on each subset of 1 to 3 key variables. For each variant also
    Mlodak's information loss lambda_j per variable (and IL1s of continuous keys) against the
    original and, with continuous keys, interval disclosure (Mateo-Sanz et al. 2004) and
    Seri's confidentiality plot as a 2-D histogram.

    Parameters
    ----------
    data : table or file path
        The original microdata.
    scenario : Scenario or sequence of Scenario
        The roles: ``keys`` and/or ``numeric_keys``, ``weight``, ``household``, ``strata``,
        ``sensitive``, ``missing``. Several scenarios (a list; intruders with different keys,
        with or without households) judge the same release: recipes are replayed once, under
        the first scenario, and every variant is measured under each; the verdict is that of
        the worst scenario. The scenarios' ``direct_identifiers`` are removed from the data and
        the protected file before anything is measured (a protected file that still holds one
        gets a note).
    protected : table or file path, optional
        A protected version of ``data`` (same records in the same order, same columns), compared
        as one variant.
    recipes : recipe or list of recipes, optional
        Protection recipes (dicts or YAML/JSON files written by :meth:`SdcProblem.to_recipe`),
        each replayed on ``data`` under ``scenario`` and compared as one variant. A dict's
        ``"name"`` names its variant (default: the file name, or "recipe i").
    synthetic : table or file path, a list of them, or a mapping name -> table, optional
        Synthetic files made from ``data`` (any number of records, the scenario's keys among
        their columns), each compared as one variant: the risk rules on its own keys, the risk
        of a synthetic file (:func:`sdckit.synthetic_risk`: closeness and attacks), its utility
        (:func:`sdckit.synthetic_utility`) and the published estimates. With a synthetic
        variant the risk-utility map places every variant by how far its estimates move (the
        loss of every change pairs records, which a synthetic file has not).
    control : table or file path, optional
        Original records that were not used to make the synthetic files: the baseline of the
        synthetic files' closeness and attacks (without it an attack's success is not judged).
    k : int or sequence of int, default (2, 3, 5)
        The k of the k-anonymity table.
    max_global_risk : float in (0, 1), default 0.01
        The target re-identification rate of the threshold.
    include_records : bool, default False
        Also show the key values of the cells behind the riskiest key combinations
        (record-level: the report is then as confidential as the data).
    progress : bool, optional
        Name each measure as it starts on stderr (None: on a terminal only).
    engine : optional
        The computation engine for the record-level work.
    register_sample : table or file path, optional
        Declares ``data`` a register of a subpopulation (all its members; membership itself
        sensitive) and gives an independent sample of the whole population with the same keys:
        the report then has a register section with tau1*, tau2*, tau1, tau2 and theta-hat
        (:func:`sdckit.register_risk`, approach B; Shlomo & Skinner 2022) for the original and
        each variant.
    register_sample_weight : str, optional
        The sample's design weight column.
    register_sampling_fraction : float in (0, 1], optional
        The sample's known sampling fraction (instead of weights).

    Returns
    -------
    AssessmentResult or ScenariosAssessment
        ``summary()``, ``to_dict()`` (aggregates, JSON), ``to_html(path)`` (the report) and
        the same report in Jupyter. With default options no value of a non-key variable and no
        record identifier is in it. A list of scenarios gives a :class:`ScenariosAssessment`:
        the assessment under each (``assessments``, ``assessment(name)``) and per variant the
        verdict of the worst scenario (``verdicts``, ``safe``, ``worst``).

    Examples
    --------
    >>> sc = sdckit.Scenario(keys=["region", "sex", "age"], weight="w", household="hid")  # doctest: +SKIP
    >>> res = sdckit.assess(df, sc, recipes=["k3.yaml", "recode_k3.yaml"])                # doctest: +SKIP
    >>> res.to_html("report.html")                                                        # doctest: +SKIP
    """
    several = not isinstance(scenario, Scenario) and isinstance(scenario, (list, tuple))
    scenarios = check_scenarios(scenario) if several else (scenario,)
    options = [check_options(sc, k, max_global_risk, include_records) for sc in scenarios]
    eng = in_memory_engine(engine, "assess")
    register = (register_sample, register_sample_weight, register_sampling_fraction)
    with measure_progress(progress, "assess"):
        step("reading and checking the data")
        table = eng.table(data)
        options = [with_register(o, sc, *register, eng) for o, sc in zip(options, scenarios)]
        for sc in scenarios:
            sc.validate(table, require_keys=bool(sc.keys), allow_degenerate_keys=True, engine=eng)
        ids = _direct_identifiers(table, scenarios)
        table = _without(table, ids, eng)
        variants = _recipe_variants(table, scenarios[0], recipes, options[0], eng)
        notes: list[str] = []
        if protected is not None:
            variants.append(_released_variant(table, protected, ids, notes, eng))
        files = _synthetic_files(synthetic)
        if control is not None and not files:
            raise SdcError("control: given without a synthetic file; expected synthetic= as well")
        variants += [
            synthetic_variant(table, scenarios[0], f, control, i, eng, name) for i, (name, f) in enumerate(files)
        ]
        results = [
            _reported(assess_variant_tables(table, sc, list(variants), o, eng), sc) for sc, o in zip(scenarios, options)
        ]
    if not several:
        return _with_notes(results[0], notes)
    return _by_scenario(scenarios, results, ids, notes)


def _synthetic_files(synthetic) -> list[tuple[str | None, object]]:
    """``(name or None, table or path)`` of each synthetic file: one, a list, or a mapping
    name -> file."""
    if synthetic is None:
        return []
    if isinstance(synthetic, dict):
        return [(str(k), v) for k, v in synthetic.items()]
    items = synthetic if isinstance(synthetic, list | tuple) else [synthetic]
    return [(None, f) for f in items]


def _direct_identifiers(table, scenarios) -> tuple[str, ...]:
    """Every scenario's direct identifiers, checked against the data."""
    ids = tuple(dict.fromkeys(c for sc in scenarios for c in sc.direct_identifiers))
    absent = [c for c in ids if c not in table.columns]
    if absent:
        raise_problems([missing_columns_message("direct_identifiers", absent, table.columns)], missing_column=True)
    return ids


def _without(table, names, eng):
    """The table without the columns ``names`` (the direct identifiers a release removes)."""
    names = [c for c in names if c in table.columns]
    if not names:
        return table
    return eng.table(Scenario(direct_identifiers=names).drop_direct_identifiers(eng.native_frame(table)))


def _released_variant(table, protected, ids, notes: list, eng) -> Variant:
    """The protected file as a variant, without the direct identifiers (one it still holds is
    noted)."""
    if not ids:
        return protected_variant(table, protected, eng)
    other = eng.table(protected, "protected")
    kept = [c for c in ids if c in other.columns]
    if kept:
        notes.append(
            f"the protected file still holds the direct identifier(s) {', '.join(kept)}: a release removes them "
            "(they were left out of every measure)"
        )
    is_path = isinstance(protected, (str, os.PathLike))
    name = Path(os.fspath(protected)).name if is_path else "protected file"
    return replace(protected_variant(table, _without(other, kept, eng), eng), name=name)


#: the scenario entries the report's "Data and scenario" table labels (report/html.py): the
#: roles the roles table marks ``reported``
_REPORTED_ROLES = names(reported=True)


def _reported(result: AssessmentResult, sc: Scenario) -> AssessmentResult:
    """The assessment with the roles its report shows, and the scenario's name, release type,
    direct identifiers and linked variables as a note (nothing changes without them)."""
    extra = [k for k in result.scenario if k not in _REPORTED_ROLES]
    if not extra:
        return result
    parts = []
    if sc.name:
        parts.append(f"scenario {sc.name!r}")
    if sc.release_type:
        parts.append(f"a {sc.release_type} release")
    if sc.direct_identifiers:
        parts.append(f"direct identifiers removed: {', '.join(sc.direct_identifiers)}")
    if sc.linked:
        parts.append(
            "linked variables (not keys): "
            + ", ".join(f"{g} to {' and '.join(linked_keys(k))}" for g, k in sc.linked.items())
        )
    roles = {k: v for k, v in result.scenario.items() if k in _REPORTED_ROLES}
    return replace(result, scenario=roles, notes=("; ".join(parts), *result.notes))


def _with_notes(result: AssessmentResult, notes: list) -> AssessmentResult:
    return replace(result, notes=(*notes, *result.notes)) if notes else result


def _by_scenario(scenarios, results, ids, notes) -> ScenariosAssessment:
    names = tuple(str(sc.name) for sc in scenarios)
    types = {sc.release_type for sc in scenarios if sc.release_type}
    if len(types) > 1:
        notes.append(f"the scenarios give different release types ({', '.join(sorted(types))})")
    return ScenariosAssessment(
        names=names,
        assessments=tuple(results),
        verdicts=worst_verdicts(names, results),
        release_type=types.pop() if len(types) == 1 else None,
        direct_identifiers=ids,
        notes=tuple(notes),
    )


def _recipe_label(recipe, rec: dict | None, i: int) -> str:
    """The variant's name: the recipe's ``name`` entry, else its file name, else "recipe i"."""
    for r in (recipe, rec):
        if isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"].strip():
            return r["name"].strip()
    if isinstance(recipe, (str, os.PathLike)):
        return Path(os.fspath(recipe)).name
    return f"recipe {i + 1}"


def _recipe_variants(table, scenario, recipes, opts: Options, eng) -> list[Variant]:
    """Replay each recipe on the original (one workflow, undone between recipes, so that the
    original is measured once); a recipe that fails is an error naming it and its step."""
    if recipes is None:
        return []
    items = [recipes] if isinstance(recipes, (dict, str, os.PathLike)) else list(recipes)
    if not items:
        return []
    problem = _Replay(table, scenario, k=opts.k, engine=eng)
    out, names = [], set()
    for i, recipe in enumerate(items):
        try:
            rec = read_recipe(recipe)
        except SdcError as exc:
            label = _recipe_label(recipe, None, i)
            where = f"recipes: recipe {i + 1} ({label})" if label != f"recipe {i + 1}" else f"recipes: recipe {i + 1}"
            raise SdcError(f"{where}: {exc}") from None
        label = _recipe_label(recipe, rec, i)
        where = f"recipes: recipe {i + 1} ({label})" if label != f"recipe {i + 1}" else f"recipes: recipe {i + 1}"
        step(f"replaying {label}")
        _replay(problem, rec, where)
        history = problem.history
        current = history[-1].result.table if history else table
        changed = tuple(dict.fromkeys(v for s in history for v, c in s.result.n_changed.items() if c))
        name = label if label not in names else f"{label} ({i + 1})"
        names.add(name)
        steps = tuple(s.method for s in history)
        out.append(
            Variant(
                name,
                "recipe",
                current,
                steps,
                changed,
                _published_pram([s.result for s in history]),
                _step_texts(history),
            )
        )
        while problem.history:
            problem.undo()
    return out


def _step_texts(history) -> tuple[str, ...]:
    """Each step as a line a data user can read: the method and the parameters it was given
    (roles and seeds left out)."""
    out = []
    for s in history:
        params = {k: v for k, v in s.parameters.items() if k not in _ROLE_PARAMETERS and v is not None}
        text = ", ".join(f"{k}={_short(v)}" for k, v in params.items())
        out.append(f"{s.method}({text})")
    return tuple(out)


_ROLE_PARAMETERS = {"keys", "weight", "household", "strata", "missing", "seed", "sensitive", "linked"}


def _short(value) -> str:
    text = repr(list(value) if isinstance(value, tuple) else value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Replay(SdcProblem):
    """A workflow that only protects: the assessment measures each variant itself, so the
    workflow's own measures after every step are skipped."""

    def _measure(self, table, changed: tuple, pram=None) -> dict:
        return {}


def _replay(problem, rec: dict, where: str) -> None:
    for j, st in enumerate(rec["steps"]):
        try:
            problem.apply(st["method"], **st.get("parameters", {}))
        except (SdcError, TypeError) as exc:
            msg = str(exc).removeprefix("recipe: ")
            raise SdcError(f"{where} failed at step {j + 1} ({st['method']}): {msg}") from None
