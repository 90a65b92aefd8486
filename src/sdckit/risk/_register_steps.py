r"""The steps of :func:`sdckit.register_risk`, in order.

1. :func:`validate_register`: every argument checked once, the keys of both files encoded on
   one set of categories, both models parsed -> :class:`RegisterInput` (frozen).
2. :func:`build_cells`: the full key table: register counts F^1_k, sample counts f_k, the
   sample's weight sums W_k and the sampling fraction pi_k -> :class:`RegisterCells`.
3. :func:`approach_a` / :func:`approach_b`: lambda_k and the membership probability p_k of
   every cell (Shlomo & Skinner 2022, approaches A and B) -> :class:`ApproachFit`.
4. :func:`measures`: tau*_1, tau*_2, tau_1, tau_2 and the per-record risks.

The kernels are in :mod:`sdckit._core.register` and :mod:`sdckit._core.loglinear`.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core import loglinear as ll
from .._core import register as rk
from .._errors import SdcError, SdcWarning, warn
from .._prepare import prepare
from .._progress import step
from .._validation import as_name_list, check_choice, check_max_iter, check_sampling_fraction, check_tol
from ..engines import get_engine
from ._loglinear_access import label_values
from ._loglinear_steps import MAX_CELLS, MAX_IRLS_PARAMETERS, _named_model, parse_model, term_names

__all__ = [
    "ApproachFit",
    "RegisterCells",
    "RegisterInput",
    "approach_a",
    "approach_b",
    "build_cells",
    "measures",
    "validate_register",
]

#: IPF stops when every fitted margin is within this share of the total of the observed one
IPF_TOLERANCE = 1e-5
IPF_MAX_CYCLES = 1000
APPROACHES = ("A", "B", "both")


# ---------------------------------------------------------------------------------------------
# 1. validated input
@dataclass(frozen=True)
class RegisterInput:
    """The arguments of :func:`register_risk`, checked, with the complete records of both files
    encoded on one set of categories per key (``categories``: labels, code c -> ``[c]``)."""

    names: tuple
    categories: tuple
    register_codes: np.ndarray
    register_complete: np.ndarray
    sample_codes: np.ndarray
    sample_weights: np.ndarray | None
    n_register: int
    n_sample: int
    sampling_fraction: float | None
    terms: tuple
    membership_terms: tuple
    approach: str
    method: str
    tol: float
    max_iter: int
    register_prep: Any

    @property
    def levels(self) -> tuple:
        return tuple(len(c) for c in self.categories)

    @property
    def n_register_excluded(self) -> int:
        return self.n_register - int(self.register_codes.shape[0])

    @property
    def n_sample_excluded(self) -> int:
        return self.n_sample - int(self.sample_codes.shape[0])

    def full(self, x, fill=np.nan) -> np.ndarray:
        """Per complete register record -> per register input record."""
        out = np.full(self.register_complete.shape[0], fill, float)
        out[self.register_complete] = x
        return out


def validate_register(
    register,
    sample,
    keys,
    *,
    sample_weight,
    sampling_fraction,
    approach,
    model,
    membership_model,
    method,
    tol,
    max_iter,
    missing,
    engine=None,
) -> RegisterInput:
    """Check every argument, encode the keys of both files jointly and parse both models."""
    if isinstance(approach, str) and approach.lower() in ("a", "b"):
        approach = approach.upper()
    params = dict(
        approach=check_choice(approach, "approach", APPROACHES),
        method=check_choice(method, "method", ("newton", "fisher")),
        tol=check_tol(tol),
        max_iter=check_max_iter(max_iter),
        sampling_fraction=check_sampling_fraction(sampling_fraction),
    )
    if params["sampling_fraction"] is None and sample_weight is None:
        raise SdcError(
            "sampling_fraction: neither sampling_fraction nor sample_weight given; expected the sample's known "
            "sampling fraction in (0, 1] or its weight column (sample_weight=...)"
        )
    keys = as_name_list(keys, "keys")
    eng = get_engine(engine)
    tables = {}
    for param, data in (("register", register), ("sample", sample)):
        t = eng.table(data, param)
        t.require(keys, f"keys ({param})")
        tables[param] = t
    if sample_weight is not None and isinstance(sample_weight, str):
        tables["sample"].require([sample_weight], "sample_weight")
    preps = {
        "register": _prepare_file(tables["register"], keys, None, missing),
        "sample": _prepare_file(tables["sample"], keys, sample_weight, missing),
    }
    names = preps["register"].keys.names
    codes, categories = _joint_codes(preps, names)
    complete = {p: (c >= 0).all(axis=1) for p, c in codes.items()}
    _warn_excluded(complete)
    _check_joint(codes, complete, categories, names, params["approach"])
    terms = _parsed(model, names, "model")
    membership = _membership_terms(membership_model, names)
    w = preps["sample"].weights
    return RegisterInput(
        names=tuple(names),
        categories=tuple(tuple(c) for c in categories),
        register_codes=codes["register"][complete["register"]],
        register_complete=complete["register"],
        sample_codes=codes["sample"][complete["sample"]],
        sample_weights=None if w is None else w[complete["sample"]],
        n_register=int(complete["register"].size),
        n_sample=int(complete["sample"].size),
        terms=tuple(terms),
        membership_terms=tuple(membership),
        register_prep=preps["register"],
        **params,
    )


def _prepare_file(table, keys, weight, missing):
    """One file's roles checked and keys encoded; a weight problem (error or warning) names
    ``sample_weight``."""
    if weight is None:
        return prepare(table, keys, missing=missing, allow_degenerate_keys=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prep = prepare(table, keys, weight=weight, missing=missing, allow_degenerate_keys=True)
    except SdcError as exc:
        raise type(exc)(_sample_weight_message(str(exc))) from None
    for w in caught:
        if issubclass(w.category, SdcWarning):
            warn(_sample_weight_message(str(w.message)))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return prep


def _sample_weight_message(msg: str) -> str:
    """A message of the shared input checks with ``weight:`` renamed ``sample_weight:``."""
    fixed = msg.replace("\n  - weight: ", "\n  - sample_weight: ")
    return "sample_weight: " + fixed[len("weight: ") :] if fixed.startswith("weight: ") else fixed


def _union(labels_r: list, labels_s: list, declared: bool) -> list:
    """One list of categories: declared categories keep their order (the other file's extra
    categories follow), otherwise the sorted union."""
    seen = dict.fromkeys(labels_r)
    seen.update(dict.fromkeys(labels_s))
    out = list(seen)
    if not declared:
        try:
            out = sorted(out)
        except TypeError:  # mixed types: order of first appearance
            pass
    return out


def _joint_codes(preps: dict, names) -> tuple[dict, list]:
    """Codes of both files on one category list per key (the union of their categories)."""
    reg, smp = preps["register"], preps["sample"]
    out = {"register": np.empty_like(reg.keys.codes), "sample": np.empty_like(smp.keys.codes)}
    categories = []
    for j, name in enumerate(names):
        if reg.table.is_numeric(name) != smp.table.is_numeric(name):
            raise SdcError(
                f"keys: column {name} has type {reg.table.dtype_name(name)} in register but "
                f"{smp.table.dtype_name(name)} in sample; expected the same kind of values in both files"
            )
        lr, ls = label_values(reg.keys.labels[j]), label_values(smp.keys.labels[j])
        declared = bool(reg.table.categories(name) is not None or smp.table.categories(name) is not None)
        union = _union(lr, ls, declared) if declared or lr != ls else lr
        position = {lab: i for i, lab in enumerate(union)}
        for p, prep, labs in (("register", reg, lr), ("sample", smp, ls)):
            mapping = np.array([position[lab] for lab in labs] + [-1], np.int64)  # [-1]: missing
            out[p][:, j] = mapping[prep.keys.codes[:, j]]
        categories.append(union)
    return out, categories


def _warn_excluded(complete: dict) -> None:
    n_reg = int(np.count_nonzero(~complete["register"]))
    n_smp = int(np.count_nonzero(~complete["sample"]))
    if n_reg or n_smp:
        warn(
            f"keys: records with a missing key value are excluded: {n_reg} of the register, {n_smp} of the "
            "sample; their risk is NaN"
        )


def _check_joint(codes: dict, complete: dict, categories: list, names, approach: str) -> None:
    """Records in both files; keys with two categories or more; for approach A (and "both"),
    every category of the register in the sample.

    Approach A fits the population counts to the sample: a category that no sample record has
    gets a fitted count of 0 while register members are there, which the model cannot explain
    (an error). Approach B estimates the population counts from the register itself: such a
    category has register members against a weight sum of 0, the boundary F^1_j >= W_j of the
    propensity fit, where the p = 1 rule sets p = 1 (F-hat = F^1) with a warning."""
    for p in ("register", "sample"):
        if not complete[p].any():
            raise SdcError(f"{p}: no record with every key value present; expected complete records")
    for j, name in enumerate(names):
        if len(categories[j]) < 2:
            raise SdcError(
                f"keys: column {name} has a single category in both files; it cannot distinguish records, "
                "expected it dropped from the keys"
            )
    if approach != "B":
        _check_overlap(codes["register"][complete["register"]], codes["sample"][complete["sample"]], categories, names)
    K = math.prod(len(c) for c in categories)
    if K > MAX_CELLS:
        raise SdcError(
            f"keys: the full table has {K:,} cells; expected at most {MAX_CELLS:,} (recode or drop key variables)"
        )


def _check_overlap(reg: np.ndarray, smp: np.ndarray, categories: list, names) -> None:
    """Approach A: every category of the register in the sample (one error per key)."""
    for j, name in enumerate(names):
        L = len(categories[j])
        absent = (np.bincount(reg[:, j], minlength=L) > 0) & (np.bincount(smp[:, j], minlength=L) == 0)
        if absent.any():
            n = int(absent.sum())
            raise SdcError(
                f"keys: {n} categor{'y' if n == 1 else 'ies'} of {name} occur{'s' if n == 1 else ''} in the register "
                "but in no sample record; approach A fits the population counts to the sample and cannot estimate "
                "the register members there (empty overlap); expected every register category in the sample "
                "(merge such categories with a similar one), or approach='B' (propensity 1 there: the register "
                "is taken to cover those cells)"
            )


def _parsed(model, names, param: str) -> list:
    """The terms of a model, errors naming ``param``."""
    if isinstance(model, str) and model.strip().lower() == "auto":
        raise SdcError(f"{param}: 'auto' is not available here; expected '2way', 'independence', a formula or terms")
    try:
        return parse_model(model, names)
    except SdcError as exc:
        msg = str(exc)
        raise SdcError(param + msg[len("model") :] if msg.startswith("model") else msg) from None


def _membership_terms(model, names) -> list:
    """The terms of the membership model. Unlike the log-linear model, a formula or a list of
    terms leaves out the keys it does not mention (the logit need not depend on every key);
    ``"independence"``, ``"2way"`` and the other named models use every key."""
    terms = _parsed(model, names, "membership_model")
    if isinstance(model, str) and _named_model(model, len(names)) is not None:
        return terms
    if isinstance(model, str):
        tokens = re.split(r"[~+*:\s]+", model)
    else:
        tokens = [v for t in model for v in ((t,) if isinstance(t, str) else t)]
    mentioned = {names.index(str(v).strip()) for v in tokens if str(v).strip() in names}
    return [t for t in terms if set(t) <= mentioned]


# ---------------------------------------------------------------------------------------------
# 2. the cells
@dataclass(frozen=True)
class RegisterCells:
    """The full table of the keys (C order): register counts ``F1``, sample counts ``f``, the
    sample's weight sums ``W`` (f_k / pi without weights), the sampling fraction ``pi`` (a
    constant or one per cell) and the cell of every complete register record (``idx``)."""

    shape: tuple
    F1: np.ndarray
    f: np.ndarray
    W: np.ndarray
    pi: Any
    idx: np.ndarray
    sampling_fraction: float | None

    @property
    def K(self) -> int:
        return int(self.F1.size)

    @property
    def pi_cells(self) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.pi, float), self.F1.shape)


def build_cells(inp: RegisterInput) -> RegisterCells:
    """Cross-classify both files; pi: the known fraction, else f_k / W_k in cells with sample
    records and n / sum w elsewhere (capped at 1)."""
    step("building the key table of both files")
    shape = inp.levels
    K = math.prod(shape)
    idx = ll.cell_index(inp.register_codes, shape)
    sidx = ll.cell_index(inp.sample_codes, shape)
    F1 = np.bincount(idx, minlength=K).astype(float)
    f = np.bincount(sidx, minlength=K).astype(float)
    if inp.sample_weights is None:
        W = f / inp.sampling_fraction
    else:
        W = np.bincount(sidx, weights=inp.sample_weights, minlength=K).astype(float)
    if inp.sampling_fraction is not None:
        return RegisterCells(shape, F1, f, W, inp.sampling_fraction, idx, inp.sampling_fraction)
    pi_empty = min(float(f.sum()) / float(W.sum()), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(f > 0, f / np.where(f > 0, W, 1.0), pi_empty)
    if np.any(pi > 1):
        warn(
            f"sample_weight: {int(np.count_nonzero(pi > 1))} cell(s) have a weight sum below their sample count "
            "(weights below 1); their sampling fraction is capped at 1"
        )
        pi = np.minimum(pi, 1.0)
    return RegisterCells(shape, F1, f, W, pi, idx, None)


# ---------------------------------------------------------------------------------------------
# 3. the approaches
@dataclass(frozen=True)
class ApproachFit:
    """lambda_k and p_k of every cell from one approach, with the fits' diagnostics."""

    approach: str
    lam: np.ndarray
    p: np.ndarray
    loglinear: dict
    membership: dict
    xi: dict
    n_zero_lambda: int


