"""``sdckit suda``: special uniques, SUDA scores and DIS-SUDA."""

from __future__ import annotations

from .._errors import SdcError
from . import (
    Progress,
    add_declared_options,
    add_key_options,
    add_missing_options,
    add_output_options,
    declared_values,
    key_list,
    progress_enabled,
    read_input,
    role_value,
    write_json,
)


def register(sub) -> None:
    from ..risk.suda import suda

    f = sub.add_parser(
        "suda",
        help="SUDA scores and DIS-SUDA from minimal sample uniques",
        description="Minimal sample uniques (MSUs), SUDA scores, DIS-SUDA and the contribution "
        "of each key variable (sdcMicro suda2).",
    )
    add_key_options(f)
    helps = {
        "max_size": "largest MSU size searched and scored (default: the number of keys)",
        "dis_fraction": "sampling fraction for DIS-SUDA in (0, 1], or 'weights' for n / sum of --weight (default 0.01)",
    }
    add_declared_options(f, suda, helps, dis_fraction={"default": "0.01"})
    f.add_argument(
        "--scores",
        choices=["elliot", "ihsn", "templ", "templ_product"],
        default="elliot",
        help="score variant: elliot (sdcMicro default), ihsn (sdcMicro original_scores=FALSE), templ (Elliot's "
        "weights / ATT!, summed) or templ_product (their product over a record's MSUs)",
    )
    add_declared_options(f, suda, {"weight": "(only for --dis-fraction weights and its check)"})
    add_missing_options(f)
    f.add_argument(
        "--levels",
        action="store_true",
        help="add the per-category contributions to --json (they name the categories present)",
    )
    f.add_argument("--msus", action="store_true", help="add each record's MSUs as text to --records")
    add_output_options(f)
    f.set_defaults(func=run)


def _fraction(text: str):
    if text.strip().lower() == "weights":
        return "weights"
    try:
        return float(text)
    except ValueError:
        raise SdcError(f"--dis-fraction: got {text!r}; expected a number in (0, 1] or 'weights'") from None


def run(args) -> int:
    from ..io import write_records
    from ..risk.suda import suda

    keys = key_list(args)
    frac = _fraction(args.dis_fraction)
    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = read_input(args.data, keys, args.na_values)
    prog.step("searching MSUs")
    res = suda(
        data,
        keys,
        **declared_values(args, suda, dis_fraction=frac),
        method=args.scores,
        missing=role_value(args, "missing") or None,
        id=args.id,
    )
    prog.step("writing output")
    prog.close()
    print(res.summary())
    if args.json:
        write_json(
            args.json,
            {"data": str(args.data), "suda": res.to_dict(include_levels=args.levels)},
            overwrite=args.overwrite,
        )
    if args.records:
        write_records(res.to_frame(msus=args.msus), args.records, overwrite=args.overwrite)
    return 0
