"""Mlodak's external risk with an out-of-core engine (DuckDB, Spark).

The distance of two records depends on their values only, so pairing works on *classes* of
identical records. The engine groups each file by the variables (one GROUP BY per file, with
the record count and first position of every distinct row); the exact admissible pairs are found
between these distinct rows in memory. The first-found links need record order: only the records
of classes with an admissible partner are fetched (their positions), and the paper's procedure
runs on them. With ``id`` the engine compares the identifiers of the linked pairs and of each
external record's true partner.
"""

from __future__ import annotations

import numpy as np

from .._core.linkage_external import AdmissibleClasses, RecordClasses, admissible_classes, class_links
from .._errors import SdcError
from .._validation import as_name_list, check_column
from ..engines import local_records
from ..results.linkage import ExternalRiskResult


def external_risk_engine(eng, released, external, variables, options: dict, validate, encode) -> ExternalRiskResult:
    """:func:`sdckit.external_risk` on ``eng`` (``validate``/``encode``: the in-memory steps,
    run on the two tables of distinct rows)."""
    if options["method"] != "exact":
        raise SdcError(f"method: the {eng.name} engine uses the exact algorithm; expected method='exact'")
    names = as_name_list(variables, "variables")
    tD, tA = eng.table(released, "released"), eng.table(external, "external")
    tD.require(names, "variables (released)")
    tA.require(names, "variables (external)")
    if tD.n == 0:
        raise SdcError("released: the table has no records; expected at least one")
    id_ = options["id"]
    if id_ is not None:
        _check_ids(eng, tD, tA, id_)
    cD, cA = eng.compress(tD, names, first=True), eng.compress(tA, names, first=True)
    oD, oA = np.argsort(cD.first, kind="stable"), np.argsort(cA.first, kind="stable")  # rows in file order
    args = validate(cD.frame[oD], cA.frame[oA], names, {**options, "id": None, "engine": eng.local()})
    adm = admissible_classes(encode(args))
    countsA = cA.counts[oA]
    n_paired = int(countsA[adm.paired].sum())
    links = _links(eng, cD, cA, oD, oA, adm, args.one_to_one)
    extra = {}
    if id_ is not None:
        extra = _id_counts(eng, tD, tA, id_, cD, cA, oD, oA, adm, links)
    return ExternalRiskResult(
        variables=args.variables,
        scales=args.scales,
        availability=args.availability,
        tolerance=args.tolerance,
        pair_tol=args.pair_tol,
        one_to_one=args.one_to_one,
        internal_risk=args.internal_risk,
        n_released=tD.n,
        n=tA.n,
        method="exact",
        counts={"n_paired": n_paired, "n_linked": int(np.count_nonzero(links[2] >= 0)), **extra},
        backend=eng.name,
        records=local_records(),
    )


def _records(eng, comp, order, rows):
    """Positions (sorted) of the records of the given rows (in file-order numbering) and the
    row of each."""
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos, r = eng.records_of(comp, order[rows])
    back = np.empty(order.size, np.int64)
    back[order] = np.arange(order.size)
    return pos, back[r]


def _restricted(row_class, n_classes: int, rec_rows) -> RecordClasses:
    """Classes over the fetched records (indices in position order); classes without fetched
    records are empty. ``members`` gets one sentinel so that every class has a head."""
    ids = row_class[rec_rows]
    members = np.argsort(ids, kind="stable")
    ptr = np.zeros(n_classes + 1, np.int64)
    np.cumsum(np.bincount(ids, minlength=n_classes), out=ptr[1:])
    return RecordClasses(ids, ptr, np.append(members, -1))


def _links(eng, cD, cA, oD, oA, adm: AdmissibleClasses, one_to_one: bool):
    """First-found links on the records of the classes that take part: ``(posA, posD, link)``
    with ``link`` an index into ``posD`` (-1: none) per fetched external record."""
    deg = np.diff(adm.ptr)
    rows_a = np.flatnonzero(deg[adm.a.ids] > 0)  # distinct external rows with a partner
    used_d = np.zeros(adm.d.sizes.size, bool)
    used_d[adm.idx] = True
    rows_d = np.flatnonzero(used_d[adm.d.ids])
    posA, rA = _records(eng, cA, oA, rows_a)
    posD, rD = _records(eng, cD, oD, rows_d)
    a = _restricted(adm.a.ids, adm.a.sizes.size, rA)
    d = _restricted(adm.d.ids, adm.d.sizes.size, rD)
    link = class_links(AdmissibleClasses(a, d, adm.ptr, adm.idx), reuse=not one_to_one)
    return posA, posD, link


def _check_ids(eng, tD, tA, id_: str) -> None:
    """The identifier exists in both files and is complete and unique in the released file."""
    id_ = str(check_column(id_, "id", allow_none=False))
    tD.require([id_], "id")
    tA.require([id_], "id")
    if tD.n_missing(id_):
        raise SdcError(f"id: column {id_} of released has missing values; expected an identifier for every record")
    if eng.n_distinct(tD, id_) != tD.n:
        raise SdcError(f"id: column {id_} of released has repeated values; expected a unique identifier")


def _id_counts(eng, tD, tA, id_, cD, cA, oD, oA, adm, links) -> dict:
    """Correct links and admissible true partners, counted by the engine."""
    posA, posD, link = links
    ok = link >= 0
    n_correct = eng.id_matches(tA, tD, id_, posA[ok], posD[link[ok]])
    n_adm = _admissible_partners(eng.id_partners(cA, cD, id_), oA, oD, adm)
    return {"n_correct_links": n_correct, "n_partner_admissible": n_adm}


def _admissible_partners(partner, oA, oD, adm) -> int:
    """Records whose true partner's class is admissible for their own class."""
    if partner.height == 0:
        return 0
    backA, backD = np.empty(oA.size, np.int64), np.empty(oD.size, np.int64)
    backA[oA], backD[oD] = np.arange(oA.size), np.arange(oD.size)
    ca = adm.a.ids[backA[partner.get_column("ra").to_numpy()]]
    cd = adm.d.ids[backD[partner.get_column("rd").to_numpy()]]
    n = partner.get_column("n").to_numpy()
    n_d = adm.d.sizes.size
    owner = np.repeat(np.arange(adm.ptr.size - 1), np.diff(adm.ptr))  # external class of each admissible pair
    ok = np.isin(ca * n_d + cd, owner * n_d + adm.idx)
    return int(n[ok].sum())
