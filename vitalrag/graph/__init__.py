"""Graph stores: one ``GraphStore`` protocol, an embedded networkx store and Neo4j."""

from __future__ import annotations

from vitalrag.graph.store import GraphStore, open_store

__all__ = ["GraphStore", "open_store"]
