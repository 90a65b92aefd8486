"""The gate in front of ``sdckit app``'s server: what a local data tool is expected to check
before it answers (Jupyter's model).

:class:`Guard` wraps the Shiny application (an ASGI application) and refuses, with 403 and
before the application sees it, every HTTP request and WebSocket connection

- whose ``Host`` header is not the app's own address (``127.0.0.1:PORT``, ``localhost:PORT``,
  ``[::1]:PORT`` or the ``--host`` given): a page of another website that rebinds its name to
  127.0.0.1 (DNS rebinding) is refused;
- whose ``Origin`` header, when there is one, is not the app's own origin: another website's
  page cannot drive the app from the user's browser;
- that carries neither the token (the ``token`` query parameter of the address the app prints)
  nor the cookie the server sets once it has seen the token.

A request body (an upload) longer than the upload limit is refused with 413 and a message the
page shows, before it is read. Nothing here imports Shiny; nothing here logs a record value
(a refusal is logged with its reason only).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import sys
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs

from .._errors import SdcError

__all__ = ["DEFAULT_MAX_UPLOAD", "Guard", "is_loopback", "new_token", "parse_size"]

#: the default upload limit in bytes (``--max-upload``)
DEFAULT_MAX_UPLOAD = 2_000_000_000

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
#: the addresses that listen on every interface: the ``Host`` header then cannot be checked
_ANY = ("0.0.0.0", "::", "")


def new_token() -> str:
    """A fresh random token (43 characters from 32 random bytes)."""
    return secrets.token_urlsafe(32)


def parse_size(text) -> int:
    """A size such as ``2GB``, ``500MB``, ``64kB`` or ``1000`` (bytes; decimal units) in bytes."""
    raw = str(text).strip().lower().replace(" ", "")
    number = raw.rstrip("kmgtb")
    unit = raw[len(number) :]
    try:
        value = float(number)
    except ValueError:
        value = float("nan")
    if unit not in _UNITS or not value > 0 or value == float("inf"):
        raise SdcError(f"--max-upload: got {text!r}; expected a size above 0 such as 2GB, 500MB or 64kB")
    return int(value * _UNITS[unit])


def _size_text(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an address (or ``localhost``) that only this machine reaches."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Guard:
    """An ASGI application that checks each request (see the module's text) and passes those
    that hold to ``app``.

    Parameters
    ----------
    app : ASGI application
        The application guarded (Shiny's ``App``).
    token : str
        The token every request must carry (query parameter ``token`` or the cookie).
    port : int
        The port the server listens on (part of the allowed ``Host`` and ``Origin``).
    host : str
        The address the server listens on; its name is allowed as ``Host`` besides the loopback
        names. An address of every interface (``0.0.0.0``, ``::``) turns the ``Host`` check off
        (the token still holds).
    max_upload : int
        The longest request body accepted, in bytes.
    """

    def __init__(self, app, *, token: str, port: int, host: str = "127.0.0.1", max_upload: int = DEFAULT_MAX_UPLOAD):
        self.app = app
        self.token = token
        self.port = int(port)
        self.max_upload = int(max_upload)
        self.cookie = f"sdckit-token-{self.port}"  # browsers share cookies across ports: one name per port
        names = {"127.0.0.1", "localhost", "[::1]", _bracketed(host)} if host not in _ANY else None
        self.hosts = None if names is None else {f"{n}:{self.port}".lower() for n in names}

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)  # lifespan
        headers = _headers(scope)
        reason, from_query = self._refusal(scope, headers)
        if reason is not None:
            print(f"sdckit app: refused a {scope['type']} request: {reason}", file=sys.stderr, flush=True)
            return await _refuse(scope, receive, send, 403, f"sdckit app: refused: {reason}")
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)
        length = headers.get("content-length")
        too_long = self._too_long(length, headers)
        if too_long is not None:
            return await _refuse(scope, receive, send, 413, too_long)
        send = self._with_cookie(send) if from_query else send
        return await self.app(scope, self._counted(receive), send)

    # -- the checks ---------------------------------------------------------------------------
    def _refusal(self, scope, headers) -> tuple[str | None, bool]:
        """Why the request is refused (None when it is not), and whether its token came in the
        query (the cookie is then set on the response)."""
        host = headers.get("host", "").lower()
        if self.hosts is not None and host not in self.hosts:
            return "its Host header is not this app's address", False
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self._origins(host):
            return "it comes from another website (Origin)", False
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        if given:
            ok = any(hmac.compare_digest(t.encode(), self.token.encode()) for t in given)
            return (None, True) if ok else ("wrong token", False)
        cookie = _cookie(headers.get("cookie", ""), self.cookie)
        if cookie is not None and hmac.compare_digest(cookie.encode(), self.token.encode()):
            return None, False
        return "no token (open the address sdckit app printed, with its ?token=...)", False

    def _origins(self, host: str) -> set[str]:
        hosts = self.hosts if self.hosts is not None else {host}
        return {f"http://{h}" for h in hosts}

    def _too_long(self, length, headers) -> str | None:
        message = (
            f"sdckit app: the file is larger than the upload limit of {_size_text(self.max_upload)} "
            "(start the app with a larger --max-upload)"
        )
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return "sdckit app: refused: an upload must give its length (Content-Length), not be sent in chunks"
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n < 0:
                return "sdckit app: refused: a request with a bad Content-Length"
            return message if n > self.max_upload else None
        return None

    def _counted(self, receive):
        """``receive`` that ends the body (as a disconnect) once it passes the upload limit."""
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_upload:
                    return {"type": "http.disconnect"}
            return message

        return counted

    def _with_cookie(self, send):
        """``send`` that sets the token's cookie on the response (HttpOnly, SameSite=Strict)."""
        value = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode("latin-1")

        async def with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", value)]}
            await send(message)

        return with_cookie


def _headers(scope) -> dict[str, str]:
    """The request's headers by lower-case name (a repeated header: its values joined by ``,``;
    cookies by ``;``)."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name in out:
            value = out[name] + ("; " if name == "cookie" else ", ") + value
        out[name] = value
    return out


def _cookie(header: str, name: str) -> str | None:
    try:
        jar = SimpleCookie(header)
    except CookieError:
        return None
    return jar[name].value if name in jar else None


async def _refuse(scope, receive, send, status: int, text: str) -> None:
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403
        return
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
