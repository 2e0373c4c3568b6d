"""`vitalrag serve` over stdio, started by the SDK's stdio client as an MCP
client application would start it."""

from __future__ import annotations

import anyio
from serve_server import serve_command
from serve_support import check_bad_calls, check_every_tool, check_tool_list, stdio_session


def test_stdio_server_lists_and_answers_every_tool(index_path):
    async def main() -> None:
        async with stdio_session(serve_command("--store", str(index_path))) as session:
            await check_tool_list(session)
            await check_every_tool(session)
            await check_bad_calls(session)

    anyio.run(main)
