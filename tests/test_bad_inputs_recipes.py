"""Catalogue of bad and unusual recipe, scenario and hierarchy files (issue 36, points 8 to 10).

Each case writes its files into a fresh folder and runs one call, in a child process with a
time ceiling and a memory ceiling (an alias bomb or a deep nesting must not take minutes or
gigabytes), through the Python workflow (``SdcProblem.from_recipe``, ``global_recode``) or the
command line (``sdckit protect --recipe``, ``sdckit assess --config``). Every case is judged by:

* its expected outcome, written down: ``ok`` (and then the protected file is written and, where
  a file named by the recipe is read, equal to the same recipe replayed from clean files) or an
  :class:`sdckit.SdcError` whose message holds the given fragments, names the file at fault and
  no record value or category label;
* no traceback, on stderr or in the message;
* the input files unchanged, and nothing written on an error (no protected file, no recipe);
* bounded time and memory (the child is killed past the ceilings, which fails the case).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

#: the ceilings of one case: generous, so that a loaded machine does not fail a good case
SECONDS = 240
MEMORY = 4 * 2**30

REGIONS = ["Ravenshire", "Lowmarsh", "Highcombe", "Eastbrook"]
JOBS = ["Tinsmith", "Wheelwright", "Cooper"]
#: the record values and category labels that must never be in a message
LABELS = set(REGIONS) | set(JOBS) | {"North", "South", "Everywhere"}

HIERARCHY = "Ravenshire;North;*\nLowmarsh;North;*\nHighcombe;South;*\nEastbrook;South;*\n"
SCENARIO = {"keys": ["region", "job", "sex"]}
RECODE = {"method": "global_recode", "parameters": {"variables": ["region"], "hierarchy": "h.csv", "level": 1}}
SUPPRESS = {"method": "local_suppression", "parameters": {"k": 2}}


def _data_csv() -> str:
    rows = ["region,job,sex,income"]
    for i in range(40):
        rows.append(f"{REGIONS[i % 4]},{JOBS[i % 3]},{1 + i % 2},{1000 + 37 * i}")
    return "\n".join(rows) + "\n"


def _recipe(*steps, **extra) -> dict:
    return {"sdckit_recipe": 1, "scenario": SCENARIO, "steps": list(steps), **extra}


def _json(obj) -> bytes:
    return json.dumps(obj).encode("utf-8")


def _yaml(obj) -> bytes:
    import yaml

    return yaml.safe_dump(obj, sort_keys=False).encode("utf-8")


def _sha(text: str) -> dict:
    raw = text.encode("utf-8")
    return {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}


# ----------------------------------------------------------------------------------------------
# the bad files
# ----------------------------------------------------------------------------------------------
def alias_bomb() -> bytes:
    """Nine levels of nine aliases each: 9^9 (387 million) values from 352 bytes."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return ("\n".join(lines) + "\nsteps: []\n").encode("ascii")


def alias_bomb_in_parameters() -> bytes:
    """The bomb hidden in a step's parameters: 9^8 (43 million) values of ``importance``."""
    anchors = ["&x0 [1,2,3,4,5,6,7,8,9]"] + [f"&x{i} [" + ",".join([f"*x{i - 1}"] * 9) + "]" for i in range(1, 8)]
    items = "\n".join(f"    - {a}" for a in anchors)
    return (
        "scenario: {keys: [region, job, sex]}\nsteps:\n- method: local_suppression\n"
        f"  parameters:\n    k: 2\n    importance:\n{items}\n"
    ).encode("ascii")


def alias_chain() -> bytes:
    """200 anchors, each a list holding the one before: 200 levels deep once expanded, from a
    text nested two levels deep."""
    lines = ["c0: &c0 [1]"] + [f"c{i}: &c{i} [*c{i - 1}]" for i in range(1, 200)]
    return ("\n".join(lines) + "\nsteps: []\n").encode("ascii")


def yaml_aliases_of_a_written_recipe() -> bytes:
    """A recipe with a few anchors and aliases, as a YAML dumper writes a list shared by two
    places (legitimate: replays)."""
    return (
        b"sdckit_recipe: 1\nscenario:\n  keys: &keys [region, job, sex]\nsteps:\n"
        b"- method: local_suppression\n  parameters: {k: 2, keys: *keys}\n"
    )


