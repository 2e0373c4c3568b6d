"""`vitalrag serve --transport http`: the tools over streamable HTTP on
loopback, the bearer token, and many calls in flight at once."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import httpx2
import pytest
from serve_server import TOKEN, start_http
from mcp.shared.exceptions import MCPError
from serve_support import (
    check_bad_calls,
    check_every_tool,
    check_tool_list,
    data,
    http_session,
    record_of_context,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_server_lists_and_answers_every_tool(http_server):
    async def main() -> None:
        async with http_session(http_server.url, TOKEN) as session:
            await check_tool_list(session)
            await check_every_tool(session)
            await check_bad_calls(session)

    anyio.run(main)


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Bearer {TOKEN}x", "Bearer",
                                           f"Basic {TOKEN}", TOKEN])
def test_http_refuses_requests_without_the_token(http_server, authorization):
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    for method in ("POST", "GET", "DELETE"):
        response = httpx2.request(method, http_server.url, headers=headers,
                                  json=INIT if method == "POST" else None)
        assert response.status_code == 401, (method, authorization)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert TOKEN not in response.text


def test_http_accepts_the_token(http_server):
    for scheme in ("Bearer", "bearer"):
        response = httpx2.post(http_server.url, json=INIT,
                               headers={**MCP_HEADERS, "Authorization": f"{scheme} {TOKEN}"})
        assert response.status_code == 200, response.text
        assert "vitalrag" in response.text


def test_mcp_client_with_a_wrong_token_cannot_connect(http_server):
    async def main() -> None:
        async with http_session(http_server.url, "wrong") as session:
            await session.list_tools()

    with pytest.raises(BaseException) as info:  # the SDK raises it inside an exception group
        anyio.run(main)
    errors = info.value.exceptions if isinstance(info.value, BaseExceptionGroup) else [info.value]
    while any(isinstance(e, BaseExceptionGroup) for e in errors):
        errors = [x for e in errors for x in (e.exceptions if isinstance(e, BaseExceptionGroup) else [e])]
    assert any(isinstance(e, MCPError) for e in errors), errors


def test_http_server_log_never_shows_the_token(http_server, index_path):
    for log in index_path.parent.glob("serve-*.log"):
        assert TOKEN not in log.read_text(errors="replace")


def test_http_without_a_token_needs_no_authorization(index_path):
    for server in start_http(index_path, None, "--no-warm"):  # index_status needs no model
        async def main() -> None:
            async with http_session(server.url, None) as session:
                status = data(await session.call_tool("index_status", {}))
                assert status["repositories"][0]["name"] == "pyr"

        anyio.run(main)


def test_200_concurrent_get_context_calls_all_succeed(http_server):
    """200 calls, 8 in flight at once (8 sessions), loopback only: zero errors."""
    calls, in_flight = 200, 8
    queries = ["Engine run prepare", "slugify a name", "make an engine", "deep function",
               "base setup", "helper for tests", "runner go", "util"]
    failures: list[str] = []
    done = 0

    async def worker(n: int) -> None:
        nonlocal done
        async with http_session(http_server.url, TOKEN) as session:
            for i in range(n, calls, in_flight):
                result = await session.call_tool("get_context", {"query": queries[i % len(queries)],
                                                                 "budget": 1024})
                if result.is_error or record_of_context(result)["tokens"] > 1024:
                    failures.append(str(result.content))
                done += 1

    async def main() -> None:
        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                for n in range(in_flight):
                    tg.start_soon(worker, n)

    started = time.perf_counter()
    anyio.run(main)
    assert failures == [] and done == calls, failures[:3]
    assert time.perf_counter() - started < 240


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("how", ["terminate", "kill"])
def test_worker_processes_end_with_the_server(index_path, how):
    """However the server process ends, its compute processes do not outlive it."""
    for server in start_http(index_path, TOKEN, "--workers", "2", "--no-warm"):
        workers = {c for c in _children(server.process.pid)
                   if "spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")}
        assert len(workers) == 2
        getattr(server.process, how)()
        server.process.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers)


def test_several_worker_processes_answer_every_tool(index_path):
    """--workers 2: calls queue in the server process and the next free compute
    process answers each."""
    for server in start_http(index_path, TOKEN, "--workers", "2", "--no-warm"):
        async def main() -> None:
            async with http_session(server.url, TOKEN) as session:
                await check_tool_list(session)
                await check_every_tool(session)
                for _ in range(6):
                    result = await session.call_tool("get_context", {"query": "Engine run prepare"})
                    assert not result.is_error

        anyio.run(main)
