"""Variable roles of a disclosure scenario and their validation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ._errors import MissingColumnError, SdcError
from ._encode import encode_keys
from ._frame import Table, as_table, missing_columns_message
from ._validation import as_name_list

__all__ = ["Scenario"]


def _names(value, param):
    return tuple(as_name_list(value, param, allow_empty=True))


@dataclass(frozen=True)
class Scenario:
    """A frozen description of which columns play which role.

    Parameters
    ----------
    keys : str or sequence of str
        Categorical quasi-identifiers (key variables).
    numeric_keys : sequence of str, optional
        Continuous quasi-identifiers.
    weight : str, optional
        Sampling (design) weight, w_i = 1/pi_i. Must be numeric, finite and > 0 (spec 0.4).
    household : str, optional
        Household (cluster) identifier; must be present for every record.
    strata : str or sequence of str, optional
        Stratification variables.
    sensitive : str or sequence of str, optional
        Sensitive variables (l-diversity, t-closeness).

    Examples
    --------
    >>> sc = Scenario(keys=["region", "sex", "age"], weight="w")
    >>> table = sc.validate(df)          # doctest: +SKIP
    """

    keys: tuple[str, ...] = ()
    numeric_keys: tuple[str, ...] = ()
    weight: str | None = None
    household: str | None = None
    strata: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    missing: tuple = field(default=(), compare=True)

    def __post_init__(self):
        object.__setattr__(self, "keys", _names(self.keys, "keys"))
        object.__setattr__(self, "numeric_keys", _names(self.numeric_keys, "numeric_keys"))
        object.__setattr__(self, "strata", _names(self.strata, "strata"))
        object.__setattr__(self, "sensitive", _names(self.sensitive, "sensitive"))
        for role in ("weight", "household"):
            v = getattr(self, role)
            if v is not None:
                if isinstance(v, (list, tuple)):
                    raise SdcError(f"{role}: got {len(v)} columns; expected a single column name")
                object.__setattr__(self, role, str(v))
        miss = self.missing
        if miss is None:
            miss = ()
        elif isinstance(miss, (str, int, float)):
            miss = (miss,)
        object.__setattr__(self, "missing", tuple(miss))

    # ------------------------------------------------------------------------------------
    def roles(self) -> dict[str, tuple[str, ...]]:
        """Role name -> columns."""
        return {
            "keys": self.keys,
            "numeric_keys": self.numeric_keys,
            "weight": (self.weight,) if self.weight else (),
            "household": (self.household,) if self.household else (),
            "strata": self.strata,
            "sensitive": self.sensitive,
        }

    def validate(self, data, *, require_keys: bool = True, allow_degenerate_keys: bool = False,
                 zero_weight: str = "error") -> Table:
        return self._validate(data, require_keys=require_keys, allow_degenerate_keys=allow_degenerate_keys,
                              zero_weight=zero_weight)[0]

    def _validate(self, data, *, require_keys: bool = True, allow_degenerate_keys: bool = False,
                  zero_weight: str = "error"):
        """Check every role against ``data`` at once and return the wrapped table.

        All problems are collected and reported in one :class:`SdcError` (one per line):
        empty data, missing columns (with the available ones listed), a column in two roles,
        non-numeric / missing / infinite / negative / zero weights, a missing household id,
        non-numeric numeric keys, and key variables that are entirely missing or have a single
        category (``allow_degenerate_keys=True`` accepts the last two, as sdcMicro does).
        A missing column raises :class:`MissingColumnError` (also a ``KeyError``).

        ``zero_weight="drop"`` accepts zero weights (spec 0.4: such records count in f_k but
        add nothing to F_k). ``_validate`` also returns the encoded key variables (encoded
        once, here).
        """
        table = as_table(data)
        encoded = None
        problems: list[str] = []
        missing_cols: list[str] = []
        if require_keys and not self.keys:
            problems.append("keys: no key variables given; expected at least one categorical key")
        seen: dict[str, str] = {}
        for role, cols in self.roles().items():
            for c in cols:
                if c in seen and seen[c] != role:
                    problems.append(f"{role}: column {c} is also used as {seen[c]}; a column can have one role only")
                seen.setdefault(c, role)
                if c not in table.columns and c not in missing_cols:
                    missing_cols.append(c)
        if missing_cols:
            problems.insert(0, missing_columns_message("columns", missing_cols, table.columns))
        if table.n == 0:
            problems.insert(0, "data: the table has no records; expected at least one")
        if table.n > 0:
            present = lambda c: c in table.columns  # noqa: E731
            if self.weight and present(self.weight):
                problems += _weight_problems(table.column(self.weight), self.weight, allow_zero=zero_weight == "drop")
            if self.household and present(self.household):
                nmiss = table.column(self.household).null_count()
                if nmiss:
                    problems.append(f"household: column {self.household} is missing for {nmiss} record(s); every record needs a household id")
            for c in self.numeric_keys:
                if present(c) and not table.column(c).dtype.is_numeric():
                    problems.append(f"numeric_keys: column {c} has type {table.column(c).dtype}; expected numbers")
            encodable = [c for c in self.keys if present(c)]
            bad_type = [c for c in encodable if isinstance(table.column(c).dtype, (pl.List, pl.Array, pl.Struct, pl.Object))]
            for c in bad_type:
                problems.append(f"keys: column {c} has type {table.column(c).dtype}; expected a categorical variable (labels)")
            if encodable and not bad_type:
                encoded = encode_keys(table.frame, encodable, self.missing)  # all keys unless some are absent
                if not allow_degenerate_keys:
                    problems += _degenerate_keys(encoded)
        if problems:
            msg = problems[0] if len(problems) == 1 else "invalid input:\n  - " + "\n  - ".join(problems)
            cls = MissingColumnError if missing_cols else SdcError
            raise cls(msg, problems)
        return table, encoded


def _weight_problems(s: pl.Series, name: str, allow_zero: bool = False) -> list[str]:
    if not s.dtype.is_numeric() or s.dtype == pl.Boolean:
        return [f"weight: column {name} has type {s.dtype}; expected positive numbers"]
    x = s.cast(pl.Float64).to_numpy()
    if s.null_count() == 0 and x.size and (x.min() > 0 or allow_zero and x.min() >= 0) and np.isfinite(x.max()):
        return []  # the common case, in two passes
    out = []
    nmiss = int(np.isnan(x).sum())
    if nmiss:
        out.append(f"weight: column {name} is missing (NA/NaN) for {nmiss} record(s); expected a weight for every record")
    fin = x[~np.isnan(x)]
    ninf = int(np.isinf(fin).sum())
    if ninf:
        out.append(f"weight: column {name} has {ninf} infinite value(s); expected finite positive numbers")
    nneg = int((fin < 0).sum())
    if nneg:
        out.append(f"weight: column {name} has {nneg} negative value(s) (min {fin.min():g}); expected positive numbers")
    nzero = int((fin == 0).sum())
    if nzero and not allow_zero:
        out.append(f"weight: column {name} has {nzero} zero value(s); a record with weight 0 represents nobody, expected > 0 "
                   "(or zero_weight=\"drop\" to count such records in f_k only)")
    return out


def _degenerate_keys(enc) -> list[str]:
    out = []
    for j, name in enumerate(enc.names):
        k = enc.n_observed(j)
        if k == 0:
            out.append(f"keys: column {name} is missing for every record; drop it or pass allow_degenerate_keys=True")
        elif k == 1:
            out.append(f"keys: column {name} has a single category ({enc.observed_label(j)!r}); it cannot "
                       "distinguish records, drop it or pass allow_degenerate_keys=True")
    return out
