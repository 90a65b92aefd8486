"""``information_loss``: the information-loss measures of a protected file against its
original, in one validated pass.

The two files are paired by row position (record i of the protected file is the protected
version of record i of the original). Each variable has a measurement scale -- nominal,
ordinal or continuous -- that the caller declares; it is inferred only where the data type
leaves no doubt (text and booleans are nominal, floating-point numbers continuous, a pandas
*ordered* categorical ordinal). Integer columns must be declared: they may be category codes
or counts, and sdcMicro's rule of treating them by their R class is a known trap.

Layout: the declaration checks each option; :func:`_validate_information_loss` checks the files and the scales once and returns a frozen
:class:`ValidatedInput` (NumPy arrays and small tables, read through the data-access helpers
of :mod:`._access`); the measure families of :mod:`._steps` compute from it; the result class
is in :mod:`.results`.
"""

from __future__ import annotations

import functools
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._assessed import Assessed, Headline
from .._declare import Options, Param, declare, options
from .._deprecation import renamed_parameters
from .._errors import SdcError, SdcWarning
from .._prepare import weight_problems
from .._validation import (
    as_missing_codes,
    as_name_list,
    check_choice,
    check_column,
    check_scales,
    raise_problems,
)
from ..engines import in_memory_engine, local_records
from ..results.information_loss import InformationLossResult
from ..risk._pram import is_stratified, strata_reader
from ..scenario import accepts_scenario
from . import _access as access
from . import _steps as steps

__all__ = ["SCALES", "InformationLossResult", "LossDistance", "LossMeasures", "ValidatedInput", "information_loss"]

#: accepted scale names (``"numeric"`` is an alias of ``"continuous"``, ``"categorical"`` of ``"nominal"``)
SCALES = ("nominal", "ordinal", "continuous")
_ALIASES = {"categorical": "nominal", "numeric": "continuous"}


# ----------------------------------------------------------------------------------------------
# the validated input
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Coded:
    """One categorical variable of both files on one code table (codes int32, -1 = missing);
    ordinal variables also as ranks 1..n_ranks (NaN = missing)."""

    codes_o: np.ndarray
    codes_p: np.ndarray
    labels: tuple
    ranks_o: np.ndarray | None = None
    ranks_p: np.ndarray | None = None
    n_ranks: int = 0
    order: tuple | None = None


@dataclass(frozen=True)
class PramInput:
    """A PRAMed variable: its transition matrix, and per record the matrix index of its value
    in each file (-1 = missing) with the counts per category."""

    matrix: np.ndarray
    index_o: np.ndarray
    index_p: np.ndarray
    counts_o: np.ndarray
    counts_p: np.ndarray
    #: with matrices per stratum: (rows, PramInput of those rows) per stratum
    parts: tuple = ()


@dataclass(frozen=True)
class ValidatedInput:
    """Everything the measures need, checked once: the options, the scales, the continuous
    variables as float matrices ``X`` (original) and ``Y`` (protected), (n, len(cont)) with NaN
    for a missing value, and the categorical variables coded (:class:`Coded`)."""

    names: tuple
    scales: dict
    n: int
    cont: tuple
    cat: tuple
    X: np.ndarray
    Y: np.ndarray
    coded: dict
    pram: dict
    anova: dict
    suppressed: str
    continuous_distance: str
    bound: float
    zero_sd: str
    ctbil_dim: int
    ebil_base: float | None
    gamma_method: str
    robust: bool
    seed: int
    records: bool
    backend: str = field(default="polars")
    weight: str | None = None
    w_o: np.ndarray | None = field(default=None, repr=False)
    w_p: np.ndarray | None = field(default=None, repr=False)


