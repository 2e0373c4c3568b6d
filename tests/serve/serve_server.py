"""Fixtures for the MCP server tests: a small real index, and the server
started the way a client starts it (a subprocess over stdio or HTTP)."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")

import httpx2  # noqa: E402  (the mcp SDK's HTTP client)

from vitalrag.graph.memory import MemoryStore  # noqa: E402
from vitalrag.ingest import index_repository  # noqa: E402
from vitalrag.retrieve.dense import Embedder, HashingEmbedder  # noqa: E402
from vitalrag.retrieve.index import RetrievalIndex  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
REPO = "pyr"
TOKEN = "test-token-3f9a"



def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vitalrag", "serve", *args]


def build_index(repo: Path, folder: Path, name: str = REPO, embedder: Embedder | None = None) -> Path:
    """Index ``repo`` into ``folder`` with ``embedder`` (default: the deterministic
    hashing embedder, for tests about reloading rather than retrieval)."""
    store = MemoryStore(folder)
    index_repository(repo, store, name=name, workers=1)
    RetrievalIndex.build(store, folder, embedder=embedder or HashingEmbedder())
    return folder


@pytest.fixture(scope="session")
def index_path(tmp_path_factory, packaged_model) -> Path:
    """The fixture repository indexed with the real default model, which the
    servers started on it load as a user's would."""
    return build_index(FIXTURES / "py_resolution", tmp_path_factory.mktemp("serve") / "idx",
                       embedder=packaged_model)


class HttpServer:
    def __init__(self, process: subprocess.Popen[bytes], url: str) -> None:
        self.process = process
        self.url = url


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_http(store: Path, token: str | None, *extra: str, host: str = "127.0.0.1") -> Iterator[HttpServer]:
    """``vitalrag serve --transport http`` on a free port of ``host`` (a loopback
    address), until it answers."""
    assert ipaddress.ip_address(host).is_loopback, "tests serve on loopback only"
    log = store.parent / f"serve-{time.monotonic_ns()}.log"
    port = free_port(host)
    env = {k: v for k, v in os.environ.items() if k != "VITALRAG_TOKEN"}
    if token is not None:
        env["VITALRAG_TOKEN"] = token
    url = f"http://{host}:{port}/mcp"
    with log.open("wb") as errlog:
        process = subprocess.Popen(serve_command("--store", str(store), "--transport", "http",
                                                 "--host", host, "--port", str(port), *extra),
                                   env=env, stdout=subprocess.DEVNULL, stderr=errlog)
        try:
            _wait_until_up(process, url, log)
            yield HttpServer(process, url)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}: {log.read_text(errors='replace')}")
        try:
            httpx2.get(url, timeout=1)  # any answer, even 401 or 405, means it is up
            return
        except httpx2.TransportError:
            if time.monotonic() > deadline:
                raise AssertionError("server did not answer within 60 s") from None
            time.sleep(0.1)


@pytest.fixture(scope="module")
def http_server(index_path) -> Iterator[HttpServer]:
    """One server with a bearer token for the module's tests."""
    yield from start_http(index_path, TOKEN)
