"""One test, every backend: pandas, Polars, PyArrow and a dict of columns give identical results.

Also: ``to_frame()`` returns the caller's frame type, missing values written the way each
library writes them (None, NaN, pandas ``Categorical`` NaN, nullable ``Int64`` ``pd.NA``,
PyArrow nulls) are all missing, and the caller's object is never modified.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import S002_KEYS, s002_table

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

F_EXPECTED = [2, 2, 1, 2, 1, 2, 1, 1, 2, 2]
FW_EXPECTED = [360, 360, 215, 152, 186, 152, 180, 215, 262, 262]


# -- building the same table in every backend ----------------------------------------------------
def _s002(backend: str):
    t = s002_table()
    if backend == "polars":
        return t
    if backend == "pandas":
        return t.to_pandas()
    if backend == "pandas_categorical":
        df = t.to_pandas()
        for k in S002_KEYS:
            df[k] = df[k].astype("category")
        return df
    if backend == "pandas_arrow":
        return t.to_pandas(use_pyarrow_extension_array=True)
    if backend == "pyarrow":
        return t.to_arrow()
    if backend == "dict":
        return t.to_dict(as_series=False)
    raise AssertionError(backend)


# Spec A.1.1 example 2 (every missing-value case), with the key "a" also given as a float code
# "a_num" (same values and missing positions, so f and F are unchanged).
_A = ["M", "M", "M", None, "F", "F", None, "M"]
_A_NUM = [1.0, 1.0, 1.0, math.nan, 2.0, 2.0, math.nan, 1.0]
_B = ["SC", "SI", None, None, "SC", "SC", None, "SC"]
_C = [1, 1, 1, 1, None, 2, None, 1]  # E = 1, U = 2
_W = [10.0, 20, 30, 40, 50, 60, 70, 80]
NA_KEYS = ["a", "a_num", "b", "c"]
NA_F = {1.0: [4, 3, 6, 7, 4, 2, 8, 4], 0.5: [3, 2, 5, 5.5, 3, 1.5, 8, 3]}
NA_FW = {1.0: [160, 90, 250, 300, 220, 110, 360, 160], 0.5: [125, 55, 195, 225, 165, 85, 360, 125]}


def _with_missing(backend: str):
    if backend in ("pandas", "pandas_categorical", "pandas_arrow"):
        return pd.DataFrame(
            {
                "a": _A,  # None in a text column
                "a_num": np.array(_A_NUM),  # NaN in a float key
                "b": pd.Categorical(_B, categories=["SI", "SC"]),  # Categorical with NaN
                "c": pd.array(_C, dtype="Int64"),  # nullable Int64, pd.NA
                "w": _W,
            }
        )
    if backend == "polars":
        return pl.DataFrame(
            {
                "a": pl.Series(_A, dtype=pl.String),
                "a_num": pl.Series(_A_NUM, dtype=pl.Float64),  # NaN stays NaN (not null) in Polars
                "b": pl.Series(_B, dtype=pl.Categorical),
                "c": pl.Series(_C, dtype=pl.Int64),
                "w": _W,
            }
        )
    if backend == "pyarrow":
        return pa.table(
            {
                "a": pa.array(_A, pa.string()),
                "a_num": pa.array(_A_NUM, pa.float64()),  # NaN, not null
                "b": pa.array(_B, pa.string()).dictionary_encode(),
                "c": pa.array(_C, pa.int64()),
                "w": pa.array(_W),
            }
        )
    if backend == "dict":
        return {"a": list(_A), "a_num": list(_A_NUM), "b": list(_B), "c": list(_C), "w": list(_W)}
    raise AssertionError(backend)


BACKENDS = ["pandas", "pandas_categorical", "pandas_arrow", "polars", "pyarrow", "dict"]
NA_BACKENDS = ["pandas", "polars", "pyarrow", "dict"]


def _native_type(backend: str):
    return {"pyarrow": pa.Table}.get(backend, pd.DataFrame if backend.startswith("pandas") else pl.DataFrame)


# -- "not mutated": snapshot and compare -----------------------------------------------------------
def _snapshot(data):
    if isinstance(data, pd.DataFrame):
        return data.copy(deep=True)
    if isinstance(data, pl.DataFrame):
        return data.clone()
    if isinstance(data, pa.Table):
        return pa.table({n: data.column(n) for n in data.column_names}, schema=data.schema)
    return copy.deepcopy(data)


def _same_value(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


def _assert_unchanged(before, after):
    if isinstance(after, pd.DataFrame):
        pd.testing.assert_frame_equal(after, before, check_exact=True)
        assert list(after.dtypes) == list(before.dtypes)
    elif isinstance(after, pl.DataFrame):
        assert after.schema == before.schema
        assert after.equals(before, null_equal=True)
    elif isinstance(after, pa.Table):
        assert after.schema == before.schema  # equals() would fail on NaN == NaN
        a, b = after.to_pydict(), before.to_pydict()
        assert all(_same_value(x, y) for k in b for x, y in zip(a[k], b[k]))
    else:
        assert list(after) == list(before)
        for k in before:
            assert type(after[k]) is type(before[k]) and len(after[k]) == len(before[k])
            assert all(_same_value(x, y) for x, y in zip(after[k], before[k])), k


# -- tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_reference_table_every_backend(backend):
    data = _s002(backend)
    before = _snapshot(data)

    r = sdckit.frequencies(data, keys=S002_KEYS, weight="w")
    np.testing.assert_array_equal(r.fk, F_EXPECTED)
    np.testing.assert_allclose(r.Fk, FW_EXPECTED)
    assert (r.n, r.n_patterns, r.n_sample_uniques, r.n_fk2) == (10, 7, 4, 6)

    k = sdckit.k_anonymity(data, keys=S002_KEYS, k=[2, 3, 5], weight="w")
    assert k.n_violations == {2: 4, 3: 10, 5: 10}
    assert k.n_patterns_violating == {2: 4, 3: 7, 5: 7}
    assert k.n_weighted_violations == {2: 0, 3: 0, 5: 0}

    for res in (r, k):
        out = res.to_frame()
        assert type(out) is _native_type(backend)
        got = pl.from_pandas(out) if isinstance(out, pd.DataFrame) else pl.DataFrame(out)
        assert got.height == 10
        np.testing.assert_array_equal(got.get_column("fk").to_numpy(), F_EXPECTED)
        np.testing.assert_allclose(got.get_column("Fk").to_numpy(), FW_EXPECTED)
    assert list(k.to_frame().columns if backend != "pyarrow" else k.to_frame().column_names) == [
        "fk",
        "Fk",
        "violates_2",
        "violates_3",
        "violates_5",
    ]

    _assert_unchanged(before, data)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
@pytest.mark.parametrize("backend", NA_BACKENDS)
def test_missing_values_every_backend(backend, alpha):
    data = _with_missing(backend)
    before = _snapshot(data)

    r = sdckit.frequencies(data, keys=NA_KEYS, weight="w", alpha=alpha)
    np.testing.assert_allclose(r.fk, NA_F[alpha])
    np.testing.assert_allclose(r.Fk, NA_FW[alpha])
    assert r.n_missing_per_key == {"a": 2, "a_num": 2, "b": 3, "c": 2}
    assert r.n_with_missing == 4

    k = sdckit.k_anonymity(data, keys=NA_KEYS, k=[2, 3, 5], weight="w", alpha=alpha)
    f = np.asarray(NA_F[alpha])
    assert k.n_violations == {kk: int(np.sum(f < kk)) for kk in (2, 3, 5)}
    assert type(k.to_frame()) is _native_type(backend)

    own = sdckit.frequencies(data, keys=NA_KEYS, weight="w", na_rule="own_category")
    reference = sdckit.frequencies(_with_missing("polars"), keys=NA_KEYS, weight="w", na_rule="own_category")
    np.testing.assert_array_equal(own.fk, reference.fk)
    # same partition of the records into patterns (the numbering may follow category order)
    np.testing.assert_array_equal(_first_seen(own.pattern_ids), _first_seen(reference.pattern_ids))

    _assert_unchanged(before, data)


@pytest.mark.parametrize("backend", NA_BACKENDS)
def test_user_missing_codes_every_backend(backend):
    """``missing=`` marks the same records missing whatever the backend and column type."""
    data = _with_missing(backend)
    before = _snapshot(data)
    kw = dict(allow_degenerate_keys=True)
    assert sdckit.frequencies(data, keys=["a", "b"], missing="F", **kw).n_missing_per_key == {"a": 4, "b": 3}
    assert sdckit.frequencies(data, keys=["b", "c"], missing=2, **kw).n_missing_per_key == {"b": 3, "c": 3}
    assert sdckit.frequencies(data, keys=["a_num"], missing=2.0, **kw).n_missing_per_key == {"a_num": 4}
    _assert_unchanged(before, data)


@pytest.mark.parametrize("backend", NA_BACKENDS)
def test_user_missing_codes_mixed_types(backend):
    """A missing code is compared in the column's type: 2 matches 2.0, a mixed list marks both kinds."""
    data = _with_missing(backend)
    kw = dict(allow_degenerate_keys=True)
    assert sdckit.frequencies(data, keys=["a_num"], missing=2, **kw).n_missing_per_key == {"a_num": 4}
    assert sdckit.frequencies(data, keys=["a", "c"], missing=["F", 2], **kw).n_missing_per_key == {"a": 4, "c": 3}


