"""Reading the small label tables of encoded key variables (one value per category) and
building per-record text from them: the Polars engine's side of SUDA's MSU text and of the
log-linear model's numeric labels."""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["label_numbers", "label_values", "msu_text"]


def label_values(labels) -> list:
    """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
    return labels.to_list()


def label_numbers(labels) -> np.ndarray | None:
    """The category labels as numbers when R would read the column as numeric (numbers, or
    text that all parses as numbers, as ``read.csv`` does); else None (a factor)."""
    if labels.dtype.is_numeric():
        return labels.cast(pl.Float64).to_numpy()
    if labels.dtype == pl.String:
        try:
            return labels.cast(pl.Float64, strict=True).to_numpy()
        except Exception:  # noqa: BLE001 - not all numbers: a factor
            return None
    return None


def msu_text(
    keys,
    labels,
    patterns: np.ndarray,
    pattern_ids: np.ndarray,
    msu_pattern: np.ndarray,
    msu_subset: np.ndarray,
    subsets,
    n_patterns: int,
):
    """Per record, its MSUs as text (``"a=1; b=2, c=3"``: MSUs separated by ``"; "``, in the
    order found), as a column for the result frame.

    ``msu_pattern[t]`` / ``msu_subset[t]``: pattern and variable set of MSU t (MSUs come in
    blocks of one variable set); ``pattern_ids``: each record's pattern.
    """

    if msu_pattern.size == 0:
        return pl.Series("msus", [""] * len(pattern_ids), dtype=pl.String)
    text_labels = [lab.cast(pl.String) for lab in labels]
    parts = []
    bounds = np.flatnonzero(np.diff(msu_subset)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, msu_subset.size]):
        S = subsets[int(msu_subset[lo])]
        g = msu_pattern[lo:hi]
        exprs = []
        for t, j in enumerate(S):
            if t:
                exprs.append(pl.lit(", "))
            exprs += [pl.lit(f"{keys[j]}="), pl.lit(text_labels[j].gather(patterns[g, j]))]
        parts.append(pl.select(pl.lit(pl.Series("p", g)).alias("p"), pl.concat_str(exprs).alias("t")))
    table = pl.concat(parts).group_by("p", maintain_order=True).agg(pl.col("t").str.join("; "))
    text = np.full(n_patterns, "", dtype=object)
    text[table["p"].to_numpy()] = table["t"].to_numpy()
    return pl.Series("msus", text[pattern_ids], dtype=pl.String)
