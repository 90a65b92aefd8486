"""Base classes for result objects."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._frame import to_native

__all__ = ["Result", "Summary", "fmt"]


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
        return f"{v:.6g}"
    if value is None:
        return "-"
    return str(value)


@dataclass(frozen=True)
class Summary:
    """A printable summary: a title and sections of (label, value) rows or tables.

    ``str(summary)`` gives the text form, ``summary.to_html()`` (and Jupyter's rich display)
    the HTML form.
    """

    title: str
    sections: tuple = ()
    notes: tuple = ()

    def __str__(self) -> str:
        lines = [self.title, "=" * len(self.title)]
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


@dataclass(frozen=True, eq=False)
class Result:
    """Common behaviour of every result; subclasses define the fields and ``_records()``."""

    backend: str = field(default="polars", repr=False, kw_only=True)

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

    def to_frame(self):
        """Per-record values as a frame of the caller's type (pandas, Polars or PyArrow).

        The rows are in input row order. This is record-level output: treat it as
        confidential as the microdata it was computed from.
        """
        return to_native(self._records(), self.backend)

    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} records>"


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
