"""Seeded synthetic census-like microdata written straight to Parquet by DuckDB (for ``scale.py``).

``write_synthetic(path, n, seed)`` writes ``n`` records without holding them in Python memory:
one ``COPY (SELECT ... FROM range(n)) TO path (FORMAT PARQUET)`` in DuckDB. ``cached_synthetic``
keeps the files in a folder and reuses one only when its sidecar JSON records the same
``(n, seed, generator version)``.

Columns (one row per person; households are runs of consecutive rows):

==============  =========================================================================
``hid``         household id (int64); households of 1-6 members (about 2.3 on average,
                so about n / 2.3 households), built in blocks of 24 records
``region``      9 regions, skewed (22 % ... 4 %); the same for every household member
``sex``         2 (49 / 51 %)
``age``         single years 0-99 (flat from 15 to 85, ramps at both ends)
``marital``     5, depends on age (children are single)
``citizenship`` 6, skewed (88 % nationals); the same for every household member
``education``   8 levels, depends on age; 3 % missing (NULL)
``activity``    10 statuses, depends on age; 2 % missing (NULL)
``w``           sampling weight 51-260, by region times a household factor 0.85-1.30
                (constant within a household)
==============  =========================================================================

Reproducibility: every random number is ``u(i, stream)``, a pure integer hash of the row (or
household or block) number and of a per-column stream key derived from the seed -- four rounds
of ``h -> ((h xor (h >> 13)) * 1103515245 + 12345) mod (2**31 - 1)`` in 64-bit integer SQL
arithmetic, divided by ``2**31 - 1``. There is no random state, so the values do not depend on
the DuckDB version, the thread count or the order in which threads run, and DuckDB keeps the
insertion order when it writes. The same ``(n, seed)`` therefore gives the same records in the
same order (the Parquet bytes can differ between DuckDB versions through the writer's metadata).
``python benchmarks/_scale_data.py --check`` compares DuckDB's first rows with a pure-Python
evaluation of the same formulas.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

__all__ = ["KEYS", "GENERATOR_VERSION", "cached_synthetic", "default_data_dir", "write_synthetic"]

GENERATOR_VERSION = 1
KEYS = ["region", "sex", "age", "marital", "citizenship", "education", "activity"]

P = 2**31 - 1  # Mersenne prime: every product below stays under 2**62
BLOCK = 24  # households are laid out in blocks of BLOCK consecutive records
N_PATTERNS = 256  # household-size patterns per block, one picked per block
HOUSEHOLD_SIZES = (0.27, 0.30, 0.18, 0.15, 0.06, 0.04)  # P(size = 1..6), mean about 2.5

# streams (one per random quantity); the key of a stream also depends on the seed
S_PATTERN, S_REGION, S_CIT, S_W, S_SEX, S_AGE1, S_AGE2, S_MAR, S_EDU, S_ACT, S_EDU_NA, S_ACT_NA, S_HH = range(1, 14)

REGION = (0.22, 0.17, 0.14, 0.12, 0.10, 0.08, 0.07, 0.06, 0.04)
REGION_WEIGHT = (60, 80, 100, 120, 140, 160, 180, 200, 150)  # base weight by region
CITIZENSHIP = (0.88, 0.05, 0.03, 0.02, 0.015, 0.005)
MARITAL_ADULT = (0.40, 0.47, 0.10, 0.02, 0.01)  # single, married, divorced, widowed, partnership
MARITAL_OLD = (0.05, 0.55, 0.07, 0.32, 0.01)  # 70 and over
EDUCATION_ADULT = (0.02, 0.08, 0.20, 0.35, 0.08, 0.10, 0.13, 0.04)  # ISCED-like levels 1..8
ACTIVITY_ADULT = (0.60, 0.09, 0.07, 0.07, 0.04, 0.01, 0.04, 0.03, 0.05)  # 1..9; 10 = child
EDU_MISSING, ACT_MISSING = 0.03, 0.02


# --- the hash, in Python (for the stream keys, the household patterns and --check) ----------


def _rnd(h: int) -> int:
    return ((h ^ (h >> 13)) * 1103515245 + 12345) % P


def _stream_key(stream: int, seed: int) -> int:
    return _rnd(_rnd(_rnd((stream * 1000003 + seed) % P)))


def _u(i: int, key: int) -> float:
    """The uniform in [0, 1) of row ``i`` in the stream with key ``key`` (same as the SQL)."""
    return _rnd(_rnd(_rnd(_rnd(i % P) ^ key))) / P


def _patterns(seed: int) -> list[int]:
    """``N_PATTERNS`` ways to cut a block of ``BLOCK`` records into households, flattened:
    entry ``p * BLOCK + o`` is the household number (0..BLOCK-1) of offset ``o`` in pattern ``p``."""
    key = _stream_key(S_HH, seed)
    cum = [sum(HOUSEHOLD_SIZES[: j + 1]) for j in range(len(HOUSEHOLD_SIZES))]
    flat, t = [], 0
    for _ in range(N_PATTERNS):
        members: list[int] = []
        hh = 0
        while len(members) < BLOCK:
            u = _u(t, key)
            t += 1
            size = next((j + 1 for j, c in enumerate(cum) if u < c), len(cum))
            members += [hh] * min(size, BLOCK - len(members))
            hh += 1
        flat += members
    return flat


# --- the SQL -------------------------------------------------------------------------------


def _pick(u: str, probs) -> str:
    """``CASE`` mapping the uniform column ``u`` to categories 1..len(probs) with ``probs``."""
    parts, c = [], 0.0
    for j, p in enumerate(probs[:-1]):
        c += p
        parts.append(f"WHEN {u} < {c!r} THEN {j + 1}")
    return f"(CASE {' '.join(parts)} ELSE {len(probs)} END)"


def _sql(n: int, seed: int) -> str:
    """The ``SELECT`` of the ``n`` records (the ``rnd`` macro must exist on the connection)."""
    k = {s: _stream_key(s, seed) for s in range(1, 14)}

    def u(col: str, s: int) -> str:
        return f"(rnd(rnd(rnd(xor(rnd({col}), {k[s]})))) / {P}.0)"

    pattern = f"LEAST(FLOOR({u('blk', S_PATTERN)} * {N_PATTERNS}), {N_PATTERNS - 1})::BIGINT"
    weights = "[" + ", ".join(map(str, REGION_WEIGHT)) + "]"
    return f"""
