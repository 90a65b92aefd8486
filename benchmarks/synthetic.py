"""Seeded synthetic microdata for the benchmarks (and for tests that need a big table).

``make_keys`` builds a Polars DataFrame of categorical key variables with skewed (Zipf-like)
category frequencies, an optional design weight, optional missing key values and optional
household ids. Everything is vectorised NumPy: 10**7 rows x 7 keys take a few seconds.

Layout of the result (columns in this order)::

    k0, k1, ..., k{n_keys-1}   key variables
    w                          design weight (weights=True), float64, >= 1
    hid                        household id (household=True), int64, households of 1-8 members

Properties that benchmarks can rely on
---------------------------------------
* Key ``j`` has ``cards[j]`` categories; category of rank ``r`` (1-based) has probability
  ``p_r = (1/r) / sum_{s=1..R} 1/s`` (Zipf with exponent 1). Rank 1 is the most frequent.
* Even-numbered keys (k0, k2, ...) hold strings (``"k0_c00"``, ``"k0_c01"``, ...; the label of
  rank ``r`` is ``f"k{j}_c{r-1:02d}"``); odd-numbered keys hold Int32 labels that are neither
  0-based nor contiguous (``label = 10 * (r - 1) + j + 1``), so an encoder cannot take the
  labels for codes.
* ``missing``: every key value is set to null independently with that probability.
* Independent random streams (``numpy.random.SeedSequence(seed).spawn``) are used for each
  key's values, each key's missing mask, the weights and the households. Hence the same seed
  with ``missing=0.0`` and ``missing=0.05`` gives the *same* key values, the second with holes
  punched in -- the two timings compare the same table.
* ``weights=True``: ``w = 1 + lognormal(log(100), 0.8)`` (median about 101, all >= 1).
* ``household=True``: households of 1-8 members (size probabilities
  0.25, 0.25, 0.18, 0.14, 0.08, 0.05, 0.03, 0.02), rows of a household are contiguous,
  ids 0, 1, 2, ... in row order; the first key (a "region") and the weight are constant
  within a household, as in a household survey.

Run ``python benchmarks/synthetic.py [n]`` to time the generator.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import polars as pl

from _common import print_conditions

__all__ = ["DEFAULT_CARDS", "default_cards", "zipf_probabilities", "make_keys"]

DEFAULT_CARDS = (2, 5, 10, 20, 30, 40, 50)

_HH_SIZE_P = np.array([0.25, 0.25, 0.18, 0.14, 0.08, 0.05, 0.03, 0.02])


def default_cards(n_keys: int) -> tuple[int, ...]:
    """Cardinalities used when ``cards`` is not given.

    ``DEFAULT_CARDS`` for 7 keys; otherwise ``n_keys`` values spread geometrically from 2 to 50
    (rounded), and ``(10,)`` for a single key.
    """
    if n_keys < 1:
        raise ValueError("n_keys must be >= 1")
    if n_keys == len(DEFAULT_CARDS):
        return DEFAULT_CARDS
    if n_keys == 1:
        return (10,)
    return tuple(int(round(x)) for x in np.geomspace(2, 50, n_keys))


def zipf_probabilities(card: int) -> np.ndarray:
    """``p_r`` proportional to ``1 / r`` for ranks ``r = 1..card``."""
    p = 1.0 / np.arange(1, card + 1, dtype=float)
    return p / p.sum()


_TABLE_BITS = 20


def _draw_codes(rng: np.random.Generator, card: int, size: int) -> np.ndarray:
    """Zipf-distributed codes 0..card-1 (code 0 most frequent).

    Inverse-CDF sampling through a lookup table of ``2**20`` equal-probability slots (each
    slot holds the code whose CDF interval contains the slot midpoint), so every category
    probability is exact to within ``2**-20``; a table gather is ~10x faster than
    ``searchsorted`` on 10**7 draws.
    """
    cdf = np.cumsum(zipf_probabilities(card))
    cdf[-1] = 1.0
    slots = (np.arange(1 << _TABLE_BITS) + 0.5) / (1 << _TABLE_BITS)
    table = np.searchsorted(cdf, slots, side="right").clip(0, card - 1).astype(np.int32)
    return table[rng.integers(0, 1 << _TABLE_BITS, size=size, dtype=np.int32)]


def _household_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """Household id of each of ``n`` rows, households of 1-8 contiguous rows."""
    # enough households for n rows with overwhelming probability (mean size ~2.9); top up if not
    sizes = rng.choice(np.arange(1, 9), size=max(n // 2 + 16, 16), p=_HH_SIZE_P)
    while sizes.sum() < n:
        sizes = np.concatenate([sizes, rng.choice(np.arange(1, 9), size=max(n // 2, 16), p=_HH_SIZE_P)])
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)[:n]


def make_keys(
    n: int,
    n_keys: int = 7,
    cards=None,
    missing: float = 0.0,
    seed: int = 0,
    weights: bool = True,
    household: bool = False,
) -> pl.DataFrame:
    """Synthetic key variables with Zipf-like category frequencies (see the module docstring).

    Parameters
    ----------
    n : int
        Number of records.
    n_keys : int, default 7
        Number of key variables ``k0..k{n_keys-1}``.
    cards : sequence of int, optional
        Number of categories of each key (length ``n_keys``, each >= 1). Default
        :func:`default_cards` (``(2, 5, 10, 20, 30, 40, 50)`` for 7 keys).
    missing : float in [0, 1), default 0
        Probability that a key value is missing (null), independently per value.
    seed : int, default 0
    weights : bool, default True
        Add the weight column ``w`` (float64, >= 1).
    household : bool, default False
        Add the household id column ``hid`` (households of 1-8 members; the first key and
        the weight are constant within a household).

    Returns
    -------
    polars.DataFrame
    """
    n = int(n)
    if n < 0:
        raise ValueError("n must be >= 0")
    cards = default_cards(n_keys) if cards is None else tuple(int(c) for c in cards)
    if len(cards) != n_keys:
        raise ValueError(f"cards has {len(cards)} entries; expected n_keys={n_keys}")
    if any(c < 1 for c in cards):
        raise ValueError("every cardinality must be >= 1")
    if not 0.0 <= missing < 1.0:
        raise ValueError("missing must be in [0, 1)")

    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2 * n_keys + 2)]
    key_rng, miss_rng = streams[:n_keys], streams[n_keys : 2 * n_keys]
    w_rng, hh_rng = streams[2 * n_keys], streams[2 * n_keys + 1]

    hid = _household_ids(hh_rng, n) if household else None
    n_hh = int(hid[-1]) + 1 if household and n else 0

    cols: dict[str, pl.Series] = {}
    for j, card in enumerate(cards):
        name = f"k{j}"
        if household and j == 0:
            codes = _draw_codes(key_rng[j], card, n_hh)[hid]
        else:
            codes = _draw_codes(key_rng[j], card, n)
        idx = pl.Series(name, codes, dtype=pl.Int32)
        if missing > 0:
            holes = np.flatnonzero(miss_rng[j].random(n, dtype=np.float32) < missing)
            if holes.size:
                idx = idx.scatter(holes, None)
        if j % 2 == 0:
            labels = pl.Series(name, [f"k{j}_c{r:02d}" for r in range(card)], dtype=pl.String)
        else:
            labels = pl.Series(name, 10 * np.arange(card, dtype=np.int32) + j + 1, dtype=pl.Int32)
        cols[name] = labels.gather(idx).alias(name)

    if weights:
        if household:
            w = 1.0 + w_rng.lognormal(np.log(100.0), 0.8, size=n_hh)[hid]
        else:
            w = 1.0 + w_rng.lognormal(np.log(100.0), 0.8, size=n)
        cols["w"] = pl.Series("w", w, dtype=pl.Float64)
    if household:
        cols["hid"] = pl.Series("hid", hid, dtype=pl.Int64)
    return pl.DataFrame(cols)


if __name__ == "__main__":  # pragma: no cover - manual timing
    print_conditions()
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7
    for miss in (0.0, 0.05):
        t = time.perf_counter()
        df = make_keys(n, missing=miss, household=True)
        dt = time.perf_counter() - t
        print(f"n={n:,} missing={miss}: {dt:.2f} s, {df.estimated_size() / 2**20:.0f} MiB")
    print(df.head())
