"""Ingest: walk a repository, parse it with tree-sitter, extract canonical code
objects and resolve their relations into graph edges."""

from __future__ import annotations

from vitalrag.ingest.pipeline import IndexReport, index_repository

__all__ = ["IndexReport", "index_repository"]
