"""Catalogue of bad and unusual inputs for the protection methods and the workflow.

Every case is {method} x {input kind} or {method} x {bad parameter}, judged by properties:

* the caller's input is unchanged (compared with a deep copy taken before the call);
* either the call ends in an :class:`sdckit.SdcError` whose message names the column or
  parameter at fault and holds no record value,
* or it returns the caller's frame type with the same rows (and pandas index), the same column
  labels in the same order, every column the method does not change identical in label, type
  and values, the cells it keeps identical in value and Python type, and the method's target
  met (k-anonymity after local suppression, the recoding map applied, values capped, ...),
  each checked here by brute force.

The expected outcome of every case is written down (``ok`` or the error's fragments), so a
case that starts failing, or starts passing where it must be refused, is caught.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import sdckit
from sdckit import SdcError
from sdckit import protect as P

N = 24
ROLES = ("k1", "k2", "x", "y", "hh", "geo", "w", "u")
K = 2  # k of local suppression
THRESHOLD = 0.3  # risk threshold of suppress_by_risk
CAP = 1400.0  # top-coding value


# ----------------------------------------------------------------------------------------------
# the data: roles k1, k2 (categorical keys), x, y (continuous), hh (household), geo (region,
# constant within a household), w (weight), u (a column no method touches)
# ----------------------------------------------------------------------------------------------
def base() -> pl.DataFrame:
    i = np.arange(N)
    return pl.DataFrame(
        {
            "k1": [f"Ka{v}" for v in (i * 7 % 3)],
            "k2": [f"Kb{v}" for v in (i * 5 % 4)],
            "x": 1000.25 + 37.5 * ((i * 11) % N),
            "y": 2000.125 + 13.75 * ((i * 5) % N),
            "hh": (i // 2 + 101).astype(np.int64),
            "geo": [f"G{(h % 4) + 1}" for h in i // 2],
            "w": 10.0 + (i % 5),
            "u": [f"Unote{j:03d}" for j in i],
        }
    )


#: record values that must never appear in a message (distinctive labels and numbers)
def record_values(fr: pl.DataFrame) -> set[str]:
    out = set()
    for c in ("k1", "k2", "u"):
        if c in fr.columns and fr.schema[c] == pl.String:
            out |= {v for v in fr[c].drop_nulls().to_list() if len(v) >= 3}
    for c in ("x", "y"):
        if c in fr.columns and fr.schema[c].is_float():
            out |= {repr(float(v)) for v in fr[c].drop_nulls().to_list() if math.isfinite(v) and v != 0}
    return out


class Kind:
    """An input kind: how to build the caller's table from the base frame, and the label of
    each role in it."""

    def __init__(self, name, build, labels=None, error=None):
        self.name, self.build, self.error = name, build, error
        self.labels = {r: r for r in ROLES} | (labels or {})


def _pd(fr: pl.DataFrame, **casts):
    df = fr.to_pandas()
    for c, f in casts.items():
        df[c] = f(df[c])
    return df


def _missing(fr: pl.DataFrame) -> pl.DataFrame:
    rows = pl.Series([i in (1, 6, 13) for i in range(fr.height)])
    return fr.with_columns([pl.when(rows).then(None).otherwise(pl.col(c)).alias(c) for c in ("k1", "k2", "x", "y")])


def _set(fr: pl.DataFrame, col: str, values) -> pl.DataFrame:
    return fr.with_columns(pl.Series(col, values, strict=False))


MIXED = [1, "1", 2.5, "a"] * (N // 4)


def _renamed(df: pd.DataFrame, mapping: dict) -> pd.DataFrame:
    df = df.copy()
    df.columns = [mapping.get(c, c) for c in df.columns]
    return df


def _dup_arrow(fr: pl.DataFrame):
    t = fr.to_arrow()
    return pa.Table.from_arrays(t.columns, names=[("k2" if n == "u" else n) for n in t.column_names])


INT_NAMES = {r: i for i, r in enumerate(ROLES)}

KINDS = [
    Kind("pandas", lambda fr: fr.to_pandas()),
    Kind("polars", lambda fr: fr),
    Kind("pyarrow", lambda fr: fr.to_arrow()),
    Kind("pandas-int-names", lambda fr: _renamed(fr.to_pandas(), INT_NAMES), labels=INT_NAMES),
    Kind("pandas-empty-name-untouched", lambda fr: _renamed(fr.to_pandas(), {"u": ""}), labels={"u": ""}),
    Kind("pandas-empty-name-key", lambda fr: _renamed(fr.to_pandas(), {"k1": ""}), labels={"k1": ""}),
    Kind("pandas-empty-name-number", lambda fr: _renamed(fr.to_pandas(), {"x": ""}), labels={"x": ""}),
    Kind("pandas-object-untouched", lambda fr: _pd(fr, u=lambda s: s.astype(object))),
    Kind(
        "pandas-object-keys",
        lambda fr: _pd(
            fr, k1=lambda s: s.astype(object), k2=lambda s: s.astype(object), geo=lambda s: s.astype(object)
        ),
    ),
    Kind(
        "pandas-object-int-keys",
        lambda fr: _pd(fr, k1=lambda s: s.str[2:].astype(int).astype(object), k2=lambda s: s.str[2:].astype(int)),
    ),
    Kind(
        "pandas-categorical-keys",
        lambda fr: _pd(fr, k1=lambda s: s.astype("category"), k2=lambda s: s.astype("category")),
    ),
    Kind(
        "pandas-ordered-key",
        lambda fr: _pd(fr, k1=lambda s: pd.Categorical(s, categories=["Ka2", "Ka0", "Ka1"], ordered=True)),
    ),
    Kind("pandas-bool-untouched", lambda fr: _pd(fr, u=lambda s: s.str[-1].astype(int) % 2 == 0)),
    Kind("pandas-bool-key", lambda fr: _pd(fr, k2=lambda s: s.isin(["Kb0", "Kb1"]))),
    Kind(
        "pandas-int-keys",
        lambda fr: _pd(fr, k1=lambda s: s.str[2:].astype(int), k2=lambda s: s.str[2:].astype(int)),
    ),
    Kind(
        "pandas-nullable-int-untouched",
        lambda fr: _pd(fr, u=lambda s: pd.array([None if j % 5 == 0 else j for j in range(N)], dtype="Int64")),
    ),
    Kind("pandas-datetime-untouched", lambda fr: _pd(fr, u=lambda s: pd.date_range("2020-01-01", periods=N))),
    Kind(
        "pandas-string-dtype",
        lambda fr: _pd(
            fr, k1=lambda s: s.astype(pd.StringDtype("python")), u=lambda s: s.astype(pd.StringDtype("python"))
        ),
    ),
    Kind("pandas-mixed-untouched", lambda fr: _pd(fr, u=lambda s: pd.Series(MIXED, dtype=object))),
    Kind(
        "pandas-mixed-key",
        lambda fr: _pd(fr, k1=lambda s: pd.Series(MIXED, dtype=object)),
        error=("k1", "mixes value types"),
    ),
    Kind(
        "pandas-mixed-number",
        lambda fr: _pd(fr, x=lambda s: pd.Series([1, "2", 3.5, 4] * (N // 4), dtype=object)),
        error=("x", "mixes value types (float, int, str)"),
    ),
    Kind(
        "dict-mixed-key",
        lambda fr: {**fr.to_dict(as_series=False), "k1": list(MIXED)},
        error=("k1", "mixes value types"),
    ),
    Kind(
        "pandas-index",
        lambda fr: fr.to_pandas().set_axis(pd.Index([f"r{(j * 7) % N:02d}" for j in range(N)], name="id")),
    ),
    Kind("pandas-missing", lambda fr: _missing(fr).to_pandas()),
    Kind("polars-missing", _missing),
    Kind("pyarrow-missing", lambda fr: _missing(fr).to_arrow()),
    Kind(
        "pandas-inf",
        lambda fr: _set(fr, "x", [math.inf if j == 3 else v for j, v in enumerate(fr["x"])]).to_pandas(),
    ),
    Kind("pandas-empty", lambda fr: fr.head(0).to_pandas()),
    Kind("polars-one-row", lambda fr: fr.head(1)),
    Kind(
        "pandas-constant",
        lambda fr: fr.with_columns(pl.lit("Kb9").alias("k2"), pl.lit(7.0).alias("y")).to_pandas(),
    ),
    Kind("pandas-huge", lambda fr: fr.with_columns(pl.col("x") * 1e199, pl.col("y") * 1e199).to_pandas()),
    Kind(
        "polars-categorical-keys",
        lambda fr: fr.with_columns(
            pl.col("k1").cast(pl.Categorical), pl.col("k2").cast(pl.Enum(["Kb3", "Kb2", "Kb1", "Kb0"]))
        ),
    ),
    Kind(
        "pyarrow-dictionary-key",
        lambda fr: fr.to_arrow().set_column(0, "k1", pa.array(fr["k1"].to_list()).dictionary_encode()),
    ),
    Kind(
        "pandas-dup-names",
        lambda fr: _renamed(fr.to_pandas(), {"u": "k2"}),
        error=("data", "column k2 appears 2 times"),
    ),
    Kind(
        "pandas-dup-int-and-text",
        lambda fr: _renamed(fr.to_pandas(), {"u": "0", "k1": 0}),
        labels={"k1": 0},
        error=("data", "'0'"),
    ),
    Kind("pyarrow-dup-names", _dup_arrow, error=("data", "column k2 appears 2 times")),
]


# ----------------------------------------------------------------------------------------------
# the methods: how to call them on a kind, the roles they change, and their target
# ----------------------------------------------------------------------------------------------
def _recode_mapping(data, lab):
    values = _column(data, lab)
    cats = list(dict.fromkeys(v for v in values if not _is_na(v)))
    return {v: cats[0] if j < 2 else v for j, v in enumerate(cats)} if cats else {"Ka0": "Ka0"}


class Method:
    def __init__(self, name, call, changes, uses, target=None):
        self.name, self.call, self.changes, self.uses, self.target = name, call, changes, uses, target


def _problem_call(data, c, **kw):
    sc = sdckit.Scenario(keys=[c["k1"], c["k2"]])
    p = sdckit.SdcProblem(data, sc)
    p.apply("local_suppression", **({"k": K} | kw))
    return p


METHODS = [
    Method(
        "global_recode",
        lambda d, c, **kw: P.global_recode(d, c["k1"], **({"mapping": _recode_mapping(d, c["k1"])} | kw)),
        ("k1",),
        ("k1",),
        target="recode",
    ),
    Method(
        "top_bottom_coding",
        lambda d, c, **kw: P.top_bottom_coding(d, c["x"], **({"value": CAP * _scale(d, c)} | kw)),
        ("x",),
        ("x",),
        target="capped",
    ),
    Method(
        "local_suppression",
        lambda d, c, **kw: P.local_suppression(d, [c["k1"], c["k2"]], **({"k": K} | kw)),
        ("k1", "k2"),
        ("k1", "k2"),
        target="kanon",
    ),
    Method(
        "suppress_by_risk",
        lambda d, c, **kw: P.suppress_by_risk(
            d, [c["k1"], c["k2"]], **({"weight": c["w"], "threshold": THRESHOLD} | kw)
        ),
        ("k1", "k2"),
        ("k1", "k2", "w"),
        target="suppressed",
    ),
    Method("pram", lambda d, c, **kw: P.pram(d, c["k1"], **({"seed": 3} | kw)), ("k1",), ("k1",), target="categories"),
    Method(
        "add_noise",
        lambda d, c, **kw: P.add_noise(d, [c["x"], c["y"]], **({"seed": 3} | kw)),
        ("x", "y"),
        ("x", "y"),
        target="perturbed",
    ),
    Method(
        "microaggregation",
        lambda d, c, **kw: P.microaggregation(d, [c["x"], c["y"]], **({"group_size": 3} | kw)),
        ("x", "y"),
        ("x", "y"),
        target="groups",
    ),
    Method(
        "rank_swap",
        lambda d, c, **kw: P.rank_swap(d, [c["x"]], **({"seed": 3, "top_percent": 0, "bottom_percent": 0} | kw)),
        ("x",),
        ("x",),
        target="multiset",
    ),
    Method(
        "record_swap",
        lambda d, c, **kw: P.record_swap(
            d, [c["k1"], c["k2"]], **({"household": c["hh"], "geography": c["geo"], "seed": 3, "swap_rate": 0.5} | kw)
        ),
        ("geo",),
        ("k1", "k2", "hh", "geo"),
        target="swapped",
    ),
    Method("SdcProblem", _problem_call, ("k1", "k2"), ("k1", "k2"), target="kanon"),
]
BY_NAME = {m.name: m for m in METHODS}


def _scale(data, c) -> float:
    x = [v for v in _column(data, c["x"]) if isinstance(v, float) and math.isfinite(v)]
    return 1e199 if x and max(abs(v) for v in x) > 1e100 else 1.0


# ----------------------------------------------------------------------------------------------
# reading any frame back: columns as Python lists, by label
# ----------------------------------------------------------------------------------------------
def _is_na(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _labels(data) -> list:
    if isinstance(data, pd.DataFrame):
        return list(data.columns)
    if isinstance(data, pa.Table):
        return list(data.column_names)
    if isinstance(data, dict):
        return list(data)
    return list(data.columns)


def _column(data, label) -> list:
    if isinstance(data, pd.DataFrame):
        return data[label].astype(object).tolist()
    if isinstance(data, pa.Table):
        return data.column(_labels(data).index(label)).to_pylist()
    if isinstance(data, dict):
        return list(data[label])
    return data.get_column(label).to_list()


def _snapshot(data):
    if isinstance(data, pd.DataFrame):
        return data.copy(deep=True)
    if isinstance(data, pl.DataFrame):
        return data.clone()
    return copy.deepcopy(data)


def _same_frame(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        if list(a.columns) != list(b.columns) or [type(c) for c in a.columns] != [type(c) for c in b.columns]:
            return False
        if not a.index.equals(b.index) or list(a.dtypes) != list(b.dtypes):
            return False
        return all(_same_values(a.iloc[:, j].tolist(), b.iloc[:, j].tolist()) for j in range(a.shape[1]))
    if isinstance(a, pl.DataFrame):
        return a.schema == b.schema and a.equals(b, null_equal=True)
    if isinstance(a, pa.Table):
        return a.schema == b.schema and a.equals(b)
    return a == b


def _same_values(a: list, b: list) -> bool:
    """Equal cell by cell in value and Python type (NaN equals NaN)."""
    if len(a) != len(b):
        return False
    return all((_is_na(u) and _is_na(v)) or (type(u) is type(v) and u == v) for u, v in zip(a, b))


def _column_type(data, label):
    if isinstance(data, dict):  # a dict comes back as Polars: its columns as Polars reads them
        values = data[label]
        if len({type(v) for v in values}) > 1 and any(isinstance(v, str) for v in values):
            return pl.Object  # a list mixing text and numbers is kept as Python objects
        return pl.Series(values).dtype
    if isinstance(data, pd.DataFrame):
        return data[label].dtype
    if isinstance(data, pa.Table):
        return data.schema.field(_labels(data).index(label)).type
    return data.schema[label]


# ----------------------------------------------------------------------------------------------
# the targets, by brute force
# ----------------------------------------------------------------------------------------------
def _k_anonymous(rows: list[tuple], k: int) -> bool:
    """Every record matches at least k records (itself included), a missing value matching
    any value (sdcMicro's rule with alpha = 1)."""

    def match(a, b):
        return all(_is_na(u) or _is_na(v) or u == v for u, v in zip(a, b))

    return all(sum(match(r, s) for s in rows) >= k for r in rows)


def check_target(method: Method, kind: Kind, data, out, c, result, params: dict) -> None:
    col = lambda frame, role: _column(frame, c[role])  # noqa: E731
    n = len(col(data, "k1"))
    t = method.target
    if t == "recode":
        mapping = params.get("mapping", _recode_mapping(data, c["k1"]))
        mapping = mapping.get(c["k1"], mapping)  # {variable: {old: new}}
        for old, new in zip(col(data, "k1"), col(out, "k1")):
            assert (_is_na(old) and _is_na(new)) or str(new) == str(mapping[old])
    elif t == "capped":
        cap = params.get("value", CAP * _scale(data, c))
        for old, new in zip(col(data, "x"), col(out, "x")):
            assert (_is_na(old) and _is_na(new)) or (new == cap if old > cap else new == old)
    elif t == "kanon":
        rows = list(zip(col(out, "k1"), col(out, "k2")))
        assert n < K or _k_anonymous(rows, K)
        _kept_cells(data, out, c, ("k1", "k2"))
    elif t == "suppressed":
        _kept_cells(data, out, c, ("k1", "k2"))
        if result.details["n_unresolved"] == 0 and n:
            risk = sdckit.individual_risk(out, [c["k1"], c["k2"]], weight=c["w"], allow_degenerate_keys=True).risk
            assert np.nanmax(risk) <= THRESHOLD + 1e-12
    elif t == "categories":
        before = set(map(str, (v for v in col(data, "k1") if not _is_na(v))))
        for old, new in zip(col(data, "k1"), col(out, "k1")):
            assert _is_na(old) == _is_na(new) and (_is_na(new) or str(new) in before)
    elif t == "perturbed":
        for role in ("x", "y"):
            old, new = np.array(col(data, role), dtype=float), np.array(col(out, role), dtype=float)
            assert np.array_equal(np.isnan(old), np.isnan(new)) and np.isfinite(new[~np.isnan(new)]).all()
            if np.count_nonzero(~np.isnan(old)) >= 2 and np.nanmax(old) > np.nanmin(old) and params.get("noise") != 0:
                assert (new[~np.isnan(old)] != old[~np.isnan(old)]).any()
    elif t == "groups":
        old = np.array([col(data, "x"), col(data, "y")], dtype=float).T
        new = np.array([col(out, "x"), col(out, "y")], dtype=float).T
        assert np.array_equal(np.isnan(old), np.isnan(new)) and np.isfinite(new[~np.isnan(new)]).all()
        one_dim = params.get("method") == "onedims"
        if not np.isnan(old).any():  # complete records: every value (pair) is shared by >= 3 records
            for block in [new[:, [0]], new[:, [1]]] if one_dim else [new]:
                _, counts = np.unique(block, axis=0, return_counts=True)
                assert counts.min() >= 3
            if params.get("statistic", "mean") == "mean":  # group means keep the overall mean
                np.testing.assert_allclose(new.mean(axis=0), old.mean(axis=0), rtol=1e-12)
    elif t == "multiset":
        old, new = np.array(col(data, "x"), dtype=float), np.array(col(out, "x"), dtype=float)
        assert np.array_equal(np.isnan(old), np.isnan(new))
        assert np.array_equal(np.sort(old[~np.isnan(old)]), np.sort(new[~np.isnan(new)]))
    elif t == "swapped":
        hh, geo_old, geo_new = col(data, "hh"), col(data, "geo"), col(out, "geo")
        for h in set(hh):
            assert len({g for g, hx in zip(geo_new, hh) if hx == h}) == 1  # constant within a household
        assert sorted(map(str, geo_old)) == sorted(map(str, geo_new))  # records per unit kept
    else:
        raise AssertionError(t)


def _kept_cells(data, out, c, roles) -> None:
    """A suppression keeps every cell it does not suppress, in value and Python type."""
    for role in roles:
        for old, new in zip(_column(data, c[role]), _column(out, c[role])):
            assert _is_na(new) or (type(new) is type(old) and new == old), (role, type(old), type(new))


# ----------------------------------------------------------------------------------------------
# the judge
# ----------------------------------------------------------------------------------------------
def _result_frame(method: Method, result, tmp_path):
    if method.name != "SdcProblem":
        return result.data
    path = tmp_path / "recipe.json"
    result.to_recipe(path)
    replay = sdckit.SdcProblem.from_recipe(result.original, path)
    assert _same_frame(replay.data, result.data), "the JSON recipe does not replay to the same data"
    _written_back(replay, tmp_path)
    replay.undo()
    assert _same_frame(replay.data, result.original), "undo does not give the original back"
    return result.data


def _written_back(problem, tmp_path) -> None:
    """The protected data written (Parquet and CSV) and read back: the same column names (as
    text), the same records, the protected keys the same (as text; missing stays missing)."""
    data = problem.data
    for ext in ("parquet", "csv"):
        path = tmp_path / f"out.{ext}"
        problem.write(path)
        back = sdckit.read_data(path)
        assert back.columns == [str(c) for c in _labels(data)] and back.height == len(_column(data, _labels(data)[0]))
        for lab in _labels(data)[:2]:  # the keys
            old = ["" if _is_na(v) else str(v) for v in _column(data, lab)]
            new = ["" if _is_na(v) else str(v) for v in back.get_column(str(lab)).to_list()]
            assert old == new, lab


def judge(method: Method, kind: Kind, data, c, expected, tmp_path, params=None) -> None:
    """Run one case and check every property (see the module docstring)."""
    fr = base()
    before = _snapshot(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = method.call(data, c)
        except SdcError as exc:
            assert _same_frame(data, before), "the input was changed"
            msg = str(exc)
            assert expected != "ok", f"unexpected SdcError: {msg}"
            for frag in expected:
                assert frag in msg, f"{frag!r} not in {msg!r}"
            typed = repr(params)  # values the caller typed (a mapping's categories) may be named
            leaked = [v for v in record_values(fr) if v in msg and v not in typed]
            assert not leaked, f"record values {leaked} in {msg!r}"
            return
    assert expected == "ok", f"expected an SdcError with {expected}, got a result"
    assert _same_frame(data, before), "the input was changed"
    out = _result_frame(method, result, tmp_path)
    assert type(out) is (pl.DataFrame if isinstance(data, dict) else type(data))
    assert _labels(out) == _labels(data) and [type(v) for v in _labels(out)] == [type(v) for v in _labels(data)]
    if isinstance(data, pd.DataFrame):
        assert out.index.equals(data.index), "row identity (index) lost"
    n = len(_column(data, _labels(data)[0]))
    changed = {c[r] for r in method.changes}
    for label in _labels(data):
        assert len(_column(out, label)) == n
        if label not in changed:
            assert _column_type(out, label) == _column_type(data, label), (label, "type")
            assert _same_values(_column(out, label), _column(data, label)), (label, "values")
    check_target(method, kind, data, out, c, result, params or {})


# ----------------------------------------------------------------------------------------------
# expected outcomes
# ----------------------------------------------------------------------------------------------
def expected_for_kind(method: Method, kind: Kind):
    c = kind.labels
    if kind.error is not None:
        role, frag = kind.error
        if role == "data":
            return ("data", frag)
        if role not in method.uses:
            return "ok"
        return (f"column {c[role]}", frag)
    return EXPECTED_ERRORS.get((method.name, kind.name), "ok")


EXPECTED_ERRORS: dict = {
    # no records: every method says so, naming the data
    **{(m.name, "pandas-empty"): ("data", "no records") for m in METHODS},
    # one record
    ("local_suppression", "polars-one-row"): ("k",),
    ("SdcProblem", "polars-one-row"): ("keys",),
    ("microaggregation", "polars-one-row"): ("group_size",),
    # infinite values in a continuous variable
    ("add_noise", "pandas-inf"): ("variables", "x", "infinite"),
    ("microaggregation", "pandas-inf"): ("variables", "x", "infinite"),
    ("rank_swap", "pandas-inf"): ("variables", "x", "infinite"),
    # a key with a single category
    ("SdcProblem", "pandas-constant"): ("keys", "column k2", "single category"),
}


CASES = [(m, k) for m in METHODS for k in KINDS]


@pytest.mark.parametrize(("method", "kind"), CASES, ids=[f"{m.name}-{k.name}" for m, k in CASES])
def test_input_kind(method, kind, tmp_path):
    data = kind.build(base())
    judge(method, kind, data, kind.labels, expected_for_kind(method, kind), tmp_path)


# ----------------------------------------------------------------------------------------------
# bad parameters (and the borderline good ones)
# ----------------------------------------------------------------------------------------------
PANDAS = KINDS[0]
PARAMS = [
    # (method, parameters, expected: "ok" or fragments of the SdcError)
    ("local_suppression", {"alpha": 0}, "ok"),
    ("local_suppression", {"alpha": 0.5}, "ok"),
    ("local_suppression", {"alpha": -0.1}, ("alpha", "-0.1", "[0, 1]")),
    ("local_suppression", {"alpha": 1.5}, ("alpha", "1.5")),
    ("local_suppression", {"alpha": "x"}, ("alpha", "'x'")),
    ("local_suppression", {"alpha": float("nan")}, ("alpha",)),
    ("local_suppression", {"k": 2.5}, ("k", "2.5", "integer")),
    ("local_suppression", {"k": 0}, ("k", "0")),
    ("local_suppression", {"k": -1}, ("k", "-1")),
    ("local_suppression", {"k": "two"}, ("k", "'two'")),
    ("local_suppression", {"k": True}, ("k", "True")),
    ("local_suppression", {"k": 10**6}, ("k",)),
    ("local_suppression", {"method": "fast"}, ("method", "'fast'")),
    ("local_suppression", {"importance": [1, 1]}, ("importance",)),
    ("local_suppression", {"importance": ["nope", "k1"]}, ("importance",)),
    ("local_suppression", {"strata": "nope"}, ("strata", "nope", "not found")),
    ("local_suppression", {"strata": "k1"}, ("strata", "k1")),
    ("local_suppression", {"combs": [5]}, ("combs",)),
    ("suppress_by_risk", {"alpha": 0}, "ok"),
    ("suppress_by_risk", {"alpha": 2}, ("alpha", "2")),
    ("suppress_by_risk", {"threshold": 0}, ("threshold",)),
    ("suppress_by_risk", {"threshold": 1.5}, ("threshold", "1.5")),
    ("suppress_by_risk", {"threshold": "high"}, ("threshold", "'high'")),
    ("suppress_by_risk", {"threshold": None}, ("threshold",)),
    ("suppress_by_risk", {"weight": "nope"}, ("weight", "nope", "not found")),
    ("suppress_by_risk", {"weight": "k1"}, ("weight", "k1")),
    ("suppress_by_risk", {"strategy": "random"}, ("strategy", "'random'")),
    ("suppress_by_risk", {"variables": ["u"]}, ("variables", "u")),
    ("global_recode", {"mapping": {}}, ("mapping", "empty", "at least one")),
    ("global_recode", {"mapping": []}, ("mapping", "list")),
    ("global_recode", {"mapping": "Ka0"}, ("mapping", "str")),
    ("global_recode", {"mapping": {"Ka0": None, "Ka1": "A", "Ka2": "A"}}, ("mapping", "missing")),
    ("global_recode", {"mapping": {"k1": {}}}, ("mapping", "empty")),
    ("global_recode", {"mapping": {"k1": {"Ka0": "A", "Ka1": "A", "Ka2": "B"}}}, "ok"),
    ("global_recode", {"mapping": None, "breaks": 2}, ("k1",)),
    ("global_recode", {"mapping": {"Ka0": "A"}, "breaks": 2}, ("mapping", "breaks")),
    ("global_recode", {"mapping": {"Ka0": "A"}, "method": "nope"}, ("method",)),
    ("top_bottom_coding", {"value": float("nan")}, ("value",)),
    ("top_bottom_coding", {"value": "big"}, ("value", "'big'")),
    ("top_bottom_coding", {"value": None}, ("value",)),
    ("top_bottom_coding", {"kind": "middle"}, ("kind", "'middle'")),
    ("top_bottom_coding", {"replacement": float("inf")}, ("replacement", "inf")),
    ("top_bottom_coding", {"replacement": "cap"}, ("replacement", "'cap'")),
    ("top_bottom_coding", {"value": 1e300}, "ok"),
    ("pram", {"pd": 0}, "ok"),
    ("pram", {"pd": -0.1}, ("pd", "-0.1")),
    ("pram", {"pd": 1.5}, ("pd", "1.5")),
    ("pram", {"pd": 1}, "ok"),
    ("pram", {"strength": -1}, ("strength", "-1")),
    ("pram", {"seed": -1}, ("seed", "-1")),
    ("pram", {"seed": 2.5}, ("seed", "2.5")),
    ("pram", {"seed": "one"}, ("seed", "'one'")),
    ("pram", {"matrix": np.eye(2)}, ("matrix",)),
    ("pram", {"matrix": "identity"}, ("matrix",)),
    ("add_noise", {"noise": -5}, ("noise", "-5")),
    ("add_noise", {"noise": 0}, "ok"),
    ("add_noise", {"method": "gauss"}, ("method", "'gauss'")),
    ("add_noise", {"seed": -1}, ("seed", "-1")),
    ("add_noise", {"noise": float("inf")}, ("noise", "inf")),
    ("add_noise", {"method": "correlated"}, "ok"),
    ("add_noise", {"method": "restr"}, "ok"),
    ("add_noise", {"method": "ROMM"}, "ok"),
    ("add_noise", {"method": "outdect"}, "ok"),
    ("microaggregation", {"group_size": 0}, ("group_size", "0")),
    ("microaggregation", {"group_size": 2.5}, ("group_size", "2.5")),
    ("microaggregation", {"group_size": 25}, ("group_size", "25")),
    ("microaggregation", {"group_size": "3"}, ("group_size", "'3'")),
    ("microaggregation", {"method": "kmeans"}, ("method", "'kmeans'")),
    ("microaggregation", {"statistic": "mode"}, ("statistic", "'mode'")),
    ("microaggregation", {"sort_by": "x"}, ("sort_by",)),
    ("microaggregation", {"method": "onedims"}, "ok"),
    ("microaggregation", {"method": "pca"}, "ok"),
    ("microaggregation", {"method": "rmd"}, "ok"),
    ("microaggregation", {"method": "single", "sort_by": "y"}, "ok"),
    ("microaggregation", {"statistic": "median"}, "ok"),
    ("rank_swap", {"swap_range": 150}, ("swap_range", "150")),
    ("rank_swap", {"swap_range": -1}, ("swap_range", "-1")),
    ("rank_swap", {"swap_range": 10, "r0": 0.9}, ("swap_range", "r0")),
    ("rank_swap", {"top_percent": 60, "bottom_percent": 60}, ("top_percent", "bottom_percent")),
    ("rank_swap", {"k0": -0.5}, ("k0",)),
    ("rank_swap", {"swap_range": 0}, "ok"),
    ("rank_swap", {"swap_range": 100}, "ok"),
    ("record_swap", {"household": "nope"}, ("household", "nope")),
    ("record_swap", {"geography": "nope"}, ("geography", "nope")),
    ("record_swap", {"swap_rate": 2}, ("swap_rate", "2")),
    ("record_swap", {"swap_rate": -0.1}, ("swap_rate",)),
    ("record_swap", {"k": 0}, ("k", "0")),
    ("record_swap", {"seed": -3}, ("seed", "-3")),
    ("record_swap", {"geography": "k1"}, ("geography", "k1")),
    ("record_swap", {"swap_rate": 0}, "ok"),
    ("SdcProblem", {"k": 0}, ("k", "0")),
    ("SdcProblem", {"alpha": 0}, "ok"),
    ("SdcProblem", {"alpha": 3}, ("alpha", "3")),
    ("SdcProblem", {"nonsense": 1}, ("nonsense", "not a parameter of local_suppression")),
]

# every method: the variables wrong in every way
for _m in METHODS:
    _first = "keys" if _m.name in ("local_suppression", "suppress_by_risk", "record_swap") else "variables"
    if _m.name == "SdcProblem":
        continue
    PARAMS += [
        (_m.name, {"__var__": ["nope"]}, (_first, "nope", "not found", "available columns")),
        (_m.name, {"__var__": 1.5}, (_first, "float")),
        (_m.name, {"__var__": [1.5]}, (_first, "1.5")),
        (_m.name, {"__var__": []}, (_first, "empty")),
        (_m.name, {"__var__": None}, (_first,)),
        (_m.name, {"__var__": [True]}, (_first, "True")),
        (_m.name, {"__var__": {"k1": 1}}, (_first, "dict")),
        (_m.name, {"engine": "nope"}, ("engine", "nope")),
    ]


def _call_with(method: Method, params: dict):
    params = dict(params)
    if "__var__" in params:
        value = params.pop("__var__")
        direct = {m.name: getattr(P, m.name) for m in METHODS if m.name != "SdcProblem"}[method.name]
        extra = {
            "global_recode": {"mapping": {"a": "b"}},
            "top_bottom_coding": {"value": 1.0},
            "record_swap": {"household": "hh", "geography": "geo"},
        }.get(method.name, {})
        return lambda d, c: direct(d, value, **extra)
    return lambda d, c: method.call(d, c, **params)


@pytest.mark.parametrize(
    ("name", "params", "expected"), PARAMS, ids=[f"{p[0]}-{i}-{sorted(p[1])}" for i, p in enumerate(PARAMS)]
)
def test_parameter(name, params, expected, tmp_path):
    method = BY_NAME[name]
    data = PANDAS.build(base())
    call = Method(name, _call_with(method, params), method.changes, method.uses, method.target)
    judge(call, PANDAS, data, PANDAS.labels, expected, tmp_path, params)


def test_catalogue_size():
    assert len(CASES) + len(PARAMS) >= 300


# ----------------------------------------------------------------------------------------------
# the workflow's recipes
# ----------------------------------------------------------------------------------------------
def test_recipe_with_unknown_version_is_refused():
    data = base().to_pandas()
    p = sdckit.SdcProblem(data, sdckit.Scenario(keys=["k1", "k2"])).apply("local_suppression", k=2)
    recipe = p.to_recipe()
    assert recipe["sdckit_recipe"] == 1
    for version in (99, 0, "1", True, None):
        bad = {**recipe, "sdckit_recipe": version}
        with pytest.raises(SdcError, match=r"recipe: format version .*not supported; expected 1") as info:
            sdckit.SdcProblem.from_recipe(data, bad)
        assert repr(version) in str(info.value)
    replay = sdckit.SdcProblem.from_recipe(data, {k: v for k, v in recipe.items() if k != "sdckit_recipe"})
    assert _same_frame(replay.data, p.data)  # a hand-written recipe without a version is the current one


def test_json_recipe_with_infinite_values_is_json_and_replays(tmp_path):
    import json

    data = base().to_pandas()
    p = sdckit.SdcProblem(data, sdckit.Scenario(keys=["k1", "k2"], numeric_keys=["x"]))
    p.apply("global_recode", variables="y", breaks=[-math.inf, 2100.0, math.inf])
    p.apply("top_bottom_coding", variables="x", value=CAP, kind="top")
    path = tmp_path / "r.json"
    p.to_recipe(path)
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text
    raw = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert raw["steps"][0]["parameters"]["breaks"][0] == {"$float": "-inf"}
    assert raw["steps"][0]["parameters"]["breaks"][-1] == {"$float": "inf"}
    replay = sdckit.SdcProblem.from_recipe(data, path)
    assert replay.history[0].parameters["breaks"] == [-math.inf, 2100.0, math.inf]
    assert _same_frame(replay.data, p.data)
    # YAML holds infinity natively and reads it back the same
    pytest.importorskip("yaml")
    ypath = tmp_path / "r.yaml"
    p.to_recipe(ypath)
    assert _same_frame(sdckit.SdcProblem.from_recipe(data, ypath).data, p.data)


def test_float_tags_round_trip():
    from sdckit.workflow.problem import decode_floats, encode_floats

    value = {"a": [math.inf, -math.inf, 1.5, "inf", {"b": math.nan}], "c": {"$float": "x"}}
    enc = encode_floats(value)
    assert enc["a"][:4] == [{"$float": "inf"}, {"$float": "-inf"}, 1.5, "inf"]  # the text "inf" stays text
    dec = decode_floats(enc)
    assert dec["a"][:4] == [math.inf, -math.inf, 1.5, "inf"] and math.isnan(dec["a"][4]["b"])
    assert dec["c"] == {"$float": "x"}  # not a tag: left alone


# ----------------------------------------------------------------------------------------------
# values near 1e202: the continuous methods against a scaled oracle
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda d: P.microaggregation(d, ["x", "y"], group_size=3),
        lambda d: P.microaggregation(d, ["x", "y"], group_size=3, method="onedims"),
        lambda d: P.microaggregation(d, ["x", "y"], group_size=3, method="pca"),
        lambda d: P.microaggregation(d, ["x", "y"], group_size=3, method="rmd"),
        lambda d: P.rank_swap(d, ["x", "y"], seed=5),
        lambda d: P.rank_swap(d, ["x", "y"], seed=5, r0=0.9),
        lambda d: P.rank_swap(d, ["x", "y"], seed=5, k0=0.1),
        lambda d: P.add_noise(d, ["x", "y"], seed=5),
        lambda d: P.add_noise(d, ["x", "y"], seed=5, method="correlated"),
        lambda d: P.add_noise(d, ["x", "y"], seed=5, method="correlated2"),
        lambda d: P.add_noise(d, ["x", "y"], seed=5, method="restr"),
        lambda d: P.add_noise(d, ["x", "y"], seed=5, method="ROMM"),
        lambda d: P.add_noise(d, ["x", "y"], seed=5, method="outdect"),
    ],
)
def test_huge_values_against_a_scaled_oracle(call):
    """On x * 2^680 (about 1e203 here) a method gives exactly 2^680 times its result on x: the
    values are scaled by a power of two (exact) before anything is squared."""
    small = base().select("x", "y")
    s = 2.0**680
    big = small.with_columns(pl.col("x") * s, pl.col("y") * s)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow anywhere
        a, b = call(small), call(big)
    assert np.isfinite(b.data.to_numpy()).all()
    np.testing.assert_array_equal(a.data.to_numpy() * s, b.data.to_numpy())
    assert a.n_changed == b.n_changed


