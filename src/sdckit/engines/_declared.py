"""What the declarations say about the engines.

Written by tools/registry_docs.py from ``sdckit.registry.out_of_core()`` (the declarations'
``out_of_core=True``); do not edit by hand. The engines sit below the registry, so they read
this copy; a test checks that it is the generated one.
"""

#: the measures and methods an engine without the records in memory runs
OUT_OF_CORE_MEASURES = (
    "external_risk",
    "frequencies",
    "individual_risk",
    "k_anonymity",
    "l_diversity",
    "loglinear_risk",
    "population_uniques",
    "suda",
    "synthetic_utility",
    "t_closeness",
    "threshold_rule",
    "local_suppression",
    "suppress_by_risk",
)
