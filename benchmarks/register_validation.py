"""Simulation study of ``sdckit.register_risk`` against a known truth (issue 18).

Design (after the application study of Shlomo & Skinner 2022, Section 4 and Table 2, whose
synthetic census is not available):

* **Population.** About 10^6 individuals aged 16+ cross-classified by six keys with 6, 14, 2, 6,
  16 and 10 categories, as in the paper's census extract: region, age group (16-20, ..., 81+),
  sex, marital status, ethnicity (the 16 groups of the 2001 census) and economic activity (the
  paper's ten categories); 161,280 cells. The cell means come from a log-linear model with known
  parameters: main effects (the age-group and activity shares of the paper's Table 1, published
  2001 census shares for the others) and five two-way interactions: age x activity (with the
  structural zeros of "aged over 75"), sex x activity, age x marital status, region x ethnicity
  and age x ethnicity. F_k ~ Poisson(lambda_k), drawn once per seed; the population is fixed
  across samples.
* **Subpopulation (the register).** Membership (a limiting long-term illness, say) is drawn
  once per individual with a logistic model of age group and economic activity with known
  coefficients, logit p_k = xi_0 + a_age + b_activity; about 18 % of the population are members.
  The register is the members' records (F^1_k per cell). A second scenario ("interactions")
  adds known sex x age group and ethnicity x activity terms that the main-effects membership
  model of both approaches lacks (same population counts, same uniform draws).
* **Samples.** Bernoulli samples of the population at pi = 1/50 (about 20,000 records), seeded;
  each record carries the weight 50 and the known fraction 1/50 is declared.
* **Truth per sample** (the population is known): tau1* = #{k: F^1_k = 1, F_k = 1};
  tau2* = sum over register-unique cells of 1/F_k; tau1 = #{k: F^1_k = 1, f_k = 1, F_k = 1};
  tau2 = sum over cells with F^1_k = 1 and f_k = 1 of 1/F_k; theta = #{F^1_k = 1, f_k = 1} /
  sum of F_k over those cells (the Skinner-Elliot type measure).
* **Model expectation.** The closed forms evaluated at the true lambda_k and phi_k = lambda_k p_k
  (what a perfect model would estimate), as a check of the truth and of the closed forms.
* **Estimates.** Approach A (log-linear model of all two-way terms fitted to the sample, then the
  main-effects membership model fitted to the register counts) and approach B (main-effects
  propensity model of register against weighted sample, inverse-propensity counts, all-two-way
  pseudo-likelihood fit), each timed per sample; theta-hat (a ratio of counts, no model).

Prints, per scenario, a markdown table as the paper's Table 2: per measure the true value, and
for A and B the mean estimate, the simulation standard error of the mean (sd / sqrt(samples))
and the RMSE; the time per sample of each approach. Always exits 0.
Usage: ``python benchmarks/register_validation.py [--samples 100] [--seed 4] [--population-seed 2022]
[--scenarios main,interactions] [--save PREFIX]``.
The functions are used by tests/test_register_validation.py with fewer samples.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
import polars as pl

from _common import print_conditions

FRACTION = 1 / 50
N_POPULATION = 1_000_000
LEVELS = {
    "region": ["North", "Midlands", "East", "London", "South East", "South West and Wales"],
    "age_group": [f"{a}-{a + 4}" for a in range(16, 80, 5)] + ["81+"],
    "sex": ["male", "female"],
    "marital_status": ["single", "married", "remarried", "separated", "divorced", "widowed"],
    "ethnicity": [
        "White British",
        "White Irish",
        "White other",
        "Mixed White and Black Caribbean",
        "Mixed White and Black African",
        "Mixed White and Asian",
        "Mixed other",
        "Indian",
        "Pakistani",
        "Bangladeshi",
        "Asian other",
        "Black Caribbean",
        "Black African",
        "Black other",
        "Chinese",
        "Other",
    ],
    "economic_activity": [
        "employee part-time",
        "employee full-time",
        "unemployed",
        "full-time student",
        "retired",
        "student (inactive)",
        "looking after home",
        "long-term sick or disabled",
        "other inactive",
        "aged over 75",
    ],
}
KEYS = list(LEVELS)
CARDS = tuple(len(v) for v in LEVELS.values())  # (6, 14, 2, 6, 16, 10): 161,280 cells
K = int(np.prod(CARDS))

# --- known parameters of the log-linear model (shares; their logs are the effects) ------------
REGION_SHARE = np.array([0.24, 0.17, 0.10, 0.13, 0.24, 0.12])
AGE_SHARE = np.array([7.1, 8.1, 9.5, 10.3, 10.3, 8.7, 8.1, 8.6, 6.7, 5.7, 4.9, 4.4, 3.7, 3.8])  # paper's Table 1
SEX_SHARE = np.array([0.485, 0.515])
ETHNICITY_SHARE = np.array(
    [0.875, 0.015, 0.027, 0.003, 0.0012, 0.0025, 0.002, 0.02, 0.012, 0.005, 0.005, 0.012, 0.009, 0.0015, 0.0045, 0.0045]
)
#: P(activity | age group) up to a row constant (age x activity term); "aged over 75" is a
#: structural zero below 71 and the only category from 76.
ACTIVITY_GIVEN_AGE = np.array(
    [
        # PT   FT    unemp  FTstud retired stud  home  sick  other over75
        [0.12, 0.35, 0.06, 0.12, 0.0005, 0.30, 0.02, 0.01, 0.04, 0],
        [0.10, 0.60, 0.06, 0.05, 0.0005, 0.11, 0.04, 0.02, 0.04, 0],
        [0.10, 0.70, 0.04, 0.01, 0.0005, 0.03, 0.06, 0.03, 0.03, 0],
        [0.12, 0.68, 0.03, 0.01, 0.001, 0.02, 0.07, 0.04, 0.03, 0],
        [0.13, 0.68, 0.03, 0.01, 0.002, 0.01, 0.06, 0.05, 0.03, 0],
        [0.14, 0.66, 0.03, 0.01, 0.005, 0.01, 0.05, 0.06, 0.03, 0],
        [0.14, 0.63, 0.03, 0.005, 0.02, 0.005, 0.045, 0.08, 0.03, 0],
        [0.14, 0.55, 0.03, 0.005, 0.06, 0.005, 0.045, 0.10, 0.04, 0],
        [0.13, 0.40, 0.02, 0.002, 0.22, 0.002, 0.045, 0.12, 0.04, 0],
        [0.09, 0.16, 0.01, 0.001, 0.55, 0.001, 0.04, 0.10, 0.04, 0],
        [0.05, 0.04, 0.003, 0.001, 0.80, 0.001, 0.03, 0.04, 0.03, 0],
        [0.03, 0.01, 0.001, 0.001, 0.65, 0.001, 0.02, 0.03, 0.02, 0.2],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ]
)
#: log effect of being female per activity (sex x activity term)
FEMALE_ACTIVITY = np.array([0.9, -0.35, -0.3, 0, 0, 0, 1.0, 0, 0, 0])
#: P(marital status | age group) (age x marital status term)
MARITAL_GIVEN_AGE = np.array(
    [
        [0.97, 0.025, 0.0005, 0.002, 0.001, 0.0005],
        [0.85, 0.13, 0.003, 0.01, 0.005, 0.001],
        [0.60, 0.34, 0.02, 0.02, 0.02, 0.001],
        [0.38, 0.49, 0.05, 0.03, 0.05, 0.002],
        [0.25, 0.53, 0.08, 0.04, 0.09, 0.004],
        [0.17, 0.54, 0.10, 0.04, 0.12, 0.008],
        [0.12, 0.55, 0.12, 0.035, 0.14, 0.015],
        [0.08, 0.57, 0.13, 0.03, 0.15, 0.03],
        [0.06, 0.60, 0.12, 0.025, 0.13, 0.05],
        [0.06, 0.60, 0.11, 0.02, 0.11, 0.09],
        [0.06, 0.56, 0.09, 0.015, 0.08, 0.17],
        [0.07, 0.49, 0.07, 0.01, 0.06, 0.28],
        [0.07, 0.40, 0.05, 0.008, 0.045, 0.41],
        [0.08, 0.23, 0.03, 0.005, 0.03, 0.62],
    ]
)
# --- known coefficients of the membership model ------------------------------------------------
MEMBERSHIP_INTERCEPT = -3.6
MEMBERSHIP_AGE = np.linspace(0.0, 3.0, 14)  # rises with age
MEMBERSHIP_ACTIVITY = np.array([0.3, 0.0, 0.8, -0.2, 0.6, 0.1, 0.7, 4.0, 1.3, 0.8])  # long-term sick: +4
#: scenario "interactions": membership also depends on two terms the main-effects membership
#: model lacks: sex x age group (the women's rate rising faster with age, +-1.5 at the ends) and
#: ethnicity x activity (+1.5 for the minority groups, -0.75 for White British and Irish, among
#: the unemployed and the long-term sick)
MEMBERSHIP_AGE_SEX = 1.5 * np.outer((np.arange(14) - 6) / 7, [-1.0, 1.0])
MEMBERSHIP_ETHNICITY_ACTIVITY = 1.5 * np.outer(np.r_[-0.5, -0.5, np.ones(14)], np.isin(np.arange(10), [2, 7]))
SCENARIOS = {
    "main": "membership: main effects of age group and activity (the membership model is right)",
    "interactions": "membership: plus sex x age group and ethnicity x activity (the membership model lacks them)",
}


def _region_ethnicity() -> np.ndarray:
    """Log effects of the region x ethnicity term (minorities concentrated in London, the
    Midlands and the North; fewer in the South West and Wales)."""
    minority = np.r_[0.0, 0.0, np.ones(14)]
    t = np.zeros((6, 16))
    t[0] = -0.5 * minority
    t[0, [8, 9]] = [0.7, 0.2]
    t[1, [7, 8, 11]] = [0.9, 0.6, 0.4]
    t[3] = 1.6 * minority
    t[3, [0, 1, 9, 11, 12]] = [-0.35, 0.5, 2.0, 2.0, 2.2]
    t[4] = -0.3 * minority
    t[5] = -1.0 * minority
    return t


def _age_ethnicity() -> np.ndarray:
    """Log effects of the age x ethnicity term (minority groups younger, Irish older)."""
    a = np.arange(14.0) - 4
    t = np.zeros((14, 16))
    t[:, 2:] = -0.12 * a[:, None]
    t[:, 1] = 0.05 * a
    return t


def _axes(*dims: int) -> tuple:
    """Reshape target placing a small table on the key axes ``dims`` of the cell array."""
    return tuple(CARDS[j] if j in dims else 1 for j in range(len(CARDS)))


def population_lambda(n: float = N_POPULATION) -> np.ndarray:
    """Cell means lambda_k (flat, in C order of ``KEYS``): the known log-linear model, scaled to
    sum ``n``. Structural zeros (activity "aged over 75" against the age group) are exact zeros."""
    with np.errstate(divide="ignore"):
        log = (
            np.log(REGION_SHARE).reshape(_axes(0))
            + np.log(AGE_SHARE / AGE_SHARE.sum()).reshape(_axes(1))
            + np.log(SEX_SHARE).reshape(_axes(2))
            + np.log(ETHNICITY_SHARE / ETHNICITY_SHARE.sum()).reshape(_axes(4))
            + np.log(ACTIVITY_GIVEN_AGE).reshape(_axes(1, 5))
            + np.outer([0.0, 1.0], FEMALE_ACTIVITY).reshape(_axes(2, 5))
            + np.log(MARITAL_GIVEN_AGE).reshape(_axes(1, 3))
            + _region_ethnicity().reshape(_axes(0, 4))
            + _age_ethnicity().reshape(_axes(1, 4))
        )
    lam = np.exp(log)
    return (lam * (n / lam.sum())).reshape(-1)


def membership_probability(scenario: str = "main") -> np.ndarray:
    """p_k = logistic(xi_0 + a_age + b_activity) per cell (flat, as ``population_lambda``); with
    ``scenario="interactions"`` plus the sex x age and ethnicity x activity terms."""
    eta = MEMBERSHIP_INTERCEPT + MEMBERSHIP_AGE.reshape(_axes(1)) + MEMBERSHIP_ACTIVITY.reshape(_axes(5))
    if scenario == "interactions":
        eta = eta + MEMBERSHIP_AGE_SEX.reshape(_axes(1, 2)) + MEMBERSHIP_ETHNICITY_ACTIVITY.reshape(_axes(4, 5))
    elif scenario != "main":
        raise ValueError(f"scenario: unknown {scenario!r}; expected one of {sorted(SCENARIOS)}")
    return np.broadcast_to(1.0 / (1.0 + np.exp(-eta)), CARDS).reshape(-1).copy()


@dataclass(frozen=True)
class Population:
    """The fixed population: per individual its cell and membership; per cell F_k, F^1_k and
    the true parameters lambda_k and p_k."""

    cell: np.ndarray  # (N,) cell index of each individual, sorted
    member: np.ndarray  # (N,) bool, in the subpopulation (the register)
    F: np.ndarray  # (K,) population counts
    F1: np.ndarray  # (K,) register counts
    lam: np.ndarray  # (K,) true lambda_k
    p: np.ndarray  # (K,) true membership probability p_k

    @property
    def size(self) -> int:
        return int(self.cell.size)


def make_population(seed: int = 2022, n: float = N_POPULATION, scenario: str = "main") -> Population:
    """F_k ~ Poisson(lambda_k); one record per individual; membership drawn once per individual
    with probability p_k (of the membership ``scenario``). The counts F_k do not depend on the
    scenario (same seed, same population)."""
    rng = np.random.default_rng(seed)
    lam, p = population_lambda(n), membership_probability(scenario)
    F = rng.poisson(lam)
    cell = np.repeat(np.arange(K), F)
    member = rng.random(cell.size) < p[cell]
    F1 = np.bincount(cell[member], minlength=K)
    return Population(cell=cell, member=member, F=F, F1=F1, lam=lam, p=p)


def records(cells: np.ndarray) -> pl.DataFrame:
    """Records with the six keys as declared categories (Enum), one row per cell index, so that
    every file is cross-classified over all 161,280 cells."""
    codes = np.unravel_index(cells, CARDS)
    cols = {}
    for (key, labels), c in zip(LEVELS.items(), codes):
        cols[key] = pl.Series(key, np.asarray(labels, dtype=object)[c], dtype=pl.Enum(labels))
    return pl.DataFrame(cols)


def truth(pop: Population, f: np.ndarray) -> dict[str, float]:
    """True measures for sample counts ``f`` (per cell) in the known population."""
    F, F1 = pop.F, pop.F1
    ru = F1 == 1
    both = ru & (f == 1)
    return {
        "n_register_uniques": float(ru.sum()),
        "tau1_star": float(np.sum(ru & (F == 1))),
        "tau2_star": float(np.sum(1.0 / F[ru])),
        "n_both_uniques": float(both.sum()),
        "tau1": float(np.sum(both & (F == 1))),
        "tau2": float(np.sum(1.0 / F[both])),
        "theta": float(both.sum() / F[both].sum()) if both.any() else float("nan"),
    }


def model_expectation(pop: Population, f: np.ndarray, fraction: float = FRACTION) -> dict[str, float]:
    """The closed forms at the true parameters (lambda_k, phi_k = lambda_k p_k): with
    d = lambda - phi and nu = (1 - pi) d, P(F = 1 | F^1 = 1) = e^{-d},
    E(1/F | F^1 = 1) = (1 - e^{-d})/d, P(F = 1 | F^1 = 1, f = 1) = e^{-nu}/(1 + nu) and
    E(1/F | F^1 = 1, f = 1) = 1/(1 + nu) (Shlomo & Skinner 2022, eqs. 21-22)."""
    d = pop.lam * (1.0 - pop.p)
    nu = (1.0 - fraction) * d
    ru = pop.F1 == 1
    both = ru & (f == 1)
    dr = d[ru]
    e2 = np.where(dr > 0, -np.expm1(-dr) / np.where(dr > 0, dr, 1.0), 1.0)
    return {
        "tau1_star": float(np.sum(np.exp(-dr))),
        "tau2_star": float(np.sum(e2)),
        "tau1": float(np.sum(np.exp(-nu[both]) / (1.0 + nu[both]))),
        "tau2": float(np.sum(1.0 / (1.0 + nu[both]))),
    }


def theta_hat(pop: Population, f: np.ndarray, fraction: float = FRACTION) -> float:
    """Design-consistent theta (Skinner & Elliot 2002; Shlomo & Skinner 2022, eq. 23) from the
    counts: #{F^1 = 1, f = 1} / (#{F^1 = 1, f = 1} + 2 (1 - pi)/pi #{F^1 = 1, f = 2})."""
    ru = pop.F1 == 1
    n1 = float(np.sum(ru & (f == 1)))
    n2 = float(np.sum(ru & (f == 2)))
    den = n1 + 2.0 * (1.0 - fraction) / fraction * n2
    return n1 / den if den > 0 else float("nan")