# ----------------------------------------------------------------------------------------------
# public function
# ----------------------------------------------------------------------------------------------
@options(
    "distance",
    Param("suppressed", "choice", choices=("mlodak", "sdcmicro")),
    Param("continuous_distance", "choice", choices=("arctan_sd", "arctan", "max_abs", "max_squared")),
    Param("new_categories", "choice", choices=("error", "allow")),
)
@dataclass(frozen=True)
class LossDistance(Options):
    r"""How :func:`information_loss` measures the distance of a protected value from its
    original (Mlodak's complex distance): the ``distance=`` record (or a mapping of its fields).

    Parameters
    ----------
    suppressed : {"mlodak", "sdcmicro"}
        Distance when exactly one of x, x' is missing. ``"mlodak"``: nominal 1; ordinal the
        distance to the extreme category farthest from the observed value; continuous the
        distance to the original maximum (observed value <= original median) or minimum.
        ``"sdcmicro"`` (``IL_variables``): nominal 1, ordinal 1, continuous
        (2/pi) arctan max(|min x' - max x|, |max x' - min x|). Both missing: 0. With
        ``continuous_distance="arctan_sd"`` the continuous differences of both conventions are
        divided by S_j as well.
    continuous_distance : {"arctan_sd", "arctan", "max_abs", "max_squared"}
        ``"arctan_sd"`` (default): (2/pi) arctan(|x' - x| / S_j), S_j the standard deviation
        (n - 1) of the original's observed values of variable j (S_j = 0: 0 when x' = x, else
        1). It does not depend on the unit: multiply a variable by 1,000 in both files and its
        lambda_j does not move. ``"arctan"``: (2/pi) arctan|x' - x|, sdcMicro's
        ``IL_variables`` form on raw differences; it is in the variable's own units, so any
        change of a variable measured in large units (income in euros) counts almost fully
        (lambda_j near 1 even for a light perturbation), which is why it is no longer the
        default; pass it by name to reproduce sdcMicro. ``"max_abs"``: |x' - x| / max|x' - x|;
        ``"max_squared"``: (x' - x)^2 / max (x' - x)^2 (Mlodak 2020).
    new_categories : {"error", "allow"}
        A nominal category of the protected file that the original lacks is an error unless
        ``"allow"`` (it then counts as a change). Ordinal categories must always be in the order.
    """

    suppressed: str = "mlodak"
    continuous_distance: str = "arctan_sd"
    new_categories: str = "error"


@options(
    "measures",
    Param("bound", "number"),
    Param("zero_sd", "choice", choices=("exclude", "inf")),
    Param("ctbil_dim", "int"),
    Param("ebil_base", "number"),
    Param("anova", "any"),
    Param("gamma_method", "choice", choices=("pearson", "kendall")),
    Param("robust", "bool"),
    Param("seed"),
)
@dataclass(frozen=True)
class LossMeasures(Options):
    r"""The settings of the single measures of :func:`information_loss` (mean variation, IL1s,
    CTBIL, EBIL, ANOVA, gamma, the robust eigenvalue loss): the ``measures=`` record (or a
    mapping of its fields).

    Parameters
    ----------
    bound : float, default 1
        Trottini's cap B on each mean-variation cell.
    zero_sd : {"exclude", "inf"}
        A continuous variable with S_j = 0 makes its IL1s terms infinite: ``"exclude"`` leaves
        it out of the IL1s totals (with a warning), ``"inf"`` keeps the infinite total.
    ctbil_dim : int, default 2
        Largest table dimension K of CTBIL; 0 skips CTBIL.
    ebil_base : float, optional
        Logarithm base of EBIL (default natural log; 2 gives bits).
    anova : "auto", dict or None
        ``"auto"``: every continuous variable against all categorical variables (main effects);
        ``{y: [factors]}``; None or False: skip.
    gamma_method : {"pearson", "kendall"}
        Correlation for gamma. With ``"kendall"`` ordinal variables enter gamma as ranks.
    robust : bool, default False
        Also compute the robust eigenvalue loss (sdcMicro ``dUtility(method="robeigen")``), from
        Minimum Covariance Determinant estimates found by FAST-MCD. Off by default because it
        costs far more than all the other measures together (about 0.7 s for 5,000 records of 5
        variables, where everything else takes about 0.01 s) and, like in sdcMicro, is rarely
        needed; ``robust_eigen`` is then None.
    seed : int, default 0
        Seed of the MCD subsets (the result is deterministic for a given seed).
    """

    bound: float = 1.0
    zero_sd: str = "exclude"
    ctbil_dim: int = 2
    ebil_base: float | None = None
    anova: Any = "auto"
    gamma_method: str = "pearson"
    robust: bool = False
    seed: int = 0


