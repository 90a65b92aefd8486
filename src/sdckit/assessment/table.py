"""The one table of the measures: for each declared measure that sdckit runs by itself, the roles
it needs, the headline numbers it gives and the search targets it provides.

The facts are on each measure's declaration (``declare("measure", ..., assessed=Assessed(...))``,
or ``excluded="why"``); :func:`generated` assembles them from the registry, and
``tools/registry_docs.py`` writes the result to ``measures_table.json`` beside this module, which
this module reads (so that the table costs no import of the measures; a test checks that the
file is the generated one). The assessment (:mod:`sdckit.assessment.variants`) runs a measure
when :func:`applies` says its roles are set; :class:`sdckit.SdcProblem`'s per-step table runs
the entries marked ``step`` and shows their headlines with a ``label``; the search's target
names (``SEARCH_TARGETS``) are :func:`search_targets`; the app's search form offers some of
them. Every measure the registry declares (:func:`sdckit.registry.measures`) is in
:data:`MEASURES` or in :data:`EXCLUDED` with the reason it runs only when called
(``tests/test_assessment_table.py`` fails otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._assessed import Headline

__all__ = [
    "EXCLUDED",
    "MEASURES",
    "TABLE_FILE",
    "Headline",
    "MeasureEntry",
    "applies",
    "entry",
    "entry_of",
    "generated",
    "generic_targets",
    "search_targets",
    "step_entries",
]

#: the table as tools/registry_docs.py writes it from the declarations
TABLE_FILE = Path(__file__).with_name("measures_table.json")


@dataclass(frozen=True)
class MeasureEntry:
    """A measure as the assessment, the per-step table and the search use it: its name and the
    facts of its declaration (:class:`~sdckit._assessed.Assessed`, whose attributes it has)."""

    name: str
    needs: tuple[str, ...]
    headlines: tuple[Headline, ...] = ()
    targets: tuple[str, ...] = ()
    part: str | None = None
    variants_only: bool = False
    step: bool = False
    option: str | None = None
    assess: bool = True
    call: Mapping = field(default_factory=dict)


def generated() -> dict:
    """The table assembled from the registry's declarations, as JSON-ready data: ``measures``
    (each entry's facts, in their declared ``order``) and ``excluded`` (name -> reason)."""
    from .. import registry

    decls = registry.measures()
    listed = sorted((d for d in decls if d.assessed is not None), key=lambda d: (d.assessed.order, d.name))
    measures = []
    for d in listed:
        facts = {k: v for k, v in asdict(d.assessed).items() if k != "order"}
        measures.append({"name": d.name, **facts})
    return {"measures": measures, "excluded": {d.name: d.excluded for d in decls if d.excluded}}


def entry_of(name: str, assessed) -> MeasureEntry:
    """The table's entry of the measure ``name`` whose declaration says ``assessed``."""
    return _entry({"name": name, **{k: v for k, v in asdict(assessed).items() if k != "order"}})


def _entry(data: Mapping) -> MeasureEntry:
    heads = tuple(Headline(**{**h, "needs": tuple(h["needs"])}) for h in data["headlines"])
    plain: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    plain["headlines"] = heads
    return MeasureEntry(**plain)


def _read() -> tuple[tuple[MeasureEntry, ...], dict[str, str]]:
    data = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return tuple(_entry(e) for e in data["measures"]), dict(data["excluded"])


#: the measures sdckit runs by itself, in the order of the per-step table and of the search's
#: target names; and the declared measures sdckit runs only when called, with why
MEASURES, EXCLUDED = _read()


def entry(name: str) -> MeasureEntry:
    """The entry of the measure ``name``."""
    for e in MEASURES:
        if e.name == name:
            return e
    raise KeyError(name)


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
    """The names a search target may combine, each once, in the table's order: the targets the
    search implements, then those of the headlines (:func:`generic_targets`)."""
    return tuple(dict.fromkeys([*(t for e in MEASURES for t in e.targets), *generic_targets()]))


def generic_targets() -> dict[str, tuple[MeasureEntry, Headline]]:
    """The search targets a headline declares (``Headline.target``), by name: the measure and
    the headline that the target bounds."""
    return {h.target: (e, h) for e in MEASURES for h in e.headlines if h.target}
