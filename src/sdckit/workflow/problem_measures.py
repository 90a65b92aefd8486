"""The measures an :class:`~sdckit.SdcProblem` recomputes after every step, and its
before/after table."""

from __future__ import annotations

import warnings

from .._errors import SdcWarning

__all__ = ["measure_step", "summary_rows"]


def measure_step(problem, table, changed: tuple, pram=None) -> dict:
    """The measures of ``table`` (aggregates only): for categorical keys, k-anonymity violations,
    individual and household risk and SUDA (if asked); for continuous keys, interval disclosure,
    distance-based linkage and IL1s against the original; after a step, the loss lambda_j of
    every key and changed variable. ``pram`` (the published matrices of the PRAM steps so far)
    makes the risk PRAM-adjusted and the loss of a PRAMed variable its expected change."""
    sc = problem.scenario
    out: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SdcWarning)  # the scenario was checked once, at the start
        if sc.keys:
            out.update(_categorical(problem, table, (pram or {}).get("diagonal")))
        if sc.numeric_keys:
            out.update(_continuous(problem, table))
        if changed:
            out["lambda_j"] = _lambda(problem, table, changed, (pram or {}).get("matrices"))
    return out


def _categorical(problem, table, diagonal=None) -> dict:
    from ..risk import individual_risk, k_anonymity, suda

    sc = problem.scenario
    roles = {"strata": list(sc.strata) or None, "missing": list(sc.missing) or None}
    kan = k_anonymity(table, list(sc.keys), k=list(problem._k), allow_degenerate_keys=True, **roles)
    adjust = {v: d for v, d in (diagonal or {}).items() if v in sc.keys}
    risk = individual_risk(
        table,
        list(sc.keys),
        weight=sc.weight,
        household=sc.household,
        allow_degenerate_keys=True,
        pram=adjust or None,
        **roles,
    )
    out = {
        "n_violations": {int(k): int(v) for k, v in kan.n_violations.items()},
        "global_risk": float(risk.global_risk),
        "expected_reidentifications": float(risk.expected_reidentifications),
    }
    if sc.household:
        out["household_global_risk"] = float(risk.household_global_risk)
    if problem._suda:
        out["n_with_msu"] = int(suda(table, list(sc.keys), missing=roles["missing"]).n_with_msu)
    return out


def _continuous(problem, table) -> dict:
    """Interval disclosure (share of records whose original values all lie within 5 % of a
    standard deviation of the released ones), the share linked to their own original record by
    distance, and IL1s, each of ``table`` against the original on the continuous keys."""
    from ..risk import interval_disclosure, record_linkage_risk
    from ..utility import information_loss

    variables = list(problem.scenario.numeric_keys)
    original = problem._original
    il = information_loss(original, table, variables, scales="continuous")
    return {
        "share_interval_risk": float(interval_disclosure(original, table, variables).share_at_risk),
        "share_linked": float(record_linkage_risk(original, table, variables).share_linked),
        "il1s": float(il.il1s or 0.0),
    }


def _lambda(problem, table, changed: tuple, matrices=None) -> dict:
    """lambda_j of the key variables and of every variable a step changed: the loss of every
    change (:func:`sdckit.variant_loss`; a recoded number counts against its interval), on the
    scales the assessment uses."""
    from ..report.tradeoff import loss_scales, nominal_pram
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
    """Columns and rows of the before/after table (one row for the original, one per step)."""
    ks = list(problem._k)
    hh = bool(problem.scenario.household) and bool(problem.scenario.keys)
    lam_vars = list(dict.fromkeys(v for s in problem.history for v in s.measures.get("lambda_j", {})))
    cat, num = bool(problem.scenario.keys), bool(problem.scenario.numeric_keys)
    columns = ["step"]
    if cat:
        columns += [*[f"f_k < {k}" for k in ks], "global risk", "expected re-identifications"]
    if hh:
        columns.append("household risk")
    if problem._suda:
        columns.append("records with an MSU")
    if num:
        columns += ["share in 5 % sd interval", "share linked by distance", "IL1s"]
    columns += [f"lambda {v}" for v in lam_vars]
    stages = [("original", problem._baseline)] + [
        (f"{i + 1}. {s.method}", s.measures) for i, s in enumerate(problem.history)
    ]
    table = []
    for _, m in stages:
        row = []
        if cat:
            row += [*[m["n_violations"][k] for k in ks], m["global_risk"], m["expected_reidentifications"]]
        if hh:
            row.append(m["household_global_risk"])
        if problem._suda:
            row.append(m["n_with_msu"])
        if num:
            row += [m["share_interval_risk"], m["share_linked"], m["il1s"]]
        row += [m.get("lambda_j", {}).get(v, 0.0 if m is problem._baseline else None) for v in lam_vars]
        table.append(row)
    # one row per measure, one column per stage: reads top to bottom however many steps
    rows = [(name, *[col[r] for col in table]) for r, name in enumerate(columns[1:])]
    return ["measure", *[label for label, _ in stages]], rows
