"""The measures of every variant side by side: the table of the assessment's ``summary()`` and
of its HTML page."""

from __future__ import annotations

from ..results._base import fmt, fmt_percent, fmt_share

__all__ = ["decision_text", "loss_table", "role_text", "split_loss", "tradeoff_table", "variant_table"]


def _pct(v) -> str:
    return "-" if v is None else fmt_share(v)


def role_text(value) -> str:
    """A scenario role as text: ``a, b`` for columns, ``age: numeric`` for scales."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _ll(v, key: str):
    """A log-linear figure, "skipped (see notes)" when the model was left out, "adjusted" marks
    a PRAM-adjusted tau2."""
    if v.loglinear is None:
        return None
    if "skipped" in v.loglinear:
        return "skipped (see notes)"
    value = v.loglinear.get(key)
    if key == "tau2" and value is not None and v.loglinear.get("pram_adjusted"):
        return f"{fmt(value)} (PRAM-adjusted)"
    return value


def _ll_interval(v):
    """The interval of the log-linear tau2, as text ("[lo, hi]"), None when there is none."""
    ll = v.loglinear
    if ll is None or "skipped" in ll or not ll.get("tau2_interval"):
        return None
    lo, hi = ll["tau2_interval"]
    return f"{fmt(lo)} to {fmt(hi)}"


def _ll_weak(v):
    """ "weak: <reasons>" when the log-linear estimate is weak, "-" when it is not."""
    ll = v.loglinear
    if ll is None or "skipped" in ll or "weak" not in ll:
        return None
    return ("weak, tau2 may be substantially too low: " + "; ".join(ll["weak"])) if ll["weak"] else "-"


def variant_table(res) -> tuple[list[str], list[tuple]]:
    """The measures side by side: columns ``measure`` and one per variant, one row per measure
    (the rows that apply to the scenario's roles) of an :class:`AssessmentResult` ``res``."""
    vs = res.variants
    rows: list[tuple] = []

    def row(label: str, get) -> None:
        values = [get(v) for v in vs]
        if any(x is not None for x in values):
            rows.append((label, *[fmt(x) if not isinstance(x, str) else x for x in values]))

    cr = lambda v: v.categorical_risk  # noqa: E731
    risk = lambda v, key: None if cr(v) is None else cr(v)[key]  # noqa: E731
    for kk in res.k:
        row(f"records with f_k < {kk}", lambda v, kk=kk: None if cr(v) is None else cr(v)["n_violations"][str(kk)])
    row("sample uniques (f_k = 1)", lambda v: risk(v, "n_sample_uniques"))
    row("expected re-identifications", lambda v: risk(v, "expected_reidentifications"))
    row("global risk", lambda v: None if cr(v) is None else _pct(cr(v)["global_risk"]))
    row(
        "global risk, 95 % interval",
        lambda v: None if cr(v) is None or not cr(v).get("ci") else _interval_text(cr(v)["ci"]),
    )
    row("records above the threshold r*", lambda v: risk(v, "n_unsafe"))
    row("meets the target", lambda v: None if cr(v) is None else ("yes" if cr(v)["safe"] else "no"))
    hh = lambda v, key: None if cr(v) is None or "household" not in cr(v) else cr(v)["household"][key]  # noqa: E731
    row("household global risk", lambda v: None if hh(v, "global_risk") is None else _pct(hh(v, "global_risk")))
    row(
        "risk PRAM-adjusted for",
        lambda v: None if cr(v) is None else (", ".join(cr(v).get("pram_adjusted") or ()) or "-"),
    )
    row("records with an MSU (SUDA)", lambda v: None if v.suda is None else v.suda["n_with_msu"])
    row("log-linear tau1 (population uniques)", lambda v: _ll(v, "tau1"))
    row("log-linear tau2 (expected correct matches)", lambda v: _ll(v, "tau2"))
    row("log-linear tau2, 95 % interval (with the model choice)", _ll_interval)
    row("log-linear estimate", _ll_weak)
    reg = lambda v, key: None if v.register is None else ("skipped" if "skipped" in v.register else v.register.get(key))  # noqa: E731
    row("register tau1* (register uniques unique in the population)", lambda v: reg(v, "tau1_star"))
    row("register theta-hat (a match is correct)", lambda v: reg(v, "theta_hat"))
    for s in res.scenario.get("sensitive", ()):
        row(
            f"distinct l of {s}",
            lambda v, s=s: None if v.l_diversity is None else v.l_diversity["variables"][s]["distinct"],
        )
    cont = lambda v, key: None if v.continuous is None else v.continuous.get(key)  # noqa: E731
    row(
        "share in the 5 % sd interval",
        lambda v: None if cont(v, "share_interval_risk") is None else _pct(cont(v, "share_interval_risk")),
    )
    for m, h, meaning in _declared_rows(vs):
        row(meaning, lambda v, m=m, h=h: _declared_value(v, m, h))
    row("loss (every change, unit-free)", lambda v: v.loss)
    row("cells suppressed", lambda v: None if v.kind == "original" else sum(v.suppressed_by_variable.values()))
    row("IL1s (continuous keys)", lambda v: None if v.il1s is None else v.il1s["il1s"])
    return ["measure", *[v.name for v in vs]], rows


def _declared_rows(vs) -> list[tuple[str, str, str]]:
    """(measure, headline, meaning) of every headline in the variants' ``measures``, in order."""
    seen: dict = {}
    for v in vs:
        for m, heads in v.measures.items():
            for h, d in heads.items():
                seen.setdefault((m, h), d["meaning"])
    return [(m, h, meaning) for (m, h), meaning in seen.items()]


def _declared_value(v, m: str, h: str):
    """A variant's value of a declared measure's headline (a mapping per k as one text)."""
    value = (v.measures.get(m) or {}).get(h, {}).get("value")
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(x)}" for k, x in value.items())
    return value


