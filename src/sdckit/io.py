"""Read microdata files into Polars and write per-record results.

Formats are chosen by the file extension (case-insensitive):

============================  ==============================================================
extension                     reader
============================  ==============================================================
``.csv``, ``.txt``, ``.tsv``  Polars CSV reader (separator detected, see :func:`read_data`)
``.parquet``, ``.pq``         Polars
``.sav``, ``.zsav``           SPSS, via pyreadstat (``pip install sdckit[stats]``)
``.dta``                      Stata, via pyreadstat
``.sas7bdat``, ``.xpt``       SAS data set / SAS transport file, via pyreadstat
============================  ==============================================================

pyreadstat is imported only when an SPSS, Stata or SAS file is read or written. Every
failure (file not found, unsupported extension, unreadable or corrupt file, missing optional
dependency) raises :class:`~sdckit.SdcError` naming the path and what was expected.

:func:`write_data` writes a (protected) file to CSV, TSV, Parquet, SPSS or Stata, keeping
the value and variable labels of the input (from :func:`read_metadata`);
:func:`write_records` writes per-record results to CSV or Parquet.
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import os
import time
from pathlib import Path
from typing import Any

import polars as pl
import polars.selectors as cs

from ._errors import MissingColumnError, SdcError
from ._validation import BYTE_ORDER_MARKS, check_bool, check_new_file, missing_columns_message
from .engines._polars_frame import as_table

__all__ = ["read_data", "read_metadata", "write_data", "write_records"]

_TEXT = {".csv": "CSV", ".txt": "CSV", ".tsv": "TSV"}
_PARQUET = {".parquet": "Parquet", ".pq": "Parquet"}
_STAT = {
    ".sav": "SPSS",
    ".zsav": "SPSS",
    ".dta": "Stata",
    ".sas7bdat": "SAS",
    ".xpt": "SAS transport (XPORT)",
}
_KIND = {**_TEXT, **_PARQUET, **_STAT}
_SUPPORTED = ", ".join(_KIND)
#: the extensions :func:`write_records` writes, with their field separator (None: Parquet)
RECORD_FORMATS = {".csv": ",", ".tsv": "\t", ".parquet": None, ".pq": None}
_IMPORTED = time.time()


# ------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------
def read_data(
    path,
    *,
    columns=None,
    string_columns=None,
    value_labels: bool = True,
    na_values=("", "NA"),
    sep: str | None = None,
    encoding: str | None = None,
    lazy: bool = False,
):
    """Read a microdata file into a Polars DataFrame.

    Parameters
    ----------
    path : str or os.PathLike
        File to read. The format is taken from the extension (case-insensitive): ``.csv``,
        ``.txt``, ``.tsv``, ``.parquet``, ``.pq``, ``.sav``, ``.zsav`` (SPSS), ``.dta``
        (Stata), ``.sas7bdat`` and ``.xpt`` (SAS). SPSS, Stata and SAS need the optional
        dependency pyreadstat (``pip install sdckit[stats]``).
    columns : list of str, optional
        Read only these columns, returned in this order. Default: every column.
    string_columns : str or list of str, optional
        Columns to keep as text. In CSV files they are read as ``String``. Without it, a CSV
        column of whole numbers is read as text anyway when any of its values has a leading
        zero (``"01"``), so that labels such as ``"01"`` and ``"1"`` stay distinct instead of
        both becoming the number 1. In the other formats a numeric column listed here is converted to its text form (``1.0``
        becomes ``"1"``); text and labelled (``Enum``) columns are left as they are.
    value_labels : bool, default True
        SPSS / Stata / SAS only. If True a variable with value labels becomes a Polars
        ``Enum`` whose categories are the labels in code order; values present in the data
        without a label become categories named by their code (``"7"``), placed by code, so
        the category order of ordinal variables is preserved. Codes that share a label stay
        apart, one category each named by the label and the code (``"yes (code 1)"``,
        ``"yes (code 2)"``), so that :func:`write_data` writes every cell with its own code.
        If False the raw codes are returned.
    na_values : sequence of str, default ("", "NA")
        Strings read as missing (null): in every column of a CSV file, and in the text
        variables of SPSS / Stata / SAS files (whose formats have no null text value).
        Parquet files carry real nulls and are returned as stored.
    sep : str, optional
        CSV field separator. Default: ``"\\t"`` for ``.tsv``; for ``.csv`` and ``.txt``
        ``";"`` if the header line contains ``";"`` and no ``","``, a tab if it contains a
        tab and neither ``","`` nor ``";"``, otherwise ``","``.
    encoding : str, optional
        Text encoding. CSV default: UTF-8 (a UTF-8 byte-order mark is ignored), or UTF-16 /
        UTF-32 when the file starts with their byte-order mark. A file that is not UTF-8 is an
        error naming it (the first and last MiB are checked before reading; the rest as Polars
        reads it), never garbage: give its encoding (``"latin-1"``, ``"cp1252"``, ...), which
        Python then decodes. A UTF-16 / UTF-32 mark with ``encoding="utf-8"`` is an error.
        SPSS / Stata / SAS: passed to pyreadstat (default: the encoding recorded in the file).
    lazy : bool, default False
        Return a Polars ``LazyFrame`` that scans the file: a measure then reads only the
        columns it uses (CSV and Parquet; the other formats are read whole). A CSV file in
        another encoding is converted to UTF-8 in a temporary file, piece by piece, never held
        in memory whole.

    Returns
    -------
    polars.DataFrame (polars.LazyFrame with ``lazy=True``)
        User-defined missing values (SPSS missing values and ranges, Stata ``.a``-``.z``) and
        system missing values are null.

    Raises
    ------
    SdcError
        The file does not exist, the extension is not supported, the file cannot be read as
        the format its extension names, or pyreadstat is missing.
    MissingColumnError
        A name in ``columns`` or ``string_columns`` is not in the file.

    See Also
    --------
    read_metadata : variable and value labels of a file.

    Examples
    --------
    >>> df = sdckit.read_data("survey.sav")                     # doctest: +SKIP
    >>> sdckit.frequencies(df, keys=["region", "sex", "age"])  # doctest: +SKIP
    """
    p, ext = _check_path(path)
    columns = _names(columns, "columns")
    string_columns = _names(string_columns, "string_columns") or []
    na = [str(v) for v in (na_values or ())]
    if isinstance(na_values, str):
        na = [na_values]
    if ext in _TEXT:
        return _read_text(p, ext, columns, string_columns, na, sep, encoding, lazy)
    if ext in _PARQUET:
        if lazy and not string_columns:
            return _scan_parquet(p, columns)
        df = _read_parquet(p, columns)
    else:
        df = _read_stat(p, ext, columns, na, value_labels, encoding)
    if string_columns:
        _require(df.columns, string_columns, "string_columns", p)
        df = df.with_columns([_as_text(df.get_column(c)) for c in string_columns])
    return df.lazy() if lazy else df


def read_metadata(path, *, encoding: str | None = None) -> dict[str, Any]:
    """Variable labels, value labels and missing-value definitions of a data file.

    Parameters
    ----------
    path : str or os.PathLike
        A file :func:`read_data` accepts.
    encoding : str, optional
        As in :func:`read_data`.

    Returns
    -------
    dict
        ``format`` (``"CSV"``, ``"Parquet"``, ``"SPSS"``, ...), ``path``, ``columns`` (names
        in file order), ``n_rows`` (None when unknown without reading the data, e.g. CSV),
        ``file_label`` (or None), ``variable_labels`` (column -> label, labelled columns
        only), ``value_labels`` (column -> {code: label}, codes in ascending order, integral
        codes as ``int``), ``measure`` (SPSS: column -> ``"nominal"`` / ``"ordinal"`` /
        ``"scale"``), ``user_missing`` (SPSS: column -> list of missing values, a range as
        ``{"lo": .., "hi": ..}``; Stata files declare no missing values per variable, their
        ``.a``-``.z`` codes are read as null).
        For CSV and Parquet the label and missing dictionaries are empty.

    Raises
    ------
    SdcError
        As :func:`read_data`.
    """
    p, ext = _check_path(path)
    out: dict[str, Any] = {
        "format": _KIND[ext],
        "path": str(p),
        "columns": [],
        "n_rows": None,
        "file_label": None,
        "variable_labels": {},
        "value_labels": {},
        "measure": {},
        "user_missing": {},
    }
    if ext in _TEXT:
        sep, text = _text_source(p, ext, None, encoding)
        out["separator"] = sep
        out["columns"] = _guard(p, _KIND[ext], lambda: pl.read_csv(text, separator=sep, n_rows=0).columns)
        return out
    if ext in _PARQUET:
        out["columns"] = _guard(p, "Parquet", lambda: list(pl.read_parquet_schema(p)))
        out["n_rows"] = _guard(p, "Parquet", lambda: pl.scan_parquet(p).select(pl.len()).collect().item())
        return out
    _, meta = _stat_call(p, ext, metadataonly=True, user_missing=True, encoding=encoding)
    out["columns"] = list(meta.column_names)
    n = getattr(meta, "number_rows", None)
    out["n_rows"] = int(n) if isinstance(n, int) and n >= 0 else None
    out["file_label"] = getattr(meta, "file_label", None) or None
    out["variable_labels"] = {c: lab for c, lab in (getattr(meta, "column_names_to_labels", None) or {}).items() if lab}
    out["value_labels"] = {
        c: {_plain(k): v for k, v in sorted(labs.items(), key=lambda kv: _sort_key(kv[0]))}
        for c, labs in (getattr(meta, "variable_value_labels", None) or {}).items()
    }
    if ext in (".sav", ".zsav"):
        out["measure"] = {
            c: m for c, m in (getattr(meta, "variable_measure", None) or {}).items() if m and m != "unknown"
        }
        um: dict[str, list] = {}
        for c, ranges in (getattr(meta, "missing_ranges", None) or {}).items():
            vals = []
            for r in ranges:
                lo, hi = r.get("lo"), r.get("hi")
                vals.append(_plain(lo) if lo == hi else {"lo": _plain(lo), "hi": _plain(hi)})
            um[c] = vals
        out["user_missing"] = um
    return out


def write_records(data, path, *, overwrite: bool = False) -> Path:
    """Write per-record output (for example ``result.to_frame()``) to CSV or Parquet.

    Parameters
    ----------
    data : dict of equal-length columns, polars.DataFrame, or any table ``sdckit`` accepts
    path : str or os.PathLike
        Destination; ``.csv`` (comma separated), ``.tsv`` (tab separated), ``.parquet`` or
        ``.pq``. The directory must exist. The file is written atomically: to a temporary
        file beside it, then renamed, so an interrupted write leaves no half file (and an
        existing file is replaced only by a complete one).
    overwrite : bool, default False
        Replace an existing file; without it an existing file is an error and nothing is
        written.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    SdcError
        Unsupported extension, missing directory, an existing file without
        ``overwrite=True``, or a column that cannot be written.

    Notes
    -----
    Record-level output is as confidential as the microdata it was computed from.
    """
    p = Path(os.fspath(path))
    check_new_file(p, overwrite)
    ext = p.suffix.lower()
    if ext not in RECORD_FORMATS:
        raise SdcError(
            f"path: cannot write {p}: unsupported extension {ext or '(none)'!r}; expected .csv, .tsv, .parquet or .pq"
        )
    if not p.parent.is_dir():
        raise SdcError(f"path: cannot write {p}: directory {p.parent} does not exist; expected an existing directory")
    frame = _frame(data, "records")
    try:
        if RECORD_FORMATS[ext] is None:
            atomic_write(p, frame.write_parquet, overwrite=overwrite)
        else:
            atomic_write(p, lambda tmp: frame.write_csv(tmp, separator=RECORD_FORMATS[ext]), overwrite=overwrite)
    except SdcError:
        raise
    except FileExistsError:
        raise SdcError(f"path: {p} already exists; expected a new file, or overwrite=True to replace it") from None
    except Exception as exc:
        raise SdcError(
            f"path: could not write {p} ({_short(exc)}); expected a writable "
            f"{'Parquet' if RECORD_FORMATS[ext] is None else 'CSV'} destination"
        ) from None
    return p


def take_rows(data, order) -> pl.DataFrame:
    """The rows of ``data`` (any table sdckit accepts) in the order of the row positions
    ``order``, as a polars frame (a written file's random row order)."""
    frame = _frame(data, "data")
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    return frame[list(map(int, order))]


def write_data(data, path, *, metadata=None, overwrite: bool = False, sep: str | None = None, na: str = "") -> Path:
    """Write a (protected) data file: CSV, TSV, Parquet, SPSS or Stata, labels kept.

    The rows and the column order of ``data`` are written unchanged; missing values (for
    example the cells a local suppression removed) are written as missing. Given the
    ``metadata`` of the input file (:func:`read_metadata`), SPSS and Stata output keeps its
    value labels, variable labels, SPSS measure levels and user-missing definitions and its
    file label, so that ``read_data`` of the written file gives the frame back.

    Parameters
    ----------
    data : polars.DataFrame, pandas.DataFrame, or any table ``sdckit`` accepts
        The file to write (a pandas index is not written).
    path : str or os.PathLike
        Destination; the format is taken from the extension (case-insensitive): ``.csv``
        (comma separated), ``.tsv`` (tab separated), ``.parquet`` or ``.pq``, ``.sav`` or
        ``.zsav`` (SPSS, ``.zsav`` compressed) and ``.dta`` (Stata). SPSS and Stata need the
        optional dependency pyreadstat (``pip install sdckit[stats]``). The directory must
        exist.
    metadata : dict, optional
        The dictionary :func:`read_metadata` returned for the input file. Used for SPSS and
        Stata output (``value_labels``, ``variable_labels``, ``measure``, ``user_missing``,
        ``file_label``); entries for columns not in ``data`` are ignored. CSV and Parquet
        files have no place for labels and ignore it.
    overwrite : bool, default False
        Replace an existing file. Without it an existing ``path`` is an error and nothing is
        written. Either way the file is written atomically: to a temporary file beside it,
        then renamed, so an interrupted write leaves no half file.
    sep : str, optional
        The field separator of a CSV or TSV file (one character; default ``","`` for ``.csv``,
        a tab for ``.tsv``), for example the input's (:func:`read_metadata` gives it as
        ``"separator"``). Ignored by the other formats.
    na : str, default ""
        How a CSV or TSV file writes a missing value (an empty field by default; ``"NA"`` or
        the input's own missing code to keep its convention). Ignored by the other formats.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    SdcError
        Unsupported extension, missing directory, existing file without ``overwrite=True``,
        ``metadata`` not a dictionary as :func:`read_metadata` returns, a column the format
        cannot store (the message names it), or pyreadstat missing for SPSS / Stata.

    Notes
    -----
    Labelled (``Enum``) columns. :func:`read_data` turns a value-labelled SPSS / Stata
    variable into an ``Enum`` whose categories are the labels; SPSS and Stata output turns it
    back into its numeric codes with the same value labels:

    - a category equal to a label of the column in ``metadata`` gets that label's code (the
      smallest code when several codes share the label); a category named by
      :func:`read_data` after a shared label and its code (``"yes (code 2)"``) gets that code,
      and each code keeps the shared label in the written value labels;
    - a category named by an unlabelled code (``"7"``, or ``"7 (unlabelled code)"`` when
      ``"7"`` is also a label) gets that code back, unlabelled, unless the code is labelled
      or declared missing;
    - any other category (a recode such as ``"1-2"`` merging two categories) gets a new
      integer code above every code of the column (labelled codes, codes of the rule above,
      declared missing values), in category order, and its name as the value label;
    - an ``Enum`` column without value labels in ``metadata`` gets the codes 1, 2, ... in
      category order and the categories as value labels.

    Labels whose text is no longer a category of the ``Enum`` and whose code no category
    uses (removed by a recode) are not written; the codes they had are not reused. A recoded category therefore sorts after the
    original codes when the file is read again.

    A text column with value labels in ``metadata`` is coded by the same rules (new codes in
    sorted text order). A text (``Categorical``) column of a variable whose value labels
    have text codes (SPSS) keeps text codes: a label is written as its code. Numeric columns
    are written as they are, with their value labels. After a round trip an unlabelled code
    that no longer occurs (all its cells suppressed) is no longer a category, as
    :func:`read_data` makes categories only of labels and codes present. SPSS value labels
    hold at most 120 bytes: a longer new category name is an error rather than truncated.
    Fractional codes (``1.5``) keep their codes and labels in SPSS files. Stata labels
    integer values only: a value label on a fractional or text code is an error naming the
    column (rather than a label silently dropped or a code changed); write such a file as
    SPSS.

    Missing values: :func:`read_data` reads SPSS user-missing codes (``9`` "Refused") and
    Stata's ``.a``-``.z`` as null, so they are written as system-missing; their labels and
    (SPSS) missing-value definitions are written from ``metadata``.

    Other columns: SPSS and Stata store numbers (booleans as 0 / 1), text and dates; a
    float column with value labels and whole numbers is written as integers. CSV: categories
    are written as text, missing values as empty fields (NaN too). Parquet keeps every type
    (``Enum`` included) and missing values.

    The file is created readable and writable by its owner only (the permissions of the
    temporary file it is renamed from); widen them deliberately when releasing it.

    Record-level output is as confidential as the microdata it was computed from.

    Examples
    --------
    >>> df = sdckit.read_data("survey.sav")                         # doctest: +SKIP
    >>> protected = df.with_columns(...)                            # doctest: +SKIP
    >>> sdckit.io.write_data(protected, "released.sav",
    ...                      metadata=sdckit.io.read_metadata("survey.sav"))  # doctest: +SKIP
    """
    p, ext = _write_target(path, overwrite)
    meta = _check_metadata(metadata)
    frame = _frame(data, "data")
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    kind = DATA_FORMATS[ext]
    if ext in _STAT_OUT:
        write = _stat_writer(frame, p, ext, meta)
    elif ext in (".csv", ".tsv"):
        _check_flat(frame, kind)
        text = frame.with_columns(pl.col(n).fill_nan(None) for n, t in frame.schema.items() if t.is_float())
        sep = RECORD_FORMATS[ext] if sep is None else _check_separator(sep)
        if not isinstance(na, str):
            raise SdcError(f"na: got {type(na).__name__}; expected the text of a missing value (default empty)")

        def write(tmp):
            text.write_csv(tmp, separator=sep, null_value=na)
    else:
        write = frame.write_parquet
    try:
        atomic_write(p, write, overwrite=overwrite)
    except FileExistsError:
        raise SdcError(f"path: {p} already exists; expected a new file, or overwrite=True to replace it") from None
    except SdcError:
        raise
    except Exception as exc:
        raise SdcError(f"path: could not write {p} ({_short(exc)}); expected a writable {kind} destination") from None
    return p


def _frame(data, param: str):
    """The caller's table, or the file at a path, as a Polars frame."""
    if isinstance(data, (str, os.PathLike)):
        data = read_data(data, lazy=True)
    return as_table(data, param).frame


def atomic_write(path, write, *, overwrite: bool = True) -> Path:
    """Call ``write(temporary_path)`` and move the result to ``path`` in one step.

    The temporary file sits in the destination's directory (so the rename is atomic), is
    named ``.<name>.sdckit-<8 random characters>.part`` and is removed, in a ``finally``, if
    ``write`` fails or is interrupted: no half-written file is ever left at ``path``. A hard
    kill (power loss, ``kill -9``) cannot run that clean-up; the next write of the same
    ``path`` removes such a leftover: the files of exactly that name pattern for that target
    that are older than this process's start. With ``overwrite=False`` the finished file is
    published by a hard link, which fails with :class:`FileExistsError` if ``path`` exists
    (also if it appeared while writing); on a file system without hard links the existence
    check and the rename are two steps.
    """
    import tempfile

    p = Path(os.fspath(path))
    _remove_stale_parts(p)
    fd, tmp = tempfile.mkstemp(prefix=_part_prefix(p), suffix=_PART_SUFFIX, dir=p.parent)
    os.close(fd)
    try:
        write(tmp)
        if overwrite:
            os.replace(tmp, p)
        else:
            publish_new(tmp, p)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)  # gone already after a successful replace
    return p


