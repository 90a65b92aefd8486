r"""Targeted record swapping: households exchange their geography (sdcMicro ``recordSwap``;
Dalenius & Reiss 1982, Shlomo, Tudor & Groom 2010)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core.record_swap import (
    dense_ids,
    first_risky_level,
    household_layout,
    household_reduce,
    n_varying,
    plan_swaps,
    row_ids,
    source_rows,
    split_units,
)
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import (
    as_missing_codes,
    as_name_list,
    check_column,
    mixed_type_problems,
    raise_problems,
)
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input, resolve_seed

__all__ = ["record_swap"]

_MAX_NAMED = 10  # unit codes named in an error message


@dataclass(frozen=True)
class _Options:
    """The checked call (column names as lists; ``similar`` None = household size)."""

    keys: list | None
    household: str
    geography: list
    similar: list | None
    k: int
    risk: list | None
    risk_threshold: float | None
    swap_rate: float
    carry_along: list
    seed: int
    missing: tuple


@dataclass(frozen=True)
class _Households:
    """Records grouped into households: the household of each record (0..H-1), each
    household's first record and size."""

    of_record: np.ndarray
    first_row: np.ndarray
    size: np.ndarray

    @property
    def n(self) -> int:
        return int(self.size.size)


@declare(
    "method",
    Param("keys", nullable=True),
    Param("household"),
    Param("geography", "columns"),
    Param("similar", "column_sets"),
    Param("k", "int"),
    Param("risk", "columns"),
    Param("risk_threshold", "number"),
    Param("swap_rate", "number"),
    Param("carry_along", "columns"),
    Param("seed"),
    Param("missing"),
    random=True,
    changes="the geography (and carried-along variables) of the swapped households",
    aliases=("swap",),
    heading="Targeted record swapping",
    renamed={"threshold": "risk_threshold"},
)
def record_swap(
    data,
    keys,
    *,
    household,
    geography,
    similar=None,
    k=3,
    risk=None,
    risk_threshold=None,
    swap_rate=0.05,
    carry_along=None,
    seed=None,
    missing=None,
    engine=None,
) -> ProtectionResult:
    r"""Targeted record swapping: risky households, and random ones up to a swap rate,
    exchange their geography with a similar household of another area.

    With levels l = 0 (coarsest) .. L-1 (finest) of the nested ``geography`` and c_{r,l} the
    number of records sharing record r's ``keys`` values within its unit of level l:

    1. household risk per level: rho_{h,l} = max_{r in h} 1 / c_{r,l}; h is risky at level l
       when min_{r in h} c_{r,l} < k (with ``risk``: rho_{h,l} = max_{r in h} risk_r, risky
       when rho_{h,l} > ``risk_threshold``); it is swapped across the first (coarsest) such level;
    2. target: P = H * swap_rate / 2 swaps (each swap moves two households), rounded up with
       probability equal to its fraction, shared among the finest units in proportion to
       their households (the remainders by systematic sampling);
    3. from the coarsest level to the finest, the households risky first at that level seek
       a donor: a household not yet swapped, in another unit of that level, with the same
       values on the first ``similar`` profile that offers one (then the next); donors and
       requests come in weighted random orders with probabilities proportional to rho
       (Efraimidis & Spirakis 2006), so rarer households are drawn first;
    4. at the finest level, the households risky there and, in each finest unit, households
       drawn with probability proportional to rho_{h,L-1} until the unit's share of P
       (swaps credited to the unit of the household that sought the donor, at any level) is
       met; a unit short of it draws again while it has households left and its last draw
       found at least one donor;
    5. each pair exchanges the ``geography`` and ``carry_along`` values for all its records.

    Household sizes and composition are unchanged; only the geography and carry-along
    columns change. With the default ``similar`` (household size) and complete pairs, the
    number of records and households per unit is unchanged too.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    keys : str or list of str, or None
        Key variables of the household profile (person-level variables allowed); None only
        with ``risk``.
    household : str
        The household id column (no missing values).
    geography : str or list of str
        The geographic hierarchy, coarsest level first; nested (every unit of a level lies in
        one unit of the coarser level: give finer units codes unique across the coarser
        ones) and constant within a household.
    similar : list of lists of str, optional
        Similarity profiles: a donor matches the requester on every variable of the first
        profile that offers a donor (an empty list matches any household). A single list of
        names is one profile. Variables must be constant within a household. Default:
        household size (number of records).
    k : int >= 1, default 3
        k of k-anonymity for the risky households (k = 1: none is risky).
    risk : str or list of str, optional
        Per-record risk column(s) used instead of ``keys``: one column for every level, or
        one per geography level (coarsest first). Non-negative numbers; a household takes its
        members' maximum. A household of risk 0 at a level is never drawn there.
    risk_threshold : float >= 0, optional
        With ``risk``: households whose risk is above it are risky (required with ``risk``).
        It is on the scale of the ``risk`` column, whatever that is (sdcMicro's
        ``risk_threshold``), so it is not the ``threshold`` of the other functions, a
        re-identification probability in (0, 1]; ``threshold=`` is its old name.
    swap_rate : float in [0, 1], default 0.05
        Share of households to swap (risky households are swapped whatever the rate).
    carry_along : str or list of str, optional
        Household-level variables that move with the geography.
    seed : int, optional
        Seed of the random draws (the same seed gives the same result); None draws a fresh
        seed, recorded in ``parameters["seed"]``.
    missing : value or list of values, optional
        Extra missing-value codes of ``keys`` and ``similar`` (a missing value is a category
        of its own there).
    engine : optional
        The in-memory engine (default); this method needs the records in memory (DuckDB and
        Spark: an error).

    Returns
    -------
    ProtectionResult
        ``data`` with swapped geography; ``n_changed`` the cells whose value changed.
        ``details``: ``n_households``, ``risky_by_level`` (households risky first at each
        level), ``swapped_by_level`` (households swapped for a risky requester, both sides of
        each pair, by the level of the swap), ``swapped_random_fill``,
        ``n_swapped_households``, ``n_swapped_records``, ``target_swap_rate`` (2P / H),
        ``swap_rate_reached`` (swapped households / H), ``n_risky_without_donor`` (risky
        households left unswapped: no donor), ``n_fill_without_donor``, ``pairs_by_profile``
        (swaps matched on each similarity profile, first = 1) and ``swapped_rows`` (positions
        of the swapped records; left out of ``to_dict()``).

    Notes
    -----
    Rules follow sdcMicro's ``recordSwap`` (Gussenbauer), with these differences: units are
    identified by their own code (sdcMicro combines the codes of all coarser levels) and the
    hierarchy must be nested; all requests of a level are served in one weighted random
    order (sdcMicro goes area by area, in code order); a risky household may be the donor of
    another; donors keep the order of a weighted sample without replacement (sdcMicro keys
    them by the random value, so ties overwrite each other); the total and the per-unit
    shares are rounded without bias; short units draw again until their share is met or no
    household is left; ``carry_along`` and ``similar`` variables must be constant within a
    household (sdcMicro warns and takes the first record's value). The random draws are not
    those of R.

    References
    ----------
    Dalenius, T. & Reiss, S. P. (1982), Data-swapping: a technique for disclosure control,
    Journal of Statistical Planning and Inference 6(1), 73-85.
    Shlomo, N., Tudor, C. & Groom, P. (2010), Data swapping for protecting census tables,
    Privacy in Statistical Databases, LNCS 6344, 41-51.
    Efraimidis, P. S. & Spirakis, P. G. (2006), Weighted random sampling with a reservoir,
    Information Processing Letters 97(5), 181-185.
    """
    opts = _options(keys, household, geography, similar, k, risk, risk_threshold, swap_rate, carry_along, seed, missing)
    inp = read_input(data, opts.geography, "geography", engine=engine, method="record_swap")
    _require(inp.table, opts)
    hh = _households(inp, opts.household)
    geo = {g: inp.engine.encode_column(inp.table, g) for g in opts.geography}
    units = _units(inp, opts, hh, geo)
    weight, risky = _risk(inp, opts, hh, geo)
    profiles = _profiles(inp, opts, hh)
    carried = _carried(inp, opts, hh)
    level = first_risky_level(risky)
    plan = plan_swaps(units, weight, level, profiles, opts.swap_rate, np.random.default_rng(opts.seed))
    src = source_rows(hh.of_record, hh.first_row, plan.partner)
    table, changes = _write(inp, src, geo, carried)
    details, notes = _details(opts, hh, plan, level)
    details["swapped_rows"] = np.flatnonzero(src != np.arange(src.size))
    return finish(record_swap, _parameters(opts), inp, table, changes, details, notes)


