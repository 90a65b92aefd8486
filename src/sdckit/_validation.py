"""Parameter checks shared by the public functions (one message shape, see ``_errors``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ._errors import SdcError


def as_name_list(value, param: str, *, allow_empty: bool = False) -> list[str]:
    """Normalise a column-name argument (str, int or sequence of them) to a list."""
    if value is None:
        if allow_empty:
            return []
        raise SdcError(f"{param}: no columns given; expected a column name or a list of names")
    if isinstance(value, (str, int)):
        names = [value]
    elif isinstance(value, Iterable):
        names = list(value)
    else:
        raise SdcError(f"{param}: got {type(value).__name__}; expected a column name or a list of names")
    for v in names:
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise SdcError(f"{param}: {v!r} is not a column name; expected strings")
    if not names and not allow_empty:
        raise SdcError(f"{param}: empty list; expected at least one column")
    dup = sorted({str(v) for v in names if names.count(v) > 1})
    if dup:
        raise SdcError(f"{param}: column(s) {', '.join(dup)} listed more than once")
    return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in names]


def check_alpha(alpha) -> float:
    """``alpha`` of the missing-value rule: a number in [0, 1]."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise SdcError(f"alpha: got {alpha!r}; expected a number in [0, 1]") from None
    if not math.isfinite(a) or a < 0 or a > 1:
        raise SdcError(f"alpha: got {alpha!r}; expected a number in [0, 1]")
    return a


def check_k_list(k) -> list[int]:
    """k for k-anonymity: one integer >= 1 or a sequence of them (rounded like sdcMicro)."""
    ks: Sequence = [k] if not isinstance(k, (list, tuple, set, frozenset)) and not hasattr(k, "__array__") else list(k)
    if isinstance(k, str):
        ks = [p for p in k.split(",") if p.strip()]
    if len(ks) == 0:
        raise SdcError("k: empty; expected one or more integers >= 1")
    out = []
    for v in ks:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise SdcError(f"k: got {v!r}; expected an integer >= 1") from None
        if not math.isfinite(f) or f < 1:
            raise SdcError(f"k: got {v!r}; expected an integer >= 1")
        # sdcMicro rounds k (spec A.2); Python's round() is banker's rounding, use half-up.
        out.append(int(math.floor(f + 0.5)))
    return sorted(set(out))
