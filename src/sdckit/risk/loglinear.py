r"""Population-uniqueness risk from Poisson log-linear models (spec C).

Skinner & Holmes (1998), Elamir & Skinner (2006), Skinner & Shlomo (2008), Shlomo & Skinner
(2010, 2022 = seed S004), Rinott & Shlomo (2006). See :func:`loglinear_risk`.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._core import loglinear as ll
from .._errors import SdcError, SdcWarning
from .._prepare import prepare
from ..results._base import Result, Summary, new_axes

__all__ = ["LoglinearRiskResult", "loglinear_risk", "parse_model"]

MODRISK_METHODS = ("default", "CE", "PML", "weightedLLM", "IPF")
MAX_CELLS = 10**8
MAX_IRLS_PARAMETERS = 5000


# ---------------------------------------------------------------------------------------------
# model specification
def parse_model(model, names) -> list[tuple[int, ...]]:
    """Terms (tuples of key indices) of a model specification.

    Accepted: ``"independence"`` (also ``"main"``, ``"1way"``), ``"2way"`` (all two-way
    interactions), ``"3way"``, ``"saturated"``, an R-style formula over the key names
    (``"a*b + c"``, ``"~ a + b + a:c"``; ``a*b`` expands to ``a + b + a:b``), or a list of terms,
    each a name or a tuple of names (``[("age", "sex"), ("region",)]``). Keys that appear in no
    term enter as main effects.
    """
    names = list(names)
    m = len(names)
    pos = {n: j for j, n in enumerate(names)}

    def idx(name):
        name = str(name).strip()
        if name not in pos:
            raise SdcError(f"model: variable {name!r} is not a key variable; expected one of {', '.join(names)}")
        return pos[name]

    mains = [(j,) for j in range(m)]
    if isinstance(model, str):
        s = model.strip()
        low = s.lower().replace("-", "").replace("_", "")
        if low in ("independence", "main", "1way", "maineffects"):
            return mains
        if low in ("2way", "twoway", "all2way"):
            return mains + list(itertools.combinations(range(m), 2))
        if low in ("3way", "threeway", "all3way"):
            return mains + list(itertools.combinations(range(m), 2)) + list(itertools.combinations(range(m), 3))
        if low == "saturated":
            return sorted(ll.closure([tuple(range(m))]), key=lambda t: (len(t), t))
        s = s.lstrip("~").strip()
        if not s:
            raise SdcError("model: empty formula; expected e.g. 'a*b + c', '2way', 'independence' or 'auto'")
        terms: list[tuple[int, ...]] = []
        for part in s.split("+"):
            part = part.strip()
            if not part:
                raise SdcError(f"model: empty term in {model!r}; expected terms separated by '+'")
            if "*" in part:
                vs = sorted({idx(v) for v in part.split("*")})
                for r in range(1, len(vs) + 1):
                    terms += list(itertools.combinations(vs, r))
            else:
                terms.append(tuple(sorted({idx(v) for v in part.split(":")})))
    elif isinstance(model, (list, tuple)):
        if not model:
            raise SdcError("model: empty list of terms; expected at least one term")
        terms = []
        for t in model:
            if isinstance(t, str):
                terms.append((idx(t),))
            elif isinstance(t, (list, tuple)) and t:
                terms.append(tuple(sorted({idx(v) for v in t})))
            else:
                raise SdcError(f"model: term {t!r} is not a name or a tuple of names")
        terms = list(ll.closure(terms))  # a list of terms is a generating class (hierarchical)
    else:
        raise SdcError(f"model: got {type(model).__name__}; expected 'auto', '2way', 'independence', a formula or a list of terms")
    mentioned = {j for t in terms for j in t}
    terms += [(j,) for j in range(m) if j not in mentioned]
    out = []
    for t in terms:
        if t not in out:
            out.append(t)
    return sorted(out, key=lambda t: (len(t), t))


def _term_names(terms, names):
    return [tuple(names[j] for j in t) for t in terms]


def _formula(terms, names) -> str:
    return " + ".join(":".join(names[j] for j in t) for t in terms)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LoglinearRiskResult(Result):
    r"""Population-uniqueness risk from a Poisson log-linear model (spec C).

    Attributes
    ----------
    keys : tuple of str
    n : int
        Records in the input.
    n_used, n_excluded : int
        Records in the model table / excluded for a missing key value.
    n_cells : int
        Cells of the full contingency table (empty cells included).
    sample_uniques : int
        n_1 = number of sample-unique cells (= records with f_k = 1).
    tau1, tau2 : float
        \hat tau_1 = sum_{SU} exp(-mu_k), \hat tau_2 = sum_{SU} (1 - exp(-mu_k)) / mu_k,
        mu_k = (1 - pi_k) \hat lambda_k. NaN in the sdcMicro compatibility mode.
    terms : tuple of tuple of str
        Model terms (the closed, hierarchical term set for IPF fits).
    gof : dict
        Deviance, Pearson X^2, degrees of freedom, and the Skinner-Shlomo B, v, Z for tau_1/tau_2.
    path : tuple of dict
        Forward search path (``model="auto"``): each step's added term, Z_1, Z_2, tau_1, tau_2.
    pram, smoothing, modrisk : dict or None
        Misclassification-adjusted tau_2 (C.5), negative-binomial smoothing (C.6, experimental),
        sdcMicro ``modRisk`` numbers (compatibility mode, C.7).
    """

    keys: tuple = ()
    n: int = 0
    n_used: int = 0
    n_excluded: int = 0
    n_cells: int = 0
    levels: tuple = ()
    sample_uniques: int = 0
    tau1: float = float("nan")
    tau2: float = float("nan")
    terms: tuple = ()
    generators: tuple = ()
    fit_method: str = "ipf"
    iterations: int = 0
    converged: bool = True
    n_parameters: int = 0
    sampling: str = "constant"
    sampling_fraction: float | None = None
    criterion: str = "tau2"
    gof: dict = field(default_factory=dict)
    path: tuple = ()
    pram: dict | None = None
    smoothing: dict | None = None
    modrisk: dict | None = None
    compat: str | None = None
    fk: np.ndarray = field(default=None, repr=False)
    lam: np.ndarray = field(default=None, repr=False)
    p_unique: np.ndarray = field(default=None, repr=False)
    risk: np.ndarray = field(default=None, repr=False)
    risk_pram: np.ndarray | None = field(default=None, repr=False)

    @property
    def rate1(self) -> float:
        """tau_1 / n_1 (share of sample uniques that are population unique)."""
        return self.tau1 / self.sample_uniques if self.sample_uniques else 0.0

    @property
    def rate2(self) -> float:
        """tau_2 / n_1 (expected correct-match rate of sample uniques)."""
        return self.tau2 / self.sample_uniques if self.sample_uniques else 0.0

    @property
    def rate1_records(self) -> float:
        return self.tau1 / self.n_used if self.n_used else 0.0

    @property
    def rate2_records(self) -> float:
        return self.tau2 / self.n_used if self.n_used else 0.0

    @property
    def formula(self) -> str:
        return " + ".join(":".join(t) for t in self.terms)

    def to_dict(self) -> dict:
        fin = lambda x: None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x  # noqa: E731
        out = {
            "measure": "loglinear_risk",
            "keys": list(self.keys),
            "n": self.n,
            "n_used": self.n_used,
            "n_excluded": self.n_excluded,
            "n_cells": self.n_cells,
            "levels": {k: int(v) for k, v in zip(self.keys, self.levels)},
            "sample_uniques": self.sample_uniques,
            "tau1": fin(self.tau1),
            "tau2": fin(self.tau2),
            "rate1_per_sample_unique": fin(self.rate1),
            "rate2_per_sample_unique": fin(self.rate2),
            "rate1_per_record": fin(self.rate1_records),
            "rate2_per_record": fin(self.rate2_records),
            "model": {
                "formula": self.formula,
                "terms": [list(t) for t in self.terms],
                "generating_class": [list(t) for t in self.generators],
                "fit_method": self.fit_method,
                "iterations": self.iterations,
                "converged": self.converged,
                "n_parameters": self.n_parameters,
            },
            "sampling": self.sampling,
            "sampling_fraction": self.sampling_fraction,
            "gof": {k: fin(v) for k, v in self.gof.items()},
        }
        if self.path:
            out["search"] = {"criterion": self.criterion, "path": [dict(p) for p in self.path]}
        if self.pram is not None:
            out["pram"] = dict(self.pram)
        if self.smoothing is not None:
            out["smoothing"] = dict(self.smoothing)
        if self.modrisk is not None:
            out["compat"] = self.compat
            out["modrisk"] = dict(self.modrisk)
        return out

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("records excluded (missing key value)", self.n_excluded),
            ("key variables", ", ".join(self.keys)),
            ("cells in the table", self.n_cells),
            ("model", self.formula),
            ("fit", f"{self.fit_method}, {self.iterations} iterations" + ("" if self.converged else " (not converged)")),
            ("sampling", self.sampling if self.sampling_fraction is None else f"{self.sampling}, pi = {self.sampling_fraction:.6g}"),
            ("sample uniques (n_1)", self.sample_uniques),
        ]
        sections = [("", rows)]
        notes = []
        if self.modrisk is not None:
            mr = self.modrisk
            sections.append(("sdcMicro modRisk (compatibility mode)", [
                ("method", mr["method"]), ("kept cells", mr["kept_cells"]),
                ("gr1 (risk measure 1)", mr["gr1"]), ("gr2 (risk measure 2)", mr["gr2"])]))
            notes.append("modRisk divides by the number of kept cells and does not estimate tau_1/tau_2 (spec C.7, K.12)")
        else:
            sections.append(("Global measures", [
                ("tau_1: sample uniques that are population unique", self.tau1),
                ("tau_2: expected correct matches of sample uniques", self.tau2),
                ("tau_1 / n_1", self.rate1), ("tau_2 / n_1", self.rate2),
                ("tau_1 / n", self.rate1_records), ("tau_2 / n", self.rate2_records),
            ]))
            g = self.gof
            sections.append(("Goodness of fit", [
                ("deviance", g.get("deviance")), ("Pearson X^2", g.get("pearson")), ("df", g.get("df")),
                ("Z_1 (B/sqrt(v), tau_1)", g.get("Z1")), ("Z_2 (B/sqrt(v), tau_2)", g.get("Z2"))]))
            notes.append("Z >> 0: under-fitting (risk over-estimated); Z << 0: over-fitting (spec C.4)")
        if self.path:
            sections.append((f"Forward search on Z ({self.criterion})", {
                "columns": ["step", "added term", "accepted", "Z_1", "Z_2", "tau_1", "tau_2"],
                "rows": [(p["step"], p["added"] or "(main effects)", p["accepted"], p["Z1"], p["Z2"], p["tau1"], p["tau2"])
                         for p in self.path]}))
        if self.pram is not None:
            sections.append(("PRAM adjustment (spec C.5)", [("tau_2 adjusted", self.pram["tau2"])]))
        if self.smoothing is not None:
            sections.append(("Negative-binomial smoothing (experimental, spec C.6)", [
                ("tau_1", self.smoothing["tau1"]), ("tau_2", self.smoothing["tau2"])]))
        return Summary("Log-linear population-uniqueness risk", tuple(sections), tuple(notes))

    def _records(self):
        out = {"fk": self.fk, "lambda": self.lam, "p_unique": self.p_unique, "risk": self.risk}
        if self.risk_pram is not None:
            out["risk_pram"] = self.risk_pram
        return out

    def plot(self, ax=None):
        """The forward-search path (Z by step) for ``model="auto"``, else a histogram of the
        per-record risk E(1/F | f = 1) of the sample uniques."""
        ax = new_axes(ax)
        if self.path:
            z = [p["Z" + self.criterion[-1]] for p in self.path]
            ax.plot(range(len(z)), z, marker="o")
            ax.axhline(0, color="grey", lw=0.5)
            ax.set_xlabel("search step")
            ax.set_ylabel(f"Z ({self.criterion})")
            ax.set_title("Log-linear model search")
        else:
            r = self.risk[np.isfinite(self.risk)]
            ax.hist(r, bins=20, range=(0, 1), color="#4C72B0")
            ax.set_xlabel("E(1/F | f = 1)")
            ax.set_ylabel("sample uniques")
            ax.set_title("Per-record risk of sample uniques")
        return ax


# ---------------------------------------------------------------------------------------------
def _check_params(sampling_fraction, sampling, criterion, z_crit, fit_method, compat, modrisk_method, bound):
    if sampling_fraction is not None:
        try:
            sf = float(sampling_fraction)
        except (TypeError, ValueError):
            raise SdcError(f"sampling_fraction: got {sampling_fraction!r}; expected a number in (0, 1]") from None
        if not (0 < sf <= 1):
            raise SdcError(f"sampling_fraction: got {sampling_fraction!r}; expected a number in (0, 1]")
    if sampling not in ("pml", "constant"):
        raise SdcError(f"sampling: got {sampling!r}; expected 'pml' or 'constant'")
    if criterion not in ("tau1", "tau2"):
        raise SdcError(f"criterion: got {criterion!r}; expected 'tau1' or 'tau2'")
    try:
        zc = float(z_crit)
    except (TypeError, ValueError):
        zc = float("nan")
    if not (zc > 0 and math.isfinite(zc)):
        raise SdcError(f"z_crit: got {z_crit!r}; expected a positive number")
    if fit_method not in ("auto", "ipf", "irls"):
        raise SdcError(f"fit_method: got {fit_method!r}; expected 'auto', 'ipf' or 'irls'")
    if compat is not None and str(compat).lower() != "sdcmicro":
        raise SdcError(f"compat: got {compat!r}; expected None or 'sdcMicro'")
    if modrisk_method not in MODRISK_METHODS:
        raise SdcError(f"modrisk_method: got {modrisk_method!r}; expected one of {', '.join(MODRISK_METHODS)}")
    try:
        b = float(bound)
    except (TypeError, ValueError):
        b = float("nan")
    if not b > 0:
        raise SdcError(f"bound: got {bound!r}; expected a number > 0")


class _Model:
    """Fits on one table: the target counts, the fraction pi per cell and the scale to lambda."""

    def __init__(self, shape, target, f, pi_cells, lam_scale, fit_method, tol, max_iter):
        self.shape, self.target, self.f = shape, target, f
        self.pi, self.lam_scale = pi_cells, lam_scale
        self.fit_method, self.tol, self.max_iter = fit_method, tol, max_iter

    def fit(self, terms, start=None):
        hier = ll.is_hierarchical(terms)
        method = self.fit_method
        if method == "auto":
            method = "ipf" if hier else "irls"
        if method == "ipf":
            gens = ll.generating_class(terms)
            tol = self.tol if self.tol is not None else 1e-4 * max(float(self.target.sum()), 1.0)
            mu, it, conv = ll.ipf(self.target, self.shape, gens, start=start, tol=tol, max_iter=self.max_iter)
            used = sorted(ll.closure(terms), key=lambda t: (len(t), t))
        else:
            p = ll.n_parameters(terms, self.shape)
            if p > MAX_IRLS_PARAMETERS:
                raise SdcError(f"model: {p:,} parameters are too many for the Poisson GLM (IRLS); expected at most "
                               f"{MAX_IRLS_PARAMETERS:,} (use a hierarchical model, fitted by IPF)")
            X, _ = ll.design_matrix(self.shape, terms)
            mu, _, it, conv = ll.poisson_irls(X, self.target)
            gens = list(terms)
            used = list(terms)
        if not conv:
            warnings.warn(f"fit_method: {method} did not converge in {it} iterations; the estimates may be inaccurate",
                          SdcWarning, stacklevel=4)
        return mu, method, gens, used, it, conv

    def criterion(self, mu):
        lam = mu * self.lam_scale
        return ll.bias_criterion(self.f, lam, self.pi), lam


def loglinear_risk(data, keys, weight=None, sampling_fraction=None, model="auto", *, sampling: str = "pml",
                   criterion: str = "tau2", z_crit: float = 1.96, max_steps: int | None = None,
                   fit_method: str = "auto", tol: float | None = None, max_iter: int = 1000,
                   pram: dict | None = None, smoothing: str | None = None, compat: str | None = None,
                   modrisk_method: str = "default", bound: float = math.inf, missing=None,
                   allow_degenerate_keys: bool = False) -> LoglinearRiskResult:
    r"""Population-uniqueness risk from a Poisson log-linear model (Skinner & Holmes 1998; spec C).

    The key variables are cross-classified into the full contingency table (every combination of
    categories, empty cells included). Population counts follow F_k ~ Poisson(lambda_k) with a
    log-linear model for lambda_k; sampling is Bernoulli with fraction pi_k, so that, with
    mu_k = (1 - pi_k) \hat lambda_k, for a sample unique (f_k = 1)

    .. math::

        P(F_k = 1 \mid f_k = 1) = e^{-\mu_k}, \qquad
        E(1/F_k \mid f_k = 1) = (1 - e^{-\mu_k}) / \mu_k,

    and the file-level measures are \hat\tau_1 = \sum_{k: f_k = 1} e^{-\mu_k} (sample uniques that
    are population unique) and \hat\tau_2 = \sum_{k: f_k = 1} (1 - e^{-\mu_k})/\mu_k (expected
    correct matches of sample uniques), spec C.1.

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict of columns)
    keys : list of str
        Categorical key variables (declared categories of Enum / ordered categoricals are kept,
        otherwise the observed ones). Records with a missing key value are excluded (warning).
    weight : str, optional
        Design weight. With ``sampling="pml"`` (default) the model is fitted to the weighted
        counts \hat F_k (pseudo-maximum likelihood, Rao & Thomas 2003; spec C.3), \hat lambda_k is
        the fitted value and pi_k = f_k / \hat F_k (1 / w_i for a sample unique, capped at 1).
        With ``sampling="constant"`` the model is fitted to the sample counts and
        pi = n / \sum w.
    sampling_fraction : float in (0, 1], optional
        A known constant sampling fraction (overrides the weights); 1 for a census, where every
        sample unique is a population unique. Without weights it is required.
    model : str or list, default "auto"
        ``"auto"``: Skinner-Shlomo forward search (spec C.4): start from the main effects, add
        at each step the two-way (or, once all its two-way sub-terms are in, three-way) term
        with the smallest |Z|, Z = \hat B / \sqrt{\hat v} for ``criterion``; stop when
        |Z| <= ``z_crit``, when no term reduces |Z|, or when the best term gives Z < -z_crit
        (the previous model is kept). Otherwise see :func:`parse_model`: ``"independence"``,
        ``"2way"``, ``"3way"``, ``"saturated"``, a formula ``"a*b + c"`` or a list of terms.
    criterion : {"tau2", "tau1"}
        Measure whose Z drives the search.
    z_crit : float, default 1.96
    max_steps : int, optional
        Maximum number of terms the search adds.
    fit_method : {"auto", "ipf", "irls"}
        ``"auto"``: IPF for hierarchical models, Poisson IRLS otherwise.
    tol, max_iter
        IPF convergence: max |fitted - observed margin| < tol (default 1e-4 * total of the
        fitted counts), at most ``max_iter`` cycles. The spec's 1e-8 * n is not reached in 1000
        cycles when the MLE lies on the boundary (sparse tables: IPF then converges
        sublinearly); on eusilcP (103,680 cells, two-way model) tau_1/tau_2 at 1e-4 * n differ from
        the 1000-cycle values by < 1e-4 relative.
    pram : dict, optional
        Key variable -> diagonal of its PRAM transition matrix (probability that a category is
        kept): a number (same for every category) or a dict label -> probability. Adds the
        misclassification-adjusted \hat\tau_2 = \sum_{SU} M_kk \hat E(1/F_k | f_k = 1),
        M_kk = \prod_v P^{(v)}_{k_v k_v} (Shlomo & Skinner 2010; spec C.5).
    smoothing : {"nb"}, optional
        Negative-binomial smoothing (Rinott & Shlomo 2006; spec C.6), moment estimator over the
        cells within one step on every key. Experimental (spec K.8): emits an SdcWarning.
    compat : {"sdcMicro"}, optional
        Reproduce sdcMicro ``modRisk(method = modrisk_method, formulaM = model, weights,
        bound)``: table over the observed levels, GLM on sample counts (numeric key columns
        enter linearly, as in R's formulas; IPF treats them as factors), fitted sample-scale
        values used as lambda with p = \sum 1/w per cell, risks divided by the number of kept
        cells. Requires ``weight`` and an explicit model. Not a population-risk estimate (C.7).
    modrisk_method : {"default", "CE", "PML", "weightedLLM", "IPF"}
    bound : float, default inf
        sdcMicro's ``bound``: keep cells with 0 < f_k <= bound.
    missing, allow_degenerate_keys
        As in :func:`sdckit.frequencies`.

    Returns
    -------
    LoglinearRiskResult

    Notes
    -----
    Table sizes: IPF needs ~24 bytes per cell and O(K) work per generator and cycle: 10^7 cells
    fit in memory and in seconds to a minute; dense tables are refused above 10^8 cells. IRLS
    (non-hierarchical models) uses a sparse K x p design and a dense p x p system: up to about
    10^6 cells and a few thousand parameters. The Z criterion sums over all K cells.

    References
    ----------
    Spec ALGORITHMS.md C.1-C.8, K.2, K.8, K.12. Skinner, C.J. & Holmes, D.J. (1998), J. Official
    Statistics 14, 361-372. Elamir, E. & Skinner, C.J. (2006), J. Official Statistics 22.
    Skinner, C.J. & Shlomo, N. (2008), JASA 103, 989-1001. Shlomo, N. & Skinner, C.J. (2010),
    Annals of Applied Statistics 4. Rinott, Y. & Shlomo, N. (2006), PSD.
    """
    _check_params(sampling_fraction, sampling, criterion, z_crit, fit_method, compat, modrisk_method, bound)
    if smoothing is not None and smoothing != "nb":
        raise SdcError(f"smoothing: got {smoothing!r}; expected None or 'nb'")
    prep = prepare(data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys)
    names = prep.keys.names
    codes = prep.keys.codes
    n = codes.shape[0]
    ok = (codes >= 0).all(axis=1)
    n_excl = int(n - ok.sum())
    if n_excl:
        warnings.warn(f"keys: {n_excl} record(s) with a missing key value are excluded from the log-linear model "
                      "(spec 0.3); their risk is NaN", SdcWarning, stacklevel=2)
    if not ok.any():
        raise SdcError("keys: every record has a missing key value; expected complete records for the model")
    c = codes[ok]
    w = None if prep.weights is None else prep.weights[ok]
    if compat is not None:
        return _modrisk(prep, names, c, w, ok, n, n_excl, model, modrisk_method, float(bound))

    cards = list(prep.keys.cardinalities)
    K = math.prod(cards)
    if K > MAX_CELLS:
        raise SdcError(f"keys: the full table has {K:,} cells; expected at most {MAX_CELLS:,} for a dense fit "
                       "(recode or drop key variables)")
    shape = tuple(cards)
    idx = ll.cell_index(c, shape)
    f, Fh = ll.cell_table(idx, K, w)
    n_used = int(c.shape[0])

    # sampling (spec C.3 / 0.4)
    if sampling_fraction is not None:
        pi0 = float(sampling_fraction)
        samp, target, pi_cells, lam_scale, pi_rec = "given", f, pi0, 1.0 / pi0, np.full(n_used, pi0)
        sf = pi0
    elif w is None:
        raise SdcError("sampling_fraction: no weight and no sampling fraction given; expected weight=... or "
                       "sampling_fraction=... (1 for a census, where every sample unique is population unique)")
    elif sampling == "constant":
        pi0 = n_used / float(w.sum())
        if pi0 > 1:
            warnings.warn(f"weight: n / sum(w) = {pi0:.6g} > 1; the sampling fraction is capped at 1",
                          SdcWarning, stacklevel=2)
            pi0 = 1.0
        samp, target, pi_cells, lam_scale, pi_rec, sf = "constant", f, pi0, 1.0 / pi0, np.full(n_used, pi0), pi0
    else:
        pi_empty = min(n_used / float(w.sum()), 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            pik = np.where(f > 0, f / Fh, pi_empty)
        if np.any(pik > 1):
            warnings.warn(f"weight: {int(np.count_nonzero(pik > 1))} cell(s) have \\hat F_k < f_k (weights below 1); "
                          "their sampling fraction is capped at 1 (spec 0.4)", SdcWarning, stacklevel=2)
            pik = np.minimum(pik, 1.0)
        samp, target, pi_cells, lam_scale, sf = "pml", Fh, pik, 1.0, None
        pi_rec = pik[idx]
    fitter = _Model(shape, target, f, pi_cells, lam_scale, fit_method, tol, max_iter)

    path = []
    if isinstance(model, str) and model.strip().lower() == "auto":
        terms, mu, fitinfo, path = _search(fitter, len(names), criterion, float(z_crit), max_steps, names)
    else:
        terms = parse_model(model, names)
        mu, *fitinfo = fitter.fit(terms)
    method, gens, used, it, conv = fitinfo
    crit, lam = fitter.criterion(mu)

    # per record (spec C.1)
    f_rec = f[idx]
    lam_rec = lam[idx]
    su = f_rec == 1
    p1, p2 = ll.uniqueness_probabilities((1.0 - pi_rec[su]) * lam_rec[su])
    tau1, tau2 = float(p1.sum()), float(p2.sum())
    n1 = int(su.sum())

    # goodness of fit (on the fitted scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = 2.0 * float(np.sum(np.where(target > 0, target * np.log(target / mu), 0.0)))
        pear = float(np.sum(np.where(mu > 0, (target - mu) ** 2 / mu, 0.0)))
    npar = ll.n_parameters(used, cards)
    gof = {"deviance": dev, "pearson": pear, "df": int(K - npar), **crit}

    def full(x, fill=np.nan):
        out = np.full(n, fill, float)
        out[ok] = x
        return out

    p_unique_r = np.full(n_used, np.nan)
    risk_r = np.full(n_used, np.nan)
    p_unique_r[su] = p1
    risk_r[su] = p2

    pram_out, risk_pram = None, None
    if pram is not None:
        M = _pram_diagonal(pram, prep.keys, ok)
        tau2p = float(np.sum(M[su] * p2))
        rp = np.full(n_used, np.nan)
        rp[su] = M[su] * p2
        risk_pram = full(rp)
        pram_out = {"tau2": tau2p, "rate2_per_sample_unique": tau2p / n1 if n1 else 0.0,
                    "variables": sorted(str(k) for k in pram)}

    smooth_out = None
    if smoothing == "nb":
        warnings.warn("smoothing: negative-binomial smoothing uses the library's moment estimator over a window "
                      "(spec C.6, K.8); experimental", SdcWarning, stacklevel=2)
        pi_nb = pi_cells if np.ndim(pi_cells) == 0 else min(n_used / float(w.sum()), 1.0)
        nb1, nb2 = ll.nb_smoothing(f, shape, pi_nb)
        smooth_out = {"method": "nb-moment", "experimental": True, "tau1": float(nb1[idx][su].sum()),
                      "tau2": float(nb2[idx][su].sum())}

    return LoglinearRiskResult(
        keys=names, n=n, n_used=n_used, n_excluded=n_excl, n_cells=K, levels=tuple(cards), sample_uniques=n1,
        tau1=tau1, tau2=tau2, terms=tuple(_term_names(used, names)), generators=tuple(_term_names(gens, names)),
        fit_method=method, iterations=int(it), converged=bool(conv), n_parameters=int(npar), sampling=samp,
        sampling_fraction=sf, criterion=criterion, gof=gof, path=tuple(path), pram=pram_out, smoothing=smooth_out,
        fk=full(f_rec), lam=full(lam_rec), p_unique=full(p_unique_r), risk=full(risk_r), risk_pram=risk_pram,
        backend=prep.table.backend,
    )


def _candidates(terms, m):
    have = set(terms)
    out = [t for t in itertools.combinations(range(m), 2) if t not in have]
    for t in itertools.combinations(range(m), 3):
        if t not in have and all(s in have for s in itertools.combinations(t, 2)):
            out.append(t)
    return out


def _search(fitter: _Model, m: int, criterion: str, z_crit: float, max_steps, names):
    """Greedy forward search on |Z| (spec C.4, K.2). Candidate fits start from the current fit
    (IPF keeps the start's log-structure, so the result is the candidate's MLE)."""
    zkey = "Z" + criterion[-1]
    terms = [(j,) for j in range(m)]
    mu, *info = fitter.fit(terms)
    crit, lam = fitter.criterion(mu)

    def taus(lam_):
        su = fitter.f == 1
        pi = np.broadcast_to(fitter.pi, lam_.shape)[su]
        p1, p2 = ll.uniqueness_probabilities((1.0 - pi) * lam_[su])
        return float(p1.sum()), float(p2.sum())

    t1, t2 = taus(lam)
    path = [{"step": 0, "added": None, "accepted": True, "Z1": crit["Z1"], "Z2": crit["Z2"], "tau1": t1, "tau2": t2}]
    step = 0
    while abs(crit[zkey]) > z_crit and (max_steps is None or step < max_steps):
        best = None
        for cand in _candidates(terms, m):
            new = terms + [cand]
            mu_c, *info_c = fitter.fit(new, start=mu)
            crit_c, lam_c = fitter.criterion(mu_c)
            if best is None or abs(crit_c[zkey]) < abs(best[2][zkey]):
                best = (cand, mu_c, crit_c, lam_c, info_c)
        if best is None or abs(best[2][zkey]) >= abs(crit[zkey]):
            break
        step += 1
        cand, mu_c, crit_c, lam_c, info_c = best
        t1, t2 = taus(lam_c)
        accepted = crit_c[zkey] >= -z_crit
        path.append({"step": step, "added": ":".join(names[j] for j in cand), "accepted": bool(accepted),
                     "Z1": crit_c["Z1"], "Z2": crit_c["Z2"], "tau1": t1, "tau2": t2})
        if not accepted:
            break
        terms, mu, crit, info = terms + [cand], mu_c, crit_c, info_c
    return terms, mu, info, path


def _pram_diagonal(pram, enc, ok) -> np.ndarray:
    """M_kk per (complete) record: product over PRAMed variables of P(category kept)."""
    if not isinstance(pram, dict) or not pram:
        raise SdcError("pram: expected a dict key variable -> diagonal of its transition matrix")
    names = list(enc.names)
    M = np.ones(int(ok.sum()))
    for var, diag in pram.items():
        if var not in names:
            raise SdcError(f"pram: {var!r} is not a key variable; expected one of {', '.join(names)}")
        j = names.index(var)
        labels = enc.labels[j].to_list()
        if isinstance(diag, dict):
            vals = np.ones(len(labels))
            lookup = {str(k): v for k, v in diag.items()}
            for i, lab in enumerate(labels):
                if str(lab) in lookup:
                    vals[i] = lookup[str(lab)]
            unknown = set(lookup) - {str(x) for x in labels}
            if unknown:
                raise SdcError(f"pram: categories {', '.join(sorted(unknown))} of {var} do not occur; expected its labels")
        else:
            try:
                vals = np.full(len(labels), float(diag))
            except (TypeError, ValueError):
                raise SdcError(f"pram: {var}: got {diag!r}; expected a probability or a dict label -> probability") from None
        if not np.all((vals > 0) & (vals <= 1)):
            raise SdcError(f"pram: {var}: diagonal probabilities must be in (0, 1]")
        M *= vals[enc.codes[ok, j]]
    return M


# ---------------------------------------------------------------------------------------------
def _modrisk(prep, names, c, w, ok, n, n_excl, model, method, bound):
    """sdcMicro ``modRisk`` (spec C.7): see :func:`loglinear_risk` ``compat``."""
    if w is None:
        raise SdcError("weight: sdcMicro modRisk needs sampling weights; expected weight=...")
    if isinstance(model, str) and model.strip().lower() == "auto":
        raise SdcError("model: 'auto' is not available in the sdcMicro compatibility mode; expected a formula")
    terms = parse_model(model, names)
    if method == "IPF" and any(len(t) > 1 for t in terms):
        raise SdcError("model: sdcMicro modRisk method 'IPF' cannot fit interactions; expected main effects only")
    # observed levels only (R expand.grid over unique values)
    cc = np.empty_like(c)
    numeric = {}
    shape = []
    for j in range(c.shape[1]):
        u, inv = np.unique(c[:, j], return_inverse=True)
        cc[:, j] = inv.reshape(-1)
        shape.append(len(u))
        lab = prep.keys.labels[j]
        if method != "IPF":
            vals = _numeric_labels(lab)
            if vals is not None:
                numeric[j] = vals[u]
    shape = tuple(shape)
    K = math.prod(shape)
    idx = ll.cell_index(cc, shape)
    f, W = ll.cell_table(idx, K, w)
    incl = np.bincount(idx, weights=1.0 / w, minlength=K)
    if method == "IPF":
        mu, _, _ = ll.ipf(f, shape, ll.generating_class(terms), tol=1e-12 * max(f.sum(), 1))
    else:
        offset, extra, y = None, None, f
        if method == "CE":
            with np.errstate(divide="ignore", invalid="ignore"):
                ec = np.where(W > 0, f / W, 0.0)
            offset = np.log(ec + 0.1)
        elif method == "PML":
            y = np.round(W * (f.sum() / W.sum()))  # R round(): half to even, as NumPy
        elif method == "weightedLLM":
            extra = [W]
        X, _ = ll.design_matrix(shape, terms, numeric=numeric, extra=extra)
        mu, _, _, _ = ll.poisson_irls(X, y, offset=offset, tol=1e-12)
    keep = (f > 0) & (f <= bound) & ~((mu == 0) & (f > 0))
    C = int(keep.sum())
    v = (1.0 - incl) * mu
    p1, p2 = ll.uniqueness_probabilities(v)
    one = keep & (f == 1)
    gr1 = float(p1[one].sum() / C) if C else 0.0
    gr2 = float(p2[one].sum() / C) if C else 0.0
    f_rec = f[idx]
    su = f_rec == 1

    def full(x):
        out = np.full(n, np.nan)
        out[ok] = x
        return out

    pu = np.where(su, p1[idx], np.nan)
    rk = np.where(su, p2[idx], np.nan)
    return LoglinearRiskResult(
        keys=names, n=n, n_used=int(c.shape[0]), n_excluded=n_excl, n_cells=K, levels=shape,
        sample_uniques=int(su.sum()), terms=tuple(_term_names(terms, names)),
        generators=tuple(_term_names(terms, names)), fit_method="ipf" if method == "IPF" else "irls",
        n_parameters=int(ll.n_parameters(terms, list(shape))), sampling="sdcmicro", criterion="tau2",
        modrisk={"method": method, "gr1": gr1, "gr2": gr2, "gr1perc": 100 * gr1, "gr2perc": 100 * gr2,
                 "kept_cells": C, "bound": None if math.isinf(bound) else bound,
                 "numeric_covariates": [names[j] for j in sorted(numeric)]},
        compat="sdcMicro", fk=full(f_rec), lam=full(mu[idx]), p_unique=full(pu), risk=full(rk),
        backend=prep.table.backend,
    )



def _numeric_labels(lab):
    """Labels as numbers when R would read the column as numeric (numbers, or text that all
    parses as numbers, as ``read.csv`` does); else None (a factor)."""
    import polars as pl

    if lab.dtype.is_numeric():
        return lab.cast(pl.Float64).to_numpy()
    if lab.dtype == pl.String:
        try:
            return lab.cast(pl.Float64, strict=True).to_numpy()
        except Exception:  # noqa: BLE001 - not all numbers: a factor
            return None
    return None
