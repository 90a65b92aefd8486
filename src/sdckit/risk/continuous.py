"""Disclosure risk of continuous variables: interval disclosure (sdcMicro ``dRisk``), the
a-priori relative-interval rule, robust Mahalanobis distance intervals (``dRiskRMD``),
outliers and Seri's confidentiality plot.

Layout: the data-access helpers come first (the only code that touches the caller's tables,
through the engine); then, per measure, the validated input (a frozen dataclass built once at
the boundary), the steps, and the public function. The kernels live in
:mod:`sdckit._core.continuous` (SciPy), imported when a measure runs so that ``import sdckit``
stays light; the result classes live in :mod:`sdckit.results.continuous` and are re-exported
here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._assessed import Assessed, Headline
from .._declare import Param, declare
from .._deprecation import renamed_parameters
from .._errors import SdcError, warn
from .._prepare import Roles
from .._validation import (
    as_name_list,
    check_bins,
    raise_problems,
)
from ..engines import get_engine, in_memory_engine, local_records
from ..results.continuous import (
    ConfidentialityResult,
    IntervalDisclosureResult,
    OutlierResult,
    RelativeIntervalResult,
    RMDIntervalResult,
)
from ..scenario import accepts_scenario

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
# data access: the only functions here that touch the caller's tables (through the engine)
# ----------------------------------------------------------------------------------------------
def read_table(data, param: str = "data", engine=None):
    """The caller's table as the engine holds it."""
    return get_engine(engine).table(data, param)


def _column_problems(table, names, file_param) -> list[str]:
    """Raise :class:`MissingColumnError` for the named columns absent from ``table``."""
    table.require(names, f"variables ({file_param})")
    return []


def numeric_matrix(table, names, file_param: str, *, allow_missing: bool = True) -> np.ndarray:
    """The named numeric columns of a table as a float matrix (a copy; NaN = missing).

    Raises one error for every non-numeric column, and for infinite values (and, with
    ``allow_missing=False``, missing values) naming the columns.
    """
    raise_problems(
        [
            f"variables: column {c} of {file_param} has type {table.dtype_name(c)}; expected numbers"
            for c in names
            if not table.is_numeric(c)
        ]
    )
    X = np.ascontiguousarray(table.floats(names), dtype=float).reshape(table.n, len(names))
    if np.isinf(X).any():
        bad = [c for j, c in enumerate(names) if np.isinf(X[:, j]).any()]
        raise SdcError(
            f"variables: column(s) {', '.join(bad)} of {file_param} contain infinite values; expected finite numbers"
        )
    if not allow_missing and np.isnan(X).any():
        bad = [c for j, c in enumerate(names) if np.isnan(X[:, j]).any()]
        raise SdcError(
            f"variables: column(s) {', '.join(bad)} of {file_param} have missing values; this measure needs "
            "complete data (drop or impute the records first)"
        )
    return X


def pair_tables(original, protected, variables, *, first="original", second="protected", engine=None):
    """Validate an original/protected pair: both readable, the variables present in both and the
    same number of records (row i of one file is row i of the other)."""
    t1 = read_table(original, first, engine)
    t2 = read_table(protected, second, engine)
    names = as_name_list(variables, "variables")
    _column_problems(t1, names, first)
    _column_problems(t2, names, second)
    if t1.n == 0:
        raise SdcError(f"{first}: the table has no records; expected at least one")
    if t2.n != t1.n:
        raise SdcError(
            f"{second}: has {t2.n} records but {first} has {t1.n}; expected the same records in the "
            "same order (row i of one file is row i of the other)"
        )
    return t1, t2, names


@dataclass(frozen=True)
class NumericPair:
    """Validated original/protected matrices (row i of one is row i of the other)."""

    X: np.ndarray
    Y: np.ndarray
    names: list
    backend: str
    row_index: Any = None


def numeric_pair(original, protected, variables, *, allow_missing=True, engine=None) -> NumericPair:
    t1, t2, names = pair_tables(original, protected, variables, engine=engine)
    return NumericPair(
        numeric_matrix(t1, names, "original", allow_missing=allow_missing),
        numeric_matrix(t2, names, "protected", allow_missing=allow_missing),
        names,
        t1.backend,
        t1.index,
    )


@dataclass(frozen=True)
class NumericData:
    """Validated numeric columns of one table, with the categorical key groups if asked for."""

    X: np.ndarray
    names: list
    backend: str
    row_index: Any = None
    groups: np.ndarray | None = None


