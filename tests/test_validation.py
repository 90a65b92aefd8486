"""Catalogue of bad inputs: each gives a clear SdcError naming the parameter or column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from conftest import S002_KEYS, s002_table
from sdckit import MissingColumnError, Scenario, SdcError


def base() -> pl.DataFrame:
    return s002_table()


def with_w(values) -> pl.DataFrame:
    return base().with_columns(pl.Series("w", values))


BAD_FREQ_CALLS = [
    # (id, kwargs for sdckit.frequencies, exception type, fragments the message must contain)
    (
        "missing-key",
        dict(data=base(), keys=["Residence", "Age"]),
        MissingColumnError,
        ["Age", "not found", "available columns", "Gender"],
    ),
    ("missing-weight", dict(data=base(), keys=S002_KEYS, weight="wt"), MissingColumnError, ["wt", "not found"]),
    (
        "string-weight",
        dict(data=base().with_columns(pl.col("w").cast(pl.String)), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "w", "expected positive numbers"],
    ),
    (
        "bool-weight",
        dict(data=base().with_columns(pl.lit(True).alias("w")), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "Boolean"],
    ),
    (
        "negative-weight",
        dict(data=with_w([1.0, -2, 3, 4, 5, 6, 7, 8, 9, 10]), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "1 negative"],
    ),
    (
        "nan-weight",
        dict(data=with_w([1.0, np.nan, 3, 4, 5, 6, 7, 8, 9, 10]), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "missing", "1 record"],
    ),
    (
        "null-weight",
        dict(data=with_w([1.0, None, 3, 4, 5, 6, 7, 8, 9, 10]), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "missing"],
    ),
    (
        "zero-weight",
        dict(data=with_w([0.0, 2, 3, 4, 5, 6, 7, 8, 9, 10]), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "zero", "represents nobody"],
    ),
    (
        "inf-weight",
        dict(data=with_w([np.inf, 2, 3, 4, 5, 6, 7, 8, 9, 10]), keys=S002_KEYS, weight="w"),
        SdcError,
        ["weight", "infinite"],
    ),
    ("empty-data", dict(data=base().head(0), keys=S002_KEYS), SdcError, ["data", "no records"]),
    ("key-is-weight", dict(data=base(), keys=["Residence", "w"], weight="w"), SdcError, ["column w", "one role"]),
    ("key-twice", dict(data=base(), keys=["Residence", "Residence"]), SdcError, ["keys", "more than once"]),
    (
        "all-missing-key",
        dict(data=base().with_columns(pl.lit(None, pl.String).alias("Gender")), keys=S002_KEYS),
        SdcError,
        ["Gender", "missing for every record", "allow_degenerate_keys"],
    ),
    (
        "single-level-key",
        dict(data=base().with_columns(pl.lit("x").alias("Gender")), keys=S002_KEYS),
        SdcError,
        ["Gender", "single category"],
    ),
    ("alpha-range", dict(data=base(), keys=S002_KEYS, alpha=1.5), SdcError, ["alpha", "1.5", "[0, 1]"]),
    ("alpha-text", dict(data=base(), keys=S002_KEYS, alpha="half"), SdcError, ["alpha", "'half'"]),
    ("alpha-nan", dict(data=base(), keys=S002_KEYS, alpha=float("nan")), SdcError, ["alpha"]),
    ("list-data", dict(data=[[1, 2], [3, 4]], keys=["a"]), SdcError, ["data", "unsupported type", "list"]),
    ("none-data", dict(data=None, keys=["a"]), SdcError, ["data", "None"]),
    ("numpy-1d", dict(data=np.arange(5), keys=["0"]), SdcError, ["data", "2-D"]),
    ("no-keys", dict(data=base(), keys=[]), SdcError, ["keys", "expected at least one column"]),
    ("keys-none", dict(data=base(), keys=None), SdcError, ["keys"]),
    ("key-not-a-name", dict(data=base(), keys=[1.5]), SdcError, ["keys", "1.5", "not a column name"]),
    ("na-rule", dict(data=base(), keys=S002_KEYS, na_rule="drop"), SdcError, ["na_rule", "'drop'", "sdcmicro"]),
    ("weight-list", dict(data=base(), keys=S002_KEYS, weight=["w", "w2"]), SdcError, ["weight", "single column"]),
    ("ragged-dict", dict(data={"a": [1, 2], "b": [1]}, keys=["a"]), SdcError, ["data", "equal-length"]),
    (
        "mixed-type-key",  # 1, "1", 2.5, "a" in one column: refused, naming the column and the types only
        dict(
            data=pd.DataFrame({"m": pd.Series([1, "1", 2.5, "a"] * 3, dtype=object), "k": list("ab") * 6}),
            keys=["m", "k"],
        ),
        SdcError,
        ["keys", "column m", "mixes value types (float, int, str)", "expected one type per column"],
    ),
    (
        "mixed-type-key-dict",
        dict(data={"m": [1, "1", 2.5, "a"] * 3, "k": list("ab") * 6}, keys=["m", "k"]),
        SdcError,
        ["keys", "column m", "mixes value types"],
    ),
    (
        "mixed-type-strata",
        dict(
            data=pd.DataFrame({"m": pd.Series([1, "1"] * 6, dtype=object), "k": list("ab") * 6}),
            keys=["k"],
            strata="m",
        ),
        SdcError,
        ["strata", "column m", "mixes value types (int, str)"],
    ),
    (
        "duplicate-column-names",
        dict(data=pd.DataFrame([["a", "b"], ["c", "d"]], columns=["g", "g"]), keys=["g"]),
        SdcError,
        ["data", "column g appears 2 times", "unique column names"],
    ),
    (
        "int-and-text-column-names",
        dict(data=pd.DataFrame([["a", "b"], ["c", "d"]], columns=[0, "0"]), keys=["0"]),
        SdcError,
        ["data", "0 and '0'", "unique column names"],
    ),
    (
        "dict-int-and-text-names",
        dict(data={0: ["a", "b"], "0": ["c", "d"]}, keys=["0"]),
        SdcError,
        ["data", "0 and '0'", "unique column names"],
    ),
    (
        "list-key-column",
        dict(data=pl.DataFrame({"a": [[1], [2]], "b": [1, 2]}), keys=["a", "b"]),
        SdcError,
        ["keys", "column a", "List"],
    ),
]


@pytest.mark.parametrize("case", BAD_FREQ_CALLS, ids=[c[0] for c in BAD_FREQ_CALLS])
def test_bad_input_gives_clear_error(case):
    _, kwargs, exc, fragments = case
    with pytest.raises(exc) as info:
        sdckit.frequencies(**kwargs)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    assert isinstance(info.value, SdcError) and isinstance(info.value, ValueError)


def test_catalogue_size():
    assert len(BAD_FREQ_CALLS) >= 15


def test_missing_column_is_keyerror():
    with pytest.raises(KeyError):
        sdckit.frequencies(base(), ["nope"])


def test_all_problems_in_one_error():
    """Missing columns, a bad weight and a degenerate key are reported together, one per line."""
    d = with_w([1.0, -2, 3, 4, 5, 6, 7, 8, 9, 0]).with_columns(pl.lit("x").alias("Gender"))
    with pytest.raises(MissingColumnError) as info:
        sdckit.frequencies(d, ["Residence", "Gender", "Age", "Income"], weight="w")
    err = info.value
    assert len(err.problems) == 4, err.problems
    text = str(err)
    assert "Age, Income" in text and "negative" in text and "zero" in text and "single category" in text
    assert text.count("\n  - ") == 4


@pytest.mark.parametrize(
    "k, fragment", [(0, "k: got 0"), ("x", "k: got 'x'"), ([], "k: empty"), ([2, -1], "k: got -1")]
)
def test_bad_k(k, fragment):
    with pytest.raises(SdcError, match="expected|empty") as info:
        sdckit.k_anonymity(base(), S002_KEYS, k=k)
    assert fragment in str(info.value)


def test_scenario_household_and_numeric_keys():
    d = base().with_columns(pl.Series("hh", [1, 1, None, 2, 2, 3, 3, 4, 4, None]))
    sc = Scenario(keys=S002_KEYS, numeric_keys=["Health"], household="hh", weight="w")
    with pytest.raises(SdcError) as info:
        sc.validate(d)
    text = str(info.value)
    assert "household: column hh is missing for 2 record(s)" in text
    assert "numeric_keys: column Health" in text


def test_scenario_is_frozen_and_normalised():
    sc = Scenario(keys="Residence", sensitive="Health")
    assert sc.keys == ("Residence",) and sc.sensitive == ("Health",)
    with pytest.raises(Exception):
        sc.keys = ("x",)
    table = sc.validate(base())
    assert table.n == 10


def test_degenerate_keys_allowed_on_request():
    d = base().with_columns(pl.lit(None, pl.String).alias("Gender"))
    r = sdckit.frequencies(d, S002_KEYS, allow_degenerate_keys=True)
    assert r.n == 10


def test_messages_carry_no_record_values():
    """A negative weight and a one-category key are described by counts, never by the values
    themselves (an error message may end up in a log that is not confidential)."""
    with pytest.raises(SdcError) as info:
        sdckit.frequencies(with_w([1.0, -2.5, 3, 4, 5, 6, 7, 8, 9, 10]), S002_KEYS, weight="w")
    assert "-2.5" not in str(info.value)
    with pytest.raises(SdcError) as info:
        sdckit.frequencies(base().with_columns(pl.lit("secret-label").alias("Gender")), S002_KEYS)
    assert "secret-label" not in str(info.value)


def test_missing_code_that_never_occurs_warns():
    """-999 given for text keys (where the code would be '-999') matches nothing: said, not ignored."""
    with pytest.warns(sdckit.SdcWarning, match=r"missing: -999 occur\(s\) in none of the key columns"):
        sdckit.frequencies(base(), S002_KEYS, missing=-999)
    d = base().with_columns(pl.Series("Labor", ["-999"] + base()["Labor"].to_list()[1:]))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = sdckit.frequencies(d, S002_KEYS, missing="-999")  # occurs: no warning
    assert r.n_with_missing == 1


def test_weights_below_one_warn_in_frequencies():
    with pytest.warns(sdckit.SdcWarning, match="w has 1 value.s. below 1"):
        sdckit.frequencies(with_w([0.5, 2, 3, 4, 5, 6, 7, 8, 9, 10]), S002_KEYS, weight="w")


def test_series_as_weight_names_the_type_not_the_values():
    pd = pytest.importorskip("pandas")
    w = pd.Series([123456.789] * 10)
    with pytest.raises(SdcError) as info:
        sdckit.frequencies(base(), S002_KEYS, weight=w)
    assert "weight: got Series; expected a column name" in str(info.value)
    assert "123456" not in str(info.value)


def test_k_true_is_not_k_one():
    with pytest.raises(SdcError, match="k: got True"):
        sdckit.k_anonymity(base(), S002_KEYS, k=True)


def test_numbers_of_both_types_are_one_type():
    """Integers and floats in one object column are numbers: 1 and 1.0 are one category, as in
    Python (the one rule for a column of mixed values: text mixed with numbers is refused)."""
    d = pd.DataFrame({"m": pd.Series([1, 1.0, 2, 2.0, 3, 3.0], dtype=object), "k": list("aabbcc")})
    assert sdckit.frequencies(d, ["m", "k"]).fk.tolist() == [2.0] * 6


def test_rmd_needs_two_variables():
    """rmd_interval_disclosure is documented for at least two variables: one is refused."""
    x = pl.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) ** 1.5})
    with pytest.raises(SdcError, match=r"variables: got 1 variable; expected at least two"):
        sdckit.rmd_interval_disclosure(x, x, ["a"])


def test_cli_one_category_key_names_the_cli_option(tmp_path, capsys):
    """The command line has no allow_degenerate_keys: its message tells what to do there."""
    from sdckit.cli import main

    path = tmp_path / "d.csv"
    pl.DataFrame({"a": ["x"] * 5, "b": list("abcab")}).write_csv(path)
    assert main(["freq", str(path), "--keys", "a,b"]) == 2
    err = capsys.readouterr().err
    assert "keys: column a has a single category" in err and "drop it from --keys" in err
    assert "allow_degenerate_keys" not in err
