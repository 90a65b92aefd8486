"""The one table of example calls: every declared method and measure, called on sdcMicro's
testdata (4,580 records; tests/data/sdcmicro).

The common tests that run every function read it (tests/test_engine_protocol.py runs each
example on every engine, tests/test_registry_acceptance.py builds its steps and calls from it);
tests/test_declared_facts.py fails when a declared function has no example here, or an example
names a function or a parameter that is not declared. A new method or measure adds one line.

An example gives the parameters by name; the data arguments come from the declaration's
``inputs``: the data, and a second file (a protected copy, an external file) for a measure that
takes two (see :func:`inputs`).
"""

from __future__ import annotations

import math

from sdckit import registry

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUM = ["expend", "income", "savings"]
W = "sampling_weight"
THREE = ["urbrur", "roof", "sex"]
GOWER_SCALES = {"income": "continuous", "walls": "nominal", "urbrur": "nominal", "roof": "nominal"}

#: function name -> its parameters (the data arguments aside)
EXAMPLES: dict[str, dict] = {
    # measures
    "frequencies": {"keys": KEYS, "weight": W},
    "k_anonymity": {"keys": KEYS, "k": (2, 3)},
    "threshold_rule": {"keys": KEYS, "max_dimension": 2},
    "l_diversity": {"keys": THREE, "sensitive": ["water", "hhcivil"]},
    "t_closeness": {"keys": THREE, "sensitive": "water"},
    "individual_risk": {"keys": KEYS, "weight": W, "household": "ori_hid"},
    "suda": {"keys": KEYS, "dis_fraction": 0.01},
    "loglinear_risk": {"keys": KEYS[:5], "weight": W},
    "population_uniques": {"keys": KEYS, "sampling_fraction": 0.1},
    "register_risk": {"keys": ["urbrur", "roof"], "sample_weight": W},
    "interval_disclosure": {"variables": NUM},
    "relative_interval_risk": {"variables": NUM},
    "combined_risk": {"keys": ["urbrur", "roof"], "variables": NUM},
    "rmd_interval_disclosure": {"variables": NUM},
    "outliers": {"variables": NUM},
    "record_linkage_risk": {"variables": NUM},
    "external_risk": {"variables": ["urbrur", "roof", "sex", "age"]},
    "confidentiality_plot": {"variables": NUM},
    "categorical_confidentiality_plot": {"keys": KEYS, "weight": W},
    "information_loss": {"variables": NUM, "scales": dict.fromkeys(NUM, "continuous")},
    "variant_loss": {"variables": NUM, "scales": dict.fromkeys(NUM, "numeric")},
    "estimates_change": {"keys": THREE, "variables": NUM, "weight": W, "household": "ori_hid"},
    "analysis_change": {"keys": THREE, "variables": NUM, "weight": W, "household": "ori_hid"},
    "dominance_rules": {"keys": ["urbrur", "roof"], "variables": NUM},
    "synthetic_risk": {"keys": THREE, "variables": NUM, "attacks": {"n_attacks": 50}, "seed": 1},
    "synthetic_utility": {"keys": THREE, "estimates": False},
    # protection methods
    "add_noise": {"variables": NUM, "seed": 1},
    "global_recode": {"variables": ["age"], "breaks": [-math.inf, 20, 40, 60, math.inf]},
    "local_suppression": {"keys": KEYS, "k": 3},
    "microaggregation": {"variables": NUM},
    "pram": {"variables": ["water", "roof"], "seed": 1},
    "rank_swap": {"variables": NUM, "seed": 1},
    "microaggregation_gower": {
        "variables": ["income", "walls"],
        "distance_variables": ["urbrur", "roof", "income"],
        "scales": GOWER_SCALES,
        "seed": 1,
    },
    "rounding": {"variables": NUM, "base": 1000, "method": "controlled", "seed": 1},
    "record_swap": {
        "keys": ["roof", "walls", "water", "sex"],
        "household": "ori_hid",
        "geography": ["urbrur"],
        "seed": 1,
    },
    "suppress_by_risk": {"keys": KEYS, "weight": W, "threshold": 0.01},
    "top_bottom_coding": {"variables": ["income"], "value": 50_000_000},
    "suppress_records": {"keys": KEYS, "k": 3},
}

#: the data arguments of a declaration's ``inputs``, from the data ``d`` and a second file ``x``
_INPUTS = {
    ("data",): lambda d, x: [d],
    ("original", "protected"): lambda d, x: [d, x],
    ("released", "external"): lambda d, x: [d, x],
    ("register", "sample"): lambda d, x: [x, d],
    ("original", "synthetic"): lambda d, x: [d, x],
    ("original", "synthetic", "control"): lambda d, x: [d, x, d],
}


def inputs(decl, data, extra) -> list:
    """The data arguments of ``decl``'s function: ``data`` and, for a measure of two files,
    ``extra`` (the register of ``register_risk``, the synthetic file of ``synthetic_risk``)."""
    return _INPUTS[decl.inputs](data, extra)


def call(name: str, data, extra=None, **more):
    """``name``'s example on ``data`` (and ``extra``), with ``more`` parameters (``engine=``)."""
    decl = registry.get(name)
    return decl.func(*inputs(decl, data, extra), **EXAMPLES[name], **more)


