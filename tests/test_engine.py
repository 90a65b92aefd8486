"""The engine seam: the Polars engine implements the protocol; float-typed integer keys,
lazily scanned files and strata give the results of the plain computation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import S002_KEYS, s002_table
from sdckit import SdcError
from sdckit.engines import Engine, get_engine


def _synthetic(n=3000, seed=3, missing=0.05):
    rng = np.random.default_rng(seed)
    cols = {f"k{j}": rng.integers(0, c, n).astype(np.int64) for j, c in enumerate((3, 5, 7, 4))}
    df = pl.DataFrame(cols).with_columns(
        [
            pl.when(pl.lit(rng.random(n) < missing)).then(None).otherwise(pl.col(f"k{j}")).alias(f"k{j}")
            for j in range(4)
        ]
    )
    return df.with_columns(pl.Series("w", rng.uniform(1, 50, n)), pl.Series("st", rng.integers(0, 3, n)))


def test_polars_engine_implements_the_protocol():
    eng = get_engine()
    assert isinstance(eng, Engine) and eng.name == "polars"
    assert get_engine("polars") is eng and get_engine(eng) is eng
    with pytest.raises(SdcError, match="engine: got 'sqlite'; expected one of 'polars', 'duckdb', 'spark'"):
        get_engine("sqlite")
    assert get_engine("duckdb").name == "duckdb" and get_engine("duckdb") is get_engine("duckdb")


def test_float_keys_with_integer_values_match_integer_keys():
    """pandas reads an integer column with a missing value as float64: same frequencies, and
    the key labels stay the caller's floats."""
    df = _synthetic()
    keys = ["k0", "k1", "k2", "k3"]
    as_float = df.with_columns([pl.col(k).cast(pl.Float64) for k in keys])
    a = sdckit.frequencies(df, keys, weight="w", alpha=0.5)
    b = sdckit.frequencies(as_float, keys, weight="w", alpha=0.5)
    np.testing.assert_array_equal(a.fk, b.fk)
    np.testing.assert_array_equal(a.Fk, b.Fk)
    enc = get_engine().encode(get_engine().table(as_float), keys)
    assert enc.labels[0].dtype == pl.Float64 and enc.labels[0].to_list() == [0.0, 1.0, 2.0]
    # a non-integral float is a label like any other (no rounding): 0.5 is its own category
    odd = as_float.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(0.5).otherwise(pl.col("k0")).alias("k0"))
    assert get_engine().encode(get_engine().table(odd), ["k0"]).labels[0].to_list()[:2] == [0.0, 0.5]


def test_frequencies_on_a_lazy_file_read_only_needed_columns(tmp_path):
    df = _synthetic().with_columns(pl.Series("secret", np.arange(3000)))
    path = tmp_path / "data.parquet"
    df.write_parquet(path)
    eager = sdckit.frequencies(df, ["k0", "k1"], weight="w")
    lazy_frame = sdckit.read_data(path, lazy=True)
    assert isinstance(lazy_frame, pl.LazyFrame)
    table = get_engine().table(lazy_frame)
    res = sdckit.frequencies(table, ["k0", "k1"], weight="w")
    np.testing.assert_array_equal(res.Fk, eager.Fk)
    assert "secret" not in table._cache  # never read
    by_path = sdckit.frequencies(str(path), ["k0", "k1"], weight="w")
    np.testing.assert_array_equal(by_path.fk, eager.fk)


