r"""The steps of :func:`sdckit.loglinear_risk`, in order.

1. :func:`validate_loglinear`: the arguments (each checked by the declaration; what depends on the data here), the keys encoded, the model parsed
   -> :class:`LoglinearInput` (frozen).
2. :func:`build_table`: the full contingency table and the sampling scheme -> :class:`CellTable`.
3. :func:`fit_model`: the log-linear fit (IPF or Poisson IRLS) or the Skinner-Shlomo forward
   search -> :class:`ModelFit`.
4. :func:`risk_measures`, :func:`pram_measures`, :func:`smoothing_measures`: tau_1, tau_2 and
   the per-record risks, the PRAM-adjusted tau_2, the negative-binomial smoothing.
5. :func:`modrisk_result`: sdcMicro's ``modRisk`` instead of 2-4 (``fit={"compat": "sdcMicro"}``).

The labels of the key variables are read only through :mod:`sdckit.risk._loglinear_access`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core import loglinear as ll
from .._core import risk_ci
from .._core.misclassification import exact_factor
from .._errors import SdcError, warn
from .._prepare import prepare
from .._progress import step
from .._validation import (
    check_choice,
    check_sampling_fraction,
)
from ..engines import local_records
from ..results.loglinear import LoglinearRiskResult, ModriskNumbers
from ._loglinear_access import label_numbers, label_values
from ._pram import is_stratified, keep_per_record, matrices_per_record, strata_reader

__all__ = [
    "CellTable",
    "LoglinearInput",
    "ModelFit",
    "build_table",
    "fit_model",
    "model_stability",
    "modrisk_result",
    "parse_model",
    "ci_measures",
    "model_interval",
    "weak_estimate",
    "pram_measures",
    "risk_measures",
    "smoothing_measures",
    "validate_loglinear",
]

METHODS = ("auto", "ipf", "irls")
COMPAT_METHODS = ("default", "CE", "PML", "weightedLLM", "IPF")
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
    if isinstance(model, str):
        named = _named_model(model, m)
        if named is not None:
            return named
        terms = _formula_terms(model, names)
    elif isinstance(model, (list, tuple)):
        terms = _listed_terms(model, names)
    else:
        raise SdcError(
            f"model: got {type(model).__name__}; expected 'auto', '2way', 'independence', a formula or a list of terms"
        )
    mentioned = {j for t in terms for j in t}
    terms += [(j,) for j in range(m) if j not in mentioned]
    out = []
    for t in terms:
        if t not in out:
            out.append(t)
    return sorted(out, key=lambda t: (len(t), t))


def _named_model(model: str, m: int) -> list[tuple[int, ...]] | None:
    """The terms of ``"independence"``, ``"2way"``, ``"3way"`` or ``"saturated"`` (else None)."""
    low = model.strip().lower().replace("-", "").replace("_", "")
    mains: list[tuple[int, ...]] = [(j,) for j in range(m)]
    pairs: list[tuple[int, ...]] = list(itertools.combinations(range(m), 2))
    if low in ("independence", "main", "1way", "maineffects"):
        return mains
    if low in ("2way", "twoway", "all2way"):
        return mains + pairs
    if low in ("3way", "threeway", "all3way"):
        return mains + pairs + list(itertools.combinations(range(m), 3))
    if low == "saturated":
        return sorted(ll.closure([tuple(range(m))]), key=lambda t: (len(t), t))
    return None


def _key_index(name, names) -> int:
    return names.index(check_choice(str(name).strip(), "model", names))


def _formula_terms(model: str, names: list) -> list[tuple[int, ...]]:
    """The terms of an R-style formula (``a*b`` expands to ``a + b + a:b``)."""
    s = model.strip().lstrip("~").strip()
    if not s:
        raise SdcError("model: empty formula; expected e.g. 'a*b + c', '2way', 'independence' or 'auto'")
    terms: list[tuple[int, ...]] = []
    for part in s.split("+"):
        part = part.strip()
        if not part:
            raise SdcError(f"model: empty term in {model!r}; expected terms separated by '+'")
        if "*" in part:
            vs = sorted({_key_index(v, names) for v in part.split("*")})
            for r in range(1, len(vs) + 1):
                terms += list(itertools.combinations(vs, r))
        else:
            terms.append(tuple(sorted({_key_index(v, names) for v in part.split(":")})))
    return terms


def _listed_terms(model, names: list) -> list[tuple[int, ...]]:
    """A list of terms is a generating class: its hierarchical closure."""
    if not model:
        raise SdcError("model: empty list of terms; expected at least one term")
    terms: list[tuple[int, ...]] = []
    for t in model:
        if isinstance(t, str):
            terms.append((_key_index(t, names),))
        elif isinstance(t, (list, tuple)) and t:
            terms.append(tuple(sorted({_key_index(v, names) for v in t})))
        else:
            raise SdcError(f"model: term {t!r} is not a name or a tuple of names")
    return list(ll.closure(terms))


def term_names(terms, names) -> tuple:
    return tuple(tuple(names[j] for j in t) for t in terms)


# ---------------------------------------------------------------------------------------------
# 1. validated input
@dataclass(frozen=True)
class LoglinearInput:
    """The arguments of :func:`loglinear_risk`, checked, and the encoded complete records.

    ``codes`` (n_used x m) and ``weights`` cover the records without a missing key value
    (``complete``, n); ``terms`` is None for the automatic search. ``pram`` is M_kk per
    complete record. ``label_numbers`` (compatibility mode) holds, per key, its categories as
    numbers when R would read the column as numeric, else None.
    """

    names: tuple
    codes: np.ndarray
    weights: np.ndarray | None
    complete: np.ndarray
    levels: tuple
    backend: str
    row_index: Any
    terms: tuple | None
    sampling_fraction: float | None
    sampling: str
    criterion: str
    z_crit: float
    max_steps: int | None
    method: str
    tol: float | None
    max_iter: int
    pram: np.ndarray | None
    pram_variables: tuple
    smoothing: str | None
    compat: str | None
    compat_method: str
    bound: float
    label_numbers: tuple
    #: the validated input (with an out-of-core engine, its rows are distinct key patterns)
    prep: Any = None
    #: records per complete row (None: one record per row)
    counts: np.ndarray | None = None
    search: str = "bracket"
    z_target: float = -0.5
    candidates: int | None = 1
    #: the standardized deviance reduction a term must exceed (None: every term, by raw deviance)
    term_test: float | None = 2.0
    #: a candidate term needs at least this many records per parameter it adds (None: no bound)
    records_per_parameter: float | None = 1.0
    stability: int = 0
    seed: int | None = None
    #: known fractions by the categories of one key: (key index, fraction per category code)
    stratum_fractions: tuple | None = None
    #: the full PRAM matrices ({key index: (matrices, matrix number per complete row)}; None
    #: without PRAM or when a key's matrix is given by its diagonal only)
    pram_matrices: dict | None = None

    @property
    def n(self) -> int:
        """Number of records."""
        return int(self.complete.shape[0]) if self.prep is None else self.prep.n

    @property
    def n_rows(self) -> int:
        """Number of complete rows (records, or key patterns of a compressed table)."""
        return int(self.codes.shape[0])

    @property
    def n_used(self) -> int:
        """Number of records without a missing key value."""
        return self.n_rows if self.counts is None else int(self.counts.sum())

    @property
    def n_excluded(self) -> int:
        return self.n - self.n_used

    def full(self, x, fill=np.nan) -> np.ndarray:
        """Per complete record -> per input record (``fill`` for the excluded ones)."""
        if self.complete.all():
            return np.asarray(x, dtype=float)
        out = np.full(self.complete.shape[0], fill, float)
        out[self.complete] = x
        return out


def _float(value):
    return None if value is None else float(value)


def _int(value):
    return None if value is None else int(value)


def validate_loglinear(
    data,
    keys,
    *,
    weight,
    sampling_fraction,
    model,
    sampling,
    criterion,
    z_crit,
    max_steps,
    method,
    tol,
    max_iter,
    pram,
    smoothing,
    compat,
    compat_method,
    bound,
    missing,
    allow_degenerate_keys,
    engine=None,
    search="bracket",
    z_target=-0.5,
    candidates=1,
    stability=0,
    seed=None,
    term_test=2.0,
    records_per_parameter=1.0,
) -> LoglinearInput:
    """The arguments as the steps take them (each is checked by ``loglinear_risk``'s declaration;
    what depends on the data here, first error raised), the keys encoded and the model parsed."""
    if isinstance(compat, str) and compat.lower() == "sdcmicro":
        compat = "sdcMicro"
    by_stratum = isinstance(sampling_fraction, dict)
    # each checked by loglinear_risk's declaration; taken as the toolkit's checks return them
    params = dict(
        sampling_fraction=None if by_stratum else _float(sampling_fraction),
        search=search,
        z_target=float(z_target),
        candidates=_int(candidates),
        term_test=_float(term_test),
        records_per_parameter=_float(records_per_parameter),
        stability=int(stability),
        seed=_int(seed),
        sampling=sampling,
        criterion=criterion,
        z_crit=float(z_crit),
        max_steps=_int(max_steps),
        method=method,
        tol=_float(tol),
        max_iter=int(max_iter),
        smoothing=smoothing,
        compat=compat,
        compat_method=compat_method,
        bound=float(bound),
    )
    prep = prepare(
        data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine
    )
    if prep.source is not None and params["compat"] is not None:
        raise SdcError(
            f"compat: sdcMicro's modRisk needs the records (sum of 1/w per cell); not available with the "
            f"{prep.engine.name} engine, expected compat=None"
        )
    enc = prep.keys
    names = enc.names
    complete = np.asarray((enc.codes >= 0).all(axis=1))
    counts = None if prep.counts is None else prep.counts[complete]
    n_excl = prep.n - (int(complete.sum()) if counts is None else int(counts.sum()))
    if n_excl:
        warn(
            f"keys: {n_excl} record(s) with a missing key value are excluded from the log-linear model; "
            "their risk is NaN"
        )
    if not complete.any():
        raise SdcError("keys: every record has a missing key value; expected complete records for the model")
    every = complete.all()
    rows = slice(None) if every else complete  # every record complete: no copies of the codes and weights
    weights = None if prep.weights is None else prep.weights[rows]
    strata = _stratum_fractions(sampling_fraction, enc) if by_stratum else None
    if strata is not None and params["compat"] is not None:
        raise SdcError(
            "sampling_fraction: fractions by category are not used by sdcMicro's modRisk; expected compat=None"
        )
    if weights is not None and (strata is not None or params["sampling_fraction"] is not None):
        _check_weights_match(weights, counts, enc.codes[complete], params["sampling_fraction"], strata, names)
    terms = _checked_terms(model, names, params, weights is not None or strata is not None, enc.cardinalities)
    numbers: tuple = ()
    if params["compat"] is not None and params["compat_method"] != "IPF":
        numbers = tuple(label_numbers(lab) for lab in enc.labels)
    pram_m, pram_vars, pram_mats = (
        (None, (), None)
        if pram is None or pram == {}
        else (*_pram_diagonal(pram, prep, complete), _pram_matrices(pram, prep, complete))
    )
    return LoglinearInput(
        names=names,
        codes=enc.codes[rows],
        weights=weights,
        complete=complete,
        levels=tuple(int(c) for c in enc.cardinalities),
        backend=prep.table.backend,
        row_index=prep.table.index,
        terms=terms,
        pram=pram_m,
        pram_variables=pram_vars,
        pram_matrices=pram_mats,
        label_numbers=numbers,
        prep=prep,
        counts=counts,
        stratum_fractions=strata,
        **params,
    )


def _checked_terms(model, names, params: dict, weighted: bool, cards) -> tuple | None:
    """The parsed model (None: automatic search), after the checks that depend on the mode."""
    auto = isinstance(model, str) and model.strip().lower() == "auto"
    if params["compat"] is not None:
        if not weighted:
            raise SdcError("weight: sdcMicro modRisk needs sampling weights; expected weight=...")
        if auto:
            raise SdcError("model: 'auto' is not available in the sdcMicro compatibility mode; expected a formula")
        parsed = parse_model(model, names)
        if params["compat_method"] == "IPF" and any(len(t) > 1 for t in parsed):
            raise SdcError("model: sdcMicro modRisk method 'IPF' cannot fit interactions; expected main effects only")
        return tuple(parsed)
    terms = None if auto else tuple(parse_model(model, names))
    K = math.prod(cards)
    if K > MAX_CELLS:
        raise SdcError(
            f"keys: the full table has {K:,} cells; expected at most {MAX_CELLS:,} for a dense fit "
            "(recode or drop key variables)"
        )
    if params["sampling_fraction"] is None and not weighted:
        raise SdcError(
            "sampling_fraction: no weight and no sampling fraction given; expected weight=... or "
            "sampling_fraction=... (1 for a census, where every sample unique is population unique)"
        )
    return terms


def _stratum_fractions(spec: dict, enc) -> tuple:
    """``{key: {category: fraction}}`` -> (key index, fraction per category code)."""
    if len(spec) != 1:
        raise SdcError(
            f"sampling_fraction: a dict of fractions names {len(spec)} key variables; expected one, "
            "e.g. {'region': {category: fraction, ...}} (the stratum variable must be a key)"
        )
    ((var, fractions),) = spec.items()
    names = list(enc.names)
    if str(var) not in names:
        raise SdcError(
            "sampling_fraction: fractions by category need a key variable (the sampling strata must be "
            f"among the keys); {var!r} is not one of them, expected one of {', '.join(names)}"
        )
    j = names.index(str(var))
    if not isinstance(fractions, dict):
        raise SdcError(
            f"sampling_fraction: {var}: got {type(fractions).__name__}; expected a dict category -> fraction"
        )
    given = {
        str(k): check_sampling_fraction(v, f"sampling_fraction[{var!r}]", allow_none=False)
        for k, v in fractions.items()
    }
    labels = [str(x) for x in label_values(enc.labels[j])]
    unknown = set(given) - set(labels)
    missing = [lab for lab in labels if lab not in given]
    if unknown or missing:
        raise SdcError(
            f"sampling_fraction: {len(missing)} categor{'y' if len(missing) == 1 else 'ies'} of {var} without "
            f"a fraction and {len(unknown)} given that {var} does not have; expected one fraction for every "
            f"category of {var}"
        )
    return j, np.array([given[lab] for lab in labels], float)


#: weights that sum, in a stratum, to within this relative distance of n_h / pi_h match the fractions
WEIGHT_MATCH_TOLERANCE = 0.1


def _check_weights_match(weights, counts, codes, fraction, strata, names) -> None:
    """Weights given together with known fractions must be design weights 1/pi (within
    ``WEIGHT_MATCH_TOLERANCE`` per stratum: calibrated weights pass, weights of another design do not)."""
    n_rows = counts if counts is not None else np.ones(weights.size)
    if strata is None:
        group, pis, where = np.zeros(weights.size, np.int64), np.array([fraction]), None
    else:
        j, pis = strata
        group, where = codes[:, j], f"categories of {names[j]}"
    n_h = np.bincount(group, weights=n_rows, minlength=pis.size)
    w_h = np.bincount(group, weights=weights, minlength=pis.size)
    implied = n_h / pis
    used = n_h > 0
    rel = np.abs(w_h[used] / implied[used] - 1.0)
    if np.any(rel > WEIGHT_MATCH_TOLERANCE):
        worst = int(np.argmax(rel))
        bad = int(np.count_nonzero(rel > WEIGHT_MATCH_TOLERANCE))
        scope = "" if where is None else f" in {bad} of {int(used.sum())} {where}"
        raise SdcError(
            f"weight: the weights do not match the declared sampling fraction{scope}: they sum to "
            f"{w_h[used][worst]:.6g} where n / sampling_fraction = "
            f"{implied[used][worst]:.6g}; expected design weights 1 / sampling_fraction (within "
            f"{WEIGHT_MATCH_TOLERANCE:.0%}), or only one of weight and sampling_fraction"
        )


def _pram_diagonal(pram, prep, complete) -> tuple[np.ndarray, tuple]:
    """M_kk per complete record: product over PRAMed variables of P(category kept) (the forms
    of :mod:`sdckit.risk._pram`, matrices per stratum included; every category of the complete
    records must have one), and the PRAMed variables."""
    enc = prep.keys
    labels = [label_values(lab) for lab in enc.labels]
    keep = keep_per_record(pram, enc.names, labels, enc.codes[complete], _reader(pram, prep, complete))
    return keep, tuple(sorted(map(str, pram)))


def _reader(pram, prep, complete):
    """The records' strata for a per-stratum form (in memory only)."""
    if prep.source is not None or not any(is_stratified(spec) for spec in pram.values()):
        return None
    return strata_reader(prep.engine, prep.table, np.flatnonzero(complete))