def test_mixed_types_are_refused_alike_by_measures_and_methods():
    """One rule for every public function: a key column mixing Python types is refused, naming
    the column and the types (never the values)."""
    data = pd.DataFrame({"m": pd.Series(MIXED, dtype=object), "k": ["a", "b"] * (N // 2)})
    calls = [
        lambda: sdckit.frequencies(data, ["m", "k"]),
        lambda: sdckit.individual_risk(data, ["m", "k"]),
        lambda: sdckit.suda(data, ["m", "k"]),
        lambda: P.local_suppression(data, ["m", "k"]),
        lambda: P.pram(data, "m", seed=1),
        lambda: sdckit.SdcProblem(data, sdckit.Scenario(keys=["m", "k"])),
    ]
    for call in calls:
        with pytest.raises(SdcError, match=r"column m mixes value types \(float, int, str\); expected one type"):
            call()
    # numbers only (int and float) are one type: numbers
    ok = pd.DataFrame({"m": pd.Series([1, 2.0, 3, 1.0] * (N // 4), dtype=object), "k": ["a", "b"] * (N // 2)})
    assert sdckit.frequencies(ok, ["m", "k"]).n == N


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_integer_categorical_keeps_its_type_after_suppression(engine):
    # a pandas categorical with integer categories (Polars has no such type): the suppressed
    # column comes back as the caller's categorical, same categories and order, NaN where
    # suppressed; a recode to new labels keeps the recoded type
    df = pd.DataFrame(
        {
            "a": pd.Categorical([1, 1, 2, 2, 3], categories=[3, 2, 1], ordered=True),
            "b": pd.Categorical(["x", "x", "y", "y", "z"]),
        }
    )
    before = df.copy()
    out = sdckit.local_suppression(df, ["a", "b"], k=2, engine=engine).data
    pd.testing.assert_frame_equal(df, before)
    assert out["a"].dtype == df["a"].dtype
    assert out["a"].isna().tolist() == [False, False, False, False, True]
    assert out["a"].iloc[:4].tolist() == [1, 1, 2, 2]
    pram = sdckit.pram(df, ["a"], seed=3).data
    assert pram["a"].dtype == df["a"].dtype
    recoded = sdckit.global_recode(df, ["a"], mapping={"a": {1: "low", 2: "low", 3: "high"}}).data
    assert recoded["a"].tolist() == ["low", "low", "low", "low", "high"]
