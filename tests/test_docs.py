"""The user documentation (``docs/``, built with mkdocs) covers the public API and builds.

* every public function and class (the callables in ``sdckit.__all__``) has an API page: a
  ``::: sdckit.<name>`` directive in ``docs/api/*.md``, and every directive names an object that
  exists; every public function is also mentioned (as code) in a measures page or in the
  "Coming from sdcMicro" page;
* no page refers the user to documents the user does not have (the internal specification,
  its section numbers, the seed documents);
* ``mkdocs build --strict`` succeeds (skipped, with the reason shown, when mkdocs and its
  plugins are not installed: ``pip install ".[docs]"``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sdckit

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_PAGES = sorted((DOCS / "api").glob("*.md"))
GUIDE_PAGES = sorted((DOCS / "measures").glob("*.md")) + [
    DOCS / "sdcmicro.md",
    DOCS / "protection.md",
    DOCS / "report.md",
    DOCS / "engines.md",
]
DIRECTIVE = re.compile(r"^:::\s+(\S+)\s*$", re.MULTILINE)
#: references to documents users do not have: the internal specification, its section numbers
#: ("spec B.4", "spec K.20") and the seed documents (S000-S004)
FORBIDDEN = {
    "the internal specification": re.compile(r"ALGORITHMS\.md", re.IGNORECASE),
    "a specification section": re.compile(r"\bspec\.? [A-L]\.?\d", re.IGNORECASE),
    "a seed document": re.compile(r"\bS00[0-4]\b"),
}


def _public_callables() -> dict[str, object]:
    return {name: getattr(sdckit, name) for name in sdckit.__all__ if callable(getattr(sdckit, name))}


def _public_functions() -> list[str]:
    return sorted(name for name, obj in _public_callables().items() if inspect.isfunction(obj))


def _directives() -> dict[str, Path]:
    """Identifier of every ``::: identifier`` line of the API pages -> its page."""
    return {ident: page for page in API_PAGES for ident in DIRECTIVE.findall(page.read_text(encoding="utf-8"))}


def _resolve(identifier: str):
    """The object a directive documents: the longest importable module prefix, then attributes."""
    parts = identifier.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(identifier)


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def test_docs_folder_has_the_pages():
    assert API_PAGES, "docs/api/*.md: no API page"
    assert all(p.exists() for p in GUIDE_PAGES), [str(p) for p in GUIDE_PAGES if not p.exists()]
    assert (ROOT / "mkdocs.yml").exists()


def test_every_public_callable_has_an_api_page():
    directives = _directives()
    missing = sorted(name for name in _public_callables() if f"sdckit.{name}" not in directives)
    assert missing == [], f"add a '::: sdckit.<name>' line to a page in docs/api/ for: {missing}"


def test_every_api_directive_names_an_existing_object():
    broken = {}
    for ident, page in _directives().items():
        try:
            _resolve(ident)
        except (ImportError, AttributeError) as exc:
            broken[ident] = f"{page.name}: {exc}"
    assert broken == {}


def test_api_directives_document_the_public_objects():
    """``::: sdckit.<name>`` documents the object ``sdckit.<name>`` is at run time."""
    for ident in _directives():
        name = ident.removeprefix("sdckit.")
        if ident.startswith("sdckit.") and "." not in name:
            assert _resolve(ident) is getattr(sdckit, name), ident


def test_every_public_function_is_described_in_the_user_guide():
    text = "\n".join(p.read_text(encoding="utf-8") for p in GUIDE_PAGES)
    undescribed = [name for name in _public_functions() if not re.search(rf"`(?:sdckit\.)?{re.escape(name)}[`(]", text)]
    assert undescribed == [], f"mention these (as code) in a docs/measures page or docs/sdcmicro.md: {undescribed}"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_page_cites_documents_users_do_not_have(page):
    text = page.read_text(encoding="utf-8")
    found = {what: sorted(set(rx.findall(text))) for what, rx in FORBIDDEN.items() if rx.search(text)}
    assert found == {}, f"{page.relative_to(ROOT)} cites {found}; cite the published paper instead"


def test_forbidden_patterns_catch_what_they_should():
    """The patterns of the previous test match the references it forbids, and not ordinary text."""
    bad = ["see ALGORITHMS.md", "(spec B.4)", "spec K.20", "seed S003", "Spec A.1.1"]
    good = ["the specification of a model", "spec of B", "S0050", "special uniques", "respects A.4"]
    assert all(any(rx.search(t) for rx in FORBIDDEN.values()) for t in bad)
    assert not any(rx.search(t) for rx in FORBIDDEN.values() for t in good)


def test_docstring_conversion_to_markdown():
    """The build extension (docs/_griffe/sdckit_docs.py) turns the reStructuredText bits of the
    numpydoc docstrings into Markdown: math directives and roles, roles, 2-space list items."""
    pytest.importorskip(
        "griffe", reason='the docs build needs griffe (with mkdocstrings-python): pip install ".[docs]"'
    )
    spec = importlib.util.spec_from_file_location("sdckit_docs", DOCS / "_griffe" / "sdckit_docs.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    text = "\n".join(
        [
            "Intro :math:`f_k < k` and :func:`frequencies`, :class:`~sdckit.Other`.",
            "",
            ".. math:: a = b",
            "",
            "* item one",
            "  continued",
            "",
            "  .. math::",
            "",
            "      c = d",
            "",
            "  after the formula",
            "* item two",
        ]
    )
    # written by hand: Markdown needs 4-space list continuation and blank lines around blocks
    expected = "\n".join(
        [
            "Intro \\(f_k < k\\) and [`frequencies`][sdckit.frequencies], `Other`.",
            "",
            "",
            "\\[",
            "    a = b",
            "\\]",
            "",
            "* item one",
            "    continued",
            "",
            "",
            "    \\[",
            "        c = d",
            "    \\]",
            "",
            "    after the formula",
            "",
            "* item two",
        ]
    )
    assert ext._to_markdown(text, {"frequencies"}) == expected


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason='the docs build needs mkdocs: pip install ".[docs]"')
    pytest.importorskip("mkdocstrings", reason='the docs build needs mkdocstrings: pip install ".[docs]"')
    pytest.importorskip("mkdocstrings_handlers.python", reason="the docs build needs mkdocstrings-python")
    pytest.importorskip("pymdownx", reason="the docs build needs pymdown-extensions")
    site = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    # every public object is rendered under its public name, functions with their signature
    html = "\n".join(p.read_text(encoding="utf-8") for p in (site / "api").rglob("index.html"))
    missing = [name for name in _public_callables() if f'id="sdckit.{name}"' not in html]
    assert missing == []
    # measures that take scenario= show it in the rendered signature (added at run time by a decorator)
    for name in ("frequencies", "k_anonymity", "individual_risk"):
        assert "scenario" in inspect.signature(getattr(sdckit, name)).parameters
        section = html[html.index(f'id="sdckit.{name}"') :]
        assert re.search(r"scenario\s*=\s*None", re.sub(r"<[^>]+>", "", section[:20000])), name