def test_lazy_csv_in_latin1_equals_eager(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("region;name\nZürich;Ä\nGenève;é\nZürich;Ö\n".encode("latin-1"))
    eager = sdckit.read_data(path, encoding="latin-1")
    lazy = sdckit.read_data(path, encoding="latin-1", lazy=True).collect()
    assert eager.equals(lazy) and eager["region"].to_list() == ["Zürich", "Genève", "Zürich"]


def test_csv_with_a_duplicated_column_name_is_an_error(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(SdcError, match="a appear more than once"):
        sdckit.read_data(path)


def test_strata_equal_separate_runs_per_stratum():
    """Oracle: f_k and F_k within strata are those of running frequencies on each stratum."""
    df = _synthetic(n=1500)
    keys = ["k0", "k1", "k2", "k3"]
    for alpha in (1.0, 0.5):
        res = sdckit.frequencies(df, keys, weight="w", strata="st", alpha=alpha)
        for s in range(3):
            mask = (df["st"] == s).to_numpy()
            part = sdckit.frequencies(df.filter(pl.col("st") == s), keys, weight="w", alpha=alpha)
            np.testing.assert_allclose(res.fk[mask], part.fk, rtol=1e-12)
            np.testing.assert_allclose(res.Fk[mask], part.Fk, rtol=1e-12)
    kan = sdckit.k_anonymity(df, keys, k=3, strata="st")
    within = sdckit.frequencies(df, keys, strata="st")
    assert kan.n_violations[3] == int(np.count_nonzero(within.fk < 3))


def test_scenario_gives_the_roles_and_explicit_arguments_win():
    d = s002_table()
    sc = sdckit.Scenario(keys=S002_KEYS, weight="w")
    a = sdckit.individual_risk(d, scenario=sc)
    b = sdckit.individual_risk(d, S002_KEYS, weight="w")
    assert a.global_risk == b.global_risk
    c = sdckit.frequencies(d, ["Residence", "Gender"], scenario=sc)
    assert c.keys == ("Residence", "Gender")
    with pytest.raises(SdcError, match="scenario: got dict"):
        sdckit.frequencies(d, scenario={"keys": S002_KEYS})


def test_pandas_index_survives_to_frame_and_joins_back():
    """A filtered pandas frame: per-record results carry its index, so df.join(res.to_frame())
    attaches every value to its own record (the same values as by position)."""
    pytest.importorskip("pandas")
    full = s002_table().to_pandas()
    sub = full[full["Gender"] == "Female"]
    res = sdckit.individual_risk(sub, ["Residence", "Education", "Labor"], weight="w")
    out = res.to_frame()
    assert list(out.index) == list(sub.index)
    joined = sub.join(out)
    np.testing.assert_array_equal(joined["risk"].to_numpy(), res.risk)
    assert not joined["risk"].isna().any()
    assert list(sdckit.k_anonymity(res.frequencies).to_frame().index) == list(sub.index)


def test_verdict_names_the_household_rule():
    """Households whose members are unique: the individual rate meets a loose target but the
    household rule does not; safe is False and the sentence says which rule fails."""
    rng = np.random.default_rng(5)
    n = 400
    d = pl.DataFrame(
        {
            "a": rng.integers(0, 4, n),
            "b": rng.integers(0, 3, n),
            "w": np.full(n, 20.0),
            "hh": np.repeat(np.arange(n // 8), 8),
        }
    )
    res = sdckit.individual_risk(d, ["a", "b"], weight="w", household="hh")
    target = (res.global_risk + res.household_global_risk) / 2  # between the two rates
    thr = res.threshold(target)
    assert thr.meets_individual_target and thr.meets_household_target is False
    assert not thr.safe and thr.failing == ("household rule",)
    assert "household rule" in thr.verdict and "NOT" in thr.verdict
    assert thr.to_dict()["safe"] is False


def test_every_public_measure_takes_a_scenario():
    """Measures take ``scenario=``; file functions do not, and protection methods take their
    roles explicitly (``SdcProblem`` fills them from its scenario)."""
    import inspect

    from sdckit.protect import METHODS

    not_measures = {"read_data", "read_metadata", "write_data", "tune_memory", "assess", *METHODS}
    for name in sdckit.__all__:
        obj = getattr(sdckit, name)
        if inspect.isfunction(obj) and name not in not_measures:
            assert "scenario" in inspect.signature(obj).parameters, name


def test_scenario_roles_reach_sensitive_and_continuous_measures():
    d = s002_table()
    sc = sdckit.Scenario(keys=S002_KEYS, sensitive="Health", weight="w")
    a = sdckit.l_diversity(d, scenario=sc)
    b = sdckit.l_diversity(d, S002_KEYS, "Health")
    np.testing.assert_array_equal(a.to_frame().to_numpy(), b.to_frame().to_numpy())
    rng = np.random.default_rng(1)
    x = pl.DataFrame({"u": rng.normal(size=50), "v": rng.normal(size=50)})
    y = x.with_columns(pl.col("u") + 0.01, pl.col("v") - 0.01)
    sc2 = sdckit.Scenario(numeric_keys=["u", "v"])
    r1 = sdckit.interval_disclosure(x, y, scenario=sc2)
    r2 = sdckit.interval_disclosure(x, y, ["u", "v"])
    assert r1.to_dict() == r2.to_dict()
