"""The assessment as one self-contained HTML page: inline CSS and SVG figures, no script, no
link to anything outside the file, readable on screen and in print.

Every figure sits in ``<figure class="sdckit-figure" id="fig-...">`` with a title and one
plain-language sentence under it (``<p class="reading">``). The page shows aggregates only:
counts, shares, risks, names of variables and variants; key values only when the assessment
was made with ``include_records=True``.
"""

from __future__ import annotations

import html as _html

import numpy as np

from .._roles import ROLES
from ..results._base import fmt, fmt_percent, fmt_share
from ..results.bins import NEIGHBOUR_EDGES, PERTURBATION_EDGES, RISK_EDGES
from . import figures as F
from .table import decision_text, loss_table, map_axis, role_text, tradeoff_table, variant_table

__all__ = ["CSS", "render"]

CSS = """
.sdckit-report{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:#1f2328;background:#fff;max-width:980px;margin:0 auto;padding:1.5rem 1.25rem 3rem;line-height:1.45;font-size:15px}
.sdckit-report h1{font-size:1.7rem;margin:.2rem 0 .4rem}
.sdckit-report h2{font-size:1.25rem;margin:2.2rem 0 .6rem;padding-bottom:.25rem;border-bottom:2px solid #e4e7eb}
.sdckit-report h3{font-size:1.02rem;margin:1.2rem 0 .4rem}
.sdckit-report p{margin:.4rem 0 .7rem}
.sdckit-report .lede{color:#57606a}
.sdckit-report .verdict{padding:.6rem .9rem;border-radius:6px;margin:.8rem 0;font-weight:600}
.sdckit-report .verdict.ok{background:#e6f4ea;border:1px solid #a3d9b1}
.sdckit-report .verdict.fail{background:#fdecea;border:1px solid #f2b8b5}
.sdckit-report .caution{background:#fff8e1;border:1px solid #f3d37a;padding:.5rem .8rem;border-radius:6px}
.sdckit-report nav ol{columns:2;margin:.4rem 0 0;padding-left:1.3rem;color:#57606a}
.sdckit-report nav a{color:#0b5cad;text-decoration:none}
.sdckit-report table{border-collapse:collapse;margin:.5rem 0 1rem;font-variant-numeric:tabular-nums;font-size:.9rem}
.sdckit-report th,.sdckit-report td{border-bottom:1px solid #e4e7eb;padding:.28rem .7rem;text-align:right;vertical-align:top}
.sdckit-report th{background:#f6f8fa;font-weight:600}
.sdckit-report th:first-child,.sdckit-report td:first-child{text-align:left}
.sdckit-report .wide{overflow-x:auto}
.sdckit-report figure.sdckit-figure{margin:1rem 0 1.4rem;padding:.6rem;border:1px solid #e4e7eb;border-radius:6px}
.sdckit-report figure.sdckit-figure svg{display:block;max-width:100%;height:auto;margin:0 auto}
.sdckit-report figure.sdckit-figure svg *{stroke-linejoin:round;stroke-linecap:butt}
.sdckit-report figcaption{font-weight:600;margin:.3rem 0 .1rem}
.sdckit-report p.reading{margin:.2rem 0 0;padding-left:.6rem;border-left:3px solid #4C72B0;color:#24292f}
.sdckit-report ul.notes{color:#57606a;font-size:.9rem}
.sdckit-report footer{margin-top:2.5rem;color:#57606a;font-size:.85rem}
@media print{
.sdckit-report{max-width:none;padding:0;font-size:10.5pt}
.sdckit-report nav{display:none}
.sdckit-report h2{break-after:avoid;page-break-after:avoid}
.sdckit-report figure.sdckit-figure,.sdckit-report table{break-inside:avoid;page-break-inside:avoid}
.sdckit-report figure.sdckit-figure{border:none;padding:0}
.sdckit-report a{color:inherit}
}
"""

e = _html.escape


def render(res, *, document: bool, audience: str = "internal") -> str:
    """The report of an :class:`AssessmentResult`: a whole page (``document=True``) or a
    ``<div>`` with its own styles for Jupyter. ``audience="external"`` gives the report for
    data users: what was done and how it moves their estimates, no risk figures."""
    if audience == "external":
        return _render(res, document, _EXTERNAL, _external_header, "Protection of the released file")
    sections = [
        ("data", "Data and scenario", _data),
        ("k-anonymity", "k-anonymity", _kanonymity),
        ("risk", "Risk distribution and threshold", _risk),
        ("reidentifications", "Expected re-identifications and household risk", _reidentifications),
        ("combinations", "Riskiest key combinations", _combinations),
        ("suda", "SUDA: which variables make records special", _suda),
        ("l-diversity", "l-diversity of the sensitive variables", _ldiversity),
        ("loglinear", "Log-linear risk", _loglinear),
        ("register", "Register of a subpopulation", _register),
        ("tradeoff", "Which variant to release: risk against loss", _tradeoff),
        ("variants", "Protection variants: risk against utility", _variants),
        ("information-loss", "Information loss per variable", _information_loss),
        ("estimates", "How the published estimates move", _estimates),
        ("recodes", "Recoded variables: categories before and after", _recodes),
        ("pram", "PRAM transition matrices", _pram),
        ("synthetic", "Synthetic files: closeness and attacks", _synthetic),
        ("continuous", "Continuous keys", _continuous),
    ]
    return _render(res, document, sections, _header, "Disclosure risk assessment")


