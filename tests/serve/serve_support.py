"""MCP client helpers for the server tests: the SDK's own ClientSession over
stdio, streamable HTTP, or in memory."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

TOOLS = {"get_context", "search", "explain", "get_object", "neighbors", "index_status"}


@asynccontextmanager
async def stdio_session(argv: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def data(result: CallToolResult) -> Any:
    """The structured answer of a successful call."""
    assert not result.is_error, text(result)
    return result.structured_content


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def record_of_context(result: CallToolResult) -> dict[str, Any]:
    """The compact record ``get_context`` sends as its second text block."""
    return json.loads(result.content[1].text)  # type: ignore[union-attr]


ENGINE = "pyr:pkg/core.py:Engine"

#: (tool, arguments, words the error message must contain)
BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("get_context", {"query": ""}, "empty query"),
    ("get_context", {"query": "   "}, "empty query"),
    ("get_context", {"query": "engine", "policy": "best"}, "unknown allocation policy 'best'"),
    ("get_context", {"query": "engine", "budget": 0}, "budget must be"),
    ("get_context", {"query": "engine", "budget": -5}, "budget must be"),
    ("get_context", {"query": "engine", "line": 3}, "a line needs a file"),
    ("get_context", {"query": "engine", "file": "no/such.py"}, "not in the index"),
    ("get_context", {}, "query"),
    ("get_context", {"query": "send " * 2000}, "10,000 characters long, over the limit of 8,000"),
    ("get_context", {"query": "*"}, "the query has no searchable words: '*'"),
    ("get_context", {"query": "the of a"}, "no searchable words"),
    ("explain", {"query": "AND"}, "no searchable words"),
    ("search", {"query": "x" * 8001}, "over the limit of 8,000"),
    ("search", {"query": "how do I do this?"}, "no searchable words"),
    ("explain", {"query": "engine", "policy": "nope"}, "unknown allocation policy"),
    ("explain", {"query": ""}, "empty query"),
    ("search", {"query": ""}, "empty query"),
    ("search", {"query": "engine", "k": 0}, "k must be"),
    ("search", {"query": "engine", "k": 1000}, "k must be"),
    ("get_object", {"id": "pyr:no/such.py:Nothing"}, "no object with id 'pyr:no/such.py:Nothing'"),
    ("get_object", {"id": ""}, "empty object id"),
    ("neighbors", {"id": "pyr:nope"}, "no object with id"),
    ("neighbors", {"id": ENGINE, "depth": 0}, "depth must be"),
    ("neighbors", {"id": ENGINE, "depth": 99}, "depth must be"),
    ("neighbors", {"id": ENGINE, "kinds": ["CALLS", "FRIENDS"]}, "unknown edge kind(s) 'FRIENDS'"),
    ("neighbors", {"id": ENGINE, "direction": "sideways"}, "unknown direction"),
    ("no_such_tool", {}, "no_such_tool"),
]


async def check_tool_list(session: ClientSession) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    ctx = tools["get_context"].input_schema
    assert ctx["required"] == ["query"]
    assert {"vital", "vital-fill"} <= set(ctx["properties"]["policy"]["enum"])
    assert ctx["properties"]["tests"]["enum"] == ["auto", "include", "exclude"]
    assert ctx["properties"]["budget"]["minimum"] == 1
    assert ctx["properties"]["query"]["maxLength"] == 8000
    kinds = tools["neighbors"].input_schema["properties"]["kinds"]["anyOf"][0]
    assert "CALLS" in kinds["items"]["enum"]


async def check_every_tool(session: ClientSession) -> None:
    """Call each tool once with good arguments and check what comes back."""
    result = await session.call_tool("get_context", {"query": "Engine run prepare", "budget": 2000})
    answer = data(result)
    assert "class Engine" in result.content[0].text or "def run" in result.content[0].text  # type: ignore[union-attr]
    assert re.search(r"^ *\d+ ", result.content[0].text, re.M)  # type: ignore[union-attr]  # numbered lines
    assert answer["context"] == result.content[0].text  # type: ignore[union-attr]
    compact = record_of_context(result)
    assert compact["policy"] == "vital-fill" and compact["budget"] == 2000
    assert 0 < compact["tokens"] <= 2000
    assert [o["slot"] for o in compact["objects"]] == list(range(1, len(compact["objects"]) + 1))
    for obj in compact["objects"]:
        assert {"id", "role", "path", "lines", "tokens_given", "tokens_used", "clipped"} <= set(obj)
        assert obj["tokens_used"] <= obj["tokens_given"]
    assert sum(o["tokens_used"] for o in compact["objects"]) <= 2000

    plain = await session.call_tool("get_context", {"query": "Engine run prepare", "budget": 2000,
                                                    "line_numbers": False, "tests": "exclude"})
    assert not re.search(r"^ *\d+ ", plain.content[0].text, re.M)  # type: ignore[union-attr]
    assert "test_" not in plain.content[0].text  # type: ignore[union-attr]

    clipped = record_of_context(await session.call_tool(
        "get_context", {"query": "Engine run prepare", "budget": 40, "policy": "raw-surface"}))
    assert clipped["policy"] == "raw-surface" and clipped["tokens"] <= 40

    hits = data(await session.call_tool("search", {"query": "slugify", "k": 3}))["results"]
    assert len(hits) == 3 and [h["rank"] for h in hits] == [1, 2, 3]
    assert any(h["id"] == "pyr:pkg/helpers.py:slugify" for h in hits)

    record = data(await session.call_tool("explain", {"query": "Engine run prepare", "budget": 2000,
                                                      "file": "pkg/core.py", "line": 17}))
    assert record["params"]["budget"] == 2000 and record["params"]["file"] == "pkg/core.py"
    assert record["slots"] and record["views"]
    assert {v["status"] for v in record["views"]} <= {"representative", "merged", "dropped"}

    obj = data(await session.call_tool("get_object", {"id": ENGINE}))
    assert obj["object"]["kind"] == "class" and obj["object"]["id"] == ENGINE
    assert obj["source"].startswith("class Engine")
    assert any(e["target"] == f"{ENGINE}.run" and e["kind"] == "CONTAINS" for e in obj["edges"])

    near = data(await session.call_tool("neighbors", {"id": ENGINE, "kinds": ["CONTAINS"], "depth": 1,
                                                      "direction": "out"}))
    ids = {n["id"] for n in near["neighbors"]}
    assert f"{ENGINE}.run" in ids and all(n["hops"] == 1 for n in near["neighbors"])
    wider = data(await session.call_tool("neighbors", {"id": ENGINE, "depth": 2}))
    assert wider["total"] > near["total"]

    status = data(await session.call_tool("index_status", {}))
    assert [r["name"] for r in status["repositories"]] == ["pyr"]
    assert status["repositories"][0]["objects"]["class"] >= 1
    assert status["model"] == "all-MiniLM-L6-v2" and status["views"] > 0 and status["dense"]
    assert status["last_indexed"] is not None


async def check_bad_calls(session: ClientSession) -> None:
    """Every bad call is a tool error naming the mistake; the server goes on."""
    for tool, args, expected in BAD_CALLS:
        result = await session.call_tool(tool, args)
        assert result.is_error, (tool, args)
        assert expected in text(result), (tool, args, text(result))
    assert not (await session.call_tool("search", {"query": "engine", "k": 1})).is_error
