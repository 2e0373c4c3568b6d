"""A static embedding model distilled from a local sentence-transformers model.

``--model static`` (``all-MiniLM-L6-v2+static``; ``FOLDER+static`` for another
local model) embeds a text as the normalised mean of its tokens' vectors: no
transformer runs at index or query time. The token vectors are made once by
model2vec's ``distill`` from the local model folder (nothing is downloaded): it
runs the transformer over every token of the model's vocabulary, reduces the
vectors to 256 dimensions with PCA and weights them by the tokens' Zipf rank
(SIF). The result is cached beside the ONNX export (``<model>/static/``, or under
``~/.cache/vitalrag/static`` when the model folder is read-only), named by the
model files' digest and this module's ``STATIC_VERSION``, so it is built at the
first use and then loaded in a fraction of a second.

The build is deterministic: two builds on one machine give the same bytes (the
forward pass runs in a fixed order, and the PCA is an eigendecomposition whose
signs are fixed). Building needs torch, transformers and skeletoken (the
``embed`` extra); encoding needs only model2vec, numpy and tokenizers.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vitalrag.kernel.files import replacing_dir
from vitalrag.kernel.progress import Progress
from vitalrag.retrieve.dense import ModelLoadError
from vitalrag.retrieve.onnx_embed import _digest

log = logging.getLogger(__name__)

#: the build's version: a change (another PCA size, another dtype, ...) makes every cached model stale
STATIC_VERSION = 1
PCA_DIMS = 256
#: texts per ``encode`` call of model2vec: paces the progress reports only
CHUNK = 2048
#: the files a built model must have (``save_pretrained`` also writes a model card)
FILES = ("model.safetensors", "tokenizer.json", "config.json")

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def static_path(model_dir: Path) -> Path:
    """Where the static model distilled from ``model_dir`` lives: beside the model
    (beside its ONNX export) when that folder is writable, else in the user's cache."""
    name = f"vitalrag-{_digest(model_dir)}-v{STATIC_VERSION}-pca{PCA_DIMS}"
    beside = model_dir / "static" / name
    if _complete(beside) or os.access(model_dir, os.W_OK):
        return beside
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vitalrag" / "static"
    return cache / name


def _complete(folder: Path) -> bool:
    return all((folder / f).is_file() for f in FILES)


def build(model_dir: Path, dest: Path) -> None:
    """Distill the model in ``model_dir`` into ``dest`` (a folder model2vec loads),
    atomically: a reader never finds half a model. A whole model found in ``dest``
    once the distillation is done (another process's, built meanwhile) is kept."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from functools import partial

        import model2vec.distill.inference as inference
        from model2vec.distill import distill
    except ImportError as exc:
        raise ModelLoadError(f"distilling a static model needs torch, transformers, model2vec and "
                               f"skeletoken: pip install 'vitalrag[embed]' ({exc})") from exc
    started = time.perf_counter()
    # its token loop draws a tqdm bar on stderr, over the CLI's own progress
    bar = inference.tqdm
    inference.tqdm = partial(bar, disable=True)
    try:
        # a local folder: transformers reads its files and model2vec asks no hub for a model card
        model = distill(str(model_dir), pca_dims=PCA_DIMS, quantize_to="float32")
    except Exception as exc:  # a folder transformers cannot load, a tokenizer it cannot rebuild
        raise ModelLoadError(f"cannot distill {model_dir}: {type(exc).__name__}: {exc}") from exc
    finally:
        inference.tqdm = bar
    if _complete(dest):  # another process built it meanwhile (the same bytes): keep its folder
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    with replacing_dir(dest) as tmp:
        model.save_pretrained(str(tmp), model_name=dest.name)
    log.info("distilled %s into %s in %.1fs", model_dir, dest, time.perf_counter() - started)


def _loaded(model_dir: Path) -> Any:
    """The static model of ``model_dir``, built first when it is not cached; one
    per process."""
    path = static_path(model_dir)
    with _LOCK:
        if str(path) not in _MODELS:
            if not _complete(path):
                log.warning("building the static embedding model from %s once (a minute or two on "
                            "2 cores); it is cached in %s", model_dir, path)
                build(model_dir, path)
            try:
                from model2vec import StaticModel
            except ImportError as exc:
                raise ModelLoadError(f"the static model needs model2vec: pip install 'vitalrag[embed]' "
                                       f"({exc})") from exc
            try:
                _MODELS[str(path)] = StaticModel.from_pretrained(path, force_download=False)
            except Exception as exc:  # damaged files: say which folder to remove
                raise ModelLoadError(f"cannot load the static model in {path} ({type(exc).__name__}: "
                                       f"{exc}); remove that folder to build it again") from exc
        return _MODELS[str(path)]


class StaticEmbedder:
    """Texts embedded by the static model distilled from ``model_dir`` (see the
    module docstring); ``name`` is the model's name in indexes and caches."""

    def __init__(self, model_dir: str | Path, name: str) -> None:
        self.dir = Path(model_dir)
        self.name = name
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            self._model = _loaded(self.dir)
        return self._model

    @property
    def path(self) -> Path:
        """Where the distilled model is (or will be) cached."""
        return static_path(self.dir)

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """L2-normalised float32 vectors; a text with no known token gets zeros."""
        model = self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), CHUNK):
            part = list(texts[start:start + CHUNK])
            # threads would only contend with the tokenizer's own on a small machine
            out[start:start + len(part)] = model.encode(part, use_multiprocessing=False)
            if progress:
                progress("embed", start + len(part), len(texts))
        return out


__all__ = ["PCA_DIMS", "STATIC_VERSION", "StaticEmbedder", "build", "static_path"]