WITH r AS (
    SELECT range AS i, range // {BLOCK} AS blk FROM range({n})
), h AS (
    SELECT i, blk * {BLOCK} + ({_patterns(seed)}::UTINYINT[])[{pattern} * {BLOCK} + i % {BLOCK} + 1] AS hid
    FROM r
), x AS (
    SELECT i, hid,
        {u("hid", S_REGION)} AS u_region, {u("hid", S_CIT)} AS u_cit, {u("hid", S_W)} AS u_w,
        {u("i", S_SEX)} AS u_sex, {u("i", S_AGE1)} AS u_age1, {u("i", S_AGE2)} AS u_age2,
        {u("i", S_MAR)} AS u_mar, {u("i", S_EDU)} AS u_edu, {u("i", S_ACT)} AS u_act,
        {u("i", S_EDU_NA)} AS u_edu_na, {u("i", S_ACT_NA)} AS u_act_na
    FROM h
), y AS (
    SELECT *, {_pick("u_region", REGION)} AS region,
        LEAST(FLOOR(u_age1 * 85 + u_age2 * 15), 99)::UTINYINT AS age
    FROM x
)
SELECT
    hid,
    region::UTINYINT AS region,
    (CASE WHEN u_sex < 0.49 THEN 1 ELSE 2 END)::UTINYINT AS sex,
    age,
    (CASE WHEN age < 16 THEN 1 WHEN age >= 70 THEN {_pick("u_mar", MARITAL_OLD)}
          ELSE {_pick("u_mar", MARITAL_ADULT)} END)::UTINYINT AS marital,
    {_pick("u_cit", CITIZENSHIP)}::UTINYINT AS citizenship,
    (CASE WHEN u_edu_na < {EDU_MISSING} THEN NULL WHEN age < 6 THEN 1
          WHEN age < 16 THEN (CASE WHEN u_edu < 0.5 THEN 2 ELSE 3 END)
          ELSE {_pick("u_edu", EDUCATION_ADULT)} END)::UTINYINT AS education,
    (CASE WHEN u_act_na < {ACT_MISSING} THEN NULL WHEN age < 15 THEN 10
          WHEN age < 25 AND u_act < 0.5 THEN 8 WHEN age >= 65 AND u_act < 0.85 THEN 9
          ELSE {_pick("u_act", ACTIVITY_ADULT)} END)::UTINYINT AS activity,
    ({weights}[region] * (0.85 + 0.45 * u_w))::DOUBLE AS w
