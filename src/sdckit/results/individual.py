"""Results of :func:`sdckit.individual_risk`: individual, global and household
re-identification risk, and the threshold for a target rate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.individual import risk_threshold
from .._deprecation import deprecated_alias
from .._errors import SdcError
from .._validation import check_max_global_risk, check_rule
from ._base import Result, Summary, fmt_share, new_axes, weighted_quantiles
from .frequencies import FrequencyResult

__all__ = ["CALIBRATION_NOTE", "IndividualRiskResult", "RiskThreshold"]

#: What the individual risk tends to be as a file-level estimate (measured by
#: benchmarks/risk_validation.py: eusilcP, 20 samples per setting) and the recommended estimator.
CALIBRATION_NOTE = (
    "on samples with known truth (a synthetic EU-SILC population, fractions 1/10 and 1/50), this risk summed "
    "over the sample uniques was 24 to 71 % below their expected number of correct matches (tau_2): it ranks "
    "records well but understates the file's risk; for the file-level count use sdckit.loglinear_risk "
    '(model="auto"), within 10 % of the truth on average in 55 of 60 settings tried (documentation: risk '
    "calibration)"
)

#: absolute risk levels whose exceedances the summary counts
RISK_LEVELS = (0.01, 0.05, 0.1, 0.2, 0.5)


def _quantiles(x: np.ndarray, counts=None) -> dict:
    """Min, quartiles, max and mean over records (``counts``: records per value)."""
    if x.size == 0:
        return {k: None for k in ("min", "q1", "median", "q3", "max", "mean")}
    q = weighted_quantiles(x, counts, [0.0, 0.25, 0.5, 0.75, 1.0])
    mean = float(np.mean(x)) if counts is None else float(np.dot(x, counts) / np.sum(counts))
    return _quantile_dict(q, mean)


def _quantile_dict(q, mean) -> dict:
    return {
        "min": float(q[0]),
        "q1": float(q[1]),
        "median": float(q[2]),
        "q3": float(q[3]),
        "max": float(q[4]),
        "mean": float(mean),
    }


# ----------------------------------------------------------------------------------------------
# threshold result
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RiskThreshold(Result):
    """Individual-risk threshold for a target re-identification rate and the unsafe records,
    with the mu-ARGUS household rule when households are known.

    Attributes
    ----------
    max_global_risk : float
        Target re-identification rate xi* (expected re-identifications / n).
    threshold : float or None
        r*: records with risk > r* are unsafe; capping their risk at r* brings the rate
        below the target. ``None`` when the file already meets the target (sdcMicro ``NA``),
        0 when no level qualifies (every record unsafe).
    safe : bool
        Every target is met: the individual-risk rate (``threshold is None``) and, with
        households, the household rule (no household left unsafe). ``failing`` names the
        targets that are not met and ``verdict`` says it in a sentence.
    unsafe : ndarray (n,) of bool
        Per record: risk > r* (all False when safe).
    household_threshold : float or None
        r^h*: the household-risk threshold, given by the caller or derived from the target
        with the same rule applied to the household risks; None without households or when
        the household rate already meets the target.
    household_delta : ndarray (n,) or None
        delta_g = r^h* / |g| of the record's household (mu-ARGUS rule).
    household_unsafe : ndarray (n,) of bool or None
        Per record: risk >= delta_g (the household is not guaranteed safe).
    """

    max_global_risk: float = 0.01
    threshold: float | None = None
    unsafe: np.ndarray = field(default=None, repr=False)
    household_threshold: float | None = None
    household_threshold_given: bool = False
    household_delta: np.ndarray | None = field(default=None, repr=False)
    household_unsafe: np.ndarray | None = field(default=None, repr=False)
    risk_result: IndividualRiskResult = field(default=None, repr=False)
    #: records unsafe under the household rule, when counted by an out-of-core engine
    household_unsafe_count: int | None = None

    @property
    def n(self) -> int:
        return self.risk_result.n

    _headline = ("n", "max_global_risk", "threshold", "safe", "n_unsafe")

    @property
    def meets_individual_target(self) -> bool:
        """The individual re-identification rate is at most the target."""
        return self.threshold is None

    @property
    def meets_household_target(self) -> bool | None:
        """With households: no record is unsafe under the household rule (the household rate
        meets the target when the household threshold is derived from it). None without."""
        if self.risk_result.household is None:
            return None
        if self.household_threshold_given:
            return self.n_household_unsafe == 0
        return self.household_threshold is None

    @property
    def failing(self) -> tuple[str, ...]:
        """The targets that are not met: ``"individual risk"``, ``"household rule"``."""
        out = []
        if not self.meets_individual_target:
            out.append("individual risk")
        if self.meets_household_target is False:
            out.append("household rule")
        return tuple(out)

    @property
    def safe(self) -> bool:
        """Every target the user set is met."""
        return not self.failing

    @property
    def verdict(self) -> str:
        """One sentence: whether the file meets the target and, if not, which rule fails."""
        rr = self.risk_result
        target = f"{100 * self.max_global_risk:g} %"
        if self.safe:
            extra = " and the household rule" if rr.household is not None else ""
            return f"The file meets the target re-identification rate of {target} (individual risk{extra})."
        parts = []
        if not self.meets_individual_target:
            parts.append(
                f"the individual risk ({fmt_share(rr.global_risk)} expected re-identification rate; "
                f"{self.n_unsafe:,} record(s) above the threshold)"
            )
        if self.meets_household_target is False:
            hr = rr.household_global_risk
            parts.append(
                f"the household rule (household rate {fmt_share(hr)}; {self.n_household_unsafe:,} record(s) unsafe)"
            )
        return f"The file does NOT meet the target of {target}: it fails on " + " and on ".join(parts) + "."

    @property
    def n_unsafe(self) -> int:
        return self._count(self.unsafe)

    @property
    def indices(self) -> np.ndarray:
        """Row positions (0-based, input order) of the unsafe records."""
        return np.flatnonzero(self.unsafe)

    @property
    def n_household_unsafe(self) -> int | None:
        if self.household_unsafe_count is not None:
            return self.household_unsafe_count
        return None if self.household_unsafe is None else int(np.count_nonzero(self.household_unsafe))

    @property
    def expected_reidentifications_capped(self) -> float:
        """sum_i min(r_i, r*): expected re-identifications once unsafe risks are brought to r*."""
        r = self.risk_result.risk
        return self._total(r if self.threshold is None else np.minimum(r, self.threshold))

    def to_dict(self) -> dict:
        rr = self.risk_result
        out = {
            "measure": "risk_threshold",
            "n": self.n,
            "max_global_risk": self.max_global_risk,
            "threshold": self.threshold,
            "safe": self.safe,
            "failing": list(self.failing),
            "verdict": self.verdict,
            "n_unsafe": self.n_unsafe,
            "expected_reidentifications": rr.expected_reidentifications,
            "expected_reidentifications_capped": self.expected_reidentifications_capped,
        }
        if rr.household is not None:
            out["household_threshold"] = self.household_threshold
            out["household_threshold_given"] = self.household_threshold_given
            out["n_household_unsafe"] = self.n_household_unsafe
        return out

    def summary(self) -> Summary:
        rr = self.risk_result
        rows = [
            ("records", self.n),
            ("target re-identification rate", fmt_share(self.max_global_risk)),
            ("target expected re-identifications (records)", self.max_global_risk * self.n),
            ("expected re-identifications (records)", rr.expected_reidentifications),
        ]
        if self.meets_individual_target:
            rows.append(("individual-risk threshold", "none needed: the individual risk meets the target"))
        else:
            rows += [
                ("individual-risk threshold r*", self.threshold),
                ("records with risk > r* (unsafe)", self.n_unsafe),
                ("expected re-identifications with risks capped at r*", self.expected_reidentifications_capped),
            ]
        sections: list[tuple[str, Any]] = [("", rows)]
        if rr.household is not None:
            hrows = [
                (
                    "household risk threshold r^h*",
                    "none needed: the household rate meets the target"
                    if self.household_threshold is None
                    else self.household_threshold,
                ),
                ("threshold given by the caller", self.household_threshold_given),
            ]
            if self.household_threshold is not None:
                hrows.append(("records with risk >= r^h*/|household| (unsafe)", self.n_household_unsafe))
            sections.append(("Households (mu-ARGUS rule delta_g = r^h*/|g|)", hrows))
        notes = ["threshold rule of mu-ARGUS 4.1 section 2.3.4.1 / sdcMicro measure_threshold"]
        return Summary("Risk threshold", tuple(sections), tuple(notes), headline=self.verdict)

    def _records(self):
        out = {"risk": self.risk_result.risk, "unsafe": self.unsafe}
        if self.household_unsafe is not None:
            out["household_delta"] = self.household_delta
            out["household_unsafe"] = self.household_unsafe
        return out

    def plot(self, ax=None, bins: int = 50):
        """Histogram of the individual risks (log scale) with the threshold r*."""
        return self.risk_result._plot(ax, bins, self.threshold)


# ----------------------------------------------------------------------------------------------
# individual risk result
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class IndividualRiskResult(Result):
    """Individual, global and household re-identification risk.

    Attributes
    ----------
    keys : tuple of str
    strata : tuple of str
    household : str or None
    method : {"approx", "exact"}
    risk : ndarray (n,)
        Individual risk r_i = E(1/F_k | f_k) of each record (input row order).
    household_risk : ndarray (n,) or None
        1 - prod (1 - r_j) over the record's household.
    household_ids : ndarray (n,) of int or None
        Household code of each record (0..n_households-1; records without an id have codes of
        their own). ``household_risk_g``, ``household_size_g`` hold the per-household values.
    frequencies : FrequencyResult
        f_k, F_k (within strata when given) behind the risks.
    n_households : int
    n_clamped : int
        Records whose key has F_k < f_k (weights below 1): p_k clamped to 1, risk 1/f_k.
    n_fractional : int
        Records with fractional f_k (alpha < 1): exact risk (sdcMicro: 0 for 1 < f_k < 2).
    n_missing_household : int
        Records without a household id (each forms its own household).
    pram_adjusted : tuple of str
        The PRAMed key variables the risk accounts for (``pram=``): each risk is
        M_kk E(1/F_k | f_k), M_kk the probability that PRAM kept the record's released
        categories of these variables. Empty: no adjustment.
    """

    keys: tuple = ()
    strata: tuple = ()
    household: str | None = None
    method: str = "approx"
    risk: np.ndarray = field(default=None, repr=False)
    household_risk: np.ndarray | None = field(default=None, repr=False)
    household_ids: np.ndarray | None = field(default=None, repr=False)
    frequencies: FrequencyResult = field(default=None, repr=False)
    pattern_risk: np.ndarray = field(default=None, repr=False)
    pattern_counts: np.ndarray = field(default=None, repr=False)
    household_risk_g: np.ndarray | None = field(default=None, repr=False)
    household_size_g: np.ndarray | None = field(default=None, repr=False)
    n_households: int = 0
    n_clamped: int = 0
    n_fractional: int = 0
    n_missing_household: int = 0
    pram_adjusted: tuple = ()
    #: household aggregates computed by an out-of-core engine (the households stay there)
    household_store: Any = field(default=None, repr=False)

    #: the confidence interval of ER and xi (``ci=True``): confidence, method, draws,
    #: ``expected_reidentifications`` and ``global_risk`` as (low, high)
    ci: dict | None = None

    _headline = ("n", "global_risk", "expected_reidentifications", "household_global_risk")

    records_clamped = deprecated_alias("n_clamped", "records_clamped")
    records_fractional = deprecated_alias("n_fractional", "records_fractional")
    records_missing_household = deprecated_alias("n_missing_household", "records_missing_household")
    sample_uniques = deprecated_alias("n_sample_uniques", "sample_uniques")
    records_above_main_part = deprecated_alias("n_above_main_part", "records_above_main_part")

    # -- per-record views ----------------------------------------------------------------------
    @property
    def fk(self) -> np.ndarray:
        return self.frequencies.fk

    @property
    def Fk(self) -> np.ndarray:
        return self.frequencies.Fk

    @property
    def n(self) -> int:
        return self.frequencies.n

    @property
    def household_size(self) -> np.ndarray | None:
        """Size of the record's household (per record), or None without households."""
        return None if self.household_ids is None else self.household_size_g[self.household_ids]

    @property
    def alpha(self) -> float:
        return self.frequencies.alpha

    @property
    def weighted(self) -> bool:
        return self.frequencies.weighted

    # -- scalars -------------------------------------------------------------------------------
    @property
    def n_sample_uniques(self) -> int:
        """Records with f_k = 1."""
        return self.frequencies.n_sample_uniques

    @property
    def expected_reidentifications(self) -> float:
        """ER = sum_i r_i (sdcMicro ``global_risk_ER``)."""
        return self._total(self.risk)

    @property
    def global_risk(self) -> float:
        """Re-identification rate xi = ER / n (sdcMicro ``global_risk``)."""
        return self.expected_reidentifications / self.n if self.n else 0.0

    @property
    def household_expected_reidentifications(self) -> float | None:
        """ER^h = sum_i r^h_{g(i)} = sum_g |g| r^h_g (sdcMicro ``hier_risk_ER``)."""
        if self.household_store is not None:
            return self.household_store.expected_reidentifications
        if self.household_risk_g is None:
            return None
        return float(np.dot(self.household_size_g, self.household_risk_g))

    @property
    def household_global_risk(self) -> float | None:
        """xi^h = ER^h / n (sdcMicro ``hier_risk``)."""
        er = self.household_expected_reidentifications
        return None if er is None else (er / self.n if self.n else 0.0)

    def n_above(self, level: float) -> int:
        """Number of records with individual risk above ``level``."""
        return self._count(self.risk > level)

    def records_above(self, level: float) -> int:
        """Deprecated name of :meth:`n_above`."""
        from .._deprecation import warn_deprecated as _warn

        _warn("IndividualRiskResult.records_above() is now called n_above()")
        return self.n_above(level)

    @property
    def n_above_main_part(self) -> int:
        """sdcMicro's "observations with higher risk than the main part":
        #{i : r_i > median + 3 MAD and r_i > 0.1} (MAD scaled by 1.4826)."""
        if self.n == 0:
            return 0
        med = float(self._quantiles(self.risk, 0.5)[0])
        mad = 1.4826 * float(self._quantiles(np.abs(self.risk - med), 0.5)[0])
        return self._count((self.risk > med + 3 * mad) & (self.risk > 0.1))

    # -- threshold -----------------------------------------------------------------------------
    def threshold(self, max_global_risk: float = 0.01, *, household_risk: float | None = None) -> RiskThreshold:
        """Individual-risk threshold for a target re-identification rate and, with
        households, the mu-ARGUS household rule.

        Parameters
        ----------
        max_global_risk : float in (0, 1), default 0.01
            Target re-identification rate xi* (sdcMicro ``max_global_risk``).
        household_risk : float in [0, 1], optional
            Household risk threshold r^h*. When omitted it is derived from ``max_global_risk``
            by the same rule applied to the household risks (target rate for xi^h).

        Returns
        -------
        RiskThreshold
            ``threshold`` r* (None: the file already meets the target, 0: every record is
            unsafe), ``unsafe`` = risk > r*; with households ``household_delta`` =
            r^h* / |g| and ``household_unsafe`` = risk >= delta_g.

        Notes
        -----
        Sort the risks decreasingly; at each new, lower risk level v check whether capping
        every higher risk at v gives sum(min(r_i, v)) < xi* n; the first such level is r*
        (mu-ARGUS manual 4.1 section 2.3.4.1; sdcMicro ``measure_threshold``). Computed on the
        distinct levels, O(P log P) for P distinct keys.

        mu-ARGUS household rule: by the union bound r^h_g <= sum_{i in g} r_i, household g is
        safe when every member has r_i < delta_g = r^h* / |g|; the rule over-protects and
        depends on household size.
        """
        xi = check_max_global_risk(max_global_risk)
        r_star = risk_threshold(self.pattern_risk, self.pattern_counts, xi, self.n)
        unsafe = self.risk > r_star if r_star is not None else np.zeros(len(self.risk), dtype=bool)
        h_star = h_delta = h_unsafe = h_count = None
        given = household_risk is not None
        if self.household is not None:
            if given:
                h_star = check_rule("household_risk", household_risk)
            elif self.household_store is not None:
                h_star = self.household_store.threshold(xi, self.n)
            else:
                h_star = risk_threshold(self.household_risk_g, self.household_size_g, xi, self.n)
            if self.household_store is not None:
                h_count = self._household_unsafe_count(h_star)
            elif h_star is not None:
                h_delta = h_star / self.household_size
                h_unsafe = self.risk >= h_delta
            else:
                h_unsafe = np.zeros(self.n, dtype=bool)
        elif given:
            raise SdcError(
                "household_risk: no household column was given to individual_risk(); expected household=<column> there"
            )
        return RiskThreshold(
            max_global_risk=xi,
            threshold=r_star,
            unsafe=unsafe,
            household_threshold=h_star,
            household_threshold_given=given,
            household_delta=h_delta,
            household_unsafe=h_unsafe,
            household_unsafe_count=h_count,
            risk_result=self,
            backend=self.backend,
            row_index=self.row_index,
            row_ids=self.row_ids,
            row_counts=self.row_counts,
            records=self.records,
        )

    def _household_unsafe_count(self, h_star) -> int:
        """Records with r_i >= r^h* / |g| from the engine's (row, household size) counts."""
        if h_star is None:
            return 0
        rows, sizes, counts = self.household_store.row_sizes
        return int(counts[self.risk[rows] >= h_star / sizes].sum())

    # -- Result interface ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {
            "measure": "individual_risk",
            "keys": list(self.keys),
            "strata": list(self.strata),
            "household": self.household,
            "method": self.method,
            "alpha": self.alpha,
            "weighted": self.weighted,
            "n": self.n,
            "n_patterns": self.frequencies.n_patterns,
            "n_sample_uniques": self.n_sample_uniques,
            "n_fk2": self.frequencies.n_fk2,
            "expected_reidentifications": self.expected_reidentifications,
            "global_risk": self.global_risk,
            "risk_distribution": _quantiles(self.risk, self.row_counts),
            "n_above": {f"{lv:g}": self.n_above(lv) for lv in RISK_LEVELS},
            "n_above_main_part": self.n_above_main_part,
            "household_expected_reidentifications": self.household_expected_reidentifications,
            "household_global_risk": self.household_global_risk,
            "n_households": self.n_households if self.household is not None else None,
            "n_clamped": self.n_clamped,
            "n_fractional": self.n_fractional,
            "n_missing_household": self.n_missing_household,
            "pram_adjusted": list(self.pram_adjusted),
        }
        if self.ci is not None:
            out["ci"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.ci.items()}
        if self.household_store is not None:
            hs = self.household_store
            out["household_risk_distribution"] = _quantile_dict(hs.quantiles, hs.mean)
        elif self.household is not None:
            out["household_risk_distribution"] = _quantiles(self.household_risk_g)
        return out

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
        ]
        if self.strata:
            rows.append(("strata (frequencies within)", ", ".join(self.strata)))
        rows += [
            ("weights", "yes" if self.weighted else "no (census: risk = 1/f_k)"),
            ("method", self.method),
            ("alpha (missing-value matching)", self.alpha),
        ]
        if self.pram_adjusted:
            rows.append(("PRAM-adjusted for", ", ".join(self.pram_adjusted)))
        rows += [
            ("sample uniques (f_k = 1)", self.n_sample_uniques),
            ("expected re-identifications (records)", self.expected_reidentifications),
            ("global risk (expected re-identification rate)", fmt_share(self.global_risk)),
        ]
        if self.ci is not None:
            pct = f"{100 * self.ci['confidence']:g} % interval"
            er, xi = self.ci["expected_reidentifications"], self.ci["global_risk"]
            rows += [
                (f"expected re-identifications, {pct}", f"[{er[0]:.6g}, {er[1]:.6g}]"),
                (f"global risk, {pct}", f"[{fmt_share(xi[0])}, {fmt_share(xi[1])}]"),
                ("interval method", f"{self.ci['method']} ({self.ci['draws']} draws)"),
            ]
        dist = d["risk_distribution"]
        dist_table = {
            "columns": ["min", "Q1", "median", "Q3", "max", "mean"],
            "rows": [tuple(dist[k] for k in ("min", "q1", "median", "q3", "max", "mean"))],
        }
        above: dict[str, Any] = {
            "columns": ["risk above", "records", "% of records"],
            "rows": [
                (f"{lv:g}", v, round(100.0 * v / self.n, 2) if self.n else 0.0)
                for lv, v in zip(RISK_LEVELS, d["n_above"].values())
            ],
        }
        above["rows"].append(
            (
                "median + 3 MAD and 0.1",
                d["n_above_main_part"],
                round(100.0 * d["n_above_main_part"] / self.n, 2) if self.n else 0.0,
            )
        )
        sections = [
            ("", rows),
            ("Distribution of individual risk", dist_table),
            ("Records above common risk levels", above),
        ]
        if self.household is not None:
            hd = d["household_risk_distribution"]
            sections.append(
                (
                    "Household risk",
                    [
                        ("household variable", self.household),
                        ("households", self.n_households),
                        (
                            "expected re-identifications (records, household rule)",
                            self.household_expected_reidentifications,
                        ),
                        (
                            "household global risk (expected re-identification rate)",
                            fmt_share(self.household_global_risk),
                        ),
                        ("highest household risk", hd["max"]),
                        ("median household risk (over households)", hd["median"]),
                    ],
                )
            )
        notes = ["risk = E(1/F_k | f_k) under the negative-binomial model (Benedetti-Franconi, mu-ARGUS)"]
        if self.pram_adjusted:
            notes.append(
                "PRAM-adjusted: each risk is multiplied by M_kk, the probability that PRAM kept the record's released "
                f"categories of {', '.join(self.pram_adjusted)} (a changed value gives no correct match; Shlomo & "
                "Skinner 2010); f_k and F_k are those of the released file"
            )
        if self.weighted:
            notes.append(CALIBRATION_NOTE)
        if self.frequencies.n_with_missing and self.frequencies.na_rule == "sdcmicro":
            notes.append("a missing key value matches every category (the sdcMicro rule)")
        if self.n_fractional:
            notes.append(
                f"{self.n_fractional} record(s) have a fractional f_k (alpha < 1): exact risk used "
                "(sdcMicro gives 0 for 1 < f_k < 2 and the approximation above 2)"
            )
        if self.n_clamped:
            notes.append(f"{self.n_clamped} record(s) have F_k < f_k (weights below 1): p_k clamped to 1, risk = 1/f_k")
        if self.n_missing_household:
            notes.append(f"{self.n_missing_household} record(s) without a household id form their own household")
        return Summary("Individual and household re-identification risk", tuple(sections), tuple(notes))

    def _records(self):
        out = {"risk": self.risk, "fk": self.fk, "Fk": self.Fk}
        if self.household_risk is not None:
            out["household_risk"] = self.household_risk
        return out

    def plot(self, ax=None, max_global_risk: float | None = 0.01, bins: int = 50):
        """Histogram of the individual risks on a log scale, with the threshold r* for
        ``max_global_risk`` (none drawn when the file meets the target or with ``None``)."""
        thr = None
        if max_global_risk is not None:
            thr = self.threshold(max_global_risk).threshold
        return self._plot(ax, bins, thr)

    def _plot(self, ax, bins, thr):
        ax = new_axes(ax)
        r = self.risk[self.risk > 0]
        if r.size:
            lo, hi = float(r.min()), float(r.max())
            hi = hi if hi > lo else lo * 1.01
            edges = np.logspace(np.log10(lo), np.log10(hi), bins + 1)
            edges[0], edges[-1] = lo, hi  # rounding of logspace must not drop the extremes
            ax.hist(r, bins=edges, color="#4C72B0")
            ax.set_xscale("log")
        if thr is not None and thr > 0:
            ax.axvline(thr, color="#C44E52", linestyle="--", label=f"threshold r* = {thr:.4g}")
            ax.legend()
        ax.set_xlabel("individual re-identification risk (log scale)")
        ax.set_ylabel("records")
        ax.set_title("Individual risk")
        return ax
