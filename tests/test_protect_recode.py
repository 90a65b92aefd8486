"""Global recoding and top/bottom coding (sdckit.protect.recode).

Expected values come from: the sdcMicro 5.8.1 reference cases in
``tests/data/reference/sdcmicro/protection.json`` (``globalRecode_age_vector_breaks``,
``topBotCoding_income_top_q95``), hand calculations written out in comments, and brute-force
oracles (a loop over the intervals; NumPy's type-7 quantile).
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, reference_cases, shared_file
from sdckit import SdcError
from sdckit._core import recode as core
from sdckit.protect.recode import global_recode, top_bottom_coding

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _case(case_id: str) -> dict:
    return next(c for c in reference_cases("protection.json") if c["id"] == case_id)


def _testdata() -> pl.DataFrame:
    return pl.read_csv(DATA / "sdcmicro" / "testdata.csv")


def _text(series) -> list:
    return [None if v is None else str(v) for v in pl.Series(series).cast(pl.String).to_list()]


# ----------------------------------------------------------------------------------------------
# the two sdcMicro reference cases
# ----------------------------------------------------------------------------------------------
def test_reference_vector_breaks_value_on_first_break_is_an_error():
    """sdcMicro turns the 98 records with age == 0 (the first break; intervals are open on the
    left) into NA without a warning; here that is an error that counts them."""
    case = _case("globalRecode_age_vector_breaks")
    breaks = case["parameters"]["breaks"]
    assert case["outputs"]["n_input_equal_0"] == 98 and breaks[0] == 0
    with pytest.raises(SdcError) as err:
        global_recode(_testdata(), "age", breaks=breaks)
    msg = str(err.value)
    assert msg.startswith("breaks: 98 value(s) of age fall outside the intervals (0, 100]")
    assert "98 of them equal to the first break" in msg


def test_reference_vector_breaks_reproduced_where_sdcmicro_kept_a_value():
    """Every record sdcMicro did not set to NA gets sdcMicro's label; the 98 records with
    age == 0 are the documented difference (an error above). With those ages missing in the
    input, the output equals sdcMicro's vector exactly, NA included (a missing value stays
    missing)."""
    case = _case("globalRecode_age_vector_breaks")
    expected = case["outputs"]["recoded"]
    d = _testdata()
    zero = (d["age"] == 0).to_numpy()
    assert [i for i, v in enumerate(expected) if v is None] == np.flatnonzero(zero).tolist()
    masked = d.with_columns(pl.when(pl.col("age") == 0).then(None).otherwise(pl.col("age")).alias("age"))
    res = global_recode(masked, "age", breaks=case["parameters"]["breaks"])
    assert _text(res.data["age"]) == expected
    assert res.data.schema["age"] == pl.Enum(case["outputs"]["levels"])
    assert res.n_changed == {"age": 4580 - 98}
    counts = res.data["age"].cast(pl.String).fill_null("NA").value_counts()
    assert dict(zip(counts["age"].to_list(), counts["count"].to_list())) == case["outputs"]["counts"]
    # the same records without the 98: identical labels
    kept = global_recode(d.filter(~pl.Series(zero)), "age", breaks=case["parameters"]["breaks"])
    assert _text(kept.data["age"]) == [v for v in expected if v is not None]


def test_reference_top_coding_at_the_95th_percentile():
    case = _case("topBotCoding_income_top_q95")
    p = case["parameters"]
    d = _testdata()
    res = top_bottom_coding(d, "income", value=p["value"], replacement=p["replacement"], kind=p["kind"])
    assert res.data["income"].to_list() == case["outputs"]["coded"]
    changed = np.flatnonzero((d["income"] != res.data["income"]).to_numpy()) + 1  # 1-based as R
    assert changed.tolist() == case["outputs"]["changed_rows"]
    assert res.n_changed == {"income": case["outputs"]["n_changed"]} == {"income": 223}
    # the 8 records equal to the cut are not beyond it (strict inequality)
    assert int((d["income"] == p["value"]).sum()) == case["outputs"]["n_equal_value_in_input"] == 8


# ----------------------------------------------------------------------------------------------
# break rules for a number of intervals, on hand-computed cases
# ----------------------------------------------------------------------------------------------
def _recode(values, **kw):
    return global_recode(pl.DataFrame({"x": values}), "x", **kw)


def test_equidistant_breaks_rounded_to_integers():
    # x = 3, 7, 12, B = 3: from 3 - 1 = 2 to 12 + 1 = 13 in steps of 11/3: 2, 5.667, 9.333, 13;
    # rounded 2, 6, 9, 13 (distinct, so kept); the first interval is closed on the left.
    res = _recode([3, 7, 12], breaks=3)
    assert res.details["breaks"]["x"] == [2.0, 6.0, 9.0, 13.0]
    assert res.details["labels"]["x"] == ["[2,6]", "(6,9]", "(9,13]"]
    assert _text(res.data["x"]) == ["[2,6]", "(6,9]", "(9,13]"]
    assert res.n_changed == {"x": 3}


def test_equidistant_breaks_not_rounded_when_rounding_creates_duplicates():
    # x = 0, 1, B = 4: from -1 to 2 in steps of 0.75: -1, -0.25, 0.5, 1.25, 2; rounded (half to
    # even) -1, -0, 0, 1, 2: -0 and 0 are equal, so the breaks stay unrounded.
    res = _recode([0.0, 1.0], breaks=4)
    assert res.details["breaks"]["x"] == [-1.0, -0.25, 0.5, 1.25, 2.0]
    assert _text(res.data["x"]) == ["(-0.25,0.5]", "(0.5,1.25]"]
    assert res.details["labels"]["x"][0] == "[-1,-0.25]"


def test_one_interval():
    # B = 1: the single interval (min - 1, max + 1] = [4, 11] (closed on the left)
    res = _recode([5, 10, 7], breaks=1)
    assert res.details["breaks"]["x"] == [4.0, 11.0]
    assert _text(res.data["x"]) == ["[4,11]"] * 3


def test_log_equidistant_breaks():
    # x = 1, 100, B = 2: log x from 0 to log 100; c = -1, log 10, log 100 + 1; exp: 1/e = 0.368,
    # 10, 100 e = 271.83; rounded 0, 10, 272 (distinct, 0 < 1 and 272 >= 100).
    res = _recode([1.0, 100.0, 10.0, 11.0], breaks=2, method="logEqui")
    assert res.details["breaks"]["x"] == [0.0, 10.0, 272.0]
    assert _text(res.data["x"]) == ["[0,10]", "(10,272]", "[0,10]", "(10,272]"]
    assert res.details["method"] == "log_equidistant" and res.parameters["method"] == "log_equidistant"


def test_log_equidistant_breaks_unrounded_with_eight_digit_labels():
    # x = 0.01, 0.02, B = 1: breaks 0.01 / e = 0.0036787944117, 0.02 e = 0.0543656365692; both
    # round to 0 (a duplicate), so they stay unrounded; labels with 8 significant digits.
    res = _recode([0.01, 0.02], breaks=1, method="log_equidistant")
    b = res.details["breaks"]["x"]
    assert b == pytest.approx([0.01 / math.e, 0.02 * math.e], rel=1e-14)
    assert res.details["labels"]["x"] == ["[0.0036787944,0.054365637]"]


def test_equal_amount_merges_duplicated_quantiles():
    # x = 1, 1, 1, 1, 2, 3 (n = 6), B = 3: type-7 positions h = 1 + 5 p = 1, 2.667, 4.333, 6;
    # q = x(1) = 1; x(2)..x(3) = 1, 1 -> 1; x(4) + 1/3 (x(5) - x(4)) = 4/3; x(6) = 3.
    # The duplicated 1 is merged: breaks 1, 4/3, 3, two intervals.
    x = [1.0, 1.0, 1.0, 1.0, 2.0, 3.0]
    res = _recode(x, breaks=3, method="equalAmount")
    assert res.details["breaks"]["x"] == pytest.approx([1.0, 4.0 / 3.0, 3.0], rel=1e-15)
    assert res.details["labels"]["x"] == ["[1,1.3333333]", "(1.3333333,3]"]
    assert _text(res.data["x"]) == ["[1,1.3333333]"] * 4 + ["(1.3333333,3]"] * 2
    # NumPy's type-7 quantile (its default) agrees before the merge
    q = np.quantile(np.asarray(x), [0, 1 / 3, 2 / 3, 1])
    assert res.details["breaks"]["x"] == pytest.approx(np.unique(q).tolist(), rel=1e-15)


def test_equal_amount_constant_variable_is_one_closed_interval():
    # every quantile is 5: one break, the closed interval [5, 5]
    res = _recode([5, 5, None], breaks=2, method="equal_amount")
    assert res.details["breaks"]["x"] == [5.0]
    assert _text(res.data["x"]) == ["[5,5]", "[5,5]", None]
    assert res.n_changed == {"x": 2}  # the missing value is not changed


def test_user_labels_and_infinite_end_points():
    res = _recode([-5, 0, 10, 99], breaks=[-math.inf, 0, 50, math.inf], labels=["low", "mid", "high"])
    assert _text(res.data["x"]) == ["low", "low", "mid", "high"]
    res = _recode([-5, 0, 10, 99], breaks=[-math.inf, 0, 50, math.inf])
    assert res.details["labels"]["x"] == ["(-Inf,0]", "(0,50]", "(50,Inf]"]


def test_large_breaks_take_more_digits_when_eight_collide():
    # %.8g writes 123456789 and 123456790 both as 1.2345679e+08: R's cut takes 9 digits
    assert core.format_breaks([123456789.0, 123456790.0]) == ["123456789", "123456790"]
    assert core.format_breaks([0.0, 95300000.0, 1e8]) == ["0", "95300000", "1e+08"]


@SETTINGS
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=8, unique=True),
    st.booleans(),
)
def test_interval_codes_match_a_loop_over_the_intervals(x, breaks, closed):
    """Oracle: for each value, the first interval (b_{l-1}, b_l] holding it (b_0 too when
    closed on the left); -2 when none does."""
    b = np.sort(np.asarray(breaks))
    got = core.interval_codes(np.asarray(x), b, closed)
    for v, g in zip(x, got):
        want = -2
        for i in range(b.size - 1):
            if b[i] < v <= b[i + 1] or (closed and i == 0 and v == b[0]):
                want = i
                break
        assert g == want


# ----------------------------------------------------------------------------------------------
# category maps and hierarchies
# ----------------------------------------------------------------------------------------------
def test_mapping_many_to_one_counts_per_original_category():
    d = pl.DataFrame({"edu": ["a", "b", "c", None, "b", "d"], "y": [1, 2, 3, 4, 5, 6]})
    res = global_recode(d, "edu", mapping={"a": "low", "b": "low", "c": "high", "d": "d"})
    assert res.data["edu"].to_list() == ["low", "low", "high", None, "low", "d"]
    # changed: the records of a, b (twice), c; "d" keeps its name and the missing value stays
    assert res.n_changed == {"edu": 4}
    assert res.n_changed_by_category == {"edu": {"a": 1, "b": 2, "c": 1}}
    assert res.details["mapping"] == {"edu": {"a": "low", "b": "low", "c": "high", "d": "d"}}
    assert res.data["y"].to_list() == d["y"].to_list()


def test_mapping_ordered_column_keeps_the_rank_of_the_first_merged_category():
    # categories 1..8, merging {2,3} and {6,7}: the new categories sit where 2 and 6 were, so
    # the order is 1, 23, 4, 5, 67, 8 (merged categories keep the rank of their first member)
    cats = [f"c{i}" for i in range(1, 9)]
    d = pl.DataFrame({"o": pl.Series(["c7", "c1", "c3", "c8"]).cast(pl.Enum(cats))})
    m = {c: c for c in cats} | {"c2": "c23", "c3": "c23", "c6": "c67", "c7": "c67"}
    res = global_recode(d, "o", mapping=m)
    assert res.data.schema["o"] == pl.Enum(["c1", "c23", "c4", "c5", "c67", "c8"])
    assert res.data["o"].cast(pl.String).to_list() == ["c67", "c1", "c23", "c8"]
    assert res.n_changed == {"o": 2}


def test_mapping_per_variable_and_numbers():
    d = pl.DataFrame({"a": [1, 2, 3, 3], "b": ["x", "y", "x", "z"]})
    res = global_recode(d, ["a", "b"], mapping={"a": {1: 1, 2: 1, 3: 2}, "b": {"x": "x", "y": "x", "z": "z"}})
    assert res.data["a"].to_list() == [1, 1, 2, 2] and res.data.schema["a"].is_integer()
    assert res.data["b"].to_list() == ["x", "x", "x", "z"]
    assert res.n_changed == {"a": 3, "b": 1}


def test_mapping_not_covering_the_data_names_the_categories():
    d = pl.DataFrame({"edu": ["a", "b", "c", "d"]})
    with pytest.raises(SdcError) as err:
        global_recode(d, "edu", mapping={"a": "x", "b": "x"})
    assert str(err.value) == (
        "mapping: 2 categor(y/ies) of edu not covered; expected a new category for every category of the data"
    )


def test_replay_from_json_parameters():
    d = pl.DataFrame({"a": [1, 2, 3, 3]})
    res = global_recode(d, "a", mapping={1: "low", 2: "low", 3: "high"})
    params = json.loads(json.dumps(res.to_dict()["parameters"]))  # keys become text: "1", "2", "3"
    again = global_recode(d, **params)
    assert again.data.equals(res.data)


# an excerpt of ARX's adult education hierarchy (arx-deidentifier/arx, data/
# adult_hierarchy_education.csv, Apache-2.0): category; level 1; level 2; level 3
ARX_EDUCATION = """Bachelors;Undergraduate;Higher education;*
Some-college;Undergraduate;Higher education;*
11th;High School;Secondary education;*
HS-grad;High School;Secondary education;*
Masters;Graduate;Higher education;*
Doctorate;Graduate;Higher education;*
"""


def test_hierarchy_from_an_arx_csv(tmp_path):
    path = tmp_path / "edu.csv"
    path.write_text(ARX_EDUCATION)
    d = pl.DataFrame({"edu": ["Masters", "HS-grad", "Bachelors", None, "11th"]})
    res = global_recode(d, "edu", hierarchy=path, level=1)
    assert res.data["edu"].to_list() == ["Graduate", "High School", "Undergraduate", None, "High School"]
    res2 = global_recode(d, "edu", hierarchy=str(path), level=2)
    assert res2.data["edu"].to_list() == [
        "Higher education",
        "Secondary education",
        "Higher education",
        None,
        "Secondary education",
    ]
    assert res2.parameters["hierarchy"] == str(path) and res2.details["level"] == 2


def test_hierarchy_as_a_table_or_rows_with_numbers_matching_text():
    # ages are integers in the data and text in the hierarchy: 1 and "1" are the same category
    rows = [["1", "0-4", "*"], ["2", "0-4", "*"], ["7", "5-9", "*"]]
    d = pl.DataFrame({"age": [7, 1, 2, 7]})
    by_rows = global_recode(d, "age", hierarchy=rows, level=1)
    assert by_rows.data["age"].to_list() == ["5-9", "0-4", "0-4", "5-9"]
    frame = pl.DataFrame({"c0": [1, 2, 7], "c1": ["0-4", "0-4", "5-9"], "c2": ["*"] * 3})
    by_frame = global_recode(d, "age", hierarchy=frame.to_pandas(), level=2)
    assert by_frame.data["age"].to_list() == ["*"] * 4
    assert by_frame.parameters["hierarchy"] == [[1, "0-4", "*"], [2, "0-4", "*"], [7, "5-9", "*"]]


def test_hierarchy_missing_categories_are_named():
    d = pl.DataFrame({"edu": ["Masters", "Preschool", "9th"]})
    rows = [r.split(";") for r in ARX_EDUCATION.splitlines()]
    with pytest.raises(SdcError, match=r"^hierarchy: 2 categor\(y/ies\) of edu not covered;"):
        global_recode(d, "edu", hierarchy=rows, level=1)


def test_hierarchy_level_out_of_range():
    with pytest.raises(SdcError, match=r"^level: got 4; expected an integer in \[1, 3\]"):
        global_recode({"e": ["Masters"]}, "e", hierarchy=[r.split(";") for r in ARX_EDUCATION.splitlines()], level=4)


@pytest.mark.shared_data
def test_hierarchy_on_the_full_arx_adult_file():
    """ARX's education hierarchy on the 30,162 adult records against a dict look-up."""
    adult = pl.read_csv(shared_file("arx-adult", "adult.csv"), separator=";")
    path = shared_file("arx-adult", "adult_hierarchy_education.csv")
    lookup = {ln.split(";")[0]: ln.split(";")[2] for ln in path.read_text().splitlines() if ln}
    res = global_recode(adult, "education", hierarchy=path, level=2)
    assert res.data["education"].to_list() == [lookup[v] for v in adult["education"].to_list()]
    assert res.n_changed == {"education": adult.height}  # every category is renamed at level 2