def test_pandas_index_is_ignored():
    """Results follow row positions, not a shuffled or duplicated pandas index."""
    df = s002_table().to_pandas()
    df.index = [7, 3, 3, 0, 9, 1, 2, 5, 4, 8]
    r = sdckit.frequencies(df, keys=S002_KEYS, weight="w")
    np.testing.assert_array_equal(r.fk, F_EXPECTED)
    out = r.to_frame()
    assert isinstance(out, pd.DataFrame) and list(out["fk"]) == F_EXPECTED


def _first_seen(ids):
    """Relabel group ids by order of first appearance (compares partitions, not numbering)."""
    _, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inv.reshape(-1)]


def test_pandas_ordered_categorical_keeps_order():
    """An ordered pandas categorical keeps its declared order (and unobserved categories)."""
    from sdckit.engines import get_engine

    df = pd.DataFrame(
        {"a": pd.Categorical(["low", "high", None, "mid"], categories=["low", "mid", "high", "top"], ordered=True)}
    )
    eng = get_engine()
    codes, labels = eng.encode_column(eng.table(df), "a")
    assert labels.to_list() == ["low", "mid", "high", "top"]
    np.testing.assert_array_equal(codes, [0, 2, -1, 1])


def test_pandas_without_pyarrow_same_results(monkeypatch):
    """pandas input when PyArrow is missing: the column-by-column fallback gives the same f, F
    as the PyArrow conversion (object, categorical, nullable Int64 and NaN columns)."""
    import narwhals as nw

    df = pd.DataFrame(
        {
            "a": ["x", "y", "x", None],
            "b": [1, 2, 1, 2],
            "c": pd.Categorical(["u", "v", "u", "v"], categories=["v", "u"]),
            "d": pd.array([1, None, 1, 2], dtype="Int64"),
            "e": [1.0, np.nan, 1.0, 2.0],
            "w": [1.0, 2, 3, 4],
        }
    )
    keys = ["a", "b", "c", "d", "e"]
    with_arrow = sdckit.frequencies(df, keys, weight="w")

    def no_arrow(self):
        raise ModuleNotFoundError("pyarrow is required for converting a pandas dataframe to Polars")

    monkeypatch.setattr(nw.DataFrame, "to_polars", no_arrow)
    without = sdckit.frequencies(df, keys, weight="w")
    np.testing.assert_array_equal(without.fk, with_arrow.fk)
    np.testing.assert_array_equal(without.Fk, with_arrow.Fk)
    # hand check (spec A.1.1, alpha = 1): records 1 and 3 share (x,1,u,1,1.0): own count 2;
    # record 2 (y,2,v,NA,NA) and record 4 (NA,2,v,2,2.0) are compatible: 1 + 1 each
    np.testing.assert_array_equal(without.fk, [2, 2, 2, 2])
    np.testing.assert_array_equal(without.Fk, [4, 6, 4, 6])


def test_to_frame_pandas_without_pyarrow(monkeypatch, s002):
    """to_frame() returns a pandas frame for pandas input even when Polars cannot convert
    through PyArrow."""
    import polars as pl

    res = sdckit.k_anonymity(s002.to_pandas(), S002_KEYS, k=[2, 3], weight="w")

    def no_arrow(self, *a, **k):
        raise ModuleNotFoundError("No module named 'pyarrow'")

    monkeypatch.setattr(pl.DataFrame, "to_pandas", no_arrow)
    out = res.to_frame()
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["fk", "Fk", "violates_2", "violates_3"]
    assert list(out["fk"]) == F_EXPECTED


def test_dict_with_mixed_integer_and_float_lists():
    """{"inc": [10, 12, 80.0]} is a float column, not an error about lengths."""
    from sdckit.engines import get_engine

    table = get_engine().table({"inc": [10, 12, 80.0], "k": ["a", "b", "a"]})
    assert table.kind("inc") == "float" and table.floats(["inc"])[:, 0].tolist() == [10.0, 12.0, 80.0]
