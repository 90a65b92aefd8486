"""Writes tests/data/arx/: a small synthetic file (300 records) and its hierarchies."""

import csv

import numpy as np

rng = np.random.default_rng(20261126)
n = 300
age = np.clip(rng.normal(40, 14, n).round().astype(int), 15, 74)
sex = rng.choice(["F", "M"], n)
region = rng.choice(["North", "East", "South", "West", "Centre", "Islands"], n, p=[0.25, 0.2, 0.2, 0.15, 0.15, 0.05])
job = rng.choice(
    ["clerk", "teacher", "nurse", "farmer", "driver", "engineer", "cook", "artist"],
    n,
    p=[0.2, 0.15, 0.15, 0.1, 0.15, 0.1, 0.1, 0.05],
)
disease = rng.choice(["flu", "asthma", "diabetes", "none", "cancer"], n, p=[0.3, 0.15, 0.15, 0.3, 0.1])
with open("small.csv", "w", newline="") as f:
    w = csv.writer(f, delimiter=";")
    w.writerow(["age", "sex", "region", "job", "disease"])
    for r in zip(age, sex, region, job, disease):
        w.writerow(r)


def write(name, rows):
    with open(f"small_hierarchy_{name}.csv", "w", newline="") as f:
        csv.writer(f, delimiter=";").writerows(rows)


write("age", [[a, f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 20 * 20}-{a // 20 * 20 + 19}", "*"] for a in range(15, 75)])
write("sex", [["F", "*"], ["M", "*"]])
macro = {"North": "N", "East": "N", "Centre": "N", "South": "S", "West": "S", "Islands": "S", "Abroad": "S"}
write("region", [[r, macro[r], "*"] for r in ["North", "East", "South", "West", "Centre", "Islands", "Abroad"]])
group = {
    "clerk": "office",
    "teacher": "public",
    "nurse": "public",
    "farmer": "manual",
    "driver": "manual",
    "engineer": "office",
    "cook": "manual",
    "artist": "office",
}
write("job", [[j, group[j], "*"] for j in group])
