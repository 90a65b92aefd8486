"""Write the recipes of ``tests/data/recipes/`` with the sdckit on ``PYTHONPATH`` (an earlier
commit checked out with ``git worktree add``) and print the SHA-256 of the data each recipe
protected, for ``expected.json``.

Usage: ``PYTHONPATH=/tmp/old/src python make_recipes.py COMMIT OUT_DIR EUSILC_CSV TESTDATA_CSV``
(with ``--docs``: replay the docs' recipes found in OUT_DIR and print their checksums).
Each workflow is one that a user wrote then; a workflow the old sdckit refused is reported and
skipped. The checksum is that of the protected data written by :func:`canonical_csv` (the
same function the replay test uses), so that it compares the data, not a writer's format.
"""

import hashlib
import io
import json
import sys
from pathlib import Path

import pandas as pd
import polars as pl


def canonical_csv(frame) -> bytes:
    """The protected data as CSV bytes (Polars' writer; a pandas frame converted first)."""
    if isinstance(frame, pd.DataFrame):
        frame = pl.from_pandas(frame)
    buf = io.BytesIO()
    frame.write_csv(buf)
    return buf.getvalue()


EUSILC_KEYS = ["db040", "hsize", "rb090", "age", "pl030", "pb220a"]

#: name -> (data file, reader, scenario, steps)
WORKFLOWS = {
    # pl030 (economic status, 1..7, missing under 16) read by pandas: float64 with NaN
    "eusilc_pram_pl030_pandas": (
        "eusilc",
        "pandas",
        {"keys": EUSILC_KEYS, "weight": "rb050"},
        [("pram", {"variables": ["pl030"], "seed": 36})],
    ),
    "eusilc_recode_pram_suppress_pandas": (
        "eusilc",
        "pandas",
        {"keys": EUSILC_KEYS, "weight": "rb050"},
        [
            ("global_recode", {"variables": ["age"], "breaks": [-2, 15, 30, 45, 60, 75, 120]}),
            ("pram", {"variables": ["pl030", "pb220a"], "seed": 7}),
            ("local_suppression", {"k": 3}),
        ],
    ),
    "eusilc_recode_suppress_polars": (
        "eusilc",
        "polars",
        {"keys": EUSILC_KEYS, "weight": "rb050"},
        [
            ("global_recode", {"variables": ["age"], "breaks": [-2, 20, 40, 60, 80, 120]}),
            ("local_suppression", {"k": 5}),
        ],
    ),
    "testdata_recode_pram_suppress": (
        "testdata",
        "polars",
        {"keys": ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"], "weight": "sampling_weight"},
        [
            (
                "global_recode",
                {"variables": ["water"], "mapping": {1: 1, 2: 1, 3: 3, 4: 3, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9}},
            ),
            ("pram", {"variables": ["walls"], "seed": 11}),
            ("local_suppression", {"k": 3}),
        ],
    ),
}


#: recipes written by hand in the docs (docs/recipes.md's YAML and JSON examples, as committed
#: in 8947a84 and unchanged since): name -> (data, reader, file)
DOCS_RECIPES = {
    "docs_recipes_example.yaml": ("testdata", "polars", "8947a84_docs_recipes_example.yaml"),
    "docs_recipes_example.json": ("testdata", "polars", "8947a84_docs_recipes_example.json"),
}


def replay_docs(commit: str, folder: Path, files: dict) -> dict:
    """The checksum of each docs recipe replayed by the sdckit on ``PYTHONPATH``."""
    import sdckit

    found = {}
    for name, (which, reader, file) in DOCS_RECIPES.items():
        problem = sdckit.SdcProblem.from_recipe(read(which, reader, files), folder / file)
        found[name] = {
            "commit": commit,
            "data": which,
            "reader": reader,
            "sha256": hashlib.sha256(canonical_csv(problem.data)).hexdigest(),
        }
    return found


def read(which: str, reader: str, files: dict):
    path = files[which]
    return pd.read_csv(path) if reader == "pandas" else pl.read_csv(path)


def main() -> None:
    import sdckit

    commit, out_dir, eusilc, testdata = sys.argv[1:5]
    out = Path(out_dir)
    files = {"eusilc": eusilc, "testdata": testdata}
    if "--docs" in sys.argv:  # replay the docs' recipes (in OUT_DIR) instead of writing recipes
        print(json.dumps(replay_docs(commit, out, files), indent=2))
        return
    found = {}
    for name, (which, reader, scenario, steps) in WORKFLOWS.items():
        data = read(which, reader, files)
        try:
            problem = sdckit.SdcProblem(data, sdckit.Scenario(**scenario))
            for method, params in steps:
                problem.apply(method, **params)
        except Exception as exc:  # an old sdckit refused it: reported, not written
            print(f"{commit} {name}: refused: {exc}", file=sys.stderr)
            continue
        for ext in ("yaml", "json"):
            problem.to_recipe(out / f"{commit}_{name}.{ext}")
        found[f"{commit}_{name}"] = {
            "commit": commit,
            "data": which,
            "reader": reader,
            "sha256": hashlib.sha256(canonical_csv(problem.data)).hexdigest(),
        }
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
