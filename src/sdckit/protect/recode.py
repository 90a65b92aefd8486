"""Global recoding and top/bottom coding: the non-perturbative protection methods that coarsen
a variable for every record alike.

* :func:`global_recode` merges categories (a category map, or a level of a generalisation
  hierarchy) or turns numbers into intervals.
* :func:`top_bottom_coding` replaces the values beyond a cut (numbers, or the categories of an
  ordered variable) by one value.

Layout: parameter normalisation first, then the data access through the engine (codes, labels
and the writers that return a new table), then the public functions. The arithmetic on
breaks, interval codes and look-up tables is in :mod:`sdckit._core.recode`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from .._categories import category_key as _key
from .._categories import hierarchy_map as _hierarchy_map
from .._categories import hierarchy_rows as _hierarchy_rows
from .._categories import is_missing as _is_missing
from .._categories import plain_value as _plain_value
from .._core import recode as core
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import check_rule, raise_problems
from ..results.protection import ProtectionResult
from ._common import Change, Input, finish, read_input

__all__ = ["global_recode", "top_bottom_coding"]

#: accepted spellings of ``method`` -> the name recorded in the result
_METHODS = {
    "equidistant": "equidistant",
    "log_equidistant": "log_equidistant",
    "logEqui": "log_equidistant",
    "equal_amount": "equal_amount",
    "equalAmount": "equal_amount",
}
_FLOAT_SAFE = 2**1000  # integers below this magnitude convert to float without overflow


# ----------------------------------------------------------------------------------------------
# small helpers: labels and lists in messages (a category's identity: sdckit._categories)
# ----------------------------------------------------------------------------------------------
def _same_kind_labels(values: list) -> list:
    """New category labels of one type: numbers stay numbers, text stays text, a mixture
    becomes text."""
    if all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in values):
        return values
    if all(isinstance(v, str) for v in values) or all(isinstance(v, (bool, np.bool_)) for v in values):
        return values
    return [str(v) for v in values]


def _per_variable(value: Mapping, variables, param: str) -> dict:
    """``{variable: entry}`` from a dict keyed by variable (one entry for each variable)."""
    extra = [k for k in value if k not in variables]
    absent = [v for v in variables if v not in value]
    problems = []
    if extra:
        problems.append(
            f"{param}: {', '.join(map(str, extra))} not among the variables; expected one entry per variable"
        )
    if absent:
        problems.append(f"{param}: no entry for {', '.join(absent)}; expected one entry per variable")
    raise_problems(problems)
    return {v: value[v] for v in variables}


# ----------------------------------------------------------------------------------------------
# parameters: breaks, labels, mapping, hierarchy
# ----------------------------------------------------------------------------------------------
def _breaks_spec(breaks) -> int | np.ndarray:
    """A number of intervals B >= 1, or a vector of at least two strictly increasing breaks."""
    if isinstance(breaks, numbers.Real) and not isinstance(breaks, (bool, np.bool_)):
        return check_rule("breaks", breaks)
    expected = "a number of intervals (an integer >= 1) or a sorted vector of at least two breaks"
    if isinstance(breaks, (str, bytes, Mapping)) or not hasattr(breaks, "__len__"):
        raise SdcError(f"breaks: got a {type(breaks).__name__}; expected {expected}")
    vals = list(np.asarray(breaks, dtype=object).ravel()) if isinstance(breaks, np.ndarray) else list(breaks)
    bad = [
        i
        for i, v in enumerate(vals)
        # plain numbers at once (not NaN; an integer far below float's overflow)
        if not ((type(v) is float and v == v) or (type(v) is int and -_FLOAT_SAFE < v < _FLOAT_SAFE))
        and (isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or math.isnan(float(v)))
    ]
    if bad or len(vals) < 2:
        what = f"{len(bad)} entr(y/ies) that are not numbers" if bad else f"{len(vals)} break(s)"
        raise SdcError(f"breaks: got {what}; expected {expected}")
    arr = np.asarray([float(v) for v in vals])
    i = core.strictly_increasing(arr)
    if i >= 0:
        raise SdcError(
            f"breaks: break {i + 2} is not above break {i + 1} (unsorted or overlapping intervals); "
            "expected strictly increasing breaks"
        )
    return arr


def _labels_param(labels) -> list[str] | None:
    """The user's interval labels as distinct text (None: R's interval notation)."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes, Mapping)) or not hasattr(labels, "__len__"):
        raise SdcError(f"labels: got a {type(labels).__name__}; expected a list of labels, one per interval")
    out = [str(_plain_value(v)) for v in labels]
    if len(set(out)) != len(out):
        raise SdcError("labels: duplicated labels; expected distinct labels")
    return out