def numeric_data(data, variables, *, keys=(), missing=(), engine=None) -> NumericData:
    """The numeric ``variables`` of ``data`` as a float matrix, and the group of every record by
    exact equality of the categorical ``keys`` (a missing key value, including the ``missing``
    codes, is one more category)."""
    table = read_table(data, engine=engine)
    names = as_name_list(variables, "variables")
    table.require(names, "variables")
    if keys:
        table.require(keys, "keys")
    if table.n == 0:
        raise SdcError("data: the table has no records; expected at least one")
    X = numeric_matrix(table, names, "data")
    groups = None
    if keys:
        from .._core.grouping import group_rows

        enc = get_engine(engine).encode(table, list(keys), tuple(missing))
        if enc.unused_missing:
            warn(
                f"missing: {', '.join(map(repr, enc.unused_missing))} occur(s) in none of the key columns "
                f"({', '.join(keys)}); check the code and its type (-999 and '-999' differ for a text column)"
            )
        groups, _ = group_rows(enc.codes.astype(np.int64) + 1)
    return NumericData(X, names, table.backend, table.index, groups)


def _core():
    from .._core import continuous

    return continuous


# ----------------------------------------------------------------------------------------------
# interval disclosure (sdcMicro dRisk)
# ----------------------------------------------------------------------------------------------
_INTERVALS = ("sd", "rank", "entropy")


def _interval_flags(pair: NumericPair, interval: str, w: float):
    """Per record and variable: the original value inside its interval, the protected sds and
    the per-variable facts of the interval type."""
    core = _core()
    _, sd = core.interval_at_risk(pair.X, pair.Y, w)
    if interval == "sd":
        with np.errstate(invalid="ignore"):
            inside = ~((pair.X < pair.Y - w * sd) | (pair.X > pair.Y + w * sd))
        return inside, sd, {}
    from .._core.interval_variants import entropy_interval_inside, rank_interval_inside

    if interval == "rank":
        if w > 1:
            raise SdcError(
                f"width: got {w!r}; with interval='rank' it is a share of the records, expected a number in [0, 1]"
            )
        inside, hs = rank_interval_inside(pair.X, pair.Y, w)
        return inside, sd, {v: {"rank_halfwidth": int(h)} for v, h in zip(pair.names, hs)}
    inside, info = entropy_interval_inside(pair.X, pair.Y, w, sd)
    out = {}
    for j, (v, d) in enumerate(zip(pair.names, info)):
        out[v] = {  # the group bounds are one record's error each: not reported
            "precision": float(2 * w * sd[j]) if np.isfinite(sd[j]) else None,
            "entropy_bits": d["entropy_bits"],
            "entropy_risk": 2.0 ** -d["entropy_bits"],
            "n_groups": d["n_groups"],
            "top_group_share": d["top_share"],
        }
    return inside, sd, out


@accepts_scenario
@renamed_parameters(positional=("width",))
@declare(
    "measure",
    Param("variables", "columns", role="numeric_keys"),
    Param("width", "number"),
    Param(
        "interval",
        "choice",
        "The interval: sd multiples around the protected value (dRisk), ranks, or the minimal-entropy precision interval",
        choices=_INTERVALS,
    ),
    inputs=("original", "protected"),
    renamed={"k": "width"},
    assessed=Assessed(
        needs=("numeric_keys",),
        headlines=(
            Headline(
                "share_interval_risk",
                "share of records within 5 % of a standard deviation on every continuous key",
                "lower",
                "share_at_risk",
                label="share in 5 % sd interval",
            ),
        ),
        order=90,
        part="continuous",
        variants_only=True,
        step=True,
    ),
)
def interval_disclosure(
    original, protected, variables, *, width: float = 0.05, interval: str = "sd", engine=None
) -> IntervalDisclosureResult:
    r"""Interval disclosure risk (SDID; sdcMicro ``dRisk``), with rank and entropy intervals.

    ``interval="sd"`` (default, sdcMicro ``dRisk``): record i is at risk when, for every
    variable j where both values are observed,

    .. math:: x'_{ij} - w\,s'_j \le x_{ij} \le x'_{ij} + w\,s'_j,

    with w = ``width`` and s'_j the standard deviation (n - 1, missing values removed) of the
    protected variable. The risk is the share of records at risk (1 for unmodified data).
    Comparisons with a missing value are skipped, so a record with no comparable variable is
    at risk (as in sdcMicro).

    ``interval="rank"`` (Domingo-Ferrer, Mateo-Sanz & Torra 2001): the m observed protected
    values of variable j are ranked; the interval of record i holds the protected values whose
    rank differs from the rank of :math:`x'_{ij}` by less than w m (w = ``width``, a share of the
    records in [0, 1]): from the value h = ceil(w m) - 1 ranks below to the value h ranks above
    (tied values form one block, extended by h on each side). At risk when every original value
    lies in its interval.

    ``interval="entropy"`` (after Alfalayleh & Brankovic 2015: a precision interval, Shannon's
    entropy and dynamic programming; the handbook does not give the formulas, this is sdckit's
    form): the intruder knows the errors :math:`e_{hj} = x_{hj} - x'_{hj}` of the protection and
    wants the original value to within the precision :math:`d_j = 2 w s'_j` (the length of the
    sd interval). The sorted errors are cut into consecutive groups of span at most d_j with the
    smallest entropy :math:`H_j = -\sum_g (n_g/m) \log_2 (n_g/m)` (exact dynamic programming,
    O(m^2) at worst); the intruder's interval for record i is
    :math:`x'_{ij} + [lo, hi]` of the most probable group, and the record is at risk when every
    error :math:`e_{ij}` lies in its variable's top group. :math:`2^{-H_j}` (1 when one group
    holds every error, 1/G for G equal groups) is the variable's entropy risk. Unmodified data
    give one group of zero errors: every record at risk.

    Parameters
    ----------
    original, protected : table (pandas, Polars, PyArrow, dict, 2-D NumPy)
        The same records in the same order.
    variables : str or list of str
        Numeric variables present in both.
    width : float, default 0.05
        Half-width of the interval in protected standard deviations (>= 0); sdcMicro's ``k``.
        With ``interval="rank"`` the share of the records the ranks may differ by (in [0, 1]).
    interval : {"sd", "rank", "entropy"}, default "sd"
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    IntervalDisclosureResult
        ``share_at_risk`` is sdcMicro's ``dRisk`` with ``interval="sd"``; ``interval_info``
        holds the rank half-width, or the precision, entropy, entropy risk, number of groups
        and the top group's share of each variable.

    References
    ----------
    Mateo-Sanz, J. M., Sebé, F. and Domingo-Ferrer, J. (2004), Outlier protection in continuous
    microdata masking, *Privacy in Statistical Databases*, LNCS 3050 (SDID); sdcMicro ``dRisk``.
    Domingo-Ferrer, J., Mateo-Sanz, J. M. & Torra, V. (2001), Comparing SDC methods for microdata
    on the basis of information loss and disclosure risk, ETK-NTTS (rank intervals).
    Alfalayleh, M. & Brankovic, L. (2015), Quantifying privacy: a novel entropy-based measure of
    disclosure risk, *Combinatorial Algorithms* (IWOCA 2014), LNCS 8986, 24-36.
    """
    eng = in_memory_engine(engine, "interval_disclosure", original)
    w, kind = float(width), interval  # checked by the declaration
    pair = numeric_pair(original, protected, variables, engine=eng)
    inside, sd, info = _interval_flags(pair, kind, w)
    return IntervalDisclosureResult(
        variables=tuple(pair.names),
        width=w,
        at_risk=np.asarray(inside.all(axis=1)),
        inside=inside,
        protected_sd={v: float(sd[j]) for j, v in enumerate(pair.names)},
        n=pair.X.shape[0],
        interval=kind,
        interval_info=info,
        backend=pair.backend,
        records=local_records(),
        row_index=pair.row_index,
    )


