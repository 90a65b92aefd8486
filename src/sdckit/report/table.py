"""The measures of every variant side by side: the table of the assessment's ``summary()`` and
of its HTML page."""

from __future__ import annotations

from ..results._base import fmt, fmt_share

__all__ = ["variant_table"]


def _pct(v) -> str:
    return "-" if v is None else fmt_share(v)


def variant_table(res) -> tuple[list[str], list[tuple]]:
    """The measures side by side: columns ``measure`` and one per variant, one row per measure
    (the rows that apply to the scenario's roles) of an :class:`AssessmentResult` ``res``."""
    vs = res.variants
    rows: list[tuple] = []

    def row(label: str, get) -> None:
        values = [get(v) for v in vs]
        if any(x is not None for x in values):
            rows.append((label, *[fmt(x) if not isinstance(x, str) else x for x in values]))

    risk = lambda v, key: None if v.risk is None else v.risk[key]  # noqa: E731
    for kk in res.k:
        row(f"records with f_k < {kk}", lambda v, kk=kk: None if v.risk is None else v.risk["n_violations"][str(kk)])
    row("sample uniques (f_k = 1)", lambda v: risk(v, "n_sample_uniques"))
    row("expected re-identifications", lambda v: risk(v, "expected_reidentifications"))
    row("global risk", lambda v: None if v.risk is None else _pct(v.risk["global_risk"]))
    row("records above the threshold r*", lambda v: risk(v, "n_unsafe"))
    row("meets the target", lambda v: None if v.risk is None else ("yes" if v.risk["safe"] else "no"))
    hh = lambda v, key: None if v.risk is None or "household" not in v.risk else v.risk["household"][key]  # noqa: E731
    row("household global risk", lambda v: None if hh(v, "global_risk") is None else _pct(hh(v, "global_risk")))
    row("records with an MSU (SUDA)", lambda v: None if v.suda is None else v.suda["n_with_msu"])
    ll = lambda v, key: None if v.loglinear is None else v.loglinear.get(key)  # noqa: E731
    row("log-linear tau1 (population uniques)", lambda v: ll(v, "tau1"))
    row("log-linear tau2 (expected correct matches)", lambda v: ll(v, "tau2"))
    reg = lambda v, key: None if v.register is None else v.register.get(key)  # noqa: E731
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
    row("information loss lambda", lambda v: None if v.loss is None else v.loss["lambda"])
    row("IL1s (continuous keys)", lambda v: None if v.loss is None else v.loss["il1s"])
    return ["measure", *[v.name for v in vs]], rows
