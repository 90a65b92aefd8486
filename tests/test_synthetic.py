"""synthetic_risk: hand-worked distances, brute-force oracles of the nearest-record search and
of the query counts, anonymeter's rate formulas, a planted leak and an independent sample."""

from __future__ import annotations

import json
import math
from itertools import product

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import TESTDATA, shared_file
from sdckit._core import synthetic as K


# ----------------------------------------------------------------------------------------------
# 1. distributions: a hand-worked example
# ----------------------------------------------------------------------------------------------
def test_distances_hand_example():
    # original counts a = (2, 1, 1, 0), synthetic b = (1, 1, 1, 1): p = (.5, .25, .25, 0), q = .25 each
    d = K.distances(np.array([2, 1, 1, 0]), np.array([1, 1, 1, 1]))
    # TV = (|.5-.25| + 0 + 0 + |0-.25|) / 2 = 0.25
    assert d["tv"].sum() == pytest.approx(0.25)
    # H^2 = ((sqrt(.5) - .5)^2 + (0 - .5)^2) / 2 = (0.0428932 + 0.25) / 2 = 0.1464466; H = 0.3826834
    assert math.sqrt(d["hellinger2"].sum()) == pytest.approx(0.3826834, abs=1e-7)
    # KL with 1/2 per cell: p~ = (2.5, 1.5, 1.5, .5)/6, q~ = 1.5/6 each:
    # 2.5/6 log(2.5/1.5) + .5/6 log(.5/1.5) = 0.2128440 - 0.0915510 = 0.1212930
    assert d["kl"].sum() == pytest.approx(0.1212930, abs=1e-7)


def test_equal_tables_have_zero_distance():
    d = K.distances(np.array([3, 0, 5]), np.array([3, 0, 5]))
    assert d["tv"].sum() == d["hellinger2"].sum() == d["kl"].sum() == 0


def _pair():
    ori = pl.DataFrame({"a": ["x", "x", "y", "z"], "b": ["u", "v", "u", "u"], "n": [1.0, 2.0, 3.0, 4.0]})
    syn = pl.DataFrame({"a": ["x", "y", "z", "w"], "b": ["u", "u", "u", "v"], "n": [1.0, 2.5, 3.5, 9.0]})
    return ori, syn


def test_synthetic_risk_distribution_hand_example():
    ori, syn = _pair()
    r = sdckit.synthetic_risk(ori, syn, keys=["a"], seed=1, similarity={"top": 2})
    # a: original (w 0, x 2, y 1, z 1)/4, synthetic (w 1, x 1, y 1, z 1)/4 -> the example above
    assert r.distribution["tv"] == pytest.approx(0.25)
    assert r.distribution["hellinger"] == pytest.approx(0.3826834, abs=1e-7)
    assert r.distribution["kl"] == pytest.approx(0.1212930, abs=1e-7)
    assert (r.distribution["cells_only_original"], r.distribution["cells_only_synthetic"]) == (0, 1)
    # the two cells that contribute 0.125 each: w and x (in label order)
    assert [c["cell"]["a"] for c in r.top_cells] == ["w", "x"]
    assert [c["tv"] for c in r.top_cells] == [0.125, 0.125]


def test_combinations_up_to_order():
    ori, syn = _pair()
    r = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], seed=1, similarity={"order": 1})
    assert [c["variables"] for c in r.by_combination] == [["a"], ["b"]]
    # b: original (u 3, v 1)/4, synthetic (u 3, v 1)/4: no distance
    assert r.by_combination[1]["tv"] == 0 and r.by_combination[1]["kl"] == 0
    both = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], seed=1, similarity={"order": 2})
    assert [c["variables"] for c in both.by_combination] == [["a"], ["b"], ["a", "b"]]
    # the joint table: original xu xv yu zu, synthetic xu yu zu wv: TV = (1/4 + 1/4) / 2 + ... = 0.25
    assert both.by_combination[2]["tv"] == pytest.approx(both.distribution["tv"]) == pytest.approx(0.25)


