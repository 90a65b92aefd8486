"""Disclosure risk of continuous variables: interval disclosure (sdcMicro ``dRisk``), the
a-priori relative-interval rule, robust Mahalanobis distance intervals (``dRiskRMD``),
outliers and Seri's confidentiality plot (spec F.3-F.6).

The kernels live in :mod:`sdckit._core.continuous` (SciPy), imported when a measure runs so
that ``import sdckit`` stays light.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .._errors import MissingColumnError, SdcError, SdcWarning
from .._frame import as_table, missing_columns_message
from .._validation import as_name_list
from ..results._base import Result, Summary, new_axes

__all__ = [
    "IntervalDisclosureResult",
    "RelativeIntervalResult",
    "RMDIntervalResult",
    "OutlierResult",
    "ConfidentialityResult",
    "interval_disclosure",
    "relative_interval_risk",
    "rmd_interval_disclosure",
    "outliers",
    "confidentiality_plot",
]


# ----------------------------------------------------------------------------------------------
# validation shared with sdckit.risk.linkage
# ----------------------------------------------------------------------------------------------
def _number(value, param: str, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """A finite number within bounds, else an SdcError naming ``param``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SdcError(f"{param}: got {value!r}; expected a number")
    v = float(value)
    bad = not math.isfinite(v)
    if low is not None:
        bad |= v <= low if low_open else v < low
    if high is not None:
        bad |= v >= high if high_open else v > high
    if bad:
        lo = "" if low is None else ("(" if low_open else "[") + f"{low}"
        hi = "" if high is None else f"{high}" + (")" if high_open else "]")
        rng = f"in {lo}, {hi}" if low is not None and high is not None else (
            f"{'>' if low_open else '>='} {low}" if low is not None else f"{'<' if high_open else '<='} {high}")
        raise SdcError(f"{param}: got {value!r}; expected a finite number {rng}")
    return v


def _column_problems(table, names, file_param) -> list[str]:
    missing = [c for c in names if c not in table.columns]
    if missing:
        raise MissingColumnError(missing_columns_message(f"variables ({file_param})", missing, table.columns))
    return []


def numeric_matrix(table, names, file_param: str, *, allow_missing: bool = True) -> np.ndarray:
    """The named numeric columns of a validated table as a float matrix (a copy; NaN = missing)."""
    problems = []
    for c in names:
        dt = table.column(c).dtype
        if not dt.is_numeric() or dt == pl.Boolean:
            problems.append(f"variables: column {c} of {file_param} has type {dt}; expected numbers")
    if problems:
        raise SdcError(problems[0] if len(problems) == 1 else "invalid input:\n  - " + "\n  - ".join(problems), problems)
    frame = table.frame.select([pl.col(c).cast(pl.Float64) for c in names])
    X = np.array(frame.to_numpy(), dtype=float, copy=True, order="C").reshape(table.n, len(names))
    if np.isinf(X).any():
        bad = [c for j, c in enumerate(names) if np.isinf(X[:, j]).any()]
        raise SdcError(f"variables: column(s) {', '.join(bad)} of {file_param} contain infinite values; expected finite numbers")
    if not allow_missing and np.isnan(X).any():
        bad = [c for j, c in enumerate(names) if np.isnan(X[:, j]).any()]
        raise SdcError(f"variables: column(s) {', '.join(bad)} of {file_param} have missing values; this measure needs "
                       "complete data (drop or impute the records first)")
    return X


def pair_tables(original, protected, variables, *, first="original", second="protected"):
    """Validate an original/protected pair: both readable, the variables present in both and the
    same number of records (row i of one file is row i of the other)."""
    t1 = as_table(original, first)
    t2 = as_table(protected, second)
    names = as_name_list(variables, "variables")
    _column_problems(t1, names, first)
    _column_problems(t2, names, second)
    if t1.n == 0:
        raise SdcError(f"{first}: the table has no records; expected at least one")
    if t2.n != t1.n:
        raise SdcError(f"{second}: has {t2.n} records but {first} has {t1.n}; expected the same records in the "
                       "same order (row i of one file is row i of the other)")
    return t1, t2, names


def numeric_pair(original, protected, variables, *, allow_missing=True, first="original", second="protected"):
    t1, t2, names = pair_tables(original, protected, variables, first=first, second=second)
    X = numeric_matrix(t1, names, first, allow_missing=allow_missing)
    Y = numeric_matrix(t2, names, second, allow_missing=allow_missing)
    return X, Y, names, t1.backend


def _core():
    from .._core import continuous

    return continuous


