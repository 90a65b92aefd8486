"""ARX's model of anonymisation: full-domain generalisation over a lattice of level vectors,
record suppression up to a limit, ARX's quality models (Loss, precision, discernibility,
non-uniform entropy; :data:`METRICS`) and an optimal search.

Pure NumPy. Everything works on integer codes:

* a hierarchy is a set of integer maps, one per level step (level ``l`` code -> level ``l+1``
  code), with the number of hierarchy rows that each generalised value covers (its share of
  the domain, for the metrics);
* the records are compressed once to their distinct rows of base codes with counts, so that a
  node costs O(distinct rows) and not O(records); a node is evaluated from the smallest table
  of an already evaluated *specialisation* (a node with every level lower or equal), rolled up
  through the hierarchies' maps;
* the search visits the nodes in the order of a lower bound of the metric that never
  decreases from a node to its generalisations (ARX's: the loss without suppression) and stops
  as soon as the bound is above the best loss found: what is left cannot win, so the answer is
  the optimum; monotone criteria tag whole cones of nodes from one check, and a chain from an
  unknown node to the top is bisected for the boundary between failing and satisfying nodes
  (the idea of FLASH's paths).

References: Prasser F., Kohlmayer F. (2015), *Putting statistical disclosure control into
practice: the ARX data anonymization tool*; Kohlmayer F. et al. (2012), *Flash: efficient,
stable and optimal k-anonymity*, IEEE PASSAT; Sweeney L. (2002), *Achieving k-anonymity privacy
protection using generalization and suppression*, IJUFKS 10(5) (precision); Bayardo R.,
Agrawal R. (2005), *Data privacy through optimal k-anonymization*, ICDE (discernibility);
Gionis A., Tassa T. (2009), *k-Anonymization with minimal loss of information*, IEEE TKDE 21(2)
(non-uniform entropy); ARX's classes ``MetricMDNMLoss``, ``MetricMDNMPrecision``,
``MetricSDNMDiscernability``, ``MetricMDNUNMEntropy``, ``ILMultiDimensionalGeometricMean``,
``ILMultiDimensionalArithmeticMean``, ``ILMultiDimensionalSum`` (Apache 2.0).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "MAX_NODES",
    "Closeness",
    "METRICS",
    "Criteria",
    "Hierarchy",
    "Model",
    "NodeClasses",
    "NodeResult",
    "SearchOutcome",
    "aggregate",
    "attribute_values",
    "class_distances",
    "class_starts",
    "class_violations",
    "closeness_of",
    "combine_codes",
    "evaluate",
    "group_rows",
    "hierarchy_from_codes",
    "lattice_nodes",
    "lower_bound",
    "make_model",
    "metric_bounds",
    "node_aggregate",
    "node_classes",
    "node_values",
    "search",
    "suppressed_rows",
]

#: ARX compares information loss on its first ten decimals (``Metric.round``: floor(x * 1e10) / 1e10)
_FACTOR = 1e10
_LN2 = math.log(2.0)
#: relative slack of the entropy l-diversity test (see :func:`_entropy_ok`)
_ENTROPY_SLACK = 1e-12
#: memory for the class tables of evaluated nodes kept for rolling up (bytes)
_CACHE_BYTES = 256 * 2**20
#: nodes per block when the bounds are computed: a multiple of every SIMD width, so that each
#: block gives the floats the whole array would
_BLOCK = 1 << 16
#: rows are counted on a dense key (bincount) when the keys' radix product is at most this many
#: times the rows (plus 4096), else by sorting the keys
_DENSE = 8
#: the largest lattice searched (the product of the keys' numbers of levels); checked before
#: anything of the lattice's size is built
MAX_NODES = 2_000_000


# ----------------------------------------------------------------------------------------------
# hierarchies
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Hierarchy:
    """One key's generalisation hierarchy as integer maps.

    Attributes
    ----------
    up : tuple of int32 arrays
        ``up[l][c]`` is the level-``l+1`` code of the level-``l`` code ``c`` (``height`` maps).
    counts : tuple of int64 arrays
        ``counts[l][c]``: the number of hierarchy rows whose level-``l`` value is ``c``; ARX's
        domain share of a generalised value is ``counts[l][c] / n_rows``.
    n_rows : int
        The size of the domain: the rows of the hierarchy (ARX's ``DomainShare.getDomainSize``).
    """

    up: tuple
    counts: tuple
    n_rows: int
    _maps: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def height(self) -> int:
        return len(self.up)

    def size(self, level: int) -> int:
        return len(self.counts[level])

    def lift(self, codes: np.ndarray, a: int, b: int) -> np.ndarray:
        """Level-``a`` codes taken to level ``b`` (``b >= a``), through one composed map."""
        if a == b:
            return codes
        return self.composed(a, b)[codes]

    def composed(self, a: int, b: int) -> np.ndarray:
        """The map of level-``a`` codes to level-``b`` codes (``b > a``), composed once."""
        got = self._maps.get((a, b))
        if got is None:
            got = self.up[a]
            for lev in range(a + 1, b):
                got = self.up[lev][got]
            self._maps[(a, b)] = got
        return got


def hierarchy_from_codes(level_codes: np.ndarray) -> Hierarchy:
    """A :class:`Hierarchy` from the codes of a hierarchy table: ``level_codes[r, l]`` is the
    dense code (0..) of row ``r``'s value at level ``l``. Column 0 must hold each base value
    once and each value of a level must have one parent (checked by the caller)."""
    lc = np.asarray(level_codes, dtype=np.int64)
    n_rows, width = lc.shape
    counts = tuple(np.bincount(lc[:, lev]).astype(np.int64) for lev in range(width))
    ups = []
    for lev in range(width - 1):
        up = np.zeros(len(counts[lev]), dtype=np.int32)
        up[lc[:, lev]] = lc[:, lev + 1]
        ups.append(up)
    return Hierarchy(tuple(ups), counts, int(n_rows))


# ----------------------------------------------------------------------------------------------
# combining codes, the lattice
# ----------------------------------------------------------------------------------------------
def combine_codes(cols, sizes) -> np.ndarray:
    """One int64 key per row from integer columns (mixed radix, the first column most
    significant; the order of the keys is the lexicographic order of the rows). When the
    radix would overflow, the partial key is re-ranked first (np.unique keeps the order)."""
    n = len(cols[0]) if cols else 0
    key = None
    radix = 1
    for col, size in zip(cols, sizes):
        size = max(int(size), 1)
        if size == 1:  # one value (0): the digit adds nothing
            continue
        if key is None:
            key = np.asarray(col, dtype=np.int64).copy()
            radix = size
            continue
        if radix * size >= 2**62:
            uniq, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
            radix = len(uniq)
        key *= size
        key += col
        radix *= size
    return np.zeros(n, dtype=np.int64) if key is None else key


def lattice_nodes(heights, dtype=np.int64) -> np.ndarray:
    """Every level vector of the lattice, shape (N, m), in mixed-radix order (the first key
    most significant): node ``i``'s index is its rank in this order."""
    grids = np.indices([h + 1 for h in heights], dtype=dtype).reshape(len(heights), -1).T
    return np.ascontiguousarray(grids)


# ----------------------------------------------------------------------------------------------
# criteria and metrics
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Criteria:
    """The privacy criteria checked per equivalence class (ARX's ``KAnonymity``,
    ``DistinctLDiversity``, ``EntropyLDiversity``, ``RecursiveCLDiversity``).

    ``k``: every class has at least ``k`` records. ``l`` with ``diversity``: the sensitive
    attribute (the model's last column) takes at least ceil(l) distinct values in the class
    (all three), and ``"entropy"``: ``log2(n) - sum_s n_s log2(n_s) / n >= log2(l)``;
    ``"recursive"``: ``r_1 < c (r_l + ... + r_m)`` over the value counts in decreasing order.

    ``t`` with ``t_distance``: t-closeness of the sensitive attribute (ARX's
    ``EqualDistanceTCloseness`` and ``HierarchicalDistanceTCloseness``): the earth mover's
    distance between the class's distribution and the whole input's is at most ``t`` (see
    :class:`Closeness`).

    Monotonicity: a class made of classes that satisfy a criterion satisfies it (all six; for
    t-closeness because the earth mover's distance is convex in the class's distribution, Li,
    Li & Venkatasubramanian 2007, section 4.3). With record suppression the search also needs
    the converse for the records suppressed: a class that fails k-anonymity or distinct
    l-diversity is made of classes that all fail, so the records suppressed only shrink from a
    node to its generalisations. Entropy and recursive diversity and t-closeness lack this (a
    failing merged class may contain satisfying parts), so with a suppression limit they are
    not monotone (ARX flags them so) and no tagging is done.
    """

    k: int = 1
    l: float | None = None
    diversity: str = "distinct"
    c: float = 1.0
    t: float | None = None
    t_distance: str = "equal"


@dataclass(frozen=True)
class Closeness:
    """What t-closeness needs of the sensitive attribute, computed once from the whole input
    (ARX's ``DataManager.getDistribution`` and ``getTree``: the records suppressed later count
    in the input's distribution P).

    ``freq``: P, each sensitive code's count over ``n`` (equal distance). For the hierarchical
    distance the codes are renumbered so that the values under every node of the sensitive
    attribute's hierarchy are consecutive; for each level L = 0..H, ``node[L]`` maps each code
    to its node of level L (never decreasing; level 0 the codes themselves), ``counts[L]`` holds
    the input's records under each node and ``order[L]`` the nodes in the order ARX's tree
    lists them (the order of its sums).
    """

    freq: np.ndarray
    n: int
    node: tuple = ()
    counts: tuple = ()
    order: tuple = ()

    @property
    def height(self) -> int:
        return len(self.node) - 1

    @property
    def hierarchical(self) -> bool:
        return bool(self.node)


@dataclass(frozen=True)
class MetricSpec:
    """What ARX declares about one quality model.

    ``arx_class``: ARX's class; ``aggregate``: how the per-key values combine (``"geometric"``:
    ``ILMultiDimensionalGeometricMean``, ``"arithmetic"``, ``"sum"``, ``"none"``: one value,
    no per-key parts); ``monotonic_with_generalization`` / ``monotonic_with_suppression``: ARX's
    flags (``Metric.isMonotonic(limit)`` takes the first without a suppression limit, the second
    with one); ``gs_factor``: whether the gs-factor weighs generalisation against suppression
    (ARX's "configurable coding model"); ``independent``: the value of a node that suppresses
    nothing follows from its levels alone (no classes needed).

    The search never prunes by these flags: it prunes by lower bounds (:func:`metric_bounds`),
    valid for every metric with and without suppression, and by the cone of a checked node's
    class-based bound for discernibility.
    """

    arx_class: str
    aggregate: str
    monotonic_with_generalization: bool
    monotonic_with_suppression: bool
    gs_factor: bool
    independent: bool


#: ARX's quality models, as ARX declares them (``Metric.list()`` and each class's constructor)
METRICS = {
    "loss": MetricSpec("MetricMDNMLoss", "geometric", True, False, True, True),
    "precision": MetricSpec("MetricMDNMPrecision", "arithmetic", True, False, True, True),
    "discernibility": MetricSpec("MetricSDNMDiscernability", "none", True, False, False, False),
    "entropy": MetricSpec("MetricMDNUNMEntropy", "sum", True, False, True, True),
}


@dataclass(frozen=True)
class Model:
    """The compressed records and what the search needs about them.

    ``rows``: the columns (m, plus the sensitive attribute's codes last when there is one) of
    the distinct rows of base codes; ``counts``: records per row; ``inverse``: the row of each record.
    """

    hierarchies: tuple
    rows: tuple
    counts: np.ndarray
    inverse: np.ndarray
    n: int
    sens_size: int
    criteria: Criteria
    max_outliers: int
    metric: str
    gs_factor: float
    bound_parts: np.ndarray = field(repr=False)  # (m, max height + 1): per key and level, sum of counts x rows covered
    closeness: Closeness | None = field(default=None, repr=False)
    #: entropy: (m, max height + 1), per key and level, sum_v a_v log2(a_v / b_v) (<= 0) over the
    #: base values v (a_v records, b_v the records of v's generalised value); discernibility:
    #: (m, max height + 1), per key and level, sum of the squared class sizes of the node with
    #: that key at that level and every other key at 0; otherwise None
    metric_parts: np.ndarray | None = field(default=None, repr=False)
    #: the order in which the per-key values are aggregated (None: the keys' order)
    agg_order: tuple | None = None

    @property
    def m(self) -> int:
        return len(self.hierarchies)

    @property
    def spec(self) -> MetricSpec:
        return METRICS[self.metric]

    @property
    def metric_monotone(self) -> bool:
        """ARX's ``isMonotonic(suppression limit)`` of the metric (see :class:`MetricSpec`)."""
        spec = self.spec
        return spec.monotonic_with_generalization if self.max_outliers == 0 else spec.monotonic_with_suppression

    @property
    def monotone(self) -> bool:
        """Whether satisfying the criteria within the suppression limit is monotone in the
        levels (see :class:`Criteria`)."""
        crit = self.criteria
        if self.max_outliers == 0:
            return True
        return (crit.l is None or crit.diversity == "distinct") and crit.t is None

    @property
    def heights(self) -> list[int]:
        return [h.height for h in self.hierarchies]

    @property
    def factors(self) -> tuple[float, float]:
        """ARX's generalisation and suppression factors of the gs-factor."""
        gs = self.gs_factor
        s = 2.0 * gs if gs < 0.5 else 1.0
        g = 1.0 if gs <= 0.5 else 1.0 - 2.0 * (gs - 0.5)
        return g, s


def make_model(
    base: np.ndarray | list | tuple,
    hierarchies,
    *,
    sensitive: np.ndarray | None = None,
    sens_size: int = 0,
    criteria: Criteria,
    suppression_limit: float = 0.0,
    metric: str = "loss",
    gs_factor: float = 0.5,
    sens_levels: np.ndarray | None = None,
    sens_order: np.ndarray | None = None,
    agg_order=None,
) -> Model:
    """Compress the records (``base``: (n, m) level-0 codes, or a list of the m columns;
    ``sensitive``: codes 0..sens_size-1) to their distinct rows with counts and precompute the
    per-key bound parts.

    ARX's suppression limit is a share of the records: at most ``floor(limit * n)`` records
    may be suppressed (``ARXConfiguration``). For t-closeness with the hierarchical distance,
    ``sens_levels`` (sens_size, H + 1) gives each sensitive code's value code at every level of
    its hierarchy (a tree: one parent per value, one value at the top) and ``sens_order`` the
    codes in the order ARX's dictionary holds them (their first appearance in the data; default
    the codes' order), which fixes the order of ARX's sums. ``metric``: a name of
    :data:`METRICS`; ``agg_order``: the keys' positions in the order their values are
    aggregated (ARX's: the data's column order), which changes the last bits of the aggregate
    only."""
    if metric not in METRICS:
        raise ValueError(f"metric: {metric!r}; expected one of {', '.join(METRICS)}")
    if isinstance(base, (list, tuple)):
        cols = [np.asarray(c, dtype=np.int32) for c in base]
    else:
        base = np.asarray(base, dtype=np.int32)
        cols = [base[:, j] for j in range(base.shape[1])]
    n, m = (len(cols[0]) if cols else 0), len(cols)
    sizes = [h.size(0) for h in hierarchies]
    closeness = None
    if sensitive is not None:
        sensitive = np.asarray(sensitive, dtype=np.int32)
        if criteria.t is not None:
            levels = sens_levels if criteria.t_distance == "hierarchical" else None
            closeness, sensitive = closeness_of(sensitive, sens_size, levels, sens_order)
        cols.append(sensitive)
        sizes.append(sens_size)
    _, rows, counts, inverse = group_rows(cols, sizes, np.ones(n))
    width = max((h.height for h in hierarchies), default=0) + 1
    parts = np.zeros((m, width), dtype=np.int64)
    for j, h in enumerate(hierarchies):
        codes = rows[j]
        for lev in range(h.height + 1):
            parts[j, lev] = int(np.dot(counts, h.counts[lev][codes]))
            if lev < h.height:
                codes = h.up[lev][codes]
    extra = None
    if metric == "entropy":
        extra = _entropy_parts(cols[:m], hierarchies, width)
    elif metric == "discernibility":
        extra = _discernibility_parts(rows[:m], counts, hierarchies, width)
    return Model(
        tuple(hierarchies),
        rows,
        counts,
        inverse.reshape(-1),
        int(n),
        int(sens_size if sensitive is not None else 0),
        criteria,
        int(math.floor(suppression_limit * n)),
        metric,
        float(gs_factor),
        parts,
        closeness,
        extra,
        None if agg_order is None else tuple(int(j) for j in agg_order),
    )


def _entropy_parts(cols, hierarchies, width: int) -> np.ndarray:
    """Per key j and level L: ``G_j(L) = sum_v a_v log2(a_v / b_v)`` over the base values v
    present (a_v records), b_v the records whose level-L value is v's (ARX's
    ``MetricMDNUEntropyPrecomputed``: the sum in the order of the values' first appearance, as
    ARX's dictionary numbers them; log2 x = ln x / ln 2)."""
    out = np.zeros((len(hierarchies), width))
    for j, h in enumerate(hierarchies):
        col = cols[j]
        uniq, first = np.unique(col, return_index=True)
        order = uniq[np.argsort(first, kind="stable")]
        a = np.bincount(col, minlength=h.size(0)).astype(float)
        for lev in range(h.height + 1):
            gen = h.lift(np.arange(h.size(0)), 0, lev)
            b = np.bincount(gen, weights=a, minlength=h.size(lev))
            value = 0.0
            for v in order.tolist():  # plain float arithmetic in ARX's order
                value += a[v] * (math.log(a[v] / b[gen[v]]) / _LN2)
            out[j, lev] = value
    return out


def _discernibility_parts(rows, counts: np.ndarray, hierarchies, width: int) -> np.ndarray:
    """Per key j and level L: the sum of squared class sizes of the node with key j at L and
    every other key at level 0 (a specialisation of every node with key j at L or above)."""
    m = len(hierarchies)
    out = np.zeros((m, width))
    sizes = [h.size(0) for h in hierarchies]
    for j, h in enumerate(hierarchies):
        for lev in range(h.height + 1):
            cols = list(rows)
            cols[j] = h.lift(rows[j], 0, lev)
            _, _, c, _ = group_rows(cols, [*sizes[:j], h.size(lev), *sizes[j + 1 :]], counts, want_inverse=False)
            out[j, lev] = float(np.dot(c, c))
    return out


def closeness_of(sensitive, sens_size: int, sens_levels=None, sens_order=None) -> tuple:
    """The :class:`Closeness` of the sensitive codes (0..sens_size-1, the whole input) and the
    codes to group on: the same for the equal distance; for the hierarchical distance
    (``sens_levels``: each code's value code at every level of the hierarchy, a tree with one
    top value; ``sens_order``: the codes in ARX's dictionary order) renumbered so that each
    node's values are consecutive."""
    sensitive = np.asarray(sensitive, dtype=np.int32)
    counts = np.bincount(sensitive, minlength=sens_size).astype(np.int64)
    freq = counts / float(len(sensitive))  # ARX: cardinality / number of rows
    if sens_levels is None:
        return Closeness(freq, len(sensitive)), sensitive
    levels = np.asarray(sens_levels, dtype=np.int64)
    # lexicographic order of the paths from the top: every node's values become consecutive
    leaf_order = np.lexsort(tuple(levels[:, lev] for lev in range(levels.shape[1])))
    renumber = np.empty(sens_size, dtype=np.int64)
    renumber[leaf_order] = np.arange(sens_size)
    seen = renumber[np.arange(sens_size) if sens_order is None else np.asarray(sens_order, dtype=np.int64)]
    node, by_level, order = [], [], []
    for lev in range(levels.shape[1]):
        col = levels[leaf_order, lev]
        ids = np.zeros(sens_size, dtype=np.int64)
        ids[1:] = np.cumsum(col[1:] != col[:-1])
        node.append(ids)
        by_level.append(np.bincount(ids, weights=counts[leaf_order]).astype(np.int64))
        # ARX lists a level's nodes in the order it first reaches them over its dictionary
        _, reached = np.unique(ids[seen], return_index=True)
        order.append(np.argsort(reached, kind="stable"))
    tc = Closeness(freq[leaf_order], len(sensitive), tuple(node), tuple(by_level), tuple(order))
    return tc, renumber[sensitive].astype(np.int32)


def _arx_round(x):
    """ARX's ``Metric.round``: keep the first ten decimals (floor)."""
    return np.floor(np.asarray(x, dtype=float) * _FACTOR) / _FACTOR


def attribute_values(model: Model, levels: np.ndarray, supp_parts, n_supp) -> np.ndarray:
    """ARX's per-attribute information loss for nodes ``levels`` (N, m).

    ``supp_parts`` (N, m): per key, what the suppressed records add (Loss: the sum over them of
    the rows covered by their generalised value; entropy: ``sum_v c_v log2(c_v / S)`` over the
    generalised values v of the S suppressed records, c_v of them with v); ``n_supp`` (N,):
    suppressed records. With both zero this is the metric without suppression. g and s are the
    generalisation and suppression factors of the gs-factor (both 1 at 0.5; ARX's ``Metric``).

    Loss (``MetricMDNMLoss``): with share(v) = rows covered by v / |D|,
    ``sum = g * sum_{kept records} share + sum_{suppressed} (s == 1 ? 1 : share + s (1 - share))``
    and ``value = floor10((sum - g n / |D|) / (n - g n / |D|))`` (at least 0).

    Non-monotonic precision (``MetricMDNMPrecision``):
    ``value = (kept * level / height * g + suppressed * s) / n``.

    Non-monotonic non-uniform entropy (``MetricMDNUNMEntropy``): with G_j the generalisation
    part (:func:`_entropy_parts`, over every record, suppressed ones included),
    ``value = floor10(-(g G_j + s supp_parts_j))``.

    Discernibility has no per-attribute values: an (N, 0) array.
    """
    levels = np.atleast_2d(levels)
    if model.metric == "discernibility":
        return np.zeros((levels.shape[0], 0))
    g, s = model.factors
    n = float(model.n)
    supp_parts = np.atleast_2d(np.asarray(supp_parts, dtype=float))
    n_supp = np.asarray(n_supp, dtype=float).reshape(-1, 1)
    out = np.empty(levels.shape, dtype=float)
    for j, h in enumerate(model.hierarchies):
        lev = levels[:, j]
        if model.metric == "precision":
            rel = lev / h.height if h.height else np.zeros(len(lev))
            out[:, j] = ((n - n_supp[:, 0]) * rel * g + n_supp[:, 0] * s) / n
            continue
        if model.metric == "entropy":
            raw = model.metric_parts[j, lev] * g + supp_parts[:, j] * s
            out[:, j] = np.where(raw == 0.0, 0.0, _arx_round(-raw))
            continue
        size = float(h.n_rows)
        total = model.bound_parts[j, lev] / size
        supp_share = supp_parts[:, j] / size
        kept = total - supp_share
        removed = n_supp[:, 0] if s == 1.0 else supp_share + s * (n_supp[:, 0] - supp_share)
        raw = kept * g + removed
        low = g * n / size
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (raw - low) / (n - low) if n != low else np.zeros(len(lev))
        out[:, j] = _arx_round(np.maximum(v, 0.0))
    return out


def aggregate(values: np.ndarray, metric: str, order=None) -> np.ndarray:
    """ARX's aggregate of per-attribute values (N, m), every attribute of weight 1: the
    geometric mean of ``1 + v`` minus 1 for Loss (``ILMultiDimensionalGeometricMean``), the
    arithmetic mean ``sum_j v_j / m`` for precision (``ILMultiDimensionalArithmeticMean``),
    the sum for entropy (``ILMultiDimensionalSum``), each term taken in the keys' ``order``
    (default: as given; ARX's is the order of the columns in the data)."""
    values = np.atleast_2d(values)
    if order is not None:
        values = values[:, list(order)]
    m = values.shape[1]
    if metric == "precision":
        result = np.zeros(values.shape[0])
        for j in range(m):
            result = result + values[:, j] / m
        return result
    if metric == "entropy":
        result = np.zeros(values.shape[0])
        for j in range(m):
            result = result + values[:, j]
        return result
    result = np.ones(values.shape[0])
    for j in range(m):
        result = result * np.power(values[:, j] + 1.0, 1.0 / m)
    return result - 1.0


def lower_bound(model: Model, free_values: np.ndarray, free: np.ndarray) -> np.ndarray:
    """A lower bound of the metric of each node, whatever it suppresses, that never decreases
    from a node to its generalisations, from the per-key values without suppression.

    Loss: the loss without suppression (ARX's ``getLowerBound``): a suppressed record counts
    at least its share (``share + s (1 - share)`` with s <= 1, or 1 >= g share).
    Precision: per key, a kept record counts ``g level / height`` and a suppressed one ``s``,
    so the value is at least ``min(g level / height, s)``. ARX's bound, the first term alone,
    is too high when s < g level / height (gs-factor below 0.5) and could prune the optimum.
    Entropy: the generalisation part (ARX's bound): the suppression part ``-s sum c_v log2(c_v
    / S)`` is never negative, and the generalisation part grows with the levels (a value's
    records b_v only grow).
    Discernibility: see :func:`metric_bounds`.
    """
    if model.metric != "precision":
        return free
    _, s = model.factors
    return aggregate(np.minimum(free_values, s), model.metric, model.agg_order)


def metric_bounds(model: Model, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(free, bound)`` per node: the metric when nothing is suppressed (NaN where it needs the
    classes: discernibility) and a lower bound of the metric whatever is suppressed, that never
    decreases from a node to its generalisations.

    Discernibility (``MetricSDNMDiscernability``): ``DM = sum_{kept classes} |E|^2 + n *
    suppressed`` is at least ``DM* = sum_{classes} |E|^2`` (a suppressed class of size c counts
    n c >= c^2), and DM* never decreases from a node to a generalisation (merging classes of
    sizes a, b: (a + b)^2 >= a^2 + b^2). Each node's classes merge those of the node with only
    key j at its level (the other keys at 0), so the bound is the largest of those DM*.
    """
    nodes = np.atleast_2d(nodes)
    if model.metric == "discernibility":
        bound = np.zeros(len(nodes))
        for j in range(model.m):
            bound = np.maximum(bound, model.metric_parts[j, nodes[:, j]])
        return np.full(len(nodes), math.nan), bound
    values = attribute_values(model, nodes, np.zeros(nodes.shape), np.zeros(len(nodes)))
    free = aggregate(values, model.metric, model.agg_order)
    return free, lower_bound(model, values, free)


def node_values(model: Model, levels, supp_parts, n_supp: int) -> list[float]:
    """:func:`attribute_values` of one node, in plain float arithmetic (the same operations)."""
    if model.metric == "discernibility":
        return []
    g, s = model.factors
    n = float(model.n)
    ns = float(n_supp)
    out = []
    for j, h in enumerate(model.hierarchies):
        lev = int(levels[j])
        if model.metric == "precision":
            rel = lev / h.height if h.height else 0.0
            out.append(((n - ns) * rel * g + ns * s) / n)
            continue
        if model.metric == "entropy":
            raw = float(model.metric_parts[j, lev]) * g + float(supp_parts[j]) * s
            out.append(0.0 if raw == 0.0 else math.floor(-raw * _FACTOR) / _FACTOR)
            continue
        size = float(h.n_rows)
        total = float(model.bound_parts[j, lev]) / size
        supp_share = float(supp_parts[j]) / size
        removed = ns if s == 1.0 else supp_share + s * (ns - supp_share)
        raw = (total - supp_share) * g + removed
        low = g * n / size
        v = (raw - low) / (n - low) if n != low else 0.0
        out.append(math.floor(max(v, 0.0) * _FACTOR) / _FACTOR)
    return out


def node_aggregate(values, metric: str, order=None) -> float:
    """:func:`aggregate` of one node's values."""
    if order is not None:
        values = [values[j] for j in order]
    m = len(values)
    if metric in ("precision", "entropy"):
        result = 0.0
        for v in values:
            result += v / m if metric == "precision" else v
        return result
    result = 1.0
    for v in values:
        result *= math.pow(v + 1.0, 1.0 / m)
    return result - 1.0


# ----------------------------------------------------------------------------------------------
# node evaluation
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeResult:
    """One evaluated node: its classes' table (for rolling up), whether it satisfies the
    criteria within the suppression limit, suppressed records and the per-key suppressed parts.
    ``rows`` are decoded from the table's mixed-radix keys when first read (most tables are
    never rolled up from)."""

    table: _Rows
    counts: np.ndarray
    satisfies: bool
    n_supp: int
    supp_parts: np.ndarray
    violating_rows: np.ndarray  # bool per distinct row
    #: discernibility: ``DM`` (kept classes squared, n per suppressed record) and ``DM*`` (every
    #: class squared); NaN for the other metrics
    dm: float = math.nan
    dm_star: float = math.nan

    @property
    def rows(self) -> tuple:
        return self.table.rows


class _Rows:
    """The columns of a table of distinct rows, given directly or decoded (once, when first
    read) from their mixed-radix ``keys`` over ``sizes``."""

    def __init__(self, rows=None, keys=None, sizes=None):
        self._rows, self.keys, self.sizes = rows, keys, sizes

    @property
    def rows(self) -> tuple:
        if self._rows is None:
            self._rows = decode_keys(self.keys, self.sizes)
        return self._rows

    def nbytes(self, width: int) -> int:
        return len(self.keys) * 4 * width if self._rows is None else sum(c.nbytes for c in self._rows)


def decode_keys(keys: np.ndarray, sizes) -> tuple:
    """The int32 columns of mixed-radix ``keys`` over ``sizes`` (the first most significant)."""
    out = []
    rest = keys.copy()
    for size in reversed(sizes):
        size = max(int(size), 1)
        out.append((rest % size).astype(np.int32))
        rest //= size
    return tuple(out[::-1])


def _class_violations(model: Model, keys: np.ndarray, counts: np.ndarray):
    """Per distinct row (sorted ``keys``), whether its class violates the model's criteria."""
    return class_violations(keys, counts, model.sens_size, model.criteria, model.closeness)


def class_starts(keys: np.ndarray, sens_size: int) -> np.ndarray:
    """The first row of each class among rows sorted by ``keys`` (mixed radix, the sensitive
    code the last digit when ``sens_size``: a class is a run of rows with the same prefix)."""
    if not sens_size:
        return np.arange(len(keys))
    prefix = keys // sens_size
    return np.flatnonzero(np.r_[True, prefix[1:] != prefix[:-1]])


def class_violations(
    keys: np.ndarray, counts: np.ndarray, sens_size: int, crit: Criteria, closeness: Closeness | None = None
) -> np.ndarray:
    """Per distinct row, whether its class violates ``crit`` (ARX's definitions).

    ``keys`` are sorted mixed-radix keys of the rows (the sensitive code the last digit when
    ``sens_size``), ``counts`` the records per row. A class of ``n`` records with sensitive
    counts ``f_s`` violates k-anonymity when ``n < k``; distinct l-diversity when it has fewer
    than ``ceil(l)`` values; entropy l-diversity when also
    ``sum_s f_s ln f_s > n (ln n - ln l)``, i.e. its entropy is below ``log l`` (ARX's
    ``EntropyLDiversity``; an exact tie passes, see :func:`_entropy_ok`); recursive (c, l)-diversity when ``r_1 >= c (r_l + ... + r_m)`` over the counts in
    decreasing order (ARX's ``RecursiveCLDiversity``; Machanavajjhala et al. 2007); t-closeness
    (``closeness``, see :func:`closeness_of`) when its distance from the input's distribution
    exceeds ``t`` (:func:`class_distances`)."""
    if not sens_size:  # each row is a class
        return counts < crit.k
    starts = class_starts(keys, sens_size)
    sizes = np.add.reduceat(counts, starts) if len(keys) else counts
    bad = sizes < crit.k
    if sens_size and crit.l is not None:
        n_distinct = np.diff(np.r_[starts, len(keys)])
        if crit.diversity == "distinct":
            bad |= n_distinct < crit.l
        elif crit.diversity == "entropy":
            bad |= (n_distinct < math.ceil(crit.l)) | ~_entropy_ok(counts, n_distinct, sizes, crit.l)
        else:
            bad |= ~_recursive_ok(counts, starts, n_distinct, sizes, crit)
    if closeness is not None:
        bad |= ~(class_distances(closeness, keys % sens_size, counts, starts, sizes) <= crit.t)
    return np.repeat(bad, np.diff(np.r_[starts, len(keys)]))


def class_distances(tc: Closeness, sens, counts, starts, sizes) -> np.ndarray:
    """Per class, the earth mover's distance between its distribution of the sensitive
    attribute and the input's (ARX's ``EqualDistanceTCloseness`` or
    ``HierarchicalDistanceTCloseness``). The rows (class, sensitive code ``sens``) with
    ``counts`` records are sorted by class, then code; ``starts`` is the first row of each
    class and ``sizes`` its records.

    Equal distance, with p_s the input's share of value s and q_s the class's:
    ``D = (1 + sum_{s in class} (|p_s - q_s| - p_s)) / 2`` (= sum_s |p_s - q_s| / 2, ARX's sum)."""
    cls = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(sens)]))
    if tc.hierarchical:
        return _hierarchical_distances(tc, cls, sens, counts, sizes)
    p = tc.freq[sens]
    part = np.abs(p - counts / sizes[cls].astype(float)) - p
    return (1.0 + np.bincount(cls, weights=part, minlength=len(starts))) / 2.0


