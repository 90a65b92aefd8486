"""Scale benchmark: frequencies, k-anonymity and household risk on 10^7-10^8 records from Parquet.

Runs the public API on a Parquet file path with the out-of-core engines -- DuckDB under a memory
limit (default 4 GB) and Spark in local mode -- and, beside them, the in-memory Polars engine:

* ``sdckit.frequencies(path, keys, weight="w", engine=E)``;
* ``sdckit.k_anonymity(freq, k=(2, 3, 5))`` on that ``FrequencyResult``;
* ``sdckit.individual_risk(path, keys, weight="w", household="hid", engine=E)``.

Engines: ``DuckDBEngine(memory_limit="4GB", temp_directory=<data dir>/...)``,
``SparkEngine(master="local[2]", config={"spark.driver.memory": "4g"})`` and ``"polars"`` (which
reads the whole file into memory; not run above 3 * 10^7 records).

Data: seeded synthetic census-like records written by DuckDB straight to Parquet
(:mod:`_scale_data`: household id ``hid`` with households of 1-6 members, 7 keys region (9), sex
(2), age (0-99), marital status (5), citizenship (6, skewed), education (8, 3 % missing) and
activity (10, 2 % missing), weight ``w`` by region; region, citizenship and weight are shared in
a household). The files are cached under ``--data-dir`` and reused when their recorded
``(n, seed)`` match; writing them is not timed.

Each (engine, size) case runs in a separate Python process, so its peak memory is its own: the
parent polls the resident set of the child and all its descendants (for Spark the JVM) every
0.2 s and reports the peak of the sum (also at least each process's own high-water mark,
``VmHWM``). The table gives engine, records, memory limit, seconds per step, the total of the
three steps, the peak resident set in GB, and the headline results: key patterns, sample uniques,
records violating 3-anonymity, global risk and household global risk. Engines run at the same
size must agree on these (printed as "engines agree" or the differences; not a failure). Start
time (imports, engine set-up) is listed apart; Spark starts its JVM in the first step.

Targets (from the issue): 10^8 records with DuckDB at a 4 GB memory limit finish without running
out of memory; time and peak resident set are reported per engine and size, with Spark local
mode at 10^7. A case that fails (out of memory, a missing Java, a time-out) is reported in the
table as ``failed: <reason>``.

One run per case by default; ``--repeats N`` runs each case N times (a new process each) and
reports the fastest run with the largest peak. ``--profile`` changes nothing here (the steps are
always timed). The exit code is always 0: benchmarks report, they do not fail CI. On a shared
machine timings are contended.

Usage::

    python benchmarks/scale.py                        # DuckDB 1e7, 1e8; Spark 1e7; Polars 1e7
    python benchmarks/scale.py --quick                # 1e5 for every engine, one run
    python benchmarks/scale.py --engines duckdb --sizes 1e7 --memory-limit 2GB
    python benchmarks/scale.py --data-dir /big/disk/scale-data --timeout 7200
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, fmt_s, markdown_table, print_conditions  # noqa: E402
from _scale_data import KEYS, cached_synthetic, default_data_dir  # noqa: E402

ENGINES = ("duckdb", "spark", "polars")
DEFAULT_SIZES = {"duckdb": (10**7, 10**8), "spark": (10**7,), "polars": (10**7,)}
QUICK_SIZE = 10**5
POLARS_MAX = 3 * 10**7  # the in-memory engine is not run above this
POLL = 0.2  # seconds between resident-set samples
MARK = "SCALE-RESULT "
STEPS = ("frequencies", "k-anonymity", "individual + household risk")
HEADLINE = ("n_patterns", "sample_uniques", "violations_k3", "global_risk", "household_global_risk")


# --- the child: one case, one process --------------------------------------------------------


def _make_engine(spec: dict):
    """The engine object (or name) of the case."""
    from sdckit import engines

    name = spec["engine"]
    if name == "duckdb":
        return engines.DuckDBEngine(
            memory_limit=spec["memory_limit"], threads=spec.get("threads"), temp_directory=spec.get("temp_dir")
        )
    if name == "spark":
        config = {"spark.driver.memory": spec["spark_memory"]} if spec.get("spark_memory") else None
        return engines.SparkEngine(master=spec["spark_master"], config=config)
    return "polars"


def _measure(spec: dict, steps: dict) -> dict:
    """Run the three steps (timed into ``steps``) and return the headline results."""
    import inspect

    import sdckit

    def step(name, fn):
        t = time.perf_counter()
        out = fn()
        steps[name] = time.perf_counter() - t
        return out

    t = time.perf_counter()
    eng = _make_engine(spec)
    data = spec["path"]
    kw: dict = {"engine": eng}
    if "engine" not in inspect.signature(sdckit.frequencies).parameters:  # before the engines existed
        if spec["engine"] != "polars":
            raise RuntimeError(f"this sdckit has no engine= option (needed for {spec['engine']})")
        import polars as pl

        data, kw = pl.read_parquet(data), {}
    steps["start"] += time.perf_counter() - t

    freq = step("frequencies", lambda: sdckit.frequencies(data, KEYS, weight="w", **kw))
    kan = step("k-anonymity", lambda: sdckit.k_anonymity(freq, k=(2, 3, 5)))
    risk = step(
        "individual + household risk",
        lambda: sdckit.individual_risk(data, KEYS, weight="w", household="hid", **kw),
    )
    return {
        "n": int(freq.n),
        "n_patterns": int(freq.n_patterns),
        "sample_uniques": int(freq.n_sample_uniques),
        "violations_k3": int(kan.n_violations[3]),
        "global_risk": float(risk.global_risk),
        "household_global_risk": float(risk.household_global_risk),
    }


def _child(spec_json: str) -> None:
    """Measure one case and print one ``MARK``-prefixed JSON line (never a traceback)."""
    import resource

    t0 = time.perf_counter()
    steps: dict = {"start": 0.0}
    out: dict = {"steps": steps}
    try:
        import sdckit  # noqa: F401  (the import is part of the start time)

        steps["start"] = time.perf_counter() - t0
        out["results"] = _measure(json.loads(spec_json), steps)
    except BaseException as e:  # MemoryError, SdcError, a JVM error: report it
        msg = (str(e).strip().splitlines() or [""])[0][:300]
        out["error"] = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    out["maxrss_self"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["maxrss_children"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(MARK + json.dumps(out), flush=True)


# --- the parent: resident set of a process tree ----------------------------------------------


def _children_proc(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return kids


def _status_kb(pid: int) -> tuple[int, int]:
    """``(VmRSS, VmHWM)`` of ``pid`` in kB (0 when it is gone)."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return rss, hwm


