"""Fetch real repositories into a cache: PyPI sdists and Maven sources jars.

Specs::

    pypi:requests==2.32.3              the sdist, via ``pip download --no-binary :all:``
    maven:org.jsoup:jsoup:1.18.1       the ``-sources.jar`` from Maven Central
    /some/local/path                   used as it is

Each fetched archive is unpacked once under ``$VITALRAG_CACHE/corpora`` (default
``~/.cache/vitalrag/corpora``) beside a ``manifest.json`` recording its sha256,
and later fetches reuse it. Third-party code is never committed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from vitalrag.errors import InputError, VitalRAGError
from vitalrag.kernel.files import replacing_dir

log = logging.getLogger(__name__)

MAVEN_CENTRAL = os.environ.get("VITALRAG_MAVEN_URL", "https://repo1.maven.org/maven2")


class FetchError(VitalRAGError):
    """A corpus could not be downloaded or unpacked."""


@dataclass(frozen=True, slots=True)
class Corpus:
    spec: str
    name: str  # repository name used in the index
    path: Path  # the unpacked source root
    sha256: str


def cache_root() -> Path:
    base = os.environ.get("VITALRAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vitalrag")
    return Path(base) / "corpora"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _safe_extract(archive: Path, dest: Path) -> None:
    """Unpack without letting a member escape ``dest``."""
    dest_resolved = dest.resolve()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if not (dest / member).resolve().is_relative_to(dest_resolved):
                    raise FetchError(f"{archive.name}: member {member!r} escapes the archive")
            zf.extractall(dest)
        return
    with tarfile.open(archive) as tf:
        tf.extractall(dest, filter="data")


def fetch(spec: str, cache: Path | None = None) -> Corpus:
    """Make the source of ``spec`` available locally and return where it is."""
    if spec.startswith("pypi:"):
        return _fetch_pypi(spec, cache or cache_root())
    if spec.startswith("maven:"):
        return _fetch_maven(spec, cache or cache_root())
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise InputError(f"corpus {spec!r}: not a folder, nor a pypi:NAME==VERSION or maven:G:A:V spec")
    root = path.resolve()
    return Corpus(spec=spec, name=folder_name(root), path=root, sha256="")


#: folder names that say where sources are, not whose they are
_GENERIC_FOLDERS = frozenset({"src", "source", "sources", "java", "main", "lib", "python"})


def folder_name(root: Path) -> str:
    """The repository name of a local folder: the corpus name its cache manifest
    records (a fetched sources jar unpacks into ``.../<group.artifact-version>/src``),
    else the folder's name, or its parent's when the folder is only ``src``."""
    for up in (root, *root.parents[:3]):
        manifest = up / "manifest.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text())
                if (up / data["root"]).resolve() == root:
                    return str(data["name"])
            except (ValueError, KeyError, OSError):
                pass
            break
    if root.name.lower() in _GENERIC_FOLDERS and root.parent != root:
        return root.parent.name
    return root.name


def _version(spec: str) -> str:
    if spec.startswith("pypi:") and "==" in spec:
        return spec.split("==", 1)[1]
    if spec.startswith("maven:"):
        return spec.rsplit(":", 1)[-1]
    return ""


def unique_names(corpora: list[Corpus]) -> list[str]:
    """One repository name per corpus, never two alike: a name shared by several
    corpora gets the version of its spec (``commons-io-2.18.0``), else its
    parent folder's name, else a counter."""
    count: dict[str, int] = {}
    for c in corpora:
        count[c.name] = count.get(c.name, 0) + 1
    out: list[str] = []
    for c in corpora:
        name = c.name
        if count[name] > 1:
            version = _version(c.spec)
            name = f"{name}-{version}" if version else f"{c.path.parent.name}-{name}"
        base, n = name, 2
        while name in out:
            name, n = f"{base}-{n}", n + 1
        out.append(name)
    return out


def _cached(dest: Path, spec: str) -> Corpus | None:
    manifest = dest / "manifest.json"
    if manifest.is_file():
        data = json.loads(manifest.read_text())
        return Corpus(spec=spec, name=data["name"], path=dest / data["root"], sha256=data["sha256"])
    return None