@accepts_scenario
@renamed_parameters(positional=("scales",))
@declare(
    "measure",
    Param("variables", "columns", role="numeric_keys"),
    Param("scales", "any", role="scales"),
    Param("missing"),
    Param("weight"),
    Param("pram", "any"),
    Param("records", "bool"),
    inputs=("original", "protected"),
    random=True,
    grouped=(LossDistance, LossMeasures),
    assessed=Assessed(
        needs=("numeric_keys",),
        headlines=(Headline("il1s", "IL1s of the continuous keys (unit-free)", "lower", "il1s", label="IL1s"),),
        order=110,
        part="il1s",
        variants_only=True,
        step=True,
    ),
)
def information_loss(
    original,
    protected,
    variables,
    *,
    scales=None,
    missing=None,
    weight=None,
    pram=None,
    distance: LossDistance | dict | None = None,
    measures: LossMeasures | dict | None = None,
    records: bool = False,
    engine=None,
) -> InformationLossResult:
    r"""Information loss of ``protected`` against ``original``.

    Rows are paired by position. For the m variables with declared scales:

    * all variables: Mlodak's complex distance

      .. math:: \lambda = \frac{1}{m n}\sum_{j=1}^m \sum_{i=1}^n d(x_{ij}, x'_{ij}), \qquad
                \lambda_j = \frac{1}{n}\sum_{i=1}^n d(x_{ij}, x'_{ij}),

      d = 0/1 for nominal, |r - r'| / (R_j - 1) for ordinal ranks, (2/pi) arctan(|x - x'| / S_j)
      for continuous values (S_j the standard deviation of the original variable; see
      ``continuous_distance``);
    * continuous variables: sdcMicro's IL1 = 100 sum |x - x'| / |x| and IL1s =
      sum |x - x'| / (sqrt 2 S_j) with their per-value means, the eigenvalue loss (and, with
      ``robust=True``, the robust MCD eigenvalue loss), the Domingo-Ferrer, Mateo-Sanz & Torra
      discrepancies of X, means, V, variances, R, RF, F, C by mean squared error, mean absolute
      error and mean variation with Trottini's bounded mean variation, and gamma from the
      diagonals of the inverse correlation matrices

      .. math:: \gamma = \frac{1}{\sqrt 2}\Big\| \frac{\rho}{\|\rho\|} - \frac{\rho'}{\|\rho'\|}\Big\|;

    * categorical variables: the contingency-table loss CTBIL summed over all tables of up to
      ``ctbil_dim`` variables,

      .. math:: \mathrm{CTBIL} = \sum_{T \subseteq W,\ 1 \le |T| \le K} \sum_{c \in T}
                |x^F_T(c) - x^G_T(c)|,

      on the weighted cell totals :math:`x_T(c) = \sum_{i \in c} w_i` of the tables a data
      user publishes when ``weight`` is given (``ctbil``) and on record counts
      (``ctbil_unweighted``), the Domingo-Ferrer & Torra categorical distance and, for
      variables given in ``pram``, the entropy loss EBIL;
    * continuous against categorical: the ANOVA R^2 loss.

    Parameters
    ----------
    original, protected : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The same records in the same order (row i of ``protected`` is the protected record i).
    variables : str or list of str
        Variables to compare; present in both files.
    scales : dict or str, optional
        Measurement scale per variable: ``"nominal"`` (alias ``"categorical"``),
        ``"ordinal"``, ``"continuous"`` (alias ``"numeric"``), or a list of categories from
        lowest to highest (an ordinal variable with that order; R_j = the length of the list).
        A single string applies to every variable. Undeclared variables: text and boolean
        columns are nominal, floating-point columns continuous, pandas ordered categoricals
        ordinal; **integer columns must be declared** (they may be codes or counts). Ordinal
        text variables need an order (a list, an ordered categorical or a Polars Enum); ordinal
        numbers are ranked by value.
    missing : value or list of values, optional
        Codes to treat as missing (e.g. ``-999``) in addition to null / NaN, in both files.
    weight : str, optional
        Design weights (numeric, >= 0, none missing) for CTBIL: each file's cells are summed
        with its own weights (the original's when the protected file lacks the column), so
        ``ctbil`` compares the weighted tables that are published; ``ctbil_unweighted`` keeps
        the loss on record counts. The other measures do not use weights.
    pram : dict variable -> transition matrix, optional
        PRAM matrices P[i, j] = P(V' = j | V = i) for EBIL: a pandas DataFrame (index and columns
        = categories), a dict of dicts ``{from: {to: p}}``, a pair ``(matrix, categories)`` or a
        square array in the variable's category order (the declared order, else the sorted
        categories of both files). With two or more variables the joint EBIL (Kronecker product
        of the matrices) is reported too. A variable PRAMed within strata: ``{"strata":
        columns, "matrices": {stratum label: matrix}}`` (``details["pram_by_stratum"]``
        of :func:`sdckit.pram` with ``strata``); EBIL is then the sum over the strata of each
        stratum's EBIL under its matrix (the original file gives each record's stratum).
    distance : LossDistance or dict, optional
        How a protected value's distance from its original is measured (a missing value on one
        side, the continuous distance, categories the original lacks): see
        :class:`LossDistance`.
    measures : LossMeasures or dict, optional
        The settings of the single measures (Trottini's bound, IL1s with S_j = 0, CTBIL's
        dimension, EBIL's base, the ANOVA, gamma's correlation, the robust eigenvalue loss and
        its seed): see :class:`LossMeasures`.
    records : bool, default False
        Keep the (n, m) per-record distances (``distances``, and one column per variable in
        ``to_frame()``); the per-record mean ``record_loss`` is always kept.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    InformationLossResult

    Raises
    ------
    SdcError
        Mismatched files (different numbers of records, a variable absent from a file, a
        variable with different types in the two files, categories the original lacks),
        undeclared integer variables, infinite values, bad parameters.
        :class:`MissingColumnError` (also a ``KeyError``) when a variable is absent.

    Notes
    -----
    Missing values: IL1, IL1s and the X - X' discrepancies skip pairs with a missing value;
    covariances use pairwise-complete observations, gamma and the MCD complete records of each
    file (as sdcMicro does); CTBIL counts missing as a category; ANOVA drops records with a
    missing y or factor in each file separately. Sampling weights enter CTBIL only.

    Cost: O(n m) for the distances and the IL1 family, O(n p^2) for the covariance-based
    measures, O(n m^2) for CTBIL and ANOVA; ``measures={"robust": True}`` adds the FAST-MCD search. The fields
    of ``distance`` and ``measures`` given flat (``robust=True``) still work for one release,
    with a DeprecationWarning.

    References
    ----------
    Domingo-Ferrer, Mateo-Sanz & Torra (2001); Domingo-Ferrer & Torra (2001); Yancey, Winkler &
    Creecy (2002); Trottini (2003); Mlodak (2019, 2020); Mlodak, Pietrzak & Jozefowski (2022);
    Templ & Meindl (2008); Rousseeuw & Van Driessen (1999); sdcMicro ``dUtility``,
    ``IL_correl``, ``IL_variables``.
    """
    eng = in_memory_engine(engine, "information_loss", original)
    inp = _validate_information_loss(
        original,
        protected,
        variables,
        engine=eng,
        scales=scales,
        missing=missing,
        weight=weight,
        pram=pram,
        records=records,
        **distance.fields(),  # type: ignore[union-attr]
        **measures.fields(),  # type: ignore[union-attr]
    )
    notes: list[tuple[str, bool]] = []
    absdiff = steps.K.abs_differences(inp.X, inp.Y) if inp.cont else None
    with _Background(inp.n * len(inp.names) >= _PARALLEL_CELLS) as background:
        lam = background.run(steps.distances, inp, absdiff)  # NumPy releases the GIL: the two halves overlap
        fields_ = steps.changes(inp, absdiff)
        moments = None
        if inp.cont:
            stats, moments = steps.continuous_statistics(inp, absdiff)
            fields_.update(steps.il1_family(inp, stats, notes))
            fields_.update(steps.discrepancies(inp, stats, moments))
            fields_.update(steps.eigen_losses(inp, moments, notes))
        fields_.update(lam.result())
    fields_.update(steps.gamma_loss(inp, moments, notes))
    fields_.update(steps.contingency_loss(inp))
    fields_.update(steps.entropy_loss(inp))
    fields_.update(steps.anova_loss(inp, group_sums=functools.partial(access.group_sums, engine=eng)))
    for text, warn in notes:
        if warn:  # stacklevel 3: the caller of the public (decorated) function
            warnings.warn(text, SdcWarning, stacklevel=3)
    return InformationLossResult(
        variables=inp.names,
        scales=inp.scales,
        n=inp.n,
        suppressed=inp.suppressed,
        continuous_distance=inp.continuous_distance,
        bound=inp.bound,
        gamma_method=inp.gamma_method,
        notes=tuple(text for text, _ in notes),
        backend=inp.backend,
        records=local_records(),
        **fields_,
    )