def split_loss(v) -> tuple[float, float]:
    """A variant's loss split into the part from suppressed cells and the part from every other
    change (recoding, perturbation, PRAM): they add up to ``v.loss``."""
    cb = v.change_by_variable
    m = len(v.loss_by_variable) or 1
    sup = sum(c.get("loss_suppressed") or 0.0 for c in cb.values()) / m
    other = sum(c.get("loss_changed") or 0.0 for c in cb.values()) / m  # summed, not loss - sup: no rounding residue
    return sup, other


def _changes_text(v) -> str:
    """``age recoded, pl030 pram`` (the variables a variant changed other than by suppression)."""
    parts = [
        f"{x} {c['kind'].replace('+suppressed', '').replace('suppressed+', '')}"
        for x, c in v.change_by_variable.items()
        if c["kind"] not in ("unchanged", "suppressed")
    ]
    return ", ".join(parts) or "-"


def tradeoff_table(res) -> tuple[list[str], list[tuple]]:
    """The trade-off side by side (one column per variant): the deciding risk measure and
    whether it meets its target, the total loss split into suppressions and other changes, the
    cells suppressed, the variables changed otherwise, and how far the published estimates
    move."""
    vs = res.variants
    measure = next((v.risk["measure"] for v in vs if v.risk), None)
    rows: list[tuple] = []

    def row(label, get) -> None:
        rows.append((label, *[get(v) for v in vs]))

    row(measure or "risk", lambda v: "-" if (v.risk or {}).get("value") is None else _pct(v.risk["value"]))
    row("meets the target", lambda v: {True: "yes", False: "no"}.get((v.risk or {}).get("meets_target"), "-"))
    protected = lambda get: lambda v: "-" if v.kind == "original" or v.loss is None else get(v)  # noqa: E731
    row("loss (every change)", protected(lambda v: fmt(v.loss)))
    row("  from suppressions", protected(lambda v: fmt(split_loss(v)[0])))
    row("  from other changes", protected(lambda v: fmt(split_loss(v)[1])))
    row("cells suppressed", protected(lambda v: f"{sum(v.suppressed_by_variable.values()):,}"))
    row("changed otherwise", protected(_changes_text))
    variant = lambda get: lambda v: "-" if v.kind == "original" else get(v)  # noqa: E731
    row("mean change of the estimates", variant(lambda v: _estimates_cell(v, "mean_abs_relative_change")))
    row("estimates outside the original CI", variant(lambda v: _estimates_cell(v, "share_not_covered")))
    if any(v.kind == "synthetic" for v in vs):
        synthetic = lambda get: lambda v: "-" if not v.synthetic or "skipped" in v.synthetic else get(v.synthetic)  # noqa: E731
        row(
            "synthetic: attack risk beyond the control",
            synthetic(lambda b: _pct(b["risk"]) if b["control"] else "no control"),
        )
        row("synthetic: copies of original records", synthetic(lambda b: fmt_percent(b["exact_copy_share"] or 0.0)))
        row("synthetic: leak found", synthetic(lambda b: {True: "yes", False: "no"}.get(b["leak"], "not decidable")))
        row("synthetic: table distance (mean TV)", synthetic(lambda b: fmt(b["table_loss"])))
    return ["", *[v.name for v in vs]], rows


def map_axis(res):
    """The x of the risk-utility map: the loss of every change, or, when a synthetic file (no
    record pairing) is among the variants, the mean change of the published estimates for
    every variant. Returns ``(x of a variant or None, axis label, what it is, its format)``."""
    if not any(v.kind == "synthetic" for v in res.variants):
        return (lambda v: v.loss), "loss of every change (mean lambda_j, unit-free)", "the loss of every change", fmt

    def x_of(v):
        est = v.estimates or {}
        value = est.get("mean_abs_relative_change")
        return None if "skipped" in est or value is None else float(value)

    return x_of, "mean change of the published estimates (share)", "the mean change of the estimates", fmt_percent


