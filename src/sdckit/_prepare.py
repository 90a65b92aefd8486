"""Validation of the variable roles against the data, and key encoding, done once at the
boundary of every public measure (through the engine)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import warn
from ._progress import step
from ._roles import names
from ._roles import role as role_row
from ._validation import (
    as_missing_codes,
    as_name_list,
    check_choice,
    check_column,
    missing_columns_message,
    mixed_type_problems,
    raise_problems,
)
from .engines import STORED, EncodedKeys, get_engine

__all__ = ["PREPARED_ROLES", "Prepared", "Roles", "prepare", "role_conflicts", "validate_roles"]


@dataclass(frozen=True)
class Roles:
    """Normalised column roles (names only; nothing read yet): one field per role the roles
    table (``_roles.ROLES``) marks ``prepared``, in its order (tests/test_roles_table.py)."""

    keys: tuple[str, ...] = ()
    numeric_keys: tuple[str, ...] = ()
    weight: str | None = None
    household: str | None = None
    strata: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    missing: tuple = ()

    @classmethod
    def of(cls, keys=None, **given) -> Roles:
        """The roles checked by their kind in the roles table (``_roles.ROLES``, those marked
        ``prepared``): names of columns, a column, missing-value codes."""
        given["keys"] = keys
        out = cls(**{name: _normalised(name, given.pop(name, None)) for name in PREPARED_ROLES})
        if given:
            raise TypeError(f"Roles.of() got unexpected role(s) {', '.join(given)}")
        return out

    def by_role(self) -> dict[str, tuple[str, ...]]:
        """The roles that name columns: role -> its columns (none for a role not given)."""
        out = {}
        for name in PREPARED_ROLES:
            if role_row(name).kind in ("column", "columns"):
                value = getattr(self, name)
                out[name] = value if isinstance(value, tuple) else ((value,) if value else ())
        return out


#: the roles the preparation reads, in the roles table's order
PREPARED_ROLES = names(prepared=True)


def _normalised(name: str, value):
    """One prepared role's value normalised by its kind."""
    kind = role_row(name).kind
    if kind == "columns":
        return tuple(as_name_list(value, name, allow_empty=True))
    if kind == "column":
        return check_column(value, name)
    return as_missing_codes(value)


@dataclass(frozen=True)
class Prepared:
    """Validated input of a key-based measure: the table, the roles, the encoded keys (and
    strata, as extra complete key columns) and the weights."""

    table: Any
    roles: Roles
    keys: EncodedKeys
    weights: np.ndarray | None
    strata: EncodedKeys | None = None
    #: records per row when the rows are the compressed table of an out-of-core engine (None:
    #: one record per row); ``weights`` then holds the weight sum of each row
    counts: np.ndarray | None = None
    #: the engine-side records (:class:`sdckit.engines._relational.Compressed`) of such a table
    source: Any = None
    #: the engine the caller chose (None: the default in-memory engine)
    chosen: Any = None

    @property
    def n(self) -> int:
        """Number of records (not rows of a compressed table)."""
        return int(self.counts.sum()) if self.counts is not None else self.table.n

    @property
    def engine(self):
        """The engine holding the records (the caller's in-memory engine for in-memory data)."""
        if self.source is not None:
            return self.source.source.engine
        return get_engine(self.chosen)

    @property
    def mem(self):
        """The in-memory engine of :attr:`table` (the records, or the small compressed table)."""
        return self.engine.local()


def prepare(
    data,
    keys,
    *,
    weight=None,
    sensitive=None,
    household=None,
    strata=None,
    missing=None,
    allow_degenerate_keys: bool = False,
    zero_weight: str = "error",
    engine=None,
) -> Prepared:
    """Validate the roles against ``data`` (every problem in one error) and encode the keys
    (and the strata, which must be complete)."""
    step("checking the roles and encoding the keys")
    check_choice(zero_weight, "zero_weight", ("error", "drop"))
    roles = Roles.of(keys, weight=weight, household=household, strata=strata, sensitive=sensitive, missing=missing)
    eng = get_engine(engine, data)
    if eng.has(STORED):
        return _prepare_relation(eng, data, roles, allow_degenerate_keys, zero_weight)
    table, enc = validate_roles(
        eng.table(data), roles, allow_degenerate_keys=allow_degenerate_keys, zero_weight=zero_weight, engine=eng
    )
    w = table.floats([roles.weight])[:, 0] if roles.weight is not None else None
    _warn_suspicious(roles, enc, w)
    st = eng.encode(table, roles.strata) if roles.strata else None
    return Prepared(table, roles, enc, w, st, chosen=eng)


