"""The independent target check (``tests/target_oracle.py``) on hand-made tables, each
expected answer written out: the spec's worked examples (ALGORITHMS.md A.1.1, A.3, A.4, B.2,
B.3, B.5), EMDs worked by hand and against the transport problem solved as a linear program,
and the suppression counts of small files."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from target_oracle import (
    counts,
    entropy_h,
    equal_distance,
    hierarchy_distance,
    measure,
    pattern_frequencies,
    recursive_l,
    tree_emd,
    violations,
)

# spec 0.5: the 10-record reference table (S002)
S002 = pl.DataFrame(
    {
        "residence": ["U", "U", "U", "U", "R", "U", "U", "U", "U", "U"],
        "gender": ["F", "F", "F", "M", "F", "M", "F", "M", "F", "F"],
        "education": ["SI", "SI", "PI", "SC", "SC", "SC", "PC", "PS", "SI", "SI"],
        "labor": ["E", "E", "N", "E", "U", "E", "N", "U", "N", "N"],
        "w": [180.0, 180, 215, 76, 186, 76, 180, 215, 186, 76],
        "health": ["yes", "yes", "yes", "yes", "yes", "no", "no", "yes", "no", "yes"],
        "hid": [1, 1, 1, 2, 2, 2, 3, 3, 4, 4],
    }
)
S002_KEYS = ["residence", "gender", "education", "labor"]


# ----------------------------------------------------------------------------------------------
# frequencies and k
# ----------------------------------------------------------------------------------------------
def test_frequencies_of_the_spec_example_with_every_kind_of_pattern():
    """Spec A.1.1 Example 2 (alpha = 1): f = (4, 3, 6, 7, 4, 2, 8, 4), F = (160, 90, 250, 300,
    220, 110, 360, 160). Record 1 (M, SC, E): itself and record 8, plus the partial patterns
    (M, NA, E) and (NA, NA, E); record 3 (M, NA, E): itself, the complete 1, 2, 8 and the
    partial 4 and all-missing 7; record 7 (all missing): every record."""
    df = pl.DataFrame(
        {
            "a": ["M", "M", "M", None, "F", "F", None, "M"],
            "b": ["SC", "SI", None, None, "SC", "SC", None, "SC"],
            "c": ["E", "E", "E", "E", None, "U", None, "E"],
            "w": [10.0, 20, 30, 40, 50, 60, 70, 80],
        }
    )
    m = measure(df, df, ["a", "b", "c"], {"k": 3})
    assert m["k"] == 2 and m["k_violations"] == 1  # record 6 (F, SC, U): itself and (F, SC, NA)
    from target_oracle import _codes

    f, F = pattern_frequencies(_codes(df, ["a", "b", "c"], set()), df["w"].to_numpy())
    assert f.tolist() == [4, 3, 6, 7, 4, 2, 8, 4]
    assert F.tolist() == [160, 90, 250, 300, 220, 110, 360, 160]


def test_k_on_the_reference_table_and_one_key():
    """Spec A.2: f = (2,2,1,2,1,2,1,1,2,2): 4 records violate 2-anonymity, all 10 violate 3.
    One key (A.1.1 rule 4): values x, x, y and one missing: f(x) = 2 + 1, f(y) = 1 + 1, f(NA) = 4."""
    assert violations(S002, S002, S002_KEYS, {"k": 2}) == {"k": {"value": 1.0, "required": 2, "records": 4}}
    assert violations(S002, S002, S002_KEYS, {"k": 3})["k"]["records"] == 10
    one = pl.DataFrame({"a": ["x", "x", "y", None]})
    from target_oracle import _codes

    f, _ = pattern_frequencies(_codes(one, ["a"], set()))
    assert f.tolist() == [3, 3, 2, 4]


def test_records_suppressed_whole_are_removed_under_record_suppression():
    """Two records suppressed whole (every key not at its top, "*", missing): under ARX's
    model they belong to no class; the three others are a class of 3. Under the cell rule
    the two all-missing records match everything: f = 5 for them, 3 for the others (the
    all-missing pattern is not added to complete ones)."""
    orig = pl.DataFrame({"a": ["x"] * 5, "b": ["1", "1", "1", "2", "3"], "s": ["p", "q", "r", "p", "p"]})
    rel = pl.DataFrame({"a": ["*"] * 3 + ["*", "*"], "b": ["1", "1", "1", None, None], "s": orig["s"]})
    target = {"k": 3, "l": 3, "sensitive": "s"}
    assert violations(rel, orig, ["a", "b"], target, suppression="records") == {}
    assert measure(rel, orig, ["a", "b"], target, suppression="records")["suppressed"] == 2
    # the cell rule: the all-missing-but-top class {p, p} is a class of its own for l
    cells = violations(rel, orig, ["a", "b"], target)
    assert cells == {"l": {"value": 1.0, "required": 3, "classes": 1}}
    assert counts(rel, orig, ["a", "b"]) == {"cells": 2, "records": 2}


def test_counts_on_the_file():
    """Cells: observed in the original, missing in the release (a value missing in both is not
    counted). Records: every key not at its top level so suppressed. Key c is at its top ("*")
    and does not count against a record suppressed whole; record 3 lost a only, record 4 had b
    missing already (not suppressed whole: b was never observed)."""
    orig = pl.DataFrame(
        {"a": ["x", "y", "z", "x", "y"], "b": ["1", "2", None, None, "3"], "c": ["u", "v", "u", "v", "u"]}
    )
    rel = pl.DataFrame(
        {"a": [None, "y", None, None, None], "b": [None, "2", None, None, None], "c": ["*", "*", "*", "*", None]}
    )
    # cells: a rows 1,3,4,5 (4) + b rows 1,5 (2) + c row 5 (1) = 7
    # records: rows 1 and 5 (a and b observed and gone); row 3 and 4 had b missing already
    assert counts(rel, orig, ["a", "b", "c"]) == {"cells": 7, "records": 2}


# ----------------------------------------------------------------------------------------------
# l-diversity
# ----------------------------------------------------------------------------------------------
def test_l_of_the_spec_classes():
    """Spec A.3 Example 2: counts (5, 3, 2, 1), |E| = 11: distinct 4, entropy exp(H) =
    3.457979, recursive 2 for c = 1 (5 < 6, not 5 < 3), 3 for c = 2 (5 < 6, not 5 < 2) and
    c = 3 (5 < 9, not 5 < 3). (10, 10, NA, NA): distinct 2, entropy 2, recursive 1; all
    missing: distinct 0, entropy 1, recursive 1."""
    from target_oracle import distinct_l

    cls = ["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"]
    assert distinct_l(cls) == 4
    assert math.exp(entropy_h(cls)) == pytest.approx(3.457979, abs=5e-7)
    assert [recursive_l(cls, c) for c in (1, 2, 3)] == [2, 3, 3]
    half = [10, 10, None, None]
    assert (distinct_l(half), math.exp(entropy_h(half)), recursive_l(half, 2)) == (2, 2.0, 1)
    empty = [None, None]
    assert (distinct_l(empty), math.exp(entropy_h(empty)), recursive_l(empty, 2)) == (0, 1.0, 1)


def test_l_on_the_reference_table():
    """Spec A.3 Example 1 (Health): only the classes {4, 6} and {9, 10} are 2-diverse, so 5 of
    the 7 classes fail l = 2 in each variant; every class meets l = 1."""
    for kind in ("distinct", "entropy", "recursive"):
        target = {"l": 2, "sensitive": "health", "diversity": kind, "c": 2}
        assert violations(S002, S002, S002_KEYS, target) == {"l": {"value": 1.0, "required": 2, "classes": 5}}, kind
        assert violations(S002, S002, S002_KEYS, {**target, "l": 1}) == {}


def test_entropy_l_of_two_equal_halves_meets_two():
    """A class {p, p, q, q}: H = log 2 exactly in theory, a rounding below it in floating
    point; it meets entropy l = 2 and fails l = 3 (exp(H) = 2)."""
    df = pl.DataFrame({"a": ["x"] * 4, "s": ["p", "p", "q", "q"]})
    assert violations(df, df, ["a"], {"l": 2, "sensitive": "s", "diversity": "entropy"}) == {}
    assert violations(df, df, ["a"], {"l": 3, "sensitive": "s", "diversity": "entropy"})["l"]["value"] == (
        pytest.approx(2.0)
    )


def test_recursive_l_uses_the_target_c():
    """Counts (4, 2, 1): (c, 2) needs 4 < c * 3: holds for c = 2, fails for c = 1.3 (3.9)."""
    df = pl.DataFrame({"a": ["x"] * 7, "s": list("pppp") + ["q", "q", "r"]})
    base = {"l": 2, "sensitive": "s", "diversity": "recursive"}
    assert violations(df, df, ["a"], {**base, "c": 2}) == {}
    assert violations(df, df, ["a"], {**base, "c": 1.3})["l"]["classes"] == 1


# ----------------------------------------------------------------------------------------------
# t-closeness
# ----------------------------------------------------------------------------------------------
def test_equal_distance_of_the_spec_examples():
    """Spec A.4: Health has P = (no 0.3, yes 0.7): an all-"yes" class is at 0.3, record 7's
    (all "no") at 0.7, {4, 6} and {9, 10} at 0.2. Three categories, P = (0.4, 0.4, 0.2), Q =
    (1, 0, 0): (0.6 + 0.4 + 0.2) / 2 = 0.6."""
    m = measure(S002, S002, S002_KEYS, {"t": 0.5, "sensitive": "health"})
    assert m["t"] == pytest.approx(0.7) and m["t_failing"] == 1
    assert measure(S002, S002, S002_KEYS, {"t": 0.25, "sensitive": "health"})["t_failing"] == 5
    assert equal_distance({"a": 0.4, "b": 0.4, "c": 0.2}, {"a": 1.0}) == pytest.approx(0.6)


def test_t_takes_p_from_the_whole_input():
    """P comes from every record of the input, the suppressed ones too: the class {p, p, q}
    kept after two records (q, q) were suppressed whole is at |2/3 - 2/5| = 4/15 from P =
    (p 2/5, q 3/5), not at 0 from the kept records' own distribution."""
    orig = pl.DataFrame({"a": ["x", "x", "x", "y", "z"], "s": ["p", "p", "q", "q", "q"]})
    rel = orig.with_columns(pl.Series("a", ["x", "x", "x", None, None]))
    m = measure(rel, orig, ["a"], {"t": 0.1, "sensitive": "s"}, suppression="records")
    assert m["t"] == pytest.approx(4 / 15) and m["t_failing"] == 1


