"""Each retriever, fusion, re-encoding only what changed, and bad input."""

from __future__ import annotations

import logging
import shutil

import numpy as np
import pytest

from vitalrag.errors import InputError
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import DenseUnavailable, Retriever
from vitalrag.retrieve.dense import ModelLoadError, SentenceTransformerEmbedder
from vitalrag.retrieve.fusion import rrf
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.retrievers import Fusion
from vitalrag.retrieve.views import embeds

from tests_support import FIXTURES, CountingEmbedder


@pytest.fixture
def retriever(pyr_store, tmp_path):
    emb = CountingEmbedder()
    index, _ = RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=emb)
    return Retriever(pyr_store, RetrievalIndex.load(pyr_store.folder), emb)


def _objects(hits):
    return [h.view.object_id for h in hits]


def test_bm25_finds_by_identifier_parts(retriever):
    hits = retriever.search("deep fn", retriever="bm25", k=3)
    assert "pyr:pkg/sub/deep.py:deep_fn" in _objects(hits)
    assert [h.retrievers for h in hits] == [(("bm25", 1),), (("bm25", 2),), (("bm25", 3),)]
    assert all(h.score > 0 for h in hits) and hits[0].score >= hits[-1].score


def test_dense_with_a_deterministic_embedder(retriever):
    hits = retriever.search("def slugify(text)", retriever="dense", k=3)
    assert "pyr:pkg/helpers.py:slugify" in _objects(hits)


def test_walk_from_named_objects_and_file_line(retriever):
    hits = retriever.search("what does prepare do", retriever="walk", k=5)
    assert hits[0].view.object_id == "pyr:pkg/core.py:Engine.prepare" and hits[0].score == 1.0
    assert "pyr:pkg/base.py:Base.setup" in _objects(hits)  # one CALLS hop
    hits = retriever.search("complete this", retriever="walk", file="pkg/core.py", line=34, k=20)
    assert hits[0].view.object_id == "pyr:pkg/core.py:Runner.go"
    scores = {h.view.object_id: h.score for h in hits}
    assert scores["pyr:pkg/core.py:helper_local"] == 0.5           # Runner.go CALLS it
    assert scores["pyr:pkg/base.py:Base"] == 0.8                   # the file imports it


def test_fused_keeps_each_retrievers_rank(retriever):
    hits = retriever.search("slugify", k=5)
    top = hits[0]
    assert top.view.object_id == "pyr:pkg/helpers.py:slugify"
    assert {name for name, _ in top.retrievers} == {"bm25", "walk", "dense"}


def test_rrf_by_hand():
    fused = rrf({"a": ["x", "y"], "b": ["y", "z"]}, k=60)
    assert [i for i, _, _ in fused] == ["y", "x", "z"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0][2] == (("a", 2), ("b", 1))
    weighted = rrf({"a": ["x"], "b": ["z"]}, weights={"a": 0.5}, k=60)
    assert [i for i, _, _ in weighted] == ["z", "x"]