def _huge_recipe() -> bytes:
    pad = b"# " + b"x" * 1000 + b"\n"
    return _yaml(_recipe(SUPPRESS)) + pad * (17 * 1024)


def _many_values() -> bytes:
    return _json(_recipe({"method": "local_suppression", "parameters": {"k": 2, "importance": [0] * 1_100_000}}))


def _deep_json() -> bytes:
    return b'{"steps": [' + b"[" * 10_000 + b"]" * 10_000 + b"]}"


def _deep_yaml_flow() -> bytes:
    return b"steps: " + b"[" * 10_000 + b"]" * 10_000 + b"\n"


def _deep_yaml_mapping() -> bytes:
    return b"steps: []\nscenario: " + b"{a: " * 10_000 + b"1" + b"}" * 10_000 + b"\n"


def _latin1_recipe() -> bytes:
    text = "# recette écrite à la main\n" + _yaml(_recipe(SUPPRESS)).decode("utf-8")
    return text.encode("latin-1")


def _utf16(text: bytes, bom: bool = True) -> bytes:
    return text.decode("utf-8").encode("utf-16" if bom else "utf-16-le")


# ----------------------------------------------------------------------------------------------
# the cases: (files, action, expected)
#   files: {name: bytes}, written into the case's folder beside data.csv
#   action: ("python", recipe file) = SdcProblem.from_recipe(...).write("out.csv");
#           ("hierarchy", file) = global_recode(data, hierarchy=file, level=1) written to out.csv;
#           ("cli", [arguments]) = sdckit ... (data.csv, out.csv and names relative to the folder)
#   expected: "ok", or the fragments of the error message (the first names the file or field)
# ----------------------------------------------------------------------------------------------
def _protect(recipe: str) -> tuple:
    return ("cli", ["protect", "data.csv", "--recipe", recipe, "--out", "out.csv", "--save-recipe", "saved.yaml"])


def _assess(config: str) -> tuple:
    return ("cli", ["assess", "data.csv", "--config", config, "--report", "out.html"])


def _changed_hierarchy() -> dict:
    recipe = _recipe(RECODE, SUPPRESS, files={"h.csv": _sha(HIERARCHY)})
    return {"r.yaml": _yaml(recipe), "h.csv": HIERARCHY.replace("Eastbrook;South", "Eastbrook;North").encode()}


def _same_size_changed() -> dict:
    recipe = _recipe(RECODE, files={"h.csv": _sha(HIERARCHY)})
    return {"r.json": _json(recipe), "h.csv": HIERARCHY.replace("South", "Sowth").encode()}


def _recipe_in_sub_folder() -> dict:
    """A recipe in sub/, naming sub/h.csv as h.csv: read beside the recipe, not from the
    current folder (where an h.csv of other content lies)."""
    recipe = _recipe(RECODE, files={"h.csv": _sha(HIERARCHY)})
    return {"sub/r.yaml": _yaml(recipe), "sub/h.csv": HIERARCHY.encode(), "h.csv": b"Ravenshire;Everywhere;*\n"}


