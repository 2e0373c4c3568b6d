"""`vitalrag serve --transport http` against hostile clients: DNS rebinding on
any loopback address, public binds without a token, a flood of `initialize`
calls, and a token with whitespace around it. Every server here binds a
loopback address on a free port; every flood is bounded in count and time."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from serve_server import TOKEN, start_http
from serve_support import data, http_session, record_of_context

from vitalrag.cli import main

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _port(url: str) -> int:
    return int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("host", ["127.0.0.2", "127.0.0.1"])
def test_a_loopback_bind_answers_only_requests_addressed_to_this_machine(index_path, host):
    """A web page whose name was rebound to the server's address sends its own
    name as Host (and Origin): 421 or 403, on every loopback address, not only
    the three names the SDK guards itself."""
    for server in start_http(index_path, None, "--no-warm", host=host):
        port = _port(server.url)

        def post(**headers: str) -> httpx2.Response:
            return httpx2.post(server.url, json=INIT, headers={**MCP_HEADERS, **headers}, timeout=10)

        assert post(Host=f"evil.example.com:{port}", Origin="http://evil.example.com").status_code == 421
        assert post(Host="evil.example.com").status_code == 421
        assert post(Origin=f"http://evil.example.com:{port}").status_code == 403
        for name in (host, "127.0.0.1", "localhost", "[::1]"):
            assert post(Host=f"{name}:{port}").status_code == 200, name
            # a tunnel (ssh -L 9000:HOST:PORT) keeps the client's side in Host and Origin
            assert post(Host=f"{name}:9000", Origin=f"http://{name}:9000").status_code == 200, name

        async def main_() -> None:
            async with http_session(server.url, None) as session:
                assert data(await session.call_tool("index_status", {}))["repositories"][0]["name"] == "pyr"

        anyio.run(main_)


@pytest.mark.parametrize("host", ["192.0.2.1", "vitalrag-no-such-host.invalid"])
def test_a_public_bind_without_a_token_is_refused_before_it_binds(tmp_path, host):
    """Not a loopback address (192.0.2.1 is TEST-NET-1, bound nowhere): one line
    asking for a token, before any socket is bound or the index opened."""
    result = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none"), "--transport", "http",
                                       "--host", host, "--port", "8765", "--no-warm"],
                                env={"VITALRAG_TOKEN": None})
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: --host {host} is not a loopback address: serving it needs a bearer token "
        "(set VITALRAG_TOKEN to a secret), or bind 127.0.0.1"]


def test_a_public_bind_with_a_token_warns(tmp_path):
    # 192.0.2.1 is no address of this machine, so the port check fails right after the warning
    result = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none"), "--transport", "http",
                                       "--host", "192.0.2.1", "--port", "8765", "--no-warm"],
                                env={"VITALRAG_TOKEN": TOKEN})
    lines = result.stderr.strip().splitlines()
    assert lines[0] == ("warning: 192.0.2.1 is not a loopback address: other machines can reach this "
                        "server, guarded by the bearer token alone")
    assert lines[1].startswith("Error: cannot serve on 192.0.2.1:8765") and len(lines) == 2
    assert TOKEN not in result.output


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))  # type: ignore[union-attr]


def _flood(url: str, calls: int, in_flight: int = 8) -> list[httpx2.Response]:
    """``calls`` bare ``initialize`` requests, ``in_flight`` at a time, within 120 s."""
    answers: list[httpx2.Response] = []
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}

    async def worker(client: httpx2.AsyncClient, n: int) -> None:
        for _ in range(n, calls, in_flight):
            answers.append(await client.post(url, json=INIT, headers=headers))

    async def run() -> None:
        with anyio.fail_after(120):
            async with httpx2.AsyncClient(timeout=30) as client, anyio.create_task_group() as tg:
                for n in range(in_flight):
                    tg.start_soon(worker, client, n)

    anyio.run(run)
    return answers


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_an_initialize_flood_opens_no_sessions_and_the_next_client_is_served(index_path):
    """The tools keep no state, so the server keeps no session: an initialize
    gets no session id, the server does not grow with each, and a client that
    comes after the flood lists the tools and gets its context."""
    for server in start_http(index_path, TOKEN, "--no-warm"):
        warm_up = _flood(server.url, 100)
        before = _rss_kib(server.process.pid)
        flood = _flood(server.url, 600)
        grown = _rss_kib(server.process.pid) - before
        for answer in warm_up + flood:
            assert answer.status_code == 200, answer.text
            assert "mcp-session-id" not in answer.headers
        assert grown < 8 * 1024, f"the server grew {grown} KiB over 600 initialize calls"
        # nor does it hold a standing stream open for each GET: there is nothing to push
        stream = httpx2.get(server.url, headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert stream.status_code == 405 and stream.headers["allow"] == "POST"

        async def client() -> None:
            async with http_session(server.url, TOKEN) as session:
                assert {t.name for t in (await session.list_tools()).tools} >= {"get_context", "search"}
                result = await session.call_tool("get_context", {"query": "Engine run prepare", "budget": 1024})
                assert "Engine" in data(result)["context"] and record_of_context(result)["tokens"] <= 1024

        anyio.run(client)


@pytest.mark.parametrize("configured", [f" {TOKEN} ", f"\t{TOKEN}\r\n"])
def test_a_token_with_whitespace_around_it_is_the_token_without_it(index_path, configured):
    """No header carries the whitespace around a token (a secret file's newline),
    so the server ignores it, as it does in what clients send."""
    for server in start_http(index_path, configured, "--no-warm"):
        async def main_() -> None:
            async with http_session(server.url, TOKEN) as session:
                assert data(await session.call_tool("index_status", {}))["repositories"][0]["name"] == "pyr"

        anyio.run(main_)
        for sent, status in ((f"Bearer {TOKEN}", 200), (f"Bearer  {TOKEN}", 200), (f"Bearer {TOKEN}x", 401),
                             (f"Bearer x{TOKEN}", 401), ("Bearer", 401)):
            answer = httpx2.post(server.url, json=INIT, headers={**MCP_HEADERS, "Authorization": sent})
            assert answer.status_code == status, sent
