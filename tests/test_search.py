"""The protection search (``sdckit.search``): targets met when measured afresh, pruning that
never changes the answer (a brute-force oracle over every node), determinism, limits, recipes
that replay byte for byte, cell against record suppression, the command line, bad input, and
the EU-SILC acceptance case."""

from __future__ import annotations

import importlib
import io
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import shared_file
from sdckit.datasets import EXAMPLE_KEYS, load_example
from sdckit.workflow._hierarchies import auto_hierarchy

KEYS = list(EXAMPLE_KEYS)
#: the module (``sdckit.workflow.search`` is the function)
S = importlib.import_module("sdckit.workflow.search")
#: each example runs a search: report a failing one as found, without shrinking it
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@pytest.fixture(scope="module")
def example():
    return load_example()


@pytest.fixture(scope="module")
def scenario():
    return sdckit.Scenario(keys=KEYS, weight="weight", household="household")


@pytest.fixture(scope="module")
def k3(example, scenario):
    return sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, progress=False)


def _csv(frame) -> bytes:
    buf = io.BytesIO()
    frame.write_csv(buf)
    return buf.getvalue()


def _scales(data, sc):
    from sdckit.assessment.tradeoff import loss_scales
    from sdckit.engines import in_memory_engine

    eng = in_memory_engine(None, "test")
    return loss_scales(eng.table(data), sc, list(sc.keys), eng)


