"""t-closeness in ARX's model and in the protection search: the two ground distances worked by
hand, the kernel against ARX's own tree algorithm written out, the public measure against the
kernel, ARX's optimum against a brute-force oracle on a bundled file, ARX's JUnit figures on
ARX-Adult, and every returned file checked with the public measure."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import TESTDATA, shared_file
from lattice_brute import every_node
from sdckit._core import lattice as L
from sdckit.workflow._arx import arx_search

SMALL = TESTDATA / "arx"
SMALL_KEYS = ["age", "sex", "region", "job"]
SMALL_H = {key: SMALL / f"small_hierarchy_{key}.csv" for key in SMALL_KEYS}
#: a hierarchy of the small file's sensitive attribute (height 2)
DISEASE = [
    ["asthma", "chronic", "*"],
    ["cancer", "chronic", "*"],
    ["diabetes", "chronic", "*"],
    ["flu", "acute", "*"],
    ["none", "healthy", "*"],
]


def _small() -> pl.DataFrame:
    return pl.read_csv(SMALL / "small.csv", separator=";")


def _rows(path) -> list[list[str]]:
    return [line.split(";") for line in path.read_text().splitlines() if line.strip()]


def _distances(sensitive, classes, levels=None):
    """Kernel distances of each class (``classes``: class per record) to the whole input."""
    sens = np.asarray(sensitive)
    n_sens = int(sens.max()) + 1
    tc, codes = L.closeness_of(sens, n_sens, levels)
    keys, _, counts, _ = L.group_rows([np.asarray(classes), codes], [int(max(classes)) + 1, n_sens], np.ones(len(sens)))
    starts = np.flatnonzero(np.r_[True, (keys // n_sens)[1:] != (keys // n_sens)[:-1]])
    return L.class_distances(tc, keys % n_sens, counts, starts, np.add.reduceat(counts, starts))


# ----------------------------------------------------------------------------------------------
# the distances by hand
# ----------------------------------------------------------------------------------------------
def test_equal_distance_by_hand():
    """10 records, values a b c d with counts 4 1 3 2: P = (0.4, 0.1, 0.3, 0.2). Class 0 = {a, a}:
    Q = (1, 0, 0, 0), D = (|0.4 - 1| + 0.1 + 0.3 + 0.2) / 2 = 0.6. Class 1 = the other 8 records
    (a a b c c c d d): Q = (0.25, 0.125, 0.375, 0.25),
    D = (0.15 + 0.025 + 0.075 + 0.05) / 2 = 0.15."""
    sens = [0, 0, 0, 0, 1, 2, 2, 2, 3, 3]
    cls = [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    np.testing.assert_allclose(_distances(sens, cls), [0.6, 0.15], rtol=0, atol=1e-15)


def test_hierarchical_distance_by_hand():
    """The same records, hierarchy a b -> X, c d -> Y, X Y -> * (H = 2).

    Class 0 = {a, a}: extras p - q: a -0.6, b 0.1, c 0.3, d 0.2. Node X (level 1): pos 0.1,
    neg 0.6, cost 1/2 * 0.1 = 0.05; node Y: pos 0.5, neg 0, cost 0; root (level 2): the extras
    of X and Y are -0.5 and 0.5, cost 2/2 * 0.5 = 0.5. D = 0.55 (= the mean of the nominal
    distance at level 0, 0.6, and at level 1, (0.5 + 0.5) / 2 = 0.5).
    Class 1: extras a 0.15, b -0.025, c -0.075, d -0.05. X: min(0.15, 0.025) = 0.025, cost
    0.0125; Y: min(0, 0.125) = 0; root: X 0.125, Y -0.125, cost 0.125. D = 0.1375."""
    sens = [0, 0, 0, 0, 1, 2, 2, 2, 3, 3]
    cls = [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    levels = np.array([[0, 0, 0], [1, 0, 0], [2, 1, 0], [3, 1, 0]])
    np.testing.assert_allclose(_distances(sens, cls, levels), [0.55, 0.1375], rtol=0, atol=1e-15)
    data = pl.DataFrame({"k": ["e", "e"] + ["f"] * 8, "s": list("aaaabcccdd")})
    tree = {"a": ["X", "*"], "b": ["X", "*"], "c": ["Y", "*"], "d": ["Y", "*"]}
    res = sdckit.t_closeness(data, ["k"], "s", hierarchies={"s": tree})
    np.testing.assert_allclose(res.class_distance["s"], [0.55, 0.1375], rtol=0, atol=1e-15)
    assert res.hierarchical == ("s",) and res.max["s"] == pytest.approx(0.55, abs=1e-15)


def test_hierarchical_distance_of_height_three_by_hand():
    """Hierarchy a -> A -> U, b -> B -> U, c -> C -> V, then *: H = 3 (the level weights 1/3, 2/3,
    3/3). P from a a b c (1/2, 1/4, 1/4), class {b}: Q = (0, 1, 0); extras a 1/2, b -3/4, c 1/4.
    Nodes A, B, C (level 1) have one child: cost 0. U (level 2): children A 1/2, B -3/4:
    cost 2/3 * 1/2 = 1/3. V: one child, 0. Root (level 3): U -1/4, V 1/4: cost 1 * 1/4.
    D = 1/3 + 1/4 = 7/12 (the mean of the nominal distances at levels 0, 1, 2: 3/4, 3/4, 1/4)."""
    sens = [0, 0, 1, 2]
    cls = [0, 0, 1, 0]
    levels = np.array([[0, 0, 0, 0], [1, 1, 0, 0], [2, 2, 1, 0]])
    d = _distances(sens, cls, levels)
    assert d[1] == pytest.approx(7 / 12, abs=1e-15)
    data = pl.DataFrame({"k": [0, 0, 1, 0], "s": list("aabc")})
    tree = [["a", "A", "U", "*"], ["b", "B", "U", "*"], ["c", "C", "V", "*"]]
    res = sdckit.t_closeness(data, ["k"], "s", hierarchies={"s": tree})
    np.testing.assert_allclose(res.class_distance["s"], d, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------
# the kernel against ARX's tree algorithm, the public measure against the kernel
# ----------------------------------------------------------------------------------------------
def _arx_tree_emd(p_counts, q_counts, levels) -> float:
    """ARX's HierarchicalDistanceTCloseness written out: leaf extras P_i Q - q_i P in integers,
    for each inner node level by level pos / neg of its children's net extras, cost
    level / height * min(pos, neg), the total over P Q."""
    height = len(levels[0]) - 1
    big_p, big_q = sum(p_counts), sum(q_counts)
    net = {s: p_counts[s] * big_q - q_counts[s] * big_p for s in range(len(p_counts))}
    cost = 0.0
    for lev in range(1, height + 1):
        children = defaultdict(set)
        for row in levels:
            children[row[lev]].add(row[lev - 1])
        up = {}
        for node, kids in children.items():
            pos = sum(max(net[c], 0) for c in kids)
            neg = sum(max(-net[c], 0) for c in kids)
            cost += (lev / height) * min(pos, neg)
            up[node] = pos - neg
        net = up
    return cost / (float(big_p) * float(big_q))


def _random_tree(rng, n_values: int, height: int) -> np.ndarray:
    levels = np.zeros((n_values, height + 1), dtype=np.int64)
    levels[:, 0] = np.arange(n_values)
    for lev in range(1, height + 1):
        below = levels[:, lev - 1]
        width = 1 if lev == height else max(1, int(below.max() + 1) // 2 + 1)
        parent = rng.integers(0, width, int(below.max()) + 1)
        levels[:, lev] = np.unique(parent, return_inverse=True)[1].reshape(-1)[below]
    return levels


@pytest.mark.parametrize("seed", range(6))
def test_kernel_equals_arx_tree_algorithm(seed):
    rng = np.random.default_rng(seed)
    n_values, height = int(rng.integers(2, 9)), int(rng.integers(1, 4))
    levels = _random_tree(rng, n_values, height)
    n = int(rng.integers(n_values, 80))
    sens = np.r_[rng.permutation(n_values), rng.integers(0, n_values, n - n_values)]
    cls = rng.integers(0, 5, n)
    cls = np.unique(cls, return_inverse=True)[1].reshape(-1)
    got = _distances(sens, cls, levels)
    p = np.bincount(sens, minlength=n_values).tolist()
    for c in range(int(cls.max()) + 1):
        q = np.bincount(sens[cls == c], minlength=n_values).tolist()
        assert got[c] == pytest.approx(_arx_tree_emd(p, q, levels.tolist()), abs=1e-14)
    data = pl.DataFrame({"k": cls, "s": [f"v{v}" for v in sens]})
    tree = [[f"v{v}", *[f"L{lev}_{levels[v, lev]}" for lev in range(1, height + 1)]] for v in range(n_values)]
    res = sdckit.t_closeness(data, ["k"], "s", hierarchies={"s": tree})
    np.testing.assert_allclose(res.class_distance["s"], got, rtol=0, atol=1e-14)
    equal = sdckit.t_closeness(data, ["k"], "s")
    np.testing.assert_allclose(equal.class_distance["s"], _distances(sens, cls), rtol=0, atol=1e-14)


# ----------------------------------------------------------------------------------------------
# ARX's optimum against a brute-force oracle on the bundled small file
# ----------------------------------------------------------------------------------------------
def _emd_equal(p: Counter, q: Counter) -> float:
    n_p, n_q = sum(p.values()), sum(q.values())
    return sum(abs(p[v] / n_p - q[v] / n_q) for v in set(p) | set(q)) / 2


def _emd_hierarchical(p: Counter, q: Counter, tree: dict, height: int) -> float:
    """Li, Li & Venkatasubramanian's hierarchical EMD: the mean over the levels 0..H-1 of the
    equal distance of the two distributions generalised to the level."""
    total = 0.0
    for lev in range(height):
        pl_, ql_ = Counter(), Counter()
        for v, c in p.items():
            pl_[tree[v][lev]] += c
        for v, c in q.items():
            ql_[tree[v][lev]] += c
        total += _emd_equal(pl_, ql_)
    return total / height


def _oracle(records, keys, hier, *, k, t, distance, limit):
    """Every node of the lattice: generalise, group, suppress the classes below k or farther
    than t from the whole file's distribution (suppressed records included, as ARX), ARX's
    Loss; the least (ties: lower sum of levels, then the first node)."""
    n = len(records)
    covered = {key: [Counter(row[lev] for row in hier[key]) for lev in range(len(hier[key][0]))] for key in keys}
    tree = {row[0]: row for row in DISEASE}
    overall = Counter(r["disease"] for r in records)
    best = None
    for index, levels, gen, classes in every_node(records, keys, hier):
        bad = set()
        for members in classes.values():
            q = Counter(records[i]["disease"] for i in members)
            if distance == "equal":
                far = _emd_equal(overall, q) > t + 1e-12
            else:
                far = _emd_hierarchical(overall, q, tree, 2) > t + 1e-12
            if len(members) < k or far:
                bad.update(members)
        if len(bad) > math.floor(limit * n):
            continue
        values = []
        for j, key in enumerate(keys):
            size = len(hier[key])
            total = sum(covered[key][levels[j]][g[j]] for i, g in enumerate(gen) if i not in bad) / size
            v = (total + len(bad) - n / size) / (n - n / size)
            values.append(math.floor(max(v, 0.0) * 1e10) / 1e10)
        loss = math.prod(1 + v for v in values) ** (1 / len(values)) - 1
        cand = (loss, sum(levels), index)
        if best is None or cand < best[0]:
            mask = np.zeros(n, dtype=bool)
            mask[list(bad)] = True
            best = (cand, dict(zip(keys, levels)), mask)
    return best


SMALL_CASES = [
    dict(t=0.2, t_distance="equal"),
    dict(t=0.15, t_distance="equal", k=2, suppression_limit=0.05),
    dict(t=0.1, t_distance="equal", suppression_limit=0.1),
    dict(t=0.2, t_distance="hierarchical"),
    dict(t=0.1, t_distance="hierarchical", k=3, suppression_limit=0.05),
    dict(t=0.05, t_distance="hierarchical", suppression_limit=0.1),
    dict(t=0.2, t_distance="hierarchical", k=2, suppression_limit=0.1),
]


@pytest.mark.parametrize("case", SMALL_CASES, ids=lambda c: "-".join(f"{a}={b}" for a, b in c.items()))
def test_small_file_equals_brute_force_oracle(case):
    data = _small()
    hier = {**SMALL_H, "disease": DISEASE}
    out = arx_search(data, SMALL_KEYS, hier, sensitive="disease", **case)
    (loss, _, _), levels, mask = _oracle(
        data.to_dicts(), SMALL_KEYS, {key: _rows(SMALL_H[key]) for key in SMALL_KEYS},
        k=case.get("k", 1), t=case["t"], distance=case["t_distance"], limit=case.get("suppression_limit", 0.0),
    )  # fmt: skip
    assert out.levels == levels
    assert out.loss == pytest.approx(loss, abs=1e-12)
    np.testing.assert_array_equal(out.suppressed, mask)
    assert out.n_checked < out.n_nodes or case.get("suppression_limit")  # no suppression: FLASH tags


def test_overall_distribution_keeps_the_suppressed_records():
    """ARX's P is the whole input's distribution, also for the records that are suppressed.

    Key u: class a = 5 x, 5 y; class c = 7 x, 3 y; class b = 4 y (24 records). Whole file:
    P(x) = 12/24 = 0.5, so D(a) = 0, D(c) = |0.7 - 0.5| = 0.2, D(b) = 0.5. With t = 0.15 both c
    and b fail: 14 records, above the limit floor(0.2 * 24) = 4, so level 0 fails and the
    answer is u at "*" (one class, D = 0). Were P taken from the records kept after suppressing
    b (20 records, P(x) = 0.6), a and c would be at 0.1 and level 0 would pass."""
    data = pl.DataFrame({"u": ["a"] * 10 + ["c"] * 10 + ["b"] * 4, "s": list("xxxxxyyyyyxxxxxxxyyyyyyy")})
    hier = {"u": [["a", "*"], ["b", "*"], ["c", "*"]]}
    out = arx_search(data, ["u"], hier, sensitive="s", t=0.15, suppression_limit=0.2)
    assert out.levels == {"u": 1} and not out.suppressed.any()
    kept_only = arx_search(data.filter(pl.col("u") != "b"), ["u"], hier, sensitive="s", t=0.15)
    assert kept_only.levels == {"u": 0}  # the same classes measured against the kept records' P


# ----------------------------------------------------------------------------------------------
# ARX's JUnit figures (TestAnonymizationTCloseness, ARX-Adult, 8 quasi-identifiers, k = 5)
# ----------------------------------------------------------------------------------------------
ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
#: ARX's test cases: distance, suppression limit, ARX's optimal levels (in ADULT_QI order) and,
#: for the monotonic discernibility metric, ARX's value (sum of the squared class sizes)
ARX_JUNIT = [
    ("equal", 0.04, (1, 4, 1, 0, 3, 2, 2, 1), 311880088),
    ("equal", 0.0, (1, 4, 1, 1, 3, 2, 2, 1), 456853172),
    ("hierarchical", 0.04, (1, 4, 0, 0, 3, 2, 2, 1), None),
    ("hierarchical", 0.0, (0, 4, 1, 1, 3, 2, 2, 1), None),
]


def _adult_model(distance: str, limit: float) -> L.Model:
    """The kernel's model of ARX-Adult built in the test from the hierarchy files."""
    data = pl.read_csv(shared_file("arx-adult", "adult.csv"), separator=";", infer_schema_length=0)
    hiers, base = [], []
    for key in ADULT_QI:
        rows = _rows(shared_file("arx-adult", f"adult_hierarchy_{key}.csv"))
        codes = np.zeros((len(rows), len(rows[0])), dtype=np.int64)
        for lev in range(len(rows[0])):
            index: dict = {}
            codes[:, lev] = [index.setdefault(r[lev], len(index)) for r in rows]
        hiers.append(L.hierarchy_from_codes(codes))
        pos = {r[0]: i for i, r in enumerate(rows)}
        base.append([pos[v] for v in data[key].to_list()])
    occ = _rows(shared_file("arx-adult", "adult_hierarchy_occupation.csv"))
    values = sorted({r[0] for r in occ})
    sens = np.array([values.index(v) for v in data["occupation"].to_list()])
    mid = sorted({r[1] for r in occ})
    levels = np.array([[i, mid.index(next(r[1] for r in occ if r[0] == v)), 0] for i, v in enumerate(values)])
    crit = L.Criteria(k=5, t=0.2, t_distance=distance)
    return L.make_model(
        np.array(base).T, hiers, sensitive=sens, sens_size=len(values), criteria=crit, suppression_limit=limit,
        sens_levels=levels if distance == "hierarchical" else None,
    )  # fmt: skip


