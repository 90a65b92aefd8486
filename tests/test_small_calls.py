"""Small calls cost little: a pandas frame is converted column by column, only the columns a
call uses, and a protected result converts back only the columns a method changed. Each fast
path is checked against the general route it replaces (the whole frame through PyArrow, the
changed columns back through Polars' ``to_pandas``): same types, same values, bit for bit."""

from __future__ import annotations

import narwhals as nw
import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from conftest import DATA
from sdckit import SdcError
from sdckit.engines._polars_frame import (
    _keep_pandas_category_order,
    _mixed_object_columns,
    _pandas_without_pyarrow,
    as_table,
    to_native,
)
from sdckit.engines._polars_output import _nullable_integers, pandas_column

TESTDATA = DATA / "sdcmicro" / "testdata.csv"


def _every_kind() -> pd.DataFrame:
    """One column of every kind a caller may pass (values with missing ones where the type
    allows), under text, empty and integer labels."""
    n = 6
    return pd.DataFrame(
        {
            "i8": np.array([1, -2, 3, 4, 5, 6], dtype=np.int8),
            "u16": np.array([1, 2, 3, 4, 5, 60000], dtype=np.uint16),
            "i64": np.arange(n, dtype=np.int64) * 10**12,
            "f32": np.array([0.5, np.nan, 1.5, -0.0, 2.5, 3.5], dtype=np.float32),
            "f64": np.array([0.1, np.nan, -0.0, np.inf, 1e300, 2.0]),
            "f16": np.array([0.5, 1, 2, 3, 4, 5], dtype=np.float16),
            "bool": np.array([True, False, True, True, False, True]),
            "Int64": pd.array([1, None, 3, 4, None, 6], dtype="Int64"),
            "text": ["a", None, "b", "c", "a", "b"],
            "obj": pd.Series(["x", "y", None, "x", "y", "x"], dtype=object),
            "mixed": pd.Series([1, "1", 2.5, None, "a", 3], dtype=object),
            "cat": pd.Categorical(["lo", "hi", None, "mid", "lo", "hi"], categories=["lo", "mid", "hi"], ordered=True),
            "ucat": pd.Categorical(["b", "a", "b", None, "a", "c"]),
            "icat": pd.Categorical([3, 1, 2, 3, None, 1]),
            "date": pd.to_datetime(["2020-01-01", None, "2020-03-01", "2020-04-01", "2020-05-01", "2020-06-01"]),
            "": np.arange(n, dtype=np.int32),
            7: np.linspace(0, 1, n),
        }
    )


def _whole_frame(pdf: pd.DataFrame) -> pl.DataFrame:
    """The general route: the whole frame through narwhals and PyArrow, text categoricals as
    Enums in their declared order; the column PyArrow cannot read (``mixed``) value by value."""
    rest = pdf.drop(columns=["mixed"])
    frame = nw.from_native(rest, eager_only=True).to_polars()
    frame.columns = [str(c) for c in rest.columns]
    frame = _keep_pandas_category_order(rest, frame)
    mixed = _pandas_without_pyarrow(pdf[["mixed"]]).get_column("mixed")
    return frame.insert_column(list(pdf.columns).index("mixed"), mixed)


def _same_series(a: pl.Series, b: pl.Series) -> None:
    assert a.dtype == b.dtype, (a.name, a.dtype, b.dtype)
    assert a.equals(b, check_names=True, null_equal=True), a.name
    if a.dtype.is_float():  # NaN, null and the sign of zero, bit for bit
        np.testing.assert_array_equal(a.is_null().to_numpy(), b.is_null().to_numpy())
        x, y = a.to_numpy(), b.to_numpy()
        assert x.tobytes() == y.tobytes(), a.name


