"""Every writing command takes --overwrite and none replaces an existing file without it (the
Python writers likewise take ``overwrite=``); every CLI option has one spelling, the old
spellings being hidden aliases that warn."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl
import pytest

import sdckit
from conftest import DATA, file_digest, s002_table
from sdckit.cli import INPUT_ITEMS, INPUTS, OUTPUTS, build_parser, main

KEYS = "Residence,Gender,Education,Labor"
TESTDATA = DATA / "sdcmicro" / "testdata.csv"
SDC_KEYS = "urbrur,roof,walls,water,electcon,relat,sex"
OLD = "already exists; expected a new file, or --overwrite to replace it"


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _options(parser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions for o in a.option_strings}


def _old_file(path: Path) -> str:
    path.write_text("an older output\n")
    return file_digest(path)


# ----------------------------------------------------------------------------------------------
# --overwrite everywhere a file is written
# ----------------------------------------------------------------------------------------------
def test_every_writing_command_takes_overwrite():
    writing = {}
    for name, parser in _commands().items():
        dests = {a.dest for a in parser._actions}
        if dests & set(OUTPUTS):
            writing[name] = "--overwrite" in _options(parser)
    # every command writes something (json at least), but the web application (its page saves files)
    assert set(writing) == set(_commands()) - {"app"}
    assert [n for n, ok in writing.items() if not ok] == []


@pytest.mark.parametrize("option", ["--json", "--records"])
def test_existing_output_is_refused_before_any_work(data_csv, tmp_path, option, capsys):
    out = tmp_path / ("out.json" if option == "--json" else "out.csv")
    before = _old_file(out)
    assert main(["freq", str(data_csv), "--keys", KEYS, option, str(out)]) == 2
    err = capsys.readouterr()
    assert f"{option}: {out} {OLD}" in err.err and err.out == ""  # nothing computed or printed
    assert file_digest(out) == before


@pytest.mark.parametrize("option", ["--json", "--records"])
def test_overwrite_replaces_an_existing_output(data_csv, tmp_path, option):
    out = tmp_path / ("out.json" if option == "--json" else "out.csv")
    _old_file(out)
    assert main(["freq", str(data_csv), "--keys", KEYS, option, str(out), "--overwrite", "--no-progress"]) == 0
    if option == "--json":
        assert json.loads(out.read_text())["k_anonymity"]["n"] == 10
    else:
        assert pl.read_csv(out).height == 10


def test_measure_commands_refuse_too(tmp_path, capsys):
    """A command that ends with the common report (utility, via run_measure or report)."""
    o, p = tmp_path / "o.csv", tmp_path / "p.csv"
    frame = pl.DataFrame({"age": [1.0, 2.0, 3.0, 4.0, 5.0], "inc": [3.0, 1.0, 4.0, 1.0, 5.0]})
    frame.write_csv(o)
    frame.with_columns(pl.col("inc") + 0.5).write_csv(p)
    out = tmp_path / "u.json"
    before = _old_file(out)
    args = ["utility", str(o), str(p), "--variables", "age,inc", "--json", str(out), "--no-progress"]
    assert main(args) == 2 and f"--json: {out} {OLD}" in capsys.readouterr().err
    assert file_digest(out) == before
    assert main([*args, "--overwrite"]) == 0 and json.loads(out.read_text())["information_loss"]["n"] == 5


def test_assess_report_is_not_overwritten_silently(tmp_path, capsys):
    report = tmp_path / "report.html"
    before = _old_file(report)
    args = ["assess", str(TESTDATA), "--keys", SDC_KEYS, "--report", str(report), "--no-progress"]
    assert main(args) == 2 and f"--report: {report} {OLD}" in capsys.readouterr().err
    assert file_digest(report) == before
    assert main([*args, "--overwrite"]) == 0
    assert report.read_text().lstrip().lower().startswith("<!doctype html")


def test_protect_out_and_save_recipe(tmp_path, capsys):
    out, recipe = tmp_path / "out.csv", tmp_path / "recipe.json"
    base = ["suppress", str(TESTDATA), "--keys", SDC_KEYS, "--k", "2", "--no-progress"]
    assert main([*base, "--out", str(out), "--save-recipe", str(recipe)]) == 0
    first = file_digest(recipe)
    capsys.readouterr()
    out2 = tmp_path / "out2.csv"
    assert main([*base, "--out", str(out2), "--save-recipe", str(recipe)]) == 2
    assert f"--save-recipe: {recipe} {OLD}" in capsys.readouterr().err and not out2.exists()
    assert main([*base, "--out", str(out), "--save-recipe", str(tmp_path / "r2.json")]) == 2
    assert f"--out: {out} {OLD}" in capsys.readouterr().err
    assert main([*base, "--out", str(out), "--save-recipe", str(recipe), "--overwrite"]) == 0
    assert file_digest(recipe) == first  # the same deterministic steps, written again


def test_demo_run_twice_replaces_its_own_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-progress"]) == 0
    report = tmp_path / "sdckit-demo-report.html"
    first = report.read_text()
    capsys.readouterr()
    # the second run needs no option the user never typed: it replaces the first run's report, and says so
    assert main(["demo", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "replaces the report of an earlier sdckit demo" in out.out and "--report" not in out.err
    assert report.read_text() == first  # the same deterministic report, written again
    # another file of that name is kept: the report takes the next free name
    report.write_text("my own notes\n")
    assert main(["demo", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "sdckit-demo-report.html holds another file, left as it is" in out and "sdckit-demo-report-2.html" in out
    assert report.read_text() == "my own notes\n" and (tmp_path / "sdckit-demo-report-2.html").read_text() == first
    # a --report the user types follows the rule of every output: an existing file only with --overwrite
    assert main(["demo", "--no-progress", "--report", "sdckit-demo-report.html"]) == 2
    assert f"--report: sdckit-demo-report.html {OLD}" in capsys.readouterr().err
    assert report.read_text() == "my own notes\n"
    assert main(["demo", "--no-progress", "--report", "sdckit-demo-report.html", "--overwrite"]) == 0
    assert report.read_text() == first


# ----------------------------------------------------------------------------------------------
# no output may be an input, whatever the flags
# ----------------------------------------------------------------------------------------------
def _input_actions(parser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.dest in INPUTS + INPUT_ITEMS]


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    return "2" if action.type is not None else "a"


def _argv(parser, files: dict, testing: argparse.Action, tmp_path) -> list[str]:
    """The shortest command line that parses, naming the files of ``files`` (argument -> path)
    and ``testing`` among its inputs; required outputs go to files of their own."""
    argv: list[str] = []
    grouped = {a.dest: g for g in parser._mutually_exclusive_groups if g.required for a in g._group_actions}
    chosen = {}
    for g in {id(g): g for g in grouped.values()}.values():
        own = [a for a in g._group_actions if a.help != argparse.SUPPRESS]
        chosen[id(g)] = testing if testing in g._group_actions else own[0]
    for a in parser._actions:
        if a.dest == "help":
            continue
        if not a.option_strings:
            if a.nargs != "?" or a is testing:
                argv.append(files[a.dest] if a.dest in files else "a")
            continue
        in_group = grouped.get(a.dest)
        if a is testing or (in_group is not None and chosen[id(in_group)] is a) or a.required:
            flag = a.option_strings[0]
            if a.dest in OUTPUTS:
                argv += [flag, str(tmp_path / f"required-{a.dest}.out")]
            elif a.dest == "hierarchies":
                argv += [flag, f"a={files[a.dest]}"]
            elif a.dest == "steps":
                argv += [flag, f"recode:variables=a,hierarchy={files[a.dest]}"]
            elif a.dest in files:
                argv += [flag, files[a.dest]]
            else:
                argv += [flag, _value(a)]
    return argv


def _cases():
    for name, parser in _commands().items():
        outputs = [a for a in parser._actions if a.dest in OUTPUTS]
        for inp in _input_actions(parser):
            for out in outputs:
                yield pytest.param(name, inp.dest, out.dest, id=f"{name}-{inp.dest}-{out.dest}")


@pytest.mark.parametrize("command,input_dest,output_dest", list(_cases()))
def test_no_output_may_be_an_input(command, input_dest, output_dest, tmp_path, capsys):
    """Every command, every output option, pointed at each of the command's input files (the
    data, the synthetic and control files, recipes, scenario and hierarchy files, register
    samples, protected files): refused with and without --overwrite, the input unchanged."""
    parser = _commands()[command]
    testing = next(a for a in parser._actions if a.dest == input_dest)
    files = {}
    for a in _input_actions(parser):
        path = tmp_path / f"{a.dest}.csv"
        path.write_text(f"an input: {a.dest}\n")
        files[a.dest] = str(path)
    before = file_digest(Path(files[input_dest]))
    argv = _argv(parser, files, testing, tmp_path)
    out_flag = "--" + output_dest.replace("_", "-")
    if out_flag in argv:  # a required output: this time pointed at the input
        argv[argv.index(out_flag) + 1] = files[input_dest]
    else:
        argv += [out_flag, files[input_dest]]
    for extra in ([], ["--overwrite"]):
        assert main([command, *argv, *extra]) == 2, (command, argv)
        err = capsys.readouterr().err
        assert f"is the input file {input_dest}" in err, err
        assert file_digest(Path(files[input_dest])) == before


def test_every_command_with_input_files_is_covered():
    covered = {c.values[0] for c in _cases()}
    assert covered == set(_commands()) - {"app", "demo"}  # app writes no file; demo reads its bundled file only
    assert len(list(_cases())) >= 90


def test_an_undeclared_input_file_is_protected_too(tmp_path):
    """A command whose input argument is in no list (a new command that forgot it): any argument
    naming an existing file is an input, also after '=' in KEY=PATH items."""
    from sdckit.cli import check_output_paths

    lookup = tmp_path / "lookup.csv"
    lookup.write_text("a,b\n")
    for value in (str(lookup), f"key={lookup}", f"x=1,key={lookup}"):
        args = argparse.Namespace(command="new", lookup=value, json=str(lookup), overwrite=True)
        with pytest.raises(sdckit.SdcError, match="is the input file lookup"):
            check_output_paths(args)
    assert lookup.read_text() == "a,b\n"
    fine = argparse.Namespace(command="new", lookup=str(lookup), json=str(tmp_path / "new.json"), overwrite=True)
    check_output_paths(fine)


# ----------------------------------------------------------------------------------------------
# the Python writers
# ----------------------------------------------------------------------------------------------
PY_OLD = "already exists; expected a new file, or overwrite=True to replace it"


def _problem():
    df = pl.read_csv(TESTDATA)
    p = sdckit.SdcProblem(df, sdckit.Scenario(keys=SDC_KEYS.split(",")))
    return p.apply("local_suppression", k=2)


def test_to_recipe_refuses_an_existing_file(tmp_path):
    p = _problem()
    path = tmp_path / "r.json"
    before = _old_file(path)
    with pytest.raises(sdckit.SdcError, match=f"^path: .*r.json {PY_OLD}$"):
        p.to_recipe(path)
    assert file_digest(path) == before
    recipe = p.to_recipe(path, overwrite=True)
    assert json.loads(path.read_text())["steps"] == recipe["steps"]
    with pytest.raises(sdckit.SdcError, match="^overwrite: got 1; expected True or False$"):
        p.to_recipe(path, overwrite=1)


def test_report_html_refuses_an_existing_file(tmp_path):
    p = _problem()
    path = tmp_path / "report.html"
    before = _old_file(path)
    with pytest.raises(sdckit.SdcError, match=f"^path: .*report.html {PY_OLD}$"):
        p.report(path)
    result = sdckit.assess(pl.read_csv(TESTDATA), sdckit.Scenario(keys=SDC_KEYS.split(",")))
    with pytest.raises(sdckit.SdcError, match=PY_OLD):
        result.to_html(path)
    assert file_digest(path) == before
    assert result.to_html(path, overwrite=True) == path.read_text(encoding="utf-8")


def test_write_records_refuses_an_existing_file(tmp_path):
    from sdckit.io import write_records

    res = sdckit.frequencies(s002_table(), KEYS.split(","))
    path = tmp_path / "rec.csv"
    before = _old_file(path)
    with pytest.raises(sdckit.SdcError, match=PY_OLD):
        res.write_records(path)
    with pytest.raises(sdckit.SdcError, match=PY_OLD):
        write_records(res.to_frame(), path)
    assert file_digest(path) == before
    res.write_records(path, overwrite=True)
    assert pl.read_csv(path)["fk"].to_list() == res.fk.tolist()


# ----------------------------------------------------------------------------------------------
# one spelling per option
# ----------------------------------------------------------------------------------------------
#: options that name the same thing must be spelled the same way in every command
def test_options_are_spelled_with_dashes_only():
    for name, parser in _commands().items():
        for option in _options(parser):
            assert "_" not in option, f"{name} {option}"


def test_no_command_shows_an_old_spelling():
    old = {"--vars", "--variable", "--map", "--numeric", "--modrisk-method", "--scale"}
    for name, parser in _commands().items():
        visible = {o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
        assert visible & old == set(), name
        assert not (old & set(parser.format_help().split())), name


@pytest.mark.parametrize("command", ["utility", "linkage", "external", "interval"])
def test_variables_is_the_one_spelling(command):
    options = _options(_commands()[command])
    assert "--variables" in options and options["--vars"].help == argparse.SUPPRESS


def test_old_spelling_still_works_and_warns(tmp_path, capsys):
    o = tmp_path / "o.csv"
    pl.DataFrame({"inc": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]}).write_csv(o)
    new_out, old_out = tmp_path / "new.json", tmp_path / "old.json"
    assert main(["interval", str(o), "--variables", "inc", "--json", str(new_out), "--no-progress"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["interval", str(o), "--vars", "inc", "--json", str(old_out), "--no-progress"]) == 0
    assert "sdckit: warning: --vars is now called --variables" in capsys.readouterr().err
    new, old = json.loads(new_out.read_text()), json.loads(old_out.read_text())
    assert new == old


def test_missing_variables_names_the_new_option(tmp_path, capsys):
    o = tmp_path / "o.csv"
    pl.DataFrame({"inc": [1.0, 2.0]}).write_csv(o)
    assert main(["interval", str(o), "--no-progress"]) == 2
    assert "--variables: no variables given" in capsys.readouterr().err


def test_recode_old_spellings(tmp_path, capsys):
    base = ["recode", str(TESTDATA), "--keys", SDC_KEYS, "--no-progress"]
    mapping = "1=1,2=2,3=3,4=4,5=5,6=9,7=9,9=9"
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    assert main([*base, "--variables", "water", "--mapping", mapping, "--out", str(new)]) == 0
    capsys.readouterr()
    assert main([*base, "--variable", "water", "--map", mapping, "--out", str(old)]) == 0
    err = capsys.readouterr().err
    assert "--variable is now called --variables" in err and "--map is now called --mapping" in err
    assert pl.read_csv(new).equals(pl.read_csv(old))


@pytest.mark.parametrize(
    "recipe,message",
    [
        ("steps.txt", "--save-recipe: cannot write a recipe to steps.txt; expected a .yaml, .yml or .json file"),
        ("no_such_folder/r.json", "--save-recipe: directory"),
    ],
)
def test_a_recipe_that_cannot_be_written_stops_before_any_work(data_csv, tmp_path, recipe, message, capsys):
    # the protected file is not written when the recipe asked for cannot be: nothing half done
    out = tmp_path / "out.csv"
    argv = ["suppress", str(data_csv), "--keys", "Residence,Gender", "--k", "2", "--out", str(out)]
    assert main([*argv, "--save-recipe", str(tmp_path / recipe)]) != 0
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_yaml_recipe_without_pyyaml_stops_before_any_work(data_csv, tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "yaml", None)  # pyyaml not installed
    out = tmp_path / "out.csv"
    argv = ["suppress", str(data_csv), "--keys", "Residence,Gender", "--k", "2", "--out", str(out)]
    assert main([*argv, "--save-recipe", str(tmp_path / "r.yaml")]) != 0
    assert "--save-recipe: writing YAML needs pyyaml" in capsys.readouterr().err
    assert not out.exists()