# ----------------------------------------------------------------------------------------------
# relative-interval rule (a priori)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _RelativeInput:
    data: NumericData
    keys: tuple
    p: float
    c_min: int
    joint: bool


def _relative_input(data, variables, *, p, c_min, joint, keys, missing, engine) -> _RelativeInput:
    pp, cm, jt = float(p), int(c_min), bool(joint)  # checked by the declaration
    key_names = tuple(as_name_list(keys, "keys", allow_empty=True))
    codes = Roles.of(missing=missing).missing  # a value or a list of values, as for the key-based measures
    if codes and not key_names:
        raise SdcError(
            "missing: extra missing values apply to the key columns; expected keys= too (missing values "
            "of the continuous variables are null or NaN)"
        )
    both = sorted(set(as_name_list(variables, "variables")) & set(key_names))
    if both:
        raise SdcError(
            f"keys: {', '.join(both)} also given as variables; a column is either a categorical key "
            "or a continuous variable"
        )
    return _RelativeInput(
        numeric_data(data, variables, keys=key_names, missing=codes, engine=engine), key_names, pp, cm, jt
    )


def _relative_counts(inp: _RelativeInput):
    """Per-variable counts and flags, and the joint ones (None without ``joint``)."""
    core, X, g = _core(), inp.data.X, inp.data.groups
    counts = np.column_stack([core.relative_interval_counts(X[:, j], inp.p, g) for j in range(X.shape[1])])
    with np.errstate(invalid="ignore"):
        unsafe = counts < inp.c_min
    jc = ju = None
    if inp.joint:
        jc = core.joint_relative_interval_counts(X, inp.p, g)
        with np.errstate(invalid="ignore"):
            ju = jc < inp.c_min
    return counts, unsafe, jc, ju


