"""The MCP tools over a ``ContextService``, on the official ``mcp`` SDK.

    >>> server = build_server(ContextService(".vitalrag").open())
    >>> server.run("stdio")

Tools: ``get_context``, ``search``, ``explain``, ``get_object``, ``neighbors``,
``index_status``. Every argument is typed and described in the input schema.
A ``VitalRAGError`` (bad argument, unknown id, missing index) becomes an MCP
tool error (``isError`` result) with its one-line message; the server goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from vitalrag import __version__
from vitalrag.allocate.controls import policy_names
from vitalrag.allocate.fill import TESTS_MODES
from vitalrag.context import DEFAULTS, ContextSettings
from vitalrag.errors import VitalRAGError
from vitalrag.model import EDGE_KINDS
from vitalrag.retrieve.query import MAX_QUERY_CHARS, Query
from vitalrag.serve.service import DIRECTIONS, MAX_DEPTH, MAX_K, ContextService


T = TypeVar("T")

INSTRUCTIONS = (
    "VitalRAG answers questions about indexed code repositories. Call get_context with what you are "
    "about to do (and the file and line you are at) to get a bounded context of the most relevant "
    "code objects; explain shows why each was chosen. search lists ranked evidence, get_object and "
    "neighbors read the code graph by object id (ids look like repo:path/to/file.py:Class.method)."
)


def _range(low: int, high: int | None = None) -> dict[str, Any]:
    """Bounds shown in the input schema. The service checks them itself, so a
    wrong value gets its one-line message rather than a validation dump."""
    return {"minimum": low} if high is None else {"minimum": low, "maximum": high}


QueryText = Annotated[str, Field(description="What the code you need is about: a task, a question, "
                                             "identifiers, or the code you are completing.",
                                  json_schema_extra={"maxLength": MAX_QUERY_CHARS})]
File = Annotated[str | None, Field(description="The file you are working in (repo-relative or absolute); "
                                               "anchors the graph walk at it.")]
Line = Annotated[int | None, Field(description="A line in `file` (1-based); its enclosing object "
                                              "anchors the graph walk. Needs `file`.",
                                  json_schema_extra=_range(1))]
Budget = Annotated[int, Field(description="Token budget B of the whole context (cl100k_base tokens).",
                              json_schema_extra=_range(1))]
Policy = Annotated[str, Field(description="Allocation policy: 'vital-fill' (the default: VITAL-RAG's slots, "
                                          "then the rest of the budget in rank order), 'vital' (the paper's "
                                          "K=5), or a control/ablation.",
                              json_schema_extra={"enum": policy_names()})]
Tests = Annotated[str, Field(description="Tests in the context: 'auto' (after the code, unless the query is "
                                         "about tests), 'include' (as ranked) or 'exclude'.",
                             json_schema_extra={"enum": list(TESTS_MODES)})]
LineNumbers = Annotated[bool, Field(description="Number the shown source lines.")]
Repo = Annotated[list[str] | None, Field(description="Only these repositories (when the index holds several).")]
EdgeKind = Annotated[str, WithJsonSchema({"type": "string", "enum": list(EDGE_KINDS)})]
ObjectId = Annotated[str, Field(description="A code object id, e.g. repo:path/to/file.py:Class.method "
                                            "(search and get_context return them).")]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)


def _answer(fn: Callable[[], T]) -> T:
    """Run one service call; what the caller got wrong becomes a tool error."""
    try:
        return fn()
    except VitalRAGError as exc:
        raise ToolError(str(exc)) from exc


def build_server(service: ContextService, *, name: str = "vitalrag") -> MCPServer[Any]:
    """An ``MCPServer`` whose tools answer from ``service``."""
    server: MCPServer[Any] = MCPServer(name, version=__version__, instructions=INSTRUCTIONS,
                                       log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    def get_context(query: QueryText, file: File = None, line: Line = None, budget: Budget = DEFAULTS.budget,
                    policy: Policy = DEFAULTS.policy, tests: Tests = DEFAULTS.tests,
                    line_numbers: LineNumbers = DEFAULTS.line_numbers, repo: Repo = None) -> CallToolResult:
        """The bounded context C(q) for a query: the selected code objects rendered within
        the token budget, then a compact record (each object's slot, id, lines, tokens
        given and used, and whether it was clipped)."""
        data = _answer(lambda: service.get_context(Query.of(query, file, line, repo), ContextSettings(
            policy=policy, budget=budget, tests=tests, line_numbers=line_numbers)))
        record = {k: v for k, v in data.items() if k != "context"}
        return CallToolResult(
            content=[TextContent(type="text", text=data["context"]),
                     TextContent(type="text", text=json.dumps(record, ensure_ascii=False))],
            structured_content=data,
        )

    @server.tool(annotations=READ_ONLY)
    def search(query: QueryText,
               k: Annotated[int, Field(description="How many ranked views.",
                                       json_schema_extra=_range(1, MAX_K))] = 10,
               ) -> dict[str, Any]:
        """Ranked evidence for a query: views (body, signature, docstring, call site, test,
        window) of code objects from fused dense, BM25 and graph-walk retrieval."""
        return {"results": _answer(lambda: service.search(query, k))}

    @server.tool(annotations=READ_ONLY)
    def explain(query: QueryText, file: File = None, line: Line = None, budget: Budget = DEFAULTS.budget,
                policy: Policy = DEFAULTS.policy, tests: Tests = DEFAULTS.tests, repo: Repo = None) -> dict[str, Any]:
        """The full allocation record for a query: every candidate view (representative,
        merged or dropped, and why) and every slot with its token share and rendered lines."""
        return _answer(lambda: service.explain(Query.of(query, file, line, repo), ContextSettings(
            policy=policy, budget=budget, tests=tests)))

    @server.tool(annotations=READ_ONLY)
    def get_object(id: ObjectId) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        """One code object: its properties, its source lines and its edges."""
        return _answer(lambda: service.get_object(id))

    @server.tool(annotations=READ_ONLY)
    def neighbors(
        id: ObjectId,  # noqa: A002 - the tool's argument name
        kinds: Annotated[list[EdgeKind] | None, Field(
            description=f"Edge kinds to follow (default: all of {', '.join(EDGE_KINDS)}).")] = None,
        depth: Annotated[int, Field(description="How many hops.",
                                    json_schema_extra=_range(1, MAX_DEPTH))] = 1,
        direction: Annotated[str, Field(description="Follow edges out of, into, or both ways.",
                                        json_schema_extra={"enum": list(DIRECTIONS)})] = "both",
    ) -> dict[str, Any]:
        """Code objects within `depth` hops of an object along edges of the given kinds,
        nearest first."""
        return _answer(lambda: service.neighbors(id, kinds, depth, direction))

    @server.tool(annotations=READ_ONLY)
    def index_status() -> dict[str, Any]:
        """What the server has loaded: repositories with object and edge counts, the
        embedding model, the number of views, and when each repository was last indexed."""
        return _answer(service.index_status)

    return server
