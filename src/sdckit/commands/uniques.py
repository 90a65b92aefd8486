"""``sdckit uniques``: the number of population uniques estimated from a sample."""

from __future__ import annotations

from . import (
    add_declared_options,
    add_key_options,
    add_measure_endings,
    declared_values,
    role_value,
    run_measure,
)


def register(sub) -> None:
    from ..risk.uniqueness import population_uniques

    f = sub.add_parser(
        "uniques",
        help="estimated number of population uniques (Zayatz, Pitman, SNB, Dankar's rule)",
        description="The number of key patterns unique in the population, estimated from the sample's "
        "class-size profile by Zayatz's, Pitman's or the SNB model, or the one Dankar's decision rule picks "
        "(as in ARX).",
    )
    add_key_options(f)
    helps = {
        "sampling_fraction": "known sampling fraction in (0, 1] (else from --population-size or --weight)",
        "population_size": "population size N (pi = n / N)",
        "weight": "(pi = n / sum of the weights)",
        "method": "the estimator: dankar (default: the decision rule), pitman, zayatz, snb, or all of them",
    }
    add_declared_options(f, population_uniques, helps)
    add_measure_endings(f, run, records="the class-size profile (aggregates)", id_option=False)


def run(args) -> int:
    from ..risk.uniqueness import population_uniques

    def call(data, keys):
        return population_uniques(
            data,
            keys,
            **declared_values(args, population_uniques),
            missing=role_value(args, "missing") or None,
        )

    return run_measure(args, "population_uniques", call, inputs={"data": args.data}, doing="estimating")
