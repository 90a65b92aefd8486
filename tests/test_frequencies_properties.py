"""Property tests of ``sdckit.frequencies`` / ``sdckit.k_anonymity`` (spec A.1, A.1.1, A.2).

The reference is a brute-force oracle written here directly from the rule text of spec A.1.1
(every record compared with every other record), independent of the mask/join algorithm in
``sdckit._core.frequencies``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from sdckit._core.frequencies import pattern_table, record_frequencies

# The oracle comparisons draw weights in (0, 1] too (the rule is numeric for any positive
# weight); the "weights below 1" warning for such files is tested in test_validation.py.
pytestmark = pytest.mark.filterwarnings("ignore:weight.*below 1:sdckit.SdcWarning")

RTOL = 1e-9
ALPHAS = (0.0, 0.3, 0.5, 1.0)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# brute-force oracle (spec A.1.1, rule text)
# ---------------------------------------------------------------------------------------------


def brute_force(codes, weights=None, alpha=1.0, counts=None):
    """f and F of every row by comparing it with every row (itself included).

    ``codes``: (n, m) integers, -1 = missing. ``counts``: optional multiplicity of each row
    (a row then stands for ``counts[j]`` identical records whose weights sum to
    ``weights[j]``); default one record per row. Rules (spec A.1.1), for record i and every
    record j compatible with it (equal wherever both are observed):

    * i missing on every key (all-missing; the NA record when m = 1): every record counts 1,
      so f = n;
    * j has exactly i's pattern (NA positions included; i itself among them): counts 1;
    * i complete: j partial counts alpha; j all-missing counts 0 when m >= 2, alpha when m = 1;
    * i partial: j complete counts 1; j partial or all-missing (another pattern) counts alpha.

    F uses the same coefficients on the weights (weights None: F = f).
    """
    codes = np.asarray(codes, dtype=np.int64)
    n, m = codes.shape
    c = np.ones(n) if counts is None else np.asarray(counts, dtype=float)
    w = c.copy() if weights is None else np.asarray(weights, dtype=float)
    miss = codes < 0
    nmiss = miss.sum(axis=1)
    is_complete = nmiss == 0
    is_allmiss = nmiss == m
    is_partial = ~is_complete & ~is_allmiss
    f = np.zeros(n)
    F = np.zeros(n)
    for i in range(n):
        compatible = np.all((codes == codes[i]) | miss | miss[i], axis=1)
        same = np.all(codes == codes[i], axis=1)
        if is_allmiss[i]:
            coef = np.ones(n)
        elif is_complete[i]:
            coef = np.where(same, 1.0, np.where(is_partial, alpha, np.where(is_allmiss, alpha if m == 1 else 0.0, 0.0)))
        else:
            coef = np.where(same, 1.0, np.where(is_complete, 1.0, alpha))
        coef = np.where(compatible, coef, 0.0)
        f[i] = np.sum(coef * c)
        F[i] = np.sum(coef * w)
    return f, F


def test_oracle_reproduces_spec_example_2():
    """The oracle itself against the verified Example 2 of spec A.1.1 (all cases)."""
    a = ["M", "M", "M", None, "F", "F", None, "M"]
    b = ["SC", "SI", None, None, "SC", "SC", None, "SC"]
    c = ["E", "E", "E", "E", None, "U", None, "E"]
    w = [10, 20, 30, 40, 50, 60, 70, 80]
    expected = {
        1.0: ([4, 3, 6, 7, 4, 2, 8, 4], [160, 90, 250, 300, 220, 110, 360, 160]),
        0.5: ([3, 2, 5, 5.5, 3, 1.5, 8, 3], [125, 55, 195, 225, 165, 85, 360, 125]),
        0.0: ([2, 1, 4, 4, 2, 1, 8, 2], [90, 20, 140, 150, 110, 60, 360, 90]),
    }
    df = pl.DataFrame({"a": a, "b": b, "c": c, "w": w}, schema_overrides={"w": pl.Float64})
    codes = _codes_of(df, ["a", "b", "c"])
    for alpha, (fe, Fe) in expected.items():
        f, F = brute_force(codes, w, alpha)
        np.testing.assert_allclose(f, fe, rtol=RTOL)
        np.testing.assert_allclose(F, Fe, rtol=RTOL)
        res = sdckit.frequencies(df, ["a", "b", "c"], weight="w", alpha=alpha)
        np.testing.assert_allclose(res.fk, fe, rtol=RTOL)
        np.testing.assert_allclose(res.Fk, Fe, rtol=RTOL)


def test_oracle_single_key_rule():
    """m = 1: a value gets c_v + alpha * #NA, the NA records get n (spec A.1.1 rule 4)."""
    codes = np.array([[0], [0], [1], [-1], [-1]])
    f, _ = brute_force(codes, alpha=0.5)
    np.testing.assert_allclose(f, [3, 3, 2, 5, 5])


