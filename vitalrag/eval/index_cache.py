"""Per-corpus indexes for evaluation, cached so reruns skip ingest.

An evaluation indexes each corpus into its own embedded store under
``$VITALRAG_CACHE/eval-index/<name>-<key>/``. The key hashes the repository
name, every file's path, size and mtime, and the source of the ingest code
that produced the graph, so an edited corpus or a changed extractor gets a
fresh index instead of a stale one. The retrieval index (for the end-to-end
``retrieved`` pool) is built in the same folder on first use, per embedder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from vitalrag.errors import InputError
from vitalrag.eval.corpora import cache_root
from vitalrag.kernel.files import replacing_dir
from vitalrag.graph.memory import graph_path
from vitalrag.graph.store import GraphStore, open_store
from vitalrag.graph.version import is_index
from vitalrag.kernel.progress import Progress
from vitalrag.model import SCHEMA_VERSION

if TYPE_CHECKING:
    from vitalrag.index import Index
    from vitalrag.ingest.parallel import ParseExecutor
    from vitalrag.retrieve.dense import Embedder

log = logging.getLogger(__name__)


def index_cache_root() -> Path:
    return cache_root().parent / "eval-index"


def _code_digest() -> str:
    """The ingest code and data model: a change there invalidates cached graphs."""
    import vitalrag

    base = Path(vitalrag.__file__).parent
    h = hashlib.sha256(str(SCHEMA_VERSION).encode())
    for p in sorted([base / "model.py", *(base / "ingest").rglob("*.py"), *(base / "ingest").rglob("*.scm")]):
        h.update(p.relative_to(base).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def corpus_key(root: Path, name: str) -> str:
    h = hashlib.sha256(name.encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            try:
                st = p.stat()
            except OSError:
                continue
            h.update(f"{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    h.update(_code_digest().encode())
    return h.hexdigest()[:16]


def corpus_store(root: str | os.PathLike[str], name: str, *, cache: Path | None = None,
                 workers: int | None = None, progress: Progress | None = None,
                 executor: ParseExecutor | None = None) -> GraphStore:
    """The graph of the repository at ``root`` named ``name``, from the cache or
    freshly indexed into it (written to a temporary folder, then renamed);
    ``workers`` and ``executor`` as for ``index_repository``."""
    from vitalrag.ingest import index_repository

    src = Path(root)
    if not src.is_dir():
        raise InputError(f"corpus folder {src} does not exist (fetch it again with `vitalrag eval corpus fetch`)")
    base = cache or index_cache_root()
    folder = base / f"{name}-{corpus_key(src, name)}"
    if graph_path(folder) is not None:
        log.info("using the cached index of %s at %s", name, folder)
        return open_store(folder, create=False)
    base.mkdir(parents=True, exist_ok=True)
    with replacing_dir(folder, temp_prefix=f".{name}-") as tmp:
        index_repository(src, open_store(tmp), name=name, workers=workers, progress=progress,
                         executor=executor)
        for old in base.glob(f"{name}-*"):  # earlier keys of this corpus are stale now
            # only the cache's own indexes: a folder it did not write stays
            if (old != folder and re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", old.name)
                    and not old.is_symlink() and is_index(old)):
                shutil.rmtree(old, ignore_errors=True)
    return open_store(folder, create=False)


def corpus_index(store: GraphStore, model: str | None, *,
                 progress: Progress | None = None) -> tuple[Index, Embedder]:
    """The index of a cached corpus store: the store and the retrieval index beside
    it, built for ``model`` (the real default model, as ``vitalrag index`` uses,
    when None) unless one for that model is already there; and the embedder."""
    from vitalrag.errors import StoreNotFound
    from vitalrag.index import Index
    from vitalrag.retrieve.dense import make_embedder

    embedder = make_embedder(model)
    try:
        index = Index.open(store.location, mode="serve")
        if index.views.model == embedder.name:
            return index, embedder
        index.close()
    except StoreNotFound:
        pass
    with Index.open(store.location, mode="write") as writing:
        writing.rebuild_views(embedder, progress=progress)
    return Index.open(store.location, mode="serve"), embedder