#: a hierarchy of height 2: {a, b} under g1, {c, d} under g2, both under *
H2 = [["a", "g1", "*"], ["b", "g1", "*"], ["c", "g2", "*"], ["d", "g2", "*"]]


def test_hierarchical_emd_by_hand():
    """P uniform over a, b, c, d. Q = (1/2, 1/2, 0, 0): the extras p - q are (-1/4, -1/4, 1/4,
    1/4); g1 and g2 cost nothing (one sign each), their net extras -1/2 and 1/2 meet at the
    top: 2/2 * 1/2 = 0.5. Q = (1/2, 0, 1/2, 0): within g1 +1/4 and -1/4 meet at level 1, 1/2 *
    1/4, the same within g2, nothing left for the top: 0.25. Ground distances: a-b 1/2, a-c 1."""
    p = dict.fromkeys("abcd", 0.25)
    assert tree_emd(H2, p, {"a": 0.5, "b": 0.5}) == pytest.approx(0.5)
    assert tree_emd(H2, p, {"a": 0.5, "c": 0.5}) == pytest.approx(0.25)
    assert tree_emd(H2, p, p) == 0.0
    assert (hierarchy_distance(H2, "a", "b"), hierarchy_distance(H2, "a", "c"), hierarchy_distance(H2, "a", "a")) == (
        0.5,
        1.0,
        0.0,
    )