# ---------------------------------------------------------------------------------------------
# strategies and helpers
# ---------------------------------------------------------------------------------------------


def _codes_of(df: pl.DataFrame, keys) -> np.ndarray:
    """Independent integer coding (-1 = missing) of the key columns, in first-seen order."""
    out = np.empty((df.height, len(keys)), dtype=np.int64)
    for j, k in enumerate(keys):
        seen: dict = {}
        for i, v in enumerate(df.get_column(k).to_list()):
            out[i, j] = -1 if v is None else seen.setdefault(v, len(seen))
    return out


@st.composite
def tables(draw, max_rows: int = 30, weighted=None):
    """(codes (n, m) with -1 = missing, weights or None). 1-5 keys, 1-4 categories each."""
    m = draw(st.integers(1, 5))
    ncat = draw(st.lists(st.integers(1, 4), min_size=m, max_size=m))
    # missing share per table: none, some, a lot
    miss_weight = draw(st.sampled_from([0, 1, 3]))
    cell = [st.integers(-miss_weight, ncat[j] - 1).map(lambda v: max(v, -1)) for j in range(m)]
    rows = draw(st.lists(st.tuples(*cell), min_size=1, max_size=max_rows))
    codes = np.array(rows, dtype=np.int64).reshape(len(rows), m)
    if weighted is None:
        weighted = draw(st.booleans())
    w = None
    if weighted:
        w = np.array(
            draw(
                st.lists(
                    st.floats(0.01, 1000.0, allow_nan=False, allow_infinity=False),
                    min_size=len(rows),
                    max_size=len(rows),
                )
            )
        )
    return codes, w


def _frame(codes, w=None, labels=None) -> tuple[pl.DataFrame, list[str]]:
    """DataFrame with keys k0.. (even keys as strings 'c<code>', odd keys as ints), weight 'w'.

    ``labels[j]``: optional list mapping code -> label for key j (a renaming).
    """
    n, m = codes.shape
    cols = {}
    keys = [f"k{j}" for j in range(m)]
    for j, k in enumerate(keys):
        if labels is not None:
            lab = labels[j]
            vals = [None if c < 0 else lab[c] for c in codes[:, j]]
            dtype = pl.String if isinstance(lab[0], str) else pl.Int64
        elif j % 2 == 0:
            vals = [None if c < 0 else f"c{c}" for c in codes[:, j]]
            dtype = pl.String
        else:
            vals = [None if c < 0 else int(c) for c in codes[:, j]]
            dtype = pl.Int64
        cols[k] = pl.Series(k, vals, dtype=dtype)  # explicit dtype: an all-missing key is not Null-typed
    if w is not None:
        cols["w"] = pl.Series("w", w, dtype=pl.Float64)
    return pl.DataFrame(cols), keys


def _freq(df, keys, weighted, alpha=1.0):
    return sdckit.frequencies(df, keys, weight="w" if weighted else None, alpha=alpha, allow_degenerate_keys=True)


# ---------------------------------------------------------------------------------------------
# agreement with the brute-force oracle
# ---------------------------------------------------------------------------------------------


def _check_against_oracle(codes, w, alpha):
    """sdckit.frequencies equals the brute-force transcription of spec A.1.1 (1e-9 relative)."""
    df, keys = _frame(codes, w)
    res = _freq(df, keys, w is not None, alpha)
    f, F = brute_force(codes, w, alpha)
    np.testing.assert_allclose(res.fk, f, rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.Fk, F, rtol=RTOL, atol=0)
    return res


@SETTINGS
@given(tables(), st.sampled_from(ALPHAS))
def test_matches_brute_force_oracle(table, alpha):
    codes, w = table
    res = _check_against_oracle(codes, w, alpha)
    assert np.all(res.fk >= 1)  # a record always counts itself
    assert res.n == len(codes)
    assert res.n_patterns == len({tuple(r) for r in codes.tolist()})
    assert res.n_with_missing == int(np.count_nonzero((codes < 0).any(axis=1)))


