"""The protect-then-measure workflow: :class:`SdcProblem` (the counterpart of sdcMicro's
``sdcMicroObj``) and its recipes."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import SdcError
from .._validation import check_bool, check_k_list, check_new_file, raise_problems
from ..engines import in_memory_engine
from ..results._base import Summary, fmt
from ..scenario import Scenario
from ._files import check_named_files, named_files, read_config_file, relative_files
from ._steps import run_step

__all__ = ["SdcProblem", "Step", "protection_methods", "recipe_schema"]

RECIPE_VERSION = 1
#: the recipe format versions this sdckit reads
SUPPORTED_RECIPE_VERSIONS = (1,)
#: how a JSON recipe writes a float JSON cannot hold: ``{"$float": "inf"}`` (also "-inf", "nan")
FLOAT_TAG = "$float"


def protection_methods() -> dict:
    """Name -> function of every protection method a workflow or recipe can apply (the
    methods of :mod:`sdckit.registry`)."""
    from ..registry import methods

    return {decl.name: decl.func for decl in methods()}


@dataclass(frozen=True)
class Step:
    """One applied step: the method, its full parameters (replayable), its result and the
    measures after it."""

    method: str
    parameters: dict
    result: Any = field(repr=False)
    measures: dict = field(default_factory=dict)
    #: {path: {"sha256", "bytes"}} of the files the parameters name (a hierarchy table), as read
    files: dict = field(default_factory=dict)


class SdcProblem:
    """A release in progress: the original data, the protected data after each step, and the
    risk and loss measures before and after every step.

    Parameters
    ----------
    data : table
        The original microdata (never modified).
    scenario : Scenario
        The roles: categorical key variables (``keys``) and/or continuous ones
        (``numeric_keys``), weight, household, strata, missing-value codes.
    k : sequence of int, default (2, 3, 5)
        The k for which k-anonymity violations are counted.
    suda : bool, default False
        Also compute SUDA (the number of records with a minimal sample unique) at each step.

    Examples
    --------
    >>> sc = sdckit.Scenario(keys=["urbrur", "roof", "walls"], weight="sampling_weight")  # doctest: +SKIP
    >>> p = sdckit.SdcProblem(df, sc)                                                       # doctest: +SKIP
    >>> p.apply("local_suppression", k=3).apply("pram", variables=["walls"], seed=1)      # doctest: +SKIP
    >>> print(p.summary()); p.to_recipe("recipe.yaml")                                     # doctest: +SKIP
    """

    def __init__(self, data, scenario: Scenario, *, k=(2, 3, 5), suda: bool = False, engine=None):
        if not isinstance(scenario, Scenario):
            raise_problems([f"scenario: got {type(scenario).__name__}; expected an sdckit.Scenario"])
        if not scenario.keys and not scenario.numeric_keys:
            raise_problems(["scenario: no key variables; expected Scenario(keys=[...]) and/or numeric_keys=[...]"])
        self._engine = in_memory_engine(engine, "SdcProblem")
        self._original = self._engine.table(data)
        scenario.validate(self._original, require_keys=bool(scenario.keys), engine=self._engine)
        self.scenario = scenario
        self._k = tuple(check_k_list(k))
        self._suda = check_bool(suda, "suda")
        self._steps: list[Step] = []
        self._row_order: dict | None = None  # {"seed": s}: the file is written in a random order
        self._baseline = self._measure(self._original, ())

    # -- state -------------------------------------------------------------------------------
    @property
    def original(self):
        """The original data as the caller's frame type."""
        return self._engine.native_frame(self._original)

    @property
    def data(self):
        """The current protected data as the caller's frame type."""
        return self._engine.native_frame(self._current)

    @property
    def _current(self):
        return self._steps[-1].result.table if self._steps else self._original

    @property
    def history(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    @property
    def baseline(self) -> dict:
        """The measures of the original data."""
        return self._baseline

    @property
    def measures(self) -> dict:
        """The measures of the current data."""
        return self._steps[-1].measures if self._steps else self._baseline

    # -- steps -------------------------------------------------------------------------------
    def apply(self, method: str, /, **parameters) -> SdcProblem:
        """Apply a protection method to the current data, then recompute the measures the
        step can change. Roles the method takes (``keys``, ``weight``, ``household``,
        ``strata``, ``missing``) come from the scenario unless given, and the ``variables`` of
        the continuous methods default to the scenario's ``numeric_keys`` (the roles each method
        declares, see :mod:`sdckit.registry`). Returns ``self``."""
        files = named_files(method, parameters) if isinstance(method, str) else {}  # as read, before the step
        result = run_step(self._current, self.scenario, method, parameters, engine=self._engine)
        changed = tuple(sorted({v for s in self._steps for v in s.result.n_changed} | set(result.n_changed)))
        pram = _published_pram([*(st.result for st in self._steps), result])
        measures = self._measure(result.table, changed, pram)
        self._steps.append(Step(method, dict(result.parameters), result, measures, files))
        return self

    def undo(self) -> SdcProblem:
        """Remove the last step (its result is discarded). Returns ``self``."""
        if not self._steps:
            raise SdcError("undo: there is no step to undo; expected at least one applied step")
        self._steps.pop()
        return self

    def search(self, **options):
        """:func:`sdckit.search` on the current data and the scenario: the protection with the
        least loss that meets ``target``. Returns the :class:`sdckit.SearchResult`; nothing is
        applied (apply its ``recipe`` with :meth:`apply_recipe`)."""
        from .search import search

        return search(self.data, self.scenario, **options)

    def apply_recipe(self, recipe) -> SdcProblem:
        """Apply every step of a recipe (a dict or a recipe file, such as a search result's
        ``recipe``) to the current data, in order. All or nothing: when a step fails (or the
        computation is cancelled) the steps applied before it are removed again. Returns
        ``self``."""
        before = len(self._steps)
        try:
            for i, step in enumerate(read_recipe(recipe)["steps"]):
                try:
                    self.apply(step["method"], **step.get("parameters", {}))
                except SdcError as exc:
                    raise SdcError(f"recipe: step {i + 1} ({step['method']}): {exc}") from None
        except BaseException:
            del self._steps[before:]
            raise
        return self

    def replace_steps(self, recipe) -> SdcProblem:
        """Replace every step by the steps of ``recipe``, applied to the original (another
        branch of the release); when one fails or the computation is cancelled, the steps
        before stay as they were. Returns ``self``."""
        saved = list(self._steps)
        self._steps.clear()
        try:
            return self.apply_recipe(recipe)
        except BaseException:
            self._steps[:] = saved
            raise

    # -- measures ----------------------------------------------------------------------------
    def _measure(self, table, changed: tuple, pram=None) -> dict:
        from .problem_measures import measure_step

        return measure_step(self, table, changed, pram)

    def summary(self) -> Summary:
        """A before/after table: one row for the original and one per step."""
        from .problem_measures import summary_rows

        columns, rows = summary_rows(self)
        return Summary(
            "Protection steps",
            (("", {"columns": columns, "rows": rows}),),
            headline=f"{len(self._steps)} step(s) applied to {fmt(self._original.n)} records.",
        )

    def __repr__(self) -> str:
        return f"<SdcProblem n={fmt(self._original.n)} steps={len(self._steps)}>"

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def set_row_order(self, order: str = "random", *, seed: int | None = None) -> SdcProblem:
        """The order of the records in the written file: ``"original"`` (default) or
        ``"random"``, a permutation drawn from ``seed`` (a fresh seed when None, kept in the
        recipe so that the recipe writes the same file again). A random order hides what the
        file's order tells (records sorted by region, household or an identifier). Only
        :meth:`write` reorders: :attr:`data`, the measures and the reports keep the original
        order. Returns ``self``."""
        from .._validation import check_seed

        if order not in ("original", "random"):
            raise SdcError(f"order: got {order!r}; expected 'original' or 'random'")
        if order == "original":
            self._row_order = None
            return self
        if seed is None:
            import secrets

            seed = secrets.randbelow(2**31)
        self._row_order = {"seed": check_seed(seed, "seed")}
        return self

    @property
    def row_order(self) -> dict | None:
        """``{"seed": s}`` when the file is written in a random order, else None."""
        return None if self._row_order is None else dict(self._row_order)

    # -- recipes -----------------------------------------------------------------------------
    def to_recipe(self, path=None, *, overwrite: bool = False) -> dict:
        """Every step with its parameters and seeds, and the scenario: a dict, also written to
        ``path`` (``.yaml``/``.yml`` or ``.json``; written atomically) when given. An existing
        file is an error unless ``overwrite=True``. :meth:`from_recipe` replays it with
        identical output.

        A file a step names (a hierarchy table) is recorded with its SHA-256 and size as read
        when the step was applied (``files``); the file written names it relative to the
        recipe's folder, the dict returned as the step was given (relative to the current
        folder)."""
        recipe = {
            "sdckit_recipe": RECIPE_VERSION,
            "scenario": self.scenario.to_dict(),
            "steps": [{"method": s.method, "parameters": _jsonable(s.parameters)} for s in self._steps],
        }
        files = {path: dict(c) for s in self._steps for path, c in s.files.items()}
        if files:
            recipe["files"] = files
        if self._row_order is not None:
            recipe["row_order"] = {"order": "random", **self._row_order}
        if path is not None:
            write_recipe(recipe, path, overwrite=overwrite)
        return recipe

    @classmethod
    def from_recipe(cls, data, recipe, scenario: Scenario | None = None, **options) -> SdcProblem:
        """Replay a recipe (a dict, or a YAML or JSON file written by :meth:`to_recipe`) on
        ``data``; the scenario comes from the recipe unless given."""
        rec = read_recipe(recipe)
        sc = scenario if scenario is not None else _recipe_scenario(rec)
        problem = cls(data, sc, **options)
        for i, step in enumerate(rec["steps"]):
            try:
                problem.apply(step["method"], **step.get("parameters", {}))
            except SdcError as exc:
                raise SdcError(f"recipe: step {i + 1} ({step['method']}): {exc}") from None
        if "row_order" in rec:
            problem.set_row_order(rec["row_order"]["order"], seed=rec["row_order"].get("seed"))
        return problem

    def report(self, path=None, *, overwrite: bool = False, steps: str = "each", **options):
        """The assessment report of this release: the original and, as variants, the data after
        each step (step 1, steps 1-2, ...; ``steps="last"``: after the last step only),
        with their risk and loss side by side. Returns the
        :class:`sdckit.AssessmentResult`; with ``path``, also writes the HTML report
        (atomically; an existing file only with ``overwrite=True``). ``options`` are passed to
        :func:`sdckit.assess`."""
        from ..assessment import assess_variants

        if steps not in ("each", "last"):
            raise SdcError(f"steps: got {steps!r}; expected 'each' or 'last'")
        done = self._steps
        chosen = range(len(done)) if steps == "each" else range(len(done))[-1:]
        variants = [
            (
                f"{i + 1}. {done[i].method}",
                done[i].result.table,
                [x.method for x in done[: i + 1]],
                sorted({v for x in done[: i + 1] for v, c in x.result.n_changed.items() if c}),
                _published_pram([x.result for x in done[: i + 1]]),
            )
            for i in chosen
        ]
        options.setdefault("k", self._k)
        result = assess_variants(self._original, self.scenario, variants, **options)
        if path is not None:
            result.to_html(path, overwrite=overwrite)
        return result

    def write(self, path, *, metadata=None, overwrite: bool = False):
        """Write the current protected data (CSV, Parquet, SPSS or Stata; value and variable
        labels from ``metadata``, as :func:`sdckit.io.read_metadata` returns them), in the
        order :meth:`set_row_order` chose."""
        from ..io import take_rows, write_data

        data = self.scenario.drop_direct_identifiers(self.data)  # a release never holds them
        if self._row_order is not None:
            import numpy as np

            order = np.random.default_rng(self._row_order["seed"]).permutation(self._original.n)
            data = take_rows(data, order)
        return write_data(data, path, metadata=metadata, overwrite=overwrite)


def _recipe_scenario(recipe: dict) -> Scenario:
    """The scenario a recipe records; an unknown role or a wrong value is an error naming it."""
    try:
        return Scenario.from_dict(recipe.get("scenario", {}))
    except SdcError as exc:
        raise SdcError(f"recipe: {exc}") from None


def _published_pram(results) -> dict | None:
    """The published PRAM matrices of the steps' results: ``matrices`` {variable: {from: {to:
    p}}} and ``diagonal`` {variable: {category: keep probability}}; a variable PRAMed within
    strata has the per-stratum form ``{"strata": [columns], "matrices": {stratum: ...}}`` in
    both (each record uses its stratum's matrix) and is named in ``stratified``. None without
    PRAM."""
    matrices: dict = {}
    diagonal: dict = {}
    stratified: set = set()
    for r in results:
        if r.details.get("pram"):
            matrices.update(r.details["pram"])
            diagonal.update(r.details.get("pram_diagonal") or {})
        elif r.details.get("pram_by_stratum"):
            matrices.update(r.details["pram_by_stratum"])
            diagonal.update(r.details.get("pram_diagonal_by_stratum") or {})
            stratified |= set(r.details["pram_by_stratum"])
    if not matrices:
        return None
    return {"matrices": matrices, "diagonal": diagonal, "stratified": sorted(stratified)}


def recipe_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a recipe, written from the registry: one step shape
    per protection method, with its parameters' types, ranges and choices."""
    from .._declare import Param
    from .._roles import ROLES
    from ..registry import methods

    steps = [
        {
            "type": "object",
            "description": f"{decl.name}: {decl.title}",
            "properties": {
                "method": {"const": decl.name},
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.json_schema() for p in decl.params},
                    "additionalProperties": False,
                },
            },
            "required": ["method"],
            "additionalProperties": False,
        }
        for decl in methods()
    ]
    scenario = {r.name: Param(r.name, r.kind, r.meaning, default=None).json_schema() for r in ROLES}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "sdckit recipe",
        "description": "The steps of a release (SdcProblem.to_recipe), replayable with SdcProblem.from_recipe "
        "or sdckit protect --recipe.",
        "type": "object",
        "properties": {
            "sdckit_recipe": {
                "enum": list(SUPPORTED_RECIPE_VERSIONS),
                "description": "the recipe format version; a newer one is refused",
            },
            "name": {"type": "string", "description": "the variant's name in an assessment (sdckit assess --recipe)"},
            "scenario": {"type": "object", "properties": scenario, "additionalProperties": False},
            "steps": {"type": "array", "items": {"oneOf": steps}},
            "files": {
                "type": "object",
                "description": "the files the steps name (a hierarchy table), by the path a step gives (relative "
                "to the recipe's folder): their SHA-256 and size when the recipe was written; a file that "
                "differs is refused",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        "bytes": {"type": "integer", "minimum": 0},
                    },
                    "required": ["sha256"],
                    "additionalProperties": False,
                },
            },
            "row_order": {
                "type": "object",
                "description": "the order of the records in the written file: random, a permutation drawn from seed",
                "properties": {"order": {"enum": ["original", "random"]}, "seed": {"type": "integer", "minimum": 0}},
                "required": ["order"],
                "additionalProperties": False,
            },
        },
        "required": ["steps"],
        "additionalProperties": False,
    }


