"""The install story of a new user: the README's Quick start, ``.ci/run`` and the extras.

* the Quick start has exactly two commands; ``.ci/run`` runs the second one verbatim;
* the second command stops at its first failing step with that step's message: run under bash
  with stand-ins for ``apt-get``, ``pip`` and ``python`` on an otherwise empty ``PATH`` (so no
  Chromium or Java is found), a failing ``apt-get`` (as when another package manager holds its
  lock) must end the command with apt-get's message and exit status, and ``pip`` / ``pytest``
  must not run;
* the extra ``all`` installs every optional feature (every extra but docs, test and dev).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_FEATURES = {"all", "docs", "test", "dev"}


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "the Quick start has a bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_has_two_commands_and_ci_runs_the_second():
    commands = _quick_start_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci


def test_quick_start_steps_are_joined_so_a_failure_stops_them():
    # no step is joined with ';' (a failing step would be ignored and the next one run)
    for command in _quick_start_commands():
        assert ";" not in command, command


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


@pytest.mark.skipif(shutil.which("bash") is None or sys.platform == "win32", reason="needs bash (POSIX shell)")
@pytest.mark.parametrize("apt_fails_at", ["update", "install"])
def test_second_command_stops_at_a_failing_apt_get(tmp_path, apt_fails_at):
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    lock = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt)"
    _stub(
        bin_dir,
        "apt-get",
        f'echo "apt-get $1" >> "{log}"\nif [ "$1" = "{apt_fails_at}" ]; then echo "{lock}" >&2; exit 100; fi\nexit 0',
    )
    _stub(bin_dir, "pip", f'echo "pip $*" >> "{log}"')
    _stub(bin_dir, "python", f'echo "python $*" >> "{log}"')
    bash = shutil.which("bash")
    run = subprocess.run(
        [bash, "-c", _quick_start_commands()[1]],
        cwd=tmp_path,
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 100
    assert lock in run.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert not any(c.startswith(("pip", "python")) for c in calls), calls
    assert calls[-1] == f"apt-get {apt_fails_at}"


@pytest.mark.skipif(shutil.which("bash") is None or sys.platform == "win32", reason="needs bash (POSIX shell)")
def test_second_command_runs_the_suite_when_every_step_succeeds(tmp_path):
    # the same stand-ins, all succeeding: apt-get, then pip, then pytest, in that order
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for name in ("apt-get", "pip", "python"):
        _stub(bin_dir, name, f'echo "{name} $*" >> "{log}"')
    run = subprocess.run(
        [shutil.which("bash"), "-c", _quick_start_commands()[1]],
        cwd=tmp_path,
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    calls = [c.split()[0:2] for c in log.read_text(encoding="utf-8").splitlines()]
    assert calls == [["apt-get", "update"], ["apt-get", "install"], ["pip", "install"], ["python", "-m"]]


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def _expand(requirements: list[str], extras: dict[str, list[str]]) -> set[str]:
    """Distribution names a list of requirements installs, self-references (sdckit[a,b]) expanded."""
    names: set[str] = set()
    for req in requirements:
        own = re.fullmatch(r"sdckit\[([^\]]+)\]", req.strip())
        if own:
            for extra in own.group(1).split(","):
                names |= _expand(extras[extra.strip()], extras)
        else:
            names.add(re.split(r"[<>=!~\[; ]", req.strip(), maxsplit=1)[0].lower())
    return names


def test_extra_all_installs_every_optional_feature():
    extras = _extras()
    everything = _expand(extras["all"], extras)
    for name, requirements in extras.items():
        if name not in NOT_FEATURES:
            missing = _expand(requirements, extras) - everything
            assert not missing, f"sdckit[all] lacks the {name!r} extra's {sorted(missing)}"
    assert {"duckdb", "pyspark", "pandas", "pyarrow", "matplotlib", "pyreadstat"} <= everything


def test_ci_tests_the_declared_minimum_versions():
    """.ci/run, after the main suite, runs .ci/floors: sdckit and its test dependencies at the
    lowest versions pyproject.toml allows, and a fast part of the suite whose modules exist (a
    renamed module would otherwise drop out unseen)."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    main_suite = next(i for i, line in enumerate(run) if line == _quick_start_commands()[1])
    assert ".ci/floors" in run[main_suite + 1 :]
    floors = (ROOT / ".ci" / "floors").read_text(encoding="utf-8")
    assert '--resolution lowest-direct ".[test]"' in floors
    modules = re.findall(r"^\s+(tests/test_\w+\.py)$", floors, re.MULTILINE)
    assert len(modules) >= 8
    assert all((ROOT / m).is_file() for m in modules), [m for m in modules if not (ROOT / m).is_file()]
    assert '-m "not slow and not spark" "${FLOOR_TESTS[@]}"' in floors