def _fit_lambda(target: np.ndarray, shape, terms, start, names, what: str):
    """The log-linear fit: IPF for hierarchical models (started at ``start``: the offset), else
    the Poisson GLM (offset log ``start``). Returns ``(mu, info)``."""
    if ll.is_hierarchical(terms):
        tol = IPF_TOLERANCE * max(float(target.sum()), 1.0)
        mu, it, conv = ll.ipf(target, shape, ll.generating_class(terms), start=start, tol=tol, max_iter=IPF_MAX_CYCLES)
        if not conv:
            warn(f"model: {what}: IPF did not converge in {it} cycles; the estimates may be inaccurate")
        return mu, {"method": "ipf", "iterations": int(it), "converged": bool(conv)}
    p = ll.n_parameters(terms, shape)
    if p > MAX_IRLS_PARAMETERS:
        raise SdcError(
            f"model: {p:,} parameters are too many for the Poisson GLM of a non-hierarchical model; expected at "
            f"most {MAX_IRLS_PARAMETERS:,} (use a hierarchical model, fitted by IPF)"
        )
    X, _ = ll.design_matrix(shape, terms)
    offset = None if start is None else np.log(np.broadcast_to(start, target.shape))
    mu, _, it, conv = ll.poisson_irls(X, target, offset=offset)
    if not conv:
        raise SdcError(
            f"model: {what}: the Poisson GLM of {_formula(terms, names)} did not converge in {it} iterations; "
            "expected a hierarchical model (fitted by IPF, which handles empty margins)"
        )
    return mu, {"method": "irls", "iterations": int(it), "converged": True}


