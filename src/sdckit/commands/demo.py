"""``sdckit demo``: the risk assessment on the bundled synthetic survey sample."""

from __future__ import annotations

from .._errors import SdcError
from . import Progress, add_output_options, progress_enabled, write_json


def register(sub) -> None:
    d = sub.add_parser("demo", help="run the risk assessment on the bundled example data and write its report")
    add_output_options(d, id_option=False)
    d.add_argument(
        "--report",
        help=f"the HTML report to write (an existing file only with --overwrite; default {DEFAULT_REPORT} in the "
        "current folder, which replaces an earlier demo's report there, or, when that name holds another file, "
        "takes the next free name)",
    )
    from ..datasets import example_path

    d.set_defaults(func=run, data=str(example_path()))  # the bundled file it reads: never an output


#: the report's name when --report is not given
DEFAULT_REPORT = "sdckit-demo-report.html"


def run(args) -> int:
    from ..datasets import EXAMPLE_KEYS, example_path
    from ..io import write_records
    from . import read_input, risk

    path = example_path()
    keys = list(EXAMPLE_KEYS)
    print(
        f"sdckit demo: risk assessment of the bundled synthetic survey sample\n  {path}\n"
        f"  equivalent to: sdckit freq {path.name} --keys {','.join(keys)} --weight weight --k 2,3,5\n"
        f"            and: sdckit risk {path.name} --keys {','.join(keys)} --weight weight "
        f"--household household\n"
    )
    prog = Progress(4, progress_enabled(args))
    prog.step("reading data")
    data = read_input(str(path), keys)
    prog.step("frequencies and risk")
    res, thr, kan, messages = risk.assess(data, keys, weight="weight", household="household")
    prog.step("the HTML report")
    target, replace, told = _report_target(args.report, args.overwrite)
    try:
        report = _report(target, keys, replace)
    except SdcError as exc:  # e.g. matplotlib not installed: the text results still stand
        report = None
        note = " ".join(str(exc).split())
    prog.step("writing output")
    prog.close()
    print(res.frequencies.summary())
    print()
    risk.print_results(res, thr, kan, messages)
    if args.json:
        write_json(
            args.json,
            {
                "data": str(path),
                "frequencies": res.frequencies.to_dict(),
                "k_anonymity": kan.to_dict(),
                "risk": risk.payload(res, thr, kan),
            },
            overwrite=args.overwrite,
        )
    if args.records:
        write_records(risk.records(res, thr, kan), args.records, overwrite=args.overwrite)
    if report is None:
        print(f"\nNo HTML report: {note}")
    else:
        print(f"\nThe full report (figures, riskiest key combinations, SUDA): {report}{told}\nOpen it in a browser.")
    print(
        "\nTo measure and protect your own file in the browser, without code: "
        'pip install "sdckit[app]" && sdckit app your-file.csv'
    )
    return 0


def _report_target(typed: str | None, overwrite: bool) -> tuple[str, bool, str]:
    """Where the report goes: ``(path, replace an existing file, what to tell)``. A typed
    --report as typed (an existing file only with --overwrite); without it the default name,
    replacing an earlier demo's report there; another file of that name is kept and the report
    takes the next free name ``sdckit-demo-report-2.html``, ..."""
    from pathlib import Path

    if typed is not None:
        return typed, overwrite, ""
    out = Path(DEFAULT_REPORT)
    if not out.exists() or out.is_dir():
        return str(out), False, ""
    if _is_sdckit_report(out):
        return str(out), True, "\n(it replaces the report of an earlier sdckit demo; --report NAME writes another)"
    n = 2
    while Path(f"{out.stem}-{n}{out.suffix}").exists():
        n += 1
    new = f"{out.stem}-{n}{out.suffix}"
    return new, False, f"\n({out} holds another file, left as it is: the report is written to {new} instead)"


def _is_sdckit_report(path) -> bool:
    """Whether ``path`` is a regular file holding an sdckit HTML report (the demo replaces
    only its own)."""
    from pathlib import Path

    p = Path(path)
    if p.is_symlink() or not p.is_file():
        return False
    with open(p, "rb") as f:
        head = f.read(200_000)
    return head.lstrip().lower().startswith(b"<!doctype html") and b'<div class="sdckit-report">' in head


def _report(path: str, keys, overwrite: bool) -> str:
    """The assessment report of the example, written to ``path`` atomically (an older report
    there only with --overwrite)."""
    from pathlib import Path

    from ..datasets import load_example
    from ..scenario import Scenario
    from ..workflow import assess

    scenario = Scenario(keys=tuple(keys), weight="weight", household="household")
    out = Path(path)
    if out.exists() and out.is_dir():
        raise SdcError(f"--report: {out} is a folder; expected a file name")
    assess(load_example(), scenario, progress=False).to_html(out, overwrite=overwrite)
    return str(out.resolve())
