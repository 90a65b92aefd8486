"""The HTML report in a real browser: headless Chromium loads the report of the bundled example
with no console error and no network request, every figure is present and visible, and a
screenshot is saved. Without a browser this test fails (it never passes silently): `.ci/run`
installs Debian's chromium; elsewhere install it, or set SDCKIT_CHROMIUM to a Chromium binary."""

from __future__ import annotations

import os
import shutil

import pytest

import sdckit

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    for candidate in (os.environ.get("SDCKIT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        path = candidate and (shutil.which(candidate) or (candidate if os.path.isfile(candidate) else None))
        if path:
            return path
    pytest.fail(
        "no Chromium found: install Debian's chromium (apt-get install chromium) or set SDCKIT_CHROMIUM; "
        "the report's browser test cannot be skipped"
    )


def _render(path, screenshot):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser test needs playwright (pip install 'sdckit[test]')")
    requests, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=_chromium(), args=FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(path.as_uri(), wait_until="load")
        figures = page.locator("figure.sdckit-figure")
        found = []
        for i in range(figures.count()):
            fig = figures.nth(i)
            box = fig.bounding_box()
            drawn = fig.locator("svg, img").count()
            found.append((fig.get_attribute("id"), fig.is_visible(), box and box["width"] * box["height"], drawn))
        page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    return requests, problems, found


def test_report_renders_offline_in_chromium(tmp_path):
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    data = load_example()
    sc = sdckit.Scenario(keys=list(EXAMPLE_KEYS), weight="weight", household="household")
    report = tmp_path / "report.html"
    sdckit.assess(data, sc).to_html(report)
    screenshot = tmp_path / "report.png"
    requests, problems, figures = _render(report, screenshot)
    assert requests == [report.as_uri()], f"network requests besides the file: {requests}"
    assert problems == [], f"console errors: {problems}"
    assert len(figures) >= 3, figures
    for fid, visible, area, drawn in figures:
        assert visible and area and area > 1000 and drawn >= 1, f"figure {fid} is not drawn"
    assert screenshot.stat().st_size > 10_000


def test_both_reports_of_variants_render_offline_in_chromium(tmp_path):
    """The internal report and the report for data users of an assessment with variants (a recode
    then k = 3, and PRAM): no network request, no console error, every figure drawn."""
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    data = load_example()
    sc = sdckit.Scenario(keys=list(EXAMPLE_KEYS), numeric_keys=["income"], weight="weight", household="household")
    merge = {"method": "global_recode", "parameters": {"variables": ["education"], "mapping": EDUCATION}}
    recipes = [
        {"name": "recode, k3", "steps": [merge, {"method": "local_suppression", "parameters": {"k": 3}}]},
        {"name": "pram", "steps": [{"method": "pram", "parameters": {"variables": ["econ_status"], "seed": 3}}]},
    ]
    res = sdckit.assess(data, sc, recipes=recipes, progress=False)
    for audience in ("internal", "external"):
        report = tmp_path / f"{audience}.html"
        res.to_html(report, audience=audience)
        requests, problems, figures = _render(report, tmp_path / f"{audience}.png")
        assert requests == [report.as_uri()], f"{audience}: network requests besides the file: {requests}"
        assert problems == [], f"{audience}: console errors: {problems}"
        for fid, visible, area, drawn in figures:
            assert visible and area and area > 1000 and drawn >= 1, f"{audience}: figure {fid} is not drawn"
        assert figures, audience


#: the example's education levels merged into two
EDUCATION = {
    "none": "up to lower secondary",
    "primary": "up to lower secondary",
    "lower secondary": "up to lower secondary",
    "upper secondary": "upper secondary or more",
    "tertiary": "upper secondary or more",
}