def _formula(terms, names) -> str:
    return " + ".join(":".join(t) for t in term_names(terms, names))


def _cells_codes(cells: np.ndarray, shape) -> np.ndarray:
    return np.stack(np.unravel_index(cells, shape), axis=1) if len(shape) else np.zeros((cells.size, 0), np.int64)


def _xi_names(columns, inp: RegisterInput) -> list[str]:
    """Coefficient names: ``(intercept)``, ``age[3]``, ``age[3]:sex[2]`` (category positions,
    1-based, in the order of ``categories``; position 1 is the reference)."""
    out = []
    for t, levels in columns:
        out.append(":".join(f"{inp.names[j]}[{c + 1}]" for j, c in zip(t, levels)) if t else "(intercept)")
    return out


def _membership_info(fit: rk.MembershipFit, method: str) -> dict:
    return {
        "method": method,
        "iterations": int(fit.iterations),
        "converged": bool(fit.converged),
        "loglik": float(fit.loglik),
        "halvings": int(fit.halvings),
        "newton_steps": int(sum(k == "newton" for k in fit.kinds)),
        "fisher_steps": int(sum(k == "fisher" for k in fit.kinds)),
        "n_infinite": int(fit.n_infinite),
        "n_not_estimable": int(fit.n_not_estimable),
        "n_aliased": int(fit.n_aliased),
        "n_certain": int(fit.n_certain),
        "n_boundary": int(fit.n_boundary),
        "boundary_rounds": int(fit.boundary_rounds),
    }


