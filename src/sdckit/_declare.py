"""Declarations of the public protection methods and measures.

Each public method or measure is declared once, next to its function, with :func:`declare`:
its parameters (name from the glossary, type, range or choices, default, a one-line help
text), the roles a workflow fills from the scenario, the data it reads, whether it is random
and, for a protection method, what it changes. :mod:`sdckit.registry` collects the
declarations; the recipe schema, the ``--step`` parser of the command line, the parameter
check and role filling of :class:`sdckit.SdcProblem` and the docs' parameter tables are derived
from them. The default of a parameter comes from the function's signature and its help text,
unless given, from the first sentence of its numpydoc description, so neither is written twice.

:func:`declare` returns the function wrapped (as scikit-learn's ``validate_params`` does; same
name, docstring and signature, the declaration its attribute, see :func:`checking`): each call
takes an old parameter name of ``renamed=`` under its new one (with a DeprecationWarning),
checks every declared parameter given a value other than its default and raises one
:class:`~sdckit.SdcError` listing every problem, fills the roles a measure left out from
``scenario=`` by ``Param.role`` (the one place where a role names a parameter), and calls the
function with the arguments as given. A function checks by hand only what the declaration
cannot: a value against the data or against another parameter.
tests/test_declared_bad_values.py passes a bad value of every declared parameter.

This module sits low: it imports only the errors, the validation toolkit, the deprecation
helper and the roles table.

Adding a protection method: write its kernel (``_core``) and its function in ``protect/``
with ``@declare("method", Param(...), ..., changes=..., aliases=...)`` above it, add a new
parameter name to ``docs/glossary.md``, run ``tools/registry_docs.py`` (the packages' names,
the parameter tables, the recipe schema, the out-of-core list and the measures table), and
write its tests. The workflow, recipes, ``--step`` and the common tests pick it up from its one
example in tests/examples.py.
A measure is the same with ``@declare("measure", ..., inputs=..., assessed=... or excluded=...)``
in ``risk/`` or ``utility/``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ._assessed import Assessed
from ._deprecation import warn_deprecated
from ._errors import SdcError
from ._roles import ROLES
from ._validation import (
    RULES,
    as_name_list,
    check_bool,
    check_choice,
    check_column,
    check_int,
    check_number,
    check_seed,
    number_text,
    raise_problems,
)

__all__ = [
    "COMMON",
    "LIST_SEPARATOR",
    "REQUIRED",
    "TYPES",
    "Declaration",
    "Options",
    "Param",
    "declaration",
    "declare",
    "options",
    "with_help",
]

#: the value types a parameter can have
TYPES = ("column", "columns", "column_sets", "int", "number", "numbers", "bool", "choice", "text", "texts",
         "seed", "mapping", "any")  # fmt: skip
#: parameters every measure or method may take that are not part of a declaration (the engine,
#: the scenario, a progress switch, an identifier column)
COMMON = ("engine", "scenario", "progress", "id")
#: separates the items of a list inside one ``--step`` value (``,`` separates the parameters)
LIST_SEPARATOR = ";"
#: the names every function declares alike: their type, the scenario role that fills them, and
#: their choices (a declaration writes just ``Param("keys")``)
#: (the roles' entries come from the roles table, ``_roles.ROLES``: those marked ``standard``)
STANDARD: dict[str, tuple[str, str | None, tuple]] = {
    **{r.name: (r.kind, r.name, ()) for r in ROLES if r.standard},
    "alpha": ("number", None, ()),
    "allow_degenerate_keys": ("bool", None, ()),
    "seed": ("seed", None, ()),
    "zero_weight": ("choice", None, ("error", "drop")),
}
#: the attributes of a numeric range, and their values when none is declared
_BOUNDS = ("low", "high", "low_open", "high_open", "allow_inf")
_UNSET = (None, None, False, False, False)
#: the numeric types, whose range a glossary name's rule gives
_NUMERIC = ("int", "number")
#: the attribute holding a function's declaration
ATTRIBUTE = "__sdckit_declaration__"


class _Required:
    """The default of a parameter that has none (the caller must give it)."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
