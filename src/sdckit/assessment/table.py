"""The one table of the measures: for each declared measure that sdckit runs by itself, the roles
it needs, the headline numbers it gives and the search targets it provides.

The assessment (:mod:`sdckit.assessment.variants`) runs a measure when :func:`applies` says its
roles are set; :class:`sdckit.SdcProblem`'s per-step table runs the entries marked ``step`` and
shows their headlines with a ``label``; the search's target names (``SEARCH_TARGETS``) are
:func:`search_targets`; the app's search form offers some of them. Every measure the registry
declares (:func:`sdckit.registry.measures`) is in :data:`MEASURES` or in :data:`EXCLUDED` with
the reason it runs only when called (``tests/test_assessment_table.py`` fails otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXCLUDED", "MEASURES", "Headline", "MeasureEntry", "applies", "entry", "search_targets", "step_entries"]


@dataclass(frozen=True)
class Headline:
    """One headline number of a measure.

    Attributes
    ----------
    name : str
        Its name in the assessment's aggregates and in the per-step measures.
    meaning : str
        What it says, in one line.
    better : {"lower", "higher"}
        Which way is safer (a risk) or better (a loss).
    attribute : str
        The attribute of the measure's result that holds it.
    label : str or None
        Its row in :class:`sdckit.SdcProblem`'s per-step table (None: not in that table).
    needs : tuple of str
        Roles it needs besides the measure's own (e.g. the household risk needs ``household``).
    """

    name: str
    meaning: str
    better: str
    attribute: str
    label: str | None = None
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class MeasureEntry:
    """A measure as the assessment, the per-step table and the search use it.

    Attributes
    ----------
    name : str
        The declared measure (its function name in :mod:`sdckit.registry`).
    needs : tuple of str
        The scenario roles that must be set for it to run (``keys``, ``numeric_keys``,
        ``sensitive``, ...).
    headlines : tuple of Headline
    targets : tuple of str
        The search-target names it provides (see :func:`sdckit.search`).
    part : str or None
        The field of :class:`~sdckit.results.assessment.VariantAssessment` it fills (None: not in
        the assessment).
    variants_only : bool
        Measured against the original: for a protection variant only.
    step : bool
        Recomputed by :class:`sdckit.SdcProblem` after every step.
    option : str or None
        The option that must be given besides the roles (``register_sample``, ``suda``,
        ``synthetic``), or None.
    """

    name: str
    needs: tuple[str, ...]
    headlines: tuple[Headline, ...] = ()
    targets: tuple[str, ...] = ()
    part: str | None = None
    variants_only: bool = False
    step: bool = False
    option: str | None = None


_L, _H = "lower", "higher"

#: the measures sdckit runs by itself, in the order of the per-step table and of the search's
#: target names
MEASURES: tuple[MeasureEntry, ...] = (
    MeasureEntry(
        "k_anonymity",
        ("keys",),
        (Headline("n_violations", "records with f_k < k, for each k", _L, "n_violations", "f_k < {k}"),),
        targets=("k",),
        part="categorical_risk",
        step=True,
    ),
    MeasureEntry(
        "l_diversity",
        ("keys", "sensitive"),
        (Headline("n_not_2_diverse", "records in classes with fewer than 2 distinct values", _L, "n_below"),),
        targets=("l", "sensitive", "diversity", "c"),
        part="l_diversity",
    ),
    MeasureEntry(
        "t_closeness",
        ("keys", "sensitive"),
        (Headline("max", "the largest distance of a class from the file's distribution", _L, "max"),),
        targets=("t", "sensitive", "t_distance"),
    ),
    MeasureEntry(
        "individual_risk",
        ("keys",),
        (
            Headline("global_risk", "expected share of records re-identified", _L, "global_risk", "global risk"),
            Headline(
                "expected_reidentifications",
                "expected records re-identified",
                _L,
                "expected_reidentifications",
                "expected re-identifications",
            ),
            Headline(
                "household_global_risk",
                "expected share of households re-identified",
                _L,
                "household_global_risk",
                "household risk",
                needs=("household",),
            ),
        ),
        targets=("max_risk", "max_global_risk", "household"),
        part="categorical_risk",
        step=True,
    ),
    MeasureEntry(
        "suda",
        ("keys",),
        (Headline("n_with_msu", "records with a minimal sample unique", _L, "n_with_msu", "records with an MSU"),),
        targets=("max_suda",),
        part="suda",
        step=True,
        option="suda",
    ),
    MeasureEntry(
        "frequencies",
        ("keys",),
        (Headline("n_sample_uniques", "records unique on the keys", _L, "n_sample_uniques"),),
        part="categorical_risk",
    ),
    MeasureEntry(
        "loglinear_risk",
        ("keys",),
        (Headline("tau1", "expected population uniques among the sample uniques", _L, "tau1"),),
        part="loglinear",
    ),
    MeasureEntry(
        "register_risk",
        ("keys",),
        (Headline("tau1_star", "expected register uniques that are sample uniques", _L, "tau1_star"),),
        part="register",
        option="register_sample",
    ),
    MeasureEntry(
        "interval_disclosure",
        ("numeric_keys",),
        (
            Headline(
                "share_interval_risk",
                "share of records within 5 % of a standard deviation on every continuous key",
                _L,
                "share_at_risk",
                "share in 5 % sd interval",
            ),
        ),
        part="continuous",
        variants_only=True,
        step=True,
    ),
    MeasureEntry(
        "record_linkage_risk",
        ("numeric_keys",),
        (
            Headline(
                "share_linked",
                "share of records linked to their own original by distance",
                _L,
                "share_linked",
                "share linked by distance",
            ),
        ),
        variants_only=True,
        step=True,
    ),
    MeasureEntry(
        "information_loss",
        ("numeric_keys",),
        (Headline("il1s", "IL1s of the continuous keys (unit-free)", _L, "il1s", "IL1s"),),
        part="il1s",
        variants_only=True,
        step=True,
    ),
    MeasureEntry(
        "confidentiality_plot",
        ("numeric_keys",),
        (
            Headline(
                "share_nearest_correct",
                "share of records whose nearest original is their own (the share of nearest_correct)",
                _L,
                "nearest_correct",
            ),
        ),
        part="continuous",
        variants_only=True,
    ),
    MeasureEntry(
        "variant_loss",
        (),
        (Headline("loss", "mean lambda_j of the loss variables, in [0, 1]", _L, "loss"),),
        part="loss",
        variants_only=True,
    ),
    MeasureEntry(
        "estimates_change",
        (),
        (
            Headline(
                "mean_abs_relative_change",
                "the mean absolute relative change of the published estimates",
                _L,
                "mean_abs_relative_change",
            ),
        ),
        part="estimates",
        variants_only=True,
    ),
    MeasureEntry(
        "synthetic_risk",
        ("keys",),
        (Headline("risk", "the largest attack risk beyond the control file", _L, "risk"),),
        part="synthetic",
        variants_only=True,
        option="synthetic",
    ),
    MeasureEntry(
        "synthetic_utility",
        ("keys",),
        (Headline("pmse", "propensity mean squared error", _L, "pmse"),),
        part="synthetic",
        variants_only=True,
        option="synthetic",
    ),
)

#: the declared measures sdckit runs only when called, and why
EXCLUDED: dict[str, str] = {
    "analysis_change": "a data user's own analysis (variances, covariances, tests): no headline for every file",
    "categorical_confidentiality_plot": "a figure for one variable pair, chosen by the user",
    "combined_risk": "needs both kinds of keys and a linkage model the user chooses",
    "dominance_rules": "a rule for tables of magnitudes, not for microdata releases",
    "external_risk": "needs the intruder's external file",
    "outliers": "flags records of one continuous variable; the user decides what an outlier is",
    "population_uniques": "an estimator the user picks (the assessment uses the log-linear model)",
    "relative_interval_risk": "a variant of interval disclosure with a user-chosen interval",
    "rmd_interval_disclosure": "a variant of interval disclosure with a user-chosen distance",
    "threshold_rule": "a rule for tables of counts, with thresholds the user sets",
}

_BY_NAME = {e.name: e for e in MEASURES}


def entry(name: str) -> MeasureEntry:
    """The entry of the measure ``name``."""
    return _BY_NAME[name]


def applies(name: str, scenario) -> bool:
    """Whether the scenario sets every role the measure ``name`` needs."""
    return all(getattr(scenario, role) for role in entry(name).needs)


def step_entries(scenario, options: frozenset[str] = frozenset()) -> tuple[MeasureEntry, ...]:
    """The per-step measures that run under ``scenario`` with the options given."""
    return tuple(
        e
        for e in MEASURES
        if e.step and (e.option is None or e.option in options) and all(getattr(scenario, r) for r in e.needs)
    )


def search_targets() -> tuple[str, ...]:
    """The names a search target may combine, each once, in the table's order."""
    return tuple(dict.fromkeys(t for e in MEASURES for t in e.targets))