# ----------------------------------------------------------------------------------------------
# F.3.1 interval disclosure
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class IntervalDisclosureResult(Result):
    """Interval disclosure risk (sdcMicro ``dRisk``, SDID; spec F.3.1).

    Attributes
    ----------
    variables : tuple of str
    k : float
        Half-width of the interval in standard deviations of the protected variable.
    at_risk : ndarray of bool (n,)
        Every comparable original value lies within ``x'_ij +- k sd(x'_j)``.
    inside : ndarray of bool (n, p)
        Per variable: the original value lies in its interval (missing comparisons count as
        inside, as they are skipped).
    protected_sd : dict
        sd (n - 1) of each protected variable.
    n, records_at_risk : int
    risk : float
        Share of records at risk (sdcMicro reports it as the upper bound of "[0 %, 100 risk %]").
    """

    variables: tuple = ()
    k: float = 0.05
    at_risk: np.ndarray = field(default=None, repr=False)
    inside: np.ndarray = field(default=None, repr=False)
    protected_sd: dict = field(default_factory=dict)
    n: int = 0

    @property
    def records_at_risk(self) -> int:
        return int(np.count_nonzero(self.at_risk))

    @property
    def risk(self) -> float:
        return self.records_at_risk / self.n if self.n else 0.0

    def to_dict(self) -> dict:
        return {
            "measure": "interval_disclosure",
            "variables": list(self.variables),
            "k": self.k,
            "n": self.n,
            "records_at_risk": self.records_at_risk,
            "risk": self.risk,
            "risk_interval_percent": [0.0, 100.0 * self.risk],
            "inside_share": {v: float(self.inside[:, j].mean()) for j, v in enumerate(self.variables)},
            "protected_sd": {k: (None if not math.isfinite(v) else v) for k, v in self.protected_sd.items()},
        }

    def summary(self) -> Summary:
        rows = [("records", self.n), ("variables", ", ".join(self.variables)),
                ("k (interval half-width in sd of the protected variable)", self.k),
                ("records at risk", self.records_at_risk),
                ("disclosure risk (upper bound, %)", round(100 * self.risk, 4))]
        per = {"columns": ["variable", "sd (protected)", "original inside interval (%)"],
               "rows": [(v, self.protected_sd[v], round(100 * float(self.inside[:, j].mean()), 2))
                        for j, v in enumerate(self.variables)]}
        return Summary("Interval disclosure (dRisk)", (("", rows), ("Per variable", per)),
                       ("sdcMicro reports the risk as the interval [0 %, upper bound]",))

    def _records(self):
        return {"at_risk": self.at_risk}

    def plot(self, ax=None):
        """Share of original values inside their interval, per variable and for all variables."""
        ax = new_axes(ax)
        labels = list(self.variables) + ["all (at risk)"]
        vals = [100 * float(self.inside[:, j].mean()) for j in range(len(self.variables))] + [100 * self.risk]
        ax.bar(labels, vals, color=["#4C72B0"] * len(self.variables) + ["#C44E52"])
        ax.set_ylabel("records with the original inside the interval (%)")
        ax.set_title(f"Interval disclosure, k = {self.k:g}")
        return ax


def interval_disclosure(original, protected, variables, k: float = 0.05) -> IntervalDisclosureResult:
    r"""Interval disclosure risk (SDID; sdcMicro ``dRisk``).

    Record i is at risk when, for every variable j where both values are observed,

    .. math:: x'_{ij} - k\,s'_j \le x_{ij} \le x'_{ij} + k\,s'_j,

    with s'_j the standard deviation (n - 1, missing values removed) of the protected variable.
    The risk is the share of records at risk (1 for unmodified data). Comparisons with a missing
    value are skipped, so a record with no comparable variable is at risk (sdcMicro).

    Parameters
    ----------
    original, protected : table (pandas, Polars, PyArrow, dict, 2-D NumPy)
        The same records in the same order.
    variables : str or list of str
        Numeric variables present in both.
    k : float, default 0.05
        Half-width of the interval in protected standard deviations (>= 0).

    Returns
    -------
    IntervalDisclosureResult

    References
    ----------
    Spec F.3.1; Mateo-Sanz, Sebe & Domingo-Ferrer (2004), "Outlier protection in continuous
    microdata masking" (SDID); sdcMicro ``dRisk``.
    """
    kk = _number(k, "k", low=0)
    X, Y, names, backend = numeric_pair(original, protected, variables)
    core = _core()
    at_risk, sd = core.interval_at_risk(X, Y, kk)
    with np.errstate(invalid="ignore"):
        inside = ~((X < Y - kk * sd) | (X > Y + kk * sd))
    return IntervalDisclosureResult(variables=tuple(names), k=kk, at_risk=at_risk, inside=inside,
                                    protected_sd={v: float(sd[j]) for j, v in enumerate(names)},
                                    n=X.shape[0], backend=backend)


