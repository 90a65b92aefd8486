"""``sdckit loglinear``: population-uniqueness risk from Poisson log-linear models."""

from __future__ import annotations

from . import (
    add_declared_options,
    add_key_options,
    add_measure_endings,
    add_old_spelling,
    declared_values,
    role_value,
    run_measure,
)


def register(sub) -> None:
    from .._declare import declaration
    from ..risk.loglinear import loglinear_risk

    f = sub.add_parser(
        "loglinear",
        help="population-uniqueness risk (tau_1, tau_2) from log-linear models",
        description="Estimated number of sample uniques that are population unique (tau_1) and "
        "expected correct matches of sample uniques (tau_2) from a Poisson log-linear "
        "model of the key table, with Skinner-Shlomo automatic model search.",
    )
    add_key_options(f)
    helps = {
        "weight": "(pseudo-maximum likelihood)",
        "sampling_fraction": "known constant sampling fraction in (0, 1] (1: census); required without --weight",
        "sampling": "with --weight: pml (fit to weighted counts, default) or constant (pi = n / sum w)",
        "model": 'auto (forward search, default), independence, 2way, 3way, saturated or a formula "a*b+c"',
        "criterion": "measure whose Z drives the search",
        "search": "stopping rule of the automatic search: bracket (default: the model between the last two, "
        "at Z = --z-target) or skinner-shlomo (stop at |Z| <= --z-crit)",
        "z_target": "the Z the bracketing search aims at (-0.5)",
        "z_crit": "skinner-shlomo rule: stop at |Z| <= z (1.96)",
        "candidates": "terms scored by Z per search step, the most supported first (1)",
        "term_test": "a term enters the search only when its standardized deviance reduction exceeds this (2.0)",
        "records_per_parameter": "a term enters the search only with at least this many records per parameter it adds (1.0)",
        "stability": "repeat the search on this many 80%% subsamples and report how stable the model choice is (0: no)",
        "seed": "seed of the stability subsamples",
        "compat": "reproduce sdcMicro modRisk (needs --weight and a formula)",
        "compat_method": "sdcMicro modRisk method with --compat",
    }
    add_declared_options(f, loglinear_risk, helps)
    methods = list(declaration(loglinear_risk).param("compat_method").choices)  # type: ignore[union-attr]
    add_old_spelling(f, "--modrisk-method", "--compat-method", choices=methods)
    helps = {"method": "the fit: auto (IPF for hierarchical models, Poisson IRLS otherwise), ipf or irls"}
    add_declared_options(f, loglinear_risk, helps)
    add_measure_endings(f, run)


def run(args) -> int:
    from ..risk.loglinear import loglinear_risk

    def call(data, keys):
        return loglinear_risk(
            data,
            keys,
            **declared_values(args, loglinear_risk),
            missing=role_value(args, "missing") or None,
            id=args.id,
        )

    return run_measure(args, "loglinear_risk", call, inputs={"data": args.data}, doing="fitting log-linear model")
