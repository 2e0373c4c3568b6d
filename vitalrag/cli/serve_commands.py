"""``serve``: the index as MCP tools for coding agents (stdio or streamable HTTP)."""

from __future__ import annotations

import os
from typing import Any

import click

from vitalrag.cli.index_commands import store_option
from vitalrag.errors import InputError


@click.command()
@store_option
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio for a client that starts the server; http for streamable HTTP at /mcp.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the address to bind; one that is not loopback needs $VITALRAG_TOKEN.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True,
              help="HTTP: the port to bind.")
@click.option("--warm/--no-warm", default=True, show_default=True,
              help="Load the embedding model before the first call.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Compute processes, each with the index and model loaded; calls queue in "
                   "one place and the next free process answers. More than one answers "
                   "concurrent calls in parallel.")
def serve(store_location: str, index_dir: str | None, transport: str, host: str, port: int,
          warm: bool, workers: int) -> None:
    """Serve the index as an MCP server with the tools get_context, search,
    explain, get_object, neighbors and index_status.

    One index stays loaded; a re-index into the same store is picked up on the
    next call. Over HTTP, when $VITALRAG_TOKEN is set every request must carry
    `Authorization: Bearer <token>`; a --host other than a loopback address
    needs it. A loopback server answers only requests addressed to this machine
    by name or loopback address (Host and Origin).
    """
    from vitalrag.serve import ContextService, build_server
    from vitalrag.serve.http import MCP_PATH, TOKEN_ENV, check_bind, check_port, is_loopback, serve_http

    token = os.environ.get(TOKEN_ENV)
    if transport == "http":
        if token is not None and not token.strip():
            raise InputError(f"{TOKEN_ENV} is set but empty: set it to a secret, or unset it "
                             "to serve without a bearer token")
        check_bind(host, token)
        if not is_loopback(host):
            click.echo(f"warning: {host} is not a loopback address: other machines can reach this "
                       "server, guarded by the bearer token alone", err=True)
        check_port(host, port)  # before "serving" is printed and the workers start
    else:
        token = None
    service: Any
    if workers > 1:
        from vitalrag.serve.pool import PooledService

        ContextService(store_location, index_dir).open(warm=False).close()  # fail here, not in a worker
        service = PooledService(store_location, index_dir, workers=workers, warm=warm).open()
    else:
        service = ContextService(store_location, index_dir).open(warm=warm)
    server = build_server(service)
    try:
        if transport == "stdio":
            server.run("stdio")
            return
        click.echo(f"serving MCP over streamable HTTP at http://{_netloc(host, port)}{MCP_PATH}"
                   f"{f' with {workers} workers' if workers > 1 else ''}"
                   f"{' (bearer token required)' if token else ''}", err=True)
        serve_http(server, host=host, port=port, token=token)
    finally:
        service.close()


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def register(group: click.Group) -> None:
    group.add_command(serve)