def draw_sample(pop: Population, rng, fraction: float = FRACTION) -> np.ndarray:
    """Cell indices of a Bernoulli sample of the individuals at ``fraction``."""
    return pop.cell[rng.random(pop.size) < fraction]


ESTIMATES = ("tau1_star", "tau2_star", "tau1", "tau2", "theta_hat", "n_register_uniques", "n_both_uniques")


def estimate(register: pl.DataFrame, sample: pl.DataFrame, approach: str, fraction: float = FRACTION):
    """``register_risk`` for one approach; returns (estimates, seconds)."""
    import sdckit

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = sdckit.register_risk(
            register, sample, KEYS, sample_weight="w", sampling_fraction=fraction, approach=approach
        )
    seconds = time.perf_counter() - t0
    est = {m: float(getattr(r, m)) for m in ESTIMATES}
    # the membership fit's iterations, and whether register_risk warned (SdcWarning)
    est["iterations"] = float(r.membership_fit["iterations"])
    est["warned"] = float(any(issubclass(w.category, sdckit.SdcWarning) for w in caught))
    return est, seconds


def validate(n_samples: int = 100, seed: int = 4, pop: Population | None = None, approaches=("A", "B")) -> dict:
    """Run the study: {"truth": {measure: (n,)}, "model": {...}, "theta_hat": (n,),
    approach: {"est": {measure: (n,)}, "seconds": (n,)}}."""
    pop = make_population() if pop is None else pop
    register = records(pop.cell[pop.member])
    rng = np.random.default_rng(seed)
    out: dict = {"truth": [], "model": [], "theta_hat": []}
    out.update({a: {"est": [], "seconds": []} for a in approaches})
    for _ in range(n_samples):
        cells = draw_sample(pop, rng)
        f = np.bincount(cells, minlength=K)
        out["truth"].append(truth(pop, f))
        out["model"].append(model_expectation(pop, f))
        out["theta_hat"].append(theta_hat(pop, f))
        sample = records(cells).with_columns(w=pl.lit(1.0 / FRACTION))
        for a in approaches:
            est, seconds = estimate(register, sample, a)
            out[a]["est"].append(est)
            out[a]["seconds"].append(seconds)
    res: dict = {
        "truth": _columns(out["truth"]),
        "model": _columns(out["model"]),
        "theta_hat": np.array(out["theta_hat"]),
    }
    for a in approaches:
        res[a] = {"est": _columns(out[a]["est"]), "seconds": np.array(out[a]["seconds"])}
    return res


