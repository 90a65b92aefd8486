"""l-diversity and t-closeness of sensitive variables within key classes (spec A.3, A.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .._core.diversity import (
    equivalence_classes,
    ldiversity_classes,
    multi_ldiversity_classes,
    tcloseness_classes,
)
from .._encode import encode_keys
from .._errors import SdcError
from .._frame import to_native
from .._prepare import prepare
from .._validation import as_name_list
from ..results._base import Result, Summary, new_axes

__all__ = ["LDiversityResult", "TClosenessResult", "l_diversity", "t_closeness"]

_MEASURES = ("distinct", "entropy", "recursive")


# ----------------------------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------------------------
def _sensitive_names(sensitive) -> list[str]:
    if sensitive is None:
        raise SdcError("sensitive: no sensitive variable given; expected a column name or a list of names")
    return as_name_list(sensitive, "sensitive")


def _encode_sensitive(prep, names):
    """Integer codes (n, a) of the sensitive variables (-1 = missing, including the user's
    ``missing`` codes) and their labels."""
    frame = prep.table.frame
    for name in names:
        dtype = frame.get_column(name).dtype
        if isinstance(dtype, (pl.List, pl.Array, pl.Struct, pl.Object)):
            raise SdcError(f"sensitive: column {name} has type {dtype}; expected a categorical or numeric variable")
    enc = encode_keys(frame, names, prep.scenario.missing)
    return enc.codes, list(enc.labels)


def _check_c(c) -> float:
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)):
        raise SdcError(f"c: got {c!r}; expected a number (the constant of recursive (c,l)-diversity, default 2)")
    v = float(c)
    if not math.isfinite(v):
        raise SdcError(f"c: got {c!r}; expected a finite number")
    return v if v > 0 else 1.0  # sdcMicro / spec A.3: c <= 0 is replaced by 1


def _fmt_values(values, limit: int = 10) -> str:
    vals = [repr(v) for v in values[:limit]]
    return ", ".join(vals) + (f" ... ({len(values)} in all)" if len(values) > limit else "")


# ----------------------------------------------------------------------------------------------
# l-diversity
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LDiversityResult(Result):
    """l-diversity of sensitive variables within the key classes (spec A.3).

    Attributes
    ----------
    keys, sensitive : tuple of str
    c : float
        Constant of recursive (c,l)-diversity actually used (``c <= 0`` replaced by 1).
    distinct, entropy, recursive : dict name -> ndarray (n,)
        Per record (input row order), the l of the record's class for each sensitive variable:
        distinct (int), entropy (float, exp of the Shannon entropy), recursive (int).
    multi_entropy, multi_recursive : ndarray (n,)
        sdcMicro's multi-attribute l-diversity (0 with a single sensitive variable).
    class_ids : ndarray (n,) of int
        Equivalence class of each record (exact key equality, a missing key value is a value).
    n, n_classes : int
    missing_sensitive : dict name -> int
        Records whose sensitive value is missing.
    """

    keys: tuple = ()
    sensitive: tuple = ()
    c: float = 2.0
    distinct: dict = field(default_factory=dict, repr=False)
    entropy: dict = field(default_factory=dict, repr=False)
    recursive: dict = field(default_factory=dict, repr=False)
    multi_entropy: np.ndarray = field(default=None, repr=False)
    multi_recursive: np.ndarray = field(default=None, repr=False)
    class_ids: np.ndarray = field(default=None, repr=False)
    n: int = 0
    n_classes: int = 0
    missing_sensitive: dict = field(default_factory=dict)

    @property
    def multi(self) -> bool:
        """True when the multi-attribute measures were computed (two or more sensitive variables)."""
        return len(self.sensitive) > 1

    @property
    def min(self) -> dict:
        """The dataset's l per measure (minimum over records/classes).

        ``{"distinct": {var: int}, "entropy": {var: float}, "recursive": {var: int},
        "multi_entropy": float or None, "multi_recursive": int or None}`` (the multi measures are
        None with a single sensitive variable).
        """
        out = {}
        for m in _MEASURES:
            arrs = getattr(self, m)
            cast = float if m == "entropy" else int
            out[m] = {v: (cast(arrs[v].min()) if self.n else None) for v in self.sensitive}
        out["multi_entropy"] = float(self.multi_entropy.min()) if self.multi and self.n else None
        out["multi_recursive"] = int(self.multi_recursive.min()) if self.multi and self.n else None
        return out

    def is_l_diverse(self, l: float, measure: str = "distinct", variable: str | None = None) -> bool:
        """Whether every class has l-diversity >= ``l`` in ``measure`` ("distinct", "entropy",
        "recursive", "multi_entropy", "multi_recursive") for ``variable`` (all sensitive
        variables when None)."""
        mins = self.min
        if measure in ("multi_entropy", "multi_recursive"):
            if not self.multi:
                raise SdcError(f"measure: {measure} needs two or more sensitive variables")
            return bool(mins[measure] >= l)
        if measure not in _MEASURES:
            raise SdcError(f"measure: got {measure!r}; expected one of distinct, entropy, recursive, "
                           "multi_entropy, multi_recursive")
        if variable is not None and variable not in self.sensitive:
            raise SdcError(f"variable: {variable!r} is not a sensitive variable; expected one of {', '.join(self.sensitive)}")
        names = self.sensitive if variable is None else (variable,)
        return all(mins[measure][v] >= l for v in names)

    def distinct_distribution(self, variable: str, max_l: int = 10) -> dict[str, int]:
        """Number of records by distinct l of their class: ``{"0": .., "1": .., ..., ">=max_l": ..}``
        ("0" only when some class has no non-missing sensitive value)."""
        d = self.distinct[variable]
        out = {}
        if np.any(d == 0):
            out["0"] = int(np.count_nonzero(d == 0))
        for v in range(1, max_l):
            out[str(v)] = int(np.count_nonzero(d == v))
        out[f">={max_l}"] = int(np.count_nonzero(d >= max_l))
        return out

    def to_dict(self) -> dict:
        return {
            "measure": "l_diversity",
            "keys": list(self.keys),
            "sensitive": list(self.sensitive),
            "n": self.n,
            "n_classes": self.n_classes,
            "c": self.c,
            "min": self.min,
            "mean": {m: {v: (float(np.mean(getattr(self, m)[v])) if self.n else None) for v in self.sensitive}
                     for m in _MEASURES},
            "records_not_2_diverse": {v: int(np.count_nonzero(self.distinct[v] < 2)) for v in self.sensitive},
            "missing_sensitive": dict(self.missing_sensitive),
            "distinct_distribution": {v: self.distinct_distribution(v) for v in self.sensitive},
        }

    def summary(self) -> Summary:
        mins = self.min
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("sensitive variables", ", ".join(self.sensitive)),
            ("equivalence classes", self.n_classes),
            ("recursive constant c", self.c),
        ]
        cols = ["variable", "distinct l", "entropy l", "recursive l", "records with distinct l < 2", "missing values"]
        table = {"columns": cols,
                 "rows": [(v, mins["distinct"][v], mins["entropy"][v], mins["recursive"][v],
                           int(np.count_nonzero(self.distinct[v] < 2)), self.missing_sensitive.get(v, 0))
                          for v in self.sensitive]}
        sections = [("", rows), ("l of the file (minimum over classes)", table)]
        if self.multi:
            sections.append(("Multi-attribute", [("entropy l", mins["multi_entropy"]),
                                                 ("recursive l", mins["multi_recursive"])]))
        notes = ["classes: exact key equality, a missing key value is its own category (spec A.3)"]
        if any(self.missing_sensitive.values()):
            notes.append("a missing sensitive value counts as one extra category (distinct, entropy) when the class "
                         "has other values; recursive l ignores it")
        return Summary("l-diversity", tuple(sections), tuple(notes))

    def _records(self):
        out = {}
        for v in self.sensitive:
            out[f"{v}_Distinct_Ldiversity"] = self.distinct[v]
            out[f"{v}_Entropy_Ldiversity"] = self.entropy[v]
            out[f"{v}_Recursive_Ldiversity"] = self.recursive[v]
        out["MultiEntropy_Ldiversity"] = self.multi_entropy
        out["MultiRecursive_Ldiversity"] = self.multi_recursive
        return out

    def plot(self, ax=None, max_l: int = 10):
        """Bar chart of the number of records by distinct l of their class (one bar group per
        sensitive variable)."""
        ax = new_axes(ax)
        names = list(self.sensitive)
        dists = [self.distinct_distribution(v, max_l) for v in names]
        cats = sorted({k for d in dists for k in d}, key=lambda k: (k.startswith(">="), int(k.lstrip(">="))))
        x = np.arange(len(cats))
        width = 0.8 / max(len(names), 1)
        for j, (v, d) in enumerate(zip(names, dists)):
            ax.bar(x + (j - (len(names) - 1) / 2) * width, [d.get(k, 0) for k in cats], width=width, label=v)
        ax.set_xticks(x)
        ax.set_xticklabels(cats)
        ax.set_xlabel("distinct l-diversity of the record's class")
        ax.set_ylabel("records")
        ax.set_title("l-diversity")
        if len(names) > 1:
            ax.legend()
        return ax


def l_diversity(data, keys, sensitive, c: float = 2, *, missing=None,
                allow_degenerate_keys: bool = False) -> LDiversityResult:
    r"""Distinct, entropy and recursive (c,l)-diversity of sensitive variables (spec A.3).

    Records are grouped into equivalence classes by exact equality of their key values, a
    missing key value being one more category (sdcMicro >= 5.8; the "missing matches
    anything" rule of :func:`frequencies` is not used). For a class E whose non-missing
    sensitive values have counts r_1 >= ... >= r_t and u missing values:

    .. math::

        l_{dist} = t + I(u > 0, t > 0), \qquad
        l_{ent} = \exp\Big(-\sum \tfrac{r}{|E|}\log\tfrac{r}{|E|}\Big), \qquad
        l_{rec} = \max\{l \le t : r_1 < c\,(r_l + \dots + r_t)\}

    (the entropy includes the missing group as one category when t > 0 and is 1 when t = 0;
    l_rec is 1 when t <= 1 and ignores missing values). With two or more sensitive variables
    sdcMicro's MultiEntropy / MultiRecursive are computed too (each variable within the
    sub-groups of the class defined by all other sensitive variables, minimum over sub-groups
    and variables); with one they are 0.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables.
    sensitive : str or list of str
        Sensitive variables (not key variables).
    c : float, default 2
        Constant of recursive (c,l)-diversity (sdcMicro ``l_recurs_c``); values <= 0 are
        replaced by 1, as sdcMicro does.
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN, in the keys and the sensitive
        variables (sdcMicro's ``missing = -999`` corresponds to ``missing=-999``).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.

    Returns
    -------
    LDiversityResult

    Notes
    -----
    Deliberate difference from sdcMicro (spec K.3): sdcMicro treats every R ``NA`` in the
    sensitive variable as a new category (class {1, NA, NA, 2} gets distinct l = 4); here all
    missing values of a class form one category (distinct l = 3).

    References
    ----------
    Spec ALGORITHMS.md A.3 and K.3; Machanavajjhala et al. (2007); sdcMicro ``ldiversity``.
    """
    names = _sensitive_names(sensitive)
    cc = _check_c(c)
    prep = prepare(data, keys, sensitive=names, missing=missing, allow_degenerate_keys=allow_degenerate_keys)
    ids, G = equivalence_classes(prep.keys.codes)
    s_codes, _labels = _encode_sensitive(prep, names)
    dist, ent, rec = {}, {}, {}
    for j, v in enumerate(names):
        d, e, r = ldiversity_classes(ids, G, s_codes[:, j], cc)
        dist[v], ent[v], rec[v] = d[ids], e[ids], r[ids]
    me, mr = multi_ldiversity_classes(ids, G, s_codes, cc)
    return LDiversityResult(
        keys=prep.keys.names,
        sensitive=tuple(names),
        c=cc,
        distinct=dist,
        entropy=ent,
        recursive=rec,
        multi_entropy=me[ids],
        multi_recursive=mr[ids],
        class_ids=ids,
        n=len(ids),
        n_classes=G,
        missing_sensitive={v: int(np.count_nonzero(s_codes[:, j] < 0)) for j, v in enumerate(names)},
        backend=prep.table.backend,
    )


# ----------------------------------------------------------------------------------------------
# t-closeness
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class TClosenessResult(Result):
    """t-closeness of sensitive variables within the key classes (spec A.4).

    Attributes
    ----------
    keys, sensitive : tuple of str
    ordered : tuple of str
        Sensitive variables measured with the ordered ground distance.
    weighted : bool
        Whether P and Q_E are weighted distributions.
    distance : dict name -> ndarray (n,) of float
        Per record (input row order), the earth mover's distance D(P, Q_E) of its class;
        NaN when every sensitive value of the class is missing.
    class_ids : ndarray (n,) of int
        Equivalence class of each record (exact key equality, a missing key is a value).
    class_sizes : ndarray (n_classes,) of int
    class_distance : dict name -> ndarray (n_classes,)
    n_categories : dict name -> int
        q, the number of categories of each sensitive variable (declared when ``ordered``
        gives the categories, observed otherwise).
    n, n_classes : int
    missing_sensitive : dict name -> int
    """

    keys: tuple = ()
    sensitive: tuple = ()
    ordered: tuple = ()
    weighted: bool = False
    distance: dict = field(default_factory=dict, repr=False)
    class_ids: np.ndarray = field(default=None, repr=False)
    class_sizes: np.ndarray = field(default=None, repr=False)
    class_distance: dict = field(default_factory=dict, repr=False)
    n_categories: dict = field(default_factory=dict)
    n: int = 0
    n_classes: int = 0
    missing_sensitive: dict = field(default_factory=dict)

    @property
    def max(self) -> dict:
        """The file's t per sensitive variable: the largest class distance (classes whose values
        are all missing ignored; NaN if there is no other class)."""
        out = {}
        for v in self.sensitive:
            d = self.class_distance[v]
            ok = ~np.isnan(d)
            out[v] = float(d[ok].max()) if ok.any() else float("nan")
        return out

    def is_t_close(self, t: float, variable: str | None = None) -> bool:
        """Whether every class has D(P, Q_E) <= t for ``variable`` (all sensitive variables when
        None). Classes whose sensitive values are all missing are ignored."""
        try:
            tt = float(t)
        except (TypeError, ValueError):
            raise SdcError(f"t: got {t!r}; expected a number in [0, 1]") from None
        if variable is not None and variable not in self.sensitive:
            raise SdcError(f"variable: {variable!r} is not a sensitive variable; expected one of {', '.join(self.sensitive)}")
        names = self.sensitive if variable is None else (variable,)
        mx = self.max
        return all(math.isnan(mx[v]) or mx[v] <= tt for v in names)

    def classes_above(self, t: float) -> dict[str, int]:
        """Number of classes with D(P, Q_E) > t, per sensitive variable."""
        return {v: int(np.count_nonzero(self.class_distance[v] > t)) for v in self.sensitive}

    def to_dict(self) -> dict:
        def stat(f, v):
            d = self.distance[v]
            d = d[~np.isnan(d)]
            return float(f(d)) if d.size else None

        return {
            "measure": "t_closeness",
            "keys": list(self.keys),
            "sensitive": list(self.sensitive),
            "ordered": list(self.ordered),
            "weighted": self.weighted,
            "n": self.n,
            "n_classes": self.n_classes,
            "n_categories": dict(self.n_categories),
            "max": {v: (None if math.isnan(x) else x) for v, x in self.max.items()},
            "mean": {v: stat(np.mean, v) for v in self.sensitive},
            "median": {v: stat(np.median, v) for v in self.sensitive},
            "classes_all_missing": {v: int(np.count_nonzero(np.isnan(self.class_distance[v]))) for v in self.sensitive},
            "missing_sensitive": dict(self.missing_sensitive),
        }

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("sensitive variables", ", ".join(self.sensitive)),
            ("equivalence classes", self.n_classes),
            ("weighted distributions", self.weighted),
        ]
        cols = ["variable", "distance", "categories", "t (max over classes)", "mean over records", "classes all missing"]
        table = {"columns": cols,
                 "rows": [(v, "ordered" if v in self.ordered else "nominal", self.n_categories[v], d["max"][v],
                           d["mean"][v], d["classes_all_missing"][v]) for v in self.sensitive]}
        notes = ["D(P, Q_E): earth mover's distance between the file's and the class's distribution; "
                 "records with a missing sensitive value are excluded from both (spec A.4)"]
        if any(d["classes_all_missing"].values()):
            notes.append("classes whose sensitive values are all missing have no distance (NA) and are ignored in t")
        return Summary("t-closeness", (("", rows), ("Distance to the overall distribution", table)), tuple(notes))

    def _records(self):
        return {f"{v}_TCloseness": self.distance[v] for v in self.sensitive}

    def class_table(self):
        """Per-class table (class id, size, distance per sensitive variable) as a frame of the
        caller's type. Class ids index :attr:`class_ids`."""
        cols = {"class": np.arange(self.n_classes), "size": self.class_sizes}
        for v in self.sensitive:
            cols[f"{v}_TCloseness"] = self.class_distance[v]
        return to_native(cols, self.backend)

    def plot(self, ax=None, bins: int = 20):
        """Histogram of the per-record distances D(P, Q_E) (one per sensitive variable)."""
        ax = new_axes(ax)
        edges = np.linspace(0.0, 1.0, int(bins) + 1)
        for v in self.sensitive:
            d = self.distance[v]
            ax.hist(d[~np.isnan(d)], bins=edges, alpha=0.6 if len(self.sensitive) > 1 else 1.0, label=v)
        ax.set_xlabel("distance D(P, Q_E) of the record's class")
        ax.set_ylabel("records")
        ax.set_title("t-closeness")
        if len(self.sensitive) > 1:
            ax.legend()
        return ax