# ----------------------------------------------------------------------------------------------
# options
# ----------------------------------------------------------------------------------------------
def _options(keys, household, geography, similar, k, risk, risk_threshold, swap_rate, carry_along, seed, missing):
    """Check the parameters (not yet against the data)."""
    key_list = as_name_list(keys, "keys") if keys is not None else None
    risk_list = as_name_list(risk, "risk") if risk is not None else None
    problems = []
    if key_list is None and risk_list is None:
        problems.append("keys: no columns given; expected the key variables (or risk with risk_threshold)")
    if key_list is not None and risk_list is not None:
        problems.append("keys: given together with risk; expected one of them (risk replaces the k-anonymity rule)")
    if risk_list is not None and risk_threshold is None:
        problems.append("risk_threshold: missing; expected a number >= 0 above which a household is risky")
    if risk_list is None and risk_threshold is not None:
        problems.append("risk_threshold: given without risk; expected risk_threshold only with a risk column")
    raise_problems(problems)
    hh = check_column(household, "household", allow_none=False)
    opts = _Options(
        keys=key_list,
        household=hh,
        geography=as_name_list(geography, "geography"),
        similar=_similar(similar),
        k=int(k),  # k, risk_threshold, swap_rate: checked by the declaration
        risk=risk_list,
        risk_threshold=None if risk_threshold is None else float(risk_threshold),
        swap_rate=float(swap_rate),
        carry_along=as_name_list(carry_along, "carry_along", allow_empty=True),
        seed=resolve_seed(seed),
        missing=as_missing_codes(missing),
    )
    _overlaps(opts)
    return opts