@accepts_scenario
@renamed_parameters(positional=("p", "c_min"))
@declare(
    "measure",
    Param("variables", "columns", role="numeric_keys"),
    Param("p", "number"),
    Param("c_min", "int", "The smallest number of records an interval must hold to be safe"),
    Param("joint", "bool", "Apply the rule to all variables jointly instead of one by one"),
    Param("keys"),  # optional grouping, filled from the scenario's keys as before
    Param("missing"),
    excluded="a variant of interval disclosure with a user-chosen interval",
)
def relative_interval_risk(
    data, variables, *, p: float = 0.2, c_min: int = 3, joint: bool = False, keys=None, missing=None, engine=None
) -> RelativeIntervalResult:
    r"""The a-priori relative-interval rule for continuous variables.

    For the value :math:`x_{ij}` of record i on variable j,

    .. math:: c_{ij} = \#\{h : x_{hj} \in (x_{ij} - p|x_{ij}|,\ x_{ij} + p|x_{ij}|)\}

    (record i included; a value equal to :math:`x_{ij}` always counts, so a zero counts the
    other zeros although its open interval is empty). The value is unsafe when
    :math:`c_{ij} < c_{min}`: an intruder who knows the value to within the relative error p
    finds fewer than :math:`c_{min}` candidates. Missing values are not counted and are never
    unsafe. ``joint=True`` also counts the records inside the intervals of all variables at
    once (records with a missing value are not evaluated). ``keys`` restricts the counts to
    records with the same combination of categorical keys (exact equality, a missing value
    being its own category): the combined categorical/continuous threat.

    Unlike :func:`interval_disclosure` this needs no protected file: it screens the data before
    protection.

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict, 2-D NumPy)
    variables : str or list of str
        Numeric variables.
    p : float in (0, 1), default 0.2
        Relative half-width.
    c_min : int >= 1, default 3
    joint : bool, default False
    keys : str or list of str, optional
        Categorical keys to count within.
    missing : value or list of values, optional
        Extra values to treat as missing in the ``keys`` columns, besides null and NaN (e.g.
        ``-999``), as in :func:`sdckit.frequencies`; needs ``keys``.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    RelativeIntervalResult

    Notes
    -----
    One sort and two binary searches per variable (O(n log n)); the joint count costs the sum
    over records of their smallest univariate count.

    References
    ----------
    Mlodak, A. et al., handbook chapter on the measurement of disclosure risk and information
    loss (the relative interval around a value of a continuous variable).
    """
    eng = in_memory_engine(engine, "relative_interval_risk", data)
    inp = _relative_input(data, variables, p=p, c_min=c_min, joint=joint, keys=keys, missing=missing, engine=eng)
    counts, unsafe, jc, ju = _relative_counts(inp)
    d = inp.data
    return RelativeIntervalResult(
        variables=tuple(d.names),
        p=inp.p,
        c_min=inp.c_min,
        keys=inp.keys,
        counts=counts,
        unsafe=unsafe,
        joint_counts=jc,
        joint_unsafe=ju,
        n=d.X.shape[0],
        backend=d.backend,
        records=local_records(),
        row_index=d.row_index,
    )


# ----------------------------------------------------------------------------------------------
# robust covariance with a diagnosis when it is singular (RMD intervals, outliers)
# ----------------------------------------------------------------------------------------------
def _tie_message(tied, n: int, h: int) -> str:
    listed = ", ".join(f"{v} ({100.0 * t / n:.1f} % of records)" for v, t in tied)
    names = ", ".join(v for v, _ in tied)
    verb = "takes" if len(tied) == 1 else "take"
    return (
        f"variables: {listed} {verb} one value in at least h = {h:,} of the {n:,} records, the size of the "
        f"MCD subset; the robust scale of such a variable is 0 (an exact fit), so the robust covariance is "
        f"singular; expected variables whose most frequent value covers fewer than h records (leave {names} "
        f"out, or use interval_disclosure, which needs no covariance)"
    )


def _hyperplane_message(names, direction, n: int, h: int) -> str:
    involved = ""
    if direction is not None:
        a = np.abs(direction)
        involved = " among " + ", ".join(v for v, x in zip(names, a) if x >= 0.1 * a.max())
    return (
        f"variables: at least h = {h:,} of the {n:,} records satisfy an exact linear relation{involved} "
        "(they lie on a hyperplane), so the robust covariance is singular; expected variables without such "
        "a relation in most records (leave one of them out)"
    )


def robust_fit(Z: np.ndarray, raw: np.ndarray, names, fraction: float, seed):
    """The reweighted MCD of the complete rows ``Z``, or an error saying why it is singular.

    ``raw`` holds the same records before standardisation (ties are counted there). A variable
    with one value in h or more records makes the MCD an exact fit: named before the search. An
    exact linear relation among several variables in h or more records is found after it (the
    flattest direction of the covariance) and the variables involved are named.
    """
    core = _core()
    n, p = Z.shape
    h = core.h_alpha_n(fraction, n, p)
    tied = [(v, int(t)) for v, t in zip(names, core.largest_ties(raw)) if t >= h]
    if tied:
        raise SdcError(_tie_message(tied, n, h))
    try:
        est = core.mcd(Z, fraction, seed=seed)
    except np.linalg.LinAlgError:
        # the subset is not returned; when the relation holds in every record the classical
        # covariance shows it too and names the variables
        ratio, direction = core.weakest_direction(np.atleast_2d(np.cov(Z, rowvar=False)))
        raise SdcError(_hyperplane_message(names, direction if not ratio > 1e-12 else None, n, h)) from None
    ratio, direction = core.weakest_direction(est.cov)
    if not ratio > 1e-12:  # rounding noise of an exact fit: the covariance is singular in fact
        raise SdcError(_hyperplane_message(names, direction, n, h))
    return est


