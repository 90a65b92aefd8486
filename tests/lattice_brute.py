"""The brute-force walk of a generalisation lattice shared by the tests' exhaustive oracles
(``test_arx_model``, ``test_search_tcloseness``): every node, no pruning, in mixed-radix order
of the keys' levels; not a test file."""

from __future__ import annotations

import itertools
from collections import defaultdict


def every_node(records, keys, hier):
    """Yield ``(index, levels, gen, classes)`` for every node of the lattice: ``gen`` each
    record's generalised key values (through the hierarchy's rows ``hier[key]``: column 0 the
    value, then one column per level), ``classes`` ``{generalised values: [record positions]}``."""
    anc = {key: {row[0]: row for row in hier[key]} for key in keys}
    heights = [len(hier[key][0]) - 1 for key in keys]
    for index, levels in enumerate(itertools.product(*[range(h + 1) for h in heights])):
        gen = [tuple(anc[key][str(rec[key])][lev] for key, lev in zip(keys, levels)) for rec in records]
        classes = defaultdict(list)
        for i, g in enumerate(gen):
            classes[g].append(i)
        yield index, levels, gen, classes
