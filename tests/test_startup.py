"""Start-up stays light: ``import sdckit`` imports none of the measures, methods and heavy
libraries, ``sdckit --version`` none of the command modules, and every public name still
resolves, loaded on first use (``sdckit._lazy``).

These tests look at which modules a new process has loaded, never at a time
(``benchmarks/startup.py`` measures the times).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import sdckit
from sdckit._lazy import lazy_names
from sdckit.cli import COMMANDS, command_modules

#: libraries ``import sdckit`` must not import (each costs a tenth of a second or more)
HEAVY = ("numpy", "polars", "narwhals", "pandas", "pyarrow", "scipy", "duckdb", "pyspark", "numba", "matplotlib")
HEAVY += ("shiny", "yaml", "tqdm")
#: the sdckit modules ``import sdckit`` loads: the namespace, its loader, the errors and the
#: version, no measure and no package of measures
LIGHT = {"sdckit", "sdckit._lazy", "sdckit._errors", "sdckit._version"}
#: the packages whose names are lazy: each lists them under ``if TYPE_CHECKING:``
LAZY_PACKAGES = ("sdckit", "sdckit.risk", "sdckit.protect", "sdckit.utility", "sdckit.workflow")


def _run(code: str):
    """What ``code`` prints last (JSON) in a new interpreter, which imports sdckit from where
    this one does."""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _loaded_after(code: str) -> list[str]:
    return _run(f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")


def _heavy(modules: list[str]) -> list[str]:
    return sorted({m for m in modules if m.split(".")[0] in HEAVY})


def test_import_sdckit_loads_no_heavy_module_and_no_measure():
    loaded = _loaded_after("import sdckit")
    assert _heavy(loaded) == []
    assert sorted(m for m in loaded if m.split(".")[0] == "sdckit" and m not in LIGHT) == []


def test_version_loads_no_command_module_and_help_no_data_library():
    """``sdckit --version`` imports no command module and no heavy library; ``--help`` imports
    every command module, to list them, and NumPy (the methods' declarations, which the step
    commands are made from), but no data library: those wait for a command to run."""
    code = "from sdckit.cli import main\ntry:\n    main({!r})\nexcept SystemExit:\n    pass"
    loaded = _loaded_after(code.format(["--version"]))
    assert _heavy(loaded) == []
    assert [m for m in loaded if m.startswith("sdckit.commands")] == []
    loaded = _loaded_after(code.format(["--help"]))
    assert sorted(set(_heavy(loaded)) - {m for m in loaded if m.split(".")[0] == "numpy"}) == []
    assert sorted(m.rpartition(".")[2] for m in loaded if m.startswith("sdckit.commands.")) == sorted(COMMANDS)


def test_a_command_imports_only_its_module():
    loaded = _loaded_after(
        "from sdckit.cli import main\ntry:\n    main(['freq', '--help'])\nexcept SystemExit:\n    pass"
    )
    assert [m for m in loaded if m.startswith("sdckit.commands.")] == ["sdckit.commands.freq"]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--version"], []),
        (["--vers"], []),  # argparse takes a prefix of an option
        (["freq", "data.csv", "--keys", "a"], ["freq"]),
        (["freq", "--version"], ["freq"]),
        ([], COMMANDS),
        (["--help"], COMMANDS),
        (["-h", "freq"], COMMANDS),
        (["--"], COMMANDS),
        (["recode", "data.csv"], COMMANDS),  # a command the protect module adds
        (["bogus"], COMMANDS),
    ],
)
def test_command_modules_of_a_command_line(argv, expected):
    assert command_modules(argv) == list(expected)


def test_every_public_name_resolves_in_a_new_process():
    """In a process that has imported nothing else: every name of each package's ``__all__``
    resolves, and is an attribute of ``dir()``; ``from sdckit import *`` gives every one."""
    code = (
        "import importlib, json, sdckit\n"
        "bad = []\n"
        f"for pkg in {LAZY_PACKAGES!r}:\n"
        "    m = importlib.import_module(pkg)\n"
        "    bad += [f'{pkg}.{n}' for n in m.__all__ if n not in dir(m) or getattr(m, n, None) is None]\n"
        "space = {}\n"
        "exec('from sdckit import *', space)\n"
        "bad += [f'*{n}' for n in sdckit.__all__ if n not in space]\n"
        "print(json.dumps(bad))"
    )
    assert _run(code) == []


def test_a_lazy_name_is_what_its_import_names():
    """Each name a package lists under ``if TYPE_CHECKING:`` is in its ``__all__`` (one list of
    names, read by the loader) and is the object that import names; a star import lends the
    module's ``__all__``."""
    for pkg in LAZY_PACKAGES:
        module = importlib.import_module(pkg)
        names, stars = lazy_names(module.__file__)
        assert sorted(set(names) - set(module.__all__)) == [], pkg
        for name, (source, attr) in names.items():
            assert getattr(module, name) is getattr(importlib.import_module(source, pkg), attr), f"{pkg}.{name}"
        for star in stars:
            starred = importlib.import_module(star, pkg)
            assert all(getattr(module, n) is getattr(starred, n) for n in starred.__all__), (pkg, star)


def test_a_lazy_name_stays_when_its_submodule_is_imported():
    """``sdckit.risk.suda`` is the function, also after ``import sdckit.risk.suda`` (the module
    of the same name), as after an eager ``from .suda import suda``."""
    pairs = [
        (pkg, name)
        for pkg in LAZY_PACKAGES
        for name, (source, _) in lazy_names(importlib.import_module(pkg).__file__)[0].items()
        if source == f".{name}"
    ]
    assert ("sdckit.risk", "suda") in pairs
    code = (
        "import importlib, json, types\n"
        f"pairs = {pairs!r}\n"
        "for pkg, name in pairs:\n"
        "    importlib.import_module(f'{pkg}.{name}')\n"
        "print(json.dumps([f'{p}.{n}' for p, n in pairs if isinstance(getattr(importlib.import_module(p), n), "
        "types.ModuleType)]))"
    )
    assert _run(code) == []


def test_a_submodule_is_an_attribute_of_the_package():
    """As when every subpackage was imported eagerly: ``sdckit.io``, ``sdckit.registry``."""
    assert sdckit.io.read_data is sdckit.read_data
    assert sdckit.registry.methods()
    with pytest.raises(AttributeError):
        sdckit.no_such_name  # noqa: B018