#: above this many values (records x variables) the distances run in a second thread
_PARALLEL_CELLS = 200_000


class _Background:
    """Run one function in a worker thread when ``enabled`` (else at once, in this thread)."""

    def __init__(self, enabled: bool):
        self.pool = ThreadPoolExecutor(max_workers=1) if enabled else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def run(self, fn, *args) -> Future:
        if self.pool is not None:
            return self.pool.submit(fn, *args)
        done: Future = Future()
        done.set_result(fn(*args))
        return done


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
def _validate_information_loss(
    original, protected, variables, *, scales, missing, pram, anova, engine=None, weight=None, **options
) -> ValidatedInput:
    """Check both files and the scales against the variables once (the declaration checks each
    option); read and code the variables."""
    opts = _options(**options)
    names = as_name_list(variables, "variables")
    miss = as_missing_codes(missing)
    t_o, t_p = access.read_pair(original, protected, engine)
    problems: list[str] = []
    absent = [
        m for m in (access.absent_columns(t_o, names, "original"), access.absent_columns(t_p, names, "protected")) if m
    ]
    problems += absent
    if t_o.n != t_p.n:
        problems.append(
            f"protected: the file has {t_p.n} records and the original {t_o.n}; expected the same "
            "records in the same order (rows are paired by position)"
        )
    elif t_o.n == 0:
        problems.append("original: the file has no records; expected at least one")
    w_name = check_column(weight, "weight")
    w_absent = access.absent_columns(t_o, [w_name], "weight (original file)") if w_name else None
    if w_absent:
        problems.append(w_absent)
        absent.append(w_absent)
    declared, orders = _declared_scales(scales, names, problems)
    raise_problems(problems, missing_column=bool(absent))
    weights = _weights(t_o, t_p, w_name)
    scale = {}
    kinds = (access.column_kinds(t_o, names), access.column_kinds(t_p, names))
    for v in names:
        s = _scale_of(v, (kinds[0][v], kinds[1][v]), original, t_o, t_p, declared, orders, problems)
        if s is not None:
            scale[v] = s
    raise_problems(problems)
    cont = tuple(v for v in names if scale[v] == "continuous")
    cat = tuple(v for v in names if scale[v] != "continuous")
    X = access.float_matrix(t_o, cont, miss)
    Y = access.float_matrix(t_p, cont, miss)
    _check_finite(X, cont, "original", problems)
    _check_finite(Y, cont, "protected", problems)
    coded = {
        v: _code(v, t_o, t_p, miss, scale[v], orders.get(v), opts["new_categories"], problems, engine) for v in cat
    }
    raise_problems(problems)
    opts.pop("new_categories")
    return ValidatedInput(
        names=tuple(names),
        scales=scale,
        n=t_o.n,
        cont=cont,
        cat=cat,
        X=X,
        Y=Y,
        coded=coded,
        pram=_pram_inputs(pram, cat, coded, _strata_reader(pram, engine, t_o)),
        anova=_anova_spec(anova, cont, cat, names),
        backend=t_o.backend,
        weight=w_name,
        w_o=weights[0],
        w_p=weights[1],
        **opts,
    )


