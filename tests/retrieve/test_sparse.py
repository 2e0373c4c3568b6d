"""BM25's score matrix: ours equals bm25s's own, to the bit; equal scores rank
in view order in BM25 and dense search alike."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest

from vitalrag.errors import StoreCorrupt
from vitalrag.kernel.text import code_token_ids, code_tokens
from vitalrag.retrieve.sparse import SparseIndex, top_k

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
    theirs = _bm25s(texts)
    for query in ("graph store snapshot", "tokenize identifier parts", "allocate budget render", "zzz"):
        found = ours.search(query, 20)
        assert loaded.search(query, 20) == found
        tokens = [t for t in code_tokens(query) if t in theirs.vocab_dict]
        if not tokens:
            assert found == []
            continue
        _, scores = theirs.retrieve([tokens], k=20, show_progress=False, n_threads=0)
        assert [s for _, s in found] == [float(s) for s in scores[0] if s > 0]
        # best first, equal scores in position order (bm25s leaves ties in any order)
        assert found == sorted(found, key=lambda ps: (-ps[1], ps[0]))
    assert ours.search("graph store snapshot", 20)


def test_equal_scores_rank_in_position_order_at_the_cut_too():
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.integers(0, 4, size=int(rng.integers(1, 40))).astype(np.float32)
        k = int(rng.integers(1, len(scores) + 2))
        expected = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        assert top_k(scores, k).tolist() == expected
    # copies of one text tie: the first copies are the ones kept
    index = SparseIndex.build(["alpha beta"] * 6 + ["alpha"] * 3 + ["gamma"])
    assert [p for p, _ in index.search("alpha beta", 4)] == [0, 1, 2, 3]
    assert [p for p, _ in index.search("alpha", 20)] == [6, 7, 8, 0, 1, 2, 3, 4, 5]  # shorter ones first


def test_equal_cosines_rank_in_view_order_at_the_cut_too():
    from vitalrag.retrieve.dense import DenseIndex

    a, b = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    # views 2..7 share one vector (copies of one text); view 1 has none; FAISS
    # returns equal scores in no set order
    rows = [b, np.zeros(4, np.float32), *[a] * 6, (a + b) / np.sqrt(2)]
    index = DenseIndex.build(np.stack(rows), "m")
    assert [p for p, _ in index.search(a, 3)] == [2, 3, 4]
    assert [p for p, _ in index.search(a, 8)] == [2, 3, 4, 5, 6, 7, 8, 0]
    # cosines equal to 5 decimals are ties (stores sum in different precisions)
    near = np.stack([a, a + 1e-7 * b, a])
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    assert [p for p, _ in DenseIndex.build(near, "m").search(a, 2)] == [0, 1]


def test_a_document_rescored_from_the_statistics_scores_what_the_index_gives_it():
    """What a server does with its fulltext hits: the same scores, to the bit."""
    from vitalrag.kernel.text import code_tokens
    from vitalrag.retrieve.sparse import bm25_rescore

    texts = _texts()
    index = SparseIndex.build(texts)
    df, total = _counted(texts)
    docs = [" ".join(code_tokens(t)) for t in texts]  # search texts
    for query in ("graph store snapshot store", "tokenize identifier parts", "allocate budget render", "zzz"):
        terms = code_tokens(query)
        rescored = bm25_rescore(terms, docs, df, len(texts), total)
        expected = dict(index.search(query, len(texts)))
        assert {i: s for i, s in enumerate(rescored) if s > 0} == expected, query
    # neighbouring repeats each count (the text's spaces are shared between them)
    repeats = ["store store store", "store graph store", "graph"]
    index = SparseIndex.build(repeats)
    rescored = bm25_rescore(["store"], repeats, {"store": 2, "graph": 2}, 3, 7)
    assert dict(index.search("store", 3)) == {0: rescored[0], 1: rescored[1]} and rescored[2] == 0
    assert rescored[0] > rescored[1]  # three of three against two of three



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
    (tmp_path / "lengths.npy").unlink()  # part of the snapshot: without it, damaged
    with pytest.raises(StoreCorrupt, match="lengths.npy"):
        SparseIndex.load(tmp_path, len(texts))