def _interval_names(breaks: np.ndarray, closed: bool, labels: list[str] | None, var: str) -> list[str]:
    """The names of the intervals of one variable: the user's labels or R's notation."""
    if labels is None:
        return core.interval_labels(breaks, closed)
    n_intervals = max(breaks.size - 1, 1)
    if len(labels) != n_intervals:
        raise SdcError(
            f"labels: got {len(labels)} label(s) for {n_intervals} interval(s) of {var}; expected one per interval"
        )
    return labels


def _one_mapping(mapping, param: str) -> dict:
    """``{key(old): new}`` from a user map, checking the new categories."""
    if isinstance(mapping, Mapping) and not mapping:
        raise SdcError(f"{param}: empty; expected at least one entry {{old category: new category}}")
    if not isinstance(mapping, Mapping):
        raise SdcError(
            f"{param}: got a {type(mapping).__name__}; expected a non-empty dict {{old category: new category}}"
        )
    out: dict = {}
    for old, new in mapping.items():
        if _is_missing(new):
            raise SdcError(f"{param}: an entry's new category is missing; expected a category (not None or NaN)")
        k = _key(old)
        if k in out and _key(out[k]) != _key(new):
            raise SdcError(f"{param}: a category is mapped twice to different categories; expected one entry")
        out[k] = _plain_value(new)
    return out


def _mappings(mapping, variables) -> dict[str, dict]:
    """One map for every variable, or ``{variable: map}``."""
    if isinstance(mapping, Mapping) and not mapping:
        raise SdcError("mapping: empty; expected at least one entry {old: new} (or {variable: {old: new}})")
    if not isinstance(mapping, Mapping):
        raise SdcError(
            f"mapping: got a {type(mapping).__name__}; expected a dict {{old: new}} or {{variable: {{old: new}}}}"
        )
    nested = [isinstance(v, Mapping) for v in mapping.values()]
    if any(nested) and not all(nested):
        raise SdcError("mapping: mixes categories and variables as keys; expected {old: new} or {variable: {old: new}}")
    if not all(nested):
        one = _one_mapping(mapping, "mapping")
        return {v: one for v in variables}
    per = _per_variable(mapping, variables, "mapping")
    return {v: _one_mapping(m, f"mapping[{v!r}]") for v, m in per.items()}


# ----------------------------------------------------------------------------------------------
# data access: category maps and intervals written through the engine
# ----------------------------------------------------------------------------------------------
def _apply_map(inp: Input, table, var: str, new_of: dict, order=None):
    """Recode the categories of ``var`` through ``new_of`` (``{key(old): new}``).

    Returns ``(table, change, applied, uncovered)``: the new table (None when categories are
    not covered), the change log, the map applied ``{old: new}`` for the categories present,
    and the observed categories the map does not cover. New categories take the place of the
    first old category mapped to them (declared order for ordered columns, or ``order``).
    """
    codes, labels = inp.engine.encode_column(inp.table, var)
    ordered = inp.table.categories(var) is not None
    return map_codes(inp.engine, table, var, codes, labels, new_of, order, ordered)


def map_codes(eng, table, var: str, codes, labels, new_of: dict, order=None, ordered: bool = False):
    """:func:`_apply_map` on ``var``'s codes and labels as the engine encoded them (without
    missing-value codes): the recode of every global recoding, also for a caller that holds
    the encoding already (the protection search); ``ordered``: the column is ordered."""
    values = eng.label_values(labels)
    keys = [_key(v) for v in values]
    observed = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(values))).tolist()
    uncovered = [values[c] for c in observed if keys[c] not in new_of]
    if uncovered:
        return None, None, {}, uncovered
    seq = list(range(len(values)))
    if order is not None:
        pos = {k: i for i, k in enumerate(order)}
        seq = sorted(seq, key=lambda c: pos.get(keys[c], len(pos)))
    lut = np.full(len(values), -1, dtype=np.int64)
    new_labels: list = []
    slot: dict = {}
    for c in seq:
        if keys[c] in new_of:
            nk = _key(new_of[keys[c]])
            if nk not in slot:
                slot[nk] = len(new_labels)
                new_labels.append(new_of[keys[c]])
            lut[c] = slot[nk]
    renamed = np.array([lut[c] >= 0 and keys[c] != _key(new_labels[lut[c]]) for c in range(len(values))], dtype=bool)
    new_codes, mask = core.recode_codes(codes, lut, renamed)
    new_labels = _same_kind_labels(new_labels)
    table = eng.with_codes(table, var, new_codes, new_labels, categories=new_labels if ordered else None)
    applied = {_plain_value(values[c]): new_labels[lut[c]] for c in observed}
    return table, Change(mask, codes, labels), applied, []


