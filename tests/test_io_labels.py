"""Labelled SPSS / Stata files through read_data -> protection -> write_data: codes are kept.

The oracle is the source file, written here with pyreadstat from codes chosen by hand (never
with the code under test): the written file's raw codes must be the source codes (with the
suppressed cells missing, and a recode's merged codes written by hand below), and its value
labels the source's labels, a label shared by two codes included.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from sdckit import SdcError
from sdckit import protect as P
from sdckit.io import read_data, read_metadata, write_data

pyreadstat = pytest.importorskip("pyreadstat")
pd = pytest.importorskip("pandas")

# a: codes 1 and 2 share the label "yes" (19 cells of code 2, the case of the report)
A = [1] * 10 + [2] * 19 + [3] * 5
# b: a fractional code 1.5 with a label
B = [1.0, 1.5, 2.0] * 11 + [1.5]
# s: text codes "a" and "b" share the label "Apple" (SPSS only: Stata labels numbers only)
S = ["a", "b", "c", "b"] * 8 + ["c", "a"]
# m: codes 8 and 9 declared missing (SPSS), codes 1 and 2 share "x"
M = [1, 2, 9, 2, 8, 1] * 5 + [1, 2, 1, 2]
LABELS = {
    "a": {1: "yes", 2: "yes", 3: "no"},
    "b": {1: "one", 1.5: "half", 2: "two"},
    "s": {"a": "Apple", "b": "Apple", "c": "Cherry"},
    "m": {1: "x", 2: "x", 8: "dk", 9: "refused"},
}
N = len(A)


def _sav(tmp_path):
    df = pd.DataFrame({"a": A, "b": B, "s": S, "m": M})
    path = tmp_path / "shared.sav"
    pyreadstat.write_sav(df, path, variable_value_labels=LABELS, missing_ranges={"m": [8, 9]})
    return path


def _dta(tmp_path):
    df = pd.DataFrame({"a": A, "m": M})
    path = tmp_path / "shared.dta"
    pyreadstat.write_dta(df, path, variable_value_labels={k: LABELS[k] for k in ("a", "m")})
    return path


def _raw(path):
    read = pyreadstat.read_dta if str(path).endswith(".dta") else pyreadstat.read_sav
    df, meta = read(str(path))
    out = {}
    for c in df.columns:
        out[c] = [None if (isinstance(v, float) and math.isnan(v)) or v == "" else v for v in df[c].tolist()]
    return out, meta.variable_value_labels


def _float_labels(labs):
    return {c: {(float(k) if not isinstance(k, str) else k): v for k, v in d.items()} for c, d in labs.items()}


def _expected(columns, missing=(8, 9), nulls=(), change=None):
    src = {"a": A, "b": B, "s": S, "m": M}
    out = {}
    for c in columns:
        col = [None if (c == "m" and v in missing) else v for v in src[c]]
        for i in nulls:
            col[i] = None
        if change and c in change:
            col = [change[c].get(v, v) for v in col]
        out[c] = col
    return out


def test_shared_labels_read_as_one_category_per_code(tmp_path):
    df = read_data(_sav(tmp_path))
    assert df.schema["a"].categories.to_list() == ["yes (code 1)", "yes (code 2)", "no"]
    assert df["a"].value_counts(sort=True).rows() == [("yes (code 2)", 19), ("yes (code 1)", 10), ("no", 5)]
    assert df.schema["s"].categories.to_list() == ["Apple (code a)", "Apple (code b)", "Cherry"]
    assert df.schema["b"].categories.to_list() == ["one", "half", "two"]


@pytest.mark.parametrize("ext", [".sav", ".zsav"])
def test_spss_round_trip_keeps_codes_and_labels(tmp_path, ext):
    src = _sav(tmp_path)
    df = read_data(src)
    out = write_data(df, tmp_path / f"out{ext}", metadata=read_metadata(src))
    codes, labels = _raw(out)
    assert codes == _expected(["a", "b", "s", "m"])
    assert _float_labels(labels) == _float_labels(LABELS)
    assert read_data(out).equals(df)


def test_stata_round_trip_keeps_shared_label_codes(tmp_path):
    src = _dta(tmp_path)
    df = read_data(src)
    out = write_data(df, tmp_path / "out.dta", metadata=read_metadata(src))
    codes, labels = _raw(out)
    assert codes == _expected(["a", "m"], missing=())
    assert _float_labels(labels) == _float_labels({k: LABELS[k] for k in ("a", "m")})
    assert read_data(out).equals(df)


def test_spss_to_stata_shared_labels_kept(tmp_path):
    src = _sav(tmp_path)
    df = read_data(src).select("a", "m")
    out = write_data(df, tmp_path / "out.dta", metadata=read_metadata(src))
    codes, labels = _raw(out)
    assert codes == _expected(["a", "m"])
    assert _float_labels(labels) == _float_labels({k: LABELS[k] for k in ("a", "m")})


@pytest.mark.parametrize("column", ["b", "s"])
def test_stata_refuses_labels_on_codes_it_cannot_label(tmp_path, column):
    src = _sav(tmp_path)
    df = read_data(src).select(column)
    target = tmp_path / "out.dta"
    with pytest.raises(SdcError, match=rf"column '{column}' has \d value label\(s\) on codes that are not integers"):
        write_data(df, target, metadata=read_metadata(src))
    assert not target.exists()


def test_after_local_suppression_codes_kept(tmp_path):
    src = _sav(tmp_path)
    df = read_data(src)
    prot = P.local_suppression(df, ["a", "b", "s"], k=3).data
    nulls = {c: [i for i, v in enumerate(prot[c].to_list()) if v is None] for c in ("a", "b", "s")}
    assert sum(map(len, nulls.values())) > 0  # the step suppressed something
    out = write_data(prot, tmp_path / "out.sav", metadata=read_metadata(src))
    codes, labels = _raw(out)
    for c in ("a", "b", "s"):
        assert codes[c] == _expected([c], nulls=nulls[c])[c]
    assert codes["m"] == _expected(["m"])["m"]
    assert _float_labels(labels) == _float_labels(LABELS)
    assert read_data(out).equals(prot)


def test_after_recode_merged_codes_take_the_label_code(tmp_path):
    """Recode "half" into "one" and "yes (code 2)" into "no": their cells get the codes 1 and 3;
    the label of 1.5 goes (no category holds it), code 2 keeps its label only while used."""
    src = _sav(tmp_path)
    df = read_data(src)
    prot = P.global_recode(
        df,
        ["a", "b"],
        mapping={
            "a": {"yes (code 1)": "yes (code 1)", "yes (code 2)": "no", "no": "no"},
            "b": {"one": "one", "half": "one", "two": "two"},
        },
    ).data
    out = write_data(prot, tmp_path / "out.sav", metadata=read_metadata(src))
    codes, labels = _raw(out)
    assert codes["a"] == _expected(["a"], change={"a": {2: 3}})["a"]
    assert codes["b"] == _expected(["b"], change={"b": {1.5: 1.0}})["b"]
    assert codes["s"] == S
    lab = _float_labels(labels)
    assert lab["b"] == {1.0: "one", 2.0: "two"}
    assert lab["a"] == {1.0: "yes", 3.0: "no"}
    assert read_data(out)["b"].cast(pl.String).to_list() == prot["b"].cast(pl.String).to_list()


def test_user_made_label_category_takes_smallest_shared_code(tmp_path):
    """A category equal to a shared label itself (made by the user) gets the smallest code."""
    src = _sav(tmp_path)
    df = read_data(src).select("a").with_columns(pl.col("a").cast(pl.String).str.replace(r" \(code \d\)$", ""))
    out = write_data(df, tmp_path / "out.sav", metadata=read_metadata(src))
    codes, _ = _raw(out)
    assert codes["a"] == [1 if v in (1, 2) else v for v in A]