_FROM_SIGNATURE: Any = object()
_FROM_NAME: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a declared method or measure.

    ``type`` is one of :data:`TYPES`; ``low``/``high`` (with ``low_open``/``high_open``) bound a
    number, ``choices`` lists the values of a ``"choice"``; ``role`` names the scenario role a
    workflow fills the parameter from when it is not given (``"keys"``, ``"weight"``,
    ``"numeric_keys"``, ...); ``per_variable`` allows a mapping variable -> value as well as one
    value. ``default`` and ``help`` come from the function when left out; a name of
    :data:`STANDARD` takes its type, role and choices from there, and a numeric name of the
    toolkit's ``RULES`` its range.
    """

    name: str
    type: str | None = None
    help: str = ""
    default: Any = _FROM_SIGNATURE
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    choices: tuple = ()
    role: str | None = _FROM_NAME
    per_variable: bool = False
    #: None is accepted as well, though the default is another value (``term_test=None``)
    nullable: bool = False
    #: the record of options (:class:`Options`) the parameter is a field of: the function takes
    #: it as ``group={name: value}``; ``name=value`` is its old flat form (a DeprecationWarning)
    group: str | None = None

    def __post_init__(self) -> None:
        self._take_standard()
        check_choice(self.type, f"{self.name}: type", TYPES)
        if self.type == "choice" and not self.choices:
            raise SdcError(f"{self.name}: a choice parameter needs its choices")
        object.__setattr__(self, "choices", tuple(self.choices))
        rule = RULES.get(self.name)
        if rule is not None and (self.type in _NUMERIC or (self.type == "numbers" and self.bounds == _UNSET)):
            self._take_rule(rule)  # a list of numbers with a range of its own (breaks' edges) keeps it

    @property
    def bounds(self) -> tuple:
        """``(low, high, low_open, high_open, allow_inf)``."""
        return tuple(getattr(self, b) for b in _BOUNDS)

    def _take_standard(self) -> None:
        """A role or a name every function shares (:data:`STANDARD`) is declared once, there:
        its type, its role and its choices come from it (another type is an error; a function
        may still say that a standard name fills no role, ``role=None``)."""
        kind, role, choices = STANDARD.get(self.name, (None, None, ()))
        if self.type is None:
            if kind is None:
                raise SdcError(f"{self.name}: declared without a type; expected one of {', '.join(TYPES)}")
            object.__setattr__(self, "type", kind)
        elif kind is not None and self.type != kind:
            raise SdcError(f"{self.name}: declared as {self.type}; every function takes it as {kind}")
        if self.role is _FROM_NAME:
            object.__setattr__(self, "role", role)
        if not self.choices:
            object.__setattr__(self, "choices", choices)

    def _take_rule(self, rule) -> None:
        """A glossary name's range is written once, in the validation toolkit's ``RULES``: the
        declaration takes it from there (a declaration that writes another range is an error)."""
        mine, theirs = self.bounds, tuple(getattr(rule, b) for b in _BOUNDS)
        if mine != _UNSET and mine != theirs:
            raise SdcError(
                f"{self.name}: declared with the range {mine}; its rule in the validation toolkit is {theirs} "
                "(declare no range: the rule is taken from there)"
            )
        if self.type != "numbers" and rule.integer != (self.type == "int"):
            raise SdcError(f"{self.name}: declared as {self.type}; its rule says integer={rule.integer}")
        for b, v in zip(_BOUNDS, theirs):
            object.__setattr__(self, b, v)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def qualified(self) -> str:
        """The name messages and the docs give: ``fit.tol`` for field ``tol`` of record ``fit``."""
        return f"{self.group}.{self.name}" if self.group else self.name

    @property
    def allow_none(self) -> bool:
        return self.default is None or self.nullable

    def check(self, value):
        """``value`` checked with the validation toolkit (the normalised value, or an
        :class:`~sdckit.SdcError` naming the parameter)."""
        if value is None and self.allow_none:
            return None
        if self.group:
            return replace(self, name=self.qualified, group=None).check(value)
        if self.per_variable and isinstance(value, Mapping):
            return {k: replace(self, name=f"{self.name}[{k!r}]").check(v) for k, v in value.items()}
        return _CHECKS[self.type](self, value)

    def parse(self, text: str):
        """A value written on the command line (``text``) as this parameter's type; lists are
        separated by :data:`LIST_SEPARATOR`."""
        text = text.strip()
        if self.per_variable and "=" in text:
            return {k: _PARSERS[self.type](self, str(v)) for k, v in _parse_mapping(self, text).items()}
        return _PARSERS[self.type](self, text)

    def format(self, value) -> str:
        """``value`` written as a command-line value that :meth:`parse` reads back."""
        if value is None:
            return "none"
        if isinstance(value, Mapping):
            return LIST_SEPARATOR.join(f"{_format_scalar(k)}={_format_scalar(v)}" for k, v in value.items())
        if isinstance(value, (list, tuple)):
            flat = [x for v in value for x in (v if isinstance(v, (list, tuple)) else [v])]
            return LIST_SEPARATOR.join(_format_scalar(v) for v in flat)
        return _format_scalar(value)

    def range_text(self) -> str:
        """The range or choices, for the docs (empty when there is none)."""
        if self.choices:
            return ", ".join(f"`{c}`" for c in self.choices)
        if self.low is None and self.high is None:
            return ""
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low_open or self.low is None else "["
        right = ")" if self.high_open or self.high is None else "]"
        return f"{left}{lo}, {hi}{right}"

    def json_schema(self) -> dict:
        """The JSON Schema of this parameter's value in a recipe."""
        schema = dict(_SCHEMAS[self.type])
        if self.type in ("int", "number", "numbers"):
            scalar: dict = {"type": "integer" if self.type == "int" else "number"}
            if self.low is not None:
                scalar["exclusiveMinimum" if self.low_open else "minimum"] = self.low
            if self.high is not None:
                scalar["exclusiveMaximum" if self.high_open else "maximum"] = self.high
            if self.allow_inf:
                scalar = {"anyOf": [scalar, _FLOAT_TAG_SCHEMA]}
            schema = {"anyOf": [scalar, {"type": "array", "items": scalar}]} if self.type == "numbers" else scalar
        if self.choices:
            schema["enum"] = list(self.choices)
        if self.per_variable:
            schema = {"anyOf": [schema, {"type": "object", "additionalProperties": schema}]}
        if self.allow_none:
            schema = {"anyOf": [schema, {"type": "null"}]}
        if self.help:
            schema = {**schema, "description": self.help}
        return schema