def _small(seed: int, n: int = 80) -> pl.DataFrame:
    """Three keys (a number and two nominal ones) with a skewed distribution."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "age": rng.integers(0, 40, n),
            "colour": rng.choice(["red", "blue", "green", "grey"], n, p=[0.5, 0.3, 0.15, 0.05]),
            "town": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
            "w": rng.uniform(5, 50, n),
        }
    )


# ----------------------------------------------------------------------------------------------
# the target is met when measured afresh; the recipe replays; the loss is variant_loss
# ----------------------------------------------------------------------------------------------
def test_k_target_met_afresh_and_recipe_replays(example, scenario, k3):
    assert k3.found and k3.optimal
    ka = sdckit.k_anonymity(k3.protected, KEYS, k=[3], allow_degenerate_keys=True)
    assert ka.n_violations[3] == 0
    replay = sdckit.SdcProblem.from_recipe(example, k3.recipe)
    assert _csv(replay.data) == _csv(k3.protected)  # byte for byte
    # the loss is the mean lambda_j of variant_loss at the assessment's scales
    vl = sdckit.variant_loss(example, k3.protected, KEYS, scales=_scales(example, scenario))
    assert k3.loss == pytest.approx(vl.loss, abs=1e-12)
    assert k3.suppressed_cells == sum(vl.suppressed_by_variable.values())
    assert k3.suppressed_cells <= 0.05 * example.height * len(KEYS)
    assert example.equals(load_example())  # the input is not modified


def test_risk_target_with_household_rule_met_afresh(example, scenario):
    res = sdckit.search(
        example, scenario, target={"max_global_risk": 0.01, "household": True}, suppression_limit=0.05, progress=False
    )
    assert res.found
    ir = sdckit.individual_risk(res.protected, KEYS, weight="weight", household="household", allow_degenerate_keys=True)
    assert ir.threshold(0.01).safe
    assert res.risk["global_risk"] == pytest.approx(ir.global_risk)
    replay = sdckit.SdcProblem.from_recipe(example, res.recipe)
    assert _csv(replay.data) == _csv(res.protected)


def test_max_risk_target(example, scenario):
    res = sdckit.search(example, scenario, target={"max_risk": 0.05}, suppression_limit=0.1, progress=False)
    ir = sdckit.individual_risk(res.protected, KEYS, weight="weight", allow_degenerate_keys=True)
    assert float(ir.risk.max()) <= 0.05
    assert res.risk["max_risk"] == pytest.approx(float(ir.risk.max()))


def test_l_diversity_target_by_generalisation():
    d = _small(3, 200).with_columns(pl.Series("disease", np.random.default_rng(1).choice(["x", "y", "z"], 200)))
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(d, sc, target={"l": 2, "sensitive": "disease"}, progress=False)
    ld = sdckit.l_diversity(res.protected, ["age", "colour", "town"], "disease", allow_degenerate_keys=True)
    assert ld.min["distinct"]["disease"] >= 2
    assert res.suppressed_cells == 0


# ----------------------------------------------------------------------------------------------
# pruning never changes the answer: a brute-force oracle over every node
# ----------------------------------------------------------------------------------------------
def _oracle(data, sc, target, limit, suppression="cells"):
    """Every node of the lattice evaluated; the least loss that meets the target (ties: fewer
    levels, then lexicographic)."""
    s = S._Search(data, sc, target, None, limit, suppression, "loss", None)
    nodes = [n for n in np.ndindex(*[s.h[k].height + 1 for k in s.keys])]
    cands = [s.evaluate(tuple(int(v) for v in n)) for n in nodes]
    ok = [c for c in cands if c.meets]
    best = min(ok, key=lambda c: (c.loss, sum(c.levels), c.levels))
    return dict(zip(s.keys, best.levels)), best.loss, len(nodes)


@settings(max_examples=6, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), limit=st.sampled_from([0.0, 0.05, 0.2]))
def test_pruning_never_changes_the_answer_k(seed, k, limit):
    d = _small(seed)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(d, sc, target={"k": k}, suppression_limit=limit, progress=False)
    levels, loss, n_nodes = _oracle(d, sc, {"k": k}, limit)
    assert res.n_candidates == n_nodes
    assert res.levels == levels
    assert res.loss == pytest.approx(loss, abs=1e-12)
    assert res.n_checked + res.n_pruned == n_nodes


@settings(max_examples=4, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_pruning_never_changes_the_answer_risk(seed):
    d = _small(seed, 120)
    sc = sdckit.Scenario(keys=["age", "colour", "town"], weight="w")
    target = {"max_global_risk": 0.02}
    res = sdckit.search(d, sc, target=target, suppression_limit=0.1, progress=False)
    levels, loss, _ = _oracle(d, sc, target, 0.1)
    assert res.levels == levels
    assert res.loss == pytest.approx(loss, abs=1e-12)


def test_pruning_never_changes_the_answer_records():
    d = _small(5, 150)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(d, sc, target={"k": 3}, suppression_limit=0.1, suppression="records", progress=False)
    levels, loss, _ = _oracle(d, sc, {"k": 3}, 0.1, "records")
    assert res.levels == levels and res.loss == pytest.approx(loss, abs=1e-12)


def test_bound_is_the_generalisation_only_loss(example, scenario):
    """The per-level losses add up to variant_loss of the recodes alone, on every node tried."""
    s = S._Search(example, scenario, {"k": 3}, None, 0.0, "cells", "loss", None)
    scales = _scales(example, scenario)
    for levels in [(1, 0, 2, 0, 1, 0), (0, 1, 0, 1, 0, 2), (2, 1, 3, 2, 2, 1)]:
        table, _ = s.generalise(levels)
        vl = sdckit.variant_loss(example, s.eng.native_frame(table), KEYS, scales=scales)
        assert s.bound(levels) == pytest.approx(vl.loss, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# determinism, limits, the front, the summary
# ----------------------------------------------------------------------------------------------
def test_deterministic(example, scenario, k3):
    again = sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, progress=False)
    a, b = k3.to_dict(), again.to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    assert _csv(again.protected) == _csv(k3.protected)


def test_limits_give_a_best_effort(example, scenario):
    one = sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, max_candidates=1, progress=False)
    assert not one.optimal and one.n_checked == 1 and "candidate limit" in one.stopped
    assert "best effort" in str(one.summary())
    none = sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, time_limit=0, progress=False)
    assert not none.optimal and none.n_checked == 0 and not none.found and "time limit" in none.stopped


def test_front_is_pareto_and_holds_the_winner(k3):
    pts = [(f["loss"], f["rate"]) for f in k3.front]
    assert pts == sorted(pts)
    for i, (_x, y) in enumerate(pts):  # along the front: loss up, rate strictly down
        assert all(y < y0 for _, y0 in pts[:i])
    assert dict(k3.front[0]["levels"]) == dict(k3.levels)
    assert k3.front[0]["loss"] == k3.loss
    frame = k3.to_frame()
    assert frame.height == len(k3.front) and frame["winner"][0]
    for r in k3.runners_up:
        assert r["loss"] >= k3.loss and r["meets"]
    json.dumps(k3.to_dict())


def test_summary_says_why(k3):
    text = str(k3.summary())
    # the unit-free loss: optimal as far as its bound goes (the note says what the bound ignores)
    assert "optimal up to the loss bound" in text and any("exhaustive=True" in n for n in k3.notes)
    assert "Next-best candidates" in text
    assert f"{k3.n_pruned:,}" in text and f"{k3.n_checked:,}" in text


def test_plot(k3):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = k3.plot()
    assert ax.get_xlabel() == "loss"


def test_weights_steer_the_winner(example, scenario):
    base = sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, progress=False)
    heavy = {k: (100.0 if base.loss_by_variable[k] > 0 else 1.0) for k in KEYS}
    res = sdckit.search(example, scenario, target={"k": 3}, suppression_limit=0.05, weights=heavy, progress=False)
    by = res.loss_by_variable
    assert res.loss == pytest.approx(sum(heavy[k] * by[k] for k in KEYS) / sum(heavy.values()))
    assert res.levels != base.levels or res.loss_by_variable == base.loss_by_variable


# ----------------------------------------------------------------------------------------------
# cell against record suppression
# ----------------------------------------------------------------------------------------------
def test_cells_beat_records(example, scenario, k3):
    rec = sdckit.search(
        example, scenario, target={"k": 3}, suppression_limit=0.05, suppression="records", progress=False
    )
    assert sdckit.k_anonymity(rec.protected, KEYS, k=[3], allow_degenerate_keys=True).n_violations[3] == 0
    scales = _scales(example, scenario)
    cells = sdckit.variant_loss(example, k3.protected, KEYS, scales=scales).loss
    records = sdckit.variant_loss(example, rec.protected, KEYS, scales=scales).loss
    assert cells < records
    assert _csv(sdckit.SdcProblem.from_recipe(example, rec.recipe).data) == _csv(rec.protected)


def test_suppress_records_hand_worked():
    # classes: (a, x) x3, (a, y) x1, (b, y) x2 -> with k = 2 only the (a, y) record goes; k = 3
    # removes (a, y) and both (b, y).
    d = pl.DataFrame({"u": ["a", "a", "a", "a", "b", "b"], "v": ["x", "x", "x", "y", "y", "y"]})
    r2 = sdckit.suppress_records(d, ["u", "v"], k=2)
    assert r2.data["u"].to_list() == ["a", "a", "a", None, "b", "b"]
    assert r2.data["v"].is_null().to_list() == [False, False, False, True, False, False]
    r3 = sdckit.suppress_records(d, ["u", "v"], k=3)
    assert r3.details["n_records"] == 3 and r3.details["n_classes"] == 2
    assert r3.n_changed == {"u": 3, "v": 3}
    with pytest.raises(sdckit.SdcError, match="k"):
        sdckit.suppress_records(d, ["u", "v"], k=0)


# ----------------------------------------------------------------------------------------------
# hierarchies
# ----------------------------------------------------------------------------------------------
def test_auto_hierarchy_numeric():
    # range 0..95: 95 / 20 = 4.75 -> first width 5, then 10, 20, 40, 80 (0-79 and 80-159), then
    # one interval would hold all: stop; top "*".
    rows = auto_hierarchy(list(range(96)), [1] * 96, "numeric")
    by = {r[0]: r[1:] for r in rows}
    assert by[37] == ["[35,40)", "[30,40)", "[20,40)", "[0,40)", "[0,80)", "*"]
    assert by[95] == ["[95,100)", "[90,100)", "[80,100)", "[80,120)", "[80,160)", "*"]
    # negative and positive values: origin -5 (the multiple of the first width 5 below -1), so
    # the widths 5, 10, 20, ... keep merging until one interval holds all
    rows = auto_hierarchy([-1, 0, 40, 80], [1] * 4, "numeric")
    assert rows[0] == [-1, "[-5,0)", "[-5,5)", "[-5,15)", "[-5,35)", "[-5,75)", "*"]
    assert rows[3] == [80, "[80,85)", "[75,85)", "[75,95)", "[75,115)", "[75,155)", "*"]


def test_auto_hierarchy_nominal_and_ordered():
    # 5 categories by frequency e > d > c > b > a: level 1 keeps floor(5/2) = 2, level 2 keeps 1
    vals, counts = ["a", "b", "c", "d", "e"], [1, 2, 3, 4, 5]
    by = {r[0]: r[1:] for r in auto_hierarchy(vals, counts, "nominal")}
    assert by["e"] == ["e", "e", "*"] and by["d"] == ["d", "other", "*"] and by["a"] == ["other", "other", "*"]
    by = {r[0]: r[1:] for r in auto_hierarchy(["lo", "mid", "hi"], [1, 1, 1], "ordered")}
    assert by["lo"] == ["lo..mid", "*"] and by["hi"] == ["hi", "*"]


def test_given_hierarchy_file(tmp_path):
    d = _small(7, 100)
    path = tmp_path / "town.csv"
    path.write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(d, sc, target={"k": 2}, hierarchies={"town": path}, suppression_limit=0.1, progress=False)
    steps = [s for s in res.recipe["steps"] if s["parameters"].get("variables") == ["town"]]
    for s in steps:
        assert s["parameters"]["hierarchy"] == str(path)
    assert _csv(sdckit.SdcProblem.from_recipe(d, res.recipe).data) == _csv(res.protected)


def test_sdcproblem_search_and_apply_recipe(example, scenario, k3):
    p = sdckit.SdcProblem(example, scenario)
    res = p.search(target={"k": 3}, suppression_limit=0.05, progress=False)
    assert res.levels == k3.levels and res.loss == k3.loss
    p.apply_recipe(res.recipe)
    assert _csv(p.data) == _csv(res.protected)


def test_report_has_the_variants(k3, tmp_path):
    out = tmp_path / "r.html"
    rep = k3.report(out)
    assert out.exists()
    names = [v["name"] for v in k3.variants()]
    assert names[0] == "search: winner" and len(names) == 2
    assert rep.variant("search: winner").loss == pytest.approx(k3.loss, abs=1e-9)


# ----------------------------------------------------------------------------------------------
# objective="arx": ARX's model through sdckit.workflow._arx (the kernel's answer, built and checked)
# ----------------------------------------------------------------------------------------------
def test_arx_objective_builds_arx_node():
    """The search under ARX's model returns the kernel's optimal node (arx_search on the same
    hierarchies), with exactly the kernel's suppressed records, and its recipe replays."""
    from sdckit.workflow._arx import arx_search

    d = _small(11, 120)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(
        d, sc, target={"k": 2}, suppression="records", objective="arx", suppression_limit=0.2, progress=False
    )
    s = S._Search(d, sc, {"k": 2}, None, 0.2, "records", "arx", None)
    ref = arx_search(d, s.keys, {k: s.h[k].rows for k in s.keys}, k=2, suppression_limit=0.2)
    assert res.found and res.optimal and res.levels == ref.levels and res.loss == ref.loss
    assert res.loss_by_variable == ref.loss_by_key
    assert (res.n_checked, res.n_pruned, res.n_candidates) == (ref.n_checked, ref.n_pruned, ref.n_nodes)
    gone = res.protected.select(pl.all_horizontal([pl.col(k).is_null() for k in s.keys])).to_series().to_numpy()
    np.testing.assert_array_equal(gone, ref.suppressed)
    assert res.suppressed_records == int(ref.suppressed.sum()) and res.suppressed_cells == 3 * int(gone.sum())
    assert not res.notes
    assert _csv(sdckit.SdcProblem.from_recipe(d, res.recipe).data) == _csv(res.protected)
    feasible = sorted((e[2], sum(e[0].values())) for e in ref.evaluated if e[1] and e[2] is not None)
    assert [r["loss"] for r in res.runners_up] == [loss for loss, _ in feasible[1:4]]


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"target": {}}, "target: expected a non-empty mapping"),
        ({"target": {"kk": 3}}, "unknown name"),
        ({"target": {"k": 0}}, r"target\['k'\]"),
        ({"target": {"max_global_risk": 2}}, r"target\['max_global_risk'\]"),
        ({"target": {"household": True}}, "household rule needs"),
        ({"target": {"l": 2}}, r"target\['sensitive'\]"),
        ({"target": {"l": 2, "sensitive": "nope"}}, r"target\['sensitive'\]: not a column"),
        ({"target": {"k": 3}, "suppression_limit": 1.5}, "suppression_limit"),
        ({"target": {"k": 3}, "suppression": "rows"}, "suppression"),
        ({"target": {"k": 3}, "objective": "arx", "weights": {"region": 2}}, "weights: ARX's Loss weighs"),
        ({"target": {"max_risk": 0.1}, "suppression": "records"}, "expected suppression='cells'"),
        ({"target": {"k": 3}, "weights": {"nope": 1}}, "weights: nope not among the keys"),
        ({"target": {"k": 3}, "weights": {"region": -1}}, r"weights\[region\]"),
        ({"target": {"k": 3}, "hierarchies": {"nope": [[1, 2]]}}, "hierarchies: nope not among the keys"),
        ({"target": {"k": 3}, "hierarchies": {"sex": [["male", "*"]]}}, r"hierarchies\[sex\]: 1 categor"),
        ({"target": {"k": 3}, "max_candidates": 0}, "max_candidates"),
        ({"target": {"k": 3}, "time_limit": -1}, "time_limit"),
    ],
)
def test_bad_input(example, kwargs, match):
    sc = sdckit.Scenario(keys=KEYS, weight="weight")
    with pytest.raises(sdckit.SdcError, match=match):
        sdckit.search(example, sc, **kwargs)


