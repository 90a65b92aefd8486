"""Every reader of the scenario roles agrees with the one roles table (``sdckit._roles.ROLES``):
the Scenario's fields, the preparation's Roles, the declarations' STANDARD, the recipe schema,
the app's role form, the report's roles, a synthetic file's optional roles and every command's
role options (``--keys``, ``--weight``, ...). A role added to the table but not to a reader (or
the other way round), or a role option written by hand, fails here."""

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


def _command_options(parser=None):
    """(command, action) for every option of every ``sdckit`` command (or of ``parser``'s)."""
    import argparse

    from sdckit.cli import build_parser

    parser = parser or build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sp in sub.choices.items():
        for action in sp._actions:
            yield command, action


def _not_from_the_table(parser=None) -> list[str]:
    """The options of a role (their destination is a role's name) not built from the roles table.

    Allowed: an option built by ``add_role_option`` (the role's name, its help starting with the
    table's), a hidden old spelling of such an option, and a declared function's own parameter
    that shares the name of a role that is not standard (``sdckit utility --scales``: the
    information loss's scales, not the scenario's)."""
    import argparse

    from sdckit.commands import DECLARED_MARK, ROLE_MARK, role_help, role_option

    problems = []
    for command, action in _command_options(parser):
        if action.dest not in names():
            continue
        where = f"sdckit {command} {'/'.join(action.option_strings)}"
        if action.help == argparse.SUPPRESS and getattr(action, "new", None):  # an old spelling
            ok = action.new == role_option(action.dest)
        elif hasattr(action, ROLE_MARK):
            ok = getattr(action, ROLE_MARK) == action.dest and action.option_strings == [role_option(action.dest)]
            ok = ok and action.help.startswith(role_help(action.dest))
        else:
            ok = bool(getattr(action, DECLARED_MARK, None)) and not role(action.dest).standard
        if not ok:
            problems.append(where)
    return problems


def test_every_command_option_of_a_role_is_built_from_the_table():
    assert _not_from_the_table() == []


def test_a_hand_written_role_option_fails_the_check():
    import argparse

    from sdckit.commands import add_role_option

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_role_option(sub.add_parser("good"), "weight", "(the helper's)")
    sub.add_parser("bad").add_argument("--weight", help="sampling weight column")
    sub.add_parser("renamed").add_argument("--w", dest="weight", help="the sampling-weight column")
    sub.add_parser("own").add_argument("--scales", help="scales of the command's own")
    assert _not_from_the_table(parser) == ["sdckit bad --weight", "sdckit renamed --w", "sdckit own --scales"]


def test_the_role_options_are_named_and_helped_by_the_table():
    from sdckit.commands import role_help, role_option

    assert role_option("numeric_keys") == "--numeric-keys"
    assert role_help("weight") == role("weight").meaning
    assert role_help("strata") == role("strata").meaning + ", comma-separated"
    offered = {}
    for command, action in _command_options():
        if action.dest in names() and action.help.startswith(role_help(action.dest)):
            offered.setdefault(command, []).append(action.dest)
    assert offered["assess"] == _table(reported=True)
    assert offered["search"] == ["keys", "weight", "household", "missing", "sensitive"]
    assert offered["protect"] == ["keys", "weight", "household", "strata", "missing"]


def test_a_role_option_is_read_by_the_role_kind():
    import argparse

    from sdckit.commands import role_value

    args = argparse.Namespace(keys="a, b,", weight="w", missing="-9,x", scales="age = numeric,hsize=nominal", strata="")
    assert role_value(args, "keys") == ["a", "b"]
    assert role_value(args, "weight") == "w"
    assert role_value(args, "missing") == ["-9", "x"]
    assert role_value(args, "scales") == {"age": "numeric", "hsize": "nominal"}
    assert role_value(args, "strata") == []
    assert role_value(args, "household") is None  # not given (or not offered)
    with pytest.raises(SdcError, match="--scales: 'income' is not VARIABLE=SCALE"):
        role_value(argparse.Namespace(scales="income"), "scales")
    with pytest.raises(SdcError, match="--linked: 'a' is not NAME=VALUE"):
        role_value(argparse.Namespace(linked="a"), "linked")
    with pytest.raises(KeyError):
        role_value(args, "nope")
