"""Encode categorical key variables to integer codes, once.

Each key column becomes int32 codes ``0..R-1`` with ``-1`` for a missing value. Labels are
kept as they are (strings, integers, floats, booleans, dates); nothing is coerced to a
number. Missing means null, a floating-point NaN, or one of the user's ``missing`` values.
Code order: the declared category order for Polars ``Enum`` columns (and therefore for
ordered pandas categoricals read from labelled files), sorted label order otherwise.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .base import EncodedKeys

__all__ = ["encode_keys", "encode_column"]


def _missing_expr(s: pl.Series, missing, found: set | None = None) -> pl.Series:
    """``s`` with NaN and the user's ``missing`` values set to null.

    A missing code is compared in the column's own type: numbers against numeric columns
    (``-999`` matches ``-999.0``), strings against text and categorical columns; codes of
    another type cannot occur in the column. The codes that do occur are added to ``found``
    (positions in ``missing``), so that the caller can say which never occur.
    """
    if s.dtype.is_float():
        x = s.to_numpy()  # nulls come back as NaN; made null together (no query)
        if np.isnan(x).any():
            s = pl.Series(s.name, x, dtype=s.dtype, nan_to_null=True)
    if not missing:
        return s
    dt = s.dtype
    vals = list(missing)
    target: pl.DataType | type[pl.DataType]
    if dt.is_numeric():
        vals = [
            v
            for v in vals
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
        ]
        target = pl.Float64 if dt.is_float() or any(isinstance(v, (float, np.floating)) for v in vals) else pl.Int64
    elif dt == pl.String or isinstance(dt, (pl.Categorical, pl.Enum)):
        vals = [
            str(v) for v in vals if isinstance(v, str) or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
        ]
        target = pl.String
    else:
        target = dt
    if not vals:
        return s
    try:
        cand = pl.Series(vals, dtype=target, strict=False)
        col = s.cast(target)
        mask = col.is_in(cand.drop_nulls().implode())
        if found is not None and mask.any():
            hit = cand.is_in(col.drop_nulls().unique().implode()).to_list()
            found.update(str(v) for v, h in zip(vals, hit) if h)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        return s  # codes that cannot be expressed in the column's type cannot occur in it
    return pl.select(pl.when(pl.lit(mask)).then(None).otherwise(pl.lit(s))).to_series().alias(s.name)


def _prepared(s: pl.Series, missing, found: set | None = None) -> pl.Series:
    s = _missing_expr(s, missing, found)
    if isinstance(s.dtype, pl.Categorical):
        s = s.cast(pl.String)
    return s


def encode_column(s: pl.Series, missing=None) -> tuple[np.ndarray, pl.Series]:
    """Return ``(codes, labels)`` for one column (codes int32, -1 = missing)."""
    enc = encode_keys(pl.DataFrame([s.alias("x")]), ["x"], missing)
    return np.ascontiguousarray(enc.codes[:, 0]), enc.labels[0].alias(s.name)


def _float_codes(s: pl.Series, n: int):
    """Codes of a float column whose values are all whole numbers within a compact range (the
    usual reading of an integer column with missing values by pandas or a CSV reader), by the
    lookup table of :func:`_int_codes`; labels stay floats. None when it does not apply."""
    nulls = s.null_count()
    if nulls == s.len():
        return None
    x = s.to_numpy()  # nulls (NaN was made null before) come back as NaN
    valid = ~np.isnan(x) if nulls else None
    xv = x if valid is None else x[valid]
    lo, hi = float(xv.min()), float(xv.max())
    span = hi - lo + 1
    if not (abs(lo) <= 2.0**53 and abs(hi) <= 2.0**53) or span > max(4 * n, 1 << 16) or span > (1 << 26):
        return None
    off = xv - lo
    xi = off.astype(np.int64)
    if not np.array_equal(xi, off):  # a fractional value: labels are not whole numbers
        return None
    present = np.bincount(xi, minlength=int(span)) > 0
    lut = (np.cumsum(present, dtype=np.int64) - 1).astype(np.int32)
    if valid is None:
        codes = lut[xi]
    else:
        codes = np.full(n, -1, dtype=np.int32)
        codes[valid] = lut[xi]
    labels = pl.Series(s.name, (np.flatnonzero(present) + lo).astype(np.float64)).cast(s.dtype)
    return codes, labels


def _int_codes(s: pl.Series, n: int, out: np.ndarray | None = None):
    """Codes of an integer column with a compact range by a lookup table (no hashing or
    sorting): ``(codes, labels)``, or None when the range is too wide for a table.

    The column's own buffer is read (no copy without missing values); small non-negative
    values index the table as they are, others are shifted by the minimum first. Float
    columns holding whole numbers take the same path; their labels stay floats. ``out``: an
    int32 array of n where the codes of an integer column are written (and returned)."""
    if s.dtype.is_float():
        return _float_codes(s, n)
    nulls = s.null_count()
    if not s.dtype.is_integer() or nulls == s.len():
        return None
    x = (s.fill_null(s.min()) if nulls else s).to_numpy()  # the minimum keeps the range
    lo, hi = int(x.min()), int(x.max())
    limit = min(max(4 * n, 1 << 16), 1 << 26)
    if hi - lo + 1 > limit:
        return None
    base = 0 if 0 <= lo and hi < limit else lo
    x = _shifted(x, base)
    valid = s.is_not_null().to_numpy() if nulls else None
    present = _present(x if valid is None else x[valid], lo - base, hi - base)
    values = np.flatnonzero(present)
    if values.size == hi - lo + 1:  # every value of the range occurs: the code is the value less the minimum
        dest = np.empty(x.shape[0], dtype=np.int32) if out is None else out
        codes = np.subtract(x, lo - base, out=dest, casting="unsafe")
    else:
        lut = np.zeros(present.size, dtype=np.int32)
        lut[values] = np.arange(values.size, dtype=np.int32)
        codes = lut.take(x, out=out)
    if valid is not None:
        codes[~valid] = -1
    return codes, pl.Series(s.name, _unshifted(values, base, x.dtype)).cast(s.dtype)


#: records whose values are looked at first: when they hold every value of the column's range,
#: so does the column (the usual case for a few categories), and the other records are not read
_PROBE = 1 << 16


def _present(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Which of the values ``0..hi`` occur in ``x`` (whose minimum is ``lo``, maximum ``hi``)."""
    present = np.zeros(hi + 1, dtype=bool)
    if x.size > 4 * _PROBE and hi - lo < _PROBE // 64:
        present[x[:_PROBE]] = True
        if present[lo:].all():
            return present
    present[x] = True
    return present