_PART_SUFFIX = ".part"
#: how much older than this process a temporary file must be to count as a killed write's leftover
STALE_MARGIN = 2.0
_PROCESS_START = None


def _part_prefix(p: Path) -> str:
    return f".{p.name}.sdckit-"


def _process_start() -> float:
    """When this process started (Linux: from /proc; elsewhere: when sdckit.io was imported)."""
    global _PROCESS_START
    if _PROCESS_START is None:
        _PROCESS_START = _IMPORTED
        with contextlib.suppress(OSError, ValueError, IndexError, AttributeError):
            ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])  # since boot
            boot = time.time() - float(Path("/proc/uptime").read_text().split()[0])  # to 10 ms, not 1 s
            _PROCESS_START = min(_IMPORTED, boot + ticks / os.sysconf("SC_CLK_TCK"))
    return _PROCESS_START


def _remove_stale_parts(p: Path) -> None:
    """Remove the temporary files a killed earlier write of ``p`` left: only names of the exact
    pattern :func:`atomic_write` gives (``.<name>.sdckit-XXXXXXXX.part``), only files older than
    this process's start by :data:`STALE_MARGIN` seconds (a write still running elsewhere is
    younger; the margin covers the 10 ms clock of the start time and a slow read of it)."""
    import re

    pattern = re.compile(re.escape(_part_prefix(p)) + r"[a-z0-9_]{8}" + re.escape(_PART_SUFFIX))
    start = _process_start()
    try:
        entries = list(os.scandir(p.parent))
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if (
                entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_mtime < start - STALE_MARGIN
            ):
                os.remove(entry.path)


