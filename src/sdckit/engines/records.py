"""The records handle: what a result keeps to hand its values back as frames.

An engine builds the handle (``engine.records(...)``, :func:`local_records`) and the measure
gives it to the result it builds; the result calls it for every frame it returns (its
per-record values, its small tables) and never imports an engine module. In memory the handle
builds the caller's frame type from NumPy columns; with an out-of-core engine (DuckDB, Spark)
it also holds the engine and the compressed table, and the engine maps the per-row values back
to the records (:meth:`Records.frame`, :meth:`Records.write`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["HOUSEHOLD_RISK", "HOUSEHOLD_RISK_COLUMN", "Records", "local_records"]

#: the per-record column an out-of-core engine computes itself: the household risk r^h
HOUSEHOLD_RISK_COLUMN = "household_risk"
#: the value that stands for that column in the values an engine writes (it computes r^h of the
#: record's household itself)
HOUSEHOLD_RISK = "__household_risk__"


class Records(NamedTuple):
    """The engine's handle on the records a result describes (a named tuple: it unpacks as the
    ``(engine, compressed table, household store)`` a result's ``records_source`` was).

    Attributes
    ----------
    engine : Engine or None
        The out-of-core engine that holds the records; None in memory.
    comp : object or None
        The engine's compressed table (one row per distinct pattern) the result's per-row
        values belong to; None in memory.
    household : object or None
        The engine's household store, whose risk the engine maps to every record
        (``household_risk``); None without households.
    """

    engine: Any = None
    comp: Any = None
    household: Any = None

    @property
    def stored(self) -> bool:
        """Whether the records stay in an out-of-core engine (the result holds one row per
        distinct pattern)."""
        return self.comp is not None

    @property
    def columns(self) -> list[str]:
        """The columns of the engine's input table (out of core)."""
        return list(self.comp.source.columns) if self.stored else []

    def table(self, columns: dict, backend: str, index=None):
        """``columns`` (1-D arrays or lists) as a frame of the caller's type ``backend``; a
        pandas frame gets ``index`` back."""
        from ._polars_frame import to_native  # the frame libraries load on first output

        return to_native(columns, backend, index)

    def frame(self, values: dict, backend: str, index=None, ids=None):
        """Per-record ``values`` as the caller's frame type, the identifier column ``ids``
        (``(name, values)``) first. Out of core the engine maps each row's values to its
        records (input order) and collects them."""
        if not self.stored:
            if ids is not None:
                name, id_values = ids
                values = {name: id_values, **{k: v for k, v in values.items() if k != name}}
            return self.table(values, backend, index)
        frame = self.engine.records_frame(self.comp, self.engine_values(values), household=self.household,
                                          id=self._id_name(ids))  # fmt: skip
        columns = dict(zip(frame.columns, frame.get_columns()))
        return self.table(columns, self.comp.source.backend, self.comp.source.index)

    def write(self, values: dict, path, ids=None, overwrite: bool = False):
        """Write the per-record ``values`` through the out-of-core engine (nothing record-level
        passes through Python); see :meth:`sdckit.results.Result.write_records`."""
        return self.engine.write_records(self.comp, self.engine_values(values), path, household=self.household,
                                         id=self._id_name(ids), overwrite=overwrite)  # fmt: skip

    def engine_values(self, values: dict) -> dict:
        """``values`` with the household risk left to the engine (in its place, or last; the
        same ``values`` again when they already are)."""
        if self.household is None:
            return values
        out = {k: HOUSEHOLD_RISK if k == HOUSEHOLD_RISK_COLUMN else v for k, v in values.items()}
        out.setdefault(HOUSEHOLD_RISK_COLUMN, HOUSEHOLD_RISK)
        return out

    @staticmethod
    def _id_name(ids):
        return ids[0] if ids is not None else None

    # -- the small label tables a result keeps (one value per category) -------------------------
    @staticmethod
    def label_values(labels) -> list:
        """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
        from ._polars_labels import label_values

        return label_values(labels)

    @staticmethod
    def msu_text(keys, labels, patterns, pattern_ids, msu_pattern, msu_subset, subsets, n_patterns):
        """Per record, its SUDA minimal sample uniques as text (``"a=1; b=2, c=3"``)."""
        from ._polars_labels import msu_text

        return msu_text(keys, labels, patterns, pattern_ids, msu_pattern, msu_subset, subsets,
                                       n_patterns)  # fmt: skip


_LOCAL = Records()


def local_records() -> Records:
    """The handle of a result computed in memory, or of one that holds only small tables."""
    return _LOCAL
