"""Per-file extraction results kept between runs, so a re-index parses only
files whose content changed.

Layout (inside the index folder)::

    facts/<repo>/manifest.json   {"version", "files": {path: {"hash", "language", "entry"}}}
    facts/<repo>/<entry>.pickle  the FileFacts of one file as extraction returned it

The pickles are a private cache of derived data that only VitalRAG writes and
reads, in the user's own index folder; the graph itself is JSON. A missing or
unreadable entry, or a manifest from another VitalRAG version, only means that
file is parsed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from vitalrag import __version__
from vitalrag.ingest.facts import FileFacts

log = logging.getLogger(__name__)

#: bump when extraction output changes shape or meaning
FACTS_VERSION = f"{__version__}/5"


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class FactsCache:
    def __init__(self, folder: str | os.PathLike[str], repo: str) -> None:
        self.folder = Path(folder) / repo
        self.files: dict[str, dict[str, Any]] = {}
        manifest = self.folder / "manifest.json"
        try:
            data = json.loads(manifest.read_text())
            if data.get("version") == FACTS_VERSION:
                self.files = dict(data["files"])
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring unreadable facts cache %s: %s", manifest, exc)

    @staticmethod
    def _entry(path: str) -> str:
        return hashlib.blake2b(path.encode(), digest_size=10).hexdigest()

    def get(self, path: str, digest: str, language: str) -> FileFacts | None:
        """The cached facts of ``path`` if its content is unchanged."""
        info = self.files.get(path)
        if not info or info["hash"] != digest or info["language"] != language:
            return None
        try:
            with (self.folder / f"{info['entry']}.pickle").open("rb") as fh:
                stored_digest, facts = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
                TypeError, ValueError) as exc:
            log.warning("re-parsing %s: cached facts unreadable (%s)", path, exc)
            return None
        # the entry must be of this very content (a run may have died after writing it)
        if stored_digest != digest or not isinstance(facts, FileFacts) or facts.path != path:
            return None
        return facts

    def put(self, path: str, digest: str, facts: FileFacts) -> None:
        write_entry(self.folder, path, digest, facts)
        self.record(path, digest, facts.language)

    def record(self, path: str, digest: str, language: str) -> None:
        """Enter a file whose entry was written (by ``write_entry``, e.g. in a parse
        worker) in the manifest that ``save`` writes."""
        self.files[path] = {"hash": digest, "language": language, "entry": self._entry(path)}

    def save(self, keep: set[str]) -> None:
        """Write the manifest for the files in ``keep`` and drop the others' entries."""
        for path in [p for p in self.files if p not in keep]:
            info = self.files.pop(path)
            (self.folder / f"{info['entry']}.pickle").unlink(missing_ok=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump({"version": FACTS_VERSION, "files": self.files}, fh)
        os.replace(tmp, self.folder / "manifest.json")


def write_entry(folder: Path, path: str, digest: str, facts: FileFacts) -> None:
    """Write the cached facts of one file (atomically); ``FactsCache.record``
    then enters it in the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        pickle.dump((digest, facts), fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, folder / f"{FactsCache._entry(path)}.pickle")