def _warn_boundary(fit: rk.MembershipFit, inp: RegisterInput, approach: str) -> None:
    """The boundary rule fixed cells (:func:`sdckit._core.register._fit`): a warning that says
    how many, and why."""
    if fit.n_boundary:
        warn(
            f"membership_model: approach {approach}: {_formula(inp.membership_terms, inp.names)} has no finite "
            f"maximum along a combination of its terms; {fit.n_boundary} cell(s) were fixed at a membership "
            f"probability of 1 or 0 (the extended maximum-likelihood estimate) and the rest refitted in "
            f"{fit.boundary_rounds} round(s)"
        )


def _not_converged(fit: rk.MembershipFit, inp: RegisterInput, approach: str, what: str) -> None:
    if fit.converged:
        return
    model = f"approach {approach}: {what} of {_formula(inp.membership_terms, inp.names)}"
    if np.any(fit.p > 1 - 1e-9):
        capacity = "the weighted sample represents" if approach == "B" else "the fitted population count"
        raise SdcError(
            f"membership_model: {model} has no finite maximum: fitted membership probabilities approach 1 (some "
            f"cells have more register members than {capacity}); expected a coarser membership model"
            + (" or checked sample weights" if approach == "B" else "")
        )
    raise SdcError(
        f"membership_model: {model} did not converge in {fit.iterations} iterations (max_iter; last step "
        f"{fit.last_step:.3g}); expected a coarser membership model, or a larger max_iter or tol"
    )


