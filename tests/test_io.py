"""sdckit.read_data / read_metadata / write_records: every format gives the spec A.1 example."""

from __future__ import annotations

import sys

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import S002_KEYS, s002_table
from sdckit.io import read_data, read_metadata, write_records

pyreadstat = pytest.importorskip("pyreadstat")
pd = pytest.importorskip("pandas")

F_EXPECTED = [2, 2, 1, 2, 1, 2, 1, 1, 2, 2]
FW_EXPECTED = [360, 360, 215, 152, 186, 152, 180, 215, 262, 262]

# code tables for the labelled formats; Education is ordinal and "Tertiary" (6) never occurs
CODES = {
    "Residence": {1: "Urban", 2: "Rural"},
    "Gender": {1: "Male", 2: "Female"},
    "Education": {
        1: "Primary incomplete",
        2: "Primary complete",
        3: "Secondary incomplete",
        4: "Secondary complete",
        5: "Post-secondary",
        6: "Tertiary",
    },
    "Labor": {1: "Employed", 2: "Unemployed", 3: "Non-LF"},
}


def _coded_pandas() -> pd.DataFrame:
    """The reference table with integer codes for the key variables (text Health, float weight)."""
    df = s002_table().to_pandas()
    for var, table in CODES.items():
        inverse = {label: code for code, label in table.items()}
        df[var] = df[var].map(inverse).astype("int64")
    df["Health"] = df["Health"].astype(object)
    return df


def _write(fmt: str, tmp_path):
    t = s002_table()
    if fmt == "csv":
        path = tmp_path / "s002.csv"
        t.write_csv(path)
    elif fmt == "csv_semicolon":
        path = tmp_path / "s002_semicolon.csv"
        t.write_csv(path, separator=";")
    elif fmt == "tsv":
        path = tmp_path / "s002.TSV"  # extension matching is case-insensitive
        t.write_csv(path, separator="\t")
    elif fmt == "parquet":
        path = tmp_path / "s002.parquet"
        t.write_parquet(path)
    elif fmt in ("sav", "zsav"):
        path = tmp_path / f"s002.{fmt}"
        pyreadstat.write_sav(
            _coded_pandas(),
            path,
            compress=fmt == "zsav",
            variable_value_labels=CODES,
            variable_measure={"Education": "ordinal"},
            column_labels={"Residence": "Place of residence", "w": "Sampling weight"},
        )
    elif fmt == "dta":
        path = tmp_path / "s002.dta"
        pyreadstat.write_dta(
            _coded_pandas(),
            path,
            variable_value_labels=CODES,
            column_labels={"Residence": "Place of residence", "w": "Sampling weight"},
        )
    elif fmt == "xpt":
        if not hasattr(pyreadstat, "write_xport"):
            pytest.skip("SAS: pyreadstat cannot write sas7bdat and this version has no write_xport")
        path = tmp_path / "s002.xpt"
        pyreadstat.write_xport(t.to_pandas(), path)  # XPORT has no value labels: text columns
    else:  # pragma: no cover
        raise AssertionError(fmt)
    return path


