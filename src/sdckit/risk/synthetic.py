"""``synthetic_risk``: the disclosure risk of a synthetic file against the original it was
generated from: how close the two distributions of the keys are, how close synthetic records
come to original records, and how well three attacks succeed beyond a control baseline.

The files are read by :mod:`._synthetic_data`; the arithmetic is in
:mod:`sdckit._core.synthetic`; the result class is in :mod:`sdckit.results.synthetic`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._assessed import Assessed, Headline
from .._core import synthetic as K
from .._declare import Options, Param, declare, options
from .._errors import SdcError, warn
from .._validation import as_name_list, check_column, raise_problems
from ..engines import get_engine, local_records
from ..results.synthetic import SyntheticRiskResult
from ..scenario import accepts_scenario
from ._synthetic_data import Files, read_files

__all__ = ["SyntheticAttacks", "SyntheticDecision", "SyntheticRiskResult", "SyntheticSimilarity", "synthetic_risk"]

_ORIGINAL, _SYNTHETIC, _CONTROL = 0, 1, 2


@options(
    "similarity",
    Param("order", "int"),
    Param("top", "int"),
    Param("closeness_sample", "int"),
    Param("records", "bool"),
)
@dataclass(frozen=True)
class SyntheticSimilarity(Options):
    """How :func:`synthetic_risk` compares the two files (the distribution distances and the
    closeness of records): the ``similarity=`` record (or a mapping of its fields).

    Parameters
    ----------
    order : int, default 2
        The largest number of keys in a combination whose distribution distances are reported.
    top : int, default 10
        Number of cells of the joint key table listed as contributing most to TV.
    closeness_sample : int, default 5000
        Synthetic and control records (a random sample of each) whose nearest original record
        is searched; exact copies are counted over all records.
    records : bool, default False
        Search the nearest original record of every synthetic record and keep its DCR and
        whether it is an exact copy (``to_frame()``, one row per synthetic record).
    """

    order: int = 2
    top: int = 10
    closeness_sample: int = 5000
    records: bool = False


@options(
    "attacks",
    Param("split", "column_sets"),
    Param("n_attacks", "int"),
    Param("n_cols", "int"),
    Param("n_neighbors", "int"),
)
@dataclass(frozen=True)
class SyntheticAttacks(Options):
    """How :func:`synthetic_risk` runs the attacks (singling out, linkability, inference): the
    ``attacks=`` record (or a mapping of its fields).

    Parameters
    ----------
    split : list of two lists of column names, optional
        The two parts of the keys an intruder holds in two different files (linkability). Default:
        the first half and the second half of ``keys + variables``.
    n_attacks : int, default 500
        Number of attacks (queries or targets) per attack type.
    n_cols : int, default 3
        Number of columns in a singling-out query.
    n_neighbors : int, default 1
        Nearest synthetic records compared in the linkability attack.
    """

    split: list | None = None
    n_attacks: int = 500
    n_cols: int = 3
    n_neighbors: int = 1


@options("decision", Param("confidence", "number"), Param("significance", "number"))
@dataclass(frozen=True)
class SyntheticDecision(Options):
    """How :func:`synthetic_risk` compares the original records with the control records (the
    intervals and the leak decision): the ``decision=`` record (or a mapping of its fields).

    Parameters
    ----------
    confidence : float, default 0.95
        Level of the confidence intervals.
    significance : float, default 0.05
        The chance, at most, that the leak decision flags a synthetic file made without the
        original records (all its tests together).
    """

    confidence: float = 0.95
    significance: float = 0.05


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", role="numeric_keys"),
    Param("sensitive"),
    Param("missing"),
    Param("seed"),
    inputs=("original", "synthetic", "control"),
    random=True,
    grouped=(SyntheticSimilarity, SyntheticAttacks, SyntheticDecision),
    assessed=Assessed(
        needs=("keys",),
        headlines=(Headline("risk", "the largest attack risk beyond the control file", "lower", "risk"),),
        order=150,
        part="synthetic",
        variants_only=True,
        option="synthetic",
    ),
)
def synthetic_risk(
    original,
    synthetic,
    control=None,
    *,
    keys=None,
    variables=None,
    sensitive=None,
    similarity: SyntheticSimilarity | dict | None = None,
    attacks: SyntheticAttacks | dict | None = None,
    decision: SyntheticDecision | dict | None = None,
    missing=None,
    seed=None,
    engine=None,
    id=None,
) -> SyntheticRiskResult:
    r"""The disclosure risk of a synthetic file: distribution distances, record closeness and
    attacks with a control baseline.

    **Distributions** (Shlomo 2022). For the joint table of the keys and for every combination
    of up to ``order`` keys, with :math:`p_c` and :math:`q_c` the shares of cell c in the
    original and in the synthetic file: the total variation distance
    :math:`TV = \frac12 \sum_c |p_c - q_c|`, Hellinger's distance
    :math:`H = \sqrt{\frac12 \sum_c (\sqrt{p_c} - \sqrt{q_c})^2}` and the Kullback-Leibler
    divergence :math:`KL(P \| Q) = \sum_c \tilde p_c \log(\tilde p_c / \tilde q_c)` (shares with
    1/2 added to every cell's count, so that a cell missing from the synthetic file gives a
    finite value). A small distance means the synthetic file reproduces the original's
    distribution closely: good for utility, and a sign that rare combinations may be carried
    over. The cells of the joint table that contribute most to TV are listed.

    **Closeness** (Dandekar, Domingo-Ferrer and Sebé 2002). Each synthetic record is paired
    with its nearest original record under the mixed distance
    :math:`d(x, y) = \sum_{numeric} |x_j - y_j| / R_j + \sum_{categorical} [x_j \ne y_j]`
    (:math:`R_j` the range over the files) on the keys, ``variables`` and ``sensitive``; its
    distance to closest record (DCR) is compared with the DCR of the control records, which
    were not used to generate the synthetic file. Exact copies of original records are
    counted over all synthetic records and compared with the share of control records that
    equal an original record.

    **Attacks** (Giomi et al. 2023, as in anonymeter), each as the attack's success rate on
    the original records beyond its rate on the control records,
    :math:`R = (r_{ori} - r_{control}) / (1 - r_{control})`, with Wilson rates and the
    propagated error as a confidence interval (without a control file: the success rate):

    * singling out: ``n_attacks`` queries built from synthetic records (``n_cols`` random
      columns; a number above the column's median gives ``>=``, else ``<=``; a category
      ``==``) that match exactly one synthetic record; success when a query matches exactly
      one original record; the control count is carried to the original's size by
      anonymeter's fitted correction;
    * linkability: for ``n_attacks`` original records, the ``n_neighbors`` nearest
      synthetic records on each part of ``split``; success when the two sets share a record;
    * inference, for each ``sensitive`` variable: the nearest synthetic record on the other
      variables gives the guess; success when it equals the secret (a numeric secret, one of
      ``variables``: within 5 % of the guess).

    Each attack also has a random-guess baseline, reported beside it.

    **The leak decision** (``leak``). Each comparison with the control records is a one-sided
    test: Fisher's exact test for the exact copies, linkability and inference (each record's
    success depends on it and the synthetic file only), a permutation test of the original and
    control records for the two singling-out attacks. Holm's procedure with weights (the copies
    half, the attacks the other half) decides them together, so that a synthetic file made
    without the original records is flagged with a chance of at most ``significance``. A
    control file whose records are copies of original records beyond chance cannot be a
    baseline: an :class:`~sdckit.SdcWarning`, and ``leak`` is None (not decidable), as without
    a control file.

    Parameters
    ----------
    original : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The records the synthetic file was generated from.
    synthetic : table
        The synthetic file, with the same columns.
    control : table, optional
        Original records that were not used to generate the synthetic file (a holdout from
        the same population): the baseline of the closeness and of the attacks. A file, not a
        :class:`~sdckit.Scenario` (pass that as ``scenario=``).
    keys : str or list of str
        Categorical key variables.
    variables : str or list of str, optional
        Numeric key variables (used by closeness and the attacks, not by the distributions).
    sensitive : str or list of str, optional
        Secret variables of the inference attack (also compared by closeness and singling out).
    similarity : SyntheticSimilarity or dict, optional
        The combinations of keys compared and the cells listed, the records sampled for the
        closeness, and whether every synthetic record's nearest original is kept: see
        :class:`SyntheticSimilarity`.
    attacks : SyntheticAttacks or dict, optional
        The parts of the keys in the linkability attack, the number of attacks, the columns of
        a singling-out query and the neighbours compared: see :class:`SyntheticAttacks`.
    decision : SyntheticDecision or dict, optional
        The level of the intervals and the significance of the leak decision: see
        :class:`SyntheticDecision`.
    missing : value or list of values, optional
        Extra missing-value codes.
    seed : int, optional
        Seed of the random choices (samples, queries, targets, ties).
    engine : str or Engine, optional
        The engine that reads the data; the measure needs the records in memory.
    id : str, optional
        A column of the synthetic file that ``to_frame()`` puts first (its rows are the
        synthetic records).

    Returns
    -------
    SyntheticRiskResult

    Raises
    ------
    SdcError
        A column absent from a file (:class:`MissingColumnError`), a numeric variable holding
        text, an empty file, a bad ``split``, an out-of-range parameter, a Scenario given as a
        file.

    Warns
    -----
    SdcWarning
        The control file overlaps the original (the leak is not decided).

    Notes
    -----
    Cost: distributions O(n log n) per combination; closeness O(s n m) for s sampled records;
    the attacks O(n_attacks n m).

    References
    ----------
    Shlomo (2022) for the distribution distances; Dandekar, Domingo-Ferrer and Sebé (2002)
    for the nearest-record pairing; Giomi, Boenisch, Wehmeyer and Tasnádi (2023), "A Unified
    Framework for Quantifying Privacy Risk in Synthetic Data" (anonymeter), for the attacks;
    Cohen and Nissim (2020) for the singling-out model.
    """
    _check_files(original, synthetic, control)
    options = {**similarity.fields(), **attacks.fields(), **decision.fields()}  # type: ignore[union-attr]
    par = _parameters(keys, variables, sensitive, seed, options)
    files = [original, synthetic] + ([control] if control is not None else [])
    labels = ["original", "synthetic", "control"][: len(files)]
    data = read_files(files, labels, par["cat"], par["num"], missing, engine, "synthetic_risk")
    rng = np.random.default_rng(par["seed"])
    dist = distribution_part(data, par["keys"], par["order"], par["top"])
    close = closeness_part(data, par["closeness_sample"], par["records"], par["confidence"], rng,
                           par["permutation_rng"])  # fmt: skip
    attacks = attack_part(data, par, rng)
    decision = leak_decision(close, attacks, par["significance"])
    if decision["reason"] and close.get("control_overlap"):
        warn(decision["reason"])
    res = _result(data, par, dist, close, attacks, decision)
    if id is not None:
        name = str(check_column(id, "id", allow_none=False))
        table = get_engine(engine, synthetic).table(synthetic, "synthetic")
        table.require([name], "id")
        res = dataclasses.replace(res, row_ids=(name, table.values(name)))  # a new, complete result
    return res


# ----------------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------------
def _check_files(original, synthetic, control) -> None:
    """A Scenario given where a file is expected (by position, as ``control``) is named as
    such, before the roles are checked."""
    from ..scenario import Scenario

    for name, value in (("original", original), ("synthetic", synthetic), ("control", control)):
        if isinstance(value, Scenario):
            raise SdcError(f"{name}: got a Scenario; pass it as scenario=... (the third argument is the control file)")


def _parameters(keys, variables, sensitive, seed, options: dict) -> dict:
    """The parameters as the parts take them (``options``: the fields of the records)."""
    # checked by the declaration; taken as the toolkit's checks return them (int, float, bool)
    o = options
    par: dict[str, Any] = {"order": int(o["order"]), "top": int(o["top"]), "n_attacks": int(o["n_attacks"]),
           "n_cols": int(o["n_cols"]), "n_neighbors": int(o["n_neighbors"]),
           "closeness_sample": int(o["closeness_sample"]), "confidence": float(o["confidence"]),
           "significance": float(o["significance"]), "records": bool(o["records"]),
           "seed": None if seed is None else int(seed)}  # fmt: skip
    split = o["split"]
    problems: list[str] = []
    if keys is None:
        problems.append("keys: no key variables given; expected one or more column names")
        keys = []
    k = as_name_list(keys, "keys", allow_empty=True)
    v = as_name_list(variables, "variables", allow_empty=True) if variables is not None else []
    s = as_name_list(sensitive, "sensitive", allow_empty=True) if sensitive is not None else []
    if dup := sorted(set(k) & set(v)):
        problems.append(f"variables: {', '.join(dup)} also among the keys; expected each column in one role")
    attack_cols = k + v
    parts = _split(split, attack_cols, problems)
    raise_problems(problems)
    cat = k + [c for c in s if c not in v and c not in k]
    num = v
    # the permutation tests draw from their own stream: the attacks' draws do not depend on them
    prng = np.random.default_rng(np.random.SeedSequence(par["seed"], spawn_key=(1,)))
    return {**par, "keys": k, "variables": v, "sensitive": s, "split": parts, "cat": cat, "num": num,
            "attack_cols": attack_cols, "permutation_rng": prng}  # fmt: skip


def _split(split, attack_cols, problems) -> tuple | None:
    """The two parts of the linkability attack: given, or the halves of keys + variables (None
    with fewer than two columns)."""
    if split is None:
        if len(attack_cols) < 2:
            return None
        h = len(attack_cols) // 2
        return (tuple(attack_cols[:h]), tuple(attack_cols[h:]))
    if not isinstance(split, (list, tuple)) or len(split) != 2:
        problems.append("split: expected two lists of column names (the parts of the keys in two files)")
        return None
    parts = tuple(tuple(as_name_list(list(p) if not isinstance(p, str) else p, "split")) for p in split)
    outside = [c for p in parts for c in p if c not in attack_cols]
    if outside:
        problems.append(f"split: {', '.join(outside)} not among the keys and variables; expected those columns")
    return parts


# ----------------------------------------------------------------------------------------------
# 1. distributions
# ----------------------------------------------------------------------------------------------
def distribution_part(data: Files, keys, order: int, top: int) -> dict:
    """Distances of the joint table of the keys and of every combination of up to ``order``
    keys, and the cells of the joint table that contribute most to TV."""
    ko, ks = data.cat[_ORIGINAL][:, : len(keys)], data.cat[_SYNTHETIC][:, : len(keys)]
    overall, cells = _table_distances(ko, ks, data, keys, top)
    combos = []
    for idx in K.key_combinations(len(keys), order):
        d, _ = _table_distances(ko[:, idx], ks[:, idx], data, [keys[i] for i in idx], 0)
        combos.append({"variables": [keys[i] for i in idx], **d})
    return {"overall": overall, "by_combination": combos, "top_cells": cells}


def _table_distances(co, cs, data: Files, names, top: int) -> tuple[dict, list]:
    ids_o, ids_s, rows = K.cell_ids(co, cs)
    a = np.bincount(ids_o, minlength=len(rows))
    b = np.bincount(ids_s, minlength=len(rows))
    d = K.distances(a, b)
    out = {
        "kl": float(d["kl"].sum()),
        "tv": float(d["tv"].sum()),
        "hellinger": float(np.sqrt(d["hellinger2"].sum())),
        "cells": len(rows),
        "cells_only_original": int(((a > 0) & (b == 0)).sum()),
        "cells_only_synthetic": int(((a == 0) & (b > 0)).sum()),
    }
    cells = []
    if top:
        pos = [data.cat_names.index(v) for v in names]
        for c in np.argsort(-d["tv"], kind="stable")[:top]:
            label = {v: (None if rows[c, j] < 0 else data.labels[pos[j]][rows[c, j]]) for j, v in enumerate(names)}
            cells.append({"cell": label, "original_share": float(d["p"][c]), "synthetic_share": float(d["q"][c]),
                          "tv": float(d["tv"][c]), "kl": float(d["kl"][c])})  # fmt: skip
    return out, cells


# ----------------------------------------------------------------------------------------------
# 2. closeness
# ----------------------------------------------------------------------------------------------
def _scale(data: Files) -> np.ndarray:
    """Range of each numeric variable over the files (1 where it is 0 or undefined)."""
    if not data.num_names:
        return np.ones(0)
    allx = np.vstack(data.num)
    with np.errstate(all="ignore"):
        r = np.nanmax(allx, axis=0) - np.nanmin(allx, axis=0) if np.isfinite(allx).any() else np.ones(allx.shape[1])
    return np.where(np.isfinite(r) & (r > 0), r, 1.0)


def _sample(n: int, size: int, rng) -> np.ndarray:
    return np.arange(n) if n <= size else np.sort(rng.choice(n, size=size, replace=False))


def closeness_part(data: Files, sample: int, records: bool, confidence: float, rng, prng) -> dict:
    """DCR of (sampled) synthetic and control records, the exact copies beyond the control
    baseline and whether the control overlaps the original (``prng``: the tests' draws)."""
    scale = _scale(data)
    full = [data.matrix(f) for f in range(len(data.n))]
    copies = K.exact_matches(full[_SYNTHETIC], full[_ORIGINAL])
    out: dict = {"n_exact_copies": int(copies.sum()), "exact_copy_share": float(copies.mean())}
    s_idx = np.arange(data.n[_SYNTHETIC]) if records else _sample(data.n[_SYNTHETIC], sample, rng)
    _, dcr = K.nearest(data.num[_SYNTHETIC][s_idx], data.cat[_SYNTHETIC][s_idx], data.num[_ORIGINAL],
                       data.cat[_ORIGINAL], scale, 1, rng)  # fmt: skip
    dcr = dcr[:, 0]
    out.update(
        {"n_compared": len(s_idx), "dcr_median": float(np.median(dcr)), "dcr_zero_share": float(np.mean(dcr == 0))}
    )
    if len(data.n) > _CONTROL:
        ctrl_copies = K.exact_matches(full[_CONTROL], full[_ORIGINAL])
        c_idx = _sample(data.n[_CONTROL], sample, rng)
        _, dcr_c = K.nearest(data.num[_CONTROL][c_idx], data.cat[_CONTROL][c_idx], data.num[_ORIGINAL],
                             data.cat[_ORIGINAL], scale, 1, rng)  # fmt: skip
        dcr_c = dcr_c[:, 0]
        n_copies, n_ctrl_copies = int(copies.sum()), int(ctrl_copies.sum())
        excess = K.attack_risk(
            K.AttackCounts(data.n[_SYNTHETIC], n_copies, 0, n_ctrl_copies, 1, data.n[_CONTROL]), confidence
        )
        q05 = float(np.quantile(dcr_c, 0.05))
        out.update({
            "control_exact_copy_share": float(ctrl_copies.mean()),
            "excess_copies": excess["risk"],
            "excess_copies_ci": excess["ci"],
            "excess_copies_p": K.fisher_greater(n_copies, data.n[_SYNTHETIC], n_ctrl_copies, data.n[_CONTROL]),
            "control_dcr_median": float(np.median(dcr_c)),
            "control_dcr_q05": q05,
            "share_below_control_q05": float(np.mean(dcr < q05)),
            **control_overlap(full[_ORIGINAL], full[_CONTROL], prng),
            "leak": None,  # decided with the attacks (leak_decision)
        })  # fmt: skip
    else:
        out.update({"leak": None})
    out["_dcr"] = dcr if records else None
    out["_copies"] = copies if records else None
    return out


#: the level of the check that the control records are not copies of original records (a
#: strict one: the warning must not come by chance)
OVERLAP_LEVEL = 0.001


def control_overlap(original: np.ndarray, control: np.ndarray, rng) -> dict:
    """Whether the control file overlaps the original: the same records, or more control
    records equal to an original record than chance gives. Chance: the original is split at
    random in two halves; the records of the second half and the control records are records
    of one population that the first half does not hold, so they equal a record of the first
    half equally often, and Fisher's exact test at :data:`OVERLAP_LEVEL` compares them."""
    n_o, n_c = len(original), len(control)
    same = (
        n_o == n_c and bool(K.exact_matches(control, original).all()) and bool(K.exact_matches(original, control).all())
    )
    perm = rng.permutation(n_o)
    first, second = original[perm[: n_o // 2]], original[perm[n_o // 2 :]]
    hits = int(K.exact_matches(control, first).sum()) if len(first) else 0
    chance = int(K.exact_matches(second, first).sum()) if len(first) else 0
    p = K.fisher_greater(hits, n_c, chance, len(second)) if len(first) else 1.0
    return {
        "control_half_copy_share": hits / n_c,
        "control_copies_expected_share": chance / len(second),
        "control_overlap_p": p,
        "control_overlap": bool(same or p < OVERLAP_LEVEL),
        "control_equals_original": same,
    }


# ----------------------------------------------------------------------------------------------
# 3. attacks
# ----------------------------------------------------------------------------------------------
def _distinct(x: np.ndarray) -> np.ndarray:
    """The distinct rows of a float matrix (NaN equal to NaN), in first-seen order."""
    y = np.where(np.isnan(x), np.inf, x)
    _, first = np.unique(y, axis=0, return_index=True)
    return x[np.sort(first)]


def attack_part(data: Files, par: dict, rng) -> dict:
    pool = _pool(data)
    out = {"singling_out": singling_out(data, par, rng, pool),
           "singling_out_records": singling_out_records(data, par, rng, pool)}  # fmt: skip
    if par["split"] is not None:
        out["linkability"] = linkability(data, par, rng)
    for s in par["sensitive"]:
        out[f"inference:{s}"] = inference(data, par, s, rng)
    return out


def _columns(data: Files, names) -> tuple[list, list]:
    """Positions of ``names`` among the categorical and among the numeric columns."""
    return [data.cat_names.index(c) for c in names if c in data.cat_names], [
        data.num_names.index(c) for c in names if c in data.num_names
    ]


def _pool(data: Files) -> tuple | None:
    """The original and the control records pooled: their distinct rows and each record's id
    among them (the original's first), for the permutation tests of singling out."""
    if len(data.n) <= _CONTROL:
        return None
    return K.row_ids(np.vstack([data.matrix(_ORIGINAL), data.matrix(_CONTROL)]))


def _presence_p(pool, matches, n_success: int, data: Files, par: dict, every: bool = True) -> float | None:
    """The permutation test's p-value of a singling-out attack (None without a control;
    ``every``: the matches hold every query, so the test's statistic is the attack's count)."""
    if pool is None:
        return None
    observed, p = K.presence_test(matches, pool[1], data.n[_ORIGINAL], par["permutation_rng"])
    if observed > n_success or (every and observed != n_success):  # pragma: no cover - a defect
        raise AssertionError(f"singling out: the permutation statistic {observed} is not the count {n_success}")
    return p


#: the (query, row) pairs kept for the singling-out test in memory; past it the queries that
#: match more than :data:`MAX_MATCHES` pooled rows (which single out almost never) are left
#: out of the test's statistic, on the real split and on every random one alike (still exact)
MAX_PAIRS = 5_000_000
MAX_MATCHES = 10_000


def _singling_out_control(pool, queries: list, n_original: int, n_ori_rows: int, rng) -> tuple:
    """The control's singling-out count (carried to the original's size) and the query-row
    matches of the permutation test, on the pooled distinct rows: ``(count, matches, every
    query in the matches)``."""
    index = K.QueryIndex(pool[0])
    counts = K.query_counts(index, queries)
    ctrl = np.unique(pool[1][n_original:])  # the control's distinct rows among the pooled ones
    every = int(counts.sum()) <= MAX_PAIRS
    kept = np.arange(len(queries)) if every else np.flatnonzero(counts <= MAX_MATCHES)
    qid, rows = K.query_matches(index, [queries[i] for i in kept])
    matches = K.match_matrix(kept[qid], rows, len(queries), len(pool[0]))
    if every:
        n_ctrl = float(K.singled_out(matches, ctrl))
        if len(ctrl) != n_ori_rows and queries:
            n_ctrl *= K.size_correction(ctrl, queries, n_ori_rows, rng, lambda sub: K.singled_out(matches, ctrl[sub]))
    else:
        rows_c = pool[0][ctrl]
        n_ctrl = float((K.query_counts(rows_c, queries) == 1).sum())
        if len(ctrl) != n_ori_rows and queries:
            n_ctrl *= K.size_correction(rows_c, queries, n_ori_rows, rng)
    return n_ctrl, matches, every


def singling_out(data: Files, par: dict, rng, pool=None) -> dict:
    """anonymeter's multivariate singling-out attack on the distinct rows of each file."""
    names = list(data.names)
    numeric = np.array([c in data.num_names for c in names])
    ori, syn = _distinct(data.matrix(_ORIGINAL)), _distinct(data.matrix(_SYNTHETIC))
    n = par["n_attacks"]
    queries, attempts = K.singling_out_queries(syn, numeric, n, par["n_cols"], rng)
    n_success = int((K.query_counts(ori, queries) == 1).sum())
    base = K.random_queries(syn, numeric, n, par["n_cols"], rng)
    n_base = int((K.query_counts(ori, base) == 1).sum())
    n_ctrl: float | None = None
    matches, every = None, True
    if pool is not None:
        n_ctrl, matches, every = _singling_out_control(pool, queries, data.n[_ORIGINAL], len(ori), rng)
    res = K.attack_risk(K.AttackCounts(n, n_success, n_base, n_ctrl, n, n), par["confidence"])
    res["n_queries"] = len(queries)
    res["p_value"] = _presence_p(pool, matches, n_success, data, par, every)
    return res


def singling_out_records(data: Files, par: dict, rng, pool=None) -> dict:
    """Singling out with whole records: ``n_attacks`` distinct synthetic records, each asked as
    an equality query on every column; success when it matches exactly one original record
    (exactly one control record for the baseline, scaled by the ratio of the files' sizes);
    the random baseline asks random values of every column."""
    names = list(data.names)
    numeric = np.array([c in data.num_names for c in names])
    ori, syn = _distinct(data.matrix(_ORIGINAL)), _distinct(data.matrix(_SYNTHETIC))
    n = min(par["n_attacks"], len(syn))
    asked = syn[np.sort(rng.choice(len(syn), size=n, replace=False))]
    n_success = int((K.row_counts(asked, ori) == 1).sum())
    base = K.random_queries(syn, numeric, n, len(names), rng)
    base_rows = np.array([[v for _, _, v in q] for q in base]) if base else np.empty((0, len(names)))
    n_base = int((K.row_counts(base_rows, ori) == 1).sum())
    n_ctrl: float | None = None
    if len(data.n) > _CONTROL:
        ctrl = _distinct(data.matrix(_CONTROL))
        n_ctrl = float((K.row_counts(asked, ctrl) == 1).sum()) * len(ori) / len(ctrl)
    res = K.attack_risk(K.AttackCounts(n, n_success, n_base, n_ctrl, n, n), par["confidence"])
    matches = K.match_matrix(*K.equal_row_pairs(asked, pool[0]), n, len(pool[0])) if pool else None
    res["p_value"] = _presence_p(pool, matches, n_success, data, par)
    return res


def _nn_guesses(data: Files, f: int, targets: np.ndarray, names, k: int, rng, keep=None) -> np.ndarray:
    ci, ni = _columns(data, names)
    scale = _scale(data)[ni] if ni else np.ones(0)
    idx, _ = K.nearest(data.num[f][targets][:, ni], data.cat[f][targets][:, ci], data.num[_SYNTHETIC][:, ni],
                       data.cat[_SYNTHETIC][:, ci], scale, k, rng, keep=keep)  # fmt: skip
    return idx


def _distinct_synthetic(data: Files, names, rng) -> np.ndarray:
    """The distinct synthetic rows on ``names`` (searched by every target set)."""
    ci, ni = _columns(data, names)
    return K.distinct_candidates(data.num[_SYNTHETIC][:, ni], data.cat[_SYNTHETIC][:, ci], rng)


def linkability(data: Files, par: dict, rng) -> dict:
    """anonymeter's linkability attack with the two parts of ``split``."""
    n_syn, k = data.n[_SYNTHETIC], par["n_neighbors"]
    a, b = par["split"]
    keep_a, keep_b = (_distinct_synthetic(data, p, rng) if k == 1 else None for p in (a, b))
    counts = []
    for f in (_ORIGINAL, _CONTROL)[: len(data.n) - 1]:
        n = min(par["n_attacks"], data.n[f])
        t = rng.choice(data.n[f], size=n, replace=False)
        counts.append(
            (
                n,
                K.linkability_successes(
                    _nn_guesses(data, f, t, a, k, rng, keep_a), _nn_guesses(data, f, t, b, k, rng, keep_b)
                ),
            )
        )
    n = counts[0][0]
    kk = min(k, n_syn)
    base = K.linkability_successes(*(np.array([rng.choice(n_syn, size=kk, replace=False) for _ in range(n)])
                                     for _ in range(2)))  # fmt: skip
    return _per_target_risk(counts, base, n, par)


def _per_target_risk(counts: list, base: float, n_base: int, par: dict) -> dict:
    """The risk of an attack on sampled targets (linkability, inference) and the p-value of
    Fisher's exact test of its successes on the original targets against the control targets
    (each target's success depends on it and the synthetic file only)."""
    n = counts[0][0]
    ctrl = counts[1] if len(counts) > 1 else (n, None)
    res = K.attack_risk(K.AttackCounts(n, counts[0][1], base, ctrl[1], n_base, ctrl[0]), par["confidence"])
    res["p_value"] = None if ctrl[1] is None else K.fisher_greater(counts[0][1], n, ctrl[1], ctrl[0])
    return res


def inference(data: Files, par: dict, secret: str, rng) -> dict:
    """anonymeter's inference attack on ``secret`` with the nearest synthetic record on the
    other attack columns."""
    aux = [c for c in par["attack_cols"] if c != secret]
    if not aux:
        raise SdcError(f"sensitive: {secret} is the only attack column; expected other keys to infer it from")
    regression = secret in data.num_names

    def secret_values(f):
        if regression:
            return data.num[f][:, data.num_names.index(secret)]
        x = data.cat[f][:, data.cat_names.index(secret)].astype(float)
        x[x < 0] = np.nan
        return x

    s_syn = secret_values(_SYNTHETIC)
    keep = _distinct_synthetic(data, aux, rng)
    counts = []
    for f in (_ORIGINAL, _CONTROL)[: len(data.n) - 1]:
        n = min(par["n_attacks"], data.n[f])
        t = rng.choice(data.n[f], size=n, replace=False)
        guess = s_syn[_nn_guesses(data, f, t, aux, 1, rng, keep)[:, 0]]
        counts.append((n, K.inference_successes(guess, secret_values(f)[t], regression)))
    n = counts[0][0]
    n_base = min(data.n[_SYNTHETIC], n)
    t = rng.choice(data.n[_ORIGINAL], size=n_base, replace=False)
    guess = s_syn[rng.choice(data.n[_SYNTHETIC], size=n_base, replace=False)]
    base = K.inference_successes(guess, secret_values(_ORIGINAL)[t], regression)
    return _per_target_risk(counts, base, n_base, par)


# ----------------------------------------------------------------------------------------------
# the leak decision
# ----------------------------------------------------------------------------------------------
def leak_decision(close: dict, attacks: dict, significance: float) -> dict:
    """The leak decision over the exact copies and the attacks together: each test's p-value
    against the control records, and weighted Holm at ``significance`` (the exact copies carry
    half the weight, the attacks share the other half), so that a synthetic file made without
    the original records is flagged with a chance of at most ``significance``. Sets each
    attack's ``detected`` and the closeness ``leak`` (None: not decided). Returns ``{"leak",
    "significance", "tests", "reason", "cause"}`` (cause: the short reason)."""
    names = [k for k, a in attacks.items() if a.get("p_value") is not None]
    pvalues = {"exact_copies": close.get("excess_copies_p"), **{k: attacks[k]["p_value"] for k in names}}
    reason = cause = None
    if "excess_copies_p" not in close:
        cause = "no control file"
        reason = (
            "no control file: the attack risks are the success rates, without a baseline of records held out of "
            "the synthesiser's training data, and whether original records leaked cannot be decided"
        )
    elif close.get("control_overlap"):
        cause = (
            f"{close['control_exact_copy_share']:.1%} of the control records are exact copies of original records; "
            f"{close['control_half_copy_share']:.1%} equal a record of a random half of the original, where chance "
            f"(its other half) gives {close['control_copies_expected_share']:.1%}"
        )
        reason = (
            f"control: {cause}"
            + ("; the control file holds the original's records" if close.get("control_equals_original") else "")
            + ": a control file must hold records kept out of the synthesiser's training data, so whether original "
            "records leaked cannot be decided"
        )
    weights = {"exact_copies": max(len(names), 1), **{k: 1 for k in names}}
    rejected = K.weighted_holm(pvalues, weights, significance) if reason is None else {}
    tests = {k: {"p_value": p, "weight": weights[k] / sum(weights.values()), "rejected": rejected.get(k)}
             for k, p in pvalues.items()}  # fmt: skip
    for k, a in attacks.items():
        a["detected"] = rejected.get(k) if reason is None and k in names else None
    close["leak"] = rejected.get("exact_copies") if reason is None else None
    leak = None if reason is not None else any(rejected.values())
    return {"leak": leak, "significance": significance, "tests": tests, "reason": reason, "cause": cause}


# ----------------------------------------------------------------------------------------------
# result
# ----------------------------------------------------------------------------------------------
def _result(data: Files, par: dict, dist: dict, close: dict, attacks: dict, decision: dict) -> SyntheticRiskResult:
    dcr, copies = close.pop("_dcr"), close.pop("_copies")
    notes = [decision["reason"]] if decision["reason"] else []
    if attacks["singling_out"]["n_queries"] < par["n_attacks"]:
        notes.append(
            f"singling out: {attacks['singling_out']['n_queries']} queries that single out a synthetic record were "
            f"found out of the {par['n_attacks']} asked for; the risk may be underestimated"
        )
    return SyntheticRiskResult(
        keys=tuple(par["keys"]),
        variables=tuple(par["variables"]),
        sensitive=tuple(par["sensitive"]),
        n_original=data.n[_ORIGINAL],
        n_synthetic=data.n[_SYNTHETIC],
        n_control=data.n[_CONTROL] if len(data.n) > _CONTROL else None,
        distribution=dist["overall"],
        by_combination=dist["by_combination"],
        top_cells=dist["top_cells"],
        closeness=close,
        attacks=attacks,
        risk=max(a["risk"] for a in attacks.values()),
        confidence=par["confidence"],
        split=None if par["split"] is None else [list(p) for p in par["split"]],
        dcr=dcr,
        exact_copy=copies,
        notes=tuple(notes),
        leak_decision=decision,
        backend=data.backend,
        records=local_records(),
    )