def approach_a(inp: RegisterInput, cells: RegisterCells) -> ApproachFit:
    """Approach A: lambda from the sample (offset log pi_k), then xi from the register counts
    with lambda fixed (Fisher scoring / Newton-Raphson)."""
    step("approach A: fitting the log-linear model to the sample")
    start = None if cells.sampling_fraction is not None else cells.pi_cells
    mu, info = _fit_lambda(cells.f, cells.shape, list(inp.terms), start, inp.names, "approach A")
    lam = mu / cells.pi_cells
    zero = (lam <= 0) & (cells.F1 > 0)
    step("approach A: fitting the membership model")
    fit_cells = np.flatnonzero(lam > 0)
    X, columns = rk.cell_design(_cells_codes(fit_cells, cells.shape), cells.shape, inp.membership_terms)
    fit = rk.fit_membership_poisson(
        X, cells.F1[fit_cells], lam[fit_cells], method=inp.method, tol=inp.tol, max_iter=inp.max_iter
    )
    _not_converged(fit, inp, "A", "the Poisson fit of the register counts")
    _warn_boundary(fit, inp, "A")
    p = np.zeros(cells.K)
    p[fit_cells] = fit.p
    xi = dict(zip(_xi_names(columns, inp), map(float, fit.xi)))
    return ApproachFit("A", lam, p, info, _membership_info(fit, inp.method), xi, int(zero.sum()))


def _by_term(terms, inp: RegisterInput) -> str:
    """``age:sex (2 level(s)), region (1 level(s))``: the terms (one per level), counted."""
    by_term: dict = {}
    for t in terms:
        by_term[t] = by_term.get(t, 0) + 1
    return ", ".join(f"{':'.join(inp.names[j] for j in t) or '(intercept)'} ({n} level(s))" for t, n in by_term.items())


def _warn_certain(fit: rk.MembershipFit, columns, reference_terms, inp: RegisterInput) -> None:
    """Approach B: one warning naming the terms whose coefficient is +inf (register members at
    least the weighted sample count: p = 1 in their cells) or whose reference category is at
    p = 1, with the number of levels."""
    terms = [columns[c][0] for c in np.flatnonzero(np.isposinf(fit.xi))]
    terms += sorted(reference_terms[i] for i in fit.certain_reference)
    if not terms:
        return
    warn(
        f"membership_model: approach B: {_by_term(terms, inp)} of the propensity model ha(s) at least as "
        f"many register members as the weighted sample represents ({len(terms)} column(s) in all); the propensity "
        "there is set to 1 (xi = +inf: the register is taken to cover that part of the population, its estimated "
        "count is the register count); merge such categories (a sparse top age band, say) or check the sample "
        "weights for a finite fit"
    )


