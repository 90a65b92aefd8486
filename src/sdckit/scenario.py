"""Variable roles of a disclosure scenario, given once and used by every measure."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._errors import SdcError
from ._prepare import PREPARED_ROLES, Roles, validate_roles
from ._progress import measure_progress
from ._validation import as_name_list, check_column, missing_columns_message, raise_problems
from .engines import STORED, get_engine

__all__ = ["RELEASE_TYPES", "Scenario", "accepts_scenario", "scenarios_from_dict", "scenarios_to_dict"]

#: the release types of a scenario file (and their accepted spellings)
RELEASE_TYPES = ("public-use", "scientific-use")
_RELEASE_ALIASES = {
    "public-use": "public-use",
    "public": "public-use",
    "puf": "public-use",
    "scientific-use": "scientific-use",
    "scientific": "scientific-use",
    "suf": "scientific-use",
}


@dataclass(frozen=True)
class Scenario:
    """Which columns play which role in a disclosure scenario.

    Every measure accepts ``scenario=`` instead of the roles one by one; roles given explicitly
    win over the scenario's. The protect-then-measure workflow keeps one scenario for the whole
    release.

    Parameters
    ----------
    keys : str or sequence of str
        Categorical quasi-identifiers (key variables).
    numeric_keys : sequence of str, optional
        Continuous quasi-identifiers (the ``variables`` of the continuous-key measures).
    weight : str, optional
        Sampling (design) weight, w_i = 1/pi_i: numeric, finite and > 0.
    household : str, optional
        Household (cluster) identifier.
    strata : str or sequence of str, optional
        Stratification variables.
    sensitive : str or sequence of str, optional
        Sensitive variables (l-diversity, t-closeness).
    missing : value or sequence of values, optional
        Extra missing-value codes of the categorical columns (e.g. ``-999``).
    domains : str or sequence of str, optional
        Categorical variables whose categories are the domains of the estimates that data users
        publish (totals, means, shares and a regression by domain), compared between the
        original and each protected version. Default: the keys with at most 12 categories.
    scales : mapping, optional
        Measurement scale of variables for the information loss: ``{"age": "numeric"}``.
        ``"nominal"`` (categories: a change costs the chance of a wrong category) or
        ``"numeric"`` (numbers: a change costs by how many standard deviations it moves the
        value, whatever the unit). Default: text columns nominal; the numeric keys and other
        floating-point columns numeric; categorical keys nominal (codes stored as integers or
        as floats alike), numeric when they hold more than 20 numbers (an age).
    name : str, optional
        The scenario's name (an intruder's view: "linkage with the census", ...), which an
        assessment against several scenarios shows beside each verdict.
    release_type : {"public-use", "scientific-use"}, optional
        The kind of release the scenario is judged for (recorded in the assessment; also
        spelled "public", "puf", "scientific", "suf").
    direct_identifiers : str or sequence of str, optional
        Columns that identify a record by themselves (names, addresses, register numbers): a
        release removes them (:meth:`drop_direct_identifiers`) and no measure of the
        assessment reads them. They may not be keys, continuous keys or sensitive variables.
    linked : mapping, optional
        Linked ("ghost") variables: ``{"province": "region"}`` declares ``province`` linked to
        the key ``region`` (sdcMicro's ``ghostVars``); ``{"prov": ["region", "district"]}``
        links ``prov`` to two keys, and it follows each of them. After every workflow step a
        linked variable is missing wherever its key is missing (the key's suppressions, and
        also its missing values from the input, as in sdcMicro); where a step merges
        categories of the key (a recode), a linked variable that is a function of the key takes
        the union of the linked values of the released category ("P1|P2"), and where a step
        moves records between categories (PRAM, swapping) the linked value of the released
        category; a linked variable that is not a function of the key is suppressed where the
        key was merged or moved. Measures do not count a linked variable as a key.

    Examples
    --------
    >>> sc = Scenario(keys=["region", "sex", "age"], weight="w")
    >>> sc.validate(df)                                        # doctest: +SKIP
    >>> sdckit.individual_risk(df, scenario=sc)                # doctest: +SKIP

    Notes
    -----
    The fields are the roles of the roles table (``_roles.ROLES``), in its order
    (tests/test_roles_table.py checks it).
    """

    keys: tuple[str, ...] = ()
    numeric_keys: tuple[str, ...] = ()
    weight: str | None = None
    household: str | None = None
    strata: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    missing: tuple = field(default=())
    domains: tuple[str, ...] = ()
    scales: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None
    release_type: str | None = None
    direct_identifiers: tuple[str, ...] = ()
    linked: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self):
        r = Roles.of(**{name: getattr(self, name) for name in PREPARED_ROLES})
        for name in PREPARED_ROLES:
            object.__setattr__(self, name, getattr(r, name))
        object.__setattr__(self, "domains", tuple(as_name_list(self.domains, "domains", allow_empty=True)))
        object.__setattr__(self, "scales", _scales(self.scales))
        object.__setattr__(self, "name", _name(self.name))
        object.__setattr__(self, "release_type", _release_type(self.release_type))
        ids = tuple(as_name_list(self.direct_identifiers, "direct_identifiers", allow_empty=True))
        object.__setattr__(self, "direct_identifiers", ids)
        object.__setattr__(self, "linked", check_linked(self.linked))
        raise_problems(self._overlaps())

    def _overlaps(self) -> list[str]:
        """Direct identifiers and linked variables that also hold a role a measure reads."""
        problems = []
        for role in ("keys", "numeric_keys", "sensitive"):
            both = [c for c in self.direct_identifiers if c in getattr(self, role)]
            if both:
                problems.append(
                    f"direct_identifiers: {', '.join(both)} also in {role}; expected a direct identifier to be "
                    "removed from the release, not measured"
                )
        for ghost, keys in self.linked.items():
            for key in linked_keys(keys):
                if key not in self.keys:
                    problems.append(f"linked: {ghost!r} is linked to {key!r}, which is not a key; expected one of keys")
            if ghost in self.keys or ghost in self.numeric_keys:
                problems.append(f"linked: {ghost!r} is also a key; expected a linked variable outside the keys")
            for role in ("direct_identifiers", "strata", "sensitive"):
                if ghost in getattr(self, role):
                    problems.append(f"linked: {ghost!r} is also in {role}; expected one role")
            if ghost in (self.weight, self.household):
                problems.append(
                    f"linked: {ghost!r} is also the {'weight' if ghost == self.weight else 'household'}; expected one role"
                )
        return problems

    def _roles(self) -> Roles:
        return Roles(**{name: getattr(self, name) for name in PREPARED_ROLES})

    def to_dict(self) -> dict:
        """Every field that is set, as a recipe or a JSON file records it (lists and a mapping)."""
        out: dict = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value not in (None, (), {}):
                out[name] = (
                    list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, dict) else value
                )
        if "linked" in out:  # several keys of one linked variable as a list
            out["linked"] = {g: list(k) if isinstance(k, tuple) else k for g, k in out["linked"].items()}
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> Scenario:
        """The scenario a :meth:`to_dict` (or one entry of a scenario file) describes; an
        unknown entry is an error naming it."""
        if not isinstance(d, Mapping):
            raise_problems([f"scenario: got {type(d).__name__}; expected a mapping of roles"])
        unknown = sorted(str(k) for k in d if k not in cls.__dataclass_fields__)
        if unknown:
            raise_problems(
                [
                    f"scenario: unknown entry {', '.join(unknown)}; expected some of {', '.join(cls.__dataclass_fields__)}"
                ]
            )
        return cls(**d)

    def drop_direct_identifiers(self, data):
        """``data`` without the columns of ``direct_identifiers`` (a pandas, Polars or PyArrow
        table; a column that is not there is already removed). The input is not changed."""
        if not self.direct_identifiers:
            return data
        module = type(data).__module__.split(".")[0]
        if module not in ("pandas", "polars", "pyarrow") or not hasattr(data, "columns"):
            raise_problems(
                [
                    f"data: got {type(data).__name__}; expected a pandas, Polars or PyArrow table to remove the "
                    "direct identifiers from"
                ]
            )
        columns = data.column_names if module == "pyarrow" else [str(c) for c in data.columns]
        names = [c for c in self.direct_identifiers if c in columns]
        if not names:
            return data
        if module == "pandas":
            return data.drop(columns=names)
        return data.drop(names) if module == "polars" else data.drop_columns(names)

    def validate(
        self,
        data,
        *,
        require_keys: bool = True,
        allow_degenerate_keys: bool = False,
        zero_weight: str = "error",
        engine=None,
        encoded: bool = False,
    ):
        """Check every role against ``data`` at once (every problem in one error) and return the
        engine's view of the table (with ``encoded=True``: the table and the keys' encoding,
        which the check makes anyway)."""
        eng = get_engine(engine)
        table = eng.table(data)
        problems = [
            missing_columns_message(param, absent, table.columns)
            for param, names in (
                ("domains", self.domains),
                ("scales", tuple(self.scales)),
                ("linked", tuple(self.linked)),
            )
            if (absent := [c for c in names if c not in table.columns])
        ]
        if problems:
            raise_problems(problems, missing_column=True)
        checked = validate_roles(
            table,
            self._roles(),
            require_keys=require_keys,
            allow_degenerate_keys=allow_degenerate_keys,
            zero_weight=zero_weight,
            engine=eng,
        )
        return checked if encoded else checked[0]


#: accepted scale names of ``Scenario(scales=...)`` and their aliases
SCENARIO_SCALES = {"nominal": "nominal", "categorical": "nominal", "numeric": "numeric", "continuous": "numeric"}


class _Scales(dict):
    """A read-only, hashable mapping variable -> scale (a Scenario is frozen and hashable)."""

    def _readonly(self, *args, **kwargs):
        raise TypeError("a Scenario's scales and linked are read-only; make a new Scenario")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]

    def __hash__(self):  # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def __reduce__(self):
        return (_Scales, (dict(self),))


def _scales(value) -> _Scales:
    """``scales`` checked: a mapping of column names to a scale name (aliases normalised)."""
    if value is None:
        return _Scales()
    if not isinstance(value, Mapping):
        raise_problems([f"scales: got {type(value).__name__}; expected a mapping such as {{'age': 'numeric'}}"])
    problems, out = [], {}
    for name, scale in value.items():
        check_column(name, "scales")
        if not isinstance(scale, str) or scale.lower() not in SCENARIO_SCALES:
            problems.append(f"scales: the scale of {name!r} is not one of {', '.join(SCENARIO_SCALES)}")
        else:
            out[name] = SCENARIO_SCALES[scale.lower()]
    if problems:
        raise_problems(problems)
    return _Scales(out)


def _name(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise_problems([f"name: got {type(value).__name__}; expected a non-empty text naming the scenario"])
    return value.strip()


def _release_type(value) -> str | None:
    """``release_type`` checked, its aliases normalised (case, ``_`` for ``-``)."""
    if value is None:
        return None
    text = value.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(value, str) else None
    if text not in _RELEASE_ALIASES:
        shown = repr(value) if isinstance(value, str) and len(value) < 40 else type(value).__name__
        raise_problems([f"release_type: got {shown}; expected one of {', '.join(map(repr, RELEASE_TYPES))}"])
    return _RELEASE_ALIASES[text]


def check_linked(value) -> _Scales:
    """``linked`` checked: a mapping linked variable -> the key it is linked to, or a list of
    keys (one key is kept as a text, several as a tuple)."""
    if value is None:
        return _Scales()
    if not isinstance(value, Mapping):
        raise_problems([f"linked: got {type(value).__name__}; expected a mapping such as {{'province': 'region'}}"])
    out: dict = {}
    for ghost, keys in value.items():
        ghost = str(check_column(ghost, "linked", allow_none=False))
        if isinstance(keys, (list, tuple)):
            if not keys:
                raise_problems([f"linked: {ghost!r} is linked to an empty list; expected a key or a list of keys"])
            names = tuple(str(check_column(k, "linked", allow_none=False)) for k in keys)
            twice = sorted({k for k in names if names.count(k) > 1})
            if twice:
                raise_problems(
                    [f"linked: {ghost!r} names the key {', '.join(map(repr, twice))} twice; expected each key once"]
                )
            out[ghost] = names[0] if len(names) == 1 else names
        else:
            out[ghost] = str(check_column(keys, "linked", allow_none=False))
    return _Scales(out)


def linked_keys(keys) -> tuple[str, ...]:
    """The keys of one linked variable (a ``Scenario.linked`` value: one key or several)."""
    return (keys,) if isinstance(keys, str) else tuple(keys)


def scenarios_from_dict(d: Mapping) -> tuple[Scenario, ...]:
    """The scenarios of a scenario file's content: one scenario (its roles at the top level), or
    several under ``scenarios`` (a list of role mappings), each taking the top-level entries it
    does not set itself (shared roles, ``release_type``, ``direct_identifiers``). Unnamed
    scenarios are called "scenario 1", "scenario 2", ...; names must differ."""
    if not isinstance(d, Mapping):
        raise_problems([f"scenario: got {type(d).__name__}; expected a mapping of roles"])
    if "scenarios" not in d:
        return (Scenario.from_dict(d),)
    shared = {k: v for k, v in d.items() if k != "scenarios"}
    items = d["scenarios"]
    if isinstance(items, (str, Mapping)) or not isinstance(items, (list, tuple)) or not items:
        raise_problems(["scenarios: expected a non-empty list of scenarios (each a mapping of roles)"])
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise_problems([f"scenarios: entry {i + 1} is a {type(item).__name__}; expected a mapping of roles"])
        try:
            sc = Scenario.from_dict({**shared, **item})
        except SdcError as exc:
            raise SdcError(f"scenarios: entry {i + 1}: {exc}") from None
        out.append(sc if sc.name else _renamed(sc, f"scenario {i + 1}"))
    return check_scenarios(out)


def _renamed(sc: Scenario, name: str) -> Scenario:
    import dataclasses

    return dataclasses.replace(sc, name=name)


def check_scenarios(scenarios) -> tuple[Scenario, ...]:
    """Several scenarios checked: each a :class:`Scenario`, unnamed ones named by position,
    names distinct."""
    items = list(scenarios)
    if not items:
        raise_problems(["scenario: an empty list; expected a Scenario or a list of them"])
    out = []
    for i, sc in enumerate(items):
        if not isinstance(sc, Scenario):
            raise_problems([f"scenario: entry {i + 1} is a {type(sc).__name__}; expected an sdckit.Scenario"])
        out.append(sc if sc.name or len(items) == 1 else _renamed(sc, f"scenario {i + 1}"))
    names = [sc.name for sc in out]
    twice = sorted({str(n) for n in names if n is not None and names.count(n) > 1})
    if twice:
        raise_problems(
            [f"scenario: the name(s) {', '.join(map(repr, twice))} are given twice; expected distinct names"]
        )
    return tuple(out)


def scenarios_to_dict(scenarios) -> dict:
    """A scenario file's content: one scenario as its :meth:`Scenario.to_dict`; several as
    ``{"scenarios": [...]}``, with ``release_type`` and ``direct_identifiers`` at the top level
    when every scenario shares them. :func:`scenarios_from_dict` reads it back."""
    items = check_scenarios([scenarios] if isinstance(scenarios, Scenario) else scenarios)
    if len(items) == 1:
        return items[0].to_dict()
    entries = [sc.to_dict() for sc in items]
    out: dict = {}
    for name in ("release_type", "direct_identifiers"):
        values = [e.get(name) for e in entries]
        if values[0] is not None and all(v == values[0] for v in values):
            out[name] = values[0]
            for e in entries:
                del e[name]
    out["scenarios"] = entries
    return out


def accepts_scenario(func):
    """Decorator for the public (declared) measures: ``scenario=`` gives the roles the measure
    declares (``Param.role``; the declaration's wrapper fills those not given explicitly),
    ``id=`` names a column of record identifiers that ``to_frame()`` puts first (when the
    measure has no ``id`` parameter of its own), and ``progress=`` shows the steps of a long
    computation on stderr (``None``: on a terminal)."""
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    own_id = "id" in sig.parameters

    @functools.wraps(func)
    def wrapper(*args, scenario=None, progress=None, **kwargs):
        with measure_progress(progress, func.__name__):
            return _call(args, scenario, kwargs)

    def _call(args, scenario, kwargs):
        id_column = None if own_id else kwargs.pop("id", None)
        if scenario is not None:
            if not isinstance(scenario, Scenario):
                raise_problems([f"scenario: got {type(scenario).__name__}; expected an sdckit.Scenario"])
            kwargs["scenario"] = scenario  # the declaration's wrapper fills the roles from it
        if id_column is None:
            return func(*args, **kwargs)
        first = args[0] if args else kwargs.get(params[0].name)
        eng = get_engine(kwargs.get("engine"), first)
        if eng.has(STORED):
            return _engine_ids(func(*args, **kwargs), id_column)
        name, values = _id_values(first, id_column, eng)
        return dataclasses.replace(func(*args, **kwargs), row_ids=(name, values))  # a new, complete result

    extra = [
        inspect.Parameter("scenario", inspect.Parameter.KEYWORD_ONLY, default=None),
        inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
    if not own_id:
        extra.append(inspect.Parameter("id", inspect.Parameter.KEYWORD_ONLY, default=None))
    cut = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    wrapper.__signature__ = sig.replace(parameters=params[:cut] + extra + params[cut:])  # type: ignore[attr-defined]
    return wrapper


def _engine_ids(res, id_column):
    """An out-of-core result names its identifier column; the engine writes its values."""
    from ._validation import missing_columns_message

    name = str(check_column(id_column, "id", allow_none=False))
    columns = res.records_source.columns
    if name not in columns:
        raise_problems([missing_columns_message("id", [name], columns)], missing_column=True)
    return dataclasses.replace(res, row_ids=(name, None))  # a new, complete result


def _id_values(data, id_column, engine=None):
    """The identifier column of ``data`` (the first data argument): ``(name, values)``."""
    from ._validation import missing_columns_message

    name = str(check_column(id_column, "id", allow_none=False))
    table = get_engine(engine).table(data)
    if name not in table.columns:
        raise_problems([missing_columns_message("id", [name], table.columns)], missing_column=True)
    return name, table.values(name)
