"""The sparse retriever: BM25 (``bm25s``) over views with code-aware tokens.

The index is saved as bm25s's plain arrays and JSON (no pickle) and loaded
memory-mapped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vitalrag.kernel.text import code_token_ids, code_tokens

log = logging.getLogger(__name__)


class SparseIndex:
    """BM25 over a fixed list of texts; search returns (position, score) pairs."""

    def __init__(self, retriever: object, size: int) -> None:
        self._bm25 = retriever
        self.size = size
        vocab = getattr(retriever, "vocab_dict", None) or {}
        self._vocab = set(vocab)

    @classmethod
    def build(cls, texts: Sequence[str]) -> SparseIndex:
        import bm25s

        retriever = bm25s.BM25()
        # token ids straight away (bm25s would otherwise collect and number the
        # strings itself); views repeat text (a call site, a test window), so each
        # distinct text is tokenized once
        vocab: dict[str, int] = {}
        memo: dict[str, tuple[int, ...]] = {}
        seen: dict[str, list[int]] = {}
        corpus = []
        for t in texts:
            ids = seen.get(t)
            if ids is None:
                ids = seen[t] = code_token_ids(t, vocab, memo) or [vocab.setdefault("<empty>", len(vocab))]
            corpus.append(ids)
        if corpus:
            retriever.index((corpus, vocab), show_progress=False)
        return cls(retriever, len(corpus))

    def save(self, folder: str | os.PathLike[str]) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if self.size:
            self._bm25.save(str(folder), show_progress=False)  # type: ignore[attr-defined]

    @classmethod
    def load(cls, folder: str | os.PathLike[str], size: int) -> SparseIndex:
        import bm25s

        if size == 0:
            return cls(bm25s.BM25(), 0)
        retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        return cls(retriever, size)

    @property
    def documents(self) -> int:
        """How many documents the BM25 arrays hold (to check them against the views)."""
        if self.size == 0:
            return 0
        return int(self._bm25.scores["num_docs"])  # type: ignore[attr-defined]

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        tokens = [t for t in code_tokens(query) if t in self._vocab]
        if not tokens or self.size == 0:
            return []
        k = min(k, self.size)
        docs, scores = self._bm25.retrieve(  # type: ignore[attr-defined]
            [tokens], k=k, show_progress=False, n_threads=0)
        return [(int(d), float(s)) for d, s in zip(np.asarray(docs)[0], np.asarray(scores)[0]) if s > 0]
