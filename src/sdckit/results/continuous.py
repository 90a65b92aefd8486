"""Result objects of the continuous-variable risk measures (:mod:`sdckit.risk.continuous`).

Headline names follow the glossary: counts of records are ``n_*``, fractions in [0, 1] are
``share_*``; ``to_dict()`` holds no percentage (the printed summaries show percentages and
say so). Old attribute names keep working for one release with a ``DeprecationWarning``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._deprecation import deprecated_alias, renamed_parameters
from .._validation import check_rule
from ._base import Result, Summary, fmt_percent, fmt_share, new_axes

__all__ = [
    "ConfidentialityResult",
    "IntervalDisclosureResult",
    "OutlierResult",
    "RMDIntervalResult",
    "RelativeIntervalResult",
]


def _finite_or_none(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _plain(d: dict) -> dict:
    """A nested dict of per-variable facts with plain lists (JSON)."""
    return {k: {a: (list(b) if isinstance(b, tuple) else b) for a, b in v.items()} for k, v in d.items()}


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


# ----------------------------------------------------------------------------------------------
# interval disclosure (sdcMicro dRisk)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class IntervalDisclosureResult(Result):
    """Interval disclosure risk (sdcMicro ``dRisk``, SDID).

    Attributes
    ----------
    variables : tuple of str
    width : float
        Half-width of the interval in standard deviations of the protected variable.
    at_risk : ndarray of bool (n,)
        Every comparable original value lies within ``x'_ij +- width sd(x'_j)``.
    inside : ndarray of bool (n, p)
        Per variable: the original value lies in its interval (missing comparisons count as
        inside, as they are skipped).
    protected_sd : dict
        sd (n - 1) of each protected variable.
    n, n_at_risk : int
    share_at_risk : float
        Share of records at risk, in [0, 1] (sdcMicro prints it as the upper bound of
        "[0 %, 100 * share %]").
    interval : {"sd", "rank", "entropy"}
        The kind of interval.
    interval_info : dict
        Per variable: ``rank_halfwidth`` (rank intervals), or ``precision`` (2 width sd),
        ``entropy_bits``, ``entropy_risk`` (2^-H), ``n_groups`` and ``top_group_share``
        (entropy intervals); empty for sd intervals.
    """

    variables: tuple = ()
    width: float = 0.05
    at_risk: np.ndarray = field(default=None, repr=False)
    inside: np.ndarray = field(default=None, repr=False)
    protected_sd: dict = field(default_factory=dict)
    n: int = 0
    interval: str = "sd"
    interval_info: dict = field(default_factory=dict)

    _headline = ("n", "width", "n_at_risk", "share_at_risk")

    @property
    def n_at_risk(self) -> int:
        return int(np.count_nonzero(self.at_risk))

    @property
    def share_at_risk(self) -> float:
        return _share(self.n_at_risk, self.n)

    def share_inside(self) -> dict:
        """Per variable, the share of original values inside their interval."""
        return {v: float(self.inside[:, j].mean()) if self.n else 0.0 for j, v in enumerate(self.variables)}

    k = deprecated_alias("width", "k")
    records_at_risk = deprecated_alias("n_at_risk", "records_at_risk")
    risk = deprecated_alias("share_at_risk", "risk")

    def to_dict(self) -> dict:
        return {
            "measure": "interval_disclosure",
            "variables": list(self.variables),
            "width": self.width,
            "n": self.n,
            "n_at_risk": self.n_at_risk,
            "share_at_risk": self.share_at_risk,
            "share_inside": self.share_inside(),
            "protected_sd": {k: _finite_or_none(v) for k, v in self.protected_sd.items()},
            "interval": self.interval,
            **({"interval_info": _plain(self.interval_info)} if self.interval != "sd" else {}),
        }

    def summary(self) -> Summary:
        if self.interval != "sd":
            return self._variant_summary()
        rows = [
            ("records", self.n),
            ("variables", ", ".join(self.variables)),
            ("width (interval half-width, in sd of the protected variable)", self.width),
            ("records at risk", self.n_at_risk),
            ("share at risk (upper bound of the risk)", fmt_share(self.share_at_risk)),
        ]
        inside = self.share_inside()
        per = {
            "columns": ["variable", "sd (protected)", "original inside its interval (% of records)"],
            "rows": [(v, self.protected_sd[v], fmt_percent(inside[v])) for v in self.variables],
        }
        return Summary(
            "Interval disclosure (dRisk)",
            (("", rows), ("Per variable", per)),
            ("sdcMicro reports the risk as the interval [0 %, 100 x share at risk %]",),
        )

    def _variant_summary(self) -> Summary:
        """Rank or entropy intervals."""
        rank = self.interval == "rank"
        rows = [
            ("records", self.n),
            ("variables", ", ".join(self.variables)),
            ("interval", "ranks" if rank else "minimal-entropy precision interval"),
            ("width", f"{self.width:g}" + (" (share of the records)" if rank else " (precision 2 x width x sd)")),
            ("records at risk", self.n_at_risk),
            ("share at risk", fmt_share(self.share_at_risk)),
        ]
        inside = self.share_inside()
        info = self.interval_info
        table: list[tuple]
        if rank:
            cols = ["variable", "rank half-width", "original inside (% of records)"]
            table = [(v, info[v]["rank_halfwidth"], fmt_percent(inside[v])) for v in self.variables]
        else:
            cols = ["variable", "entropy (bits)", "entropy risk 2^-H", "groups", "original inside (% of records)"]
            table = [
                (v, info[v]["entropy_bits"], info[v]["entropy_risk"], info[v]["n_groups"], fmt_percent(inside[v]))
                for v in self.variables
            ]
        return Summary("Interval disclosure", (("", rows), ("Per variable", {"columns": cols, "rows": table})))

    def _records(self):
        return {"at_risk": self.at_risk}

    def plot(self, ax=None):
        """Share of original values inside their interval, per variable and for all variables."""
        ax = new_axes(ax)
        inside = self.share_inside()
        labels = list(self.variables) + ["all (at risk)"]
        vals = [100 * inside[v] for v in self.variables] + [100 * self.share_at_risk]
        ax.bar(labels, vals, color=["#4C72B0"] * len(self.variables) + ["#C44E52"])
        ax.set_ylabel("records with the original inside the interval (%)")
        ax.set_title(f"Interval disclosure, width = {self.width:g}")
        return ax


# ----------------------------------------------------------------------------------------------
# relative-interval rule (a priori)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RelativeIntervalResult(Result):
    """The a-priori relative-interval rule.

    Attributes
    ----------
    variables : tuple of str
    p : float
        Relative half-width of the interval: ``(x - p|x|, x + p|x|)``.
    c_min : int
        A value with fewer than ``c_min`` records in its interval is unsafe.
    keys : tuple of str
        Categorical keys within which records are counted (empty: the whole file).
    counts : ndarray (n, p)
        Records whose value lies in the interval of record i (record i included); NaN where
        the value is missing.
    unsafe : ndarray of bool (n, p)
        ``counts < c_min`` (a missing value is never unsafe).
    joint_counts : ndarray (n,) or None
        With ``joint=True``: records inside the intervals of record i on every variable at once
        (NaN for records with a missing value).
    joint_unsafe : ndarray of bool (n,) or None
    n, n_unsafe : int
        Records, and records with an unsafe value (or unsafe jointly).
    share_unsafe : float
    """

    variables: tuple = ()
    p: float = 0.2
    c_min: int = 3
    keys: tuple = ()
    counts: np.ndarray = field(default=None, repr=False)
    unsafe: np.ndarray = field(default=None, repr=False)
    joint_counts: np.ndarray | None = field(default=None, repr=False)
    joint_unsafe: np.ndarray | None = field(default=None, repr=False)
    n: int = 0

    _headline = ("n", "p", "c_min", "n_unsafe", "share_unsafe")

    @property
    def unsafe_record(self) -> np.ndarray:
        """Records with an unsafe value on some variable (or jointly, when computed)."""
        out = np.asarray(self.unsafe.any(axis=1))
        return out if self.joint_unsafe is None else out | self.joint_unsafe

    @property
    def n_unsafe(self) -> int:
        return int(np.count_nonzero(self.unsafe_record))

    @property
    def share_unsafe(self) -> float:
        return _share(self.n_unsafe, self.n)

    records_unsafe = deprecated_alias("n_unsafe", "records_unsafe")

    def _per_variable(self):
        """(variable, unsafe values, observed values) per variable."""
        return [
            (v, int(self.unsafe[:, j].sum()), int((~np.isnan(self.counts[:, j])).sum()))
            for j, v in enumerate(self.variables)
        ]

    def _joint(self) -> tuple[int, int] | None:
        """(records unsafe jointly, records evaluated jointly), or None."""
        if self.joint_unsafe is None:
            return None
        return int(self.joint_unsafe.sum()), int((~np.isnan(self.joint_counts)).sum())

    def to_dict(self) -> dict:
        out = {
            "measure": "relative_interval_risk",
            "variables": list(self.variables),
            "keys": list(self.keys),
            "p": self.p,
            "c_min": self.c_min,
            "n": self.n,
            "n_unsafe": self.n_unsafe,
            "share_unsafe": self.share_unsafe,
            "unsafe_values": {v: {"n_unsafe": u, "n_observed": o} for v, u, o in self._per_variable()},
        }
        joint = self._joint()
        if joint is not None:
            out["joint"] = {"n_unsafe": joint[0], "n_evaluated": joint[1]}
        return out

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("variables", ", ".join(self.variables)),
            ("counted within keys", ", ".join(self.keys) if self.keys else "(whole file)"),
            ("interval", f"(x - {self.p:g}|x|, x + {self.p:g}|x|)"),
            ("unsafe when fewer records in the interval than", self.c_min),
        ]
        joint = self._joint()
        if joint is not None:
            rows.append(("records unsafe on all variables jointly", joint[0]))
        rows += [("records with an unsafe value", self.n_unsafe), ("share of records", fmt_share(self.share_unsafe))]
        per = {
            "columns": ["variable", "observed values", "unsafe values", "unsafe (% of observed)"],
            "rows": [(v, o, u, fmt_percent(_share(u, o))) for v, u, o in self._per_variable()],
        }
        return Summary(
            "Relative-interval rule (a priori)",
            (("", rows), ("Per variable", per)),
            (
                "a value is unsafe when fewer than c_min records (itself included) have a value "
                "within p times its absolute value",
            ),
        )

    def _records(self):
        out = {}
        for j, v in enumerate(self.variables):
            out[f"count_{v}"] = self.counts[:, j]
            out[f"unsafe_{v}"] = self.unsafe[:, j]
        if self.joint_counts is not None:
            out["count_joint"] = self.joint_counts
            out["unsafe_joint"] = self.joint_unsafe
        out["unsafe"] = self.unsafe_record
        return out

    def plot(self, ax=None):
        """Share of unsafe values per variable (and jointly)."""
        ax = new_axes(ax)
        labels = [v for v, _, _ in self._per_variable()]
        vals = [100 * _share(u, o) for _, u, o in self._per_variable()]
        joint = self._joint()
        if joint is not None:
            labels.append("joint")
            vals.append(100 * _share(*joint))
        ax.bar(labels, vals, color="#C44E52")
        ax.set_ylabel("unsafe values (%)")
        ax.set_title(f"Relative-interval rule, p = {self.p:g}, c_min = {self.c_min}")
        return ax


# ----------------------------------------------------------------------------------------------
# robust Mahalanobis distance intervals (sdcMicro dRiskRMD)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RMDIntervalResult(Result):
    """Robust Mahalanobis distance based interval disclosure (sdcMicro ``dRiskRMD``).

    Attributes
    ----------
    variables : tuple of str
    width : float
        Interval factor: the interval of record i is ``z_ij +- width RMD_i``.
    width2 : float
        Isolation distance (standardised units).
    rmd : ndarray (n,)
        RMD_i = 0.05 sqrt((z_i - c)' C^{-1} (z_i - c)).
    at_risk : ndarray of bool (n,)
        Some protected value lies strictly inside ``z_ij +- width RMD_i`` (sdcMicro's RMDID1).
    at_risk_isolated : ndarray of bool (n,)
        At risk and the nearest other protected record is farther than ``width2`` (RMDID2).
    n_at_risk, n_at_risk_isolated : int
    share_at_risk, share_at_risk_isolated : float
        Shares of the two flags, in [0, 1] (sdcMicro's ``risk1``, ``risk2``).
    wrisk1, wrisk2 : float
        sdcMicro's RMD-weighted risks. With ``weighting="sdcmicro"``:
        ``|w| * sum_{i in w} RMD_i / n`` (w the flagged records): not a share and not bounded
        by 1; it grows with the number of records flagged (about n x the mean RMD when every
        record is flagged). With ``weighting="sum"``: ``sum_{i in w} RMD_i / n``, the mean RMD
        of the file counting unflagged records as 0.
    center, weighting : str
    covariance : ndarray (p, p)
        The robust covariance of the standardised original data that was used.
    mcd_factors : tuple or None
        (raw consistency, raw small-sample, reweighted consistency, reweighted small-sample).
    """

    variables: tuple = ()
    width: float = 0.01
    width2: float = 0.05
    rmd: np.ndarray = field(default=None, repr=False)
    at_risk: np.ndarray = field(default=None, repr=False)
    at_risk_isolated: np.ndarray = field(default=None, repr=False)
    center: str = "mean"
    weighting: str = "sdcmicro"
    covariance: np.ndarray = field(default=None, repr=False)
    mcd_factors: tuple | None = None
    n: int = 0

    _headline = ("n", "share_at_risk", "share_at_risk_isolated", "wrisk1", "wrisk2")

    def _weighted(self, flags) -> float:
        if not self.n or not flags.any():
            return 0.0
        s = float(self.rmd[flags].sum())
        return (int(flags.sum()) * s if self.weighting == "sdcmicro" else s) / self.n

    @property
    def n_at_risk(self) -> int:
        return int(np.count_nonzero(self.at_risk))

    @property
    def n_at_risk_isolated(self) -> int:
        return int(np.count_nonzero(self.at_risk_isolated))

    @property
    def share_at_risk(self) -> float:
        return _share(self.n_at_risk, self.n)

    @property
    def share_at_risk_isolated(self) -> float:
        return _share(self.n_at_risk_isolated, self.n)

    @property
    def wrisk1(self) -> float:
        return self._weighted(self.at_risk)

    @property
    def wrisk2(self) -> float:
        return self._weighted(self.at_risk_isolated)

    k = deprecated_alias("width", "k")
    k2 = deprecated_alias("width2", "k2")
    risk1 = deprecated_alias("share_at_risk", "risk1")
    risk2 = deprecated_alias("share_at_risk_isolated", "risk2")

    def to_dict(self) -> dict:
        return {
            "measure": "rmd_interval_disclosure",
            "variables": list(self.variables),
            "n": self.n,
            "width": self.width,
            "width2": self.width2,
            "center": self.center,
            "weighting": self.weighting,
            "n_at_risk": self.n_at_risk,
            "n_at_risk_isolated": self.n_at_risk_isolated,
            "share_at_risk": self.share_at_risk,
            "share_at_risk_isolated": self.share_at_risk_isolated,
            "wrisk1": self.wrisk1,
            "wrisk2": self.wrisk2,
            "mean_rmd": float(self.rmd.mean()) if self.n else None,
            "mcd_factors": list(self.mcd_factors) if self.mcd_factors else None,
        }

    def _wrisk_label(self) -> str:
        if self.weighting == "sdcmicro":
            return "|w| x sum of RMD over w / n"
        return "sum of RMD over w / n"

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("variables", ", ".join(self.variables)),
            ("width (interval factor), width2 (isolation distance)", f"{self.width:g}, {self.width2:g}"),
            ("share with a value inside its RMD interval (w)", fmt_share(self.share_at_risk)),
            ("... and isolated among protected records (w2)", fmt_share(self.share_at_risk_isolated)),
            ("mean RMD (0.05 x robust distance)", float(self.rmd.mean()) if self.n else None),
            (f"wrisk1 = {self._wrisk_label()}", self.wrisk1),
            ("wrisk2 = same over w2", self.wrisk2),
        ]
        notes = [
            "robust covariance: reweighted MCD of the standardised original data (Templ & Meindl 2008)",
            "share rows are fractions of records (percent in brackets)",
        ]
        if self.weighting == "sdcmicro":
            notes.append(
                "wrisk1 and wrisk2 are sdcMicro's weighted risks: they multiply the RMD sum by the "
                "number of flagged records, so they are scores, not shares, and grow with the file "
                "size (about n x mean RMD when every record is flagged); weighting='sum' drops the "
                "factor"
            )
        return Summary("Robust Mahalanobis distance interval disclosure (dRiskRMD)", (("", rows),), tuple(notes))

    def _records(self):
        return {"rmd": self.rmd, "at_risk": self.at_risk, "at_risk_isolated": self.at_risk_isolated}

    def plot(self, ax=None):
        """RMD of each record (sorted), flagged records highlighted."""
        ax = new_axes(ax)
        order = np.argsort(self.rmd)
        xs = np.arange(self.n)
        ax.plot(xs, self.rmd[order], color="#4C72B0", lw=1, label="RMD")
        f1 = self.at_risk[order]
        f2 = self.at_risk_isolated[order]
        ax.scatter(xs[f1], self.rmd[order][f1], s=12, color="#DD8452", label="at risk (RMDID1)")
        ax.scatter(xs[f2], self.rmd[order][f2], s=18, color="#C44E52", label="at risk and isolated (RMDID2)")
        ax.set_xlabel("records, by increasing RMD")
        ax.set_ylabel("robust Mahalanobis distance x 0.05")
        ax.legend()
        return ax


# ----------------------------------------------------------------------------------------------
# outliers
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class OutlierResult(Result):
    """Univariate (above a quantile) and multivariate (robust distance) outliers.

    Attributes
    ----------
    variables : tuple of str
    quantile : float
        The quantile level, in (0, 1).
    quantile_values : dict
        That quantile of each variable (R type 7, missing values removed).
    flags : ndarray of bool (n, p)
        x_ij > q_j (a missing value is never flagged).
    outlier : ndarray of bool (n,)
        Flagged on some variable.
    n_outliers : int
    share_outliers : float
        Records flagged on some variable, and their share.
    robust_distance : ndarray (n,) or None
        sqrt of the squared Mahalanobis distance to the MCD centre with the MCD covariance
        (complete records; NaN otherwise), when ``multivariate=True``.
    cutoff : float or None
        sqrt(chi2_{p, 0.975}).
    """

    variables: tuple = ()
    quantile: float = 0.99
    quantile_values: dict = field(default_factory=dict)
    flags: np.ndarray = field(default=None, repr=False)
    robust_distance: np.ndarray | None = field(default=None, repr=False)
    cutoff: float | None = None
    n: int = 0

    _headline = ("n", "quantile", "n_outliers", "share_outliers")

    @property
    def outlier(self) -> np.ndarray:
        return np.asarray(self.flags.any(axis=1))

    @property
    def n_outliers(self) -> int:
        return int(np.count_nonzero(self.outlier))

    @property
    def share_outliers(self) -> float:
        """Share of records flagged on some variable."""
        return _share(self.n_outliers, self.n)

    @property
    def multivariate_outlier(self) -> np.ndarray | None:
        if self.robust_distance is None:
            return None
        with np.errstate(invalid="ignore"):
            return self.robust_distance > self.cutoff

    percentile = deprecated_alias("quantile", "percentile")
    quantiles = deprecated_alias("quantile_values", "quantiles")
    share = deprecated_alias("share_outliers", "share")

    def share_per_variable(self) -> dict:
        return {v: float(self.flags[:, j].mean()) if self.n else 0.0 for j, v in enumerate(self.variables)}

    def to_dict(self) -> dict:
        out = {
            "measure": "outliers",
            "variables": list(self.variables),
            "n": self.n,
            "quantile": self.quantile,
            "quantile_values": {k: _finite_or_none(v) for k, v in self.quantile_values.items()},
            "n_outliers": self.n_outliers,
            "share_outliers": self.share_outliers,
            "share_per_variable": self.share_per_variable(),
        }
        if self.robust_distance is not None:
            mv = self.multivariate_outlier
            out["multivariate"] = {
                "cutoff": self.cutoff,
                "n_outliers": int(mv.sum()),
                "share_outliers": _share(int(mv.sum()), self.n),
            }
        return out

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("quantile level", self.quantile),
            ("records above the quantile on some variable", self.n_outliers),
            ("share of records", fmt_share(self.share_outliers)),
        ]
        if self.robust_distance is not None:
            mv = self.multivariate_outlier
            rows += [
                ("robust distance cutoff sqrt(chi2_p,0.975)", self.cutoff),
                ("multivariate outliers (robust distance > cutoff)", int(mv.sum())),
            ]
        shares = self.share_per_variable()
        per = {
            "columns": ["variable", "quantile value", "records above", "% of records"],
            "rows": [
                (v, self.quantile_values[v], int(self.flags[:, j].sum()), fmt_percent(shares[v]))
                for j, v in enumerate(self.variables)
            ],
        }
        return Summary("Outliers", (("", rows), ("Per variable", per)))

    def _records(self):
        out = {f"above_{v}": self.flags[:, j] for j, v in enumerate(self.variables)}
        out["outlier"] = self.outlier
        if self.robust_distance is not None:
            out["robust_distance"] = self.robust_distance
            out["multivariate_outlier"] = self.multivariate_outlier
        return out

    def plot(self, ax=None):
        """Robust distances by record with the cutoff (multivariate), else shares per variable."""
        ax = new_axes(ax)
        if self.robust_distance is not None:
            ax.scatter(
                np.arange(self.n),
                self.robust_distance,
                s=6,
                c=np.where(self.multivariate_outlier, "#C44E52", "#4C72B0"),
            )
            ax.axhline(self.cutoff, color="k", lw=1, ls="--")
            ax.set_xlabel("record")
            ax.set_ylabel("robust distance")
        else:
            shares = self.share_per_variable()
            ax.bar(list(self.variables), [100 * shares[v] for v in self.variables])
            ax.set_ylabel(f"records above the {self.quantile:g} quantile (%)")
        ax.set_title("Outliers")
        return ax


# ----------------------------------------------------------------------------------------------
# Seri's confidentiality plot
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConfidentialityResult(Result):
    """Seri's confidentiality plot.

    Attributes
    ----------
    variables : tuple of str
    significance : float
        The share of non-link pairs allowed below the critical distance.
    delta : float
        Critical distance: the significance-quantile z_(ceil(significance |U|)) of the
        non-link distances z(x, y) = ||y - x|| / ||y||.
    neighbours : ndarray of int (n,)
        nb(y_i): original records x with z(x, y_i) < delta (the true partner included).
    perturbation : ndarray (n,)
        IL_i = ||y_i - x_i|| / ||x_i||.
    nearest_correct : ndarray of bool (n,)
        The nearest original record is the true partner (ties count as correct).
    in_neighbourhood : ndarray of bool (n,)
        The true partner lies in the neighbourhood (z(x_i, y_i) < delta).
    exact : bool
        False when delta was estimated from 10^7 sampled non-link pairs (n > 20,000).
    log : bool
    neighbourhood : {"distance", "fellegi_sunter"}
        Neighbours within delta, or in the Fellegi-Sunter link region (then delta is NaN).
    fellegi_sunter : dict or None
        The Fellegi-Sunter neighbourhood: the bin ``edges`` of z, per bin ``m`` and ``u`` (shares
        of link and non-link pairs), ``n_link_pairs``, ``n_nonlink_pairs`` and ``linked`` (the
        bin is in the link region).
    """

    variables: tuple = ()
    significance: float = 0.05
    delta: float = float("nan")
    neighbours: np.ndarray = field(default=None, repr=False)
    perturbation: np.ndarray = field(default=None, repr=False)
    nearest_correct: np.ndarray = field(default=None, repr=False)
    in_neighbourhood: np.ndarray = field(default=None, repr=False)
    exact: bool = True
    log: bool = False
    n: int = 0
    neighbourhood: str = "distance"
    fellegi_sunter: dict | None = field(default=None, repr=False)

    _headline = ("n", "significance", "delta")

    alpha = deprecated_alias("significance", "alpha")

    def to_dict(self) -> dict:
        nb = self.neighbours
        pert = self.perturbation[np.isfinite(self.perturbation)]
        return {
            "measure": "confidentiality_plot",
            "variables": list(self.variables),
            "n": self.n,
            "significance": self.significance,
            "log": self.log,
            "delta": self.delta,
            "delta_exact": self.exact,
            "share_nearest_correct": float(self.nearest_correct.mean()),
            "share_partner_in_neighbourhood": float(self.in_neighbourhood.mean()),
            "share_empty_neighbourhood": float(np.mean(nb == 0)),
            "share_single_neighbour": float(np.mean(nb == 1)),
            "neighbours_quartiles": [float(v) for v in np.quantile(nb, [0.25, 0.5, 0.75])],
            "perturbation_quartiles": [float(v) for v in np.quantile(pert, [0.25, 0.5, 0.75])] if pert.size else None,
            "neighbourhood": self.neighbourhood,
            **self._fs_dict(),
        }

    def _fs_dict(self) -> dict:
        """The Fellegi-Sunter bins (none with the critical distance); delta is then None."""
        if self.fellegi_sunter is None:
            return {}
        fs = self.fellegi_sunter
        keys = ("m", "u", "n_link_pairs", "n_nonlink_pairs", "linked")
        return {"delta": None, "fs_edges": list(fs["edges"]), **{f"fs_{k}": list(fs[k]) for k in keys}}

    @renamed_parameters(perturbation="min_perturbation", neighbours="min_neighbours")
    def unsafe(
        self, min_perturbation: float | None = None, min_neighbours: int | None = None, curve=None
    ) -> np.ndarray:
        """Records below the user's safety rule: perturbation below ``min_perturbation`` and/or
        fewer than ``min_neighbours`` neighbours, and/or below ``curve(nb)`` (a function of the
        number of neighbours giving the minimal safe perturbation). Rules given are combined
        with AND. (``perturbation=`` and ``neighbours=`` are the old names.)"""
        min_perturbation = check_rule("min_perturbation", min_perturbation, allow_none=True)
        min_neighbours = check_rule("min_neighbours", min_neighbours, allow_none=True)
        flag = np.ones(self.n, dtype=bool)
        if min_perturbation is not None:
            flag &= self.perturbation < min_perturbation
        if min_neighbours is not None:
            flag &= self.neighbours < min_neighbours
        if curve is not None:
            flag &= self.perturbation < np.asarray(curve(self.neighbours.astype(float)), dtype=float)
        if min_perturbation is None and min_neighbours is None and curve is None:
            flag[:] = False
        return flag

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("variables", ", ".join(self.variables)),
            ("significance (share of non-link pairs below delta)", self.significance),
            *self._rule_rows(),
            ("nearest original is the true partner", fmt_share(d["share_nearest_correct"])),
            (
                "true partner within delta" if self.fellegi_sunter is None else "true partner in the link region",
                fmt_share(d["share_partner_in_neighbourhood"]),
            ),
            ("empty neighbourhood", fmt_share(d["share_empty_neighbourhood"])),
            ("median neighbours", d["neighbours_quartiles"][1]),
        ]
        notes = ["shares are fractions of records (percent in brackets)"]
        if not self.exact:
            notes.append("delta estimated from 10^7 sampled non-link pairs (n > 20,000)")
        if self.log:
            notes.append("computed on log-transformed values")
        sections: list[tuple] = [("", rows)]
        if self.fellegi_sunter is not None:
            fs = self.fellegi_sunter
            hi = list(fs["edges"]) + [float("inf")]
            lo = [0.0] + list(fs["edges"])
            table = [
                (f"({a:.4g}, {b:.4g}]", m, u, "link" if k else "")
                for a, b, m, u, k in zip(lo, hi, fs["m"], fs["u"], fs["linked"])
            ]
            sections.append(("m(z) and u(z) per bin of z", {"columns": ["z", "m(z)", "u(z)", "region"], "rows": table}))
        return Summary("Confidentiality plot (Seri)", tuple(sections), tuple(notes))

    def _rule_rows(self) -> list:
        if self.fellegi_sunter is None:
            return [("critical distance delta (relative to ||y||)", self.delta)]
        n_linked = sum(self.fellegi_sunter["linked"])
        return [("neighbourhood", f"Fellegi-Sunter link region ({n_linked} bins of z by m(z)/u(z))")]

    def _records(self):
        return {
            "neighbours": self.neighbours,
            "perturbation": self.perturbation,
            "nearest_correct": self.nearest_correct,
            "in_neighbourhood": self.in_neighbourhood,
        }

    def _draw_rules(self, ax, nb, perturbation, neighbours, curve) -> None:
        if perturbation is not None:
            ax.axhline(float(perturbation), color="k", ls="--", lw=1, label=f"perturbation {perturbation:g}")
        if neighbours is not None:
            ax.axvline(float(neighbours), color="k", ls=":", lw=1, label=f"{neighbours} neighbours")
        if curve is not None:
            grid = np.linspace(0, max(1.0, float(nb.max())), 200)
            ax.plot(grid, curve(grid), color="k", lw=1, label="safety curve")
        if perturbation is not None or neighbours is not None or curve is not None:
            uns = self.unsafe(perturbation, neighbours, curve)
            if uns.any():
                ax.scatter(
                    nb[uns], self.perturbation[uns], s=40, facecolors="none", edgecolors="k", lw=0.8, label="unsafe"
                )

    @renamed_parameters(perturbation="min_perturbation", neighbours="min_neighbours")
    def plot(
        self,
        ax=None,
        *,
        min_perturbation: float | None = None,
        min_neighbours: int | None = None,
        curve=None,
        log_x: bool = False,
    ):
        """The confidentiality plot: number of neighbours (x) against perturbation (y).

        Marks records whose nearest original is the true partner and records whose partner is
        inside the neighbourhood. Safety rules drawn when given: a horizontal line at
        ``min_perturbation``, a vertical line at ``min_neighbours``, and ``curve`` (a function
        of the number of neighbours returning the minimal safe perturbation). Records below the
        rules (:meth:`unsafe`) are circled. (``perturbation=`` and ``neighbours=`` are the old
        names.)
        """
        ax = new_axes(ax)
        nb = self.neighbours.astype(float)
        il = self.perturbation
        cats = [
            (self.nearest_correct, "nearest neighbour is the true partner", "#C44E52", "o"),
            (~self.nearest_correct & self.in_neighbourhood, "true partner in neighbourhood", "#DD8452", "s"),
            (~self.nearest_correct & ~self.in_neighbourhood, "true partner not in neighbourhood", "#4C72B0", "^"),
        ]
        for mask, label, color, marker in cats:
            if mask.any():
                ax.scatter(nb[mask], il[mask], s=10, c=color, marker=marker, label=label, alpha=0.7)
        self._draw_rules(ax, nb, min_perturbation, min_neighbours, curve)
        if log_x:
            ax.set_xscale("symlog")
        fs = self.fellegi_sunter is not None
        ax.set_xlabel("number of neighbours in the link region" if fs else "number of neighbours within delta")
        ax.set_ylabel("perturbation ||y - x|| / ||x||")
        rule = "Fellegi-Sunter neighbourhood" if fs else f"delta = {self.delta:.4g}"
        ax.set_title(f"Confidentiality plot (significance = {self.significance:g}, {rule})")
        ax.legend(fontsize="small")
        return ax