def _weights(t_o, t_p, name) -> tuple:
    """The design weights of each file (the original's for a protected file without the
    column): ``(w_o, w_p)``, both None without a weight."""
    if name is None:
        return None, None
    problems = weight_problems(t_o, name, allow_zero=True)
    own = name in t_p.columns
    if own:
        problems += [f"{m} (protected file)" for m in weight_problems(t_p, name, allow_zero=True)]
    raise_problems(problems)
    w_o = t_o.floats([name])[:, 0]
    return w_o, (t_p.floats([name])[:, 0] if own else w_o)


def _options(
    *,
    suppressed,
    continuous_distance,
    bound,
    zero_sd,
    ctbil_dim,
    ebil_base,
    gamma_method,
    robust,
    seed,
    new_categories,
    records,
) -> dict:
    """The scalar options as the toolkit's checks return them (each is checked by the
    declaration of :func:`information_loss`)."""
    return {
        "suppressed": suppressed,
        "continuous_distance": continuous_distance,
        "bound": float(bound),
        "zero_sd": zero_sd,
        "ctbil_dim": int(ctbil_dim),
        "ebil_base": None if ebil_base is None else float(ebil_base),
        "gamma_method": gamma_method,
        "robust": bool(robust),
        "seed": None if seed is None else int(seed),
        "new_categories": new_categories,
        "records": bool(records),
    }


