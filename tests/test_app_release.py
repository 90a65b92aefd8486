"""A whole release in the browser on the EU-SILC sample (laeken's ``eusilc``, 14,827 records):
load, roles, the risk overview, a recode of age (its category table), k = 3, the search (a
point of its front applied), undo two steps, redo one, variants saved, compared on the
risk-utility map and continued from (branches), the export of the file (in a random row order), the recipe and the reports.
The exported file is what ``sdckit protect`` makes of the exported recipe, byte for byte.

Headless Chromium through Playwright, on ``sdckit app`` started as a user starts it; the page
asks nothing of any server but the local one (checked by ``_page``)."""

from __future__ import annotations

import json

import pytest

import sdckit
from conftest import shared_file
from sdckit.cli import main
from test_app_browser import _app, _page, _shot

pytestmark = pytest.mark.shared_data

KEYS = ["db040", "hsize", "age", "rb090", "pl030", "pb220a"]
BREAKS = "-2;15;30;45;60;75;120"


def _expected(data, scenario):
    """What the page must show, computed with the library: the original's verdict, each step's
    changes and the search's front on the state after the recode and k = 3."""
    headline = sdckit.assess(data, scenario, progress=False).summary().headline
    p = sdckit.SdcProblem(data, scenario)
    p.apply("global_recode", variables=["age"], breaks=[-2, 15, 30, 45, 60, 75, 120])
    p.apply("local_suppression", k=3)
    search = p.search(target={"k": 5}, suppression_limit=0.05, time_limit=60.0, progress=False)
    return headline, p, search


def test_a_whole_release_on_eusilc_in_chromium(tmp_path):
    from playwright.sync_api import expect
    from shiny.playwright import controller

    source = shared_file("laeken", "eusilc.csv")
    data = sdckit.read_data(source)
    scenario = sdckit.Scenario(keys=KEYS, weight="rb050", household="db030")
    headline, after, search = _expected(data, scenario)
    point = search.front[0]["recipe"]["steps"]
    assert point, "the search's first point has steps to apply"
    with _app(source, tmp_path / "server-tmp") as url, _page(url) as page:
        # Load and roles
        expect(page.locator("#loaded")).to_contain_text(f"eusilc.csv: {data.height} records")
        controller.InputSelectize(page, "keys").set(KEYS)
        controller.InputSelectize(page, "weight").set("rb050")
        controller.InputSelectize(page, "household").set("db030")

        # Measure: the overview of the original comes by itself once the roles settle
        page.get_by_role("tab", name="Measure").click()
        expect(page.locator("#overview_of")).to_have_text("Risk overview of the original file.")
        expect(page.locator("#verdict")).to_contain_text(headline.splitlines()[0])

        # Protect: recode age into six intervals; its category table before and after
        page.get_by_role("tab", name="Protect").click()
        page.locator("#method").select_option("global_recode")
        controller.InputSelectize(page, "p_global_recode_variables").set(["age"])
        page.locator("#p_global_recode_breaks").fill(BREAKS)
        page.locator("#apply").click()
        changed = after.history[0].result.n_changed_total
        expect(page.locator("#applied")).to_have_text(f"Applied: global_recode: {changed} values changed.")
        n_before = data.get_column("age").n_unique()
        expect(page.locator("#recode_tables h6")).to_have_text(f"age: {n_before} categories before, 6 after")
        expect(page.locator("#recode_tables tbody tr")).to_have_count(6)
        _shot(page, tmp_path, "app-recode")

        # k = 3
        page.locator("#method").select_option("local_suppression")
        page.locator("#p_local_suppression_k").fill("3")
        page.locator("#apply").click()
        changed = after.history[1].result.n_changed_total
        expect(page.locator("#applied")).to_have_text(f"Applied: local_suppression: {changed} values changed.")
        # the overview follows the steps by itself
        page.get_by_role("tab", name="Measure").click()
        expect(page.locator("#overview_of")).to_have_text("Risk overview of the file after step 2 (local_suppression).")

        # History: saved as a variant
        page.get_by_role("tab", name="History").click()
        page.locator("#variant_name").fill("recode age, k3")
        page.locator("#save_variant").click()
        expect(page.locator("#variant input")).to_have_count(1)

        # Search for k = 5 on this state; its first point becomes the state
        page.get_by_role("tab", name="Protect").click()
        page.locator("#search_k").fill("5")
        page.locator("#search_time").fill("60")
        page.locator("#search").click()
        expect(page.locator("#search_headline")).to_have_text(search.summary().headline)
        expect(page.locator("#front_point input")).to_have_count(len(search.front))
        page.locator("#use_point").click()
        expect(page.locator("#steps_short li")).to_have_count(2 + len(point))
        page.get_by_role("tab", name="History").click()
        page.locator("#variant_name").fill("search k5")
        page.locator("#save_variant").click()
        expect(page.locator("#variant input")).to_have_count(2)

        # undo two steps, redo one
        methods = ["global_recode", "local_suppression", *(s["method"] for s in point)]
        page.locator("#undo").click()
        page.locator("#undo").click()
        expect(page.locator("#history_steps li")).to_have_count(len(methods) - 2)
        page.locator("#redo").click()
        expect(page.locator("#history_steps li")).to_have_count(len(methods) - 1)
        page.locator("#compare").click()
        expect(page.locator("#comparison_verdict")).not_to_be_empty()
        comparison = page.locator("#comparison").inner_text()
        assert "recode age, k3" in comparison and "search k5" in comparison
        _shot(page, tmp_path, "app-variants")
        # branches: continue from the search's variant, then back to the first one
        controller.InputRadioButtons(page, "variant").set("search k5")
        page.locator("#branch").click()
        expect(page.locator("#history_steps li")).to_have_count(len(methods))
        page.locator("#redo").click()  # a branch forgets the undone steps
        expect(page.locator("#history_status")).to_contain_text("redo: there is no undone step")
        controller.InputRadioButtons(page, "variant").set("recode age, k3")
        page.locator("#branch").click()
        expect(page.locator("#history_steps li")).to_have_count(2)

        # Export: the file in a random row order, the recipe, both reports
        page.get_by_role("tab", name="Export").click()
        out, recipe = tmp_path / "protected.csv", tmp_path / "recipe.json"
        report, external = tmp_path / "report.html", tmp_path / "for-users.html"
        page.locator("#export_data").fill(out.name)
        page.locator("#export_recipe").fill(recipe.name)
        page.locator("#export_report").fill(report.name)
        page.locator("#export_external_report").fill(external.name)
        page.locator("#export_shuffle").check()
        page.locator("#export_seed").fill("2026")
        page.locator("#export").click()
        expect(page.locator("#exported")).to_contain_text(external.name)

    rec = json.loads(recipe.read_text())
    assert [s["method"] for s in rec["steps"]] == ["global_recode", "local_suppression"]
    assert rec["row_order"] == {"order": "random", "seed": 2026}
    again = tmp_path / "again.csv"
    assert main(["protect", str(source), "--recipe", str(recipe), "--out", str(again)]) == 0
    assert out.read_bytes() == again.read_bytes()
    # the rows are those of the release, in another order
    replay = sdckit.SdcProblem.from_recipe(data, rec)
    written = sdckit.read_data(out)
    assert written.height == data.height and not written.equals(replay.data)
    assert written.sort(written.columns).equals(replay.data.sort(written.columns), null_equal=True)
    assert "global_recode" in report.read_text() and "global_recode" in external.read_text()