# ----------------------------------------------------------------------------------------------
# 2. nearest records: brute force
# ----------------------------------------------------------------------------------------------
def _brute(qn, qc, cn, cc, scale):
    d = np.zeros((len(qc), len(cc)))
    for i, j in product(range(len(qc)), range(len(cc))):
        s = float(np.sum(qc[i] != cc[j]))
        for v in range(qn.shape[1]):
            a, b = qn[i, v], cn[j, v]
            s += (
                0.0 if (np.isnan(a) and np.isnan(b)) else 1.0 if (np.isnan(a) or np.isnan(b)) else abs(a - b) / scale[v]
            )
        d[i, j] = s
    return d


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_nearest_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    qc, cc = rng.integers(-1, 3, (7, 2)), rng.integers(-1, 3, (11, 2))
    qn, cn = rng.integers(0, 5, (7, 2)).astype(float), rng.integers(0, 5, (11, 2)).astype(float)
    qn[rng.random(qn.shape) < 0.1] = np.nan
    cn[rng.random(cn.shape) < 0.1] = np.nan
    scale = np.array([4.0, 2.0])
    brute = _brute(qn, qc, cn, cc, scale)
    idx, dist = K.nearest(qn, qc, cn, cc, scale, 1, rng)
    np.testing.assert_allclose(dist[:, 0], brute.min(axis=1), atol=1e-6)
    np.testing.assert_allclose(brute[np.arange(7), idx[:, 0]], brute.min(axis=1), atol=1e-6)
    idx3, dist3 = K.nearest(qn, qc, cn, cc, scale, 3, rng)
    np.testing.assert_allclose(dist3, np.sort(brute, axis=1)[:, :3], atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_nearest_with_a_strong_category_bound_against_brute_force(seed):
    # many categories: few candidates share the fewest mismatches, so the search measures the
    # numbers of those only (the pruned path), and must still find the brute-force nearest
    rng = np.random.default_rng(seed)
    qc, cc = rng.integers(0, 8, (15, 4)), rng.integers(0, 8, (300, 4))
    qn, cn = rng.random((15, 2)), rng.random((300, 2))
    cn[rng.random(cn.shape) < 0.05] = np.nan
    scale = np.array([10.0, 10.0])
    brute = _brute(qn, qc, cn, cc, scale)
    dc = (qc[:, None, :] != cc[None, :, :]).sum(axis=2)
    assert np.mean(dc <= dc.min(axis=1, keepdims=True)) < 0.1  # the bound is strong here
    idx, dist = K.nearest(qn, qc, cn, cc, scale, 1, rng)
    np.testing.assert_allclose(dist[:, 0], brute.min(axis=1), atol=1e-6)
    np.testing.assert_allclose(brute[np.arange(15), idx[:, 0]], brute.min(axis=1), atol=1e-6)


def test_ties_are_broken_at_random():
    # one query, five identical candidates: every one is chosen over many seeds
    q = np.zeros((1, 1), dtype=np.int64)
    c = np.zeros((5, 1), dtype=np.int64)
    chosen = {int(K.nearest(np.empty((1, 0)), q, np.empty((5, 0)), c, np.ones(0), 1, np.random.default_rng(s))[0][0, 0])
              for s in range(60)}  # fmt: skip
    assert chosen == set(range(5))


# ----------------------------------------------------------------------------------------------
# 3. attacks: query counts, rates
# ----------------------------------------------------------------------------------------------
def _count_brute(data, q):
    n = 0
    for row in data:
        ok = True
        for col, op, v in q:
            x = row[col]
            if np.isnan(v):
                t = np.isnan(x) if op == 0 else not np.isnan(x)
            elif np.isnan(x):
                t = False
            else:
                t = [x == v, x != v, x > v, x < v, x >= v, x <= v][op]
            ok = ok and bool(t)
        n += ok
    return n


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_query_counts_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, (40, 3)).astype(float)
    data[rng.random(data.shape) < 0.1] = np.nan
    numeric = np.array([False, True, True])
    queries = K.random_queries(data, numeric, 30, 2, rng)
    queries += [tuple((j, int(rng.integers(0, 6)), float(np.nan)) for j in (0, 2))]
    got = K.query_counts(data, queries)
    assert list(got) == [_count_brute(data, q) for q in queries]


