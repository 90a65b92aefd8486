"""The result of :func:`sdckit.assess`: every measure of the original file and of each
protection variant, as aggregates, with its text summary, JSON form and HTML report (drawn by
the renderer, :mod:`sdckit.report`)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from .._errors import SdcError
from .._validation import check_choice, check_new_file
from ._base import Result, Summary, fmt_share, freeze
from .bins import NEIGHBOUR_EDGES, PERTURBATION_EDGES, RISK_EDGES

__all__ = ["AssessmentResult", "KeySubsets", "VariantAssessment", "plain", "report_path"]


def plain(value):
    """The JSON form: mappings with text keys, lists, Python numbers; NaN and infinities as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


@dataclass(frozen=True)
class KeySubsets:
    """Records unique on each subset of the keys (sizes ``sizes``), the top ones per size.

    ``counts`` maps a tuple of key names to the number of records with f_k = 1 on those keys
    alone; ``top`` lists the ``TOP_PER_SIZE`` subsets with the most such records of each size
    (ties in the keys' order); ``cells`` (only with ``include_records``) holds, for the top
    subsets, the key values of up to ``CELLS_PER_SUBSET`` unique cells.
    """

    n: int
    sizes: tuple[int, ...]
    n_subsets: int
    skipped_sizes: tuple[int, ...]
    counts: dict
    top: tuple
    cells: dict | None = None

    def __post_init__(self):
        for name in ("counts", "top", "cells"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    def to_dict(self) -> dict:
        out = {
            "n": self.n,
            "sizes": list(self.sizes),
            "n_subsets": self.n_subsets,
            "skipped_sizes": list(self.skipped_sizes),
            "top": [
                {"variables": list(v), "size": len(v), "n_sample_uniques": c, "share_sample_uniques": c / self.n}
                for v, c in self.top
            ],
        }
        if self.cells is not None:
            out["unique_cells"] = [
                {"variables": list(v), "cells": [list(c) for c in cells]} for v, cells in self.cells.items()
            ]
        return out


@dataclass(frozen=True, eq=False)
class VariantAssessment:
    """The measures of one variant: the original file, a replayed recipe or a protected file.

    Attributes
    ----------
    name : str
    kind : {"original", "recipe", "protected", "synthetic"}
    steps : tuple of str
        The protection methods of a recipe, in order.
    step_texts : tuple of str
        Each step with the parameters it was given (roles and seeds left out).
    risk : mapping or None
        The risk measure the verdict is decided on, the y of the risk-utility map: ``measure``
        (its name: "individual rate", "household rate", ...), ``value``, ``target``,
        ``meets_target``, and ``rules``: every release rule with its value and target. The
        measure is the same for every variant: the rule the original fails furthest above its
        target (or, if it fails none, the one closest to its target).
    loss : float or None
        The loss of every change (variants only): the mean over the loss variables of lambda_j,
        each in [0, 1] and unit-free (the x of the risk-utility map).
    loss_by_variable, share_by_variable : mapping
        lambda_j of every loss variable, and its share of the variant's total.
    suppressed_by_variable : mapping
        Cells suppressed (a value made missing) per loss variable.
    change_by_variable : mapping
        Per loss variable: ``kind`` of change ("unchanged", "suppressed", "recoded", "perturbed",
        "pram", or a "+"-combination), ``n_suppressed``, ``n_changed``, the categories before and
        after, and lambda_j split into ``loss_suppressed`` and ``loss_changed``.
    ebil : mapping
        Entropy-based information loss (nats) of each PRAMed variable.
    estimates : mapping or None
        The estimates data users publish (totals, shares, means by domain, regression
        coefficients): original and protected value, relative change, the original confidence
        interval and whether it covers the protected value, with aggregates; or
        ``{"skipped": reason}``.
    recodes : mapping
        Per recoded variable, its released categories with their records and the original
        categories merged into each.
    pram : mapping
        Per PRAMed variable, the published transition matrix (``categories``, ``matrix``).
    il1s : mapping or None
        IL1s of the continuous keys, total and per variable.
    categorical_risk : mapping or None
        k-anonymity, individual and household risk and the threshold (categorical keys);
        ``pram_adjusted`` names the PRAMed keys the risk accounts for.
    suda, l_diversity, loglinear : mapping or None
        SUDA's aggregates; l-diversity per sensitive variable; the log-linear tau1/tau2 (or
        ``{"skipped": reason}``; tau2 PRAM-adjusted for a PRAM variant, ``tau2_unadjusted``
        beside it).
    register : mapping or None
        With ``register_sample``: the register measures tau1*, tau2*, tau1, tau2 and theta-hat
        (Shlomo & Skinner 2022, approach B), or ``{"skipped": reason}``.
    continuous : mapping or None
        Interval disclosure and the confidentiality plot's 2-D histogram (continuous keys):
        ``grid[r][c]`` records, rows by number of neighbours (``to_dict()["bins"]["neighbours"]``,
        lower edges, the last open), column 0 the unchanged records and column c >= 1 the
        perturbations in [edge_{c-1}, edge_c) of ``bins["perturbation"]`` (the end columns
        open). Risk histograms count records (households) in the bins ``bins["risk"]``.
    synthetic : mapping or None
        A synthetic file (its records are not the original's: no loss of every change): the
        largest attack ``risk`` beyond the control file, ``leak`` (exact copies or singling out
        beyond it), ``control`` (whether one was given), ``exact_copy_share``,
        ``excess_copies``, ``attacks`` (per attack ``risk``, ``ci``, ``detected``),
        ``distribution`` (KL, TV, Hellinger of the keys' table), ``pmse``, ``s_pmse`` and
        ``table_loss`` (the mean total variation of the one- and two-way key tables).
    measures : mapping
        The headlines of the declared measures that have no field of their own (a measure whose
        declaration puts it in the assessment's table without a ``part``): per measure, per
        headline, its ``value``, ``meaning`` and ``better`` ("lower" or "higher").
    """

    name: str
    kind: str
    steps: tuple = ()
    step_texts: tuple = ()
    risk: dict | None = None
    loss: float | None = None
    loss_by_variable: dict = field(default_factory=dict)
    share_by_variable: dict = field(default_factory=dict)
    suppressed_by_variable: dict = field(default_factory=dict)
    change_by_variable: dict = field(default_factory=dict)
    ebil: dict = field(default_factory=dict)
    estimates: dict | None = None
    recodes: dict = field(default_factory=dict)
    pram: dict = field(default_factory=dict)
    il1s: dict | None = None
    categorical_risk: dict | None = None
    suda: dict | None = None
    l_diversity: dict | None = None
    loglinear: dict | None = None
    register: dict | None = None
    continuous: dict | None = None
    synthetic: dict | None = None
    measures: dict = field(default_factory=dict)

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, freeze(getattr(self, f.name)))

    def to_dict(self) -> dict:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, eq=False)