# ----------------------------------------------------------------------------------------------
# top and bottom coding
# ----------------------------------------------------------------------------------------------
def test_bottom_coding_numbers_missing_untouched_and_integer_kept():
    d = pl.DataFrame({"x": [1, 5, None, 2, 9], "y": [1.5, None, 3.0, 0.5, 4.0]})
    res = top_bottom_coding(d, ["x", "y"], value=3, replacement=0, kind="bottom")
    # x < 3: 1 and 2 -> 0; y < 3: 1.5 and 0.5 -> 0 (3.0 itself is not below the cut)
    assert res.data["x"].to_list() == [0, 5, None, 0, 9] and res.data.schema["x"] == pl.Int64
    assert res.data["y"].to_list() == [0.0, None, 3.0, 0.0, 4.0]
    assert res.n_changed == {"x": 2, "y": 2}
    top = top_bottom_coding(d, "x", value=4)  # default replacement: the cut itself
    assert top.data["x"].to_list() == [1, 4, None, 2, 4]


def test_top_coding_ordered_categories():
    cats = ["low", "mid", "high", "vhigh"]
    d = pl.DataFrame({"o": pl.Series(["low", "vhigh", "mid", "high", None]).cast(pl.Enum(cats))})
    # default: high and vhigh join the cut category "mid"
    res = top_bottom_coding(d, "o", value="mid")
    assert res.data["o"].cast(pl.String).to_list() == ["low", "mid", "mid", "mid", None]
    assert res.data.schema["o"] == pl.Enum(["low", "mid"])
    assert res.n_changed_by_category == {"o": {"high": 1, "vhigh": 1}}
    # a new label takes the place of the first category above the cut
    res = top_bottom_coding(d, "o", value="mid", replacement="high+")
    assert res.data.schema["o"] == pl.Enum(["low", "mid", "high+"])
    assert res.data["o"].cast(pl.String).to_list() == ["low", "high+", "mid", "high+", None]
    assert res.details["categories"] == {"o": ["low", "mid", "high+"]}


