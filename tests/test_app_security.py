"""``sdckit app``'s server refuses what is not its own page, and writes only where it may.

The server is started as a user starts it (``sdckit app DATA --folder F``) and probed with
plain HTTP (``http.client``) and raw WebSocket handshakes: without the token, with a wrong
token, from another website (``Origin``), to another host name (``Host``, the DNS-rebinding
attack) every request and WebSocket connection is refused with 403; the printed address with
its token is accepted and sets a cookie for the rest of the session; an upload over the limit is
refused with 413 and a message. The export's rules (only into the folder, never over the input,
an existing file only when replacing is ticked, a killed export leaving only a folder named
incomplete) are checked on the functions the page calls; the browser tests check the page's
legitimate flow with the token.
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import sdckit
from sdckit._errors import Cancelled
from sdckit.app import free_port, guard, model
from sdckit.datasets import EXAMPLE_KEYS, example_path
from test_app_browser import start_server

LIMIT = 1000  # bytes: the upload limit of the server under test


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module: its port, token, folder and input file."""
    tmp = tmp_path_factory.mktemp("app-security")
    data = tmp / "survey.csv"
    shutil.copy(example_path(), data)
    port = free_port()
    proc = start_server(
        str(data), "--port", str(port), "--folder", str(tmp), "--max-upload", str(LIMIT), tmp=tmp / "server-tmp"
    )
    url = proc.url()
    token = urlsplit(url).query.split("token=", 1)[1]
    yield {"port": port, "token": token, "folder": tmp, "data": data, "url": url, "proc": proc}
    proc.stop()


def _request(server, path="/", *, host=None, headers=None, method="GET", body=None):
    """One HTTP request to the server: (status, headers, body text)."""
    conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=120)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server['port']}")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None and not {"Content-Length", "Transfer-Encoding"} & set(headers or {}):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _cookie(server, token=None, port=None) -> dict:
    return {"Cookie": f"sdckit-token-{port or server['port']}={token or server['token']}"}


def _websocket(server, *, host=None, origin="own", headers=None, path="/websocket/") -> int:
    """The HTTP status of a raw WebSocket handshake (101: opened)."""
    own = f"127.0.0.1:{server['port']}"
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host if host is not None else own}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {'http://' + own if origin == 'own' else origin}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    with socket.create_connection(("127.0.0.1", server["port"]), timeout=120) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1])


# -- the token ---------------------------------------------------------------------------------
def test_the_printed_address_is_local_and_carries_a_random_token(server):
    parts = urlsplit(server["url"])
    assert (parts.hostname, parts.port, parts.path) == ("127.0.0.1", server["port"], "/")
    assert len(server["token"]) >= 40  # 32 random bytes, URL-safe


def test_no_token_and_a_wrong_token_are_refused(server):
    status, _, text = _request(server, "/")
    assert status == 403 and "no token" in text
    wrong = server["token"][:-1] + ("A" if server["token"][-1] != "A" else "B")
    assert _request(server, f"/?token={wrong}")[0] == 403
    assert _request(server, "/?token=")[0] == 403
    assert _request(server, "/", headers=_cookie(server, token=wrong))[0] == 403
    # the cookie of another port's app is not this app's
    assert _request(server, "/", headers=_cookie(server, port=server["port"] + 1))[0] == 403
    # every path, not only the page: Shiny's assets and a session's download
    assert _request(server, "/shared/jquery/jquery-3.6.0.min.js")[0] == 403
    assert _request(server, "/session/0/download/download_data")[0] == 403


def test_the_right_token_is_accepted_and_sets_a_strict_cookie(server):
    status, headers, text = _request(server, f"/?token={server['token']}")
    assert status == 200 and "sdckit" in text
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"sdckit-token-{server['port']}={server['token']};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    # with the cookie, the page and its assets load without the token in the address
    assert _request(server, "/", headers=_cookie(server))[0] == 200
    asset = "/" + re.search(r'<script src="([^"]+\.js)"', text).group(1).lstrip("/")
    assert _request(server, asset, headers=_cookie(server))[0] == 200
    assert _request(server, asset)[0] == 403
    # the loopback names of this machine are the app's own
    for host in (f"localhost:{server['port']}", f"[::1]:{server['port']}"):
        assert _request(server, "/", host=host, headers=_cookie(server))[0] == 200


