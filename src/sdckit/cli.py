"""Command-line interface: ``sdckit <command> ...``.

Commands
--------
``sdckit freq DATA --keys a,b,c [--weight W] [--alpha A] [--k 2,3,5] [--json OUT] [--records OUT]``
    Key frequencies and k-anonymity. Prints a summary, writes aggregates as JSON and the
    per-record columns (fk, Fk, violates_k) as CSV or Parquet.
``sdckit demo``
    The same assessment on the bundled synthetic survey sample.

Bad input exits with status 2 and a one-line ``sdckit: error: ...`` message.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ._errors import SdcError

__all__ = ["main"]


class Progress:
    """A small stage progress bar on stderr (shown for long runs on a terminal, or forced)."""

    def __init__(self, stages: int, enabled: bool):
        self.stages, self.enabled, self.done, self.t0 = stages, enabled, 0, time.perf_counter()

    def step(self, label: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        width = 24
        filled = int(width * self.done / self.stages)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.stages} {label:<28}"
                         f" {time.perf_counter() - self.t0:6.1f}s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()] if value else []


def _progress_enabled(args) -> bool:
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


def _run_freq(args) -> int:
    from .io import read_data, write_records
    from .risk.frequencies import frequencies, k_anonymity

    keys = _split(args.keys)
    if not keys:
        raise SdcError("--keys: no key variables given; expected a comma-separated list of column names")
    prog = Progress(4, _progress_enabled(args))
    prog.step("reading data")
    data = read_data(args.data, string_columns=keys, na_values=tuple(args.na_values.split(",")) if args.na_values is not None else ("", "NA"))
    prog.step("counting key patterns")
    missing = _split(args.missing) or None
    freq = frequencies(data, keys, weight=args.weight, alpha=args.alpha, missing=missing)
    prog.step("k-anonymity")
    kan = k_anonymity(freq, k=args.k)
    prog.step("writing output")
    prog.close()
    print(freq.summary())
    print()
    print(kan.summary())
    if args.json:
        payload = {"data": str(args.data), "frequencies": freq.to_dict(), "k_anonymity": kan.to_dict()}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    if args.records:
        write_records(kan.to_frame(), args.records)
    return 0


def _run_demo(args) -> int:
    from .datasets import EXAMPLE_KEYS, example_path

    path = example_path()
    print(f"sdckit demo: risk assessment of the bundled synthetic survey sample\n  {path}\n"
          f"  equivalent to: sdckit freq {path.name} --keys {','.join(EXAMPLE_KEYS)} --weight weight --k 2,3,5\n")
    ns = argparse.Namespace(data=str(path), keys=",".join(EXAMPLE_KEYS), weight="weight", alpha=1.0,
                            k="2,3,5", json=args.json, records=args.records, progress=args.progress,
                            missing=None, na_values=None)
    return _run_freq(ns)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="sdckit", description="Statistical disclosure control for microdata.")
    p.add_argument("--version", action="version", version=f"sdckit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def common_out(sp):
        sp.add_argument("--json", metavar="OUT", help="write the aggregate results as JSON to OUT")
        sp.add_argument("--records", metavar="OUT",
                        help="write per-record results to OUT (.csv or .parquet); record-level, keep it confidential")
        g = sp.add_mutually_exclusive_group()
        g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
        g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")

    f = sub.add_parser("freq", help="key frequencies (f_k, F_k) and k-anonymity",
                       description="Sample and weighted key frequencies with sdcMicro's missing-value rule, and k-anonymity.")
    f.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    f.add_argument("--keys", required=True, help="comma-separated categorical key variables")
    f.add_argument("--weight", help="sampling weight column (none: the file is a census, F_k = f_k)")
    f.add_argument("--alpha", type=float, default=1.0, help="weight of matches through missing values, in [0, 1] (default 1)")
    f.add_argument("--k", default="2,3,5", help="k values for k-anonymity, comma-separated (default 2,3,5)")
    f.add_argument("--missing", help="extra values to treat as missing in key variables, comma-separated (e.g. -999)")
    f.add_argument("--na-values", dest="na_values", help="strings read as missing from text files (default: empty and NA)")
    common_out(f)
    f.set_defaults(func=_run_freq)

    d = sub.add_parser("demo", help="run the risk assessment on the bundled example data")
    common_out(d)
    d.set_defaults(func=_run_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from ._memory import tune_memory

    tune_memory()  # the command line owns its process: keep freed memory for reuse
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except (SdcError, OSError) as exc:
        msg = " ".join(str(exc).split())  # one line
        print(f"sdckit: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("sdckit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