def test_columns_read_one_by_one_equal_the_whole_frame_conversion():
    pdf = _every_kind()
    expected = _whole_frame(pdf)
    table = as_table(pdf)
    assert table.backend == "pandas" and table.n == len(pdf)
    assert table.columns == expected.columns
    for name in reversed(table.columns):  # one at a time, in another order than the frame's
        _same_series(table.column(name), expected.get_column(name))
        assert table.schema[name] == expected.schema[name]
    fresh = as_table(pdf)
    frame = fresh.select(["text", "f64", "cat", "mixed", "date"])  # several at once: the PyArrow ones in one go
    for name in frame.columns:
        _same_series(frame.get_column(name), expected.get_column(name))
    assert as_table(pdf).frame.equals(expected, null_equal=True)


def test_only_the_columns_used_are_converted():
    pdf = _every_kind()
    table = as_table(pdf)
    assert "i64" in table.schema and "nope" not in table.schema and len(table.schema) == pdf.shape[1]
    assert table.kind("f64") == "float" and table.is_numeric("i64")
    assert set(table._cache["__cols__"]) == {"f64", "i64"}


def test_mixed_types_found_column_by_column():
    pdf = _every_kind()
    table = as_table(pdf)
    whole = _mixed_object_columns(pdf)
    assert set(whole) == {"mixed"}
    for name in table.columns:
        assert table.mixed_types(name) == whole.get(name)
    with pytest.raises(SdcError, match="column mixed mixes value types"):
        sdckit.top_bottom_coding(pdf, "mixed", value=1)


def _old_route(s: pl.Series, index) -> pd.Series:
    out = to_native({"c": s}, "pandas", index)
    _nullable_integers(pl.DataFrame({"c": s}), out)
    return out["c"].rename(s.name)


@pytest.mark.parametrize(
    "s",
    [
        pl.Series("f", [0.5, None, -0.0, float("nan")]),
        pl.Series("f32", [0.5, None, 1.0, 2.0], dtype=pl.Float32),
        pl.Series("i", [1, 2, 3, 4], dtype=pl.Int8),
        pl.Series("i", [1, None, 3, 4], dtype=pl.Int32),
        pl.Series("u", [1, None, 3, 4], dtype=pl.UInt64),
        pl.Series("b", [True, False, True, True]),
        pl.Series("b", [True, None, False, True]),
        pl.Series("e", ["(1,2]", None, "(2,3]", "(1,2]"], dtype=pl.Enum(["(1,2]", "(2,3]", "(3,4]"])),
        pl.Series("e", ["x", "y", "x", "y"], dtype=pl.Enum(["x", "y"])),
        pl.Series("e", [], dtype=pl.Enum(["x"])),
        pl.Series("s", ["a", None, "b", "a"]),
    ],
    ids=lambda s: f"{s.name}-{s.dtype}-{s.null_count()}",
)
@pytest.mark.parametrize("index", [None, "labels"])
def test_changed_column_back_to_pandas_equals_the_general_route(s, index):
    idx = pd.Index([f"r{i}" for i in range(s.len())]) if index else None
    got, expected = pandas_column(s, idx), _old_route(s, idx)
    assert got.dtype == expected.dtype
    pd.testing.assert_series_equal(got, expected, check_exact=True)
    if got.dtype.kind in "biuf" and s.len():  # writable, and not the Polars column's memory
        kept = s.clone()
        got.iloc[0] = got.iloc[1]
        assert s.equals(kept, null_equal=True)


@pytest.fixture(scope="module")
def testdata() -> pd.DataFrame:
    return pd.read_csv(TESTDATA)