def _render(res, document: bool, sections, header, title: str) -> str:
    parts = [(sid, title, fn(res)) for sid, title, fn in sections]
    parts = [(sid, title, body) for sid, title, body in parts if body]
    nav = "".join(f'<li><a href="#{sid}">{e(title)}</a></li>' for sid, title, _ in parts)
    body = [header(res), f"<nav><strong>Contents</strong><ol>{nav}</ol></nav>"]
    body += [f'<section id="{sid}"><h2>{e(name)}</h2>{content}</section>' for sid, name, content in parts]
    body.append(_notes(res, external=header is _external_header))
    inner = "\n".join(body)
    if not document:
        return f'<div class="sdckit-report"><style>{CSS}</style>\n{inner}\n</div>'
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f'<div class="sdckit-report">\n{inner}\n</div>\n</body>\n</html>\n'
    )


# ----------------------------------------------------------------------------------------------
# building blocks
# ----------------------------------------------------------------------------------------------
def _table(columns, rows, *, first_header: bool = False) -> str:
    head = "".join(f"<th>{e(str(c))}</th>" for c in columns)
    out = []
    for r in rows:
        cells = [e(v if isinstance(v, str) else fmt(v)) for v in r]
        first = f"<th>{cells[0]}</th>" if first_header else f"<td>{cells[0]}</td>"
        out.append("<tr>" + first + "".join(f"<td>{c}</td>" for c in cells[1:]) + "</tr>")
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(out)}</tbody></table></div>'


def _figure(fig_id: str, svg: str, caption: str, reading: str) -> str:
    return (
        f'<figure class="sdckit-figure" id="{fig_id}">{svg}<figcaption>{e(caption)}</figcaption>'
        f'<p class="reading">{e(reading)}</p></figure>'
    )


def _names(items) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _share(count, n) -> str:
    return fmt_percent(count / n) if n else "0 %"


def _protected(res):
    return [v for v in res.variants if v.kind != "original"]


# ----------------------------------------------------------------------------------------------
# sections
# ----------------------------------------------------------------------------------------------
def _header(res) -> str:
    from .._version import __version__

    variants = _protected(res)
    lede = f"{fmt(res.n)} records, {fmt(res.n_columns)} variables"
    if variants:
        lede += f"; {len(variants)} protection variant(s) compared: " + ", ".join(e(v.name) for v in variants)
    out = [f'<header><h1>Disclosure risk assessment</h1><p class="lede">{lede}. Made by sdckit {e(__version__)}.</p>']
    risk = res.original.categorical_risk
    if risk is not None:
        cls = "ok" if risk["safe"] else "fail"
        out.append(f'<p class="verdict {cls}">{e(risk["verdict"])}</p>')
    if res.include_records:
        out.append(
            '<p class="caution">This report lists key values of unique records (include_records): '
            "keep it as confidential as the data.</p>"
        )
    out.append("</header>")
    return "".join(out)


def _data(res) -> str:
    sc = res.scenario
    labels = {r.name: r.report_label for r in ROLES}  # the roles table
    rows = [("records", fmt(res.n)), ("variables in the file", fmt(res.n_columns))]
    rows += [(labels[k], role_text(v)) for k, v in sc.items()]
    rows.append(("target re-identification rate", fmt_share(res.max_global_risk)))
    rows.append(("k of k-anonymity", ", ".join(map(str, res.k))))
    out = _table(["", ""], rows, first_header=True).replace("<thead><tr><th></th><th></th></tr></thead>", "")
    if res.key_info:
        krows = [(k, i["n_categories"], i["n_missing"]) for k, i in res.key_info.items()]
        out += "<h3>Key variables</h3>" + _table(["variable", "categories", "records missing"], krows)
    return out


def _kanonymity(res) -> str:
    vs = [v for v in res.variants if v.categorical_risk is not None]
    if not vs:
        return ""
    o = vs[0].categorical_risk
    n = res.n
    cols = ["k", *[f"{v.name}: records with f_k < k" for v in vs], "key patterns violating (original)"]
    rows = [
        (
            kk,
            *[
                f"{fmt(v.categorical_risk['n_violations'][str(kk)])} ({_share(v.categorical_risk['n_violations'][str(kk)], n)})"
                for v in vs
            ],
            o["n_patterns_violating"][str(kk)],
        )
        for kk in res.k
    ]
    svg = F.grouped_bars(
        "fig-k-anonymity",
        [f"k = {kk}" for kk in res.k],
        [(v.name, [v.categorical_risk["n_violations"][str(kk)] for kk in res.k]) for v in vs],
        xlabel="k-anonymity level",
        ylabel="records with f_k < k",
    )
    k_last = res.k[-1]
    reading = (
        f"{fmt(o['n_sample_uniques'])} records ({_share(o['n_sample_uniques'], n)}) are unique on all "
        f"{len(res.scenario.get('keys', ()))} key variables together, and {fmt(o['n_violations'][str(k_last)])} "
        f"({_share(o['n_violations'][str(k_last)], n)}) share their key combination with fewer than "
        f"{k_last - 1} other record(s) ({k_last}-anonymity is violated)."
    )
    if len(vs) > 1:
        best = min(vs[1:], key=lambda v: v.categorical_risk["n_violations"][str(k_last)])
        reading += f" After {best.name}: {fmt(best.categorical_risk['n_violations'][str(k_last)])}."
    intro = (
        "<p>A record violates k-anonymity when fewer than k records in the file share its values of "
        "all key variables (f_k &lt; k).</p>"
    )
    return intro + _table(cols, rows) + _figure("fig-k-anonymity", svg, "Records violating k-anonymity", reading)