def test_singling_out_queries_single_out_in_the_synthetic_file():
    rng = np.random.default_rng(4)
    syn = rng.integers(0, 6, (300, 4)).astype(float)
    numeric = np.array([False, False, True, True])
    queries, _ = K.singling_out_queries(syn, numeric, 50, 3, rng)
    assert len(queries) == 50 and len(set(queries)) == 50
    assert all(_count_brute(syn, q) == 1 for q in queries)
    med = np.median(syn[:, 2])
    for q in queries:
        for col, op, v in q:
            assert op == (0 if not numeric[col] else (4 if v > np.median(syn[:, col]) else 5))
    assert med >= 0


def test_wilson_and_residual_by_hand():
    # 5 successes in 500 at 95 %: z = 1.959964, z^2 = 3.841459
    # rate = (5 + 1.920729) / 503.841459 = 0.0137360; error = z / 503.841459 * sqrt(5*495/500 + 0.960365)
    rate, err = K.wilson(500, 5, 0.95)
    assert rate == pytest.approx(0.0137360, abs=1e-7)
    assert err == pytest.approx(1.959964 / 503.841459 * math.sqrt(4.95 + 0.960365), abs=1e-7)
    # residual (r_a - r_c) / (1 - r_c) with propagated error
    value, e = K.residual((0.3, 0.04), (0.1, 0.03))
    assert value == pytest.approx(0.2 / 0.9)
    assert e == pytest.approx(math.sqrt((0.04 / 0.9) ** 2 + (0.03 * 0.7 / 0.81) ** 2))


# ----------------------------------------------------------------------------------------------
# a planted leak is found; an independent sample of the same distribution is not
# ----------------------------------------------------------------------------------------------
def _population(n, rng):
    region = rng.integers(0, 6, n)
    sex = rng.integers(0, 2, n)
    job = (region + rng.integers(0, 4, n)) % 8
    age = np.clip(rng.normal(40 + 3 * sex, 12, n).round(), 16, 90)
    income = np.exp(rng.normal(9 + 0.02 * age + 0.1 * job, 0.5, n)).round()
    secret = np.where(income > np.median(income), "high", "low")
    return pl.DataFrame({"region": [f"r{x}" for x in region], "sex": sex.astype(str), "job": job.astype(str),
                         "age": age, "income": income, "secret": secret})  # fmt: skip


KEYS, NUM = ["region", "sex", "job"], ["age", "income"]


@pytest.fixture(scope="module")
def files():
    rng = np.random.default_rng(2024)
    ori, ctrl, indep = _population(1000, rng), _population(1000, rng), _population(2000, rng)
    leak = indep.to_pandas()
    copied = rng.choice(1000, size=20, replace=False)  # 1 % of the 2000 synthetic records
    leak.iloc[rng.choice(2000, size=20, replace=False)] = ori.to_pandas().iloc[copied].to_numpy()
    return ori, ctrl, indep, pl.from_pandas(leak)


def test_independent_sample_is_not_flagged(files):
    ori, ctrl, indep, _ = files
    r = sdckit.synthetic_risk(ori, indep, ctrl, keys=KEYS, variables=NUM, sensitive="secret", seed=3)
    assert r.closeness["n_exact_copies"] == 0 and r.closeness["leak"] is False
    assert not any(a["detected"] for a in r.attacks.values())
    assert r.leak is False


def test_planted_leak_is_found(files):
    ori, ctrl, _, leak = files
    r = sdckit.synthetic_risk(ori, leak, ctrl, keys=KEYS, variables=NUM, sensitive="secret", seed=3, attacks={"n_attacks": 2000})  # fmt: skip
    assert r.closeness["n_exact_copies"] == 20
    assert r.closeness["leak"] is True and r.closeness["excess_copies_ci"][0] > 0
    assert r.leak_decision["tests"]["exact_copies"]["rejected"] is True
    assert r.attacks["singling_out_records"]["detected"] is True  # its permutation test: p = 1 / 1000
    assert r.leak is True


