"""Write the docs pages derived from the registry of methods and measures.

* ``docs/parameters.md``: the parameter tables of every protection method and measure;
* ``docs/recipe-schema.json``: the JSON Schema of a recipe.

Run after changing a declaration: ``PYTHONPATH=src python tools/registry_docs.py``. A test
(tests/test_registry.py) checks that the committed pages equal the generated ones.
"""

from __future__ import annotations

import json
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def pages() -> dict[Path, str]:
    """Path -> content of every generated page."""
    from sdckit.registry import parameter_tables
    from sdckit.workflow.problem import recipe_schema

    return {
        DOCS / "parameters.md": parameter_tables(),
        DOCS / "recipe-schema.json": json.dumps(recipe_schema(), indent=2, ensure_ascii=False) + "\n",
    }


def main() -> None:
    for path, text in pages().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