def _risk(res) -> str:
    vs = [v for v in res.variants if v.categorical_risk is not None]
    if not vs:
        return ""
    o = vs[0].categorical_risk
    thr = o["threshold"]
    svg = F.histogram(
        "fig-risk-distribution",
        RISK_EDGES,
        [(v.name, v.categorical_risk["risk_histogram"]) for v in vs],
        xlabel="individual re-identification risk (log scale)",
        ylabel="records",
        threshold=thr,
        threshold_label=f"threshold r* = {fmt(thr)}" if thr is not None else "",
    )
    reading = _risk_reading(o, res)
    rows = [
        ("global risk (expected share re-identified)", *[fmt_share(v.categorical_risk["global_risk"]) for v in vs]),
        ("highest individual risk", *[fmt(v.categorical_risk["max_risk"]) for v in vs]),
        (
            "threshold r* for the target",
            *[
                fmt(v.categorical_risk["threshold"]) if v.categorical_risk["threshold"] is not None else "none needed"
                for v in vs
            ],
        ),
        ("records above r*", *[fmt(v.categorical_risk["n_unsafe"]) for v in vs]),
        ("meets the target", *["yes" if v.categorical_risk["safe"] else "no" for v in vs]),
    ]
    intro = (
        "<p>The individual risk of a record is the probability that an intruder who matches it on the key "
        "variables picks the right person, E(1/F_k | f_k) (Benedetti and Franconi; mu-ARGUS). The threshold r* "
        "is the smallest risk level such that capping every risk at it meets the target rate.</p>"
    )
    if res.scenario.get("weight"):
        intro += (
            "<p>As a count for the whole file this risk tends to be low: on samples of a synthetic population with "
            "known truth (fractions 1/10 and 1/50) the risks of the sample uniques summed to 24 to 71 % less than "
            "their expected number of correct matches. It ranks records well; for the file-level count use the "
            'log-linear estimate (<code>sdckit.loglinear_risk</code>, <code>model="auto"</code>), within 10 % '
            "of the truth on average in 55 of 60 settings tried there.</p>"
        )
    return (
        intro
        + _table(["", *[v.name for v in vs]], rows)
        + _figure("fig-risk-distribution", svg, "Distribution of the individual risk", reading)
    )


def _risk_reading(o, res) -> str:
    target = fmt_percent(res.max_global_risk)
    thr = o["threshold"]
    if thr is None:
        text = (
            f"The expected share of records re-identified is {fmt_percent(o['global_risk'])}, within the target of "
            f"{target}: no record is above a threshold."
        )
    else:
        text = (
            f"{fmt(o['n_unsafe'])} records ({_share(o['n_unsafe'], res.n)}) have a risk above r* = {fmt(thr)}; "
            f"bringing them down to r* would bring the expected share re-identified from "
            f"{fmt_percent(o['global_risk'])} to the target of {target}."
        )
    hh = o.get("household")
    if hh is not None and hh["threshold"] is not None:
        text += (
            f" The household rate ({fmt_percent(hh['global_risk'])}) is above the target: under the household rule "
            f"{fmt(hh['n_unsafe'])} records are unsafe."
        )
    return text


def _interval(ci) -> str:
    """A global risk's interval as shares, or "-"."""
    if not ci:
        return "-"
    if "skipped" in ci:
        return "left out: " + ci["skipped"]
    lo, hi = ci["global_risk"]
    return f"{fmt_percent(lo)} to {fmt_percent(hi)}"