def _mcd_fraction(value) -> float:
    return float(value)  # checked by the declaration


def _seed(value) -> int | None:
    return None if value is None else int(value)  # checked by the declaration


# ----------------------------------------------------------------------------------------------
# robust Mahalanobis distance intervals (sdcMicro dRiskRMD)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _RMDInput:
    pair: NumericPair
    zx: np.ndarray
    zy: np.ndarray
    width: float
    width2: float
    center: str
    weighting: str
    covariance: np.ndarray | None
    mcd_fraction: float
    seed: int | None


def _standardise(X: np.ndarray, param: str, names) -> np.ndarray:
    sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    bad = [v for v, s in zip(names, sd) if not s > 0]
    if bad:
        raise SdcError(
            f"variables: column(s) {', '.join(bad)} of {param} are constant; robust distances need "
            "variables with a positive standard deviation"
        )
    return (X - X.mean(axis=0)) / sd


def _user_covariance(covariance, p: int) -> np.ndarray | None:
    if covariance is None:
        return None
    C = np.asarray(covariance, dtype=float)
    if C.shape != (p, p) or not np.all(np.isfinite(C)):
        raise SdcError(f"covariance: got shape {C.shape}; expected a finite {p} x {p} matrix")
    return C


def _rmd_input(
    original, protected, variables, *, width, width2, center, weighting, covariance, mcd_fraction, seed, engine
) -> _RMDInput:
    w1, w2, ce, wt = float(width), float(width2), center, weighting  # checked by the declaration
    fr = _mcd_fraction(mcd_fraction)
    sd = _seed(seed)
    pair = numeric_pair(original, protected, variables, allow_missing=False, engine=engine)
    n, p = pair.X.shape
    if p < 2:
        raise SdcError(
            f"variables: got {p} variable; expected at least two (the robust Mahalanobis distance needs a "
            "covariance between variables; for one variable use interval_disclosure)"
        )
    if n <= p + 1:
        raise SdcError(f"original: {n} records for {p} variables; the MCD needs more than p + 1 records")
    C = _user_covariance(covariance, p)
    return _RMDInput(
        pair,
        _standardise(pair.X, "original", pair.names),
        _standardise(pair.Y, "protected", pair.names),
        w1,
        w2,
        ce,
        wt,
        C,
        fr,
        sd,
    )


def _rmd_covariance(inp: _RMDInput):
    """(covariance, centre, MCD factors) of the standardised original data."""
    est = None
    if inp.covariance is None or inp.center == "mcd":
        est = robust_fit(inp.zx, inp.pair.X, inp.pair.names, inp.mcd_fraction, inp.seed)
    p = inp.zx.shape[1]
    C = est.cov if inp.covariance is None else inp.covariance
    c = np.zeros(p) if inp.center == "mean" else est.center
    factors = (
        None
        if est is None or (inp.covariance is not None and inp.center == "mean")
        else tuple(float(f) for f in est.factors)
    )
    return C, c, factors


