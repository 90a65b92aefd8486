r"""Rounding of continuous variables to a base: every value replaced by a multiple of the
base b, deterministically (to the nearest multiple), at random (unbiased), or at random with
the column total kept within one base (controlled rounding). The handbook's examples round
turnover or income to the nearest 1,000 before release.
"""

from __future__ import annotations

import numpy as np

from .._core import rounding as core
from .._declare import Param, declare
from .._validation import as_missing_codes
from ._common import Change, finish, read_input, resolve_seed
from .noise import require_finite, require_numeric, stratum_groups

__all__ = ["rounding"]

_METHODS = ("nearest", "random", "controlled")


@declare(
    "method",
    Param("variables", "columns", role="numeric_keys"),
    Param("base", "number"),
    Param("method", "choice", choices=_METHODS),
    Param("strata"),
    Param("missing"),
    Param("seed"),
    changes="the values of the continuous variables (replaced by multiples of the base)",
    aliases=("round",),
    random=True,
    heading="Rounding",
)
def rounding(
    data,
    variables,
    *,
    base,
    method: str = "nearest",
    strata=None,
    missing=None,
    seed=None,
    engine=None,
):
    r"""Round continuous variables to a multiple of ``base``.

    Each value is written :math:`x = b\,(l + f)` with :math:`l = \lfloor x / b \rfloor` and
    :math:`f \in [0, 1)`, and replaced by :math:`x' = b\,l` (down) or :math:`b\,(l + 1)`
    (up); a multiple of b stays as it is, so :math:`|x' - x| < b` (at most b/2 for
    ``"nearest"``).

    * ``"nearest"``: up when f >= 1/2 (conventional rounding, halves up); deterministic.
    * ``"random"``: up with probability f, independently for each value (unbiased random
      rounding: :math:`E[x'] = x`); the column total may drift by several bases.
    * ``"controlled"``: up with probability f too, but the values that go up are drawn
      together by systematic sampling with probabilities :math:`f_i` in a random order, so that
      exactly :math:`\lfloor S \rfloor` or :math:`\lceil S \rceil` of them go up,
      :math:`S = \sum_i f_i`: the rounded total of each stratum (or of the file) differs
      from the true total by less than one base, and every value is still unbiased.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The numeric variables to round (each on its own).
    base : float > 0
        The rounding base b (1000: to thousands; 0.5: to halves).
    method : {"nearest", "random", "controlled"}, default "nearest"
        How each value is rounded: to the nearest multiple, at random, or at random with the
        total kept within one base.
    strata : str or list of str, optional
        ``"controlled"``: the total is kept within one base in each stratum (a missing stratum
        value is a stratum of its own). The other methods round each value on its own.
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values are left as they are.
    seed : int, optional
        Seed of the random draws of ``"random"`` and ``"controlled"`` (the same seed gives the
        same result); None draws a fresh seed, recorded in ``parameters["seed"]``.
    engine : optional
        The in-memory engine (default); DuckDB and Spark are refused.

    Returns
    -------
    ProtectionResult
        ``data`` with the variables rounded (an integer column stays integer when every new
        value is whole); ``n_changed`` the cells whose value changed. ``details``: ``base``,
        ``method`` and per variable ``total_change`` (rounded total minus true total) and
        ``max_abs_change`` (the largest change of one value, below ``base``).

    Raises
    ------
    SdcError
        A non-numeric or infinite variable, ``base`` <= 0, an unknown method.

    References
    ----------
    Hundepool, Domingo-Ferrer, Franconi, Giessing, Schulte Nordholt, Spicer & de Wolf (2012),
    Statistical Disclosure Control, Wiley, sections 3.4 (rounding) and 5.3 (random and
    controlled rounding); Madow (1949), On the theory of systematic sampling II, Annals of
    Mathematical Statistics 20.
    """
    inp = read_input(data, variables, "variables", strata=strata, engine=engine, method="rounding")
    b = float(base)  # base and method: checked by the declaration
    require_numeric(inp)
    seed = resolve_seed(seed)
    codes = as_missing_codes(missing)
    names = list(inp.variables)
    raw = inp.table.floats(names)
    X = inp.table.floats(names, missing=list(codes))
    require_finite(names, X)
    rng = np.random.default_rng(seed)
    groups = [rows for _, rows in stratum_groups(inp)]
    table, changes, total, largest = inp.table, {}, {}, {}
    for j, name in enumerate(names):
        x = X[:, j]
        new = _rounded(x, b, method, groups, rng)
        observed = ~np.isnan(x)
        out = np.where(observed, new, raw[:, j])
        changes[name] = Change(observed & (out != raw[:, j]))
        table = inp.engine.with_values(table, name, out)
        diff = new[observed] - x[observed]
        total[name] = float(diff.sum())
        largest[name] = float(np.abs(diff).max()) if diff.size else 0.0
    parameters = {
        "variables": names,
        "base": b,
        "method": method,
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(codes) or None,
        "seed": seed,
    }
    details = {"base": b, "method": method, "total_change": total, "max_abs_change": largest}
    return finish(rounding, parameters, inp, table, changes, details)


def _rounded(x: np.ndarray, base: float, method: str, groups, rng) -> np.ndarray:
    if method == "nearest":
        return core.round_nearest(x, base)
    if method == "random":
        return core.round_random(x, base, rng)
    return core.round_controlled(x, base, groups, rng)
