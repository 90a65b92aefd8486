"""The files of a release besides its data: reading a recipe or a scenario (YAML or JSON) with
bounded work, and the files a recipe names (a hierarchy table), found beside the recipe and
checked against the checksums the recipe records.

Limits, all applied before the content is built: a file of at most :data:`MAX_FILE_BYTES`,
nested at most :data:`MAX_NESTING` levels, holding at most :data:`MAX_VALUES` values once the
YAML aliases are expanded (a "billion laughs" of nested aliases is refused from its size, not
built), UTF-8 text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np

from .._errors import SdcError, warn
from .._validation import read_text_file

__all__ = [
    "FILE_PARAMETERS",
    "MAX_FILE_BYTES",
    "MAX_NESTING",
    "MAX_VALUES",
    "check_named_files",
    "file_checksum",
    "named_files",
    "read_config_file",
    "relative_files",
]

#: the largest recipe or scenario file read (a recipe with inline hierarchies of 10^4
#: categories is well below it)
MAX_FILE_BYTES = 16 * 2**20
#: the deepest nesting of mappings and lists (a recipe needs 6: steps, a step, its parameters,
#: a mapping of mappings, a hierarchy's rows and a row)
MAX_NESTING = 64
#: the most values (mappings, lists, numbers, texts) a file may hold, YAML aliases expanded
MAX_VALUES = 1_000_000
#: method -> the parameters that may name a file
FILE_PARAMETERS = {"global_recode": ("hierarchy",)}


# ----------------------------------------------------------------------------------------------
# reading a recipe or a scenario
# ----------------------------------------------------------------------------------------------
def read_config_file(path, param: str = "recipe") -> dict:
    """The content of a YAML (``.yaml``/``.yml``) or JSON file (a recipe or a scenario): a
    mapping, read with bounded work (see the module's limits)."""
    p = Path(os.fspath(path))
    if not p.is_file():
        raise SdcError(f"{param}: file {p} does not exist; expected a YAML or JSON file")
    text = read_text_file(p, param, max_bytes=MAX_FILE_BYTES)
    content = _load_yaml(text, p, param) if p.suffix.lower() in (".yaml", ".yml") else _load_json(text, p, param)
    if not isinstance(content, dict):
        raise SdcError(f"{param}: {p.name} does not hold a mapping; expected names and values")
    return content


def _too_deep(p: Path, param: str) -> SdcError:
    return SdcError(
        f"{param}: {p.name} is nested more than {MAX_NESTING} levels deep; expected a recipe or scenario "
        "(a mapping of steps or roles, a few levels deep)"
    )


def _too_many(p: Path, param: str, aliases: bool) -> SdcError:
    how = " once its aliases are expanded" if aliases else ""
    return SdcError(
        f"{param}: {p.name} holds more than {MAX_VALUES:,} values{how}; expected a recipe or scenario "
        f"of at most {MAX_VALUES:,} values (YAML aliases that repeat others are counted each time)"
    )


def _load_json(text: str, p: Path, param: str):
    depth, values = _json_shape(text)
    if depth > MAX_NESTING:
        raise _too_deep(p, param)
    if values > MAX_VALUES:
        raise _too_many(p, param, aliases=False)
    try:
        content = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SdcError(f"{param}: {p.name} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:  # not reached after the depth check; kept as a message, not a traceback
        raise _too_deep(p, param) from None
    return content


#: a JSON string (its brackets are not nesting)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _json_shape(text: str) -> tuple[int, int]:
    """The deepest nesting of ``[`` and ``{`` in a JSON text and about how many values it holds
    (the commas, colons and brackets that separate or open them), strings left out (linear)."""
    raw = np.frombuffer(_JSON_STRING.sub('""', text).encode("utf-8"), dtype=np.uint8)
    if raw.size == 0:
        return 0, 0
    opens = (raw == ord("[")) | (raw == ord("{"))
    step = opens.astype(np.int64) - ((raw == ord("]")) | (raw == ord("}")))
    values = int(opens.sum() + ((raw == ord(",")) | (raw == ord(":"))).sum()) + 1
    return int(np.cumsum(step).max()), values


def _load_yaml(text: str, p: Path, param: str):
    try:
        import yaml
    except ImportError:
        raise SdcError(
            f"{param}: reading {p.name} needs the optional package pyyaml (pip install sdckit[yaml]); "
            "or give it as JSON"
        ) from None
    loader = _bounded_loader(yaml)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node, p, param)
        return loader.construct_document(node)
    except _Nesting:
        raise _too_deep(p, param) from None
    except yaml.YAMLError as exc:
        raise SdcError(f"{param}: {p.name} is not valid YAML ({str(exc).splitlines()[0]})") from None
    finally:
        loader.dispose()


class _Nesting(Exception):
    """The YAML text nests deeper than MAX_NESTING (raised while composing, before recursing)."""


_LOADER = None


def _bounded_loader(yaml):
    """PyYAML's SafeLoader that stops composing beyond MAX_NESTING levels (its composer is
    recursive: a deeper text would end in a RecursionError)."""
    global _LOADER
    if _LOADER is None:

        class BoundedLoader(yaml.SafeLoader):
            _depth = 0

            def compose_node(self, parent, index):
                self._depth += 1
                try:
                    if self._depth > MAX_NESTING:
                        raise _Nesting()
                    return super().compose_node(parent, index)
                finally:
                    self._depth -= 1

        _LOADER = BoundedLoader
    return _LOADER


def _children(node) -> list:
    value = node.value
    if isinstance(value, list):
        return [x for pair in value for x in pair] if value and isinstance(value[0], tuple) else list(value)
    return []


def _check_graph(root, p: Path, param: str) -> None:
    """The composed YAML graph, walked once (aliases are shared nodes): the number of values and
    the depth it holds once every alias is expanded, and no alias inside its own anchor."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    aliased = False
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in kids)
            depth[key] = 1 + max((depth[id(c)] for c in kids), default=0)
            if size[key] > MAX_VALUES:
                raise _too_many(p, param, aliased)
            if depth[key] > MAX_NESTING:
                raise _too_deep(p, param)
            continue
        if key in size:
            aliased = True
            continue
        if key in open_nodes:
            raise SdcError(f"{param}: {p.name} holds a YAML alias inside its own anchor; expected no recursive alias")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node))


# ----------------------------------------------------------------------------------------------
# the files a recipe names
# ----------------------------------------------------------------------------------------------
def file_checksum(path) -> dict:
    """``{"sha256": hex digest, "bytes": size}`` of a file, read in blocks."""
    digest = hashlib.sha256()
    n = 0
    with open(os.fspath(path), "rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            digest.update(block)
            n += len(block)
    return {"sha256": digest.hexdigest(), "bytes": n}


def _file_values(method: str, parameters: dict):
    """``(parameter, path text)`` of every parameter of a step that names a file."""
    for name in FILE_PARAMETERS.get(method, ()):
        value = parameters.get(name)
        if isinstance(value, (str, os.PathLike)):
            yield name, os.fspath(value)


def named_files(method: str, parameters: dict) -> dict:
    """``{path: checksum}`` of the files a step's parameters name (as given; a file that does
    not exist is left to the method's own error)."""
    return {path: file_checksum(path) for _, path in _file_values(method, parameters) if os.path.isfile(path)}


def recipe_file_paths(path) -> list[str]:
    """The files a recipe file names, each as it may be read: beside the recipe and, for a
    relative path, also from the current folder (where an earlier sdckit read it). A recipe
    that cannot be read gives none (its own reading reports why)."""
    try:
        recipe = read_config_file(path)
        steps = list(recipe.get("steps") or [])
        folder = Path(os.fspath(path)).parent
        named = [p for step in steps for _, p in _file_values(step["method"], dict(step.get("parameters") or {}))]
    except (SdcError, OSError, TypeError, KeyError, AttributeError):
        return []
    return [str(c) for p in named for c in ([Path(p)] if os.path.isabs(p) else [folder / p, Path(p)])]


def relative_files(recipe: dict, folder: Path) -> dict:
    """The recipe as written into ``folder``: every named file given by a relative path named
    relative to that folder (an absolute path stays absolute; so does a file on another
    drive), its ``files`` checksums under the new paths, a checksum computed now for a file
    the recipe does not record yet."""
    files = dict(recipe.get("files") or {})
    out_files: dict = {}
    steps = []
    for step in recipe["steps"]:
        params = dict(step.get("parameters") or {})
        for name, path in _file_values(step["method"], params):
            absolute = os.path.abspath(path)
            shown = absolute
            if not os.path.isabs(path):
                try:
                    shown = Path(os.path.relpath(absolute, folder.absolute())).as_posix()
                except ValueError:  # another drive: no relative path
                    pass
            params[name] = shown
            checksum = files.get(path) or (file_checksum(absolute) if os.path.isfile(absolute) else None)
            if checksum is not None:
                out_files[shown] = checksum
        steps.append({**step, "parameters": params})
    out = {k: v for k, v in recipe.items() if k != "files"}
    out["steps"] = steps
    if out_files:
        out["files"] = out_files
    return out


def check_named_files(recipe: dict, folder: Path | None, source: str) -> dict:
    """The recipe with every file it names found and checked: a relative path is resolved
    against ``folder`` (the recipe file's folder; None for a recipe given as a dict: the
    current folder), and a file whose SHA-256 differs from the one the recipe records is an
    error naming it. A recipe file without a checksum for a file (written by an earlier
    sdckit) replays with a warning; when such a file is not beside the recipe, it is read from
    the current folder, as earlier sdckit versions did, with a warning saying so. A dict
    without checksums (a search's recipe) replays as it is."""
    files = recipe.get("files") or {}
    _check_files_entry(files, source)
    steps = []
    for i, step in enumerate(recipe["steps"]):
        params = dict(step.get("parameters") or {})
        for name, path in _file_values(step["method"], params):
            where = f"{source}: step {i + 1} ({step['method']}): {name}"
            params[name] = _found(path, folder, files.get(path), where)
        steps.append({**step, "parameters": params})
    return {**recipe, "steps": steps}


def _check_files_entry(files, source: str) -> None:
    ok = isinstance(files, dict) and all(
        isinstance(v, dict)
        and isinstance(v.get("sha256"), str)
        and re.fullmatch(r"[0-9a-f]{64}", v["sha256"])
        and set(v) <= {"sha256", "bytes"}
        for v in files.values()
    )
    if not ok:
        raise SdcError(
            f"{source}: files must be a mapping path -> {{sha256: 64 hexadecimal digits, bytes: the size}}; "
            "expected the checksums a written recipe records"
        )


def _found(path: str, folder: Path | None, recorded: dict | None, where: str) -> str:
    """The path of one named file, found and checked against ``recorded``."""
    p = Path(path)
    if p.is_absolute() or folder is None:
        candidate = p
    else:
        candidate = folder / p
        if recorded is None and not candidate.is_file() and p.is_file():
            warn(
                f"{where}: file {path} is not beside the recipe (in {folder}); read from the current folder, "
                "as earlier sdckit versions did; write the recipe again to record where it is"
            )
            candidate = p
    if not candidate.is_file():
        place = "" if candidate.is_absolute() else f" in {Path.cwd() if folder is None else folder}"
        raise SdcError(
            f"{where}: file {path} does not exist{place}; expected the file the recipe was written with "
            "(a relative path is read from the recipe's folder)"
        )
    if recorded is None:
        if folder is not None:  # a recipe file of an earlier sdckit (a dict, such as a search's recipe, has none)
            warn(
                f"{where}: the recipe records no checksum of file {path} (written by an earlier sdckit); "
                "replayed without checking that the file is the one it was written with"
            )
        return os.fspath(candidate)
    now = file_checksum(candidate)
    if now["sha256"] != recorded["sha256"]:
        size = (
            f"{recorded['bytes']:,} bytes then, {now['bytes']:,} now"
            if "bytes" in recorded and recorded["bytes"] != now["bytes"]
            else f"the same size, {now['bytes']:,} bytes, other content"
            if "bytes" in recorded
            else f"{now['bytes']:,} bytes now"
        )
        raise SdcError(
            f"{where}: file {path} has changed since the recipe was written (SHA-256 {now['sha256'][:12]}... "
            f"instead of {recorded['sha256'][:12]}...; {size}); expected the file the recipe was written with "
            "(restore it, or apply the steps again and write a new recipe)"
        )
    return os.fspath(candidate)
