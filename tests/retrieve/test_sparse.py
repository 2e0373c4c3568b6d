"""BM25's score matrix: ours equals bm25s's own, to the bit."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest

from vitalrag.kernel.text import code_token_ids
from vitalrag.retrieve.sparse import SparseIndex

PACKAGE = Path(__file__).parents[2] / "vitalrag"


def _texts() -> list[str]:
    """Windows of this package's source, with repeats (as views repeat text) and a
    text with no tokens."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        out.extend("\n".join(lines[i:i + 30]) for i in range(0, len(lines), 15))
    return out + out[:50] + ["", "  -- ++ "]


def _bm25s(texts: list[str]) -> bm25s.BM25:
    vocab: dict[str, int] = {}
    memo: dict[str, tuple[int, ...]] = {}
    corpus = [code_token_ids(t, vocab, memo) or [vocab.setdefault("<empty>", len(vocab))] for t in texts]
    retriever = bm25s.BM25()
    retriever.index((corpus, vocab), show_progress=False)
    return retriever


@pytest.mark.parametrize("size", [1, 7, None])
def test_our_score_matrix_is_bm25s_to_the_bit(size):
    texts = _texts()[:size]
    ours, theirs = SparseIndex.build(texts)._bm25, _bm25s(texts)
    assert ours.vocab_dict == theirs.vocab_dict
    assert ours.scores["num_docs"] == theirs.scores["num_docs"] == len(texts)
    for key in ("data", "indices", "indptr"):
        assert ours.scores[key].dtype == theirs.scores[key].dtype, key
        assert np.array_equal(ours.scores[key], theirs.scores[key]), key


def test_search_ranks_as_bm25s_does(tmp_path):
    texts = _texts()
    ours = SparseIndex.build(texts)
    ours.save(tmp_path)
    loaded = SparseIndex.load(tmp_path, len(texts))
    theirs = SparseIndex(_bm25s(texts), len(texts))
    for query in ("graph store snapshot", "tokenize identifier parts", "allocate budget render", "zzz"):
        assert loaded.search(query, 20) == theirs.search(query, 20) == ours.search(query, 20)
    assert theirs.search("graph store snapshot", 20)


def test_a_document_rescored_from_the_statistics_scores_what_the_index_gives_it():
    """What a server does with its fulltext hits: the same scores, to the bit."""
    from vitalrag.kernel.text import code_tokens
    from vitalrag.retrieve.sparse import bm25_rescore

    texts = _texts()
    index = SparseIndex.build(texts)
    df, total = _counted(texts)
    docs = [code_tokens(t) for t in texts]
    for query in ("graph store snapshot store", "tokenize identifier parts", "allocate budget render", "zzz"):
        terms = code_tokens(query)
        rescored = bm25_rescore(terms, docs, df, len(texts), total)
        expected = dict(index.search(query, len(texts)))
        assert {i: s for i, s in enumerate(rescored) if s > 0} == expected, query



def _counted(texts: list[str]) -> tuple[dict[str, int], int]:
    """Document frequencies and total length, counted the plain way."""
    from collections import Counter

    from vitalrag.kernel.text import code_tokens

    docs = [code_tokens(t) for t in texts]
    df = Counter(term for d in docs for term in set(d))
    return dict(df), sum(len(d) or 1 for d in docs)


def test_statistics_of_some_documents_read_off_the_index_equal_theirs_counted(tmp_path):
    import numpy as np

    texts = _texts()
    some = np.arange(0, len(texts), 3)
    built = SparseIndex.build(texts)
    built.save(tmp_path)
    for index in (built, SparseIndex.load(tmp_path, len(texts))):
        assert index.statistics(some) == _counted([texts[i] for i in some])
        assert index.statistics(np.arange(len(texts))) == _counted(texts)
    (tmp_path / "lengths.npy").unlink()  # a snapshot saved before lengths were kept
    assert SparseIndex.load(tmp_path, len(texts)).statistics(some) is None
