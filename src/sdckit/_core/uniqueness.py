r"""Estimators of the number of population uniques from a sample's class-size profile.

Pure NumPy/SciPy kernels (SciPy imported inside the functions). The input is the sample's
class-size profile: ``sizes`` (distinct class sizes j, ascending) and ``counts`` (c_j, the
number of equivalence classes of the sample with exactly j records), the sample size
n = \sum_j j c_j and the population size N (a real number >= n; pi = n / N).

Notation (Dankar, El Emam, Neisa & Roffey 2012, Appendix A): u = \sum_j c_j classes in the
sample, c_1 sample uniques, K non-empty classes in the population, S_1 population uniques
(classes with F = 1), the quantity estimated.

Estimators:

- :func:`zayatz`: Zayatz (1991), hypergeometric sampling with the population class-size
  distribution estimated by the sample's.
- :func:`pitman`: Hoshino (2001), the Pitman sampling formula with (theta, alpha) by maximum
  likelihood.
- :func:`snb`: Chen & Keller-McNulty (1998), slide negative binomial population class sizes,
  (alpha, beta) from the expected numbers of sample classes of sizes 1 and 2, with K from the
  modified Shlosser estimator of Haas & Stokes (1998) (:func:`shlosser_classes`).
- :func:`dankar`: the decision rule of Dankar et al. (2012) that picks one of them.

These reproduce ARX's population-uniqueness models (``RiskModelPopulationUniqueness``) where
ARX solves the published equations; see :func:`shlosser_classes` and :func:`snb` for the two
places where this module follows the derivation instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "DANKAR_PITMAN_MAX_FRACTION",
    "Estimate",
    "class_profile",
    "dankar",
    "estimate",
    "hypergeometric_one",
    "pitman",
    "pitman_hessian",
    "pitman_loglik",
    "shlosser_classes",
    "snb",
    "snb_expected",
    "zayatz",
]

#: Dankar et al. (2012): the Pitman estimator is used up to this sampling fraction
DANKAR_PITMAN_MAX_FRACTION = 0.1
#: interior of the parameter space: an optimum closer than this to a bound is a boundary
_EDGE = 1e-6
#: the gradient of -loglik / n at an accepted optimum is below this
_FLAT = 1e-6
#: the closed (log-gamma) form of the Pitman class sums is used up to theta / alpha = this
_CLOSED_FORM_MAX_RATIO = 1e6
#: at most this many Newton steps polish an interior Pitman optimum
_NEWTON_MAX_STEPS = 20


@dataclass(frozen=True)
class Estimate:
    """One estimator's result: the estimated number of population uniques (NaN when the
    estimator did not converge), whether it converged, its fitted parameters and a note."""

    value: float
    converged: bool
    parameters: dict = field(default_factory=dict)
    note: str = ""


def class_profile(class_sizes) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes, counts)``: the distinct class sizes j (ascending) and c_j, the number of
    classes of size j, from the size of every class (zeros ignored)."""
    s = np.asarray(class_sizes, dtype=np.int64)
    s = s[s > 0]
    sizes, counts = np.unique(s, return_counts=True)
    return sizes.astype(np.int64), counts.astype(np.int64)


def _c(sizes, counts, j: int) -> int:
    return int(counts[sizes == j].sum())


