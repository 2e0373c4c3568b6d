"""Retrieval: views of code objects, and dense, sparse, graph-walk and fused retrievers."""

from __future__ import annotations

from vitalrag.model import ScoredView

__all__ = ["retrieve"]


def retrieve(query: str, file: str | None = None, line: int | None = None, k: int = 20, *,
             retriever: str = "fused", store: str = ".vitalrag", index_dir: str | None = None,
             repo: str | None = None) -> list[ScoredView]:
    """Ranked views for ``query`` from the index at ``store``."""
    from vitalrag.retrieve.api import Retriever

    return Retriever.open(store, index_dir=index_dir).search(
        query, k=k, retriever=retriever, file=file, line=line, repo=repo)
