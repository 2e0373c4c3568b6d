"""Streamable HTTP for the MCP server: loopback by default, bearer token optional.

With a token, every HTTP request must carry ``Authorization: Bearer <token>``;
anything else gets 401 before it reaches the MCP transport. The token is
compared in constant time and never logged.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import ipaddress
import json
import logging
import socket
from typing import Any

from vitalrag.errors import InputError

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
TOKEN_ENV = "VITALRAG_TOKEN"

Scope = dict[str, Any]
ASGIApp = Any


class BearerAuth:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise InputError(f"empty bearer token: set {TOKEN_ENV} to a secret, or unset it")
        self.app = app
        # Digests have one length, so the comparison time says nothing about the token.
        self._digest = hashlib.sha256(token.encode("utf-8")).digest()

    def _authorized(self, scope: Scope) -> bool:
        header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
        scheme, _, credentials = header.decode("latin-1").strip().partition(" ")
        given = hashlib.sha256(credentials.strip().encode("latin-1")).digest()
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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    """The ASGI app serving ``server`` (an ``MCPServer``) at ``/mcp``. Each call is
    answered with one JSON body rather than an SSE stream: the tools never send
    requests or notifications of their own, and a plain JSON answer is cheaper
    for both sides."""
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, json_response=True)
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

    if not is_loopback(host) and token is None:
        log.warning("serving on %s without a bearer token: anyone who can reach this address can "
                    "read the index; set %s", host, TOKEN_ENV)
    config = uvicorn.Config(http_app(server, host=host, token=token), host=host, port=port,
                            log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run()