# ---------------------------------------------------------------------------------------------
# Zayatz
def hypergeometric_one(sizes, n: float, N: float) -> np.ndarray:
    r"""P(f = 1 | F = j) for each j in ``sizes``: exactly one of the j population members of a
    class is in a simple random sample of n out of N,

    .. math:: h_j = \binom{j}{1}\binom{N - j}{n - 1} / \binom{N}{n}
              = j \frac{n}{N} \prod_{k=1}^{j-1} \frac{N - n - k + 1}{N - k}

    (the product form also serves a non-integer N = n / pi; a factor <= 0 makes h_j = 0).
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 0:
        return np.zeros(0)
    k = np.arange(1, int(sizes.max()), dtype=float)
    num = N - n - k + 1.0
    with np.errstate(divide="ignore"):
        logs = np.where(num > 0, np.log(np.where(num > 0, num, 1.0)) - np.log(N - k), -np.inf)
    cum = np.concatenate([[0.0], np.cumsum(logs)])
    return np.exp(np.log(sizes) + math.log(n / N) + cum[sizes - 1])


def zayatz(sizes, counts, n: float, N: float) -> Estimate:
    r"""Zayatz (1991) estimate of the number of population uniques.

    Bayes' rule with the population class-size distribution p_j estimated by the sample's,
    c_j / u, and hypergeometric sampling h_j = P(f = 1 | F = j) (:func:`hypergeometric_one`):

    .. math::

        \hat P(F = 1 \mid f = 1) = \frac{(c_1/u)\, h_1}{\sum_j (c_j/u)\, h_j}, \qquad
        \hat S_1 = c_1 \hat P(F = 1 \mid f = 1) \frac{N}{n}

    (Dankar et al. 2012, Appendix A). With N = n every h_j is 0 except h_1 = 1: \hat S_1 = c_1.

    References
    ----------
    Zayatz, L. (1991), Estimation of the number of unique population elements using a sample.
    Proceedings of the Survey Research Methods Section, American Statistical Association,
    369-373.
    """
    sizes, counts = np.asarray(sizes), np.asarray(counts, dtype=float)
    c1 = _c(sizes, counts, 1)
    if c1 == 0:
        return Estimate(0.0, True, {"p_unique": 0.0}, "no sample uniques")
    h = hypergeometric_one(sizes, n, N)
    p = c1 * h[sizes == 1][0] / float(np.dot(counts, h))
    return Estimate(float(c1 * p * N / n), True, {"p_unique": float(p)})


# ---------------------------------------------------------------------------------------------
# Pitman
def _class_sums(theta: float, alpha: float, u: int) -> tuple[float, float, float]:
    r"""\sum_{i=1}^{u-1} \log(\theta + i\alpha), \sum 1/(\theta + i\alpha), \sum i/(\theta + i\alpha).

    Closed form with log-gamma / digamma functions of r = theta / alpha while r <= 1e6; beyond
    (alpha -> 0, the Ewens limit, alpha = 0 included) log Gamma(r + u) - log Gamma(r + 1) loses
    its digits to cancellation and the sums are taken term by term.
    """
    from scipy.special import digamma, gammaln

    if u <= 1:
        return 0.0, 0.0, 0.0
    if alpha > 0 and theta / alpha <= _CLOSED_FORM_MAX_RATIO:
        r = theta / alpha
        dpsi = float(digamma(r + u) - digamma(r + 1.0))
        s0 = (u - 1.0) * math.log(alpha) + float(gammaln(r + u) - gammaln(r + 1.0))
        return s0, dpsi / alpha, (u - 1.0 - r * dpsi) / alpha
    i = np.arange(1.0, u)
    x = theta + alpha * i
    return float(np.sum(np.log(x))), float(np.sum(1.0 / x)), float(np.sum(i / x))


def pitman_loglik(theta: float, alpha: float, sizes, counts, n: int):
    r"""Log-likelihood of the Pitman sampling formula and its gradient (d/dtheta, d/dalpha).

    For a sample of n records in u classes with c_j classes of size j (Pitman 1995; Hoshino
    2001), up to a constant:

    .. math::

        \ell(\theta, \alpha) = \sum_{i=1}^{u-1} \log(\theta + i\alpha)
            - \sum_{i=1}^{n-1} \log(\theta + i)
            + \sum_{j \ge 2} c_j \sum_{k=1}^{j-1} \log(k - \alpha),

    with \sum_{i=1}^{u-1} \log(\theta + i\alpha) = (u - 1)\log\alpha + \log\Gamma(\theta/\alpha + u)
    - \log\Gamma(\theta/\alpha + 1) (term by term when theta / alpha > 1e6, see
    :func:`_class_sums`), \sum_{i=1}^{n-1}\log(\theta + i) = \log\Gamma(\theta + n)
    - \log\Gamma(\theta + 1) and \sum_{k=1}^{j-1}\log(k - \alpha) = \log\Gamma(j - \alpha)
    - \log\Gamma(1 - \alpha). Parameters: 0 <= alpha < 1 (alpha = 0: the Ewens sampling
    formula), theta > -alpha.
    """
    from scipy.special import digamma, gammaln

    sizes = np.asarray(sizes)
    counts = np.asarray(counts, dtype=float)
    u = int(counts.sum())
    m = sizes > 1
    cj, j = counts[m], sizes[m].astype(float)
    s0, s1, s2 = _class_sums(theta, alpha, u)
    ll = s0 - float(gammaln(theta + n) - gammaln(theta + 1.0))
    ll += float(np.dot(cj, gammaln(j - alpha) - gammaln(1.0 - alpha)))
    d_theta = s1 - float(digamma(theta + n) - digamma(theta + 1.0))
    d_alpha = s2 - float(np.dot(cj, digamma(j - alpha) - digamma(1.0 - alpha)))
    return float(ll), float(d_theta), float(d_alpha)


def pitman_hessian(theta: float, alpha: float, sizes, counts, n: int) -> np.ndarray:
    r"""Hessian of :func:`pitman_loglik` in (theta, alpha):

    .. math::

        \partial^2_{\theta\theta}\ell = -\sum_{i=1}^{u-1} \frac{1}{(\theta + i\alpha)^2}
            + \psi_1(\theta + 1) - \psi_1(\theta + n), \qquad
        \partial^2_{\theta\alpha}\ell = -\sum_{i=1}^{u-1} \frac{i}{(\theta + i\alpha)^2},

        \partial^2_{\alpha\alpha}\ell = -\sum_{i=1}^{u-1} \frac{i^2}{(\theta + i\alpha)^2}
            + \sum_{j \ge 2} c_j \bigl(\psi_1(j - \alpha) - \psi_1(1 - \alpha)\bigr),

    with \psi_1 the trigamma function. The class sums are taken term by term (u terms, exact to
    rounding; the Hessian only steers the Newton steps of :func:`_pitman_newton`).
    """
    from scipy.special import polygamma

    sizes = np.asarray(sizes)
    counts = np.asarray(counts, dtype=float)
    u = int(counts.sum())
    m = sizes > 1
    cj, j = counts[m], sizes[m].astype(float)
    i = np.arange(1.0, u)
    inv2 = 1.0 / (theta + alpha * i) ** 2
    h_tt = -float(np.sum(inv2)) + float(polygamma(1, theta + 1.0) - polygamma(1, theta + n))
    h_ta = -float(np.dot(i, inv2))
    h_aa = -float(np.dot(i * i, inv2)) + float(np.dot(cj, polygamma(1, j - alpha) - polygamma(1, 1.0 - alpha)))
    return np.array([[h_tt, h_ta], [h_ta, h_aa]])


def _pitman_newton(theta: float, alpha: float, sizes, counts, n: int, ewens: bool = False) -> tuple[float, float, int]:
    """Polish a Pitman optimum with Newton's method on the score equations (on theta alone, at
    alpha = 0, for the Ewens boundary: ``ewens=True``).

    L-BFGS-B stops on a relative reduction of the objective (and its stopping point moves with
    SciPy's version); a few Newton steps from there reach the root of the score to rounding, so
    the estimate no longer depends on where the first-order method stopped. Each step must stay
    inside the parameter space (0 < alpha < 1 or alpha = 0, theta > -alpha) with a negative definite Hessian
    and must reduce the (scaled) score; the iteration ends when a step is below 1e-13 relative
    or no longer reduces the score. Returns (theta, alpha, Newton steps taken).
    """

    def score(t: float, a: float) -> np.ndarray:
        _, d_t, d_a = pitman_loglik(t, a, sizes, counts, n)
        return np.array([d_t, 0.0 if ewens else d_a])

    g = score(theta, alpha)
    steps = 0
    for _ in range(_NEWTON_MAX_STEPS):
        H = pitman_hessian(theta, alpha, sizes, counts, n)
        if ewens:
            H = np.array([[H[0, 0], 0.0], [0.0, -1.0]])
        if not (np.all(np.isfinite(H)) and H[0, 0] < 0 and np.linalg.det(H) > 0):
            break
        d = np.linalg.solve(H, g)
        t_new, a_new = theta - float(d[0]), alpha - float(d[1])
        if not ((ewens or 0.0 < a_new < 1.0) and t_new > -a_new):
            break
        g_new = score(t_new, a_new)
        if not np.all(np.isfinite(g_new)) or _scaled_norm(g_new, theta, alpha) >= _scaled_norm(g, theta, alpha):
            break
        theta, alpha, g = t_new, a_new, g_new
        steps += 1
        if abs(float(d[0])) <= 1e-13 * abs(theta) and abs(float(d[1])) <= 1e-13 * max(alpha, _EDGE):
            break
    return theta, alpha, steps


def _scaled_norm(g: np.ndarray, theta: float, alpha: float) -> float:
    """Size of the score in relative units: |theta dl/dtheta| + |alpha dl/dalpha|."""
    return abs(theta * float(g[0])) + abs(alpha * float(g[1]))


def _pitman_fit(sizes, counts, n: int):
    """Maximise the Pitman log-likelihood over (s = log(theta + alpha), alpha) with L-BFGS-B
    (box bounds: alpha in [0, 1 - 1e-9], theta + alpha in [1e-9, 1e12]) from up to three starts
    (alpha = 0.5, 0.25, 0.75; theta + alpha = u), stopping at the first acceptable optimum
    (:func:`_pitman_status`). Returns the best ``scipy.optimize.OptimizeResult`` (objective
    -loglik / n) and the bounds."""
    from scipy.optimize import minimize

    u = float(np.sum(counts))

    def objective(x):
        s, a = x
        t = math.exp(s)
        ll, d_th, d_a = pitman_loglik(t - a, a, sizes, counts, n)
        if not math.isfinite(ll):
            return math.inf, np.zeros(2)
        # theta = t - alpha: d/ds = t dl/dtheta; d/dalpha at fixed t = dl/dalpha - dl/dtheta
        return -ll / n, -np.array([t * d_th, d_a - d_th]) / n

    bounds = [(math.log(1e-9), math.log(1e12)), (0.0, 1.0 - 1e-9)]
    best = None
    for a0 in (0.5, 0.25, 0.75):
        res = minimize(
            objective,
            np.array([math.log(max(u, 1.0)), a0]),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 1000},
        )
        if best is None or (np.isfinite(res.fun) and res.fun < best.fun):
            best = res
        if _pitman_status(best, bounds) != "failed":
            break
    return best, bounds


def _pitman_status(res, bounds) -> str:
    """ "interior" (an interior optimum with a ~0 gradient), "ewens" (the optimum is on alpha = 0
    with the gradient pointing out of the parameter space: the constrained maximum is the Ewens
    model) or "failed". L-BFGS-B may stop on a line-search failure at machine precision: the
    gradient decides, not the optimiser's message."""
    jac = res.jac
    if jac is None or not bool(np.all(np.isfinite(jac))):
        return "failed"
    (s_lo, s_hi), (_, a_hi) = bounds
    s, a = (float(v) for v in res.x)
    if not (s_lo + _EDGE < s < s_hi - _EDGE and abs(float(jac[0])) < _FLAT) or a >= a_hi - _EDGE:
        return "failed"
    if a <= _EDGE:
        return "ewens" if float(jac[1]) > -_FLAT else "failed"
    return "interior" if abs(float(jac[1])) < _FLAT else "failed"


def pitman(sizes, counts, n: int, N: float) -> Estimate:
    r"""Pitman-model estimate of the number of population uniques (Hoshino 2001).

    (theta, alpha) maximise the Pitman sampling formula's likelihood of the sample's partition
    (:func:`pitman_loglik`), numerically (L-BFGS-B, bounded, over log(theta + alpha) and
    alpha, then Newton steps on the score equations with the exact Hessian
    (:func:`pitman_hessian`) to the root, so the estimate is the maximum itself to rounding,
    not wherever the first-order optimiser stopped); then

    .. math:: \hat S_1 = \frac{\Gamma(\hat\theta + 1)}{\Gamma(\hat\theta + \hat\alpha)} N^{\hat\alpha},

    Hoshino's large-N form of the expected number of singletons in a Pitman partition of N,
    N (\theta + \alpha)_{N-1} / (\theta + 1)_{N-1} (rising factorials), as in Dankar et al.
    (2012) and ARX.

    When the maximum lies on alpha = 0 (the Ewens sampling formula, the boundary of the
    Pitman family; frequent for data without heavy-tailed class sizes), the estimate is the
    constrained maximum's, \hat S_1 = \hat\theta, with ``parameters["boundary"] = "alpha = 0"``
    (ARX returns no Pitman estimate for alpha = 0). Not converged
    (value NaN) when the optimum lies on another boundary (alpha -> 1, theta + alpha -> 0 or
    infinity: e.g. a sample in which every class is unique, or one class), when the gradient
    (of -loglik / n) at the optimum exceeds 1e-6, or when \hat S_1 is not in [0, N].

    References
    ----------
    Pitman, J. (1995), Exchangeable and partially exchangeable random partitions. Probability
    Theory and Related Fields 102, 145-158. Hoshino, N. (2001), Applying Pitman's sampling
    formula to microdata disclosure risk assessment. Journal of Official Statistics 17,
    499-520.
    """
    from scipy.special import gammaln

    sizes, counts = np.asarray(sizes), np.asarray(counts)
    u = int(counts.sum())
    if _c(sizes, counts, 1) == 0:
        return Estimate(0.0, True, {}, "no sample uniques")
    if u < 2 or u == n:
        why = "one class only" if u < 2 else "every class is a sample unique"
        return Estimate(math.nan, False, {}, f"no finite maximum-likelihood estimate: {why}")
    res, bounds = _pitman_fit(sizes, counts, n)
    s, a = (float(v) for v in res.x)
    status = _pitman_status(res, bounds)
    if status == "ewens":
        a = 0.0
    theta = math.exp(s) - a
    newton = 0
    if status != "failed":
        theta, a, newton = _pitman_newton(theta, a, sizes, counts, n, ewens=status == "ewens")
    params: dict = {"theta": theta, "alpha": a, "iterations": int(res.nit), "newton_steps": newton}
    if status == "failed":
        inside = all(lo + _EDGE < float(v) < hi - _EDGE for v, (lo, hi) in zip(res.x, bounds))
        where = "on the boundary of the parameter space" if not inside else str(res.message).strip()
        return Estimate(math.nan, False, params, f"maximum likelihood did not converge ({where})")
    if status == "ewens":
        params["boundary"] = "alpha = 0"
    value = math.exp(gammaln(theta + 1.0) - gammaln(theta + a) + a * math.log(N))
    if not (math.isfinite(value) and 0.0 <= value <= N):
        return Estimate(math.nan, False, params, "the estimate is not between 0 and N")
    note = "maximum on alpha = 0 (the Ewens model)" if status == "ewens" else ""
    return Estimate(value, True, params, note)


# ---------------------------------------------------------------------------------------------
# slide negative binomial
def shlosser_classes(sizes, counts, pi: float) -> float:
    r"""Estimated number K of non-empty population classes: the modified Shlosser estimator
    (Haas & Stokes 1998) for Bernoulli sampling with probability q = pi,

    .. math::

        \hat K = u + c_1
            \frac{\sum_j j q^2 (1 - q^2)^{j-1} c_j}{\sum_j (1 - q)^j \left((1 + q)^j - 1\right) c_j}
            \left(\frac{\sum_j (1 - q)^j c_j}{\sum_j j q (1 - q)^{j-1} c_j}\right)^2 .

    It is exact when every population class is a singleton (then u = c_1 = qK on average and
    \hat K = qK + qK (1 - q)/q = K). ARX's implementation subtracts 1 per class size instead of
    c_j in the first denominator (an operator-precedence slip), which breaks that identity; this
    module uses the formula as written.

    References
    ----------
    Haas, P.J. & Stokes, L. (1998), Estimating the number of classes in a finite population.
    JASA 93, 1475-1487. Shlosser, A. (1981), On estimation of the size of the dictionary of a
    long text on the basis of a sample. Engineering Cybernetics 19, 97-102.
    """
    j = np.asarray(sizes, dtype=float)
    c = np.asarray(counts, dtype=float)
    q = float(pi)
    u, c1 = float(c.sum()), float(c[j == 1].sum())
    if q >= 1.0:
        return u
    num1 = np.sum(j * q**2 * (1 - q**2) ** (j - 1) * c)
    den1 = np.sum(((1 - q**2) ** j - (1 - q) ** j) * c)
    num2 = np.sum((1 - q) ** j * c)
    den2 = np.sum(j * q * (1 - q) ** (j - 1) * c)
    return float(u + c1 * (num1 / den1) * (num2 / den2) ** 2)


def snb_expected(alpha: float, beta: float, K: float, pi: float) -> tuple[float, float]:
    r"""Expected numbers of sample classes of size 1 and 2 under the slide negative binomial
    model (Chen & Keller-McNulty 1998): F - 1 ~ NegBin(alpha, beta), P(F = j) =
    \Gamma(j - 1 + \alpha) / (\Gamma(\alpha) (j - 1)!) \beta^\alpha (1 - \beta)^{j-1}, j >= 1,
    for each of K population classes, Bernoulli sampling with fraction pi. With
    q = (1 - pi)(1 - beta), from the probability generating function of F - 1:

    .. math::

        E(c_1) = K \pi \left(\frac{\beta}{1 - q}\right)^\alpha \left(1 + \frac{\alpha q}{1 - q}\right),
        \qquad
        E(c_2) = \frac{K \alpha \beta^\alpha \pi^2 (1 - \beta) \left(2 - (1 - \alpha) q\right)}
                      {2 (1 - q)^{\alpha + 2}} .
    """
    le1, le2 = _snb_log_expected(alpha, math.log(beta), math.log1p(-beta), K, pi)
    with np.errstate(over="ignore"):
        return float(np.exp(le1)), float(np.exp(le2))


def _snb_log_expected(alpha: float, log_beta: float, log_1m_beta: float, K: float, pi: float):
    """log E(c_1), log E(c_2) of :func:`snb_expected`, in logs (no overflow or underflow for
    extreme alpha, beta)."""
    q = (1.0 - pi) * math.exp(log_1m_beta)
    log_1m_q = math.log1p(-q)
    log_k_pi = math.log(K) + math.log(pi)
    le1 = log_k_pi + alpha * (log_beta - log_1m_q) + math.log1p(alpha * q / (1.0 - q))
    le2 = (
        log_k_pi
        + math.log(alpha * pi / 2.0)
        + alpha * log_beta
        + log_1m_beta
        + math.log(2.0 - (1.0 - alpha) * q)
        - (alpha + 2.0) * log_1m_q
    )
    return le1, le2


def _snb_solve(K: float, pi: float, c1: float, c2: float):
    """(alpha, beta, max |log residual|) solving E(c_1) = c_1, E(c_2) = c_2 over
    (log alpha, logit beta) with ``scipy.optimize.root`` (hybrid Powell), from nine starts."""
    from scipy.optimize import root
    from scipy.special import expit, logit

    target = np.array([math.log(c1), math.log(c2)])

    def residual(x):
        a = math.exp(min(max(float(x[0]), -700.0), 700.0))
        log_b, log_1m_b = -float(np.logaddexp(0.0, -x[1])), -float(np.logaddexp(0.0, x[1]))
        if log_1m_b == -math.inf or log_b == -math.inf:
            return np.array([1e6, 1e6])
        r = np.array(_snb_log_expected(a, log_b, log_1m_b, K, pi)) - target
        return np.where(np.isfinite(r), r, 1e6)

    best = (math.nan, math.nan, math.inf)
    for a0 in (0.1, 1.0, 10.0):
        for b0 in (0.01, 0.3, 0.9):
            sol = root(residual, np.array([math.log(a0), float(logit(b0))]), method="hybr")
            err = float(np.max(np.abs(residual(sol.x))))
            if err < best[2]:
                best = (math.exp(min(max(float(sol.x[0]), -700.0), 700.0)), float(expit(sol.x[1])), err)
            if err < 1e-12:
                return best
    return best


def snb(sizes, counts, n: int, N: float) -> Estimate:
    r"""Slide-negative-binomial estimate of the number of population uniques (Chen &
    Keller-McNulty 1998).

    K is estimated by :func:`shlosser_classes`; (alpha, beta) solve E(c_1) = c_1 and
    E(c_2) = c_2 (:func:`snb_expected`); then \hat S_1 = \hat K P(F = 1) = \hat K \beta^\alpha.

    Not converged (NaN) without sample classes of size 2 (E(c_2) > 0 for every parameter), when
    the equations have no solution (max |log(E/c)| > 1e-8 after the solver), or when \hat S_1 is
    not in [0, N]. ARX's second moment equation multiplies by (1 - q)^{alpha + 2} where the
    derivation divides by it, so ARX's SNB estimate (and then Dankar's choice above a sampling
    fraction of 0.1) can differ from this one.

    References
    ----------
    Chen, G. & Keller-McNulty, S. (1998), Estimation of identification disclosure risk in
    microdata. Journal of Official Statistics 14, 79-95.
    """
    sizes, counts = np.asarray(sizes), np.asarray(counts)
    c1, c2 = _c(sizes, counts, 1), _c(sizes, counts, 2)
    if c1 == 0:
        return Estimate(0.0, True, {}, "no sample uniques")
    pi = n / N
    K = shlosser_classes(sizes, counts, pi)
    if c2 == 0:
        return Estimate(math.nan, False, {"K": K}, "no sample class of size 2: the moment equations have no solution")
    a, b, err = _snb_solve(K, pi, c1, c2)
    params = {"K": K, "alpha": a, "beta": b}
    if not err < 1e-8:
        return Estimate(math.nan, False, params, "the moment equations were not solved")
    value = K * b**a
    if not (math.isfinite(value) and 0.0 <= value <= N):
        return Estimate(math.nan, False, params, "the estimate is not between 0 and N")
    return Estimate(float(value), True, params)


# ---------------------------------------------------------------------------------------------
# the decision rule
def dankar(pi: float, estimates: dict) -> tuple[float, str, str]:
    r"""Dankar et al.'s (2012) decision rule: ``(estimate, chosen model, reason)``.

    - pi <= 0.1: the Pitman estimate; Zayatz's when Pitman's maximum likelihood does not
      converge;
    - pi > 0.1: the smaller of the Zayatz and SNB estimates; Zayatz's when SNB does not
      converge.

    ``estimates`` maps "zayatz", "pitman" (needed for pi <= 0.1) and "snb" (pi > 0.1) to
    :class:`Estimate`.
    """
    z = estimates["zayatz"]
    if pi <= DANKAR_PITMAN_MAX_FRACTION:
        p = estimates["pitman"]
        if p.converged:
            return p.value, "pitman", f"sampling fraction <= {DANKAR_PITMAN_MAX_FRACTION:g}: Pitman"
        return z.value, "zayatz", "zayatz fallback: pitman did not converge"
    s = estimates["snb"]
    if not s.converged:
        return z.value, "zayatz", "zayatz fallback: snb did not converge"
    if z.value <= s.value:
        return z.value, "zayatz", f"sampling fraction > {DANKAR_PITMAN_MAX_FRACTION:g}: Zayatz (<= SNB)"
    return s.value, "snb", f"sampling fraction > {DANKAR_PITMAN_MAX_FRACTION:g}: SNB (< Zayatz)"


_MODELS = {"zayatz": zayatz, "pitman": pitman, "snb": snb}


def estimate(sizes, counts, n: int, N: float, method: str = "dankar"):
    r"""``(headline, chosen, reason, estimates)`` for ``method`` in "dankar", "pitman",
    "zayatz", "snb" or "all" (every model; the headline is Dankar's choice).

    Special cases (every model): no sample uniques -> 0; pi = n / N = 1 (a census) -> c_1, the
    sample uniques are the population uniques.
    """
    sizes, counts = np.asarray(sizes), np.asarray(counts)
    pi = n / N
    if method == "all":
        models = list(_MODELS)
    elif method == "dankar":
        models = ["zayatz", "pitman" if pi <= DANKAR_PITMAN_MAX_FRACTION else "snb"]
    else:
        models = [method]
    c1 = _c(sizes, counts, 1)
    if c1 == 0 or pi >= 1.0:
        why = "no sample uniques" if c1 == 0 else "sampling fraction 1: the sample is the population"
        ests = {m: Estimate(float(c1), True, {}, why) for m in models}
        return float(c1), ("none" if c1 == 0 else "census"), why, ests
    ests = {m: _MODELS[m](sizes, counts, n, N) for m in models}
    if method in ("dankar", "all"):
        value, chosen, reason = dankar(pi, ests)
        return value, chosen, reason, ests
    e = ests[method]
    return e.value, method, ("asked for" if e.converged else f"{method} did not converge: {e.note}"), ests