class TreeMemory:
    """Peak resident set (bytes) of a process and its descendants, sampled on ``sample()``:
    the peak of the sum over the tree, and at least the largest single high-water mark seen."""

    def __init__(self, pid: int):
        self.pid = pid
        self.peak_sum = 0
        self.hwm: dict[int, int] = {}
        try:
            import psutil

            self._ps = psutil.Process(pid)
        except Exception:  # psutil missing (read /proc) or the process is gone
            self._ps = None

    def _tree(self) -> list[int]:
        if self._ps is not None:
            try:
                return [self.pid] + [p.pid for p in self._ps.children(recursive=True)]
            except Exception:
                return [self.pid]
        pids, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            pids.append(p)
            todo += _children_proc(p)
        return pids

    def sample(self) -> None:
        total = 0
        for pid in self._tree():
            rss, hwm = _status_kb(pid)
            if rss == 0 and self._ps is not None:
                try:
                    import psutil

                    rss = psutil.Process(pid).memory_info().rss // 1024
                except Exception:
                    pass
            total += rss * 1024
            self.hwm[pid] = max(self.hwm.get(pid, 0), hwm * 1024)
        self.peak_sum = max(self.peak_sum, total)

    @property
    def peak(self) -> int:
        return max([self.peak_sum, *self.hwm.values()])


def _run_case(spec: dict, timeout: float) -> dict:
    """Run one case in a child process; returns the child's report plus ``peak_rss`` (bytes)."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # its own process group: a time-out ends the JVM too
        )
        mem = TreeMemory(proc.pid)
        timed_out = False
        while proc.poll() is None:
            mem.sample()
            if time.perf_counter() - t0 > timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            time.sleep(POLL)
        _end_group(proc.pid)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        report = _parse(out.read())
        tail = [ln.strip() for ln in err.read().splitlines() if ln.strip()]
    if report is None:
        if timed_out:
            reason = f"time-out after {timeout:g} s"
        elif proc.returncode is not None and proc.returncode < 0:
            sig = signal.Signals(-proc.returncode).name
            reason = f"killed by {sig}" + (" (out of memory?)" if sig == "SIGKILL" else "")
        else:
            reason = (tail[-1] if tail else f"exit code {proc.returncode}")[:300]
        report = {"steps": {}, "error": reason}
    report["peak_rss"] = max(mem.peak, report.get("maxrss_self", 0))
    report["wall"] = wall
    return report


def _end_group(pgid: int) -> None:
    """After the child exits, end what is left of its own process group (a stray JVM)."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def _parse(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            try:
                return json.loads(line[len(MARK) :])
            except ValueError:
                return None
    return None


