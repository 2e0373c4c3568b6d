"""Streamable HTTP for the MCP server: loopback by default, bearer token optional.

With a token, every HTTP request must carry ``Authorization: Bearer <token>``;
anything else gets 401 before it reaches the MCP transport. The token is
compared in constant time and never logged; whitespace around it (which no
HTTP header can carry) is ignored on both sides.

A loopback bind answers only requests whose Host (and Origin, when sent) name
this machine: a web page that rebinds its own name to 127.0.0.x gets 421 or
403. Any other bind is public: it needs a token (``check_bind``).

The server keeps no MCP session: each request is answered on its own (the
SDK's stateless mode), since the tools hold no state between calls, so no
number of ``initialize`` calls can fill a session table.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import ipaddress
import json
import socket
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from vitalrag.errors import InputError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
TOKEN_ENV = "VITALRAG_TOKEN"
#: stripped from both ends of the token and of the credentials a request sends
TOKEN_WHITESPACE = " \t\r\n\v\f"
#: the names of this machine a loopback bind answers to, besides its own address (as the SDK's)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Scope = dict[str, Any]
ASGIApp = Any


class BearerAuth:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        # A header value loses its surrounding whitespace on the way, so a token
        # that kept it (a secret file's newline) could never be matched.
        token = token.strip(TOKEN_WHITESPACE)
        if not token:
            raise InputError(f"empty bearer token: set {TOKEN_ENV} to a secret, or unset it")
        self.app = app
        # Digests have one length, so the comparison time says nothing about the token.
        self._digest = hashlib.sha256(token.encode("utf-8")).digest()

    def _authorized(self, scope: Scope) -> bool:
        header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
        scheme, _, credentials = header.decode("latin-1").strip(TOKEN_WHITESPACE).partition(" ")
        given = hashlib.sha256(credentials.strip(TOKEN_WHITESPACE).encode("latin-1")).digest()
        return hmac.compare_digest(given, self._digest) and scheme.lower() == "bearer"

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not self._authorized(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            body = json.dumps({"error": "unauthorized: send Authorization: Bearer <token>"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="vitalrag"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class PostOnly:
    """ASGI middleware: the MCP endpoint takes POST alone. A stateless server has
    nothing to push, so a GET (a client's standing SSE stream) gets 405, as the
    MCP spec allows, rather than a stream held open that never carries a byte."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] != "POST" and scope["path"].rstrip("/") == MCP_PATH:
            body = json.dumps({"error": "method not allowed: this MCP endpoint takes POST"}).encode()
            await send({"type": "http.response.start", "status": 405, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"allow", b"POST")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Raise ``InputError`` for a public bind (any address but loopback) without a
    token: anyone who can reach it could read the index, and a web page could
    reach it through DNS rebinding, since its Host cannot be checked."""
    if token is None and not is_loopback(host):
        raise InputError(f"--host {host} is not a loopback address: serving it needs a bearer token "
                         f"(set {TOKEN_ENV} to a secret), or bind 127.0.0.1")


def rebinding_guard(host: str) -> TransportSecuritySettings:
    """The SDK's Host/Origin check for a bind on ``host``. A loopback bind allows
    only its own address and this machine's names, on any port (an ``ssh -L``
    tunnel keeps the client's port in Host); the SDK itself guards only three
    literal names, and 127.0.0.2 would go unchecked. A public bind has
    no names to check against and relies on its token."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = list(dict.fromkeys([_bracketed(host), *LOOPBACK_NAMES]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in names for h in (name, f"{name}:*")],
        allowed_origins=[o for name in names for o in (f"http://{name}", f"http://{name}:*")],
    )


def _bracketed(host: str) -> str:
    """``host`` as a Host header writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def check_port(host: str, port: int) -> None:
    """Raise ``InputError`` when ``host:port`` cannot be bound (busy, or not an address here)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from exc
    errors: list[OSError] = []
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            try:
                probe.bind(address)
            except OSError as exc:
                errors.append(exc)
    # a name such as localhost may have an address family this machine lacks: one that binds will do
    busy = [e for e in errors if e.errno == errno.EADDRINUSE]
    if busy or len(errors) == len(infos):
        first = (busy or errors)[0]
        raise InputError(f"cannot serve on {host}:{port}: {first.strerror or first}") from first


def http_app(server: Any, *, host: str = DEFAULT_HOST, token: str | None = None) -> ASGIApp:
    """The ASGI app serving ``server`` (an ``MCPServer``) at ``/mcp``, stateless,
    behind ``rebinding_guard(host)``. Each call is answered with one JSON body
    rather than an SSE stream: the tools never send requests or notifications of
    their own, and a plain JSON answer is cheaper for both sides."""
    check_bind(host, token)
    app = PostOnly(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, json_response=True,
                                              stateless_http=True, transport_security=rebinding_guard(host)))
    return BearerAuth(app, token) if token is not None else app


def serve_http(server: Any, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
               token: str | None = None) -> None:
    """Serve until interrupted, in this one process (``--workers`` puts compute
    processes behind it, see ``vitalrag.serve.pool``). uvicorn binds the socket
    through asyncio here, which turns Nagle off on every connection; a socket
    uvicorn binds itself (its own ``--workers``) does not, and each reply then
    waits 40 ms for the client's delayed ACK on a kept-alive connection.
    Logs go through the caller's logging setup."""
    import uvicorn

    config = uvicorn.Config(http_app(server, host=host, token=token), host=host, port=port,
                            log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run()