# ----------------------------------------------------------------------------------------------
# result container, bad input
# ----------------------------------------------------------------------------------------------
def test_records_and_aggregates():
    ori, syn = _pair()
    r = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], variables=["n"], seed=1, similarity={"records": True})
    frame = r.to_frame()
    assert frame.columns == ["dcr", "exact_copy"] and frame.height == 4
    # synthetic (x, u, 1.0) equals original record 1; (y, u, 2.5) is 0.5/8 from (y, u, 3)
    assert frame["exact_copy"].to_list() == [True, False, False, False]
    assert frame["dcr"][0] == 0 and frame["dcr"][1] == pytest.approx(0.5 / 8, abs=1e-6)
    json.dumps(r.to_dict())
    with pytest.raises(sdckit.SdcError, match=r'similarity=\{"records": True\}'):
        sdckit.synthetic_risk(ori, syn, keys=["a"], seed=1).to_frame()


def test_bad_input():
    ori, syn = _pair()
    with pytest.raises(sdckit.MissingColumnError, match="synthetic"):
        sdckit.synthetic_risk(ori, syn.drop("b"), keys=["a", "b"])
    with pytest.raises(sdckit.SdcError, match="variables: column a of the original file"):
        sdckit.synthetic_risk(ori, syn, keys=["b"], variables=["a"])
    with pytest.raises(sdckit.SdcError, match="split"):
        sdckit.synthetic_risk(ori, syn, keys=["a", "b"], attacks={"split": [["a"], ["zz"]]})
    with pytest.raises(sdckit.SdcError, match="n_attacks"):
        sdckit.synthetic_risk(ori, syn, keys=["a"], attacks={"n_attacks": 0})


def test_seed_gives_the_same_result_and_inputs_are_untouched():
    ori, syn = _pair()
    before = ori.clone()
    a = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], variables=["n"], seed=5).to_dict()
    b = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], variables=["n"], seed=5).to_dict()
    assert a == b and ori.equals(before)


