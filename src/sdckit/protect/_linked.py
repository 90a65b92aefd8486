"""Linked ("ghost") variables across a protection step: after a method changed a key, every
variable linked to it (``Scenario(linked={"province": "region"})``) inherits the key's
suppressions and merged categories (:func:`sdckit._core.linked.follow_key`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._core.linked import follow_key
from ..engines import in_memory_engine
from ..results.protection import ProtectionResult
from ..scenario import check_linked, linked_keys

__all__ = ["keep_links"]

#: joins the linked values a released key category stands for ("North|South")
MERGED_SEPARATOR = "|"


def keep_links(before, result: ProtectionResult, linked, *, missing=None, engine=None) -> ProtectionResult:
    """``result`` (a protection step applied to ``before``) with every linked variable made to
    follow its key: missing wherever the key is missing after the step (where the step
    suppressed it, and where it was missing already, as in sdcMicro); where the step merged
    categories of the key, the union of the linked values of the released category
    (``"a|b"``) when the linked variable is a function of the key, else suppressed; where the
    step moved records between categories (PRAM, swapping), the linked value of the released
    category when it is a function of the key, else suppressed. A variable linked to several
    keys follows each of them, in the order given (so it is missing wherever one of them is).

    ``linked`` is a mapping linked variable -> key (or list of keys), or a :class:`Scenario`
    (its ``linked`` and ``missing``). The result's ``n_changed`` counts the linked variables'
    changed cells and ``details["linked"]`` says per linked variable what it inherited (counts
    only; with several keys, summed, and per key under ``by_key``). Without links, or when
    nothing is to be carried over (also when the links were already kept: the function is
    idempotent), the result is returned as it is.
    """
    if hasattr(linked, "linked"):
        missing = linked.missing if missing is None else missing
        linked = linked.linked
    if not linked:
        return result
    linked = check_linked(linked)  # checked and normalised as Scenario(linked=...) is
    eng = in_memory_engine(engine, "linked variables", before)
    original = eng.table(before)
    table = result.table
    table.require(sorted({*linked, *(k for keys in linked.values() for k in linked_keys(keys))}), "linked")
    n_changed, log = dict(result.n_changed), {}
    for ghost, keys in linked.items():
        entries, changed = [], False
        for key in linked_keys(keys):
            table, entry, mask = _follow(eng, original, table, ghost, key, missing)
            entries.append(entry)
            changed |= bool(mask.any())
        log[ghost] = entries[0] if len(entries) == 1 else _summed(entries)
        if changed:
            n_changed[ghost] = _n_differing(eng, original, table, ghost)
    if not any(any(e[c] for c in _COUNTS) for e in log.values()):
        return result  # nothing to carry over (also when the links were already kept)
    return replace(
        result,
        data=eng.native_frame(table),
        table=table,
        n_changed=n_changed,
        details={**result.details, "linked": log},
        notes=(*result.notes, *_notes(log)),
    )


#: the counts of a linked variable's log entry
_COUNTS = ("suppressed", "merged", "followed", "suppressed_merged")


def _summed(entries: list[dict]) -> dict:
    """The log entry of a variable linked to several keys: the counts summed, and per key."""
    out: dict = {"key": [e["key"] for e in entries]}
    out.update({c: sum(e[c] for e in entries) for c in (*_COUNTS, "key_already_missing")})
    out["function_of_key"] = all(e["function_of_key"] for e in entries)
    out["merged_values"] = [v for e in entries for v in e["merged_values"]]
    out["by_key"] = {e["key"]: e for e in entries}
    return out


def _follow(eng, original, table, ghost: str, key: str, missing):
    """One linked variable after the step: the new table, its log entry and the cells changed."""
    (before, after), _ = eng.encode_joint([original, table], key, list(missing) if missing else None)
    (ghost_before, codes), labels = eng.encode_joint([original, table], ghost)
    values = eng.label_values(labels)
    ch = follow_key(before, after, codes, len(values), ghost_before)
    followed = ch.followed if ch.followed is not None else np.zeros_like(ch.suppressed)
    already = ch.already_missing if ch.already_missing is not None else np.zeros_like(ch.suppressed)
    mask = ch.suppressed | ch.merged_cells | ch.suppressed_merged | followed
    merged_values = [MERGED_SEPARATOR.join(str(values[i]) for i in m) for m in ch.merged]
    entry = {
        "key": key,
        "suppressed": int(ch.suppressed.sum()),
        "key_already_missing": int(already.sum()),
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
        key = e["key"] if isinstance(e["key"], str) else " or ".join(e["key"])
        if e["suppressed"]:
            parts.append(f"{e['suppressed']} suppressed with {key}")
        if e["key_already_missing"]:
            parts.append(f"{e['key_already_missing']} of them where {key} was already missing before the step")
        if e["merged"]:
            parts.append(f"{e['merged']} merged as {key}'s categories were")
        if e["followed"]:
            parts.append(f"{e['followed']} set to the value of {key}'s released category")
        if e["suppressed_merged"]:
            parts.append(
                f"{e['suppressed_merged']} suppressed where {key} was merged or moved "
                f"({ghost} is not a function of {key})"
            )
        if parts:
            out.append(f"linked variable {ghost}: " + "; ".join(parts))
    return out
