"""List the source files of a repository, honouring ``.gitignore``.

In a git checkout ``git ls-files`` decides (tracked plus untracked-not-ignored
files); elsewhere the ``.gitignore`` files are applied with ``pathspec``'s
gitwildmatch semantics, nested ones relative to their folder. Vendored and tool
folders are never walked. What is passed over on purpose is reported with a
reason; files in languages we do not parse are ignored silently.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from vitalrag.ingest.languages import language_for_path

log = logging.getLogger(__name__)

#: folders that hold other people's code or tool state, never indexed
VENDORED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "third_party",
    "thirdparty", "site-packages", ".venv", "venv", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".vitalrag", ".idea", ".gradle", "target",
})
VENDORED_SUFFIXES = (".min.js", ".bundle.js", ".pb.go", "_pb2.py")

DEFAULT_MAX_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, posix
    abspath: str
    language: str
    size: int = 0  # bytes, as seen by the walk (to share work out evenly)


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(slots=True)
class WalkResult:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _git_listing(root: Path) -> list[str] | None:
    """Files git would track here (tracked + untracked, minus ignored), or None."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=True, timeout=120,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("git ls-files failed in %s (%s); falling back to .gitignore matching", root, exc)
        return None
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


class _IgnoreRules:
    """Nested ``.gitignore`` files, each applied relative to its own folder."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def add_folder(self, root: Path, rel_dir: str) -> None:
        gi = root / rel_dir / ".gitignore"
        if gi.is_file():
            try:
                lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as exc:
                log.warning("cannot read %s: %s", gi, exc)
                return
            self._specs.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        for base, spec in self._specs:
            if base and not rel_path.startswith(base + "/"):
                continue
            sub = rel_path[len(base) + 1:] if base else rel_path
            if spec.match_file(sub + "/" if is_dir else sub):
                return True
        return False


def _is_vendored(rel_path: str) -> bool:
    parts = rel_path.split("/")
    return any(p in VENDORED_DIRS for p in parts[:-1]) or rel_path.endswith(VENDORED_SUFFIXES)


def walk_repository(root: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> WalkResult:
    """List the parseable source files under ``root`` and the ones passed over."""
    root_path = Path(root).resolve()
    root_str = str(root_path)
    result = WalkResult()
    listing = _git_listing(root_path)
    if listing is None:
        listing = _walk_with_gitignore(root_path, result)
    for rel in listing:
        language = language_for_path(rel)
        if language is None:
            continue
        if _is_vendored(rel):
            continue
        abspath = os.path.join(root_str, rel)
        reason, size = _check_file(root_path, abspath, max_bytes)
        if reason:
            result.skipped.append(Skipped(rel, reason))
            continue
        result.files.append(SourceFile(rel, abspath, language, size))
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    return result


def _walk_with_gitignore(root: Path, result: WalkResult) -> list[str]:
    rules = _IgnoreRules()
    out: list[str] = []
    root_str = str(root)
    prefix = len(root_str.rstrip(os.sep)) + 1  # of dirpath, up to its repository-relative part
    for dirpath, dirnames, filenames in os.walk(root_str, followlinks=False):
        rel_dir = dirpath[prefix:].replace(os.sep, "/") if dirpath != root_str else ""
        if ".gitignore" in filenames:
            rules.add_folder(root, rel_dir)
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in VENDORED_DIRS or rules.ignored(rel, is_dir=True):
                continue
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                reason = _symlink_problem(root, Path(full)) or "symlinked folder (indexed at its real path)"
                result.skipped.append(Skipped(rel + "/", reason))
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if not rules.ignored(rel, is_dir=False):
                out.append(rel)
    return out


def _symlink_problem(root: Path, path: Path) -> str | None:
    try:
        target = path.resolve(strict=True)
    except RuntimeError:
        return "symlink loop"
    except OSError as exc:
        if "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40:
            return "symlink loop"
        return "broken symlink"
    if not target.is_relative_to(root):
        return "symlink points outside the repository"
    return None


def _check_file(root: Path, path: str, max_bytes: int) -> tuple[str | None, int]:
    """Why the file cannot be indexed (None when it can), and its size."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            problem = _symlink_problem(root, Path(path))
            if problem:
                return problem, 0
            st = os.stat(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}", 0
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file", st.st_size
    if st.st_size > max_bytes:
        return f"over size limit ({st.st_size} bytes > {max_bytes})", st.st_size
    if not os.access(path, os.R_OK):
        return "unreadable: permission denied", st.st_size
    return None, st.st_size
