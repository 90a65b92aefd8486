"""Pure NumPy kernels on integer-coded keys and small frequency tables.

No frame library and no I/O here: inputs are integer code matrices (``-1`` = missing) and
per-pattern counts / weight sums; outputs are NumPy arrays. These functions are the test
oracles for any faster engine.
"""