# --- the table -------------------------------------------------------------------------------


def _cases(args) -> list[tuple[str, int]]:
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        raise SystemExit(f"--engines: got {', '.join(bad)}; expected some of {', '.join(ENGINES)}")
    if args.quick:
        cases = [(e, QUICK_SIZE) for e in engines]
    elif args.sizes:
        cases = [(e, n) for e in engines for n in args.sizes]
    else:
        cases = [(e, n) for e in engines for n in DEFAULT_SIZES[e]]
    order = {e: j for j, e in enumerate(ENGINES[::-1])}  # polars, spark, duckdb within a size
    return sorted(cases, key=lambda c: (c[1], order[c[0]]))


def _limit(engine: str, args) -> str:
    if engine == "duckdb":
        return args.memory_limit
    if engine == "spark":
        return f"{args.spark_memory} driver heap" if args.spark_memory else "Spark default"
    return "none (in memory)"


def _row(engine: str, n: int, args, rep: dict) -> list:
    steps = rep.get("steps", {})
    res = rep.get("results")
    peak = f"{rep['peak_rss'] / 2**30:.2f}" if rep.get("peak_rss") else "—"
    name = engine if engine != "spark" else f"spark {args.spark_master}"
    head = [name, f"{n:,}", _limit(engine, args)]
    if res is None:
        done = [fmt_s(steps[s]) if s in steps else "—" for s in STEPS]
        err = rep.get("error", "unknown")
        err = err if err.startswith("skipped") else f"failed: {err}"
        return head + ["—"] + done + ["—", peak, err, "", "", "", ""]
    times = [steps[s] for s in STEPS]
    return (
        head
        + [fmt_s(steps.get("start", 0.0))]
        + [fmt_s(x) for x in times]
        + [f"**{fmt_s(sum(times))}**", peak]
        + [
            f"{res['n_patterns']:,}",
            f"{res['sample_uniques']:,}",
            f"{res['violations_k3']:,}",
            f"{res['global_risk']:.6g}",
            f"{res['household_global_risk']:.6g}",
        ]
    )


def _agreement(done: list[tuple[str, int, dict]]) -> list[str]:
    """Compare the headline numbers of the engines run at the same size."""
    lines = []
    for n in sorted({n for _, n, _ in done}):
        runs = [(e, r["results"]) for e, m, r in done if m == n and r.get("results")]
        if len(runs) < 2:
            continue
        (e0, r0), diffs = runs[0], []
        for e, r in runs[1:]:
            for key in HEADLINE:
                a, b = r0[key], r[key]
                same = a == b if isinstance(a, int) else abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)
                if not same:
                    diffs.append(f"{key}: {e0} {a!r}, {e} {b!r}")
        names = ", ".join(e for e, _ in runs)
        if diffs:
            lines.append(f"{n:,} records: engines differ ({names}): " + "; ".join(diffs))
        else:
            lines.append(f"{n:,} records: engines agree ({names}) on {', '.join(HEADLINE)}")
    return lines


def _versions() -> str:
    parts = []
    for mod in ("sdckit", "duckdb", "pyspark", "polars"):
        try:
            parts.append(f"{mod} {__import__(mod).__version__}")
        except Exception:
            parts.append(f"{mod} not installed")
    mem = ""
    try:
        mem = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB RAM"
    except (ValueError, OSError, AttributeError):
        pass
    return ", ".join(parts) + f", python {platform.python_version()}, {os.cpu_count()} CPUs{mem}"


