"""``sdckit register``: re-identification risk for the members of a subpopulation register."""

from __future__ import annotations

from . import (
    add_declared_options,
    add_measure_endings,
    add_role_option,
    declared_values,
    role_value,
    run_measure,
)


def register(sub) -> None:
    from ..risk.register import register_risk

    f = sub.add_parser(
        "register",
        help="re-identification risk of the members of a subpopulation register (tau*_1, tau*_2)",
        description="Risk for a file that lists every member of a subpopulation (Shlomo & Skinner 2022): "
        "register uniques that are population unique (tau*_1) and their expected correct matches "
        "(tau*_2), the same for cells unique in the register and in an independent sample of the "
        "population (tau_1, tau_2), and the design-consistent theta-hat.",
    )
    f.add_argument("register", help="the register: every member of the subpopulation (.csv, .parquet, ...)")
    f.add_argument("sample", help="an independent probability sample of the whole population, same key columns")
    add_role_option(f, "keys", "(in both files)", required=True)
    helps = {
        "sample_weight": "the sample's design-weight column",
        "sampling_fraction": "the sample's known constant sampling fraction in (0, 1]; required without "
        "--sample-weight",
        "approach": "B (propensity weighting, default), A (log-linear fit to the sample) or both",
        "model": 'log-linear model of the population counts: 2way (default), independence, 3way, or a formula "a*b+c"',
        "membership_model": 'logistic model of membership: independence (main effects, default) or a formula "a+b"',
        "method": "approach A's fit of the membership model: newton (default) or fisher (Fisher scoring)",
    }
    add_declared_options(f, register_risk, helps)
    add_measure_endings(f, run, records="per-record risks of the register records", id_option=False)


def run(args) -> int:
    from ..risk.register import register_risk

    def call(reg, smp, keys):
        return register_risk(
            reg,
            smp,
            keys,
            **declared_values(args, register_risk),
            missing=role_value(args, "missing") or None,
        )

    inputs = {"register": args.register, "sample": args.sample}
    return run_measure(args, "register_risk", call, inputs=inputs, doing="estimating the register risk")