@accepts_scenario
@renamed_parameters(positional=("width", "width2"))
@declare(
    "measure",
    Param("variables", "columns", "Numeric variables present in both files", role="numeric_keys"),
    Param("width", "number"),
    Param("width2", "number"),
    Param(
        "center", "choice", "The centre of the robust distance: the mean or the MCD estimate", choices=("mean", "mcd")
    ),
    Param(
        "weighting",
        "choice",
        "How the interval widths are weighted: as sdcMicro does or by their sum",
        choices=("sdcmicro", "sum"),
    ),
    Param("covariance", "any"),
    Param("mcd_fraction", "number"),
    Param("seed"),
    inputs=("original", "protected"),
    random=True,
    renamed={"k": "width", "k2": "width2", "mcd_alpha": "mcd_fraction"},
    excluded="a variant of interval disclosure with a user-chosen distance",
)
def rmd_interval_disclosure(
    original,
    protected,
    variables,
    *,
    width: float = 0.01,
    width2: float = 0.05,
    center: str = "mean",
    weighting: str = "sdcmicro",
    covariance=None,
    mcd_fraction: float = 0.5,
    seed: int = 0,
    engine=None,
) -> RMDIntervalResult:
    r"""Interval disclosure with robust Mahalanobis distance intervals (sdcMicro ``dRiskRMD``).

    1. Both files are standardised separately (their own means and sds).
    2. C = reweighted MCD covariance of the standardised original data; the centre c is the
       column mean (0, sdcMicro) or the MCD centre (``center="mcd"``).
    3. :math:`RMD_i = 0.05\sqrt{(z_i - c)' C^{-1} (z_i - c)}`.
    4. Record i is at risk (RMDID1) if for **some** variable :math:`z'_{ij}` lies strictly inside
       :math:`z_{ij} \pm w\,RMD_i` (w = ``width``); it is at risk and isolated (RMDID2) if
       moreover the nearest other protected record is farther than ``width2`` (Euclidean,
       standardised; k-d tree).
    5. Shares of the two flags; weighted risks
       :math:`wrisk = |W| \sum_{i \in W} RMD_i / n` (sdcMicro) or
       :math:`\sum_{i \in W} RMD_i / n` (``weighting="sum"``). sdcMicro's factor |W| makes
       wrisk a score that grows with the number of flagged records, not a share in [0, 1].

    Parameters
    ----------
    original, protected : table
        The same records in the same order; at least two numeric variables, no missing values.
    variables : list of str
    width : float, default 0.01
        Interval factor (sdcMicro's ``k``).
    width2 : float, default 0.05
        Isolation distance (sdcMicro's ``k2``).
    center : {"mean", "mcd"}
    weighting : {"sdcmicro", "sum"}
    covariance : (p, p) array, optional
        Use this robust covariance of the standardised original data instead of the MCD (for
        example robustbase's ``covMcd(scale(x))$cov``, to reproduce sdcMicro digit for digit).
    mcd_fraction : float in [0.5, 1), default 0.5
        Share of records in the MCD subset: h = h(mcd_fraction, n, p) (robustbase's ``alpha``).
    seed : int, default 0
        Seed of the FAST-MCD random starts (only used when n is large).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    RMDIntervalResult

    Raises
    ------
    SdcError
        With fewer than two variables (a robust covariance needs two; for one variable use
        :func:`interval_disclosure`).
    SdcError
        When the robust covariance is singular: a variable with one value (often 0) in at
        least h records, or an exact linear relation among variables in at least h records;
        the message names the variables.

    Notes
    -----
    The MCD is FAST-MCD with the Croux-Haesbroeck consistency factor and the Pison, Van Aelst &
    Willems (2002) small-sample factor. robustbase (used by sdcMicro) replaces the latter by
    simulated factors for p <= 9 and n <= 20; for such tiny files the robust covariance, hence
    the RMD and the weighted risks, differ from sdcMicro's (the flags usually agree).
    sdcMicro takes the RMDID2 indices from row names; this function uses row positions.

    References
    ----------
    Templ, M. and Meindl, B. (2008), Robust statistics meets SDC: new disclosure risk measures
    for continuous microdata masking, *Privacy in Statistical Databases*, LNCS 5262;
    Rousseeuw & Van Driessen (1999); Croux & Haesbroeck (1999); Pison et al. (2002).
    """
    eng = in_memory_engine(engine, "rmd_interval_disclosure", original)
    inp = _rmd_input(
        original,
        protected,
        variables,
        width=width,
        width2=width2,
        center=center,
        weighting=weighting,
        covariance=covariance,
        mcd_fraction=mcd_fraction,
        seed=seed,
        engine=eng,
    )
    C, c, factors = _rmd_covariance(inp)
    try:
        rmd, w, iso = _core().rmd_risk(inp.zx, inp.zy, C, c, inp.width, inp.width2)
    except np.linalg.LinAlgError:
        raise SdcError("covariance: the robust covariance is singular; expected a positive definite matrix") from None
    pair = inp.pair
    return RMDIntervalResult(
        variables=tuple(pair.names),
        width=inp.width,
        width2=inp.width2,
        rmd=rmd,
        at_risk=w,
        at_risk_isolated=iso,
        center=inp.center,
        weighting=inp.weighting,
        covariance=C,
        mcd_factors=factors,
        n=pair.X.shape[0],
        backend=pair.backend,
        records=local_records(),
        row_index=pair.row_index,
    )


# ----------------------------------------------------------------------------------------------
# outliers
# ----------------------------------------------------------------------------------------------
def _robust_distances(X: np.ndarray, names, fraction: float, seed):
    """Robust distances of the complete records (NaN for the others) and the cutoff."""
    from scipy import stats

    ok = ~np.isnan(X).any(axis=1)
    if ok.sum() <= len(names) + 1:
        raise SdcError(
            f"data: {int(ok.sum())} complete records for {len(names)} variables; the robust distances "
            "need more than p + 1 complete records"
        )
    est = robust_fit(X[ok], X[ok], names, fraction, seed)
    rd = np.full(X.shape[0], np.nan)
    rd[ok] = np.sqrt(np.maximum(_core().mahalanobis_sq(X[ok], est.center, est.cov), 0.0))
    return rd, float(np.sqrt(stats.chi2.ppf(0.975, len(names))))