# ----------------------------------------------------------------------------------------------
# F.3.2 relative-interval rule (a priori)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RelativeIntervalResult(Result):
    """The a-priori relative-interval rule (S000; spec F.3.2).

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
    n : int
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

    @property
    def unsafe_record(self) -> np.ndarray:
        """Records with an unsafe value on some variable (or jointly, when computed)."""
        out = self.unsafe.any(axis=1)
        return out if self.joint_unsafe is None else out | self.joint_unsafe

    @property
    def records_unsafe(self) -> int:
        return int(np.count_nonzero(self.unsafe_record))

    @property
    def share_unsafe(self) -> float:
        return self.records_unsafe / self.n if self.n else 0.0

    def _per_variable(self):
        return [(v, int(self.unsafe[:, j].sum()), int((~np.isnan(self.counts[:, j])).sum()))
                for j, v in enumerate(self.variables)]

    def to_dict(self) -> dict:
        out = {
            "measure": "relative_interval_risk",
            "variables": list(self.variables),
            "keys": list(self.keys),
            "p": self.p,
            "c_min": self.c_min,
            "n": self.n,
            "records_unsafe": self.records_unsafe,
            "share_unsafe": self.share_unsafe,
            "unsafe_values": {v: {"unsafe": u, "observed": o} for v, u, o in self._per_variable()},
        }
        if self.joint_unsafe is not None:
            out["joint"] = {"unsafe": int(self.joint_unsafe.sum()),
                            "evaluated": int((~np.isnan(self.joint_counts)).sum())}
        return out

    def summary(self) -> Summary:
        rows = [("records", self.n), ("variables", ", ".join(self.variables)),
                ("counted within keys", ", ".join(self.keys) if self.keys else "(whole file)"),
                ("interval", f"(x - {self.p:g}|x|, x + {self.p:g}|x|)"),
                ("unsafe when fewer records in the interval than", self.c_min)]
        if self.joint_unsafe is not None:
            rows.append(("records unsafe on all variables jointly", int(self.joint_unsafe.sum())))
        rows += [("records with an unsafe value", self.records_unsafe),
                 ("share of records", round(self.share_unsafe, 6))]
        per = {"columns": ["variable", "observed values", "unsafe values", "unsafe (%)"],
               "rows": [(v, o, u, round(100 * u / o, 3) if o else 0.0) for v, u, o in self._per_variable()]}
        return Summary("Relative-interval rule (a priori)", (("", rows), ("Per variable", per)),
                       ("a value is unsafe when fewer than c_min records (itself included) have a value "
                        "within p times its absolute value",))

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
        vals = [100 * u / o if o else 0.0 for _, u, o in self._per_variable()]
        if self.joint_unsafe is not None:
            ev = int((~np.isnan(self.joint_counts)).sum())
            labels.append("joint")
            vals.append(100 * int(self.joint_unsafe.sum()) / ev if ev else 0.0)
        ax.bar(labels, vals, color="#C44E52")
        ax.set_ylabel("unsafe values (%)")
        ax.set_title(f"Relative-interval rule, p = {self.p:g}, c_min = {self.c_min}")
        return ax


def relative_interval_risk(data, variables, p: float = 0.2, c_min: int = 3, *, joint: bool = False,
                           keys=None) -> RelativeIntervalResult:
    r"""The a-priori relative-interval rule for continuous variables (S000; spec F.3.2).

    For the value :math:`x_{ij}` of record i on variable j,

    .. math:: c_{ij} = \#\{h : x_{hj} \in (x_{ij} - p|x_{ij}|,\ x_{ij} + p|x_{ij}|)\}

    (record i included; a value equal to :math:`x_{ij}` always counts, so a zero counts the
    other zeros although its open interval is empty). The value is unsafe when
    :math:`c_{ij} < c_{min}`: an intruder who knows the value to within the relative error p
    finds fewer than :math:`c_{min}` candidates. Missing values are not counted and are never
    unsafe. ``joint=True`` also counts the records inside the intervals of all variables at
    once (records with a missing value are not evaluated). ``keys`` restricts the counts to
    records with the same combination of categorical keys (exact equality, a missing value
    being its own category) -- the combined categorical/continuous threat S000 describes.

    Unlike :func:`interval_disclosure` this needs no protected file: it screens the data before
    protection.

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict, 2-D NumPy)
    variables : str or list of str
        Numeric variables.
    p : float in (0, 1), default 0.2
        Relative half-width (S000's example).
    c_min : int >= 1, default 3
    joint : bool, default False
    keys : str or list of str, optional
        Categorical keys to count within.

    Returns
    -------
    RelativeIntervalResult

    Notes
    -----
    One sort and two binary searches per variable (O(n log n)); the joint count costs the sum
    over records of their smallest univariate count.

    References
    ----------
    Spec F.3.2; S000 (Mlodak et al.), section on continuous variables.
    """
    pp = _number(p, "p", low=0, high=1, low_open=True, high_open=True)
    if isinstance(c_min, (bool, np.bool_)) or not isinstance(c_min, (int, np.integer)) or c_min < 1:
        raise SdcError(f"c_min: got {c_min!r}; expected an integer >= 1")
    if not isinstance(joint, (bool, np.bool_)):
        raise SdcError(f"joint: got {joint!r}; expected True or False")
    table = as_table(data)
    names = as_name_list(variables, "variables")
    key_names = [] if keys is None else as_name_list(keys, "keys")
    table.require(names, "variables")
    if key_names:
        table.require(key_names, "keys")
        both = sorted(set(names) & set(key_names))
        if both:
            raise SdcError(f"keys: {', '.join(both)} also given as variables; a column is either a categorical key "
                           "or a continuous variable")
    if table.n == 0:
        raise SdcError("data: the table has no records; expected at least one")
    X = numeric_matrix(table, names, "data")
    groups = None
    if key_names:
        from .._core.grouping import group_rows
        from .._encode import encode_keys

        codes = encode_keys(table.frame, key_names).codes
        groups, _ = group_rows(codes.astype(np.int64) + 1)
    core = _core()
    counts = np.column_stack([core.relative_interval_counts(X[:, j], pp, groups) for j in range(len(names))])
    with np.errstate(invalid="ignore"):
        unsafe = counts < int(c_min)
    jc = ju = None
    if joint:
        jc = core.joint_relative_interval_counts(X, pp, groups)
        with np.errstate(invalid="ignore"):
            ju = jc < int(c_min)
    return RelativeIntervalResult(variables=tuple(names), p=pp, c_min=int(c_min), keys=tuple(key_names),
                                  counts=counts, unsafe=unsafe, joint_counts=jc, joint_unsafe=ju,
                                  n=table.n, backend=table.backend)


# ----------------------------------------------------------------------------------------------
# F.4 RMD intervals
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RMDIntervalResult(Result):
    """Robust Mahalanobis distance based interval disclosure (sdcMicro ``dRiskRMD``; spec F.4).

    Attributes
    ----------
    variables : tuple of str
    k, k2 : float
    rmd : ndarray (n,)
        RMD_i = 0.05 sqrt((z_i - c)' C^{-1} (z_i - c)).
    at_risk : ndarray of bool (n,)
        Some protected value lies strictly inside ``z_ij +- k RMD_i`` (RMDID1).
    at_risk_isolated : ndarray of bool (n,)
        At risk and the nearest other protected record is farther than ``k2`` (RMDID2).
    risk1, risk2 : float
        Shares of the two flags.
    wrisk1, wrisk2 : float
        RMD-weighted risks; sdcMicro's definition multiplies the RMD sum by the number of
        flagged records (``weighting="sdcmicro"``), ``weighting="sum"`` does not (spec K.13).
    center, weighting : str
    covariance : ndarray (p, p)
        The robust covariance of the standardised original data that was used.
    mcd_factors : tuple or None
        (raw consistency, raw small-sample, reweighted consistency, reweighted small-sample).
    """

    variables: tuple = ()
    k: float = 0.01
    k2: float = 0.05
    rmd: np.ndarray = field(default=None, repr=False)
    at_risk: np.ndarray = field(default=None, repr=False)
    at_risk_isolated: np.ndarray = field(default=None, repr=False)
    center: str = "mean"
    weighting: str = "sdcmicro"
    covariance: np.ndarray = field(default=None, repr=False)
    mcd_factors: tuple | None = None
    n: int = 0

    def _share(self, flags) -> float:
        return float(np.count_nonzero(flags)) / self.n if self.n else 0.0

    def _weighted(self, flags) -> float:
        if not self.n or not flags.any():
            return 0.0
        s = float(self.rmd[flags].sum())
        return (int(flags.sum()) * s if self.weighting == "sdcmicro" else s) / self.n

    @property
    def risk1(self) -> float:
        return self._share(self.at_risk)

    @property
    def risk2(self) -> float:
        return self._share(self.at_risk_isolated)

    @property
    def wrisk1(self) -> float:
        return self._weighted(self.at_risk)

    @property
    def wrisk2(self) -> float:
        return self._weighted(self.at_risk_isolated)

    def to_dict(self) -> dict:
        return {
            "measure": "rmd_interval_disclosure",
            "variables": list(self.variables),
            "n": self.n,
            "k": self.k,
            "k2": self.k2,
            "center": self.center,
            "weighting": self.weighting,
            "risk1": self.risk1,
            "risk2": self.risk2,
            "wrisk1": self.wrisk1,
            "wrisk2": self.wrisk2,
            "records_at_risk1": int(self.at_risk.sum()),
            "records_at_risk2": int(self.at_risk_isolated.sum()),
            "mcd_factors": list(self.mcd_factors) if self.mcd_factors else None,
        }

    def summary(self) -> Summary:
        rows = [("records", self.n), ("variables", ", ".join(self.variables)),
                ("k (interval factor), k2 (isolation distance)", f"{self.k:g}, {self.k2:g}"),
                ("risk1: share with a value inside its RMD interval", self.risk1),
                ("risk2: ... and isolated among protected records", self.risk2),
                ("wrisk1 (RMD weighted)", self.wrisk1), ("wrisk2 (RMD weighted)", self.wrisk2)]
        notes = ["robust covariance: reweighted MCD of the standardised original data (spec F.4)"]
        if self.weighting == "sdcmicro":
            notes.append("weighted risks multiply the RMD sum by the number of flagged records, as sdcMicro does (spec K.13)")
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


def _standardise(X: np.ndarray, param: str, names) -> np.ndarray:
    sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    bad = [v for v, s in zip(names, sd) if not s > 0]
    if bad:
        raise SdcError(f"variables: column(s) {', '.join(bad)} of {param} are constant; robust distances need "
                       "variables with a positive standard deviation")
    return (X - X.mean(axis=0)) / sd


def rmd_interval_disclosure(original, protected, variables, k: float = 0.01, k2: float = 0.05, *,
                            center: str = "mean", weighting: str = "sdcmicro", covariance=None,
                            mcd_alpha: float = 0.5, seed: int = 0) -> RMDIntervalResult:
    r"""Interval disclosure with robust Mahalanobis distance intervals (sdcMicro ``dRiskRMD``).

    1. Both files are standardised separately (their own means and sds).
    2. C = reweighted MCD covariance of the standardised original data; the centre c is the
       column mean (0, sdcMicro) or the MCD centre (``center="mcd"``).
    3. :math:`RMD_i = 0.05\sqrt{(z_i - c)' C^{-1} (z_i - c)}`.
    4. Record i is at risk (RMDID1) if for **some** variable :math:`z'_{ij}` lies strictly inside
       :math:`z_{ij} \pm k\,RMD_i`; it is at risk and isolated (RMDID2) if moreover the nearest
       other protected record is farther than ``k2`` (Euclidean, standardised; k-d tree).
    5. risk1, risk2 = shares; wrisk = |w| sum_{i in w} RMD_i / n (sdcMicro) or
       sum_{i in w} RMD_i / n (``weighting="sum"``).

    Parameters
    ----------
    original, protected : table
        The same records in the same order; at least two numeric variables, no missing values.
    variables : list of str
    k : float, default 0.01
    k2 : float, default 0.05
    center : {"mean", "mcd"}
    weighting : {"sdcmicro", "sum"}
    covariance : (p, p) array, optional
        Use this robust covariance of the standardised original data instead of the MCD (for
        example robustbase's ``covMcd(scale(x))$cov``, to reproduce sdcMicro digit for digit).
    mcd_alpha : float in [0.5, 1), default 0.5
        MCD subset fraction.
    seed : int, default 0
        Seed of the FAST-MCD random starts (only used when n is large).

    Returns
    -------
    RMDIntervalResult

    Notes
    -----
    The MCD is FAST-MCD with the Croux-Haesbroeck consistency factor and the Pison, Van Aelst &
    Willems (2002) small-sample factor. robustbase (used by sdcMicro) replaces the latter by
    simulated factors for p <= 9 and n <= 20; for such tiny files the robust covariance, hence
    the RMD and the weighted risks, differ from sdcMicro's (the flags usually agree; spec F.4).
    sdcMicro takes the RMDID2 indices from row names; this function uses row positions.

    References
    ----------
    Spec F.4, K.13; Templ & Meindl (2008), "Robust statistics meets SDC", PSD 2008, LNCS 5262;
    Rousseeuw & Van Driessen (1999); Croux & Haesbroeck (1999); Pison et al. (2002).
    """
    kk = _number(k, "k", low=0)
    kk2 = _number(k2, "k2", low=0)
    if center not in ("mean", "mcd"):
        raise SdcError(f"center: got {center!r}; expected 'mean' (sdcMicro) or 'mcd'")
    if weighting not in ("sdcmicro", "sum"):
        raise SdcError(f"weighting: got {weighting!r}; expected 'sdcmicro' or 'sum'")
    a = _number(mcd_alpha, "mcd_alpha", low=0.5, high=1, high_open=True)
    X, Y, names, backend = numeric_pair(original, protected, variables, allow_missing=False)
    n, p = X.shape
    if n <= p + 1:
        raise SdcError(f"original: {n} records for {p} variables; the MCD needs more than p + 1 records")
    zx = _standardise(X, "original", names)
    zy = _standardise(Y, "protected", names)
    core = _core()
    factors = None
    est = None
    if covariance is None or center == "mcd":
        try:
            est = core.mcd(zx, a, seed=seed)
        except np.linalg.LinAlgError:
            raise SdcError("variables: more than half of the original records lie on a hyperplane; the robust "
                           "covariance is singular (drop a collinear variable)") from None
        factors = tuple(float(f) for f in est.factors)
    if covariance is not None:
        C = np.asarray(covariance, dtype=float)
        if C.shape != (p, p) or not np.all(np.isfinite(C)):
            raise SdcError(f"covariance: got shape {C.shape}; expected a finite {p} x {p} matrix")
        factors = None if center == "mean" else factors
    else:
        C = est.cov
    c = np.zeros(p) if center == "mean" else est.center
    try:
        rmd, w, iso = core.rmd_risk(zx, zy, C, c, kk, kk2)
    except np.linalg.LinAlgError:
        raise SdcError("covariance: the robust covariance is singular; expected a positive definite matrix") from None
    return RMDIntervalResult(variables=tuple(names), k=kk, k2=kk2, rmd=rmd, at_risk=w, at_risk_isolated=iso,
                             center=center, weighting=weighting, covariance=C, mcd_factors=factors, n=n,
                             backend=backend)


# ----------------------------------------------------------------------------------------------
# F.5 outliers
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class OutlierResult(Result):
    """Univariate (above a percentile) and multivariate (robust distance) outliers (spec F.5).

    Attributes
    ----------
    variables : tuple of str
    percentile : float
    quantiles : dict
        The percentile of each variable (R type 7, missing values removed).
    flags : ndarray of bool (n, p)
        x_ij > q_j (a missing value is never flagged).
    outlier : ndarray of bool (n,)
        Flagged on some variable.
    robust_distance : ndarray (n,) or None
        sqrt of the squared Mahalanobis distance to the MCD centre with the MCD covariance
        (complete records; NaN otherwise), when ``multivariate=True``.
    cutoff : float or None
        sqrt(chi2_{p, 0.975}).
    """

    variables: tuple = ()
    percentile: float = 0.99
    quantiles: dict = field(default_factory=dict)
    flags: np.ndarray = field(default=None, repr=False)
    robust_distance: np.ndarray | None = field(default=None, repr=False)
    cutoff: float | None = None
    n: int = 0

    @property
    def outlier(self) -> np.ndarray:
        return self.flags.any(axis=1)

    @property
    def share(self) -> float:
        """Share of records flagged on some variable."""
        return float(self.outlier.mean()) if self.n else 0.0

    @property
    def multivariate_outlier(self) -> np.ndarray | None:
        if self.robust_distance is None:
            return None
        with np.errstate(invalid="ignore"):
            return self.robust_distance > self.cutoff

    def to_dict(self) -> dict:
        out = {
            "measure": "outliers",
            "variables": list(self.variables),
            "n": self.n,
            "percentile": self.percentile,
            "quantiles": {k: (None if not math.isfinite(v) else v) for k, v in self.quantiles.items()},
            "share": self.share,
            "records": int(self.outlier.sum()),
            "share_per_variable": {v: float(self.flags[:, j].mean()) for j, v in enumerate(self.variables)},
        }
        if self.robust_distance is not None:
            mv = self.multivariate_outlier
            out["multivariate"] = {"cutoff": self.cutoff, "records": int(mv.sum()), "share": float(mv.mean())}
        return out

    def summary(self) -> Summary:
        rows = [("records", self.n), ("percentile", self.percentile),
                ("records above the percentile on some variable", int(self.outlier.sum())),
                ("share", self.share)]
        if self.robust_distance is not None:
            mv = self.multivariate_outlier
            rows += [("robust distance cutoff sqrt(chi2_p,0.975)", self.cutoff),
                     ("multivariate outliers (robust distance > cutoff)", int(mv.sum()))]
        per = {"columns": ["variable", "quantile", "records above", "percent"],
               "rows": [(v, self.quantiles[v], int(self.flags[:, j].sum()), round(100 * float(self.flags[:, j].mean()), 3))
                        for j, v in enumerate(self.variables)]}
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
            ax.scatter(np.arange(self.n), self.robust_distance, s=6,
                       c=np.where(self.multivariate_outlier, "#C44E52", "#4C72B0"))
            ax.axhline(self.cutoff, color="k", lw=1, ls="--")
            ax.set_xlabel("record")
            ax.set_ylabel("robust distance")
        else:
            ax.bar(list(self.variables), [100 * float(self.flags[:, j].mean()) for j in range(len(self.variables))])
            ax.set_ylabel(f"records above the {self.percentile:g} quantile (%)")
        ax.set_title("Outliers")
        return ax


def outliers(data, variables, percentile: float = 0.99, *, multivariate: bool = False,
             mcd_alpha: float = 0.5, seed: int = 0) -> OutlierResult:
    r"""Records above a percentile (univariate) and robust-distance outliers (multivariate).

    Univariate: :math:`q_j` = ``percentile`` quantile of variable j (R type 7 = NumPy "linear",
    missing values removed); record i is flagged on j when :math:`x_{ij} > q_j`. Multivariate
    (``multivariate=True``): :math:`RD_i = \sqrt{(x_i - \hat\mu)' \hat\Sigma^{-1} (x_i - \hat\mu)}`
    with the reweighted MCD estimates; outlier when :math:`RD_i > \sqrt{\chi^2_{p,0.975}}`.
    Records with a missing value get no robust distance.

    Parameters
    ----------
    data : table
    variables : str or list of str
    percentile : float in (0, 1), default 0.99
        The value sdcMicro's ``addNoise(method="outdect")`` uses.
    multivariate : bool, default False
    mcd_alpha, seed
        MCD subset fraction and seed (multivariate only).

    Returns
    -------
    OutlierResult

    References
    ----------
    Spec F.5; S002 ("Measuring risk", outliers); Rousseeuw & Van Driessen (1999).
    """
    q = _number(percentile, "percentile", low=0, high=1, low_open=True, high_open=True)
    table = as_table(data)
    names = as_name_list(variables, "variables")
    table.require(names, "variables")
    if table.n == 0:
        raise SdcError("data: the table has no records; expected at least one")
    X = numeric_matrix(table, names, "data")
    core = _core()
    flags, qs = core.univariate_outliers(X, q)
    rd = cutoff = None
    if multivariate:
        from scipy import stats

        a = _number(mcd_alpha, "mcd_alpha", low=0.5, high=1, high_open=True)
        ok = ~np.isnan(X).any(axis=1)
        if ok.sum() <= len(names) + 1:
            raise SdcError(f"data: {int(ok.sum())} complete records for {len(names)} variables; the robust distances "
                           "need more than p + 1 complete records")
        try:
            rd, _ = core.robust_distances(X, a, seed=seed)
        except np.linalg.LinAlgError:
            raise SdcError("variables: more than half of the records lie on a hyperplane; the robust covariance is "
                           "singular (drop a collinear or constant variable)") from None
        cutoff = float(np.sqrt(stats.chi2.ppf(0.975, len(names))))
    return OutlierResult(variables=tuple(names), percentile=q, quantiles={v: float(qs[j]) for j, v in enumerate(names)},
                         flags=flags, robust_distance=rd, cutoff=cutoff, n=table.n, backend=table.backend)


# ----------------------------------------------------------------------------------------------
# F.6 Seri's confidentiality plot
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConfidentialityResult(Result):
    """Seri's confidentiality plot (S001; spec F.6).

    Attributes
    ----------
    variables : tuple of str
    alpha : float
    delta : float
        Critical distance: the alpha-quantile z_(ceil(alpha |U|)) of the non-link distances
        z(x, y) = ||y - x|| / ||y||.
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
    """

    variables: tuple = ()
    alpha: float = 0.05
    delta: float = float("nan")
    neighbours: np.ndarray = field(default=None, repr=False)
    perturbation: np.ndarray = field(default=None, repr=False)
    nearest_correct: np.ndarray = field(default=None, repr=False)
    in_neighbourhood: np.ndarray = field(default=None, repr=False)
    exact: bool = True
    log: bool = False
    n: int = 0

    def to_dict(self) -> dict:
        nb = self.neighbours
        pert = self.perturbation[np.isfinite(self.perturbation)]
        return {
            "measure": "confidentiality_plot",
            "variables": list(self.variables),
            "n": self.n,
            "alpha": self.alpha,
            "log": self.log,
            "delta": self.delta,
            "delta_exact": self.exact,
            "share_nearest_correct": float(self.nearest_correct.mean()),
            "share_partner_in_neighbourhood": float(self.in_neighbourhood.mean()),
            "share_empty_neighbourhood": float(np.mean(nb == 0)),
            "share_single_neighbour": float(np.mean(nb == 1)),
            "neighbours_quartiles": [float(v) for v in np.quantile(nb, [0.25, 0.5, 0.75])],
            "perturbation_quartiles": [float(v) for v in np.quantile(pert, [0.25, 0.5, 0.75])] if pert.size else None,
        }

    def unsafe(self, perturbation: float | None = None, neighbours: int | None = None, curve=None) -> np.ndarray:
        """Records below the user's safety rule: perturbation below ``perturbation`` and/or fewer
        than ``neighbours`` neighbours, and/or below ``curve(nb)`` (a function of the number of
        neighbours giving the minimal safe perturbation). Rules given are combined with AND."""
        flag = np.ones(self.n, dtype=bool)
        if perturbation is not None:
            flag &= self.perturbation < float(perturbation)
        if neighbours is not None:
            flag &= self.neighbours < int(neighbours)
        if curve is not None:
            flag &= self.perturbation < np.asarray(curve(self.neighbours.astype(float)), dtype=float)
        if perturbation is None and neighbours is None and curve is None:
            flag[:] = False
        return flag

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [("records", self.n), ("variables", ", ".join(self.variables)), ("alpha", self.alpha),
                ("critical distance delta", self.delta),
                ("nearest original is the true partner (%)", round(100 * d["share_nearest_correct"], 3)),
                ("true partner within delta (%)", round(100 * d["share_partner_in_neighbourhood"], 3)),
                ("empty neighbourhood (%)", round(100 * d["share_empty_neighbourhood"], 3)),
                ("median neighbours", d["neighbours_quartiles"][1])]
        notes = []
        if not self.exact:
            notes.append("delta estimated from 10^7 sampled non-link pairs (n > 20,000)")
        if self.log:
            notes.append("computed on log-transformed values")
        return Summary("Confidentiality plot (Seri)", (("", rows),), tuple(notes))

    def _records(self):
        return {"neighbours": self.neighbours, "perturbation": self.perturbation,
                "nearest_correct": self.nearest_correct, "in_neighbourhood": self.in_neighbourhood}

    def plot(self, ax=None, *, perturbation: float | None = None, neighbours: int | None = None, curve=None,
             log_x: bool = False):
        """The confidentiality plot: number of neighbours (x) against perturbation (y).

        Marks records whose nearest original is the true partner and records whose partner is
        inside the neighbourhood. Safety rules drawn when given: a horizontal line at
        ``perturbation``, a vertical line at ``neighbours``, and ``curve`` (a function of the
        number of neighbours returning the minimal safe perturbation). Records below the rules
        (:meth:`unsafe`) are circled.
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
                ax.scatter(nb[uns], il[uns], s=40, facecolors="none", edgecolors="k", lw=0.8, label="unsafe")
        if log_x:
            ax.set_xscale("symlog")
        ax.set_xlabel("number of neighbours within delta")
        ax.set_ylabel("perturbation ||y - x|| / ||x||")
        ax.set_title(f"Confidentiality plot (alpha = {self.alpha:g}, delta = {self.delta:.4g})")
        ax.legend(fontsize="small")
        return ax


def confidentiality_plot(original, protected, variables, alpha: float = 0.05, *, log: bool = False,
                         seed: int = 0) -> ConfidentialityResult:
    r"""Seri's confidentiality plot: neighbours within the critical distance against perturbation.

    For released y_i and original x_j:

    * perturbation :math:`IL_i = \|y_i - x_i\| / \|x_i\|` (S001 eq. 2);
    * comparison distance :math:`z(x, y) = \|y - x\| / \|y\|`;
    * critical distance :math:`\delta = z_{(\lceil \alpha |U| \rceil)}`, the alpha-quantile of the
      |U| = n(n - 1) non-link distances (exact by a streamed two-pass selection for n <= 20,000;
      above, estimated from 10^7 uniformly sampled non-link pairs with ``seed``);
    * neighbours :math:`nb(y_i) = \#\{x_j : z(x_j, y_i) < \delta\}`;
    * flags: nearest original is the true partner; true partner inside the neighbourhood.

    Parameters
    ----------
    original, protected : table
        The same records in the same order; numeric variables without missing values.
    variables : list of str
    alpha : float in (0, 1), default 0.05
    log : bool, default False
        Work on log-transformed values (S001's example); needs positive values.
    seed : int

    Returns
    -------
    ConfidentialityResult
        ``plot()`` draws the plot with user-set safety rules.

    Notes
    -----
    Time O(n^2 p) for the exact delta, memory O(n) (blocks of at most 4 million distances).

    References
    ----------
    Spec F.6, K.19; Seri (S001), "the confidentiality plot".
    """
    a = _number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    X, Y, names, backend = numeric_pair(original, protected, variables, allow_missing=False)
    if X.shape[0] < 2:
        raise SdcError("original: 1 record; the confidentiality plot needs at least 2 (non-link pairs)")
    if log:
        bad = [v for j, v in enumerate(names) if (X[:, j] <= 0).any() or (Y[:, j] <= 0).any()]
        if bad:
            raise SdcError(f"log: column(s) {', '.join(bad)} have values <= 0; log=True needs positive values")
        X, Y = np.log(X), np.log(Y)
    zero = np.flatnonzero(~np.any(Y != 0, axis=1))
    if zero.size:
        warnings.warn(f"protected: {zero.size} record(s) are all zero, so z(x, y) = ||y - x|| / ||y|| is infinite "
                      "for them (no neighbours)", SdcWarning, stacklevel=2)
    res = _core().confidentiality(X, Y, a, seed=seed)
    return ConfidentialityResult(variables=tuple(names), alpha=a, delta=float(res["delta"]),
                                 neighbours=res["neighbours"], perturbation=res["perturbation"],
                                 nearest_correct=res["nearest_correct"], in_neighbourhood=res["in_neighbourhood"],
                                 exact=bool(res["exact"]), log=bool(log), n=X.shape[0], backend=backend)