FROM y
"""


def _connect(threads: int | None, memory_limit: str):
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("SET preserve_insertion_order = true")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.execute(f"CREATE MACRO rnd(h) AS ((xor(h, h >> 13) * 1103515245 + 12345) % {P})")
    return con


def write_synthetic(path, n: int, seed: int, *, threads: int | None = None, memory_limit: str = "4GB") -> Path:
    """Write ``n`` seeded synthetic records to the Parquet file ``path`` (atomically).

    The records are generated and written by DuckDB (``COPY ... TO ... (FORMAT PARQUET)``), never
    held in Python memory. The same ``(n, seed)`` gives the same records in the same order (see
    the module docstring). Returns the path.
    """
    n, seed = int(n), int(seed)
    if not 0 < n < P:
        raise ValueError(f"n: got {n}; expected 1 .. {P - 1}")
    if not 0 <= seed < P:
        raise ValueError(f"seed: got {seed}; expected 0 .. {P - 1}")
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    con = _connect(threads, memory_limit)
    try:
        con.execute(f"COPY ({_sql(n, seed)}) TO '{tmp.as_posix()}' (FORMAT PARQUET, COMPRESSION ZSTD)")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    os.replace(tmp, path)
    return path


def default_data_dir() -> Path:
    """``<system temp dir>/scale-data``."""
    return Path(tempfile.gettempdir()) / "scale-data"


def cached_synthetic(data_dir, n: int, seed: int, **kwargs) -> tuple[Path, float | None]:
    """The Parquet file of ``(n, seed)`` under ``data_dir``, written when missing or stale.

    A file is reused only when its sidecar ``.json`` records the same ``n``, ``seed``, generator
    version and file size. Returns the path and the seconds spent writing it (``None``: reused).
    """
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / f"synthetic_n{n}_seed{seed}.parquet"
    meta_path = path.with_suffix(".json")
    want = {"n": int(n), "seed": int(seed), "generator": GENERATOR_VERSION}
    try:
        meta = json.loads(meta_path.read_text())
        if {k: meta.get(k) for k in want} == want and meta.get("bytes") == path.stat().st_size:
            return path, None
    except (OSError, ValueError):
        pass
    meta_path.unlink(missing_ok=True)
    t = time.perf_counter()
    write_synthetic(path, n, seed, **kwargs)
    secs = time.perf_counter() - t
    tmp = meta_path.with_name(f".{meta_path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({**want, "bytes": path.stat().st_size, "keys": KEYS, "seconds": round(secs, 1)}))
    os.replace(tmp, meta_path)
    return path, secs


def _check(n: int = 2000, seed: int = 7) -> bool:
    """DuckDB's first ``n`` rows against a pure-Python evaluation of the same formulas."""
    con = _connect(None, "1GB")
    rows = con.execute(f"SELECT hid, region, w FROM ({_sql(n, seed)})").fetchall()
    con.close()
    pat = _patterns(seed)
    ok = True
    for i, (hid, region, w) in enumerate(rows):
        blk = i // BLOCK
        p = min(int(_u(blk, _stream_key(S_PATTERN, seed)) * N_PATTERNS), N_PATTERNS - 1)
        hid_py = blk * BLOCK + pat[p * BLOCK + i % BLOCK]
        ur = _u(hid_py, _stream_key(S_REGION, seed))
        c, reg_py = 0.0, len(REGION)
        for j, q in enumerate(REGION[:-1]):
            c += q
            if ur < c:
                reg_py = j + 1
                break
        w_py = REGION_WEIGHT[reg_py - 1] * (0.85 + 0.45 * _u(hid_py, _stream_key(S_W, seed)))
        ok &= hid == hid_py and region == reg_py and abs(w - w_py) <= 1e-9 * w_py
    return ok


def _check_file(n: int = 300_000, seed: int = 7) -> bool:
    """Two files of the same ``(n, seed)`` written with 1 and 2 threads hold the same rows in the
    same order, and that order is the generator's (households consecutive, ``hid`` sorted)."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.parquet", Path(tmp) / "b.parquet"
        write_synthetic(a, n, seed, threads=1)
        write_synthetic(b, n, seed, threads=2)
        con = _connect(None, "1GB")
        cols = ["hid", *KEYS, "w"]
        differ = " OR ".join(f"a.{c} IS DISTINCT FROM b.{c}" for c in cols)
        same = con.execute(
            f"SELECT count(*) FROM read_parquet('{a}') a POSITIONAL JOIN read_parquet('{b}') b WHERE {differ}"
        ).fetchone()[0]
        unsorted = con.execute(
            f"SELECT count(*) FROM (SELECT hid - lag(hid) OVER () AS d FROM read_parquet('{a}')) WHERE d < 0"
        ).fetchone()[0]
        rows = con.execute(f"SELECT count(*) FROM read_parquet('{b}')").fetchone()[0]
        con.close()
    return same == 0 and unsorted == 0 and rows == n


if __name__ == "__main__":
    import sys

    if "--check" in sys.argv:
        print("DuckDB rows equal the pure-Python formulas:", _check())
        print("files with 1 and 2 threads equal, in generator order:", _check_file())
