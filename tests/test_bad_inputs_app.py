"""Catalogue of bad and unusual inputs for ``sdckit app``: its command line, the names the page
writes files under, the requests its server receives, and values typed into its forms.

Each case is judged by properties:

* a command line that must not start the app ends in exit code 2 with a message naming the
  option, and the server is never started;
* a bad file name ends in an :class:`sdckit.SdcError` naming the file's kind, no file of the
  folder (and its parent) is created, changed or removed, the input file is unchanged, and the
  message holds no record value;
* a request that is not the app's own is refused (403, or 413 for a body over the limit) before
  the application sees it, and one that is reaches it;
* a value typed as ``sdckit protect --step`` or a form reads it gives the result written down
  (a code with a leading zero stays the text it is).

The expected outcome of every case is written down, so that a case that starts failing, or
starts passing where it must be refused, is caught.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import polars as pl
import pytest

import sdckit
from sdckit import registry
from sdckit.app import guard, model
from sdckit.cli import main

VALUES = {"Rzq-North", "Rzq-South", "Szq-f", "Szq-m", "1234.5678"}  # never in a message


def _data(folder: Path) -> Path:
    path = folder / "input.csv"
    rows = ["r,s,x"] + [f"Rzq-{'North' if i % 3 else 'South'},Szq-{'fm'[i % 2]},1234.5678" for i in range(12)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- the command line ------------------------------------------------------------------------------
def _taken_port() -> tuple[socket.socket, int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


COMMAND_LINE = [
    pytest.param(["--port", "0"], "--port: 0 is not a port; expected a number from 1 to 65535", id="port-zero"),
    pytest.param(["--port", "70000"], "--port: 70000 is not a port", id="port-too-large"),
    pytest.param(["--port", "-1"], "--port: -1 is not a port", id="port-negative"),
    pytest.param(["--port", "eighty"], "--port: invalid int value", id="port-not-a-number"),
    pytest.param(["--port", "{taken}"], "cannot listen on 127.0.0.1 port {taken}", id="port-taken"),
    pytest.param(["--host", ""], "--host: empty; expected an address", id="host-empty"),
    pytest.param(["--host", "[]"], "--host: empty; expected an address", id="host-empty-brackets"),
    pytest.param(["--host", "192.0.2.7"], "--host/--port: cannot listen on 192.0.2.7", id="host-not-this-machine"),
    pytest.param(["--host", "no-such-host.invalid"], "cannot listen on no-such-host.invalid", id="host-unknown-name"),
    pytest.param(["--host", "300.1.1.1"], "cannot listen on 300.1.1.1", id="host-bad-address"),
    pytest.param(["--max-upload", "0"], "--max-upload: got '0'; expected a size above 0", id="upload-zero"),
    pytest.param(["--max-upload=-5MB"], "--max-upload: got '-5MB'", id="upload-negative"),
    pytest.param(["--max-upload", "2XB"], "--max-upload: got '2XB'", id="upload-bad-unit"),
    pytest.param(["--max-upload", "inf"], "--max-upload: got 'inf'", id="upload-infinite"),
    pytest.param(["--max-upload", "nanGB"], "--max-upload: got 'nanGB'", id="upload-nan"),
    pytest.param(["--folder", "{missing}"], "--folder: {missing} is not an existing folder", id="folder-missing"),
    pytest.param(["--folder", "{data}"], "is not an existing folder", id="folder-is-a-file"),
    pytest.param(["{missing}/x.csv"], "data: file {missing}/x.csv does not exist", id="data-missing"),
]


@pytest.mark.parametrize("argv, message", COMMAND_LINE)
def test_bad_command_line(argv, message, tmp_path, monkeypatch, capsys):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the app must not start"))
    data = _data(tmp_path)
    before = _tree(tmp_path)
    held, port = _taken_port()
    fill = {"taken": str(port), "missing": str(tmp_path / "missing"), "data": str(data)}
    try:
        argv = [a.format(**fill) for a in argv]
        with pytest.raises(SystemExit) if "invalid int" in message else _no_exit():
            assert main(["app", *argv, "--no-browser"]) == 2
    finally:
        held.close()
    err = capsys.readouterr().err
    assert message.format(**fill) in err
    assert not VALUES & set(err.split()) and _tree(tmp_path) == before


class _no_exit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# -- the names the page writes under ---------------------------------------------------------------
EXPORT = [
    pytest.param({"data": "../protected.csv"}, "data: '../protected.csv' is not a file name", id="dotdot"),
    pytest.param({"data": "/tmp/protected.csv"}, "data: '/tmp/protected.csv' is not a file name", id="absolute"),
    pytest.param({"recipe": "sub/recipe.json"}, "recipe: 'sub/recipe.json' is not a file name", id="sub-folder"),
    pytest.param({"report": "..\\report.html"}, "is not a file name", id="backslash"),
    pytest.param({"script": ".."}, "script: '..' is not a file name", id="dotdot-alone"),
    pytest.param({"data": "input.csv"}, "data: input.csv is the loaded input file", id="the-input"),
    pytest.param({"data": "input.csv", "overwrite": True}, "is the loaded input file", id="the-input-replacing"),
    pytest.param({"data": "./input.csv"}, "is not a file name", id="the-input-dotted"),
    pytest.param({"data": "existing.csv"}, "data: {folder}/existing.csv already exists", id="existing"),
    pytest.param({"data": "a-folder"}, "data: a-folder is a folder; expected a file name", id="a-folder"),
    pytest.param({"data": "link-out.csv", "overwrite": True}, "leads outside the folder", id="link-out"),
    pytest.param({"report": "r.html", "external_report": "r.html"}, "r.html is also the report's name", id="same-name"),
    pytest.param({"recipe": "recipe.txt"}, "recipe: cannot write a recipe to recipe.txt", id="recipe-ext"),
    pytest.param({"script": "release.sh"}, "script: cannot write release.sh; expected a file ending in .py", id="py"),
    pytest.param({"report": "report.pdf"}, "report: cannot write report.pdf", id="report-ext"),
    pytest.param({"data": "protected.xlsx"}, "protected.xlsx", id="data-format"),
    pytest.param({"data": "", "recipe": "  "}, "export: no file named", id="nothing-named"),
]


@pytest.fixture
def folder(tmp_path):
    home = tmp_path / "release"
    home.mkdir()
    _data(home)
    (home / "existing.csv").write_text("mine\n")
    (home / "a-folder").mkdir()
    (home / "a-folder" / "keep.txt").write_text("keep\n")
    (tmp_path / "outside.csv").write_text("outside\n")
    (home / "link-out.csv").symlink_to(tmp_path / "outside.csv")
    return home


@pytest.mark.parametrize("names, message", EXPORT)
def test_bad_export_names(names, message, folder):
    source = folder / "input.csv"
    problem = sdckit.SdcProblem(sdckit.read_data(source), sdckit.Scenario(keys=["r", "s"]))
    problem.apply("local_suppression", k=3)
    before = _tree(folder.parent)
    overwrite = names.pop("overwrite", False)
    with pytest.raises(sdckit.SdcError) as info:
        model.export(problem, source, folder, **names, overwrite=overwrite)
    text = str(info.value)
    assert message.format(folder=folder) in text
    assert not any(v in text for v in VALUES)
    assert _tree(folder.parent) == before  # nothing written, changed or left behind


SCENARIO = [
    pytest.param("", "scenario: '' is not a file name", id="scenario-empty"),
    pytest.param("../scenario.json", "scenario: '../scenario.json' is not a file name", id="scenario-dotdot"),
    pytest.param("input.csv", "scenario: input.csv is the loaded input file", id="scenario-input"),
    pytest.param("scenario.txt", "cannot write a recipe to scenario.txt", id="scenario-ext"),
    pytest.param("existing.csv", "already exists", id="scenario-existing"),
]


@pytest.mark.parametrize("name, message", SCENARIO)
def test_bad_scenario_names(name, message, folder):
    before = _tree(folder.parent)
    with pytest.raises(sdckit.SdcError, match=None) as info:
        model.save_scenario(sdckit.Scenario(keys=["r"]), folder, name, inputs=(folder / "input.csv",))
    assert message in str(info.value) and _tree(folder.parent) == before


# -- the requests the server receives --------------------------------------------------------------
TOKEN, PORT = "T" * 43, 8765
OWN = f"127.0.0.1:{PORT}"
REQUESTS = [
    pytest.param({"host": OWN, "query": f"token={TOKEN}"}, 200, id="the-page"),
    pytest.param({"host": f"LOCALHOST:{PORT}", "cookie": f"sdckit-token-{PORT}={TOKEN}"}, 200, id="host-upper-case"),
    pytest.param({"host": f"127.0.0.1.:{PORT}", "query": f"token={TOKEN}"}, 403, id="host-trailing-dot"),
    pytest.param({"host": f"127.0.0.1:{PORT}0", "query": f"token={TOKEN}"}, 403, id="host-other-port"),
    pytest.param({"host": f"{OWN}@evil.example", "query": f"token={TOKEN}"}, 403, id="host-userinfo"),
    pytest.param({"query": f"token={TOKEN}"}, 403, id="host-missing"),
    pytest.param({"host": OWN, "query": f"token={TOKEN.lower()}"}, 403, id="token-other-case"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}x"}, 403, id="token-longer"),
    pytest.param({"host": OWN, "query": "token=%00"}, 403, id="token-nul"),
    pytest.param({"host": OWN, "cookie": "sdckit-token-8765"}, 403, id="cookie-without-value"),
    pytest.param({"host": OWN, "cookie": '"; sdckit-token-8765=;;'}, 403, id="cookie-malformed"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "origin": "http://evil.example"}, 403, id="origin-other"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "origin": f"http://{OWN}/x"}, 403, id="origin-with-path"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "origin": f"http://{OWN}"}, 200, id="origin-own"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "length": "12abc"}, 413, id="length-not-a-number"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "length": "-1"}, 413, id="length-negative"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "length": "101"}, 413, id="length-over-limit"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "length": "100"}, 200, id="length-at-limit"),
    pytest.param({"host": OWN, "query": f"token={TOKEN}", "websocket": True}, 101, id="websocket"),
    pytest.param({"host": "evil.example", "query": f"token={TOKEN}", "websocket": True}, 403, id="websocket-host"),
]


def _answer(request: dict) -> int:
    """The status the guard (upload limit 100 bytes) answers ``request`` with; 200 or 101 when
    it reaches the application."""
    sent: list[dict] = []

    async def app(scope, receive, send):
        sent.append({"type": "reached"})

    headers = [(b"host", request["host"].encode())] if "host" in request else []
    for name in ("cookie", "origin"):
        if name in request:
            headers.append((name.encode(), request[name].encode()))
    if "length" in request:
        headers.append((b"content-length", request["length"].encode()))
    kind = "websocket" if request.get("websocket") else "http"
    scope = {"type": kind, "headers": headers, "query_string": request.get("query", "").encode()}

    async def receive():
        return {"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    asyncio.run(guard.Guard(app, token=TOKEN, port=PORT, max_upload=100)(scope, receive, send))
    if sent[0]["type"] == "reached":
        return 101 if kind == "websocket" else 200
    if sent[0]["type"] == "websocket.close":
        return 403
    return sent[0]["status"]


@pytest.mark.parametrize("request_, status", REQUESTS)
def test_requests(request_, status):
    assert _answer(request_) == status


# -- values typed as the command line reads them -----------------------------------------------------
def test_leading_zero_codes_recode_from_the_command_line(tmp_path, capsys):
    data = tmp_path / "codes.csv"
    data.write_text("x,y\n01,a\n02,b\n1,c\n01,d\n007,e\n")
    before = data.read_bytes()
    out = tmp_path / "out.csv"
    step = "global_recode:variables=x,mapping=01=A;02=A;1=B;007=C"
    assert main(["protect", str(data), "--keys", "x", "--step", step, "--out", str(out)]) == 0
    assert pl.read_csv(out, infer_schema=False)["x"].to_list() == ["A", "A", "B", "A", "C"]
    assert data.read_bytes() == before


TYPED = [
    pytest.param("01=A;02=A", {"01": "A", "02": "A"}, id="leading-zero"),
    pytest.param("007=x;7=y", {"007": "x", 7: "y"}, id="leading-zeros-beside-the-number"),
    pytest.param("1=01", {1: "01"}, id="leading-zero-new-code"),
    pytest.param("+1=a;1_000=b", {"+1": "a", "1_000": "b"}, id="signs-and-underscores-stay-text"),
    pytest.param("-01=a;0=b;0.5=c", {"-01": "a", 0: "b", 0.5: "c"}, id="zero-and-decimals"),
    pytest.param("inf=a;nan=b", {"inf": "a", "nan": "b"}, id="inf-and-nan-stay-text"),
]


@pytest.mark.parametrize("text, mapping", TYPED)
def test_mappings_typed_in_a_form(text, mapping):
    decl = registry.get("global_recode")
    got = model.parameters_from_form(decl, {"variables": ["x"], "mapping": text})
    assert got == {"variables": ["x"], "mapping": mapping}
    assert [type(k) for k in got["mapping"]] == [type(k) for k in mapping]