def _calls(pdf):
    cut = float(np.round(np.quantile(pdf["income"], 0.95)))
    return [
        lambda d: sdckit.global_recode(d, "age", breaks=[-1, 15, 30, 45, 60, 100]),
        lambda d: sdckit.top_bottom_coding(d, "income", value=cut, replacement=cut, kind="top"),
        lambda d: sdckit.global_recode(d, "water", mapping={1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 9: 4}),
    ]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_protected_pandas_frame_equals_the_polars_result(testdata, which):
    """The same call on the pandas frame and on the Polars frame: the changed column equals
    the Polars result converted by the general route, every other column is the caller's
    (same dtype, same values), the input is unchanged."""
    before = testdata.copy(deep=True)
    call = _calls(testdata)[which]
    res_pd, res_pl = call(testdata), call(pl.from_pandas(testdata))
    out = res_pd.data
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(testdata.columns)
    pd.testing.assert_frame_equal(testdata, before, check_exact=True)
    changed = list(res_pd.n_changed)
    for name in testdata.columns:
        if name in changed:
            pd.testing.assert_series_equal(out[name], _old_route(res_pl.data[name], None), check_exact=True)
        else:
            pd.testing.assert_series_equal(out[name], testdata[name], check_exact=True)
    assert res_pd.n_changed == res_pl.n_changed and res_pd.to_dict() == res_pl.to_dict()


def test_l_diversity_same_on_pandas_and_polars(testdata):
    keys = ["urbrur", "roof", "walls", "sex"]
    a = sdckit.l_diversity(testdata, keys, "income")
    b = sdckit.l_diversity(pl.from_pandas(testdata), keys, "income")
    assert a.to_dict() == b.to_dict()
    for v in ("distinct", "entropy", "recursive"):
        np.testing.assert_array_equal(getattr(a, v)["income"], getattr(b, v)["income"])
    np.testing.assert_array_equal(a.class_ids, b.class_ids)


def test_result_frame_is_independent_of_the_input(testdata):
    """The caller's frame changed after the call does not change the result, nor the
    reverse (pandas copies on write)."""
    pdf = testdata.copy(deep=True)
    res = sdckit.top_bottom_coding(pdf, "income", value=1e6)
    kept = res.data["age"].copy()
    pdf.loc[0, "age"] = -5
    assert res.data["age"].equals(kept)
    res.data.loc[1, "age"] = -7
    assert pdf.loc[1, "age"] == testdata.loc[1, "age"]


def _encoded(frame: pl.DataFrame, monkeypatch, numpy: bool):
    import sdckit.engines._polars_encode as enc

    monkeypatch.setattr(enc, "_NUMPY_MAX_N", 10**9 if numpy else -1)
    return enc.encode_keys(frame, frame.columns, None)


def test_small_columns_encoded_by_numpy_as_by_the_polars_query(monkeypatch):
    """Columns without a compact range (fractions, wide integers) on a small table: NumPy's
    sort gives the codes and labels of the Polars query (sorted labels, -1 for missing)."""
    rng = np.random.default_rng(3)
    n = 500
    f = rng.normal(size=n).round(2)
    f[rng.random(n) < 0.1] = np.nan
    frame = pl.DataFrame(
        {
            "frac": f,  # NaN becomes missing
            "frac_null": pl.Series(np.where(np.isnan(f), 1.5, f)).scatter([0, 7], None),
            "f32": (f * 3).astype(np.float32),
            "wide": rng.integers(-(2**60), 2**60, size=n),
            "wide_u": rng.integers(0, 2**63, size=n, dtype=np.uint64),
            "signed_zero": np.where(rng.random(n) < 0.5, -0.0, 0.0) + rng.integers(0, 2, n) * 0.5,
            "wide_with_null": pl.Series(rng.integers(-(2**60), 2**60, size=n)).scatter([3], None),
            "text": [f"t{v}" for v in rng.integers(0, 50, n)],
        }
    )
    fast, slow = _encoded(frame, monkeypatch, True), _encoded(frame, monkeypatch, False)
    np.testing.assert_array_equal(fast.codes, slow.codes)
    for a, b in zip(fast.labels, slow.labels):
        assert a.dtype == b.dtype and a.equals(b), a.name
    assert (fast.codes[:, 0] == -1).sum() == np.isnan(f).sum()
    labels = fast.labels[0].to_numpy()
    assert np.all(np.diff(labels) > 0)  # sorted, distinct
    ok = fast.codes[:, 0] >= 0
    np.testing.assert_array_equal(labels[fast.codes[ok, 0]], f[ok])  # each record's label is its value


