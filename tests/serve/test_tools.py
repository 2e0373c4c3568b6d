"""The tools through the SDK's ClientSession over its in-memory transport:
schemas, answers and error results, without a subprocess."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from serve_support import check_bad_calls, check_every_tool, check_tool_list

from vitalrag.serve import ContextService, build_server


@pytest.fixture
def server(index_path):
    service = ContextService(str(index_path)).open()
    yield build_server(service)
    service.close()


def _run(server, check) -> None:
    async def main() -> None:
        async with Client(server) as client:
            await check(client.session)

    anyio.run(main)


def test_tool_list_has_typed_described_schemas(server):
    _run(server, check_tool_list)


def test_every_tool_answers(server):
    _run(server, check_every_tool)


def test_bad_arguments_are_tool_errors(server):
    _run(server, check_bad_calls)
