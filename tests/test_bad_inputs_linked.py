"""Catalogue of bad and unusual ``linked=`` specifications (linked "ghost" variables), judged by
properties:

* the caller's input is unchanged (compared with a copy taken before the call);
* either the call ends in an :class:`sdckit.SdcError` whose message holds the expected fragments
  (the parameter and the column at fault) and no record value,
* or it succeeds, returns the caller's frame type with the same rows and columns, and every
  linked variable is missing wherever one of its keys is missing (the rule of sdcMicro's ghost
  variables), the other cells of the linked variable keeping their value unless a key changed.

The expected outcome of every case is written down (``OK`` or the error's fragments).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from sdckit import SdcError
from sdckit.protect._linked import keep_links

OK = "ok"
N = 12


def base() -> pl.DataFrame:
    i = np.arange(N)
    return pl.DataFrame(
        {
            "region": [f"Reg{v}" for v in i % 3],
            "district": [f"Dist{v}" for v in i % 6],
            "sex": [f"Sx{v}" for v in i % 2],
            "prov": [f"Prov{v}" for v in i % 3],
            "town": [f"Town{v}" for v in i % 6],
            "x": 100.5 + 7.25 * i,
            "w": 10.0 + (i % 4),
            "hh": (i // 2 + 1).astype(np.int64),
        }
    )


def record_values(fr: pl.DataFrame) -> set[str]:
    return {v for c in ("region", "district", "sex", "prov", "town") for v in fr[c].drop_nulls().to_list()}


KEYS = ["region", "district", "sex"]


def scenario(linked, **roles) -> sdckit.Scenario:
    return sdckit.Scenario(keys=roles.pop("keys", KEYS), linked=linked, **roles)


def problem(data, sc, **apply):
    return sdckit.SdcProblem(data, sc, k=(2,)).apply("local_suppression", k=2, **apply)


def _missing_in_region() -> pl.DataFrame:
    return base().with_columns(region=pl.when(pl.int_range(N) % 5 == 0).then(None).otherwise(pl.col("region")))


def _with(fr, **cols) -> pl.DataFrame:
    return fr.with_columns(**{c: pl.Series(v, strict=False) for c, v in cols.items()})


# (build the input, run the call, the expected outcome)
CASES = [
    # -- the spec itself ------------------------------------------------------------------------
    pytest.param(base, lambda d: scenario({"prov": "nope"}), ["linked:", "'nope'", "not a key"], id="key-unknown"),
    pytest.param(
        base, lambda d: scenario({"region": "region"}), ["linked:", "'region'", "also a key"], id="key-linked-to-itself"
    ),
    pytest.param(base, lambda d: scenario({"sex": "region"}), ["linked:", "'sex'", "also a key"], id="linked-is-a-key"),
    pytest.param(
        base, lambda d: scenario({"region": "sex", "sex": "region"}), ["linked:", "also a key"], id="cycle-between-keys"
    ),
    pytest.param(
        base,
        lambda d: scenario({"prov": "town", "town": "prov"}),
        ["linked:", "'town'", "not a key"],
        id="cycle-between-linked",
    ),
    pytest.param(
        base,
        lambda d: scenario({"town": "prov", "prov": "region"}),
        ["linked:", "'town'", "'prov'", "not a key"],
        id="linked-to-a-linked-variable",
    ),
    pytest.param(
        base,
        lambda d: scenario({"prov": ["region", "nope"]}),
        ["linked:", "'nope'", "not a key"],
        id="two-keys-one-unknown",
    ),
    pytest.param(
        base,
        lambda d: scenario({"prov": ["region", "prov"]}),
        ["linked:", "'prov' is linked to 'prov'", "not a key"],
        id="two-keys-one-itself",
    ),
    pytest.param(base, lambda d: scenario({"prov": []}), ["linked:", "'prov'", "empty list"], id="empty-list-of-keys"),
    pytest.param(
        base, lambda d: scenario({"prov": ["region", "region"]}), ["linked:", "'region'", "twice"], id="key-twice"
    ),
    pytest.param(
        base, lambda d: scenario({"prov": [["region"]]}), ["linked:", "expected a single column name"], id="nested-list"
    ),
    pytest.param(base, lambda d: scenario({"prov": None}), ["linked:", "expected a column name"], id="key-none"),
    pytest.param(base, lambda d: scenario({"prov": 2.5}), ["linked:", "expected a column name"], id="key-a-float"),
    pytest.param(base, lambda d: scenario({True: "region"}), ["linked:", "expected a column name"], id="linked-a-bool"),
    pytest.param(base, lambda d: scenario({"prov": 3}), ["linked:", "'3'", "not a key"], id="key-an-int-position"),
    pytest.param(base, lambda d: scenario(["prov"]), ["linked: got list", "expected a mapping"], id="a-list"),
    pytest.param(base, lambda d: scenario("prov"), ["linked: got str", "expected a mapping"], id="a-text"),
    pytest.param(
        base,
        lambda d: scenario({"x": "region"}, numeric_keys=["x"]),
        ["linked:", "'x'", "also a key"],
        id="linked-is-a-numeric-key",
    ),
    pytest.param(
        base,
        lambda d: scenario({"w": "region"}, weight="w"),
        ["linked:", "'w'", "also the weight"],
        id="linked-is-the-weight",
    ),
    pytest.param(
        base,
        lambda d: scenario({"hh": "region"}, household="hh"),
        ["linked:", "'hh'", "also the household"],
        id="linked-is-the-household",
    ),
    pytest.param(
        base,
        lambda d: scenario({"town": "region"}, strata=["town"]),
        ["linked:", "'town'", "also in strata"],
        id="linked-is-a-stratum",
    ),
    pytest.param(
        base,
        lambda d: scenario({"town": "region"}, sensitive=["town"]),
        ["linked:", "'town'", "also in sensitive"],
        id="linked-is-sensitive",
    ),
    pytest.param(
        base,
        lambda d: scenario({"town": "region"}, direct_identifiers=["town"]),
        ["linked:", "'town'", "also in direct_identifiers"],
        id="linked-is-a-direct-identifier",
    ),
    # -- against the data -----------------------------------------------------------------------
    pytest.param(
        base,
        lambda d: problem(d, scenario({"nope": "region"})),
        ["linked:", "nope", "not found"],
        id="linked-column-absent",
    ),
    pytest.param(
        base,
        lambda d: sdckit.SdcProblem.from_recipe(
            d, {"sdckit_recipe": 1, "scenario": {"keys": KEYS, "linked": {"prov": ["region", "nope"]}}, "steps": []}
        ),
        ["linked:", "'nope'", "not a key"],
        id="recipe-two-keys-one-unknown",
    ),
    pytest.param(
        base,
        lambda d: keep_links(d, sdckit.local_suppression(d, KEYS, k=2), ["prov"]),
        ["linked: got list"],
        id="keep-links-a-list",
    ),
    pytest.param(
        base,
        lambda d: keep_links(d, sdckit.local_suppression(d, KEYS, k=2), {"prov": "absent"}),
        ["linked:", "absent"],
        id="keep-links-key-absent",
    ),
    # -- unusual but valid: the rule holds ------------------------------------------------------
    pytest.param(
        base, lambda d: problem(d, scenario({"prov": ["region", "district"], "town": "district"})), OK, id="two-keys"
    ),
    pytest.param(
        _missing_in_region, lambda d: problem(d, scenario({"prov": "region"})), OK, id="key-missing-in-the-input"
    ),
    pytest.param(
        lambda: _with(base(), prov=[None] * N),
        lambda d: problem(d, scenario({"prov": "region"})),
        OK,
        id="linked-all-missing",
    ),
    pytest.param(
        lambda: _with(base(), region=[None] * N),
        lambda d: problem(d, scenario({"prov": "region"})),
        ["keys:", "region", "missing for every record"],
        id="key-all-missing",
    ),
    pytest.param(
        lambda: _with(base(), prov=[float(v) if v % 4 else float("nan") for v in range(N)]),
        lambda d: problem(d, scenario({"prov": "region"})),
        OK,
        id="linked-float-with-nan",
    ),
    pytest.param(
        lambda: base().to_pandas(),
        lambda d: problem(d, scenario({"prov": ["region", "sex"]})),
        OK,
        id="pandas-two-keys",
    ),
    pytest.param(
        lambda: base().to_pandas().astype({"prov": "category"}),
        lambda d: problem(d, scenario({"prov": "region"})),
        OK,
        id="pandas-categorical-linked",
    ),
    pytest.param(base, lambda d: problem(d, scenario({"prov": ("region",)})), OK, id="a-tuple-of-one-key"),
]


def _frame(data) -> pl.DataFrame:
    return pl.from_pandas(data) if isinstance(data, pd.DataFrame) else data


def _check_rule(data, result, linked):
    """Every linked variable is missing wherever one of its keys is; the rows and columns stay."""
    out = _frame(result.data)
    src = _frame(data)
    assert type(result.data) is type(data) and out.columns == src.columns and out.height == src.height
    for ghost, keys in linked.items():
        keys = (keys,) if isinstance(keys, str) else keys
        ghost_missing = out[ghost].is_null() | (out[ghost].is_nan() if out[ghost].dtype.is_float() else False)
        for key in keys:
            assert (ghost_missing | ~out[key].is_null()).all(), (ghost, key)
        untouched = ~np.any([out[k].is_null().to_numpy() for k in keys], axis=0)
        same = out[ghost].filter(untouched).to_list() == src[ghost].filter(untouched).to_list()
        assert same or src[ghost].dtype.is_float(), ghost  # NaN != NaN in a list compare


@pytest.mark.parametrize("build, call, expected", CASES)
def test_bad_linked_input(build, call, expected):
    data = build()
    copy = data.copy(deep=True) if isinstance(data, pd.DataFrame) else data.clone()
    started = time.perf_counter()
    if expected == OK:
        res = call(data)
        _check_rule(data, res.history[-1].result if hasattr(res, "history") else res, res.scenario.linked)
    else:
        with pytest.raises(SdcError) as err:
            call(data)
        msg = str(err.value)
        for fragment in expected:
            assert fragment in msg, (fragment, msg)
        leaked = {v for v in record_values(_frame(copy)) if v in msg}
        assert not leaked, msg
    assert time.perf_counter() - started < 120  # generous: small inputs, never a hang
    if isinstance(data, pd.DataFrame):
        pd.testing.assert_frame_equal(data, copy)
    else:
        assert data.equals(copy)