# -- Host and Origin ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host",
    [
        "attacker.example:{port}",  # DNS rebinding: another site's name pointing at 127.0.0.1
        "attacker.example",
        "127.0.0.1:{other}",
        "127.0.0.1",
        "localhost.attacker.example:{port}",
        "",
    ],
)
def test_a_forged_host_is_refused_even_with_the_token(server, host):
    host = host.format(port=server["port"], other=server["port"] + 1)
    status, _, text = _request(server, f"/?token={server['token']}", host=host)
    assert status == 403 and "Host" in text
    assert _websocket(server, host=host, headers=_cookie(server)) == 403


@pytest.mark.parametrize(
    "origin", ["http://attacker.example", "null", "http://127.0.0.1:{other}", "https://127.0.0.1:{port}"]
)
def test_a_request_from_another_website_is_refused_even_with_the_cookie(server, origin):
    origin = origin.format(port=server["port"], other=server["port"] + 1)
    status, _, text = _request(server, "/", headers={**_cookie(server), "Origin": origin})
    assert status == 403 and "another website" in text
    body = b"x" * 10
    upload = _request(
        server, "/session/0/upload/0", method="POST", body=body, headers={**_cookie(server), "Origin": origin}
    )
    assert upload[0] == 403
    assert _websocket(server, origin=origin, headers=_cookie(server)) == 403


def test_the_websocket_opens_only_with_the_token_and_the_apps_origin(server):
    assert _websocket(server, headers=_cookie(server)) == 101
    assert _websocket(server, path=f"/websocket/?token={server['token']}") == 101
    assert _websocket(server) == 403  # no token
    assert _websocket(server, headers=_cookie(server, token="x" * 43)) == 403  # a wrong one
    own = f"http://127.0.0.1:{server['port']}"
    assert _request(server, "/", headers={**_cookie(server), "Origin": own})[0] == 200


# -- the upload limit ----------------------------------------------------------------------------
def test_an_upload_over_the_limit_is_refused_with_a_message(server):
    cookie = _cookie(server)
    status, _, text = _request(server, "/session/0/upload/0", method="POST", body=b"x" * (LIMIT + 1), headers=cookie)
    assert status == 413 and "larger than the upload limit of 1 kB" in text and "--max-upload" in text
    # told by its length before it is sent: refused without reading it
    told = {**cookie, "Content-Length": str(10**12)}
    assert _request(server, "/session/0/upload/0", method="POST", body=b"", headers=told)[0] == 413
    chunked = {**cookie, "Transfer-Encoding": "chunked"}
    status, _, text = _request(
        server, "/session/0/upload/0", method="POST", body=b"5\r\nxxxxx\r\n0\r\n\r\n", headers=chunked
    )
    assert status == 413 and "Content-Length" in text
    # within the limit the request reaches the app (which knows no session 0)
    status, _, _ = _request(server, "/session/0/upload/0", method="POST", body=b"x" * LIMIT, headers=cookie)
    assert status not in (403, 413)


def test_the_streamed_body_is_counted_too():
    """Behind a server that gives no length, the body is cut at the limit (the app sees the
    client gone)."""
    import asyncio

    seen = []

    async def app(scope, receive, send):
        while True:
            message = await receive()
            seen.append(message["type"])
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                return

    gate = guard.Guard(app, token="t", port=1, max_upload=10)
    chunks = iter([{"type": "http.request", "body": b"x" * 6, "more_body": True}] * 3)

    async def receive():
        return next(chunks)

    async def send(message):
        raise AssertionError("the app answered nothing")

    scope = {"type": "http", "headers": [(b"host", b"127.0.0.1:1")], "query_string": b"token=t"}
    asyncio.run(gate(scope, receive, send))
    assert seen == ["http.request", "http.disconnect"]


def test_the_log_holds_no_request_line_and_no_record_value(server):
    _request(server, f"/?token={server['token']}")
    _request(server, "/?token=wrong")
    time.sleep(0.5)  # the last refusal's line reaches the pipe
    lines = [line for line in server["proc"].output().splitlines() if line.strip()]
    assert lines and all(line.startswith("sdckit app: ") for line in lines), lines
    assert sum(server["token"] in line for line in lines) == 1  # the address printed at start, once
    assert not any("GET /" in line or "token=wrong" in line for line in lines)


