"""``sdckit app``: the release in a browser, for statisticians who do not program.

A local web application (Shiny for Python, the ``app`` extra) on top of the library: it loads a
file, sets the roles and saves them as a scenario file, shows the risk overview of
:func:`sdckit.assess` with the report's figures, and applies protection methods through forms
generated from :mod:`sdckit.registry`. Nothing in sdckit imports this package; ``import
sdckit`` never imports Shiny.
"""

from __future__ import annotations

import socket
import sys
import threading

from .._errors import SdcError

__all__ = ["create_app", "free_port", "serve"]


def _shiny():
    try:
        import shiny
    except ImportError:
        raise SdcError("app: needs the optional package shiny (pip install 'sdckit[app]')") from None
    return shiny


def create_app(data=None, folder=None):
    """The Shiny application; ``data`` (a file path) is loaded when a session starts; every
    file it writes goes into ``folder`` (default: the current folder)."""
    _shiny()
    from .server import create_app as build

    return build(data, folder)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on at ``host`` now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def serve(
    data=None,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    launch_browser: bool = True,
    max_upload: int | None = None,
    folder=None,
) -> None:
    """Start the app on ``host:port`` (a free port when None) behind its :class:`~.guard.Guard`
    (the ``Host``, ``Origin`` and token checks, the upload limit ``max_upload`` in bytes), print
    its address with the token and, unless told not to, open the browser on it. Blocks until the
    server stops (Ctrl+C). Every file the app writes goes into ``folder`` (default: the current
    folder)."""
    _shiny()
    import uvicorn

    from .guard import DEFAULT_MAX_UPLOAD, Guard, is_loopback, new_token

    _ensure_listenable(host, 0 if port is None else port)
    port = free_port(host) if port is None else port
    token = new_token()
    limit = DEFAULT_MAX_UPLOAD if max_upload is None else max_upload
    app = Guard(create_app(data, folder), token=token, port=port, host=host, max_upload=limit)
    url = f"http://{_name(_reachable(host))}:{port}/?token={token}"
    if not is_loopback(host):
        print(
            f"sdckit app: warning: listening on {host}, not on this machine only: other machines can reach "
            "the app, and whoever has the address below (with its token) reads and writes files as you",
            file=sys.stderr,
            flush=True,
        )
    print(f"sdckit app: {url}  (Ctrl+C stops it)", flush=True)
    _note_incomplete(folder)
    if launch_browser:
        threading.Thread(target=_open_when_listening, args=(url, host, port), daemon=True).start()
    # warnings only in the log: no request lines (they would carry the token)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=16 * 2**20)


def _note_incomplete(folder) -> None:
    """Say so when the folder holds sets of files an export killed midway left."""
    import os

    from .model import INCOMPLETE

    home = os.getcwd() if folder is None else os.fspath(folder)
    left = [n for n in os.listdir(home) if n.startswith(INCOMPLETE)]
    if left:
        print(
            f"sdckit app: note: {home} holds {len(left)} folder(s) {INCOMPLETE}*, left by exports stopped "
            "midway: the files in them are incomplete release sets (delete them, export again)",
            flush=True,
        )


def _reachable(host: str) -> str:
    """The address a browser on this machine opens for a server listening on ``host``."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def _name(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _ensure_listenable(host: str, port: int) -> None:
    """A clear error when ``host:port`` cannot be listened on (taken, or not this machine's)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as exc:
        where = f"{host} port {port}" if port else host
        raise SdcError(
            f"--host/--port: cannot listen on {where} ({exc.strerror or exc}); "
            "expected an address of this machine and a free port"
        ) from None


def _open_when_listening(url: str, host: str, port: int, wait: float = 60.0) -> None:
    import time
    import webbrowser

    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        target = _reachable(host)
        with socket.socket(socket.AF_INET6 if ":" in target else socket.AF_INET) as s:
            if s.connect_ex((target, port)) == 0:
                webbrowser.open(url)
                return
        time.sleep(0.1)
