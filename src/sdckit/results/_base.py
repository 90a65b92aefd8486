"""Base classes for result objects."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

__all__ = ["FrozenDict", "FrozenList", "Result", "Summary", "fmt", "fmt_percent", "fmt_share", "freeze"]


def fmt(value: Any) -> str:
    """Format a number the way a statistician reads it (integers plain, floats to 6 significant digits)."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "NA"
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if 0 < abs(v) < 1e-6:
            return "< 1e-6" if v > 0 else "> -1e-6"
        return f"{v:.6g}"
    if value is None:
        return "-"
    return str(value)


def fmt_share(value) -> str:
    """A fraction in [0, 1] with its percentage: ``0.0134 (1.34 %)``; ``-`` for None."""
    if value is None:
        return "-"
    v = float(value)
    if math.isnan(v):
        return "NA"
    return f"{fmt(v)} ({fmt_percent(v)})"


def fmt_percent(value) -> str:
    """A fraction shown as a percentage with a sensible number of digits."""
    p = 100.0 * float(value)
    if p == 0:
        return "0 %"
    if abs(p) < 0.001:
        return "< 0.001 %"
    return f"{p:.3g} %"


@dataclass(frozen=True)
class Summary:
    """A printable summary: a title and sections of (label, value) rows or tables.

    ``str(summary)`` gives the text form, ``summary.to_html()`` (and Jupyter's rich display)
    the HTML form.
    """

    title: str
    sections: tuple = ()
    notes: tuple = ()
    #: one sentence stating the verdict, printed under the title
    headline: str | None = None

    def __str__(self) -> str:
        lines = [self.title, "=" * len(self.title)]
        if self.headline:
            lines += ["", self.headline]
        for heading, body in self.sections:
            lines.append("")
            if heading:
                lines += [heading, "-" * len(heading)]
            if isinstance(body, dict) and "columns" in body:
                cols = list(body["columns"])
                rows = [[fmt(v) for v in r] for r in body["rows"]]
                widths = [max([len(str(c))] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
                lines.append("  ".join(str(c).rjust(w) for c, w in zip(cols, widths)))
                for r in rows:
                    lines.append("  ".join(v.rjust(w) for v, w in zip(r, widths)))
            else:
                width = max((len(str(k)) for k, _ in body), default=0)
                for k, v in body:
                    lines.append(f"{str(k).ljust(width)}  {fmt(v)}")
        if self.notes:
            lines.append("")
            lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_html(self) -> str:
        e = html.escape
        out = [f'<div class="sdckit-summary"><h3>{e(self.title)}</h3>']
        if self.headline:
            out.append(f"<p><strong>{e(self.headline)}</strong></p>")
        for heading, body in self.sections:
            if heading:
                out.append(f"<h4>{e(heading)}</h4>")
            out.append("<table>")
            if isinstance(body, dict) and "columns" in body:
                out.append("<tr>" + "".join(f"<th>{e(str(c))}</th>" for c in body["columns"]) + "</tr>")
                for r in body["rows"]:
                    out.append("<tr>" + "".join(f"<td>{e(fmt(v))}</td>" for v in r) + "</tr>")
            else:
                for k, v in body:
                    out.append(f"<tr><th>{e(str(k))}</th><td>{e(fmt(v))}</td></tr>")
            out.append("</table>")
        for n in self.notes:
            out.append(f"<p><em>{e(n)}</em></p>")
        out.append("</div>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return str(self)


class FrozenDict(dict):
    """A dict that cannot be changed (still a ``dict``: JSON-serialisable, picklable)."""

    def _readonly(self, *args, **kwargs):
        raise TypeError("result fields are read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self):
        return (FrozenDict, (dict(self),))


class FrozenList(list):
    """A list that cannot be changed (still a ``list``: equal to the same list, JSON-serialisable,
    picklable)."""

    def _readonly(self, *args, **kwargs):
        raise TypeError("result fields are read-only")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _readonly  # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _readonly  # type: ignore[assignment]

    def __reduce__(self):
        return (FrozenList, (list(self),))


def freeze(value):
    """A read-only form of a result field, at every depth: arrays lose their write flag (a
    read-only view: the caller's array keeps its own), dicts become :class:`FrozenDict`, lists
    :class:`FrozenList`, sets frozensets, and tuples hold frozen items. Other objects (numbers,
    text, frames, nested results, which freeze themselves) are returned as they are."""
    t = type(value)
    try:
        if t in _AS_IS:  # numbers, text, None, frames, tables: the common case, one look-up
            return value
    except TypeError:  # a type made unhashable by its metaclass: not one of them
        return _freeze_other(value, t)
    if t is dict:
        out = FrozenDict(value)  # a copy: the caller's dict stays as it is
        for k, v in value.items():
            if (f := freeze(v)) is not v:
                dict.__setitem__(out, k, f)
        return out
    if t is list:
        return FrozenList([freeze(v) for v in value])
    if t is tuple:  # a plain tuple (a named tuple keeps its type: below)
        for i, v in enumerate(value):
            if (f := freeze(v)) is not v:
                return (*value[:i], f, *[freeze(w) for w in value[i + 1 :]])
        return value
    return _freeze_other(value, t)


#: types that :func:`freeze` returns as they are (no array, dict, list, tuple or set): the
#: built-in scalars from the start, any other such type once met (at most ``_AS_IS_LIMIT``)
_AS_IS: set = {type(None), bool, int, float, complex, str, bytes, frozenset}
_AS_IS_LIMIT = 512


def _freeze_other(value, t: type):
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        return value
    if isinstance(value, FrozenDict):  # its subclasses keep their type: freeze the values in place
        for k, v in list(value.items()):
            if (f := freeze(v)) is not v:
                dict.__setitem__(value, k, f)
        return value
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, FrozenList):
        for i, v in enumerate(list(value)):
            if (f := freeze(v)) is not v:
                list.__setitem__(value, i, f)
        return value
    if isinstance(value, list):
        return FrozenList(freeze(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):  # a named tuple keeps its type
        items = [freeze(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else tuple(items)
    if isinstance(value, set):
        return frozenset(value)
    if value.__class__ is t and not isinstance(value, tuple) and len(_AS_IS) < _AS_IS_LIMIT:
        try:
            _AS_IS.add(t)  # never a container: the next value of this type is returned at once
        except TypeError:  # an unhashable type: looked at each time
            pass
    return value


_freeze = freeze  # the name used before
#: the field names of each result class (``dataclasses.fields`` builds its tuple at every call)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass(frozen=True, eq=False)
class Result:
    """Common behaviour of every result; subclasses define the fields and ``_records()``.

    Results are immutable: array fields are read-only (``res.risk[:] = 0`` raises), dict fields
    read-only mappings and list fields read-only lists, at every depth (``res.details["x"] = 1``
    and ``res.parameters["keys"].append(...)`` raise), so that a headline number can never
    disagree with the per-record values it was computed from.
    """

    backend: str = field(default="polars", repr=False, kw_only=True)
    #: the caller's row labels (a pandas index that is not 0..n-1), given back by ``to_frame()``
    row_index: Any = field(default=None, repr=False, kw_only=True)
    #: ``(column name, values)`` of the caller's identifier column (``id=``), first in ``to_frame()``
    row_ids: Any = field(default=None, repr=False, kw_only=True)
    #: with an out-of-core engine (DuckDB, Spark): the records each row of the per-record arrays
    #: stands for (the rows are the distinct patterns of a compressed table); None in memory
    row_counts: Any = field(default=None, repr=False, kw_only=True)
    #: the records handle the engine built (``sdckit.engines.records``): every frame the result
    #: hands back is built through it (:meth:`to_frame`, :meth:`write_records`); with an
    #: out-of-core engine it holds the engine and its compressed table, to map per-row values
    #: back to records. The measure gives it at construction: a result imports no engine.
    records: Any = field(default=None, repr=False, kw_only=True)

    #: names of the headline attributes shown by ``repr()``
    _headline: ClassVar[tuple] = ()

    if TYPE_CHECKING:  # every subclass has ``n`` (a field or a property); not a field of its own here

        @property
        def n(self) -> int: ...

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:  # keep the headline repr: @dataclass would write its own
            cls.__repr__ = Result.__repr__  # type: ignore[method-assign]

    @property
    def records_source(self):
        """With an out-of-core engine: the records handle, which knows where the records are
        (engine and compressed table); None in memory."""
        records = self.records
        return records if records is not None and records.stored else None

    def __post_init__(self):
        # freezing the fields is part of construction (a frozen dataclass sets them here, once)
        names = _FIELD_NAMES.get(type(self))
        if names is None:
            names = _FIELD_NAMES[type(self)] = tuple(f.name for f in fields(self))
        values = self.__dict__
        for name in names:
            value = values[name] if name in values else getattr(self, name)
            try:
                if type(value) in _AS_IS:  # numbers, text, None, frames: nothing to freeze
                    continue
            except TypeError:  # a type made unhashable by its metaclass
                pass
            frozen = freeze(value)
            if frozen is not value:
                object.__setattr__(self, name, frozen)

    # -- to override -------------------------------------------------------------------------
    def summary(self) -> Summary:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - abstract
        """Aggregates only, JSON-serialisable."""
        raise NotImplementedError

    def _records(self) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- common ------------------------------------------------------------------------------
    def __len__(self) -> int:
        """Number of records the result describes."""
        return int(self.n)

    # -- rows with multiplicities (out-of-core engines) --------------------------------------
    def _count(self, mask) -> int:
        """Records where ``mask`` (one value per row) holds."""
        mask = np.asarray(mask, dtype=bool)
        if self.row_counts is None:
            return int(np.count_nonzero(mask))
        return int(np.asarray(self.row_counts)[mask].sum())

    def _total(self, x) -> float:
        """Sum over records of ``x`` (one value per row)."""
        x = np.asarray(x, dtype=float)
        return float(np.sum(x)) if self.row_counts is None else float(np.dot(x, self.row_counts))

    def _quantiles(self, x, probs) -> np.ndarray:
        """``np.quantile`` (linear) over records of ``x`` (one value per row)."""
        return weighted_quantiles(x, self.row_counts, probs)

    # -- records -----------------------------------------------------------------------------
    def to_frame(self):
        """Per-record values as a frame of the caller's type (pandas, Polars or PyArrow).

        The rows are in input row order; a pandas input's index is kept and the column given
        as ``id=`` comes first, so the result joins back to the caller's records by label or by
        identifier. This is record-level output: treat it as confidential as the microdata it
        was computed from. With an out-of-core engine the engine maps the values to the records
        and the whole output is collected (same columns; a file, a DuckDB relation or a Spark
        DataFrame gives a Polars frame); :meth:`write_records` writes it without collecting.
        """
        return self._native(self._records())

    def write_records(self, path, *, overwrite: bool = False):
        """Write the per-record values (:meth:`to_frame`) to a Parquet or CSV file, atomically.

        With an out-of-core engine the engine writes Parquet itself: nothing record-level
        passes through Python. DuckDB writes one file. Spark writes a Parquet dataset: ``path``
        is a folder of part files (``part-00000-...parquet``, ...), one per partition, each
        written by its own task (no step gathers the records in one partition); the part
        files in name order hold the records in input order, and the ``id=`` column, when
        given, joins them back. Every Parquet reader reads the folder:
        ``polars.read_parquet(path)``, ``pyarrow.dataset.dataset(path)``, DuckDB's
        ``read_parquet('path/*.parquet')``. This is record-level output: treat it as
        confidential as the microdata.
        """
        from .._validation import check_new_file

        check_new_file(path, overwrite)  # before any work, with every engine
        if self.records_source is not None:
            return self.records.write(self._records(), path, ids=self.row_ids, overwrite=overwrite)
        from ..io import write_records

        return write_records(self.to_frame(), path, overwrite=overwrite)

    def _native(self, columns: dict):
        """Per-record ``columns`` as the caller's frame type, with the identifier column (``id=``)
        first and the caller's pandas index (built by the records handle)."""
        return self._handle().frame(columns, self.backend, self.row_index, ids=self.row_ids)

    def _table(self, columns: dict):
        """A small table (aggregates, one row per class, cell or estimate) as the caller's frame
        type (no row index: these are not records)."""
        return self._handle().table(columns, self.backend)

    def _handle(self):
        """The records handle the measure gave; an error naming it when the result was built
        without one."""
        if self.records is None:
            from .._errors import SdcError

            raise SdcError(
                f"records: this {type(self).__name__} was built without a records handle; "
                "expected one from the engine (sdckit.engines.local_records())"
            )
        return self.records

    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        parts = []
        for name in self._headline:
            try:
                value = getattr(self, name)
            except Exception:  # a headline that cannot be computed is left out, never raised
                continue
            if isinstance(value, Mapping):
                value = "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) + "}"
            elif isinstance(value, (tuple, list)):
                value = ", ".join(fmt(v) for v in value)
            else:
                value = fmt(value)
            parts.append(f"{name}={value}")
        if not parts:
            try:
                parts.append(f"n={len(self)}")
            except Exception:
                pass
        return f"<{type(self).__name__} {' '.join(parts)}>"


def json_safe(obj):
    """``obj`` for JSON: mappings with text keys, lists for sequences, Python numbers, NaN and
    infinities as None; text and None unchanged."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    v = float(obj)
    return v if math.isfinite(v) else None


def weighted_quantiles(x, counts, probs) -> np.ndarray:
    """``np.quantile(np.repeat(x, counts), probs)`` (linear interpolation) without repeating.

    With N records, quantile p sits at position h = (N - 1) p of the sorted records; the
    value is x_(floor h) + (h - floor h) (x_(floor h + 1) - x_(floor h)).
    """
    x = np.asarray(x, dtype=float)
    probs = np.atleast_1d(np.asarray(probs, dtype=float))
    if counts is None:
        return np.quantile(x, probs)
    order = np.argsort(x, kind="stable")
    xs, cs = x[order], np.asarray(counts, dtype=np.int64)[order]
    keep = cs > 0
    xs, cs = xs[keep], cs[keep]
    ends = np.cumsum(cs)  # records up to and including each value
    h = (ends[-1] - 1) * probs
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, ends[-1] - 1)
    a = xs[np.searchsorted(ends, lo, side="right")]
    b = xs[np.searchsorted(ends, hi, side="right")]
    t = h - lo
    return a + t * (b - a)


def new_axes(ax):
    """Return ``ax`` or a fresh matplotlib Axes (matplotlib imported only here)."""
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from .._errors import SdcError

        raise SdcError("plot: matplotlib is not installed; install sdckit[plot]") from exc
    _, ax = plt.subplots(figsize=(6, 4))
    return ax