def _hierarchical_distances(tc: Closeness, cls, sens, counts, sizes) -> np.ndarray:
    """Hierarchical-distance EMD per class (Li, Li & Venkatasubramanian 2007, section 4.2, as
    ARX computes it). With P = n and Q the class's size, the extra of a node N is
    ``e_N = P_N Q - q_N P`` (the input's and the class's records under N, scaled by P Q); an
    inner node at level L costs ``(L / H) min(pos_N, neg_N)``, pos_N and neg_N the sums of its
    children's positive and negative extras, and ``D = sum_N cost_N / (P Q)``.

    Only the (class, node) pairs holding records are visited: elsewhere e_N = P_N Q >= 0 and
    the cost is 0. With ``d_N = |e_N| - P_N Q`` (0 there),
    ``min(pos_N, neg_N) = (sum_{children c} |e_c| - |e_N|) / 2 = (sum_{c with records} d_c - d_N) / 2``,
    in integers as ARX's. The costs are added in ARX's order (level by level, ARX's order of a
    level's nodes), so that the sum is ARX's to the last bit."""
    big_q = sizes.astype(np.int64)
    big_p = np.int64(tc.n)
    q = counts.astype(np.int64)
    share = tc.counts[0][sens] * big_q[cls]
    d = np.abs(share - q * big_p) - share
    starts = np.arange(len(sens))
    total = np.zeros(len(sizes))
    for lev in range(1, tc.height + 1):
        node = tc.node[lev][sens]
        first = np.ones(len(sens), dtype=bool)
        first[1:] = (cls[1:] != cls[:-1]) | (node[1:] != node[:-1])
        up = np.flatnonzero(first)
        owner, at = cls[up], node[up]
        share = tc.counts[lev][at] * big_q[owner]
        d_up = np.abs(share - np.add.reduceat(q, up) * big_p) - share
        pairs = (np.add.reduceat(d, np.searchsorted(starts, up)) - d_up) // 2
        cost = np.zeros((len(sizes), len(tc.counts[lev])))
        cost[owner, at] = (lev / tc.height) * pairs.astype(float)
        for col in tc.order[lev]:
            total += cost[:, col]
        starts, d = up, d_up
    return total / (float(big_p) * big_q.astype(float))