def _data(cases, args) -> dict[int, Path]:
    """The Parquet file of every size (written when missing); a size that fails is left out."""
    paths = {}
    for n in sorted({n for _, n in cases}):
        try:
            path, secs = cached_synthetic(args.data_dir, n, args.seed)
        except Exception as e:  # no DuckDB, no disk space, a bad seed: report it in the table
            print(f"data {n:,} records: failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        size = path.stat().st_size / 2**20
        how = "reused" if secs is None else f"written in {fmt_s(secs)} s"
        print(f"data {n:,} records: {path} ({size:,.0f} MiB, {how})")
        paths[n] = path
    return paths


def _spec(engine: str, path: Path, args, spill: Path) -> dict:
    return {
        "engine": engine,
        "path": str(path),
        "memory_limit": args.memory_limit,
        "threads": args.threads,
        "temp_dir": str(spill),
        "spark_master": args.spark_master,
        "spark_memory": args.spark_memory,
    }


def _one(engine: str, n: int, path: Path, args) -> dict:
    """Best of ``--repeats`` child runs (by total time); the peak resident set is the largest."""
    best, peak = None, 0
    for _ in range(max(args.repeats, 1)):
        spill = Path(tempfile.mkdtemp(prefix="duckdb-spill-", dir=args.data_dir))
        try:
            rep = _run_case(_spec(engine, path, args, spill), args.timeout)
        finally:
            shutil.rmtree(spill, ignore_errors=True)
        peak = max(peak, rep.get("peak_rss", 0))
        if rep.get("results") is None:
            best = best if best is not None else rep
            break
        total = sum(rep["steps"][s] for s in STEPS)
        if best is None or best.get("results") is None or total < sum(best["steps"][s] for s in STEPS):
            best = rep
    best["peak_rss"] = peak
    return best


def main(argv=None) -> int:
    ap = base_parser(
        __doc__,
        sizes_default="DuckDB 1e7,1e8; Spark 1e7; Polars 1e7",
        quick_help="1e5 records for every engine, one run",
    )
    ap.set_defaults(repeats=1)
    ap.add_argument(
        "--engines", default=",".join(ENGINES), help="comma-separated, from duckdb,spark,polars (default all)"
    )
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help=f"where the Parquet files are kept (default {default_data_dir()})",
    )
    ap.add_argument("--memory-limit", default="4GB", help="DuckDB's memory limit (default 4GB)")
    ap.add_argument("--spark-master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--spark-memory", default="4g", help="spark.driver.memory (default 4g; '' for Spark's default)")
    ap.add_argument(
        "--timeout", type=float, default=4 * 3600, help="seconds per case before it is stopped (default 14400)"
    )
    ap.add_argument("--child", help=__import__("argparse").SUPPRESS)
    for action in ap._actions:
        if action.dest == "repeats":
            action.help = "runs per case, each in a new process; the fastest is reported (default 1)"
        elif action.dest == "profile":
            action.help = "no effect here (the steps are always timed)"
    args = ap.parse_args(argv)
    print_conditions()
    if args.child:
        _child(args.child)
        return 0
    if args.quick:
        args.repeats = 1

    cases = _cases(args)
    print(_versions())
    print(f"keys: {', '.join(KEYS)}; weight w; household hid; seed {args.seed}; {args.repeats} run(s) per case\n")
    paths = _data(cases, args)
    print()

    rows, done = [], []
    for engine, n in cases:
        if n not in paths:
            rep = {"steps": {}, "error": "no data file (see above)"}
        elif engine == "polars" and n > POLARS_MAX:
            rep = {"steps": {}, "error": f"skipped: in-memory engine, above {POLARS_MAX:,} records"}
        else:
            rep = _one(engine, n, paths[n], args)
        done.append((engine, n, rep))
        rows.append(_row(engine, n, args, rep))
        state = "ok" if rep.get("results") else rep.get("error", "failed")
        print(f"  done {engine} n={n:,}: {state} ({fmt_s(rep.get('wall', 0.0))} s wall)", file=sys.stderr)

    markdown_table(
        [
            "engine",
            "records",
            "memory limit",
            "start (s)",
            *(f"{s} (s)" for s in STEPS),
            "total (s)",
            "peak RSS (GB)",
            "key patterns",
            "sample uniques",
            "records < 3-anonymous",
            "global risk",
            "household global risk",
        ],
        "lrlrrrrrrrrrrr",
        rows,
    )
    print()
    for line in _agreement(done) or ["(no size was run with two engines: nothing to compare)"]:
        print(line)
    return 0


if __name__ == "__main__":
    try:
        main()
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except Exception:  # a benchmark reports, it never fails the build
        traceback.print_exc()
    sys.exit(0)