def _node(model, levels):
    return L.evaluate(model, np.zeros(model.m, dtype=np.int64), model.rows, model.counts, np.array(levels))


@pytest.mark.shared_data
@pytest.mark.parametrize("case", ARX_JUNIT, ids=lambda c: f"{c[0]}-{c[1]}")
def test_arx_junit_optimum_on_adult(case):
    """ARX's optimum satisfies k = 5 and t = 0.2 within the limit, with ARX's discernibility
    (sum of the squared class sizes, suppressed classes included: the monotonic variant), and
    each of its direct specialisations (one key a level lower) fails: ARX's metrics (monotonic
    discernibility and entropy) are lower there, so ARX's node is optimal only so."""
    distance, limit, levels, dm = case
    model = _adult_model(distance, limit)
    res = _node(model, levels)
    assert res.satisfies
    if dm is not None:
        sizes = Counter()
        for row, c in zip(zip(*res.rows[: model.m]), res.counts):
            sizes[row] += int(c)
        assert sum(v * v for v in sizes.values()) == dm
    for j in range(model.m):
        if levels[j]:
            lower = list(levels)
            lower[j] -= 1
            assert not _node(model, lower).satisfies, lower


# ----------------------------------------------------------------------------------------------
# the search: every returned file meets t, measured with the public measure
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("distance", "t", "limit"), [("equal", 0.15, 0.05), ("hierarchical", 0.2, 0.1)])
def test_search_with_record_suppression_returns_a_t_close_file(distance, t, limit):
    """ARX's model: the search's answer is ARX's node with ARX's suppressed records (those of the
    classes too far from the whole file's distribution), and the file meets t when measured
    with the public measure, the records with every key suppressed left out (ARX's model:
    they are removed)."""
    data = _small()
    sc = sdckit.Scenario(keys=SMALL_KEYS)
    hier = {**SMALL_H, "disease": DISEASE} if distance == "hierarchical" else dict(SMALL_H)
    target = {"t": t, "sensitive": "disease", "t_distance": distance}
    res = sdckit.search(
        data, sc, target=target, hierarchies=hier, suppression="records", objective="arx",
        suppression_limit=limit, progress=False,
    )  # fmt: skip
    out = arx_search(data, SMALL_KEYS, {**SMALL_H, "disease": DISEASE}, sensitive="disease",
                     t=t, t_distance=distance, suppression_limit=limit)  # fmt: skip
    assert res.found and res.levels == out.levels and res.loss == pytest.approx(out.loss, abs=1e-12)
    assert res.suppressed_records == int(out.suppressed.sum()) > 0
    protected = pl.DataFrame(res.protected)
    gone = protected.select(pl.any_horizontal(pl.col(SMALL_KEYS).is_null())).to_series()  # whole records
    spec = {"disease": DISEASE} if distance == "hierarchical" else None
    tc = sdckit.t_closeness(protected, SMALL_KEYS, "disease", hierarchies=spec, allow_degenerate_keys=True)
    kept_classes = np.unique(tc.class_ids[~gone.to_numpy()])
    assert tc.class_distance["disease"][kept_classes].max() <= t + 1e-12
    assert gone.sum() == res.suppressed_records and not any("recipe suppresses" in x for x in res.notes)
    replayed = sdckit.SdcProblem.from_recipe(data, res.recipe).data
    assert pl.DataFrame(replayed).equals(protected)
    assert res.risk["t"] == pytest.approx(tc.class_distance["disease"][kept_classes].max(), abs=1e-15)


def test_search_with_cell_suppression_returns_a_t_close_file():
    """With cell suppression every class of the returned file (the records with every key
    suppressed one more class) is within t of the file's distribution."""
    data = _small()
    sc = sdckit.Scenario(keys=SMALL_KEYS)
    for distance, hier in (("equal", dict(SMALL_H)), ("hierarchical", {**SMALL_H, "disease": DISEASE})):
        target = {"t": 0.1, "sensitive": "disease", "t_distance": distance, "k": 2}
        res = sdckit.search(data, sc, target=target, hierarchies=hier, suppression_limit=0.1, progress=False)
        assert res.found
        spec = {"disease": DISEASE} if distance == "hierarchical" else None
        tc = sdckit.t_closeness(res.protected, SMALL_KEYS, "disease", hierarchies=spec, allow_degenerate_keys=True)
        assert tc.max["disease"] <= 0.1 + 1e-12
        assert res.risk["t"] == pytest.approx(tc.max["disease"], abs=1e-15)