def _entropy_ok(counts, n_distinct, sizes, l: float) -> np.ndarray:  # noqa: E741
    """Per class, whether its entropy is at least ``log l``: ARX's ``EntropyLDiversity`` (Shannon
    estimator) in its natural-log form ``sum_s f_s ln f_s <= n (ln n - ln l)``. The right side
    gets a relative slack of :data:`_ENTROPY_SLACK` of ``n ln n`` (the size of either side), so
    that a class whose entropy equals ``log l`` exactly (two values half and half against
    l = 2) passes whatever the rounding: without it, rounding could fail a class whose merged
    generalisation passes, and a search that trusts monotonicity would tag a cone wrongly."""
    cls = np.repeat(np.arange(len(sizes)), n_distinct)
    f = counts.astype(float)
    sum1 = np.bincount(cls, weights=f * np.log(f), minlength=len(sizes))
    total = sizes.astype(float)
    n_ln_n = total * np.log(total)
    return sum1 <= (n_ln_n - total * math.log(l)) + _ENTROPY_SLACK * n_ln_n


def _recursive_ok(counts, starts, n_distinct, sizes, crit: Criteria) -> np.ndarray:
    """Recursive (c, l)-diversity per class: ``r_1 < c (r_l + ... + r_m)`` with ``r`` the
    class's sensitive value counts in decreasing order (fewer than l values: violated)."""
    lvl = int(crit.l)
    cls = np.repeat(np.arange(len(starts)), n_distinct)
    order = np.lexsort((-counts, cls))
    sorted_counts = counts[order]
    rank = np.arange(len(counts)) - np.repeat(starts, n_distinct)
    r1 = sorted_counts[starts]
    head = np.bincount(cls, weights=np.where(rank < lvl - 1, sorted_counts, 0), minlength=len(starts))
    tail = sizes - head
    return (n_distinct >= lvl) & (r1 < crit.c * tail)