def test_bad_scenario(example):
    with pytest.raises(sdckit.SdcError, match="scenario"):
        sdckit.search(example, {"keys": KEYS}, target={"k": 3})
    with pytest.raises(sdckit.SdcError, match="household"):
        sdckit.search(
            example, sdckit.Scenario(keys=KEYS), target={"max_global_risk": 0.01, "household": True}, progress=False
        )


# ----------------------------------------------------------------------------------------------
# the EU-SILC acceptance case
# ----------------------------------------------------------------------------------------------
SILC_KEYS = ["db040", "hsize", "age", "rb090", "pl030", "pb220a"]


@pytest.mark.shared_data
def test_eusilc_household_rule_with_less_loss_than_the_hand_recipes():
    data = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    sc = sdckit.Scenario(keys=SILC_KEYS, weight="rb050", household="db030")
    res = sdckit.search(
        data, sc, target={"max_global_risk": 0.01, "household": True}, suppression_limit=0.05, progress=False
    )
    # the verdict, measured afresh on the replayed recipe
    replay = sdckit.SdcProblem.from_recipe(data, res.recipe).data
    assert _csv(replay) == _csv(res.protected)
    ir = sdckit.individual_risk(replay, SILC_KEYS, weight="rb050", household="db030", allow_degenerate_keys=True)
    assert ir.threshold(0.01).safe
    # the hand-written recipes of the documentation: k3, and recode age then k3
    scales = _scales(data, sc)
    k3 = sdckit.local_suppression(data, SILC_KEYS, k=3).data
    aged = sdckit.global_recode(data, "age", breaks=[-2, 15, 25, 35, 45, 55, 65, 75, 120]).data
    rk3 = sdckit.local_suppression(aged, SILC_KEYS, k=3).data
    ours = sdckit.variant_loss(data, replay, SILC_KEYS, scales=scales).loss
    for hand in (k3, rk3):
        assert ours < sdckit.variant_loss(data, hand, SILC_KEYS, scales=scales).loss
    assert res.loss == pytest.approx(ours, abs=1e-12)
    assert math.isfinite(res.seconds) and res.optimal