def _reidentifications(res) -> str:
    vs = [v for v in res.variants if v.categorical_risk is not None]
    if not vs:
        return ""
    has_hh = "household" in vs[0].categorical_risk
    rows = [
        ("expected re-identifications (records)", *[fmt(v.categorical_risk["expected_reidentifications"]) for v in vs]),
        ("global risk", *[fmt_share(v.categorical_risk["global_risk"]) for v in vs]),
    ]
    if any(v.categorical_risk.get("ci") for v in vs):
        rows.append(("global risk, 95 % interval", *[_interval(v.categorical_risk.get("ci")) for v in vs]))
    if has_hh:
        rows += [
            (
                "expected re-identifications, household risk",
                *[fmt(v.categorical_risk["household"]["expected_reidentifications"]) for v in vs],
            ),
            ("household global risk", *[fmt_share(v.categorical_risk["household"]["global_risk"]) for v in vs]),
            ("households", *[fmt(v.categorical_risk["household"]["n_households"]) for v in vs]),
            ("highest household risk", *[fmt(v.categorical_risk["household"]["max_risk"]) for v in vs]),
        ]
    out = _table(["", *[v.name for v in vs]], rows)
    o = vs[0].categorical_risk
    if not has_hh:
        return out + "<p>No household variable was declared: the household risk is not computed.</p>"
    h = o["household"]
    svg = F.histogram(
        "fig-household-risk",
        RISK_EDGES,
        [(v.name, v.categorical_risk["household"]["risk_histogram"]) for v in vs],
        xlabel="household re-identification risk (log scale)",
        ylabel="households",
    )
    reading = (
        f"An intruder can expect to re-identify {fmt(o['expected_reidentifications'])} records one by one, but "
        f"{fmt(h['expected_reidentifications'])} once re-identifying one member of a household reveals the whole "
        f"household (household risk {fmt_percent(h['global_risk'])})."
    )
    intro = (
        "<p>The household risk of a record is the probability that at least one member of its household is "
        "re-identified, 1 - prod(1 - r_i) over the household.</p>"
    )
    return intro + out + _figure("fig-household-risk", svg, "Distribution of the household risk", reading)


def _combinations(res) -> str:
    c = res.combinations
    if c is None:
        return ""
    intro = (
        f"<p>For every set of {_names([str(s) for s in c.sizes])} key variables ({fmt(c.n_subsets)} sets), "
        "the number of records that no other record matches on those variables alone. An intruder who "
        "knows only these few facts about a person in such a cell finds exactly one record. Counts only: "
        "no category is named.</p>"
    )
    if not c.top:
        return intro + "<p>No record is unique on three or fewer key variables.</p>"
    rows = [(", ".join(v), len(v), c_, _share(c_, res.n)) for v, c_ in c.top]
    table = _table(["key variables", "size", "records unique", "share of records"], rows)
    labels = [", ".join(v) for v, _ in c.top]
    svg = F.bars(
        "fig-key-combinations",
        labels,
        [cnt for _, cnt in c.top],
        [len(v) for v, _ in c.top],
        xlabel="records unique on these variables alone",
        legend={1: "one variable", 2: "two variables", 3: "three variables"},
    )
    (vars_, count) = max(c.top, key=lambda t: (t[1], -len(t[0])))
    reading = f"{fmt(count)} records are unique on {_names(vars_)} alone."
    smallest = min(c.top, key=lambda t: (len(t[0]), -t[1]))
    if len(smallest[0]) < len(vars_):
        reading += f" Already {fmt(smallest[1])} are unique on {_names(smallest[0])} alone."
    out = intro + table + _figure("fig-key-combinations", svg, "Riskiest key combinations", reading)
    if c.cells:
        out += "<h3>Unique cells (key values; record-level)</h3>"
        for names, cells in c.cells.items():
            out += _table(list(names), [tuple(cell) for cell in cells])
    return out


def _suda(res) -> str:
    vs = [v for v in res.variants if v.suda is not None]
    if not vs:
        return ""
    keys = list(res.scenario.get("keys", ()))
    o = vs[0].suda
    svg = F.grouped_bars(
        "fig-suda-contributions",
        keys,
        [(v.name, [v.suda["share_contributions"].get(k, 0.0) for k in keys]) for v in vs],
        xlabel="share of the total SUDA score from minimal sample uniques containing the variable (%)",
        ylabel="",
        horizontal=True,
        percent=True,
    )
    contrib = o["share_contributions"]
    if contrib and max(contrib.values()) > 0:
        top = max(keys, key=lambda k: contrib.get(k, 0.0))
        reading = (
            f"{top} takes part in the minimal sample uniques behind {fmt_percent(contrib[top])} of the total SUDA "
            f"score: protecting it (recoding, suppression) removes most of the special uniqueness; "
            f"{fmt(o['n_with_msu'])} records have a minimal sample unique."
        )
    else:
        reading = "No record has a minimal sample unique: no small set of key values singles out a record."
    rows = [
        ("records with a minimal sample unique", *[fmt(v.suda["n_with_msu"]) for v in vs]),
        ("special uniques", *[fmt(v.suda["n_special_uniques"]) for v in vs]),
        ("minimal sample uniques", *[fmt(v.suda["n_msus"]) for v in vs]),
    ]
    intro = (
        "<p>A minimal sample unique (MSU) is a set of a record's key values that no other record shares while "
        "every smaller part of it is shared (Elliot et al., SUDA). The bars show how much each key variable "
        "contributes to the records' SUDA scores.</p>"
    )
    return (
        intro
        + _table(["", *[v.name for v in vs]], rows)
        + _figure("fig-suda-contributions", svg, "SUDA contributions of the key variables", reading)
    )


