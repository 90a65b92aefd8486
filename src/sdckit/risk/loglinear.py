r"""Population-uniqueness risk from Poisson log-linear models.

Skinner & Holmes (1998), Elamir & Skinner (2006), Skinner & Shlomo (2008), Shlomo & Skinner
(2010), Rinott & Shlomo (2006). See :func:`loglinear_risk`; the steps are in
:mod:`sdckit.risk._loglinear_steps`, the result in :mod:`sdckit.results.loglinear`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._assessed import Assessed, Headline
from .._declare import Options, Param, declare, options
from .._deprecation import renamed_parameters
from .._errors import SdcError
from ..results.loglinear import LoglinearRiskResult
from ..scenario import accepts_scenario
from ._loglinear_steps import (
    COMPAT_METHODS,
    METHODS,
    build_table,
    ci_measures,
    fit_model,
    model_interval,
    model_stability,
    modrisk_result,
    parse_model,
    pram_measures,
    risk_measures,
    smoothing_measures,
    term_names,
    validate_loglinear,
    weak_estimate,
)
from ._options import Intervals
from .frequencies import records_fields

__all__ = ["LoglinearFit", "LoglinearRiskResult", "LoglinearSelection", "loglinear_risk", "parse_model"]


def _fractions_by_label(inp) -> dict | None:
    """The known fractions by category (``{key: {label: fraction}}``), or None."""
    if inp.stratum_fractions is None:
        return None
    from ._loglinear_access import label_values

    j, fractions = inp.stratum_fractions
    labels = label_values(inp.prep.keys.labels[j])
    return {inp.names[j]: {str(lab): float(x) for lab, x in zip(labels, fractions)}}


@options(
    "selection",
    Param("criterion", "choice", choices=("tau1", "tau2")),
    Param("search", "choice", choices=("bracket", "skinner-shlomo")),
    Param("z_target", "number"),
    Param("z_crit", "number"),
    Param("candidates", "int", nullable=True),
    Param("term_test", "number", nullable=True),
    Param("records_per_parameter", "number", nullable=True, low=0.0, low_open=True),
    Param("max_steps", "int"),
    Param("stability", "int"),
    Param("seed"),
)
@dataclass(frozen=True)
class LoglinearSelection(Options):
    r"""How :func:`loglinear_risk` searches for the model (``model="auto"``): the
    ``selection=`` record (or a mapping of its fields).

    Parameters
    ----------
    criterion : {"tau2", "tau1"}
        Measure whose Z drives the search.
    search : {"bracket", "skinner-shlomo"}, default "bracket"
        ``"bracket"``: add terms while Z > ``z_target``; the last two models bracket the target
        and the estimate uses the model between them, log lambda = (1 - w) log lambda_a +
        w log lambda_b (the last term's parameters scaled by w in [0, 1]) with Z = z_target.
        Under a correct model Z is centred somewhat below 0 (its fitted values use the data),
        hence the default target -0.5. Calibrated on samples of the EU-SILC synthetic population
        (six key sets, fractions 1/5 to 1/100 and a stratified design; see the calibration page
        of the documentation). ``"skinner-shlomo"``: the classic rule, stop at |Z| <= ``z_crit``, when no
        term reduces |Z|, or when the best term gives Z < -z_crit (the previous model is kept).
    z_target : float, default -0.5
        The Z the bracketing search aims at.
    z_crit : float, default 1.96
        The classic rule's bound.
    candidates : int or None, default 1
        Terms scored by Z at each step, the one with the smallest |Z| added: the first
        ``candidates`` by support (see ``term_test``; 1: the most supported term), or, with
        ``term_test=None``, those of largest margin deviance (None: every term; the classic
        search).
    term_test : float or None, default 2.0
        A term is a candidate only when the sample supports it: its standardized deviance
        reduction (G^2 - df) / sqrt(2 df) exceeds this (about a one-sided chi-square test at
        2.5 %), with G^2 the deviance reduction of its first IPF step (sample-count scale) and df
        its degrees of freedom less the empty cells of its observed margin (Bishop, Fienberg &
        Holland 1975); candidates are ranked by it. The search stops early when no term is
        supported. None: every term is a candidate, ranked by raw margin deviance (the search
        of sdckit before issue 24, with ``candidates=3``). Ranking by Z or raw deviance favours
        terms with many parameters, which in sparse tables (single years of age, 1/50 samples)
        fit the sample's own uniques: the risk was then under-estimated.
    records_per_parameter : float or None, default 1.0
        A term is a candidate only when the sample has at least this many records per
        parameter it adds (prod (L_j - 1) over its keys): a term with more parameters than
        records fits the sample's own uniques whatever the support test says, and makes tau_2
        too low. Chosen on the validation grid (see the calibration page). None: no bound.
    max_steps : int, optional
        Maximum number of terms the search adds.
    stability : int, default 0
        Repeat the search on this many subsamples (each record kept with probability 0.8,
        which is a Bernoulli sample of the population at 0.8 pi) and report how often each term
        is chosen (inclusion frequencies, Sauerbrei & Schumacher 1992), the share of subsamples
        that choose the same model and the spread of their tau_1 / n_1 and tau_2 / n_1
        (``result.stability``). Each subsample costs one search.
    seed : int, optional
        Seed of the resampling (the same seed gives the same stability figures); None draws a
        fresh seed, recorded in ``result.stability["seed"]``.
    """

    criterion: str = "tau2"
    search: str = "bracket"
    z_target: float = -0.5
    z_crit: float = 1.96
    candidates: int | None = 1
    term_test: float | None = 2.0
    records_per_parameter: float | None = 1.0
    max_steps: int | None = None
    stability: int = 0
    seed: int | None = None


@options(
    "fit",
    Param("sampling", "choice", choices=("pml", "constant")),
    Param("method", "choice", choices=METHODS),
    Param("tol", "number"),
    Param("max_iter", "int"),
    Param("smoothing", "choice", choices=("nb",)),
    Param("compat", "choice", choices=("sdcMicro", "sdcmicro")),
    Param("compat_method", "choice", choices=COMPAT_METHODS),
    Param("bound", "number"),
)
@dataclass(frozen=True)
class LoglinearFit(Options):
    r"""How :func:`loglinear_risk` fits the model: the ``fit=`` record (or a mapping of its
    fields).

    Parameters
    ----------
    sampling : {"pml", "constant"}
        How the weights give pi (see ``weight`` of :func:`loglinear_risk`).
    method : {"auto", "ipf", "irls"}
        The fit: ``"auto"`` uses IPF for hierarchical models, Poisson IRLS otherwise
        (formerly ``fit_method``).
    tol, max_iter
        IPF convergence: max |fitted - observed margin| < tol (default 1e-4 * total of the
        fitted counts), at most ``max_iter`` cycles (the Poisson GLM stops at
        min(max_iter, 100) iterations; a GLM that does not converge is an error naming the terms
        with empty margins). A tolerance of 1e-8 * n is not reached in 1000 cycles when the MLE
        lies on the boundary (sparse tables: IPF then converges sublinearly); on eusilcP
        (103,680 cells, two-way model) tau_1/tau_2 at 1e-4 * n differ from the 1000-cycle values
        by < 1e-4 relative.
    smoothing : {"nb"}, optional
        Negative-binomial smoothing (Rinott & Shlomo 2006), moment estimator over the cells
        within one step on every key. Experimental: emits an SdcWarning.
    compat : {"sdcMicro"}, optional
        Reproduce sdcMicro ``modRisk(method = compat_method, formulaM = model, weights,
        bound)``: table over the observed levels, GLM on sample counts (numeric key columns
        enter linearly, as in R's formulas; IPF treats them as factors), fitted sample-scale
        values used as lambda with p = \sum 1/w per cell, risks divided by the number of kept
        cells. Requires ``weight`` and an explicit model. Not a population-risk estimate:
        ``tau1`` and ``tau2`` are NaN, the numbers are in ``result.modrisk``.
    compat_method : {"default", "CE", "PML", "weightedLLM", "IPF"}
        sdcMicro ``modRisk``'s ``method`` (formerly ``modrisk_method``).
    bound : float, default inf
        sdcMicro's ``bound``: keep cells with 0 < f_k <= bound.
    """

    sampling: str = "pml"
    method: str = "auto"
    tol: float | None = None
    max_iter: int = 1000
    smoothing: str | None = None
    compat: str | None = None
    compat_method: str = "default"
    bound: float = math.inf


@accepts_scenario
@renamed_parameters(positional=("weight", "sampling_fraction", "model"))
@declare(
    "measure",
    Param("keys"),
    Param("weight"),
    Param("sampling_fraction", "number", per_variable=True),
    Param("model", "any"),
    Param("pram", "any"),
    Param("missing"),
    Param("allow_degenerate_keys"),
    random=True,
    out_of_core=True,
    renamed={"fit_method": "method", "modrisk_method": "compat_method"},
    grouped=(LoglinearSelection, LoglinearFit, Intervals),
    assessed=Assessed(
        needs=("keys",),
        headlines=(Headline("tau1", "expected population uniques among the sample uniques", "lower", "tau1"),),
        order=70,
        part="loglinear",
    ),
)
def loglinear_risk(
    data,
    keys,
    *,
    weight: str | None = None,
    sampling_fraction: float | dict | None = None,
    model="auto",
    selection: LoglinearSelection | dict | None = None,
    fit: LoglinearFit | dict | None = None,
    pram: dict | None = None,
    intervals: Intervals | dict | None = None,
    missing=None,
    allow_degenerate_keys: bool = False,
    engine=None,
) -> LoglinearRiskResult:
    r"""Population-uniqueness risk from a Poisson log-linear model (Skinner & Holmes 1998).

    The key variables are cross-classified into the full contingency table (every combination of
    categories, empty cells included). Population counts follow F_k ~ Poisson(lambda_k) with a
    log-linear model for lambda_k; sampling is Bernoulli with fraction pi_k, so that, with
    mu_k = (1 - pi_k) \hat lambda_k, for a sample unique (f_k = 1)

    .. math::

        P(F_k = 1 \mid f_k = 1) = e^{-\mu_k}, \qquad
        E(1/F_k \mid f_k = 1) = (1 - e^{-\mu_k}) / \mu_k,

    and the file-level measures are \hat\tau_1 = \sum_{k: f_k = 1} e^{-\mu_k} (sample uniques that
    are population unique) and \hat\tau_2 = \sum_{k: f_k = 1} (1 - e^{-\mu_k})/\mu_k (expected
    correct matches of sample uniques).

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict of columns)
    keys : list of str
        Categorical key variables (declared categories of Enum / ordered categoricals are kept,
        otherwise the observed ones). Records with a missing key value are excluded (warning).
    weight : str, optional
        Design weight (keyword only). With ``sampling="pml"`` (default) the model is fitted to
        the weighted counts \hat F_k (pseudo-maximum likelihood, Rao & Thomas 2003),
        \hat lambda_k is the fitted value and pi_k = f_k / \hat F_k (1 / w_i for a sample
        unique, capped at 1). With ``fit={"sampling": "constant"}`` the model is fitted to the sample
        counts and pi = n / \sum w.
    sampling_fraction : float in (0, 1] or dict, optional
        A known constant sampling fraction (1 for a census, where every sample unique is a
        population unique), or known fractions that vary by the categories of one key variable
        (a stratified design: ``{"region": {"North": 0.02, "South": 0.05, ...}}``, one fraction
        per category): the model is then fitted with the offset log pi_k, so that
        \hat lambda_k = \hat mu_k / pi_k. Without weights it is required. With weights too, the
        weights must be design weights 1 / pi: in each stratum they must sum to within 10 % of
        n_h / pi_h (calibrated weights pass), else an error.
    model : str or list, default "auto"
        ``"auto"``: forward model search on Z = \hat B / \sqrt{\hat v} for ``criterion``
        (Skinner & Shlomo 2008): start from the main effects and add, at each step, the two-way
        (or, once all its two-way sub-terms are in, three-way) term that the sample supports
        most (``term_test``); ``search`` says when to stop.
        Otherwise see :func:`parse_model`: ``"independence"``, ``"2way"``, ``"3way"``,
        ``"saturated"``, a formula ``"a*b + c"`` or a list of terms.
    selection : LoglinearSelection or dict, optional
        How the search of ``model="auto"`` runs (criterion, stopping rule, candidates, stability
        on subsamples): see :class:`LoglinearSelection`.
    fit : LoglinearFit or dict, optional
        How the model is fitted (sampling, IPF or IRLS and their convergence, smoothing, the
        sdcMicro ``modRisk`` reproduction): see :class:`LoglinearFit`.
    pram : dict, optional
        Key variable -> diagonal of its PRAM transition matrix (probability that a category is
        kept): a number (same for every category), a dict label -> probability
        (``details["pram_diagonal"]`` of :func:`sdckit.pram`) or a transition matrix whose
        diagonal is taken (``details["pram"]``, a ``(matrix, categories)`` pair, a labelled
        pandas DataFrame), as in :func:`sdckit.individual_risk`; every category of the data
        needs one. Adds the misclassification-adjusted
        \hat\tau_2 = \sum_{SU} M_kk \hat E(1/F_k | f_k = 1), M_kk = \prod_v P^{(v)}_{k_v k_v}
        (Shlomo & Skinner 2010). Given the full matrices (``details["pram"]``), also the exact
        form of the correct-match probability (Shlomo & Skinner 2022, eq. 9, with the misprint
        of its numerator corrected), which multiplies each term by
        c_k = [1 / (1 - pi_k M_kk)] \sum_j \hat\lambda_j M_kj / \sum_j \hat\lambda_j M_kj /
        (1 - pi_k M_kj) (the fitted population counts of the released cells standing for those
        of the true ones; c_k -> 1 for small pi_k): ``pram["tau2_exact"]``. A variable PRAMed
        within strata is given as ``{"strata": columns, "matrices": {stratum label: ...}}``
        (``details["pram_by_stratum"]`` of :func:`sdckit.pram`); each record uses its stratum's
        matrix. ``{}``: no
        adjustment.
    intervals : Intervals or dict, optional
        ``{"ci": True}``: confidence intervals for tau_1 and tau_2 (``ci`` of the result, shown
        beside the estimates in the summary), at level ``confidence`` (see :class:`Intervals`).
        A parametric bootstrap: the model parameters are drawn from
        their asymptotic normal distribution (inverse Fisher information of the Poisson fit; a
        sandwich with the weighted counts' variances sum w_i^2 for the pseudo-likelihood fit),
        then F_k - 1 ~ Poisson((1 - pi_k) lambda*_k) for every sample unique; the interval is
        the central ``confidence`` range of tau_1* = #{F*_k = 1} and tau_2* = sum 1 / F*_k over
        2000 draws with a fixed seed (Rinott & Shlomo 2007 give variances and intervals for
        these measures). It covers both the model's estimation error and the randomness of
        the population counts given the sample, and assumes the model is right.
    missing, allow_degenerate_keys
        As in :func:`sdckit.frequencies`.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`sdckit.frequencies`): with DuckDB or Spark
        the contingency table (counts and weight sums per key pattern) is one GROUP BY in the
        engine; the model is fitted to it in memory. Not with ``fit={"compat": "sdcMicro"}``.

    Returns
    -------
    LoglinearRiskResult
        With ``model="auto"``: ``path`` (each step's term, Z_1, Z_2, tau_1, tau_2 and the
        runner-up term with its Z: how close the choice was), ``blend`` (the bracketing
        weight) and the chosen ``terms``.

    Notes
    -----
    Table sizes: IPF needs ~24 bytes per cell and O(K) work per generator and cycle: 10^7 cells
    fit in memory and in seconds to a minute; dense tables are refused above 10^8 cells. IRLS
    (non-hierarchical models) uses a sparse K x p design (dense when K p^2 is small) and a dense
    p x p system: up to about 10^6 cells and a few thousand parameters. The Z criterion sums
    over all K cells. ``weight``, ``sampling_fraction`` and ``model`` given by position still
    work, with a DeprecationWarning, and so do the fields of ``selection``, ``fit`` and
    ``intervals`` given flat (``tol=1e-8`` for ``fit={"tol": 1e-8}``).

    References
    ----------
    Skinner, C.J. & Holmes, D.J. (1998), J. Official Statistics 14, 361-372. Elamir, E. &
    Skinner, C.J. (2006), J. Official Statistics 22. Skinner, C.J. & Shlomo, N. (2008), JASA 103,
    989-1001. Shlomo, N. & Skinner, C.J. (2010), Annals of Applied Statistics 4. Rinott, Y. &
    Shlomo, N. (2006), PSD. Rao, J.N.K. & Thomas, D.R. (2003), Analysis of categorical response
    data from complex surveys. sdcMicro ``modRisk``.
    """
    want_ci, conf = bool(intervals.ci), float(intervals.confidence)  # type: ignore[union-attr]  # checked by the declaration
    arguments = dict(
        weight=weight,
        sampling_fraction=sampling_fraction,
        model=model,
        pram=pram,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        engine=engine,
        **selection.fields(),  # type: ignore[union-attr]
        **fit.fields(),  # type: ignore[union-attr]
    )
    inp = validate_loglinear(data, keys, **arguments)
    if inp.compat is not None:
        if want_ci:
            raise SdcError(
                "intervals.ci: sdcMicro's modRisk has no intervals; expected no intervals with fit={'compat': 'sdcMicro'}"
            )
        return modrisk_result(inp)
    table = build_table(inp)
    model_fit = fit_model(table, inp)
    stability_out = model_stability(table, inp, model_fit)
    risk = risk_measures(table, model_fit, inp)
    pram_out, risk_pram = pram_measures(inp, risk, table, model_fit)
    ci_out = ci_measures(inp, table, model_fit, risk, conf) if want_ci else None
    interval = model_interval(table, model_fit, risk, conf)
    weak = weak_estimate(inp, risk, interval)
    smooth_out = smoothing_measures(inp, table, risk)
    return LoglinearRiskResult(
        keys=inp.names,
        n=inp.n,
        n_used=inp.n_used,
        n_excluded=inp.n_excluded,
        n_cells=table.K,
        levels=inp.levels,
        n_sample_uniques=risk["n1"],
        tau1=risk["tau1"],
        tau2=risk["tau2"],
        terms=term_names(model_fit.terms, inp.names),
        generators=term_names(model_fit.generators, inp.names),
        method=model_fit.method,
        iterations=model_fit.iterations,
        converged=model_fit.converged,
        n_parameters=risk["n_parameters"],
        sampling=table.sampling,
        sampling_fraction=table.sampling_fraction,
        criterion=inp.criterion,
        gof=risk["gof"],
        path=model_fit.path,
        blend=model_fit.blend,
        stability=stability_out,
        search=None if inp.terms is not None else inp.search,
        sampling_fractions=_fractions_by_label(inp),
        pram=pram_out,
        smoothing=smooth_out,
        fk=risk["fk"],
        lam=risk["lam"],
        p_unique=risk["p_unique"],
        risk=risk["risk"],
        risk_pram=risk_pram,
        ci=ci_out,
        interval=interval,
        weak=weak,
        backend=inp.backend,
        row_index=inp.row_index,
        **records_fields(inp.prep),
    )