# ----------------------------------------------------------------------------------------------
# the command line
# ----------------------------------------------------------------------------------------------
def _cli(*argv) -> int:
    from sdckit.cli import main

    return main(list(argv))


def test_cli_end_to_end(tmp_path, capsys):
    from sdckit.datasets import example_path

    out, rec, js, rep = (tmp_path / n for n in ("out.csv", "r.yaml", "s.json", "r.html"))
    hier = tmp_path / "cit.csv"
    data = load_example()
    cats = sorted(data["citizenship"].unique().to_list())
    hier.write_text("".join(f"{c};*\n" for c in cats))
    argv = [str(example_path()), "--keys", ",".join(KEYS), "--weight", "weight", "--household", "household"]
    argv += ["--k", "3", "--suppression-limit", "0.05", "--hierarchy", f"citizenship={hier}"]
    argv += ["--out", str(out), "--save-recipe", str(rec), "--json", str(js), "--report", str(rep)]
    assert _cli("search", *argv) == 0
    text = capsys.readouterr().out
    assert "Protection search" in text and "optimal up to the loss bound" in text
    summary = json.loads(js.read_text())
    assert summary["found"] and summary["target"] == {"k": 3} and rep.exists()
    # the recipe replays to the written file; the target holds in it
    written = sdckit.read_data(out)
    replay = sdckit.SdcProblem.from_recipe(sdckit.read_data(example_path()), str(rec)).data
    assert written.equals(replay)
    assert sdckit.k_anonymity(written, KEYS, k=[3], allow_degenerate_keys=True).n_violations[3] == 0
    # an existing output is refused before any work, and --overwrite replaces it
    mtime = out.stat().st_mtime_ns
    assert _cli("search", *argv) != 0
    assert "already exists; expected a new file, or --overwrite" in capsys.readouterr().err
    assert out.stat().st_mtime_ns == mtime
    assert _cli("search", *argv, "--overwrite") == 0