CASES = [
    # -- alias bombs and nesting (point 9, 10) --
    pytest.param(
        {"bomb.yaml": alias_bomb()},
        ("python", "bomb.yaml"),
        ["bomb.yaml", "1,000,000 values", "aliases"],
        id="alias-bomb-python",
    ),
    pytest.param(
        {"bomb.yaml": alias_bomb()}, _protect("bomb.yaml"), ["recipe: bomb.yaml", "aliases"], id="alias-bomb-cli"
    ),
    pytest.param(
        {"bomb.yaml": alias_bomb_in_parameters()},
        ("python", "bomb.yaml"),
        ["bomb.yaml", "aliases"],
        id="alias-bomb-in-parameters",
    ),
    pytest.param(
        {"sc.yaml": alias_bomb()}, _assess("sc.yaml"), ["--config", "sc.yaml", "aliases"], id="alias-bomb-scenario-file"
    ),
    pytest.param(
        {"loop.yaml": b"steps: &s [*s]\n"},
        ("python", "loop.yaml"),
        ["loop.yaml", "alias inside its own anchor"],
        id="recursive-alias",
    ),
    pytest.param(
        {"chain.yaml": alias_chain()},
        ("python", "chain.yaml"),
        ["chain.yaml", "nested more than 64 levels"],
        id="alias-chain-deep-once-expanded",
    ),
    pytest.param(
        {"deep.json": _deep_json()},
        ("python", "deep.json"),
        ["deep.json", "nested more than 64 levels"],
        id="json-nested-10000",
    ),
    pytest.param(
        {"deep.json": _deep_json()},
        _protect("deep.json"),
        ["recipe: deep.json", "nested"],
        id="json-nested-10000-cli",
    ),
    pytest.param(
        {"deep.yaml": _deep_yaml_flow()},
        ("python", "deep.yaml"),
        ["deep.yaml", "nested more than 64 levels"],
        id="yaml-flow-nested-10000",
    ),
    pytest.param(
        {"deep.yaml": _deep_yaml_mapping()},
        _assess("deep.yaml"),
        ["--config", "deep.yaml", "nested"],
        id="yaml-mapping-nested-10000-scenario",
    ),
    pytest.param(
        {"big.yaml": _huge_recipe()},
        ("python", "big.yaml"),
        ["big.yaml", "larger than 16,777,216 bytes"],
        id="recipe-over-16-mib",
    ),
    pytest.param(
        {"many.json": _many_values()},
        ("python", "many.json"),
        ["many.json", "more than 1,000,000 values"],
        id="json-over-a-million-values",
    ),
    # -- encodings (point 10) --
    pytest.param(
        {"latin.yaml": _latin1_recipe()},
        ("python", "latin.yaml"),
        ["latin.yaml", "not UTF-8", "Latin-1"],
        id="recipe-latin-1",
    ),
    pytest.param(
        {"latin.yaml": _latin1_recipe()},
        _assess("latin.yaml"),
        ["--config", "latin.yaml", "not UTF-8"],
        id="scenario-latin-1",
    ),
    pytest.param(
        {"r16.json": _utf16(_json(_recipe(SUPPRESS)))},
        ("python", "r16.json"),
        ["r16.json", "UTF-16", "expected UTF-8"],
        id="recipe-utf-16-bom",
    ),
    pytest.param(
        {"r32.yaml": _yaml(_recipe(SUPPRESS)).decode().encode("utf-32")},
        ("python", "r32.yaml"),
        ["r32.yaml", "UTF-32"],
        id="recipe-utf-32-bom",
    ),
    pytest.param(
        {"r16.yaml": _utf16(_yaml(_recipe(SUPPRESS)), bom=False)},
        ("python", "r16.yaml"),
        ["r16.yaml", "NUL", "UTF-16"],
        id="recipe-utf-16-without-bom",
    ),
    pytest.param(
        {"bom.yaml": codecs.BOM_UTF8 + _yaml(_recipe(SUPPRESS))},
        ("python", "bom.yaml"),
        "ok",
        id="recipe-utf-8-bom-accepted",
    ),
    pytest.param(
        {"h.csv": HIERARCHY.encode("latin-1").replace(b"Lowmarsh", b"L\xf6wmarsh")},
        ("hierarchy", "h.csv"),
        ["hierarchy", "h.csv", "not UTF-8"],
        id="hierarchy-latin-1",
    ),
    pytest.param(
        {"h.csv": HIERARCHY.encode("utf-16-le")},
        ("hierarchy", "h.csv"),
        ["hierarchy", "h.csv", "NUL"],
        id="hierarchy-utf-16-without-bom",
    ),
    pytest.param({"h.csv": HIERARCHY.encode("utf-16")}, ("hierarchy", "h.csv"), "ok", id="hierarchy-utf-16-bom-read"),
    pytest.param(
        {"h.csv": codecs.BOM_UTF8 + HIERARCHY.encode()}, ("hierarchy", "h.csv"), "ok", id="hierarchy-utf-8-bom-read"
    ),
    pytest.param(
        {"h.csv": b"\xff\xfe" + b"\x00\xd8" + b"\x00\x00"},
        ("hierarchy", "h.csv"),
        ["hierarchy", "h.csv", "byte-order mark but byte"],
        id="hierarchy-broken-utf-16",
    ),
    # -- files a recipe names (point 8) --
    pytest.param(
        {"r.yaml": _yaml(_recipe(RECODE))},
        ("python", "r.yaml"),
        ["step 1 (global_recode): hierarchy", "h.csv", "does not exist"],
        id="named-file-missing",
    ),
    pytest.param(
        {"r.yaml": _yaml(_recipe(RECODE))},
        _protect("r.yaml"),
        ["step 1 (global_recode)", "h.csv", "does not exist"],
        id="named-file-missing-cli",
    ),
    pytest.param(
        _changed_hierarchy(),
        ("python", "r.yaml"),
        ["hierarchy", "h.csv", "has changed since the recipe was written", "bytes"],
        id="named-file-changed",
    ),
    pytest.param(_changed_hierarchy(), _protect("r.yaml"), ["h.csv", "has changed"], id="named-file-changed-cli"),
    pytest.param(
        _same_size_changed(),
        ("python", "r.json"),
        ["h.csv", "has changed", "the same size"],
        id="named-file-changed-same-size",
    ),
    pytest.param(_recipe_in_sub_folder(), ("python", "sub/r.yaml"), "ok", id="named-file-beside-the-recipe"),
    pytest.param(
        {"r.yaml": _yaml(_recipe(RECODE, files={"h.csv": {"sha256": "abc"}})), "h.csv": HIERARCHY.encode()},
        ("python", "r.yaml"),
        ["recipe: files", "64 hexadecimal"],
        id="files-entry-malformed",
    ),
    pytest.param(
        {"r.yaml": _yaml(_recipe(RECODE)), "h.csv": HIERARCHY.encode()},
        ("python", "r.yaml"),
        "ok",
        id="named-file-without-checksum-old-recipe",
    ),
    # -- structure, methods, parameters, types --
    pytest.param(
        {"r.yaml": _yaml(_recipe({"method": "shuffle_everything"}))},
        ("python", "r.yaml"),
        ["step 1", "unknown method"],
        id="unknown-method",
    ),
    pytest.param(
        {"r.yaml": _yaml(_recipe({"method": "local_suppression", "parameters": {"k": 2, "kk": 3}}))},
        ("python", "r.yaml"),
        ["kk"],
        id="unknown-parameter",
    ),
    pytest.param(
        {"r.json": _json(_recipe({"method": "local_suppression", "parameters": {"k": "three"}}))},
        ("python", "r.json"),
        ["step 1 (local_suppression)", "k:"],
        id="parameter-of-wrong-type",
    ),
    pytest.param(
        {"r.json": _json(_recipe({"method": "local_suppression", "parameters": [2]}))},
        ("python", "r.json"),
        ["step 1 parameters must be a mapping"],
        id="parameters-not-a-mapping",
    ),
    pytest.param(
        {"r.yaml": b"steps: {k: 2}\n"}, ("python", "r.yaml"), ["recipe", "list of 'steps'"], id="steps-not-a-list"
    ),
    pytest.param(
        {"r.yaml": b"- local_suppression\n"},
        ("python", "r.yaml"),
        ["r.yaml", "does not hold a mapping"],
        id="recipe-a-list",
    ),
    pytest.param(
        {"r.yaml": b"steps: [\n  - {method: pram\n"},
        ("python", "r.yaml"),
        ["r.yaml", "not valid YAML"],
        id="yaml-syntax-error",
    ),
    pytest.param(
        {"r.json": b'{"steps": [}'}, _protect("r.json"), ["r.json", "not valid JSON"], id="json-syntax-error-cli"
    ),
    pytest.param(
        {"r.yaml": _yaml({**_recipe(SUPPRESS), "sdckit_recipe": 99})},
        ("python", "r.yaml"),
        ["sdckit_recipe", "99", "not supported"],
        id="newer-format-version",
    ),
    pytest.param(
        {"r.yaml": _yaml({**_recipe(SUPPRESS), "scenario": {"keys": ["region"], "colour": "red"}})},
        ("python", "r.yaml"),
        ["scenario", "colour"],
        id="scenario-unknown-role",
    ),
    pytest.param(
        {"sc.json": _json({"keys": ["region"], "weigth": "w"})},
        _assess("sc.json"),
        ["--config", "weigth"],
        id="scenario-file-unknown-role",
    ),
    pytest.param({}, ("python", "absent.yaml"), ["absent.yaml", "does not exist"], id="recipe-file-missing"),
    pytest.param(
        {"r.yaml": _yaml(_recipe(SUPPRESS, row_order={"order": "shuffled"}))},
        ("python", "r.yaml"),
        ["row_order"],
        id="row-order-unknown",
    ),
    pytest.param({"r.yaml": yaml_aliases_of_a_written_recipe()}, ("python", "r.yaml"), "ok", id="few-aliases-accepted"),
]