# ----------------------------------------------------------------------------------------------
# anonymeter's own results on its Adult files (stored with the call that made them)
# ----------------------------------------------------------------------------------------------
@pytest.mark.shared_data
def test_attacks_within_anonymeters_intervals():
    """The same attacks, files and parameters as anonymeter's stored run: the success rates on
    the original and on the control records agree within the two Wilson intervals, and the
    risk intervals overlap (two random runs of one attack: their points differ by chance)."""
    ref = json.loads((TESTDATA / "anonymeter" / "adults_anonymeter.json").read_text())
    ctl = pl.read_csv(shared_file("anonymeter-adults", "adults_control.csv"))
    syn = pl.read_csv(shared_file("anonymeter-adults", "adults_syn_ctgan.csv"))
    perm = np.random.default_rng(0).permutation(ctl.height)
    ori, con = ctl[perm[: ctl.height // 2]], ctl[perm[ctl.height // 2 :]]
    r = sdckit.synthetic_risk(ori, syn, con, keys=ref["keys"], variables=ref["variables"], sensitive="income", seed=0, attacks={"split": ref["split"], "n_attacks": 500, "n_cols": 3}, similarity={"closeness_sample": 200, "order": 1})  # fmt: skip
    for name in ("singling_out", "linkability", "inference:income"):
        theirs, ours = ref[name], r.attacks[name]
        for mine, count in (("attack", "n_success"), ("control", "n_control")):
            rate, err = K.wilson(500, theirs[count], 0.95)
            assert abs(ours[f"{mine}_rate"] - rate) <= err + ours[f"{mine}_error"], (name, mine, ours, theirs)
        lo, hi = theirs["ci"]
        assert ours["ci"][0] <= hi and lo <= ours["ci"][1], (name, ours["ci"], theirs["ci"])


# ----------------------------------------------------------------------------------------------
# the command line
# ----------------------------------------------------------------------------------------------
def test_command_line(tmp_path, capsys):
    from sdckit.cli import main

    ori, syn = TESTDATA / "anonymeter" / "adults_ori_test.csv", TESTDATA / "anonymeter" / "adults_syn_test.csv"
    out, rec = tmp_path / "r.json", tmp_path / "dcr.csv"
    args = ["synthetic", str(ori), str(syn), "--control", str(ori), "--keys", "sex,race,marital",
            "--variables", "age,hr_per_week", "--sensitive", "income", "--split", "sex,race;marital,age",
            "--seed", "1", "--json", str(out), "--records", str(rec), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "Disclosure risk of a synthetic file" in text and "Utility of a synthetic file" in text
    # the original given as the control: no baseline, said on stderr, in the summary and the JSON
    assert "sdckit: warning: control: 100.0% of the control records are exact copies" in captured.err
    assert "not decidable" in text
    payload = json.loads(out.read_text())
    assert payload["synthetic_risk"]["leak"] is None and payload["synthetic_risk"]["leak_decision"]["reason"]
    assert payload["synthetic_risk"]["split"] == [["sex", "race"], ["marital", "age"]]
    # the same call in Python gives the same numbers
    with pytest.warns(sdckit.SdcWarning, match="control"):
        direct = sdckit.synthetic_risk(pl.read_csv(ori), pl.read_csv(syn), pl.read_csv(ori), keys=["sex", "race", "marital"], variables=["age", "hr_per_week"], sensitive="income", seed=1, attacks={"split": [["sex", "race"], ["marital", "age"]]}, similarity={"records": True})  # fmt: skip
    assert payload["synthetic_risk"]["attacks"] == json.loads(json.dumps(direct.to_dict()["attacks"]))
    assert pl.read_csv(rec).height == 100
    rec2 = tmp_path / "dcr_id.csv"
    assert main([*args[:-5], "--records", str(rec2), "--id", "age", "--no-progress"]) == 0
    assert pl.read_csv(rec2).columns == ["age", "dcr", "exact_copy"]
    assert main([*args[:-9], "--split", "sex", "--no-progress"]) != 0
    assert "--split: got 1 part(s)" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_distances_ignore_row_order_and_labels(seed):
    rng = np.random.default_rng(seed)
    ori = pl.DataFrame({"a": rng.choice(["x", "y", "z"], 30), "b": rng.choice(["u", "v"], 30)})
    syn = pl.DataFrame({"a": rng.choice(["x", "y", "z"], 25), "b": rng.choice(["u", "v"], 25)})
    base = sdckit.synthetic_risk(ori, syn, keys=["a", "b"], seed=1, attacks={"n_attacks": 5})
    relabel = {"x": "q", "y": "a0", "z": "m"}
    moved = sdckit.synthetic_risk(ori[rng.permutation(30)].with_columns(pl.col("a").replace(relabel)), syn[rng.permutation(25)].with_columns(pl.col("a").replace(relabel)), keys=["a", "b"], seed=1, attacks={"n_attacks": 5})  # fmt: skip
    for key in ("kl", "tv", "hellinger", "cells"):
        assert moved.distribution[key] == pytest.approx(base.distribution[key], abs=1e-12)
    for c0, c1 in zip(base.by_combination, moved.by_combination):
        assert c0["tv"] == pytest.approx(c1["tv"], abs=1e-12) and c0["kl"] == pytest.approx(c1["kl"], abs=1e-12)
    assert 0 <= base.distribution["tv"] <= 1 and 0 <= base.distribution["hellinger"] <= 1
    # TV <= sqrt(2) H (Le Cam's inequality with this H's normalisation) and H^2 <= TV
    d = base.distribution
    assert d["hellinger"] ** 2 <= d["tv"] + 1e-12 and d["tv"] <= math.sqrt(2) * d["hellinger"] + 1e-12


# ----------------------------------------------------------------------------------------------
# anonymeter's Adult files: a planted leak is found, an independent sample is not flagged
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def adult_thirds():
    ctl = pl.read_csv(shared_file("anonymeter-adults", "adults_control.csv"))
    perm = np.random.default_rng(7).permutation(ctl.height)
    t = ctl.height // 3
    return ctl[perm[:t]], ctl[perm[t : 2 * t]], ctl[perm[2 * t : 3 * t]]


ADULT_KEYS = ["type_employer", "education", "marital", "occupation", "relationship", "race", "sex", "country"]
ADULT_NUM = ["age", "capital_gain", "capital_loss", "hr_per_week", "education_num", "fnlwgt"]


@pytest.mark.shared_data
def test_adult_planted_leak_and_independent_sample(adult_thirds):
    ori, ctrl, indep = adult_thirds
    syn = pl.read_csv(shared_file("anonymeter-adults", "adults_syn_ctgan.csv"))
    rng = np.random.default_rng(8)
    k = syn.height // 100  # 1 % of the synthetic records replaced by copies of original records
    rows = rng.choice(syn.height, size=k, replace=False)
    leak = pl.concat([syn[np.setdiff1d(np.arange(syn.height), rows)], ori[rng.choice(ori.height, size=k)]])
    call = {"keys": ADULT_KEYS, "variables": ADULT_NUM, "sensitive": "income", "seed": 2,
            "attacks": {"n_attacks": 2000}, "similarity": {"order": 1, "closeness_sample": 2000}}  # fmt: skip
    found = sdckit.synthetic_risk(ori, leak, ctrl, **call)
    assert found.closeness["n_exact_copies"] >= k - 5 and found.closeness["leak"] is True and found.leak is True
    clean = sdckit.synthetic_risk(ori, indep, ctrl, **call)
    assert clean.closeness["leak"] is False and clean.leak is False
    assert 0.02 < clean.closeness["share_below_control_q05"] < 0.09  # about 5 %: as close as unseen records


def test_scenario_and_id():
    ori, syn = _pair()
    syn = syn.with_columns(pl.Series("pid", [11, 12, 13, 14]))
    sc = sdckit.Scenario(keys=["a", "b"], numeric_keys=["n"])
    r = sdckit.synthetic_risk(ori, syn, scenario=sc, seed=1, id="pid", similarity={"records": True})
    assert r.keys == ("a", "b") and r.variables == ("n",)
    frame = r.to_frame()
    assert frame.columns == ["pid", "dcr", "exact_copy"] and frame["pid"].to_list() == [11, 12, 13, 14]
    with pytest.raises(sdckit.MissingColumnError):
        sdckit.synthetic_risk(ori, syn, scenario=sc, seed=1, id="nope", similarity={"records": True})


def test_linkability_and_inference_by_hand():
    ori = pl.DataFrame({"a": ["x", "y"], "b": ["u", "v"], "s": ["1", "0"]})
    syn = pl.DataFrame({"a": ["x", "y", "z", "y"], "b": ["u", "w", "v", "v"], "s": ["1", "0", "0", "1"]})
    # inference of s from (a, b): target (x, u) -> synthetic record 0 (distance 0), guess 1 = its
    # secret; target (y, v) -> record 3 (distance 0), guess 1, secret 0: 1 success in 2 attacks
    r = sdckit.synthetic_risk(
        ori, syn, keys=["a", "b"], sensitive="s", seed=1, attacks={"split": [["a"], ["b"]], "n_attacks": 10}
    )
    inf = r.attacks["inference:s"]
    assert (inf["n_attacks"], inf["n_success"]) == (2, 1)
    # linkability with the first three synthetic records, split [a] | [b]: target (x, u) has
    # record 0 nearest on a and on b: linked; target (y, v) has record 1 nearest on a and record 2
    # on b: not linked -> 1 success in 2, the Wilson rate of 1 in 2
    r2 = sdckit.synthetic_risk(ori, syn[:3], keys=["a", "b"], sensitive="s", seed=1, attacks={"split": [["a"], ["b"]]})
    assert r2.attacks["linkability"]["n_success"] == 1
    assert r2.attacks["linkability"]["attack_rate"] == pytest.approx(K.wilson(2, 1, 0.95)[0])


def test_control_size_correction():
    # anonymeter's correction carries the control's singling-out count to the original's size:
    # factor 1 at the same size; queries that single out in the full control file single out
    # less often in random halves of it (their one record is left out half the time), so the
    # fitted model puts a half-size file below 1
    rng = np.random.default_rng(9)
    ctrl = rng.integers(0, 6, (3000, 5)).astype(float)
    numeric = np.array([False, False, False, True, True])
    queries, _ = K.singling_out_queries(ctrl, numeric, 200, 3, rng)
    assert K.size_correction(ctrl, queries, 3000, rng) == pytest.approx(1.0)
    assert 0 < K.size_correction(ctrl, queries, 1500, rng) < 1.0
    # and synthetic_risk runs with a control file of another size
    rng2 = np.random.default_rng(10)
    ori, ctrl2, syn = _population(600, rng2), _population(1200, rng2), _population(900, rng2)
    r = sdckit.synthetic_risk(ori, syn, ctrl2, keys=KEYS, variables=NUM, seed=1, attacks={"n_attacks": 200})
    assert r.n_control == 1200 and 0 <= r.attacks["singling_out"]["risk"] <= 1
