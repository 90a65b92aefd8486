r"""Noise addition to continuous variables (sdcMicro's ``addNoise``): additive, correlated,
Kim's correlated2, the restricted shrinkage, ROMM and noise on outliers only."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import noise as core
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes
from ..results.protection import ProtectionResult
from ._common import Change, Input, common_scale, finish, read_input, resolve_seed

__all__ = ["add_noise"]

METHODS = ("additive", "additive0", "correlated", "correlated2", "restr", "ROMM", "outdect")
#: ROMM multiplies by an n x n orthogonal matrix: O(n^3) time and 8 n^2 bytes (5,000 records:
#: about 10 s and 200 MB, measured)
ROMM_MAX_RECORDS = 5000


@declare(
    "method",
    Param("variables", "columns", role="numeric_keys"),
    Param("method", "choice", "The kind of noise", choices=METHODS),
    Param("noise", "number"),
    Param("delta", "number"),
    Param("perturbation", "number"),
    Param("strata"),
    Param("missing"),
    Param("seed"),
    random=True,
    changes="the values of the continuous variables (noise added)",
    aliases=("noise",),
    heading="Noise addition",
)
def add_noise(
    data,
    variables,
    *,
    method="additive",
    noise=150,
    delta=0.1,
    perturbation=0.001,
    strata=None,
    missing=None,
    seed=None,
    engine=None,
) -> ProtectionResult:
    r"""Add random noise to continuous variables.

    With s_j the standard deviation of variable j (denominator n - 1, missing values left out),
    xbar_j its mean and w = ``noise`` / 100:

    * ``"additive"``: x'_ij = x_ij + e_ij, e_ij ~ N(0, (w s_j)^2), independently per variable
      (the default noise = 150 gives a noise sd of 1.5 s_j);
    * ``"additive0"``: as ``"additive"``, but a zero stays zero;
    * ``"correlated"``: x'_i = x_i + e_i, e_i ~ N_p(0, w Sigma), Sigma the covariance of the
      records observed in every variable (``noise`` scales the covariance, not the sd); needs
      at least two variables;
    * ``"correlated2"`` (Kim 1986): x'_ij = sqrt(1 - delta^2) x_ij + delta e_ij with
      e_ij ~ N((1 - sqrt(1 - delta^2)) / delta xbar_j, s_j^2): means and variances are kept in
      expectation and covariances multiplied by 1 - delta^2;
    * ``"restr"``: the deterministic shrinkage x' = c x + (1 - c) xbar_j with
      c = sqrt((n - 1 - w) / ((n + 1)(1 + w))) for n < 500 and c = sqrt((n - 1) / (n + n w - 1))
      otherwise, n the observed values of the variable (no random term is added: this is the
      linear part of Kim's restricted method, as sdcMicro's ``addNoise`` applies it);
    * ``"ROMM"`` (random orthogonal matrix masking, Ting, Fienberg & Trottini 2008):
      X' = T X, T the Gram-Schmidt orthonormalisation of I_n + p Z, p = ``perturbation`` and
      Z an n x n matrix of standard normal draws. T is orthogonal, so the cross-products X'X
      (and the column norms) are kept exactly; the means are not. O(n^3): at most 5,000
      records (per stratum);
    * ``"outdect"`` (Templ & Meindl 2008): only the outliers, the records above the 0.99
      quantile of any variable or with a robust Mahalanobis distance (MCD with h of about half
      the records) above sqrt(chi^2_{p, 0.975}), receive noise N(0, (1.96 s_j / sqrt(n) w)^2).

    A missing value stays missing.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The numeric variables to perturb.
    method : {"additive", "additive0", "correlated", "correlated2", "restr", "ROMM", "outdect"}
    noise : float >= 0, default 150
        The amount of noise in percent: of the standard deviation for ``"additive"``,
        ``"additive0"`` and ``"outdect"``, of the covariance for ``"correlated"``; w of
        ``"restr"``. Not used by ``"correlated2"`` and ``"ROMM"``.
    delta : float in (0, 1), default 0.1
        The mixing weight of ``"correlated2"``.
    perturbation : float >= 0, default 0.001
        The size p of the perturbation I + p Z of ``"ROMM"`` (0 changes nothing).
    strata : str or list of str, optional
        The method is applied within each stratum separately (its own s_j, Sigma, T, outliers).
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values are left as they are and do not
        enter s_j, Sigma or the quantiles.
    seed : int, optional
        Seed of the random draws (the same seed gives the same result); None draws a fresh
        seed, recorded in ``parameters["seed"]``.
    engine : optional
        The in-memory engine (default); this method needs the records in memory (DuckDB and
        Spark: an error).

    Returns
    -------
    ProtectionResult
        ``data`` with the variables perturbed (an integer column becomes a float column);
        ``n_changed`` the cells whose value changed. ``details``: ``method``; ``noise_sd``, the
        sd of the noise added to each variable (``"restr"``: ``shrinkage``, the factor c;
        ``"ROMM"``: ``n_romm``, the records transformed); ``"outdect"``: ``n_outliers``. With
        ``strata`` each of them is given per stratum.

    Notes
    -----
    A variable (or stratum) with fewer than two observed values is left as it is. ``"ROMM"``
    and ``"correlated"`` use the records observed in every variable: ROMM leaves the other
    records unchanged (T mixes whole records); correlated adds its noise to the observed
    cells of every record. ``"outdect"`` uses only the univariate rule when the MCD cannot be
    computed (too few complete records, or half of them on a hyperplane, e.g. a variable with
    a value shared by half the records); a note says so. sdcMicro computes ``restr``'s n and
    the sqrt(n) of ``outdect`` over all records, missing or not; here over the observed values.
    The random draws are not those of R.

    References
    ----------
    Kim, J. J. (1986), A method for limiting disclosure in microdata based on random noise and
    transformation, Proceedings of the Section on Survey Research Methods, American Statistical
    Association, 303-308.

    Brand, R. (2002), Microdata protection through noise addition, in: Inference Control in
    Statistical Databases, Lecture Notes in Computer Science 2316, Springer, 97-116.

    Ting, D., Fienberg, S. E. & Trottini, M. (2008), Random orthogonal matrix masking
    methodology for microdata release, International Journal of Information and Computer
    Security 2(1), 86-105.

    Templ, M. & Meindl, B. (2008), Robustification of microdata masking methods and the
    comparison with existing methods, Privacy in Statistical Databases, Lecture Notes in
    Computer Science 5262, Springer, 113-126.
    """
    inp = read_input(data, variables, "variables", strata=strata, engine=engine, method="add_noise")
    opts = _options(inp, method, noise, delta, perturbation)
    seed = resolve_seed(seed)
    missing_codes = as_missing_codes(missing)
    names = list(inp.variables)
    raw = inp.table.floats(names)
    X = inp.table.floats(names, missing=list(missing_codes))
    require_finite(names, X)
    groups = stratum_groups(inp)
    if opts["method"] == "ROMM":
        _check_romm_size(X, groups)
    rng = np.random.default_rng(seed)
    out, info, notes = X.copy(), [], []
    scale = common_scale(X)  # values near 1e200: perturbed at a power-of-two scale
    for label, rows in groups:
        block, stats, note = _perturb(X[rows] / scale, opts, rng, names)
        out[rows] = block * scale
        if "noise_sd" in stats:
            stats["noise_sd"] = np.asarray(stats["noise_sd"], dtype=float) * scale
        info.append((label, stats))
        notes += [f"{'the data' if label is None else f'stratum {label}'}: {n}" for n in note]
    table, changes = inp.table, {}
    for j, name in enumerate(names):
        observed = ~np.isnan(X[:, j])
        new = np.where(observed, out[:, j], raw[:, j])
        changes[name] = Change(observed & (new != raw[:, j]))
        table = inp.engine.with_values(table, name, new)
    parameters = {
        "variables": names,
        "method": opts["method"],
        "noise": opts["noise"],
        "delta": opts["delta"],
        "perturbation": opts["perturbation"],
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(missing_codes) or None,
        "seed": seed,
    }
    return finish(add_noise, parameters, inp, table, changes, _details(opts["method"], names, info), tuple(notes))


# ----------------------------------------------------------------------------------------------
# helpers shared with rank swapping
# ----------------------------------------------------------------------------------------------


def require_numeric(inp: Input) -> None:
    """Every variable must be numeric (integers or floats)."""
    bad = [v for v in inp.variables if not inp.table.is_numeric(v)]
    if bad:
        raise SdcError(f"variables: {', '.join(bad)} not numeric; expected numeric (continuous) variables")


def require_finite(names: list[str], X: np.ndarray) -> None:
    """No infinite value (a missing value is fine)."""
    bad = [v for j, v in enumerate(names) if np.isinf(X[:, j]).any()]
    if bad:
        raise SdcError(f"variables: {', '.join(bad)} hold infinite values; expected finite numbers or missing values")


def stratum_groups(inp: Input) -> list[tuple[str | None, np.ndarray]]:
    """(stratum label, its rows) for every stratum in stratum order; one group (None, all rows)
    without strata."""
    n = int(inp.table.n)
    if inp.strata_codes is None:
        return [(None, np.arange(n))]
    order = np.argsort(inp.strata_codes, kind="stable")
    bounds = np.searchsorted(inp.strata_codes[order], np.arange(len(inp.strata_labels) + 1))
    return [(label, order[bounds[s] : bounds[s + 1]]) for s, label in enumerate(inp.strata_labels)]


def per_variable(names: list[str], info: list, key: str, convert=float) -> dict:
    """{variable: value} without strata, {variable: {stratum: value}} with strata, from the
    (label, {key: array per variable}) of every group; NaN becomes None."""

    def plain(x):
        x = convert(x)
        return None if isinstance(x, float) and math.isnan(x) else x

    if len(info) == 1 and info[0][0] is None:
        values = info[0][1][key]
        return {v: plain(values[j]) for j, v in enumerate(names)}
    return {v: {label: plain(stats[key][j]) for label, stats in info} for j, v in enumerate(names)}


# ----------------------------------------------------------------------------------------------
# the work
# ----------------------------------------------------------------------------------------------
def _options(inp: Input, method, noise, delta, perturbation) -> dict:
    # method, noise, delta and perturbation: checked by the declaration
    opts: dict[str, Any] = {"method": method, "noise": float(noise), "delta": float(delta)}
    opts["perturbation"] = float(perturbation)
    require_numeric(inp)
    if method == "correlated" and len(inp.variables) < 2:
        raise SdcError(
            "variables: one variable for correlated noise; expected at least two (use method='additive' for one)"
        )
    return opts


def _check_romm_size(X: np.ndarray, groups: list) -> None:
    complete = ~np.isnan(X).any(axis=1)
    for label, rows in groups:
        m = int(np.count_nonzero(complete[rows]))
        if m > ROMM_MAX_RECORDS:
            where = "" if label is None else " in one stratum"
            raise SdcError(
                f"method: ROMM on {m:,} records{where}; ROMM builds an n x n orthogonal matrix (n^3 time, "
                f"n^2 memory), expected at most {ROMM_MAX_RECORDS:,} complete records per stratum "
                "(use strata or another method)"
            )


def _perturb(X: np.ndarray, opts: dict, rng: np.random.Generator, names: list[str]) -> tuple[np.ndarray, dict, list]:
    """One group (the data or a stratum): the new block, its aggregates per variable, notes."""
    method, noise, p = opts["method"], opts["noise"], X.shape[1]
    notes = []
    if method in ("additive", "additive0", "correlated2", "outdect"):
        few = [names[j] for j in range(p) if np.count_nonzero(~np.isnan(X[:, j])) < 2]
        notes = [f"{v}: fewer than two observed values; left unchanged" for v in few]
    if method in ("additive", "additive0"):
        out, sds = core.additive(X, noise, rng, keep_zeros=method == "additive0")
        return out, {"noise_sd": sds}, notes
    if method == "correlated":
        out, sds = core.correlated(X, noise, rng)
        if sds is None:
            return out, {"noise_sd": np.full(p, math.nan)}, ["fewer than two complete records; left unchanged"]
        return out, {"noise_sd": sds}, notes
    if method == "correlated2":
        out, sds = core.correlated2(X, opts["delta"], rng)
        return out, {"noise_sd": sds}, notes
    if method == "restr":
        out, cs = core.restr(X, noise)
        return out, {"shrinkage": cs}, notes
    if method == "ROMM":
        return _romm(X, opts["perturbation"], rng)
    mask, robust = core.outlier_mask(X, int(rng.integers(0, 2**63 - 1)))
    out, sds = core.outdect(X, noise, rng, mask)
    if not robust:
        notes.append(
            "the robust distance could not be computed (too few complete records, or half of them on a "
            "hyperplane); outliers by the 0.99 quantiles only"
        )
    return out, {"noise_sd": sds, "n_outliers": np.full(p, np.count_nonzero(mask))}, notes


def _romm(X: np.ndarray, perturbation: float, rng: np.random.Generator) -> tuple[np.ndarray, dict, list]:
    complete = np.flatnonzero(~np.isnan(X).any(axis=1))
    m = complete.size
    out = X.copy()
    Z = rng.standard_normal((m, m))
    out[complete] = core.romm(X[complete], Z, perturbation)
    notes = [f"{X.shape[0] - m} record(s) with a missing value left unchanged"] if m < X.shape[0] else []
    return out, {"n_romm": np.full(X.shape[1], m)}, notes


def _details(method: str, names: list[str], info: list) -> dict:
    out: dict = {"method": method}
    keys = info[0][1].keys() if info else ()
    for key in keys:
        if key in ("n_outliers", "n_romm"):
            values = per_variable(names, info, key, int)
            out[key] = values[names[0]]  # the same for every variable
        else:
            out[key] = per_variable(names, info, key)
    return out
