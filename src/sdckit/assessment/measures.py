"""The measures of one variant of a file (the original, a replayed recipe, a protected file),
reduced to aggregates: counts, shares, quantiles and histograms on fixed bins. Nothing here
keeps a per-record value or a category label.
"""

from __future__ import annotations

import math
import threading
import warnings
from contextlib import contextmanager

import numpy as np

from .._errors import SdcError, SdcWarning
from .._progress import step
from ..results.bins import NEIGHBOUR_EDGES, PERTURBATION_EDGES, RISK_EDGES

__all__ = [
    "CONFIDENTIALITY_MAX_N",
    "LOGLINEAR_MAX_CELLS",
    "NEIGHBOUR_EDGES",
    "PERTURBATION_EDGES",
    "RISK_EDGES",
    "capture",
    "categorical_risk",
    "continuous_risk",
    "declared_call",
    "declared_headlines",
    "il1s_of",
    "l_diversity_of",
    "loglinear_of",
    "register_of",
    "suda_of",
]

#: the log-linear model is fitted when the full table of the keys has at most this many cells
LOGLINEAR_MAX_CELLS = 200_000
#: the interval of the global risk is drawn per key pattern (2,000 draws each): above this many
#: patterns (about 3 s) the report leaves it out and says so
CI_MAX_PATTERNS = 50_000
#: the confidentiality plot (O(n^2) distances) is drawn up to this many records
CONFIDENTIALITY_MAX_N = 20_000


#: ``warnings.catch_warnings`` swaps the process's warning state: two captures in two threads
#: (the app's overview and one still winding down after Cancel) would restore each other's
#: state, printing one's warnings and keeping the other's hook; captures take turns instead
_CAPTURE_LOCK = threading.RLock()


@contextmanager
def capture(notes: list, prefix: str = ""):
    """Collect the SdcWarnings raised inside into ``notes`` (they become notes of the report);
    other warnings pass on unchanged. Captures in different threads take turns (the warning
    state is the process's)."""
    with _CAPTURE_LOCK, warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always", SdcWarning)
        yield
    for w in log:
        if issubclass(w.category, SdcWarning):
            text = f"{prefix}{w.message}"
            if text not in notes:
                notes.append(text)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def histogram(values: np.ndarray, edges: np.ndarray) -> list[int]:
    """Counts of ``values`` in the bins ``edges`` (values below the first edge in the first bin,
    above the last in the last)."""
    v = np.clip(np.asarray(values, dtype=float), edges[0], edges[-1])
    counts, _ = np.histogram(v, bins=edges)
    return [int(c) for c in counts]


def _roles(sc) -> dict:
    return {"strata": list(sc.strata) or None, "missing": list(sc.missing) or None}