def _prepare_relation(eng, data, roles: Roles, allow_degenerate_keys: bool, zero_weight: str) -> Prepared:
    """Out-of-core input: check the roles on the records (aggregate queries), then compress the
    categorical columns to their distinct rows with record counts and weight sums, and encode
    that small table as the in-memory engine would encode the records."""
    from dataclasses import replace

    rel, _ = validate_roles(eng.table(data), roles, zero_weight=zero_weight, engine=eng, encode=False)
    step(f"compressing the records to their distinct key patterns ({eng.name})")
    comp = eng.compress(rel, roles.keys + roles.strata + roles.sensitive, roles.weight)
    mem = eng.local()  # the in-memory engine of the small compressed table
    small = mem.table(comp.frame)
    inner = replace(roles, weight=None, household=None, numeric_keys=())
    table, enc = validate_roles(small, inner, allow_degenerate_keys=allow_degenerate_keys, engine=mem)
    _warn_suspicious(roles, enc, None)
    if roles.weight is not None:
        n_low = rel.n_below(roles.weight, 1.0)
        _warn_low_weights(roles.weight, n_low)
        # every weight >= 1 and the sum equal to n: every weight is 1
        _warn_census(roles.weight, n_low == 0 and float(comp.weight_sums.sum()) == float(comp.counts.sum()))
    st = mem.encode(table, roles.strata) if roles.strata else None
    return Prepared(table, roles, enc, comp.weight_sums, st, comp.counts, comp)


def _warn_low_weights(name: str, n_low: int) -> None:
    if n_low:
        warn(
            f"weight: column {name} has {n_low} value(s) below 1; a design weight 1/pi is at least 1, "
            "so F_k can fall below f_k"
        )


#: the census note (a pattern for callers that use the weights only relatively)
CENSUS_NOTE = "weight: every weight in column {} is 1"


def _warn_census(name: str, census: bool) -> None:
    """The one place that says a weight column of ones makes the file a census."""
    if census:
        warn(
            CENSUS_NOTE.format(name) + ", so the sample is treated as the whole population (a census): "
            "F_k = f_k and a record's risk is 1/f_k; if the file is a sample, give the real design weights"
        )


def _warn_suspicious(roles: Roles, enc: EncodedKeys, w) -> None:
    """Warn, never coerce: missing-value codes that occur nowhere, design weights below 1."""
    if enc.unused_missing:
        codes = ", ".join(repr(v) for v in enc.unused_missing)
        warn(
            f"missing: {codes} occur(s) in none of the key columns ({', '.join(roles.keys)}); check the code and its "
            "type (-999 and '-999' differ for a text column)"
        )
    if w is not None and w.size:
        _warn_low_weights(str(roles.weight), int(np.count_nonzero(w < 1)))
        _warn_census(str(roles.weight), bool(np.all(w == 1.0)))