def _similar(similar) -> list | None:
    """Similarity profiles as a list of lists of names (one list of names is one profile)."""
    if similar is None:
        return None
    if isinstance(similar, str) or (
        isinstance(similar, (list, tuple)) and similar and all(isinstance(v, (str, int)) for v in similar)
    ):
        return [as_name_list(similar, "similar")]
    if not isinstance(similar, (list, tuple)) or not similar:
        raise SdcError("similar: not a list of profiles; expected a list of lists of column names")
    if not all(isinstance(p, (list, tuple)) for p in similar):
        raise SdcError("similar: mixes names and lists; expected a list of lists of column names")
    return [as_name_list(list(p), f"similar[{i}]", allow_empty=True) for i, p in enumerate(similar)]


def _overlaps(opts: _Options) -> None:
    """The household id, the geography and the columns that move with it are separate."""
    problems = []
    geo = set(opts.geography)
    if opts.household in geo | set(opts.carry_along) | set(opts.keys or ()):
        problems.append(f"household: {opts.household} is also a geography, key or carry_along column")
    for param, names in (("keys", opts.keys or []), ("carry_along", opts.carry_along)):
        both = sorted(geo & set(names))
        if both:
            problems.append(f"{param}: {', '.join(both)} also in geography; expected other columns")
    for i, profile in enumerate(opts.similar or []):
        both = sorted(geo & set(profile))
        if both:
            problems.append(
                f"similar[{i}]: {', '.join(both)} in geography; expected other columns (a donor lies in another unit)"
            )
    raise_problems(problems)


def _require(table, opts: _Options) -> None:
    table.require([opts.household], "household")
    if opts.keys:
        table.require(opts.keys, "keys")
    if opts.risk:
        table.require(opts.risk, "risk")
    for i, profile in enumerate(opts.similar or []):
        table.require(profile, f"similar[{i}]")
    table.require(opts.carry_along, "carry_along")
    problems = mixed_type_problems(table, [opts.household], "household")
    problems += mixed_type_problems(table, opts.keys or [], "keys")
    for i, profile in enumerate(opts.similar or []):
        problems += mixed_type_problems(table, profile, f"similar[{i}]")
    raise_problems(problems + mixed_type_problems(table, opts.carry_along, "carry_along"))


def _parameters(opts: _Options) -> dict:
    return {
        "keys": opts.keys,
        "household": opts.household,
        "geography": list(opts.geography),
        "similar": opts.similar,
        "k": opts.k,
        "risk": opts.risk,
        "risk_threshold": opts.risk_threshold,
        "swap_rate": opts.swap_rate,
        "carry_along": list(opts.carry_along) or None,
        "seed": opts.seed,
        "missing": list(opts.missing) or None,
    }


