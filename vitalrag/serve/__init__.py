"""The MCP server: VitalRAG's retrieval and allocation as tools for coding agents.

    >>> from vitalrag.serve import ContextService, build_server
    >>> build_server(ContextService(".vitalrag").open()).run("stdio")

``service`` keeps one index loaded per process (reloaded when a re-index
replaces it); ``server`` declares the MCP tools; ``http`` serves them over
streamable HTTP on loopback, behind an optional bearer token.
"""

from __future__ import annotations

from vitalrag.serve.server import build_server
from vitalrag.serve.service import ContextService

__all__ = ["ContextService", "build_server"]
