"""One engine protocol: Polars, DuckDB and Spark are each an :class:`sdckit.engines.Engine`, and
every public measure and protection method runs on every engine.

The engine x measure test enumerates the public functions of ``sdckit.risk``,
``sdckit.utility`` and ``sdckit.protect`` (a new one without a case here fails the test), runs
each on sdcMicro's testdata with the in-memory engine and with each out-of-core engine, and
either compares the out-of-core result with the in-memory one (the measures and methods the
engines declare they run, :data:`sdckit.engines.OUT_OF_CORE_MEASURES`) or checks the one
refusal of the ``records`` capability.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import polars as pl
import pytest

import examples
import sdckit
import sdckit.protect
import sdckit.risk
import sdckit.utility
from conftest import DATA
from sdckit import registry
from sdckit.engines import (
    OUT_OF_CORE_MEASURES,
    RECORDS,
    STORED,
    DuckDBEngine,
    Engine,
    PolarsEngine,
    SparkEngine,
    get_engine,
    refusal,
)
from test_engines_outofcore import assert_close

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUM = ["expend", "income", "savings"]


def _testdata() -> pl.DataFrame:
    """sdcMicro's testdata (4,580 records; tests/data/sdcmicro)."""
    return pl.read_csv(DATA / "sdcmicro" / "testdata.csv")


def _noisy(d: pl.DataFrame) -> pl.DataFrame:
    """A protected copy of ``d``: the numeric variables times a fixed factor per record."""
    f = 1 + 0.05 * np.sin(np.arange(d.height))
    return d.with_columns([(pl.col(c) * f).alias(c) for c in NUM])


def _external(d: pl.DataFrame) -> pl.DataFrame:
    """Every 10th record of ``d``, as an intruder's file."""
    return d[::10]


# ----------------------------------------------------------------------------------------------
# the protocol
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spark_engine():
    return SparkEngine(master="local[2]", config={"spark.sql.shuffle.partitions": "2"})


def test_every_engine_is_an_engine():
    """Constructing a Spark engine starts no JVM (the session is made on first use), so this
    runs without Java."""
    spark = SparkEngine()
    for eng in (PolarsEngine(), DuckDBEngine(), spark, get_engine("polars"), get_engine("duckdb")):
        assert isinstance(eng, Engine), eng.name
        assert isinstance(eng, sdckit.engines.Engine)
    assert spark._session is None  # no session was started
    assert not isinstance(object(), Engine)