def _pram_matrices(pram, prep, complete) -> dict | None:
    """The full matrices of the PRAMed keys over their codes and each complete row's matrix."""
    enc = prep.keys
    labels = [label_values(lab) for lab in enc.labels]
    n = int(np.count_nonzero(complete))
    return matrices_per_record(pram, enc.names, labels, n, _reader(pram, prep, complete))


# ---------------------------------------------------------------------------------------------
# 2. the table and the sampling scheme
@dataclass(frozen=True)
class CellTable:
    """The full table: record -> cell (``idx``), sample counts ``f``, weighted counts ``F``, and
    the sampling scheme: the fitted ``target``, pi per cell (or a constant) and per record,
    the factor from fitted values to lambda."""

    shape: tuple
    idx: np.ndarray
    f: np.ndarray
    F: np.ndarray | None
    sampling: str
    target: np.ndarray
    pi_cells: Any
    pi_records: np.ndarray
    lam_scale: Any
    sampling_fraction: float | None
    #: fitted with the offset log pi_k (known fractions that vary between cells)
    offset: bool = False

    @property
    def K(self) -> int:
        return int(self.f.size)


def build_table(inp: LoglinearInput, copies: np.ndarray | None = None, rate: float = 1.0) -> CellTable:
    """Cross-classify the complete records; choose pi (a known fraction, known fractions by the
    categories of one key (fitted with the offset log pi_k), n / sum w, or the
    pseudo-maximum-likelihood f_k / F_k of Rao & Thomas 2003).

    ``copies``, ``rate``: records kept per row of a Bernoulli subsample at ``rate`` (for
    :func:`model_stability`): a Bernoulli sample of the population at fraction rate * pi, so the
    known fractions are scaled by ``rate`` and the weights by copies / (rate * records).
    """
    if copies is None:
        step("building the contingency table")
    shape = inp.levels
    idx = ll.cell_index(inp.codes, shape)
    counts, weights = inp.counts, inp.weights
    if copies is not None:
        per = 1.0 if counts is None else np.maximum(counts, 1)
        weights = None if weights is None else weights * copies / (rate * per)
        counts = copies.astype(float)
    f, F = ll.cell_table(idx, math.prod(shape), weights, counts)
    n_used = float(f.sum())
    if inp.stratum_fractions is not None:
        j, fractions = inp.stratum_fractions
        along = [1] * len(shape)
        along[j] = shape[j]
        pik = np.broadcast_to(rate * fractions.reshape(along), shape).reshape(-1).copy()
        return CellTable(shape, idx, f, F, "given", f, pik, pik[idx], 1.0 / pik, None, offset=True)
    if inp.sampling_fraction is not None:
        pi0 = rate * inp.sampling_fraction
        return CellTable(shape, idx, f, F, "given", f, pi0, np.full(idx.size, pi0), 1.0 / pi0, pi0)
    if inp.sampling == "constant":
        pi0 = n_used / float(F.sum())
        if pi0 > 1:
            warn(f"weight: n / sum(w) = {pi0:.6g} > 1; the sampling fraction is capped at 1")
            pi0 = 1.0
        return CellTable(shape, idx, f, F, "constant", f, pi0, np.full(idx.size, pi0), 1.0 / pi0, pi0)
    pi_empty = min(n_used / float(F.sum()), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pik = np.where(f > 0, f / F, pi_empty)
    if np.any(pik > 1):
        warn(
            f"weight: {int(np.count_nonzero(pik > 1))} cell(s) have \\hat F_k < f_k (weights below 1); "
            "their sampling fraction is capped at 1"
        )
        pik = np.minimum(pik, 1.0)
    return CellTable(shape, idx, f, F, "pml", F, pik, pik[idx], 1.0, None)


# ---------------------------------------------------------------------------------------------
# 3. the fit and the model search
@dataclass(frozen=True)
class ModelFit:
    """Fitted values ``mu`` (fitted scale) and ``lam`` (population scale) per cell, the terms
    used, the fit's diagnostics and the bias criterion, and the search path."""

    mu: np.ndarray
    lam: np.ndarray
    criterion: dict
    method: str
    generators: list
    terms: list
    iterations: int
    converged: bool
    path: tuple
    blend: dict | None = None


class _Fitter:
    """Fits on one table: the target counts, the fraction pi per cell and the scale to lambda."""

    def __init__(self, table: CellTable, method: str, tol, max_iter: int, names: tuple = ()):
        self.table, self.method, self.tol, self.max_iter, self.names = table, method, tol, max_iter, names
        self._margins: dict = {}
        #: the last fit that is an exact MLE (a start in the next model's family)
        self._exact: np.ndarray | None = None
        self._fitted: tuple | None = None

    def observed_margin(self, term) -> np.ndarray:
        """The target's margin over ``term`` (kept dims), computed once per term."""
        if term not in self._margins:
            self._margins[term] = ll.margin(self.table.target, self.table.shape, term)
        return self._margins[term]

    def fit(self, terms, start=None):
        t = self.table
        method = self.method
        if method == "auto":
            method = "ipf" if ll.is_hierarchical(terms) else "irls"
        if method == "ipf":
            gens = ll.generating_class(terms)
            tol = self.tol if self.tol is not None else 1e-4 * max(float(t.target.sum()), 1.0)
            mu, it, conv = self._ipf(gens, start, tol)
            used = sorted(ll.closure(terms), key=lambda s: (len(s), s))
        else:
            _check_irls_size(terms, t.shape, self.names)
            X, _ = ll.design_matrix(t.shape, terms)
            offset = np.log(t.pi_cells) if t.offset else None
            mu, _, it, conv = ll.poisson_irls(X, t.target, offset=offset, max_iter=min(self.max_iter, 100))
            if not conv:
                raise SdcError(_irls_failure(terms, t, self.names, it))
            gens = list(terms)
            used = list(terms)
        if not conv:
            warn(f"method: {method} did not converge in {it} iterations; the estimates may be inaccurate")
        return mu, method, gens, used, it, conv

    def fitted_margins(self, mu, terms) -> dict:
        """The margins of the fit ``mu`` over ``terms`` (term -> margin, dims kept), kept for the
        last ``mu`` asked about (the candidates of one search step share it)."""
        if self._fitted is None or self._fitted[0] is not mu:
            self._fitted = (mu, {})
        known = self._fitted[1]
        new = [t for t in terms if t not in known]
        known.update(zip(new, ll.margins(mu, self.table.shape, new)))
        return {t: known[t] for t in terms}

    def _ipf(self, gens, start, tol):
        """IPF from ``start``; one cycle when the model is decomposable and the start is in its
        family (all ones, the offset log pi_k, or this fitter's last exact fit, a sub-model's
        MLE): that cycle is exact (:func:`sdckit._core.loglinear.ipf`), where the iteration
        would spend a second cycle confirming it."""
        t = self.table
        in_family = start is None or (self._exact is not None and start is self._exact)
        if start is None and t.offset:  # IPF keeps the start's log-structure: log pi_k is the offset
            start = t.pi_cells
        order = ll.perfect_sequence(gens) if in_family else None
        if order is None:
            return ll.ipf(t.target, t.shape, gens, start, tol, self.max_iter, observed=self.observed_margin)
        mu, it, conv = ll.ipf(t.target, t.shape, order, start, observed=self.observed_margin, one_cycle=True)
        self._exact = mu
        return mu, it, conv

    def criterion(self, mu, which: str = "12"):
        lam = mu * self.table.lam_scale
        return ll.bias_criterion(self.table.f, lam, self.table.pi_cells, which), lam

    def taus(self, lam):
        su = self.table.f == 1
        pi = np.broadcast_to(self.table.pi_cells, lam.shape)[su]
        p1, p2 = ll.uniqueness_probabilities((1.0 - pi) * lam[su])
        return float(p1.sum()), float(p2.sum())


def _check_irls_size(terms, shape, names) -> None:
    """Too many parameters for the Poisson GLM: an error naming the largest term."""
    p = ll.n_parameters(terms, shape)
    if p > MAX_IRLS_PARAMETERS:
        big = max(terms, key=lambda t: math.prod(shape[j] - 1 for j in t))
        raise SdcError(
            f"model: {p:,} parameters are too many for the Poisson GLM (IRLS), term "
            f"{':'.join(names[j] for j in big) if names else big} alone has "
            f"{math.prod(shape[j] - 1 for j in big):,}; expected at most {MAX_IRLS_PARAMETERS:,} "
            "(drop or recode that term, or use a hierarchical model, fitted by IPF)"
        )


def _irls_failure(terms, table, names, iterations) -> str:
    """The message of a Poisson GLM without a finite maximum-likelihood estimate: the terms
    whose observed margin has empty cells (their parameters diverge)."""
    empty = []
    for t in terms:
        n_empty = int(np.count_nonzero(ll.margin(table.target, table.shape, t) == 0))
        if n_empty:
            empty.append(f"{_name(t, names)} ({n_empty} empty margin cells)")
    where = "; ".join(empty) if empty else "no term has an empty margin"
    return (
        f"model: the Poisson GLM (IRLS) did not converge in {iterations} iterations: the model cannot be "
        f"fitted (no finite maximum-likelihood estimate); terms with empty margins: {where}; expected a "
        "hierarchical model (fitted by IPF, which handles empty margins) or without those terms"
    )


def fit_model(table: CellTable, inp: LoglinearInput) -> ModelFit:
    """Fit the given model, or run the forward search when ``inp.terms`` is None."""
    step("fitting the log-linear model")
    fitter = _Fitter(table, inp.method, inp.tol, inp.max_iter, inp.names)
    if inp.terms is not None:
        mu, *info = fitter.fit(list(inp.terms))
        crit, lam = fitter.criterion(mu)
        method, gens, used, it, conv = info
        return ModelFit(mu, lam, crit, method, gens, used, int(it), bool(conv), ())
    found = _search(fitter, inp)
    method, gens, used, it, conv = found.info
    crit = ll.bias_criterion(table.f, found.lam, table.pi_cells)
    return ModelFit(found.mu, found.lam, crit, method, gens, used, int(it), bool(conv), found.path, found.blend)


def _candidates(terms, m):
    have = set(terms)
    out = [t for t in itertools.combinations(range(m), 2) if t not in have]
    for t in itertools.combinations(range(m), 3):
        if t not in have and all(s in have for s in itertools.combinations(t, 2)):
            out.append(t)
    return out


@dataclass(frozen=True)
class _Found:
    """The outcome of the model search: terms, fitted values, fit details, path and blend."""

    terms: list
    mu: np.ndarray
    lam: np.ndarray
    info: tuple
    path: tuple
    blend: dict | None


def _search(fitter: _Fitter, inp: LoglinearInput) -> _Found:
    """Forward search on Z (Skinner & Shlomo 2008), with the stopping rule ``inp.search``.

    ``"bracket"`` (default): add terms while Z > ``z_target``; the first model with
    Z <= z_target and the one before bracket the target, and the estimate is the model between
    them, lambda = lambda_a^(1 - w) lambda_b^w (the last term's parameters scaled by w), with w
    solving Z(w) = z_target. ``"skinner-shlomo"``: stop at |Z| <= z_crit, when no term reduces
    |Z|, or when the best term gives Z < -z_crit (the previous model is kept).
    Each step scores the ``inp.candidates`` terms with the largest margin deviance (all with
    None) by the Z of one IPF step and fits the one with the smallest |Z| (see
    :func:`_try_candidates`), from the current fit (IPF keeps the start's log-structure, so the
    result is that model's MLE).
    """
    names, m = inp.names, len(inp.names)
    zkey = "Z" + inp.criterion[-1]
    terms: list = [(j,) for j in range(m)]
    mu, *info = fitter.fit(terms)
    crit, lam = fitter.criterion(mu)
    path = [_path_entry(0, None, True, crit, fitter.taus(lam), None)]
    bracket = inp.search == "bracket"
    done = (crit[zkey] <= inp.z_target) if bracket else abs(crit[zkey]) <= inp.z_crit
    step_no = 0
    while not done and (inp.max_steps is None or step_no < inp.max_steps):
        tried = _try_candidates(fitter, terms, mu, zkey, inp.candidates, inp.term_test, inp.records_per_parameter)
        if not tried:
            break
        (cand, mu_c, crit_c, lam_c, info_c), runner = tried[0], (tried[1] if len(tried) > 1 else None)
        if not bracket and abs(crit_c[zkey]) >= abs(crit[zkey]):
            break
        step_no += 1
        accepted = bracket or crit_c[zkey] >= -inp.z_crit
        path.append(_path_entry(step_no, _name(cand, names), accepted, crit_c, fitter.taus(lam_c), runner, names, zkey))
        if not accepted:
            break
        if bracket and crit_c[zkey] <= inp.z_target:
            w, lam_w = _blend_weight(fitter, lam, lam_c, zkey, inp.z_target)
            blend = {"term": _name(cand, names), "weight": w, "z_target": inp.z_target}
            t1_w, t2_w = fitter.taus(lam_w)
            path[-1].update({"weight": w, "tau1_blend": t1_w, "tau2_blend": t2_w})
            return _Found(terms + [cand], lam_w / fitter.table.lam_scale, lam_w, tuple(info_c), tuple(path), blend)
        terms, mu, crit, lam, info = terms + [cand], mu_c, crit_c, lam_c, info_c
        done = (not bracket) and abs(crit[zkey]) <= inp.z_crit
    return _Found(terms, mu, lam, tuple(info), tuple(path), None)


def _name(term, names) -> str:
    return ":".join(names[j] for j in term)


def _path_entry(step_no, added, accepted, crit, taus, runner, names=(), zkey="Z2") -> dict:
    """One step of the search path; ``runner``: the second-best candidate (its Z shows how
    close the choice was)."""
    return {
        "step": step_no,
        "added": added,
        "accepted": bool(accepted),
        "Z1": crit["Z1"],
        "Z2": crit["Z2"],
        "tau1": taus[0],
        "tau2": taus[1],
        "runner_up": None if runner is None else _name(runner[0], names),
        "runner_up_Z": None if runner is None else runner[2][zkey],
    }


def _try_candidates(fitter: _Fitter, terms, mu, zkey: str, shortlist: int | None, term_test=None, per_df=None) -> list:
    """Candidate terms, the chosen one first, each ``(term, mu, criterion, lambda, fit info)``.

    With ``term_test`` (default): the terms the sample supports, most supported first
    (:func:`_supported`); the first ``shortlist`` of them are scored by the Z of one IPF step
    from the current fit and the one with the smallest |Z| is chosen (``shortlist`` 1: the
    most supported term). Without: the ``shortlist`` terms with the largest margin deviance (all
    with None) are scored so. The chosen term is fitted to convergence and gets both Z's; the
    next one (by |Z|, or the next supported term) is the runner-up, with its one-step Z.
    """
    t = fitter.table
    cands = _candidates(terms, len(t.shape))
    if per_df is not None:
        cands = _not_oversized(fitter, cands, per_df)
    if term_test is not None:
        cands = _supported(fitter, cands, mu, term_test)
        if shortlist is not None and len(cands) > shortlist:
            cands = cands[: max(shortlist, 2)]
    elif shortlist is not None and len(cands) > shortlist:
        gain = [ll.margin_deviance(fitter.observed_margin(c), mu, t.shape, c) for c in cands]
        cands = [cands[i] for i in np.argsort(gain, kind="stable")[::-1][:shortlist]]
    if not cands:
        return []
    pool = len(cands) if shortlist is None else shortlist
    scored = [(c, None if pool == 1 and i == 0 else _one_step_z(fitter, mu, c, zkey)) for i, c in enumerate(cands)]
    scored[:pool] = sorted(scored[:pool], key=lambda r: abs(r[1][zkey]) if r[1] is not None else 0.0)
    best = scored[0][0]
    mu_b, *info_b = fitter.fit(terms + [best], start=mu)
    crit_b, lam_b = fitter.criterion(mu_b)
    return [(best, mu_b, crit_b, lam_b, info_b)] + [(c, None, crit_c, None, None) for c, crit_c in scored[1:]]


def _not_oversized(fitter: _Fitter, cands, per_df: float) -> list:
    """The candidate terms with at least ``per_df`` sample records per parameter they add,
    prod_j (L_j - 1) over the term's keys.

    Why: a term with about as many parameters as records fits the sample's own uniques, and its
    deviance reduction then says little about the population; such a term passed the support
    test (whose degrees of freedom discount the empty cells, most of a large sparse margin) and
    made tau_2 too low. Counting all its parameters, with one record each, was chosen on the
    tuning part of the validation grid (see the calibration page): against the effective
    degrees of freedom it lowered the under-estimation where the terms are large (single years
    of age x 41 countries x 14 occupations) and changed little elsewhere."""
    n, shape = float(fitter.table.f.sum()), fitter.table.shape
    return [t for t in cands if per_df * math.prod(shape[j] - 1 for j in t) <= n]


def _one_step_z(fitter: _Fitter, mu, term, zkey: str) -> dict:
    """The criterion after one IPF step that matches ``term``'s margin from the fit ``mu``."""
    t = fitter.table
    fitted = fitter.fitted_margins(mu, [term])[term]
    return fitter.criterion(ll.ipf_step(fitter.observed_margin(term), mu, t.shape, term, fitted), zkey[-1])[0]


def _supported(fitter: _Fitter, cands, mu, threshold: float) -> list:
    """The candidate terms the sample supports, most supported first.

    A term's support is its standardized deviance reduction
    (G^2 - df) / sqrt(2 df) (the chi-square with df degrees of freedom in its normal
    approximation): G^2 the deviance reduction of its first IPF step from the current fit
    (:func:`sdckit._core.loglinear.margin_deviance`, on the scale of the sample counts), df its
    degrees of freedom less the empty cells of its observed margin
    (:func:`sdckit._core.loglinear.effective_df`). Terms at or below ``threshold`` are left out.

    Why: the Z criterion measures the bias of the estimate, not whether the data support a term.
    Ranking by Z (or by raw deviance) favours the terms with the most parameters: in a sparse
    table (single years of age at 1/50) a term with hundreds of parameters brings Z to its
    target by fitting the sample's own uniques, and which of several such terms comes first
    varies from sample to sample. Ranked by support, the terms enter in the order of the
    evidence for them, and Z decides only how many.
    """
    t = fitter.table
    scale = float(t.f.sum()) / max(float(t.target.sum()), 1e-300)  # weighted counts -> sample counts
    ranked = []
    fitted = fitter.fitted_margins(mu, cands)
    for term in cands:
        g2 = scale * ll.margin_deviance(fitter.observed_margin(term), fitted[term], t.shape, term)
        z = ll.deviance_support(g2, ll.effective_df(fitter.observed_margin, term))
        if z > threshold:
            ranked.append((z, term))
    ranked.sort(key=lambda r: -r[0])
    return [term for _, term in ranked]


def _blend_weight(fitter: _Fitter, lam_a, lam_b, zkey: str, target: float):
    """w in [0, 1] with Z(lambda_a^(1-w) lambda_b^w) = target, by the Illinois variant of
    regula falsi (the root stays bracketed; w to 1e-4). Z(0) > target >= Z(1) by construction;
    w = 1 if not."""
    t = fitter.table

    def z(w):
        lam = ll.geometric_blend(lam_a, lam_b, w)
        return ll.bias_criterion(t.f, lam, t.pi_cells, zkey[-1])[zkey] - target

    w = _illinois(z, 0.0, 1.0, xtol=1e-4)
    return w, ll.geometric_blend(lam_a, lam_b, w)


def _illinois(g, lo: float, hi: float, xtol: float, max_iter: int = 60) -> float:
    """A root of g in [lo, hi] with g(lo) > 0 >= g(hi) (else ``hi``): regula falsi with the
    Illinois halving of the retained end's value (Dowell & Jarratt 1971)."""
    g_lo, g_hi = g(lo), g(hi)
    if not (g_lo > 0 >= g_hi):
        return hi
    true_lo, true_hi = g_lo, g_hi  # the halvings change only the secant's weights
    side = 0
    for _ in range(max_iter):
        x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        gx = g(x)
        if gx > 0:
            lo, g_lo, true_lo = x, gx, gx
            if side == -1:
                g_hi /= 2.0
            side = -1
        else:
            hi, g_hi, true_hi = x, gx, gx
            if side == 1:
                g_lo /= 2.0
            side = 1
        if hi - lo < xtol or gx == 0:
            break
    return float(hi if abs(true_hi) <= abs(true_lo) else lo)


#: records kept by each subsample of :func:`model_stability`
STABILITY_RATE = 0.8


def model_stability(table: CellTable, inp: LoglinearInput, fit: ModelFit) -> dict | None:
    """How stable the automatic model choice is: the search repeated on ``inp.stability``
    subsamples, each record kept with probability 0.8 (a Bernoulli subsample of a Bernoulli
    sample is a Bernoulli sample of the population at 0.8 pi, so the model and its criterion
    stay valid; a bootstrap would not: duplicated records inflate the variance the criterion
    assumes Poisson).

    Returns the share of subsamples that choose the same terms, each term's inclusion frequency
    (Sauerbrei & Schumacher 1992) and the 10 / 50 / 90 % quantiles of the subsamples' tau_1 / n_1
    and tau_2 / n_1. None without ``model="auto"`` or with ``selection={"stability": 0}``.
    """
    if inp.terms is not None or inp.stability == 0:
        return None
    seed = inp.seed if inp.seed is not None else int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    mains = {(j,) for j in range(len(inp.names))}
    chosen = set(fit.terms) - mains
    inclusion: dict = {}
    same = 0
    shares = []
    base = (inp.counts if inp.counts is not None else np.ones(inp.n_rows)).astype(np.int64)
    for _ in range(inp.stability):
        step("model stability: subsample")
        t_b = build_table(inp, copies=rng.binomial(base, STABILITY_RATE), rate=STABILITY_RATE)
        fitter = _Fitter(t_b, inp.method, inp.tol, inp.max_iter, inp.names)
        found = _search(fitter, inp)
        terms_b = set(ll.closure(found.terms)) - mains
        same += terms_b == chosen
        for t in terms_b:
            inclusion[_name(t, inp.names)] = inclusion.get(_name(t, inp.names), 0) + 1
        n1 = max(int(np.count_nonzero(t_b.f == 1)), 1)
        shares.append([x / n1 for x in fitter.taus(found.lam)])
    q = np.quantile(np.array(shares), [0.1, 0.5, 0.9], axis=0)
    B = inp.stability
    return {
        "subsamples": B,
        "rate": STABILITY_RATE,
        "seed": seed,
        "same_model": same / B,
        "inclusion": {k: v / B for k, v in sorted(inclusion.items(), key=lambda kv: -kv[1])},
        "share_tau1_uniques": {"q10": float(q[0, 0]), "q50": float(q[1, 0]), "q90": float(q[2, 0])},
        "share_tau2_uniques": {"q10": float(q[0, 1]), "q50": float(q[1, 1]), "q90": float(q[2, 1])},
    }


# ---------------------------------------------------------------------------------------------
# 4. the measures
def risk_measures(table: CellTable, fit: ModelFit, inp: LoglinearInput) -> dict:
    """tau_1, tau_2 and the per-record values (Skinner & Holmes 1998), and the goodness of fit.

    Per sample unique, mu = (1 - pi) lambda: P(F = 1 | f = 1) = exp(-mu),
    E(1/F | f = 1) = (1 - exp(-mu)) / mu.
    """
    step("risk measures")
    f_rec = table.f[table.idx]
    lam_rec = fit.lam[table.idx]
    su = f_rec == 1
    p1, p2 = ll.uniqueness_probabilities((1.0 - table.pi_records[su]) * lam_rec[su])
    target, mu = table.target, fit.mu
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = 2.0 * float(np.sum(np.where(target > 0, target * np.log(target / mu), 0.0)))
        pear = float(np.sum(np.where(mu > 0, (target - mu) ** 2 / mu, 0.0)))
    npar = ll.n_parameters(fit.terms, list(table.shape))
    p_unique = np.full(inp.n_rows, np.nan)
    risk = np.full(inp.n_rows, np.nan)
    p_unique[su] = p1
    risk[su] = p2
    return {
        "tau1": float(p1.sum()),
        "tau2": float(p2.sum()),
        "n1": int(su.sum()),
        "su": su,
        "p2": p2,
        "n_parameters": int(npar),
        "gof": {"deviance": dev, "pearson": pear, "df": int(table.K - npar), **fit.criterion},
        "fk": inp.full(f_rec),
        "lam": inp.full(lam_rec),
        "p_unique": inp.full(p_unique),
        "risk": inp.full(risk),
    }


def pram_measures(inp: LoglinearInput, risk: dict, table: CellTable | None = None, fit: ModelFit | None = None):
    """Misclassification-adjusted tau_2 = sum_SU M_kk E(1/F_k | f_k = 1) (Shlomo & Skinner
    2010) and the adjusted per-record risk; ``(None, None)`` without ``pram``. With the full
    matrices, also the exact form (eq. 9 with the full matrix):
    tau_2^exact = sum_SU M_kk c_k E(1/F_k | f_k = 1), c_k from :func:`exact_factor` with the
    fitted population counts of the released cells standing for those of the true cells."""
    if inp.pram is None:
        return None, None
    su, p2, n1 = risk["su"], risk["p2"], risk["n1"]
    adjusted = inp.pram[su] * p2
    tau2 = float(np.sum(adjusted))
    per_record = np.full(inp.n_rows, np.nan)
    per_record[su] = adjusted
    out = {"tau2": tau2, "share_tau2_uniques": tau2 / n1 if n1 else 0.0, "variables": list(inp.pram_variables)}
    exact = None
    if inp.pram_matrices is not None and table is not None and fit is not None:
        exact = float(np.sum(adjusted * _exact_factors(inp, table, fit)[su]))
    out["tau2_exact"] = exact
    out["share_tau2_exact_uniques"] = None if exact is None else (exact / n1 if n1 else 0.0)
    return out, inp.full(per_record)


def _exact_factors(inp: LoglinearInput, table: CellTable, fit: ModelFit) -> np.ndarray:
    """c_k of every complete row's released cell, with the matrices of the row's strata."""
    axes = sorted(inp.pram_matrices)
    ids = np.column_stack([inp.pram_matrices[a][1] for a in axes])
    combos, which = np.unique(ids, axis=0, return_inverse=True)
    which = which.reshape(-1)
    out = np.empty(inp.n_rows)
    for g, combo in enumerate(combos):
        mats = {a: inp.pram_matrices[a][0][int(k)] for a, k in zip(axes, combo)}
        c = exact_factor(fit.lam, table.shape, mats, table.pi_cells)
        rows = which == g
        out[rows] = c[table.idx[rows]]
    return out


def ci_measures(inp: LoglinearInput, table: CellTable, fit: ModelFit, risk: dict, confidence: float) -> dict:
    """Intervals for tau_1 and tau_2 by a parametric bootstrap (:mod:`sdckit._core.risk_ci`):
    the model parameters drawn from their asymptotic normal distribution (the inverse Fisher
    information; with the pseudo-likelihood fit to weighted counts the sandwich with the
    variances sum w_i^2 of the weighted counts), then the population counts of the sample
    uniques' cells."""
    step("confidence intervals")
    X = risk_ci.design_matrix(table.shape, ll.closure(fit.terms))
    v = None
    if table.sampling == "pml":
        w = inp.weights if inp.counts is None else inp.weights / np.maximum(inp.counts, 1)
        per_row = w * (inp.weights if inp.counts is None else inp.weights)
        v = np.bincount(table.idx, weights=per_row, minlength=table.K)
    factor = risk_ci.parameter_factor(X, fit.mu, v)
    cells = table.idx[risk["su"]]
    pi = np.broadcast_to(np.asarray(table.pi_cells, dtype=float), (table.K,))[cells]
    t1, t2 = risk_ci.loglinear_draws(fit.lam[cells], pi, X[cells], factor, draws=risk_ci.DRAWS)
    n1 = risk["n1"]
    lo1, hi1 = risk_ci.percentile_interval(t1, confidence)
    lo2, hi2 = risk_ci.percentile_interval(t2, confidence)
    share = (lambda a, b: (a / n1, b / n1)) if n1 else (lambda a, b: (0.0, 0.0))  # noqa: E731
    return {
        "confidence": confidence,
        "method": "parametric bootstrap",
        "draws": risk_ci.DRAWS,
        "tau1": (lo1, hi1),
        "tau2": (lo2, hi2),
        "share_tau1_uniques": share(lo1, hi1),
        "share_tau2_uniques": share(lo2, hi2),
    }


#: the model-aware interval's calibration, chosen on the tuning part of the validation grid
#: (see :func:`model_interval` and the calibration page): the weight of the model-choice spread
#: and the relative error of the fitted lambdas a sparse sample leaves, per sqrt(parameter / record)
MODEL_SPREAD_WEIGHT = 1.0
SPARSE_ERROR = 0.1


def _path_spread(path: tuple, key: str, value: float) -> float:
    """The model-choice spread of ``key`` (tau1 or tau2): the largest |log| ratio between the
    reported value and the models next to it on the search path (the bracket's two models and
    the one before them); 0 without a path (a model the user chose)."""
    near = [p[key] for p in path if p["accepted"]][-3:]
    ratios = [abs(math.log(x / value)) for x in near if x > 0] if value > 0 else []
    return max(ratios, default=0.0)


def model_interval(table: CellTable, fit: ModelFit, risk: dict, confidence: float = 0.95) -> dict:
    r"""The interval of tau_1 and tau_2 that carries the choice of model, around the estimate t:

    .. math:: t - \sqrt{(t (1 - e^{-z s}))^2 + (z \sigma)^2}, \quad
              t + \sqrt{(t (e^{z s} - 1))^2 + (z \sigma)^2}, \qquad s^2 = (w s_M)^2 + s_S^2

    (a relative error s of the model, on the log scale, and the count part sigma combined in
    quadrature; the lower end at least 0, the upper at most n_1), with

    * sigma the randomness of the population counts given the fitted lambdas: the square root
      of the sum over the sample uniques of Var(1[F = 1]) or Var(1/F)
      (:func:`sdckit._core.loglinear.uniqueness_variances`);
    * s_M the model-choice spread (:func:`_path_spread`): how far the models next to the chosen
      one on the search path put the measure, weighted by :data:`MODEL_SPREAD_WEIGHT`;
    * s_S = :data:`SPARSE_ERROR` sqrt(parameters / records): the error of lambdas fitted from a
      sparse table, which neither of the others sees.

    Why this and not a bootstrap of the search: a bootstrap that reruns the search costs one
    search per resample (hundreds for a 95 % range), and the parametric bootstrap of the fixed
    model (``intervals={"ci": True}``) misses the model choice, which is the larger part where
    the estimate is weak. This one costs one pass over the sample uniques; its coverage and
    width are measured on the validation grid. Neither measure exceeds n_1, nor does the upper
    end."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2.0))
    su = risk["su"]  # the sample uniques' rows, as risk_measures found them
    v1, v2 = ll.uniqueness_variances((1.0 - table.pi_records[su]) * fit.lam[table.idx[su]])
    n = max(float(table.f.sum()), 1.0)
    s_sparse = SPARSE_ERROR * math.sqrt(risk["n_parameters"] / n)
    out: dict[str, Any] = {"confidence": confidence, "method": "model-aware"}
    for key, var in (("tau1", float(v1.sum())), ("tau2", float(v2.sum()))):
        value = float(risk[key])
        s_m = MODEL_SPREAD_WEIGHT * _path_spread(fit.path, key, value)
        s_log = math.sqrt(s_m**2 + s_sparse**2)
        up, down = value * math.expm1(min(z * s_log, 700.0)), value * -math.expm1(-z * s_log)
        counts = z * math.sqrt(var)
        lo = max(value - math.hypot(down, counts), 0.0)
        hi = min(value + math.hypot(up, counts), float(risk["n1"]))
        out[key] = (lo, max(hi, value))
        out[f"{key}_parts"] = {"counts_sd": math.sqrt(var), "model_log_sd": s_m, "sparse_log_sd": s_sparse}
    n1 = risk["n1"]
    for key in ("tau1", "tau2"):
        lo, hi = out[key]
        out[f"share_{key}_uniques"] = (lo / n1, hi / n1) if n1 else (0.0, 0.0)
    return out


#: below this many records the estimate is weak (the validation grid: tau_2 off by up to a
#: third in single samples); below this expected number of correct matches, too
SMALL_SAMPLE = 5000
FEW_MATCHES = 10.0


def weak_estimate(inp: LoglinearInput, risk: dict, interval: dict) -> tuple:
    """Why the estimate is weak, one reason per condition met (empty when none is), each also
    emitted as an :class:`SdcWarning` that gives tau_2 with its interval: a sample of fewer than
    :data:`SMALL_SAMPLE` records, a model with more parameters than records, fewer than
    :data:`FEW_MATCHES` expected correct matches."""
    n, p, tau2 = inp.n_used, risk["n_parameters"], risk["tau2"]
    reasons = []
    if n < SMALL_SAMPLE:
        reasons.append(f"the sample is small ({n:,} records, under {SMALL_SAMPLE:,})")
    if p > n:
        reasons.append(f"the model has more parameters ({p:,}) than the sample has records ({n:,})")
    if tau2 < FEW_MATCHES:
        reasons.append(f"the expected number of correct matches is small ({tau2:.3g}, under {FEW_MATCHES:g})")
    if reasons:
        lo, hi = interval["tau2"]
        pct = f"{100 * interval['confidence']:g} %"
        warn(
            f"loglinear_risk: tau_2 = {tau2:.4g} may be substantially too low: {'; '.join(reasons)}. "
            f"The {pct} interval, which carries the choice of model, is {lo:.4g} to {hi:.4g}"
        )
    return tuple(reasons)


def smoothing_measures(inp: LoglinearInput, table: CellTable, risk: dict) -> dict | None:
    """Negative-binomial smoothing (Rinott & Shlomo 2006), moment version, experimental."""
    if inp.smoothing is None:
        return None
    warn("smoothing: negative-binomial smoothing uses the library's moment estimator over a window; experimental")
    pi_cells = table.pi_cells
    known = np.ndim(pi_cells) == 0 or table.offset  # a constant, or known fractions by stratum
    pi_nb = pi_cells if known else min(inp.n_used / float(inp.weights.sum()), 1.0)
    nb1, nb2 = ll.nb_smoothing(table.f, table.shape, pi_nb)
    su = risk["su"]
    return {
        "method": "nb-moment",
        "experimental": True,
        "tau1": float(nb1[table.idx][su].sum()),
        "tau2": float(nb2[table.idx][su].sum()),
    }


# ---------------------------------------------------------------------------------------------
# 5. sdcMicro modRisk
def modrisk_result(inp: LoglinearInput) -> LoglinearRiskResult:
    """sdcMicro ``modRisk``: see :func:`loglinear_risk` ``compat``.

    Table over the observed levels (R's ``expand.grid`` of the unique values), the GLM (or
    ``loglm`` for IPF) fitted to the sample counts, the fitted sample-scale values used as
    lambda with p = sum 1/w per cell; gr = sum over kept cells with f = 1 of the risk / C, C =
    cells with 0 < f <= bound and a positive fit.
    """
    step("sdcMicro modRisk computation")
    terms = list(inp.terms)
    idx, shape, numeric = _observed_levels(inp)
    K = math.prod(shape)
    f, W = ll.cell_table(idx, K, inp.weights)
    incl = np.bincount(idx, weights=1.0 / inp.weights, minlength=K)
    mu = _modrisk_fit(inp.compat_method, f, W, shape, terms, numeric)
    keep = (f > 0) & (f <= inp.bound) & ~((mu == 0) & (f > 0))
    C = int(keep.sum())
    p1, p2 = ll.uniqueness_probabilities((1.0 - incl) * mu)
    one = keep & (f == 1)
    gr1 = float(p1[one].sum() / C) if C else 0.0
    gr2 = float(p2[one].sum() / C) if C else 0.0
    per_record = _modrisk_records(inp, idx, f, mu, p1, p2)
    names = inp.names
    numbers = ModriskNumbers(
        {
            "method": inp.compat_method,
            "gr1": gr1,
            "gr2": gr2,
            "n_kept_cells": C,
            "bound": None if math.isinf(inp.bound) else inp.bound,
            "numeric_covariates": [names[j] for j in sorted(numeric)],
        }
    )
    return LoglinearRiskResult(
        keys=names,
        n=inp.n,
        n_used=inp.n_used,
        n_excluded=inp.n_excluded,
        n_cells=K,
        levels=shape,
        n_sample_uniques=int(np.count_nonzero(f == 1)),
        terms=term_names(terms, names),
        generators=term_names(terms, names),
        method="ipf" if inp.compat_method == "IPF" else "irls",
        n_parameters=int(ll.n_parameters(terms, list(shape))),
        sampling="sdcmicro",
        criterion="tau2",
        modrisk=numbers,
        compat="sdcMicro",
        **per_record,
        backend=inp.backend,
        records=local_records(),
        row_index=inp.row_index,
    )


def _modrisk_records(inp: LoglinearInput, idx, f, mu, p1, p2) -> dict:
    """The per-record arrays of the compatibility mode: each a per-cell table (the sample-unique
    ones NaN outside the cells with f = 1) read at every record's cell, one gather each."""
    unique = f == 1
    cells = {
        "fk": f,
        "lam": mu,
        "p_unique": np.where(unique, p1, np.nan),
        "risk": np.where(unique, p2, np.nan),
    }
    return {name: inp.full(table.take(idx)) for name, table in cells.items()}


def _observed_levels(inp: LoglinearInput):
    """The cell (C order) of every record in the table over the observed categories only
    (sorted, as R's ``unique`` + sort), the table shape, and the numeric covariates (key ->
    value per observed category). The cell index is built key by key (no renumbered copy of
    the codes): idx = (...(c_1 L_2 + c_2) L_3 + ...) + c_m, in 32-bit integers when the table
    has fewer than 2^31 cells (the codes' own type: about five times faster than mixing it
    with 64-bit integers)."""
    codes = inp.codes
    columns: list[np.ndarray] = []
    shape: list[int] = []
    numeric = {}
    for j, L in enumerate(inp.levels):
        col = codes[:, j]
        present = _present_codes(inp, j, col, L)
        if present is None:  # every category occurs
            used: slice | np.ndarray = slice(None)
            shape.append(int(L))
        else:  # declared categories that do not occur (Enum): renumber
            col = (np.cumsum(present, dtype=np.int32) - 1)[col]
            used = np.flatnonzero(present)
            shape.append(int(np.count_nonzero(present)))
        columns.append(col)
        values = inp.label_numbers[j] if inp.label_numbers else None
        if values is not None:
            numeric[j] = values[used]
    dtype = np.int32 if math.prod(shape) < 2**31 else np.int64
    idx: np.ndarray = columns[0].astype(dtype) if columns else np.zeros(codes.shape[0], dtype)
    for col, L in zip(columns[1:], shape[1:]):
        idx *= L
        idx += col
    return idx.astype(np.int64, copy=False), tuple(shape), numeric


def _present_codes(inp: LoglinearInput, j: int, col: np.ndarray, L: int) -> np.ndarray | None:
    """Which of the ``L`` codes of key ``j`` occur in the complete records (None: all). Known
    from the encoding when every record is complete; counted otherwise (a category may occur
    only beside a missing value of another key)."""
    enc = inp.prep.keys if inp.prep is not None else None
    if enc is not None and inp.counts is None and inp.n_rows == inp.complete.shape[0]:
        obs = enc.observed[j] if enc.observed else None
        if obs is None:
            return None
        present = np.zeros(L, dtype=bool)
        present[list(obs)] = True
    else:
        present = np.bincount(col, minlength=L) > 0
    return None if present.all() else present


def _modrisk_fit(method: str, f, W, shape, terms, numeric) -> np.ndarray:
    """The fitted sample-scale values of sdcMicro's ``modRisk`` ``method``."""
    if method == "IPF":
        mu, _, _ = ll.ipf(f, shape, ll.generating_class(terms), tol=1e-12 * max(f.sum(), 1))
        return mu
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
    mu, _, it, conv = ll.poisson_irls(X, y, offset=offset, tol=1e-12)
    if not conv:
        warn(
            f"compat_method: the Poisson GLM of modRisk method {method!r} did not converge in {it} "
            "iterations (the model may have no finite maximum-likelihood estimate); the fitted values "
            "are inaccurate"
        )
    return mu
