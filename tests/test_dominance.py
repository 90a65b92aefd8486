"""(n, k)-dominance and p % rule per cell of a key combination (business microdata)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import MissingColumnError, Scenario, SdcError, dominance_rules


def _firms() -> pl.DataFrame:
    # cell A: 80, 10, 10  (T = 100)
    # cell B: 50, 50      (T = 100)
    # cell C: 30, 30, 20, 20 (T = 100)
    # cell D: 40          (T = 40)
    # cell E: 0, 0        (T = 0)
    return pl.DataFrame(
        {
            "nace": ["A", "A", "A", "B", "B", "C", "C", "C", "C", "D", "E", "E"],
            "turnover": [80.0, 10, 10, 50, 50, 30, 30, 20, 20, 40, 0, 0],
        }
    )


def _by_cell(res, variable="turnover") -> dict:
    return {c["cell"]["nace"]: c for c in res.cells if c["variable"] == variable}


def test_hand_worked_defaults():
    # (2, 85)-dominance: A 80 + 10 = 90 > 85 -> sensitive; B 100 > 85 -> sensitive;
    #   C 30 + 30 = 60 <= 85 -> safe; D 40 > 34 -> sensitive; E 0 > 0 false -> safe.
    # p % rule, p = 10: A 100 - 80 - 10 = 10 < 8? no -> safe; B 0 < 5 -> sensitive;
    #   C 100 - 60 = 40 < 3? no; D 0 < 4 -> sensitive; E 0 < 0 false -> safe.
    res = dominance_rules(_firms(), "nace", "turnover")
    cells = _by_cell(res)
    assert {k: c["dominance"] for k, c in cells.items()} == {"A": True, "B": True, "C": False, "D": True, "E": False}
    assert {k: c["p_percent"] for k, c in cells.items()} == {"A": False, "B": True, "C": False, "D": True, "E": False}
    assert {k: c["n_contributors"] for k, c in cells.items()} == {"A": 3, "B": 2, "C": 4, "D": 1, "E": 2}
    assert res.n_cells == {"turnover": 5}
    assert res.n_sensitive == {"turnover": 3}
    assert res.n_dominance == {"turnover": 3} and res.n_p_percent == {"turnover": 2}
    assert res.share_sensitive["turnover"] == pytest.approx(3 / 5)


def test_hand_worked_other_parameters():
    # (1, 75): A 80 > 75 -> yes; B 50 > 75 no; C 30 no; D 40 > 30 yes.
    # p = 15: A 10 < 12 -> yes (the second contributor learns 80 within 12.5 %).
    res = dominance_rules(_firms(), "nace", "turnover", n_largest=1, dominance_percent=75, p_percent=15)
    cells = _by_cell(res)
    assert {k: c["dominance"] for k, c in cells.items()} == {"A": True, "B": False, "C": False, "D": True, "E": False}
    assert cells["A"]["p_percent"] is True
    # k = 100: the n largest can never hold more than the whole total
    res = dominance_rules(_firms(), "nace", "turnover", n_largest=3, dominance_percent=100, p_percent=0)
    assert res.n_dominance == {"turnover": 0} and res.n_p_percent == {"turnover": 0}


def test_two_keys_and_two_variables_with_missing_values():
    # cells (A, 1): employees 5, 5, 5 -> T 15, top2 10 = 66.7 % -> safe; rest 5 < 0.5 no -> safe
    #       (A, 2): 100 (the third record has no employees value) -> sensitive
    # turnover: (A, 1): 1, 1, 98 -> top2 99 % -> sensitive; (A, 2): 10, 10 -> sensitive
    # the record with a missing region is in no cell.
    d = pd.DataFrame(
        {
            "nace": ["A", "A", "A", "A", "A", "A"],
            "region": [1, 1, 1, 2, 2, None],
            "employees": [5.0, 5.0, 5.0, 100.0, np.nan, 7.0],
            "turnover": [1.0, 1.0, 98.0, 10.0, 10.0, 3.0],
        }
    )
    res = dominance_rules(d, ["nace", "region"], ["employees", "turnover"])
    emp = {c["cell"]["region"]: c for c in res.cells if c["variable"] == "employees"}
    tur = {c["cell"]["region"]: c for c in res.cells if c["variable"] == "turnover"}
    assert emp["1"]["sensitive"] is False and emp["2"]["sensitive"] is True
    assert emp["2"]["n_contributors"] == 1 and tur["2"]["n_contributors"] == 2
    assert tur["1"]["dominance"] is True and tur["2"]["p_percent"] is True
    assert res.n_excluded == {"employees": 2, "turnover": 1}


def _oracle(nace, x, n_largest, k, p) -> dict:
    out = {}
    for c in sorted(set(nace)):
        xs = sorted((v for a, v in zip(nace, x) if a == c), reverse=True)
        t = sum(xs)
        top = sum(xs[:n_largest])
        x1 = xs[0]
        x2 = xs[1] if len(xs) > 1 else 0.0
        out[c] = (top > k / 100 * t, max(t - x1 - x2, 0.0) < p / 100 * x1)
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 1000)), min_size=1, max_size=40),
    st.integers(1, 4),
    st.floats(0, 100),
    st.floats(0, 50),
    st.randoms(use_true_random=False),
)
def test_brute_force_oracle_row_order_and_relabelling(rows, n_largest, k, p, rnd):
    nace = [r[0] for r in rows]
    x = [float(r[1]) for r in rows]
    want = _oracle(nace, x, n_largest, k, p)
    res = dominance_rules(pl.DataFrame({"nace": nace, "x": x}), "nace", "x", n_largest=n_largest,
                          dominance_percent=k, p_percent=p)  # fmt: skip
    got = {c["cell"]["nace"]: (c["dominance"], c["p_percent"]) for c in res.cells}
    assert got == want
    perm = list(range(len(rows)))
    rnd.shuffle(perm)
    relabel = {"a": "z", "b": "y", "c": "x", "d": "w"}
    shuffled = pl.DataFrame({"nace": [relabel[nace[i]] for i in perm], "x": [x[i] for i in perm]})
    res2 = dominance_rules(shuffled, "nace", "x", n_largest=n_largest, dominance_percent=k, p_percent=p)
    got2 = {c["cell"]["nace"]: (c["dominance"], c["p_percent"]) for c in res2.cells}
    assert got2 == {relabel[c]: v for c, v in got.items()}


def test_scenario_gives_keys_and_numeric_keys():
    sc = Scenario(keys=["nace"], numeric_keys=["turnover"])
    res = dominance_rules(_firms(), scenario=sc)
    assert res.n_sensitive == {"turnover": 3}


def test_aggregates_only_and_frame():
    res = dominance_rules(_firms(), "nace", "turnover")
    text = str(res.to_dict())
    assert "80" not in text and "100" not in text  # no contribution or total
    frame = res.to_frame()
    assert frame.columns == ["nace", "variable", "n_contributors", "dominance", "p_percent", "sensitive"]
    assert frame.height == 5
    assert [c["cell"]["nace"] for c in res.sensitive_cells()] == ["A", "B", "D"]
    assert "Sensitive cells" in str(res.summary())
    d = res.to_dict()
    assert d["n_sensitive"] == {"turnover": 3} and len(d["sensitive_cells"]) == 3


def test_input_not_mutated():
    d = _firms().to_pandas()
    before = d.copy()
    dominance_rules(d, "nace", "turnover")
    pd.testing.assert_frame_equal(d, before)


def test_bad_inputs():
    d = _firms()
    with pytest.raises(MissingColumnError):
        dominance_rules(d, "nace", "sales")
    with pytest.raises(SdcError, match="n_largest"):
        dominance_rules(d, "nace", "turnover", n_largest=0)
    with pytest.raises(SdcError, match="dominance_percent"):
        dominance_rules(d, "nace", "turnover", dominance_percent=120)
    with pytest.raises(SdcError, match="p_percent"):
        dominance_rules(d, "nace", "turnover", p_percent=-1)
    with pytest.raises(SdcError, match="1 negative value") as err:
        dominance_rules(d.with_columns(pl.col("turnover") - 70), "nace", "turnover")
    assert "-30" not in str(err.value)  # a message never shows a record value
    with pytest.raises(SdcError, match="expected numbers"):
        dominance_rules(d, "turnover", "nace")
    with pytest.raises(SdcError, match="infinite"):
        dominance_rules(d.with_columns(pl.lit(np.inf).alias("turnover")), "nace", "turnover")


def test_public_names():
    assert sdckit.dominance_rules is dominance_rules
    assert "dominance_rules" in sdckit.__all__ and "DominanceResult" in sdckit.__all__
