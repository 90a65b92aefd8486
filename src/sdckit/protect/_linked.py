"""Linked ("ghost") variables across a protection step: after a method changed a key, every
variable linked to it (``Scenario(linked={"province": "region"})``) inherits the key's
suppressions and merged categories (:func:`sdckit._core.linked.follow_key`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .._core.linked import follow_key
from .._validation import raise_problems
from ..engines import in_memory_engine
from ..results.protection import ProtectionResult

__all__ = ["keep_links"]

#: joins the linked values a released key category stands for ("North|South")
MERGED_SEPARATOR = "|"


def keep_links(before, result: ProtectionResult, linked, *, missing=None, engine=None) -> ProtectionResult:
    """``result`` (a protection step applied to ``before``) with every linked variable made to
    follow its key: suppressed where the key was suppressed; where the step merged categories
    of the key, the union of the linked values of the released category (``"a|b"``) when the
    linked variable is a function of the key, else suppressed; where the step moved records
    between categories (PRAM, swapping), the linked value of the released category when it is
    a function of the key, else suppressed.

    ``linked`` is a mapping linked variable -> key, or a :class:`Scenario` (its ``linked`` and
    ``missing``). The result's ``n_changed`` counts the linked variables' changed cells and
    ``details["linked"]`` says per linked variable what it inherited (counts only). Without
    links, or when nothing is to be carried over (also when the links were already kept: the
    function is idempotent), the result is returned as it is.
    """
    if hasattr(linked, "linked"):
        missing = linked.missing if missing is None else missing
        linked = linked.linked
    if not linked:
        return result
    if not isinstance(linked, Mapping):
        raise_problems([f"linked: got {type(linked).__name__}; expected a mapping such as {{'province': 'region'}}"])
    eng = in_memory_engine(engine, "linked variables", before)
    original = eng.table(before)
    table = result.table
    table.require(list(linked) + list(linked.values()), "linked")
    n_changed, log = dict(result.n_changed), {}
    for ghost, key in linked.items():
        table, entry, mask = _follow(eng, original, table, ghost, key, missing)
        log[ghost] = entry
        if mask.any():
            n_changed[ghost] = _n_differing(eng, original, table, ghost)
    if not any(e["suppressed"] or e["merged"] or e["followed"] or e["suppressed_merged"] for e in log.values()):
        return result  # nothing to carry over (also when the links were already kept)
    return replace(
        result,
        data=eng.native_frame(table),
        table=table,
        n_changed=n_changed,
        details={**result.details, "linked": log},
        notes=(*result.notes, *_notes(log)),
    )


def _follow(eng, original, table, ghost: str, key: str, missing):
    """One linked variable after the step: the new table, its log entry and the cells changed."""
    (before, after), _ = eng.encode_joint([original, table], key, list(missing) if missing else None)
    (ghost_before, codes), labels = eng.encode_joint([original, table], ghost)
    values = eng.label_values(labels)
    ch = follow_key(before, after, codes, len(values), ghost_before)
    followed = ch.followed if ch.followed is not None else np.zeros_like(ch.suppressed)
    mask = ch.suppressed | ch.merged_cells | ch.suppressed_merged | followed
    merged_values = [MERGED_SEPARATOR.join(str(values[i]) for i in m) for m in ch.merged]
    entry = {
        "key": key,
        "suppressed": int(ch.suppressed.sum()),
        "merged": int(ch.merged_cells.sum()),
        "followed": int(followed.sum()),
        "suppressed_merged": int(ch.suppressed_merged.sum()),
        "function_of_key": ch.functional,
        "merged_values": merged_values,
    }
    if ch.merged:
        new_labels = [str(v) for v in values] + merged_values
        table = eng.with_codes(table, ghost, ch.codes, new_labels)
    elif followed.any():
        table = eng.with_codes(table, ghost, ch.codes, labels)
    elif mask.any():
        table = eng.with_missing(table, {ghost: mask})
    return table, entry, mask


def _n_differing(eng, original, table, ghost: str) -> int:
    """Cells of ``ghost`` that differ from the data before the step (suppressed or merged)."""
    (a, b), _ = eng.encode_joint([original, table], ghost)
    return int(np.count_nonzero(np.asarray(a) != np.asarray(b)))


def _notes(log: dict) -> list[str]:
    out = []
    for ghost, e in log.items():
        parts = []
        if e["suppressed"]:
            parts.append(f"{e['suppressed']} suppressed with {e['key']}")
        if e["merged"]:
            parts.append(f"{e['merged']} merged as {e['key']}'s categories were")
        if e["followed"]:
            parts.append(f"{e['followed']} set to the value of {e['key']}'s released category")
        if e["suppressed_merged"]:
            parts.append(
                f"{e['suppressed_merged']} suppressed where {e['key']} was merged or moved "
                f"({ghost} is not a function of {e['key']})"
            )
        if parts:
            out.append(f"linked variable {ghost}: " + "; ".join(parts))
    return out
