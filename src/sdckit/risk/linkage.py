"""Record-linkage risk (spec F.1, F.2) and Mlodak's external risk (spec F.7).

``record_linkage_risk`` links every protected record to the original file, by distance
(nearest and second-nearest original), by Fellegi-Sunter probabilistic linkage, or by a
one-to-one assignment, and reports how often the true partner is found. ``external_risk``
pairs an alternative source an intruder may hold with the released file.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .._errors import SdcError, SdcWarning
from .._frame import as_table
from .._validation import as_name_list
from ..results._base import Result, Summary, new_axes
from .continuous import _number, numeric_matrix, pair_tables

__all__ = ["LinkageResult", "ExternalRiskResult", "record_linkage_risk", "external_risk"]

_METHODS = ("distance", "probabilistic", "assignment")


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _per_variable(value, names, param, default, check):
    """A per-variable setting given as one value, a list in variable order or a dict."""
    if value is None:
        return {v: default for v in names}
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise SdcError(f"{param}: {', '.join(map(str, unknown))} not among the variables; expected keys from "
                           f"{', '.join(names)}")
        return {v: check(value.get(v, default), f"{param}[{v!r}]") for v in names}
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != len(names):
            raise SdcError(f"{param}: got {len(value)} values for {len(names)} variables; expected one per variable")
        return {v: check(x, f"{param}[{v!r}]") for v, x in zip(names, value)}
    return {v: check(value, param) for v in names}


def _is_categorical(dtype) -> bool:
    return not dtype.is_numeric() or dtype == pl.Boolean


def _joint_codes(s1: pl.Series, s2: pl.Series, name: str, first: str, second: str, *, na_code: bool):
    """Integer codes of two columns on one code table. ``na_code``: a missing value is one more
    code (else -1). Mismatched types (text in one file, numbers in the other) are an error."""
    c1, c2 = _is_categorical(s1.dtype), _is_categorical(s2.dtype)
    if c1 != c2:
        raise SdcError(f"variables: column {name} has type {s1.dtype} in {first} but {s2.dtype} in {second}; "
                       "expected the same kind of values in both files")
    if isinstance(s1.dtype, (pl.Enum, pl.Categorical)) or isinstance(s2.dtype, (pl.Enum, pl.Categorical)):
        s1, s2 = s1.cast(pl.String), s2.cast(pl.String)
    elif not c1:
        s1, s2 = s1.cast(pl.Float64).fill_nan(None), s2.cast(pl.Float64).fill_nan(None)
    else:
        s1, s2 = s1.cast(pl.String), s2.cast(pl.String)
    both = pl.concat([s1.rename("v"), s2.rename("v")])
    null = both.is_null().to_numpy()
    if both.dtype == pl.String:  # codes in order of appearance: only equality matters
        codes = both.cast(pl.Categorical).to_physical().cast(pl.Int64).fill_null(-1).to_numpy()
    else:
        vals = both.fill_null(0).to_numpy()
        codes = np.unique(vals, return_inverse=True)[1].ravel()
    codes = np.where(null, -1, codes).astype(np.int64)
    if na_code:
        codes = np.where(codes < 0, int(codes.max(initial=-1)) + 1, codes)
    return codes[: s1.len()], codes[s1.len():]


def _standardise_pair(X, Y, names, scale):
    if scale == "none":
        return X, Y, list(names)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing or single-value columns: sd NaN, dropped below
        mx, sx = np.nanmean(X, axis=0), np.nanstd(X, axis=0, ddof=1)
        my, sy = (mx, sx) if scale == "original" else (np.nanmean(Y, axis=0), np.nanstd(Y, axis=0, ddof=1))
    keep = (sx > 0) & (sy > 0)
    dropped = [v for v, k in zip(names, keep) if not k]
    if dropped:
        if not keep.any():
            raise SdcError(f"variables: every variable ({', '.join(dropped)}) is constant; expected at least one "
                           "variable with a positive standard deviation")
        warnings.warn(f"variables: {', '.join(dropped)} constant (sd = 0) and dropped from the distance",
                      SdcWarning, stacklevel=3)
    Xs = (X[:, keep] - mx[keep]) / sx[keep]
    Ys = (Y[:, keep] - my[keep]) / sy[keep]
    return Xs, Ys, [v for v, k in zip(names, keep) if k]


# ----------------------------------------------------------------------------------------------
# record linkage
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LinkageResult(Result):
    """Record-linkage risk of a protected file against the original (spec F.1, F.2).

    Attributes
    ----------
    method : {"distance", "probabilistic", "assignment"}
    variables : tuple of str
    n : int
    correct_first : ndarray (n,)
        Per protected record, the expected success of linking it to its nearest original (1/t
        when t originals tie at the minimum and the partner is among them); for
        ``"assignment"`` 1.0 when the assigned original is the partner; for
        ``"probabilistic"`` 1.0 when the true pair is classified as a link.
    correct_second : ndarray (n,) or None
        Distance method: the same for the second-nearest original.
    linked_to : ndarray of int (n,) or None
        Nearest (distance) or assigned (assignment) original record, by row position.
    second_weight : float
        Weight of second-nearest links in the DLD score (spec K.1).
    em : dict or None
        Probabilistic method: m, u, p, iterations, converged, pattern table.
    """

    method: str = "distance"
    variables: tuple = ()
    n: int = 0
    correct_first: np.ndarray = field(default=None, repr=False)
    correct_second: np.ndarray | None = field(default=None, repr=False)
    linked_to: np.ndarray | None = field(default=None, repr=False)
    second_weight: float = 1.0
    em: dict | None = field(default=None, repr=False)
    scale: str = "original"
    metric: str = "euclidean"

    @property
    def linked_first(self) -> float:
        """L_1: expected number of records whose nearest original is the true partner."""
        return float(self.correct_first.sum())

    @property
    def linked_second(self) -> float:
        """L_2: the same for the second-nearest original (distance method; 0 otherwise)."""
        return float(self.correct_second.sum()) if self.correct_second is not None else 0.0

    @property
    def risk(self) -> float:
        """Share of records correctly linked: (L_1 + second_weight L_2) / n (distance), correct
        assignments / n (assignment), true pairs classified as links / n (probabilistic)."""
        if not self.n:
            return 0.0
        return (self.linked_first + self.second_weight * self.linked_second) / self.n

    @property
    def dld(self) -> float:
        """Distance-based linkage disclosure score in percent: 100 risk."""
        return 100.0 * self.risk

    def to_dict(self) -> dict:
        out = {
            "measure": "record_linkage_risk",
            "method": self.method,
            "variables": list(self.variables),
            "n": self.n,
            "risk": self.risk,
            "linked_first": self.linked_first,
            "share_first": self.linked_first / self.n if self.n else 0.0,
        }
        if self.method == "distance":
            out.update({"linked_second": self.linked_second, "share_second": self.linked_second / self.n,
                        "second_weight": self.second_weight, "dld_percent": self.dld, "scale": self.scale,
                        "metric": self.metric})
        if self.em is not None:
            e = self.em
            out.update({k: e[k] for k in ("m", "u", "p", "iterations", "converged", "links", "possible_links",
                                          "true_links", "precision", "mu", "lambda", "fields")})
            out["patterns"] = e["patterns"]
        return out

    def summary(self) -> Summary:
        rows = [("records", self.n), ("variables", ", ".join(self.variables)), ("method", self.method)]
        sections = []
        if self.method == "distance":
            rows += [("linked to the true partner (nearest)", round(self.linked_first, 4)),
                     ("linked to the true partner (second nearest)", round(self.linked_second, 4)),
                     ("DLD (%)", round(self.dld, 4))]
        elif self.method == "assignment":
            rows += [("correct one-to-one links", int(self.linked_first)), ("share", self.risk)]
        else:
            e = self.em
            rows += [("true pairs classified as links", int(self.linked_first)), ("risk", self.risk),
                     ("links (all pairs)", e["links"]), ("possible links", e["possible_links"]),
                     ("precision of the links", e["precision"]), ("EM iterations", e["iterations"])]
            sections.append(("m and u probabilities",
                             {"columns": ["field", "m", "u"],
                              "rows": [(f, m, u) for f, m, u in zip(e["fields"], e["m"], e["u"])]}))
        return Summary("Record linkage risk", (("", rows), *sections))

    def _records(self):
        out = {"correct_first": self.correct_first}
        if self.correct_second is not None:
            out["correct_second"] = self.correct_second
        if self.linked_to is not None:
            out["linked_to"] = self.linked_to
        return out

    def plot(self, ax=None):
        """Distance / assignment: shares linked. Probabilistic: pattern weights by class."""
        ax = new_axes(ax)
        if self.em is not None:
            pats = self.em["patterns"]
            W = [p["weight"] for p in pats]
            cnt = [max(p["count"], 1) for p in pats]
            col = {"link": "#C44E52", "possible": "#DD8452", "non-link": "#4C72B0"}
            ax.bar(range(len(W)), np.log10(cnt), color=[col[p["class"]] for p in pats])
            ax.set_xticks(range(len(W)), [p["pattern"] for p in pats], rotation=90, fontsize="small")
            ax.set_ylabel("log10 pairs")
            ax.set_title("Agreement patterns by class (red: link)")
        else:
            labels = ["nearest", "second"] if self.method == "distance" else ["assigned"]
            vals = [100 * self.linked_first / self.n] + ([100 * self.linked_second / self.n] if self.method == "distance" else [])
            ax.bar(labels, vals, color="#C44E52")
            ax.set_ylabel("records linked to their true partner (%)")
            ax.set_title("Record linkage")
        return ax


def _probabilistic(t1, t2, names, Xn, Yn, numeric, bins, mu, lam, em_start):
    from .._core.linkage import classify_patterns, fellegi_sunter_em, pattern_counts, pattern_weights

    n = t1.n
    ca = np.empty((n, len(names)), dtype=np.int64)
    cb = np.empty((n, len(names)), dtype=np.int64)
    cards = []
    for j, v in enumerate(names):
        if v in numeric:
            x, y = Xn[v], Yn[v]
            b = bins[v]
            if isinstance(b, int):
                obs = x[~np.isnan(x)]
                edges = np.unique(np.quantile(obs, np.arange(1, b) / b)) if obs.size else np.zeros(0)
            else:
                edges = np.sort(np.asarray(b, dtype=float))
            ca[:, j] = np.where(np.isnan(x), -1, np.searchsorted(edges, np.nan_to_num(x), side="right"))
            cb[:, j] = np.where(np.isnan(y), -1, np.searchsorted(edges, np.nan_to_num(y), side="right"))
            cards.append(edges.size + 1)
        else:
            s1, s2 = t1.column(v), t2.column(v)
            c1, c2 = _joint_codes(s1, s2, v, "original", "protected", na_code=False)
            unknown = np.setdiff1d(np.unique(c2[c2 >= 0]), np.unique(c1[c1 >= 0]))
            if unknown.size:
                both = pl.concat([s1.cast(pl.String), s2.cast(pl.String)])
                labels = sorted({str(both[int(i)]) for i in np.flatnonzero(np.isin(np.concatenate([c1, c2]), unknown))[:5]})
                raise SdcError(f"variables: column {v} of protected has categories not in original ({', '.join(labels)}); "
                               "expected the protected file to use the original's categories")
            ca[:, j], cb[:, j] = c1, c2
            cards.append(int(max(c1.max(initial=-1), c2.max(initial=-1))) + 1)
    K = len(names)
    if K > 20:
        raise SdcError(f"variables: {K} fields; probabilistic linkage handles at most 20 (2^K patterns)")
    counts = pattern_counts(ca, cb, np.maximum(cards, 1))
    m0, u0, p0 = em_start
    m, u, p, it, conv = fellegi_sunter_em(counts, K, m0=m0, u0=u0, p0=p0)
    mg, ug, W = pattern_weights(m, u)
    cls = classify_patterns(mg, ug, W, mu, lam)
    agree = (ca == cb) & (ca >= 0) & (cb >= 0)
    true_pat = (agree * (1 << np.arange(K))).sum(axis=1)
    is_link = cls[true_pat] == 2
    links = int(counts[cls == 2].sum())
    true_links = int(is_link.sum())
    order = np.argsort(-W, kind="stable")
    label = {2: "link", 1: "possible", 0: "non-link"}
    patterns = [{"pattern": "".join("1" if g >> j & 1 else "0" for j in range(K)), "count": int(counts[g]),
                 "true_pairs": int(np.count_nonzero(true_pat == g)), "weight": float(W[g]), "class": label[int(cls[g])]}
                for g in order]
    em = {"m": [float(x) for x in m], "u": [float(x) for x in u], "p": float(p), "iterations": int(it),
          "converged": bool(conv), "links": links, "possible_links": int(counts[cls == 1].sum()),
          "true_links": true_links, "precision": (true_links / links) if links else None, "mu": mu, "lambda": lam,
          "fields": list(names), "patterns": patterns}
    return is_link.astype(float), em


def record_linkage_risk(original, protected, variables, method: str = "distance", *, scale: str = "original",
                        metric: str = "euclidean", weights=None, second_weight: float = 1.0,
                        categorical=None, bins=10, mu: float = 0.05, lam: float = 0.05,
                        em_start=(0.9, 0.1, 0.1)) -> LinkageResult:
    r"""Re-identification risk by linking the protected file back to the original.

    ``method="distance"`` (spec F.1; Pagliuca & Seri 1999, Domingo-Ferrer & Torra 2001):
    variables standardised with the original's mean and sd (``scale``), Euclidean distance
    (optionally weighted per variable, or Mahalanobis with the original covariance); every
    protected record is linked to its nearest and second-nearest originals (k-d tree, exact;
    never an n x n matrix). L_1, L_2 count true partners in first / second position; when t
    originals tie with the partner the record counts 1/t. Risk = (L_1 + second_weight L_2)/n,
    DLD = 100 risk. Missing values: variables missing in either record are skipped and the
    squared distance is rescaled by p / (variables compared).

    ``method="probabilistic"`` (spec F.2; Fellegi & Sunter 1969): fields agree when equal
    (categorical) or in the same bin (numeric, ``bins`` quantile bins of the original or given
    edges); pattern counts over all n^2 pairs by hash joins and Moebius inversion; EM for m, u
    and p; patterns are links while their cumulative u <= ``mu`` and non-links while their
    cumulative m <= ``lam``. Risk = share of true pairs classified as links.

    ``method="assignment"``: one-to-one linkage minimising the total distance (the model of
    sdcMicro's ``recordLinkage``; Hungarian algorithm for n <= 2000, sparse matching over each
    record's nearest candidates above). Risk = share of correct assignments.

    Parameters
    ----------
    original, protected : table
        The same records in the same order.
    variables : list of str
    method : {"distance", "probabilistic", "assignment"}
    scale : {"original", "separate", "none"}
        Standardisation (distance, assignment). Constant variables are dropped with a warning.
    metric : {"euclidean", "mahalanobis"}
    weights : number, list or dict, optional
        Non-negative variable weights of the Euclidean distance.
    second_weight : float, default 1
        Weight of second-nearest links in the risk (spec K.1).
    categorical : list of str, optional
        Probabilistic: numeric variables to compare as categories (text columns always are).
    bins : int, list of edges, or dict per variable, default 10
        Probabilistic: discretisation of numeric variables.
    mu, lam : float, default 0.05
        Tolerated false-link and false non-link rates.
    em_start : (m, u, p), default (0.9, 0.1, 0.1)

    Returns
    -------
    LinkageResult

    References
    ----------
    Spec F.1, F.2, K.1; Fellegi & Sunter (1969); Jaro (1989); Winkler (1988).
    """
    if method not in _METHODS:
        raise SdcError(f"method: got {method!r}; expected one of {', '.join(_METHODS)}")
    if scale not in ("original", "separate", "none"):
        raise SdcError(f"scale: got {scale!r}; expected 'original', 'separate' or 'none'")
    if metric not in ("euclidean", "mahalanobis"):
        raise SdcError(f"metric: got {metric!r}; expected 'euclidean' or 'mahalanobis'")
    sw = _number(second_weight, "second_weight", low=0, high=1)
    t1, t2, names = pair_tables(original, protected, variables)
    backend = t1.backend
    n = t1.n
    if method == "probabilistic":
        mu_ = _number(mu, "mu", low=0, high=1)
        lam_ = _number(lam, "lam", low=0, high=1)
        if not isinstance(em_start, (list, tuple)) or len(em_start) != 3:
            raise SdcError(f"em_start: got {em_start!r}; expected (m, u, p)")
        start = tuple(_number(v, "em_start", low=0, high=1, low_open=True, high_open=True) for v in em_start)
        cat = set(as_name_list(categorical, "categorical", allow_empty=True))
        bad = cat - set(names)
        if bad:
            raise SdcError(f"categorical: {', '.join(sorted(bad))} not among the variables")
        numeric = [v for v in names if v not in cat and not _is_categorical(t1.column(v).dtype)]
        if isinstance(bins, dict):
            b = _per_variable(bins, numeric, "bins", 10, _check_bins)
        else:  # one setting (a number of bins or a list of edges) for every numeric variable
            b = {v: _check_bins(bins, "bins") for v in numeric}
        Xn = {v: numeric_matrix(t1, [v], "original")[:, 0] for v in numeric}
        Yn = {v: numeric_matrix(t2, [v], "protected")[:, 0] for v in numeric}
        first, em = _probabilistic(t1, t2, names, Xn, Yn, set(numeric), b, mu_, lam_, start)
        return LinkageResult(method=method, variables=tuple(names), n=n, correct_first=first, em=em,
                             second_weight=sw, backend=backend)
    X = numeric_matrix(t1, names, "original")
    Y = numeric_matrix(t2, names, "protected")
    Xs, Ys, used = _standardise_pair(X, Y, names, scale)
    keep = [names.index(v) for v in used]
    if weights is not None:
        if metric == "mahalanobis":
            raise SdcError("weights: variable weights apply to the Euclidean distance; expected metric='euclidean'")
        w = _per_variable(weights, names, "weights", 1.0, lambda v, p: _number(v, p, low=0))
        sq = np.sqrt(np.array([w[names[j]] for j in keep]))
        Xs, Ys = Xs * sq, Ys * sq
    if metric == "mahalanobis":
        if np.isnan(Xs).any() or np.isnan(Ys).any():
            raise SdcError("metric: the Mahalanobis distance needs complete data; expected no missing values")
        C = np.cov(Xs.T).reshape(len(used), len(used))
        try:
            L = np.linalg.cholesky(C)
        except np.linalg.LinAlgError:
            raise SdcError("variables: the covariance of the original variables is singular; the Mahalanobis "
                           "distance needs linearly independent variables") from None
        from scipy.linalg import solve_triangular

        Xs = solve_triangular(L, Xs.T, lower=True).T
        Ys = solve_triangular(L, Ys.T, lower=True).T
    if method == "assignment":
        if np.isnan(Xs).any() or np.isnan(Ys).any():
            raise SdcError("method: one-to-one assignment needs complete data; expected no missing values "
                           "(use method='distance')")
        from .._core.linkage import assignment_links

        link = assignment_links(Xs, Ys)
        first = (link == np.arange(n)).astype(float)
        return LinkageResult(method=method, variables=tuple(used), n=n, correct_first=first, linked_to=link,
                             second_weight=sw, scale=scale, metric=metric, backend=backend)
    from .._core.linkage import true_partner_ranks

    below, ties, nearest = true_partner_ranks(Xs, Ys)
    with np.errstate(divide="ignore"):
        inv = np.where(ties > 0, 1.0 / np.maximum(ties, 1), 0.0)
    first = np.where(below == 0, inv, 0.0)
    second = np.where((below == 1) | ((below == 0) & (ties >= 2)), inv, 0.0)
    return LinkageResult(method=method, variables=tuple(used), n=n, correct_first=first, correct_second=second,
                         linked_to=nearest, second_weight=sw, scale=scale, metric=metric, backend=backend)


def _check_bins(v, param):
    if isinstance(v, (bool, np.bool_)):
        raise SdcError(f"{param}: got {v!r}; expected an integer >= 2 or a list of bin edges")
    if isinstance(v, (int, np.integer)):
        if v < 2:
            raise SdcError(f"{param}: got {v!r}; expected an integer >= 2 or a list of bin edges")
        return int(v)
    try:
        edges = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise SdcError(f"{param}: got {v!r}; expected an integer >= 2 or a list of bin edges") from None
    if edges.ndim != 1 or edges.size == 0 or not np.all(np.isfinite(edges)):
        raise SdcError(f"{param}: got {v!r}; expected an integer >= 2 or a list of finite bin edges")
    return edges


# ----------------------------------------------------------------------------------------------
# external risk
# ----------------------------------------------------------------------------------------------
_SCALES = ("nominal", "ordinal", "continuous")


@dataclass(frozen=True, eq=False)
class ExternalRiskResult(Result):
    """Mlodak's external risk (S003; spec F.7).

    Attributes
    ----------
    variables : tuple of str
        Variables with availability p_j > 0.
    scales, availability : dict
    tolerance, pair_tol : float
    paired : ndarray of bool (n_external,)
        The external record has a released record at distance <= pair_tol (0: all available
        variables match).
    linked_to : ndarray of int (n_external,)
        First-found link (released row position, -1 = none): external records in file order each
        take the first admissible released record (one-to-one unless ``one_to_one=False``).
    correct : ndarray of bool or None
        The first-found link is the true partner (needs ``id``).
    partner_admissible : ndarray of bool or None
        The true partner is admissible (needs ``id``; False when it is not in the released file).
    risk : float
        r_ext = share of external records paired.
    internal_risk, combined_risk : float or None
        r = (r_int + r_ext) / 2 (S003 eq. 1) when ``internal_risk`` is given.
    """

    variables: tuple = ()
    scales: dict = field(default_factory=dict)
    availability: dict = field(default_factory=dict)
    tolerance: float = 0.05
    pair_tol: float = 0.0
    one_to_one: bool = True
    paired: np.ndarray = field(default=None, repr=False)
    linked_to: np.ndarray = field(default=None, repr=False)
    correct: np.ndarray | None = field(default=None, repr=False)
    partner_admissible: np.ndarray | None = field(default=None, repr=False)
    internal_risk: float | None = None
    n_released: int = 0
    n: int = 0  # external records
    algorithm: str = "exact"

    @property
    def risk(self) -> float:
        return float(self.paired.mean()) if self.n else 0.0

    @property
    def combined_risk(self) -> float | None:
        return None if self.internal_risk is None else (self.internal_risk + self.risk) / 2

    def to_dict(self) -> dict:
        out = {
            "measure": "external_risk",
            "variables": list(self.variables),
            "scales": dict(self.scales),
            "availability": dict(self.availability),
            "tolerance": self.tolerance,
            "pair_tol": self.pair_tol,
            "one_to_one": self.one_to_one,
            "n_released": self.n_released,
            "n_external": self.n,
            "paired": int(self.paired.sum()),
            "risk": self.risk,
            "linked_first_found": int((self.linked_to >= 0).sum()),
            "internal_risk": self.internal_risk,
            "combined_risk": self.combined_risk,
        }
        if self.correct is not None:
            out["correct_links"] = int(self.correct.sum())
            out["correct_link_rate"] = float(self.correct.mean()) if self.n else 0.0
            out["partner_admissible"] = int(self.partner_admissible.sum())
        return out

    def summary(self) -> Summary:
        rows = [("released records", self.n_released), ("external records", self.n),
                ("variables (availability)", ", ".join(f"{v} ({self.availability[v]:g})" for v in self.variables)),
                ("continuous tolerance d*", self.tolerance),
                ("external records paired", int(self.paired.sum())), ("external risk r_ext", self.risk),
                ("first-found links" + (" (one-to-one)" if self.one_to_one else ""), int((self.linked_to >= 0).sum()))]
        if self.correct is not None:
            rows += [("correct first-found links", int(self.correct.sum())),
                     ("true partner admissible", int(self.partner_admissible.sum()))]
        if self.internal_risk is not None:
            rows += [("internal risk r_int", self.internal_risk), ("combined risk (r_int + r_ext)/2", self.combined_risk)]
        return Summary("External risk (Mlodak)", (("", rows),))

    def _records(self):
        out = {"paired": self.paired, "linked_to": self.linked_to}
        if self.correct is not None:
            out["correct"] = self.correct
            out["partner_admissible"] = self.partner_admissible
        return out

    def plot(self, ax=None):
        """External records paired, linked and correctly linked."""
        ax = new_axes(ax)
        labels = ["paired", "linked (first found)"]
        vals = [100 * self.risk, 100 * float((self.linked_to >= 0).mean()) if self.n else 0.0]
        if self.correct is not None:
            labels.append("correct link")
            vals.append(100 * float(self.correct.mean()) if self.n else 0.0)
        ax.bar(labels, vals, color="#C44E52")
        ax.set_ylabel("external records (%)")
        ax.set_title("External risk")
        return ax


def _check_scale(v, param):
    if v not in _SCALES:
        raise SdcError(f"{param}: got {v!r}; expected one of {', '.join(_SCALES)}")
    return v


def _ordinal_ranks(s1: pl.Series, s2: pl.Series, name, cats, first, second):
    if cats is None:
        if isinstance(s1.dtype, pl.Enum):
            cats = list(s1.dtype.categories)
        else:
            both = pl.concat([s1.cast(s1.dtype), s2.cast(s1.dtype)], how="vertical") if s1.dtype == s2.dtype else None
            if both is None:
                raise SdcError(f"variables: column {name} has type {s1.dtype} in {first} but {s2.dtype} in {second}; "
                               "expected the same kind of values in both files")
            cats = both.drop_nulls().unique().sort().to_list()
    cats = list(cats)
    if len(set(map(str, cats))) != len(cats):
        raise SdcError(f"categories[{name!r}]: repeated categories; expected each category once")
    key = [str(c) for c in cats]
    out = []
    for s, which in ((s1, first), (s2, second)):
        txt = s.cast(pl.String)
        if s.dtype.is_float():
            txt = pl.Series([None if v is None or v != v else (str(int(v)) if float(v).is_integer() and str(int(v)) in key
                                                                else str(v)) for v in s.to_list()], dtype=pl.String)
        r = txt.replace_strict(key, list(range(1, len(key) + 1)), default=0, return_dtype=pl.Int64).to_numpy()
        unknown = (r == 0) & txt.is_not_null().to_numpy()
        if unknown.any():
            vals = sorted({txt[int(i)] for i in np.flatnonzero(unknown)[:5]})
            raise SdcError(f"variables: column {name} of {which} has values not among its ordinal categories "
                           f"({', '.join(vals)}); expected one of {', '.join(key[:10])}")
        out.append(r)
    return out[0], out[1], len(cats)


def external_risk(released, external, variables, scales=None, availability=None, tolerance: float = 0.05, *,
                  categories=None, id=None, pair_tol: float = 0.0, normalize: bool = False,
                  one_to_one: bool = True, internal_risk=None, algorithm: str = "exact") -> ExternalRiskResult:
    r"""Mlodak's external risk: can records of an alternative source be paired with released ones?

    Per-variable distance between an external record a and a released record h (S003, with its
    swapped 0/1 corrected, spec F.7):

    * nominal: 0 if equal, 1 otherwise (a missing value is one more category);
    * ordinal: :math:`|r_a - r_h| / (R_j - 1)` with ranks 1..R_j of the declared categories; a
      missing value is rank 0 and the divisor becomes R_j when the variable has a missing value
      in either file;
    * continuous: 1 if :math:`|a - x_h| / |x_h| > d^*` else 0 (x_h = 0: 0 iff a = 0); a missing
      x_h is replaced by the released value nearest to a; a missing a matches only a missing x_h
      (library rule, spec K.15).

    :math:`d_{ah} = \sum_j p_j d_j`; a is *paired* when some h has :math:`d_{ah} \le`
    ``pair_tol`` (0: every available variable matches). :math:`r_{ext}` = share of external
    records paired; with ``internal_risk`` the combined risk :math:`(r_{int} + r_{ext})/2`.
    S003's first-found linkage is also reported: external records in file order each take the
    first admissible released record (one-to-one by default).

    Computed exactly by hashing the categorical variables and an interval search on a sorted
    continuous variable (``algorithm="exact"``; O((n + n#) log n + candidates)); the direct
    pairwise computation (``"pairwise"``, O(n n#)) is its test oracle.

    Parameters
    ----------
    released : table
        The protected file D.
    external : table
        The alternative source A (any number of records).
    variables : list of str
        Variables in both files.
    scales : str, list or dict, optional
        "nominal", "ordinal" or "continuous" per variable. Default: float columns continuous,
        everything else nominal (a variable with ``categories`` is ordinal).
    availability : number, list or dict, optional
        p_j in [0, 1], the probability that the intruder has variable j (default 1; 0 excludes it).
    tolerance : float > 0, default 0.05
        d* for continuous variables.
    categories : dict, optional
        Ordered categories of ordinal variables (default: the Enum order, else the sorted values
        of both files). Values outside them are an error.
    id : str, optional
        Identifier column in both files (unique in the released file): reports correct links.
    pair_tol : float >= 0, default 0
    normalize : bool, default False
        Divide d_{ah} by sum_j p_j (only matters with ``pair_tol`` > 0).
    one_to_one : bool, default True
        First-found linkage takes each released record at most once.
    internal_risk : float in [0, 1], optional
        r_int, e.g. the global re-identification rate of the categorical keys.
    algorithm : {"exact", "pairwise"}

    Returns
    -------
    ExternalRiskResult

    References
    ----------
    Spec F.7, J (S003-1..3, S003-8), K.15; Mlodak, Pietrzak & Jozefowski (S003).
    """
    if algorithm not in ("exact", "pairwise"):
        raise SdcError(f"algorithm: got {algorithm!r}; expected 'exact' or 'pairwise'")
    tol = _number(tolerance, "tolerance", low=0, low_open=True)
    ptol = _number(pair_tol, "pair_tol", low=0)
    r_int = None if internal_risk is None else _number(internal_risk, "internal_risk", low=0, high=1)
    tD = as_table(released, "released")
    tA = as_table(external, "external")
    names = as_name_list(variables, "variables")
    from .continuous import _column_problems

    _column_problems(tD, names, "released")
    _column_problems(tA, names, "external")
    if tD.n == 0:
        raise SdcError("released: the table has no records; expected at least one")
    if categories is not None and not isinstance(categories, dict):
        raise SdcError("categories: expected a dict {variable: [ordered categories]}")
    cats = dict(categories or {})
    unknown = [k for k in cats if k not in names]
    if unknown:
        raise SdcError(f"categories: {', '.join(map(str, unknown))} not among the variables")

    def default_scale(v):
        if v in cats:
            return "ordinal"
        return "continuous" if tD.column(v).dtype.is_float() else "nominal"

    sc = {v: default_scale(v) for v in names}
    if isinstance(scales, str):
        sc = {v: _check_scale(scales, "scales") for v in names}
    elif isinstance(scales, dict):
        unknown = [k for k in scales if k not in names]
        if unknown:
            raise SdcError(f"scales: {', '.join(map(str, unknown))} not among the variables; expected keys from "
                           f"{', '.join(names)}")
        sc.update({k: _check_scale(v, f"scales[{k!r}]") for k, v in scales.items()})
    elif scales is not None:
        sc = _per_variable(list(scales) if isinstance(scales, (list, tuple)) else scales, names, "scales", None,
                           _check_scale)
    av = _per_variable(availability, names, "availability", 1.0, lambda v, p: _number(v, p, low=0, high=1))
    used = [v for v in names if av[v] > 0]
    if not used:
        raise SdcError("availability: every variable has p_j = 0; expected at least one available variable")
    nom = [v for v in used if sc[v] == "nominal"]
    ordv = [v for v in used if sc[v] == "ordinal"]
    con = [v for v in used if sc[v] == "continuous"]
    nD, nA = tD.n, tA.n
    nom_d = np.zeros((nD, len(nom)), np.int64)
    nom_a = np.zeros((nA, len(nom)), np.int64)
    for j, v in enumerate(nom):
        nom_d[:, j], nom_a[:, j] = _joint_codes(tD.column(v), tA.column(v), v, "released", "external", na_code=True)
    ord_d = np.zeros((nD, len(ordv)), np.float64)
    ord_a = np.zeros((nA, len(ordv)), np.float64)
    den = np.ones(len(ordv))
    for j, v in enumerate(ordv):
        rd, ra, R = _ordinal_ranks(tD.column(v), tA.column(v), v, cats.get(v), "released", "external")
        ord_d[:, j], ord_a[:, j] = rd, ra
        has_na = (rd == 0).any() or (ra == 0).any()
        den[j] = R if has_na else max(R - 1, 1)
    con_d = numeric_matrix(tD, con, "released") if con else np.zeros((nD, 0))
    con_a = numeric_matrix(tA, con, "external") if con else np.zeros((nA, 0))
    total_p = sum(av[v] for v in used)
    scale_w = (1.0 / total_p) if normalize else 1.0
    from .._core.linkage_external import ExternalInput, external_exact, external_pairwise, first_found

    e = ExternalInput(nom_d, nom_a, ord_d, ord_a, den, con_d, con_a,
                      np.array([av[v] * scale_w for v in nom]), np.array([av[v] * scale_w for v in ordv]),
                      np.array([av[v] * scale_w for v in con]), tol, ptol)
    if algorithm == "exact":
        paired, link = external_exact(e, reuse=not one_to_one)
    else:
        paired, ptr, idx = external_pairwise(e)
        link = first_found(ptr, idx, nD, reuse=not one_to_one)
    correct = admissible = None
    if id is not None:
        if not isinstance(id, str):
            raise SdcError(f"id: got {id!r}; expected a column name")
        _column_problems(tD, [id], "released")
        _column_problems(tA, [id], "external")
        idD, idA = _joint_codes(tD.column(id), tA.column(id), id, "released", "external", na_code=False)
        if (idD < 0).any():
            raise SdcError(f"id: column {id} of released has missing values; expected an identifier for every record")
        if np.unique(idD).size != nD:
            raise SdcError(f"id: column {id} of released has repeated values; expected a unique identifier")
        pos = np.full(int(max(idD.max(initial=-1), idA.max(initial=-1))) + 2, -1, np.int64)
        pos[idD] = np.arange(nD)
        partner = np.where(idA >= 0, pos[np.maximum(idA, 0)], -1)
        correct = (link >= 0) & (link == partner)
        admissible = np.zeros(nA, bool)
        has = partner >= 0
        if has.any():
            from .._core.linkage_external import nearest_observed, pair_distance

            near = nearest_observed(e.con_d, e.con_a)
            ia = np.flatnonzero(has)
            admissible[ia] = pair_distance(e, ia, partner[ia], near) <= ptol
    return ExternalRiskResult(variables=tuple(used), scales={v: sc[v] for v in used}, availability={v: av[v] for v in used},
                              tolerance=tol, pair_tol=ptol, one_to_one=bool(one_to_one), paired=paired, linked_to=link,
                              correct=correct, partner_admissible=admissible, internal_risk=r_int, n_released=nD, n=nA,
                              algorithm=algorithm, backend=tA.backend)
