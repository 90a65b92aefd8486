"""The published PRAM matrices as keep probabilities per key category (``pram=`` of the risk
measures).

A risk measure of a PRAM-protected file needs, for each PRAMed key variable v and each
released category c, the probability P^(v)[c, c] that PRAM kept c (Shlomo & Skinner 2010).
This module reads it from the forms the PRAM step publishes: its ``details["pram_diagonal"]``
(a number or ``{category: probability}`` per variable) or its ``details["pram"]``
(``{from: {to: probability}}``), a ``(square matrix, categories)`` pair or a labelled pandas
DataFrame (index = original categories, columns = new ones).

PRAM run within strata publishes one matrix per stratum: ``{"strata": [columns], "matrices":
{stratum label: any of the forms above}}`` per variable (the stratum label of several columns
joins their values with "-"; a missing value is "NA"). Each record then uses the matrix of its
stratum (:func:`keep_per_record`, :func:`matrices_per_record`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._errors import SdcError
from .._validation import check_choice, check_fraction, raise_problems

__all__ = [
    "is_stratified",
    "keep_by_code",
    "keep_per_record",
    "lacking_categories",
    "matrix_by_code",
    "matrices_per_record",
    "strata_reader",
]

#: the keys of a per-stratum form
_STRATIFIED = {"strata", "matrices"}

#: row sums of a transition matrix may differ from 1 by this much (rounding of a published matrix)
_ROW_SUM_TOLERANCE = 1e-6


def keep_by_code(pram, names, labels) -> dict[int, np.ndarray]:
    """Per PRAMed key (its column index), the keep probability of each category code.

    Parameters
    ----------
    pram : mapping key variable -> diagonal or transition matrix (see the module)
    names : sequence of str
        The key variables.
    labels : sequence of list
        ``labels[j][c]``: the label of code c of key j.

    Returns
    -------
    dict int -> ndarray (L_j,)
        NaN for a category the diagonal does not give (the caller decides whether such a
        category occurs).
    """
    if not isinstance(pram, Mapping):
        raise SdcError(
            f"pram: got a {type(pram).__name__}; expected a dict key variable -> diagonal or transition matrix"
        )
    names = list(names)
    out = {}
    for var, spec in pram.items():
        j = names.index(check_choice(var, "pram", names))
        diag = _diagonal(var, spec)
        if isinstance(diag, float):
            out[j] = np.full(len(labels[j]), diag)
            continue
        lookup = dict(diag)
        lookup.update({str(k): v for k, v in diag.items() if str(k) not in lookup})
        out[j] = np.array([lookup.get(lab, lookup.get(str(lab), np.nan)) for lab in labels[j]], dtype=float)
    return out


def lacking_categories(keep: dict[int, np.ndarray], codes: np.ndarray, names) -> list[str]:
    """One problem per PRAMed key some of whose categories that occur in ``codes`` (records x
    keys, -1 = missing) have no keep probability. The message counts them: a category label
    is a record value."""
    problems = []
    for j, diag in keep.items():
        c = codes[:, j]
        n_lacking = int(np.count_nonzero(np.isnan(diag[np.unique(c[c >= 0])])))
        if n_lacking:
            what = "category of the data has" if n_lacking == 1 else "categories of the data have"
            problems.append(
                f"pram: {names[j]}: {n_lacking} {what} no keep probability; expected one for every category "
                "of the released data"
            )
    return problems


def is_stratified(spec) -> bool:
    """Whether ``spec`` is the per-stratum form ``{"strata": [...], "matrices": {...}}``."""
    return isinstance(spec, Mapping) and set(map(str, spec)) == _STRATIFIED


def _stratified_parts(var: str, spec) -> tuple[list, dict]:
    """(stratum columns, {stratum label: form}) of a per-stratum form."""
    cols = spec["strata"]
    cols = [cols] if isinstance(cols, str) else list(cols)
    mats = spec["matrices"]
    if not cols or not all(isinstance(c, str) for c in cols) or not isinstance(mats, Mapping):
        raise SdcError(
            f"pram: {var}: a per-stratum form needs 'strata' (column names) and 'matrices' (stratum label -> "
            "matrix); expected the form pram(..., strata=...) publishes"
        )
    return cols, {str(k): v for k, v in mats.items()}


def _stratum_ids(var: str, spec, strata_of):
    """Stratum number of every row, the stratum labels and the form of each stratum (None
    where a stratum has no matrix)."""
    if strata_of is None:
        raise SdcError(
            f"pram: {var}: matrices per stratum need the records' strata, which this engine does not hold; "
            "expected the in-memory engine"
        )
    cols, mats = _stratified_parts(var, spec)
    ids, labels = strata_of(cols)
    return np.asarray(ids, dtype=np.int64), [mats.get(str(lab)) for lab in labels]


def _diagonal_array(var: str, spec, labels) -> np.ndarray:
    """Keep probability of every code of one key (NaN where the form has none)."""
    diag = _diagonal(var, spec)
    if isinstance(diag, float):
        return np.full(len(labels), diag)
    lookup = dict(diag)
    lookup.update({str(k): v for k, v in diag.items() if str(k) not in lookup})
    return np.array([lookup.get(lab, lookup.get(str(lab), np.nan)) for lab in labels], dtype=float)


def keep_per_record(pram, names, labels, codes: np.ndarray, strata_of=None) -> np.ndarray:
    """M_kk of every row of ``codes``: the product over PRAMed keys of the probability that
    PRAM kept the row's released category, from its stratum's matrix for a per-stratum form.

    Parameters
    ----------
    pram : mapping key variable -> any accepted form (see the module)
    names, labels : as in :func:`keep_by_code`
    codes : ndarray (n, m) int, -1 = missing (contributes 1)
    strata_of : callable, optional
        ``strata_of(columns) -> (stratum number of every row of codes, stratum labels)``;
        needed for a per-stratum form.

    Raises
    ------
    SdcError
        When a category that occurs has no keep probability, or a stratum with records has no
        matrix (counts only: labels are record values).
    """
    if not isinstance(pram, Mapping):
        raise SdcError(
            f"pram: got a {type(pram).__name__}; expected a dict key variable -> diagonal or transition matrix"
        )
    names = list(names)
    out = np.ones(codes.shape[0])
    problems = []
    for var, spec in pram.items():
        j = names.index(check_choice(var, "pram", names))
        c = codes[:, j]
        seen = c >= 0
        n_none = 0
        if is_stratified(spec):
            ids, forms = _stratum_ids(var, spec, strata_of)
            table = np.array(
                [np.full(len(labels[j]), np.nan) if f is None else _diagonal_array(var, f, labels[j]) for f in forms]
            ).reshape(len(forms), len(labels[j]))
            n_none = len({int(s) for s in ids[seen] if forms[s] is None})
            if n_none:
                problems.append(
                    f"pram: {var}: {n_none} stratum(s) of the data have no matrix; expected one for every stratum"
                )
            vals = np.where(seen, table[ids, np.maximum(c, 0)], 1.0)
        else:
            vals = np.where(seen, _diagonal_array(var, spec, labels[j])[np.maximum(c, 0)], 1.0)
        lacking = np.isnan(vals)
        if lacking.any() and not n_none:  # categories lacking in the strata that have a matrix
            n_lacking = np.unique(c[lacking]).size
            what = "category of the data has" if n_lacking == 1 else "categories of the data have"
            problems.append(
                f"pram: {var}: {n_lacking} {what} no keep probability; expected one for every category "
                "of the released data"
            )
        out *= np.where(lacking, 1.0, vals)
    raise_problems(problems)
    return out


def matrix_by_code(var: str, spec, labels) -> np.ndarray | None:
    """The transition matrix of one key over its codes (``P[j, k]`` = P(released k | original
    j), rows and columns in the order of ``labels``), or None for a form that gives only the
    diagonal. A category of the matrix that is not among ``labels`` (PRAM removed it from the
    released data) is dropped with its row; a label the matrix does not list is never changed."""
    read = _read_matrix(var, spec)
    if read is None:
        return None
    P, rows, cols = read
    L = len(labels)
    out = np.eye(L)
    pos: dict = {}
    for i, lab in enumerate(labels):
        pos.setdefault(lab, i)
        pos.setdefault(str(lab), i)
    ri = [pos.get(r, pos.get(str(r), -1)) for r in rows]
    ci = np.array([pos.get(c, pos.get(str(c), -1)) for c in cols])
    for a, i in enumerate(ri):
        if i < 0:
            continue
        out[i] = 0.0
        keep = ci >= 0
        out[i, ci[keep]] = P[a, keep]
    return out


def matrices_per_record(pram, names, labels, n: int, strata_of=None):
    """Per PRAMed key, the matrices over its codes and each row's matrix number:
    ``{column index: (list of matrices, matrix number per row)}``; None when some key is given
    by its diagonal only."""
    names = list(names)
    out = {}
    for var, spec in pram.items():
        j = names.index(check_choice(var, "pram", names))
        if is_stratified(spec):
            ids, forms = _stratum_ids(var, spec, strata_of)
            mats = [np.eye(len(labels[j])) if f is None else matrix_by_code(var, f, labels[j]) for f in forms]
            if any(m is None for m in mats):
                return None
            out[j] = (mats, ids)
        else:
            m = matrix_by_code(var, spec, labels[j])
            if m is None:
                return None
            out[j] = ([m], np.zeros(n, dtype=np.int64))
    return out


def _read_matrix(var: str, spec):
    """(P, row categories, column categories) of a matrix form; None for a diagonal form."""
    if hasattr(spec, "index") and hasattr(spec, "columns") and hasattr(spec, "to_numpy"):
        rows, cols = list(spec.index), list(spec.columns)
        return _probability_matrix(var, spec.to_numpy(), rows, cols), rows, cols
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and not isinstance(spec[1], (int, float)):
        cats = list(spec[1])
        return _probability_matrix(var, spec[0], cats, cats), cats, cats
    if isinstance(spec, Mapping) and spec and all(isinstance(v, Mapping) for v in spec.values()):
        rows = list(spec)
        cols = list(dict.fromkeys(c for row in spec.values() for c in row))
        P = [[spec[a].get(b, 0.0) for b in cols] for a in rows]
        return _probability_matrix(var, P, rows, cols, square=False), rows, cols
    return None


def _diagonal(var: str, spec) -> float | dict:
    """A number, or ``{category: keep probability}``, from any accepted form."""
    if isinstance(spec, bool):
        raise SdcError(f"pram: {var}: got a bool; expected a probability or a dict category -> probability")
    if isinstance(spec, (int, float, np.number)):
        return float(check_fraction(spec, f"pram[{var!r}]", low_open=False))
    if hasattr(spec, "index") and hasattr(spec, "columns") and hasattr(spec, "to_numpy"):
        return _matrix_diagonal(var, spec.to_numpy(), list(spec.index), list(spec.columns))
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and not isinstance(spec[1], (int, float)):
        return _matrix_diagonal(var, spec[0], list(spec[1]), list(spec[1]))
    if not isinstance(spec, Mapping):
        raise SdcError(
            f"pram: {var}: got a {type(spec).__name__}; expected a probability, a dict category -> probability "
            "or a transition matrix"
        )
    rows = [isinstance(v, Mapping) for v in spec.values()]
    if rows and all(rows):
        return _dict_matrix_diagonal(var, spec)
    if any(rows):
        raise SdcError(
            f"pram: {var}: some entries are rows of a matrix and some are probabilities; expected a dict "
            "category -> probability or a matrix {from: {to: probability}}"
        )
    return {k: float(check_fraction(v, f"pram[{var!r}]", low_open=False)) for k, v in spec.items()}


def _dict_matrix_diagonal(var: str, spec: Mapping) -> dict:
    """The diagonal of ``{from: {to: probability}}`` (a missing entry is 0)."""
    cats = list(spec)
    cols = list(dict.fromkeys(c for row in spec.values() for c in row))
    return _matrix_diagonal(var, [[spec[a].get(b, 0.0) for b in cols] for a in cats], cats, cols, square=False)


def _matrix_diagonal(var: str, matrix, rows: list, cols: list, *, square: bool = True) -> dict:
    """{category: P[c, c]} of a transition matrix with rows ``rows`` (original categories) and
    columns ``cols`` (new ones); every row is a probability distribution."""
    P = _probability_matrix(var, matrix, rows, cols, square=square)
    col = {c: i for i, c in enumerate(cols)}
    return {a: float(P[i, col[a]]) if a in col else 0.0 for i, a in enumerate(rows)}


def _probability_matrix(var: str, matrix, rows: list, cols: list, *, square: bool = True) -> np.ndarray:
    """The matrix as floats, checked: its shape, entries in [0, 1], rows summing to 1."""
    try:
        P = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError):
        raise SdcError(f"pram: {var}: could not read the transition matrix; expected numbers") from None
    if P.ndim != 2 or P.shape != (len(rows), len(cols)) or (square and P.shape[0] != P.shape[1]):
        raise SdcError(
            f"pram: {var}: a matrix of shape {P.shape} for {len(rows)} categories; expected a square matrix "
            "with one row and one column per category"
        )
    if not np.all(np.isfinite(P)) or np.any(P < 0) or np.any(P > 1):
        raise SdcError(f"pram: {var}: the matrix has entries outside [0, 1]; expected probabilities")
    bad = int(np.count_nonzero(np.abs(P.sum(axis=1) - 1.0) > _ROW_SUM_TOLERANCE))
    if bad:
        raise SdcError(
            f"pram: {var}: {bad} row(s) of the matrix do not sum to 1; expected P[i, j] = "
            "P(released = j | original = i), each row summing to 1"
        )
    return P


def strata_reader(engine, table, rows=None):
    """``strata_of`` for :func:`keep_per_record`: the stratum number of every record (or of
    ``rows``) and the stratum labels, as :func:`sdckit.pram` labels its strata."""
    from ..protect._common import strata_of

    def read(columns):
        table.require(tuple(columns), "pram")
        ids, labels = strata_of(engine, table, list(columns))
        ids = np.asarray(ids, dtype=np.int64)
        return (ids if rows is None else ids[rows]), labels

    return read