def categorical_risk(table, sc, ks, max_global_risk: float, pram=None) -> dict:
    """k-anonymity, individual and household risk and the threshold for ``max_global_risk``
    (the mu-ARGUS rule), as aggregates; with ``pram`` (the keep probabilities of the PRAMed
    keys) the individual and household risks are PRAM-adjusted (``pram_adjusted`` names the
    variables)."""
    from ..risk import individual_risk, k_anonymity

    step("individual and household risk")
    extra = {"pram": pram} if pram else {}
    args = dict(weight=sc.weight, household=sc.household, allow_degenerate_keys=True, **_roles(sc), **extra)
    ir = individual_risk(table, list(sc.keys), **args)
    # the interval (without weights the file is the population: nothing to estimate); its
    # draws are per pattern, so the count decides first: the second pass runs only on files of
    # at most CI_MAX_PATTERNS patterns, where it costs a fraction of a second
    n_patterns = ir.frequencies.n_patterns
    if sc.weight is not None and n_patterns <= CI_MAX_PATTERNS:
        ir = individual_risk(table, list(sc.keys), **args, intervals={"ci": True})
    kan = k_anonymity(ir.frequencies, k=list(ks))
    thr = ir.threshold(max_global_risk)
    out = {
        "n": ir.n,
        "n_patterns": ir.frequencies.n_patterns,
        "n_sample_uniques": ir.n_sample_uniques,
        "n_fk2": ir.frequencies.n_fk2,
        "n_with_missing": ir.frequencies.n_with_missing,
        "n_violations": {str(k): v for k, v in kan.n_violations.items()},
        "share_violations": {str(k): v for k, v in kan.share_violations.items()},
        "n_patterns_violating": {str(k): v for k, v in kan.n_patterns_violating.items()},
        "n_weighted_violations": None
        if kan.n_weighted_violations is None
        else {str(k): v for k, v in kan.n_weighted_violations.items()},
        "weighted": ir.weighted,
        "expected_reidentifications": ir.expected_reidentifications,
        "global_risk": ir.global_risk,
        "max_risk": float(ir.risk.max()) if ir.n else 0.0,
        "threshold": thr.threshold,
        "n_unsafe": thr.n_unsafe,
        "safe": thr.safe,
        "failing": list(thr.failing),
        "verdict": thr.verdict,
        "expected_reidentifications_capped": thr.expected_reidentifications_capped,
        "risk_histogram": histogram(ir.risk, RISK_EDGES),
        "pram_adjusted": list(ir.pram_adjusted),
        # the 95 % interval of the expected re-identifications and the global risk (parametric
        # bootstrap of the population frequencies; Rinott and Shlomo 2007), None without weights
        "ci": _ci_of(ir, sc, n_patterns),
    }
    if ir.household is not None:
        out["household"] = {
            "n_households": ir.n_households,
            "expected_reidentifications": ir.household_expected_reidentifications,
            "global_risk": ir.household_global_risk,
            "max_risk": float(ir.household_risk_g.max()) if ir.n_households else 0.0,
            "threshold": thr.household_threshold,
            "n_unsafe": thr.n_household_unsafe,
            "risk_histogram": histogram(ir.household_risk_g, RISK_EDGES),
        }
    return out


def _ci_of(ir, sc, n_patterns: int) -> dict | None:
    """The interval of the global risk, or why it was left out (None without weights)."""
    if sc.weight is None:
        return None
    if ir.ci is None:
        return {
            "skipped": f"{n_patterns:,} key patterns (more than {CI_MAX_PATTERNS:,}); run sdckit.individual_risk(intervals={{'ci': True}})"
        }
    return {k: ir.ci[k] for k in ("confidence", "method", "expected_reidentifications", "global_risk")}


def suda_of(table, sc) -> dict:
    """SUDA's aggregates: records with a minimal sample unique, MSUs by size and each key
    variable's share of the total score (never the per-category contributions, which name
    categories)."""
    from ..risk import suda

    step("SUDA (minimal sample uniques)")
    res = suda(table, list(sc.keys), missing=list(sc.missing) or None, allow_degenerate_keys=True)
    return {
        "n_with_msu": res.n_with_msu,
        "n_special_uniques": res.n_special_uniques,
        "n_msus": res.n_msus,
        "msus_by_size": {str(s): int(c) for s, c in res.msus_by_size.items()},
        "share_contributions": {k: float(v) for k, v in res.share_contributions.items()},
        "dis": None if math.isnan(res.dis) else float(res.dis),
    }


def l_diversity_of(table, sc) -> dict:
    """l-diversity of each sensitive variable: the file's distinct, entropy and recursive l,
    records in classes with fewer than 2 distinct values, and records by distinct l."""
    from ..risk import l_diversity

    step("l-diversity")
    res = l_diversity(table, list(sc.keys), list(sc.sensitive), allow_degenerate_keys=True, **_roles(sc))
    mins, below = res.min, res.n_below(2)
    return {
        "n_classes": res.n_classes,
        "variables": {
            v: {
                "distinct": mins["distinct"][v],
                "entropy": mins["entropy"][v],
                "recursive": mins["recursive"][v],
                "n_not_2_diverse": below[v],
                "n_missing_sensitive": int(res.n_missing_sensitive.get(v, 0)),
                "distinct_distribution": res.distinct_distribution(v, max_l=5),
            }
            for v in res.sensitive
        },
    }


