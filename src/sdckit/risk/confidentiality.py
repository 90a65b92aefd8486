"""Seri's confidentiality plot for categorical keys: the frequency F_y of each released
record's key combination against the share of its keys that protection changed.

The numeric version (neighbours within a distance) is :func:`sdckit.confidentiality_plot`."""

from __future__ import annotations

import numpy as np

from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list
from ..engines import in_memory_engine, local_records
from ..results.confidentiality import CategoricalConfidentialityResult
from ..scenario import accepts_scenario
from .frequencies import frequencies

__all__ = ["CategoricalConfidentialityResult", "categorical_confidentiality_plot"]


def _changed(eng, t1, t2, key: str, missing) -> np.ndarray:
    """Whether each record's released value of ``key`` differs from the original (both missing:
    unchanged; a value of another kind, e.g. a number recoded into a text band: changed)."""
    if t1.is_numeric(key) == t2.is_numeric(key):
        (c1, c2), _ = eng.encode_joint([t1, t2], key, missing or None)
        return np.asarray(c1 != c2)
    c1, _ = eng.encode_column(t1, key, missing or None)
    c2, _ = eng.encode_column(t2, key, missing or None)
    return ~((np.asarray(c1) < 0) & (np.asarray(c2) < 0))


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("weight"),
    Param("missing"),
    inputs=("original", "protected"),
    excluded="a figure for one variable pair, chosen by the user",
)
def categorical_confidentiality_plot(
    original, protected, keys, *, weight=None, missing=None, engine=None
) -> CategoricalConfidentialityResult:
    r"""Seri's confidentiality plot for categorical keys: frequency F_y against perturbation.

    For social data Seri (2004, section 2) places each released record by the frequency of its
    key combination y in the population, :math:`F_y` (the risk :math:`1/F_y`), on the
    horizontal axis; the safety rule is the vertical line :math:`F_y = k`, and the vertical
    axis carries an information loss per record. Here:

    * :math:`F_y = \sum_{i: y_i = y} w_i` over the released file (``weight``; without it the
      sample frequency :math:`f_y`), with :func:`frequencies`' rule for missing values (a
      suppressed value matches every category);
    * perturbation of record i: the share of the keys whose released value differs from the
      original one, :math:`\frac{1}{m}\sum_j [y_{ij} \ne x_{ij}]` (a suppressed value counts as
      changed, two missing values as equal; a key recoded into values of another kind counts
      as changed wherever either is observed).

    ``unsafe(k=, min_perturbation=)`` and ``plot(k=, min_perturbation=)`` apply the user's
    rule.

    Parameters
    ----------
    original, protected : table
        The same records in the same order; ``weight`` is read from ``protected``.
    keys : list of str
        Categorical key variables present in both.
    weight : str, optional
        Sampling weight column of the released file.
    missing : value or list of values, optional
        Values to treat as missing besides null and NaN (e.g. ``-999``).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    CategoricalConfidentialityResult

    References
    ----------
    Seri, G. (2004), the confidentiality plot: a tool for assessing the disclosure risk at
    individual level.
    """
    eng = in_memory_engine(engine, "categorical_confidentiality_plot", original)
    names = as_name_list(keys, "keys")
    codes = as_missing_codes(missing)
    t1, t2 = eng.table(original, "original"), eng.table(protected, "protected")
    t1.require(names, "keys (original)")
    t2.require(names, "keys (protected)")
    if t2.n != t1.n:
        raise SdcError(
            f"protected: has {t2.n} records but original has {t1.n}; expected the same records in the same "
            "order (row i of one file is row i of the other)"
        )
    if t1.n == 0:
        raise SdcError("original: the table has no records; expected at least one")
    fr = frequencies(protected, names, weight=weight, missing=missing, engine=eng)
    changed = np.column_stack([_changed(eng, t1, t2, k, codes) for k in names])
    return CategoricalConfidentialityResult(
        keys=tuple(names),
        weighted=weight is not None,
        frequency=np.asarray(fr.Fk, dtype=float),
        sample_frequency=np.asarray(fr.fk, dtype=float),
        perturbation=changed.mean(axis=1),
        n=t1.n,
        backend=t1.backend,
        records=local_records(),
        row_index=t1.index,
    )
