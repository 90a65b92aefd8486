r"""Estimated number of population uniques from a sample's class-size profile, as in ARX's
population-uniqueness risk: Zayatz (1991), Pitman (Hoshino 2001), SNB (Chen & Keller-McNulty
1998) and the decision rule of Dankar, El Emam, Neisa & Roffey (2012).

See :func:`population_uniques`; the kernels are in :mod:`sdckit._core.uniqueness`, the result in
:mod:`sdckit.results.uniqueness`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._core import uniqueness as uq
from .._declare import Param, declare
from .._errors import SdcError, warn
from .._prepare import prepare
from .._progress import step
from ..engines import local_records
from ..results.uniqueness import PopulationUniquesResult
from ..scenario import accepts_scenario

__all__ = ["PopulationUniquesResult", "population_uniques"]

METHODS = ("dankar", "pitman", "zayatz", "snb", "all")


@dataclass(frozen=True)
class _Sample:
    """The validated sample: class sizes of the complete records and the sampling fraction."""

    keys: tuple
    n: int
    n_used: int
    class_sizes: np.ndarray
    pi: float
    N: float
    source: str
    backend: str


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("sampling_fraction", "number"),
    Param("weight"),
    Param("population_size", "number"),
    Param("method", "choice", "The estimator of the number of population uniques (`all`: every one)", choices=METHODS),
    Param("missing"),
    Param("allow_degenerate_keys"),
    out_of_core=True,
    excluded="an estimator the user picks (the assessment uses the log-linear model)",
)
def population_uniques(
    data,
    keys,
    *,
    sampling_fraction: float | None = None,
    weight: str | None = None,
    population_size: float | None = None,
    method: str = "dankar",
    missing=None,
    allow_degenerate_keys: bool = False,
    engine=None,
) -> PopulationUniquesResult:
    r"""Estimate the number of population uniques from a sample (as in ARX).

    The records are grouped by their key values into equivalence classes; the sample's
    class-size profile c_i (number of classes with exactly i records; u classes, n records,
    c_1 sample uniques) and the sampling fraction pi = n / N are all the estimators use. Each
    estimates S_1, the number of population classes with F_k = 1:

    - ``"zayatz"`` (Zayatz 1991): Bayes' rule with hypergeometric sampling and the population
      class-size distribution estimated by the sample's,
      \hat S_1 = c_1 \frac{c_1 h_1}{\sum_i c_i h_i} \frac{N}{n}, with
      h_i = i \binom{N-i}{n-1} / \binom{N}{n} = P(f = 1 | F = i).
    - ``"pitman"`` (Hoshino 2001): the population partition follows Pitman's sampling formula
      with parameters (theta, alpha) fitted by maximum likelihood to the sample's partition,
      \ell = \sum_{i=1}^{u-1}\log(\theta + i\alpha) - \sum_{i=1}^{n-1}\log(\theta + i)
      + \sum_{j\ge2} c_j \sum_{k=1}^{j-1}\log(k - \alpha), maximised numerically (bounded,
      with a convergence check); \hat S_1 = \Gamma(\theta + 1)/\Gamma(\theta + \alpha) N^\alpha
      (\hat\theta when the maximum is on alpha = 0, the Ewens model).
    - ``"snb"`` (Chen & Keller-McNulty 1998): population class sizes F with F - 1 negative
      binomial(alpha, beta) over K classes, K estimated by the modified Shlosser estimator
      (Haas & Stokes 1998), (alpha, beta) solving E(c_1) = c_1 and E(c_2) = c_2;
      \hat S_1 = \hat K \beta^\alpha.
    - ``"dankar"`` (default; Dankar et al. 2012): Pitman when pi <= 0.1 (Zayatz if Pitman's
      maximum likelihood does not converge), otherwise the smaller of Zayatz and SNB (Zayatz if
      SNB does not converge).
    - ``"all"``: every estimator; the headline is Dankar's choice.

    Without sample uniques every estimate is 0; with pi = 1 (a census) every estimate is c_1.
    The headline ``tau1 = pi * population_uniques`` is the expected number of sample uniques
    that are population uniques (a population unique is in a Bernoulli sample with probability
    pi), the quantity \tau_1 of :func:`sdckit.loglinear_risk`.

    Parameters
    ----------
    data : table (pandas, Polars, PyArrow, dict of columns), or a path / relation with DuckDB
        or Spark
    keys : str or list of str
        Categorical key variables. Records with a missing key value are excluded (with a
        warning); the population they stand for is left out too (N n_used / n).
    sampling_fraction : float in (0, 1], optional
        The sampling fraction pi (1: the file is the population).
    weight : str, optional
        Design weights: without ``sampling_fraction`` and ``population_size``,
        pi = n / \sum_i w_i (N = \sum_i w_i). Not used otherwise.
    population_size : float, optional
        N (at least n): pi = n / N. Give either this or ``sampling_fraction``.
    method : {"dankar", "pitman", "zayatz", "snb", "all"}
    missing, allow_degenerate_keys
        As in :func:`sdckit.frequencies`.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the records are grouped (see :func:`sdckit.frequencies`): with DuckDB or Spark
        only the distinct key patterns and their record counts come back to Python.

    Returns
    -------
    PopulationUniquesResult
        Aggregates only (the class-size profile and the estimates).

    Notes
    -----
    ARX (``RiskModelPopulationUniqueness``) gives the same Zayatz and Pitman estimates (to
    about 1e-9 on ARX's adult data). ARX returns no Pitman estimate for alpha = 0, where this
    function keeps the Ewens estimate. ARX's SNB differs: its Shlosser estimate of K and its
    second moment equation have two slips (see :func:`sdckit._core.uniqueness.snb`), so above
    pi = 0.1 Dankar's choice can differ from ARX's.

    References
    ----------
    Zayatz, L. (1991), Estimation of the number of unique population elements using a sample.
    Proc. Survey Research Methods Section, ASA, 369-373. Hoshino, N. (2001), Applying Pitman's
    sampling formula to microdata disclosure risk assessment. J. Official Statistics 17, 499-520.
    Chen, G. & Keller-McNulty, S. (1998), Estimation of identification disclosure risk in
    microdata. J. Official Statistics 14, 79-95. Haas, P.J. & Stokes, L. (1998), Estimating the
    number of classes in a finite population. JASA 93, 1475-1487. Dankar, F.K., El Emam, K.,
    Neisa, A. & Roffey, T. (2012), Estimating the re-identification risk of clinical data sets.
    BMC Medical Informatics and Decision Making 12:66.
    """
    sample = _validate(data, keys, sampling_fraction, weight, population_size, missing, allow_degenerate_keys, engine)
    step(f"estimating the population uniques ({method})")
    sizes, counts = uq.class_profile(sample.class_sizes)
    N_used = sample.N if sample.n_used == sample.n else sample.N * sample.n_used / sample.n
    value, chosen, reason, ests = uq.estimate(sizes, counts, sample.n_used, N_used, method)
    if not math.isfinite(value):
        warn(f"method: {reason}; population_uniques is NaN (method='dankar' falls back to Zayatz)")
    return PopulationUniquesResult(
        keys=sample.keys,
        n=sample.n,
        n_used=sample.n_used,
        n_excluded=sample.n - sample.n_used,
        n_classes=int(counts.sum()),
        n_sample_uniques=int(counts[sizes == 1].sum()),
        sampling_fraction=sample.pi,
        population_size=sample.N,
        fraction_source=sample.source,
        method=method,
        chosen=chosen,
        reason=reason,
        population_uniques=float(value),
        estimates={m: float(e.value) for m, e in ests.items()},
        converged={m: bool(e.converged) for m, e in ests.items()},
        parameters={m: dict(e.parameters) for m, e in ests.items()},
        notes={m: e.note for m, e in ests.items()},
        class_sizes=sizes,
        class_counts=counts,
        backend=sample.backend,
        records=local_records(),
    )


def _validate(data, keys, sampling_fraction, weight, population_size, missing, allow_degenerate_keys, engine):
    """Check the parameters together (each is checked by the declaration), group the complete
    records into classes, find pi and N."""
    pi = None if sampling_fraction is None else float(sampling_fraction)
    N = None if population_size is None else float(population_size)
    if pi is not None and N is not None:
        raise SdcError(
            "population_size: given together with sampling_fraction; expected one of them (N = n / sampling_fraction)"
        )
    prep = prepare(
        data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys, engine=engine
    )
    enc = prep.keys
    complete = np.asarray((enc.codes >= 0).all(axis=1))
    counts = None if prep.counts is None else np.asarray(prep.counts)[complete]
    n = prep.n
    n_used = int(complete.sum()) if counts is None else int(counts.sum())
    if n_used == 0:
        raise SdcError("keys: every record has a missing key value; expected records with complete keys")
    if n_used < n:
        warn(f"keys: {n - n_used} record(s) with a missing key value are excluded from the class-size profile")
    pi, N, source = _fraction(n, pi, N, prep.weights)
    cards = [int(c) for c in enc.cardinalities]
    _, _, sizes, _ = prep.mem.patterns(enc.codes[complete], None, cards=cards, multiplicity=counts)
    return _Sample(tuple(enc.names), n, n_used, np.rint(sizes).astype(np.int64), pi, N, source, prep.table.backend)


def _fraction(n: int, pi, N, weights) -> tuple[float, float, str]:
    """(pi, N, source): the sampling fraction given, n / population_size, or n / sum(w)."""
    if pi is not None:
        return pi, n / pi, "sampling_fraction"
    if N is not None:
        if N < n:
            raise SdcError(f"population_size: got {N:g}; expected at least the number of records in the sample ({n})")
        return n / N, N, "population_size"
    if weights is not None:
        total = float(np.sum(weights))
        if total < n:
            raise SdcError(
                f"weight: the weights sum to {total:.6g}, fewer than the {n} records; expected design weights "
                "(1 / inclusion probability, at least 1 on average)"
            )
        return n / total, total, "weight"
    raise SdcError(
        "sampling_fraction: no sampling fraction, population size or weight given; expected "
        "sampling_fraction=..., population_size=... or weight=... (the estimators need pi = n / N)"
    )