def _ldiversity(res) -> str:
    o = res.original.l_diversity
    if o is None:
        return ""
    vars_ = list(o["variables"])
    dist = {v: o["variables"][v]["distinct_distribution"] for v in vars_}
    cats = list(dict.fromkeys(c for d in dist.values() for c in d))
    svg = F.grouped_bars(
        "fig-l-diversity",
        cats,
        [(v, [dist[v].get(c, 0) for c in cats]) for v in vars_],
        xlabel="distinct l of the record's class (different values of the sensitive variable)",
        ylabel="records",
    )
    worst = max(vars_, key=lambda v: o["variables"][v]["n_not_2_diverse"])
    nw = o["variables"][worst]["n_not_2_diverse"]
    reading = (
        f"{fmt(nw)} records ({_share(nw, res.n)}) are in a class of identical key values where {worst} takes a "
        f"single value: whoever knows their keys learns their {worst}."
    )
    rows = [
        (v, d["distinct"], d["entropy"], d["recursive"], d["n_not_2_diverse"], d["n_missing_sensitive"])
        for v, d in o["variables"].items()
    ]
    cols = ["sensitive variable", "distinct l", "entropy l", "recursive l", "records with distinct l < 2", "missing"]
    intro = (
        f"<p>Classes are the {fmt(o['n_classes'])} groups of records with the same key values; l is the smallest "
        "diversity of the sensitive variable within a class (Machanavajjhala et al.).</p>"
    )
    return (
        intro + _table(cols, rows) + _figure("fig-l-diversity", svg, "Records by the diversity of their class", reading)
    )


def _loglinear(res) -> str:
    vs = [v for v in res.variants if v.loglinear is not None]
    if not vs:
        return ""
    rows = []
    for v in vs:
        ll = v.loglinear
        if "skipped" in ll:
            rows.append((v.name, "-", "-", "-", "-", "left out: " + ll["skipped"], "-"))
        else:
            iv = ll.get("tau2_interval")
            interval = "-" if not iv else f"{fmt(iv[0])} to {fmt(iv[1])}"
            weak = "; ".join(ll.get("weak") or ()) or "-"
            rows.append((v.name, ll["n_sample_uniques"], ll["tau1"], ll["tau2"], interval, ll["model"], weak))
    intro = (
        "<p>tau1 estimates how many sample uniques are unique in the population, tau2 the expected number of "
        "correct matches of sample uniques, from a Poisson log-linear model of the key table (Skinner and "
        "Holmes; Skinner and Shlomo's model search). The interval of tau2 (95 %) carries the choice of model "
        "as well as the randomness of the population counts; where the estimate is weak (a sample under 5,000 "
        "records, a model with more parameters than records, fewer than 10 expected matches) tau2 may be "
        "substantially too low, and the last column says why.</p>"
    )
    header = ["variant", "sample uniques", "tau1", "tau2", "tau2, 95 % interval", "model", "weak estimate"]
    return intro + _table(header, rows)


def _register(res) -> str:
    vs = [v for v in res.variants if v.register is not None]
    if not vs:
        return ""
    rows = []
    for v in vs:
        r = v.register
        if "skipped" in r:
            rows.append((v.name, "-", "-", "-", "-", "-", "-", "left out: " + r["skipped"]))
            continue
        rows.append(
            (
                v.name,
                r["n_register_uniques"],
                r["tau1_star"],
                r["tau2_star"],
                r["n_both_uniques"],
                r["tau1"],
                r["tau2"],
                r["theta_hat"],
            )
        )
    intro = (
        "<p>The file is a register of a subpopulation whose membership is itself sensitive, and an intruder "
        "knows the key values of persons of the whole population. A register unique is re-identified when it is "
        "also unique in the population: tau1* estimates how many register uniques are population uniques and "
        "tau2* the expected correct matches among them; tau1 and tau2 do the same for the cells unique in both "
        "the register and the reference sample, and theta-hat estimates the probability that such a match is "
        "correct (Shlomo and Skinner 2022, approach B: membership propensities from the reference sample by "
        "pseudo-likelihood, inverse-probability weighted population counts, a log-linear model).</p>"
    )
    header = ["variant", "register uniques", "tau1*", "tau2*", "unique in both", "tau1", "tau2", "theta-hat"]
    return intro + _table(header, rows)


def _information_loss(res) -> str:
    vs = [v for v in _protected(res) if v.loss is not None]
    if not vs:
        return (
            "<p>No protection variant was given (a protected file or recipes): there is no information loss to "
            "show.</p>"
        )
    columns, rows = loss_table(res)
    variables = list(res.loss_scales)
    intro = (
        "<p>Every variable a variant changes counts, whatever its type became. Per record, a category costs the "
        "chance that the released value stands for another category (1 for a suppressed or swapped value; for a "
        "recoded value, the share of its group that had another category); a number costs (2/pi) arctan of its "
        "change in standard deviations of the original variable (a recoded number: its distance to the mean of "
        "its interval; a suppressed one: to the farthest end of the range), so that units do not matter; a "
        "PRAMed category costs its expected change under the published matrix. lambda_j is the mean over records "
        "and lies in [0, 1]; the variant's loss is the mean of lambda_j over the variables below.</p>"
    )
    sup_rows = [(x, *[fmt(v.suppressed_by_variable.get(x, 0)) for v in vs]) for x in variables]
    out = intro + _table(columns, rows)
    out += "<h3>Cells suppressed per variable</h3>" + _table(["variable", *[v.name for v in vs]], sup_rows)
    il1 = [x for x in res.scenario.get("numeric_keys", ())]
    if il1 and any(v.il1s for v in vs):
        out += "<h3>IL1s of the continuous keys</h3>" + _table(
            ["continuous key", *[f"{v.name}: IL1s" for v in vs]],
            [(x, *[(v.il1s or {}).get("il1s_by_variable", {}).get(x) for v in vs]) for x in il1],
        )
    return out + _loss_figure(vs, variables)


