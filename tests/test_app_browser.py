"""``sdckit app`` in a real browser: the command starts the app on a free port with the bundled
example, headless Chromium sets the roles, saves the scenario, runs the risk overview (the
verdict of :func:`sdckit.assess` appears), applies k = 3 through the form generated from the
registry, then PRAM, undoes both steps and redoes them (the same files again); a file chosen in
the file picker is loaded and a bad path gives its message. The page asks nothing of any server
but the local one. Without a browser these tests fail (they never pass silently); the Chromium
discovery and flags are the report's browser test's.

With ``SDCKIT_APP_SCREENSHOTS`` naming a folder, the screenshots of each step are also saved
there (the documentation's pictures of the app are made this way)."""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

import sdckit
from sdckit.app import free_port
from sdckit.cli import main
from sdckit.datasets import EXAMPLE_KEYS, example_path, load_example
from test_report_browser import FLAGS, _chromium

#: seconds the server may take to start, and milliseconds an expectation waits for the page's
#: signal (an element the app shows when its work is done): ceilings, generous so that a busy
#: machine never fails a test; a test that passes waits only as long as the app takes
STARTUP = 120
WAIT = 300_000


class Server:
    """``sdckit app`` in a process: its address with the token (``url``), its output so far
    (read by a thread, so that the pipe never fills)."""

    def __init__(self, argv: list[str], env: dict):
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._url: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            found = re.search(r"http://\S+\?token=\S+", line)
            if found:
                self._url.put(found.group(0))

    def url(self, wait: float = STARTUP) -> str:
        """The address printed at start, once the server listens on it."""
        deadline = time.monotonic() + wait
        try:
            url = self._url.get(timeout=wait)
        except queue.Empty:
            self.stop()
            pytest.fail(f"sdckit app printed no address within {wait:.0f} s: {''.join(self.lines)}")
        port = urlsplit(url).port
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"sdckit app stopped: {''.join(self.lines)}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return url
            time.sleep(0.2)
        self.stop()
        pytest.fail(f"sdckit app did not listen within {wait:.0f} s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def output(self) -> str:
        return "".join(self.lines)


def start_server(*args: str, tmp: Path) -> Server:
    """``sdckit app ARGS --no-browser`` with the sdckit under test, its temporary files in ``tmp``."""
    env = dict(os.environ)
    src = str(Path(sdckit.__file__).resolve().parents[1])  # run the sdckit under test
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    env["TMPDIR"] = str(tmp)  # the server's temporary files (uploads), to check they are removed
    tmp.mkdir(exist_ok=True)
    return Server([sys.executable, "-m", "sdckit.cli", "app", *args, "--no-browser"], env)


@contextmanager
def _app(data: Path, tmp: Path, folder: Path | None = None, *options: str):
    """``sdckit app DATA --folder FOLDER OPTIONS`` (default folder: the parent of ``tmp``) on a
    free port, stopped on leaving; yields the address it printed (with its token). On leaving,
    the server printed nothing but its own lines: no warning (Shiny's deprecation warnings
    included), no traceback, no request line, no record value."""
    folder = tmp.parent if folder is None else folder
    server = start_server(str(data), "--port", str(free_port()), "--folder", str(folder), *options, tmp=tmp)
    try:
        yield server.url()
    finally:
        server.stop()
    lines = [line for line in server.output().splitlines() if line.strip()]
    assert all(line.startswith("sdckit app: ") for line in lines), server.output()


@pytest.fixture
def app_url(tmp_path):
    with _app(example_path(), tmp_path / "server-tmp") as url:
        yield url


@contextmanager
def _page(app_url, expected: tuple[str, ...] = ()):
    """A page of headless Chromium on the app; on leaving, no request went outside the local
    server and no error was logged (but those holding one of the ``expected`` texts)."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("the app's browser test needs playwright (pip install 'sdckit[test]')")
    requests, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), args=FLAGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.set_default_timeout(WAIT)
        page.set_default_navigation_timeout(WAIT)
        expect.set_options(timeout=WAIT)
        page.on("request", lambda r: requests.append(r.url))
        page.on("websocket", lambda ws: requests.append(ws.url))
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(app_url, wait_until="load")
        yield page
        browser.close()
    host = urlsplit(app_url).netloc
    outside = [u for u in requests if urlsplit(u).netloc != host]
    assert outside == [], f"requests outside the local server: {outside}"
    assert any(u.startswith("ws://") for u in requests), "the page did not open its session"
    problems = [p for p in problems if not any(e in p for e in expected)]
    assert problems == [], f"console errors: {problems}"


def _shot(page, tmp_path, name: str) -> None:
    page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    folder = os.environ.get("SDCKIT_APP_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.jpg"), type="jpeg", quality=70)


def test_app_roles_risk_overview_undo_redo_in_chromium(app_url, tmp_path):
    from playwright.sync_api import expect
    from shiny.playwright import controller

    keys = list(EXAMPLE_KEYS)
    scenario = sdckit.Scenario(keys=keys, weight="weight", household="household")
    example = load_example()
    headline = sdckit.assess(example, scenario, progress=False).summary().headline
    k3 = sdckit.local_suppression(example, keys, k=3)
    pram = sdckit.pram(k3.data, ["econ_status"], seed=7)
    steps = [f"local_suppression: {k3.n_changed_total} values changed", f"pram: {pram.n_changed_total} values changed"]
    assert k3.n_changed_total > 0 and pram.n_changed_total > 0
    after = sdckit.SdcProblem(example, scenario).apply("local_suppression", k=3)
    after.apply("pram", variables=["econ_status"], seed=7)
    search = after.search(target={"k": 3}, suppression_limit=0.05, time_limit=60.0)
    assert search.front
    with _page(app_url) as page:
        # Load: the example is loaded, its variables listed; the roles are set and saved
        expect(page.locator("#loaded")).to_contain_text(
            f"survey.csv: {example.height} records, {example.width} variables"
        )
        expect(page.locator("table.sdckit-variables")).to_contain_text("econ_status")
        controller.InputSelectize(page, "keys").set(keys)
        controller.InputSelectize(page, "weight").set("weight")
        controller.InputSelectize(page, "household").set("household")
        saved = tmp_path / "scenario.json"
        page.locator("#scenario_path").fill(saved.name)
        page.locator("#save_scenario").click()
        expect(page.locator("#scenario_saved")).to_contain_text("Scenario written to")
        _shot(page, tmp_path, "app-load")

        # Measure: the overview is computed in the background; the verdict of sdckit.assess appears
        page.get_by_role("tab", name="Measure").click()
        page.locator("#run_overview").click()
        expect(page.locator("#verdict")).to_contain_text(headline.splitlines()[0])
        assert page.locator("figure.sdckit-figure").count() >= 1
        _shot(page, tmp_path, "app-measure")

        # Protect: k = 3 and PRAM through the generated forms; undo both, redo both
        page.get_by_role("tab", name="Protect").click()
        page.locator("#method").select_option("local_suppression")
        page.locator("#p_local_suppression_k").fill("3")
        page.locator("#apply").click()
        expect(page.locator("#applied")).to_have_text(f"Applied: {steps[0]}.")
        page.locator("#method").select_option("pram")
        controller.InputSelectize(page, "p_pram_variables").set(["econ_status"])
        page.locator("#p_pram_seed").fill("7")
        page.locator("#apply").click()
        expect(page.locator("#applied")).to_have_text(f"Applied: {steps[1]}.")
        expect(page.locator("#steps_short li")).to_have_text(["local_suppression", "pram"])
        _shot(page, tmp_path, "app-protect")
        page.get_by_role("tab", name="History").click()
        expect(page.locator("#history_steps li")).to_have_text(steps)
        table = page.locator("#step_measures")
        expect(table).to_contain_text("1. local_suppression")
        expect(table).to_contain_text("2. pram")
        expect(table).to_contain_text("global risk")
        _shot(page, tmp_path, "app-history")
        page.locator("#undo").click()
        expect(page.locator("#history_steps li")).to_have_text(steps[:1])
        page.locator("#undo").click()
        expect(page.locator("#history_empty")).to_be_visible()
        page.locator("#redo").click()
        expect(page.locator("#history_steps li")).to_have_text(steps[:1])
        page.locator("#redo").click()
        expect(page.locator("#history_steps li")).to_have_text(steps)
        page.locator("#redo").click()
        expect(page.locator("#history_status")).to_contain_text("redo: there is no undone step")

        # Export: the protected file, the recipe and the report
        page.get_by_role("tab", name="Export").click()
        out, recipe, report = tmp_path / "protected.csv", tmp_path / "recipe.json", tmp_path / "report.html"
        expect(page.locator("#export_folder")).to_have_text(str(tmp_path))
        page.locator("#export_data").fill(out.name)
        page.locator("#export_recipe").fill(recipe.name)
        page.locator("#export_report").fill(report.name)
        page.locator("#export_script").fill("release.py")
        page.locator("#export").click()
        expect(page.locator("#exported")).to_have_text(
            f"Written into {tmp_path}: protected.csv, recipe.json, report.html, release.py"
        )
        # the same again is refused (the files exist), and so is a name outside the folder
        page.locator("#export").click()
        expect(page.locator("#export_status .sdckit-error")).to_contain_text("protected.csv already exists")
        page.locator("#export_data").fill("../protected.csv")
        page.locator("#export").click()
        expect(page.locator("#export_status .sdckit-error")).to_contain_text("'../protected.csv' is not a file name")
        page.locator("#export_data").fill(out.name)
        _shot(page, tmp_path, "app-export")
        # the same files downloaded through the browser
        downloaded = {}
        for kind in ("data", "recipe"):
            with page.expect_download() as info:
                page.locator(f"#download_{kind}").click()
            downloaded[kind] = tmp_path / f"downloaded-{info.value.suggested_filename}"
            info.value.save_as(downloaded[kind])
        assert downloaded["data"].name == "downloaded-survey-protected.csv"

        # Search: k = 3 on the current state; the first point of the front becomes the state
        page.get_by_role("tab", name="Protect").click()
        page.locator("#search_k").fill("3")
        page.locator("#search").click()
        expect(page.locator("#search_headline")).to_contain_text(search.summary().headline)
        expect(page.locator("#front_point input")).to_have_count(len(search.front))
        expect(page.locator("#search_front_figure svg")).to_have_count(1)
        page.locator("#search_headline").scroll_into_view_if_needed()
        _shot(page, tmp_path, "app-search")
        page.locator("#use_point").click()
        expect(page.locator("#steps_short li")).to_have_count(2 + len(search.front[0]["recipe"]["steps"]))
        used = [st["method"] for st in search.front[0]["recipe"]["steps"]]
        for i, method in enumerate(used):
            expect(page.locator("#steps_short li").nth(2 + i)).to_have_text(method)
        page.locator("#use_point").click()  # the front was for the state before: refused
        expect(page.locator("#search_status")).to_contain_text("expected a new search")
    assert sdckit.Scenario(**json.loads(saved.read_text())) == scenario
    # the exported file is what sdckit protect makes of the exported recipe, byte for byte
    again = tmp_path / "again.csv"
    assert main(["protect", str(example_path()), "--recipe", str(recipe), "--out", str(again)]) == 0
    assert out.read_bytes() == again.read_bytes()
    assert [s["method"] for s in json.loads(recipe.read_text())["steps"]] == ["local_suppression", "pram"]
    assert downloaded["data"].read_bytes() == out.read_bytes()
    assert json.loads(downloaded["recipe"].read_text()) == json.loads(recipe.read_text())
    assert "pram" in report.read_text()
    env = {**os.environ, "PYTHONPATH": str(Path(sdckit.__file__).resolve().parents[1])}
    by_script = tmp_path / "by_script.csv"
    run = subprocess.run([sys.executable, str(tmp_path / "release.py"), str(by_script)], env=env, capture_output=True)
    assert run.returncode == 0 and by_script.read_bytes() == out.read_bytes()


def test_app_file_picker_and_a_bad_path_in_chromium(app_url, tmp_path):
    from playwright.sync_api import expect

    chosen = tmp_path / "chosen.csv"
    chosen.write_text("region,sex\nN,m\nS,f\nS,\n")
    with _page(app_url) as page:
        expect(page.locator("#loaded")).to_contain_text("survey.csv")
        page.locator("#upload").set_input_files(str(chosen))
        expect(page.locator("#loaded")).to_have_text("chosen.csv: 3 records, 2 variables.")
        # the chosen file is a copy in the server's temporary folder
        copies = list((tmp_path / "server-tmp").glob("fileupload-*/*/0.csv"))
        assert [c.read_text() for c in copies] == [chosen.read_text()]
        expect(page.locator("table.sdckit-variables tbody tr")).to_have_count(2)
        row = page.locator("table.sdckit-variables tbody tr").nth(1).locator("td")
        expect(row).to_have_text(["sex", "text", "2: f, m", "1"])
        page.locator("#path").fill(str(tmp_path / "missing.csv"))
        page.locator("#load").click()
        expect(page.locator("#load_status .sdckit-error")).to_contain_text("missing.csv")
    # the session ended with the page: its temporary folder with the copy is removed
    deadline = time.monotonic() + 10
    while list((tmp_path / "server-tmp").glob("fileupload-*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list((tmp_path / "server-tmp").glob("fileupload-*")) == []
    assert chosen.read_text() == "region,sex\nN,m\nS,f\nS,\n"  # the chosen file is never written


def test_a_file_over_the_upload_limit_is_refused_with_a_message_in_chromium(tmp_path):
    """``--max-upload 1MB``: a file of 2 MB chosen in the file picker is refused, its progress
    bar says why, and the file loaded stays loaded."""
    from playwright.sync_api import expect

    big = tmp_path / "big.csv"
    big.write_text("region,sex\n" + "North,f\n" * 250_000)
    assert big.stat().st_size > 10**6
    with (
        _app(example_path(), tmp_path / "server-tmp", None, "--max-upload", "1MB") as url,
        _page(url, expected=("413",)) as page,
    ):
        expect(page.locator("#loaded")).to_contain_text("survey.csv")
        page.locator("#upload").set_input_files(str(big))
        expect(page.locator("#upload_progress")).to_contain_text("larger than the upload limit of 1 MB")
        expect(page.locator("#loaded")).to_contain_text("survey.csv")
    assert list((tmp_path / "server-tmp").glob("fileupload-*/*/0.csv")) == []  # nothing of it kept


def test_app_answers_while_the_overview_runs_and_cancel_keeps_the_state(tmp_path):
    """On a file of 10^6 records the overview takes seconds: while it runs (started by itself
    once the roles are set, its progress bar showing), saving the scenario answers before it
    ends, within a second (or five times the same click's time once nothing runs, on a busy
    machine); a cancelled overview leaves the overview shown as it was, and a cancelled step
    leaves the release without it."""
    from playwright.sync_api import expect
    from shiny.playwright import controller

    example = load_example()
    copies = -(-1_000_000 // example.height)
    big = pl.concat([example.with_columns(pl.col("household") + i * 100_000) for i in range(copies)])
    assert big.height >= 1_000_000
    path = tmp_path / "big.parquet"
    big.write_parquet(path)
    keys = list(EXAMPLE_KEYS)
    with _app(path, tmp_path / "server-tmp") as url, _page(url) as page:
        expect(page.locator("#loaded")).to_contain_text(f"big.parquet: {big.height} records")
        page.locator("#scenario_path").fill("scenario.json")
        controller.InputSelectize(page, "weight").set("weight")
        controller.InputSelectize(page, "household").set("household")
        controller.InputSelectize(page, "keys").set(keys)
        page.get_by_role("tab", name="Measure").click()
        started = time.monotonic()
        expect(page.locator("#busy progress")).to_be_visible()  # started by itself
        _shot(page, tmp_path, "app-progress")
        page.get_by_role("tab", name="Load").click()
        start = time.monotonic()
        page.locator("#save_scenario").click()
        expect(page.locator("#scenario_saved")).to_be_visible()
        answered = time.monotonic() - start
        page.get_by_role("tab", name="Measure").click()
        assert page.locator("#busy").is_visible(), "the overview ended before the click was answered"
        expect(page.locator("#verdict")).to_be_visible()
        took = time.monotonic() - started
        # the same click with nothing running: the page answered as fast, give or take the load
        page.get_by_role("tab", name="Load").click()
        page.locator("#scenario_overwrite").check()
        page.locator("#scenario_path").fill("scenario2.json")
        start = time.monotonic()
        page.locator("#save_scenario").click()
        expect(page.locator("#scenario_saved")).to_contain_text("scenario2.json")
        idle = time.monotonic() - start
        page.get_by_role("tab", name="Measure").click()
        assert answered < max(1.0, 5 * idle), f"answered in {answered:.2f} s while the overview ran, {idle:.2f} s idle"
        verdict = page.locator("#verdict").inner_text()
        assert ", ".join(keys) in page.locator("#overview").inner_text()  # the report's scenario table
        print(f"answered in {answered:.3f} s while the overview of {big.height} records ran ({took:.1f} s)")

        # with two keys the verdict would change; the run is cancelled, the overview stays
        page.locator("#auto_overview").uncheck()
        page.get_by_role("tab", name="Load").click()
        controller.InputSelectize(page, "keys").set(keys[:2])
        page.get_by_role("tab", name="Measure").click()
        page.locator("#run_overview").click()
        expect(page.locator("#busy")).to_be_visible()
        page.locator("#cancel_overview").click()
        expect(page.locator("#cancelled")).to_be_visible()
        time.sleep(2)
        assert page.locator("#verdict").inner_text() == verdict
        assert ", ".join(keys) in page.locator("#overview").inner_text()  # not the two keys of the cancelled run
        assert page.locator("#cancelled").is_visible()

        # a step cancelled while it runs leaves the release as it was
        page.get_by_role("tab", name="Protect").click()
        page.locator("#method").select_option("local_suppression")
        page.locator("#p_local_suppression_k").fill("5")
        page.locator("#apply").click()
        expect(page.locator("#applying")).to_be_visible()
        page.locator("#cancel_apply").click()
        expect(page.locator("#apply_cancelled")).to_be_visible()
        time.sleep(2)
        page.get_by_role("tab", name="History").click()
        expect(page.locator("#history_empty")).to_be_visible()


def test_app_loads_and_exports_an_spss_file_with_its_labels_in_chromium(tmp_path):
    """An SPSS file with value and variable labels (written by pyreadstat, not by sdckit),
    loaded in the page, protected with k = 2 and exported as SPSS, has the same labels; the
    variables table shows the labels in code order."""
    import pandas as pd
    import pyreadstat
    from playwright.sync_api import expect
    from shiny.playwright import controller

    labels = {"sex": {1: "Male", 2: "Female"}, "edu": {1: "Low", 2: "Mid", 3: "High"}}
    frame = pd.DataFrame({"sex": [1, 2, 1, 2, 1, 2, 1, 1], "edu": [1, 2, 3, 1, 1, 2, 3, 3]})
    source = tmp_path / "survey.sav"
    pyreadstat.write_sav(frame, source, variable_value_labels=labels, column_labels={"sex": "Sex of respondent"})
    before = source.read_bytes()
    out = tmp_path / "protected.sav"
    with _app(source, tmp_path / "server-tmp") as url, _page(url) as page:
        expect(page.locator("#loaded")).to_contain_text("survey.sav: 8 records, 2 variables")
        row = page.locator("table.sdckit-variables tbody tr").nth(1).locator("td")
        expect(row).to_have_text(["edu", "labelled", "3: Low, Mid, High", "0"])
        controller.InputSelectize(page, "keys").set(["sex", "edu"])
        page.get_by_role("tab", name="Protect").click()
        page.locator("#method").select_option("local_suppression")
        page.locator("#p_local_suppression_k").fill("2")
        page.locator("#apply").click()
        expect(page.locator("#applied")).to_contain_text("Applied: local_suppression")
        page.get_by_role("tab", name="Export").click()
        page.locator("#export_data").fill(source.name)  # the input itself: refused, also when replacing is ticked
        page.locator("#export_recipe").fill("")
        page.locator("#export_overwrite").check()
        page.locator("#export").click()
        expect(page.locator("#export_status .sdckit-error")).to_contain_text("survey.sav is the loaded input file")
        page.locator("#export_overwrite").uncheck()
        page.locator("#export_data").fill(out.name)
        page.locator("#export").click()
        expect(page.locator("#exported")).to_contain_text(out.name)
    meta = sdckit.read_metadata(out)
    assert meta["value_labels"] == labels
    assert meta["variable_labels"]["sex"] == "Sex of respondent"
    protected = sdckit.read_data(out)
    assert protected.height == 8 and protected.get_column("edu").null_count() > 0  # the unique records' values
    assert source.read_bytes() == before  # the input file is never written