def loglinear_of(table, sc, cards: tuple[int, ...], pram=None) -> dict:
    """tau_1 and tau_2 of the log-linear model (automatic model search) when the design
    weights give the sampling fractions and the full table of the keys is small enough;
    otherwise the reason it was left out. With ``pram`` (the keep probabilities of the PRAMed
    keys) tau_2 is the PRAM-adjusted estimate (``pram_adjusted`` names the variables)."""
    from ..risk import loglinear_risk

    if sc.weight is None:
        return {"skipped": "no design weight: the log-linear model needs the sampling fractions"}
    cells = math.prod(int(c) for c in cards)
    if cells > LOGLINEAR_MAX_CELLS:
        return {
            "skipped": f"the full table of the keys has {cells:,} cells (more than {LOGLINEAR_MAX_CELLS:,}); "
            "run sdckit.loglinear_risk with fewer or coarser keys"
        }
    step("log-linear risk (tau1, tau2)")
    try:
        used = {v: d for v, d in (pram or {}).items() if v in sc.keys}
        extra = {"pram": used} if used else {}
        res = loglinear_risk(table, list(sc.keys), weight=sc.weight, missing=list(sc.missing) or None, **extra)
    except (SdcError, ArithmeticError, np.linalg.LinAlgError) as exc:
        return {"skipped": f"the model could not be fitted ({exc})"}
    return {
        "pram_adjusted": sorted(used),
        "n_cells": res.n_cells,
        "n_used": res.n_used,
        "n_excluded": res.n_excluded,
        "n_sample_uniques": res.n_sample_uniques,
        "tau1": _finite(res.tau1),
        "tau2": _finite(res.pram["tau2"] if res.pram else res.tau2),
        "tau2_unadjusted": _finite(res.tau2) if res.pram else None,
        "share_tau1_uniques": _finite(res.share_tau1_uniques),
        "share_tau2_uniques": _finite(res.pram["share_tau2_uniques"] if res.pram else res.share_tau2_uniques),
        "model": res.model_choice,
        **_loglinear_interval(res),
    }


def _loglinear_interval(res) -> dict:
    """The interval of tau1 and tau2 that carries the model choice (a PRAM-adjusted tau2's
    interval is the unadjusted one scaled by the adjustment) and why the estimate is weak."""
    iv = res.interval or {}
    scale = res.pram["tau2"] / res.tau2 if res.pram and res.tau2 > 0 else 1.0
    return {
        "tau1_interval": [_finite(x) for x in iv["tau1"]] if "tau1" in iv else None,
        "tau2_interval": [_finite(x * scale) for x in iv["tau2"]] if "tau2" in iv else None,
        "confidence": iv.get("confidence"),
        "weak": list(res.weak),
    }


def register_of(table, sc, reference) -> dict:
    """The register measures (Shlomo & Skinner 2022, approach B) of a register of a
    subpopulation against a sample of the whole population: ``reference`` = (sample,
    sample_weight, sampling_fraction). Aggregates only; the reason when it cannot be estimated."""
    from ..risk import register_risk

    sample, weight, fraction = reference
    step("register risk (tau1*, tau2*, theta)")
    try:
        res = register_risk(
            table,
            sample,
            list(sc.keys),
            sample_weight=weight,
            sampling_fraction=fraction,
            missing=list(sc.missing) or None,
        )
    except (SdcError, ArithmeticError, np.linalg.LinAlgError) as exc:
        return {"skipped": f"the register model could not be fitted ({exc})"}
    out = {
        k: _finite(getattr(res, k))
        for k in ("tau1_star", "tau2_star", "tau1", "tau2", "theta_hat", "share_tau1_star", "share_tau2_star")
    }
    return {
        "n_register": res.n_register,
        "n_sample": res.n_sample,
        "n_register_uniques": res.n_register_uniques,
        "n_both_uniques": res.n_both_uniques,
        **out,
    }