def validate_roles(
    table,
    roles: Roles,
    *,
    require_keys: bool = True,
    allow_degenerate_keys: bool = False,
    zero_weight: str = "error",
    engine=None,
    encode: bool = True,
):
    """Check every role against ``table`` at once; return ``(table, encoded keys)`` (keys not
    encoded, None, with ``encode=False``: an out-of-core table is encoded once compressed).

    All problems are collected and reported in one :class:`SdcError` (one per line): empty
    data, missing columns (with the available ones listed), a column in two roles, non-numeric /
    missing / infinite / negative / zero weights, a missing household id or stratum, non-numeric
    numeric keys, a column mixing value types (``1`` and ``"1"``: one type per column is
    expected, see :func:`sdckit._validation.mixed_type_problems`), and key variables that are entirely missing or have a single category
    (``allow_degenerate_keys=True`` accepts the last two, as sdcMicro does). A missing column
    raises :class:`MissingColumnError` (also a ``KeyError``).
    """
    eng = get_engine(engine)
    problems: list[str] = []
    if require_keys and not roles.keys:
        problems.append("keys: no key variables given; expected at least one categorical key")
    problems += role_conflicts(roles)
    absent = list(dict.fromkeys(c for cols in roles.by_role().values() for c in cols if c not in table.columns))
    if absent:
        problems.insert(0, missing_columns_message("columns", absent, table.columns))
    if table.n == 0:
        problems.insert(0, "data: the table has no records; expected at least one")
    encoded = None
    if table.n > 0:
        problems += _column_problems(table, roles, absent, zero_weight)
        encodable = [c for c in roles.keys if c not in absent]
        if encode and encodable and not any(table.kind(c) == "nested" for c in encodable):
            encoded = eng.encode(table, encodable, roles.missing)  # all keys unless some are absent
            if not allow_degenerate_keys:
                problems += _degenerate_keys(encoded)
    raise_problems(problems, missing_column=bool(absent))
    return table, encoded


def role_conflicts(roles: Roles) -> list[str]:
    seen: dict[str, str] = {}
    out = []
    for role, cols in roles.by_role().items():
        for c in cols:
            if c in seen and seen[c] != role:
                out.append(f"{role}: column {c} is also used as {seen[c]}; a column can have one role only")
            seen.setdefault(c, role)
    return out


def _column_problems(table, roles: Roles, absent, zero_weight: str) -> list[str]:
    present = lambda c: c not in absent  # noqa: E731
    out: list[str] = []
    if roles.weight and present(roles.weight):
        out += weight_problems(table, roles.weight, allow_zero=zero_weight == "drop")
    if roles.household and present(roles.household):
        nmiss = table.n_missing(roles.household)
        if nmiss:
            out.append(
                f"household: column {roles.household} is missing for {nmiss} record(s); every record needs "
                "a household id"
            )
    for c in roles.strata:
        if present(c) and table.n_missing(c):
            out.append(
                f"strata: column {c} is missing for {table.n_missing(c)} record(s); every record needs a stratum"
            )
    for c in roles.numeric_keys:
        if present(c) and not table.is_numeric(c):
            out.append(f"numeric_keys: column {c} has type {table.dtype_name(c)}; expected numbers")
    for role, cols in roles.by_role().items():
        out += mixed_type_problems(table, [c for c in cols if present(c)], role)
    for role, cols in (("keys", roles.keys), ("strata", roles.strata)):
        for c in cols:
            if present(c) and table.kind(c) == "nested":
                out.append(
                    f"{role}: column {c} has type {table.dtype_name(c)}; expected a categorical variable (labels)"
                )
    return out


def weight_problems(table, name: str, allow_zero: bool = False) -> list[str]:
    """Problems of a sampling-weight column (counts only, never values)."""
    if not table.is_numeric(name):
        return [f"weight: column {name} has type {table.dtype_name(name)}; expected positive numbers"]
    s = table.float_summary(name)
    out = []
    if s["n_missing"]:
        out.append(
            f"weight: column {name} is missing (NA/NaN) for {s['n_missing']} record(s); expected a weight for "
            "every record"
        )
    if s["n_inf"]:
        out.append(f"weight: column {name} has {s['n_inf']} infinite value(s); expected finite positive numbers")
    if s["n_negative"]:
        out.append(f"weight: column {name} has {s['n_negative']} negative value(s); expected positive numbers")
    if s["n_zero"] and not allow_zero:
        out.append(
            f"weight: column {name} has {s['n_zero']} zero value(s); a record with weight 0 represents nobody, "
            'expected > 0 (or zero_weight="drop" to count such records in f_k only)'
        )
    return out


def _degenerate_keys(enc: EncodedKeys) -> list[str]:
    out = []
    for j, name in enumerate(enc.names):
        k = enc.n_observed(j)
        if k == 0:
            out.append(f"keys: column {name} is missing for every record; drop it or pass allow_degenerate_keys=True")
        elif k == 1:
            out.append(
                f"keys: column {name} has a single category; it cannot distinguish records, drop it or pass "
                "allow_degenerate_keys=True"
            )
    return out
