"""Catalogue of bad and unusual inputs for the protection search (``sdckit.search``): infinite
and missing values in numeric keys, lattices too large to search, limits at their edges,
linked variables, in both frame types and on the command line.

Every case is judged by properties:

* the caller's input is unchanged (compared with a copy taken before the call);
* the call returns within a bound (60 s; the limits are judged by what the result says, never
  by a tight clock);
* either it ends in an :class:`sdckit.SdcError` whose message holds every expected fragment
  (the column or parameter at fault) and no record value,
* or it returns a result whose ``protected`` file is the caller's frame type, meets the target
  measured afresh, is its recipe replayed cell by cell, and loses no key value whose linked
  variable keeps it.

The expected outcome of every case is written down (``ok``, ``ok-stopped`` for a best effort
that says which limit stopped it, or the error's fragments).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from sdckit import SdcError

N = 60
#: a generous bound on one call (a limit is judged by the result, not by this clock)
BOUND_S = 60.0


def base() -> pl.DataFrame:
    """x: a numeric key (one decimal), s and r: nominal keys, p: linked to r (a function of it),
    w: a weight, u: a column no search touches."""
    i = np.arange(N)
    return pl.DataFrame(
        {
            "x": np.round(10.0 + 7.3 * ((i * 11) % 17), 1),
            "s": [f"Sex{v}" for v in i % 2],
            "r": [f"Reg{v}" for v in (i * 7 % 5)],
            "p": [f"Prov{v}" for v in (i * 7 % 5)],
            "w": 10.0 + (i % 5),
            "u": [f"Unote{j:03d}" for j in i],
        }
    )


def record_values(fr: pl.DataFrame) -> set[str]:
    """Labels and numbers that must never appear in a message."""
    out = {v for c in ("s", "r", "p", "u") for v in fr[c].drop_nulls().to_list()}
    out |= {repr(float(v)) for v in fr["x"].drop_nulls().to_list() if math.isfinite(v)}
    return out


def _set(col: str, rows: list[int], value):
    def build(d: pl.DataFrame) -> pl.DataFrame:
        hit = pl.int_range(pl.len()).is_in(rows)
        return d.with_columns(pl.when(hit).then(pl.lit(value)).otherwise(pl.col(col)).alias(col))

    return build


def _many_values(rows: list[int], value):
    """x with a value of its own in every record (more than 20 values: a float key measured as
    a number by default), ``value`` in ``rows``."""

    def build(d: pl.DataFrame) -> pl.DataFrame:
        return _set("x", rows, value)(d.with_columns(x=10.0 + 0.5 * pl.int_range(pl.len())))

    return build


def _wide(m: int, levels: int = 3):
    """m keys of ``levels`` categories (automatic nominal hierarchies of height 2 for 3)."""

    def build(d: pl.DataFrame) -> pl.DataFrame:
        rng = np.random.default_rng(0)
        cats = [f"C{j}" for j in range(levels)]
        return pl.DataFrame({f"k{j}": rng.choice(cats, 300) for j in range(m)})

    return build


def _numeric_wide(m: int, high: float):
    def build(d: pl.DataFrame) -> pl.DataFrame:
        rng = np.random.default_rng(1)
        return pl.DataFrame({f"x{j}": np.round(rng.uniform(0, high, 300)) for j in range(m)})

    return build


def same(d):
    return d


def pandas(build):
    return lambda d: build(d).to_pandas()


K = {"target": {"k": 2}, "suppression_limit": 0.1}
#: without suppression (local suppression of 13 nearly unique keys takes seconds per candidate)
K0 = {"target": {"k": 2}}
NUM = {"keys": ["x", "s"], "scales": {"x": "numeric"}}
WIDE13 = {"keys": [f"k{j}" for j in range(13)]}
WIDE14 = {"keys": [f"k{j}" for j in range(14)]}
NUM9 = {"keys": [f"x{j}" for j in range(9)], "scales": {f"x{j}": "numeric" for j in range(9)}}
INF = float("inf")
#: t-closeness of s (Sex0 / Sex1) with keys r and x; of u (a label per record) with keys r and s
TS = {"keys": ["r", "x"], "sensitive": ["s"]}
TU = {"keys": ["r", "s"], "sensitive": ["u"]}
T_HIER = {"t": 0.2, "t_distance": "hierarchical"}
S_TREE = [["Sex0", "*"], ["Sex1", "*"]]

CASES = [
    # -- infinite and missing values in a numeric key ------------------------------------------
    pytest.param(_set("x", [3], INF), NUM, K, ("scenario", "key x", "1 infinite", "nominal"), id="inf"),
    pytest.param(_set("x", [3], -INF), NUM, K, ("key x", "1 infinite"), id="minus-inf"),
    pytest.param(_set("x", [3, 9], INF), NUM, K, ("key x", "2 infinite"), id="two-inf"),
    pytest.param(_set("x", list(range(N)), INF), NUM, K, ("keys", "x", "single category"), id="all-inf"),
    pytest.param(pandas(_set("x", [3], INF)), NUM, K, ("key x", "1 infinite"), id="inf-pandas"),
    pytest.param(
        _many_values([3], INF), {"keys": ["x", "s"]}, K, ("key x", "1 infinite"), id="inf-float-key-default-scale"
    ),
    # a float-coded key with few values is a key of categories (as stored integer codes are): inf one of them
    pytest.param(_set("x", [3], INF), {"keys": ["x", "s"]}, K, "ok", id="inf-float-key-few-values"),
    pytest.param(
        _set("x", [3], INF),
        NUM,
        {**K, "objective": "arx", "suppression": "records"},
        ("key x", "1 infinite"),
        id="inf-arx-model",
    ),
    pytest.param(
        _set("x", [3], INF),
        NUM,
        {**K, "hierarchies": {"s": [["Sex0", "*"], ["Sex1", "*"]]}},
        ("key x", "1 infinite"),
        id="inf-with-other-hierarchy",
    ),
    pytest.param(_set("x", [3], INF), {"keys": ["x", "s"], "scales": {"x": "nominal"}}, K, "ok", id="inf-nominal"),
    pytest.param(_set("x", [3], INF), {"keys": ["r", "s"]}, K, "ok", id="inf-in-a-non-key"),
    pytest.param(_set("x", [3, 4], float("nan")), NUM, K, "ok", id="nan-is-missing"),
    pytest.param(_set("x", [3, 4], None), NUM, K, "ok", id="null-is-missing"),
    pytest.param(pandas(_set("x", [3], float("nan"))), NUM, K, "ok", id="nan-pandas"),
    pytest.param(
        _set("x", list(range(N)), float("nan")), NUM, K, ("keys", "x", "missing for every record"), id="all-nan"
    ),
    pytest.param(
        _set("w", [2], INF),
        {"keys": ["r", "s"], "weight": "w"},
        {"target": {"max_global_risk": 0.05}, "suppression_limit": 0.1},
        ("weight", "w", "1 infinite"),
        id="inf-weight",
    ),
    # -- lattices too large, limits at their edges ---------------------------------------------
    pytest.param(_wide(14), WIDE14, {**K, "max_candidates": 1}, ("4,782,969 nodes", "at most 2,000,000"), id="14-keys"),
    pytest.param(
        _wide(14),
        WIDE14,
        {**K, "objective": "arx", "suppression": "records", "time_limit": 1},
        ("4,782,969 nodes", "fewer keys"),
        id="14-keys-arx",
    ),
    pytest.param(_numeric_wide(9, 1000), NUM9, {**K, "max_candidates": 1}, ("9 keys", "nodes"), id="9-numeric-keys"),
    pytest.param(_wide(13), WIDE13, {**K0, "max_candidates": 1}, "ok-stopped", id="13-keys-one-candidate"),
    pytest.param(_wide(13), WIDE13, {**K0, "time_limit": 0.5}, "ok-stopped", id="13-keys-time-limit"),
    pytest.param(_numeric_wide(9, 3), NUM9, {**K0, "max_candidates": 2}, "ok-stopped", id="9-numeric-small"),
    pytest.param(same, NUM, {**K, "time_limit": 0}, "ok-stopped", id="time-limit-0"),
    pytest.param(same, NUM, {**K, "max_candidates": 0}, ("max_candidates", "0"), id="max-candidates-0"),
    pytest.param(same, NUM, {**K, "max_candidates": -1}, ("max_candidates", "-1"), id="max-candidates-negative"),
    pytest.param(same, NUM, {**K, "max_candidates": 1.5}, ("max_candidates", "1.5"), id="max-candidates-fraction"),
    pytest.param(same, NUM, {**K, "max_candidates": True}, ("max_candidates", "True"), id="max-candidates-bool"),
    pytest.param(same, NUM, {**K, "time_limit": -1}, ("time_limit", "-1"), id="time-limit-negative"),
    pytest.param(same, NUM, {**K, "time_limit": float("nan")}, ("time_limit", "nan"), id="time-limit-nan"),
    pytest.param(same, NUM, {**K, "time_limit": "soon"}, ("time_limit", "'soon'"), id="time-limit-text"),
    pytest.param(same, NUM, {**K, "exhaustive": "yes"}, ("exhaustive", "'yes'"), id="exhaustive-text"),
    # -- targets no node can meet, l-diversity's c, the lattice's size --------------------------
    pytest.param(same, NUM, {"target": {"k": N + 1}}, ("target['k']", "larger than the"), id="k-above-records"),
    pytest.param(
        same, TS, {"target": {"l": 3, "k": 2}}, ("target['l']", "above the 2 categories"), id="l-above-categories"
    ),
    pytest.param(same, TS, {"target": {"l": 2, "diversity": "recursive", "c": 0}}, ("target['c']", "got 0"), id="c-0"),
    pytest.param(
        same, TS, {"target": {"l": 2, "diversity": "recursive", "c": -1}}, ("target['c']", "got -1"), id="c-negative"
    ),
    pytest.param(same, NUM, {**K, "max_lattice_size": 2}, ("max_lattice_size", "nodes"), id="lattice-above-max"),
    pytest.param(same, NUM, {**K, "max_lattice_size": 0}, ("max_lattice_size", "got 0"), id="max-lattice-size-0"),
    pytest.param(same, NUM, {**K, "max_lattice_size": 10**7}, "ok", id="max-lattice-size-raised"),
    # -- t-closeness ---------------------------------------------------------------------------
    pytest.param(same, TS, {"target": {"t": 0}}, ("target['t']", "got 0", "(0, 1]"), id="t-0"),
    pytest.param(same, TS, {"target": {"t": 1.5}}, ("target['t']", "got 1.5", "(0, 1]"), id="t-above-1"),
    pytest.param(same, TS, {"target": {"t": -0.2}}, ("target['t']", "got -0.2"), id="t-negative"),
    pytest.param(same, TS, {"target": {"t": "small"}}, ("target['t']", "'small'"), id="t-text"),
    pytest.param(same, {"keys": ["r", "x"]}, {"target": {"t": 0.3}}, ("target['sensitive']",), id="t-no-sensitive"),
    pytest.param(
        same, TS, {"target": {"t": 0.3, "t_distance": "manhattan"}}, ("target['t_distance']",), id="t-distance-bad"
    ),
    pytest.param(
        same,
        TS,
        {"target": {"k": 2, "t_distance": "equal"}},
        ("target['t_distance']", "without t"),
        id="t-distance-alone",
    ),
    pytest.param(
        same, TS, {"target": T_HIER}, ("hierarchies", "sensitive variable s", "hierarchies['s']"), id="t-hier-none"
    ),
    pytest.param(
        same,
        TS,
        {"target": T_HIER, "hierarchies": {"s": [["Sex0", "*"]]}},
        ("hierarchies[s]", "1 categor", "not in the hierarchy"),
        id="t-hier-uncovered",
    ),
    pytest.param(
        same,
        TU,
        {"target": {**T_HIER, "sensitive": "u"}, "hierarchies": {"u": [[f"Unote{j:03d}", "*"] for j in range(1, N)]}},
        ("hierarchies[u]", "1 categor", "not in the hierarchy"),
        id="t-hier-uncovered-rare-label",
    ),
    pytest.param(
        same,
        TS,
        {"target": T_HIER, "hierarchies": {"s": [["Sex0", "A"], ["Sex1", "B"]]}},
        ("hierarchies['s']", "top level holds several values"),
        id="t-hier-two-tops",
    ),
    pytest.param(
        same,
        TS,
        {"target": T_HIER, "hierarchies": {"s": [["Sex0", "A", "*"], ["Sex1", "*"]]}},
        ("hierarchies['s']", "rows of different lengths"),
        id="t-hier-ragged",
    ),
    pytest.param(
        same,
        TS,
        {"target": {"t": 0.3}, "hierarchies": {"s": S_TREE}},
        "ok",  # ARX's projects give one hierarchy per column: the sensitive variable's is accepted
        id="t-equal-with-sensitive-hierarchy",
    ),
    pytest.param(same, TS, {"target": {"t": 0.05, "k": 2}, "suppression_limit": 0.1}, "ok", id="t-cells"),
    pytest.param(
        same,
        TS,
        {"target": {"t": 0.05}, "suppression_limit": 0.1, "suppression": "records", "objective": "arx"},
        "ok",
        id="t-records",
    ),
    pytest.param(
        pandas(same),
        TS,
        {
            "target": T_HIER,
            "hierarchies": {"s": S_TREE},
            "suppression_limit": 0.1,
            "suppression": "records",
            "objective": "arx",
        },
        "ok",
        id="t-hier-records-pandas",
    ),  # fmt: skip
    # -- linked variables ----------------------------------------------------------------------
    pytest.param(
        same,
        {"keys": ["r", "s", "x"], "linked": {"p": "r"}},
        {"target": {"k": 3}, "suppression_limit": 0.05},
        "ok",
        id="linked",
    ),
    pytest.param(
        same,
        {"keys": ["r", "s", "x"], "linked": {"p": "r", "u": "x"}},
        {"target": {"k": 3}, "suppression_limit": 0.1, "suppression": "records"},
        "ok",
        id="linked-records",
    ),
    pytest.param(
        pandas(same),
        {"keys": ["r", "s", "x"], "linked": {"p": "r"}, "weight": "w"},
        {"target": {"max_global_risk": 0.05}, "suppression_limit": 0.1},
        "ok",
        id="linked-risk-pandas",
    ),
    pytest.param(
        same, {"keys": ["r", "s"], "linked": {"nope": "r"}}, K, ("linked", "nope", "not found"), id="link-absent"
    ),
    pytest.param(
        same, {"keys": ["r", "s"], "linked": {"p": "x"}}, K, ("linked", "'p'", "not a key"), id="link-non-key"
    ),
    pytest.param(
        same, {"keys": ["r", "s"], "linked": {"s": "r"}}, K, ("linked", "'s'", "also a key"), id="link-is-key"
    ),
]


def _copy(data):
    return data.copy(deep=True) if isinstance(data, pd.DataFrame) else data.clone()


def _equal(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return a.equals(b) and list(a.dtypes) == list(b.dtypes)
    return a.equals(b) and a.schema == b.schema


def _meets(res, keys) -> None:
    protected = res.protected if isinstance(res.protected, pl.DataFrame) else pl.from_pandas(res.protected)
    if "k" in res.target:
        ka = sdckit.k_anonymity(protected, keys, k=[res.target["k"]], allow_degenerate_keys=True)
        assert ka.n_violations[res.target["k"]] == 0


def _links_hold(original, protected, links: dict) -> None:
    o = original if isinstance(original, pl.DataFrame) else pl.from_pandas(original)
    p = protected if isinstance(protected, pl.DataFrame) else pl.from_pandas(protected)
    for ghost, key in links.items():
        lost = o[key].is_not_null() & p[key].is_null()
        assert p.filter(lost)[ghost].null_count() == int(lost.sum())


@pytest.mark.parametrize(("build", "roles", "options", "expected"), CASES)
def test_case(build, roles, options, expected):
    data = build(base())
    before = _copy(data)
    t0 = time.perf_counter()
    try:
        sc = sdckit.Scenario(**roles)
        res = sdckit.search(data, sc, progress=False, **options)
    except SdcError as exc:
        msg = str(exc)
        assert expected not in ("ok", "ok-stopped"), f"refused: {msg}"
        for fragment in expected:
            assert fragment in msg, f"{fragment!r} not in {msg!r}"
        leaked = [v for v in record_values(base()) if v in msg]
        assert not leaked, f"record values in the message: {len(leaked)}"
    else:
        assert expected in ("ok", "ok-stopped"), f"expected an error with {expected}"
        if expected == "ok-stopped":
            assert not res.optimal and res.stopped
            if "max_candidates" in options:
                assert res.n_checked <= options["max_candidates"] and "candidate limit" in res.stopped
            if "time_limit" in options:
                assert "time limit" in res.stopped and res.n_checked < res.n_candidates
        else:
            assert res.found and res.optimal
        if res.found:
            assert type(res.protected) is type(data)
            _meets(res, list(sc.keys))
            assert _equal(res.protected, sdckit.SdcProblem.from_recipe(data, res.recipe).data)
            _links_hold(data, res.protected, dict(sc.linked))
    assert time.perf_counter() - t0 < BOUND_S
    assert _equal(data, before)  # the input is not modified


def test_nan_is_missing_in_a_numeric_key():
    """A NaN in a numeric key is a missing value: not cut into an interval, kept missing in the
    protected file, and it matches any value in k-anonymity."""
    d = _set("x", [3, 4], float("nan"))(base())
    res = sdckit.search(d, sdckit.Scenario(**NUM), progress=False, **K)
    assert res.found
    x = res.protected["x"].cast(pl.String, strict=False) if res.levels["x"] else res.protected["x"]
    for row in (3, 4):
        value = x[row]
        assert value is None or (isinstance(value, float) and math.isnan(value))
    # the observed values alone are cut: no interval names NaN
    assert not any("nan" in str(v) for v in x.drop_nulls().to_list() if not isinstance(v, float))
    assert res.suppressed_cells == 0 or res.suppressed_cells <= 0.1 * N * 2


def test_cli_infinite_key(tmp_path, capsys):
    from sdckit.cli import main

    path = tmp_path / "inf.csv"
    _many_values([3], INF)(base()).write_csv(path)
    rc = main(["search", str(path), "--keys", "x,s", "--k", "2", "--suppression-limit", "0.1"])
    err = capsys.readouterr().err
    assert rc != 0 and "key x holds 1 infinite value(s)" in err and "Traceback" not in err


def test_cli_lattice_too_large(tmp_path, capsys):
    from sdckit.cli import main

    path = tmp_path / "wide.csv"
    _wide(14)(base()).write_csv(path)
    keys = ",".join(f"k{j}" for j in range(14))
    rc = main(["search", str(path), "--keys", keys, "--k", "2", "--max-candidates", "1"])
    err = capsys.readouterr().err
    assert rc != 0 and "4,782,969 nodes" in err and "Traceback" not in err


def test_cli_sensitive_is_one_variable(tmp_path, capsys):
    """--sensitive is the role's option (a comma-separated list); the search's target takes one."""
    from sdckit.cli import main

    path = tmp_path / "base.csv"
    base().write_csv(path)
    rc = main(["search", str(path), "--keys", "x", "--l", "2", "--sensitive", "s,x"])
    err = capsys.readouterr().err
    assert rc != 0 and "--sensitive: got 2 variables; expected one" in err and "Traceback" not in err


def test_catalogue_size():
    assert len(CASES) >= 30
