"""Generate the bundled example survey sample ``src/sdckit/datasets/survey.csv``.

A seeded, fully synthetic household survey sample (no real person): 1,915 persons in
800 households of 1-6 members, with design weights. Categories follow Zipf-like and age-dependent frequencies so that the file
has realistic numbers of sample uniques. Run: ``python tools/make_example.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SEED = 20261121


def make(n_households: int = 800, seed: int = SEED) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    regions = ["North", "North-East", "East", "South-East", "South", "South-West", "West", "Capital"]
    pr = np.array([8, 6, 7, 9, 10, 5, 6, 20], float)
    size = rng.choice([1, 2, 3, 4, 5, 6], size=n_households, p=[0.28, 0.32, 0.17, 0.15, 0.06, 0.02])
    hh_region = rng.choice(len(regions), size=n_households, p=pr / pr.sum())
    # households sampled with region-dependent probabilities -> weights vary by region
    hh_weight = np.round(
        rng.uniform(0.8, 1.2, n_households) * np.array([900, 1100, 1000, 800, 750, 1300, 1200, 500])[hh_region], 1
    )
    hid = np.repeat(np.arange(1, n_households + 1), size)
    n = len(hid)
    region = np.repeat(hh_region, size)
    weight = np.repeat(hh_weight, size)
    first = np.r_[True, hid[1:] != hid[:-1]]
    age = np.where(first, rng.integers(18, 92, n), np.clip(rng.normal(30, 20, n), 0, 95)).astype(int)
    sex = rng.choice(["female", "male"], size=n)
    agegroup = np.minimum(age // 5 * 5, 85)
    age_label = np.array([f"{a}-{a + 4}" if a < 85 else "85+" for a in range(0, 90, 5)])[agegroup // 5]
    edu_levels = ["none", "primary", "lower secondary", "upper secondary", "tertiary"]
    edu = np.where(age < 15, 1, rng.choice(5, size=n, p=[0.05, 0.2, 0.25, 0.3, 0.2]))
    edu = np.where(age < 6, 0, edu)
    econ_levels = ["employed", "unemployed", "inactive", "retired", "child"]
    econ = np.where(
        age < 15,
        4,
        np.where(age >= 65, np.where(rng.random(n) < 0.85, 3, 0), rng.choice(3, size=n, p=[0.68, 0.07, 0.25])),
    )
    cit_levels = ["national", "EU", "other"]
    cit = rng.choice(3, size=n, p=[0.9, 0.06, 0.04])
    health = rng.choice(["good", "fair", "bad"], size=n, p=[0.6, 0.3, 0.1])
    income = np.where(
        econ == 0,
        np.round(rng.lognormal(10.2, 0.6, n), -1),
        np.where(econ == 3, np.round(rng.lognormal(9.6, 0.4, n), -1), 0.0),
    )
    return pl.DataFrame(
        {
            "household": hid,
            "region": np.array(regions)[region],
            "sex": sex,
            "age_group": age_label,
            "education": np.array(edu_levels)[edu],
            "econ_status": np.array(econ_levels)[econ],
            "citizenship": np.array(cit_levels)[cit],
            "health": health,
            "income": income,
            "weight": weight,
        }
    )


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "src" / "sdckit" / "datasets" / "survey.csv"
    df = make()
    df.write_csv(out)
    print(f"wrote {out} ({df.height} rows)")