def _loss_figure(vs, variables) -> str:
    svg = F.grouped_bars(
        "fig-information-loss",
        variables,
        [(v.name, [v.loss_by_variable.get(x, 0.0) for x in variables]) for v in vs],
        xlabel="lambda_j: share of values changed (categories) or scaled distance (numbers), 0 to 1",
        ylabel="",
        horizontal=True,
    )
    v0, x0 = max(((v, x) for v in vs for x in v.loss_by_variable), key=lambda t: t[0].loss_by_variable[t[1]])
    lam = v0.loss_by_variable[x0]
    kind = v0.change_by_variable.get(x0, {}).get("kind", "changed")
    reading = (
        f"{v0.name} costs {x0} the most (lambda_j = {fmt(lam)}, {kind}; "
        f"{fmt_percent(v0.share_by_variable.get(x0, 0.0))} of that variant's loss)."
    )
    return _figure("fig-information-loss", svg, "Information loss per variable", reading)


def _tradeoff(res) -> str:
    vs = _protected(res)
    if not vs:
        return ""
    columns, rows = tradeoff_table(res)
    text = decision_text(res)
    return (f"<p><strong>{e(text)}</strong></p>" if text else "") + _table(columns, rows)


def _variants(res) -> str:
    columns, rows = variant_table(res)
    out = _table(columns, rows)
    vs = _protected(res)
    if not vs:
        return out + "<p>Give a protected file or protection recipes to compare variants on the risk-utility map.</p>"
    o = res.original.risk
    if o is None or o.get("value") is None:
        return out + "<p>No risk measure decides the verdict of this scenario: the variants are not mapped.</p>"
    x_of, xlabel, what, _ = map_axis(res)
    points = [("original", 0.0, o["value"])]
    points += [
        (v.name, x_of(v), v.risk["value"])
        for v in vs
        if v.risk and v.risk.get("value") is not None and x_of(v) is not None
    ]
    measure, target = o["measure"], o["target"]
    svg = F.risk_utility("fig-risk-utility", points, ylabel=f"{measure} (%)", target=target, xlabel=xlabel)
    reading = _map_reading(res, vs, measure, target)
    steps = [(v.name, v.kind, "; ".join(v.step_texts) if v.step_texts else ", ".join(v.steps) or "-") for v in vs]
    out += "<h3>Variants</h3>" + _table(["variant", "source", "protection steps"], steps)
    caption = f"The {measure} against {what}, one point per variant"
    return out + _figure("fig-risk-utility", svg, caption, reading)


def _map_reading(res, vs, measure: str, target) -> str:
    o = res.original.risk
    others = [r["measure"] for r in o["rules"] if r["measure"] != measure]
    why = (
        f"The map shows the {measure}: the original {'fails' if o['meets_target'] is False else 'meets'} its "
        f"target there"
        + (f" (the {', '.join(others)} {'is' if len(others) == 1 else 'are'} in the table above)" if others else "")
        + "."
    )
    if target is None:
        return why
    meeting = [v for v in vs if v.risk and v.risk.get("meets_target")]
    if not meeting:
        return why + f" No variant meets the target of {fmt_percent(target)}."
    x_of, _, what, form = map_axis(res)
    placed = [v for v in meeting if x_of(v) is not None]
    if not placed:
        return why + f" Meeting the target of {fmt_percent(target)}: {_names([v.name for v in meeting])}."
    best = min(placed, key=x_of)
    return why + (
        f" Meeting the target of {fmt_percent(target)}: {_names([v.name for v in meeting])}; of these {best.name} "
        f"loses the least ({what}: {form(x_of(best))})."
    )


def _recodes(res) -> str:
    vs = [v for v in _protected(res) if v.recodes]
    out = ""
    for v in vs:
        for x, t in v.recodes.items():
            rows = [
                (
                    r["category"],
                    fmt(r["records"]),
                    fmt(r["n_original_categories"]),
                    ", ".join(r["original_categories"]) if "original_categories" in r else "-",
                )
                for r in t["rows"]
            ]
            title = (
                f"{v.name}: {x} ({t['n_categories_before']} categories before, {t['n_categories_after']} after"
                + (f"; {fmt(t['n_suppressed'])} values suppressed" if t["n_suppressed"] else "")
                + ")"
            )
            out += f"<h3>{e(title)}</h3>" + _table(
                ["released category", "records", "original categories merged", "which"], rows
            )
    return out


def _leak_text(block: dict) -> str:
    """yes, no, or why it cannot be decided (escaped)."""
    if block["leak"] is None:
        return "cannot be decided (" + e(block.get("leak_cause") or "no control file") + ")"
    return "yes" if block["leak"] else "no"