def _ordered_spec(ordered, names) -> dict:
    """Normalise ``ordered`` to {name: None (natural order) | list of categories}."""
    if ordered is None or ordered is False:
        return {}
    if ordered is True:
        return {v: None for v in names}
    if isinstance(ordered, dict):
        items = list(ordered.items())
    elif isinstance(ordered, (str, int)) and not isinstance(ordered, bool):
        items = [(ordered, None)]
    elif isinstance(ordered, (list, tuple, set, frozenset)):
        items = [(o, None) for o in ordered]
    else:
        raise SdcError(f"ordered: got {type(ordered).__name__}; expected True/False, a list of sensitive "
                       "variables or a dict name -> list of categories in order")
    out = {}
    for name, cats in items:
        if isinstance(name, bool) or not isinstance(name, (str, int)):
            raise SdcError(f"ordered: {name!r} is not a column name; expected sensitive variable names")
        name = str(name)
        if name not in names:
            raise SdcError(f"ordered: column {name} is not a sensitive variable; sensitive variables: {', '.join(names)}")
        if cats is True or cats is None:
            out[name] = None
        elif cats is False:
            continue
        else:
            if isinstance(cats, (str, bytes)) or not hasattr(cats, "__iter__"):
                raise SdcError(f"ordered: categories of {name} must be a list of values in order; got {cats!r}")
            cats = list(cats)
            if not cats:
                raise SdcError(f"ordered: empty category list for {name}; expected the categories in order")
            seen, dup = set(), []
            for x in cats:
                if x in seen:
                    dup.append(x)
                seen.add(x)
            if dup:
                raise SdcError(f"ordered: categories of {name} listed more than once: {_fmt_values(dup)}")
            out[name] = cats
    return out


