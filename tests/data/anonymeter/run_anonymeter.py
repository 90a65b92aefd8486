"""Run anonymeter 1.1.0 on the Adult files (the call stored with its outputs)."""

import json
import sys
import time

import anonymeter
import numpy as np
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

D = "/work/shared/data/anonymeter-adults/"
ctl = pd.read_csv(D + "adults_control.csv")
syn = pd.read_csv(D + "adults_syn_ctgan.csv")
perm = np.random.default_rng(0).permutation(len(ctl))
ori = ctl.iloc[perm[: len(ctl) // 2]].reset_index(drop=True)
con = ctl.iloc[perm[len(ctl) // 2 :]].reset_index(drop=True)
KEYS = ["type_employer", "education", "marital", "occupation", "relationship", "race", "sex", "country"]
NUM = ["age", "capital_gain", "capital_loss", "hr_per_week", "education_num", "fnlwgt"]
cols = KEYS + NUM + ["income"]
ori, syn, con = ori[cols], syn[cols], con[cols]
split = (KEYS[:7], KEYS[7:] + NUM)  # the halves of keys + variables
out = {
    "anonymeter": anonymeter.__version__ if hasattr(anonymeter, "__version__") else "1.1.0",
    "split": [list(p) for p in split],
}
np.random.seed(0)
t = time.time()
so = SinglingOutEvaluator(
    ori=ori, syn=syn, control=con, n_attacks=500, n_cols=3, max_attempts=100_000, seed=0
).evaluate(mode="multivariate")
out["singling_out"] = {
    "risk": so.risk().value,
    "ci": list(so.risk().ci),
    "n_success": so.results().n_success,
    "n_baseline": so.results().n_baseline,
    "n_control": so.results().n_control,
    "n_queries": len(so.queries()),
    "seconds": time.time() - t,
}
print(out, flush=True)
t = time.time()
lk = LinkabilityEvaluator(ori=ori, syn=syn, control=con, aux_cols=split, n_attacks=500, n_neighbors=1).evaluate(
    n_jobs=1
)
r = lk.risk()
res = lk.results()
out["linkability"] = {
    "risk": r.value,
    "ci": list(r.ci),
    "n_success": res.n_success,
    "n_baseline": res.n_baseline,
    "n_control": res.n_control,
    "seconds": time.time() - t,
}
print(out, flush=True)
t = time.time()
aux = KEYS + NUM
inf = InferenceEvaluator(ori=ori, syn=syn, control=con, aux_cols=aux, secret="income", n_attacks=500).evaluate(n_jobs=1)
r = inf.risk()
res = inf.results()
out["inference:income"] = {
    "risk": r.value,
    "ci": list(r.ci),
    "n_success": int(res.n_success),
    "n_baseline": int(res.n_baseline),
    "n_control": int(res.n_control),
    "seconds": time.time() - t,
}
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(out)
