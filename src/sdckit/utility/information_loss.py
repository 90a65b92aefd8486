"""``information_loss``: every information-loss measure of spec G for an original / protected
pair of files, in one validated pass.

The two files are paired by row position (record i of the protected file is the protected
version of record i of the original). Each variable has a measurement scale -- nominal,
ordinal or continuous -- that the caller declares; it is inferred only where the data type
leaves no doubt (text and booleans are nominal, floating-point numbers continuous, a pandas
*ordered* categorical ordinal). Integer columns must be declared: they may be category codes
or counts, and sdcMicro's rule of treating them by their R class is a known trap (spec K.20).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .._core import infoloss as K
from .._encode import encode_column
from .._errors import MissingColumnError, SdcError, SdcWarning
from .._frame import as_table, missing_columns_message
from .._validation import as_name_list
from ..results._base import Result, Summary, new_axes

__all__ = ["SCALES", "InformationLossResult", "information_loss"]

#: accepted scale names (``"numeric"`` is an alias of ``"continuous"``)
SCALES = ("nominal", "ordinal", "continuous")
_ALIASES = {"nominal": "nominal", "categorical": "nominal", "ordinal": "ordinal", "continuous": "continuous",
            "numeric": "continuous"}
_SUPPRESSED = ("mlodak", "sdcmicro")
_DISTANCES = ("arctan", "max_abs", "max_squared")
_PAIRS = ("X", "means", "V", "variances", "R", "RF", "F", "C")
_PAIR_LABELS = {"X": "X - X' (data)", "means": "means", "V": "V - V' (covariances)", "variances": "S - S' (variances)",
                "R": "R - R' (correlations)", "RF": "RF - RF' (variable-component correlations)",
                "F": "F - F' (loadings)", "C": "C - C' (communalities with PC1)"}


# ----------------------------------------------------------------------------------------------
# result
# ----------------------------------------------------------------------------------------------
def _num(v):
    """JSON-safe number: NaN / inf -> None."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    return v if math.isfinite(v) else None


def _clean(obj):
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (str,)) or obj is None:
        return obj
    return _num(obj)


def _pct(v):
    return None if v is None or not math.isfinite(v) else 100.0 * v