def test_cli_bad_input(tmp_path, capsys):
    from sdckit.datasets import example_path

    base = ["search", str(example_path()), "--keys", ",".join(KEYS)]
    for extra, match in [
        ([], "target: none given"),
        (["--k", "3", "--hierarchy", "citizenship"], "--hierarchy: 'citizenship' is not KEY=VALUE"),
        (["--k", "3", "--weights", "region=x"], "--weights: the weight of region is not a number"),
    ]:
        assert _cli(*base, *extra) != 0
        assert match in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# invariants: row order, units of a numeric key, relabelled categories
# ----------------------------------------------------------------------------------------------
@settings(max_examples=5, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4))
def test_invariant_to_row_order_units_and_labels(seed, k):
    # without suppression the answer is a set of recodes: the row order, the unit of the numeric
    # key (x 10: the automatic widths scale with it, the loss has no unit) and the names of the
    # categories do not change the levels or the loss
    d = _small(seed, 100)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    base = sdckit.search(d, sc, target={"k": k}, progress=False)
    perm = np.random.default_rng(seed).permutation(d.height)
    shuffled = sdckit.search(d[perm], sc, target={"k": k}, progress=False)
    scaled = sdckit.search(d.with_columns(pl.col("age") * 10), sc, target={"k": k}, progress=False)
    renamed = d.with_columns(pl.col("colour").replace({"red": "R", "blue": "B", "green": "G", "grey": "Y"}))
    relabelled = sdckit.search(renamed, sc, target={"k": k}, progress=False)
    for other in (shuffled, scaled, relabelled):
        assert other.levels == base.levels
        assert other.loss == pytest.approx(base.loss, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# ARX's Loss with cell suppression (ARX-Adult, ../shared)
# ----------------------------------------------------------------------------------------------
ADULT = "arx-adult"


def _adult():
    ref = json.loads((shared_file("..", "reference", "arx", "adult_flash.json")).read_text())
    run = next(r for r in ref["runs"] if r["id"] == "k5_supp5")
    qi = run["quasi_identifiers"]
    data = pl.read_csv(shared_file(ADULT, "adult.csv"), separator=";", infer_schema_length=0)
    hier = {q: shared_file(ADULT, f"adult_hierarchy_{q}.csv") for q in qi}
    return run, qi, data, hier


@pytest.mark.shared_data
def test_arx_loss_reproduces_arx_on_its_optimum():
    """ARX's Loss of ARX's own output (k = 5, 5 % record suppression) from the levels and the
    suppressed records of its anonymised table: every per-attribute value to ARX's 10 digits."""
    run, qi, data, hier = _adult()
    s = S._Search(data, sdckit.Scenario(keys=qi), {"k": 5}, hier, 0.05, "cells", "arx", None)
    out = pl.read_csv(shared_file("..", "reference", "arx", "outputs", "k5_supp5.csv.gz"), separator=";")
    gone = np.all(np.stack([out[q].cast(pl.String).to_numpy() == "*" for q in qi]), axis=0)
    levels = tuple(run["optimal_levels"][q] for q in qi)
    by = s.arx.by_key(levels, dict.fromkeys(qi, gone))
    want = run["information_loss"]["highest"]["per_attribute_by_qi"]
    for q in qi:
        assert by[q] == pytest.approx(want[q], abs=1e-9)
    assert s.arx.combine(by) == pytest.approx(float(run["information_loss"]["highest"]["toString"]), abs=1e-9)


@pytest.mark.shared_data
def test_cell_suppression_beats_arx_under_arx_loss():
    """k = 5 with a 5 % limit: single suppressed values (a suppressed value counting as fully
    generalised) reach k = 5 with a lower ARX Loss than ARX's optimum with record suppression."""
    run, qi, data, hier = _adult()
    res = sdckit.search(
        data,
        sdckit.Scenario(keys=qi),
        target={"k": 5},
        hierarchies=hier,
        suppression_limit=0.05,
        objective="arx",
        max_candidates=6,
        progress=False,
    )
    assert res.found
    assert res.loss < float(run["information_loss"]["highest"]["toString"])
    assert sdckit.k_anonymity(res.protected, qi, k=[5], allow_degenerate_keys=True).n_violations[5] == 0
    assert res.suppressed_cells <= 0.05 * data.height * len(qi)


def test_arx_loss_hand_worked():
    # key u: domain a, b, c, d; level 1 merges ab and cd, level 2 is "*". Four records a, b, c, d
    # at level 1: each share 2/4, S = 2, n / |D| = 1, v = (2 - 1) / (4 - 1) = 1/3. With the
    # record "a" suppressed its share is 1: S = 2.5, v = 1.5 / 3 = 1/2. Key w (x, y) at level 0:
    # shares 1/2, S = 2 = n / |D|, v = 0. Loss = sqrt((1 + 1/3)(1 + 0)) - 1.
    d = pl.DataFrame({"u": ["a", "b", "c", "d"], "w": ["x", "x", "y", "y"]})
    hier = {"u": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]]}
    s = S._Search(d, sdckit.Scenario(keys=["u", "w"]), {"k": 2}, hier, 0.0, "cells", "arx", None)
    by = s.arx.by_key((1, 0))
    assert by == pytest.approx({"u": 1 / 3, "w": 0.0})
    assert s.arx.combine(by) == pytest.approx(math.sqrt(4 / 3) - 1)
    assert s.arx.by_key((1, 0), {"u": np.array([True, False, False, False])})["u"] == pytest.approx(0.5)
    assert s.bound((1, 0)) == pytest.approx(math.sqrt(4 / 3) - 1)
    res = sdckit.search(d, sdckit.Scenario(keys=["u", "w"]), target={"k": 2}, hierarchies=hier, objective="arx")
    # (1, 0): classes {a,b|x} and {c,d|y} have 2 records: 2-anonymous, the least Loss
    assert res.levels == {"u": 1, "w": 0} and res.loss == pytest.approx(math.sqrt(4 / 3) - 1)


