"""The same sentence-transformers model, run by onnxruntime on the CPU.

A model made of a Transformer, a mean (or CLS) Pooling and optionally a
Normalize module (all-MiniLM-L6-v2, and most sentence-transformers models) is
exported once to ONNX with torch, cached beside the model files (or under
``~/.cache/vitalrag/onnx`` when that folder is read-only), and then encoded by
onnxruntime with the model's own fast tokenizer: texts are tokenized once,
sorted by length and batched, so a batch pads to its own longest text, not to
the longest of all. The vectors are the torch model's (fp32, the same graph:
cosine 1.0000 on this repository's views); what changes is the runtime around
it, which on a 2-core CPU is about twice as fast (``bench/embed.py``).

``+int8`` (``all-MiniLM-L6-v2+int8``) runs a dynamically quantised copy of the
export (int8 weights of the matrix products, made once from the fp32 export by
``onnxruntime.quantization`` and cached beside it): faster again, with vectors
close to, but not the same as, the fp32 model's, so it is a model name of its own.

Nothing is downloaded: the export reads the local model files, and a model
that cannot be exported (another architecture, no torch) is encoded by
sentence-transformers as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vitalrag.kernel.files import replacing
from vitalrag.kernel.progress import Progress

log = logging.getLogger(__name__)

#: the export's format version: a change makes every cached export stale
EXPORT_VERSION = 1
BATCH = 32

_SESSIONS: dict[str, Any] = {}
_LOCK = threading.Lock()


class NotExportable(Exception):
    """A model folder this module cannot run (the caller falls back to torch)."""


def pooling_of(model_dir: Path) -> tuple[str, bool, int]:
    """(pooling mode, normalised, max_seq_length) of a sentence-transformers folder."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text())
    except (OSError, ValueError) as exc:
        raise NotExportable(f"{model_dir}: no readable modules.json ({exc})") from exc
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        raise NotExportable(f"{model_dir}: modules {kinds} are not Transformer, Pooling[, Normalize]")
    pool_dir = model_dir / modules[1].get("path", "1_Pooling")
    try:
        pool = json.loads((pool_dir / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise NotExportable(f"{pool_dir}: no readable pooling config ({exc})") from exc
    modes = [k for k, v in pool.items() if k.startswith("pooling_mode_") and v is True]
    if modes == ["pooling_mode_mean_tokens"]:
        mode = "mean"
    elif modes == ["pooling_mode_cls_token"]:
        mode = "cls"
    else:
        raise NotExportable(f"{pool_dir}: pooling {modes} is not mean or cls")
    try:
        seq = int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError):
        seq = 256
    if not (model_dir / "tokenizer.json").is_file():
        raise NotExportable(f"{model_dir}: no tokenizer.json (a fast tokenizer is needed)")
    return mode, "Normalize" in kinds, seq


def _digest(model_dir: Path) -> str:
    """Names the model's files by content: size and the first and last MiB of each weight file."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    for p in sorted(model_dir.glob("*")):
        if p.is_file() and p.suffix in (".json", ".safetensors", ".bin", ".txt"):
            h.update(p.name.encode())
            size = p.stat().st_size
            h.update(str(size).encode())
            with p.open("rb") as fh:
                h.update(fh.read(1 << 20))
                if size > 2 << 20:
                    fh.seek(-(1 << 20), os.SEEK_END)
                    h.update(fh.read())
    return h.hexdigest()[:16]


def export_path(model_dir: Path) -> Path:
    """Where the export of ``model_dir`` lives: beside the model when that folder is
    writable, else in the user's cache."""
    name = f"vitalrag-{_digest(model_dir)}.onnx"
    beside = model_dir / "onnx"
    if (beside / name).is_file() or os.access(model_dir, os.W_OK):
        return beside / name
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vitalrag" / "onnx"
    return cache / name


def quantized_path(fp32: Path) -> Path:
    """Where the int8 copy of the export ``fp32`` lives (beside it)."""
    return fp32.with_name(fp32.stem + "-int8.onnx")


def quantize(fp32: Path, dest: Path) -> None:
    """Dynamically quantise the export ``fp32`` (int8 weights for MatMul, one scale
    per output channel; activations quantised per call) to ``dest``, atomically.
    Per channel matters: one scale per tensor gave vectors at cosine 0.95 from the
    fp32 ones on this repository's views, per channel 0.994."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process the model goes to the root logger
    try:
        with replacing(dest) as tmp:
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"])
    finally:
        root.setLevel(level)
    log.info("quantised %s to %s", fp32, dest)


def export(model_dir: Path, dest: Path) -> None:
    """Trace the model's transformer (input ids, mask, token types -> token states)
    to ``dest`` with torch, atomically."""
    # the CLI draws its own progress: keep the libraries' bars and chatter off stderr
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise NotExportable(f"exporting to ONNX needs torch and sentence-transformers ({exc})") from exc
    hf_logging.disable_progress_bar()
    st = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    inner: Any = st[0].auto_model
    # the eager attention traces the padding mask into the graph; sdpa's fast path
    # (no mask when nothing is padded) would trace it out
    inner.config._attn_implementation = "eager"

    class Tokens(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    tokenize = getattr(st, "preprocess", None) or st.tokenize  # renamed in sentence-transformers 5
    sample = tokenize(["def f(x): return x", "a longer text, so that the batch is padded: class A"])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    args = tuple(sample.get(n, torch.zeros_like(sample["input_ids"])) for n in names)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with replacing(dest) as tmp, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's warnings are about shapes it keeps dynamic
        torch.onnx.export(Tokens().eval(), args, str(tmp), input_names=names,
                          output_names=["tokens"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "tokens"]})
    log.info("exported %s to %s", model_dir, dest)


class OnnxEmbedder:
    """A sentence-transformers model folder encoded by onnxruntime (see the module
    docstring). ``name`` is the model's name, with ``@N`` when a sequence length
    other than the model's own is asked for and ``+int8`` when quantised (the
    vectors then differ)."""

    def __init__(self, model_dir: str | Path, name: str, *, max_seq_length: int | None = None,
                 int8: bool = False, batch_size: int = BATCH) -> None:
        self.dir = Path(model_dir)
        self.mode, self.normalise, own = pooling_of(self.dir)
        self.max_seq_length = max_seq_length or own
        self.int8 = int8
        self.name = (name if self.max_seq_length == own else f"{name}@{self.max_seq_length}") + (
            "+int8" if int8 else "")
        self.batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._dim: int | None = None

    def _load(self) -> Any:
        if self._session is None:
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise NotExportable(f"the ONNX backend needs onnxruntime and tokenizers ({exc})") from exc
            fp32 = export_path(self.dir)
            path = quantized_path(fp32) if self.int8 else fp32
            with _LOCK:
                if str(path) not in _SESSIONS:
                    if not fp32.is_file() and not path.is_file():
                        export(self.dir, fp32)
                    if not path.is_file():
                        quantize(fp32, path)
                    options = ort.SessionOptions()
                    options.log_severity_level = 3
                    # the intra-op threads sleep when idle instead of spinning: spinning, each
                    # query's encode (5 ms) cost 55 ms of CPU, against 9 ms without (2 cores,
                    # 50 ms between queries), CPU that a serve process's other calls and a
                    # local Neo4j lacked; bulk encoding ran at the same rate either way
                    # (25 texts/s, three runs each)
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    _SESSIONS[str(path)] = ort.InferenceSession(str(path), options,
                                                                providers=["CPUExecutionProvider"])
                self._session = _SESSIONS[str(path)]
            tok = Tokenizer.from_file(str(self.dir / "tokenizer.json"))
            tok.no_padding()
            tok.enable_truncation(self.max_seq_length)
            self._tokenizer = tok
            self._inputs = {i.name for i in self._session.get_inputs()}
        return self._session

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.encode(["x"]).shape[1])
        return self._dim

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        session = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encs = self._tokenizer.encode_batch(list(texts))
        # texts that agree up to the truncation are one input: a long body and its first
        # slice (3-8% of the tokens an index encodes, on the corpora of context_quality.py)
        first: dict[tuple[int, ...], int] = {}
        same = np.array([first.setdefault(tuple(e.ids), i) for i, e in enumerate(encs)])
        unique = np.flatnonzero(same == np.arange(len(encs)))
        order = unique[np.argsort([len(encs[j].ids) for j in unique], kind="stable")]
        out: np.ndarray | None = None
        done = 0
        # batches of similar lengths (a batch pads to its longest), run short and long in
        # turn: the texts done then grow about evenly with the time spent, so a progress
        # bar's rate and time left hold (shortest first, the first half went in seconds)
        starts = list(range(0, len(order), self.batch_size))
        for start in [starts[k // 2] if k % 2 == 0 else starts[-1 - k // 2] for k in range(len(starts))]:
            idx = order[start:start + self.batch_size]
            width = max(len(encs[j].ids) for j in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, j in enumerate(idx):
                e = encs[j]
                ids[row, :len(e.ids)] = e.ids
                mask[row, :len(e.ids)] = 1
                types[row, :len(e.ids)] = e.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            tokens = session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            if self.mode == "mean":
                m = mask[:, :, None].astype(np.float32)
                vec = (tokens * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            else:
                vec = tokens[:, 0]
            if self.normalise:
                vec = vec / np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
            if out is None:
                out = np.zeros((len(texts), vec.shape[1]), dtype=np.float32)
            out[idx] = vec
            done += len(idx)
            if progress:
                progress("embed", done, len(order))
        assert out is not None
        return out[same]


__all__ = ["NotExportable", "OnnxEmbedder", "export", "export_path", "pooling_of", "quantize",
           "quantized_path"]