@dataclass(frozen=True, eq=False)
class InformationLossResult(Result):
    """Information loss of a protected file against its original (spec G).

    Every measure is None when it does not apply to the variables given (for example the
    continuous-variable measures without continuous variables) or cannot be computed (then
    ``notes`` says why).

    Attributes
    ----------
    variables : tuple of str
    scales : dict variable -> "nominal" | "ordinal" | "continuous"
    n : int
        Records (rows paired by position).
    lambda_ : float
        Mlodak's complex distance lambda = (1/(m n)) sum_j sum_i d(x_ij, x'_ij) (spec G.4).
    lambda_j : dict variable -> float
        Per-variable lambda_j = (1/n) sum_i d(x_ij, x'_ij).
    il1, il1_mean : float
        sdcMicro's IL1 = 100 sum |x - x'| / |x| over the finite terms, and its mean per term
        (a mean absolute percentage error) (spec G.1).
    il1s, il1s_mean : float
        sdcMicro's IL1s = sum |x - x'| / (sqrt(2) S_j), and the per-cell mean IL1s / (n p) of
        Yancey, Winkler & Creecy (sdcMicro ``IL1old``) (spec G.1).
    il1_by_variable, il1s_by_variable : dict variable -> float
    eigen, robust_eigen : float
        sum_l |e_l - e'_l| / e_l of the (robust MCD) covariance eigenvalues of the scaled data.
    discrepancy : dict pair -> dict
        Domingo-Ferrer, Mateo-Sanz & Torra table (spec G.2): pairs ``X``, ``means``, ``V``,
        ``variances`` (S - S'), ``R``, ``RF``, ``F``, ``C``; each with ``mse``, ``mae``,
        ``mv`` (mean variation) and ``mv_bounded`` (Trottini, cells capped at ``bound``, G.3).
    gamma : float
        Loss of intensity of connections from the inverse correlation matrices (spec G.5).
    ctbil : dict
        Contingency-table loss (spec G.7): ``total``, ``normalised`` (per cell), ``cells``,
        ``max_dim``, ``by_dim``, ``by_variable`` (one-way tables).
    ebil : dict variable -> float, ebil_joint : float
        Entropy loss of PRAMed variables given their transition matrices (spec G.8).
    anova : dict y -> dict
        R^2 of the main-effects model of y on the categorical variables in each file and the
        loss |R^2 - R'^2| (spec G.9).
    categorical_distance : dict variable -> float
        Mean Domingo-Ferrer & Torra distance of categorical variables (spec G.6).
    changes : dict variable -> dict
        ``changed`` (both observed, different), ``suppressed`` (original observed, protected
        missing), ``imputed`` (original missing, protected observed), ``missing_original``,
        ``missing_protected``.
    record_loss : ndarray (n,)
        Per record, the mean distance over the variables (the record's contribution to lambda).
    distances : ndarray (n, m) or None
        Per-record distances d(x_ij, x'_ij), kept with ``records=True``.
    notes : tuple of str
    """

    variables: tuple = ()
    scales: dict = field(default_factory=dict)
    n: int = 0
    suppressed: str = "mlodak"
    continuous_distance: str = "arctan"
    lambda_: float | None = None
    lambda_j: dict = field(default_factory=dict)
    il1: float | None = None
    il1_mean: float | None = None
    il1s: float | None = None
    il1s_mean: float | None = None
    il1_by_variable: dict = field(default_factory=dict)
    il1s_by_variable: dict = field(default_factory=dict)
    eigen: float | None = None
    robust_eigen: float | None = None
    discrepancy: dict | None = None
    bound: float = 1.0
    gamma: float | None = None
    gamma_method: str = "pearson"
    ctbil: dict | None = None
    ebil: dict = field(default_factory=dict)
    ebil_joint: float | None = None
    anova: dict = field(default_factory=dict)
    categorical_distance: dict = field(default_factory=dict)
    changes: dict = field(default_factory=dict)
    record_loss: np.ndarray = field(default=None, repr=False)
    distances: np.ndarray | None = field(default=None, repr=False)
    notes: tuple = ()

    # -- views ------------------------------------------------------------------------------
    @property
    def continuous(self) -> tuple:
        return tuple(v for v in self.variables if self.scales[v] == "continuous")

    @property
    def categorical(self) -> tuple:
        return tuple(v for v in self.variables if self.scales[v] != "continuous")

    def per_variable(self) -> list[dict]:
        """One row per variable: scale, changes, lambda_j, IL1s, IL1, one-way CTBIL, EBIL."""
        rows = []
        ct = (self.ctbil or {}).get("by_variable", {})
        for v in self.variables:
            c = self.changes.get(v, {})
            rows.append({
                "variable": v,
                "scale": self.scales[v],
                "changed": c.get("changed"),
                "suppressed": c.get("suppressed"),
                "lambda_j": self.lambda_j.get(v),
                "il1s": self.il1s_by_variable.get(v),
                "il1": self.il1_by_variable.get(v),
                "ctbil_1way": ct.get(v),
                "ebil": self.ebil.get(v),
                "categorical_distance": self.categorical_distance.get(v),
            })
        return rows

    def to_dict(self) -> dict:
        out = {
            "measure": "information_loss",
            "n": self.n,
            "variables": list(self.variables),
            "scales": dict(self.scales),
            "suppressed_convention": self.suppressed,
            "continuous_distance": self.continuous_distance,
            "lambda": self.lambda_,
            "lambda_percent": _pct(self.lambda_) if self.lambda_ is not None else None,
            "lambda_j": dict(self.lambda_j),
            "il1": {"sum": self.il1, "mean": self.il1_mean, "by_variable": dict(self.il1_by_variable)},
            "il1s": {"sum": self.il1s, "mean": self.il1s_mean, "by_variable": dict(self.il1s_by_variable)},
            "eigen": self.eigen,
            "robust_eigen": self.robust_eigen,
            "discrepancy": self.discrepancy,
            "bound": self.bound,
            "gamma": self.gamma,
            "gamma_method": self.gamma_method,
            "ctbil": self.ctbil,
            "ebil": {"by_variable": dict(self.ebil), "joint": self.ebil_joint},
            "anova": dict(self.anova),
            "categorical_distance": dict(self.categorical_distance),
            "changes": dict(self.changes),
            "notes": list(self.notes),
        }
        return _clean(out)

    def summary(self) -> Summary:
        cont, cat = self.continuous, self.categorical
        rows = [
            ("records", self.n),
            ("variables", len(self.variables)),
            ("continuous", ", ".join(cont) or "-"),
            ("categorical", ", ".join(f"{v} ({self.scales[v]})" for v in cat) or "-"),
            ("lambda (%)", _pct(self.lambda_) if self.lambda_ is not None else None),
        ]
        if cont:
            rows += [
                ("IL1 (sdcMicro, sum of % errors)", self.il1),
                ("IL1 mean % error per value", self.il1_mean),
                ("IL1s (sdcMicro)", self.il1s),
                ("IL1s per cell (Yancey-Winkler-Creecy)", self.il1s_mean),
                ("eigenvalue loss", self.eigen),
                ("robust eigenvalue loss (MCD)", self.robust_eigen),
                (f"gamma ({self.gamma_method}, %)", _pct(self.gamma) if self.gamma is not None else None),
            ]
        if self.ctbil is not None:
            rows += [(f"CTBIL (tables up to {self.ctbil['max_dim']}-way)", self.ctbil["total"]),
                     ("CTBIL per cell", self.ctbil["normalised"])]
        if self.ebil:
            rows += [("EBIL (sum over PRAMed variables)", float(sum(self.ebil.values())))]
            if self.ebil_joint is not None:
                rows += [("EBIL (PRAMed variables jointly)", self.ebil_joint)]
        sections = [("", rows)]
        cols = ["variable", "scale", "changed", "suppressed", "lambda_j (%)", "IL1s", "IL1 (%)", "CTBIL 1-way", "EBIL"]
        table = []
        for r in self.per_variable():
            table.append((r["variable"], r["scale"], r["changed"], r["suppressed"],
                          _pct(r["lambda_j"]) if r["lambda_j"] is not None else None,
                          r["il1s"], r["il1"], r["ctbil_1way"], r["ebil"]))
        sections.append(("Per variable", {"columns": cols, "rows": table}))
        if self.discrepancy:
            drows = []
            for k in _PAIRS:
                d = self.discrepancy.get(k)
                if d is not None:
                    drows.append((_PAIR_LABELS[k], d["mse"], d["mae"], d["mv"], d["mv_bounded"]))
            sections.append(("Discrepancies (Domingo-Ferrer, Mateo-Sanz & Torra)",
                             {"columns": ["pair", "MSE", "MAE", "mean variation", f"MV bounded at {self.bound:g}"],
                              "rows": drows}))
        if self.anova:
            arows = [(y, a["r2_original"], a["r2_protected"], a["loss"], a["relative_loss"]) for y, a in self.anova.items()]
            sections.append(("ANOVA R^2 on the categorical variables",
                             {"columns": ["variable", "R^2 original", "R^2 protected", "|R^2 - R'^2|", "relative"],
                              "rows": arows}))
        notes = [f"distances: nominal 0/1, ordinal |rank difference| / (R - 1), continuous {self.continuous_distance}; "
                 f"missing protected values by the {self.suppressed} convention (spec G.4)"]
        notes += list(self.notes)
        return Summary("Information loss", tuple(sections), tuple(notes))

    def _records(self):
        out = {"loss": self.record_loss}
        if self.distances is not None:
            for j, v in enumerate(self.variables):
                out[f"d_{v}"] = self.distances[:, j]
        return out

    def plot(self, ax=None, measure: str = "lambda"):
        """Per-variable loss bars: ``measure`` "lambda" (lambda_j in %, every variable), "il1s"
        or "il1" (continuous variables) or "ctbil" (one-way table loss, categorical variables)."""
        colours = {"nominal": "#4C72B0", "ordinal": "#55A868", "continuous": "#C44E52"}
        if measure == "lambda":
            names = list(self.variables)
            vals = [100 * self.lambda_j.get(v, 0.0) for v in names]
            ylabel = "lambda_j (%)"
        elif measure in ("il1s", "il1"):
            src = self.il1s_by_variable if measure == "il1s" else self.il1_by_variable
            names = [v for v in self.variables if v in src]
            vals = [src[v] if src[v] is not None and math.isfinite(src[v]) else 0.0 for v in names]
            ylabel = "IL1s" if measure == "il1s" else "IL1 (sum of % errors)"
        elif measure == "ctbil":
            src = (self.ctbil or {}).get("by_variable", {})
            names = [v for v in self.variables if v in src]
            vals = [src[v] for v in names]
            ylabel = "one-way table loss (records)"
        else:
            raise SdcError(f"measure: got {measure!r}; expected one of lambda, il1s, il1, ctbil")
        ax = new_axes(ax)
        ax.bar(names, vals, color=[colours[self.scales[v]] for v in names])
        ax.set_ylabel(ylabel)
        ax.set_title("Information loss by variable")
        for lab in ax.get_xticklabels():
            lab.set_rotation(45)
            lab.set_horizontalalignment("right")
        return ax


