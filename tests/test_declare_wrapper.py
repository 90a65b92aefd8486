"""What the wrapper :func:`sdckit._declare.declare` returns does on every call: it checks the
declared parameters given (every problem in one error), leaves defaults alone, takes renamed
parameters under their new names with a warning, fills a measure's roles from the scenario,
and keeps the function's name, signature and identity (pickling, the registry)."""

from __future__ import annotations

import inspect
import pickle
import warnings

import pandas as pd
import pytest

import sdckit
from examples import S002_KEYS
from sdckit import Scenario, SdcError, registry
from sdckit._declare import Param, declaration, declare


def _toy():
    def f(data, keys, *, k=2, method="a", weight=None, engine=None):
        """Toy.

        Parameters
        ----------
        keys : list of str
            The keys.
        """
        return {"keys": keys, "k": k, "method": method, "weight": weight}

    return f


def _declared(**kwargs):
    return declare(
        "measure",
        Param("keys"),
        Param("k", "int", low=1),
        Param("method", "choice", choices=("a", "b")),
        Param("weight"),
        **kwargs,
    )(_toy())


def _table():
    return pd.DataFrame({k: ["a", "b", "a", "b"] for k in S002_KEYS} | {"w": [1.0, 2.0, 3.0, 4.0]})


def test_the_wrapper_keeps_name_signature_and_declaration():
    g = _declared()
    assert g.__name__ == "f" and inspect.signature(g) == inspect.signature(inspect.unwrap(g))
    assert declaration(g).func is g and declaration(g).names == ("keys", "k", "method", "weight")
    assert g(None, ["x"], k=3) == {"keys": ["x"], "k": 3, "method": "a", "weight": None}  # values as given


def test_every_problem_in_one_error_positional_arguments_too():
    g = _declared()
    with pytest.raises(SdcError) as err:
        g(None, 3.5, k=0, method="c")
    assert [p.split(":")[0] for p in err.value.problems] == ["keys", "k", "method"]
    assert str(err.value).startswith("invalid input:")


def test_a_default_is_not_checked():
    def h(data, *, n_items=2):
        return n_items

    g = declare("measure", Param("n_items", "int", low=5))(h)
    assert g(None) == 2  # the default is outside the declared range: not checked, costs nothing
    with pytest.raises(SdcError, match="n_items: got 2.0"):
        g(None, n_items=2.0)  # a value given (a float, equal to the default) is checked


def test_renamed_parameters_warn_and_pass_on():
    g = _declared(renamed={"n": "k"})
    with pytest.warns(DeprecationWarning, match="n= is now called k="):
        assert g(None, ["x"], n=4)["k"] == 4
    with pytest.raises(TypeError, match="give k= only"):
        g(None, ["x"], n=4, k=4)
    with pytest.warns(DeprecationWarning), pytest.raises(SdcError, match="k: got 0"):
        g(None, ["x"], n=0)  # checked under its new name
    declaration(g).check_names({"n": 4})  # a recipe saved before the rename replays
    with pytest.raises(SdcError, match="renamed to"):
        _declared(renamed={"n": "nothing"})


def test_a_renamed_parameter_of_the_library_still_works():
    table = _table().assign(score=[0.1, 0.9, 0.2, 0.8], hh=[1, 1, 2, 2], region=["r", "r", "s", "s"])
    args = {"household": "hh", "geography": ["region"], "risk": "score", "seed": 2}
    new = sdckit.record_swap(table, None, risk_threshold=0.5, **args)
    with pytest.warns(DeprecationWarning, match="threshold= is now called risk_threshold="):
        old = sdckit.record_swap(table, None, threshold=0.5, **args)
    assert old.parameters == new.parameters
    assert registry.get("record_swap").renamed == {"threshold": "risk_threshold"}


def test_the_scenario_fills_the_roles_and_an_explicit_argument_wins():
    table = _table()
    explicit = sdckit.frequencies(table, S002_KEYS, weight="w")
    filled = sdckit.frequencies(table, scenario=Scenario(keys=S002_KEYS, weight="w"))
    assert repr(filled) == repr(explicit)
    fewer = sdckit.frequencies(table, S002_KEYS[:2], scenario=Scenario(keys=S002_KEYS, weight="w"))
    assert repr(fewer) == repr(sdckit.frequencies(table, S002_KEYS[:2], weight="w"))
    with pytest.raises(SdcError, match="scenario: got dict"):
        sdckit.frequencies(table, S002_KEYS, scenario={"keys": S002_KEYS})


def test_public_functions_pickle_and_keep_their_identity():
    for decl in (*registry.methods(), *registry.measures()):
        func = getattr(sdckit, decl.name)
        assert pickle.loads(pickle.dumps(func)) is func and decl.func is func
        assert declaration(func) is not None and inspect.unwrap(func) is not func


def test_the_wrapper_checks_a_call_through_the_public_function():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SdcError) as err:
            sdckit.frequencies(_table(), S002_KEYS, alpha=2, na_rule="x")
    assert [p.split(":")[0] for p in err.value.problems] == ["alpha", "na_rule"]