def _shifted(x: np.ndarray, base: int) -> np.ndarray:
    """``x - base`` without overflow (unsigned in its own type, as every value >= base)."""
    if base == 0:
        return x
    if x.dtype.kind == "u":
        return x - x.dtype.type(base)
    return x.astype(np.int64) - base


def _unshifted(offsets: np.ndarray, base: int, dtype) -> np.ndarray:
    """The values ``base + offsets`` (the inverse of :func:`_shifted`)."""
    if base == 0:
        return offsets
    if dtype.kind == "u":
        return offsets.astype(dtype) + dtype.type(base)
    return offsets + base


#: below this many records a column without a compact range is encoded by NumPy's sort (no
#: query to start); above it by Polars' parallel hashing
_NUMPY_MAX_N = 20_000


def _sorted_codes(s: pl.Series, n: int):
    """Codes of a numeric column by NumPy's sort (small tables): labels in sorted order as the
    Polars query gives them. None for text, for integers with missing values (NumPy would see
    them as floats) and for floats holding both 0.0 and -0.0 (one label, whichever sign)."""
    nulls = s.null_count()
    numeric = s.dtype.is_integer() or s.dtype.is_float()
    if n > _NUMPY_MAX_N or not numeric or nulls == n or (nulls and not s.dtype.is_float()):
        return None
    x = s.to_numpy()  # floats: nulls (NaN was made null before) come back as NaN
    valid = ~np.isnan(x) if nulls else None
    xv = x if valid is None else x[valid]
    if s.dtype.is_float() and np.signbit(xv[xv == 0]).any():
        return None
    order = np.argsort(xv)  # np.unique(xv, return_inverse=True), without its extra passes
    sx = xv[order]
    first = np.empty(sx.size, dtype=bool)
    first[:1] = True
    np.not_equal(sx[1:], sx[:-1], out=first[1:])
    inv = np.empty(sx.size, dtype=np.int32)
    inv[order] = np.cumsum(first, dtype=np.int32) - 1
    if valid is None:
        codes = inv
    else:
        codes = np.full(n, -1, dtype=np.int32)
        codes[valid] = inv
    return codes, pl.Series(s.name, sx[first], dtype=s.dtype)