def _synthetic(res) -> str:
    """Per synthetic file: its copies of original records, the attacks' success beyond the
    control file with their intervals, and how far its distributions are (aggregates only)."""
    out = ""
    for v in res.variants:
        block = v.synthetic
        if v.kind != "synthetic" or not block:
            continue
        if "skipped" in block:
            out += f"<h3>{e(v.name)}</h3><p>Skipped: {e(block['skipped'])}.</p>"
            continue
        rows = [
            (name, fmt(a["risk"]), f"{fmt(a['ci'][0])} to {fmt(a['ci'][1])}" if a.get("ci") else "-",
             {True: "yes", False: "no"}.get(a.get("detected"), "-"))
            for name, a in block["attacks"].items()
        ]  # fmt: skip
        dist = block["distribution"]
        out += (
            f"<h3>{e(v.name)}</h3><p>Copies of original records: {fmt_percent(block['exact_copy_share'] or 0.0)}"
            + (f" ({fmt(block['excess_copies'])} beyond the control file)" if block["control"] else "")
            + f". Leak of original records found: {_leak_text(block)}. Distance of the key table: "
            f"total variation {fmt(dist['tv'])}, Hellinger {fmt(dist['hellinger'])}, KL {fmt(dist['kl'])}; pMSE "
            f"{fmt(block['pmse'])} (standardised {fmt(block['s_pmse'])}); mean distance of the one- and two-way "
            f"tables {fmt(block['table_loss'])}.</p>"
        )
        if rows:
            out += _table(["attack", "risk beyond the control", "interval", "success above the baseline"], rows)
    if out:
        out = (
            "<p>A synthetic file's records are not the original's: besides the release rules on its own records, "
            "it is judged by how many original records it copies and by attacks whose success is compared with "
            "the same attacks on original records that were not used to make it (the control file).</p>" + out
        )
    return out


def _pram(res) -> str:
    out = ""
    for v in _protected(res):
        for x, t in v.pram.items():
            cats = t["categories"]
            rows = [(f"{a}", *[f"{p:.4f}" for p in row]) for a, row in zip(cats, t["matrix"])]
            out += f"<h3>{e(v.name)}: {e(x)}</h3>" + _table(["original \\ released", *cats], rows)
            if x in v.ebil:
                out += f"<p>EBIL (expected entropy of the original value given the released one): {fmt(v.ebil[x])} nats.</p>"
    if out:
        out = (
            "<p>Each row gives, for an original category, the probability of each released category. Data users "
            "can correct their estimates with these matrices.</p>" + out
        )
    return out


def _estimates(res) -> str:
    vs = [v for v in _protected(res) if v.estimates is not None]
    if not vs:
        return ""
    out = (
        "<p>The estimates data users will publish, computed on the original and on each variant as a user would "
        "(records whose domain value is missing left out): relative change, and whether the protected estimate "
        "lies in the original estimate's 95 % confidence interval (linearised standard errors, households as "
        "clusters).</p>"
    )
    for v in vs:
        est = v.estimates
        if "skipped" in est:
            out += f"<h3>{e(v.name)}</h3><p>Skipped: {e(est['skipped'])}.</p>"
            continue
        rows = [_estimate_row(r) for r in est["rows"]]
        head = (
            f"{fmt(est['n_estimates'])} estimates; mean absolute change "
            f"{'-' if est.get('mean_abs_relative_change') is None else fmt_percent(est['mean_abs_relative_change'])}; "
            f"outside the original CI: "
            f"{'-' if est.get('share_not_covered') is None else fmt_percent(est['share_not_covered'])}; "
            f"not estimable or not shown: {fmt(est['n_not_estimable'])}."
        )
        table = _table(_ESTIMATE_COLUMNS, rows)
        worst = _table(_ESTIMATE_COLUMNS, [_estimate_row(r) for r in est.get("worst", ())])
        out += (
            f"<h3>{e(v.name)}</h3><p>{e(head)} The largest changes:</p>{worst}<details><summary>all "
            f"{fmt(est['n_estimates'])} estimates</summary>{table}</details>"
        )
    return out


_ESTIMATE_COLUMNS = ["estimate", "variable", "domain", "original", "protected", "relative change", "in the original CI"]


def _estimate_row(r: dict) -> tuple:
    def value(x, side: str) -> str:
        if x is not None:
            return fmt(x)
        reason = r.get("reason") or ""
        return "not shown (few records)" if reason.startswith("fewer than") else "-" if side == "o" else "not estimable"

    return (
        r["kind"],
        r.get("variable") or "-",
        f"{r.get('domain') or '-'}" + (f" = {r['category']}" if r.get("category") is not None else ""),
        value(r["original"], "o"),
        value(r.get("protected"), "p"),
        "-" if r.get("relative_change") is None else fmt_percent(r["relative_change"]),
        {True: "yes", False: "no"}.get(r.get("covered"), "-"),
    )


