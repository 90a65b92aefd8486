"""The one validation toolkit: parameter checks shared by every public function.

Every check returns the normalised value or raises :class:`~sdckit.SdcError` with the message
shape ``"<parameter>: got <value>; expected <what>"``. Values shown are parameters the caller
typed, never record values (data columns are described by type and counts only).

Checks that can find several problems at once (column roles, scales) collect them and raise
one error listing all of them (:func:`raise_problems`).
"""

from __future__ import annotations

import codecs
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import MissingColumnError, SdcError

__all__ = [
    "RULES",
    "NumberRule",
    "as_missing_codes",
    "as_name_list",
    "check_alpha",
    "check_bins",
    "check_bool",
    "check_bound",
    "check_choice",
    "check_column",
    "check_comparison_levels",
    "check_em_start",
    "check_fraction",
    "check_group_size",
    "check_int",
    "check_k",
    "check_k_list",
    "check_max_global_risk",
    "check_max_iter",
    "check_new_file",
    "check_number",
    "check_risk_threshold",
    "check_rule",
    "check_sampling_fraction",
    "check_scales",
    "check_seed",
    "check_swap_rate",
    "check_t_target",
    "check_threshold",
    "check_tol",
    "check_width",
    "missing_columns_message",
    "mixed_type_problems",
    "number_text",
    "raise_problems",
    "read_text_file",
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


def check_new_file(path, overwrite, param: str = "path", *, how: str = "overwrite=True") -> None:
    """An output file may be written: it does not exist yet, or ``overwrite`` is True (a real
    bool). ``how`` is what the caller types to replace it (``"--overwrite"`` on the command
    line)."""
    check_bool(overwrite, "overwrite")
    if not overwrite and os.path.lexists(os.fspath(path)):
        raise SdcError(f"{param}: {os.fspath(path)} already exists; expected a new file, or {how} to replace it")


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
    return "(finite)"


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
    t = type(value)
    if t is float or t is int:  # the common case, without the checks for the other types
        x = float(value)
    elif isinstance(value, bool) or t.__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise SdcError(f"{param}: got {_show(value)}; expected {what} {_range_text(low, high, low_open, high_open)}")
    else:
        x = float(value)
    if (
        math.isnan(x)
        or (math.isinf(x) and not allow_inf)
        or (low is not None and (x < low or (low_open and x == low)))
        or (high is not None and (x > high or (high_open and x == high)))
    ):
        raise SdcError(f"{param}: got {_show(value)}; expected {what} {_range_text(low, high, low_open, high_open)}")
    return x


def check_t_target(value, param: str = "t") -> float:
    """A t-closeness level to reach (a search target, ARX's model): in (0, 1]. Earth mover's
    distances lie in [0, 1]; t = 0 would ask every class for the file's own distribution, and a
    t above 1 holds for every class (the measures' ``t``, a level to count classes above, may be
    any number >= 0)."""
    return check_fraction(value, param)


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
    if type(value) is int:  # the common case, without the checks for the other types
        i = value
    elif isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise SdcError(f"{param}: got {_show(value)}; expected {_int_text(low, high)}")
    elif isinstance(value, numbers.Integral):  # exact, however large (seeds of 128 bits)
        i = int(value)
    else:
        x = float(value)
        if not math.isfinite(x) or not x.is_integer():
            raise SdcError(f"{param}: got {_show(value)}; expected {_int_text(low, high)}")
        i = int(x)
    if (low is not None and i < low) or (high is not None and i > high):
        raise SdcError(f"{param}: got {_show(value)}; expected {_int_text(low, high)}")
    return i


def _int_text(low, high) -> str:
    return f"an integer {_range_text(low, high, False, False)}".replace(" (finite)", "")


@dataclass(frozen=True)
class NumberRule:
    """The one rule of a numeric glossary name: a number (or an integer) in a range.

    ``low_open`` / ``high_open`` exclude the bound itself; ``allow_inf`` accepts an infinite
    value (``bound=inf``: no bound). :data:`RULES` holds the rule of every numeric name, and
    every public function checks the name by it (through ``check_<name>`` or :func:`check_rule`).
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    allow_inf: bool = False
    what: str | None = None

    def check(self, value, param: str, *, allow_none: bool = False, high: float | None = None):
        """``value`` checked against the rule (``high``: a tighter upper bound the data sets,
        such as the number of keys); an int for an integer rule, else a float."""
        top = self.high if high is None else high if self.high is None else min(self.high, high)
        if self.integer:
            low = None if self.low is None else int(self.low)
            return check_int(value, param, low=low, high=None if top is None else int(top), allow_none=allow_none)
        return check_number(
            value,
            param,
            low=self.low,
            high=top,
            low_open=self.low_open,
            high_open=self.high_open,
            allow_inf=self.allow_inf,
            allow_none=allow_none,
            what=self.what or "a number",
        )


_UNIT = NumberRule(low=0.0, high=1.0)
_OPEN_UNIT = NumberRule(low=0.0, high=1.0, low_open=True, high_open=True)
_PERCENT = NumberRule(low=0.0, high=100.0)

#: the rule of each numeric parameter name of the glossary (docs/glossary.md): the one place
#: where its range is written
RULES: dict[str, NumberRule] = {
    "alpha": _UNIT,
    "k": NumberRule(low=1, integer=True),
    "frequency_threshold": NumberRule(low=1, integer=True),
    "max_dimension": NumberRule(low=1, integer=True),
    "threshold": NumberRule(low=0.0, high=1.0, low_open=True),
    "risk_threshold": NumberRule(low=0.0),
    "max_global_risk": _OPEN_UNIT,
    "household_risk": _UNIT,
    "seed": NumberRule(low=0, integer=True),
    "sampling_fraction": NumberRule(low=0.0, high=1.0, low_open=True),
    "population_size": NumberRule(low=0.0, low_open=True, what="a positive number"),
    "swap_rate": _UNIT,
    "width": NumberRule(low=0.0),
    "width2": NumberRule(low=0.0),
    "quantile": _OPEN_UNIT,
    "significance": _OPEN_UNIT,
    "mcd_fraction": NumberRule(low=0.5, high=1.0, high_open=True),
    "p": _OPEN_UNIT,
    "c_min": NumberRule(low=1, integer=True),
    "c": NumberRule(low=0.0, low_open=True),
    "l": NumberRule(low=1.0, what="an l-diversity level"),
    "suppression_limit": NumberRule(low=0.0, high=1.0, what="a share"),
    "gs_factor": NumberRule(low=0.0, high=1.0, what="a weight"),
    "time_limit": NumberRule(low=0.0, what="a number of seconds"),
    "max_lattice_size": NumberRule(low=1, integer=True, what="a number of nodes"),
    "tol": NumberRule(low=0.0, low_open=True, what="a positive number"),
    "max_iter": NumberRule(low=1, integer=True),
    "bound": NumberRule(low=0.0, low_open=True, allow_inf=True),
    "group_size": NumberRule(low=1, integer=True),
    "max_size": NumberRule(low=1, integer=True),
    "dis_fraction": NumberRule(low=0.0, high=1.0, low_open=True, what="'weights' or a number"),
    "second_weight": _UNIT,
    "variable_weights": NumberRule(low=0.0),
    "mu": _UNIT,
    "lam": _UNIT,
    "em_start": _OPEN_UNIT,
    "tolerance": NumberRule(low=0.0, low_open=True),
    "pair_tol": NumberRule(low=0.0),
    "comparison_levels": NumberRule(low=0.0),
    "internal_risk": _UNIT,
    "availability": _UNIT,
    "z_target": NumberRule(),
    "z_crit": NumberRule(low=0.0, low_open=True, what="a positive number"),
    "candidates": NumberRule(low=1, integer=True),
    "term_test": NumberRule(),
    "stability": NumberRule(low=0, integer=True),
    "max_steps": NumberRule(low=0, integer=True),
    "ctbil_dim": NumberRule(low=0, integer=True),
    "ebil_base": NumberRule(low=1.0, low_open=True, what="a logarithm base"),
    "confidence": _OPEN_UNIT,
    "max_categories": NumberRule(low=2, integer=True),
    "min_records": NumberRule(low=1, integer=True, what="a number of records"),
    "order": NumberRule(low=1, integer=True),
    "top": NumberRule(low=0, integer=True),
    "n_attacks": NumberRule(low=1, integer=True),
    "n_cols": NumberRule(low=1, integer=True),
    "n_neighbors": NumberRule(low=1, integer=True),
    "closeness_sample": NumberRule(low=1, integer=True, what="a number of records"),
    "breaks": NumberRule(low=1, integer=True),
    "level": NumberRule(low=1, integer=True),
    "value": NumberRule(),
    "replacement": NumberRule(),
    "pd": _UNIT,
    "strength": _UNIT,
    "noise": NumberRule(low=0.0),
    "delta": _OPEN_UNIT,
    "perturbation": NumberRule(low=0.0),
    "min_perturbation": NumberRule(low=0.0),
    "min_neighbours": NumberRule(low=0, integer=True),
    "t": NumberRule(low=0.0, allow_inf=True),
    "swap_range": _PERCENT,
    "r0": _UNIT,
    "k0": NumberRule(low=0.0),
    "top_percent": _PERCENT,
    "bottom_percent": _PERCENT,
    "n_largest": NumberRule(low=1, integer=True, what="a number of contributors"),
    "dominance_percent": _PERCENT,
    "p_percent": NumberRule(low=0.0, what="a percentage >= 0"),
    "base": NumberRule(low=0.0, low_open=True, what="a positive number"),
}


def check_rule(name: str, value, param: str | None = None, *, allow_none: bool = False, high=None):
    """``value`` of the glossary name ``name`` checked by its one rule (:data:`RULES`);
    ``param`` names it in the message when it differs (``"pd['x']"``: one variable's value);
    ``high`` a tighter upper bound set by the data (the number of keys, say)."""
    return RULES[name].check(value, param or name, allow_none=allow_none, high=high)


def check_seed(value, param: str = "seed") -> int | None:
    """A random seed: None or an integer >= 0 (large integers exactly)."""
    return check_rule("seed", value, param, allow_none=True)


def check_alpha(alpha, param: str = "alpha") -> float:
    """``alpha``, the weight of matches through missing key values: a number in [0, 1]."""
    return check_rule("alpha", alpha, param)


def check_k(k, param: str = "k") -> int:
    """k of k-anonymity: one integer >= 1.

    An integral float (``3.0``) is taken as that integer; any other number (``2.5``), a
    bool or text is refused: every function that takes ``k`` follows this one rule.
    """
    return check_rule("k", k, param)


def check_threshold(threshold, param: str = "threshold", *, allow_none: bool = False) -> float | None:
    """``threshold``, a risk level above which a record is unsafe: a number in (0, 1]."""
    return check_rule("threshold", threshold, param, allow_none=allow_none)


def check_risk_threshold(value, param: str = "risk_threshold") -> float | None:
    """``risk_threshold``, a level of the user's own risk column: None or a number >= 0."""
    return check_rule("risk_threshold", value, param, allow_none=True)


def check_max_global_risk(value, param: str = "max_global_risk", *, allow_none: bool = False) -> float | None:
    """``max_global_risk``, a target share of records re-identified: a number in (0, 1)."""
    return check_rule("max_global_risk", value, param, allow_none=allow_none)


def check_sampling_fraction(value, param: str = "sampling_fraction", *, allow_none: bool = True) -> float | None:
    """``sampling_fraction``, pi of a Bernoulli sample: None or a number in (0, 1]."""
    return check_rule("sampling_fraction", value, param, allow_none=allow_none)


def check_tol(value, param: str = "tol", *, allow_none: bool = False) -> float | None:
    """``tol``, a convergence tolerance: a number > 0."""
    return check_rule("tol", value, param, allow_none=allow_none)


def check_max_iter(value, param: str = "max_iter") -> int:
    """``max_iter``, the most iterations of a fit: an integer >= 1."""
    return check_rule("max_iter", value, param)


def check_bound(value, param: str = "bound") -> float:
    """``bound``, an upper bound on distances or losses: a number > 0 (``inf``: none)."""
    return check_rule("bound", value, param)


def check_swap_rate(value, param: str = "swap_rate") -> float:
    """``swap_rate``, the share of households swapped: a number in [0, 1]."""
    return check_rule("swap_rate", value, param)


def check_group_size(value, param: str = "group_size") -> int:
    """``group_size``, records per microaggregation group: an integer >= 1."""
    return check_rule("group_size", value, param)


def check_width(value, param: str = "width") -> float:
    """``width`` (and ``width2``), the half-width of a disclosure interval in standard
    deviations: a number >= 0."""
    return check_rule("width2" if param == "width2" else "width", value, param)


def check_bins(value, param: str = "bins"):
    """``bins``: a number of quantile bins (an integer >= 2) or a list of finite bin edges
    (returned sorted, as an array)."""
    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        import numpy as np

        edges = [check_number(v, param) for v in np.asarray(value, dtype=object).ravel()]
        if not edges:
            raise SdcError(f"{param}: empty list; expected an integer >= 2 or a list of bin edges")
        return np.sort(np.array(edges, dtype=float))
    return check_int(value, param, low=2)


def check_comparison_levels(value, param: str = "comparison_levels", max_cuts: int = 9):
    """``comparison_levels`` of one numeric field: a tolerance t >= 0 (cut points (0, t): equal,
    within t, disagree; t = 0: (0,), equal or disagree) or a list of 1 to ``max_cuts`` strictly
    increasing cut points >= 0 on the absolute difference. Returns the cut points as an array."""
    import numpy as np

    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        cuts = np.array([check_rule("comparison_levels", v, param) for v in np.asarray(value, dtype=object).ravel()])
        if cuts.size == 0 or cuts.size > max_cuts:
            raise SdcError(f"{param}: got {cuts.size} cut points; expected 1 to {max_cuts}")
        if np.any(np.diff(cuts) <= 0):
            raise SdcError(f"{param}: cut points not strictly increasing; expected increasing distances")
        return cuts.astype(float)
    t = check_rule("comparison_levels", value, param)
    return np.array([0.0, t]) if t > 0 else np.array([0.0])


def check_em_start(value, param: str = "em_start") -> tuple:
    """``em_start``: three starting values (m, u, p) of the EM algorithm, each in (0, 1)."""
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise SdcError(f"{param}: got {_show(value)}; expected three starting values (m, u, p)")
    return tuple(check_rule("em_start", v, param) for v in value)


def check_k_list(k, param: str = "k") -> list[int]:
    """k of k-anonymity, one or several: each value follows :func:`check_k`.

    ``k`` is one value, a sequence (or a 1-D array) of them, or comma-separated text
    (``"2,3,5"``, as typed on the command line). Returns the distinct values, sorted.
    """
    if isinstance(k, str):
        items: list = [number_text(p.strip()) for p in k.split(",") if p.strip()]
    elif isinstance(k, (list, tuple, set, frozenset)) or hasattr(k, "__array__"):
        items = list(k) if not hasattr(k, "tolist") else list(k.tolist()) if getattr(k, "ndim", 1) else [k.item()]
    else:
        items = [k]
    if not items:
        raise SdcError(f"{param}: empty; expected one or more integers >= 1")
    return sorted({check_k(v, param) for v in items})


def number_text(text: str):
    """A number typed as text (``"3"`` -> 3, ``"2.5"`` -> 2.5); other text is returned as is
    (and then refused by the check that follows, which shows it)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def as_name_list(value, param: str, *, allow_empty: bool = False) -> list[str]:
    """Normalise a column-name argument (a name or a sequence of names) to a list of str.

    Integer positions are accepted as names (NumPy input has columns ``"0"``, ``"1"``, ...).
    """
    if type(value) is str:  # one name: the common case
        return [value]
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


def check_column(value, param: str, *, allow_none: bool = True) -> str | None:
    """One column name (``weight``, ``household``, ``id``, ``sort_by``, ...): a string, or an
    integer position (NumPy input has columns ``"0"``, ``"1"``, ...); None when allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, (list, tuple)):
        raise SdcError(f"{param}: got {type(value).__name__} of {len(value)} columns; expected a single column name")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise SdcError(f"{param}: got {type(value).__name__}; expected a column name")
    return str(value)


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


#: byte-order marks of the Unicode encodings other than UTF-8 (UTF-32 first: its
#: little-endian mark begins with UTF-16's)
#: (mark, codec, name) of the UTF-32 and UTF-16 byte-order marks; UTF-32's first, since its
#: little-endian mark begins with UTF-16's
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32 (little-endian)"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32 (big-endian)"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16 (little-endian)"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16 (big-endian)"),
)


