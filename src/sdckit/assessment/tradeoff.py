"""The trade-off of each variant, as aggregates: its loss for every change (per variable, split
into suppressions and other changes), how the estimates data users publish move, the category
tables of recoded variables, the PRAM matrices, and the risk measure its verdict is decided on.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import step

__all__ = [
    "MAX_LISTED_CATEGORIES",
    "NUMERIC_KEY_MIN_VALUES",
    "deciding_rule",
    "estimates_of",
    "loss_of",
    "loss_scales",
    "loss_variables",
    "nominal_pram",
    "pram_tables",
    "recode_tables",
    "risk_rules",
]

#: an integer-coded key with more distinct values than this is read as a number (an age, a
#: year), with fewer as category codes (a region, a status), unless the scenario says otherwise
NUMERIC_KEY_MIN_VALUES = 20
#: a recoded variable's table names the original categories merged into a group up to this many
MAX_LISTED_CATEGORIES = 12


# ----------------------------------------------------------------------------------------------
# loss
# ----------------------------------------------------------------------------------------------
def loss_variables(sc, changed_by_variant) -> list[str]:
    """The variables every variant's loss is measured on: the roles' variables (keys, numeric
    keys, sensitive) and every variable any variant changed (one set for all variants, so that
    their losses compare)."""
    roles = [*sc.keys, *sc.numeric_keys, *sc.sensitive]
    return list(dict.fromkeys([*roles, *(v for changed in changed_by_variant for v in changed)]))


def loss_scales(table, sc, variables, eng) -> dict[str, str]:
    """The measurement scale of each variable: the scenario's, else numeric for numeric keys,
    floating-point columns that are not categorical keys, and numbers with more than
    NUMERIC_KEY_MIN_VALUES values; nominal for the rest. A categorical key is read by its
    values, whatever its storage type: codes stored as floats (an integer-coded key read with
    missing values by pandas) are categories as they are when stored as integers."""
    out = {}
    for v in variables:
        kind = table.kind(v)
        if v in sc.scales:
            out[v] = sc.scales[v]
        elif v in sc.numeric_keys or (kind == "float" and v not in sc.keys):
            out[v] = "numeric"
        elif kind in ("integer", "float") and _n_values(table, v, sc, eng) > NUMERIC_KEY_MIN_VALUES:
            out[v] = "numeric"
        else:
            out[v] = "nominal"
    return out


def nominal_pram(pram, scales) -> dict | None:
    """The PRAM matrices of the variables measured as categories: a PRAMed variable measured
    as a number (an age with many values) has its loss from the distances of its values."""
    kept = {v: m for v, m in (pram or {}).items() if scales.get(v) == "nominal"}
    return kept or None


def _n_values(table, v, sc, eng) -> int:
    _, labels = eng.encode_column(table, v, list(sc.missing) or None)
    return len(eng.label_values(labels))


def loss_of(original, table, variables, scales, sc, pram) -> dict:
    """The loss of every change of one variant (:func:`sdckit.variant_loss`): ``loss`` (the mean
    of the per-variable losses, the x of the risk-utility map), ``loss_by_variable``,
    ``share_by_variable``, ``suppressed_by_variable``, ``change_by_variable``, ``ebil``."""
    from ..utility import variant_loss

    step("information loss of every change")
    matrices = {v: m for v, m in (pram or {}).get("matrices", {}).items() if v in variables}
    res = variant_loss(
        original,
        table,
        list(variables),
        scales=dict(scales),
        missing=list(sc.missing) or None,
        pram=nominal_pram(matrices, scales),
    )
    d = res.to_dict()
    keep = ("loss", "loss_by_variable", "share_by_variable", "suppressed_by_variable", "change_by_variable", "ebil")
    return {k: d.get(k) for k in keep} | {"notes": list(d.get("notes", ()))}


# ----------------------------------------------------------------------------------------------
# estimates
# ----------------------------------------------------------------------------------------------
def estimates_of(original, table, sc, paired: bool = True) -> dict:
    """How the estimates data users publish move (:func:`sdckit.estimates_change`; with
    ``paired=False``, for a file whose records are not the original's, the same comparison
    without the pairing): the rows and the aggregates, or ``{"skipped": reason}``."""
    from .._errors import SdcError
    from ..utility import estimates_change
    from ..utility.estimates import estimates_of_another_file

    step("estimates by domain")
    compare = estimates_change if paired else estimates_of_another_file
    try:
        res = compare(
            original,
            table,
            keys=list(sc.keys) or None,
            variables=list(sc.numeric_keys) or None,
            weight=sc.weight,
            household=sc.household,
            domains=list(sc.domains) or None,
            missing=list(sc.missing) or None,
        )
    except SdcError as exc:
        return {"skipped": f"the estimates could not be compared ({exc})"}
    return res.to_dict()


# ----------------------------------------------------------------------------------------------
# reviewer tables
# ----------------------------------------------------------------------------------------------
def recode_tables(original, table, variables, missing, eng) -> dict:
    """For each recoded variable, one row per released category: its records, the number of
    original categories merged into it and (up to MAX_LISTED_CATEGORIES, for categories that are
    not numbers) their labels; and the records whose value was suppressed. Counts only."""
    out = {}
    for v in variables:
        codes_o, labels_o = eng.encode_column(original, v, missing)
        codes_p, labels_p = eng.encode_column(table, v, missing)
        out[v] = _recode_table(codes_o, eng.label_values(labels_o), codes_p, eng.label_values(labels_p), original, v)
    return out


def _recode_table(codes_o, labels_o, codes_p, labels_p, original, v) -> dict:
    """The cross-table of released and original categories in one pass: each released category's
    records and the original categories in it (with their records)."""
    co, cp = np.asarray(codes_o, dtype=np.int64), np.asarray(codes_p, dtype=np.int64)
    numeric = original.is_numeric(v)
    records = np.bincount(cp[cp >= 0], minlength=len(labels_p))
    both = (cp >= 0) & (co >= 0)
    pairs, counts = np.unique(cp[both] * max(len(labels_o), 1) + co[both], return_counts=True)
    released, members = np.divmod(pairs, max(len(labels_o), 1))
    rows = []
    for j in np.flatnonzero(records):
        mine = released == j
        row = {"category": _text(labels_p[j]), "records": int(records[j]), "n_original_categories": int(mine.sum())}
        if not numeric and mine.sum() <= MAX_LISTED_CATEGORIES:
            row["original_categories"] = [_text(labels_o[m]) for m in members[mine]]
            row["original_records"] = [int(c) for c in counts[mine]]
        rows.append(row)
    return {
        "rows": rows,
        "n_categories_before": int(np.unique(co[co >= 0]).size),
        "n_categories_after": len(rows),
        "n_suppressed": int(np.count_nonzero((co >= 0) & (cp < 0))),
        "original_is_numeric": bool(numeric),
    }


def _text(label) -> str:
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


def pram_tables(pram) -> dict:
    """The published PRAM matrices of a variant, per variable (per variable and stratum for
    PRAM within strata, named ``"variable (stratum s)"``): the categories and the rows
    P(released = column | original = row)."""
    out = {}
    for v, matrix in ((pram or {}).get("matrices") or {}).items():
        if set(matrix) == {"strata", "matrices"}:
            for label, m in matrix["matrices"].items():
                out[f"{v} (stratum {label})"] = _pram_table(m)
        else:
            out[v] = _pram_table(matrix)
    return out


def _pram_table(matrix) -> dict:
    cats = list(matrix)
    return {
        "categories": [_text(c) for c in cats],
        "matrix": [[float(matrix[a].get(b, 0.0)) for b in cats] for a in cats],
    }


# ----------------------------------------------------------------------------------------------
# the risk that decides
# ----------------------------------------------------------------------------------------------
def risk_rules(risk: dict | None, continuous: dict | None, xi: float) -> list[dict]:
    """The release rules of one variant with their values: the individual rate (global risk
    against the target), the household rate (with households) and, with continuous keys only,
    the share of records in the interval-disclosure range (no target)."""
    rules = []
    if risk is not None:
        failing = set(risk["failing"])
        rules.append(_rule("individual rate", risk["global_risk"], xi, "individual risk" not in failing))
        if "household" in risk:
            rules.append(_rule("household rate", risk["household"]["global_risk"], xi, "household rule" not in failing))
    elif continuous and continuous.get("share_interval_risk") is not None:
        rules.append(_rule(INTERVAL_RULE, continuous["share_interval_risk"], None, None))
    return rules


#: the risk of a file with continuous keys only: records whose released values all lie within 5 %
#: of a standard deviation of their original ones (the original itself: every record)
INTERVAL_RULE = "records in the 5 % sd interval"


def _rule(name: str, value, target, meets) -> dict:
    value = None if value is None or not math.isfinite(float(value)) else float(value)
    return {"measure": name, "value": value, "target": target, "meets_target": meets}


def deciding_rule(rules: list[dict]) -> str | None:
    """The rule a file's verdict is decided on: of the rules it fails, the one furthest above its
    target (value / target); if it fails none, the one closest to its target; without targets,
    the first."""
    scored = [r for r in rules if r["target"] and r["value"] is not None]
    if not scored:
        return rules[0]["measure"] if rules else None
    failing = [r for r in scored if not r["meets_target"]]
    return max(failing or scored, key=lambda r: r["value"] / r["target"])["measure"]
