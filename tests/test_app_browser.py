"""``sdckit app`` in a real browser: the command starts the app on a free port with the bundled
example, headless Chromium sets the roles, saves the scenario, runs the risk overview (the
verdict of :func:`sdckit.assess` appears), applies k = 3 through the form generated from the
registry and undoes it; the page asks nothing of any server but the local one. Without a
browser this test fails (it never passes silently); the Chromium discovery and flags are the
report's browser test's."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sdckit
from sdckit.app import free_port
from sdckit.datasets import EXAMPLE_KEYS, example_path, load_example
from test_report_browser import FLAGS, _chromium


def _start(port: int) -> subprocess.Popen:
    env = dict(os.environ)
    src = str(Path(sdckit.__file__).resolve().parents[1])  # run the sdckit under test
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "sdckit.cli", "app", str(example_path()), "--port", str(port), "--no-browser"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"sdckit app stopped: {proc.stdout.read()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.2)
    proc.kill()
    pytest.fail("sdckit app did not listen within 20 s")


@pytest.fixture
def app_url():
    port = free_port()
    proc = _start(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_app_roles_risk_overview_and_undo_in_chromium(app_url, tmp_path):
    try:
        from playwright.sync_api import expect, sync_playwright
        from shiny.playwright import controller
    except ImportError:
        pytest.fail("the app's browser test needs playwright and shiny (pip install 'sdckit[test]')")
    scenario = sdckit.Scenario(keys=list(EXAMPLE_KEYS), weight="weight", household="household")
    example = load_example()
    headline = sdckit.assess(example, scenario, progress=False).summary().headline
    suppressed = sdckit.local_suppression(example, list(EXAMPLE_KEYS), k=3).n_changed_total
    assert suppressed > 0
    requests, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), args=FLAGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.on("request", lambda r: requests.append(r.url))
        page.on("websocket", lambda ws: requests.append(ws.url))
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(app_url, wait_until="load")

        # Load: the example is loaded, its variables listed; the roles are set and saved
        expect(page.locator("#loaded")).to_contain_text(
            f"survey.csv: {example.height} records, {example.width} variables"
        )
        expect(page.locator("table.sdckit-variables")).to_contain_text("econ_status")
        controller.InputSelectize(page, "keys").set(list(EXAMPLE_KEYS))
        controller.InputSelectize(page, "weight").set("weight")
        controller.InputSelectize(page, "household").set("household")
        saved = tmp_path / "scenario.json"
        page.locator("#scenario_path").fill(str(saved))
        page.locator("#save_scenario").click()
        expect(page.locator("#scenario_saved")).to_contain_text("Scenario written to")
        page.screenshot(path=str(tmp_path / "app-load.png"), full_page=True)

        # Measure: the overview is computed in the background; the verdict of sdckit.assess appears
        page.get_by_role("tab", name="Measure").click()
        page.locator("#run_overview").click()
        expect(page.locator("#verdict")).to_contain_text(headline.splitlines()[0], timeout=20_000)
        assert page.locator("figure.sdckit-figure").count() >= 1
        page.screenshot(path=str(tmp_path / "app-measure.png"), full_page=True)

        # Protect: k = 3 through the generated form, then undo
        page.get_by_role("tab", name="Protect").click()
        page.locator("#method").select_option("local_suppression")
        page.locator("#p_local_suppression_k").fill("3")
        page.locator("#apply").click()
        expect(page.locator("#history_steps li")).to_have_count(1, timeout=20_000)
        expect(page.locator("#history_steps")).to_have_text(f"local_suppression: {suppressed} values changed")
        page.screenshot(path=str(tmp_path / "app-protect.png"), full_page=True)
        page.locator("#undo").click()
        expect(page.locator("#history_empty")).to_be_visible()
        browser.close()
    assert sdckit.Scenario(**json.loads(saved.read_text())) == scenario
    host = app_url.split("//", 1)[1]
    outside = [u for u in requests if u.split("//", 1)[-1].split("/", 1)[0] != host]
    assert outside == [], f"requests outside the local server: {outside}"
    assert any(u.startswith("ws://") for u in requests), "the page did not open its session"
    assert problems == [], f"console errors: {problems}"