@pytest.mark.parametrize("span", [1, 7, 1000, 2**17, 2**40])
def test_dense_ids_equal_numpy_unique(span):
    """Compact keys go through a look-up table, wide ones through a sort: both give
    ``np.unique``'s distinct keys and inverse."""
    from sdckit._core.grouping import dense_ids, group_rows

    rng = np.random.default_rng(span % 1000)
    key = rng.integers(0, span, size=3000).astype(np.int64)
    ids, uniq = dense_ids(key)
    u, inv = np.unique(key, return_inverse=True)
    np.testing.assert_array_equal(uniq, u)
    np.testing.assert_array_equal(ids, inv)
    assert ids.dtype == np.int64
    codes = np.column_stack([key % 5, key % 3])
    g, n_g = group_rows(codes)
    u2, inv2 = np.unique(codes, axis=0, return_inverse=True)
    assert n_g == len(u2)
    np.testing.assert_array_equal(g, inv2.reshape(-1))


def _with_codes_by_query(table, name, codes, labels, categories=None):
    """with_codes as it was written before: a gather, a query setting the missing codes to
    null, then a cast to the Enum."""
    lab = labels if isinstance(labels, pl.Series) else pl.Series(name, list(labels), strict=False)
    idx = pl.Series("i", np.where(codes < 0, 0, codes), dtype=pl.Int64)
    out = lab.gather(idx)
    out = pl.select(pl.when(pl.lit(pl.Series(codes < 0))).then(None).otherwise(pl.lit(out))).to_series()
    if categories is not None:
        out = out.cast(pl.String).cast(pl.Enum([str(c) for c in categories]))
    return out.alias(name)


@pytest.mark.parametrize(
    "labels, categories",
    [
        ([10, 20, 30], None),
        (["a", "b", "c"], None),
        ([1.5, 2.5, 3.5], None),
        (pl.Series("x", [True, False]), None),
        (["(0,1]", "(1,2]", "(2,3]"], ["(0,1]", "(1,2]", "(2,3]"]),
        ([3, 1, 2], [1, 2, 3, 4]),  # numbers as text categories, one unused
    ],
)
@pytest.mark.parametrize("backend", ["polars", "pandas"])
def test_with_codes_equals_the_query_route(labels, categories, backend):
    from sdckit.engines._polars_output import with_codes

    rng = np.random.default_rng(1)
    n_lab = len(labels)
    codes = rng.integers(-1, n_lab, size=200)
    frame = pl.DataFrame({"x": rng.integers(0, 5, 200), "y": np.arange(200)})
    table = as_table(frame.to_pandas() if backend == "pandas" else frame)
    got = with_codes(table, "x", codes, labels, categories).column("x")
    expected = _with_codes_by_query(table, "x", codes, labels, categories)
    assert got.dtype == expected.dtype and got.equals(expected, null_equal=True)
    assert got.null_count() == int((codes < 0).sum())
    assert table.column("x").equals(pl.Series("x", frame["x"]))  # the input table is unchanged


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int64, pl.UInt16])
def test_compact_integers_encoded_by_look_up_table(dtype):
    """A compact integer column, with missing values: labels are the distinct values in
    order, each record's code the position of its value, -1 when missing."""
    from sdckit.engines._polars_encode import encode_keys

    rng = np.random.default_rng(5)
    x = rng.integers(0, 60, size=400)
    s = pl.Series("k", x, dtype=dtype).scatter([0, 9, 17], None)
    enc = encode_keys(pl.DataFrame([s]), ["k"])
    valid = s.is_not_null().to_numpy()
    u, inv = np.unique(x[valid], return_inverse=True)
    assert enc.labels[0].dtype == dtype and enc.labels[0].to_list() == u.tolist()
    np.testing.assert_array_equal(enc.codes[valid, 0], inv)
    assert (enc.codes[~valid, 0] == -1).all()


