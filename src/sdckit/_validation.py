"""The one validation toolkit: parameter checks shared by every public function.

Every check returns the normalised value or raises :class:`~sdckit.SdcError` with the message
shape ``"<parameter>: got <value>; expected <what>"``. Values shown are parameters the caller
typed, never record values (data columns are described by type and counts only).

Checks that can find several problems at once (column roles, scales) collect them and raise
one error listing all of them (:func:`raise_problems`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._errors import MissingColumnError, SdcError

__all__ = [
    "as_missing_codes",
    "as_name_list",
    "check_alpha",
    "check_bool",
    "check_choice",
    "check_fraction",
    "check_int",
    "check_k_list",
    "check_number",
    "check_seed",
    "check_scales",
    "missing_columns_message",
    "mixed_type_problems",
    "raise_problems",
]


def _show(value: Any) -> str:
    """A parameter value for a message (long sequences cut: they may be data)."""
    if isinstance(value, (str, bool, numbers.Number)) or value is None:
        return repr(value)
    if isinstance(value, (list, tuple)) and len(value) <= 6:
        return repr(value)
    return f"a {type(value).__name__}"


def missing_columns_message(param: str, missing, available) -> str:
    """``"<param>: column(s) a, b not found in the data; available columns: ..."``."""
    available = list(available)
    avail = ", ".join(map(str, available[:40])) + (" ..." if len(available) > 40 else "")
    return f"{param}: column(s) {', '.join(map(str, missing))} not found in the data; available columns: {avail}"


def mixed_type_problems(table, names, param: str) -> list[str]:
    """Columns among ``names`` whose values mix Python types (a pandas ``object`` column or a
    list holding ``1``, ``"1"`` and ``2.5``). sdckit refuses them rather than choose a rule
    for whether ``1`` and ``"1"`` are one category: one type per column is expected."""
    mixed = getattr(table, "mixed_types", None)
    out = []
    for name in names:
        types = mixed(name) if mixed is not None else None
        if types:
            out.append(
                f"{param}: column {name} mixes value types ({types}); expected one type per column "
                "(convert it first, for example to text with astype(str) or to numbers)"
            )
    return out


def raise_problems(problems: Sequence[str], *, missing_column: bool = False) -> None:
    """Raise one :class:`SdcError` listing every problem (nothing when there is none)."""
    if not problems:
        return
    msg = problems[0] if len(problems) == 1 else "invalid input:\n  - " + "\n  - ".join(problems)
    raise (MissingColumnError if missing_column else SdcError)(msg, list(problems))


def check_bool(value, param: str) -> bool:
    """A real boolean (``True``/``False``, NumPy's too); 0/1 or strings are refused."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise SdcError(f"{param}: got {_show(value)}; expected True or False")


def check_choice(value, param: str, choices: Iterable[str], *, allow_none: bool = False):
    """One of ``choices`` (exact string match)."""
    choices = tuple(choices)
    if value is None and allow_none:
        return None
    if isinstance(value, str) and value in choices:
        return value
    extra = " or None" if allow_none else ""
    raise SdcError(f"{param}: got {_show(value)}; expected one of {', '.join(map(repr, choices))}{extra}")


def _range_text(low, high, low_open, high_open) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "finite"


def check_number(
    value,
    param: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
    allow_none: bool = False,
    what: str = "a number",
) -> float | None:
    """A real number (not a bool, not a string) within the given bounds.

    ``low_open`` / ``high_open`` exclude the bound itself. Infinite values only with
    ``allow_inf`` (an infinite bound such as ``bound=inf``); NaN never.
    """
    if value is None and allow_none:
        return None
    expected = f"{what} {_range_text(low, high, low_open, high_open)}"
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
    if (low is not None and (x < low or (low_open and x == low))) or (
        high is not None and (x > high or (high_open and x == high))
    ):
        raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
    return x


def check_fraction(
    value, param: str, *, low_open: bool = True, high_open: bool = False, allow_none: bool = False
) -> float | None:
    """A share in (0, 1] by default (the interval ends set by ``low_open`` / ``high_open``)."""
    return check_number(value, param, low=0.0, high=1.0, low_open=low_open, high_open=high_open, allow_none=allow_none)


def check_int(
    value, param: str, *, low: int | None = None, high: int | None = None, allow_none: bool = False
) -> int | None:
    """A whole number (an ``int``, or a float with an integer value) within [low, high]."""
    if value is None and allow_none:
        return None
    expected = f"an integer {_range_text(low, high, False, False)}".replace(" finite", "")
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
    if isinstance(value, numbers.Integral):  # exact, however large (seeds of 128 bits)
        i = int(value)
    else:
        x = float(value)
        if not math.isfinite(x) or not x.is_integer():
            raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
        i = int(x)
    if (low is not None and i < low) or (high is not None and i > high):
        raise SdcError(f"{param}: got {_show(value)}; expected {expected}")
    return i


def check_seed(value, param: str = "seed") -> int | None:
    """A random seed: None or a non-negative integer."""
    return check_int(value, param, low=0, allow_none=True)


def check_alpha(alpha, param: str = "alpha") -> float:
    """``alpha``, the weight of matches through missing key values: a number in [0, 1]."""
    return check_number(alpha, param, low=0.0, high=1.0)


def check_k_list(k, param: str = "k") -> list[int]:
    """k of k-anonymity: one number >= 1 or a sequence (or comma-separated text) of them.

    Values are rounded half-up to integers, as sdcMicro rounds k (Python's ``round`` would
    round half to even). Booleans are refused.
    """
    if isinstance(k, str):
        items: list = [p.strip() for p in k.split(",") if p.strip()]
        try:
            items = [float(p) for p in items]
        except ValueError:
            raise SdcError(f"{param}: got {k!r}; expected integers >= 1") from None
    elif isinstance(k, (list, tuple, set, frozenset)) or hasattr(k, "__array__"):
        items = list(k) if not hasattr(k, "tolist") else list(k.tolist()) if getattr(k, "ndim", 1) else [k.item()]
    else:
        items = [k]
    if not items:
        raise SdcError(f"{param}: empty; expected one or more integers >= 1")
    out = [check_number(v, param, low=1.0, what="an integer") for v in items]
    return sorted({int(math.floor(v + 0.5)) for v in out})


def as_name_list(value, param: str, *, allow_empty: bool = False) -> list[str]:
    """Normalise a column-name argument (a name or a sequence of names) to a list of str.

    Integer positions are accepted as names (NumPy input has columns ``"0"``, ``"1"``, ...).
    """
    if value is None:
        if allow_empty:
            return []
        raise SdcError(f"{param}: no columns given; expected a column name or a list of names")
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        names = [value]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        names = list(value)
    else:
        raise SdcError(f"{param}: got {type(value).__name__}; expected a column name or a list of names")
    for v in names:
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise SdcError(f"{param}: {_show(v)} is not a column name; expected strings")
    if not names and not allow_empty:
        raise SdcError(f"{param}: empty list; expected at least one column")
    str_names = [str(v) for v in names]
    dup = sorted({v for v in str_names if str_names.count(v) > 1})
    if dup:
        raise SdcError(f"{param}: column(s) {', '.join(dup)} listed more than once")
    return str_names


def as_missing_codes(missing) -> tuple:
    """The ``missing`` option (one code or a sequence of codes, or None) as a tuple."""
    if missing is None:
        return ()
    if isinstance(missing, (str, int, float)):
        return (missing,)
    return tuple(missing)


SCALES = ("nominal", "ordinal", "continuous")


def check_scales(
    scales,
    variables: Sequence[str],
    param: str = "scales",
    *,
    allowed: Sequence[str] = SCALES,
    default: str | None = None,
) -> tuple[dict[str, str], list[str]]:
    """Measurement scales per variable: ``{variable: scale}`` or one scale for all.

    Returns the complete mapping (``default`` for unlisted variables, or left out when
    ``default`` is None) and the list of problems found (an unknown variable, an unknown
    scale), for the caller to report together with its own.
    """
    problems: list[str] = []
    if scales is None:
        mapping: dict = {}
    elif isinstance(scales, str):
        mapping = {v: scales for v in variables}
    elif isinstance(scales, Mapping):
        mapping = {str(k): v for k, v in scales.items()}
    else:
        raise SdcError(f"{param}: got {type(scales).__name__}; expected a dict variable -> scale or one scale")
    out = {}
    for v, s in mapping.items():
        if v not in variables:
            problems.append(f"{param}: variable {v} is not among the variables; expected one of {', '.join(variables)}")
        elif s not in allowed:
            problems.append(f"{param}: {_show(s)} for {v}; expected one of {', '.join(allowed)}")
        else:
            out[v] = s
    if default is not None:
        for v in variables:
            out.setdefault(v, default)
    return out, problems
