"""Write the docs pages derived from the registry of methods and measures.

* ``docs/parameters.md``: the parameter tables of every protection method and measure;
* ``docs/recipe-schema.json``: the JSON Schema of a recipe;
* ``src/sdckit/engines/_declared.py``: what the declarations say about the engines (the
  engines sit below the registry and cannot read it);
* ``src/sdckit/assessment/measures_table.json``: the assessment's table of the measures, from the
  measures' ``assessed=`` and ``excluded=`` (read without importing the measures).

Run after changing a declaration: ``PYTHONPATH=src python tools/registry_docs.py``. A test
(tests/test_registry.py) checks that the committed pages equal the generated ones.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ENGINE_FACTS = ROOT / "src" / "sdckit" / "engines" / "_declared.py"


def pages() -> dict[Path, str]:
    """Path -> content of every generated page."""
    from sdckit.assessment.table import TABLE_FILE, generated
    from sdckit.registry import parameter_tables
    from sdckit.workflow.problem import recipe_schema

    return {
        DOCS / "parameters.md": parameter_tables(),
        DOCS / "recipe-schema.json": json.dumps(recipe_schema(), indent=2, ensure_ascii=False) + "\n",
        ENGINE_FACTS: engine_facts(),
        TABLE_FILE: json.dumps(generated(), indent=2, ensure_ascii=False) + "\n",
    }


def engine_facts() -> str:
    """The module ``sdckit.engines._declared``: the names the declarations mark ``out_of_core``."""
    from sdckit.registry import out_of_core

    names = "".join(f'    "{name}",\n' for name in out_of_core())
    return (
        '"""What the declarations say about the engines.\n\n'
        "Written by tools/registry_docs.py from ``sdckit.registry.out_of_core()`` (the declarations'\n"
        "``out_of_core=True``); do not edit by hand. The engines sit below the registry, so they read\n"
        'this copy; a test checks that it is the generated one.\n"""\n\n'
        "#: the measures and methods an engine without the records in memory runs\n"
        f"OUT_OF_CORE_MEASURES = (\n{names})\n"
    )


def main() -> None:
    for path, text in pages().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