def _finish(dest: Path, spec: str, name: str, archive: Path) -> Corpus:
    digest = _sha256(archive)
    with replacing_dir(dest, temp_prefix=".unpack-") as tmp:
        _safe_extract(archive, tmp / "src")
        entries = [p for p in (tmp / "src").iterdir()]
        # sdists unpack to one NAME-VERSION folder; jars unpack flat
        root = entries[0].relative_to(tmp) if len(entries) == 1 and entries[0].is_dir() else Path("src")
        (tmp / "manifest.json").write_text(json.dumps(
            {"spec": spec, "name": name, "root": str(root), "sha256": digest, "archive": archive.name},
            indent=2))
    corpus = _cached(dest, spec)
    assert corpus is not None
    return corpus


def _fetch_pypi(spec: str, cache: Path) -> Corpus:
    req = spec[len("pypi:"):]
    if "==" not in req:
        raise InputError(f"corpus {spec!r}: pin a version, e.g. pypi:requests==2.32.3")
    name, version = req.split("==", 1)
    dest = cache / "pypi" / f"{name}-{version}"
    hit = _cached(dest, spec)
    if hit:
        return hit
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmpdir:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
               "-q", "-d", tmpdir, f"{name}=={version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        files = list(Path(tmpdir).iterdir())
        if proc.returncode != 0 or not files:
            raise FetchError(f"cannot download {spec}: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
        return _finish(dest, spec, name, files[0])


def _fetch_maven(spec: str, cache: Path) -> Corpus:
    parts = spec[len("maven:"):].split(":")
    if len(parts) != 3 or not all(parts):
        raise InputError(f"corpus {spec!r}: expected maven:GROUP:ARTIFACT:VERSION")
    group, artifact, version = parts
    dest = cache / "maven" / f"{group}.{artifact}-{version}"
    hit = _cached(dest, spec)
    if hit:
        return hit
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = f"{MAVEN_CENTRAL}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}-sources.jar"
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmpdir:
        archive = Path(tmpdir) / f"{artifact}-{version}-sources.jar"
        try:
            with urllib.request.urlopen(url, timeout=120) as resp, archive.open("wb") as out:
                shutil.copyfileobj(resp, out)
        except (urllib.error.URLError, OSError) as exc:
            raise FetchError(f"cannot download {spec} from {url}: {exc}") from exc
        return _finish(dest, spec, artifact, archive)


#: the named development corpora (``vitalrag eval corpus fetch dev`` fetches all)
DEV_CORPORA: dict[str, str] = {
    "requests": "pypi:requests==2.32.3",
    "click": "pypi:click==8.1.7",
    "flask": "pypi:flask==3.1.0",
    "jsoup": "maven:org.jsoup:jsoup:1.18.1",
    "commons-csv": "maven:org.apache.commons:commons-csv:1.12.0",
    "commons-io": "maven:commons-io:commons-io:2.18.0",
}
#: corpora never tuned on (``heldout``): two Python, two Java
HELDOUT_CORPORA: dict[str, str] = {
    "httpx": "pypi:httpx==0.28.1",
    "attrs": "pypi:attrs==24.2.0",
    "joda-time": "maven:joda-time:joda-time:2.12.7",
    "gson": "maven:com.google.code.gson:gson:2.11.0",
}
NAMED_CORPORA: dict[str, str] = {**DEV_CORPORA, **HELDOUT_CORPORA}
ALIASES: dict[str, tuple[str, ...]] = {"dev": tuple(DEV_CORPORA), "heldout": tuple(HELDOUT_CORPORA)}


def expand(names: list[str] | tuple[str, ...]) -> list[str]:
    """Specs for corpus names, aliases (``dev``, ``heldout``), specs and paths, in order, once each."""
    out: list[str] = []
    for name in names:
        for n in ALIASES.get(name, (name,)):
            spec = NAMED_CORPORA.get(n, n)
            if spec not in out:
                out.append(spec)
    return out
