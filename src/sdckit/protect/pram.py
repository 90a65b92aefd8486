r"""PRAM: post-randomisation of categorical variables with an invariant transition matrix
(Gouweleeuw, Kooiman, Willenborg & de Wolf 1998)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core.pram import apply_matrix, blend, draw_diagonal, invariant_of_base, row_sum_errors
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list, check_rule, raise_problems
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input, resolve_seed

__all__ = ["pram"]

_ROW_SUM_TOL = 1e-9
#: a variable with more categories is most likely continuous (each L x L matrix is also kept,
#: as lists, in the result)
_MAX_CATEGORIES = 1000


@dataclass(frozen=True)
class _Variable:
    """One variable to PRAM: codes in the label space of every value (missing: -1), which
    records take part (not missing), its labels, and its options."""

    name: str
    codes: np.ndarray
    active: np.ndarray
    labels: object
    values: list
    pd: float
    strength: float
    user: tuple | None  # (matrix, code of each matrix row/column) of a user matrix


@declare(
    "method",
    Param("variables", "columns"),
    Param("pd", "number", per_variable=True),
    Param("strength", "number", per_variable=True),
    Param("matrix", "any"),
    Param("strata"),
    Param("missing"),
    Param("seed"),
    random=True,
    changes="the categories of the variables (drawn from a transition matrix)",
    heading="PRAM (post-randomisation)",
)
def pram(
    data,
    variables,
    *,
    pd=0.8,
    strength=0.5,
    matrix=None,
    strata=None,
    missing=None,
    seed=None,
    engine=None,
) -> ProtectionResult:
    r"""Post-randomise categorical variables with an invariant transition matrix (PRAM).

    Per variable (and per stratum with ``strata``), with L the number of categories that occur
    there and p their frequencies:

    1. a base matrix P with diagonal entries p_ll drawn independently from Uniform(pd, 1) and
       off-diagonal entries (1 - p_ll) / (L - 1) in row l;
    2. the backward matrix Q_{kj} = P_{jk} p_j / \sum_l p_l P_{lk};
    3. the invariant matrix R = P Q, for which p' R = p';
    4. the applied matrix R_s = strength R + (1 - strength) I (strength = 0 changes nothing);
    5. every record with category l gets a new category drawn from row l of R_s.

    The expected category frequencies are kept (p' R_s = p'); the realised ones vary around
    them. A missing value stays missing.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The categorical variables to post-randomise.
    pd : float in [0, 1] or dict variable -> float, default 0.8
        Smallest diagonal entry of the base matrix P (unlisted variables: 0.8).
    strength : float in [0, 1] or dict variable -> float, default 0.5
        Weight of the invariant matrix R against the identity (sdcMicro's ``alpha``; unlisted
        variables: 0.5).
    matrix : dict variable -> transition matrix, optional
        A matrix to apply as it is instead of the generated one (``pd`` and ``strength`` do
        not apply to that variable): a pandas DataFrame (index and columns = categories), a
        dict of dicts ``{from: {to: probability}}`` or a pair ``(square matrix, categories)``.
        Rows sum to 1 (within 1e-9); its categories must include every category of the data
        and be categories of the variable (an ordered column's declared categories count).
        The same matrix is used in every stratum.
    strata : str or list of str, optional
        Matrices are built and applied within each stratum (a missing stratum value is a
        stratum of its own).
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values are neither changed nor a
        category.
    seed : int, optional
        Seed of the random draws (the same seed gives the same result); None draws a fresh
        seed, recorded in ``parameters["seed"]``.
    engine : optional
        The in-memory engine (default); this method needs the records in memory (DuckDB and
        Spark: an error).

    Returns
    -------
    ProtectionResult
        ``data`` with the variables post-randomised; ``n_changed`` the cells whose category
        changed. ``details["matrices"]`` lists every applied matrix (variable, stratum, its
        categories and the matrix as lists, whether it was generated); without strata
        ``details["pram"]`` holds them as ``{variable: {from: {to: probability}}}`` (the form
        ``information_loss(pram=...)`` accepts, for EBIL, and ``loglinear_risk(pram=...)`` for
        the exact misclassification risk) and ``details["pram_diagonal"]`` the probability of
        keeping each category that occurs in the published data (the form
        ``individual_risk(pram=...)`` and ``loglinear_risk(pram=...)`` accept). Within strata
        these two are None and ``details["pram_by_stratum"]`` and
        ``details["pram_diagonal_by_stratum"]`` hold, per variable, ``{"strata": [columns],
        "matrices": {stratum label: ...}}``, which the same measures take: each record uses
        its stratum's matrix.

    Notes
    -----
    L counts the categories that occur in the (stratum) data, so a category absent from a
    stratum is never produced there (a structural zero stays a zero); a stratum with a single
    category is left unchanged (said in ``notes``). sdcMicro's ``pram`` builds one matrix per
    variable over all factor levels (also unused ones) even with strata, uses a user matrix
    as it is (its ``alpha`` is ignored then), and scales p by the sum of the category codes
    (Q does not depend on that scale). The random draws are not those of R.

    References
    ----------
    Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. & de Wolf, P.-P. (1998), Post
    randomisation for statistical disclosure control: theory and implementation, Journal of
    Official Statistics 14(4), 463-478.
    """
    inp = read_input(data, variables, "variables", strata=strata, engine=engine, method="pram")
    names = list(inp.variables)
    pds = _per_variable(pd, "pd", names, 0.8)
    strengths = _per_variable(strength, "strength", names, 0.5)
    specs = _matrix_specs(matrix, names)
    seed = resolve_seed(seed)
    missing_codes = as_missing_codes(missing)
    rng = np.random.default_rng(seed)
    table, changes, entries, notes, published = inp.table, {}, [], [], {}
    for name in names:
        var = _read_variable(inp, name, missing_codes, pds[name], strengths[name], specs.get(name))
        new, var_entries, single = _randomise(rng, var, inp)
        entries += var_entries
        published[name] = set(np.unique(new[var.active]).tolist())
        if single:  # how many strata, not which (a stratum's label can identify)
            notes.append(f"{name}: a single category in {_strata_count(single)}; left unchanged there")
        table = inp.engine.with_codes(table, name, new, var.labels, categories=inp.table.categories(name))
        changes[name] = Change(new != var.codes, np.where(var.active, var.codes, -1), var.labels)
    parameters = {
        "variables": names,
        "pd": _plain_option(pd),
        "strength": _plain_option(strength),
        "matrix": {name: _as_dict(*entry) for name, entry in _user_entries(entries).items()} or None,
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(missing_codes) or None,
        "seed": seed,
    }
    details = _details(entries, inp, published, () if strata is None else tuple(as_name_list(strata, "strata")))
    return finish(pram, parameters, inp, table, changes, details, tuple(notes))


# ----------------------------------------------------------------------------------------------
# options
# ----------------------------------------------------------------------------------------------


def _per_variable(value, param: str, names: list[str], default: float) -> dict[str, float]:
    """A number in [0, 1] for all variables, or a dict variable -> number (others: default)."""
    if isinstance(value, dict):
        unknown = [str(k) for k in value if k not in names]
        if unknown:
            raise SdcError(f"{param}: {', '.join(unknown)} not among variables; expected some of {', '.join(names)}")
        out = dict.fromkeys(names, default)
        out.update({k: check_rule(param, v, f"{param}[{k!r}]") for k, v in value.items()})
        return out
    x = check_rule(param, value)
    return dict.fromkeys(names, x)


def _plain_option(value):
    return {str(k): float(v) for k, v in value.items()} if isinstance(value, dict) else float(value)


def _matrix_specs(matrix, names: list[str]) -> dict:
    if matrix is None:
        return {}
    if not isinstance(matrix, dict):
        raise SdcError(f"matrix: got {type(matrix).__name__}; expected a dict variable -> transition matrix")
    unknown = [str(k) for k in matrix if k not in names]
    if unknown:
        raise SdcError(f"matrix: {', '.join(unknown)} not among variables; expected some of {', '.join(names)}")
    return dict(matrix)


def _labelled_matrix(name: str, spec) -> tuple[np.ndarray, list]:
    """(M, categories) of a user matrix, checked: square, probabilities, rows summing to 1."""
    param = f"matrix[{name!r}]"
    if type(spec).__module__.split(".")[0] == "pandas" and hasattr(spec, "to_numpy"):
        rows, cols = list(spec.index), list(spec.columns)
        if rows != cols:
            raise SdcError(f"{param}: the row and column labels differ; expected the same categories in the same order")
        mat, cats = spec.to_numpy(), rows
    elif isinstance(spec, dict):
        if not all(isinstance(r, dict) for r in spec.values()):
            raise SdcError(f"{param}: a dict matrix needs dict rows; expected {{from: {{to: probability}}}}")
        cats = list(spec) + [c for r in spec.values() for c in r if c not in spec]
        cats = list(dict.fromkeys(cats))
        mat = [[spec.get(a, {}).get(b, 0.0) for b in cats] for a in cats]
    elif isinstance(spec, tuple) and len(spec) == 2:
        mat, cats = spec[0], list(spec[1])
    else:
        raise SdcError(
            f"{param}: got {type(spec).__name__}; expected a labelled matrix: a DataFrame, "
            "{from: {to: probability}} or (matrix, categories)"
        )
    try:
        M = np.asarray(mat, dtype=float)
    except (TypeError, ValueError):
        raise SdcError(f"{param}: could not read the matrix; expected numbers") from None
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] != len(cats):
        raise SdcError(f"{param}: shape {M.shape} for {len(cats)} categories; expected a square matrix, one row each")
    if len({str(c) for c in cats}) != len(cats):
        raise SdcError(f"{param}: a category is listed twice; expected distinct categories")
    if not np.all(np.isfinite(M)) or np.any(M < 0):
        raise SdcError(f"{param}: negative or non-finite entries; expected probabilities")
    bad = np.flatnonzero(row_sum_errors(M) > _ROW_SUM_TOL)
    if bad.size:
        raise SdcError(
            f"{param}: {bad.size} row(s) do not sum to 1; expected every row to sum to 1 (within {_ROW_SUM_TOL:g})"
        )
    return M, cats


def _match_categories(name: str, cats: list, values: list, usable: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The code of each matrix category; every category that occurs must be in the matrix and
    every matrix category must be a category of the variable."""
    lookup: dict = {}
    for c, v in enumerate(values):
        if usable[c]:
            lookup.setdefault(v, c)
            lookup.setdefault(str(v), c)
    codes = np.array([lookup.get(c, lookup.get(str(c), -1)) for c in cats], dtype=np.int64)
    problems = []
    unknown = [str(c) for c, k in zip(cats, codes) if k < 0]
    if unknown:
        problems.append(f"matrix[{name!r}]: {len(unknown)} categor(y/ies) are not categories of {name}")
    uncovered = sorted(set(np.flatnonzero(present).tolist()) - set(codes.tolist()))
    if uncovered:
        problems.append(
            f"matrix[{name!r}]: {len(uncovered)} categor(y/ies) of the data are not in "
            "the matrix; expected a row and a column for every category"
        )
    raise_problems(problems)
    return codes


# ----------------------------------------------------------------------------------------------
# the work
# ----------------------------------------------------------------------------------------------
def _read_variable(inp, name: str, missing_codes: tuple, pd: float, strength: float, spec) -> _Variable:
    """Codes over every value of the column (missing-value codes keep theirs but do not take
    part), the labels, and the checked user matrix."""
    eng = inp.engine
    codes, labels = eng.encode_column(inp.table, name)
    active = codes >= 0
    if missing_codes:
        active &= eng.encode_column(inp.table, name, list(missing_codes))[0] >= 0
    n_categories = int(np.count_nonzero(np.bincount(codes[active], minlength=len(labels))))
    if n_categories > _MAX_CATEGORIES:
        raise SdcError(
            f"variables: {name} has {n_categories:,} categories; PRAM builds an L x L matrix, expected a "
            f"categorical variable with at most {_MAX_CATEGORIES:,} categories (recode it first)"
        )
    values = eng.label_values(labels)
    user = None
    if spec is not None:
        M, cats = _labelled_matrix(name, spec)
        usable = np.ones(len(values), dtype=bool)
        usable[np.unique(codes[~active & (codes >= 0)])] = False  # missing-value codes are no category
        present = np.bincount(codes[active], minlength=len(values)) > 0
        user = (M, _match_categories(name, cats, values, usable, present))
    return _Variable(name, codes, active, labels, values, pd, strength, user)


def _randomise(rng, var: _Variable, inp) -> tuple[np.ndarray, list, list]:
    """New codes of one variable, the applied matrices (variable, stratum, category codes, R_s,
    generated) and the strata left unchanged for having a single category."""
    new = var.codes.astype(np.int64, copy=True)
    if var.user is not None:
        M, mcodes = var.user
        pos = np.full(len(var.values), -1, dtype=np.int64)
        pos[mcodes] = np.arange(mcodes.size)
        local = np.where(var.active, pos[np.maximum(var.codes, 0)], -1)
        out = apply_matrix(rng, local, M)
        new[var.active] = mcodes[out[var.active]]
        return new, [(var, None, mcodes, M, False)], []
    strata = inp.strata_codes
    groups = [(None, np.flatnonzero(var.active))] if strata is None else _stratum_rows(strata, var.active, inp)
    entries, single = [], []
    for label, rows in groups:
        present, local = np.unique(var.codes[rows], return_inverse=True)
        L = present.size
        if L == 0:
            continue
        if L == 1:
            single.append(label)
            entries.append((var, label, present, np.ones((1, 1)), True))
            continue
        counts = np.bincount(local.reshape(-1), minlength=L).astype(float)
        Rs = blend(invariant_of_base(draw_diagonal(rng, L, var.pd), counts), var.strength)
        new[rows] = present[apply_matrix(rng, local.reshape(-1), Rs)]
        entries.append((var, label, present, Rs, True))
    return new, entries, single


def _stratum_rows(strata: np.ndarray, active: np.ndarray, inp) -> list:
    """(stratum label, rows of the stratum that take part) for every stratum, in stratum order."""
    rows = np.flatnonzero(active)
    order = np.argsort(strata[rows], kind="stable")
    bounds = np.searchsorted(strata[rows][order], np.arange(len(inp.strata_labels) + 1))
    return [(label, rows[order[bounds[s] : bounds[s + 1]]]) for s, label in enumerate(inp.strata_labels)]


# ----------------------------------------------------------------------------------------------
# the record of the applied matrices
# ----------------------------------------------------------------------------------------------
def _as_dict(values: list, M: np.ndarray) -> dict:
    """{from: {to: probability}} with the category labels as keys."""
    return {a: {b: float(M[i, j]) for j, b in enumerate(values)} for i, a in enumerate(values)}


def _user_entries(entries) -> dict:
    return {var.name: ([var.values[c] for c in codes], M) for var, _, codes, M, generated in entries if not generated}


def _details(entries, inp, published: dict, strata: tuple = ()) -> dict:
    """Every applied matrix as lists, and the forms ``information_loss``, ``individual_risk``
    and ``loglinear_risk`` accept as ``pram=`` (the kept probabilities of the categories that
    occur in the published data: the risk looks up only those); within strata the per-stratum
    forms ``{"strata": columns, "matrices": {stratum label: ...}}`` under ``*_by_stratum``
    (``pram`` and ``pram_diagonal`` stay None there, as before)."""
    matrices = [
        {
            "variable": var.name,
            "stratum": label,
            "categories": [var.values[c] for c in codes],
            "matrix": np.asarray(M, dtype=float).tolist(),
            "generated": generated,
        }
        for var, label, codes, M, generated in entries
    ]
    full: dict = {}
    diag: dict = {}
    for var, label, codes, M, _ in entries:
        f_ = _as_dict([var.values[c] for c in codes], M)
        d_ = {var.values[c]: float(M[i, i]) for i, c in enumerate(codes) if c in published[var.name]}
        if label is None:
            full[var.name], diag[var.name] = f_, d_
            continue
        for store, value in ((full, f_), (diag, d_)):
            store.setdefault(var.name, {"strata": list(strata), "matrices": {}})["matrices"][label] = value
    plain = all(m["stratum"] is None for m in matrices)
    return {
        "matrices": matrices,
        "pram": full if plain else None,
        "pram_diagonal": diag if plain else None,
        "pram_by_stratum": None if plain else full,
        "pram_diagonal_by_stratum": None if plain else diag,
    }


def _strata_count(strata: list) -> str:
    """``"1 stratum"`` / ``"3 strata"``; ``"the data"`` without strata (the label None)."""
    if list(strata) == [None]:
        return "the data"
    return f"{len(strata)} {'stratum' if len(strata) == 1 else 'strata'}"