def _continuous(res) -> str:
    if not res.scenario.get("numeric_keys"):
        return ""
    vs = [v for v in _protected(res) if v.continuous is not None]
    if not vs:
        return (
            "<p>Continuous keys disclose a record when its released values are close to its original ones; give "
            "a protected file or recipes to measure this for a protected version.</p>"
        )
    rows = [
        (
            v.name,
            fmt_share(v.continuous["share_interval_risk"]) if "share_interval_risk" in v.continuous else "left out",
        )
        for v in vs
    ]
    out = (
        "<p>Interval disclosure: a record is at risk when each original value lies within 5 % of a standard "
        "deviation of its released value (Mateo-Sanz, Sebé and Domingo-Ferrer).</p>"
        + _table(["variant", "records at risk (interval disclosure)"], rows)
    )
    # "0" for the unchanged records, then the decades (the first, next to "0", left unlabelled)
    x_labels = ["0", ""] + [
        F.power_of_ten(x) if abs(np.log10(x) - round(np.log10(x))) < 1e-9 else "" for x in PERTURBATION_EDGES[1:-1]
    ]
    y_labels = [str(a) if b - a == 1 else f"{a}-{b - 1}" for a, b in zip(NEIGHBOUR_EDGES[:-1], NEIGHBOUR_EDGES[1:])]
    y_labels.append(f">= {NEIGHBOUR_EDGES[-1]}")
    for i, v in enumerate(vs):
        cp = v.continuous.get("confidentiality")
        if cp is None:
            continue
        svg = F.confidentiality_grid(f"fig-confidentiality-{i + 1}", cp["grid"], x_labels, y_labels)
        if sum(r[0] for r in cp["grid"]) == res.n:
            reading = f"{v.name} leaves the continuous keys unchanged: every record is linked to its original."
        else:
            reading = (
                f"In {v.name}, the true original record lies within the critical distance for "
                f"{fmt_percent(cp['share_partner_in_neighbourhood'])} of the records and is the nearest one for "
                f"{fmt_percent(cp['share_nearest_correct'])}; records in the lower-left cells (little perturbation, "
                "few neighbours) are the easiest to link."
            )
        out += _figure(f"fig-confidentiality-{i + 1}", svg, f"Confidentiality plot (Seri): {v.name}", reading)
    return out


def _notes(res, external: bool = False) -> str:
    notes = [n for n in res.notes if not external or _for_users(n)]
    items = "".join(f"<li>{e(n)}</li>" for n in notes)
    notes_html = f'<section id="notes"><h2>Notes</h2><ul class="notes">{items}</ul></section>' if items else ""
    if external:
        privacy = "This report describes the protection of the released file and its effect on estimates; it holds no record values."
    else:
        privacy = "This report holds aggregates only: counts, shares and risks, and the names of variables" + (
            " (and, as asked, key values of unique cells)." if res.include_records else "; no record values."
        )
    return notes_html + f"<footer><p>{privacy}</p></footer>"


def _for_users(note: str) -> bool:
    """A note a data user needs (about the estimates or the loss), not one about the risk."""
    text = note.lower()
    return ("estimate" in text or "loss" in text) and "risk" not in text


# ----------------------------------------------------------------------------------------------
# the report for data users
# ----------------------------------------------------------------------------------------------
def _external_header(res) -> str:
    from .._version import __version__

    variants = _protected(res)
    lede = f"{fmt(res.n)} records, {fmt(res.n_columns)} variables"
    if variants:
        lede += "; protected version(s): " + ", ".join(e(v.name) for v in variants)
    return (
        f'<header><h1>Protection of the released file</h1><p class="lede">{lede}. Made by sdckit '
        f"{e(__version__)}.</p><p>What was done to the file before its release and how it affects the estimates "
        "users compute from it.</p></header>"
    )


def _what_was_done(res) -> str:
    vs = _protected(res)
    if not vs:
        return "<p>No protection variant was given.</p>"
    rows = [(v.name, "; ".join(v.step_texts) if v.step_texts else ", ".join(v.steps) or "a protected file") for v in vs]
    changed = [
        (
            v.name,
            ", ".join(f"{x} ({c['kind']})" for x, c in v.change_by_variable.items() if c["kind"] != "unchanged") or "-",
        )
        for v in vs
    ]
    return _table(["version", "protection steps"], rows) + _table(["version", "variables changed"], changed)


def _external_loss(res) -> str:
    vs = [v for v in _protected(res) if v.loss is not None]
    if not vs:
        return ""
    columns, rows = loss_table(res)
    sup_rows = [(x, *[fmt(v.suppressed_by_variable.get(x, 0)) for v in vs]) for x in res.loss_scales]
    return (
        "<p>lambda_j is the mean loss of variable j per record, from 0 (unchanged) to 1 (every value lost): for a "
        "category the chance that the released value stands for another one, for a number its change in "
        "standard deviations on a bounded scale.</p>"
        + _table(columns, rows)
        + "<h3>Values suppressed (set to missing) per variable</h3>"
        + _table(["variable", *[v.name for v in vs]], sup_rows)
        + _loss_figure(vs, list(res.loss_scales))
    )


_EXTERNAL = [
    ("done", "What was done", _what_was_done),
    ("information-loss", "Information loss per variable", _external_loss),
    ("estimates", "How the published estimates move", _estimates),
    ("recodes", "Recoded variables: categories before and after", _recodes),
    ("pram", "PRAM transition matrices", _pram),
]