@SETTINGS
@given(tables(), st.sampled_from(ALPHAS))
def test_numpy_oracle_matches_brute_force(table, alpha):
    """``_core.frequencies.record_frequencies`` (NumPy path) against the rule text."""
    codes, w = table
    f, F = record_frequencies(codes.astype(np.int32), w, alpha)
    fb, Fb = brute_force(codes, w, alpha)
    np.testing.assert_allclose(f, fb, rtol=RTOL, atol=0)
    np.testing.assert_allclose(F, Fb, rtol=RTOL, atol=0)


@st.composite
def wide_tables(draw):
    """Tables over a large key space (2-14 keys, up to ~40 labels each) that still have many
    compatible pairs: half of the rows are random, half are copies of a few prototype rows with
    holes punched in. Exercises the sparse joins (and, with many keys, the densified keys) of
    the frequency kernel, which small category counts never reach."""
    m = draw(st.integers(2, 14))
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    p_miss = draw(st.sampled_from([0.1, 0.3, 0.6]))
    rng = np.random.default_rng(seed)
    protos = rng.integers(0, 40, size=(draw(st.integers(1, 4)), m))
    rand = rng.integers(0, 40, size=(n, m))
    pick = rng.integers(0, len(protos), size=n)
    from_proto = rng.random(n) < 0.5
    codes = np.where(from_proto[:, None], protos[pick], rand)
    codes[from_proto[:, None] & (rng.random((n, m)) < p_miss)] = -1
    w = rng.lognormal(0.0, 1.0, size=n) + 0.01 if draw(st.booleans()) else None
    return codes, w


@SETTINGS
@given(wide_tables(), st.sampled_from(ALPHAS))
def test_matches_brute_force_oracle_wide_key_space(table, alpha):
    _check_against_oracle(*table, alpha)


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_matches_brute_force_oracle_key_space_beyond_int64(alpha):
    """20 keys with ~100 labels each: the product of the cardinalities exceeds 2**62, so
    projection keys on many columns must be densified rather than packed into one int64."""
    rng = np.random.default_rng(7)
    n, m = 300, 20
    protos = rng.integers(0, 100, size=(5, m))
    codes = rng.integers(0, 100, size=(n, m))
    from_proto = rng.random(n) < 0.6
    codes[from_proto] = protos[rng.integers(0, 5, size=int(from_proto.sum()))]
    codes[from_proto[:, None] & (rng.random((n, m)) < 0.08)] = -1
    codes[rng.random(n) < 0.05] = -1  # a few all-missing records
    w = rng.lognormal(0.0, 1.0, size=n) + 0.01
    res = _check_against_oracle(codes, w, alpha)
    assert np.any((res.fk > 1) & (res.fk < n))  # the table does have matches through missing values


# ---------------------------------------------------------------------------------------------
# invariances
# ---------------------------------------------------------------------------------------------


@st.composite
def relabelled(draw):
    """A table, a row permutation, new labels for every key, a key-column permutation."""
    codes, w = draw(tables(max_rows=25))
    n, m = codes.shape
    perm = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    labels = []
    for _ in range(m):
        ncodes = max(int(codes.max()) + 1, 1)
        if draw(st.booleans()):
            lab = draw(st.lists(st.text(max_size=3), min_size=ncodes, max_size=ncodes, unique=True))
        else:
            lab = draw(st.lists(st.integers(-(10**12), 10**12), min_size=ncodes, max_size=ncodes, unique=True))
        labels.append(lab)
    key_perm = draw(st.permutations(range(m)))
    return codes, w, perm, labels, list(key_perm)


@SETTINGS
@given(relabelled(), st.sampled_from(ALPHAS))
def test_invariant_to_row_order_labels_and_key_order(case, alpha):
    codes, w, perm, labels, key_perm = case
    weighted = w is not None
    df, keys = _frame(codes, w)
    base = _freq(df, keys, weighted, alpha)

    shuffled = _freq(df[perm], keys, weighted, alpha)
    np.testing.assert_allclose(shuffled.fk, base.fk[perm], rtol=RTOL)
    np.testing.assert_allclose(shuffled.Fk, base.Fk[perm], rtol=RTOL)

    df_r, _ = _frame(codes, w, labels)
    renamed = _freq(df_r, keys, weighted, alpha)
    np.testing.assert_allclose(renamed.fk, base.fk, rtol=RTOL)
    np.testing.assert_allclose(renamed.Fk, base.Fk, rtol=RTOL)

    reordered = _freq(df, [keys[j] for j in key_perm], weighted, alpha)
    np.testing.assert_allclose(reordered.fk, base.fk, rtol=RTOL)
    np.testing.assert_allclose(reordered.Fk, base.Fk, rtol=RTOL)
    assert reordered.n_patterns == renamed.n_patterns == shuffled.n_patterns == base.n_patterns