def test_bottom_coding_text_column_with_categories():
    d = pl.DataFrame({"s": ["b", "a", "d", "c"]})
    res = top_bottom_coding(d, "s", value="c", replacement="<=c", kind="bottom", categories=["a", "b", "c", "d"])
    # below "c": a and b -> "<=c"; the column stays text
    assert res.data["s"].to_list() == ["<=c", "<=c", "d", "c"] and res.data.schema["s"] == pl.String
    assert res.details["categories"] == {"s": ["<=c", "c", "d"]}


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "breaks, pattern",
    [
        ([0, 30, 15, 60], r"^breaks: break 3 is not above break 2 \(unsorted or overlapping intervals\)"),
        ([0, 15, 15, 30], r"^breaks: break 3 is not above break 2"),
        ([5], r"^breaks: got 1 break\(s\); expected"),
        (0, r"^breaks: got 0; expected an integer >= 1"),
        (2.5, r"^breaks: got 2.5; expected an integer >= 1"),
        # refused by the declaration (each edge a number),
        ([0, "a"], r"^breaks: got 'a'; expected a number"),
        ([0, math.nan], r"^breaks: got nan; expected a number"),
    ],
)
def test_bad_breaks(breaks, pattern):
    with pytest.raises(SdcError, match=pattern):
        _recode([1, 2, 3], breaks=breaks)