# ----------------------------------------------------------------------------------------------
# households, units, risk, profiles
# ----------------------------------------------------------------------------------------------
def _households(inp, name: str) -> _Households:
    codes, _ = inp.engine.encode_column(inp.table, name)
    n_missing = int(np.count_nonzero(codes < 0))
    if n_missing:
        raise SdcError(f"household: {n_missing:,} records have no household id; expected an id for every record")
    hh, H = dense_ids(codes)
    first, size = household_layout(hh, H)
    return _Households(hh, first, size)


def _household_level(hh: _Households, columns: dict, param: str, what: str) -> None:
    """Raise when a column varies within households (one message for all such columns)."""
    problems = []
    for name, codes in columns.items():
        n_bad = n_varying(hh.of_record, codes, hh.first_row)
        if n_bad:
            problems.append(f"{param}: {name} varies within {n_bad:,} households; expected {what}")
    raise_problems(problems)


def _units(inp, opts: _Options, hh: _Households, geo: dict) -> np.ndarray:
    """(H, L) dense unit codes per household and level; checks: no missing value, constant
    within a household, nested."""
    problems = []
    for g, (codes, _) in geo.items():
        n_missing = int(np.count_nonzero(codes < 0))
        if n_missing:
            problems.append(f"geography: {g} is missing in {n_missing:,} records; expected a unit for every record")
    raise_problems(problems)
    _household_level(hh, {g: c for g, (c, _) in geo.items()}, "geography", "every member of a household in one unit")
    units = np.column_stack([dense_ids(geo[g][0][hh.first_row])[0] for g in opts.geography]) if hh.n else None
    if units is None:
        return np.zeros((0, len(opts.geography)), dtype=np.int64)
    for lev in range(1, units.shape[1]):
        broken = split_units(units[:, lev], units[:, lev - 1])
        if broken.size:
            _not_nested(inp, opts, geo, hh, lev, units, broken)
    return units


def _not_nested(inp, opts: _Options, geo: dict, hh: _Households, lev: int, units, broken) -> None:
    """The error naming (some of) the units of a level that lie in several coarser units."""
    child, parent = opts.geography[lev], opts.geography[lev - 1]
    codes, labels = geo[child]
    values = inp.engine.label_values(labels)
    hh_codes = codes[hh.first_row]
    named = []
    for unit in broken[:_MAX_NAMED].tolist():
        named.append(str(values[int(hh_codes[np.flatnonzero(units[:, lev] == unit)[0]])]))
    more = " ..." if broken.size > _MAX_NAMED else ""
    raise SdcError(
        f"geography: {broken.size:,} units of {child} lie in more than one unit of {parent} "
        f"({', '.join(named)}{more}); expected every unit of {child} inside one unit of {parent} "
        "(codes unique across the coarser units, e.g. combined codes)"
    )


def _risk(inp, opts: _Options, hh: _Households, geo: dict) -> tuple[np.ndarray, np.ndarray]:
    """(weight, risky) per household and level: the inverse counts and count < k, or the
    user's risk and risk > risk_threshold."""
    L = len(opts.geography)
    if opts.risk is not None:
        rho = household_reduce(hh.of_record, _risk_values(inp, opts), hh.n, "max")
        rho = np.repeat(rho, L, axis=1) if rho.shape[1] == 1 else rho
        return rho, rho > opts.risk_threshold
    keys = np.column_stack([inp.engine.encode_column(inp.table, c, list(opts.missing))[0] for c in opts.keys])
    counts = np.empty((hh.of_record.size, L))
    for lev, g in enumerate(opts.geography):
        ids, _, cnt, _ = inp.engine.patterns(np.column_stack([keys, geo[g][0]]).astype(np.int32))
        counts[:, lev] = cnt[ids]
    low = household_reduce(hh.of_record, counts, hh.n, "min")
    return 1.0 / low, low < opts.k


