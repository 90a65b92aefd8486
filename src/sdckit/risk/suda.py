"""SUDA: special uniques, minimal sample uniques, SUDA scores and DIS-SUDA.

Steps of :func:`suda`: :func:`_validate_suda` (every argument checked, the keys encoded) ->
:class:`SudaInput`; :func:`_msu_scores` (pattern table, MSU search, scores and DIS-SUDA per
record); :func:`_key_contributions` (the share of the total score of every key variable and
category). The result class is in :mod:`sdckit.results.suda`; labels are read only through
:mod:`sdckit.risk._suda_access`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._assessed import Assessed, Headline
from .._core.suda import SCORE_METHODS, dis_probability, dis_suda, msu_search, product_scores, score_weights
from .._declare import Param, declare
from .._deprecation import renamed_parameters
from .._errors import SdcError, warn
from .._prepare import Prepared, prepare
from .._progress import step
from .._validation import check_rule
from ..results.suda import MSU, SudaResult
from ..scenario import accepts_scenario
from ._suda_access import label_values
from .frequencies import records_fields

__all__ = ["MSU", "SudaResult", "suda"]

_FRACTION_WARN = 0.10  # warn when the weights imply a fraction that differs by more than 10 %
_KEEP_DEFAULT = 1 << 23  # MSUs kept for explanation by default (8 bytes each)


@accepts_scenario
@renamed_parameters(positional=("max_size", "dis_fraction", "original_scores"))
@declare(
    "measure",
    Param("keys"),
    Param("max_size", "int"),
    Param("dis_fraction", "any"),
    Param("original_scores", "bool"),
    Param(
        "method",
        "choice",
        "The score variant (default: Elliot's, or IHSN's with original_scores=False)",
        choices=SCORE_METHODS,
    ),
    Param("missing"),
    Param("weight"),
    Param("allow_degenerate_keys"),
    Param("keep_msus", "bool"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys",),
        headlines=(
            Headline(
                "n_with_msu", "records with a minimal sample unique", "lower", "n_with_msu", label="records with an MSU"
            ),
        ),
        order=50,
        targets=("max_suda",),
        part="suda",
        step=True,
        option="suda",
    ),
)
def suda(
    data,
    keys,
    *,
    max_size: int | None = None,
    dis_fraction: float | str = 0.01,
    original_scores: bool = True,
    method: str | None = None,
    missing=None,
    weight: str | None = None,
    allow_degenerate_keys: bool = False,
    keep_msus: bool | None = None,
    engine=None,
) -> SudaResult:
    r"""SUDA scores, DIS-SUDA and key-variable contributions from minimal sample uniques.

    A *minimal sample unique* (MSU) of record i is a set of its key values that no other record
    shares while every smaller part of it is shared. Record i's SUDA score sums a weight over
    its MSUs, larger for smaller MSUs (ATT = number of keys, M = ``max_size``):

    .. math::

        \mathrm{SUDA}_i = \sum_{S \in \mathrm{MSU}(i)} w(|S|), \qquad
        w(s) = \prod_{k=s}^{\min(M, ATT-1)} (ATT - k) \;\; \text{(Elliot)}, \qquad
        w(s) = \frac{2^{ATT-s} - 1}{\binom{ATT}{s}} \;\; \text{(IHSN)}

    Templ's form (``method="templ"``) divides Elliot's weight by ATT!,
    s_k = (1/ATT!) \prod_{i=k}^{\min(M, ATT-1)} (ATT - i), and sums over the MSUs like the others;
    ``method="templ_product"`` multiplies the s_k of a record's MSUs instead, as the handbook's
    text reads (0 without an MSU). A product of weights below 1 falls as MSUs are added, so it
    ranks a record with more MSUs *lower*: it is there to reproduce that text, not to rank
    records (with many keys and MSUs the product can underflow to 0).

    DIS-SUDA spreads the expected E = 2 n_2 (1 - pi)/pi false population candidates of the
    sample uniques over the records inversely to SUDA^Q, Q = 1 + (8-ATT)/20:
    DIS_i = 1 / (1 + E SUDA_i^{-Q} / \sum_j SUDA_j^{-Q}).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables (labels, never coerced to numbers).
    max_size : int, optional
        Largest MSU size searched and scored (default: all keys, as sdcMicro does). Elliot's
        SUDA program uses ``max_size = len(keys) - 1`` (full-size MSUs then score 0).
    dis_fraction : float in (0, 1] or ``"weights"``, default 0.01
        Sampling fraction pi for DIS (sdcMicro ``DisFraction``). ``"weights"`` uses
        n / sum(weight) (needs ``weight``).
    original_scores : bool, default True
        Elliot's weights (sdcMicro's default); False gives the IHSN weights of sdcMicro before
        5.0.3.
    method : {"elliot", "ihsn", "templ", "templ_product"}, optional
        The score variant by name: Elliot's weights, the IHSN weights, Templ's normalised
        weights summed over the MSUs, or their product over the MSUs. Default: ``"elliot"``, or
        ``"ihsn"`` with ``original_scores=False`` (any other name with ``original_scores=False``
        is an error). DIS-SUDA depends only on the relative scores, so ``"elliot"`` and
        ``"templ"`` give the same DIS-SUDA; the contributions of ``"templ_product"`` are those
        of ``"templ"`` (a product has no additive parts).
    missing : value or list of values, optional
        Extra values to treat as missing (e.g. ``-999``). A missing value never forms part of
        an MSU; for the full-key duplicate check it equals another missing value.
    weight : str, optional
        Sampling weight column. Not used by the scores; gives ``dis_fraction="weights"``, and a
        warning when the weights imply a fraction far from ``dis_fraction``.
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category (they never
        form an MSU but count in ATT).
    keep_msus : bool, optional
        Keep every MSU (8 bytes each) so that :meth:`SudaResult.msus` answers at once
        (True), or recompute a record's MSUs on request (False). Default: keep them when
        there are at most 2^23 (64 MiB), recompute otherwise.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`frequencies`). SUDA depends on the records
        only through the distinct key patterns and their counts: DuckDB or Spark compute those,
        and the MSU search runs on them in memory.

    Returns
    -------
    SudaResult
        ``score``, ``dis_score``, ``contributions`` per record, ``share_contributions``,
        ``share_level_contributions``, ``msus(i)`` / ``explain(i)``.

    Notes
    -----
    Exact search without enumerating all 2^m variable subsets per record: a level-wise search
    with SUDA2's pruning on the distinct key patterns (``sdckit._core.suda``). Deliberate
    differences from sdcMicro's ``suda2``: DIS-SUDA in double precision (sdcMicro: float32,
    about 1e-7 relative) and never NaN (sdcMicro's hash miscount of sample uniques); labels
    are not truncated to integers; ATT is the number of keys given (sdcMicro pads one or two
    keys with constant dummy columns, ATT = 3); ``dis_fraction = 0`` is an error (sdcMicro
    uses 0.5).

    Everything after ``keys`` is keyword-only; ``max_size``, ``dis_fraction`` and
    ``original_scores`` given by position still work, with a DeprecationWarning.

    References
    ----------
    Elliot, Manning, Mayes, Gurd & Bane (2005) SUDA: a program for detecting special uniques;
    Manning, Haglin & Keane (2008) A recursive search algorithm for statistical disclosure
    assessment, Data Min Knowl Disc 16:165-196; Skinner & Elliot (2002) A measure of disclosure
    risk for microdata, JRSS B 64:855-867; sdcMicro ``suda2``.
    """
    inp = _validate_suda(
        data,
        keys,
        max_size=max_size,
        dis_fraction=dis_fraction,
        original_scores=original_scores,
        method=method,
        missing=missing,
        weight=weight,
        allow_degenerate_keys=allow_degenerate_keys,
        keep_msus=keep_msus,
        engine=engine,
    )
    return _suda_from_input(inp)


# ----------------------------------------------------------------------------------------------
# 1. validated input
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SudaInput:
    """The arguments of :func:`suda`, checked, and the encoded keys.

    ``codes`` (n x m, -1 = missing), ``labels`` / ``observed`` per key as encoded by the engine;
    ``max_size`` in 1..m, ``dis_fraction`` a number (``"weights"`` resolved), ``keep`` True,
    False or the largest number of MSUs kept.
    """

    names: tuple
    codes: np.ndarray
    cards: tuple
    labels: tuple
    observed: tuple
    max_size: int
    dis_fraction: float
    original_scores: bool
    method: str
    keep: bool | int
    backend: str
    row_index: Any
    prep: Prepared


def _validate_suda(
    data,
    keys,
    *,
    max_size,
    dis_fraction,
    original_scores,
    missing,
    weight,
    allow_degenerate_keys,
    keep_msus,
    method=None,
    engine=None,
) -> SudaInput:
    """Check what the declaration cannot (``dis_fraction``, ``method`` against ``original_scores``,
    ``max_size`` against the number of keys) and encode the keys (the first problem raises)."""
    frac = (
        dis_fraction
        if isinstance(dis_fraction, str) and dis_fraction == "weights"
        else check_rule("dis_fraction", dis_fraction)
    )
    orig = bool(original_scores)  # original_scores, keep_msus, method: checked by the declaration
    meth = _score_method(method, orig)
    keep = _KEEP_DEFAULT if keep_msus is None else bool(keep_msus)
    if frac == "weights" and weight is None:
        raise SdcError("dis_fraction: 'weights' needs a weight column; pass weight= or a number in (0, 1]")
    prep = prepare(
        data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine
    )
    enc = prep.keys
    n, m = prep.n, enc.codes.shape[1]
    msize = m if max_size is None else check_rule("max_size", max_size, high=m)
    if prep.weights is not None:
        implied = n / float(prep.weights.sum())
        if frac == "weights":
            frac = min(implied, 1.0)
        elif abs(implied - cast(float, frac)) > _FRACTION_WARN * cast(float, frac):  # a number here
            warn(
                f"dis_fraction: the weights imply a sampling fraction of {implied:.4g} (n / sum of weights) "
                f"but {frac:g} is used; pass dis_fraction='weights' to use it"
            )
    return SudaInput(
        enc.names,
        enc.codes,
        tuple(enc.cardinalities),
        tuple(enc.labels),
        tuple(enc.observed or ()),
        msize,
        float(frac),
        meth != "ihsn",
        meth,
        keep,
        prep.table.backend,
        prep.table.index,
        prep,
    )


def _score_method(method, original_scores: bool) -> str:
    """The score variant: ``method`` by name, else the one ``original_scores`` names."""
    if method is None:
        return "elliot" if original_scores else "ihsn"
    if not original_scores and method != "ihsn":
        raise SdcError(
            f"original_scores: False (the IHSN weights) contradicts method={method!r}; expected one of them "
            "(method='ihsn' is original_scores=False)"
        )
    return method


# ----------------------------------------------------------------------------------------------
# 2. scores and DIS-SUDA, 3. contributions
# ----------------------------------------------------------------------------------------------
def _suda_from_input(inp: SudaInput) -> SudaResult:
    m = len(inp.names)
    engine = inp.prep.mem
    ids, patterns, counts, _ = engine.patterns(inp.codes, None, inp.cards, multiplicity=inp.prep.counts)
    w = score_weights(m, inp.max_size, inp.method)
    found = msu_search(patterns, counts, inp.max_size, w, collect=inp.keep)
    score = None
    if inp.method == "templ_product":  # the product of the weights: exp of the sum of their logs
        with np.errstate(divide="ignore"):
            log_w = np.where(w > 0, np.log(np.where(w > 0, w, 1.0)), 0.0)
        logs = msu_search(patterns, counts, inp.max_size, log_w)
        score = product_scores(logs.score, logs.msu_count)
    n1 = int(np.count_nonzero(counts == 1))
    n2 = int(np.count_nonzero(counts == 2))
    per_record = _msu_scores(engine, inp, ids, found, counts, n2, score)
    shares, levels = _key_contributions(inp, patterns, found)
    return SudaResult(
        keys=inp.names,
        **per_record,
        share_contributions=shares,
        share_level_contributions=levels,
        msus_by_size={s: int(found.by_size[s]) for s in range(1, inp.max_size + 1)},
        n=inp.prep.n,
        att=m,
        max_size=inp.max_size,
        original_scores=inp.original_scores,
        method=inp.method,
        size_weights={s: float(w[s]) for s in range(1, inp.max_size + 1)},
        dis_fraction=inp.dis_fraction,
        dis=dis_probability(n1, n2, inp.dis_fraction),
        n_sample_uniques=n1,
        n_patterns_fk2=n2,
        _pattern_ids=ids,
        _patterns=patterns,
        _counts=counts,
        _labels=inp.labels,
        _subsets=found.subsets,
        _msu_pattern=found.msu_pattern,
        _msu_subset=found.msu_subset,
        backend=inp.backend,
        row_index=inp.row_index,
        **records_fields(inp.prep),
    )


def _msu_scores(engine, inp: SudaInput, ids, found, counts, n2: int, score=None) -> dict:
    """Per record: score, DIS-SUDA, MSU count, smallest MSU size, sample uniqueness and the
    per-variable contributions (patterns with a count of 2 or more score 0). ``score``: the
    pattern scores when they are not the sums of the search (a product of the weights); the
    contributions stay those of the sums."""
    step("SUDA scores and DIS-SUDA")
    m = len(inp.names)
    sums = found.score
    with np.errstate(invalid="ignore", divide="ignore"):
        share_p = np.where(sums[:, None] > 0, found.contributions / sums[:, None], 0.0)
    score_p = sums if score is None else score
    dis_p = dis_suda(score_p, n2, inp.dis_fraction, m)  # only count-1 patterns score, one record each
    per_record = engine.gather(
        ids,
        score_p,
        dis_p,
        found.msu_count,
        found.min_size.astype(np.int64),
        counts == 1,
        *[np.ascontiguousarray(share_p[:, j]) for j in range(m)],
    )
    score, dis_score, msu_count, min_size, uniq = per_record[:5]
    n = ids.shape[0]
    return {
        "score": score,
        "dis_score": dis_score,
        "contributions": np.column_stack(per_record[5:]) if m else np.zeros((n, 0)),
        "msu_count": msu_count.astype(np.int64, copy=False),
        "min_msu_size": min_size.astype(np.int64, copy=False),
        "sample_unique": uniq.astype(bool, copy=False),
    }


def _key_contributions(inp: SudaInput, patterns, found) -> tuple[dict, dict]:
    """sdcMicro's attribute and level contributions, as shares: per variable its summed MSU
    weight over the total score, per category its part of the variable's (NaN when 0)."""
    step("variable contributions")
    raw = found.contributions  # = share * score, per pattern
    total = float(found.score.sum())
    shares = {}
    levels = {}
    for j, name in enumerate(inp.names):
        col_total = float(raw[:, j].sum())
        shares[name] = col_total / total if total > 0 else float("nan")
        obs = patterns[:, j] >= 0
        sums = np.bincount(patterns[obs, j], weights=raw[obs, j], minlength=inp.cards[j])
        observed = inp.observed[j] if inp.observed and inp.observed[j] is not None else range(inp.cards[j])
        labels = label_values(inp.labels[j])
        levels[name] = {labels[c]: (float(sums[c]) / col_total if col_total > 0 else float("nan")) for c in observed}
    return shares, levels