class Options:
    """A record of options of a declared function (a frozen dataclass made by :func:`options`):
    ``fit=LoglinearFit(tol=1e-6)`` or the plain mapping ``fit={"tol": 1e-6}``, as statsmodels
    splits a model from its fit.

    Each field is declared with a :class:`Param`; a value other than the field's default is
    checked when the record is made, every problem gathered into one
    :class:`~sdckit.SdcError` naming the field as ``group.field`` (``fit.tol``).
    """

    #: the name the functions take the record under (``fit``)
    __group__: ClassVar[str] = ""
    #: its fields' declarations (``group`` set, defaults from the dataclass)
    __params__: ClassVar[tuple[Param, ...]] = ()

    def __post_init__(self) -> None:
        problems: list[str] = []
        for p in self.__params__:
            _gather(p, getattr(self, p.name), problems)
        if problems:
            raise_problems(problems)

    @classmethod
    def of(cls, value) -> Options:
        """``value`` (None, a record of this class or a mapping of its fields) as a record."""
        if value is None:
            default = _DEFAULT_RECORDS.get(cls)
            if default is None:  # one record of the defaults per class (frozen: shared safely)
                default = _DEFAULT_RECORDS[cls] = cls()
            return default
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise SdcError(
                f"{cls.__group__}: got a {type(value).__name__}; expected a {cls.__name__} or a mapping of its fields"
            )
        names = [p.name for p in cls.__params__]
        unknown = [str(k) for k in value if k not in names]
        if unknown:
            raise SdcError(f"{cls.__group__}: {', '.join(unknown)} not a field; expected some of {', '.join(names)}")
        return cls(**value)

    def changed(self) -> dict:
        """The fields whose value is not the default, by name."""
        return {p.name: v for p in self.__params__ if not _is_default(p, v := getattr(self, p.name))}

    def fields(self) -> dict:
        """Every field's value, by name."""
        return {p.name: getattr(self, p.name) for p in self.__params__}


#: a record of the defaults per record class (:meth:`Options.of` of None)
_DEFAULT_RECORDS: dict[type, Options] = {}