def _risk_values(inp, opts: _Options) -> np.ndarray:
    """The user's risk columns as floats (records x columns), checked."""
    L = len(opts.geography)
    if len(opts.risk) not in (1, L):
        raise SdcError(f"risk: {len(opts.risk)} columns for {L} geography levels; expected one column or one per level")
    not_numeric = [c for c in opts.risk if not inp.table.is_numeric(c)]
    if not_numeric:
        raise SdcError(f"risk: {', '.join(not_numeric)} not numeric; expected risk values (numbers >= 0)")
    x = inp.table.floats(opts.risk)
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        n_bad = int(np.count_nonzero(bad.any(axis=1)))
        raise SdcError(f"risk: {n_bad:,} records without a finite risk >= 0; expected a number >= 0 for every record")
    return x


def _profiles(inp, opts: _Options, hh: _Households) -> np.ndarray:
    """(H, P) profile id per household and similarity profile (default: household size)."""
    if opts.similar is None:
        return hh.size[:, None].astype(np.int64)
    names = sorted({c for p in opts.similar for c in p})
    codes = {c: inp.engine.encode_column(inp.table, c, list(opts.missing))[0] for c in names}
    _household_level(hh, codes, "similar", "household-level variables (one value per household)")
    cols = []
    for profile in opts.similar:
        mat = np.column_stack([codes[c][hh.first_row] for c in profile]) if profile else np.zeros((hh.n, 0))
        cols.append(row_ids(mat.astype(np.int64)))
    return np.column_stack(cols) if cols else np.zeros((hh.n, 0), dtype=np.int64)


def _carried(inp, opts: _Options, hh: _Households) -> dict:
    """Codes and labels of the carry-along columns (checked: household-level)."""
    out = {c: inp.engine.encode_column(inp.table, c) for c in opts.carry_along}
    _household_level(
        hh, {c: v[0] for c, v in out.items()}, "carry_along", "household-level variables (one value per household)"
    )
    return out


def _write(inp, src: np.ndarray, geo: dict, carried: dict):
    """The table with every record taking its household-level values from record ``src``,
    and the changed cells per column (counted per category, numeric carry-alongs aside)."""
    table, changes = inp.table, {}
    for name, (codes, labels) in {**geo, **carried}.items():
        new = codes[src]
        per_category = not (name in carried and inp.table.is_numeric(name))
        changes[name] = Change(new != codes, codes if per_category else None, labels)
        if changes[name].mask.any():
            table = inp.engine.with_codes(table, name, new, labels, categories=inp.table.categories(name))
    return table, changes


# ----------------------------------------------------------------------------------------------
# the record of what was done
# ----------------------------------------------------------------------------------------------
def _details(opts: _Options, hh: _Households, plan, risk_level: np.ndarray) -> tuple[dict, tuple]:
    """Aggregates of the swaps (counts only) and plain-language notes."""
    H, L = hh.n, len(opts.geography)
    swapped = plan.partner >= 0
    risky = risk_level < L
    by_level = np.bincount(plan.level[~plan.fill], minlength=L) * 2
    n_swapped = int(np.count_nonzero(swapped))
    no_donor = int(np.count_nonzero(risky & ~swapped))
    n_profiles = 1 if opts.similar is None else len(opts.similar)
    details = {
        "n_households": H,
        "risky_by_level": {g: int(c) for g, c in zip(opts.geography, np.bincount(risk_level, minlength=L + 1)[:L])},
        "swapped_by_level": {g: int(c) for g, c in zip(opts.geography, by_level)},
        "swapped_random_fill": int(np.count_nonzero(plan.fill)) * 2,
        "n_swapped_households": n_swapped,
        "n_swapped_records": int(hh.size[swapped].sum()),
        "target_swap_rate": 2 * plan.target_pairs / H if H else 0.0,
        "swap_rate_reached": n_swapped / H if H else 0.0,
        "n_risky_without_donor": no_donor,
        "n_fill_without_donor": int(np.count_nonzero(plan.failed & ~risky)),
        "pairs_by_profile": {str(p + 1): int(c) for p, c in enumerate(np.bincount(plan.profile, minlength=n_profiles))},
    }
    notes = []
    if no_donor:
        notes.append(f"{no_donor:,} risky households found no donor; they keep their geography")
    if n_swapped < 2 * plan.target_pairs:
        notes.append(
            f"the swap rate reached ({details['swap_rate_reached']:.4f}) is below the target "
            f"({details['target_swap_rate']:.4f}): too few households with a donor"
        )
    return details, tuple(notes)
