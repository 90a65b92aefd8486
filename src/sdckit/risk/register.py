r"""Re-identification risk for the members of a subpopulation register (Shlomo & Skinner 2022).

See :func:`register_risk`; the steps are in :mod:`sdckit.risk._register_steps`, the kernels in
:mod:`sdckit._core.register`, the result in :mod:`sdckit.results.register`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._assessed import Assessed, Headline
from .._core.register import theta_hat
from .._declare import Options, Param, declare, options
from ..engines import in_memory_engine
from ..results.register import RegisterRiskResult
from ..scenario import accepts_scenario
from ._loglinear_steps import term_names
from ._register_steps import APPROACHES, approach_a, approach_b, build_cells, measures, validate_register
from .frequencies import records_fields

__all__ = ["RegisterFit", "RegisterRiskResult", "register_risk"]


@options(
    "fit",
    Param("method", "choice", choices=("newton", "fisher")),
    Param("tol", "number"),
    Param("max_iter", "int"),
)
@dataclass(frozen=True)
class RegisterFit(Options):
    """How :func:`register_risk` fits the membership coefficients xi: the ``fit=`` record (or a
    mapping of its fields).

    Parameters
    ----------
    method : {"newton", "fisher"}, default "newton"
        Approach A's fit of xi: ``"fisher"`` is Fisher scoring as published; ``"newton"`` uses
        Fisher scoring for the first 3 iterations and whenever minus the observed Hessian is not
        positive definite, Newton-Raphson otherwise (Fisher scoring alone converges only
        linearly on real data). Approach B's logit has the canonical link: always Newton-Raphson.
    tol : float, default 1e-10
        The fits of xi stop when max |xi_r - xi_{r-1}| < tol; each step is halved (at most 30
        times) while the log-likelihood falls. Before the iterations, a design column without
        register members but with sample records (approach B; population, approach A) gets
        xi = -inf (p = 0 in its cells; ``n_infinite``); approach B: a design column with at
        least as many register members as the sample's weight sum (0 for a category or
        combination that no sample record has) gets xi = +inf (p = 1 in its cells, so
        F-hat = F^1 there; ``n_certain``, and a warning naming the terms; a key's first
        category, which has no column, is checked by the same rule: at p = 1 its cells leave the
        fit and the key's other coefficients are relative to its last category); both rules
        repeat, the first before the second, until neither applies (a cell in columns of both
        kinds has p = 0 without register member, 1 with members). An aliased column (a
        combination of earlier columns over the fitted cells, e.g. when a key's first category
        has no record) is dropped with xi = 0. ``membership_fit`` counts them all and reports
        the iterations (0 when the rules fix every cell).
    max_iter : int, default 100
        Iterations of a fit of xi; a fit that has not converged then is an error naming the
        approach and the model. So is a membership model without finite maximum that the rules
        above do not resolve (approach A: more register members than the fitted population
        count; approach B: a direction of several columns, found by the fit).
    """

    method: str = "newton"
    tol: float = 1e-10
    max_iter: int = 100


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("sample_weight", "column"),
    Param("sampling_fraction", "number"),
    Param("approach", "choice", choices=APPROACHES),
    Param("model", "any"),
    Param("membership_model", "any"),
    Param("missing"),
    inputs=("register", "sample"),
    grouped=(RegisterFit,),
    assessed=Assessed(
        needs=("keys",),
        headlines=(Headline("tau1_star", "expected register uniques that are sample uniques", "lower", "tau1_star"),),
        order=80,
        part="register",
        option="register_sample",
    ),
)
def register_risk(
    register,
    sample,
    keys,
    *,
    sample_weight: str | None = None,
    sampling_fraction: float | None = None,
    approach: str = "B",
    model="2way",
    membership_model="independence",
    fit: RegisterFit | dict | None = None,
    missing=None,
    engine=None,
) -> RegisterRiskResult:
    r"""Re-identification risk for the members of a subpopulation register (Shlomo & Skinner 2022).

    A register lists every member of a subpopulation U_1 of the population U (a cancer register,
    benefit recipients); membership itself is sensitive, so it is not a key. An intruder who
    holds the key values of a person of the population matches the person to a register record
    of the same cell: since the intruder does not know who is a member, a register unique
    (F^1_k = 1) is matched correctly with probability 1/F_k, F_k being the number of people of
    the whole population in the cell. An independent probability sample of the whole population
    (with the same keys) tells how many non-members share the cell.

    Model: F_k ~ Poisson(lambda_k) with a log-linear model for lambda_k (``model``); each unit of
    cell k is a member with probability p_k, logit p_k = x_k' xi (``membership_model``), so
    phi_k = lambda_k p_k is the expected register count; the sample is Bernoulli with fraction
    pi_k. With d_k = lambda_k - phi_k and nu_k = (1 - pi_k) d_k:

    .. math::

        P(F_k = 1 \mid F^1_k = 1) = e^{-d_k}, \qquad
        E(1/F_k \mid F^1_k = 1) = (1 - e^{-d_k}) / d_k,

        P(F_k = 1 \mid F^1_k = 1, f_k = 1) = e^{-\nu_k} / (1 + \nu_k), \qquad
        E(1/F_k \mid F^1_k = 1, f_k = 1) = 1 / (1 + \nu_k).

    tau*_1 and tau*_2 sum the first two over the register uniques (F^1_k = 1); tau_1 and tau_2
    sum the last two over the cells unique in both files (F^1_k = 1, f_k = 1).

    Parameters
    ----------
    register : table (pandas, Polars, PyArrow, dict of columns)
        Every member of the subpopulation (one record each).
    sample : table
        An independent probability sample of the whole population, with the same key columns.
    keys : list of str
        Categorical key variables present in both files. They are coded on the union of the two
        files' categories (declared categories of Enum / categorical columns are kept). Records
        with a missing key value are excluded (a warning gives the counts per file). A category
        that occurs in the register but in no sample record is an error for approach A (and
        ``"both"``: its population counts come from the sample, which cannot estimate those
        cells; merge it with a similar category). Approach B accepts it: its weight sum is 0, at
        most its register count, so the p = 1 rule (``tol`` of :class:`RegisterFit`) sets p = 1 there, F-hat = F^1,
        with a warning.
    sample_weight : str, optional
        The sample's design-weight column. Without ``sampling_fraction`` it gives the sampling
        fraction of each cell, pi_k = f_k / sum of the weights in cell k where f_k > 0 and
        n / sum w elsewhere; approach B's propensity model uses the weights in any case.
    sampling_fraction : float in (0, 1], optional
        The sample's known constant sampling fraction (then the weights, if given, are used by
        the propensity model only; without weights every sample record has weight 1/pi).
        One of ``sample_weight`` and ``sampling_fraction`` is required.
    approach : {"B", "A", "both"}, default "B"
        ``"A"``: lambda from the sample (log-linear model with offset log pi_k, IPF started at
        pi_k), then xi from the register counts F^1_k ~ Poisson(lambda_k p_k) with lambda fixed.
        Cells whose fitted lambda is 0 but that hold register members get the risk of an empty
        population cell: approach A then over-estimates (``n_zero_lambda`` counts them; a
        warning when the register uniques in them make up more than 20 % of tau*_1, the bound
        of the over-statement). ``"B"``: the register stacked
        with the weighted sample gives the membership propensity (pseudo-likelihood of Chen, Li
        & Wu 2019, Newton-Raphson), the register counts weighted by 1/p estimate the population
        counts, the log-linear model is fitted to them (pseudo-maximum likelihood) and
        p_k = F^1_k / \hat F_k. ``"both"``: both; the result's fields are B's and
        ``result.approaches`` holds both.
    model : str or list, default "2way"
        The log-linear model of lambda: ``"independence"``, ``"2way"`` (all two-way interactions,
        as in Shlomo & Skinner's application), ``"3way"``, ``"saturated"``, a formula
        ``"a*b + c"`` or a list of terms (keys in no term enter as main effects). Hierarchical
        models are fitted by IPF (every fitted margin within 1e-5 of the total of the observed
        one, at most 1000 cycles), others by the Poisson GLM.
    membership_model : str or list, default "independence"
        The logistic model of membership: main effects of every key by default, or the same
        forms as ``model``, except that a formula or a list of terms leaves out the keys it does
        not mention (``"age + sex"``: membership depends on age and sex only).
    fit : RegisterFit or dict, optional
        How the membership coefficients xi are fitted (Newton-Raphson or Fisher scoring, the
        tolerance and the iterations, and the rules for coefficients at -inf or +inf): see
        :class:`RegisterFit`.
    missing
        Extra values to treat as missing in the key columns (as in :func:`sdckit.frequencies`).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    RegisterRiskResult
        tau*_1, tau*_2, tau_1, tau_2, their shares, the design-consistent theta-hat, the fitted
        models; per register record (``to_frame()``, rows of the register input) the counts,
        \hat lambda_k, \hat p_k and the four risks of register uniques.

    Notes
    -----
    theta-hat = sum I(F^1=1, f=1) / sum [I(F^1=1, f=1) + 2 (1 - pi_k)/pi_k I(F^1=1, f=2)] estimates
    theta = sum I(F^1=1, f=1) / sum F_k I(F^1=1, f=1) without a model (Skinner & Elliot 2002); with
    fractions that vary by cell it differs from the published formula, which holds for a constant
    fraction only. The fits work on the cells of the full key table (register counts, sample
    counts and weight sums per cell), not on the records: the cost grows with the number of cells.

    References
    ----------
    Shlomo, N. & Skinner, C. (2022), Measuring risk of re-identification in microdata:
    state-of-the-art and new directions, JRSS A 185, 1644-1662 (Section 3). Chen, Y., Li, P. &
    Wu, C. (2019), Doubly robust inference with nonprobability survey samples, JASA 115.
    Skinner, C. & Elliot, M. (2002), A measure of disclosure risk for microdata, JRSS B 64.
    """
    eng = in_memory_engine(engine, "register_risk", register)
    inp = validate_register(
        register,
        sample,
        keys,
        sample_weight=sample_weight,
        sampling_fraction=sampling_fraction,
        approach=approach,
        model=model,
        membership_model=membership_model,
        missing=missing,
        engine=eng,
        **fit.fields(),  # type: ignore[union-attr]
    )
    cells = build_cells(inp)
    fits = {}
    if inp.approach in ("A", "both"):
        fits["A"] = approach_a(inp, cells)
    if inp.approach in ("B", "both"):
        fits["B"] = approach_b(inp, cells)
    results = {a: _result(inp, cells, fitted) for a, fitted in fits.items()}
    if inp.approach != "both":
        return results[inp.approach]
    from dataclasses import replace

    return replace(results["B"], approach="both", approaches=results)


def _result(inp, cells, fit) -> RegisterRiskResult:
    """One approach's result."""
    m = measures(cells, fit, inp)
    rec = m.pop("records")
    return RegisterRiskResult(
        keys=inp.names,
        approach=fit.approach,
        n_register=inp.n_register,
        n_sample=inp.n_sample,
        n_register_excluded=inp.n_register_excluded,
        n_sample_excluded=inp.n_sample_excluded,
        n_cells=cells.K,
        levels=inp.levels,
        sampling_fraction=cells.sampling_fraction,
        theta_hat=theta_hat(cells.F1, cells.f, cells.pi),
        terms=term_names(sorted(inp.terms, key=lambda t: (len(t), t)), inp.names),
        membership_terms=term_names(inp.membership_terms, inp.names),
        xi=fit.xi,
        loglinear_fit=fit.loglinear,
        membership_fit=fit.membership,
        n_zero_lambda=fit.n_zero_lambda,
        categories={n: tuple(c) for n, c in zip(inp.names, inp.categories)},
        register_fk=inp.full(cells.F1[cells.idx]),
        fk=inp.full(cells.f[cells.idx]),
        lam=rec["lam"],
        p_member=rec["p_member"],
        p_unique_register=rec["p_unique_register"],
        risk_register=rec["risk_register"],
        p_unique_both=rec["p_unique_both"],
        risk_both=rec["risk_both"],
        backend=inp.register_prep.table.backend,
        row_index=inp.register_prep.table.index,
        **records_fields(inp.register_prep),
        **m,
    )
