"""Every reader of the scenario roles agrees with the one roles table (``sdckit._roles.ROLES``):
the Scenario's fields, the preparation's Roles, the declarations' STANDARD, the recipe schema,
the app's role form, the report's roles and a synthetic file's optional roles. A role added to
the table but not to a reader (or the other way round) fails here."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from sdckit import Scenario
from sdckit._declare import STANDARD, TYPES
from sdckit._errors import SdcError
from sdckit._prepare import Roles
from sdckit._roles import KINDS, ROLES, Role, names, role

ROOT = Path(__file__).resolve().parents[1]


def _table(**having) -> list[str]:
    return [r.name for r in ROLES if all(getattr(r, k) == v for k, v in having.items())]


def test_the_table_names_each_role_once_with_a_declared_type():
    all_names = [r.name for r in ROLES]
    assert len(all_names) == len(set(all_names))
    assert set(KINDS) <= set(TYPES)
    assert all(r.meaning.strip() for r in ROLES)
    assert names() == tuple(all_names)
    assert role("weight").kind == "column"
    with pytest.raises(KeyError):
        role("nope")
    with pytest.raises(SdcError, match="kind"):
        Role("x", "nope", None, "meaning")


def test_the_scenario_has_one_field_per_role_in_table_order():
    assert [f.name for f in dataclasses.fields(Scenario)] == _table()


def test_the_preparation_has_one_field_per_prepared_role():
    assert [f.name for f in dataclasses.fields(Roles)] == _table(prepared=True)
    column_roles = [r.name for r in ROLES if r.prepared and r.kind in ("column", "columns")]
    assert list(Roles.of(["a"], weight="w").by_role()) == column_roles


def test_the_standard_parameters_of_each_role_take_its_kind_and_name():
    roles_in_standard = {name: entry for name, entry in STANDARD.items() if entry[1] is not None}
    assert list(roles_in_standard) == _table(standard=True)
    for name, (kind, filled_by, choices) in roles_in_standard.items():
        assert (kind, filled_by, choices) == (role(name).kind, name, ())


def test_the_recipe_schema_describes_every_role():
    from sdckit.workflow.problem import recipe_schema

    for schema in (recipe_schema(), json.loads((ROOT / "docs" / "recipe-schema.json").read_text(encoding="utf-8"))):
        properties = schema["properties"]["scenario"]["properties"]
        assert list(properties) == _table()
        assert [p["description"] for p in properties.values()] == [r.meaning for r in ROLES]


def test_the_app_form_shows_the_labelled_roles():
    from sdckit.app.model import ROLES as APP_ROLES

    assert APP_ROLES == tuple((r.name, r.label, r.kind == "columns") for r in ROLES if r.label)
    assert [r for r, _, _ in APP_ROLES] == [r.name for r in ROLES if r.label]


def test_the_report_and_the_synthetic_variant_read_the_table():
    import importlib

    synthetic = importlib.import_module("sdckit.assessment.synthetic")
    assess = importlib.import_module("sdckit.workflow.assess")

    assert list(assess._REPORTED_ROLES) == _table(reported=True)
    assert list(synthetic._OPTIONAL_ROLES) == _table(may_lack=True)


def test_a_role_added_to_the_table_only_fails_the_checks(monkeypatch):
    """A role the table gains but Scenario and Roles do not declare is caught above."""
    from sdckit import _roles

    extra = Role("region_code", "column", "Region", "a new role", prepared=True, standard=True)
    monkeypatch.setattr(_roles, "ROLES", (*_roles.ROLES, extra))
    monkeypatch.setitem(globals(), "ROLES", _roles.ROLES)
    for check in (
        test_the_scenario_has_one_field_per_role_in_table_order,
        test_the_preparation_has_one_field_per_prepared_role,
    ):
        with pytest.raises(AssertionError):
            check()
    with pytest.raises(AssertionError):
        test_the_standard_parameters_of_each_role_take_its_kind_and_name()
    with pytest.raises(AssertionError):
        test_the_app_form_shows_the_labelled_roles()


def test_the_assess_command_has_an_option_per_reported_role():
    from sdckit.cli import build_parser

    args = build_parser(["assess"]).parse_args(["assess", "data.csv", "--report", "r.html"])
    assert all(hasattr(args, name) for name in _table(reported=True))


def test_every_role_has_a_label_in_the_report():
    assert all(r.report_label.strip() for r in ROLES)