def _uncovered_problem(param: str, var: str, uncovered: list) -> str:
    if param == "categories":
        return (
            f"categories: {len(uncovered)} categor(y/ies) of {var} not in the order; "
            "expected every category of the data in categories"
        )
    return (
        f"{param}: {len(uncovered)} categor(y/ies) of {var} not covered; "
        "expected a new category for every category of the data"
    )


def _recode_all(inp: Input, table, maps: dict[str, dict], param: str, orders=None):
    """Apply one category map per variable of ``maps`` (read from the caller's data, written
    into ``table``); every uncovered category in one error."""
    changes, applied, problems = {}, {}, []
    for var, new_of in maps.items():
        order = orders.get(var) if orders else None
        new_table, change, done, uncovered = _apply_map(inp, table, var, new_of, order)
        if uncovered:
            problems.append(_uncovered_problem(param, var, uncovered))
            continue
        table, changes[var], applied[var] = new_table, change, done
    raise_problems(problems)
    return table, changes, applied


def _interval_breaks(x: np.ndarray, spec, method: str) -> tuple[np.ndarray | None, str | None]:
    """Breaks of one variable from a vector or a number of intervals, or a problem text (no
    observed value; log scale with values <= 0)."""
    if isinstance(spec, np.ndarray):
        return spec, None
    obs = x[~np.isnan(x)]
    if obs.size == 0:
        return None, "no observed value to compute breaks from; expected at least one number"
    lo, hi = float(obs.min()), float(obs.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None, "infinite values; expected finite numbers to compute breaks from"
    if method == "equidistant":
        return core.equidistant_breaks(lo, hi, spec), None
    if method == "log_equidistant":
        if lo <= 0:
            n_bad = int(np.count_nonzero(obs <= 0))
            return None, f"{n_bad} value(s) <= 0; expected positive values for method 'log_equidistant'"
        return core.log_equidistant_breaks(lo, hi, spec), None
    return core.equal_amount_breaks(obs, spec), None


def _outside_problem(var: str, x: np.ndarray, codes: np.ndarray, breaks: np.ndarray) -> str:
    """The message for values outside every interval of a breaks vector (counts only)."""
    n_out = int(np.count_nonzero(codes == -2))
    n_first = int(np.count_nonzero(x == breaks[0]))
    b0, b_last = core.format_breaks([breaks[0], breaks[-1]])
    first = f", {n_first} of them equal to the first break (the intervals are open on the left)" if n_first else ""
    return (
        f"breaks: {n_out} value(s) of {var} fall outside the intervals ({b0}, {b_last}]{first}; expected breaks "
        "covering every value (a first break below the smallest value, or -inf and inf as the end points)"
    )


def _recode_intervals(inp: Input, spec, method: str, labels):
    """Numbers -> interval categories for every variable; returns (table, changes, details)."""
    not_numeric = [v for v in inp.variables if not inp.table.is_numeric(v)]
    if not_numeric:
        raise SdcError(
            f"breaks: {', '.join(not_numeric)} not numeric; expected numeric variables (use mapping= for categories)"
        )
    x_all = inp.table.floats(list(inp.variables))
    table, changes, problems = inp.table, {}, []
    used: dict = {"breaks": {}, "labels": {}}
    closed = not isinstance(spec, np.ndarray)  # breaks from the data: the minimum is in the first interval
    for j, var in enumerate(inp.variables):
        x = x_all[:, j]
        breaks, problem = _interval_breaks(x, spec, method)
        if breaks is None:
            problems.append(f"{var}: {problem}")
            continue
        codes = core.interval_codes(x, breaks, closed)
        if (codes == -2).any():
            problems.append(_outside_problem(var, x, codes, breaks))
            continue
        names = _interval_names(breaks, closed, labels, var)
        table = inp.engine.with_codes(table, var, codes, names, categories=names)
        changes[var] = Change(codes >= 0)
        used["breaks"][var] = breaks.tolist()  # Python floats
        used["labels"][var] = names
    raise_problems(problems)
    used["closed_left"] = closed
    return table, changes, used


# ----------------------------------------------------------------------------------------------
# global recoding
# ----------------------------------------------------------------------------------------------
def _check_recode_options(mapping, breaks, hierarchy, method, labels, level) -> str:
    """Exactly one of mapping / breaks / hierarchy, and options only where they apply; the
    method's recorded name."""
    given = [n for n, v in (("mapping", mapping), ("breaks", breaks), ("hierarchy", hierarchy)) if v is not None]
    if len(given) != 1:
        got = ", ".join(given) if given else "none"
        raise SdcError(f"mapping, breaks, hierarchy: got {got}; expected exactly one of them")
    name = _METHODS[method]  # checked by the declaration
    count = isinstance(breaks, numbers.Real) and not isinstance(breaks, bool)
    problems = []
    if name != "equidistant" and not count:
        problems.append("method: applies only when breaks is a number of intervals; expected the default")
    if labels is not None and breaks is None:
        problems.append("labels: applies only with breaks; expected None")
    if level is not None and hierarchy is None:
        problems.append("level: applies only with hierarchy; expected None")
    if hierarchy is not None and level is None:
        problems.append("level: missing; expected the hierarchy level to recode to (an integer >= 1)")
    raise_problems(problems)
    return name


@declare(
    "method",
    Param("variables", "columns"),
    Param("mapping", "mapping"),
    Param("breaks", "numbers", allow_inf=True),
    Param("method", "choice", choices=tuple(_METHODS)),
    Param("labels", "texts"),
    Param("hierarchy", "any"),
    Param("level", "int"),
    changes="the categories of the variables (merged, generalised, or numbers cut into intervals)",
    aliases=("recode",),
    heading="Global recoding",
)
def global_recode(
    data,
    variables,
    *,
    mapping=None,
    breaks=None,
    method: str = "equidistant",
    labels=None,
    hierarchy=None,
    level=None,
    engine=None,
) -> ProtectionResult:
    """Global recoding: merge categories, or turn numbers into intervals, for every record.

    Exactly one of ``mapping``, ``breaks`` and ``hierarchy`` says how.

    * **Category map** (``mapping``): each record's category c becomes ``mapping[c]``
      (many-to-one). A map that does not cover every category present in the data is an error
      naming the uncovered categories; a missing value stays missing.
    * **Hierarchy** (``hierarchy``, ``level``): each category is replaced by its ancestor at
      ``level`` of a generalisation hierarchy (Samarati 2001; Sweeney 2002): a table whose first
      column holds the categories and column j their level-j generalisation, as ARX's hierarchy
      files (``;``-separated CSV without a header row).
    * **Intervals** (``breaks``, numeric variables): with a sorted vector b_0 < ... < b_L the
      intervals are (b_{l-1}, b_l], open on the left as R's ``cut``; a value equal to b_0, or
      outside [b_0, b_L], is an error (sdcMicro silently makes it missing; use a lower first
      break, or ``-inf`` / ``inf`` as end points). With a number B of intervals the breaks
      come from the data and the first interval is closed on the left:

      - ``"equidistant"``: b_l = (min - 1) + l (max - min + 2) / B, l = 0..B, rounded to
        integers unless rounding makes two breaks equal;
      - ``"log_equidistant"`` (sdcMicro's ``"logEqui"``): the same on log x, back-transformed
        (b_l = exp(c_l), c from log(min) - 1 to log(max) + 1); positive values only;
      - ``"equal_amount"`` (``"equalAmount"``): the quantiles at 0, 1/B, ..., 1 (Hyndman and
        Fan 1996, type 7); duplicated quantiles are merged (fewer intervals; sdcMicro jitters
        them instead).

      Interval labels are R's: ``"(a,b]"``, the first ``"[a,b]"`` when closed on the left;
      numbers are written as C's ``%.8g`` (more digits, up to 12, when neighbouring breaks
      would read the same). The new column is ordered (its categories in interval order).

    Categories are matched by value, numbers and their text alike (``1``, ``1.0``, ``"1"``).
    For an ordered (Enum) column each new category takes the place of the first old category
    mapped to it, so that ranks stay comparable (a merged category keeps the rank of one of its
    original categories).

    Parameters
    ----------
    data : DataFrame (pandas, Polars, PyArrow), dict of columns or 2-D NumPy array
        The microdata; never modified.
    variables : str or list of str
        The columns to recode.
    mapping : dict, optional
        ``{old: new}`` for every variable, or ``{variable: {old: new}}``.
    breaks : int or sequence of float, optional
        A number of intervals B >= 1, or strictly increasing interval boundaries.
    method : str, default "equidistant"
        How B intervals are placed: ``"equidistant"``, ``"log_equidistant"`` or
        ``"equal_amount"`` (sdcMicro's spellings ``"logEqui"`` and ``"equalAmount"`` too).
    labels : list of str, optional
        Names of the intervals, in order (default: R's interval notation).
    hierarchy : path, table or list of rows, optional
        A generalisation hierarchy (see above).
    level : int, optional
        The hierarchy level to recode to (1 = the first coarser column).
    engine : str, optional
        The computation engine (default: the in-memory Polars engine).

    Returns
    -------
    ProtectionResult
        The recoded data as the caller's frame type, the changed cells per variable (numbers:
        every non-missing value; categories: records whose category was renamed, counted per
        original category) and in ``details`` the breaks and labels used or the map applied.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley (global recoding).
    Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for
    micro-data using the R package sdcMicro. *J. Stat. Softw.* 67(4).
    """
    inp = read_input(data, variables, engine=engine, method="global_recode")
    name = _check_recode_options(mapping, breaks, hierarchy, method, labels, level)
    params = {
        "variables": list(inp.variables),
        "mapping": mapping,
        "breaks": breaks,
        "method": name,
        "labels": labels,
        "hierarchy": hierarchy,
        "level": level,
    }
    if breaks is not None:
        spec = _breaks_spec(breaks)
        params["breaks"] = spec if isinstance(spec, int) else [_plain_value(v) for v in list(breaks)]
        params["labels"] = names = _labels_param(labels)
        table, changes, details = _recode_intervals(inp, spec, name, names)
        details["method"] = name if isinstance(spec, int) else None
        return finish(global_recode, params, inp, table, changes, details)
    if mapping is not None:
        table, changes, applied = _recode_all(inp, inp.table, _mappings(mapping, inp.variables), "mapping")
        return finish(global_recode, params, inp, table, changes, {"mapping": applied})
    rows, recorded = _hierarchy_rows(hierarchy, inp.engine)
    one = _hierarchy_map(rows, level)
    table, changes, applied = _recode_all(inp, inp.table, {v: one for v in inp.variables}, "hierarchy")
    params["hierarchy"] = recorded
    return finish(global_recode, params, inp, table, changes, {"mapping": applied, "level": int(level)})


# ----------------------------------------------------------------------------------------------
# top and bottom coding
# ----------------------------------------------------------------------------------------------
def _tail_numeric(inp: Input, table, var: str, value: float, replacement: float, top: bool):
    """x := replacement where x > value (top) or x < value (bottom); NaN untouched."""
    x = inp.table.floats([var])[:, 0]  # this call's own copy: coded in place
    beyond = core.tail_mask(x, value, top)
    # a replacement on the kept side of the cut (or on it) differs from every value beyond it
    changed = beyond if (replacement <= value if top else replacement >= value) else beyond & (x != replacement)
    if changed.any():
        np.putmask(x, beyond, replacement)
        table = inp.engine.with_values(table, var, x)
    return table, Change(changed)


def _tail_map(order: list, value, replacement, top: bool, var: str) -> tuple[dict, list]:
    """The category map of categorical top/bottom coding (the categories beyond the cut merged
    into ``replacement``) and the new category order."""
    keys = [_key(c) for c in order]
    if _key(value) not in keys:
        raise SdcError(f"value: not a category of {var}; expected one of its ordered categories")
    p = keys.index(_key(value))
    beyond = set(range(p + 1, len(order))) if top else set(range(p))
    rep = value if replacement is None else replacement
    rk = _key(rep)
    if rk in keys and keys.index(rk) != p and keys.index(rk) not in beyond:
        raise SdcError(
            f"replacement: a category of {var} on the kept side of the cut; expected the cut category, "
            "a category beyond it, or a new label"
        )
    new_of = {k: (rep if i in beyond else order[i]) for i, k in enumerate(keys)}
    new_order: list = []
    for i in range(len(order)):
        new = new_of[keys[i]]
        if all(_key(n) != _key(new) for n in new_order):
            new_order.append(new)
    return new_of, new_order


def _category_orders(inp: Input, categories) -> dict[str, list]:
    """The declared order of each non-numeric variable: ``categories`` or the column's own."""
    per = (
        _per_variable(categories, inp.variables, "categories")
        if categories is not None and isinstance(categories, Mapping)
        else {v: categories for v in inp.variables}
    )
    orders, problems = {}, []
    for var in inp.variables:
        given = per[var]
        if inp.table.is_numeric(var):
            if given is not None:
                problems.append(f"categories: {var} is numeric (ordered as numbers); expected None for it")
            continue
        if given is not None and (isinstance(given, (str, bytes)) or not hasattr(given, "__len__")):
            problems.append(f"categories: got a {type(given).__name__} for {var}; expected a list of categories")
            continue
        order = list(given) if given is not None else inp.table.categories(var)
        if order is None:
            problems.append(
                f"{var}: neither numeric nor ordered; expected numbers, an ordered (Enum) column, or "
                "categories= giving the order of its categories"
            )
            continue
        orders[var] = [_plain_value(c) for c in order]
    raise_problems(problems)
    return orders


@declare(
    "method",
    Param("variables", "columns"),
    Param("value", "any"),  # a number, or a category of an ordered text column
    Param("replacement", "any"),
    Param("kind", "choice", choices=("top", "bottom")),
    Param("categories", "any"),
    changes="the values of the variables beyond the cut (replaced by one value)",
    aliases=("topbottom",),
    heading="Top and bottom coding",
)
def top_bottom_coding(
    data,
    variables,
    *,
    value,
    replacement=None,
    kind: str = "top",
    categories=None,
    engine=None,
) -> ProtectionResult:
    """Top or bottom coding: replace every value beyond a cut by one value.

    Numeric variables: top coding sets x := ``replacement`` for every x > ``value``, bottom
    coding for every x < ``value`` (strict inequalities, as sdcMicro's ``topBotCoding``); a
    missing value stays missing.

    Ordered categorical variables (the order from ``categories``, or the column's declared
    order): ``value`` is a category (the cut) and every category above it (top) or below it
    (bottom) is merged into one, labelled ``replacement``. The default replacement is the cut
    itself (the categories beyond the cut join it, as numbers are top-coded to the cut); a new
    label takes the place of the first category beyond the cut, and ``replacement`` may also
    name a category beyond the cut, but not one on the kept side. An ordered (Enum) column
    stays ordered. A category of the data outside the order is an error naming it.

    Parameters
    ----------
    data : DataFrame (pandas, Polars, PyArrow), dict of columns or 2-D NumPy array
        The microdata; never modified.
    variables : str or list of str
        The columns to code.
    value : number or category
        The cut.
    replacement : number or category, optional
        The value that replaces the values beyond the cut (default: ``value``).
    kind : {"top", "bottom"}, default "top"
        Which side of the cut is replaced.
    categories : list, or dict of lists, optional
        The order of the categories of a categorical variable, lowest first (one list for every
        variable, or ``{variable: list}``); default: the column's declared (Enum) order.
    engine : str, optional
        The computation engine (default: the in-memory Polars engine).

    Returns
    -------
    ProtectionResult
        The coded data as the caller's frame type and the changed cells per variable (for
        categorical variables also per original category); ``details`` holds the new category
        order of categorical variables.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*, Wiley (top and bottom coding).
    Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for
    micro-data using the R package sdcMicro. *J. Stat. Softw.* 67(4).
    """
    inp = read_input(data, variables, engine=engine, method="top_bottom_coding")
    top = kind == "top"  # checked by the declaration
    orders = _category_orders(inp, categories)
    params = {
        "variables": list(inp.variables),
        "value": _plain_value(value),
        "replacement": _plain_value(replacement),
        "kind": kind,
        "categories": categories,
    }
    table, changes = inp.table, {}
    numeric = [v for v in inp.variables if v not in orders]
    if numeric:
        cut = check_rule("value", value)
        rep = cut if replacement is None else check_rule("replacement", replacement)
        for var in numeric:
            table, changes[var] = _tail_numeric(inp, table, var, cut, rep, top)
    details: dict = {"kind": kind, "categories": {}}
    maps = {}
    for var, order in orders.items():
        maps[var], details["categories"][var] = _tail_map(order, value, replacement, top, var)
    if maps:
        keyed = {v: [_key(c) for c in o] for v, o in orders.items()}
        table, cat_changes, _ = _recode_all(inp, table, maps, "categories", keyed)
        changes.update(cat_changes)
    changes = {v: changes[v] for v in inp.variables}
    return finish(top_bottom_coding, params, inp, table, changes, details)