def test_given_hierarchy_as_mapping():
    d = _small(9, 120)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    towns = {"a": ["ab", "*"], "b": ["ab", "*"], "c": ["c", "*"]}
    res = sdckit.search(d, sc, target={"k": 3}, hierarchies={"town": towns}, suppression_limit=0.1, progress=False)
    assert set(res.levels) == {"age", "colour", "town"} and 0 <= res.levels["town"] <= 2
    if res.levels["town"] == 1:  # a and b merged, c kept
        assert set(res.protected["town"].drop_nulls().unique().to_list()) <= {"ab", "c"}
    assert _csv(sdckit.SdcProblem.from_recipe(d, res.recipe).data) == _csv(res.protected)


def test_t_closeness_target_is_met_afresh():
    """t-closeness of a sensitive variable: the winner's classes are within t of the file's
    distribution when measured afresh with sdckit.t_closeness, with cell and with record
    suppression (the records with every key suppressed left out, as ARX), and t outside (0, 1]
    is refused."""
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    data = load_example()
    keys = list(EXAMPLE_KEYS)[:3]
    sc = sdckit.Scenario(keys=keys, sensitive=["health"])
    res = sdckit.search(data, sc, target={"t": 0.3, "k": 2}, suppression_limit=0.05, progress=False)
    assert res.found
    protected = res.protected
    tc = sdckit.t_closeness(protected, keys, "health", allow_degenerate_keys=True)
    assert tc.max["health"] <= 0.3 + 1e-12 and res.risk["t"] == pytest.approx(tc.max["health"])
    original = sdckit.t_closeness(data, keys, "health").max["health"]
    assert original > 0.3  # the target made the search work
    rec = sdckit.search(
        data, sc, target={"t": 0.3, "k": 2}, suppression="records", suppression_limit=0.05, progress=False
    )
    assert rec.found and rec.risk["t"] <= 0.3 + 1e-12
    for bad in (-1, 0, 1.5):
        with pytest.raises(sdckit.SdcError, match="target\\['t'\\]"):
            sdckit.search(data, sc, target={"t": bad}, progress=False)