def options(group: str, *params: Param) -> Callable:
    """Decorate a class of fields as a record of options (:class:`Options`) taken by the
    declared functions as ``group=``: a frozen dataclass (written ``@dataclass(frozen=True)``
    below the decorator, so that type checkers and the docs see its fields) whose fields are ``params``
    (every field declared, defaults from the class body; help texts from the class's numpydoc
    ``Parameters``, where the fields are documented once)."""

    def make(cls: type) -> type:
        if not dataclasses.is_dataclass(cls):
            cls = dataclass(frozen=True)(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        names = [p.name for p in params]
        if sorted(fields) != sorted(names):
            raise SdcError(f"{cls.__name__}: declared {names}; the record has {list(fields)}")
        setattr(cls, "__group__", group)  # noqa: B010 (a class attribute of every record)
        setattr(cls, "__params__", tuple(replace(_filled_field(p, fields[p.name]), group=group) for p in params))  # noqa: B010
        return cls

    return make


def _filled_field(p: Param, f: dataclasses.Field) -> Param:
    if p.default is not _FROM_SIGNATURE:
        return p
    if f.default is not dataclasses.MISSING:
        return replace(p, default=f.default)
    raise SdcError(f"{p.name}: a field of a record of options needs a default")


@dataclass(frozen=True)
class Declaration:
    """A public protection method (``kind="method"``) or measure (``kind="measure"``).

    ``inputs`` are the data arguments (``data``, or ``original`` and ``protected``, ...);
    ``common`` the parameters of :data:`COMMON` the function also takes.
    """

    name: str
    kind: str
    func: Callable = field(repr=False)
    params: tuple[Param, ...]
    inputs: tuple[str, ...] = ("data",)
    random: bool = False
    changes: str = ""
    aliases: tuple[str, ...] = ()
    title: str = ""
    common: tuple[str, ...] = ()
    #: the short title a method's result shows (its summary's heading, its plot's title)
    heading: str = ""
    #: whether the out-of-core engines (DuckDB, Spark) run it; else only the in-memory engine
    out_of_core: bool = False
    #: old parameter name -> its new name (still accepted, with a DeprecationWarning)
    renamed: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: record name -> its class (:class:`Options`); its fields are in ``params`` with ``group``
    groups: Mapping[str, type[Options]] = field(default_factory=dict, compare=False)
    #: a measure's facts for the assessment's table (``_assessed.Assessed``), or None
    assessed: Assessed | None = field(default=None, compare=False)
    #: why a measure is not in the assessment's table (sdckit runs it only when called)
    excluded: str = ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise SdcError(f"{name}: not a parameter of {self.name}; expected one of {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def roles(self) -> dict[str, str]:
        """Parameter name -> the scenario role a workflow fills it from."""
        return {p.name: p.role for p in self.params if p.role and not p.group}

    def grouped(self, parameters: Mapping) -> dict:
        """``parameters`` with the fields of a record given by their flat names (``tol=``, as
        the command line, a recipe or the docs' tables name them) put into the record's mapping
        (``fit={"tol": ...}``), without a warning: the form the function takes."""
        return _nested(self, parameters, warn=False)

    def check_names(self, parameters: Mapping) -> None:
        """Every given parameter is one the function takes (its declared ones, its records and
        ``common``; a name the function renamed is accepted too, so that a recipe saved before
        the rename replays, with the function's deprecation warning)."""
        accepted = (*self.names, *self.groups, *self.common)
        unknown = [str(p) for p in parameters if p not in accepted and p not in self.renamed]
        if unknown:
            raise SdcError(
                f"{', '.join(unknown)}: not a parameter of {self.name}; expected some of {', '.join(accepted)}"
            )

    def check(self, parameters: Mapping) -> dict:
        """The parameters checked by name and value (the normalised values)."""
        self.check_names(parameters)
        return {
            name: self.param(name).check(value)
            if name in self.names
            else self.groups[name].of(value)
            if name in self.groups
            else value
            for name, value in parameters.items()
        }


def declare(
    kind: str,
    *params: Param,
    inputs=("data",),
    random=False,
    changes="",
    aliases=(),
    heading="",
    out_of_core=False,
    renamed: Mapping[str, str] | None = None,
    grouped: tuple[type[Options], ...] = (),
    assessed: Assessed | None = None,
    excluded: str = "",
) -> Callable:
    """Decorate a public function with its declaration; the function returned checks what it
    declares (see :func:`checking`).

    Every parameter of the signature except the data (``inputs``) and :data:`COMMON` must be
    declared, and every declared one must be in the signature. ``heading`` is the short title
    a method's result shows; ``out_of_core`` says that the engines without the records in
    memory (DuckDB, Spark) run the function too; ``renamed`` maps old parameter names to the
    new ones (the old name still works, with a DeprecationWarning). ``grouped`` lists the
    records of options (:func:`options`) the function takes, each as one parameter named by
    its group (``fit=``); their fields are declared on the record and are parameters of the
    declaration too (``Param.group`` set), so that the command line, the docs and the checks
    see them; a field given by its flat name (``tol=``) goes into its record, with a
    DeprecationWarning. A measure says what the assessment does with it: ``assessed`` (an
    :class:`~sdckit._assessed.Assessed`: its roles, headlines, per-step and search use) or
    ``excluded`` (why sdckit runs it only when called); a method says neither.
    """
    check_choice(kind, "kind", ("method", "measure"))
    if (assessed is not None or excluded) and (kind != "measure" or (assessed is not None and excluded)):
        raise SdcError("declare: a measure takes assessed= or excluded= (one of them); a method neither")

    def attach(func: Callable) -> Callable:
        sig = inspect.signature(func).parameters
        expected = [n for n in sig if n not in inputs and n not in COMMON]
        groups = {cls.__group__: cls for cls in grouped}
        names = [p.name for p in params] + list(groups)
        if sorted(expected) != sorted(names) or any(n not in sig for n in inputs):
            raise SdcError(f"{func.__name__}: declared {names}; the signature has {expected}")
        leaves = names + [p.name for c in grouped for p in c.__params__]
        unknown = [new for new in (renamed or {}).values() if new not in leaves]
        if unknown:
            raise SdcError(f"{func.__name__}: renamed to {unknown}, which it does not declare")
        decl = Declaration(
            name=func.__name__,
            kind=kind,
            func=func,
            params=(*(_filled(p, sig[p.name]) for p in params), *(p for c in grouped for p in c.__params__)),
            inputs=tuple(inputs),
            random=bool(random),
            changes=changes,
            aliases=tuple(aliases),
            common=tuple(n for n in sig if n in COMMON),
            heading=heading,
            out_of_core=bool(out_of_core),
            renamed=dict(renamed or {}),
            groups=groups,
            assessed=assessed,
            excluded=str(excluded),
        )
        return checking(func, decl)

    return attach


def checking(func: Callable, decl: Declaration) -> Callable:
    """``func`` wrapped so that every call checks what ``decl`` declares, as scikit-learn's
    ``validate_params`` does.

    The wrapper takes an old parameter name (``decl.renamed``) under its new name, with a
    DeprecationWarning; checks every declared parameter given a value other than its default
    (defaults cost nothing), every problem gathered into one :class:`~sdckit.SdcError`; fills
    the parameters a measure left out from ``scenario=`` (a :class:`~sdckit.Scenario`, given
    by the decorator that adds the argument) by their ``Param.role``; then calls ``func`` with
    the arguments as given. Its signature is ``func``'s; the declaration is its attribute.
    """
    sig = inspect.signature(func)
    positional = [n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    declared = {p.name: p for p in decl.params if not p.group}
    by_position = tuple((i, declared[n]) for i, n in enumerate(positional) if n in declared)
    index = {n: i for i, n in enumerate(positional)}
    roles = tuple(decl.roles.items())
    # a measure's scenario= (added by the decorator above it); a method is given its roles by the workflow
    takes_scenario = "scenario" in sig.parameters or decl.kind != "measure"
    renamed = decl.renamed
    groups = decl.groups
    group_of = {p.name: p.group for p in decl.params if p.group}

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if renamed:
            _take_renamed(decl, renamed, kwargs)
        if groups and not group_of.keys().isdisjoint(kwargs):
            kwargs = _nested(decl, kwargs, warn=True)
        scenario = None if takes_scenario else kwargs.pop("scenario", None)
        problems = _problems(args, kwargs, by_position, declared)
        if groups:
            _take_records(groups, kwargs, problems)
        if problems:
            raise_problems(problems)
        if scenario is not None:
            for name, role in roles:
                value = getattr(scenario, role)
                if name not in kwargs and index.get(name, len(args)) >= len(args) and value not in (None, ()):
                    kwargs[name] = value
        return func(*args, **kwargs)

    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    setattr(wrapper, ATTRIBUTE, replace(decl, func=wrapper))
    return wrapper


def _take_renamed(decl: Declaration, renamed: Mapping[str, str], kwargs: dict) -> None:
    """Each old parameter name in ``kwargs`` replaced by its new one, with a warning (a new
    name that is a field of a record goes into its record, one warning naming that form)."""
    name = decl.name
    group_of = {p.name: p.group for p in decl.params if p.group}
    for old, new in renamed.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{name}(): give {new}= only ({old}= is its old name)")
            group = group_of.get(new)
            if group is None:
                warn_deprecated(f"{name}(): {old}= is now called {new}=", stacklevel=_user_stacklevel())
                kwargs[new] = kwargs.pop(old)
                continue
            kwargs[group] = _merged(decl, group, kwargs.get(group), {new: kwargs.pop(old)})
            warn_deprecated(f'{name}(): {old}= is now given as {group}={{"{new}": ...}}', stacklevel=_user_stacklevel())


#: the folder of the package: a deprecation warning names the first frame outside it
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel() -> int:
    """The ``stacklevel`` of :func:`warn_deprecated`, called by the caller of this function,
    that names the first frame outside sdckit (the user's call, however many of sdckit's
    wrappers are between)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _nested(decl: Declaration, parameters: Mapping, warn: bool) -> dict:
    """``parameters`` with each record field given by its flat name put into its record's
    mapping (a warning naming the new form when ``warn``)."""
    group_of = {p.name: p.group for p in decl.params if p.group}
    out: dict = {}
    moved: dict[str, dict] = {}
    for name, value in parameters.items():
        if name in group_of:
            moved.setdefault(group_of[name], {})[name] = value  # type: ignore[index]
        else:
            out[name] = value
    for group, given in moved.items():
        out[group] = _merged(decl, group, out.get(group), given)
        if warn:
            new = ", ".join(f'"{n}": ...' for n in given)
            old = ", ".join(f"{n}=" for n in given)
            warn_deprecated(f"{decl.name}(): {old} is now given as {group}={{{new}}}", stacklevel=_user_stacklevel())
    return out


def _merged(decl: Declaration, group: str, record, given: dict) -> dict:
    """The fields ``given`` by their flat names added to what ``group=`` gave (``record``)."""
    if record is None:
        return given
    base = record.changed() if isinstance(record, Options) else dict(record) if isinstance(record, Mapping) else None
    if base is None:
        return record  # not a record: refused by the record's own check
    both = [n for n in given if n in base]
    if both:
        raise TypeError(f"{decl.name}(): give {group}={{'{both[0]}': ...}} only ({both[0]}= is its old form)")
    return {**base, **given}


def _take_records(groups: Mapping[str, type[Options]], kwargs: dict, problems: list[str]) -> None:
    """Each record argument made a record of its class (defaults when left out)."""
    for group, cls in groups.items():
        try:
            kwargs[group] = cls.of(kwargs.get(group))
        except SdcError as err:
            problems.extend(err.problems)


def _problems(args: tuple, kwargs: dict, by_position: tuple, declared: dict) -> list[str]:
    """The problems of the declared parameters given a value other than their default."""
    problems: list[str] = []
    n = len(args)
    for i, p in by_position:
        if i >= n:
            break
        _gather(p, args[i], problems)
    for name, value in kwargs.items():
        p = declared.get(name)
        if p is not None:
            _gather(p, value, problems)
    return problems


#: the value types compared with a default by equality (others only by identity)
_SCALARS = (int, float, str, bool, type(None))


def _is_default(p: Param, value) -> bool:
    default = p.default
    return value is default or (type(value) is type(default) and type(value) in _SCALARS and value == default)


def _gather(p: Param, value, problems: list[str]) -> None:
    if _is_default(p, value):
        return
    try:
        p.check(value)
    except SdcError as err:
        problems.extend(err.problems)


def declaration(func) -> Declaration | None:
    """The declaration of a function (None for an undeclared one), without the help texts the
    docstring gives (see :func:`with_help`)."""
    return getattr(func, ATTRIBUTE, None)


def with_help(decl: Declaration) -> Declaration:
    """The declaration with the title and the help texts the declaration leaves out taken from
    the function's numpydoc docstring (done when the registry is built, not at import)."""
    doc = inspect.unwrap(decl.func).__doc__ or ""
    helps: dict[str | None, dict[str, str]] = {None: docstring_params(doc)}
    helps.update({g: docstring_params(cls.__doc__ or "") for g, cls in decl.groups.items()})
    params = tuple(p if p.help else replace(p, help=helps[p.group].get(p.name, "")) for p in decl.params)
    return replace(decl, params=params, title=decl.title or _first_sentence(doc.strip().split("\n\n")[0]))


def _filled(p: Param, sp: inspect.Parameter) -> Param:
    if p.default is not _FROM_SIGNATURE:
        return p
    return replace(p, default=REQUIRED if sp.default is inspect.Parameter.empty else sp.default)


# ---------------------------------------------------------------------------------------------
# help text from the numpydoc "Parameters" section
# ---------------------------------------------------------------------------------------------
def docstring_params(doc: str) -> dict[str, str]:
    """Parameter name -> the first sentence of its numpydoc description."""
    text = inspect.cleandoc(doc)
    m = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n[A-Z][A-Za-z ]+\n-+\n|\Z)", text, flags=re.S | re.M)
    if not m:
        return {}
    out: dict[str, str] = {}
    current: list[str] = []
    lines: list[str] = []
    for line in m.group(1).splitlines():
        if line and not line[0].isspace():
            _store(out, current, lines)
            current = [n.strip() for n in line.split(":")[0].split(",") if n.strip()]
            lines = []
        else:
            lines.append(line.strip())
    _store(out, current, lines)
    return out


def _store(out: dict, names: list[str], lines: list[str]) -> None:
    sentence = _first_sentence(" ".join(x for x in lines if x))
    for name in names:
        out.setdefault(name, sentence)


def _first_sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r":(?:func|class|meth|attr|data|mod):`~?([^`]+)`", r"`\1`", text).replace("``", "`")
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif not code and ch in "([{":
            depth += 1
        elif not code and ch in ")]}":
            depth -= 1
        elif ch in ".;" and not code and depth <= 0 and text[i + 1 : i + 2] in ("", " "):
            if not text[:i].endswith(("e.g", "i.e", "cf", "etc")):
                return text[:i]
    return text.rstrip(".")


# ---------------------------------------------------------------------------------------------
# checks (the validation toolkit), command-line parsing, JSON Schema, per type
# ---------------------------------------------------------------------------------------------
def _rule(p: Param):
    """The toolkit's rule of ``p``'s glossary name (``pd['x']``: one variable's value of ``pd``),
    for a number and for each of a list of them (``k=[2, 3]``); a list with a range of its own
    (``breaks`` as interval edges, not a number of intervals) is checked as declared."""
    rule = RULES.get(p.name.split("[")[0].rsplit(".", 1)[-1])
    if rule is None or (p.type == "numbers" and p.bounds != tuple(getattr(rule, b) for b in _BOUNDS)):
        return None
    return rule


def _number_check(p: Param):
    """The check of one number of ``p``: its glossary rule, or its declared range (a list of
    numbers finds it once for all its items)."""
    rule = _rule(p)
    if rule is not None:
        return rule.check
    return lambda value, name: check_number(
        value, name, low=p.low, high=p.high, low_open=p.low_open, high_open=p.high_open, allow_inf=p.allow_inf
    )


def _number(p: Param, value):
    return _number_check(p)(value, p.name)


def _numbers(p: Param, value):
    """A number or a list of them (a tuple, an array; text ``"2,3,5"`` as typed on the
    command line)."""
    if isinstance(value, str):
        items = [number_text(t.strip()) for t in value.split(",") if t.strip()]
        value = items[0] if len(items) == 1 else items or value
    elif hasattr(value, "__array__") and getattr(value, "ndim", False):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        fast = _plain_within(p, value)
        if fast is not None:
            return fast
        check = _number_check(p)
        return [check(v, p.name) for v in value]
    return _number_check(p)(value, p.name)


def _plain_within(p: Param, values) -> list[float] | None:
    """``values`` as floats when every one is a plain finite int or float within ``p``'s
    declared range (one pass, as a list of interval edges usually is); None otherwise, or when
    a glossary rule checks the numbers (the per-item check then names the one at fault)."""
    if _rule(p) is not None or not all(type(v) is float or type(v) is int for v in values):
        return None
    x = [float(v) for v in values]
    if not x:
        return x
    lo, hi = min(x), max(x)
    if math.isnan(sum(x)) or (not p.allow_inf and (math.isinf(lo) or math.isinf(hi))):
        return None
    if p.low is not None and (lo < p.low or (p.low_open and lo == p.low)):
        return None
    if p.high is not None and (hi > p.high or (p.high_open and hi == p.high)):
        return None
    return x


def _column(p: Param, value):
    """One column name (a list of one name is taken too)."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        as_name_list(value, p.name)
    else:
        check_column(value, p.name, allow_none=False)
    return value


def _texts(p: Param, value):
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise SdcError(f"{p.name}: got a {type(value).__name__}; expected a text or a list of texts")
    return list(items)


def _column_sets(p: Param, value):
    if isinstance(value, (str, int)) or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
        return [as_name_list(value, p.name)]
    if not isinstance(value, (list, tuple)):
        raise SdcError(f"{p.name}: got a {type(value).__name__}; expected column names or a list of lists of them")
    return [as_name_list(list(v), f"{p.name}[{i}]", allow_empty=True) for i, v in enumerate(value)]


def _text(p: Param, value):
    if not isinstance(value, str):
        raise SdcError(f"{p.name}: got a {type(value).__name__}; expected a text")
    return value


def _mapping(p: Param, value):
    if not isinstance(value, Mapping):
        raise SdcError(f"{p.name}: got a {type(value).__name__}; expected a mapping")
    return value


_CHECKS: dict[str, Callable] = {
    "column": _column,
    "columns": lambda p, v: as_name_list(v, p.name),
    "column_sets": _column_sets,
    "int": lambda p, v: _rule(p).check(v, p.name) if _rule(p) else check_int(v, p.name, low=p.low, high=p.high),  # type: ignore[arg-type,union-attr]
    "number": _number,
    "numbers": _numbers,
    "bool": lambda p, v: check_bool(v, p.name),
    "choice": lambda p, v: check_choice(v, p.name, p.choices),
    "text": _text,
    "texts": _texts,
    "seed": lambda p, v: check_seed(v, p.name),
    "mapping": _mapping,
    "any": lambda p, v: v,
}


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(LIST_SEPARATOR) if t.strip()]


def _format_scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # 'inf', '-inf', '0.1': float() reads it back exactly
    return str(value)


def _parse_number(p: Param, text: str):
    try:
        x = float(text)
    except ValueError:
        raise SdcError(f"{p.name}: got {text!r}; expected a number") from None
    return int(x) if x.is_integer() and "." not in text else x


def _parse_int(p: Param, text: str):
    """An integer's text; another number is read as that number, for the name's rule to refuse
    with its own message (``k=2.5``: "k: got 2.5; expected an integer >= 1")."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise SdcError(f"{p.name}: got {text!r}; expected an integer")


def _parse_bool(p: Param, text: str):
    low = text.lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise SdcError(f"{p.name}: got {text!r}; expected true or false")


def _parse_numbers(p: Param, text: str):
    items = [_parse_number(p, t) for t in _items(text)]
    return items[0] if len(items) == 1 else items


def _parse_mapping(p: Param, text: str):
    out: dict = {}
    for item in _items(text):
        if "=" not in item:
            raise SdcError(f"{p.name}: got {item!r}; expected pairs OLD=NEW separated by '{LIST_SEPARATOR}'")
        old, new = (s.strip() for s in item.split("=", 1))
        out[_scalar(old)] = _scalar(new)
    return out


#: a number as it is written plainly: no leading zero (``01`` is a code), no sign ``+``, no
#: ``_``, no ``inf`` or ``nan``
_PLAIN_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]+)?")