def publish_new(tmp: str, p: Path) -> None:
    """Move ``tmp`` to ``p`` unless ``p`` exists (:class:`FileExistsError`)."""
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        if os.path.lexists(p):
            raise FileExistsError(str(p)) from None
        os.replace(tmp, p)
        return
    with contextlib.suppress(OSError):
        os.remove(tmp)


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------
def _check_path(path) -> tuple[Path, str]:
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise SdcError(f"path: got {type(path).__name__}; expected a file path (str or os.PathLike)") from None
    ext = p.suffix.lower()
    if ext not in _KIND:
        raise SdcError(f"path: unsupported file extension {ext or '(none)'!r} of {p}; expected one of {_SUPPORTED}")
    if not p.exists():
        raise SdcError(f"path: file {p} not found; expected an existing {_KIND[ext]} file")
    if not p.is_file():
        raise SdcError(f"path: {p} is not a file; expected a {_KIND[ext]} file")
    return p, ext


def _names(value, param: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    try:
        names = [str(v) for v in value]
    except TypeError:
        raise SdcError(f"{param}: got {type(value).__name__}; expected a column name or a list of names") from None
    return list(dict.fromkeys(names))


def _require(available, names, param: str, p: Path) -> None:
    missing = [c for c in names if c not in available]
    if missing:
        raise MissingColumnError(missing_columns_message(param, missing, list(available)) + f" (file {p})")


def _short(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    text = msg[0] if msg else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _guard(p: Path, kind: str, fn):
    try:
        return fn()
    except SdcError:
        raise
    except Exception as exc:
        if "invalid utf-8" in str(exc).lower():
            raise SdcError(_NOT_UTF8.format(p=p)) from None
        raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a valid {kind} file") from None


def _plain(v):
    """Integral floats as int (SPSS stores every number as a double)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _code_text(v) -> str:
    return str(_plain(v))


def _sort_key(v):
    return (0, float(v), "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0.0, str(v))


def _as_text(s: pl.Series) -> pl.Series:
    """Numeric column -> its text form (integral floats without ``.0``); others unchanged."""
    if not s.dtype.is_numeric():
        return s
    if s.dtype.is_float():
        s = s.fill_nan(None)
        nn = s.drop_nulls()
        if nn.len() == 0 or bool((nn == nn.round(0)).all()) and bool((nn.abs() < 2**53).all()):
            return s.cast(pl.Int64).cast(pl.String)
    return s.cast(pl.String)


# -- CSV -----------------------------------------------------------------------------------
_CSV_PARAMS = set(inspect.signature(pl.read_csv).parameters)


def _text_source(p: Path, ext: str, sep: str | None, encoding: str | None):
    """Return ``(separator, source)``: the path itself for UTF-8, decoded bytes otherwise."""
    enc = None if encoding is None else encoding.lower().replace("_", "-")
    source: Any = p
    if enc not in (None, "utf8", "utf-8", "utf-8-sig", "utf8-lossy", "utf-8-lossy"):
        source = _transcoded(p, encoding)
    elif (bom := byte_order_mark(p)) is not None:
        if encoding is not None:
            raise SdcError(
                f"encoding: {p} starts with a {bom} byte-order mark, but encoding={encoding!r} was given; "
                f"expected encoding={bom.split()[0].lower()!r}, or no encoding (the mark is then read)"
            )
        source = _transcoded(p, bom.split()[0].lower())
    else:
        check_utf8(p, lossy=enc is not None and enc.endswith("lossy"))
    if sep is None:
        if ext == ".tsv":
            sep = "\t"
        else:
            try:
                with open(source, "rb") as fh:
                    head = fh.readline(65536)
            except OSError as exc:
                raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a readable file") from None
            line = head.decode("utf-8", errors="replace")
            if ";" in line and "," not in line:
                sep = ";"
            elif "\t" in line and "," not in line and ";" not in line:
                sep = "\t"
            else:
                sep = ","
    else:
        sep = _check_separator(sep)
    return sep, source


_UTF8_PROBE = 1 << 20  # bytes checked at each end of a CSV file


def byte_order_mark(p: Path) -> str | None:
    """The UTF-16 / UTF-32 encoding a file's byte-order mark names, or None."""
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a readable file") from None
    return next((name for mark, _, name in BYTE_ORDER_MARKS if head.startswith(mark)), None)


def check_utf8(p: Path, *, lossy: bool) -> None:
    """Refuse a file that is not UTF-8 before Polars reads it (its error would come later, from
    a lazy scan, as a traceback): the first and the last MiB are decoded."""
    import codecs

    if lossy:
        return
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            head = fh.read(_UTF8_PROBE)
            tail = b""
            if size > _UTF8_PROBE:
                fh.seek(max(_UTF8_PROBE, size - _UTF8_PROBE))
                tail = fh.read()
    except OSError as exc:
        raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a readable file") from None
    skip = 0  # the tail may start inside a character: its continuation bytes (at most 3)
    while skip < min(3, len(tail)) and 0x80 <= tail[skip] <= 0xBF:
        skip += 1
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a character cut at the end is fine
        tail[skip:].decode("utf-8")
    except UnicodeDecodeError:
        raise SdcError(_NOT_UTF8.format(p=p)) from None


_NOT_UTF8 = (
    "path: {p} is not UTF-8 text (it holds bytes that are not valid UTF-8); expected a UTF-8 file, "
    "or its encoding given to read_data (encoding='latin-1', 'cp1252', ...)"
)


def _transcoded(p: Path, encoding: str) -> Path:
    """A UTF-8 copy of a text file in another encoding, written piece by piece to a temporary
    file (removed when the process ends)."""
    import codecs
    import tempfile

    try:
        decoder = codecs.getincrementaldecoder(encoding)()
    except LookupError:
        raise SdcError(
            f"encoding: unknown encoding {encoding!r}; expected a Python codec name such as 'latin-1'"
        ) from None
    fd, name = tempfile.mkstemp(prefix="sdckit-", suffix=".csv")
    _TEMPORARY.append(name)
    try:
        with open(p, "rb") as src, os.fdopen(fd, "wb") as dst:
            while chunk := src.read(1 << 24):
                dst.write(decoder.decode(chunk).encode("utf-8"))
            dst.write(decoder.decode(b"", final=True).encode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SdcError(
            f"path: could not decode {p} as {encoding} ({_short(exc)}); expected a text file in that encoding"
        ) from None
    except OSError as exc:
        raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a readable file") from None
    return Path(name)


_TEMPORARY: list[str] = []


@atexit.register
def _remove_temporary() -> None:
    for name in _TEMPORARY:
        with contextlib.suppress(OSError):
            os.remove(name)


def _header(source: Path, sep: str, p: Path) -> list[str]:
    """The header's column names as written (a duplicated name is an error: a reader would
    rename it silently)."""
    import csv

    try:
        with open(source, encoding="utf-8-sig", errors="replace", newline="") as fh:
            names = next(csv.reader(fh, delimiter=sep), [])
    except OSError as exc:
        raise SdcError(f"path: could not read {p} ({_short(exc)}); expected a readable file") from None
    from collections import Counter

    dup = sorted(c for c, n in Counter(names).items() if n > 1)  # one pass: linear in the columns
    if dup:
        raise SdcError(
            f"path: column name(s) {', '.join(dup)} appear more than once in the header of {p}; "
            "expected unique column names"
        )
    return names


def _read_text(p, ext, columns, string_columns, na, sep, encoding, lazy=False):
    kind = _KIND[ext]
    sep, source = _text_source(p, ext, sep, encoding)
    lossy = encoding is not None and encoding.lower().replace("_", "-") in ("utf8-lossy", "utf-8-lossy")
    _header(source, sep, p)

    header = _guard(
        p,
        kind,
        lambda: pl.read_csv(source, separator=sep, n_rows=0, encoding="utf8-lossy" if lossy else "utf8").columns,
    )
    if columns:
        _require(header, columns, "columns", p)
    if string_columns:
        _require(header, string_columns, "string_columns", p)
    kw: dict[str, Any] = {
        "separator": sep,
        "null_values": na or None,
        "schema_overrides": {c: pl.String for c in string_columns} or None,
        "encoding": "utf8-lossy" if lossy else "utf8",
    }
    empty_null = "" in na
    if "empty_string_is_null" in _CSV_PARAMS:
        kw["empty_string_is_null"] = empty_null
    elif "missing_is_null" in _CSV_PARAMS:  # polars 1.x
        kw["missing_is_null"] = empty_null
    elif "missing_utf8_is_empty_string" in _CSV_PARAMS:  # older polars 1.x: an empty text field is null
        kw["missing_utf8_is_empty_string"] = not empty_null
    _keep_leading_zeros(source, kw, columns, p, kind)
    if lazy:
        scan = _guard(p, kind, lambda: pl.scan_csv(source, **kw))
        return scan.select(columns) if columns else scan
    if columns:
        kw["columns"] = columns
    df = _guard(p, kind, lambda: pl.read_csv(source, **kw))
    if columns:
        df = df.select(columns)
    return df


_WIDE = 1000  # integer columns above which the leading-zero scan goes through one long column


def _keep_leading_zeros(source, kw: dict, columns, p: Path, kind: str) -> None:
    """Columns inferred as integers whose text has a leading zero somewhere ("01", "007") are
    codes, not numbers: read them as text (one scan of those columns only)."""
    schema = _guard(p, kind, lambda: pl.scan_csv(source, **kw).collect_schema())
    wanted = set(columns) if columns else None
    ints = [c for c, t in schema.items() if t.is_integer() and (wanted is None or c in wanted)]
    if not ints:
        return
    text_kw = {k: v for k, v in kw.items() if k != "schema_overrides"}
    pattern = r"^\s*[+-]?0[0-9]"
    text = pl.scan_csv(source, infer_schema=False, **text_kw).select(cs.by_name(ints))
    if len(ints) > _WIDE:  # one long column (name, text): Polars' cost per column expression is large
        query = text.unpivot().filter(pl.col("value").str.contains(pattern)).select(pl.col("variable").unique())
        found = set(_guard(p, kind, lambda: query.collect().get_column("variable").to_list()))
        flags = [c in found for c in ints]
    else:
        flags = _guard(p, kind, lambda: text.select(pl.all().str.contains(pattern).any()).collect().row(0))
    lead = [c for c, f in zip(ints, flags) if f]
    if lead:
        kw["schema_overrides"] = {**(kw.get("schema_overrides") or {}), **{c: pl.String for c in lead}}


# -- Parquet -------------------------------------------------------------------------------
def _scan_parquet(p: Path, columns) -> pl.LazyFrame:
    scan = _guard(p, "Parquet", lambda: pl.scan_parquet(p))
    names = _guard(p, "Parquet", lambda: list(scan.collect_schema()))  # a corrupt file fails here, not later
    if columns:
        _require(names, columns, "columns", p)
        scan = scan.select(columns)
    return scan


def _read_parquet(p: Path, columns) -> pl.DataFrame:
    if columns:
        names = _guard(p, "Parquet", lambda: list(pl.read_parquet_schema(p)))
        _require(names, columns, "columns", p)
    return _guard(p, "Parquet", lambda: pl.read_parquet(p, columns=columns))


# -- SPSS / Stata / SAS --------------------------------------------------------------------
def _pyreadstat(p: Path, ext: str, verb: str = "reading"):
    try:
        import pyreadstat
    except ImportError:
        raise SdcError(
            f"path: {verb} the {_KIND[ext]} file {p} needs the optional package pyreadstat, "
            "which is not installed; install sdckit[stats] (pip install 'sdckit[stats]')"
        ) from None
    return pyreadstat


def _stat_call(p: Path, ext: str, **kw):
    """Call the pyreadstat reader for ``ext``; returns ``(polars.DataFrame, metadata)``."""
    prs = _pyreadstat(p, ext)
    reader = {
        ".sav": prs.read_sav,
        ".zsav": prs.read_sav,
        ".dta": prs.read_dta,
        ".sas7bdat": prs.read_sas7bdat,
        ".xpt": prs.read_xport,
    }[ext]
    if ext == ".xpt":
        kw.pop("user_missing", None)
    kw = {k: v for k, v in kw.items() if v is not None}
    kind = _KIND[ext]

    def call():
        try:
            return reader(os.fspath(p), output_format="polars", **kw)
        except TypeError as exc:  # pyreadstat without Polars output: go through pandas
            if "output_format" not in str(exc):
                raise
        df, meta = reader(os.fspath(p), **kw)
        return pl.from_pandas(df), meta

    return _guard(p, kind, call)


def _read_stat(p, ext, columns, na, value_labels, encoding) -> pl.DataFrame:
    kw = {"encoding": encoding, "user_missing": False}
    if columns:
        kw["usecols"] = columns
    df, meta = _stat_call(p, ext, **kw)
    if columns:
        if any(c not in df.columns for c in columns):  # pyreadstat ignores unknown names
            _, full = _stat_call(p, ext, metadataonly=True, encoding=encoding)
            _require(list(full.column_names), columns, "columns", p)
        df = df.select(columns)
    # system and user-defined missing values: null, never NaN; text "" (and na_values) -> null
    fixes = []
    for name, dtype in df.schema.items():
        if dtype.is_float():
            fixes.append(pl.col(name).fill_nan(None))
        elif dtype == pl.String and na:
            fixes.append(pl.when(pl.col(name).is_in(na)).then(None).otherwise(pl.col(name)).alias(name))
    if fixes:
        df = df.with_columns(fixes)
    if value_labels:
        labelled = getattr(meta, "variable_value_labels", None) or {}
        conv = [_labelled_to_enum(df.get_column(c), labs) for c, labs in labelled.items() if c in df.columns and labs]
        if conv:
            df = df.with_columns(conv)
    return df


def _labelled_to_enum(s: pl.Series, labels: dict) -> pl.Series:
    """Codes + value labels -> Enum with categories in code order (see :func:`read_data`)."""
    numeric = s.dtype.is_numeric()

    def key(v):
        return float(v) if numeric else str(v)

    code_label: dict = {}
    for code, lab in labels.items():
        try:
            code_label[key(code)] = str(lab)
        except (TypeError, ValueError):  # a label for a value of another type cannot occur in the data
            continue
    present = s.drop_nulls().unique().to_list()
    label_names = set(code_label.values())
    shared = _shared_names(code_label)
    cats: list[str] = []
    name_of: dict = {}
    for code in sorted(set(code_label) | {key(v) for v in present}, key=_sort_key):
        if code in shared:
            name = shared[code]
        elif code in code_label:
            name = code_label[code]
        else:
            name = _code_text(code)
            if name in label_names:  # an unlabelled code whose text is another code's label: keep apart
                name = f"{name} (unlabelled code)"
        name_of[code] = name
        if name not in cats:
            cats.append(name)
    if not present:
        return pl.Series(s.name, [None] * s.len(), dtype=pl.Enum(cats))
    new = [name_of[key(v)] for v in present]
    return s.replace_strict(present, new, return_dtype=pl.String).cast(pl.Enum(cats)).alias(s.name)


def _shared_names(code_label: dict) -> dict:
    """code -> category name for the codes whose label another code also has: the label
    followed by ``" (code <code>)"``, so that each code stays its own category (a writer
    gives every such category its code back; see :func:`write_data`)."""
    count: dict = {}
    for lab in code_label.values():
        count[str(lab)] = count.get(str(lab), 0) + 1
    return {c: f"{lab}{_SHARED.format(_code_text(c))}" for c, lab in code_label.items() if count[str(lab)] > 1}


# -- writing SPSS / Stata ------------------------------------------------------------------
#: the extensions :func:`write_data` writes, with the name of their format
DATA_FORMATS = {
    ".csv": "CSV",
    ".tsv": "TSV",
    ".parquet": "Parquet",
    ".pq": "Parquet",
    ".sav": "SPSS",
    ".zsav": "SPSS",
    ".dta": "Stata",
}
_STAT_OUT = (".sav", ".zsav", ".dta")
_UNLABELLED = " (unlabelled code)"
_SHARED = " (code {})"
_SPSS_LABEL_BYTES = 120
_INT32 = 2_147_483_620  # the largest Stata long (values above are its missing codes)
_NAME_RULES = {
    "SPSS": "a name of at most 64 bytes starting with a letter, of letters, digits, _ and ., "
    "not a reserved word; labels SPSS can hold",
    "Stata": "a name of at most 32 characters starting with a letter or _, of letters, digits "
    "and _, not a reserved word; integer codes and labels of at most 80 characters",
}


def _write_target(path, overwrite) -> tuple[Path, str]:
    try:
        p = Path(os.fspath(path))
    except TypeError:
        raise SdcError(f"path: got {type(path).__name__}; expected a file path (str or os.PathLike)") from None
    check_bool(overwrite, "overwrite")
    ext = p.suffix.lower()
    if ext not in DATA_FORMATS:
        raise SdcError(
            f"path: cannot write {p}: unsupported extension {ext or '(none)'!r}; expected one of {', '.join(DATA_FORMATS)}"
        )
    if not p.parent.is_dir():
        raise SdcError(f"path: cannot write {p}: directory {p.parent} does not exist; expected an existing directory")
    if p.is_dir():
        raise SdcError(f"path: {p} is a directory; expected a file name")
    check_new_file(p, overwrite)
    return p, ext


def _check_metadata(metadata) -> dict[str, Any]:
    """The parts of a :func:`read_metadata` dictionary the writer uses, checked."""
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise SdcError(f"metadata: got {type(metadata).__name__}; expected the dict read_metadata returns, or None")
    out: dict[str, Any] = {}
    for key in ("value_labels", "variable_labels", "measure", "user_missing"):
        part = metadata.get(key)
        part = {} if part is None else part
        if not isinstance(part, dict):
            raise SdcError(
                f"metadata: {key!r} is a {type(part).__name__}; expected a dict keyed by column name, "
                "as read_metadata returns"
            )
        out[key] = part
    for col, labs in out["value_labels"].items():
        if not isinstance(labs, dict):
            raise SdcError(
                f"metadata: value labels of column {col!r} are a {type(labs).__name__}; expected a dict {{code: label}}"
            )
        kinds = {_code_kind(c) for c in labs}
        if None in kinds or len(kinds) > 1:
            raise SdcError(
                f"metadata: value labels of column {col!r} have codes of mixed or unsupported types; "
                "expected all numeric or all text codes"
            )
    for col, vals in out["user_missing"].items():
        if not isinstance(vals, (list, tuple)):
            raise SdcError(
                f"metadata: user-missing values of column {col!r} are a {type(vals).__name__}; expected a list"
            )
    label = metadata.get("file_label")
    out["file_label"] = "" if label is None else str(label)
    return out


def _code_kind(code) -> str | None:
    if isinstance(code, bool):
        return None
    if isinstance(code, (int, float)):
        return "number"
    return "text" if isinstance(code, str) else None


def _check_flat(frame: pl.DataFrame, kind: str) -> None:
    for name, dtype in frame.schema.items():
        if dtype.is_nested() or dtype == pl.Object or dtype == pl.Binary:
            raise SdcError(
                f"data: column {name!r} has type {dtype}, which a {kind} file cannot store; "
                "expected numbers, text, dates or categories"
            )


def _stat_writer(frame: pl.DataFrame, p: Path, ext: str, meta: dict):
    """Code the frame for SPSS / Stata and return ``write(temporary_path)``."""
    kind = DATA_FORMATS[ext]
    _check_flat(frame, kind)
    prs = _pyreadstat(p, ext, "writing")
    coded, labels = _coded_frame(frame, meta, spss=kind == "SPSS")
    kw: dict[str, Any] = {
        "file_label": meta["file_label"],
        "column_labels": {c: str(v) for c, v in meta["variable_labels"].items() if c in coded.columns and v},
        "variable_value_labels": labels,
    }
    if kind == "SPSS":
        kw["compress"] = ext == ".zsav"
        kw["variable_measure"] = {
            c: m for c, m in meta["measure"].items() if c in coded.columns and m in ("nominal", "ordinal", "scale")
        }
        kw["missing_ranges"] = _missing_ranges(coded, meta["user_missing"])
    kw = {k: v for k, v in kw.items() if v or k == "compress"}
    fn = prs.write_sav if kind == "SPSS" else prs.write_dta
    polars_ok = _writes_polars(prs)

    def call(df: pl.DataFrame, target, **kwargs) -> None:
        fn(df if polars_ok else df.to_pandas(), target, **kwargs)

    def write(tmp):
        try:
            call(coded, tmp, **kw)
        except Exception as exc:
            raise _refused(call, coded, kw, exc, kind, p) from None

    return write


def _writes_polars(prs) -> bool:
    """pyreadstat writes Polars frames from version 1.3 on (earlier: pandas only)."""
    try:
        return tuple(int(x) for x in str(prs.__version__).split(".")[:2]) >= (1, 3)
    except ValueError:
        return False


def _refused(call, coded: pl.DataFrame, kw: dict, exc: Exception, kind: str, p: Path) -> SdcError:
    """The error for a refused write, naming the first column that cannot be written alone."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sdckit-") as d:
        probe = os.path.join(d, "probe" + (".sav" if kind == "SPSS" else ".dta"))
        for name in coded.columns:
            one = {
                k: ({name: v[name]} if name in v else None) if isinstance(v, dict) else v
                for k, v in kw.items()
                if k != "file_label"
            }
            try:
                call(coded.select(name), probe, **one)
            except Exception as col_exc:
                return SdcError(
                    f"data: column {name!r} cannot be written to a {kind} file ({_short(col_exc)}); "
                    f"expected {_NAME_RULES[kind]}"
                )
    return SdcError(f"path: could not write {p} ({_short(exc)}); expected data and labels a {kind} file can hold")


def _coded_frame(frame: pl.DataFrame, meta: dict, *, spss: bool) -> tuple[pl.DataFrame, dict]:
    """Enum and labelled text columns as codes; the value labels to write."""
    columns, labels = [], {}
    for name in frame.columns:
        s, labs = _coded_column(frame.get_column(name), meta["value_labels"].get(name), meta["user_missing"].get(name))
        if labs and spss:
            _check_label_bytes(name, labs)
        elif labs:
            _check_stata_codes(name, labs)
        columns.append(s)
        if labs:
            labels[name] = labs
    return pl.DataFrame(columns), labels


def _coded_column(s: pl.Series, labs: dict | None, missing) -> tuple[pl.Series, dict | None]:
    dtype = s.dtype
    if dtype.is_float():
        s = s.fill_nan(None)
        if labs and _code_kind(next(iter(labs))) == "number":
            s = _integral(s)
        return s, labs
    if dtype == pl.Categorical:
        s = s.cast(pl.String)
    is_enum = isinstance(dtype, pl.Enum)
    if not is_enum and not (s.dtype == pl.String and labs):
        return s, labs
    cats = list(dtype.categories) if isinstance(dtype, pl.Enum) else sorted(s.drop_nulls().unique().to_list())
    text = s.cast(pl.String)
    if not labs:
        codes = list(range(1, len(cats) + 1))
        return _replace(text, cats, codes), dict(zip(codes, cats))
    if all(isinstance(c, str) for c in labs):
        code_of = _label_codes(labs)
        codes = [code_of.get(c, c) for c in cats]
        s, out = _replace(text, cats, codes, pl.String), labs
    else:
        code_of, out = _category_codes(cats, labs, missing)
        codes = [code_of[c] for c in cats]
        s = _replace(text, cats, codes)
    if is_enum:  # labels of categories a recode removed are not written (codes in use keep theirs)
        kept, used = set(cats), set(codes)
        out = {c: lab for c, lab in out.items() if str(lab) in kept or _plain(c) in used}
    return s, out


def _integral(s: pl.Series) -> pl.Series:
    """A float column of whole numbers as integers (Stata labels only integer variables)."""
    nn = s.drop_nulls()
    if nn.len() and bool((nn == nn.round(0)).all()) and bool((nn.abs() <= _INT32).all()):
        return s.cast(pl.Int32)
    return s


def _replace(text: pl.Series, cats: list, codes: list, dtype=None) -> pl.Series:
    if dtype is None:
        dtype = _code_dtype(codes)
    if not cats:
        return pl.Series(text.name, [None] * text.len(), dtype=dtype)
    # the codes as a typed Series: a list literal takes its type from its first element
    return text.replace_strict(cats, pl.Series(codes, dtype=dtype), return_dtype=dtype).alias(text.name)


def _code_dtype(codes: list):
    if all(float(c).is_integer() for c in codes):
        return pl.Int32 if all(-_INT32 <= c <= _INT32 for c in codes) else pl.Int64
    return pl.Float64


def _label_codes(labs: dict) -> dict:
    """category name -> code: a label gives its code (the smallest code when several codes
    share a label), and the name :func:`read_data` gives a code of a shared label
    (``"yes (code 2)"``) gives that code."""
    code_of: dict = {}
    for code, lab in sorted(labs.items(), key=lambda kv: _sort_key(kv[0])):
        code_of.setdefault(str(lab), _plain(code))
    for code, name in _shared_names(labs).items():
        code_of.setdefault(name, _plain(code))
    return code_of


def _category_codes(cats: list, labs: dict, missing) -> tuple[dict, dict]:
    """Numeric code of every category, and the value labels with the new categories added
    (rules in :func:`write_data`)."""
    code_of_label = _label_codes(labs)
    labelled = {float(c) for c in labs}
    discrete, ranges = _missing_values(missing)
    taken = labelled | discrete | {v for r in ranges for v in r}
    code_of, new = {}, []
    for cat in cats:
        if cat in code_of_label:
            code_of[cat] = code_of_label[cat]
            continue
        code = _unlabelled_code(cat)
        free = code is not None and float(code) not in labelled and float(code) not in discrete
        if free and not any(lo <= code <= hi for lo, hi in ranges) and float(code) not in code_of.values():
            code_of[cat] = code
        else:
            new.append(cat)
    used = [v for v in (*taken, *(float(c) for c in code_of.values())) if v == v and abs(v) != float("inf")]
    start = int(max(used) // 1) + 1 if used else 1
    out = {_plain(c): str(lab) for c, lab in labs.items()}
    for i, cat in enumerate(new):
        code_of[cat] = start + i
        out[start + i] = cat
    return code_of, dict(sorted(out.items(), key=lambda kv: _sort_key(kv[0])))


def _unlabelled_code(cat: str):
    """The code a category named by :func:`read_data` after an unlabelled code stands for."""
    text = cat[: -len(_UNLABELLED)] if cat.endswith(_UNLABELLED) else cat
    try:
        value = float(text)
    except ValueError:
        return None
    if value != value or abs(value) == float("inf") or _code_text(value) != text:
        return None
    return _plain(value)


def _missing_values(missing) -> tuple[set, list]:
    """Declared missing values of a column: discrete numbers, and ``(lo, hi)`` ranges."""
    discrete, ranges = set(), []
    for v in missing or ():
        if isinstance(v, dict):
            lo, hi = v.get("lo"), v.get("hi")
            if _code_kind(lo) == "number" and _code_kind(hi) == "number":
                ranges.append((float(lo), float(hi)))
        elif _code_kind(v) == "number":
            discrete.add(float(v))
    return discrete, ranges


def _missing_ranges(coded: pl.DataFrame, user_missing: dict) -> dict:
    """SPSS user-missing definitions of the columns whose written type matches them."""
    out = {}
    for col, vals in user_missing.items():
        if col not in coded.columns or not vals:
            continue
        numeric = coded.schema[col].is_numeric()
        flat = [x for v in vals for x in (v.values() if isinstance(v, dict) else [v])]
        if all(_code_kind(x) == ("number" if numeric else "text") for x in flat):
            out[col] = list(vals)
    return out


def _check_stata_codes(name: str, labs: dict) -> None:
    """Stata labels integer values only: a label on a fractional or text code is an error
    (dropping it would lose the label without a word; changing the code would change data)."""
    bad = sum(1 for c in labs if _code_kind(c) != "number" or not float(c).is_integer())
    if bad:
        raise SdcError(
            f"data: column {name!r} has {bad} value label(s) on codes that are not integers (fractional or text codes), which a "
            "Stata file cannot hold (Stata labels integer values only); expected integer codes, or "
            "write the file as SPSS (.sav), which keeps such codes and their labels"
        )


def _check_label_bytes(name: str, labs: dict) -> None:
    if any(len(str(lab).encode("utf-8")) > _SPSS_LABEL_BYTES for lab in labs.values()):
        raise SdcError(
            f"data: column {name!r} has a category name longer than {_SPSS_LABEL_BYTES} bytes, "
            f"which SPSS would truncate as a value label; expected names of at most {_SPSS_LABEL_BYTES} bytes"
        )


def _check_separator(sep) -> str:
    """A CSV field separator: one character, not a quote or a line break."""
    if not isinstance(sep, str) or len(sep) != 1 or sep in '"\r\n':
        raise SdcError(f"sep: got {sep!r}; expected a single character such as ',' or ';'")
    return sep