def test_exhaustive_search_agrees_and_the_bound_is_named():
    """exhaustive=True evaluates every candidate (no pruning) and finds the same winner on the
    bundled example; the pruned search's notes name the approximation of its bound."""
    from sdckit.datasets import load_example

    data = load_example()
    sc = sdckit.Scenario(keys=["region", "sex", "age_group"])
    fast = sdckit.search(data, sc, target={"k": 3}, suppression_limit=0.05, progress=False)
    full = sdckit.search(data, sc, target={"k": 3}, suppression_limit=0.05, exhaustive=True, progress=False)
    assert full.n_pruned == 0 and full.n_checked == full.n_candidates
    assert fast.levels == full.levels and fast.loss == pytest.approx(full.loss, abs=1e-15)
    assert any("exhaustive=True" in n for n in fast.notes) == (fast.n_pruned > 0)
    assert not any("exhaustive=True" in n for n in full.notes)


def test_cli_out_keeps_the_input_format(tmp_path, capsys):
    """--out writes a CSV with the input's separator and the missing code the input uses (the
    first --missing), so the file reads back as the input does; --max-lattice-size raises the
    cap of the lattice, and a smaller one refuses it before the search."""
    d = _small(3, 120).with_columns(pl.col("age").cast(pl.String))
    d = d.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("-999")).otherwise("colour").alias("colour"))
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    d.write_csv(src, separator=";")
    argv = [str(src), "--keys", "age,colour,town", "--k", "3", "--suppression-limit", "0.1", "--missing", "-999"]
    assert _cli("search", *argv, "--out", str(out)) == 0
    capsys.readouterr()
    text = out.read_text().splitlines()
    assert text[0] == "age;colour;town;w"
    written = pl.read_csv(out, separator=";", infer_schema_length=0)
    res = sdckit.search(
        sdckit.read_data(src), sdckit.Scenario(keys=["age", "colour", "town"], missing=("-999",)),
        target={"k": 3}, suppression_limit=0.1, progress=False,
    )  # fmt: skip
    n_missing = sum(int(res.protected[c].is_null().sum()) for c in ("age", "colour", "town"))
    assert n_missing > 0
    n_coded = sum(int((written[c] == "-999").sum()) for c in ("age", "colour", "town"))
    assert n_coded == n_missing + 1  # and the input's own -999
    assert not any(ln.endswith(";") or ";;" in ln for ln in text)  # no empty cells
    assert _cli("search", *argv, "--max-lattice-size", "2") != 0
    assert "max_lattice_size" in capsys.readouterr().err
    assert _cli("search", *argv, "--max-lattice-size", "100000") == 0


def test_write_data_separator_and_missing(tmp_path):
    d = pl.DataFrame({"a": ["x", None], "b": [1.0, float("nan")]})
    p = tmp_path / "o.csv"
    sdckit.write_data(d, p, sep=";", na="NA")
    assert p.read_text().splitlines() == ["a;b", "x;1.0", "NA;NA"]
    with pytest.raises(sdckit.SdcError, match="sep: got 'ab'"):
        sdckit.write_data(d, tmp_path / "q.csv", sep="ab")
    assert not (tmp_path / "q.csv").exists()