def _node_columns(model: Model, src_levels, src_rows, levels):
    cols, sizes = [], []
    for j, h in enumerate(model.hierarchies):
        cols.append(h.lift(src_rows[j], int(src_levels[j]), int(levels[j])))
        sizes.append(h.size(int(levels[j])))
    if model.sens_size:
        cols.append(src_rows[model.m])
        sizes.append(model.sens_size)
    return cols, sizes


def _group_table(cols, sizes, weights):
    """``(keys, rows, counts)`` of :func:`group_rows` without the inverse, ``rows`` a
    :class:`_Rows` (decoded from the keys when first read, on the dense path)."""
    dense = _dense_counts(cols, sizes, weights)
    if dense is not None:
        _, keys, counts, _ = dense
        return keys, _Rows(keys=keys, sizes=list(sizes)), counts
    keys, rows, counts, _ = group_rows(cols, sizes, weights, want_inverse=False)
    return keys, _Rows(rows=rows), counts


def _dense_counts(cols, sizes, weights):
    """``(key, keys, counts, total)`` counted on the dense mixed-radix key (bincount, no sort)
    when the radix product ``total`` is small against the rows, else None."""
    total = 1
    for size in sizes:
        total *= max(int(size), 1)
    if total > _DENSE * len(weights) + 4096:
        return None
    key = combine_codes(cols, sizes)
    full = np.bincount(key, weights=weights, minlength=total)
    keys = np.flatnonzero(full)
    return key, keys, full[keys].astype(np.int64), total


