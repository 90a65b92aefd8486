"""Catalogue of bad and unusual inputs for ``loglinear_risk(compat="sdcMicro")`` and the
integer-key encoding it shares with every measure (issue 36).

Each case builds the caller's table from testdata2 (93 records, keys sex, water, roof, weight
sampling_weight) and is judged by properties: the input is unchanged; either an
:class:`sdckit.SdcError` whose message names the parameter or column at fault and holds no
record value, or a result whose sdcMicro numbers equal those of the same call on the plain
integer table (the oracle; shifted or relabelled keys with IPF, which treats keys as factors,
so that only the labels differ), restricted to the complete records where a key is missing.
"""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit import SdcError
from sdckit._declare import declaration

DATA = Path(__file__).parent / "data" / "sdcmicro" / "testdata2.csv"
KEYS = ["sex", "water", "roof"]


def base() -> pl.DataFrame:
    return pl.read_csv(DATA).select(KEYS + ["sampling_weight"])


def call(data, method="default", **kw):
    args = dict(weight="sampling_weight", model="sex + water + roof", compat="sdcMicro", compat_method=method)
    args.update(kw)
    args = declaration(sdckit.loglinear_risk).grouped(args)  # compat, bound, ci: in their records
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sdckit.loglinear_risk(data, KEYS, **args)


def _cast(dtype):
    return lambda d: d.with_columns(pl.col(KEYS).cast(dtype))


def _set(col, row, value):
    def build(d):
        vals = d[col].to_list()
        vals[row] = value
        return d.with_columns(pl.Series(col, vals, strict=False))

    return build


def _chunked(d):
    out = pl.concat([d.slice(0, 40), d.slice(40)], rechunk=False)
    assert out.n_chunks() == 2
    return out


# (id, build, method, extra keywords, expected): expected "ok" (numbers of the plain call, on the
# records from `skip` on) or ("error", fragments of the message)
CASES = [
    ("int8-keys", _cast(pl.Int8), "default", {}, "ok"),
    ("int32-keys", _cast(pl.Int32), "default", {}, "ok"),
    ("uint8-keys", _cast(pl.UInt8), "default", {}, "ok"),
    ("uint64-keys", _cast(pl.UInt64), "default", {}, "ok"),
    ("float-keys", _cast(pl.Float64), "default", {}, "ok"),
    ("multi-chunk", _chunked, "default", {}, "ok"),
    ("pandas", lambda d: d.to_pandas(), "default", {}, "ok"),
    ("negative-keys-ipf", lambda d: d.with_columns(pl.col(KEYS) - 1000), "IPF", {}, "ok"),
    ("uint64-near-max-ipf", lambda d: d.with_columns(pl.col(KEYS).cast(pl.UInt64) + (2**64 - 100)), "IPF", {}, "ok"),
    ("int64-near-min-ipf", lambda d: d.with_columns((pl.col(KEYS) - (2**63 - 1)) - 1), "IPF", {}, "ok"),
    ("text-keys-ipf", _cast(pl.String), "IPF", {}, "ok"),
    (
        "enum-extra-categories-ipf",
        lambda d: d.with_columns(pl.col(KEYS).cast(pl.String).cast(pl.Enum([str(i) for i in range(20)]))),
        "IPF",
        {},
        "ok",
    ),
    ("compat-lower-case", lambda d: d, "default", {"compat": "sdcmicro"}, "ok"),
    ("missing-key-value", _set("roof", 0, None), "default", {}, ("skip", 1)),
    (
        "pandas-nullable-missing",
        lambda d: _set("water", 0, None)(d).to_pandas().astype({"water": "Int64"}),
        "default",
        {},
        ("skip", 1),
    ),
    ("no-weight", lambda d: d, "default", {"weight": None}, ("error", "weight")),
    ("zero-weight", _set("sampling_weight", 3, 0.0), "default", {}, ("error", "weight", "zero")),
    ("negative-weight", _set("sampling_weight", 3, -5.0), "default", {}, ("error", "weight", "negative")),
    ("nan-weight", _set("sampling_weight", 3, float("nan")), "default", {}, ("error", "weight")),
    (
        "text-weight",
        lambda d: d.with_columns(pl.col("sampling_weight").cast(pl.String)),
        "default",
        {},
        ("error", "weight"),
    ),
    ("absent-weight", lambda d: d.drop("sampling_weight"), "default", {}, ("error", "sampling_weight")),
    ("absent-key", lambda d: d.drop("roof"), "default", {}, ("error", "roof")),
    ("ci-with-compat", lambda d: d, "default", {"ci": True}, ("error", "ci")),
    ("auto-model", lambda d: d, "default", {"model": "auto"}, ("error", "model")),
    ("ipf-non-hierarchical", lambda d: d, "IPF", {"model": "sex:roof + water"}, ("error", "IPF")),
    ("bad-method", lambda d: d, "XYZ", {}, ("error", "compat_method")),
    ("negative-bound", lambda d: d, "default", {"bound": -1}, ("error", "bound")),
    (
        "stratum-fractions",
        lambda d: d,
        "default",
        {"sampling_fraction": {"sex": {"1": 0.1, "2": 0.1}}},
        ("error", "sampling_fraction"),
    ),
    (
        "every-key-missing",
        lambda d: d.with_columns(pl.lit(None, pl.Int64).alias("roof")),
        "default",
        {},
        ("error", "roof"),
    ),
    ("single-category", lambda d: d.with_columns(pl.lit(1).alias("roof")), "default", {}, ("error", "roof")),
]


def _snapshot(data):
    return data.clone() if isinstance(data, pl.DataFrame) else copy.deepcopy(data)


def _same(a, b) -> bool:
    if isinstance(a, pl.DataFrame):
        return a.equals(b, null_equal=True) and a.schema == b.schema
    return a.equals(b) and list(a.dtypes) == list(b.dtypes)


@pytest.mark.parametrize("build, method, kw, expected", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_loglinear_compat_bad_input(build, method, kw, expected):
    data = build(base())
    before = _snapshot(data)
    if isinstance(expected, tuple) and expected[0] == "error":
        with pytest.raises(SdcError) as err:
            call(data, method, **kw)
        msg = str(err.value)
        for frag in expected[1:]:
            assert frag in msg, msg
        weights = {repr(float(v)) for v in base()["sampling_weight"].to_list()}
        assert not any(w in msg for w in weights), msg  # no record value in the message
    else:
        skip = expected[1] if isinstance(expected, tuple) else 0
        plain = base().slice(skip)
        ref = call(plain, method)
        got = call(data, method, **kw)
        assert got.modrisk["n_kept_cells"] == ref.modrisk["n_kept_cells"]
        assert got.modrisk["gr1"] == pytest.approx(ref.modrisk["gr1"], rel=1e-9)
        assert got.modrisk["gr2"] == pytest.approx(ref.modrisk["gr2"], rel=1e-9)
        assert got.n_excluded == skip and np.isnan(got.lam[:skip]).all()
        np.testing.assert_allclose(got.lam[skip:], ref.lam, rtol=1e-9)
        np.testing.assert_array_equal(got.fk[skip:], ref.fk)
    assert _same(data, before)  # the caller's table is unchanged
