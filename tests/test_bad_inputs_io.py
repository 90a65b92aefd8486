"""Catalogue of bad and unusual inputs for reading and writing files, the DuckDB engine's memory
limit, weights and the messages of errors about categories.

Every case is judged by properties:

* the input file (its bytes) and the input frame are unchanged;
* either the call ends in an :class:`sdckit.SdcError` whose message holds the fragments written
  down for the case (the parameter, column or file at fault) and none of the data's category
  labels (they are made distinctive here, so that a label in a message is caught);
* or it returns, and the result is checked against the value written down for the case (the
  expected rows of a decoded file, the codes of a written file, read back with pyreadstat);
* a case that must warn gives an :class:`sdckit.SdcWarning` with the fragments written down, and a
  case that must not warn gives none.

The expected outcome of every case is written down, so a case that starts failing, or starts
passing where it must be refused, is caught. Wide files, interrupted writes and leftovers of a
killed write are tested below the catalogue.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit import SdcError, SdcWarning
from sdckit import protect as P
from sdckit.io import atomic_write, read_data, read_metadata, write_data

pyreadstat = pytest.importorskip("pyreadstat")
pd = pytest.importorskip("pandas")

#: distinctive category labels: none may appear in a message
LABELS = ("Zorbland", "Quixhaven", "Vyrmouth", "Plinkett")
TEXT = "région,sexe,âge\nÎle,F,30\nNord,M,41\n"
ROWS = [("Île", "F", 30), ("Nord", "M", 41)]


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------
def _bytes(name: str, data: bytes):
    def build(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(data)
        return path

    return build


def _late_latin1(tmp: Path) -> Path:
    """A latin-1 byte in the middle of a file, beyond the first and last MiB that are probed."""
    path = tmp / "late.csv"
    path.write_bytes(b"a,b\n" + b"x,1\n" * 700_000 + "é,2\n".encode("latin-1") + b"y,1\n" * 700_000)
    return path


def _sav(codes: dict, labels: dict, missing=None):
    def build(tmp: Path) -> Path:
        path = tmp / "in.sav"
        pyreadstat.write_sav(pd.DataFrame(codes), path, variable_value_labels=labels, missing_ranges=missing or {})
        return path

    return build


SHARED = {"a": [1, 2, 2, 3, 2, 1]}
SHARED_LABELS = {"a": {1: "yes", 2: "yes", 3: "no"}}
FRACTION = {"b": [1.0, 1.5, 2.0, 1.5, 1.0, 2.0]}
FRACTION_LABELS = {"b": {1: "one", 1.5: "half", 2: "two"}}
STRING = {"s": ["a", "b", "c", "b", "a", "c"]}
STRING_LABELS = {"s": {"a": "Apple", "b": "Apple", "c": "Cherry"}}
MISSING = {"m": [1, 2, 9, 2, 8, 1]}
MISSING_LABELS = {"m": {1: "x", 2: "x", 8: "dk", 9: "refused"}}


def _round_trip(ext: str):
    """read_data -> write_data(metadata) into ``ext``; returns the written raw codes."""

    def call(path: Path):
        out = path.with_name("out" + ext)
        write_data(read_data(path), out, metadata=read_metadata(path))
        read = pyreadstat.read_dta if ext == ".dta" else pyreadstat.read_sav
        df, meta = read(str(out))
        return {c: [None if v != v else v for v in df[c].tolist()] for c in df.columns}, meta.variable_value_labels

    return call


def _read(**kw):
    return lambda path: read_data(path, **kw)


def _read_lazy(**kw):
    return lambda path: read_data(path, lazy=True, **kw).collect()


def _rows(expected):
    def check(out):
        assert out.rows() == expected
        assert out.columns == ["région", "sexe", "âge"]

    return check


def _codes(expected: dict, labels: dict):
    def check(out):
        codes, labs = out
        assert codes == expected
        as_float = {c: {(k if isinstance(k, str) else float(k)): v for k, v in d.items()} for c, d in labs.items()}
        assert as_float == {
            c: {(k if isinstance(k, str) else float(k)): v for k, v in d.items()} for c, d in labels.items()
        }

    return check


# frames with distinctive labels (the message cases)
def _frame():
    n = 12
    return pl.DataFrame(
        {
            "k": [LABELS[i % 3] for i in range(n)],
            "o": pl.Series([LABELS[i % 2] for i in range(n)], dtype=pl.Enum([LABELS[0], LABELS[1]])),
            "x": np.arange(n, dtype=float) * 2.5 + 1,
            "y": (np.arange(n, dtype=float) % 4) * 1.25,
            "w": np.full(n, 1.0),
            "w2": np.r_[np.full(n - 1, 1.0), 2.0],
        }
    )


def _lacking_category():
    """The protected file has a category (LABELS[3]) that the original lacks."""
    o = _frame()
    return o, o.with_columns(pl.Series("k", [LABELS[3]] + o["k"].to_list()[1:]))


def _duckdb_frequencies(limit):
    def call(_):
        engine = sdckit.engines.DuckDBEngine(memory_limit=limit, threads=2)
        rng = np.random.default_rng(5)
        n = 300_000
        data = pl.DataFrame({"a": rng.integers(0, 1000, n), "b": rng.integers(0, 1000, n), "c": rng.integers(0, 50, n)})
        return sdckit.frequencies(data, ["a", "b", "c"], engine=engine)

    return call


def _engine(limit):
    return lambda _: sdckit.engines.DuckDBEngine(memory_limit=limit)


def _gower_y_alone(out: pl.DataFrame) -> bool:
    alone = P.microaggregation_gower(_frame(), ["y"]).data
    return out["y"].equals(alone["y"]) and not out["x"].equals(_frame()["x"])


# ----------------------------------------------------------------------------------------------
# the catalogue: (build input file or None, call, outcome)
#   outcome: ("ok", check), ("error", [fragments]), ("warn", [fragments], check or None)
# ----------------------------------------------------------------------------------------------
CASES = [
    # -- encodings ---------------------------------------------------------------------------
    pytest.param(_bytes("u16le.csv", TEXT.encode("utf-16")), _read(), ("ok", _rows(ROWS)), id="utf16-le-bom"),
    pytest.param(
        _bytes("u16be.csv", b"\xfe\xff" + TEXT.encode("utf-16-be")), _read(), ("ok", _rows(ROWS)), id="utf16-be-bom"
    ),
    pytest.param(_bytes("u32le.csv", TEXT.encode("utf-32")), _read(), ("ok", _rows(ROWS)), id="utf32-le-bom"),
    pytest.param(
        _bytes("u32be.csv", b"\x00\x00\xfe\xff" + TEXT.encode("utf-32-be")),
        _read(),
        ("ok", _rows(ROWS)),
        id="utf32-be-bom",
    ),
    pytest.param(_bytes("u16l.csv", TEXT.encode("utf-16")), _read_lazy(), ("ok", _rows(ROWS)), id="utf16-lazy"),
    pytest.param(
        _bytes("u16x.csv", TEXT.encode("utf-16")),
        _read(encoding="utf-8"),
        ("error", ["encoding", "u16x.csv", "UTF-16 (little-endian) byte-order mark", "'utf-8'"]),
        id="utf16-declared-utf8",
    ),
    pytest.param(
        _bytes("u16e.csv", TEXT.encode("utf-16")), _read(encoding="utf-16"), ("ok", _rows(ROWS)), id="utf16-declared"
    ),
    pytest.param(
        _bytes("l1.csv", TEXT.encode("latin-1")),
        _read(),
        ("error", ["path", "l1.csv", "not UTF-8", "encoding='latin-1'"]),
        id="latin1-no-encoding",
    ),
    pytest.param(
        _bytes("l1z.csv", TEXT.encode("latin-1")),
        _read_lazy(),
        ("error", ["path", "l1z.csv", "not UTF-8"]),
        id="latin1-lazy",
    ),
    pytest.param(
        _bytes("l1e.csv", TEXT.encode("latin-1")), _read(encoding="latin-1"), ("ok", _rows(ROWS)), id="latin1-declared"
    ),
    pytest.param(_late_latin1, _read(), ("error", ["path", "late.csv", "not UTF-8"]), id="latin1-byte-mid-file"),
    pytest.param(
        # 2.4 MB of two-byte characters: the probed ends cut characters, which is no error
        _bytes("cut.csv", b"a,b\n" + "é,ü\n".encode() * 400_000),
        _read(),
        ("ok", lambda out: out.shape == (400_000, 2) and out.row(-1) == ("é", "ü")),
        id="utf8-probe-cuts-characters",
    ),
    pytest.param(
        _bytes("tail.csv", b"a,b\n" + "é,ü\n".encode() * 300_000 + "ä,1\n".encode("latin-1") + b"x,y\n" * 10),
        _read_lazy(),
        ("error", ["path", "tail.csv", "not UTF-8"]),
        id="latin1-byte-near-end-lazy",
    ),
    pytest.param(
        _bytes("k.csv", TEXT.encode()),
        _read(encoding="klingon-8"),
        ("error", ["encoding", "unknown encoding"]),
        id="unknown-encoding",
    ),
    pytest.param(_bytes("bom8.csv", b"\xef\xbb\xbf" + TEXT.encode()), _read(), ("ok", _rows(ROWS)), id="utf8-bom"),
    pytest.param(
        _bytes("u16d.csv", TEXT.encode("utf-16")),
        lambda path: sdckit.frequencies(path, ["sexe"], engine="duckdb"),
        ("error", ["data", "u16d.csv", "UTF-16 (little-endian)", "engine='polars'"]),
        id="utf16-duckdb",
    ),
    pytest.param(
        _bytes("l1d.csv", TEXT.encode("latin-1")),
        lambda path: sdckit.frequencies(path, ["sexe"], engine="duckdb"),
        ("error", ["l1d.csv", "not UTF-8"]),
        id="latin1-duckdb",
    ),
    # -- empty and broken files --------------------------------------------------------------
    pytest.param(_bytes("empty.csv", b""), _read(), ("error", ["path", "empty.csv", "CSV"]), id="empty-csv"),
    pytest.param(
        _bytes("hdr.csv", b"a,b\n"), _read(), ("ok", lambda out: out.shape == (0, 2) or pytest.fail()), id="header-only"
    ),
    pytest.param(_bytes("empty.sav", b""), _read(), ("error", ["path", "empty.sav", "SPSS"]), id="empty-sav"),
    pytest.param(
        _bytes("empty.parquet", b""),
        _read_lazy(),
        ("error", ["path", "empty.parquet", "Parquet"]),
        id="empty-parquet-lazy",
    ),
    pytest.param(
        _bytes("dup.csv", b"a,b,a\n1,2,3\n"), _read(), ("error", ["path", "a", "more than once"]), id="duplicate-names"
    ),
    # -- labelled files ----------------------------------------------------------------------
    *[
        pytest.param(_sav(codes, labels, missing), _round_trip(ext), outcome, id=name)
        for name, codes, labels, missing, ext, outcome in [
            (
                "shared-label-sav",
                SHARED,
                SHARED_LABELS,
                None,
                ".sav",
                ("ok", _codes({"a": [1.0, 2.0, 2.0, 3.0, 2.0, 1.0]}, SHARED_LABELS)),
            ),
            (
                "shared-label-sav-to-dta",
                SHARED,
                SHARED_LABELS,
                None,
                ".dta",
                ("ok", _codes({"a": [1, 2, 2, 3, 2, 1]}, SHARED_LABELS)),
            ),
            (
                "fractional-codes-sav",
                FRACTION,
                FRACTION_LABELS,
                None,
                ".sav",
                ("ok", _codes(FRACTION, FRACTION_LABELS)),
            ),
            (
                "fractional-codes-dta",
                FRACTION,
                FRACTION_LABELS,
                None,
                ".dta",
                ("error", ["data", "column 'b'", "not integers", "Stata", ".sav"]),
            ),
            ("shared-label-text-codes-sav", STRING, STRING_LABELS, None, ".sav", ("ok", _codes(STRING, STRING_LABELS))),
            (
                "text-codes-dta",
                STRING,
                STRING_LABELS,
                None,
                ".dta",
                ("error", ["data", "column 's'", "not integers", "Stata"]),
            ),
            (
                "shared-label-and-missing-sav",
                MISSING,
                MISSING_LABELS,
                {"m": [8, 9]},
                ".sav",
                ("ok", _codes({"m": [1.0, 2.0, None, 2.0, None, 1.0]}, MISSING_LABELS)),
            ),
        ]
    ],
    # -- DuckDB memory limit -----------------------------------------------------------------
    *[
        pytest.param(None, _engine(limit), ("error", ["memory_limit", *fragments]), id=f"memory-limit-{name}")
        for name, limit, fragments in [
            ("text", "abc", ["cannot read", "'4GB'"]),
            ("negative", "-5MB", ["cannot read"]),
            ("unit", "5XB", ["cannot read"]),
            ("tiny", "1KB", ["below 1 MiB"]),
            ("zero", 0, ["positive"]),
            ("inf", float("inf"), ["positive"]),
            ("bool", True, ["expected a size"]),
        ]
    ],
    pytest.param(
        None,
        _duckdb_frequencies("2MB"),
        ("error", ["memory_limit", "ran out of memory", "2,000,000 bytes", "larger limit"]),
        id="duckdb-out-of-memory",
    ),
    # -- weights -----------------------------------------------------------------------------
    pytest.param(
        None,
        lambda _: P.microaggregation_gower(_frame(), ["x", "y"], variable_weights=0),
        ("error", ["variable_weights", "2 distance variables", "weight 0"]),
        id="gower-all-weights-zero",
    ),
    pytest.param(
        None,
        lambda _: P.microaggregation_gower(_frame(), ["x", "y"], variable_weights={"x": 0, "y": 0}),
        ("error", ["variable_weights", "weight 0"]),
        id="gower-all-weights-zero-dict",
    ),
    pytest.param(
        None,
        lambda _: P.microaggregation_gower(_frame(), ["x", "y"], variable_weights=[0, 1]),
        # weight 0 on x: the neighbours are those of y alone, and x is still aggregated
        ("ok", lambda r: _gower_y_alone(r.data)),
        id="gower-some-weights-zero",
    ),
    pytest.param(
        None,
        lambda _: sdckit.frequencies(_frame(), ["k"], weight="w"),
        (
            "warn",
            ["weight", "every weight in column w is 1", "census", "F_k = f_k"],
            lambda r: list(r.Fk) == list(r.fk),
        ),
        id="weights-all-one-frequencies",
    ),
    pytest.param(
        None,
        lambda _: sdckit.individual_risk(_frame(), ["k"], weight="w"),
        ("warn", ["every weight in column w is 1", "census"], None),
        id="weights-all-one-individual-risk",
    ),
    pytest.param(
        None,
        lambda _: sdckit.frequencies(_frame(), ["k"], weight="w", engine="duckdb"),
        ("warn", ["every weight in column w is 1", "census"], None),
        id="weights-all-one-duckdb",
    ),
    pytest.param(
        None,
        lambda _: sdckit.frequencies(_frame(), ["k"], weight="w2"),
        ("ok", lambda r: not np.array_equal(r.Fk, r.fk)),
        id="weights-nearly-all-one-no-note",
    ),
    pytest.param(
        None,
        lambda _: sdckit.t_closeness(_frame(), ["k"], "x", weight="w"),
        ("ok", lambda r: r is not None),  # weights used relatively: equal weights, no census note
        id="weights-all-one-t-closeness-no-note",
    ),
    # -- messages never list category labels -------------------------------------------------
    pytest.param(
        None,
        lambda _: P.global_recode(_frame(), "k", mapping={LABELS[0]: "A"}),
        ("error", ["mapping", "2 categor(y/ies) of k not covered"]),
        id="recode-not-covered",
    ),
    pytest.param(
        None,
        lambda _: P.global_recode(_frame(), "k", mapping={LABELS[0]: None, LABELS[1]: "A", LABELS[2]: "A"}),
        ("error", ["mapping", "new category is missing"]),
        id="recode-new-missing",
    ),
    pytest.param(
        None,
        lambda _: P.pram(_frame(), "k", matrix={"k": {LABELS[0]: {LABELS[0]: 1.0}, LABELS[1]: {LABELS[1]: 1.0}}}),
        ("error", ["matrix['k']", "1 categor(y/ies) of the data are not in the matrix"]),
        id="pram-matrix-uncovered",
    ),
    pytest.param(
        None,
        lambda _: P.pram(
            _frame(),
            "k",
            matrix={"k": {LABELS[0]: {LABELS[0]: 0.5}, LABELS[1]: {LABELS[1]: 1.0}, LABELS[2]: {LABELS[2]: 1.0}}},
        ),
        ("error", ["1 row(s) do not sum to 1"]),
        id="pram-row-sum",
    ),
    pytest.param(
        None,
        lambda _: P.pram(
            _frame(),
            "k",
            matrix={
                "k": {
                    LABELS[0]: {LABELS[0]: 1.0},
                    LABELS[1]: {LABELS[1]: 1.0},
                    LABELS[2]: {LABELS[2]: 1.0},
                    LABELS[3]: {LABELS[3]: 1.0},
                }
            },
        ),
        ("error", ["matrix['k']", "1 categor(y/ies) are not categories of k"]),
        id="pram-matrix-unknown",
    ),
    pytest.param(
        None,
        lambda _: sdckit.information_loss(*_lacking_category(), ["k"]),
        ("error", ["protected", "variable k has 1 categor(y/ies) that the original lacks"]),
        id="information-loss-new-category",
    ),
    pytest.param(
        None,
        lambda _: sdckit.t_closeness(_frame(), ["o"], "k", ordered={"k": [LABELS[0], LABELS[1]]}),
        ("error", ["ordered", "column k has 1 value(s) not in the declared categories"]),
        id="t-closeness-order-unknown",
    ),
    pytest.param(
        None,
        lambda _: sdckit.t_closeness(_frame(), ["o"], "k", ordered={"k": [LABELS[0], LABELS[0], LABELS[1], LABELS[2]]}),
        ("error", ["ordered", "1 categor(y/ies) of k listed more than once"]),
        id="t-closeness-order-repeated",
    ),
]


def _digest(path: Path | None) -> str | None:
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()


def _no_label(message: str) -> None:
    for label in LABELS + ("Apple", "Cherry", "refused", "half"):
        assert label not in message, f"category label {label!r} in the message {message!r}"


@pytest.mark.parametrize(("build", "call", "outcome"), CASES)
def test_bad_input(tmp_path, build, call, outcome):
    path = build(tmp_path) if build is not None else None
    before, frame = _digest(path), _frame()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if outcome[0] == "error":
            with pytest.raises(SdcError) as info:
                call(path)
            message = str(info.value)
            for fragment in outcome[1]:
                assert fragment in message, f"{fragment!r} not in {message!r}"
            _no_label(message)
            result = None
        else:
            result = call(path)
    notes = [str(w.message) for w in caught if issubclass(w.category, SdcWarning)]
    census = [m for m in notes if "every weight in column" in m]
    if outcome[0] == "warn":
        assert len(census) == 1, notes
        for fragment in outcome[1]:
            assert fragment in census[0]
        if outcome[2] is not None:
            assert outcome[2](result)
    elif outcome[0] == "ok":
        assert not census, census
        check = outcome[1](result)
        assert check is None or check
    for message in notes:
        _no_label(message)
    assert _digest(path) == before  # the input file is unchanged
    assert frame.equals(_frame())


# ----------------------------------------------------------------------------------------------
# wide files: reading is linear in the number of columns
# ----------------------------------------------------------------------------------------------
def _wide(path: Path, n_cols: int, n_rows: int = 5) -> Path:
    """Column j holds (i * j) % 7 in row i; column 7 has a leading zero in its last row."""
    with open(path, "w") as fh:
        fh.write(",".join(f"c{j}" for j in range(n_cols)) + "\n")
        for i in range(n_rows):
            row = [str((i * j) % 7) for j in range(n_cols)]
            if i == n_rows - 1:
                row[7] = "0" + row[7]
            fh.write(",".join(row) + "\n")
    return path


def _best(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def test_reading_20000_columns_is_within_20x_polars(tmp_path):
    """16,000 columns took 9.8 s against Polars' 0.13 s (quadratic); now a small multiple of
    Polars' own time on the same file (best of three of each, side by side)."""
    path = _wide(tmp_path / "wide.csv", 20_000)
    df = read_data(path)
    assert df.shape == (5, 20_000)
    assert df.row(3)[:4] == (0, 3, 6, 2)
    # a code with a leading zero keeps its column as text; the others are numbers
    assert df.schema["c7"] == pl.String and df["c7"].to_list()[-1] == "0" + str(4 * 7 % 7)
    assert all(t == pl.Int64 for c, t in df.schema.items() if c != "c7")
    ours = _best(lambda: read_data(path))
    polars_alone = _best(lambda: pl.read_csv(path))
    assert ours <= 20 * polars_alone + 0.05, (ours, polars_alone)


