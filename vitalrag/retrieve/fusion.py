"""Reciprocal-rank fusion: score(v) = sum over retrievers of w_r / (k + rank_r(v))."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60


def rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float] | None = None,
        k: int = RRF_K) -> list[tuple[str, float, tuple[tuple[str, int], ...]]]:
    """Fuse ranked id lists. Returns (id, fused score, ((retriever, 1-based rank), ...)),
    best first, ties broken by id."""
    scores: dict[str, float] = {}
    found: dict[str, list[tuple[str, int]]] = {}
    for name, ranked in sorted(rankings.items()):
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(ranked, 1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
            found.setdefault(item, []).append((name, rank))
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [(i, scores[i], tuple(found[i])) for i in order]
