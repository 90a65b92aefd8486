"""``sdckit app``: the local web application (load, roles, risk overview, protection)."""

from __future__ import annotations

from pathlib import Path

from .._errors import SdcError


def register(sub) -> None:
    a = sub.add_parser(
        "app",
        help="start the local web application in the browser (needs the app extra)",
        description="Start sdckit's web application on this machine and open it in the browser: load a file, "
        "set the roles (saved as a scenario file), see the risk overview, apply protection methods, export the "
        "release into a folder you choose. It listens on 127.0.0.1 only unless --host says otherwise and needs "
        "no network. The address it prints carries a random token: every request without it, or from another "
        "website (Origin), or to another host name (Host) is refused.",
    )
    a.add_argument(
        "data", nargs="?", help="data file to load at start: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt"
    )
    a.add_argument("--port", type=int, help="port to listen on (default: a free port)")
    a.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only); another address lets other machines "
        "reach the app (a warning says so; the token still guards it)",
    )
    a.add_argument(
        "--max-upload",
        default="2GB",
        help="largest file the file picker accepts, e.g. 2GB, 500MB, 64kB (default 2GB)",
    )
    a.add_argument(
        "--folder",
        help="folder the app writes into (the scenario, the exported release); the page names files in it, "
        "never another folder (default: the current folder)",
    )
    a.add_argument("--no-browser", dest="browser", action="store_false", help="do not open the browser")
    a.set_defaults(func=run)


def run(args) -> int:
    from ..app import serve
    from ..app.guard import parse_size

    if args.data is not None and not Path(args.data).is_file():
        raise SdcError(f"data: file {args.data} does not exist; expected a data file")
    if args.port is not None and not 0 < args.port < 65536:
        raise SdcError(f"--port: {args.port} is not a port; expected a number from 1 to 65535")
    host = args.host.strip().strip("[]")
    if not host:
        raise SdcError("--host: empty; expected an address such as 127.0.0.1")
    if args.folder is not None and not Path(args.folder).is_dir():
        raise SdcError(f"--folder: {args.folder} is not an existing folder; expected the folder the app writes into")
    max_upload = parse_size(args.max_upload)
    serve(args.data, port=args.port, host=host, launch_browser=args.browser, max_upload=max_upload, folder=args.folder)
    return 0