def test_reindex_after_one_file_change_encodes_only_that_file(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    emb = CountingEmbedder()
    index_repository(repo, store, name="r", workers=1)
    _, first = RetrievalIndex.build(store, store.folder, embedder=emb)
    assert first.encoded == emb.encoded > 0
    emb.encoded = 0
    index_repository(repo, store, name="r", workers=1)
    _, again = RetrievalIndex.build(store, store.folder, embedder=emb)
    assert again.encoded == emb.encoded == 0  # nothing changed, nothing encoded
    (repo / "pkg" / "util.py").write_text("def tool():\n    return 43\n")
    index_repository(repo, store, name="r", workers=1)
    _, third = RetrievalIndex.build(store, store.folder, embedder=emb)
    changed = {v.content_hash for v in RetrievalIndex.load(store.folder).views if v.path == "pkg/util.py"}
    assert 0 < third.encoded == emb.encoded <= len(changed)


def test_going_back_to_an_earlier_state_encodes_nothing(tmp_path):
    """The cache keeps the vectors a re-index dropped (up to as many as the index
    holds): an edit undone, or an older commit indexed again, is not re-embedded."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    emb = CountingEmbedder()
    util = repo / "pkg" / "util.py"
    original = util.read_text()
    index_repository(repo, store, name="r", workers=1)
    RetrievalIndex.build(store, store.folder, embedder=emb)
    util.write_text("def tool():\n    return 43\n")
    index_repository(repo, store, name="r", workers=1)
    _, edited = RetrievalIndex.build(store, store.folder, embedder=emb)
    assert edited.encoded > 0
    util.write_text(original)
    index_repository(repo, store, name="r", workers=1)
    _, back = RetrievalIndex.build(store, store.folder, embedder=emb)
    assert back.encoded == 0
    cached = np.load(next((store.folder / "embeddings").glob("*.npz")))["hashes"]
    assert len(cached) <= 2 * len({v.content_hash for v in RetrievalIndex.load(store.folder).views})


def test_a_second_model_encodes_every_view_again(pyr_store):
    """Cached vectors belong to the model that made them: another model's index
    is never built from them, and each model keeps its own cache."""
    first, second = CountingEmbedder(dim=64), CountingEmbedder(dim=32)
    RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=first)
    _, stats = RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=second)
    index = RetrievalIndex.load(pyr_store.folder)
    distinct = {v.content_hash for v in index.views if embeds(v)}
    assert stats.encoded == second.encoded == len(distinct) > 0
    assert index.model == "hashing-32" and index.dense is not None and index.dense.dim == 32
    first.encoded = 0
    _, back = RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=first)
    assert back.encoded == first.encoded == 0


def test_index_without_embeddings(pyr_store, caplog):
    RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=None)
    r = Retriever(pyr_store, RetrievalIndex.load(pyr_store.folder))
    with pytest.raises(DenseUnavailable, match="--no-embed"):
        r.search("slugify", retriever="dense")
    with caplog.at_level(logging.WARNING):
        hits = r.search("slugify", retriever="fused")
    assert hits and "no embeddings" in caplog.text


def test_empty_query_and_bad_arguments(retriever):
    with pytest.raises(InputError, match="empty query"):
        retriever.search("   ")
    with pytest.raises(InputError, match="unknown retriever"):
        retriever.search("engine", retriever="magic")
    with pytest.raises(InputError, match="not in the index"):
        retriever.search("x", file="nope.py")


@pytest.mark.parametrize("where", ["offline", "hub unreachable"])
def test_unloadable_model_names_the_model_and_the_default(monkeypatch, where):
    """Offline, or not in the cache with the hub unreachable: one clear error at
    once (not the hub client's minute of retries)."""
    for var in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    if where == "offline":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.setenv("HF_ENDPOINT", "https://hub.vitalrag-test.invalid")
    emb = SentenceTransformerEmbedder("no-such-org/no-such-model-xyz")
    with pytest.raises(ModelLoadError) as info:
        emb.encode(["x"])
    msg = str(info.value)
    assert "no-such-org/no-such-model-xyz" in msg and "all-MiniLM-L6-v2" in msg
    assert ("hub.vitalrag-test.invalid cannot be reached" in msg) == (where == "hub unreachable")


@pytest.mark.network
def test_real_packaged_model_end_to_end(tmp_path, packaged_model):
    """The offline all-MiniLM-L6-v2: a natural-language query finds the function."""
    from vitalrag.retrieve.dense import make_embedder

    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    emb = make_embedder(None)  # the default, which reuses the session's loaded model
    assert emb.name == packaged_model.name
    RetrievalIndex.build(store, store.folder, embedder=emb)
    r = Retriever(store, RetrievalIndex.load(store.folder), emb)
    hits = r.search("turn a piece of text into a lowercase dash separated url slug", retriever="dense", k=3)
    assert "pyr:pkg/helpers.py:slugify" in _objects(hits)


def test_same_file_scores_equal_the_pairwise_rule(pyr_store):
    """Grouping by file gives each peer the best score of another frontier object in its file."""
    from vitalrag.model import DEFINITION_KINDS
    from vitalrag.retrieve.walk import _same_file_scores

    defs = sorted(o.id for o in pyr_store.find_objects() if o.kind in DEFINITION_KINDS)
    # several frontier objects per file, with ties and distinct scores
    frontier = {node: 1.0 / (1 + i % 4) for i, node in enumerate(defs[::2])}
    expected: dict[str, float] = {}
    for node, peers in pyr_store.same_file(list(frontier)).items():
        for p in peers:
            expected[p] = max(expected.get(p, 0.0), frontier[node] * 0.5)
    assert len(frontier) > 3 and expected
    assert _same_file_scores(pyr_store, frontier, 0.5) == expected


def test_bm25_from_token_ids_ranks_as_bm25s_does_from_strings(tmp_path):
    """SparseIndex numbers tokens itself and tokenizes each distinct text once;
    the ranking and scores equal bm25s indexing the token strings, and a saved
    index loads back to the same results."""
    import bm25s
    import numpy as np

    from vitalrag.retrieve.sparse import SparseIndex
    from vitalrag.kernel.text import code_tokens

    texts = [p.read_text() for p in sorted((FIXTURES / "py_resolution").rglob("*.py"))]
    texts += [t.split("\n", 1)[0] for t in texts] + texts[:2] + ["", "    # nothing to see"]
    ours = SparseIndex.build(texts)
    ref = bm25s.BM25()
    ref.index([code_tokens(t) or ["<empty>"] for t in texts], show_progress=False)
    theirs = SparseIndex(ref, len(texts), ours.lengths)
    ours.save(tmp_path / "bm25")
    loaded = SparseIndex.load(tmp_path / "bm25", len(texts))
    assert len(theirs.search("engine run", 10)) > 1
    for query in ["engine run", "helper", "Engine(name)", "util format value", "nothing", "xyz_unknown"]:
        expected = theirs.search(query, 10)
        for got in (ours.search(query, 10), loaded.search(query, 10)):
            assert [d for d, _ in got] == [d for d, _ in expected], query
            assert np.allclose([s for _, s in got], [s for _, s in expected]), query


def test_kinds_not_embedded_are_never_dense_hits(pyr_store, monkeypatch):
    """Only ``EMBEDDED_KINDS`` outside test files are encoded; the dense index still
    spans every view (zero rows for the others, as a push writes them), survives a
    reload, and its hits name the right views."""
    from vitalrag.retrieve import views as views_mod

    monkeypatch.setattr(views_mod, "EMBEDDED_KINDS", frozenset({"body", "signature"}))
    emb = CountingEmbedder()
    _, stats = RetrievalIndex.build(pyr_store, pyr_store.folder, embedder=emb)
    index = RetrievalIndex.load(pyr_store.folder)
    kept = [i for i, v in enumerate(index.views)
            if v.kind in ("body", "signature") and not v.path.startswith("tests/")]
    assert 0 < len(kept) < len(index.views)
    assert any(v.kind == "body" and v.path.startswith("tests/") for v in index.views)  # a test, not embedded
    assert stats.encoded == emb.encoded == len({index.views[i].content_hash for i in kept})
    dense = index.dense
    assert dense is not None and dense.views == len(index.views) and dense.size <= len(kept)
    rows = dense.vectors()
    assert rows.shape == (len(index.views), 64)
    assert not rows[[i for i in range(len(index.views)) if i not in set(kept)]].any()
    r = Retriever(pyr_store, index, emb)
    hits = r.search("def slugify(text)", retriever="dense", k=len(index.views))
    assert hits and {h.view.kind for h in hits} == {"body", "signature"}
    assert not any(h.view.path.startswith("tests/") for h in hits)
    # each hit is the view whose own vector scored it
    for h in hits[:5]:
        pos = index.by_id[h.view.id]
        assert h.score == pytest.approx(float(rows[pos] @ emb.encode(["def slugify(text)"])[0]), abs=1e-5)


def test_every_vector_is_on_disk_once(tmp_path):
    """The live snapshot holds its views' vectors; the cache only those it does
    not (an earlier state's, and zero vectors), so the folder holds each once."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    emb = CountingEmbedder()
    for text in ("def tool():\n    return 41\n", "def tool():\n    return 42\n"):
        (repo / "pkg" / "util.py").write_text(text)
        index_repository(repo, store, name="r", workers=1)
        RetrievalIndex.build(store, store.folder, embedder=emb)
    index = RetrievalIndex.load(store.folder)
    assert index.dense is not None and index.dense.hashes is not None
    in_snapshot = set(index.dense.hashes.tolist())
    cached = set(np.load(next((store.folder / "embeddings").glob("*.npz")))["hashes"].tolist())
    assert in_snapshot and cached and not in_snapshot & cached


@pytest.mark.parametrize("args, message", [
    (("  ",), "empty query"),
    (("q", None, 3), "a line needs a file"),
    (("q", "pkg/core.py", 0), "line must be >= 1"),
])
def test_a_query_is_checked_when_made(args, message):
    with pytest.raises(InputError, match=message):
        Query.of(*args)


def test_each_retriever_is_a_view_retriever_and_fusion_is_one_over_them(retriever):
    query = Query.of("slugify a text")
    scope = retriever.scope(query)
    parts = [retriever.ranker(name) for name in ("bm25", "walk", "dense")]
    assert [p.name for p in parts] == ["bm25", "walk", "dense"]
    fused = Fusion(parts).rank(query, scope, 5)
    assert fused == retriever.ranker("fused").rank(query, scope, 5)
    with pytest.raises(InputError, match="unknown retriever"):
        retriever.ranker("grep")


def test_a_query_takes_a_path_as_its_file(tmp_path):
    assert Query.of("q", tmp_path / "a.py", 3).file == str(tmp_path / "a.py")


def test_a_repository_filter_gives_the_unfiltered_ranking_of_its_views(tmp_path):
    """``--repo`` in an embedded store of several repositories: the allowed views
    in the order the whole index ranks them, however far down they sit (the
    filter is a mask: BM25 and FAISS look at nothing else), ties included."""
    store = MemoryStore(tmp_path / "s")
    for name in ("a", "b", "c"):
        index_repository(FIXTURES / "py_resolution", store, name=name, workers=1)
    emb = CountingEmbedder()
    index, _ = RetrievalIndex.build(store, store.folder, embedder=emb)
    assert index.repos == {"a", "b", "c"}
    vector = emb.encode(["make an engine and run it"])[0]
    for allowed in (frozenset({"b"}), frozenset({"a", "c"})):
        for search in (lambda k, f: index.bm25("make an engine and run it", k, f),
                       lambda k, f: index.nearest(vector, k, f)):
            everything = search(len(index.views), None)
            expected = [(v.id, s) for v, s in everything if v.repo in allowed]
            for k in (1, 3, 10, len(index.views)):
                got = [(v.id, s) for v, s in search(k, allowed)]
                assert got == expected[:k], (allowed, k)
    assert index.bm25("zzzz", 5, frozenset({"b"})) == []