def read_text_file(path, param: str, *, max_bytes: int, utf16: bool = False) -> str:
    """The text of a small file sdckit reads besides data (a recipe, a scenario, a hierarchy):
    UTF-8, a leading byte-order mark dropped; with ``utf16``, UTF-16 and UTF-32 files that
    start with their byte-order mark are read too. A file over ``max_bytes``, another
    encoding (Latin-1, Windows-1252, UTF-16 without a mark) or a file that cannot be read is
    an error naming the file and what was expected; no content of the file is shown."""
    p = os.fspath(path)
    name = os.path.basename(p)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SdcError(f"{param}: {p} cannot be read ({exc.strerror}); expected a readable file") from None
    if len(raw) > max_bytes:
        raise SdcError(
            f"{param}: {name} is larger than {max_bytes:,} bytes; expected a small text file "
            f"(at most {max_bytes:,} bytes)"
        )
    return _decode(raw, param, name, utf16)


def _decode(raw: bytes, param: str, name: str, utf16: bool) -> str:
    expected = "expected UTF-8 text" + (" (or UTF-16 with a byte-order mark)" if utf16 else "") + "; save it as UTF-8"
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    else:
        for bom, encoding, _ in BYTE_ORDER_MARKS:
            if raw.startswith(bom):
                if not utf16:
                    raise SdcError(
                        f"{param}: {name} is {encoding.upper()} text (it starts with its byte-order mark); {expected}"
                    )
                try:
                    return raw.decode(encoding)
                except UnicodeDecodeError as exc:
                    raise SdcError(
                        f"{param}: {name} starts with the {encoding.upper()} byte-order mark but byte {exc.start + 1} "
                        f"is not {encoding.upper()}; {expected}"
                    ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SdcError(
            f"{param}: {name} is not UTF-8 (byte {exc.start + 1} is not UTF-8: Latin-1 or Windows-1252 text?); {expected}"
        ) from None
    if "\x00" in text:
        raise SdcError(
            f"{param}: {name} holds NUL bytes (UTF-16 without a byte-order mark, or a binary file?); {expected}"
        )
    return text
