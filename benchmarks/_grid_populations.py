"""The populations, key sets and designs of the log-linear validation grid (issue 39), fixed
before any estimate was looked at: see :mod:`loglinear_grid`.

Each population is a table of integer codes (one column per key variable, codes 0..L-1), with
the names of its categories, and, for the household design, a household id per person. The
truth for a sample is computed from the finite population: tau_1 = #{k: f_k = 1, F_k = 1},
tau_2 = sum over the sample uniques of 1 / F_k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
EUSILC = SHARED / "simpop" / "eusilcP.csv"
ADULT = SHARED / "arx-adult" / "adult.csv"

#: the synthetic population: six keys (cards as in Skinner & Shlomo's example), main effects and
#: three two-way terms, about 10^6 persons
SYN_CARDS = (6, 14, 2, 6, 16, 10)
SYN_TRUE_MODEL = ((0, 1), (1, 3), (2, 4))
SYN_N = 1_000_000


@dataclass
class Population:
    """Integer codes per key (``codes[name]``), the labels per key, household ids (or None)."""

    name: str
    codes: dict
    labels: dict
    households: np.ndarray | None = None
    note: str = ""
    true_model: tuple | None = None

    @property
    def N(self) -> int:
        return len(next(iter(self.codes.values())))


def _coded(series: pl.Series) -> tuple[np.ndarray, list]:
    s = series.cast(pl.String)
    labels = sorted(s.unique().to_list(), key=_natural)
    lookup = {v: i for i, v in enumerate(labels)}
    return np.array([lookup[v] for v in s.to_list()], dtype=np.int32), labels


def _natural(s):
    return (0, int(s), "") if s.lstrip("-").isdigit() else (1, 0, s)


def eusilc() -> Population:
    """eusilcP (simPop's synthetic EU-SILC population, 58,654 persons, 25,000 households) with
    the derived keys of the grid: 5-year and 3-band age, single years, pension and benefit
    flags, children in the household (0, 1, 2, 3+), income quintile of the household."""
    d = pl.read_csv(EUSILC, infer_schema_length=100000)
    age = d["age"].clip(0, 95).cast(pl.Int32)
    kids = d.group_by("hid").agg((pl.col("age") < 16).sum().alias("kids"))
    d = d.join(kids, on="hid", how="left")
    inc = d["eqIncome"].to_numpy()
    quint = np.searchsorted(np.quantile(inc, [0.2, 0.4, 0.6, 0.8]), inc, side="right")
    benefits = sum(d[c].fill_null(0) for c in ("py090n", "py110n", "py120n", "py130n", "py140n"))
    cols = {
        "region": d["region"],
        "gender": d["gender"],
        "age": age,
        "age5": age // 5,
        "age3": pl.Series(np.digitize(age.to_numpy(), [16, 65])),
        "ecoStat": d["ecoStat"].cast(pl.String).fill_null("none"),
        "citizenship": d["citizenship"].fill_null("none"),
        "hsize": d["hsize"],
        "main": d["main"],
        "pension": d["py100n"].fill_null(0) > 0,
        "benefit": benefits > 0,
        "kids": d["kids"].clip(0, 3),
        "quintile": pl.Series(quint),
    }
    codes, labels = {}, {}
    for k, s in cols.items():
        codes[k], labels[k] = _coded(pl.Series(k, s))
    return Population("eusilcP", codes, labels, households=d["hid"].to_numpy(), note="58,654 persons")


def adult() -> Population:
    """ARX-Adult (30,162 records of the 1994 US census extract) taken as the population."""
    d = pl.read_csv(ADULT, separator=";", infer_schema_length=100000)
    age = d["age"].cast(pl.Int32)
    cols = {c: d[c] for c in d.columns if c != "age"}
    cols["age"] = age
    cols["age5"] = age // 5
    codes, labels = {}, {}
    for k, s in cols.items():
        codes[k], labels[k] = _coded(pl.Series(k, s))
    return Population("ARX-Adult", codes, labels, note="30,162 records")


def synthetic(seed: int = 39) -> Population:
    """About 10^6 persons with F_k ~ Poisson(lambda_k), log lambda = main effects (sorted normal,
    sd 0.8: skewed category sizes) + the three two-way terms of :data:`SYN_TRUE_MODEL` (normal,
    sd 0.7), scaled to sum 10^6; the realised population is the truth."""
    rng = np.random.default_rng(seed)
    shape = SYN_CARDS
    loglam = np.zeros(shape)
    for j, L in enumerate(shape):
        eff = np.sort(rng.normal(0, 0.8, L))[::-1]
        loglam += eff.reshape([L if i == j else 1 for i in range(len(shape))])
    for a, b in SYN_TRUE_MODEL:
        inter = rng.normal(0, 0.7, (shape[a], shape[b]))
        loglam += inter.reshape([shape[i] if i in (a, b) else 1 for i in range(len(shape))])
    lam = np.exp(loglam).reshape(-1)
    F = rng.poisson(lam * (SYN_N / lam.sum()))
    cell = np.repeat(np.arange(F.size), F)
    rng.shuffle(cell)
    idx = np.unravel_index(cell, shape)
    names = [f"v{j}" for j in range(len(shape))]
    codes = {k: c.astype(np.int32) for k, c in zip(names, idx)}
    labels = {k: [str(i) for i in range(L)] for k, L in zip(names, shape)}
    true = tuple((names[a], names[b]) for a, b in SYN_TRUE_MODEL)
    return Population("synthetic", codes, labels, note=f"{F.sum():,} persons", true_model=true)


@dataclass(frozen=True)
class Setting:
    """One cell of the grid: a population, its keys, a design, a size, the samples' seed."""

    id: str
    population: str
    keys: tuple
    design: str  # "srs", "stratified", "household"
    fraction: float  # the base sampling fraction (household: of households)
    stratum: str | None = None  # the key whose categories have different fractions
    held_out: bool = False
    extra: dict = field(default_factory=dict)


E_PENSION = ("region", "gender", "age5", "pension", "benefit", "hsize")
E_HOUSEHOLD = ("region", "gender", "age", "hsize", "main", "kids")
E_INCOME = ("gender", "age5", "ecoStat", "citizenship", "quintile", "hsize")
E_LOW = ("region", "gender", "age3", "citizenship")
A_SIX = ("age5", "sex", "race", "marital-status", "education", "workclass")
A_WIDE = ("age", "sex", "race", "marital-status", "native-country", "occupation")
S_KEYS = tuple(f"v{j}" for j in range(len(SYN_CARDS)))

_RAW = [
    # population, keys, design, fraction, stratum
    ("eusilcP", E_PENSION, "srs", 1 / 5, None),
    ("eusilcP", E_PENSION, "srs", 1 / 12, None),
    ("eusilcP", E_PENSION, "srs", 1 / 25, None),
    ("eusilcP", E_PENSION, "srs", 1 / 50, None),
    ("eusilcP", E_PENSION, "stratified", 1 / 12, "region"),
    ("eusilcP", E_PENSION, "household", 1 / 12, None),
    ("eusilcP", E_HOUSEHOLD, "srs", 1 / 5, None),
    ("eusilcP", E_HOUSEHOLD, "srs", 1 / 25, None),
    ("eusilcP", E_HOUSEHOLD, "household", 1 / 5, None),
    ("eusilcP", E_HOUSEHOLD, "household", 1 / 25, None),
    ("eusilcP", E_HOUSEHOLD, "stratified", 1 / 50, "region"),
    ("eusilcP", E_INCOME, "srs", 1 / 5, None),
    ("eusilcP", E_INCOME, "srs", 1 / 12, None),
    ("eusilcP", E_INCOME, "srs", 1 / 50, None),
    ("eusilcP", E_INCOME, "stratified", 1 / 25, "gender"),
    ("eusilcP", E_INCOME, "household", 1 / 12, None),
    ("eusilcP", E_LOW, "srs", 1 / 12, None),
    ("eusilcP", E_LOW, "srs", 1 / 50, None),
    ("eusilcP", E_LOW, "household", 1 / 25, None),
    ("ARX-Adult", A_SIX, "srs", 1 / 3, None),
    ("ARX-Adult", A_SIX, "srs", 1 / 10, None),
    ("ARX-Adult", A_SIX, "srs", 1 / 20, None),
    ("ARX-Adult", A_SIX, "stratified", 1 / 10, "sex"),
    ("ARX-Adult", A_WIDE, "srs", 1 / 3, None),
    ("ARX-Adult", A_WIDE, "srs", 1 / 10, None),
    ("ARX-Adult", A_WIDE, "srs", 1 / 20, None),
    ("ARX-Adult", A_WIDE, "stratified", 1 / 20, "sex"),
    ("synthetic", S_KEYS, "srs", 1_000 / SYN_N, None),
    ("synthetic", S_KEYS, "srs", 2_500 / SYN_N, None),
    ("synthetic", S_KEYS, "srs", 5_000 / SYN_N, None),
    ("synthetic", S_KEYS, "srs", 20_000 / SYN_N, None),
    ("synthetic", S_KEYS, "srs", 50_000 / SYN_N, None),
    ("synthetic", S_KEYS, "stratified", 2_500 / SYN_N, "v0"),
    ("synthetic", S_KEYS, "stratified", 20_000 / SYN_N, "v0"),
]

_SHORT = {E_PENSION: "pension", E_HOUSEHOLD: "household", E_INCOME: "income", E_LOW: "low",
          A_SIX: "six", A_WIDE: "wide", S_KEYS: "true"}  # fmt: skip

#: the grid, in the order fixed before any estimate was computed; every third setting (the
#: 3rd, 6th, ...) is held out of every tuning and reported on its own
GRID = [
    Setting(
        id=f"{pop}/{_SHORT[keys]}/{design}/{'1/' + str(round(1 / frac)) if pop != 'synthetic' else round(frac * SYN_N)}",
        population=pop,
        keys=keys,
        design=design,
        fraction=frac,
        stratum=stratum,
        held_out=i % 3 == 2,
    )
    for i, (pop, keys, design, frac, stratum) in enumerate(_RAW)
]


def stratum_fractions(setting: Setting, n_strata: int) -> np.ndarray:
    """The fractions of a stratified design: the strata alternate between 1/2 and 3/2 of the
    base fraction (capped at 1), by their code."""
    mult = np.where(np.arange(n_strata) % 2 == 0, 0.5, 1.5)
    return np.minimum(setting.fraction * mult, 1.0)


def draw(pop: Population, setting: Setting, rng) -> tuple[np.ndarray, np.ndarray]:
    """One sample: (the rows taken, each taken row's inclusion probability)."""
    N = pop.N
    if setting.design == "srs":
        take = rng.random(N) < setting.fraction
        return np.flatnonzero(take), np.full(int(take.sum()), setting.fraction)
    if setting.design == "household":
        hh, inv = np.unique(pop.households, return_inverse=True)
        take = (rng.random(len(hh)) < setting.fraction)[inv]
        return np.flatnonzero(take), np.full(int(take.sum()), setting.fraction)
    codes = pop.codes[setting.stratum]
    fr = stratum_fractions(setting, len(pop.labels[setting.stratum]))[codes]
    take = rng.random(N) < fr
    return np.flatnonzero(take), fr[take]


def truth(pop: Population, keys, rows: np.ndarray) -> tuple[float, float, int]:
    """(tau_1, tau_2, K) of a sample from the population's counts."""
    cards = [len(pop.labels[k]) for k in keys]
    cell = np.ravel_multi_index(tuple(pop.codes[k] for k in keys), cards)
    K = math.prod(cards)
    F = np.bincount(cell, minlength=K)
    f = np.bincount(cell[rows], minlength=K)
    su = f == 1
    return float(np.sum(su & (F == 1))), float(np.sum(1.0 / F[su])), K


def sample_table(pop: Population, keys, rows: np.ndarray) -> pl.DataFrame:
    """The sample as a user has it: string columns with the labels observed in it."""
    return pl.DataFrame({k: np.array(pop.labels[k], dtype=object)[pop.codes[k][rows]].astype(str) for k in keys})


def loaders() -> dict:
    return {"eusilcP": eusilc, "ARX-Adult": adult, "synthetic": synthetic}


def available(name: str) -> bool:
    return name == "synthetic" or {"eusilcP": EUSILC, "ARX-Adult": ADULT}[name].exists()