# ---------------------------------------------------------------------------------------------
# sums, weights
# ---------------------------------------------------------------------------------------------


@st.composite
def complete_tables(draw):
    codes, w = draw(tables())
    codes = np.where(codes < 0, 0, codes)  # fill the holes: nothing missing
    return codes, w


@SETTINGS
@given(complete_tables(), st.sampled_from(ALPHAS))
def test_sums_without_missing_values(table, alpha):
    codes, w = table
    df, keys = _frame(codes, w)
    res = _freq(df, keys, w is not None, alpha)
    n = len(codes)
    # f_k summed over the distinct keys is n (and F_k summed is the weight total)
    first = np.unique(res.pattern_ids, return_index=True)[1]
    assert len(first) == res.n_patterns
    assert res.fk[first].sum() == pytest.approx(n, rel=RTOL)
    if w is not None:
        assert res.Fk[first].sum() == pytest.approx(w.sum(), rel=RTOL)
    # every record of key k carries 1/f_k: the sum over records is the number of keys
    assert np.sum(1.0 / res.fk) == pytest.approx(res.n_patterns, rel=RTOL)
    assert res.n_patterns == len({tuple(r) for r in codes.tolist()})
    # alpha plays no role without missing values
    np.testing.assert_array_equal(res.fk, _freq(df, keys, w is not None, 1.0).fk)


@SETTINGS
@given(tables(weighted=True), st.sampled_from(ALPHAS), st.floats(0.001, 1000.0))
def test_F_scales_with_weights(table, alpha, c):
    codes, w = table
    df, keys = _frame(codes, w)
    res = _freq(df, keys, True, alpha)
    df_c, _ = _frame(codes, w * c)
    res_c = _freq(df_c, keys, True, alpha)
    np.testing.assert_array_equal(res_c.fk, res.fk)
    np.testing.assert_allclose(res_c.Fk, c * res.Fk, rtol=RTOL)
    # without a weight, F is f
    res_none = _freq(df, keys, False, alpha)
    assert not res_none.weighted
    np.testing.assert_array_equal(res_none.fk, res.fk)
    np.testing.assert_array_equal(res_none.Fk, res_none.fk)
    # constant weights 1 give F = f as well
    df_1, _ = _frame(codes, np.ones(len(codes)))
    np.testing.assert_allclose(_freq(df_1, keys, True, alpha).Fk, res.fk, rtol=RTOL)


# ---------------------------------------------------------------------------------------------
# k-anonymity
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(tables(), st.sampled_from(ALPHAS), st.lists(st.integers(1, 12), min_size=1, max_size=6, unique=True))
def test_k_anonymity_flags_and_monotonicity(table, alpha, ks):
    codes, w = table
    weighted = w is not None
    df, keys = _frame(codes, w)
    ka = sdckit.k_anonymity(df, keys, k=ks, weight="w" if weighted else None, alpha=alpha, allow_degenerate_keys=True)
    fr = ka.frequencies
    assert ka.k == tuple(sorted(ks))
    for j, k in enumerate(ka.k):
        np.testing.assert_array_equal(ka.flags[:, j], fr.fk < k)
        np.testing.assert_array_equal(ka.violates(k), fr.fk < k)
        assert ka.n_violations[k] == int(np.count_nonzero(fr.fk < k))
        assert ka.n_patterns_violating[k] == len(np.unique(fr.pattern_ids[fr.fk < k]))
        if weighted:
            assert ka.n_weighted_violations[k] == int(np.count_nonzero(fr.Fk < k))
        else:
            assert ka.n_weighted_violations is None
    v = [ka.n_violations[k] for k in ka.k]
    assert v == sorted(v)
    assert all(ka.n_patterns_violating[a] <= ka.n_patterns_violating[b] for a, b in zip(ka.k, ka.k[1:]))
    if 1 in ka.k:
        assert ka.n_violations[1] == 0
    # the whole range 1..n+1: non-decreasing, and everything violates (n+1)-anonymity
    full = sdckit.k_anonymity(fr, k=list(range(1, len(codes) + 2)))
    vf = [full.n_violations[k] for k in full.k]
    assert vf == sorted(vf) and vf[0] == 0 and vf[-1] == len(codes)
    # passing the FrequencyResult recomputes nothing and gives the same flags
    again = sdckit.k_anonymity(fr, k=ks)
    np.testing.assert_array_equal(again.flags, ka.flags)


