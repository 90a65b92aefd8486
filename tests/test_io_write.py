"""sdckit.io.write_data: a protected frame written to CSV, TSV, Parquet, SPSS and Stata.

The oracle of the round-trip tests is the frame that was written: ``read_data`` of the
written file must give it back (rows, column order, values, nulls where cells were
suppressed, Enum categories), and ``read_metadata`` the input's labels. The raw codes in the
written files are checked by hand against the codes the source file was built with below.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit.io import atomic_write, read_data, read_metadata, write_data

# The source file: sex (labelled), edu (labelled, code 7 present in the data without a label;
# SPSS: code 9 "Refused" declared user-missing), town (text, "" = missing), inc (float, NaN).
SEX = [1, 2, 1, 2, 1, 2]
EDU = [1, 2, 3, 7, 7, 9]
TOWN = ["a", "b", "", "c", "a", "b"]
INC = [1.5, np.nan, 3.0, 4.25, 5.0, 6.0]
LABELS = {"sex": {1: "Male", 2: "Female"}, "edu": {1: "Low", 2: "Mid", 3: "High", 9: "Refused"}}
VAR_LABELS = {"sex": "Sex of respondent", "inc": "Monthly income"}
# cells set to null, as a local suppression would: (column, row)
SUPPRESSED = [("sex", 0), ("edu", 1), ("town", 3), ("inc", 4)]


def _source(tmp_path, ext: str):
    """Write the source file with pyreadstat (never with the code under test)."""
    pyreadstat = pytest.importorskip("pyreadstat")
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"sex": SEX, "edu": EDU, "town": TOWN, "inc": INC})
    path = tmp_path / f"source{ext}"
    if ext == ".dta":
        pyreadstat.write_dta(df, path, variable_value_labels=LABELS, column_labels=VAR_LABELS, file_label="Test survey")
    else:
        pyreadstat.write_sav(
            df,
            path,
            compress=ext == ".zsav",
            variable_value_labels=LABELS,
            column_labels=VAR_LABELS,
            variable_measure={"edu": "ordinal", "inc": "scale"},
            missing_ranges={"edu": [9]},
            file_label="Test survey",
        )
    return path


def _suppress(df: pl.DataFrame) -> pl.DataFrame:
    row = pl.int_range(pl.len())
    return df.with_columns(pl.when(row == i).then(None).otherwise(pl.col(c)).alias(c) for c, i in SUPPRESSED)


def _raw(path):
    """The codes as stored (pyreadstat, no labels applied), missing as None."""
    pyreadstat = pytest.importorskip("pyreadstat")
    reader = pyreadstat.read_dta if str(path).endswith(".dta") else pyreadstat.read_sav
    df, _ = reader(os.fspath(path), user_missing=False)
    return {c: [None if v != v else v for v in df[c].tolist()] for c in df.columns}


@pytest.mark.parametrize("ext", [".sav", ".zsav", ".dta"])
def test_round_trip_keeps_values_nulls_and_labels(tmp_path, ext):
    src = _source(tmp_path, ext)
    meta = read_metadata(src)
    protected = _suppress(read_data(src))
    out = write_data(protected, tmp_path / f"protected{ext}", metadata=meta)
    assert out == tmp_path / f"protected{ext}"

    back = read_data(out)
    assert back.equals(protected)  # rows, column order, values, nulls and Enum categories
    assert back.columns == ["sex", "edu", "town", "inc"] and back.height == 6
    for col, row in SUPPRESSED:
        assert back[col][row] is None
    # Stata keeps code 9 (it has no user-missing values); SPSS read it as missing
    edu9 = None if ext != ".dta" else "Refused"
    assert back["edu"].to_list() == ["Low", None, "High", "7", "7", edu9]

    # the stored codes are the source's codes (hand: EDU with row 1 suppressed), labels as given
    raw = _raw(out)
    assert raw["sex"] == [None, 2, 1, 2, 1, 2]
    assert raw["edu"] == [1, None, 3, 7, 7, None if ext != ".dta" else 9]
    again = read_metadata(out)
    assert again["value_labels"] == meta["value_labels"] == LABELS
    assert again["variable_labels"] == meta["variable_labels"] == VAR_LABELS
    assert again["file_label"] == "Test survey"
    if ext != ".dta":
        assert again["measure"] == meta["measure"] and meta["measure"]["edu"] == "ordinal"
        assert again["user_missing"] == meta["user_missing"] == {"edu": [9]}
    assert again["n_rows"] == 6


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_recoded_category_gets_a_new_code_and_label(tmp_path, ext):
    """Global recode "Low" + "Mid" -> "Low-Mid": the new category gets the code above every code
    of the column (hand: labelled 1, 2, 3, 9 and unlabelled 7 in use -> 10), its name as label;
    the labels of the removed categories are not written; the other codes are unchanged."""
    src = _source(tmp_path, ext)
    df = read_data(src)
    merged = pl.Enum(["Low-Mid", "High", "7", "Refused"])
    recoded = df.with_columns(pl.col("edu").cast(pl.String).replace({"Low": "Low-Mid", "Mid": "Low-Mid"}).cast(merged))
    out = write_data(recoded, tmp_path / f"recoded{ext}", metadata=read_metadata(src))
    assert _raw(out)["edu"] == [10, 10, 3, 7, 7, None if ext != ".dta" else 9]
    assert read_metadata(out)["value_labels"]["edu"] == {3: "High", 9: "Refused", 10: "Low-Mid"}
    back = read_data(out)
    assert back["edu"].cast(pl.String).to_list() == recoded["edu"].cast(pl.String).to_list()
    # categories now in code order: High (3), 7, Refused (9), Low-Mid (10)
    assert back.schema["edu"].categories.to_list() == ["High", "7", "Refused", "Low-Mid"]
    assert back.drop("edu").equals(recoded.drop("edu"))


def test_text_column_with_labels_is_coded_by_the_same_rules(tmp_path):
    """A labelled variable turned into text: labels -> their codes, "7" -> unlabelled code 7,
    other text -> new codes above 9 in sorted text order ("Other" 10, "Unknown" 11)."""
    src = _source(tmp_path, ".sav")
    df = read_data(src).with_columns(pl.Series("edu", ["Low", "Unknown", "High", "7", "Other", None], dtype=pl.String))
    out = write_data(df, tmp_path / "text.sav", metadata=read_metadata(src))
    assert _raw(out)["edu"] == [1, 11, 3, 7, 10, None]
    assert read_metadata(out)["value_labels"]["edu"] == {**LABELS["edu"], 10: "Other", 11: "Unknown"}
    assert read_data(out)["edu"].cast(pl.String).to_list() == df["edu"].to_list()


def test_unlabelled_code_whose_text_is_a_label_round_trips(tmp_path):
    """read_data names unlabelled code 7 "7 (unlabelled code)" when "7" is a label (of code 1)."""
    pyreadstat = pytest.importorskip("pyreadstat")
    pd = pytest.importorskip("pandas")
    src = tmp_path / "clash.sav"
    pyreadstat.write_sav(pd.DataFrame({"x": [1.0, 7, 2, 7]}), src, variable_value_labels={"x": {1: "7", 2: "two"}})
    df = read_data(src)
    assert df["x"].cast(pl.String).to_list() == ["7", "7 (unlabelled code)", "two", "7 (unlabelled code)"]
    out = write_data(df, tmp_path / "clash_out.sav", metadata=read_metadata(src))
    assert _raw(out)["x"] == [1, 7, 2, 7]
    assert read_data(out).equals(df)
    assert read_metadata(out)["value_labels"] == {"x": {1: "7", 2: "two"}}


def test_fully_suppressed_unlabelled_code_is_no_longer_a_category(tmp_path):
    """Documented: read_data makes categories only of labels and of codes present."""
    src = _source(tmp_path, ".dta")
    df = read_data(src)
    gone = df.with_columns(pl.when(pl.col("edu") == "7").then(None).otherwise(pl.col("edu")).alias("edu"))
    out = write_data(gone, tmp_path / "gone.dta", metadata=read_metadata(src))
    back = read_data(out)
    assert back.schema["edu"].categories.to_list() == ["Low", "Mid", "High", "Refused"]
    assert back["edu"].cast(pl.String).to_list() == gone["edu"].cast(pl.String).to_list()
    assert read_metadata(out)["value_labels"] == LABELS


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_enum_without_labels_gets_codes_in_category_order(tmp_path, ext):
    pytest.importorskip("pyreadstat")
    df = pl.DataFrame({"g": pl.Series(["a", None, "b", "a"], dtype=pl.Enum(["b", "a", "c"])), "n": [1, 2, 3, 4]})
    out = write_data(df, tmp_path / f"enum{ext}")
    assert _raw(out)["g"] == [2, None, 1, 2]  # hand: categories b, a, c -> 1, 2, 3
    assert read_metadata(out)["value_labels"] == {"g": {1: "b", 2: "a", 3: "c"}}
    back = read_data(out)
    assert back["g"].to_list() == df["g"].to_list()
    assert back.schema["g"] == df.schema["g"]


def test_spss_frame_to_stata_keeps_labels(tmp_path):
    src = _source(tmp_path, ".sav")
    df = _suppress(read_data(src))
    out = write_data(df, tmp_path / "converted.dta", metadata=read_metadata(src))
    assert read_data(out).equals(df)
    assert read_metadata(out)["value_labels"] == LABELS


@pytest.mark.parametrize("name, sep", [("out.csv", ","), ("out.tsv", "\t")])
def test_csv_round_trip(tmp_path, name, sep):
    df = pl.DataFrame(
        {
            "region": pl.Series(["north", None, "south"], dtype=pl.Enum(["south", "north"])),
            "age": [34, 51, None],
            "inc": [1.5, float("nan"), None],
        }
    )
    out = write_data(df, tmp_path / name)
    # hand: Enum as its text, null and NaN as empty fields
    assert out.read_text().splitlines() == [
        sep.join(["region", "age", "inc"]),
        sep.join(["north", "34", "1.5"]),
        sep.join(["", "51", ""]),
        sep.join(["south", "", ""]),
    ]
    back = read_data(out)
    expected = df.with_columns(pl.col("region").cast(pl.String), pl.col("inc").fill_nan(None))
    assert back.equals(expected)


def test_parquet_round_trip_keeps_enum(tmp_path):
    df = pl.DataFrame(
        {"region": pl.Series(["b", None, "a"], dtype=pl.Enum(["b", "a"])), "x": [1.0, None, 3.0], "t": ["u", "v", None]}
    )
    for name in ("out.parquet", "out.PQ"):
        back = read_data(write_data(df, tmp_path / name))
        assert back.equals(df) and back.schema == df.schema, name


def test_pandas_index_is_not_written(tmp_path):
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"a": [1, 2]}, index=[10, 20])
    out = write_data(pdf, tmp_path / "p.csv")
    assert out.read_text().splitlines() == ["a", "1", "2"]


def test_data_given_as_a_file_path_is_read_then_written(tmp_path):
    """write_data and write_records take a file path as the data, as every measure does."""
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,x\n2,y\n")
    back = read_data(write_data(src, tmp_path / "out.parquet"))
    assert back.equals(read_data(src)) and back["b"].to_list() == ["x", "y"]
    from sdckit.io import write_records

    assert write_records(str(src), tmp_path / "rec.csv").read_text() == "a,b\n1,x\n2,y\n"


def test_existing_file_is_kept_unless_overwrite(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old\n")
    with pytest.raises(sdckit.SdcError, match="already exists.*overwrite=True") as info:
        write_data({"a": [1]}, path)
    assert str(path) in str(info.value)
    assert path.read_text() == "old\n"
    write_data({"a": [1]}, path, overwrite=True)
    assert path.read_text() == "a\n1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary file left


def test_no_overwrite_also_when_the_file_appears_while_writing(tmp_path):
    """The finished file is published by a hard link, which refuses an existing name."""
    path = tmp_path / "race.csv"

    def write(tmp):
        with open(tmp, "w") as fh:
            fh.write("new\n")
        path.write_text("someone else\n")  # appears between the check and the publication

    with pytest.raises(FileExistsError):
        atomic_write(path, write, overwrite=False)
    assert path.read_text() == "someone else\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race.csv"]


def test_failed_write_leaves_the_old_file(tmp_path):
    """Stata names are at most 32 characters: the error names the column, the old file stays."""
    pytest.importorskip("pyreadstat")
    path = tmp_path / "out.dta"
    path.write_bytes(b"old")
    long_name = "x" * 33
    df = pl.DataFrame({"ok": [1, 2], long_name: ["secret-value", "b"]})
    with pytest.raises(sdckit.SdcError, match=f"data: column '{long_name}' cannot be written to a Stata file") as info:
        write_data(df, path, overwrite=True)
    assert "secret-value" not in str(info.value)  # never a record value in a message
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.dta"]


def test_spss_label_too_long_for_a_value_label(tmp_path):
    pytest.importorskip("pyreadstat")
    df = pl.DataFrame({"g": pl.Series(["a" * 121], dtype=pl.Enum(["a" * 121]))})
    with pytest.raises(sdckit.SdcError, match="column 'g' has a category name longer than 120 bytes"):
        write_data(df, tmp_path / "long.sav")
    assert list(tmp_path.iterdir()) == []


def test_bad_input(tmp_path):
    with pytest.raises(sdckit.SdcError, match=r"unsupported extension '\.xlsx'.*\.csv, \.tsv, .*\.sav, .*\.dta"):
        write_data({"a": [1]}, tmp_path / "out.xlsx")
    with pytest.raises(sdckit.SdcError, match="does not exist"):
        write_data({"a": [1]}, tmp_path / "no" / "such" / "out.csv")
    with pytest.raises(sdckit.SdcError, match="metadata: got list"):
        write_data({"a": [1]}, tmp_path / "out.sav", metadata=[])
    with pytest.raises(sdckit.SdcError, match="metadata: 'value_labels' is a list"):
        write_data({"a": [1]}, tmp_path / "out.sav", metadata={"value_labels": []})
    with pytest.raises(sdckit.SdcError, match="^overwrite: got 'yes'; expected True or False$"):
        write_data({"a": [1]}, tmp_path / "out.csv", overwrite="yes")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(sdckit.SdcError, match="is a directory"):
        write_data({"a": [1]}, tmp_path / "folder.csv", overwrite=True)
    (tmp_path / "folder.csv").rmdir()
    nested = pl.DataFrame({"l": [[1, 2], [3]]})
    with pytest.raises(sdckit.SdcError, match="column 'l' has type List"):
        write_data(nested, tmp_path / "nested.csv")
    assert list(tmp_path.iterdir()) == []


def test_missing_pyreadstat_is_a_clear_error(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyreadstat", None)  # import pyreadstat -> ImportError
    with pytest.raises(sdckit.SdcError, match="writing the Stata file .* needs the optional package pyreadstat"):
        write_data({"a": [1]}, tmp_path / "out.dta")
    write_data({"a": [1]}, tmp_path / "out.csv")  # the other formats do not need it