def _declared_scales(scales, names, problems) -> tuple[dict, dict]:
    """-> (declared scale per variable, declared ordinal order per variable); problems are
    appended. A list of categories declares an ordinal variable with that order."""
    if isinstance(scales, str):
        scales = _ALIASES.get(scales.strip().lower(), scales.strip().lower())
    orders: dict = {}
    if isinstance(scales, dict):
        named = {}
        for v, s in scales.items():
            if isinstance(s, (list, tuple)) or (hasattr(s, "__array__") and not isinstance(s, dict)):
                cats = list(s)
                if not cats:
                    problems.append(
                        f"scales: {v}: empty category order; expected the categories from lowest to highest"
                    )
                elif len({repr(c) for c in cats}) != len(cats):
                    problems.append(f"scales: {v}: a category is listed twice in the order; expected each once")
                else:
                    orders[str(v)] = cats
                named[v] = "ordinal"
            else:
                named[v] = _ALIASES.get(s.strip().lower(), s.strip().lower()) if isinstance(s, str) else s
        scales = named
    declared, found = check_scales(scales, names, "scales", allowed=SCALES)
    problems += found
    return declared, {v: o for v, o in orders.items() if v in declared}


def _scale_of(v, kinds, native, t_o, t_p, declared, orders, problems) -> str | None:
    """The scale of variable v: declared, else inferred from the column kinds (original,
    protected); checks that the two files hold the same kind of values. Records an ordinal
    order found in the data."""
    ko, kp = kinds
    for label, k, t in (("original", ko, t_o), ("protected", kp, t_p)):
        if k == "other":
            problems.append(
                f"variables: column {v} of the {label} file has type {access.dtype_name(t, v)}; "
                "expected numbers, text, a categorical or booleans"
            )
    if "other" in (ko, kp):
        return None
    s = declared.get(v)
    if s is None:
        pord = access.pandas_order(native, v)
        if pord is not None:
            s, orders[v] = "ordinal", pord
        elif "int" in (ko, kp) and not ({ko, kp} & {"text", "bool"}):
            problems.append(
                f"scales: variable {v} holds integers and has no declared scale; declare it as "
                "'nominal', 'ordinal' or 'continuous' (integers may be codes or counts)"
            )
            return None
        elif "float" in (ko, kp):
            s = "continuous"
        elif ko == "null" and kp == "null":
            problems.append(f"scales: variable {v} is missing everywhere in both files; declare its scale")
            return None
        else:
            s = "nominal"
    kinds = {ko, kp} - {"null"}
    if s == "continuous":
        for label, k, t in (("original", ko, t_o), ("protected", kp, t_p)):
            if k not in ("int", "float", "null"):
                problems.append(
                    f"variables: {v} is continuous but the {label} file holds {access.dtype_name(t, v)}; "
                    "expected numbers"
                )
    elif len({k if k in ("text", "bool") else "num" for k in kinds}) > 1:
        problems.append(
            f"variables: {v} has type {access.dtype_name(t_o, v)} in the original and "
            f"{access.dtype_name(t_p, v)} in the protected file; expected the same kind of labels in both"
        )
    elif s == "ordinal" and v not in orders:
        enum = access.enum_order(t_o, v) or access.enum_order(t_p, v)
        if enum is not None:
            orders[v] = enum
        elif kinds & {"text", "bool"}:
            problems.append(
                f"scales: ordinal variable {v} holds text and no order is known; pass the categories "
                f"in order, e.g. scales={{'{v}': ['low', 'mid', 'high']}}"
            )
    return s


def _check_finite(M, names, label, problems) -> None:
    """Infinite values are refused (a distance or a variance with them means nothing)."""
    with np.errstate(invalid="ignore", over="ignore"):
        total = M.sum()
    if M.size and not np.isfinite(total):  # a NaN (missing), an infinite value or an overflow
        for j, v in enumerate(names):
            k = int(np.count_nonzero(np.isinf(M[:, j])))
            if k:
                problems.append(
                    f"variables: column {v} of the {label} file holds {k} infinite value(s); expected "
                    "finite numbers (a missing value as null or NaN)"
                )


