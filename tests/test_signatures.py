"""No public function takes more than 15 top-level parameters (issue 38).

Every parameter of ``inspect.signature`` counts, the ``scenario``, ``progress`` and ``id`` that
:func:`sdckit.scenario.accepts_scenario` adds included. A wide function groups its options into
records (:class:`sdckit._declare.Options`: ``fit=``, ``selection=``, ...), as statsmodels splits a
model from its fit.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

import sdckit
import sdckit.protect
import sdckit.risk
import sdckit.utility
from sdckit._declare import Options

#: the most top-level parameters a public function takes
WIDEST = 15

#: the public packages whose ``__all__`` is checked
PACKAGES = (sdckit, sdckit.risk, sdckit.utility, sdckit.protect)


def _exempt(obj) -> str:
    """Why a public class is not counted ("" when it is): result classes (``*Result``,
    ``RiskThreshold``, ``MSU``) are built by the library and handed to the user, never called
    by the user; a record of options is itself the narrowing (a few fields, each with a default)."""
    if not isinstance(obj, type):
        return ""
    if obj.__name__.endswith("Result") or obj.__name__ in ("RiskThreshold", "MSU"):
        return "a result: built by the library, not called by users"
    if issubclass(obj, Options):
        return "a record of options: each field has a default"
    if issubclass(obj, BaseException):
        return "an exception"
    return ""


def _public():
    seen = set()
    for package in PACKAGES:
        for name in package.__all__:
            obj = getattr(package, name)
            if callable(obj) and not _exempt(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield pytest.param(obj, id=f"{package.__name__}.{name}")


def _count(obj) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return len(inspect.signature(obj).parameters)


@pytest.mark.parametrize("obj", list(_public()))
def test_no_public_function_takes_more_than_15_parameters(obj):
    n = _count(obj)
    assert n <= WIDEST, f"{obj.__name__} takes {n} parameters; expected at most {WIDEST} (group options into records)"


def test_the_records_of_options_are_public():
    """Each record a declared function takes is exported by sdckit (and its package)."""
    from sdckit import registry

    for decl in registry.measures():
        for group, cls in decl.groups.items():
            assert getattr(sdckit, cls.__name__, None) is cls, f"{decl.name}: {group}= record {cls.__name__}"


#: per narrowed function, record fields given by their old flat names (values other than the
#: defaults, so that the record is used): the old form still works for one release
FLAT = {
    "loglinear_risk": {"tol": 1e-6, "max_iter": 500, "criterion": "tau1", "confidence": 0.9},
    "information_loss": {"suppressed": "sdcmicro", "ctbil_dim": 1, "robust": True},
    "synthetic_risk": {"order": 1, "n_attacks": 50, "significance": 0.1},
    "individual_risk": {"method": "exact", "alpha": 0.5, "ci": True},
    "record_linkage_risk": {"standardize": "separate", "second_weight": 0.5},
    "external_risk": {"pair_tol": 0.5, "one_to_one": False},
    "register_risk": {"tol": 1e-9, "max_iter": 50},
}


def _call(name: str):
    """``(data arguments, example)`` of ``name``: its small example on the S002 table, else its
    example on sdcMicro's testdata (the file itself as the second file of a two-file measure)."""
    from conftest import DATA, read_csv_exactly, s002_table
    from examples import EXAMPLES, SMALL_EXAMPLES, inputs
    from sdckit import registry

    decl = registry.get(name)
    if name in SMALL_EXAMPLES:
        return [s002_table()] * len(decl.inputs), SMALL_EXAMPLES[name]
    data = read_csv_exactly(DATA / "sdcmicro" / "testdata.csv")
    return inputs(decl, data, data), EXAMPLES[name]


@pytest.mark.parametrize("name", sorted(FLAT))
def test_old_flat_names_warn_and_give_the_same_result(name):
    from sdckit import registry

    decl = registry.get(name)
    data, example = _call(name)
    flat = FLAT[name]
    grouped = {k: dict(v) for k, v in example.items() if k in decl.groups}
    for field, value in flat.items():
        grouped.setdefault(decl.param(field).group, {})[field] = value
    new = decl.func(*data, **{**example, **grouped})
    groups = {decl.param(n).group for n in flat}
    with pytest.warns(DeprecationWarning, match="is now given as") as record:
        old = decl.func(*data, **example, **flat)
    told = [str(w.message) for w in record if w.category is DeprecationWarning]
    assert {w.filename for w in record if w.category is DeprecationWarning} == {__file__}  # the user's call
    assert all(f"{name}()" in m for m in told) and len(told) == len(groups)
    assert all(any(f"{g}={{" in m for m in told) for g in groups)
    assert old.to_dict() == new.to_dict()


def test_a_field_given_both_ways_is_an_error():
    with pytest.raises(TypeError, match="only"):
        sdckit.loglinear_risk({"a": ["x", "y"]}, ["a"], sampling_fraction=0.5, tol=1e-6, fit={"tol": 1e-7})


def test_a_record_or_a_mapping_is_the_same():
    fit = sdckit.LoglinearFit(tol=1e-6)
    assert sdckit.LoglinearFit.of({"tol": 1e-6}) == fit
    with pytest.raises(sdckit.SdcError, match=r"fit\.tol: got -1"):
        sdckit.LoglinearFit(tol=-1)
    with pytest.raises(sdckit.SdcError, match="fit: tolerance not a field"):
        sdckit.LoglinearFit.of({"tolerance": 1e-6})
