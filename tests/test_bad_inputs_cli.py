"""Catalogue of bad inputs for the command line: every ``sdckit`` subcommand.

Each case is one ``sdckit ...`` call with exactly one thing wrong (a missing or unreadable input
file, a column the file does not have, an option out of range, an output that cannot be written,
...), run in-process through :func:`sdckit.cli.main`, and judged by properties:

* the exit status is 2 (the command line's status for bad input, argparse's included);
* stderr ends in one ``error:`` line naming the option, column or file at fault (the fragments
  written down with the case), and holds no traceback;
* neither stdout nor stderr holds a record value or a category label of the data (the labels
  are distinctive, ``Zorglub17`` and the like, so that a leak cannot go unseen);
* every input file keeps its bytes and its modification time, and no file or folder is created
  anywhere in the case's folder (no partial output, no ``.part`` file);
* it ends in bounded time (a generous bound: the data are 40 records).

The generic cases (missing file, directory, empty file, header-only file, unknown extension,
unknown column, output folder missing, output under a file, output over an input) run for every
command that reads a file; the specific ones follow, command by command.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sdckit.cli import main

N = 40
REGIONS = ("Zorglub17", "Quuxian42", "Blorptown9")
SEXES = ("Femmexy31", "Hommezq58")
AGES = ("Agebin7a", "Agebin7b", "Agebin7c", "Agebin7d")
#: distinctive record values: the category labels and the income values as the file writes them
INCOMES = tuple(f"{1234.567 + 13.37 * i:.3f}" for i in range(N))
LEAKS = REGIONS + SEXES + AGES + INCOMES
#: a generous bound for one case (the data are 40 records); a case stuck in a loop is caught
TIME_BOUND = 120.0


def _csv(path: Path, rows: range, shift: int = 0) -> Path:
    lines = ["region,sex,agegrp,income,w,hh"]
    for i in rows:
        j = i + shift
        lines.append(f"{REGIONS[j % 3]},{SEXES[(j // 3) % 2]},{AGES[j % 4]},{INCOMES[i]},{10 + j % 5},{100 + i // 2}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _files(tmp: Path) -> dict[str, str]:
    """The case's input files (each command takes what it needs) and bad paths."""
    (tmp / "adir.csv").mkdir()
    (tmp / "empty.csv").write_bytes(b"")
    (tmp / "header.csv").write_text("region,sex,agegrp,income,w,hh\n")
    (tmp / "data.xyz").write_text("region,sex\nZorglub17,Femmexy31\n")
    (tmp / "recipe.yaml").write_text(
        "sdckit_recipe: 1\nscenario:\n  keys: [region, sex]\nsteps:\n  - method: local_suppression\n    params: {k: 2}\n"
    )
    return {
        "data": str(_csv(tmp / "data.csv", range(N))),
        "other": str(_csv(tmp / "other.csv", range(N), shift=1)),
        "half": str(_csv(tmp / "half.csv", range(N // 2))),
        "missing": str(tmp / "nope.csv"),
        "dir": str(tmp / "adir.csv"),
        "empty": str(tmp / "empty.csv"),
        "header": str(tmp / "header.csv"),
        "xyz": str(tmp / "data.xyz"),
        "recipe": str(tmp / "recipe.yaml"),
        "nodir": str(tmp / "no-such-folder" / "out.json"),
        "underfile": str(tmp / "data.csv" / "out.json"),
        "proc": "/proc/sdckit-out.json",
        "tmp": str(tmp),
    }


def _snapshot(tmp: Path) -> dict[str, tuple]:
    out = {}
    for root, dirs, files in os.walk(tmp):
        for name in dirs + files:
            p = Path(root, name)
            st = p.stat()
            out[str(p)] = (p.read_bytes() if p.is_file() else None, st.st_mtime_ns)
    return out


def run_bad(argv: list[str], fragments: tuple[str, ...], tmp: Path, capsys, monkeypatch) -> None:
    """Run ``sdckit argv`` (``{name}`` placeholders filled from :func:`_files`) and check every
    property of the module docstring."""
    paths = _files(tmp)
    argv = [a.format(**paths) for a in argv]
    fragments = tuple(f.format(**paths) for f in fragments)
    monkeypatch.chdir(tmp)  # a command writing beside the current folder would be seen
    monkeypatch.setattr("sdckit.app.serve", _no_server)
    before = _snapshot(tmp)
    capsys.readouterr()
    start = time.perf_counter()
    try:
        code = main([*argv, "--no-progress"] if _takes_progress(argv) else argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    elapsed = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert code == 2, f"exit status {code}; stderr: {err!r}"
    assert "Traceback" not in err and "Traceback" not in out
    last = err.strip().splitlines()[-1] if err.strip() else ""
    assert "error:" in last, f"no error line on stderr: {err!r}"
    for fragment in fragments:
        assert fragment in last, f"{fragment!r} not in {last!r}"
    for value in LEAKS:
        assert value not in out and value not in err, f"a record value is shown: {value!r} in {out + err!r}"
    assert _snapshot(tmp) == before, "an input changed or a file was created"
    assert elapsed < TIME_BOUND


def _no_server(*args, **kwargs):
    raise AssertionError("sdckit app started its server on bad input")


def _takes_progress(argv: list[str]) -> bool:
    return argv[0] not in ("app",)


# ----------------------------------------------------------------------------------------------
# the commands, each with a call that is good except for what a case changes
# ----------------------------------------------------------------------------------------------
KEYS = "region,sex,agegrp"
#: command -> (its good call with the first input file as {data}, the option naming its columns)
GOOD = {
    "freq": (["freq", "{data}", "--keys", KEYS], "--keys"),
    "risk": (["risk", "{data}", "--keys", KEYS, "--weight", "w"], "--keys"),
    "suda": (["suda", "{data}", "--keys", KEYS], "--keys"),
    "interval": (["interval", "{data}", "--variables", "income"], "--variables"),
    "loglinear": (["loglinear", "{data}", "--keys", KEYS, "--sampling-fraction", "0.1"], "--keys"),
    "uniques": (["uniques", "{data}", "--keys", KEYS, "--sampling-fraction", "0.1"], "--keys"),
    "assess": (["assess", "{data}", "--keys", KEYS, "--report", "r.html"], "--keys"),
    "protect": (["protect", "{data}", "--keys", KEYS, "--step", "local_suppression:k=2", "--out", "p.csv"], "--keys"),
    "recode": (
        ["recode", "{data}", "--keys", KEYS, "--variables", "income", "--breaks", "3", "--out", "p.csv"],
        "--keys",
    ),
    "suppress": (["suppress", "{data}", "--keys", KEYS, "--k", "2", "--out", "p.csv"], "--keys"),
    "noise": (["noise", "{data}", "--variables", "income", "--seed", "1", "--out", "p.csv"], "--variables"),
    "microaggregate": (["microaggregate", "{data}", "--variables", "income", "--out", "p.csv"], "--variables"),
    "swap": (["swap", "{data}", "--variables", "income", "--seed", "1", "--out", "p.csv"], "--variables"),
    "pram": (
        ["pram", "{data}", "--keys", KEYS, "--variables", "region", "--seed", "1", "--out", "p.csv"],
        "--variables",
    ),
    "search": (["search", "{data}", "--keys", KEYS, "--k", "2"], "--keys"),
    "utility": (["utility", "{data}", "{other}", "--variables", "region,sex,income"], "--variables"),
    "linkage": (["linkage", "{data}", "{other}", "--variables", "income"], "--variables"),
    "external": (["external", "{data}", "{other}", "--variables", "region,sex"], "--variables"),
    "register": (["register", "{data}", "{other}", "--keys", "region,sex", "--sampling-fraction", "0.1"], "--keys"),
    "synthetic": (["synthetic", "{data}", "{other}", "--keys", "region,sex", "--seed", "1"], "--keys"),
}


def _with(command: str, first: str | None = None, **replace: str) -> list[str]:
    """The good call of ``command`` with its first input replaced by ``first`` and the value
    after each option ``--name`` in ``replace`` (underscores for dashes) replaced."""
    argv = list(GOOD[command][0])
    if first is not None:
        argv[1] = first
    for opt, value in replace.items():
        flag = "--" + opt.replace("_", "-")
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return argv


def _generic() -> list:
    cases = []
    for cmd, (_, col_option) in GOOD.items():
        cases += [
            pytest.param(_with(cmd, "{missing}"), ("nope.csv",), id=f"{cmd}-missing-file"),
            pytest.param(_with(cmd, "{dir}"), ("adir.csv", "not a file"), id=f"{cmd}-directory-as-file"),
            pytest.param(_with(cmd, "{empty}"), ("empty.csv",), id=f"{cmd}-empty-file"),
            pytest.param(_with(cmd, "{header}"), ("records",), id=f"{cmd}-header-only"),
            pytest.param(_with(cmd, "{xyz}"), (".xyz",), id=f"{cmd}-unknown-extension"),
            pytest.param(
                _with(cmd, **{col_option[2:]: "region,Nocolumn8"}),
                ("Nocolumn8", "not found"),
                id=f"{cmd}-unknown-column",
            ),
            pytest.param(_with(cmd, json="{nodir}"), ("--json", "no-such-folder"), id=f"{cmd}-json-folder-missing"),
            pytest.param(_with(cmd, json="{underfile}"), ("--json",), id=f"{cmd}-json-under-a-file"),
            pytest.param(
                [*_with(cmd, json="{data}"), "--overwrite"], ("--json", "input"), id=f"{cmd}-json-is-input-overwrite"
            ),
            pytest.param(_with(cmd, json="{tmp}"), ("--json",), id=f"{cmd}-json-is-a-folder"),
        ]
    return cases


GENERIC = _generic()


@pytest.mark.parametrize("argv, fragments", GENERIC)
def test_generic_bad_input(argv, fragments, tmp_path, capsys, monkeypatch):
    run_bad(argv, fragments, tmp_path, capsys, monkeypatch)


def _case(command: str, fragments: tuple[str, ...], case_id: str, first: str | None = None, *extra: str, **replace):
    """A specific case: the good call of ``command`` with ``replace`` and ``extra`` arguments."""
    return pytest.param([*_with(command, first, **replace), *extra], fragments, id=f"{command}-{case_id}")


SPECIFIC = [
    # freq: k, alpha, weight, keys, engines, outputs
    _case("freq", ("k: got",), "k-zero", k="0"),
    _case("freq", ("k: got",), "k-negative", k="-3"),
    _case("freq", ("k: got",), "k-not-a-number", k="two"),
    _case("freq", ("alpha", "[0, 1]"), "alpha-above-one", alpha="1.5"),
    _case("freq", ("--alpha",), "alpha-not-a-number", alpha="half"),
    _case("freq", ("alpha", "[0, 1]"), "alpha-nan", alpha="nan"),
    _case("freq", ("weight", "region"), "weight-is-text", weight="region"),
    _case("freq", ("Nocolumn8", "not found"), "weight-unknown-column", weight="Nocolumn8"),
    _case("freq", ("keys", "region", "more than once"), "keys-duplicated", keys="region,sex,region"),
    _case("freq", ("--keys",), "keys-empty", keys=","),
    _case("freq", ("--engine", "nosuch"), "engine-unknown", engine="nosuch"),
    _case("freq", ("--memory-limit", "--engine duckdb"), "memory-limit-without-duckdb", memory_limit="1GB"),
    _case("freq", ("--threads",), "threads-zero-duckdb", engine="duckdb", threads="0"),
    _case("freq", ("--records", "out.xyz"), "records-unknown-extension", records="out.xyz"),
    _case("freq", ("--records",), "records-csv-under-duckdb", engine="duckdb", records="out.csv"),
    _case("freq", ("id", "Nocolumn8"), "id-unknown-column", id="Nocolumn8"),
    _case("freq", ("--json", "/proc"), "json-read-only-folder", json="{proc}"),
    _case("freq", ("--records", "--json"), "records-same-as-json", json="o.json", records="o.json"),
    _case("freq", ("--records", "input"), "records-is-input-overwrite", None, "--overwrite", records="{data}"),
    # risk
    _case("risk", ("max",), "max-global-risk-zero", max_global_risk="0"),
    _case("risk", ("max",), "max-global-risk-above-one", max_global_risk="1.5"),
    _case("risk", ("--method",), "method-unknown", method="bogus"),
    _case("risk", ("household",), "household-risk-negative", household="hh", household_risk="-1"),
    _case("risk", ("Nocolumn8",), "household-unknown-column", household="Nocolumn8"),
    _case("risk", ("Nocolumn8",), "strata-unknown-column", strata="Nocolumn8"),
    _case("risk", ("alpha",), "alpha-negative", alpha="-0.1"),
    # suda
    _case("suda", ("dis",), "dis-fraction-zero", dis_fraction="0"),
    _case("suda", ("dis",), "dis-fraction-above-one", dis_fraction="1.5"),
    _case("suda", ("dis",), "dis-fraction-text", dis_fraction="most"),
    _case("suda", ("max",), "max-size-zero", max_size="0"),
    _case("suda", ("--scores",), "scores-unknown", scores="bogus"),
    # interval
    _case("interval", ("p",), "p-zero", p="0"),
    _case("interval", ("p",), "p-above-one", p="1.5"),
    _case("interval", ("c",), "c-min-zero", c_min="0"),
    _case("interval", ("--c-min",), "c-min-not-a-number", c_min="three"),
    _case("interval", ("region",), "variables-text-column", variables="region"),
    # loglinear
    _case("loglinear", ("sampling",), "sampling-fraction-zero", sampling_fraction="0"),
    _case("loglinear", ("sampling",), "sampling-fraction-above-one", sampling_fraction="1.5"),
    _case("loglinear", ("model",), "model-unknown-variable", model="region*Nocolumn8"),
    _case("loglinear", ("--criterion",), "criterion-unknown", criterion="tau9"),
    _case("loglinear", ("weight",), "compat-without-weight", compat="sdcMicro"),
    # uniques
    _case("uniques", ("sampling",), "sampling-fraction-two", sampling_fraction="2"),
    _case("uniques", ("--method",), "method-unknown", method="bogus"),
    # register
    _case("register", ("sampling",), "sampling-fraction-zero", sampling_fraction="0"),
    _case("register", ("--approach",), "approach-unknown", approach="C"),
    _case("register", ("Nocolumn8",), "sample-weight-unknown-column", sample_weight="Nocolumn8"),
    # synthetic (inputs never an output: issue 36 point 6)
    _case("synthetic", ("--split",), "split-one-part", split="region"),
    _case("synthetic", ("attacks",), "n-attacks-zero", n_attacks="0"),
    _case("synthetic", ("order",), "order-zero", order="0"),
    _case("synthetic", ("nope.csv",), "control-missing-file", control="{missing}"),
    _case("synthetic", ("--json", "input"), "json-is-synthetic-input", None, "--overwrite", json="{other}"),
    _case(
        "synthetic",
        ("--records", "input"),
        "records-is-control-input",
        None,
        "--overwrite",
        control="{half}",
        records="{half}",
    ),  # fmt: skip
    # assess
    _case("assess", ("max",), "max-global-risk-two", max_global_risk="2"),
    _case("assess", ("--config", "nope.csv"), "config-missing-file", config="{missing}"),
    _case("assess", ("--config",), "config-not-a-mapping", config="{header}"),
    _case(
        "assess",
        ("--json", "input"),
        "json-is-synthetic-input",
        None,
        "--overwrite",
        synthetic="{other}",
        json="{other}",
    ),  # fmt: skip
    _case("assess", ("--report", "--json"), "report-same-as-json", json="r.html"),
    _case("assess", ("--scales",), "scales-without-equals", scales="income"),
    # protect and the one-step commands
    _case("protect", ("--recipe", "--step"), "recipe-and-step", recipe="{recipe}"),
    _case("protect", ("nosuch",), "step-unknown-method", step="nosuch:k=2"),
    _case("protect", ("k",), "step-k-negative", step="local_suppression:k=-1"),
    pytest.param(
        ["protect", "{data}", "--recipe", "{missing}", "--out", "p.csv"],
        ("nope.csv",),
        id="protect-recipe-missing-file",
    ),  # fmt: skip
    pytest.param(
        ["protect", "{data}", "--recipe", "{empty}", "--out", "p.csv"], ("recipe",), id="protect-recipe-empty-file"
    ),  # fmt: skip
    _case("protect", ("--out", "input"), "out-is-input", None, "--overwrite", out="{data}"),
    _case("protect", ("--out", ".xyz"), "out-unknown-extension", out="p.xyz"),
    _case(
        "protect",
        ("--save-recipe", "no-such-folder"),
        "save-recipe-folder-missing",
        save_recipe="{tmp}/no-such-folder/r.yaml",
    ),  # fmt: skip
    _case("protect", ("/proc/p.csv",), "out-read-only-folder", out="/proc/p.csv"),
    _case("recode", ("breaks",), "breaks-not-numbers", breaks="low;high"),
    _case("recode", ("--mapping", "--breaks"), "mapping-and-breaks", None, "--mapping", "a=b"),
    _case("suppress", ("k",), "k-zero", k="0"),
    _case("suppress", ("threshold",), "threshold-above-one", threshold="1.5"),
    _case("suppress", ("--method",), "method-unknown", method="bogus"),
    _case("noise", ("noise",), "noise-negative", noise="-1"),
    _case("noise", ("--method",), "method-unknown", method="bogus"),
    _case("microaggregate", ("group",), "group-size-zero", group_size="0"),
    _case("microaggregate", ("sort_by", "numeric"), "sort-by-text", None, "--method", "single", sort_by="region"),
    _case("swap", ("swap",), "swap-range-negative", swap_range="-5"),
    _case("pram", ("pd",), "pd-above-one", pd="2"),
    _case("pram", ("variables", "sex", "more than once"), "variables-duplicated", variables="sex,sex"),
    _case("pram", ("strength",), "strength-negative", strength="-0.5"),
    # search
    pytest.param(["search", "{data}", "--keys", KEYS], ("target", "--k"), id="search-no-target"),
    _case("search", ("k",), "k-zero", k="0"),
    _case("search", ("suppression",), "suppression-limit-above-one", suppression_limit="1.5"),
    _case("search", ("nope.csv",), "hierarchy-missing-file", hierarchy="region={missing}"),
    _case("search", ("--weights",), "weights-not-numbers", weights="region=heavy"),
    _case("search", ("time",), "time-limit-negative", time_limit="-1"),
    _case("search", ("candidates",), "max-candidates-zero", max_candidates="0"),
    _case("search", ("sensitive",), "l-without-sensitive", l="2"),
    # utility, linkage, external
    _case("utility", ("scales", "bogus"), "scales-unknown-scale", scales="region=bogus"),
    _case("utility", ("bound",), "bound-negative", bound="-1"),
    _case("utility", ("Nocolumn8",), "id-unknown-column", id="Nocolumn8"),
    _case("linkage", ("--method",), "method-unknown", method="bogus"),
    _case("linkage", ("--second-weight",), "second-weight-not-a-number", second_weight="heavy"),
    pytest.param(
        ["linkage", "{data}", "{half}", "--variables", "income"], ("records",), id="linkage-protected-fewer-records"
    ),  # fmt: skip
    pytest.param(
        ["utility", "{data}", "{half}", "--variables", "region,income"],
        ("records",),
        id="utility-protected-fewer-records",
    ),  # fmt: skip
    # demo (no input file: only its outputs), app (never starts its server on bad input), no command
    pytest.param(["demo", "--json", "{nodir}"], ("--json", "no-such-folder"), id="demo-json-folder-missing"),
    pytest.param(["demo", "--report", "{underfile}"], ("--report",), id="demo-report-under-a-file"),
    pytest.param(["demo", "--records", "{tmp}/r.xyz"], ("--records", ".xyz"), id="demo-records-unknown-extension"),
    pytest.param(["app", "{missing}", "--no-browser"], ("nope.csv",), id="app-missing-file"),
    pytest.param(["app", "{dir}", "--no-browser"], ("adir.csv",), id="app-directory-as-file"),
    pytest.param(["app", "{data}", "--port", "0", "--no-browser"], ("--port",), id="app-port-zero"),
    pytest.param(["app", "{data}", "--port", "70000", "--no-browser"], ("--port",), id="app-port-too-large"),
    pytest.param(["app", "{data}", "--port", "http", "--no-browser"], ("--port",), id="app-port-not-a-number"),
    pytest.param(["nosuch", "{data}"], ("nosuch",), id="unknown-command"),
    _case("external", ("tolerance",), "tolerance-negative", tolerance="-1"),
    _case("external", ("internal",), "internal-risk-two", internal_risk="2"),
    _case("external", ("availability",), "availability-above-one", availability="region=1.5"),
]


@pytest.mark.parametrize("argv, fragments", SPECIFIC)
def test_specific_bad_input(argv, fragments, tmp_path, capsys, monkeypatch):
    run_bad(argv, fragments, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("command", sorted(GOOD))
def test_the_good_call_of_every_command_succeeds(command, tmp_path, capsys, monkeypatch):
    """Each case changes one thing in a call that succeeds: the cases fail for their own reason."""
    paths = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = [a.format(**paths) for a in GOOD[command][0]]
    assert main([*argv, "--json", str(tmp_path / "good.json"), "--no-progress"]) == 0, capsys.readouterr().err
    assert (tmp_path / "good.json").is_file()