def test_hierarchical_t_on_a_file():
    """Classes x = {a, b} and y = {c, d} against P uniform: each at 0.5 (the worked example
    above); a t of 0.4 fails both, 0.5 holds. The hierarchy as a mapping gives the same."""
    df = pl.DataFrame({"k": ["x", "x", "y", "y"], "s": ["a", "b", "c", "d"]})
    target = {"t": 0.4, "sensitive": "s", "t_distance": "hierarchical"}
    mapping = {r[0]: r[1:] for r in H2}
    for hier in (H2, mapping):
        assert violations(df, df, ["k"], target, hierarchies={"s": hier}) == {
            "t": {"value": pytest.approx(0.5), "required": 0.4, "classes": 2}
        }
        assert violations(df, df, ["k"], {**target, "t": 0.5}, hierarchies={"s": hier}) == {}


def _lp_emd(leaves, dist, p, q) -> float:
    """The EMD as the transport problem: min sum d_ij f_ij, f >= 0, rows sum to p, columns to q."""
    k = len(leaves)
    cost = [dist(a, b) for a, b in itertools.product(leaves, leaves)]
    a_eq, b_eq = [], []
    for i in range(k):
        a_eq.append([1.0 if r == i else 0.0 for r in range(k) for _ in range(k)])
        b_eq.append(p.get(leaves[i], 0.0))
    for j in range(k):
        a_eq.append([1.0 if c == j else 0.0 for _ in range(k) for c in range(k)])
        b_eq.append(q.get(leaves[j], 0.0))
    return float(linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs").fun)


#: three levels, uneven groups: {a, b, c} under s, {d} alone under t (t repeats d's group), e
H3 = [
    ["a", "s", "u", "*"],
    ["b", "s", "u", "*"],
    ["c", "s2", "u", "*"],
    ["d", "d", "v", "*"],
    ["e", "e2", "v", "*"],
    ["f", "f2", "f3", "*"],
]


@settings(max_examples=30, deadline=None)
@given(
    p=st.lists(st.integers(0, 6), min_size=6, max_size=6).filter(any),
    q=st.lists(st.integers(0, 6), min_size=6, max_size=6).filter(any),
)
def test_emds_equal_the_transport_problem(p, q):
    """Both distances equal the minimum-cost transport of Q to P with their ground distance
    (equal: 1 between distinct values; hierarchical: LCA level / height), on random
    distributions over the 6 leaves of a 3-level hierarchy."""
    leaves = [r[0] for r in H3]
    pd_ = {v: x / sum(p) for v, x in zip(leaves, p) if x}
    qd = {v: x / sum(q) for v, x in zip(leaves, q) if x}
    assert tree_emd(H3, pd_, qd) == pytest.approx(_lp_emd(leaves, lambda a, b: hierarchy_distance(H3, a, b), pd_, qd))
    assert equal_distance(pd_, qd) == pytest.approx(_lp_emd(leaves, lambda a, b: float(a != b), pd_, qd))


def test_hierarchy_must_cover_the_values():
    with pytest.raises(ValueError, match="does not cover"):
        tree_emd(H2, {"a": 1.0}, {"z": 1.0})


# ----------------------------------------------------------------------------------------------
# risk
# ----------------------------------------------------------------------------------------------
def test_individual_and_global_risk_of_the_reference_table():
    """Spec B.2 / B.3: weighted r = (0.0054245199 x2, 0.0250964394, 0.0125634252, 0.0282472793,
    0.0125634252, 0.0290109321, 0.0250964394, 0.0074038345 x2), ER = 0.1582346494, rate
    0.0158234649; unweighted r = 1/f, rate 0.7. Max risk 0.0290109321 (record 7)."""
    m = measure(S002, S002, S002_KEYS, {"max_global_risk": 0.02, "max_risk": 0.03}, weight="w")
    assert m["rate"] == pytest.approx(0.0158234649, abs=1e-10)
    assert m["max_risk"] == pytest.approx(0.0290109321, abs=1e-10)
    assert violations(S002, S002, S002_KEYS, {"max_global_risk": 0.02, "max_risk": 0.03}, weight="w") == {}
    assert set(violations(S002, S002, S002_KEYS, {"max_global_risk": 0.015, "max_risk": 0.029}, weight="w")) == {
        "max_global_risk",
        "max_risk",
    }
    unweighted = measure(S002, S002, S002_KEYS, {"max_global_risk": 0.5})
    assert unweighted["rate"] == pytest.approx(0.7) and unweighted["max_risk"] == 1.0


def test_approximation_for_more_than_two_records():
    """Spec B.2.3: f = 3, F = 300 gives the approximation 0.0049751244 (p / (f - 1 + p))."""
    from target_oracle import individual_risk

    assert individual_risk(np.array([3.0]), np.array([300.0]))[0] == pytest.approx(0.0049751244, abs=1e-10)
    assert individual_risk(np.array([4.0]), np.array([4.0]))[0] == 0.25  # F = f: 1/f


def test_household_rate_of_the_reference_table():
    """Spec B.5 Example 2: households {1,2,3}, {4,5,6}, {7,8}, {9,10}: xi^h = 0.0400730816;
    the household rule fails a target of 0.04 and holds at 0.041 (the individual rate
    0.0158 holds at both)."""
    target = {"max_global_risk": 0.04, "household": True}
    m = measure(S002, S002, S002_KEYS, target, weight="w", household="hid")
    assert m["household_rate"] == pytest.approx(0.0400730816, abs=1e-10)
    assert set(violations(S002, S002, S002_KEYS, target, weight="w", household="hid")) == {"household"}
    assert violations(S002, S002, S002_KEYS, {**target, "max_global_risk": 0.041}, weight="w", household="hid") == {}