def _finite(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def _kind(table, name: str) -> str:
    kind = table.kind(name)
    return "text" if kind in ("text", "categorical") else "number" if kind in ("integer", "float") else kind


def il1s_of(original, table, sc) -> dict:
    """IL1s of the continuous keys (sum |x - x'| / (sqrt 2 S_j), unit-free; sdcMicro's
    ``dUtility``) in total and per variable; a continuous key whose type changed (recoded to
    intervals) is left out with its name."""
    from ..utility import information_loss

    variables = [v for v in sc.numeric_keys if _kind(original, v) == _kind(table, v) == "number"]
    excluded = [v for v in sc.numeric_keys if v not in variables]
    if not variables:
        return {"il1s": None, "il1s_by_variable": {}, "excluded": excluded}
    step("IL1s of the continuous keys")
    il = information_loss(
        original,
        table,
        variables,
        scales="continuous",
        missing=list(sc.missing) or None,
        measures={"ctbil_dim": 0, "anova": None},
    )
    return {
        "il1s": None if il.il1s is None else float(il.il1s),
        "il1s_by_variable": {v: float(x) for v, x in il.il1s_by_variable.items()},
        "excluded": excluded,
    }


def continuous_risk(original, table, sc, notes: list) -> dict:
    """Interval disclosure and, up to CONFIDENTIALITY_MAX_N records, Seri's confidentiality
    plot reduced to a 2-D histogram (perturbation against neighbours on fixed bins)."""
    from ..risk import confidentiality_plot, interval_disclosure

    variables = list(sc.numeric_keys)
    step("interval disclosure")
    try:
        idr = interval_disclosure(original, table, variables)
    except SdcError as exc:  # e.g. a recipe recoded a continuous key into intervals
        notes.append(f"continuous-key risk left out: {exc}")
        return {}
    out: dict = {"share_interval_risk": float(idr.share_at_risk), "n_interval_risk": int(np.count_nonzero(idr.at_risk))}
    if table.n > CONFIDENTIALITY_MAX_N:
        notes.append(
            f"confidentiality plot left out: {table.n:,} records (it compares all pairs; at most "
            f"{CONFIDENTIALITY_MAX_N:,} here)"
        )
        return out
    step("confidentiality plot")
    try:
        cp = confidentiality_plot(original, table, variables, seed=0)
    except SdcError as exc:
        notes.append(f"confidentiality plot left out: {exc}")
        return out
    d = cp.to_dict()
    out["confidentiality"] = {
        "delta": d["delta"],
        "share_nearest_correct": d["share_nearest_correct"],
        "share_partner_in_neighbourhood": d["share_partner_in_neighbourhood"],
        "share_empty_neighbourhood": d["share_empty_neighbourhood"],
        "grid": _grid(cp.perturbation, cp.neighbours),
    }
    return out


def _grid(perturbation: np.ndarray, neighbours: np.ndarray) -> list[list[int]]:
    """Records per (neighbour bin, perturbation bin): rows NEIGHBOUR_EDGES (last open), columns
    "0" then PERTURBATION_EDGES (out-of-range values in the end bins; an infinite perturbation
    in the last)."""
    p = np.nan_to_num(np.asarray(perturbation, dtype=float), nan=0.0, posinf=PERTURBATION_EDGES[-1])
    col = np.where(p <= 0, 0, 1 + np.clip(np.searchsorted(PERTURBATION_EDGES, p, side="right") - 1, 0, 19))
    row = np.searchsorted(np.asarray(NEIGHBOUR_EDGES), np.asarray(neighbours), side="right") - 1
    grid = np.zeros((len(NEIGHBOUR_EDGES), len(PERTURBATION_EDGES)), dtype=np.int64)
    np.add.at(grid, (row, col), 1)
    return grid.tolist()


# ----------------------------------------------------------------------------------------------
# a measure of the table with no section of its own: called as declared
# ----------------------------------------------------------------------------------------------
def declared_call(entry, original, table, sc):
    """The result of the table's measure ``entry`` on ``table`` (against ``original`` for a
    measure of a variant): its public function given the scenario (which fills every parameter
    whose declared role the scenario sets) and the entry's ``call`` arguments."""
    from .. import registry

    func = registry.get(entry.name).func
    args = (original, table) if entry.variants_only else (table,)
    return func(*args, scenario=sc, **entry.call)


def declared_headlines(entry, original, table, sc) -> dict:
    """The headlines of ``entry`` on ``table`` whose roles the scenario sets, each as
    ``{"value", "meaning", "better"}`` (a plain number), for the assessment's ``measures``."""
    step(entry.name.replace("_", " "))
    res = declared_call(entry, original, table, sc)
    return {
        h.name: {"value": plain_number(getattr(res, h.attribute)), "meaning": h.meaning, "better": h.better}
        for h in entry.headlines
        if all(getattr(sc, r) for r in h.needs)
    }


def plain_number(value):
    """A headline as a plain number (a mapping of numbers stays a mapping; NaN as None)."""
    if isinstance(value, dict):
        return {str(k): plain_number(v) for k, v in value.items()}
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    return _finite(value)
