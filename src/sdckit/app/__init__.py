"""``sdckit app``: the release in a browser, for statisticians who do not program.

A local web application (Shiny for Python, the ``app`` extra) on top of the library: it loads a
file, sets the roles and saves them as a scenario file, shows the risk overview of
:func:`sdckit.assess` with the report's figures, and applies protection methods through forms
generated from :mod:`sdckit.registry`. Nothing in sdckit imports this package; ``import
sdckit`` never imports Shiny.
"""

from __future__ import annotations

import socket

from .._errors import SdcError

__all__ = ["create_app", "free_port", "serve"]


def _shiny():
    try:
        import shiny
    except ImportError:
        raise SdcError("app: needs the optional package shiny (pip install 'sdckit[app]')") from None
    return shiny


def create_app(data=None):
    """The Shiny application; ``data`` (a file path) is loaded when a session starts."""
    _shiny()
    from .server import create_app as build

    return build(data)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on at ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def serve(data=None, *, port: int | None = None, host: str = "127.0.0.1", launch_browser: bool = True) -> None:
    """Start the app on ``host:port`` (a free port when None) and, unless told not to, open
    the browser on it. Blocks until the server stops (Ctrl+C)."""
    shiny = _shiny()
    app = create_app(data)
    port = free_port(host) if port is None else port
    print(f"sdckit app: http://{host}:{port}  (Ctrl+C stops it)", flush=True)
    # dev_mode off: no development tools in the page; warnings only in the log (no request lines)
    shiny.run_app(app, host=host, port=port, launch_browser=launch_browser, log_level="warning", dev_mode=False)