# -- where the app writes ------------------------------------------------------------------------
@pytest.fixture
def release(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    source = folder / "survey.csv"
    shutil.copy(example_path(), source)
    problem = sdckit.SdcProblem(sdckit.read_data(source), sdckit.Scenario(keys=list(EXAMPLE_KEYS)))
    problem.apply("local_suppression", k=3)
    return problem, source, folder


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_export_naming_the_input_is_refused_whatever_the_choice(release, tmp_path):
    problem, source, folder = release
    before = _tree(folder)
    (folder / "same.csv").hardlink_to(source)  # another name of the same file
    (folder / "link.csv").symlink_to(source)
    for name in ("survey.csv", " survey.csv ", "same.csv", "link.csv"):
        for overwrite in (False, True):
            with pytest.raises(sdckit.SdcError, match="is the loaded input file"):
                model.export(problem, source, folder, data=name, overwrite=overwrite)
    # also as the recipe, the report, the script, and as the scenario
    for kind, name in (("recipe", "link.csv"), ("report", "survey.csv"), ("script", "same.csv")):
        with pytest.raises(sdckit.SdcError, match=f"^{kind}: .* is the loaded input file"):
            model.export(problem, source, folder, **{kind: name}, overwrite=True)
    with pytest.raises(sdckit.SdcError, match="^scenario: survey.csv is the loaded input file"):
        model.save_scenario(problem.scenario, folder, "survey.csv", overwrite=True, inputs=(source,))
    (folder / "same.csv").unlink()
    (folder / "link.csv").unlink()
    assert _tree(folder) == before


@pytest.mark.parametrize(
    "name",
    ["../protected.csv", "sub/protected.csv", "..", ".", "/tmp/protected.csv", "..\\protected.csv", "a\0b.csv"],
)
def test_an_export_outside_the_folder_is_refused(release, name):
    problem, source, folder = release
    before = _tree(folder.parent)
    with pytest.raises(sdckit.SdcError, match=r"^data: .* is not a file name; expected the name of a file in the"):
        model.export(problem, source, folder, data=name, recipe="recipe.json", overwrite=True)
    with pytest.raises(sdckit.SdcError, match="^script: .* is not a file name"):
        model.export(problem, source, folder, script=name.replace(".csv", ".py"), overwrite=True)
    with pytest.raises(sdckit.SdcError, match="^scenario: .* is not a file name"):
        model.save_scenario(problem.scenario, folder, name, overwrite=True)
    assert _tree(folder.parent) == before


def test_a_link_out_of_the_folder_is_refused(release, tmp_path):
    problem, source, folder = release
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "victim.py"
    victim.write_text("print('mine')\n")
    (folder / "release.py").symlink_to(victim)  # an existing link to a file elsewhere
    (folder / "new.py").symlink_to(outside / "new.py")  # a dangling link: would create a file elsewhere
    (folder / "sub").symlink_to(outside, target_is_directory=True)
    for name in ("release.py", "new.py"):
        with pytest.raises(sdckit.SdcError, match=f"^script: {name} leads outside the folder"):
            model.export(problem, source, folder, script=name, overwrite=True)
    with pytest.raises(sdckit.SdcError, match="is not a file name"):
        model.export(problem, source, folder, script="sub/x.py", overwrite=True)
    assert victim.read_text() == "print('mine')\n" and sorted(p.name for p in outside.iterdir()) == ["victim.py"]


def test_an_existing_file_is_replaced_only_when_chosen(release):
    problem, source, folder = release
    (folder / "protected.csv").write_text("mine\n")
    (folder / "recipe.json").write_text("{}\n")
    with pytest.raises(
        sdckit.SdcError,
        match=r"^data: .*protected\.csv already exists; expected a new file, or tick the box to replace",
    ):
        model.export(problem, source, folder, data="protected.csv", recipe="new.json")
    with pytest.raises(sdckit.SdcError, match=r"^scenario: .*recipe\.json already exists"):
        model.save_scenario(problem.scenario, folder, "recipe.json")
    assert (folder / "protected.csv").read_text() == "mine\n" and not (folder / "new.json").exists()
    assert (folder / "recipe.json").read_text() == "{}\n"
    written = model.export(problem, source, folder, data="protected.csv", recipe="recipe.json", overwrite=True)
    assert written == [str(folder / "protected.csv"), str(folder / "recipe.json")]
    assert sdckit.read_data(folder / "protected.csv").equals(problem.data)
    assert [p.name for p in folder.iterdir() if p.name.startswith(model.INCOMPLETE)] == []


def test_a_failed_or_cancelled_export_writes_nothing(release, monkeypatch):
    problem, source, folder = release
    before = _tree(folder)

    def fail(*args):
        raise Cancelled("the computation was cancelled")

    monkeypatch.setitem(model._WRITERS, "report", fail)
    with pytest.raises(Cancelled):
        model.export(problem, source, folder, data="protected.csv", recipe="recipe.json", report="report.html")
    assert _tree(folder) == before and sorted(p.name for p in folder.iterdir()) == ["survey.csv"]


KILLED = """
import os, signal, sys
import sdckit
from sdckit.app import model
from sdckit.datasets import EXAMPLE_KEYS

folder, source = sys.argv[1], sys.argv[2]
problem = sdckit.SdcProblem(sdckit.read_data(source), sdckit.Scenario(keys=list(EXAMPLE_KEYS)))
model._WRITERS["report"] = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # killed midway
model.export(problem, source, folder, data="protected.csv", recipe="recipe.json", report="report.html")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_an_export_killed_midway_leaves_only_a_folder_named_incomplete(release):
    problem, source, folder = release
    env = {**os.environ, "PYTHONPATH": str(Path(sdckit.__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, "-c", KILLED, str(folder), str(source)], env=env, capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr
    left = sorted(p.name for p in folder.iterdir())
    assert len(left) == 2 and left[1] == "survey.csv" and left[0].startswith("sdckit-export-incomplete-")
    assert sorted(p.name for p in (folder / left[0]).iterdir()) == ["protected.csv", "recipe.json"]


# -- the address the app listens on ------------------------------------------------------------
def test_another_host_than_this_machine_is_warned_about(monkeypatch, capsys):
    import uvicorn

    import sdckit.app as app

    runs = []
    monkeypatch.setattr(uvicorn, "run", lambda asgi, **kw: runs.append((asgi, kw)))
    monkeypatch.setattr(app, "_ensure_listenable", lambda host, port: None)
    app.serve(host="192.0.2.7", port=8123, launch_browser=False)
    app.serve(port=8124, launch_browser=False)
    out, err = capsys.readouterr()
    assert err.count("warning: listening on 192.0.2.7, not on this machine only") == 1
    assert "http://192.0.2.7:8123/?token=" in out and "http://127.0.0.1:8124/?token=" in out
    (first, kw1), (second, kw2) = runs
    assert kw1["host"] == "192.0.2.7" and kw2["host"] == "127.0.0.1" and kw2["log_level"] == "warning"
    assert first.hosts == {f"{h}:8123" for h in ("127.0.0.1", "localhost", "[::1]", "192.0.2.7")}
    assert first.token != second.token  # a new token at every start
    assert isinstance(second, guard.Guard) and second.max_upload == guard.DEFAULT_MAX_UPLOAD


def test_the_start_says_when_the_folder_holds_an_incomplete_set(monkeypatch, capsys, tmp_path):
    import uvicorn

    import sdckit.app as app

    monkeypatch.setattr(uvicorn, "run", lambda asgi, **kw: None)
    app.serve(port=free_port(), launch_browser=False, folder=tmp_path)
    assert "incomplete" not in capsys.readouterr().out
    (tmp_path / f"{model.INCOMPLETE}x1y2").mkdir()
    app.serve(port=free_port(), launch_browser=False, folder=tmp_path)
    out = capsys.readouterr().out
    assert f"sdckit app: note: {tmp_path} holds 1 folder(s) {model.INCOMPLETE}*, left by exports stopped" in out


def test_the_page_shows_sdckits_messages_but_not_another_librarys():
    from sdckit.app.widgets import error_text

    assert error_text(sdckit.SdcError("k: got 0; expected an integer >= 1")) == "k: got 0; expected an integer >= 1"
    assert error_text(FileNotFoundError(2, "No such file", "x.csv")) == "[Errno 2] No such file: 'x.csv'"
    text = error_text(RuntimeError("could not parse 'Rzq-North' as a number"))
    assert "Rzq-North" not in text and "unexpected error (RuntimeError)" in text