def _columns(rows: list[dict]) -> dict[str, np.ndarray]:
    return {k: np.array([r[k] for r in rows], float) for k in (rows[0] if rows else {})}


# --- summary -------------------------------------------------------------------------------------
MEASURES = (
    ("tau1_star", "tau1* = #{F^1 = 1, F = 1}"),
    ("tau2_star", "tau2* = sum over register uniques of 1/F"),
    ("n_register_uniques", "register uniques #{F^1 = 1}"),
    ("tau1", "tau1 = #{F^1 = 1, f = 1, F = 1}"),
    ("tau2", "tau2 = sum over F^1 = 1, f = 1 of 1/F"),
    ("n_both_uniques", "unique in both #{F^1 = 1, f = 1}"),
    ("theta", "theta (Skinner-Elliot)"),
)


def rmse(est: np.ndarray, true: np.ndarray) -> float:
    return float(np.sqrt(np.mean((est - true) ** 2)))


def summarize(res: dict, approaches=("A", "B")) -> list[dict]:
    """Per measure: the mean truth and its simulation SE, the model expectation, and per approach
    the mean estimate, the simulation SE of the mean (sd / sqrt(samples)) and the RMSE against
    each sample's truth. theta is estimated by theta-hat (the same for both approaches)."""
    rows = []
    for m, label in MEASURES:
        t = res["truth"][m]
        row = {"measure": m, "label": label, "true": _mean_se(t), "model": None}
        if m in res["model"]:
            row["model"] = float(np.mean(res["model"][m]))
        for a in approaches:
            e = res[a]["est"]["theta_hat" if m == "theta" else m]
            row[a] = (*_mean_se(e), rmse(e, t))
        rows.append(row)
    return rows


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    se = float(np.std(x, ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
    return float(np.mean(x)), se


def _num(x: float, m: str) -> str:
    if m == "theta":
        return f"{x:.4f}"
    return f"{x:.2f}" if abs(x) < 1000 else f"{x:.1f}"


def markdown(rows: list[dict], res: dict, approaches=("A", "B")) -> str:
    """The table of the study (as the paper's Table 2) and the time per sample."""
    n = res["truth"]["tau1"].size
    head = "| measure | true value | model at the true parameters |"
    head += "".join(f" approach {a}: mean (SE) | approach {a}: RMSE |" for a in approaches)
    lines = [head, "|---|" + "---:|" * (2 + 2 * len(approaches))]
    for r in rows:
        m, (tm, tse) = r["measure"], r["true"]
        true = _num(tm, m) + (f" ({_num(tse, m)})" if tse > 0 else "")
        cells = [r["label"], true, "" if r["model"] is None else _num(r["model"], m)]
        for a in approaches:
            mean, se, err = r[a]
            cells += [f"{_num(mean, m)} ({_num(se, m)})", _num(err, m)]
        lines.append("| " + " | ".join(cells) + " |")
    secs = "; ".join(
        f"approach {a}: {np.mean(res[a]['seconds']):.2f} s (max {np.max(res[a]['seconds']):.2f} s)" for a in approaches
    )
    total = sum(np.mean(res[a]["seconds"]) for a in approaches)
    lines += [
        "",
        f"{n} Bernoulli samples at 1/50. SE = standard deviation over the samples / sqrt({n}); "
        "a true value without SE is fixed (it depends on the population only). "
        "theta is estimated by theta-hat, a ratio of counts (the same for both approaches).",
        f"Time per sample (wall clock): {secs}; both: {total:.2f} s.",
        "Membership fit: "
        + "; ".join(
            f"approach {a}: {np.mean(res[a]['est']['iterations']):.1f} iterations on average (max "
            f"{np.max(res[a]['est']['iterations']):.0f}), a warning in {int(np.sum(res[a]['est']['warned']))} of {n} samples"
            for a in approaches
        )
        + ".",
    ]
    return "\n".join(lines)


def flatten(res: dict) -> dict[str, np.ndarray]:
    """The per-sample arrays of ``validate`` under flat names ("truth/tau1", "A/est/tau1", ...)."""
    out = {}
    for key, value in res.items():
        if isinstance(value, dict):
            for sub, arr in flatten(value).items():
                out[f"{key}/{sub}"] = arr
        else:
            out[key] = value
    return out


def describe(pop: Population) -> str:
    """One line about the population (sizes and sparsity)."""
    return (
        f"Population N = {pop.size:,}, register N_1 = {int(pop.member.sum()):,} "
        f"({100 * pop.member.mean():.1f} %), {K:,} cells ({int(np.sum(pop.lam > 0)):,} not structurally "
        f"zero, {int(np.sum(pop.F > 0)):,} non-empty, {int(np.sum(pop.F == 1)):,} population uniques, "
        f"{int(np.sum(pop.F1 == 1)):,} register uniques)."
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--seed", type=int, default=4, help="seed of the samples (default 4)")
    ap.add_argument("--population-seed", type=int, default=2022, help="seed of the population (default 2022)")
    ap.add_argument(
        "--scenarios", default="main,interactions", help="membership scenarios, comma-separated (default both)"
    )
    ap.add_argument("--save", metavar="PREFIX", help="also write the per-sample values to PREFIX<scenario>.npz")
    a = ap.parse_args(argv)
    print_conditions()
    try:
        for scenario in [x.strip() for x in a.scenarios.split(",") if x.strip()]:
            t0 = time.perf_counter()
            pop = make_population(a.population_seed, scenario=scenario)
            res = validate(a.samples, a.seed, pop)
            print(f"\n### Scenario {scenario!r}: {SCENARIOS[scenario]}; {a.samples} samples ", end="")
            print(f"({time.perf_counter() - t0:.0f} s)\n\n{describe(pop)}\n")
            print(markdown(summarize(res), res))
            if a.save:
                np.savez(f"{a.save}{scenario}.npz", **flatten(res))
    except Exception as exc:  # benchmarks report, they do not fail
        print(f"register validation failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
