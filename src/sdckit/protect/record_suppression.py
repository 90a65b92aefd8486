"""Whole-record suppression of the records of small key classes (the model of ARX)."""

from __future__ import annotations

import numpy as np

from .._declare import Param, declare
from .._validation import as_missing_codes, check_k
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input

__all__ = ["suppress_records"]


@declare(
    "method",
    Param("keys"),
    Param("k", "int"),
    Param("missing"),
    changes="every key value of the records whose key class has fewer than k records (set missing)",
)
def suppress_records(data, keys, *, k=2, missing=None, engine=None) -> ProtectionResult:
    """Whole-record suppression: every key value of each record whose key class has fewer than
    ``k`` records is set missing.

    A key class is the set of records with the same values on every key, exact equality, a
    missing value being one more category; a class of size f_c < k is suppressed whole. This
    is the record suppression of ARX and of the k-anonymity literature (Samarati 2001; Sweeney
    2002) after full-domain generalisation: the suppressed records carry no key value, and the
    others are in classes of at least k records. Unlike :func:`local_suppression`, which
    suppresses single values, it removes every key of the record.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
        The microdata; never modified.
    keys : str or list of str
        Categorical key variables.
    k : int, default 2
        The smallest class size kept, >= 1.
    missing : value or list of values, optional
        Extra missing-value codes of the key columns.
    engine : str, optional
        The engine (the records must be in memory).

    Returns
    -------
    ProtectionResult
        ``n_changed``: suppressed values per key (values already missing are not counted);
        ``details``: ``n_records`` (records suppressed), ``n_classes`` (classes suppressed).

    References
    ----------
    Samarati, P. (2001). Protecting respondents' identities in microdata release. *IEEE
    Transactions on Knowledge and Data Engineering* 13(6), 1010-1027.
    """
    inp = read_input(data, keys, "keys", None, engine, method="suppress_records")
    kk = check_k(k)
    miss = as_missing_codes(missing)
    enc = inp.engine.encode(inp.table, list(inp.variables), miss or None)
    codes = enc.codes
    rows = np.where(codes < 0, -1, codes).astype(np.int64)
    _, cls, size = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    cls = np.asarray(cls).reshape(-1)
    small = size[cls] < kk
    masks = {v: small & (codes[:, j] >= 0) for j, v in enumerate(inp.variables)}
    table = inp.engine.with_missing(inp.table, masks)
    parameters = {"keys": list(inp.variables), "k": kk, "missing": list(miss) or None}
    details = {"n_records": int(small.sum()), "n_classes": int(np.count_nonzero(size < kk))}
    changes = {v: Change(masks[v], codes[:, j], enc.labels[j]) for j, v in enumerate(inp.variables)}
    return finish("suppress_records", parameters, inp, table, changes, details)
