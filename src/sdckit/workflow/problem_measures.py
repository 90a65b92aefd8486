"""The measures an :class:`~sdckit.SdcProblem` recomputes after every step, and its
before/after table."""

from __future__ import annotations

import warnings

from .._errors import SdcWarning
from ..assessment.measures import declared_call
from ..assessment.table import step_entries

__all__ = ["STEP_MEASURES", "measure_step", "summary_rows"]


def measure_step(problem, table, changed: tuple, pram=None) -> dict:
    """The measures of ``table`` (aggregates only): the per-step entries of the measures table
    (:func:`sdckit.assessment.table.step_entries`) that the roles allow; for categorical keys,
    k-anonymity violations, individual and household risk and SUDA (if asked); for continuous
    keys, interval disclosure, distance-based linkage and IL1s against the original; after a
    step, the loss lambda_j of every key and changed variable. A measure without a call of its
    own in :data:`STEP_MEASURES` is called as declared, with the scenario
    (:func:`sdckit.assessment.measures.declared_call`). ``pram`` (the published matrices of the
    PRAM steps so far) makes the risk PRAM-adjusted and the loss of a PRAMed variable its
    expected change."""
    out: dict = {}
    diagonal = (pram or {}).get("diagonal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SdcWarning)  # the scenario was checked once, at the start
        for entry in step_entries(problem.scenario, _options(problem)):
            hook = STEP_MEASURES.get(entry.name)
            result = (
                hook(problem, table, diagonal)
                if hook is not None
                else declared_call(entry, problem._original, table, problem.scenario)
            )
            for h in _shown(entry, problem.scenario):
                out[h.name] = _number(h.name, getattr(result, h.attribute))
        if changed:
            out["lambda_j"] = _lambda(problem, table, changed, (pram or {}).get("matrices"))
    return out


def _options(problem) -> frozenset[str]:
    return frozenset({"suda"} if problem._suda else ())


def _shown(entry, sc) -> list:
    """The headlines of ``entry`` in the per-step table under the scenario ``sc``."""
    return [h for h in entry.headlines if h.label is not None and all(getattr(sc, r) for r in h.needs)]


def _number(name: str, value):
    """A headline as a plain number: a count (``n_...``) as int, per k as ``{k: count}``;
    anything else as float (a missing IL1s as 0)."""
    if isinstance(value, dict):
        return {int(k): int(v) for k, v in value.items()}
    return int(value) if name.startswith("n_") else float(value or 0.0)


def _roles(sc) -> dict:
    return {"strata": list(sc.strata) or None, "missing": list(sc.missing) or None}


def _k_anonymity(problem, table, diagonal):
    from ..risk import k_anonymity

    sc = problem.scenario
    return k_anonymity(table, list(sc.keys), k=list(problem._k), allow_degenerate_keys=True, **_roles(sc))


def _individual_risk(problem, table, diagonal):
    from ..risk import individual_risk

    sc = problem.scenario
    adjust = {v: d for v, d in (diagonal or {}).items() if v in sc.keys}
    return individual_risk(
        table,
        list(sc.keys),
        weight=sc.weight,
        household=sc.household,
        allow_degenerate_keys=True,
        pram=adjust or None,
        **_roles(sc),
    )


def _suda(problem, table, diagonal):
    from ..risk import suda

    return suda(table, list(problem.scenario.keys), missing=list(problem.scenario.missing) or None)


def _record_linkage(problem, table, diagonal):
    """The share linked to their own original record by distance, on the continuous keys."""
    from ..risk import record_linkage_risk

    return record_linkage_risk(problem._original, table, list(problem.scenario.numeric_keys))


def _information_loss(problem, table, diagonal):
    """IL1s of ``table`` against the original on the continuous keys."""
    from ..utility import information_loss

    return information_loss(problem._original, table, list(problem.scenario.numeric_keys), scales="continuous")


#: the per-step entries of the measures table that the workflow calls in its own way (the
#: options of the problem, the PRAM adjustment); any other is called as declared
STEP_MEASURES = {
    "k_anonymity": _k_anonymity,
    "individual_risk": _individual_risk,
    "suda": _suda,
    "record_linkage_risk": _record_linkage,
    "information_loss": _information_loss,
}


def _lambda(problem, table, changed: tuple, matrices=None) -> dict:
    """lambda_j of the key variables and of every variable a step changed: the loss of every
    change (:func:`sdckit.variant_loss`; a recoded number counts against its interval), on the
    scales the assessment uses."""
    from ..assessment.tradeoff import loss_scales, nominal_pram
    from ..utility import variant_loss

    sc = problem.scenario
    original = problem._original
    variables = list(dict.fromkeys([*sc.keys, *changed]))
    if not variables:
        return {}
    scales = loss_scales(original, sc, variables, problem._engine)
    pram = nominal_pram({v: m for v, m in (matrices or {}).items() if v in variables}, scales)
    res = variant_loss(original, table, variables, scales=scales, missing=list(sc.missing) or None, pram=pram)
    return {v: float(res.loss_by_variable[v]) for v in variables}


def summary_rows(problem) -> tuple[list, list]:
    """Columns and rows of the before/after table (one row for the original, one per step):
    the labelled headlines of the per-step entries of the measures table, then lambda_j."""
    ks = list(problem._k)
    sc = problem.scenario
    heads = [h for e in step_entries(sc, _options(problem)) for h in _shown(e, sc)]
    lam_vars = list(dict.fromkeys(v for s in problem.history for v in s.measures.get("lambda_j", {})))
    columns = ["step"]
    for h in heads:
        columns += [h.label.format(k=k) for k in ks] if "{k}" in h.label else [h.label]
    columns += [f"lambda {v}" for v in lam_vars]
    stages = [("original", problem._baseline)] + [
        (f"{i + 1}. {s.method}", s.measures) for i, s in enumerate(problem.history)
    ]
    table = []
    for _, m in stages:
        row = []
        for h in heads:
            row += [m[h.name][k] for k in ks] if "{k}" in h.label else [m[h.name]]
        row += [m.get("lambda_j", {}).get(v, 0.0 if m is problem._baseline else None) for v in lam_vars]
        table.append(row)
    # one row per measure, one column per stage: reads top to bottom however many steps
    rows = [(name, *[col[r] for col in table]) for r, name in enumerate(columns[1:])]
    return ["measure", *[label for label, _ in stages]], rows
