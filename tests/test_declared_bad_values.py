"""Declarations check what they declare: generated from the registry.

For every declared method and measure and every declared parameter of a checkable type, a value
of the wrong type and, where the declaration gives a range or choices, a value outside it are
passed through the function's tiny valid example (tests/examples.py, the small table's example
where there is one). The call must raise an :class:`~sdckit.SdcError` whose message names the
parameter, and the function's own body must not have been entered: the declaration's wrapper
refused the value (so the test fails when a declaration stops checking, even when the function
would refuse the value later by a check of its own). Parameters of type ``any`` cannot be
generated; :data:`NOT_GENERATED` gives the reason for each.
"""

from __future__ import annotations

import inspect
import sys
import warnings

import pytest

from examples import EXAMPLES, S002_KEYS, SMALL_EXAMPLES
from sdckit import SdcError, registry
from sdckit._declare import REQUIRED, TYPES

#: the types a wrong value is generated for; the others are listed in :data:`NOT_GENERATED`
GENERATED = tuple(t for t in TYPES if t != "any")

#: a value of the wrong type, per declared type (none of them is a valid value of that type)
WRONG_TYPE = {
    "column": 2.5,
    "columns": 2.5,
    "column_sets": 2.5,
    "int": "three",
    "number": "three",
    "numbers": "three",
    "bool": "yes",
    "choice": 3,
    "text": 3,
    "texts": 3,
    "seed": "three",
    "mapping": 3,
}

#: the parameters of type ``any``, which take values of several shapes checked by the function
#: itself against the data or other parameters: no wrong value can be generated from the
#: declaration alone (function name, parameter name) -> the reason
NOT_GENERATED_REASONS = {
    "missing": "missing-value codes of any type (numbers, text, a list of them)",
    "scales": "one scale or a mapping variable -> scale; checked against the variables (data)",
    "categories": "categories of any type, checked against the variable's values (data)",
    "pram": "a PRAM result or a mapping key -> diagonal or transition matrix; checked against the keys (data)",
    "anova": "a column name or a list of them, or False; checked against the data",
    "bins": "a number of bins or a list of edges, checked by the toolkit's check_bins",
    "em_start": "three starting values, checked by the toolkit's check_em_start",
    "comparison_levels": "a tolerance or cut points per variable, checked by check_comparison_levels",
    "model": "a model formula, a list of terms or a name; parsed against the keys (data)",
    "membership_model": "a model formula or a name; parsed against the keys (data)",
    "covariance": "a covariance matrix or a method name; checked against the variables (data)",
    "dis_fraction": "'weights' or a number; checked by the toolkit's rule",
    "importance": "a ranking per key (a list or a mapping); checked against the keys",
    "combs": "sizes of key combinations (an int or a list); checked against the keys",
    "matrix": "a transition matrix per variable; checked against the variable's categories (data)",
    "hierarchy": "a hierarchy table or its file; checked against the variable's values (data)",
    "ordered": "True/False, sensitive names, or name -> categories in order; checked against the data",
    "value": "a number, or a category of an ordered text column (data)",
    "replacement": "a number, or a category of an ordered text column (data)",
}


def _not_generated() -> dict[tuple[str, str], str]:
    out = {}
    for decl in (*registry.methods(), *registry.measures()):
        for p in decl.params:
            if p.type not in GENERATED:
                out[(decl.name, p.name)] = NOT_GENERATED_REASONS.get(p.name, "")
    return out


#: (function, parameter) -> why no bad value is generated for it
NOT_GENERATED = _not_generated()


def _out_of_range(p) -> list:
    """Values outside the declared range or choices (none when there is neither)."""
    if p.choices:
        return ["not-one-of-the-choices"]
    out = []
    if p.type in ("int", "number", "numbers", "seed"):
        low, high = (0, None) if p.type == "seed" else (p.low, p.high)
        if low is not None:
            out.append(int(low) - 1 if p.type in ("int", "seed") else (low if p.low_open else low - 1.0))
        if high is not None:
            out.append(int(high) + 1 if p.type == "int" else (high if p.high_open else high + 1.0))
    return out


def _cases():
    for decl in (*registry.methods(), *registry.measures()):
        for p in decl.params:
            if p.type not in GENERATED:
                continue
            yield pytest.param(decl.name, p.name, WRONG_TYPE[p.type], id=f"{decl.name}-{p.name}-type")
            for i, value in enumerate(_out_of_range(p)):
                yield pytest.param(decl.name, p.name, value, id=f"{decl.name}-{p.name}-range{i}")


def _example(name: str) -> dict:
    return dict(SMALL_EXAMPLES.get(name, EXAMPLES[name]))


def _table():
    import pandas as pd

    return pd.DataFrame({k: ["a", "b", "a", "b"] for k in S002_KEYS} | {"w": [1.0, 2.0, 3.0, 4.0]})


def _entered(func, call) -> tuple[bool, BaseException | None]:
    """Whether ``call()`` entered the body of ``func`` (the undecorated function), and what it
    raised."""
    code = func.__code__
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(True)

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - what was raised is the test's subject
        return bool(seen), exc
    finally:
        sys.setprofile(old)
    return bool(seen), None


@pytest.mark.parametrize(("name", "param", "value"), list(_cases()))
def test_a_bad_value_is_refused_by_the_declaration(name, param, value):
    decl = registry.get(name)
    kwargs = _example(name)
    group = decl.param(param).group
    if group:  # a record's field in its record (fit={"tol": ...})
        kwargs[group] = {**kwargs.get(group, {}), param: value}
    else:
        kwargs[param] = value
    data = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entered, exc = _entered(inspect.unwrap(decl.func), lambda: decl.func(*[data] * len(decl.inputs), **kwargs))
    assert isinstance(exc, SdcError), f"{name}({param}={value!r}) raised {exc!r}"
    text = str(exc)
    param = decl.param(param).qualified  # a record's field is named with its record: fit.tol
    assert f"{param}:" in text or f"{param}[" in text, text
    assert not entered, f"{name}: {param}={value!r} reached the function; its declaration did not refuse it"


def test_every_declared_parameter_is_generated_or_listed_with_a_reason():
    """A parameter of type ``any`` gets a reason here; a reason for a name that no declaration
    takes as ``any`` any more is removed."""
    unlisted = sorted(f"{f}.{p}" for (f, p), why in NOT_GENERATED.items() if not why)
    assert unlisted == [], "parameters of type 'any' without a reason in NOT_GENERATED_REASONS"
    used = {p for (_, p) in NOT_GENERATED}
    assert sorted(set(NOT_GENERATED_REASONS) - used) == []


def test_the_examples_pass_their_declarations():
    """The examples the bad values are put in are valid, so that the one problem is the bad value."""
    for decl in (*registry.methods(), *registry.measures()):
        example = _example(decl.name)
        decl.check({k: v for k, v in example.items()})
        missing = [p.name for p in decl.params if p.default is REQUIRED and p.name not in example]
        assert missing == [], decl.name
