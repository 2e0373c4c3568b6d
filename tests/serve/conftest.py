"""Fixtures for the MCP server tests (defined in serve_server, a plain module, so
test files import its helpers by a name no other test folder uses)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")

from serve_server import http_server, index_path  # noqa: E402,F401  (fixtures)