@pytest.mark.parametrize("values", [[0.0, 1.0, 2.0], [-1.0, 3.0]])
def test_log_equidistant_needs_positive_values(values):
    with pytest.raises(SdcError, match=r"^x: \d value\(s\) <= 0; expected positive values for method"):
        _recode(values, breaks=2, method="logEqui")


def test_value_above_the_last_break():
    with pytest.raises(SdcError, match=r"^breaks: 1 value\(s\) of x fall outside the intervals \(0, 10\]; expected"):
        _recode([1, 5, 11], breaks=[0, 10])


@pytest.mark.parametrize(
    "kw, pattern",
    [
        ({}, r"^mapping, breaks, hierarchy: got none; expected exactly one of them"),
        ({"breaks": 2, "mapping": {1: 1}}, r"^mapping, breaks, hierarchy: got mapping, breaks; expected exactly one"),
        ({"breaks": [0, 5], "method": "equalAmount"}, r"^method: applies only when breaks is a number"),
        ({"breaks": 2, "method": "quantile"}, r"^method: got 'quantile'; expected one of"),
        ({"mapping": {1: 1, 2: 1, 3: 1}, "labels": ["a"]}, r"^labels: applies only with breaks"),
        ({"breaks": 2, "labels": ["a"]}, r"^labels: got 1 label\(s\) for 2 interval\(s\) of x"),
        ({"hierarchy": [[1, "a"]]}, r"^level: missing"),
        ({"mapping": {1: None, 2: 1, 3: 1}}, r"^mapping: an entry's new category is missing"),
        ({"mapping": {"y": {1: 1}}}, r"mapping: y not among the variables; expected one entry per variable"),
    ],
)
def test_bad_recode_options(kw, pattern):
    with pytest.raises(SdcError, match=pattern):
        _recode([1, 2, 3], **kw)