class _Wrapped:
    """An engine of another package: no base class of sdckit, only the protocol's members."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_an_engine_of_another_package_is_taken_by_the_protocol():
    """Measures are written against the protocol: an engine that only has its members runs them."""
    wrapped = _Wrapped(PolarsEngine())
    assert isinstance(wrapped, Engine)
    assert get_engine(wrapped) is wrapped
    d = _testdata()
    ref = sdckit.individual_risk(d, KEYS, weight="sampling_weight", household="ori_hid")
    out = sdckit.individual_risk(d, KEYS, weight="sampling_weight", household="ori_hid", engine=wrapped)
    assert_close(ref.to_dict(), out.to_dict())
    with pytest.raises(sdckit.SdcError, match="engine: got object"):
        get_engine(object())


def test_a_declared_capability_comes_with_its_operations():
    from sdckit.engines.base import StoredRecords

    for eng in (PolarsEngine(), DuckDBEngine(), SparkEngine()):
        assert eng.has(STORED) == isinstance(eng, StoredRecords), eng.name


def test_capabilities_and_the_one_refusal():
    mem, duck, spark = PolarsEngine(), DuckDBEngine(), SparkEngine()
    assert mem.has(RECORDS) and not mem.has(STORED)
    for eng in (duck, spark):
        assert eng.has(STORED) and not eng.has(RECORDS)
        with pytest.raises(sdckit.SdcError) as err:
            eng.require(RECORDS, "pram")
        assert str(err.value) == refusal(eng.name, RECORDS, "pram")
        assert str(err.value).startswith(f"engine: pram needs the records in memory; the {eng.name} engine runs")
        assert "local_suppression" in str(err.value)
    assert mem.require(RECORDS, "pram") is mem
    assert mem.local() is mem
    assert isinstance(duck.local(), PolarsEngine)
    with pytest.raises(sdckit.SdcError, match="engine: x needs an engine that keeps the records"):
        mem.require(STORED, "x")


def test_record_table_operations_are_refused_by_the_capability():
    """An out-of-core engine does not encode its record table nor hand it back as a frame."""
    duck = DuckDBEngine()
    table = duck.table(_testdata())
    calls = [
        lambda: duck.encode(table, ["sex"]),
        lambda: duck.encode_column(table, "sex"),
        lambda: duck.encode_joint([table, table], "sex"),
        lambda: duck.with_missing(table, {}),
        lambda: duck.with_values(table, "income", np.zeros(table.n)),
        lambda: duck.with_codes(table, "sex", np.zeros(table.n, np.int32), None),
        lambda: duck.native_frame(table),
        lambda: table.floats(["income"]),
    ]
    for call in calls:
        with pytest.raises(sdckit.SdcError, match="needs the records in memory; the duckdb engine runs"):
            call()


def test_small_table_operations_match_the_in_memory_engine():
    """The array-level operations of an out-of-core engine are those of the in-memory engine."""
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 4, size=(300, 3)).astype(np.int32)
    weights = rng.uniform(1, 3, 300)
    mem, duck = PolarsEngine(), DuckDBEngine()
    for a, b in zip(mem.patterns(codes, weights), duck.patterns(codes, weights)):
        np.testing.assert_array_equal(a, b)
    ids = rng.integers(0, 10, 50)
    values = rng.normal(size=10)
    np.testing.assert_array_equal(mem.gather(ids, values)[0], duck.gather(ids, values)[0])
    np.testing.assert_array_equal(duck.gather(ids, values)[0], values[ids])
    values = ["a", "b", "c"]
    assert duck.label_values(mem.encode_column(mem.table({"x": values}), "x")[1]) == values


def test_every_engine_is_built_by_name_with_its_settings():
    from sdckit.engines import DEFAULT_ENGINE, ENGINES, engine_settings, make_engine

    assert DEFAULT_ENGINE == ENGINES[0]
    assert get_engine(DEFAULT_ENGINE).has(RECORDS)
    for name in ENGINES:
        eng = make_engine(name)
        assert isinstance(eng, Engine) and eng.name == name
        params = inspect.signature(type(eng)).parameters
        assert set(engine_settings(name)) <= set(params), f"{name}: a setting that its constructor does not take"
    duck = make_engine("duckdb", memory_limit="512MB", threads=1)
    assert (duck.memory_limit, duck.threads) == (512 * 10**6, 1)
    assert make_engine("spark", master="local[1]").master == "local[1]"
    with pytest.raises(sdckit.SdcError, match="master: not a setting of the duckdb engine"):
        make_engine("duckdb", master="local[1]")
    with pytest.raises(sdckit.SdcError, match="engine: got 'sqlite'"):
        make_engine("sqlite")


# ----------------------------------------------------------------------------------------------
# every public measure and method on every engine
# ----------------------------------------------------------------------------------------------
#: every registered measure and protection method (the registry; a test in test_registry checks
#: that it lists every public function of sdckit.risk, sdckit.utility and sdckit.protect)
PUBLIC = sorted(d.name for d in (*registry.measures(), *registry.methods()))

# name -> call(data, extra, engine): ``data`` is sdcMicro's testdata as the engine takes it,
# ``extra`` a second file (protected copy, external file) as the engine takes it; the calls are
# the examples of tests/examples.py
CASES = {name: (lambda d, x, e, name=name: examples.call(name, d, x, engine=e)) for name in examples.EXAMPLES}
#: the second file of a measure that takes two (default: the protected copy)
EXTRA = {"external_risk": _external, "register_risk": _external}
#: out-of-core results that keep counts only (no per-record output; their ``to_frame`` says so)
COUNTS_ONLY = {"external_risk"}


def test_every_public_measure_and_method_has_a_case_and_takes_engine():
    assert set(CASES) == set(PUBLIC), "a public measure or method without a case here (add one to CASES)"
    for name in PUBLIC:
        func = getattr(sdckit, name, None) or getattr(sdckit.protect, name)
        assert "engine" in inspect.signature(func).parameters, f"{name} takes no engine="


def test_the_engines_name_public_measures():
    assert set(OUT_OF_CORE_MEASURES) <= set(PUBLIC)


def _summary(res):
    """What a result says, comparable across engines: its dictionary (the protected data of a
    protection method as a Polars frame beside it)."""
    out = res.to_dict()
    data = getattr(res, "data", None)
    if data is not None:
        out = {"summary": out, "data": _polars(data).to_dicts()}
    return out


def _polars(frame) -> pl.DataFrame:
    """A frame of any kind (a Spark DataFrame, a DuckDB relation, pandas...) as Polars."""
    if hasattr(frame, "toArrow"):
        return pl.from_arrow(frame.toArrow())
    if hasattr(frame, "pl"):
        return frame.pl()
    return pl.DataFrame(frame)


def _records(res) -> dict:
    """The per-record output (``to_frame``) as lists by column."""
    return _polars(res.to_frame()).to_dict(as_series=False)


@pytest.fixture(scope="module")
def memory_results():
    """Every case on the in-memory engine (the oracle), once."""
    d = _testdata()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sdckit.SdcWarning)  # the cases' data, not what is tested here
        for name, call in CASES.items():
            res = call(d, EXTRA.get(name, _noisy)(d), "polars")
            out[name] = (_summary(res), _records(res) if name in OUT_OF_CORE_MEASURES else None)
    return out


def _files(d: pl.DataFrame, x: pl.DataFrame, tmp_path):
    p, q = tmp_path / "data.parquet", tmp_path / "extra.parquet"
    d.write_parquet(p)
    x.write_parquet(q)
    return p, q


@pytest.mark.parametrize("engine_name", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_x_measure(name, engine_name, memory_results, spark_engine, tmp_path):
    """Every measure and method on an out-of-core engine: the in-memory result, or the one
    refusal of the ``records`` capability."""
    eng = DuckDBEngine() if engine_name == "duckdb" else spark_engine
    d = _testdata()
    data, extra = _files(d, EXTRA.get(name, _noisy)(d), tmp_path)
    if name in OUT_OF_CORE_MEASURES:
        summary, records = memory_results[name]
        res = CASES[name](data, extra, eng)
        assert_close(summary, _summary(res))
        if name in COUNTS_ONLY:
            with pytest.raises(sdckit.SdcError, match="keeps counts only"):
                res.to_frame()
        else:
            assert_close(records, _records(res))
    else:
        with pytest.raises(sdckit.SdcError) as err:
            CASES[name](data, extra, eng)
        assert str(err.value).startswith(f"engine: {name} needs the records in memory; the {engine_name} engine runs")