def _code(v, t_o, t_p, missing, scale, order, new_categories, problems, engine=None) -> Coded:
    """Codes of variable v in both files on one code table, with ranks for an ordinal one."""
    co, cp, labs = access.encode_pair(v, t_o, t_p, missing, engine)
    n_inf = [lab for lab in labs if isinstance(lab, float) and np.isinf(lab)]
    if n_inf:
        k = int(np.count_nonzero(np.isin(np.concatenate([co, cp]), [labs.index(x) for x in n_inf])))
        problems.append(
            f"variables: column {v} holds {k} infinite value(s) in the two files; expected finite "
            "numbers (a missing value as null or NaN)"
        )
        return Coded(co, cp, tuple(labs))
    L = len(labs)
    if scale == "ordinal":
        if order is not None:
            pos: dict = {}
            for i, c in enumerate(order):
                pos.setdefault(c, i + 1)
                pos.setdefault(str(c), i + 1)
            rank = np.array([pos.get(lab, pos.get(str(lab), 0)) for lab in labs], dtype=float)
            bad = [lab for lab, r in zip(labs, rank) if r == 0]
            if bad:
                problems.append(
                    f"scales: ordinal variable {v} has {len(bad)} value(s) that are not in its "
                    f"declared order (of {len(order)} categories)"
                )
                return Coded(co, cp, tuple(labs))
            R = len(order)
        else:
            rank, R = np.arange(1, L + 1, dtype=float), L  # numbers ranked by value (labels are sorted)
        rank = np.append(rank, np.nan)  # code -1 -> NaN
        return Coded(co, cp, tuple(labs), rank[co], rank[cp], R, None if order is None else tuple(order))
    if new_categories == "error":
        seen_o = np.zeros(L + 1, bool)
        seen_o[co] = True  # index -1 lands on the extra slot
        seen_p = np.zeros(L + 1, bool)
        seen_p[cp] = True
        new = [labs[i] for i in np.flatnonzero(seen_p[:L] & ~seen_o[:L])]
        if new:
            problems.append(
                f"protected: variable {v} has {len(new)} categor(y/ies) that the original lacks; "
                "expected the original's categories (recode to them, or pass new_categories='allow')"
            )
    return Coded(co, cp, tuple(labs), n_ranks=L)


def _anova_spec(anova, cont, cat, names) -> dict:
    """``anova`` -> {continuous y: [categorical factors]}."""
    if anova is None or anova is False:
        return {}
    if isinstance(anova, str):
        check_choice(anova, "anova", ("auto",))
        return {y: list(cat) for y in cont} if cat else {}
    if not isinstance(anova, dict):
        raise SdcError(f"anova: got {type(anova).__name__}; expected 'auto', a dict {{y: [factors]}} or None")
    out = {}
    for y, fs in anova.items():
        check_choice(y, "anova", cont)
        fl = as_name_list(fs, "anova")
        bad = [f for f in fl if f not in cat]
        if bad:
            raise SdcError(
                f"anova: factor(s) {', '.join(bad)} of {y} are not categorical variables among variables; "
                f"expected some of {', '.join(cat) or '(none)'}"
            )
        out[y] = fl
    return out


# ----------------------------------------------------------------------------------------------
# PRAM matrices (EBIL)
# ----------------------------------------------------------------------------------------------
def _pram_matrix(v, spec, labs, order):
    """(P, categories) from the accepted matrix forms."""
    cats = None
    mat = spec
    frame = access.pram_frame(spec)
    if frame is not None:
        mat, cats, columns = frame
        if cats != columns:
            raise SdcError(
                f"pram: {v}: the matrix's index and columns differ; expected the same categories in the same order"
            )
    elif isinstance(spec, tuple) and len(spec) == 2:
        mat, cats = spec[0], list(spec[1])
    elif isinstance(spec, dict):
        cats = list(spec)
        inner = set()
        for row in spec.values():
            if not isinstance(row, dict):
                raise SdcError(f"pram: {v}: a dict matrix needs dict rows {{from: {{to: probability}}}}")
            inner.update(row)
        cats += [c for c in inner if c not in spec]
        mat = [[float(spec.get(a, {}).get(b, 0.0)) for b in cats] for a in cats]
    try:
        P = np.asarray(mat, dtype=float)
    except (TypeError, ValueError):
        raise SdcError(f"pram: {v}: could not read the transition matrix; expected numbers") from None
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise SdcError(f"pram: {v}: matrix of shape {P.shape}; expected a square matrix")
    if cats is None:
        cats = list(order) if order is not None else list(labs)
    if len(cats) != P.shape[0]:
        raise SdcError(
            f"pram: {v}: {len(cats)} categories for a matrix of size {P.shape[0]}; pass "
            "(matrix, categories) or a labelled DataFrame"
        )
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise SdcError(f"pram: {v}: the matrix has negative or non-finite entries; expected probabilities")
    rs = P.sum(axis=1)
    if np.any(np.abs(rs - 1) > 1e-6):
        raise SdcError(
            f"pram: {v}: row sums {np.round(rs, 6).tolist()}; expected every row to sum to 1 "
            "(P[i, j] = P(protected = j | original = i))"
        )
    return P, cats