def _interval_text(ci) -> str:
    if "skipped" in ci:
        return "left out (see the report)"
    lo, hi = ci["global_risk"]
    return f"{_pct(lo)} to {_pct(hi)}"


def _estimates_cell(v, key: str) -> str:
    est = v.estimates or {}
    if "skipped" in est:
        return "skipped (see notes)"
    value = est.get(key)
    return "-" if value is None else fmt_percent(value)


def _g(x: float) -> str:
    return f"{x:.3g}"


def decision_text(res) -> str:
    """The numbers that decide between the variants: of those that meet the target (else of
    all), the one with the least loss, split into suppressions and other changes, and for each
    other variant what its other changes cost and the suppressions they save against it; then
    each synthetic file against the masked variants on the published estimates."""
    text = _masked_decision(res)
    synthetic = [v for v in res.variants if v.kind == "synthetic"]
    return " ".join(t for t in (text, *(_synthetic_text(v, res) for v in synthetic)) if t)


def _synthetic_text(v, res) -> str:
    """One synthetic file: whether it meets the target, how far its estimates move beside the
    best masked variant's, and its risk as a synthetic file."""
    x_of = map_axis(res)[0]
    risk = v.risk or {}
    meets = {True: "meets", False: "does not meet"}.get(risk.get("meets_target"), "is not judged on")
    own = x_of(v)
    text = f"{v.name} (synthetic) {meets} the target on the {risk.get('measure', 'risk')}"
    text += f"; its estimates move by {fmt_percent(own)} on average" if own is not None else ""
    masked = [m for m in res.variants if m.kind not in ("original", "synthetic") and x_of(m) is not None]
    if masked and own is not None:
        best = min(masked, key=x_of)
        text += f" ({best.name}: {fmt_percent(x_of(best))})"
    block = v.synthetic or {}
    if "skipped" in block or not block:
        return text + "."
    if block["control"]:
        text += f"; attack risk beyond the control {_g(block['risk'])}"
    if block["leak"] is None:
        text += f"; whether original records leaked cannot be decided ({block.get('leak_cause') or 'no control file'})"
    elif block["leak"]:
        text += "; a leak of original records was found"
        if risk.get("meets_target"):
            text += " (the risk rules, measured on its own records, cannot see copies of original records)"
    else:
        text += "; no leak of original records was found"
    return text + "."


def _masked_decision(res) -> str:
    vs = [v for v in res.variants if v.kind != "original" and v.loss is not None]
    if not vs:
        return ""
    meeting = [v for v in vs if (v.risk or {}).get("meets_target")]
    pool = meeting or vs
    best = min(pool, key=lambda v: v.loss)
    sup, other = split_loss(best)
    cells = sum(best.suppressed_by_variable.values())
    measure = (best.risk or {}).get("measure", "the risk")
    where = f"of the variants that meet the target on the {measure}" if meeting else "(no variant meets the target)"
    rest = f"{_g(other)} from other changes ({_changes_text(best)})" if other > 0 else "nothing from other changes"
    text = f"{best.name} has the least loss {where}: {_g(best.loss)}, of which {_g(sup)} from {cells:,} suppressed cells and {rest}."
    for v in pool:
        if v is best:
            continue
        s2, o2 = split_loss(v)
        c2 = sum(v.suppressed_by_variable.values())
        text += f" {v.name}: {_g(v.loss)}"
        if c2 < cells:
            text += f"; its other changes ({_changes_text(v)}) cost {_g(o2 - other)} more and save {cells - c2:,} suppressed cells worth {_g(sup - s2)}."
        else:
            text += f" ({_g(s2)} from {c2:,} suppressed cells, {_g(o2)} from other changes: {_changes_text(v)})."
    return text


def loss_table(res) -> tuple[list[str], list[tuple]]:
    """lambda_j of every loss variable per variant, with its share of the variant's total and
    its kind of change."""
    vs = [v for v in res.variants if v.kind != "original" and v.loss is not None]
    columns = ["variable", "scale", *[f"{v.name}" for v in vs]]
    rows = []
    for x, scale in res.loss_scales.items():
        cells = []
        for v in vs:
            lam = v.loss_by_variable.get(x)
            share = v.share_by_variable.get(x)
            kind = v.change_by_variable.get(x, {}).get("kind", "unchanged")
            cells.append("0" if not lam else f"{fmt(lam)} ({fmt_percent(share or 0.0)}; {kind})")
        rows.append((x, scale, *cells))
    return columns, rows