def encode_keys(frame: pl.DataFrame, keys, missing=None) -> EncodedKeys:
    """Encode the columns ``keys`` of ``frame`` (validated beforehand).

    Integer columns with a compact range go through a lookup table; the other columns are
    encoded in one parallel Polars query (sorted distinct labels, then each value replaced by
    its label's position). Codes are stored column-major (one contiguous column per key).
    """
    keys = tuple(keys)
    n = frame.height
    found: set = set()
    prepared = [_prepared(frame.get_column(k), missing, found).alias(f"_{j}") for j, k in enumerate(keys)]
    codes = np.empty((n, len(keys)), dtype=np.int32, order="F")
    labels: list = [None] * len(keys)
    observed: list = [None] * len(keys)
    plain = []
    for j, k in enumerate(keys):
        s = prepared[j]
        if isinstance(s.dtype, pl.Enum):
            labels[j] = pl.Series(k, s.dtype.categories)
            codes[:, j] = s.to_physical().cast(pl.Int32).fill_null(-1).to_numpy()
            cj = codes[:, j]
            observed[j] = tuple(np.flatnonzero(np.bincount(cj[cj >= 0], minlength=len(labels[j]))).tolist())
            continue
        dest = codes[:, j]
        fast = _int_codes(s, n, out=dest)
        if fast is None:
            fast = _sorted_codes(s, n)
        if fast is not None:
            if fast[0] is not dest:  # an integer column's codes are written in place
                dest[:] = fast[0]
            labels[j] = fast[1].alias(k)
        else:
            plain.append(j)
    if plain:
        pre = pl.DataFrame(prepared)
        uniq = pre.select([pl.col(f"_{j}").drop_nulls().unique().sort().implode() for j in plain]).row(0)
        for j, u in zip(plain, uniq):
            labels[j] = pl.Series(keys[j], u, dtype=pre.get_column(f"_{j}").dtype)
        for j in [j for j in plain if len(labels[j]) == 0]:  # entirely missing: nothing to replace
            codes[:, j] = -1
            plain.remove(j)
        exprs = []
        for j in plain:
            col = pl.col(f"_{j}")
            if pre.get_column(f"_{j}").dtype == pl.String:  # an Enum cast maps text to positions fastest
                exprs.append(col.cast(pl.Enum(labels[j].to_list())).to_physical().cast(pl.Int32).fill_null(-1))
            else:
                exprs.append(
                    col.replace_strict(
                        labels[j], pl.Series(np.arange(len(labels[j]), dtype=np.int32)), return_dtype=pl.Int32
                    ).fill_null(-1)
                )
        coded = pre.select(exprs)
        for j, name in zip(plain, coded.columns):
            codes[:, j] = coded.get_column(name).to_numpy()
    unused = tuple(v for v in (missing or ()) if str(v) not in found)
    return EncodedKeys(keys, codes, tuple(labels), tuple(observed), unused)