#: the cases run in a child process with the memory ceiling (the others in this process, with
#: the time ceiling): those whose unbounded reading would take minutes or gigabytes
CHILD = {
    "alias-bomb-python",
    "alias-bomb-cli",
    "alias-bomb-in-parameters",
    "alias-bomb-scenario-file",
    "recursive-alias",
    "alias-chain-deep-once-expanded",
    "json-nested-10000",
    "yaml-flow-nested-10000",
    "yaml-mapping-nested-10000-scenario",
    "recipe-over-16-mib",
    "json-over-a-million-values",
}

CHILD_RUNNER = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
from test_bad_inputs_recipes import perform
print(json.dumps(perform(*json.loads(sys.argv[1]))))
"""


def perform(kind: str, target) -> dict:
    """Run one action in the current folder: its outcome (``ok``, ``error`` with the message,
    or ``cli-error`` with the exit code) and the warnings it gave."""
    import io
    import warnings
    from contextlib import redirect_stderr

    import polars as pl

    import sdckit
    from sdckit.cli import main

    out: dict = {"outcome": "ok", "message": ""}
    stderr = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stderr(stderr):
        warnings.simplefilter("always")
        try:
            if kind == "cli":
                if main(target) != 0:
                    line = [ln for ln in stderr.getvalue().splitlines() if ln.startswith("sdckit: error: ")]
                    out = {"outcome": "error", "message": line[0].removeprefix("sdckit: error: ") if line else ""}
            elif kind == "python":
                sdckit.SdcProblem.from_recipe(pl.read_csv("data.csv"), target).write("out.csv")
            else:
                res = sdckit.global_recode(pl.read_csv("data.csv"), variables=["region"], hierarchy=target, level=1)
                res.data.write_csv("out.csv")
        except sdckit.SdcError as exc:
            out = {"outcome": "error", "message": str(exc)}
    out["warnings"] = [str(w.message) for w in caught]
    out["stderr"] = stderr.getvalue()
    return out


def _snapshot(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def _run(folder: Path, action, child: bool, monkeypatch) -> dict:
    """``perform`` in a child process (memory and time ceilings) or here (time ceiling)."""
    import os
    import time

    if not child:
        monkeypatch.chdir(folder)
        start = time.monotonic()
        result = perform(*action)
        assert time.monotonic() - start < SECONDS
        return result
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD_RUNNER.format(memory=MEMORY), json.dumps(action)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=SECONDS,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("files", "action", "expected"), CASES)
def test_bad_file(files, action, expected, tmp_path, request, monkeypatch):
    (tmp_path / "data.csv").write_text(_data_csv(), encoding="utf-8")
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    before = _snapshot(tmp_path)
    result = _run(tmp_path, action, request.node.callspec.id in CHILD, monkeypatch)
    assert "Traceback" not in result["stderr"]
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if k in before} == before  # the inputs unchanged
    if expected == "ok":
        assert result["outcome"] == "ok", result
        assert "out.csv" in after
        return
    assert result["outcome"] == "error", result
    message = result["message"]
    for fragment in expected:
        assert fragment in message, (fragment, message)
    assert not [label for label in LABELS if label in message], message
    assert "Traceback" not in message
    assert set(after) == set(before)  # nothing written: no protected file, no recipe, no report


def test_a_recipe_without_checksums_replays_with_a_note(tmp_path, monkeypatch):
    """An earlier sdckit's recipe (no ``files`` entry) replays, the hierarchy read beside it,
    with a warning that no checksum was checked; the same recipe written again records one."""
    (tmp_path / "data.csv").write_text(_data_csv(), encoding="utf-8")
    (tmp_path / "r.yaml").write_bytes(_yaml(_recipe(RECODE)))
    (tmp_path / "h.csv").write_text(HIERARCHY, encoding="utf-8")
    result = _run(tmp_path, ("python", "r.yaml"), False, monkeypatch)
    assert result["outcome"] == "ok"
    assert any("records no checksum of file h.csv" in w for w in result["warnings"]), result


def test_catalogue_size():
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)