def _jsonable(value):
    from ..results.protection import jsonable

    return jsonable(value)


def read_recipe(recipe) -> dict:
    """A recipe as a dict, from a dict or a ``.yaml``/``.yml``/``.json`` file; checked, with
    the files it names found (relative to the recipe file's folder; for a dict, to the current
    folder) and checked against the checksums it records."""
    folder = None
    if isinstance(recipe, (str, os.PathLike)):
        folder = Path(os.fspath(recipe)).absolute().parent
        recipe = read_recipe_file(recipe, "recipe")
    if not isinstance(recipe, dict) or not isinstance(recipe.get("steps"), list):
        raise SdcError("recipe: expected a mapping with a list of 'steps' (each a 'method' and its 'parameters')")
    _check_version(recipe.get("sdckit_recipe", RECIPE_VERSION))
    recipe = decode_floats(recipe)
    methods = protection_methods()
    for i, step in enumerate(recipe["steps"]):
        if not isinstance(step, dict) or step.get("method") not in methods:
            got = step.get("method") if isinstance(step, dict) else step
            raise SdcError(
                f"recipe: step {i + 1} has unknown method {got!r}; expected one of {', '.join(sorted(methods))}"
            )
        if not isinstance(step.get("parameters", {}), dict):
            raise SdcError(f"recipe: step {i + 1} parameters must be a mapping")
    _check_row_order(recipe.get("row_order"))
    return check_named_files(recipe, folder, "recipe")