def test_breaks_on_a_text_column():
    with pytest.raises(SdcError, match=r"^breaks: s not numeric; expected numeric variables"):
        global_recode({"s": ["a", "b"]}, "s", breaks=2)


@pytest.mark.parametrize(
    "kw, pattern",
    [
        ({"value": 1, "kind": "upper"}, r"^kind: got 'upper'; expected one of 'top', 'bottom'"),
        ({"value": "a"}, r"^value: got 'a'; expected a number"),
        ({"value": 1, "replacement": math.nan}, r"^replacement: got nan; expected a number"),
        ({"value": 1, "categories": [1, 2]}, r"^categories: x is numeric"),
    ],
)
def test_bad_top_bottom_options(kw, pattern):
    with pytest.raises(SdcError, match=pattern):
        top_bottom_coding({"x": [1, 2, 3]}, "x", **kw)


def test_top_coding_categorical_errors():
    with pytest.raises(SdcError, match=r"^s: neither numeric nor ordered; expected"):
        top_bottom_coding({"s": ["a", "b"]}, "s", value="a")
    with pytest.raises(SdcError, match=r"^value: not a category of s"):
        top_bottom_coding({"s": ["a", "b"]}, "s", value="z", categories=["a", "b"])
    with pytest.raises(SdcError, match=r"^categories: 1 categor\(y/ies\) of s not in the order;"):
        top_bottom_coding({"s": ["a", "b", "c"]}, "s", value="a", categories=["a", "b"])
    with pytest.raises(SdcError, match=r"^replacement: a category of s on the kept side of the cut"):
        top_bottom_coding({"s": ["a", "b", "c"]}, "s", value="b", replacement="a", categories=["a", "b", "c"])


