"""``sdckit loglinear``: population-uniqueness risk from Poisson log-linear models."""

from __future__ import annotations

from . import (
    add_key_options,
    add_missing_options,
    add_old_spelling,
    add_output_options,
    run_measure,
    split_list,
)


def register(sub) -> None:
    f = sub.add_parser(
        "loglinear",
        help="population-uniqueness risk (tau_1, tau_2) from log-linear models",
        description="Estimated number of sample uniques that are population unique (tau_1) and "
        "expected correct matches of sample uniques (tau_2) from a Poisson log-linear "
        "model of the key table, with Skinner-Shlomo automatic model search.",
    )
    add_key_options(f)
    f.add_argument("--weight", help="sampling weight column (pseudo-maximum likelihood)")
    f.add_argument(
        "--sampling-fraction",
        dest="sampling_fraction",
        type=float,
        help="known constant sampling fraction in (0, 1] (1: census); required without --weight",
    )
    f.add_argument(
        "--sampling",
        choices=["pml", "constant"],
        default="pml",
        help="with --weight: pml (fit to weighted counts, default) or constant (pi = n / sum w)",
    )
    f.add_argument(
        "--model",
        default="auto",
        help='auto (forward search, default), independence, 2way, 3way, saturated or a formula "a*b+c"',
    )
    f.add_argument("--criterion", choices=["tau1", "tau2"], default="tau2", help="measure whose Z drives the search")
    f.add_argument(
        "--search",
        choices=["bracket", "skinner-shlomo"],
        default="bracket",
        help="stopping rule of the automatic search: bracket (default: the model between the last two, "
        "at Z = --z-target) or skinner-shlomo (stop at |Z| <= --z-crit)",
    )
    f.add_argument(
        "--z-target", dest="z_target", type=float, default=-0.5, help="the Z the bracketing search aims at (-0.5)"
    )
    f.add_argument(
        "--z-crit", dest="z_crit", type=float, default=1.96, help="skinner-shlomo rule: stop at |Z| <= z (1.96)"
    )
    f.add_argument(
        "--candidates", type=int, default=1, help="terms scored by Z per search step, the most supported first (1)"
    )
    f.add_argument(
        "--term-test",
        dest="term_test",
        type=float,
        default=2.0,
        help="a term enters the search only when its standardized deviance reduction exceeds this (2.0)",
    )
    f.add_argument(
        "--stability",
        type=int,
        default=0,
        help="repeat the search on this many 80%% subsamples and report how stable the model choice is (0: no)",
    )
    f.add_argument("--seed", type=int, help="seed of the stability subsamples")
    f.add_argument("--compat", choices=["sdcMicro"], help="reproduce sdcMicro modRisk (needs --weight and a formula)")
    methods = ["default", "CE", "PML", "weightedLLM", "IPF"]
    f.add_argument(
        "--compat-method",
        dest="compat_method",
        default="default",
        choices=methods,
        help="sdcMicro modRisk method with --compat",
    )
    add_old_spelling(f, "--modrisk-method", "--compat-method", choices=methods)
    f.add_argument(
        "--method",
        choices=["auto", "ipf", "irls"],
        default="auto",
        help="the fit: auto (IPF for hierarchical models, Poisson IRLS otherwise), ipf or irls",
    )
    add_missing_options(f)
    add_output_options(f)
    f.set_defaults(func=run)


def run(args) -> int:
    from ..risk.loglinear import loglinear_risk

    def call(data, keys):
        return loglinear_risk(
            data,
            keys,
            weight=args.weight,
            sampling_fraction=args.sampling_fraction,
            model=args.model,
            sampling=args.sampling,
            criterion=args.criterion,
            search=args.search,
            z_target=args.z_target,
            z_crit=args.z_crit,
            candidates=args.candidates,
            term_test=args.term_test,
            stability=args.stability,
            seed=args.seed,
            method=args.method,
            compat=args.compat,
            compat_method=args.compat_method,
            missing=split_list(args.missing) or None,
            id=args.id,
        )

    return run_measure(args, "loglinear_risk", call, inputs={"data": args.data}, doing="fitting log-linear model")
