"""The report's figures as inline SVG, drawn with matplotlib from aggregates only.

Every figure is a :class:`matplotlib.figure.Figure` (never pyplot: no global figure state),
saved as SVG with text kept as text (``svg.fonttype = "none"``: small, searchable, drawn in
the reader's sans-serif font), a fixed hash salt per figure and no date, so that the same
assessment gives the same bytes. The SVG is made safe to inline: no XML header or DOCTYPE, no
namespace URLs, ``href`` instead of ``xlink:href``, and every id prefixed with the figure's id
so that several figures can share one page. Nothing here receives a per-record value: the
inputs are counts on fixed bins, shares and names of variables and variants.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

from .._errors import SdcError

__all__ = [
    "PALETTE",
    "bars",
    "confidentiality_grid",
    "power_of_ten",
    "grouped_bars",
    "histogram",
    "risk_utility",
    "svg_of",
]

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD")
_RC = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "legend.frameon": False,
    "legend.fontsize": 8.0,
}


def _matplotlib():
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the environment
        raise SdcError("to_html: the report's figures need matplotlib; install sdckit[report]") from None
    return matplotlib


@contextmanager
def _style(fig_id: str):
    """matplotlib settings for one figure (restored afterwards), with a hash salt of its own."""
    mpl = _matplotlib()
    with mpl.rc_context({**_RC, "svg.hashsalt": f"sdckit-{fig_id}"}):
        yield


def _new(width: float = 6.6, height: float = 3.4):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _t(text) -> str:
    """A name as literal matplotlib text (a ``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


_ID = re.compile(r'\sid="([^"]*)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]*)')


def svg_of(fig, fig_id: str, label: str) -> str:
    """The figure as an SVG element to inline in HTML (see the module docstring)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text)
    text = re.sub(r'\s+version="1\.1"', "", text)
    text = re.sub(r'<style type="text/css">.*?</style>', "", text, flags=re.S)
    text = text.replace("xlink:href=", "href=")
    used = set(m.group(2) for m in _REF.finditer(text))
    text = _ID.sub(lambda m: f' id="{fig_id}-{m.group(1)}"' if m.group(1) in used else "", text)
    text = _REF.sub(lambda m: f"{m.group(1)}{fig_id}-{m.group(2)}", text)
    label = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return text.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1).strip()


def _decades(ax) -> None:
    """Label the decades of a log axis only, as plain text (10⁻³: no mathtext to parse; minor
    ticks unlabelled)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(base=10.0, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(power_of_ten))
    ax.xaxis.set_minor_formatter(NullFormatter())


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(x: float, _pos=None) -> str:
    """``10⁻³`` for 0.001, ``1`` for 1, ``10`` for 10."""
    if x <= 0:
        return ""
    p = int(round(np.log10(x)))
    return "1" if p == 0 else "10" if p == 1 else "10" + str(p).translate(_SUPERSCRIPT)


def _legend(ax, n_series: int) -> None:
    if n_series > 1:
        ax.legend(loc="best")


def histogram(
    fig_id: str,
    edges: np.ndarray,
    series: Sequence[tuple[str, Sequence[int]]],
    *,
    xlabel: str,
    ylabel: str,
    threshold: float | None = None,
    threshold_label: str = "",
) -> str:
    """Counts on log-spaced bins: the first series filled, the others as outlines; an optional
    vertical line (the threshold)."""
    counts = np.array([list(c) for _, c in series], dtype=float)
    nz = np.flatnonzero(counts.sum(axis=0) > 0)
    lo = int(nz[0]) if nz.size else 0
    hi = int(nz[-1]) + 1 if nz.size else len(edges) - 1
    with _style(fig_id):
        fig = _new()
        ax = fig.add_subplot()
        for i, (name, _) in enumerate(series):
            vals, e = counts[i, lo:hi], edges[lo : hi + 1]
            color = PALETTE[i % len(PALETTE)]
            if i == 0:
                ax.stairs(vals, e, fill=True, color=color, alpha=0.85, label=_t(name))
            else:
                ax.stairs(vals, e, fill=False, color=color, linewidth=1.6, label=_t(name))
        ax.set_xscale("log")
        _decades(ax)
        if threshold is not None and threshold > 0:
            ax.axvline(threshold, color="#C44E52", linestyle="--", linewidth=1.2, label=_t(threshold_label))
        ax.set_xlabel(_t(xlabel))
        ax.set_ylabel(_t(ylabel))
        if len(series) > 1 or threshold is not None:
            ax.legend(loc="best")
        return svg_of(fig, fig_id, xlabel)


def grouped_bars(
    fig_id: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    horizontal: bool = False,
    percent: bool = False,
) -> str:
    """One group of bars per category, one bar per series (variant)."""
    n_cat, n_ser = len(categories), max(len(series), 1)
    width = 0.8 / n_ser
    pos = np.arange(n_cat)
    height = max(2.6, 0.28 * n_cat * (1 + 0.35 * (n_ser - 1)) + 1.0) if horizontal else 3.4
    with _style(fig_id):
        fig = _new(height=min(height, 9.0))
        ax = fig.add_subplot()
        for i, (name, vals) in enumerate(series):
            v = np.asarray(vals, dtype=float) * (100.0 if percent else 1.0)
            at = pos - 0.4 + width * (i + 0.5)
            draw = ax.barh if horizontal else ax.bar
            draw(at, v, width * 0.95, color=PALETTE[i % len(PALETTE)], label=_t(name))
        labels = [_t(c) for c in categories]
        if horizontal:
            ax.set_yticks(pos, labels)
            ax.invert_yaxis()
            ax.set_xlabel(_t(xlabel))
        else:
            ax.set_xticks(pos, labels)
            ax.set_xlabel(_t(xlabel))
            ax.set_ylabel(_t(ylabel))
        _legend(ax, len(series))
        return svg_of(fig, fig_id, ylabel or xlabel)


def bars(
    fig_id: str, labels: Sequence[str], values: Sequence[float], groups: Sequence[int], *, xlabel: str, legend: dict
) -> str:
    """Horizontal bars, coloured by group (e.g. the size of a key combination)."""
    pos = np.arange(len(labels))
    with _style(fig_id):
        fig = _new(height=min(max(2.4, 0.26 * len(labels) + 1.0), 9.0))
        ax = fig.add_subplot()
        colors = [PALETTE[(g - 1) % len(PALETTE)] for g in groups]
        ax.barh(pos, values, 0.75, color=colors)
        ax.set_yticks(pos, [_t(s) for s in labels])
        ax.invert_yaxis()
        ax.set_xlabel(_t(xlabel))
        from matplotlib.patches import Patch

        present = [g for g in legend if g in set(groups)]
        if len(present) > 1:
            ax.legend(handles=[Patch(color=PALETTE[(g - 1) % len(PALETTE)], label=_t(legend[g])) for g in present])
        return svg_of(fig, fig_id, xlabel)


def risk_utility(
    fig_id: str,
    points: Sequence[tuple[str, float, float]],
    *,
    ylabel: str,
    target: float | None,
    xlabel: str = "loss of every change (mean lambda_j, unit-free)",
) -> str:
    """One point per variant: information loss (x) against risk (y), with the risk target."""
    with _style(fig_id):
        fig = _new()
        ax = fig.add_subplot()
        markers = "osD^vP*X"
        for i, (name, x, y) in enumerate(points):
            ax.scatter(
                [x],
                [100.0 * y],
                s=52,
                marker=markers[i % len(markers)],
                color=PALETTE[i % len(PALETTE)],
                edgecolors="white",
                linewidths=0.6,
                zorder=3,
                label=_t(name),
            )
        if target is not None:
            ax.axhline(100.0 * target, color="#C44E52", linestyle="--", linewidth=1.1, label="target")
        ax.set_xlabel(_t(xlabel))
        ax.set_ylabel(_t(ylabel))
        ax.margins(x=0.1, y=0.15)
        ax.set_ylim(bottom=0)
        # the names in a legend beside the plot: points of equal loss and risk would hide labels
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return svg_of(fig, fig_id, "risk against information loss")


#: record-count classes of the confidentiality plot's cells, and their colours (light to dark)
COUNT_CLASSES = ((1, 9), (10, 99), (100, 999), (1000, 9999), (10000, None))
_CLASS_COLORS = ("#c6dbef", "#6baed6", "#2171b5", "#08519c", "#08306b")


def confidentiality_grid(
    fig_id: str, grid: Sequence[Sequence[int]], x_labels: Sequence[str], y_labels: Sequence[str]
) -> str:
    """Records per (neighbours, perturbation) cell, coloured by count class (1-9, 10-99, ...);
    only non-empty cells are drawn (one rectangle each)."""
    from matplotlib.patches import Patch

    g = np.asarray(grid, dtype=np.int64)
    rows = np.flatnonzero(g.sum(axis=1) > 0)
    top = int(rows[-1]) + 1 if rows.size else 1
    g = g[:top]
    r, c = np.nonzero(g)
    cls = np.searchsorted([lo for lo, _ in COUNT_CLASSES], g[r, c], side="right") - 1
    with _style(fig_id):
        fig = _new(height=3.8)
        ax = fig.add_subplot()
        ax.bar(c, 0.94, width=0.94, bottom=r + 0.03, align="edge", color=[_CLASS_COLORS[k] for k in cls])
        ax.set_xlim(0, g.shape[1])
        ax.set_ylim(0, top)
        shown = [i for i, lab in enumerate(x_labels) if lab]
        # column 0 holds the unchanged records (label at its centre); the others are labelled at
        # their lower edge, on the decades
        ax.set_xticks([i + 0.5 if i == 0 else i for i in shown], [x_labels[i] for i in shown])
        ax.set_yticks(np.arange(top) + 0.5, list(y_labels[:top]))
        ax.set_xlabel("perturbation ||y - x|| / ||x|| (log scale; first column: unchanged)")
        ax.set_ylabel("original records within the critical distance")
        used = sorted(set(cls.tolist()))
        handles = [
            Patch(color=_CLASS_COLORS[k], label=f"{lo:,}+" if hi is None else f"{lo:,}-{hi:,}")
            for k, (lo, hi) in enumerate(COUNT_CLASSES)
            if k in used
        ]
        ax.legend(handles=handles, title="records", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return svg_of(fig, fig_id, "confidentiality plot")