@accepts_scenario
@renamed_parameters(positional=("quantile",))
@declare(
    "measure",
    Param("variables", "columns", "Numeric variables", role="numeric_keys"),
    Param("quantile", "number"),
    Param("multivariate", "bool", "Also find robust Mahalanobis-distance outliers over all variables"),
    Param("mcd_fraction", "number"),
    Param("seed"),
    random=True,
    renamed={"percentile": "quantile", "mcd_alpha": "mcd_fraction"},
    excluded="flags records of one continuous variable; the user decides what an outlier is",
)
def outliers(
    data,
    variables,
    *,
    quantile: float = 0.99,
    multivariate: bool = False,
    mcd_fraction: float = 0.5,
    seed: int = 0,
    engine=None,
) -> OutlierResult:
    r"""Records above a quantile (univariate) and robust-distance outliers (multivariate).

    Univariate: :math:`q_j` = ``quantile`` quantile of variable j (R type 7 = NumPy "linear",
    missing values removed); record i is flagged on j when :math:`x_{ij} > q_j`. Multivariate
    (``multivariate=True``): :math:`RD_i = \sqrt{(x_i - \hat\mu)' \hat\Sigma^{-1} (x_i - \hat\mu)}`
    with the reweighted MCD estimates; outlier when :math:`RD_i > \sqrt{\chi^2_{p,0.975}}`.
    Records with a missing value get no robust distance.

    Parameters
    ----------
    data : table
    variables : str or list of str
    quantile : float in (0, 1), default 0.99
        The quantile level (0.99: the 99th percentile, the value sdcMicro's
        ``addNoise(method="outdect")`` uses).
    multivariate : bool, default False
    mcd_fraction : float in [0.5, 1), default 0.5
        Share of records in the MCD subset (multivariate only).
    seed : int, default 0
        Seed of the FAST-MCD random starts (multivariate only).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    OutlierResult

    References
    ----------
    Templ, M. (2017), *Statistical Disclosure Control for Microdata*, Springer (outliers as a
    risk of continuous variables); Rousseeuw & Van Driessen (1999).
    """
    eng = in_memory_engine(engine, "outliers", data)
    q, mv = float(quantile), bool(multivariate)  # checked by the declaration
    fr, sd = _mcd_fraction(mcd_fraction), _seed(seed)
    d = numeric_data(data, variables, engine=eng)
    flags, qs = _core().univariate_outliers(d.X, q)
    rd, cutoff = _robust_distances(d.X, d.names, fr, sd) if mv else (None, None)
    return OutlierResult(
        variables=tuple(d.names),
        quantile=q,
        quantile_values={v: float(qs[j]) for j, v in enumerate(d.names)},
        flags=flags,
        robust_distance=rd,
        cutoff=cutoff,
        n=d.X.shape[0],
        backend=d.backend,
        records=local_records(),
        row_index=d.row_index,
    )


# ----------------------------------------------------------------------------------------------
# Seri's confidentiality plot
# ----------------------------------------------------------------------------------------------
def _log_values(pair: NumericPair):
    bad = [v for j, v in enumerate(pair.names) if (pair.X[:, j] <= 0).any() or (pair.Y[:, j] <= 0).any()]
    if bad:
        raise SdcError(f"log: column(s) {', '.join(bad)} have values <= 0; log=True needs positive values")
    return np.log(pair.X), np.log(pair.Y)


_NEIGHBOURHOODS = ("distance", "fellegi_sunter")


def _fs_confidentiality(X, Y, s: float, bins, lg: bool, pair: NumericPair) -> ConfidentialityResult:
    """The confidentiality plot with the Fellegi-Sunter neighbourhood."""
    from .._core.confidentiality_fs import fs_neighbourhood

    res = fs_neighbourhood(X, Y, s, bins)
    fs = {
        "edges": [float(e) for e in res["edges"]],
        "m": [float(v) for v in res["m"]],
        "u": [float(v) for v in res["u"]],
        "n_link_pairs": [int(v) for v in res["n_link_pairs"]],
        "n_nonlink_pairs": [int(v) for v in res["n_nonlink_pairs"]],
        "linked": [bool(v) for v in res["linked"]],
    }
    return ConfidentialityResult(
        variables=tuple(pair.names),
        significance=s,
        delta=float("nan"),
        neighbours=np.asarray(res["neighbours"], dtype=np.int64),
        perturbation=res["perturbation"],
        nearest_correct=res["nearest_correct"],
        in_neighbourhood=res["in_neighbourhood"],
        exact=True,
        log=lg,
        n=X.shape[0],
        neighbourhood="fellegi_sunter",
        fellegi_sunter=fs,
        backend=pair.backend,
        records=local_records(),
        row_index=pair.row_index,
    )