# ----------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------
def _kind(dtype) -> str:
    if dtype == pl.Null:
        return "null"
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_numeric():
        return "int" if dtype.is_integer() else "float"
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "text"
    return "other"


def _series_kind(s: pl.Series) -> str:
    """:func:`_kind` of a column, ``"null"`` for a column missing everywhere (e.g. a variable
    suppressed entirely, which pandas stores as float NaN whatever the original type)."""
    k = _kind(s.dtype)
    if k != "null" and s.len() and (s.null_count() == s.len() or (k == "float" and bool(s.is_nan().fill_null(True).all()))):
        return "null"
    return k


def _pandas_ordered(native, name):
    """Categories of a pandas *ordered* categorical column, else None."""
    mod = type(native).__module__.split(".")[0]
    if mod != "pandas":
        return None
    try:
        dtype = native[name].dtype
    except Exception:
        return None
    if getattr(dtype, "ordered", False):
        return list(dtype.categories)
    return None


def _parse_scales(scales, variables) -> tuple[dict, dict, list]:
    """-> (scale per declared variable, declared ordinal order per variable, problems)."""
    problems: list[str] = []
    declared: dict = {}
    orders: dict = {}
    if scales is None:
        return declared, orders, problems
    if isinstance(scales, str):
        scales = {v: scales for v in variables}
    if not isinstance(scales, dict):
        return declared, orders, [f"scales: got {type(scales).__name__}; expected a dict variable -> "
                                  "'nominal' | 'ordinal' | 'continuous' | list of ordered categories"]
    for v, s in scales.items():
        v = str(v)
        if v not in variables:
            problems.append(f"scales: variable {v} is not in variables; expected one of {', '.join(variables)}")
            continue
        if isinstance(s, str):
            key = _ALIASES.get(s.strip().lower())
            if key is None:
                problems.append(f"scales: {v}: got {s!r}; expected 'nominal', 'ordinal', 'continuous' or a list "
                                "of categories in order")
                continue
            declared[v] = key
        elif isinstance(s, (list, tuple)) or (hasattr(s, "__array__") and not isinstance(s, dict)):
            cats = list(s)
            if len(cats) < 1:
                problems.append(f"scales: {v}: empty category order; expected the categories from lowest to highest")
                continue
            if len({repr(c) for c in cats}) != len(cats):
                problems.append(f"scales: {v}: a category is listed twice in the order")
                continue
            declared[v] = "ordinal"
            orders[v] = cats
        else:
            problems.append(f"scales: {v}: got {type(s).__name__}; expected a scale name or a list of categories")
    return declared, orders, problems


def _check_choice(value, name, choices):
    if value not in choices:
        raise SdcError(f"{name}: got {value!r}; expected one of {', '.join(map(str, choices))}")
    return value


