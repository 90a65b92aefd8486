"""The partner loop of rank swapping compiled by Numba, when Numba is installed (the extra
``sdckit[fast]``): the step of :func:`sdckit._core.rank_swap.swap_partners` rank by rank, with
the same draws, so the same partners (its tests compare the two).

Numba costs once per process: its import and the loading of the machine code (compiled on the
first run ever and cached on disk), together about 0.5-1 s on an idle machine. The compiled
loop is therefore taken when Numba is loaded already or when the swap has at least
:data:`JIT_MIN_VALUES` values, where the pure-Python loop takes about as long.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

__all__ = ["JIT_MIN_VALUES", "swap_partners_jit", "use_jit"]

#: values of one swap from which the compiled loop is worth Numba's one-off cost
JIT_MIN_VALUES = 2_000_000

_compiled = None
_installed: bool | None = None


def use_jit(m: int) -> bool:
    """Whether the compiled loop is taken for a swap of ``m`` values: Numba installed, and
    loaded already or ``m`` at least :data:`JIT_MIN_VALUES`."""
    if not _importable():
        return False
    return _compiled is not None or "numba" in sys.modules or m >= JIT_MIN_VALUES


def _importable() -> bool:
    global _installed
    if _installed is None:
        _installed = importlib.util.find_spec("numba") is not None
    return _installed


def _kernel():
    global _compiled
    if _compiled is None:
        import numba

        _compiled = numba.njit(cache=True, nogil=True)(_partner_loop)
    return _compiled


def swap_partners_jit(m: int, width: int, rng: np.random.Generator, share: int, block: int) -> np.ndarray:
    """The partners of :func:`swap_partners` (``share``: its ``_REJECTION_SHARE``, ``block``:
    the draws per block); the loop stops when a block is used up and goes on with the next."""
    if m < 2 or width < 1:
        return np.arange(m, dtype=np.int64)
    run = _kernel()
    done = np.zeros(m, np.uint8)
    partner = np.arange(m, dtype=np.int64)
    state = np.array([0, min(width, m - 1), 0], dtype=np.int64)  # rank, free ranks in the window, draws used
    while True:
        draws = rng.random(block)
        if run(done, partner, draws, state, m, width, share) == 0:
            return partner
        state[2] = 0


def _partner_loop(done, partner, draws, state, m, width, share):  # pragma: no cover - compiled
    """Ranks from ``state[0]`` on; returns 1 when a draw is needed past the block (``state``
    holds where to go on), 0 at the end."""
    i, free, k = state[0], state[1], state[2]
    n_draws = draws.size
    cut = m - 1 - width
    while i < m:
        if not done[i]:
            hi = i + width if i < cut else m - 1
            span = hi - i
            if free:
                if free * share >= span:  # by rejection
                    while True:
                        if k >= n_draws:
                            state[0], state[1], state[2] = i, free, k
                            return 1
                        j = i + 1 + int(draws[k] * span)
                        k += 1
                        if not done[j]:
                            break
                else:  # the free ranks listed
                    if k >= n_draws:
                        state[0], state[1], state[2] = i, free, k
                        return 1
                    u = draws[k]
                    k += 1
                    count = 0
                    for r in range(i + 1, hi + 1):
                        count += done[r] == 0
                    t = int(u * count)
                    j = i + 1
                    for r in range(i + 1, hi + 1):
                        if done[r] == 0:
                            if t == 0:
                                j = r
                                break
                            t -= 1
                done[j] = 1
                partner[i] = j
                partner[j] = i
                free -= 1
            done[i] = 1
        if i < cut:
            free += done[i + 1]
        elif i + 1 < m and not done[i + 1]:
            free -= 1
        i += 1
    return 0