# ---------------------------------------------------------------------------------------------
# the small table of the common checks (tests/test_common.py): sdcMicro's S002 example, 10
# records with text labels, on which a per-record list (of length 10) or a record's label
# ("Urban") in an aggregate is seen. A measure of two or three files gets the table for each.
# ---------------------------------------------------------------------------------------------
S002_KEYS = ["Residence", "Gender", "Education", "Labor"]
EDUCATION_MAP = {
    "Primary incomplete": "Primary",
    "Primary complete": "Primary",
    "Secondary incomplete": "Secondary",
    "Secondary complete": "Secondary",
    "Post-secondary": "Post-secondary",
}

#: function name -> its parameters on the S002 table
SMALL_EXAMPLES: dict[str, dict] = {
    "frequencies": {"keys": S002_KEYS, "weight": "w"},
    "k_anonymity": {"keys": S002_KEYS, "k": [2, 3, 5], "weight": "w"},
    "threshold_rule": {"keys": S002_KEYS, "max_dimension": 3, "frequency_threshold": [1, 2, 2]},
    "individual_risk": {"keys": S002_KEYS, "weight": "w"},
    "l_diversity": {"keys": S002_KEYS, "sensitive": "Health"},
    "t_closeness": {"keys": S002_KEYS, "sensitive": "Health"},
    "suda": {"keys": S002_KEYS},
    # original vs itself (the common checks need one table); tests/test_utility.py has its own pairs
    "information_loss": {"variables": [*S002_KEYS, "w"]},
    "variant_loss": {"variables": [*S002_KEYS, "w"], "records": True},
    # original vs itself; the domains' category labels are part of a table of published estimates
    # (tests/test_estimates_change.py has its own pairs): Residence is left out so that the check
    # that no record label ("Urban") leaks still bites on every other field
    "estimates_change": {"keys": S002_KEYS[1:], "weight": "w"},
    # continuous-variable risk, original vs itself on the numeric column
    "interval_disclosure": {"variables": ["w"]},
    "outliers": {"variables": ["w"], "quantile": 0.8},
    "relative_interval_risk": {"variables": ["w"], "joint": True, "keys": S002_KEYS[:2]},
    "combined_risk": {"keys": S002_KEYS[:2], "variables": ["w"]},
    "confidentiality_plot": {"variables": ["w"]},
    "categorical_confidentiality_plot": {"keys": S002_KEYS, "weight": "w"},
    "loglinear_risk": {"keys": S002_KEYS, "weight": "w"},
    "population_uniques": {"keys": S002_KEYS, "weight": "w"},
    # the table as both register and sample (tests/test_register.py has real pairs)
    "register_risk": {"keys": S002_KEYS, "sampling_fraction": 0.1, "model": "independence"},
    # information loss of types 2 and 3, original vs itself (tests/test_analysis_change.py has its
    # pairs); cells of a magnitude table: the key labels are the published table's own (Residence
    # left out)
    "analysis_change": {"keys": S002_KEYS[1:3], "variables": ["w"], "min_records": 1},
    "dominance_rules": {"keys": S002_KEYS[1:2], "variables": ["w"]},
    # the table as original, synthetic file and control (tests/test_synthetic*.py have real files);
    # the keys leave Residence out: the cells that differ most are published aggregates
    "synthetic_risk": {"keys": S002_KEYS[1:], "similarity": {"records": True}, "seed": 1},
    "synthetic_utility": {"keys": S002_KEYS[1:3], "variables": "w"},
    # protection methods
    "global_recode": {"variables": ["Education"], "mapping": EDUCATION_MAP},
    "top_bottom_coding": {"variables": ["w"], "value": 50.0, "replacement": 50.0},
    "local_suppression": {"keys": S002_KEYS, "k": 2},
    "suppress_records": {"keys": S002_KEYS, "k": 2},
    "suppress_by_risk": {"keys": S002_KEYS, "weight": "w", "threshold": 0.2},
    "pram": {"variables": ["Education"], "seed": 1},
    "microaggregation": {"variables": ["w"], "group_size": 3},
    "add_noise": {"variables": ["w"], "noise": 50, "seed": 1},
    "rank_swap": {"variables": ["w"], "swap_range": 20, "top_percent": 0, "bottom_percent": 0, "seed": 1},
    "rounding": {"variables": ["w"], "base": 5, "method": "controlled", "seed": 1},
    "microaggregation_gower": {
        "variables": ["w", "Education"],
        "distance_variables": ["Gender", "Education", "w"],
        "seed": 1,
    },
}
#: the functions without a call on the S002 table, and where their common checks are
SMALL_ELSEWHERE = {
    # per-record output that refers to row positions, or a richer pair of files
    "record_linkage_risk": "tests/test_linkage.py (PAIR_REGISTRY)",
    "external_risk": "tests/test_linkage.py (PAIR_REGISTRY)",
    "rmd_interval_disclosure": "tests/test_linkage.py (PAIR_REGISTRY)",
    # needs households and a geography, which S002 has not
    "record_swap": "tests/test_protect_record_swap.py",
}


def call_small(name: str, table):
    """``name``'s example on the S002 ``table`` (given as each of its data arguments)."""
    decl = registry.get(name)
    return decl.func(*[table] * len(decl.inputs), **SMALL_EXAMPLES[name])