def _strata_reader(pram, engine, table):
    """The records' strata for a per-stratum PRAM form (None when no form needs them)."""
    if not isinstance(pram, dict) or not any(is_stratified(spec) for spec in pram.values()):
        return None
    return strata_reader(in_memory_engine(engine, "information_loss with PRAM matrices per stratum"), table)


def _pram_inputs(pram, cat, coded, reader=None) -> dict:
    """Per PRAMed variable, its matrix and the matrix index of every record's value; the
    protected file must be reachable from the original distribution under the matrix. A
    per-stratum form (``{"strata": columns, "matrices": {stratum label: matrix}}``) gives one
    part per stratum (``reader(columns)``: the stratum of every record and the labels)."""
    if pram is None:
        return {}
    if not isinstance(pram, dict):
        raise SdcError(f"pram: got {type(pram).__name__}; expected a dict variable -> transition matrix")
    out = {}
    for v, spec in pram.items():
        check_choice(v, "pram", cat)
        if is_stratified(spec):
            out[v] = _stratified_pram_input(v, spec, coded[v], reader)
        else:
            out[v] = _pram_input(v, spec, coded[v])
    return out


def _stratified_pram_input(v, spec, e, reader) -> PramInput:
    """One :class:`PramInput` per stratum of a per-stratum form, in ``parts``."""
    if reader is None:
        raise SdcError(f"pram: {v}: matrices per stratum need the records' strata; expected the in-memory engine")
    cols = [spec["strata"]] if isinstance(spec["strata"], str) else list(spec["strata"])
    ids, labels = reader(cols)
    forms = {str(k): f for k, f in spec["matrices"].items()}
    parts = []
    for s_, lab in enumerate(labels):
        rows = np.flatnonzero(ids == s_)
        used = (e.codes_o[rows] >= 0).any() or (e.codes_p[rows] >= 0).any()
        if str(lab) not in forms:
            if used:
                raise SdcError(f"pram: {v}: a stratum of the data has no matrix; expected one for every stratum")
            continue
        parts.append((rows, _pram_input(v, forms[str(lab)], e, rows)))
    first = parts[0][1] if parts else _pram_input(v, np.eye(1), e, np.zeros(0, dtype=np.int64))
    return PramInput(first.matrix, first.index_o, first.index_p, first.counts_o, first.counts_p, tuple(parts))


def _pram_input(v, spec, e, rows=None) -> PramInput:
    """The matrix of one variable (for the records ``rows``, default all) and the matrix index
    of each record's value; only the categories of those records must be in the matrix."""
    P, cats = _pram_matrix(v, spec, e.labels, e.order if rows is None else None)
    codes_o = e.codes_o if rows is None else e.codes_o[rows]
    codes_p = e.codes_p if rows is None else e.codes_p[rows]
    pos: dict = {}
    for i, c in enumerate(cats):
        pos.setdefault(c, i)
        pos.setdefault(str(c), i)
    idx = np.array([pos.get(lab, pos.get(str(lab), -2)) for lab in e.labels], dtype=np.int64)
    idx = np.append(idx, -1)
    mo, mp = idx[codes_o], idx[codes_p]  # matrix index per record, -1 = missing
    absent = np.unique(np.concatenate([codes_o[mo == -2], codes_p[mp == -2]]))
    if absent.size:
        bad = [e.labels[c] for c in absent]
        raise SdcError(f"pram: {v}: {len(bad)} categor(y/ies) of the data are not in the matrix")
    p = np.bincount(mo[mo >= 0], minlength=len(cats)).astype(float)
    counts = np.bincount(mp[mp >= 0], minlength=len(cats)).astype(float)
    impossible = [cats[j] for j in np.flatnonzero((counts > 0) & ~(p @ P > 0))]
    if impossible:
        raise SdcError(
            f"pram: {v}: {len(impossible)} protected categor(y/ies) cannot arise from the original "
            "distribution under this matrix; expected the matrix that produced the protected file"
        )
    return PramInput(P, mo, mp, p, counts)
