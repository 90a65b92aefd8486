"""``sdckit app``: the local web application (load, roles, risk overview, protection)."""

from __future__ import annotations

from pathlib import Path

from .._errors import SdcError


def register(sub) -> None:
    a = sub.add_parser(
        "app",
        help="start the local web application in the browser (needs the app extra)",
        description="Start sdckit's web application on this machine and open it in the browser: load a file, "
        "set the roles (saved as a scenario file), see the risk overview, apply protection methods. It listens "
        "on 127.0.0.1 only unless --host says otherwise and needs no network.",
    )
    a.add_argument(
        "data", nargs="?", help="data file to load at start: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt"
    )
    a.add_argument("--port", type=int, help="port to listen on (default: a free port)")
    a.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    a.add_argument("--no-browser", dest="browser", action="store_false", help="do not open the browser")
    a.set_defaults(func=run)


def run(args) -> int:
    from ..app import serve

    if args.data is not None and not Path(args.data).is_file():
        raise SdcError(f"data: file {args.data} does not exist; expected a data file")
    if args.port is not None and not 0 < args.port < 65536:
        raise SdcError(f"--port: {args.port} is not a port; expected a number from 1 to 65535")
    serve(args.data, port=args.port, host=args.host, launch_browser=args.browser)
    return 0