def approach_b(inp: RegisterInput, cells: RegisterCells) -> ApproachFit:
    """Approach B: propensities of register membership (pseudo-likelihood of the register
    stacked with the weighted sample), inverse-propensity population counts, and the
    pseudo-maximum-likelihood log-linear fit to them. A design column with at least as many
    register members as the weighted sample represents, a category or combination without any
    sample record included, has p = 1 in its cells (F-hat = F^1 there) and a warning names its
    term (:func:`sdckit._core.register.fit_membership_propensity`). Downstream these cells are
    ordinary cells of F-hat: lambda-hat from the log-linear fit, p_k = F^1_k / F-hat_k = 1, so
    phi_k = lambda_k and d_k = 0 (a register unique there is population unique)."""
    step("approach B: fitting the propensity model")
    fit_cells = np.flatnonzero((cells.F1 > 0) | (cells.f > 0))
    codes = _cells_codes(fit_cells, cells.shape)
    X, columns = rk.cell_design(codes, cells.shape, inp.membership_terms)
    R, reference_terms = rk.reference_design(codes, inp.membership_terms)
    fit = rk.fit_membership_propensity(
        X, cells.F1[fit_cells], cells.W[fit_cells], tol=inp.tol, max_iter=inp.max_iter, reference=R
    )
    _not_converged(fit, inp, "B", "the propensity fit")
    _warn_boundary(fit, inp, "B")
    _warn_certain(fit, columns, reference_terms, inp)
    p = np.zeros(cells.K)
    p[fit_cells] = fit.p
    Fhat = np.zeros(cells.K)
    members = cells.F1 > 0
    Fhat[members] = cells.F1[members] / p[members]
    step("approach B: fitting the log-linear model to the weighted register counts")
    lam, info = _fit_lambda(Fhat, cells.shape, list(inp.terms), None, inp.names, "approach B")
    xi = dict(zip(_xi_names(columns, inp), map(float, fit.xi)))
    p_cell = np.where(members, cells.F1 / np.where(members, Fhat, 1.0), 0.0)
    return ApproachFit("B", lam, p_cell, info, _membership_info(fit, "newton"), xi, 0)


# ---------------------------------------------------------------------------------------------
# 4. the measures
#: approach A warns about register uniques in cells with a fitted population count of 0 when
#: they make up more than this share of tau*_1. Each counts 1 there, so the share bounds the
#: part of tau*_1 that these cells over-state; the error is on the safe side (risk too high),
#: so only a large share is worth a warning (n_zero_lambda reports every such cell)
ZERO_LAMBDA_SHARE = 0.2


def _warn_zero_lambda(cells: RegisterCells, fit: ApproachFit, tau1_star: float) -> None:
    """Approach A: a warning when register uniques in cells with lambda-hat = 0 (a sampling zero
    of a fitted margin; there d_k = 0 and the unique counts as population unique) make up more
    than ``ZERO_LAMBDA_SHARE`` of tau*_1. Cells with two register members or more do not enter
    the measures; the count of all such cells is ``n_zero_lambda`` in any case."""
    zero = (fit.lam <= 0) & (cells.F1 == 1)
    n = int(np.count_nonzero(zero))
    if n == 0 or n <= ZERO_LAMBDA_SHARE * tau1_star:
        return
    warn(
        f"model: approach A: {n} register unique(s) are in cells with a fitted population count of 0 (a margin of "
        f"the model is empty in the sample); they count as population unique and make up {n / tau1_star:.0%} of "
        "tau1* (approach A over-estimates there; approach B does not have this problem)"
    )


def measures(cells: RegisterCells, fit: ApproachFit, inp: RegisterInput) -> dict:
    """tau*_1, tau*_2 over register uniques, tau_1, tau_2 over cells unique in both files, and
    the per-record values of the register records."""
    unique = cells.F1 == 1
    both = unique & (cells.f == 1)
    pi = cells.pi_cells
    phi = fit.lam * fit.p
    forms = rk.closed_forms(fit.lam[unique], phi[unique], pi[unique])
    per_cell = {}
    for name in ("p_unique_register", "risk_register", "p_unique_both", "risk_both"):
        v = np.full(cells.K, np.nan)
        v[unique] = getattr(forms, name)
        if name.endswith("_both"):
            v[~both] = np.nan
        per_cell[name] = v
    tau1_star = float(np.sum(forms.p_unique_register))
    if fit.approach == "A":
        _warn_zero_lambda(cells, fit, tau1_star)
    idx = cells.idx
    records = {name: inp.full(v[idx]) for name, v in per_cell.items()}
    records["lam"] = inp.full(fit.lam[idx])
    records["p_member"] = inp.full(fit.p[idx])
    return {
        "tau1_star": tau1_star,
        "tau2_star": float(np.sum(forms.risk_register)),
        "tau1": float(np.nansum(per_cell["p_unique_both"][both])),
        "tau2": float(np.nansum(per_cell["risk_both"][both])),
        "n_register_uniques": int(unique.sum()),
        "n_both_uniques": int(both.sum()),
        "records": records,
    }
