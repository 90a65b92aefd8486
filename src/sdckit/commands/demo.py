"""``sdckit demo``: the risk assessment on the bundled synthetic survey sample."""

from __future__ import annotations

import argparse

from . import add_output_options


def register(sub) -> None:
    d = sub.add_parser("demo", help="run the risk assessment on the bundled example data")
    add_output_options(d)
    d.set_defaults(func=run)


def run(args) -> int:
    from ..datasets import EXAMPLE_KEYS, example_path
    from . import freq

    path = example_path()
    print(f"sdckit demo: risk assessment of the bundled synthetic survey sample\n  {path}\n"
          f"  equivalent to: sdckit freq {path.name} --keys {','.join(EXAMPLE_KEYS)} --weight weight --k 2,3,5\n")
    ns = argparse.Namespace(data=str(path), keys=",".join(EXAMPLE_KEYS), weight="weight", alpha=1.0,
                            k="2,3,5", json=args.json, records=args.records, progress=args.progress,
                            missing=None, na_values=None)
    return freq.run(ns)