# ----------------------------------------------------------------------------------------------
# properties: input never mutated; rows, columns and order kept; other columns unchanged;
# pandas in -> pandas out (same index), Polars in -> Polars out; deterministic
# ----------------------------------------------------------------------------------------------
frames = st.integers(1, 30).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "a": st.lists(st.integers(-5, 50), min_size=n, max_size=n),
            "b": st.lists(st.one_of(st.none(), st.floats(0.5, 1e4)), min_size=n, max_size=n),
            "c": st.lists(st.sampled_from(["u", "v", "w"]), min_size=n, max_size=n),
        }
    )
)
steps = st.sampled_from(
    [
        ("recode", "a", {"breaks": 3}),
        ("recode", "b", {"breaks": 2, "method": "equal_amount"}),
        ("recode", "b", {"breaks": 2, "method": "logEqui"}),
        ("recode", "a", {"breaks": [-math.inf, 0, 10, math.inf]}),
        ("recode", "c", {"mapping": {"u": "uv", "v": "uv", "w": "w"}}),
        ("top", "a", {"value": 20, "replacement": 21}),
        ("top", "b", {"value": 100.0, "kind": "bottom"}),
        ("top", "c", {"value": "v", "categories": ["u", "v", "w"]}),
    ]
)


def _columns(cols: dict) -> dict:
    """At least one observed value in ``b`` (breaks from the data need one)."""
    if all(v is None for v in cols["b"]):
        cols = cols | {"b": [1.0] + cols["b"][1:]}
    return cols