@pytest.mark.parametrize(
    "dtype, lo, hi",
    [
        (pl.Int64, 0, 9),  # small non-negative values: the values index the table as they are
        (pl.Int64, -3, 4),  # negative values: shifted by the minimum
        (pl.Int64, 2**62, 2**62 + 50),  # large values in a compact range
        (pl.Int64, -(2**63), -(2**63) + 20),  # the smallest int64
        (pl.Int32, 70_000, 70_100),  # far from 0: shifted
        (pl.Int8, -128, 127),
        (pl.UInt8, 0, 255),
        (pl.UInt32, 2**32 - 40, 2**32 - 1),
        (pl.UInt64, 2**64 - 40, 2**64 - 1),  # shifted in its own type (no int64 overflow)
    ],
)
def test_complete_integer_columns_encoded_as_numpy_unique(dtype, lo, hi):
    """An integer column without missing values (the columns' own buffers, several chunks):
    labels are the distinct values in order, each record's code the position of its value."""
    from sdckit.engines._polars_encode import encode_keys

    rng = np.random.default_rng(abs(lo) % 97)
    vals = [lo + int(v) for v in rng.integers(0, hi - lo + 1, size=600)] + [lo, hi]
    s = pl.concat([pl.Series("k", vals[:300], dtype=dtype), pl.Series("k", vals[300:], dtype=dtype)], rechunk=False)
    assert s.n_chunks() == 2
    enc = encode_keys(pl.DataFrame([s]), ["k"])
    u = sorted(set(vals))
    assert enc.labels[0].dtype == dtype and enc.labels[0].to_list() == u
    pos = {v: i for i, v in enumerate(u)}
    np.testing.assert_array_equal(enc.codes[:, 0], [pos[v] for v in vals])
    assert enc.codes.dtype == np.int32
    holes = encode_keys(pl.DataFrame([s.scatter([0, 5], None)]), ["k"])  # with missing values
    kept = sorted(set(vals[1:5] + vals[6:]))
    assert holes.labels[0].to_list() == kept
    expected = [-1 if i in (0, 5) else kept.index(v) for i, v in enumerate(vals)]
    np.testing.assert_array_equal(holes.codes[:, 0], expected)


def test_wide_complete_integer_column_not_encoded_by_table():
    """A range wider than the table limit (max(4 n, 2^16)) goes to the sorted route with the
    same result: the lookup table is never allocated at the column's maximum."""
    from sdckit.engines import _polars_encode as enc

    x = pl.Series("k", [0, 5, 2**20, 5, 0], dtype=pl.Int64)
    assert enc._int_codes(x, x.len()) is None
    got = enc.encode_keys(pl.DataFrame([x]), ["k"])
    assert got.labels[0].to_list() == [0, 5, 2**20]
    np.testing.assert_array_equal(got.codes[:, 0], [0, 1, 2, 1, 0])


@pytest.mark.parametrize("late", [None, 3, 0, "every"])
def test_large_integer_column_with_a_value_only_after_the_first_records(late):
    """The first records of a long column are looked at first; a value of the range that occurs
    only further on (``late``, absent before the last record) still gets its own code, and a
    value never seen keeps none ("every": every value of the range occurs early)."""
    from sdckit.engines._polars_encode import _PROBE, encode_keys

    rng = np.random.default_rng(11)
    n = 4 * _PROBE + 1000
    x = rng.choice([0, 1, 2, 3, 4, 5] if late == "every" else [0, 1, 2, 4, 5], size=n)  # 3: only as late
    if isinstance(late, int):
        x[:-1][x[:-1] == late] = 1
        x[-1] = late
    x[-2] = 5 if late != 5 else 4
    enc = encode_keys(pl.DataFrame({"k": x}), ["k"])
    u, inv = np.unique(x, return_inverse=True)
    assert enc.labels[0].to_list() == u.tolist()
    np.testing.assert_array_equal(enc.codes[:, 0], inv)