@accepts_scenario
@renamed_parameters(positional=("significance",))
@declare(
    "measure",
    Param("variables", "columns", "Numeric variables present in both files", role="numeric_keys"),
    Param("significance", "number"),
    Param("log", "bool"),
    Param("seed"),
    Param(
        "neighbourhood",
        "choice",
        "Neighbours within the critical distance, or in the Fellegi-Sunter link region of m(z)/u(z)",
        choices=_NEIGHBOURHOODS,
    ),
    Param("bins", "any"),
    inputs=("original", "protected"),
    random=True,
    renamed={"alpha": "significance"},
    assessed=Assessed(
        needs=("numeric_keys",),
        headlines=(
            Headline(
                "share_nearest_correct",
                "share of records whose nearest original is their own (the share of nearest_correct)",
                "lower",
                "nearest_correct",
            ),
        ),
        order=120,
        part="continuous",
        variants_only=True,
    ),
)
def confidentiality_plot(
    original,
    protected,
    variables,
    *,
    significance: float = 0.05,
    log: bool = False,
    seed: int = 0,
    neighbourhood: str = "distance",
    bins=20,
    engine=None,
) -> ConfidentialityResult:
    r"""Seri's confidentiality plot: neighbours within the critical distance against perturbation.

    For released y_i and original x_j:

    * perturbation :math:`IL_i = \|y_i - x_i\| / \|x_i\|`;
    * comparison distance :math:`z(x, y) = \|y - x\| / \|y\|`;
    * critical distance :math:`\delta = z_{(\lceil s |U| \rceil)}` (s = ``significance``), the
      s-quantile of the |U| = n(n - 1) non-link distances: exact for n <= 20,000; above,
      estimated from 10^7 uniformly sampled non-link pairs with ``seed``;
    * neighbours :math:`nb(y_i) = \#\{x_j : z(x_j, y_i) < \delta\}`;
    * flags: nearest original is the true partner; true partner inside the neighbourhood.

    ``neighbourhood="fellegi_sunter"`` (Seri's alternative, after Fellegi & Sunter 1969): the
    link pairs M and non-link pairs U are known, so m(z) = P(z | M) and u(z) = P(z | U) are
    computed on bins of z (``bins``: a number of bins with edges at quantiles of the link
    distances z(x_i, y_i), the last edge their maximum; or the edges). Bins with true pairs
    are ranked by m(z)/u(z) and form the link region while their cumulative u(z) is at most
    ``significance``; the neighbourhood of y is :math:`\{x : z(x, y)` in the link region\}.
    When m/u falls with z this is the critical-distance rule on the bin grid. All n^2 pairs
    are visited (time O(n^2 p)); ``delta`` is then NaN and ``fellegi_sunter`` holds the bins.

    Parameters
    ----------
    original, protected : table
        The same records in the same order; numeric variables without missing values.
    variables : list of str
    significance : float in (0, 1), default 0.05
        Share of non-link pairs allowed below the critical distance.
    log : bool, default False
        Work on log-transformed values (as Seri does); needs positive values.
    seed : int, default 0
        Seed of the pair sampling (the exact result does not depend on it).
    neighbourhood : {"distance", "fellegi_sunter"}, default "distance"
        The critical distance delta, or the Fellegi-Sunter link region of m(z)/u(z).
    bins : int >= 2 or list of edges, default 20
        Fellegi-Sunter neighbourhood: the bins of z (a number of quantile bins of the link
        distances, or edges).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    ConfidentialityResult
        ``plot()`` draws the plot with user-set safety rules.

    Notes
    -----
    Exact delta: a sample of 10^6 non-link pairs brackets it, then one pass over the pairs
    counts those below the bracket and keeps the few inside it; a bracket that misses (checked)
    falls back to a two-pass selection. The pass compares squared distances only, in
    cache-sized blocks, and skips the pairs that the triangle inequality
    :math:`\|y - x\| \ge |\|y\| - \|x\||` puts beyond every threshold. Time O(n^2 p) at
    worst (about 1 s for 12,000 records and 5 variables), memory O(n).

    References
    ----------
    Seri, G. (2004), the confidentiality plot: a tool for assessing the disclosure risk of
    continuous microdata after perturbation; Fellegi, I. P. & Sunter, A. B. (1969), a theory
    for record linkage, JASA 64, 1183-1210.
    """
    eng = in_memory_engine(engine, "confidentiality_plot", original)
    s, lg, sd, hood = float(significance), bool(log), _seed(seed), neighbourhood  # checked by the declaration
    b = check_bins(bins)
    pair = numeric_pair(original, protected, variables, allow_missing=False, engine=eng)
    if pair.X.shape[0] < 2:
        raise SdcError("original: 1 record; the confidentiality plot needs at least 2 (non-link pairs)")
    X, Y = _log_values(pair) if lg else (pair.X, pair.Y)
    zero = int(np.count_nonzero(~np.any(Y != 0, axis=1)))
    if zero:
        warn(
            f"protected: {zero} record(s) are all zero, so z(x, y) = ||y - x|| / ||y|| is infinite "
            "for them (no neighbours)"
        )
    if hood == "fellegi_sunter":
        return _fs_confidentiality(X, Y, s, b, lg, pair)
    res = _core().confidentiality(X, Y, s, seed=sd)
    return ConfidentialityResult(
        variables=tuple(pair.names),
        significance=s,
        delta=float(res["delta"]),
        neighbours=res["neighbours"],
        perturbation=res["perturbation"],
        nearest_correct=res["nearest_correct"],
        in_neighbourhood=res["in_neighbourhood"],
        exact=bool(res["exact"]),
        log=lg,
        n=X.shape[0],
        backend=pair.backend,
        records=local_records(),
        row_index=pair.row_index,
    )