def _check_row_order(row_order) -> None:
    if row_order is None:
        return
    if (
        not isinstance(row_order, dict)
        or row_order.get("order") not in ("original", "random")
        or set(row_order)
        - {
            "order",
            "seed",
        }
    ):
        raise SdcError("recipe: row_order must be a mapping {order: original or random, seed: an integer}")


def _check_version(version) -> None:
    """A recipe states its format version (``sdckit_recipe``); an unknown one is refused
    rather than replayed under rules it may not follow."""
    if isinstance(version, bool) or version not in SUPPORTED_RECIPE_VERSIONS:
        short = version is None or (isinstance(version, (int, float, str)) and len(repr(version)) <= 40)
        shown = repr(version) if short else f"a {type(version).__name__}"
        supported = ", ".join(map(str, SUPPORTED_RECIPE_VERSIONS))
        raise SdcError(
            f"recipe: format version (sdckit_recipe) {shown} is not supported; expected {supported} "
            "(a recipe written by a newer sdckit needs that version)"
        )


def encode_floats(value):
    """A recipe with every infinite or NaN float as ``{"$float": "inf" | "-inf" | "nan"}``,
    which JSON can hold (JSON has no Infinity); :func:`decode_floats` reads it back exactly."""
    if isinstance(value, dict):
        return {k: encode_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_floats(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return {FLOAT_TAG: "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    return value


def decode_floats(value):
    """The inverse of :func:`encode_floats` (a recipe without tags comes back equal)."""
    if isinstance(value, dict):
        if len(value) == 1 and value.get(FLOAT_TAG) in ("inf", "-inf", "nan"):
            return float(value[FLOAT_TAG])
        return {k: decode_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_floats(v) for v in value]
    return value


def read_recipe_file(path, param: str = "recipe"):
    """The content of a YAML (``.yaml``/``.yml``) or JSON file (a recipe or a scenario), read
    with bounded work (size, nesting, YAML aliases; UTF-8)."""
    return read_config_file(path, param)


def check_recipe_path(path, overwrite: bool = False, param: str = "path") -> Path:
    """A recipe can be written to ``path``: a .yaml/.yml (pyyaml installed) or .json file in an
    existing folder, new unless ``overwrite``. The command line checks it before any work."""
    p = Path(os.fspath(path))
    ext = p.suffix.lower()
    if ext in (".yaml", ".yml"):
        try:
            import yaml  # noqa: F401
        except ImportError:
            raise SdcError(f"{param}: writing YAML needs pyyaml (pip install sdckit[yaml]); or use .json") from None
    elif ext != ".json":
        raise SdcError(f"{param}: cannot write a recipe to {p.name}; expected a .yaml, .yml or .json file")
    if not p.parent.is_dir():
        raise SdcError(f"{param}: directory {p.parent} does not exist; expected an existing directory")
    check_new_file(p, overwrite)
    return p


def write_recipe(recipe: dict, path, *, overwrite: bool = False) -> Path:
    """Write a recipe as YAML (``.yaml``/``.yml``) or JSON (``.json``), atomically; an existing
    file only with ``overwrite=True``."""
    from ..io import atomic_write

    p = check_recipe_path(path, overwrite)
    if isinstance(recipe.get("steps"), list):  # a recipe (not a scenario): named files beside it
        recipe = relative_files(recipe, p.absolute().parent)
    if p.suffix.lower() == ".json":
        text = json.dumps(encode_floats(recipe), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        import yaml

        class _Dumper(yaml.SafeDumper):  # no anchors and aliases: a value repeated is written again
            def ignore_aliases(self, data):
                return True

        text = yaml.dump(recipe, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    try:
        return atomic_write(p, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), overwrite=overwrite)
    except FileExistsError:  # appeared while writing
        raise SdcError(f"path: {p} already exists; expected a new file, or overwrite=True to replace it") from None