def _apply_categories(codes: np.ndarray, labels: pl.Series, cats: list, name: str):
    """Recode ``codes`` (positions in ``labels``) to positions in the declared ``cats``."""
    pos = {x: i for i, x in enumerate(cats)}
    lab = labels.to_list()
    used = np.zeros(len(lab), dtype=bool)
    used[codes[codes >= 0]] = True
    unknown = [x for x, u in zip(lab, used) if u and x not in pos]
    if unknown:
        raise SdcError(f"ordered: column {name} has value(s) {_fmt_values(unknown)} not in the declared categories; "
                       f"expected one of {_fmt_values(cats)}")
    perm = np.array([pos.get(x, -1) for x in lab], dtype=np.int32)
    out = np.full_like(codes, -1)
    ok = codes >= 0
    out[ok] = perm[codes[ok]]
    return out, len(cats)


def t_closeness(data, keys, sensitive, ordered=None, *, weight=None, weighted: bool = False, missing=None,
                allow_degenerate_keys: bool = False) -> TClosenessResult:
    r"""t-closeness: distance between each class's sensitive distribution and the file's (spec A.4).

    Classes are formed as for :func:`l_diversity` (exact key equality, a missing key value is a
    category). For a sensitive variable with categories 1..q, P is its distribution in the whole
    file and Q_E in class E; records with a missing sensitive value are excluded from both.
    With earth mover's distance:

    .. math::

        D_{nominal} = \tfrac12 \sum_j |p_j - q_j|, \qquad
        D_{ordered} = \frac{1}{q-1} \sum_{i=1}^{q-1} \Big|\sum_{j \le i} (q_j - p_j)\Big|

    A class is t-close iff D <= t; the file's t is the maximum over classes.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
    sensitive : str or list of str
    ordered : bool, list of str or dict, optional
        Which sensitive variables use the ordered ground distance |i - j| / (q - 1): ``True``
        (all), a list of names, or a dict ``name -> list of categories in order`` (q is then the
        number of declared categories; an observed value not in the list raises
        :class:`SdcError`; ``name -> True`` or ``None`` means the natural order).
        Without a declared list the order is the natural one: numeric order for numbers
        (q = number of distinct values), declared order for Enum / ordered categoricals,
        sorted labels for strings. Default: nominal (total variation) for all.
    weight : str, optional
        Weight column, used only with ``weighted=True``.
    weighted : bool, default False
        Weight P and Q_E by ``weight``.
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN (keys and sensitive variables).
    allow_degenerate_keys : bool, default False

    Returns
    -------
    TClosenessResult

    Notes
    -----
    A class whose sensitive values are all missing has no distribution: its distance is NaN
    and it is ignored by :attr:`TClosenessResult.max` and ``is_t_close``. With a single
    category (q = 1) every distance is 0. Not in sdcMicro; specified from Li, Li &
    Venkatasubramanian (2007).
    """
    names = _sensitive_names(sensitive)
    if not isinstance(weighted, (bool, np.bool_)):
        raise SdcError(f"weighted: got {weighted!r}; expected True or False")
    if weighted and weight is None:
        raise SdcError("weighted: True needs a weight column; pass weight=<column name>")
    spec = _ordered_spec(ordered, names)
    prep = prepare(data, keys, weight=weight, sensitive=names, missing=missing,
                   allow_degenerate_keys=allow_degenerate_keys)
    ids, G = equivalence_classes(prep.keys.codes)
    s_codes, labels = _encode_sensitive(prep, names)
    w = prep.weights if weighted else None
    dist, cdist, ncat = {}, {}, {}
    for j, v in enumerate(names):
        codes = s_codes[:, j]
        q = len(labels[j])
        if spec.get(v) is not None:
            codes, q = _apply_categories(codes, labels[j], spec[v], v)
        d = tcloseness_classes(ids, G, codes, q, ordered=v in spec, weights=w)
        cdist[v], dist[v], ncat[v] = d, d[ids], q
    return TClosenessResult(
        keys=prep.keys.names,
        sensitive=tuple(names),
        ordered=tuple(v for v in names if v in spec),
        weighted=bool(weighted),
        distance=dist,
        class_ids=ids,
        class_sizes=np.bincount(ids, minlength=G),
        class_distance=cdist,
        n_categories=ncat,
        n=len(ids),
        n_classes=G,
        missing_sensitive={v: int(np.count_nonzero(s_codes[:, j] < 0)) for j, v in enumerate(names)},
        backend=prep.table.backend,
    )
