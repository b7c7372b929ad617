"""Who may reach the HTTP servers (``stratagraph mcp --transport http``, ``stratagraph serve``).

On a loopback address (127.0.0.0/8, ``::1``, ``localhost``) they serve the local user; bound anywhere else
they need a bearer token (``STRATAGRAPH_HTTP_TOKEN``) and refuse to start without one. When a token is set,
every request must carry it, as ``Authorization: Bearer <token>`` or, for a browser, the cookie the page
sets after it was opened once with ``?token=<token>``; anything else gets 401 before it reaches the app.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

__all__ = ["COOKIE", "AccessError", "BearerTokenMiddleware", "check_binding", "is_loopback"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

COOKIE = "stratagraph_token"


class AccessError(ValueError):
    """A server that would be reachable from other machines without a token."""


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost: it may resolve anywhere


def check_binding(host: str, token: str | None) -> None:
    """Refuse to serve on a non-loopback address without a token (AccessError naming the address)."""
    if not is_loopback(host) and not token:
        raise AccessError(
            f"binding to {host} makes the server reachable from other machines: set STRATAGRAPH_HTTP_TOKEN to a "
            "secret the clients send as 'Authorization: Bearer <token>' (or bind to 127.0.0.1)"
        )


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request must carry ``token`` (header, or the cookie set by a
    ``?token=`` visit when ``cookie`` is on); otherwise 401 with a JSON error."""

    def __init__(self, app: ASGIApp, token: str, *, cookie: bool = False) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.cookie = cookie

    def _matches(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode("utf-8"), self.token)

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        auth = headers.get("authorization", "")
        bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        if self._matches(bearer):
            await self.app(scope, receive, send)
            return
        if self.cookie:
            jar = SimpleCookie(headers.get("cookie", ""))
            if COOKIE in jar and self._matches(jar[COOKIE].value):
                await self.app(scope, receive, send)
                return
            query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
            if scope["type"] == "http" and self._matches(query):
                await self._set_cookie(scope, send)
                return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        await self._refuse(send, "missing or wrong bearer token" if auth else "this server needs a bearer token")

    async def _set_cookie(self, scope: Scope, send: Callable[[Any], Awaitable[None]]) -> None:
        """Answer a ``?token=`` visit with the cookie and a redirect to the same path without the token."""
        cookie = f"{COOKIE}={self.token.decode('utf-8')}; HttpOnly; SameSite=Strict; Path=/"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", scope.get("path", "/").encode("latin-1")), (b"set-cookie", cookie.encode("latin-1"))]})  # fmt: skip
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, send: Callable[[Any], Awaitable[None]], message: str) -> None:
        body = json.dumps({"error": message}).encode()
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="stratagraph"'),
                        (b"content-length", str(len(body)).encode())],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": body})