def _scalar(text: str):
    """A number written plainly as text as a number (an integer when it is one), other text as
    is: a code with a leading zero (``01``) stays text, so that it names the category ``01`` of
    a text column rather than the number 1."""
    if not _PLAIN_NUMBER.fullmatch(text) or not any(c.isdigit() for c in text.lower().split("e")[0]):
        return text
    x = float(text)
    return int(x) if x.is_integer() and "." not in text and "e" not in text.lower() else x


def _parse_any(p: Param, text: str):
    """JSON when the text is JSON (a number, ``true``, a list), else the text; items separated
    by :data:`LIST_SEPARATOR` make a list of such values."""
    if LIST_SEPARATOR in text:
        return [_parse_any(p, t) for t in _items(text)]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_none(fn: Callable) -> Callable:
    return lambda p, text: None if (p.allow_none and text.lower() == "none") else fn(p, text)


_PARSERS: dict[str, Callable] = {
    "column": _parse_none(lambda p, t: t),
    "columns": _parse_none(lambda p, t: _items(t)),
    "column_sets": _parse_none(lambda p, t: [_items(t)]),
    "int": _parse_none(_parse_int),
    "number": _parse_none(_parse_number),
    "numbers": _parse_none(_parse_numbers),
    "bool": _parse_none(_parse_bool),
    "choice": _parse_none(lambda p, t: t),
    "text": _parse_none(lambda p, t: t),
    "texts": _parse_none(lambda p, t: _items(t)),
    "seed": _parse_none(_parse_int),
    "mapping": _parse_none(_parse_mapping),
    "any": _parse_none(_parse_any),
}

_FLOAT_TAG_SCHEMA = {
    "type": "object",
    "properties": {"$float": {"enum": ["inf", "-inf", "nan"]}},
    "required": ["$float"],
    "additionalProperties": False,
}
_NAMES = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
_SCHEMAS: dict[str, dict] = {
    "column": {"type": "string"},
    "columns": _NAMES,
    "column_sets": {"anyOf": [_NAMES, {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}]},
    "int": {"type": "integer"},
    "number": {"type": "number"},
    "numbers": {},  # written from the bounds
    "bool": {"type": "boolean"},
    "choice": {"type": "string"},
    "text": {"type": "string"},
    "texts": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    "seed": {"type": "integer", "minimum": 0},
    "mapping": {"type": "object"},
    "any": {},
}