FORMATS = ["csv", "csv_semicolon", "tsv", "parquet", "sav", "zsav", "dta", "xpt"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_gives_spec_a1_frequencies(fmt, tmp_path):
    df = read_data(_write(fmt, tmp_path))
    assert isinstance(df, pl.DataFrame) and df.height == 10
    assert df.columns == s002_table().columns
    r = sdckit.frequencies(df, keys=S002_KEYS, weight="w")
    np.testing.assert_array_equal(r.fk, F_EXPECTED)
    np.testing.assert_allclose(r.Fk, FW_EXPECTED)
    assert r.n_sample_uniques == 4 and r.n_patterns == 7
    k = sdckit.k_anonymity(df, keys=S002_KEYS, k=[2, 3])
    assert k.n_violations == {2: 4, 3: 10}
    # labels, never codes, whatever the format
    assert sorted(df.get_column("Labor").cast(pl.String).unique()) == ["Employed", "Non-LF", "Unemployed"]


@pytest.mark.parametrize("fmt", ["sav", "zsav", "dta"])
def test_value_labels_become_enum_in_code_order(fmt, tmp_path):
    df = read_data(_write(fmt, tmp_path))
    for var, table in CODES.items():
        dtype = df.schema[var]
        assert isinstance(dtype, pl.Enum), (var, dtype)
        # declared order (ordinal Education: Primary incomplete < ... < Tertiary), unobserved labels kept
        assert dtype.categories.to_list() == list(table.values())
    assert df.get_column("Education").to_list() == s002_table().get_column("Education").to_list()
    assert df.schema["w"].is_float() and df.schema["Health"] == pl.String


@pytest.mark.parametrize("fmt", ["sav", "dta"])
def test_value_labels_false_returns_codes(fmt, tmp_path):
    df = read_data(_write(fmt, tmp_path), value_labels=False)
    assert df.schema["Education"].is_numeric()
    assert df.get_column("Education").cast(pl.Int64).to_list() == _coded_pandas()["Education"].tolist()
    r = sdckit.frequencies(df, keys=S002_KEYS, weight="w")
    np.testing.assert_array_equal(r.fk, F_EXPECTED)


def test_unlabelled_codes_are_placed_by_code(tmp_path):
    path = tmp_path / "partial.sav"
    df = pd.DataFrame({"x": [4.0, 1, 3, 2, 3, 7]})
    pyreadstat.write_sav(df, path, variable_value_labels={"x": {1: "low", 2: "mid", 4: "high", 5: "top"}})
    out = read_data(path)
    assert out.schema["x"].categories.to_list() == ["low", "mid", "3", "high", "top", "7"]
    assert out.get_column("x").cast(pl.String).to_list() == ["high", "low", "3", "mid", "3", "7"]


def test_duplicate_label_and_label_clash(tmp_path):
    path = tmp_path / "dup.sav"
    df = pd.DataFrame({"x": [1.0, 2, 3, 4]})
    # codes 1 and 2 share a label (a category each, named by their code, so the codes are kept);
    # unlabelled code 4 would clash with the label "4" of code 3
    pyreadstat.write_sav(df, path, variable_value_labels={"x": {1: "same", 2: "same", 3: "4"}})
    out = read_data(path)
    assert out.schema["x"].categories.to_list() == ["same (code 1)", "same (code 2)", "4", "4 (unlabelled code)"]
    assert out.get_column("x").cast(pl.String).to_list() == [
        "same (code 1)",
        "same (code 2)",
        "4",
        "4 (unlabelled code)",
    ]


def test_spss_user_missing_values_are_null(tmp_path):
    path = tmp_path / "missing.sav"
    df = pd.DataFrame(
        {
            "region": [1.0, 2, 9, 1, 99, 2, np.nan],
            "income": [10.0, -1, 20, -3, 30, 40, 50],
            "name": ["a", "b", "zz", "", "a", "b", "a"],
        }
    )
    pyreadstat.write_sav(
        df,
        path,
        variable_value_labels={"region": {1: "North", 2: "South", 9: "Refused", 99: "Don't know"}},
        missing_ranges={"region": [9, 99], "income": [{"lo": -5, "hi": -1}], "name": ["zz"]},
    )
    out = read_data(path)
    assert out.get_column("region").cast(pl.String).to_list() == ["North", "South", None, "North", None, "South", None]
    assert out.get_column("income").to_list() == [10.0, None, 20.0, None, 30.0, 40.0, 50.0]
    assert out.get_column("name").to_list() == ["a", "b", None, None, "a", "b", "a"]
    # nulls, never NaN
    assert out.get_column("income").is_nan().sum() == 0
    r = sdckit.frequencies(out, keys=["region"])
    assert r.n_missing_per_key == {"region": 3}
    meta = read_metadata(path)
    assert meta["user_missing"]["region"] == [9, 99]
    assert meta["user_missing"]["income"] == [{"lo": -5, "hi": -1}]
    assert meta["user_missing"]["name"] == ["zz"]


def test_stata_missing_codes_are_null(tmp_path):
    path = tmp_path / "missing.dta"
    df = pd.DataFrame({"x": [1, 2, "a", 1, "b"]}, dtype=object)
    pyreadstat.write_dta(
        df, path, variable_value_labels={"x": {1: "one", 2: "two"}}, missing_user_values={"x": ["a", "b"]}
    )
    out = read_data(path)
    assert out.get_column("x").cast(pl.String).to_list() == ["one", "two", None, "one", None]


def test_string_columns_keep_leading_zeros(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("region,sex\n01,1\n1,1\n01,2\n001,2\n1,1\n")
    as_text = read_data(path, string_columns=["region"])
    assert as_text.schema["region"] == pl.String
    assert as_text.get_column("region").to_list() == ["01", "1", "01", "001", "1"]
    np.testing.assert_array_equal(sdckit.frequencies(as_text, ["region"]).fk, [2, 2, 2, 1, 2])
    # without it a column with leading zeros is still read as text (01, 1 and 001 stay three
    # labels); a column of plain whole numbers is read as numbers
    default = read_data(path)
    assert default.schema["region"] == pl.String and default.get_column("region").n_unique() == 3
    assert default.schema["sex"].is_integer()
    # a single name is accepted; in typed formats numeric columns become text without ".0"
    pq = tmp_path / "codes.parquet"
    pl.DataFrame({"region": [1.0, 2.0, None]}).write_parquet(pq)
    assert read_data(pq, string_columns="region").get_column("region").to_list() == ["1", "2", None]


def test_na_values(tmp_path):
    path = tmp_path / "na.csv"
    path.write_text('a,b,c\nx,1,"u"\nNA,NA,\n,2,""\n-9,-9,v\n')
    df = read_data(path)
    assert df.get_column("a").to_list() == ["x", None, None, "-9"]
    assert df.get_column("b").to_list() == [1, None, 2, -9]
    assert df.get_column("c").to_list() == ["u", None, None, "v"]
    custom = read_data(path, na_values=["-9", "NA"])
    assert custom.get_column("a").to_list() == ["x", None, "", None]
    assert custom.get_column("b").to_list() == [1, None, 2, None]
    raw = read_data(path, na_values=())
    assert raw.get_column("a").to_list() == ["x", "NA", "", "-9"]


def test_separator_detection_and_override(tmp_path):
    semi = tmp_path / "semi.csv"
    semi.write_text("Residence;Gender;w\nUrban;Female;1,5\nRural;Male;2,5\n")
    df = read_data(semi)
    assert df.columns == ["Residence", "Gender", "w"]
    assert df.get_column("w").to_list() == ["1,5", "2,5"]  # decimal commas are not guessed
    comma = tmp_path / "comma.csv"
    comma.write_text("a;b,c\n1;2,3\n")  # both present: comma wins
    assert read_data(comma).columns == ["a;b", "c"]
    assert read_data(comma, sep=";").columns == ["a", "b,c"]
    tabbed = tmp_path / "tabbed.txt"
    tabbed.write_text("a\tb\n1\t2\n")
    assert read_data(tabbed).columns == ["a", "b"]
    with pytest.raises(sdckit.SdcError, match="sep"):
        read_data(comma, sep=";;")


def test_columns_subset_and_order(tmp_path):
    for fmt in ("csv", "parquet", "sav", "dta"):
        path = _write(fmt, tmp_path)
        df = read_data(path, columns=["w", "Gender"])
        assert df.columns == ["w", "Gender"], fmt
        with pytest.raises(sdckit.MissingColumnError, match="nope") as info:
            read_data(path, columns=["Gender", "nope"])
        assert "Residence" in str(info.value)  # available columns listed
        assert isinstance(info.value, KeyError)


def test_encoding_and_bom(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Région,n\nÎle-de-France,1\nBretagne,2\n".encode("latin-1"))
    df = read_data(latin, encoding="latin-1")
    assert df.columns == ["Région", "n"] and df.get_column("Région")[0] == "Île-de-France"
    bom = tmp_path / "bom.csv"
    bom.write_bytes("a,b\n1,2\n".encode("utf-8-sig"))
    assert read_data(bom).columns == ["a", "b"]
    with pytest.raises(sdckit.SdcError, match="encoding"):
        read_data(latin, encoding="no-such-codec")


def test_read_metadata(tmp_path):
    meta = read_metadata(_write("sav", tmp_path))
    assert meta["format"] == "SPSS"
    assert meta["columns"] == s002_table().columns and meta["n_rows"] == 10
    assert meta["variable_labels"] == {"Residence": "Place of residence", "w": "Sampling weight"}
    assert meta["value_labels"]["Education"] == CODES["Education"]
    assert meta["measure"]["Education"] == "ordinal"
    dta = read_metadata(_write("dta", tmp_path))
    assert dta["format"] == "Stata" and dta["value_labels"]["Labor"] == CODES["Labor"]
    assert dta["variable_labels"]["w"] == "Sampling weight"
    for fmt in ("csv", "parquet"):
        m = read_metadata(_write(fmt, tmp_path))
        assert m["columns"] == s002_table().columns
        assert m["variable_labels"] == {} and m["value_labels"] == {}
    assert read_metadata(_write("parquet", tmp_path))["n_rows"] == 10


# -- errors -----------------------------------------------------------------------------------
def _assert_clean(err: BaseException, path) -> None:
    assert str(path) in str(err)
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)  # no library traceback


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.sav"
    with pytest.raises(sdckit.SdcError, match="not found") as info:
        read_data(path)
    _assert_clean(info.value, path)
    with pytest.raises(sdckit.SdcError):
        read_metadata(path)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(sdckit.SdcError, match="not a file"):
        read_data(folder)


def test_unsupported_extension(tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(sdckit.SdcError, match="unsupported file extension") as info:
        read_data(path)
    assert str(path) in str(info.value) and ".csv" in str(info.value)
    with pytest.raises(sdckit.SdcError, match="unsupported"):
        read_data(tmp_path / "noext")


@pytest.mark.parametrize(
    "name,content",
    [
        ("bad.parquet", b"this is not parquet"),
        ("bad.sav", b"this is not an SPSS file at all" * 4),
        ("bad.zsav", b"\x00" * 64),
        ("bad.dta", b"<stata_dta>garbage"),
        ("bad.sas7bdat", b"\x01\x02\x03" * 100),
        ("bad.xpt", b"HEADER RECORD" * 3),
        ("empty.csv", b""),
        ("ragged.csv", b"a,b\n1,2\n3,4,5\n"),
    ],
)
def test_corrupt_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(sdckit.SdcError, match="could not read") as info:
        read_data(path)
    _assert_clean(info.value, path)
    assert "expected a valid" in str(info.value)


def test_pyreadstat_missing_gives_install_hint(tmp_path, monkeypatch):
    path = _write("sav", tmp_path)
    monkeypatch.setitem(sys.modules, "pyreadstat", None)  # import now raises ImportError
    with pytest.raises(sdckit.SdcError, match=r"sdckit\[stats\]") as info:
        read_data(path)
    assert str(path) in str(info.value)
    # CSV and Parquet do not need it
    assert read_data(_write("csv", tmp_path)).height == 10


# -- write_records ----------------------------------------------------------------------------
def test_write_records_roundtrip(tmp_path):
    r = sdckit.frequencies(s002_table(), keys=S002_KEYS, weight="w")
    for name in ("rec.csv", "rec.parquet", "rec.PQ", "rec.tsv"):
        out = write_records(r.to_frame(), tmp_path / name)
        back = read_data(out)
        assert back.columns == ["fk", "Fk"], name
        np.testing.assert_allclose(back.get_column("Fk").to_numpy(), FW_EXPECTED)
    d = write_records({"fk": np.array([1.0, 2.0]), "flag": np.array([True, False])}, tmp_path / "d.csv")
    assert (tmp_path / "d.csv").read_text().splitlines() == ["fk,flag", "1.0,true", "2.0,false"]
    assert d == tmp_path / "d.csv"


def test_write_records_errors(tmp_path):
    with pytest.raises(sdckit.SdcError, match="unsupported extension") as info:
        write_records({"a": [1]}, tmp_path / "out.xlsx")
    assert str(tmp_path / "out.xlsx") in str(info.value)
    with pytest.raises(sdckit.SdcError, match="does not exist"):
        write_records({"a": [1]}, tmp_path / "no" / "such" / "out.csv")
    with pytest.raises(sdckit.SdcError):
        write_records({"a": [1, 2], "b": [1]}, tmp_path / "ragged.csv")


def test_csv_codes_with_leading_zeros_stay_text(tmp_path):
    """A column of whole numbers with a leading zero anywhere ("01") is a code: read as text,
    so "01" and "1" stay two labels; a plain integer column stays numeric."""
    path = tmp_path / "codes.csv"
    path.write_text("region,n\n" + "".join(f"{r},{i}\n" for i, r in enumerate(["1"] * 5 + ["01", "2"])))
    for lazy in (False, True):
        df = sdckit.read_data(path, lazy=lazy)
        df = df.collect() if lazy else df
        assert df.schema["region"] == pl.String and df.schema["n"] == pl.Int64
        assert df["region"].unique().sort().to_list() == ["01", "1", "2"]
    assert sdckit.frequencies(sdckit.read_data(path), "region").n_patterns == 3