def _run(frame, step):
    op, var, kw = step
    if op == "recode":
        return global_recode(frame, var, **kw)
    return top_bottom_coding(frame, var, **kw)


@SETTINGS
@given(frames, steps)
def test_polars_input_kept_and_output_shape(cols, step):
    frame = pl.DataFrame(_columns(cols), schema={"a": pl.Int64, "b": pl.Float64, "c": pl.String})
    before = frame.clone()
    res = _run(frame, step)
    assert frame.equals(before)  # input not mutated
    out = res.data
    assert isinstance(out, pl.DataFrame) and out.columns == frame.columns and out.height == frame.height
    for other in [c for c in frame.columns if c != step[1]]:
        assert out[other].equals(frame[other])
    # missing stays missing, observed stays observed (no value silently lost)
    assert out[step[1]].is_null().to_list() == frame[step[1]].is_null().to_list()
    again = _run(frame, step)
    assert again.data.equals(out)
    # replay from the recorded parameters
    replay = _run(frame, (step[0], step[1], {k: v for k, v in res.parameters.items() if k != "variables"}))
    assert replay.data.equals(out)


@SETTINGS
@given(frames, steps, st.integers(0, 10**6))
def test_pandas_input_keeps_its_index(cols, step, offset):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_columns(cols))
    frame.index = pd.Index(np.arange(len(frame)) * 3 + offset, name="rid")
    before = frame.copy(deep=True)
    res = _run(frame, step)
    pd.testing.assert_frame_equal(frame, before)
    out = res.data
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(frame.columns)
    assert out.index.equals(frame.index)
    for other in [c for c in frame.columns if c != step[1]]:
        pd.testing.assert_series_equal(out[other], frame[other], check_dtype=False)
    assert out[step[1]].isna().tolist() == frame[step[1]].isna().tolist()
