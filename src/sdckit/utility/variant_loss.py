"""``variant_loss``: the loss of every change a protected file made, whatever the variable's
type became, on a scale without units.

The two files are paired by row position. Each variable gets a per-record distance in [0, 1]
(the kernels of :mod:`sdckit._core.change_loss`); the data are read through the data-access
helpers of :mod:`._access`; the result class is in :mod:`sdckit.results.variant_loss`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._assessed import Assessed, Headline
from .._core import change_loss as CL
from .._core import infoloss as K
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list, check_scales, raise_problems
from ..engines import in_memory_engine, local_records
from ..results.variant_loss import VariantLossResult
from ..risk._pram import is_stratified, strata_reader
from ..scenario import accepts_scenario
from . import _access as access
from .information_loss import _pram_matrix

__all__ = ["VARIANT_SCALES", "VariantLossResult", "variant_loss"]

#: the scales of :func:`variant_loss` (``"categorical"`` is an alias of ``"nominal"``,
#: ``"continuous"`` of ``"numeric"``)
VARIANT_SCALES = ("nominal", "numeric")
_ALIASES = {"categorical": "nominal", "continuous": "numeric"}
#: the column kinds of :func:`._access.column_kinds` that hold numbers / labels
_NUMBERS = ("int", "float")
_LABELS = ("text", "bool")


@accepts_scenario
@declare(
    "measure",
    Param("variables", "columns", role="numeric_keys"),
    Param("scales", "any", role="scales"),
    Param("missing"),
    Param("pram", "any"),
    Param("records", "bool"),
    inputs=("original", "protected"),
    assessed=Assessed(
        needs=(),
        headlines=(Headline("loss", "mean lambda_j of the loss variables, in [0, 1]", "lower", "loss"),),
        order=130,
        part="loss",
        variants_only=True,
    ),
)
def variant_loss(
    original,
    protected,
    variables,
    *,
    scales=None,
    missing=None,
    pram=None,
    records: bool = False,
    engine=None,
) -> VariantLossResult:
    r"""The loss of every change of ``protected`` against ``original``, without units.

    Rows are paired by position. For each variable j a per-record distance d_ij in [0, 1],
    whatever the variable's type became (numbers recoded to intervals, categories merged,
    values perturbed, cells suppressed), and

    .. math:: \lambda_j = \frac{1}{n}\sum_{i=1}^n d_{ij}, \qquad
              \text{loss} = \frac{1}{m}\sum_{j=1}^m \lambda_j .

    * nominal: :math:`d_i = 1 - \hat P(X = x_i \mid X' = x'_i)`, the share of the records
      released with the same value :math:`x'_i` whose original value is not :math:`x_i`
      (empirical joint of the original and released values over the records with a released
      value). An unchanged variable or a pure relabelling costs 0; merging categories a and b
      costs a record of a :math:`1 - f_a/(f_a + f_b)`, the chance that a value drawn from its
      group is not its own; a swapped or perturbed value costs about 1. A suppressed cell
      costs 1, a value missing in both files 0, an original missing value released as a value 1.
    * numeric, released as numbers (noise, microaggregation, top coding, swapping):
      :math:`d_i = \frac{2}{\pi}\arctan(|x_i - x'_i| / S_j)`; released as labels (intervals,
      groups): :math:`d_i = \frac{2}{\pi}\arctan(|x_i - m(x'_i)| / S_j)` with m(g) the mean
      original value of the records released as g (what a user imputes from the interval).
      :math:`S_j` is the standard deviation (n - 1) of the original's observed values (S_j = 0:
      0 for an unchanged value, else 1), so the loss does not depend on the unit. A suppressed
      cell takes Mlodak's rule: x' is the original maximum when x is at most the original
      median, else the minimum.
    * PRAM (``pram=``): the expected change under the published matrix,
      :math:`d_i = 1 - P[x_i, x_i]`, which does not depend on the one random draw; the entropy
      loss EBIL (natural log) is reported too.

    Parameters
    ----------
    original, protected : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The same records in the same order (row i of ``protected`` is the protected record i).
    variables : str or list of str
        Variables to compare; present in both files.
    scales : dict or str, optional
        ``"nominal"`` (alias ``"categorical"``) or ``"numeric"`` (alias ``"continuous"``) per
        variable, or one for all. Undeclared: text, boolean and categorical columns are nominal,
        floating-point columns numeric; **integer columns must be declared** (codes or counts).
        The scale is that of the original; the released column may hold another type.
    missing : value or list of values, optional
        Codes to treat as missing (e.g. ``-999``) in addition to null / NaN, in both files.
    pram : dict variable -> transition matrix, optional
        The published PRAM matrices P[i, j] = P(X' = j | X = i) of nominal variables, in the
        forms :func:`sdckit.information_loss` accepts: a pandas DataFrame, a dict of dicts
        ``{from: {to: p}}``, a pair ``(matrix, categories)`` or a square array in the sorted
        category order. Records whose original category is outside the matrix fall back to the
        empirical nominal rule (a note says how many).
    records : bool, default False
        Keep the (n, m) per-record distances and their per-record mean (``to_frame()``).
    engine : str or Engine, optional
        The engine that reads the data; the measure needs every record in memory (DuckDB and
        Spark are refused with a message that says so).

    Returns
    -------
    VariantLossResult

    Raises
    ------
    SdcError
        Different numbers of records, a variable absent from a file (:class:`MissingColumnError`),
        an integer variable without a declared scale, an unknown scale, a numeric scale on a
        text column, infinite values, a PRAM matrix for a numeric variable or a bad matrix.

    Notes
    -----
    Cost: O(n log n) per variable (the joint frequencies of original and released values).
    Sampling weights are not used.

    References
    ----------
    Mlodak (2020) for the bounded arctan distance and the suppressed-value rule; Gouweleeuw,
    Kooiman, Willenborg & de Wolf (1998) for PRAM; Willenborg & de Waal (2001) for EBIL.
    """
    eng = in_memory_engine(engine, "variant_loss", original)
    inp = _validate(original, protected, variables, scales, missing, pram, records, eng)
    notes: list[str] = []
    d_cols, changes, ebil = [], {}, {}
    for v in inp.names:
        d, change, e = _variable_loss(inp, v, eng, notes)
        d_cols.append(d)
        changes[v] = change
        if e is not None:
            ebil[v] = e
    return _result(inp, d_cols, changes, ebil, notes)


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Input:
    names: tuple
    scales: dict
    kinds_o: dict
    kinds_p: dict
    t_o: object
    t_p: object
    missing: tuple | None
    pram: dict
    records: bool
    n: int
    backend: str


def _validate(original, protected, variables, scales, missing, pram, records, engine) -> _Input:
    """Check the variables, the scales and both files once (the declaration checks each option)."""
    names = as_name_list(variables, "variables")
    miss = as_missing_codes(missing)
    records = bool(records)
    t_o, t_p = access.read_pair(original, protected, engine)
    absent = [
        m for m in (access.absent_columns(t_o, names, "original"), access.absent_columns(t_p, names, "protected")) if m
    ]
    problems = list(absent)
    if t_o.n != t_p.n:
        problems.append(
            f"protected: the file has {t_p.n} records and the original {t_o.n}; expected the same "
            "records in the same order (rows are paired by position)"
        )
    elif t_o.n == 0:
        problems.append("original: the file has no records; expected at least one")
    declared, found = check_scales(_normalised(scales), names, "scales", allowed=VARIANT_SCALES)
    problems += found
    raise_problems(problems, missing_column=bool(absent))
    kinds_o, kinds_p = access.column_kinds(t_o, names), access.column_kinds(t_p, names)
    scale = {v: _scale_of(v, declared.get(v), kinds_o[v], kinds_p[v], t_o, t_p, problems) for v in names}
    raise_problems(problems)
    return _Input(
        names=tuple(names),
        scales=scale,
        kinds_o=kinds_o,
        kinds_p=kinds_p,
        t_o=t_o,
        t_p=t_p,
        missing=miss,
        pram=_pram_specs(pram, names, scale),
        records=records,
        n=t_o.n,
        backend=t_o.backend,
    )


def _normalised(scales):
    """Scale names in lower case, with the aliases resolved (other values are left for the
    check to refuse)."""

    def one(s):
        return _ALIASES.get(s.strip().lower(), s.strip().lower()) if isinstance(s, str) else s

    if isinstance(scales, str):
        return one(scales)
    if isinstance(scales, dict):
        return {k: one(s) for k, s in scales.items()}
    return scales


def _scale_of(v, declared, ko, kp, t_o, t_p, problems) -> str:
    """The scale of variable v: declared, else from the original's type."""
    for label, k, t in (("original", ko, t_o), ("protected", kp, t_p)):
        if k == "other":
            problems.append(
                f"variables: column {v} of the {label} file has type {access.dtype_name(t, v)}; "
                "expected numbers, text, a categorical or booleans"
            )
    if "other" in (ko, kp):
        return "nominal"
    if declared is None:
        if ko in _LABELS:
            return "nominal"
        if ko == "float":
            return "numeric"
        why = "holds integers" if ko == "int" else "is missing everywhere in the original"
        problems.append(
            f"scales: variable {v} {why} and has no declared scale; declare it as 'nominal' or 'numeric' "
            "(integers may be codes or counts)"
        )
        return "nominal"
    if declared == "numeric" and ko in _LABELS:
        problems.append(
            f"scales: variable {v} is declared numeric but the original holds {access.dtype_name(t_o, v)}; "
            "expected numbers in the original (the released file may hold labels)"
        )
    return declared


def _pram_specs(pram, names, scale) -> dict:
    """``pram`` -> {variable: matrix spec}, nominal variables among ``names`` only."""
    if pram is None:
        return {}
    if not isinstance(pram, dict):
        raise SdcError(f"pram: got {type(pram).__name__}; expected a dict variable -> transition matrix")
    out = {}
    for v, spec in pram.items():
        if v not in names:
            raise SdcError(f"pram: {v} is not among the variables; expected one of {', '.join(names)}")
        if scale[v] != "nominal":
            raise SdcError(f"pram: {v} is numeric; a PRAM matrix applies to a nominal variable")
        out[v] = spec
    return out


# ----------------------------------------------------------------------------------------------
# one variable
# ----------------------------------------------------------------------------------------------
def _variable_loss(inp: _Input, v: str, eng, notes: list) -> tuple[np.ndarray, dict, float | None]:
    """(per-record distances, change summary, EBIL or None) of variable v."""
    if inp.scales[v] == "numeric" and inp.kinds_p[v] not in _LABELS:
        return (*_numeric(inp, v), None)
    co, cp, labels = access.encode_pair(v, inp.t_o, inp.t_p, inp.missing, eng)
    if inp.scales[v] == "numeric":
        x = _floats(inp.t_o, v, inp.missing, "original")
        d = CL.recoded_numeric_change(x, cp)
        return d, _change(inp, v, d, co, cp, "recoded"), None
    ebil = None
    if v in inp.pram and is_stratified(inp.pram[v]):
        d, ebil = _stratified_pram(v, inp.pram[v], co, cp, labels, notes, strata_reader(eng, inp.t_o))
        kind = "pram"
    elif v in inp.pram:
        d, ebil = _pram(v, inp.pram[v], co, cp, labels, notes)
        kind = "pram"
    else:
        d = CL.nominal_change(co, cp)
        kind = _nominal_kind(inp, v, co, cp)
    return d, _change(inp, v, d, co, cp, kind), ebil


def _floats(table, v, missing, label) -> np.ndarray:
    x = access.float_matrix(table, [v], missing)[:, 0]
    if np.isinf(x).any():
        raise SdcError(
            f"variables: column {v} of the {label} file holds {int(np.isinf(x).sum())} infinite value(s); "
            "expected finite numbers (a missing value as null or NaN)"
        )
    return x


def _numeric(inp: _Input, v: str) -> tuple[np.ndarray, dict]:
    """Numbers released as numbers."""
    x = _floats(inp.t_o, v, inp.missing, "original")
    y = _floats(inp.t_p, v, inp.missing, "protected")
    d = CL.numeric_change(x, y)
    supp = ~np.isnan(x) & np.isnan(y)
    changed = ~np.isnan(y) & (x != y)
    kind = "perturbed" if changed.any() else ""
    return d, _summary(inp.n, d, supp, changed, kind, None, None)


def _nominal_kind(inp: _Input, v: str, co, cp) -> str:
    """ "recoded" (the type changed, or a function of the original values), "perturbed"
    (other changes) or "" (no change among the released values)."""
    ko, kp = inp.kinds_o[v], inp.kinds_p[v]
    if "null" not in (ko, kp) and (ko in _LABELS) != (kp in _LABELS):
        return "recoded"
    if not np.any((cp >= 0) & (co != cp)):
        return ""
    return "recoded" if CL.is_function(co, cp) else "perturbed"


def _change(inp: _Input, v, d, co, cp, kind) -> dict:
    supp = (co >= 0) & (cp < 0)
    changed = (cp >= 0) & (co != cp)
    return _summary(inp.n, d, supp, changed, kind, CL.n_categories(co), CL.n_categories(cp))


def _summary(n, d, supp, changed, kind, before, after) -> dict:
    lam = float(d.sum()) / n
    loss_supp = float(d[supp].sum()) / n
    parts = [kind] if kind else []
    n_supp = int(np.count_nonzero(supp))
    if n_supp:
        parts.append("suppressed")
    return {
        "kind": "+".join(parts) or "unchanged",
        "n_suppressed": n_supp,
        "n_changed": int(np.count_nonzero(changed)),
        "n_categories_before": before,
        "n_categories_after": after,
        "loss": lam,
        "loss_suppressed": loss_supp,
        "loss_changed": max(lam - loss_supp, 0.0),
    }


def _stratified_pram(v, spec, co, cp, labels, notes, reader) -> tuple[np.ndarray, float]:
    """:func:`_pram` within each stratum of a per-stratum form (``{"strata": columns,
    "matrices": {stratum label: matrix}}``): each record's expected change under its stratum's
    matrix and distribution; EBIL summed over the strata."""
    cols = [spec["strata"]] if isinstance(spec["strata"], str) else list(spec["strata"])
    ids, slabels = reader(cols)
    forms = {str(k): f for k, f in spec["matrices"].items()}
    d = CL.nominal_change(co, cp).astype(float)
    ebil = 0.0
    for s_, lab in enumerate(slabels):
        rows = np.flatnonzero(ids == s_)
        if str(lab) not in forms:
            if (co[rows] >= 0).any():
                raise SdcError(f"pram: {v}: a stratum of the data has no matrix; expected one for every stratum")
            continue
        d[rows], e = _pram(v, forms[str(lab)], co[rows], cp[rows], labels, notes)
        ebil += e
    return d, ebil


def _pram(v, spec, co, cp, labels, notes) -> tuple[np.ndarray, float]:
    """Expected change under the matrix (empirical rule outside it) and EBIL."""
    P, cats = _pram_matrix(v, spec, labels, None)
    pos: dict = {}
    for i, c in enumerate(cats):
        pos.setdefault(c, i)
        pos.setdefault(str(c), i)
    idx = np.array([pos.get(lab, pos.get(str(lab), -1)) for lab in labels] + [-1], dtype=np.int64)
    io, ip = idx[co], idx[cp]  # code -1 (missing) lands on the appended -1
    d = CL.pram_change(io, cp, P)
    outside = (co >= 0) & (io < 0)
    if outside.any():
        d[outside] = CL.nominal_change(co, cp)[outside]
        notes.append(
            f"{v}: {int(outside.sum())} record(s) have an original category outside the PRAM matrix; "
            "their loss is the empirical one, 1 - P(original | released)"
        )
    p = np.bincount(io[io >= 0], minlength=len(cats)).astype(float)
    counts = np.bincount(ip[ip >= 0], minlength=len(cats)).astype(float)
    ebil, _, _ = K.entropy_loss(P, p, counts)
    return d, ebil


# ----------------------------------------------------------------------------------------------
# result
# ----------------------------------------------------------------------------------------------
def _result(inp: _Input, d_cols, changes, ebil, notes) -> VariantLossResult:
    names = inp.names
    lam = {v: changes[v].pop("loss") for v in names}
    total = sum(lam.values())
    dist = np.column_stack(d_cols) if inp.records else None
    return VariantLossResult(
        variables=names,
        scales=dict(inp.scales),
        n=inp.n,
        loss=float(np.mean([lam[v] for v in names])),
        loss_by_variable=lam,
        share_by_variable={v: (lam[v] / total if total > 0 else 0.0) for v in names},
        suppressed_by_variable={v: changes[v]["n_suppressed"] for v in names},
        change_by_variable=changes,
        ebil=ebil,
        record_loss=None if dist is None else dist.mean(axis=1),
        distances=dist,
        notes=tuple(notes),
        backend=inp.backend,
        records=local_records(),
    )
