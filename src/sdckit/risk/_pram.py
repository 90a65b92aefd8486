"""The published PRAM matrices as keep probabilities per key category (``pram=`` of the risk
measures).

A risk measure of a PRAM-protected file needs, for each PRAMed key variable v and each
released category c, the probability P^(v)[c, c] that PRAM kept c (Shlomo & Skinner 2010).
This module reads it from the forms the PRAM step publishes: its ``details["pram_diagonal"]``
(a number or ``{category: probability}`` per variable) or its ``details["pram"]``
(``{from: {to: probability}}``), a ``(square matrix, categories)`` pair or a labelled pandas
DataFrame (index = original categories, columns = new ones).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._errors import SdcError
from .._validation import check_choice, check_fraction

__all__ = ["keep_by_code", "lacking_categories"]

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
    col = {c: i for i, c in enumerate(cols)}
    return {a: float(P[i, col[a]]) if a in col else 0.0 for i, a in enumerate(rows)}