# ---------------------------------------------------------------------------------------------
# Polars engine (n > 20,000) against the NumPy oracle
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_polars_engine_matches_numpy_oracle_50k(alpha):
    rng = np.random.default_rng(20240611)
    n, cards, p_miss = 50_000, (2, 3, 5, 7, 4), 0.08
    codes = np.column_stack([rng.integers(0, c, size=n) for c in cards]).astype(np.int32)
    codes[rng.random(codes.shape) < p_miss] = -1
    w = rng.lognormal(3.0, 1.0, size=n) + 0.5
    # labels whose sorted order differs from the code order
    cols = {
        f"k{j}": pl.Series(
            [
                None if c < 0 else (f"v{(7 * c) % cards[j]}_{c}" if j % 2 == 0 else 1000 - 13 * int(c))
                for c in codes[:, j]
            ],
            dtype=pl.String if j % 2 == 0 else pl.Int64,
        )
        for j in range(len(cards))
    }
    cols["w"] = w
    df = pl.DataFrame(cols)
    keys = [f"k{j}" for j in range(len(cards))]

    res = sdckit.frequencies(df, keys, weight="w", alpha=alpha)
    f0, F0 = record_frequencies(codes, w, alpha)
    np.testing.assert_allclose(res.fk, f0, rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.Fk, F0, rtol=RTOL, atol=0)

    # same partition of the records into patterns
    ids0 = pattern_table(codes, w)[0]
    assert res.n_patterns == len(np.unique(ids0))
    pairs = np.unique(np.column_stack([res.pattern_ids, ids0]), axis=0)
    assert len(pairs) == res.n_patterns

    # and the rule text, evaluated on the distinct patterns with their multiplicities
    _, patterns, counts, wsum = pattern_table(codes, w)
    fb, Fb = brute_force(patterns, wsum, alpha, counts=counts)
    np.testing.assert_allclose(res.fk, fb[ids0], rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.Fk, Fb[ids0], rtol=RTOL, atol=0)

    # unweighted: F = f
    res_u = sdckit.frequencies(df, keys, alpha=alpha)
    np.testing.assert_allclose(res_u.fk, f0, rtol=RTOL, atol=0)
    np.testing.assert_array_equal(res_u.Fk, res_u.fk)


@pytest.mark.slow
def test_large_wide_table_matches_reference_kernel():
    """Benchmark-like table (7 keys with 2..50 categories, 5% missing, 150,000 rows, so more than
    50,000 complete patterns and ~100 missing-value masks): the fast kernel behind
    ``sdckit.frequencies`` against the plain mask-pair join of the spec
    (``_core.frequencies.pattern_frequencies_reference``)."""
    import sdckit._core.frequencies as core

    reference = core.pattern_frequencies_reference
    rng = np.random.default_rng(11)
    n, cards = 150_000, (2, 5, 10, 20, 30, 40, 50)
    codes = np.column_stack([rng.integers(0, c, size=n) for c in cards]).astype(np.int32)
    codes[rng.random(codes.shape) < 0.05] = -1
    w = rng.lognormal(4.0, 0.8, size=n) + 1.0
    df = pl.DataFrame({f"k{j}": codes[:, j] for j in range(len(cards))} | {"w": w})
    df = df.with_columns(pl.when(pl.col(f"k{j}") >= 0).then(pl.col(f"k{j}")) for j in range(len(cards)))
    keys = [f"k{j}" for j in range(len(cards))]
    ids, patterns, counts, wsum = pattern_table(codes, w)
    for alpha in (1.0, 0.5):
        res = sdckit.frequencies(df, keys, weight="w", alpha=alpha)
        fr, Fr = reference(patterns, counts, wsum, alpha)
        np.testing.assert_allclose(res.fk, fr[ids], rtol=RTOL, atol=0)
        np.testing.assert_allclose(res.Fk, Fr[ids], rtol=RTOL, atol=0)