def test_reading_100000_columns_finishes(tmp_path):
    path = _wide(tmp_path / "wider.csv", 100_000, n_rows=2)
    df = read_data(path)
    assert df.shape == (2, 100_000)
    assert df["c99999"].to_list() == [0, 99_999 % 7]


def test_duplicate_name_found_in_a_wide_header(tmp_path):
    path = tmp_path / "dup.csv"
    names = [f"c{j}" for j in range(30_000)] + ["c17"]
    path.write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n")
    with pytest.raises(SdcError, match="column name.s. c17 appear more than once"):
        read_data(path)


# ----------------------------------------------------------------------------------------------
# temporary files of atomic writes
# ----------------------------------------------------------------------------------------------
def _parts(folder: Path, name: str) -> list[str]:
    return sorted(
        p.name for p in folder.iterdir() if p.name.startswith(f".{name}.sdckit-") and p.name.endswith(".part")
    )


def test_failed_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.csv"

    def write(tmp):
        Path(tmp).write_text("half a file")
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, write)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.csv"

    def write(tmp):
        Path(tmp).write_text("half a file")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, write)
    assert list(tmp_path.iterdir()) == []


_KILLED_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from sdckit.io import atomic_write

    def write(tmp):
        Path(tmp).write_text("protected records, half written")
        print("writing", flush=True)
        time.sleep(3600)

    atomic_write(Path(sys.argv[1]), write)
    """
)
_NEXT_WRITER = textwrap.dedent(
    """
    import sys
    import polars as pl
    from sdckit.io import write_data

    write_data(pl.DataFrame({"a": [1, 2]}), sys.argv[1], overwrite=True)
    """
)


def test_leftover_of_a_killed_write_is_removed_at_the_next_write(tmp_path):
    target = tmp_path / "released.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target)], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline().strip() == b"writing"  # waits for the write to start
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = _parts(tmp_path, target.name)
    assert len(left) == 1 and not target.exists()
    # the next write comes later: date the leftover a minute back rather than wait (a write
    # younger than STALE_MARGIN before the next process may still be running, and is kept)
    stamp = time.time() - 60
    os.utime(tmp_path / left[0], (stamp, stamp))
    # files that are not leftovers of this target stay: another target's, another pattern
    other = tmp_path / f".other.csv.sdckit-{left[0][-13:-5]}.part"
    other.write_text("x")
    near = tmp_path / f".{target.name}.sdckit-toolongname.part"
    near.write_text("x")
    subprocess.run([sys.executable, "-c", _NEXT_WRITER, str(target)], check=True, env=env)
    assert _parts(tmp_path, target.name) == [near.name]
    assert other.exists() and near.exists()
    assert pl.read_csv(target)["a"].to_list() == [1, 2]


def test_a_younger_temporary_file_is_not_removed(tmp_path):
    """A temporary file newer than the writing process may be another write in progress."""
    target = tmp_path / "released.csv"
    young = tmp_path / f".{target.name}.sdckit-abcd1234.part"
    young.write_text("another process writing")
    old = tmp_path / f".{target.name}.sdckit-efgh5678.part"
    old.write_text("left by a killed write")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    write_data(pl.DataFrame({"a": [1]}), target)
    assert young.exists() and not old.exists()


# ----------------------------------------------------------------------------------------------
# no message lists category labels: a scan of the source
# ----------------------------------------------------------------------------------------------
#: formatted collections that are not data labels: column names, the caller's memory limit
_NOT_LABELS = {
    ("engines/_polars_frame.py", "' and '.join(dict.fromkeys((repr(v) for v in labs)))"),  # column names
    ("engines/_relational.py", "str(value)"),  # the memory_limit the caller gave
    ("_validation.py", "_show(value)"),  # a parameter's value as the caller gave it
}
#: calls that format a number or a type, never a label
_COUNTS = ("len", "int", "float", "type", "sum", "round", "min", "max", "abs", "count_nonzero", "dtype_name")
_LABEL_LIKE = r"(value|label|labs|categor|cats|levels|codes|uncovered|conflict|impossible)"


def _formatted_collections(tree):
    """(line, expression) of each call (other than a count) formatted into an f-string of an
    error, a warning or a problem list, whose names look like labels or values."""
    import ast
    import re

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            if (fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")) not in (
                "warn",
                "SdcError",
                "MissingColumnError",
                "append",
            ):
                continue
        elif not isinstance(node, ast.Raise):
            continue
        for fv in (v for js in ast.walk(node) if isinstance(js, ast.JoinedStr) for v in js.values):
            call = getattr(fv, "value", None)
            if not isinstance(call, ast.Call):
                continue
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name in _COUNTS:
                continue
            used = [getattr(n, "id", None) or getattr(n, "attr", "") for n in ast.walk(call)]
            if any(re.search(_LABEL_LIKE, u or "", re.I) for u in used):
                yield fv.lineno, ast.unparse(call)


def test_no_message_formats_a_list_of_labels():
    """Messages say how many categories, not which: a label held by one record identifies it."""
    import ast

    root = Path(sdckit.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for line, expr in _formatted_collections(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, expr) not in _NOT_LABELS:
                found.append(f"{rel}:{line}: {expr}")
    assert not found, "messages that format labels or values:\n" + "\n".join(sorted(set(found)))