def _check_number(value, name, lo=None, integer=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SdcError(f"{name}: got {value!r}; expected a number")
    v = float(value)
    if not math.isfinite(v) or (lo is not None and v < lo) or (integer and v != int(v)):
        what = "an integer" if integer else "a number"
        raise SdcError(f"{name}: got {value!r}; expected {what}" + (f" >= {lo:g}" if lo is not None else ""))
    return int(v) if integer else v


def _float_column(s: pl.Series, missing) -> np.ndarray:
    x = s.cast(pl.Float64)
    if missing:
        vals = [float(m) for m in missing if isinstance(m, (int, float, np.integer, np.floating)) and not isinstance(m, bool)]
        if vals:
            x = pl.select(pl.when(pl.lit(x).is_in(pl.Series(vals).implode())).then(None).otherwise(pl.lit(x))).to_series()
    return x.fill_null(float("nan")).to_numpy().astype(np.float64, copy=False)


# ----------------------------------------------------------------------------------------------
# public function
# ----------------------------------------------------------------------------------------------
def information_loss(original, protected, variables, scales=None, *, missing=None, suppressed: str = "mlodak",
                     continuous_distance: str = "arctan", bound: float = 1.0, zero_sd: str = "exclude",
                     ctbil_dim: int = 2, pram=None, ebil_base: float | None = None, anova="auto",
                     gamma_method: str = "pearson", robust: bool = True, seed: int = 0,
                     new_categories: str = "error", records: bool = False) -> InformationLossResult:
    r"""Information loss of ``protected`` against ``original`` by every measure of spec G.

    Rows are paired by position. For the m variables with declared scales:

    * all variables: Mlodak's complex distance (spec G.4, S000 3.5.9-3.5.15, S003 eqs. 5-6)

      .. math:: \lambda = \frac{1}{m n}\sum_{j=1}^m \sum_{i=1}^n d(x_{ij}, x'_{ij}), \qquad
                \lambda_j = \frac{1}{n}\sum_{i=1}^n d(x_{ij}, x'_{ij}),

      d = 0/1 for nominal, |r - r'| / (R_j - 1) for ordinal ranks, (2/pi) arctan|x - x'| for
      continuous values;
    * continuous variables: sdcMicro's IL1 = 100 sum |x - x'| / |x| and IL1s =
      sum |x - x'| / (sqrt 2 S_j) with their per-cell means (G.1), the eigenvalue and robust
      (MCD) eigenvalue losses (G.1), the Domingo-Ferrer, Mateo-Sanz & Torra discrepancies of
      X, means, V, variances, R, RF, F, C by mean squared error, mean absolute error and mean
      variation (G.2) with Trottini's bounded mean variation (G.3), and gamma from the diagonals
      of the inverse correlation matrices (G.5)

      .. math:: \gamma = \frac{1}{\sqrt 2}\Big\| \frac{\rho}{\|\rho\|} - \frac{\rho'}{\|\rho'\|}\Big\|;

    * categorical variables: the contingency-table loss CTBIL summed over all tables of up to
      ``ctbil_dim`` variables (G.7), the Domingo-Ferrer & Torra categorical distance (G.6) and,
      for variables given in ``pram``, the entropy loss EBIL (G.8);
    * continuous against categorical: the ANOVA R^2 loss (G.9).

    Parameters
    ----------
    original, protected : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The same records in the same order (row i of ``protected`` is the protected record i).
    variables : str or list of str
        Variables to compare; present in both files.
    scales : dict or str, optional
        Measurement scale per variable: ``"nominal"``, ``"ordinal"``, ``"continuous"`` (alias
        ``"numeric"``), or a list of categories from lowest to highest (an ordinal variable with
        that order; R_j = the length of the list). A single string applies to every variable.
        Undeclared variables: text and boolean columns are nominal, floating-point columns
        continuous, pandas ordered categoricals ordinal; **integer columns must be declared**
        (spec K.20). Ordinal text variables need an order (a list, an ordered categorical or a
        Polars Enum); ordinal numbers are ranked by value.
    missing : value or list of values, optional
        Codes to treat as missing (e.g. ``-999``) in addition to null / NaN, in both files.
    suppressed : {"mlodak", "sdcmicro"}
        Distance when exactly one of x, x' is missing (spec G.4, K.15). ``"mlodak"``: nominal 1;
        ordinal the distance to the extreme category farthest from the observed value; continuous
        the distance to the original maximum (observed value <= original median) or minimum.
        ``"sdcmicro"`` (``IL_variables``): nominal 1, ordinal 1, continuous
        (2/pi) arctan max(|min x' - max x|, |max x' - min x|). Both missing: 0.
    continuous_distance : {"arctan", "max_abs", "max_squared"}
        S000 eq. 3.5.13 (default), 3.5.11, 3.5.12.
    bound : float, default 1
        Trottini's cap B on each mean-variation cell (spec G.3, K.17).
    zero_sd : {"exclude", "inf"}
        A continuous variable with S_j = 0 makes its IL1s terms infinite: ``"exclude"`` leaves
        it out of the IL1s totals (with a warning), ``"inf"`` keeps the infinite total.
    ctbil_dim : int, default 2
        Largest table dimension K of CTBIL; 0 skips CTBIL.
    pram : dict variable -> transition matrix, optional
        PRAM matrices P[i, j] = P(V' = j | V = i) for EBIL: a pandas DataFrame (index and columns
        = categories), a dict of dicts ``{from: {to: p}}``, a pair ``(matrix, categories)`` or a
        square array in the variable's category order (the declared order, else the sorted
        categories of both files). With two or more variables the joint EBIL (Kronecker product
        of the matrices) is reported too.
    ebil_base : float, optional
        Logarithm base of EBIL (default natural log; 2 gives bits).
    anova : "auto", dict or None
        ``"auto"``: every continuous variable against all categorical variables (main effects);
        ``{y: [factors]}``; None or False: skip.
    gamma_method : {"pearson", "kendall"}
        Correlation for gamma. With ``"kendall"`` ordinal variables enter gamma as ranks.
    robust : bool, default True
        Compute the robust (MCD) eigenvalue loss (O(n p^2), the costliest measure).
    seed : int, default 0
        Seed of the MCD subsets (the result is deterministic for a given seed).
    new_categories : {"error", "allow"}
        A nominal category of the protected file that the original lacks is an error unless
        ``"allow"`` (it then counts as a change). Ordinal categories must always be in the order.
    records : bool, default False
        Keep the (n, m) per-record distances (``distances``, and one column per variable in
        ``to_frame()``); the per-record mean ``record_loss`` is always kept.

    Returns
    -------
    InformationLossResult

    Raises
    ------
    SdcError
        Mismatched files (different numbers of records, a variable absent from a file, a
        variable with different types in the two files, categories the original lacks),
        undeclared integer variables, bad parameters. :class:`MissingColumnError` (also a
        ``KeyError``) when a variable is absent.

    Notes
    -----
    Missing values: IL1, IL1s and the X - X' discrepancies skip pairs with a missing value;
    covariances use pairwise-complete observations, gamma and the MCD complete records of each
    file (sdcMicro); CTBIL counts missing as a category; ANOVA drops records with a missing y or
    factor in each file separately. Weights are not used (spec 0.4).

    References
    ----------
    Spec ALGORITHMS.md section G, K.15-K.18, K.20; Domingo-Ferrer, Mateo-Sanz & Torra (2001);
    Domingo-Ferrer & Torra (2001); Yancey, Winkler & Creecy (2002); Trottini (2003); Mlodak
    (2019, 2020); Mlodak, Pietrzak & Jozefowski (2022) (S003); Templ & Meindl (2008);
    sdcMicro ``dUtility``, ``IL_correl``, ``IL_variables``.
    """
    # ---- parameters ---------------------------------------------------------------------------
    _check_choice(suppressed, "suppressed", _SUPPRESSED)
    _check_choice(continuous_distance, "continuous_distance", _DISTANCES)
    _check_choice(zero_sd, "zero_sd", ("exclude", "inf"))
    _check_choice(gamma_method, "gamma_method", ("pearson", "kendall"))
    _check_choice(new_categories, "new_categories", ("error", "allow"))
    bound = _check_number(bound, "bound", lo=0)
    if bound <= 0:
        raise SdcError(f"bound: got {bound!r}; expected a number > 0")
    ctbil_dim = _check_number(ctbil_dim, "ctbil_dim", lo=0, integer=True)
    seed = _check_number(seed, "seed", lo=0, integer=True)
    if ebil_base is not None:
        ebil_base = _check_number(ebil_base, "ebil_base", lo=0)
        if ebil_base <= 1:
            raise SdcError(f"ebil_base: got {ebil_base!r}; expected a logarithm base > 1")
    if variables is None:
        raise SdcError("variables: no variables given; expected a column name or a list of names")
    names = as_name_list(variables, "variables")
    if missing is None:
        miss = ()
    elif isinstance(missing, (str, int, float)):
        miss = (missing,)
    else:
        miss = tuple(missing)

    # ---- the two files ------------------------------------------------------------------------
    t_o = as_table(original, "original")
    t_p = as_table(protected, "protected")
    problems: list[str] = []
    absent = False
    for label, t in (("original", t_o), ("protected", t_p)):
        gone = [c for c in names if c not in t.columns]
        if gone:
            absent = True
            problems.append(missing_columns_message(label, gone, t.columns))
    if t_o.n != t_p.n:
        problems.append(f"protected: the file has {t_p.n} records and the original {t_o.n}; expected the same "
                        "records in the same order (rows are paired by position)")
    elif t_o.n == 0:
        problems.append("original: the file has no records; expected at least one")
    declared, orders, sp = _parse_scales(scales, names)
    problems += sp
    if problems:
        _raise(problems, absent)

    scale: dict[str, str] = {}
    for v in names:
        ko, kp = _series_kind(t_o.column(v)), _series_kind(t_p.column(v))
        for label, k, t in (("original", ko, t_o), ("protected", kp, t_p)):
            if k == "other":
                problems.append(f"variables: column {v} of the {label} file has type {t.column(v).dtype}; expected "
                                "numbers, text, a categorical or booleans")
        if "other" in (ko, kp):
            continue
        if v in declared:
            s = declared[v]
        else:
            pord = _pandas_ordered(original, v)
            if pord is not None:
                s = "ordinal"
                orders[v] = pord
            elif "int" in (ko, kp) and not ({ko, kp} & {"text", "bool"}):
                problems.append(f"scales: variable {v} holds integers and has no declared scale; declare it as "
                                "'nominal', 'ordinal' or 'continuous' (integers may be codes or counts; spec K.20)")
                continue
            elif ko == "float" or kp == "float":
                s = "continuous"
            elif ko == "null" and kp == "null":
                problems.append(f"scales: variable {v} is missing everywhere in both files; declare its scale")
                continue
            else:
                s = "nominal"
        kinds = {ko, kp} - {"null"}
        if s == "continuous":
            for label, k, t in (("original", ko, t_o), ("protected", kp, t_p)):
                if k not in ("int", "float", "null"):
                    problems.append(f"variables: {v} is continuous but the {label} file holds {t.column(v).dtype}; "
                                    "expected numbers")
        elif len({"text" if k == "text" else "bool" if k == "bool" else "num" for k in kinds}) > 1:
            problems.append(f"variables: {v} has type {t_o.column(v).dtype} in the original and "
                            f"{t_p.column(v).dtype} in the protected file; expected the same kind of labels in both")
        elif s == "ordinal" and v not in orders:
            enum = next((t.column(v).dtype for t in (t_o, t_p) if isinstance(t.column(v).dtype, pl.Enum)), None)
            if enum is not None:
                orders[v] = list(enum.categories)
            elif "text" in kinds or "bool" in kinds:
                problems.append(f"scales: ordinal variable {v} holds text and no order is known; pass the categories "
                                f"in order, e.g. scales={{'{v}': ['low', 'mid', 'high']}}")
        scale[v] = s
    if problems:
        _raise(problems, False)

    n = t_o.n
    notes: list[str] = []
    cont = [v for v in names if scale[v] == "continuous"]
    cat = [v for v in names if scale[v] != "continuous"]

    # ---- encode ------------------------------------------------------------------------------
    X = np.empty((n, len(cont)), order="F")
    Y = np.empty((n, len(cont)), order="F")
    for j, v in enumerate(cont):
        X[:, j] = _float_column(t_o.column(v), miss)
        Y[:, j] = _float_column(t_p.column(v), miss)
    enc = {}  # categorical: (codes_o, codes_p, labels, ranks_o, ranks_p, R, declared order)
    for v in cat:
        enc[v] = _encode_pair(v, t_o.column(v), t_p.column(v), miss, scale[v], orders.get(v), new_categories, problems)
    if problems:
        _raise(problems, False)

    # ---- changes -----------------------------------------------------------------------------
    changes = {}
    for j, v in enumerate(cont):
        changes[v] = _changes(np.isnan(X[:, j]), np.isnan(Y[:, j]), X[:, j] != Y[:, j])
    for v in cat:
        co, cp = enc[v][0], enc[v][1]
        changes[v] = _changes(co < 0, cp < 0, co != cp)

    # ---- Mlodak lambda (G.4) and the Domingo-Ferrer & Torra distance (G.6) ----------------------
    m = len(names)
    total = np.zeros(n)
    dist = np.empty((n, m)) if records else None
    lambda_j: dict = {}
    cat_dist: dict = {}
    for j, v in enumerate(names):
        if scale[v] == "continuous":
            k = cont.index(v)
            d = K.continuous_distance(X[:, k], Y[:, k], suppressed, continuous_distance)
        elif scale[v] == "nominal":
            d = K.nominal_distance(enc[v][0], enc[v][1])
            cat_dist[v] = float(d.mean())
        else:
            ro, rp, R = enc[v][3], enc[v][4], enc[v][5]
            d = K.ordinal_distance(ro, rp, R, suppressed)
            cat_dist[v] = float(K.ordinal_distance(ro, rp, R, "sdcmicro", divisor=R).mean())
        lambda_j[v] = float(d.mean())
        total += d
        if dist is not None:
            dist[:, j] = d
    record_loss = total / m
    lam = float(record_loss.mean())

    # ---- continuous measures -----------------------------------------------------------------
    il1 = il1m = il1s = il1sm = eig = reig = gam = None
    il1_by, il1s_by, disc = {}, {}, None
    if cont:
        stats = K.column_stats(X, Y, bound)
        r = K.il1_by_variable(X, Y, stats)
        il1_by = {v: float(r["il1"][k]) for k, v in enumerate(cont)}
        il1s_by = {v: float(r["il1s"][k]) for k, v in enumerate(cont)}
        il1 = float(r["il1"].sum())
        cells = float(r["il1_cells"].sum())
        il1m = il1 / cells if cells else None
        inc = np.ones(len(cont), bool)
        zero = [v for k, v in enumerate(cont) if not (r["sd"][k] > 0)]
        if zero:
            msg = (f"IL1s: variable(s) {', '.join(zero)} have standard deviation 0 (or fewer than two values) in the "
                   "original file; their IL1s terms are infinite")
            if zero_sd == "exclude":
                inc = np.array([v not in zero for v in cont])
                msg += " and they are left out of the IL1s totals"
            notes.append(msg)
            warnings.warn(msg, SdcWarning, stacklevel=2)
        il1s = float(r["il1s"][inc].sum())
        il1sm = il1s / (n * int(inc.sum())) if inc.any() else None
        disc = K.discrepancy(X, Y, bound, stats)
        if len(cont) >= 2:
            scaled = (K.scale(X), K.scale(Y))
            e = K.eigen_loss(X, Y, scaled)
            eig = e if math.isfinite(e) else None
            if eig is None:
                notes.append("eigen: the eigenvalue loss could not be computed (constant variable or a zero eigenvalue)")
            if robust:
                try:
                    re = K.robust_eigen_loss(X, Y, seed=seed, scaled=scaled)
                except (ValueError, np.linalg.LinAlgError):
                    re = float("nan")
                reig = re if math.isfinite(re) else None
                if reig is None:
                    notes.append("robust eigen: the MCD eigenvalue loss could not be computed (too few complete "
                                 "records, or more than half of them on a hyperplane)")
    # gamma (G.5): continuous variables, plus ordinal ranks with Kendall's tau
    gvars = list(cont) + ([v for v in cat if scale[v] == "ordinal"] if gamma_method == "kendall" else [])
    if len(gvars) >= 2:
        if gvars == cont:
            GX, GY = X, Y
        else:
            GX = _fstack([X[:, cont.index(v)] if v in cont else enc[v][3] for v in gvars])
            GY = _fstack([Y[:, cont.index(v)] if v in cont else enc[v][4] for v in gvars])
        do, dp = K.inverse_corr_diag(GX, gamma_method), K.inverse_corr_diag(GY, gamma_method)
        if do is None or dp is None:
            which = "original" if do is None else "protected"
            msg = (f"gamma: the correlation matrix of the {which} file is singular or undefined (complete records "
                   "only); gamma is not computed")
            notes.append(msg)
            warnings.warn(msg, SdcWarning, stacklevel=2)
        else:
            gam = K.gamma(do, dp)
    elif cont:
        notes.append("gamma: needs at least two continuous variables")

    # ---- categorical measures ----------------------------------------------------------------
    ctbil = None
    if cat and ctbil_dim > 0:
        co = _fstack([enc[v][0] for v in cat])
        cp = _fstack([enc[v][1] for v in cat])
        lv = [len(enc[v][2]) for v in cat]
        ct = K.contingency_loss(co, cp, lv, ctbil_dim)
        ctbil = {
            "max_dim": min(ctbil_dim, len(cat)),
            "variables": list(cat),
            "total": ct["total"],
            "cells": ct["cells"],
            "tables": ct["tables"],
            "normalised": ct["total"] / ct["cells"] if ct["cells"] else None,
            "by_dim": {str(k): v for k, v in ct["by_dim"].items()},
            "by_variable": {v: int(ct["by_variable"][k]) for k, v in enumerate(cat)},
        }
    ebil, ebil_joint = {}, None
    if pram:
        ebil, ebil_joint = _ebil(pram, names, scale, enc, ebil_base)

    # ---- ANOVA (G.9) -------------------------------------------------------------------------
    anova_out = {}
    spec = _anova_spec(anova, cont, cat, names, scale)
    by_factors: dict[tuple, list] = {}
    for y, factors in spec.items():
        by_factors.setdefault(tuple(factors), []).append(y)
    fits = {}
    for factors, ys in by_factors.items():
        lv = [len(enc[f][2]) for f in factors]
        idx = [cont.index(y) for y in ys]
        fa = K.anova_r2_many(X[:, idx], [enc[f][0] for f in factors], lv)
        fb = K.anova_r2_many(Y[:, idx], [enc[f][1] for f in factors], lv)
        for y, a, b in zip(ys, fa, fb):
            fits[y] = (a, b)
    for y, factors in spec.items():
        a, b = fits[y]
        r2o, r2p = a["r2"], b["r2"]
        loss = abs(r2o - r2p) if r2o is not None and r2p is not None else None
        anova_out[y] = {
            "factors": list(factors),
            "r2_original": r2o,
            "r2_protected": r2p,
            "loss": loss,
            "relative_loss": loss / r2o if loss is not None and r2o else None,
            "between_change": _rel(a["ss_between"], b["ss_between"]),
            "within_change": _rel(a["ss_within"], b["ss_within"]),
            "records_original": a["n"],
            "records_protected": b["n"],
        }

    return InformationLossResult(
        variables=tuple(names), scales=scale, n=n, suppressed=suppressed, continuous_distance=continuous_distance,
        lambda_=lam, lambda_j=lambda_j, il1=il1, il1_mean=il1m, il1s=il1s, il1s_mean=il1sm,
        il1_by_variable=il1_by, il1s_by_variable=il1s_by, eigen=eig, robust_eigen=reig,
        discrepancy=disc, bound=bound, gamma=gam, gamma_method=gamma_method, ctbil=ctbil, ebil=ebil,
        ebil_joint=ebil_joint, anova=anova_out, categorical_distance=cat_dist, changes=changes,
        record_loss=record_loss, distances=dist, notes=tuple(notes), backend=t_o.backend,
    )


# ----------------------------------------------------------------------------------------------
# pieces
# ----------------------------------------------------------------------------------------------
def _fstack(cols):
    """Columns side by side in a Fortran-ordered matrix (one contiguous write per column)."""
    out = np.empty((cols[0].shape[0], len(cols)), dtype=np.result_type(*cols), order="F")
    for j, c in enumerate(cols):
        out[:, j] = c
    return out


def _raise(problems, absent):
    msg = problems[0] if len(problems) == 1 else "invalid input:\n  - " + "\n  - ".join(problems)
    raise (MissingColumnError if absent else SdcError)(msg, problems)


def _rel(a, b):
    if a is None or b is None or not a:
        return None
    return (b - a) / a


def _changes(mo, mp, neq):
    both = ~mo & ~mp
    return {
        "changed": int(np.count_nonzero(neq & both)),
        "suppressed": int(np.count_nonzero(~mo & mp)),
        "imputed": int(np.count_nonzero(mo & ~mp)),
        "missing_original": int(np.count_nonzero(mo)),
        "missing_protected": int(np.count_nonzero(mp)),
    }


def _fmt_labels(vals, limit=8):
    vals = list(vals)
    s = ", ".join(repr(v) for v in vals[:limit])
    return s + (f" ... ({len(vals)} in all)" if len(vals) > limit else "")


def _encode_pair(v, so: pl.Series, sp: pl.Series, missing, scale, order, new_categories, problems):
    """Codes of both files on one code table: (codes_o, codes_p, labels, ranks_o, ranks_p, R, order)."""
    ko, kp = _series_kind(so), _series_kind(sp)
    kinds = {ko, kp} - {"null"}
    n = so.len()
    target = {"text": pl.String, "float": pl.Float64, "int": pl.Int64, "bool": pl.Boolean}
    if ko == "null" and kinds:  # missing everywhere: nulls of the other file's type
        so = pl.Series(so.name, [None] * n, dtype=target[next(iter(kinds))])
    if kp == "null" and kinds:
        sp = pl.Series(sp.name, [None] * n, dtype=target[next(iter(kinds))])
    if "text" in kinds:
        so, sp = so.cast(pl.String), sp.cast(pl.String)
    elif "float" in kinds:
        so, sp = so.cast(pl.Float64), sp.cast(pl.Float64)
    elif "int" in kinds:
        so, sp = so.cast(pl.Int64), sp.cast(pl.Int64)
    elif "bool" in kinds:
        so, sp = so.cast(pl.Boolean), sp.cast(pl.Boolean)
    else:  # both missing everywhere
        so, sp = so.cast(pl.String), sp.cast(pl.String)
    codes, labels = encode_column(pl.concat([so.alias(v), sp.alias(v)]), list(missing) or None)
    co, cp = codes[:n], codes[n:]
    labs = labels.to_list()
    L = len(labs)
    seen_o = np.zeros(L + 1, bool)
    seen_o[co] = True  # index -1 lands on the extra slot
    seen_p = np.zeros(L + 1, bool)
    seen_p[cp] = True
    ro = rp = None
    R = L
    if scale == "ordinal":
        if order is not None:
            pos = {}
            for i, c in enumerate(order):
                pos.setdefault(c, i + 1)
                pos.setdefault(str(c), i + 1)
            rank = np.array([pos.get(lab, pos.get(str(lab), 0)) for lab in labs], dtype=float)
            bad = [lab for lab, r in zip(labs, rank) if r == 0]
            if bad:
                problems.append(f"scales: ordinal variable {v} has value(s) {_fmt_labels(bad)} that are not in its "
                                f"declared order ({_fmt_labels(order)})")
                return co, cp, labs, None, None, 0, order
            R = len(order)
        else:
            rank = np.arange(1, L + 1, dtype=float)  # numbers ranked by value (labels are sorted)
        rank = np.append(rank, np.nan)  # code -1 -> NaN
        ro, rp = rank[co], rank[cp]
    elif new_categories == "error":
        new = [labs[i] for i in np.flatnonzero(seen_p[:L] & ~seen_o[:L])]
        if new:
            problems.append(f"protected: variable {v} has categories that the original lacks: {_fmt_labels(new)}; "
                            "expected the original's categories (recode to them, or pass new_categories='allow')")
    return co, cp, labs, ro, rp, R, order


def _anova_spec(anova, cont, cat, names, scale) -> dict:
    if anova is None or anova is False:
        return {}
    if isinstance(anova, str):
        if anova != "auto":
            raise SdcError(f"anova: got {anova!r}; expected 'auto', a dict {{y: [factors]}} or None")
        return {y: list(cat) for y in cont} if cat else {}
    if not isinstance(anova, dict):
        raise SdcError(f"anova: got {type(anova).__name__}; expected 'auto', a dict {{y: [factors]}} or None")
    out = {}
    for y, fs in anova.items():
        if y not in names or scale[y] != "continuous":
            raise SdcError(f"anova: {y!r} is not a continuous variable among variables; expected one of "
                           f"{', '.join(cont) or '(none)'}")
        fl = as_name_list(fs, "anova")
        bad = [f for f in fl if f not in names or scale[f] == "continuous"]
        if bad:
            raise SdcError(f"anova: factor(s) {', '.join(bad)} of {y} are not categorical variables among variables; "
                           f"expected some of {', '.join(cat) or '(none)'}")
        out[y] = fl
    return out


def _pram_matrix(v, spec, labs, order):
    """(P, categories) from the accepted matrix forms."""
    cats = None
    mat = spec
    if isinstance(spec, tuple) and len(spec) == 2:
        mat, cats = spec
        cats = list(cats)
    elif isinstance(spec, dict):
        cats = list(spec)
        inner = set()
        for row in spec.values():
            if not isinstance(row, dict):
                raise SdcError(f"pram: {v}: a dict matrix needs dict rows {{from: {{to: probability}}}}")
            inner.update(row)
        extra = [c for c in inner if c not in spec]
        cats += extra
        mat = [[float(spec.get(a, {}).get(b, 0.0)) for b in cats] for a in cats]
    elif type(spec).__module__.split(".")[0] == "pandas":
        if list(spec.index) != list(spec.columns):
            raise SdcError(f"pram: {v}: the matrix's index and columns differ; expected the same categories in the "
                           "same order")
        cats = list(spec.index)
        mat = spec.to_numpy()
    try:
        P = np.asarray(mat, dtype=float)
    except (TypeError, ValueError):
        raise SdcError(f"pram: {v}: could not read the transition matrix; expected numbers") from None
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise SdcError(f"pram: {v}: matrix of shape {P.shape}; expected a square matrix")
    if cats is None:
        cats = list(order) if order is not None else list(labs)
        if len(cats) != P.shape[0]:
            raise SdcError(f"pram: {v}: matrix of size {P.shape[0]} but the variable has {len(cats)} categories; pass "
                           "(matrix, categories) or a labelled DataFrame")
    if len(cats) != P.shape[0]:
        raise SdcError(f"pram: {v}: {len(cats)} categories for a matrix of size {P.shape[0]}")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise SdcError(f"pram: {v}: the matrix has negative or non-finite entries; expected probabilities")
    rs = P.sum(axis=1)
    if np.any(np.abs(rs - 1) > 1e-6):
        raise SdcError(f"pram: {v}: row sums {np.round(rs, 6).tolist()}; expected every row to sum to 1 "
                       "(P[i, j] = P(protected = j | original = i))")
    return P, cats


def _ebil(pram, names, scale, enc, base):
    if not isinstance(pram, dict):
        raise SdcError(f"pram: got {type(pram).__name__}; expected a dict variable -> transition matrix")
    out = {}
    mats, cols_o, cols_p = [], [], []
    for v, spec in pram.items():
        if v not in names or scale[v] == "continuous":
            raise SdcError(f"pram: {v!r} is not a categorical variable among variables")
        co, cp, labs = enc[v][0], enc[v][1], enc[v][2]
        P, cats = _pram_matrix(v, spec, labs, enc[v][6])
        pos = {}
        for i, c in enumerate(cats):
            pos.setdefault(c, i)
            pos.setdefault(str(c), i)
        idx = np.array([pos.get(lab, pos.get(str(lab), -1)) for lab in labs], dtype=np.int64)
        bad = [lab for lab, i in zip(labs, idx) if i < 0]
        if bad:
            raise SdcError(f"pram: {v}: categories {_fmt_labels(bad)} of the data are not in the matrix")
        idx = np.append(idx, -1)
        mo, mp = idx[co], idx[cp]  # matrix index per record, -1 = missing
        p = np.bincount(mo[mo >= 0], minlength=len(cats)).astype(float)
        counts = np.bincount(mp[mp >= 0], minlength=len(cats)).astype(float)
        val, H, possible = K.entropy_loss(P, p, counts, base)
        impossible = [cats[j] for j in np.flatnonzero((counts > 0) & ~possible)]
        if impossible:
            raise SdcError(f"pram: {v}: protected categories {_fmt_labels(impossible)} cannot arise from the original "
                           "distribution under this matrix; expected the matrix that produced the protected file")
        out[v] = val
        mats.append(P)
        cols_o.append(mo)
        cols_p.append(mp)
    joint = None
    if len(mats) >= 2:
        joint = K.joint_entropy_loss(_fstack(cols_o), _fstack(cols_p), mats, base)
    return out, joint