class AssessmentResult(Result):
    """Every measure that applies to a scenario's roles, for the original file and each
    protection variant: aggregates only.

    Attributes
    ----------
    n : int
        Records.
    n_columns : int
        Variables in the file.
    scenario : mapping
        The roles (``keys``, ``numeric_keys``, ``weight``, ...).
    k : tuple of int
    max_global_risk : float
    include_records : bool
        Whether the key values of the riskiest cells are included (record-level).
    key_info : mapping
        Per key variable, ``n_categories`` and ``n_missing``.
    variants : tuple of VariantAssessment
        The original first, then each recipe and the protected file.
    combinations : KeySubsets or None
        Records unique on each subset of 1..3 key variables.
    notes : tuple of str
        What was left out and why, and the measures' warnings.
    loss_scales : mapping
        The variables every variant's loss is measured on, with the scale of each ("nominal"
        or "numeric").
    """

    n: int = 0
    n_columns: int = 0
    scenario: dict = field(default_factory=dict)
    k: tuple = (2, 3, 5)
    max_global_risk: float = 0.01
    include_records: bool = False
    key_info: dict = field(default_factory=dict)
    variants: tuple = ()
    combinations: KeySubsets | None = None
    notes: tuple = ()
    loss_scales: dict = field(default_factory=dict)

    _headline = ("n", "n_variants", "global_risk", "safe")

    def __post_init__(self):
        super().__post_init__()
        for name in ("scenario", "key_info", "notes", "loss_scales"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    # -- headline ----------------------------------------------------------------------------
    @property
    def original(self) -> VariantAssessment:
        """The measures of the original file."""
        return self.variants[0]

    @property
    def n_variants(self) -> int:
        """Protection variants compared with the original."""
        return len(self.variants) - 1

    @property
    def global_risk(self) -> float | None:
        """The original's global risk (expected share of records re-identified)."""
        cr = self.original.categorical_risk
        return None if cr is None else cr["global_risk"]

    @property
    def safe(self) -> bool | None:
        """Whether the original meets ``max_global_risk`` (and the household rule)."""
        cr = self.original.categorical_risk
        return None if cr is None else bool(cr["safe"])

    def variant(self, name: str) -> VariantAssessment:
        """The variant called ``name``."""
        for v in self.variants:
            if v.name == name:
                return v
        names = ", ".join(repr(v.name) for v in self.variants)
        raise SdcError(f"name: no variant {name!r}; expected one of {names}")

    # -- Result interface ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Aggregates only, JSON-serialisable: no record values, no record identifiers (the key
        values of the riskiest cells only with ``include_records=True``)."""
        from .._version import __version__

        return {
            "measure": "assessment",
            "sdckit_version": __version__,
            "n": self.n,
            "n_columns": self.n_columns,
            "scenario": plain(self.scenario),
            "k": list(self.k),
            "max_global_risk": self.max_global_risk,
            "include_records": self.include_records,
            "key_info": plain(self.key_info),
            "variants": [v.to_dict() for v in self.variants],
            "loss_scales": plain(self.loss_scales),
            "combinations": None if self.combinations is None else plain(self.combinations.to_dict()),
            "notes": list(self.notes),
            "bins": {
                "risk": [float(x) for x in RISK_EDGES],
                "perturbation": [float(x) for x in PERTURBATION_EDGES],
                "neighbours": list(NEIGHBOUR_EDGES),
            },
        }

    def summary(self) -> Summary:
        from ..report.table import decision_text, loss_table, role_text, tradeoff_table, variant_table

        sc = self.scenario
        rows: list[tuple] = [("records", self.n), ("variables in the file", self.n_columns)]
        rows += [(role.replace("_", " "), role_text(v)) for role, v in sc.items()]
        rows.append(("target re-identification rate", fmt_share(self.max_global_risk)))
        columns, table = variant_table(self)
        sections: list = [("Data and scenario", rows), ("Measures", {"columns": columns, "rows": table})]
        if self.n_variants:
            columns, table = tradeoff_table(self)
            sections.append(("Risk against loss", {"columns": columns, "rows": table}))
            columns, table = loss_table(self)
            sections.append(
                ("Loss per variable: lambda_j (share of the total; change)", {"columns": columns, "rows": table})
            )
        if self.combinations is not None and self.combinations.top:
            sections.append(
                (
                    "Riskiest key combinations (records unique on these variables alone)",
                    {
                        "columns": ["variables", "records unique", "% of records"],
                        "rows": [
                            (", ".join(v), c, round(100.0 * c / self.n, 2) if self.n else 0.0)
                            for v, c in self.combinations.top
                        ],
                    },
                )
            )
        cr = self.original.categorical_risk
        headline = cr["verdict"] if cr is not None else None
        decision = decision_text(self)
        if decision:
            headline = f"{headline}\n{decision}" if headline else decision
        return Summary("Disclosure risk assessment", tuple(sections), tuple(self.notes), headline=headline)

    def _records(self):
        raise SdcError(
            "to_frame: an assessment holds aggregates only; per-record values come from the measures "
            "themselves (e.g. sdckit.individual_risk(...).to_frame())"
        )

    # -- the report --------------------------------------------------------------------------
    def to_html(self, path=None, *, audience: str = "internal", overwrite: bool = False) -> str:
        """The self-contained HTML report (inline SVG figures and styles, no script, no network).

        ``audience="internal"`` (default) gives every measure; ``"external"`` the report for data
        users: what was done to the file (steps, variables changed, suppressions, recoded
        categories, PRAM matrices) and how it moves their estimates, with no risk figure.

        With ``path`` (a file name ending in ``.html`` or ``.htm`` in an existing directory) the
        report is also written there, atomically: a file already at ``path`` is an error unless
        ``overwrite=True`` (then it is replaced by the complete report), and nothing is left
        behind when writing fails.
        """
        audience = check_choice(audience, "audience", ("internal", "external"))
        target = report_path(path) if path is not None else None
        if target is not None:
            check_new_file(target, overwrite)
        text = self._rendered(document=True, audience=audience)
        if target is not None:
            from ..io import atomic_write

            try:
                atomic_write(target, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), overwrite=overwrite)
            except FileExistsError:  # appeared while the report was drawn
                raise SdcError(
                    f"path: {target} already exists; expected a new file, or overwrite=True to replace it"
                ) from None
        return text

    def _repr_html_(self) -> str:
        return self._rendered(document=False)

    def _rendered(self, document: bool, audience: str = "internal") -> str:
        """The page (or the Jupyter fragment), drawn once: the result is immutable."""
        from ..report.html import render

        cache = self.__dict__.setdefault("_rendered_cache", {})
        if (document, audience) not in cache:
            cache[(document, audience)] = render(self, document=document, audience=audience)
        return cache[(document, audience)]


def report_path(path) -> Path:
    """``path`` checked: an .html/.htm file name in an existing directory, not a directory."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise SdcError(f"path: got {type(path).__name__}; expected a file path ending in .html")
    p = Path(os.fspath(path))
    if p.is_dir():
        raise SdcError(f"path: {p} is a directory; expected a file name ending in .html")
    if p.suffix.lower() not in (".html", ".htm"):
        raise SdcError(f"path: {p.name} does not end in .html or .htm; expected an HTML file name")
    if not p.parent.is_dir():
        raise SdcError(f"path: directory {p.parent} does not exist; expected an existing directory")
    return p