def group_rows(cols, sizes, weights, want_inverse: bool = True):
    """The distinct rows of integer columns: ``(keys, rows, counts, inverse)`` with ``keys``
    sorted (mixed radix, so sorted keys list the rows in lexicographic order), ``rows`` their
    columns (int32), ``counts`` the sum of ``weights`` per distinct row and ``inverse`` the
    distinct row of each input row (None unless ``want_inverse``).

    When the radix product is small the rows are counted on the dense key (bincount, no sort)
    and decoded from it; otherwise the key is sorted once (quicksort)."""
    dense = _dense_counts(cols, sizes, weights)
    if dense is not None:
        key, keys, counts, total = dense
        inverse = None
        if want_inverse:
            rank = np.zeros(total, dtype=np.int64)
            rank[keys] = np.arange(len(keys))
            inverse = rank[key]
        return keys, decode_keys(keys, sizes), counts, inverse
    key = combine_codes(cols, sizes)
    order, ordered = _sorted_keys(key)
    starts = np.empty(len(key), dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    keys = ordered[first]
    counts = np.add.reduceat(np.asarray(weights)[order], first).astype(np.int64) if len(key) else np.zeros(0, np.int64)
    inverse = None
    if want_inverse:
        inverse = np.empty(len(key), dtype=np.int64)
        inverse[order] = np.cumsum(starts) - 1
    member = order[first]
    rows = tuple(c[member].astype(np.int32, copy=False) for c in cols)
    return keys, rows, counts, inverse


def _sorted_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, key[order])``, the keys sorted. When a key and a row number fit in 63 bits
    together, the pairs are sorted as one integer (NumPy's sort of values is several times
    faster than its argsort); else an argsort (quicksort: any member of a group stands for it)."""
    n = len(key)
    bits = max((n - 1).bit_length(), 1)
    if n and int(key.max()) < (1 << (62 - bits)):
        packed = key << bits
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        return packed & ((1 << bits) - 1), packed >> bits
    order = np.argsort(key)
    return order, key[order]


def evaluate(model: Model, src_levels, src_rows, src_counts, levels) -> NodeResult:
    """The classes of node ``levels`` rolled up from a table at ``src_levels`` (every level
    lower or equal), the criteria and the suppressed records."""
    cols, sizes = _node_columns(model, src_levels, src_rows, levels)
    keys, table, counts = _group_table(cols, sizes, src_counts)
    viol = _class_violations(model, keys, counts)
    n_supp = int(counts[viol].sum())
    ok = n_supp <= model.max_outliers
    parts = np.zeros(model.m)
    if ok and n_supp and model.metric == "loss":
        vc = counts[viol]
        gone = decode_keys(keys[viol], sizes) if table.keys is not None else [c[viol] for c in table.rows]
        for j, h in enumerate(model.hierarchies):
            parts[j] = float(np.dot(vc, h.counts[int(levels[j])][gone[j]]))
    elif ok and n_supp and model.metric == "entropy":
        gone = decode_keys(keys[viol], sizes) if table.keys is not None else [c[viol] for c in table.rows]
        parts = _entropy_suppressed(model, gone, counts[viol], levels)
    if model.metric == "discernibility":
        dm, dm_star = _discernibility(model, keys, counts, viol, n_supp)
        return NodeResult(table, counts, bool(ok), n_supp, parts, viol, dm, dm_star)
    return NodeResult(table, counts, bool(ok), n_supp, parts, viol)


def _entropy_suppressed(model: Model, gone, vc: np.ndarray, levels) -> np.ndarray:
    """Per key: ``sum_v c_v log2(c_v / S)`` over the generalised values v of the S suppressed
    records (``gone``: the suppressed rows' columns, ``vc`` their records; c_v of them with v) (``MetricMDNUNMEntropyPrecomputed``; ARX adds the terms in the
    order of its hash map, here they are summed exactly rounded)."""
    total = float(vc.sum())
    out = np.zeros(model.m)
    for j, h in enumerate(model.hierarchies):
        c = np.bincount(gone[j], weights=vc, minlength=h.size(int(levels[j])))
        # math.log term by term and a correctly rounded sum: the same float in any order
        out[j] = math.fsum(x * (math.log(x / total) / _LN2) for x in c[c > 0].tolist())
    return out


def _discernibility(model: Model, keys: np.ndarray, counts: np.ndarray, viol: np.ndarray, n_supp: int):
    """``(DM, DM*)`` of a node's classes (sorted ``keys``, rows of a class together): DM* the
    sum of the squared class sizes, DM the same over the kept classes plus n per suppressed
    record (``MetricSDNMDiscernability``)."""
    starts = class_starts(keys, model.sens_size)
    sizes = np.add.reduceat(counts, starts).astype(float) if len(keys) else counts.astype(float)
    kept = ~viol[starts] if len(keys) else viol
    dm_star = float(np.dot(sizes, sizes))
    return float(np.dot(sizes[kept], sizes[kept])) + float(model.n) * n_supp, dm_star


def suppressed_rows(model: Model, levels) -> np.ndarray:
    """Per distinct base row of the model, whether node ``levels`` suppresses it (map to the
    records with ``model.inverse``)."""
    cols, sizes = _node_columns(model, np.zeros(model.m, dtype=np.int64), model.rows, levels)
    keys, _, counts, inverse = group_rows(cols, sizes, model.counts)
    return _class_violations(model, keys, counts)[inverse]


@dataclass(frozen=True)
class NodeClasses:
    """The equivalence classes of one node (the keys' generalised values, without the
    sensitive attribute): ``row_class`` the class of each distinct base row of the model (map
    to the records with ``model.inverse``), ``sizes`` the records per class, ``violating``
    whether each class violates the criteria (its records are suppressed)."""

    row_class: np.ndarray
    sizes: np.ndarray
    violating: np.ndarray

    @property
    def n_suppressed(self) -> int:
        return int(self.sizes[self.violating].sum())


def node_classes(model: Model, levels) -> NodeClasses:
    """The classes of node ``levels`` computed from the base rows (see :class:`NodeClasses`)."""
    cols, sizes = _node_columns(model, np.zeros(model.m, dtype=np.int64), model.rows, levels)
    keys, _, counts, inverse = group_rows(cols, sizes, model.counts)
    starts = class_starts(keys, model.sens_size)
    first = np.zeros(len(keys), dtype=bool)
    first[starts] = True
    row_cls = np.cumsum(first) - 1
    bad = class_violations(keys, counts, model.sens_size, model.criteria, model.closeness)
    return NodeClasses(row_cls[inverse], np.add.reduceat(counts, starts) if len(keys) else counts, bad[starts])


# ----------------------------------------------------------------------------------------------
# the optimal search
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SearchOutcome:
    """What :func:`search` found. ``best``: the index of the optimal node in ``nodes`` (None:
    no node satisfies the criteria); ``evaluated``: (node index, satisfies, loss or None,
    suppressed records) in the order checked."""

    nodes: np.ndarray
    best: int | None
    loss: float
    values: np.ndarray | None
    n_checked: int
    n_pruned: int
    optimal: bool
    evaluated: list


class _Cache:
    """Class tables of evaluated nodes, for rolling a new node up from the smallest table of
    one of its specialisations; the base table always stays."""

    def __init__(self, model: Model, nodes: np.ndarray, columns: list):
        self.nodes = nodes
        self.columns = columns
        self.size = np.full(len(nodes), -1, dtype=np.int64)
        self.tables: dict[int, tuple] = {}
        self.bytes = 0
        self.base = (np.zeros(model.m, dtype=np.int64), model.rows, model.counts)

    def source(self, x: int):
        if not self.tables:
            return self.base
        held = np.fromiter(self.tables, dtype=np.int64, count=len(self.tables))
        below = np.ones(len(held), dtype=bool)
        for col in self.columns:
            below &= col[held] <= col[x]
        cand = held[below]
        if cand.size:
            best = int(cand[np.argmin(self.size[cand])])
            if self.size[best] < len(self.base[2]):
                levels, table, counts, _ = self.tables[best]
                return levels, table.rows, counts
        return self.base

    def add(self, x: int, res: NodeResult) -> None:
        nbytes = res.table.nbytes(len(self.base[1])) + res.counts.nbytes
        if nbytes > _CACHE_BYTES // 4:
            return
        while self.bytes + nbytes > _CACHE_BYTES and self.tables:
            drop = max(self.tables, key=lambda i: int(self.size[i]))
            self.bytes -= self.tables.pop(drop)[3]
            self.size[drop] = -1
        self.tables[x] = (self.nodes[x], res.table, res.counts, nbytes)
        self.size[x] = len(res.counts)
        self.bytes += nbytes


def search(
    model: Model,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    on_check=None,
    exhaustive: bool = False,
    started: float | None = None,
) -> SearchOutcome:
    """The node with the least metric among those that satisfy the criteria (with record
    suppression up to the limit).

    Ties: the lower sum of levels wins (ARX's rule in ``trackOptimum``), then the lower node
    index (mixed-radix order of :func:`lattice_nodes`).

    Order and pruning: the nodes are visited by increasing (lower bound, sum of levels,
    index). The loss of a node is never below its bound, and the bound never decreases from a
    node to its generalisations, so once the next node's key is above the best node's
    (loss, sum of levels, index), no node left can win and the search stops: the answer is
    proven optimal. Monotone criteria (see :class:`Criteria`) tag nodes without checking them:
    a generalisation of a node that satisfies them satisfies them (without suppression its loss
    is then its bound), a specialisation of one that does not, does not. Before a node of
    unknown status is checked, a chain from it to the top of the lattice (each step the
    cheapest generalisation by the bound) is bisected for the highest node that fails, which
    tags a whole cone of specialisations at once (the idea of FLASH's paths).
    ``exhaustive=True`` checks every node without pruning or tagging (the test oracle).
    ``time_limit`` (seconds from ``started``, default now) or ``max_nodes`` (nodes checked)
    stop early with the best so far, flagged as not proven optimal; the time limit also stops
    the bounds' computation (then nothing is checked). The nodes are held as small integers and
    only the aggregate bound per node is kept (about 5 + m bytes a node).
    """
    return _Search(model, time_limit, max_nodes, on_check, exhaustive, started).run()


class _Search:
    def __init__(self, model: Model, time_limit, max_nodes, on_check, exhaustive: bool, started=None):
        self.t0 = time.perf_counter() if started is None else started
        self.model, self.time_limit, self.max_nodes = model, time_limit, max_nodes
        self.on_check, self.exhaustive = on_check, exhaustive
        self.tagging = model.monotone and not exhaustive
        heights = model.heights
        nodes = lattice_nodes(heights, dtype=np.int8 if max(heights, default=0) < 127 else np.int16)
        self.nodes = nodes
        n_nodes = len(nodes)
        self.level_sum = nodes.sum(axis=1, dtype=np.int32)
        self.free, self.bound, self.expired = self._bounds(nodes)
        # discernibility: a checked node's DM* bounds every generalisation (the cone above it)
        self.floor = self.bound.copy() if model.metric == "discernibility" and not exhaustive else None
        radix = [h + 1 for h in model.heights]
        self.mult = np.array([int(np.prod(radix[j + 1 :])) for j in range(len(radix))], dtype=np.int64)
        self._mult = [int(v) for v in self.mult]
        self.state = np.zeros(n_nodes, dtype=np.int8)  # 1 satisfies, -1 violates, 0 unknown
        self.done = np.zeros(n_nodes, dtype=bool)
        self.columns = [np.ascontiguousarray(nodes[:, j], dtype=np.int8) for j in range(nodes.shape[1])]
        self.cache = _Cache(model, nodes, self.columns)
        self.best: tuple | None = None  # (loss, level sum, index)
        self.best_values = None
        self.evaluated: list = []
        self.n_checked = 0

    def _bounds(self, nodes: np.ndarray) -> tuple:
        """The metric without suppression (``free``) and a lower bound of the metric with it, per
        node, block by block (stopped when the time runs out: ``expired``)."""
        free, bound = np.empty(len(nodes)), np.empty(len(nodes))
        for a in range(0, len(nodes), _BLOCK):
            if self.out_of_time():
                return free, bound, True
            block = nodes[a : a + _BLOCK]
            free[a : a + len(block)], bound[a : a + len(block)] = metric_bounds(self.model, block)
        return free, bound, False

    def free_values(self, x: int) -> np.ndarray:
        """The per-key metric of node ``x`` without suppression (the floats of the whole array)."""
        level = self.nodes[x : x + 1]
        return attribute_values(self.model, level, np.zeros(level.shape), np.zeros(1))[0]

    # -- one node ----------------------------------------------------------------------------
    def key(self, x: int) -> tuple:
        return (float(self.bound[x]), int(self.level_sum[x]), x)

    def record(self, x: int, ok: bool, n_supp: int, values, loss: float | None = None) -> None:
        """Node ``x`` checked (or tagged): its metric from ``values`` (per key), or ``loss``
        when the metric has no per-key values (discernibility)."""
        self.done[x] = True
        if not ok:
            loss = None
        elif self.model.metric == "discernibility":
            values = []
        elif n_supp == 0:  # the metric without suppression: the same float, so ties compare equal
            loss = float(self.free[x])
            values = self.free_values(x)
        else:
            loss = node_aggregate(values, self.model.metric, self.model.agg_order)
        self.evaluated.append((x, ok, loss, n_supp))
        if ok and (self.best is None or (loss, int(self.level_sum[x]), x) < self.best):
            self.best = (loss, int(self.level_sum[x]), x)
            self.best_values = values

    def check(self, x: int) -> bool:
        """Compute node ``x``'s classes, record it and tag what monotonicity gives."""
        src_levels, src_rows, src_counts = self.cache.source(x)
        res = evaluate(self.model, src_levels, src_rows, src_counts, self.nodes[x])
        self.n_checked += 1
        self.cache.add(x, res)
        if self.on_check is not None:
            self.on_check()
        values = None
        if res.satisfies and res.n_supp:
            values = node_values(self.model, self.nodes[x], res.supp_parts, res.n_supp)
        self.record(x, res.satisfies, res.n_supp, values, res.dm)
        if self.floor is not None:
            cone = self.cone(x, up=True)
            np.maximum(self.floor, np.where(cone, res.dm_star, -math.inf), out=self.floor)
        if self.tagging:
            self.tag(x, res.satisfies)
        return res.satisfies

    def cone(self, x: int, up: bool) -> np.ndarray:
        """The nodes at or above ``x`` in every key (``up``), or at or below."""
        mask = np.ones(len(self.nodes), dtype=bool)
        for col in self.columns:
            mask &= (col >= col[x]) if up else (col <= col[x])
        return mask

    def tag(self, x: int, ok: bool) -> None:
        self.state[self.cone(x, up=ok)] = 1 if ok else -1

    # -- bisecting a chain -------------------------------------------------------------------
    def chain(self, x: int) -> list[int]:
        """From ``x`` to the top, each step the generalisation of least bound."""
        heights, mult, bound = self.model.heights, self._mult, self.bound
        lev = [int(v) for v in self.nodes[x]]
        out, idx = [x], x
        while True:
            steps = [j for j in range(len(lev)) if lev[j] < heights[j]]
            if not steps:
                return out
            j = min(steps, key=lambda j: (bound[idx + mult[j]], idx + mult[j]))
            lev[j] += 1
            idx += mult[j]
            out.append(idx)

    def status(self, x: int) -> bool:
        if self.state[x]:
            return bool(self.state[x] == 1)
        return self.check(x)

    def probe(self, x: int) -> None:
        """Bisect the chain above ``x`` for the boundary between failing and satisfying nodes
        (monotone along a chain); tags the cone below the last failing node."""
        path = self.chain(x)
        lo, hi = -1, len(path)
        while hi - lo > 1 and not self.out_of_budget():
            mid = (lo + hi) // 2
            if self.status(path[mid]):
                hi = mid
            else:
                lo = mid

    def floored(self, x: int) -> bool:
        """Discernibility: node ``x`` cannot beat the best node, by the DM* of a checked node
        below it (its DM is at least that, its sum of levels larger)."""
        if self.floor is None or self.best is None:
            return False
        return (float(self.floor[x]), int(self.level_sum[x]), x) > self.best

    def out_of_time(self) -> bool:
        return self.time_limit is not None and time.perf_counter() - self.t0 > self.time_limit

    def out_of_budget(self) -> bool:
        return self.out_of_time() or (self.max_nodes is not None and self.n_checked >= self.max_nodes)

    # -- the sweep ---------------------------------------------------------------------------
    def run(self) -> SearchOutcome:
        optimal = not self.expired
        order = np.zeros(0, np.int64) if self.expired else np.lexsort((self.level_sum, self.bound))
        for x in map(int, order):  # one Python int at a time, not a list of the lattice
            if not self.exhaustive and self.best is not None and self.key(x) > self.best:
                break
            if self.out_of_budget():
                optimal = False
                break
            if self.done[x] or self.floored(x):
                continue
            if not self.tagging:
                self.check(x)
                continue
            if self.state[x] == 0:
                self.probe(x)
                if self.done[x] or self.state[x] == 0:
                    continue  # checked by the probe, or the budget ran out (the next turn says so)
            if self.state[x] == 1 and not self.floored(x):
                if self.model.max_outliers == 0 and self.model.spec.independent:
                    self.record(x, True, 0, None)
                else:
                    self.check(x)
        best = self.best
        return SearchOutcome(
            nodes=self.nodes,
            best=None if best is None else best[2],
            loss=math.nan if best is None else best[0],
            values=self.best_values,
            n_checked=self.n_checked,
            n_pruned=len(self.nodes) - self.n_checked,
            optimal=optimal,
            evaluated=self.evaluated,
        )
