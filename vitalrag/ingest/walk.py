"""List the source files of a repository, honouring ``.gitignore``.

In a git checkout the files git tracks are listed by ``git ls-files --cached``,
run so that the repository's own config cannot start a command (no fsmonitor, no
hooks, no pager, no system or user config). Untracked files are found by a walk
that applies the ``.gitignore`` files (and ``.git/info/exclude``) with
``pathspec``'s gitwildmatch semantics, nested ones relative to their folder; an
ignore pattern with so many wildcards that matching it could backtrack for
minutes is reported and skipped, and the walk has a step and a time budget. Vendored and tool
folders are never walked. Which files are taken is ``ingest.content``'s call
(code, documentation, config... as ``content`` says). What is passed over on
purpose is reported with a reason (a lock file, a file over its format's size
limit); files of no language or format we take are ignored silently.

A file whose path holds a control character (C0, DEL or C1, in any component) is
not indexed: such a name could write forged lines into a context. It is reported
as skipped, its path written with the characters escaped (``\\x0a``), as is a
folder with such a name, which is not walked (``kernel.printable``).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from vitalrag.ingest.content import DEFAULT_CONTENT, SNIFF_BYTES, Listed, check_content, listed, script_language
from vitalrag.kernel.printable import escape_controls, has_control

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


#: config that would let a repository's own ``.git/config`` run a command, pinned
#: (a ``-c`` on the command line wins over every config file)
GIT_SAFE_CONFIG = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.untrackedCache=false",
    "core.pager=cat", "core.sshCommand=false", "core.askPass=false",
    "core.alternateRefsCommand=false", "credential.helper=", "diff.external=",
)
#: how many ``*`` runs one ignore pattern may hold before matching it can backtrack
#: for minutes (``*a*a*a*a*b`` against a 200-character name takes seconds already)
MAX_WILDCARDS_PER_NAME = 3
MAX_WILDCARDS = 6
DEFAULT_MAX_ENTRIES = 5_000_000
DEFAULT_TIME_BUDGET = 600.0
#: listing the index takes milliseconds; longer means git is stuck
GIT_TIMEOUT = 60.0


def _git_env() -> dict[str, str]:
    """The environment git runs in: no system or user config, no inherited GIT_* overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_OPTIONAL_LOCKS="0",
               GIT_TERMINAL_PROMPT="0", GIT_ATTR_NOSYSTEM="1")
    return env


def git_command(root: Path, *args: str) -> list[str]:
    """A git command line run on ``root`` that its repository config cannot hijack."""
    cmd = ["git", "--no-pager", f"--git-dir={root / '.git'}", f"--work-tree={root}"]
    for item in GIT_SAFE_CONFIG:
        cmd += ["-c", item]
    return cmd + list(args)


def _git_tracked(root: Path, timeout: float) -> set[str]:
    """The files git tracks here (empty when this is not a git checkout).

    Only the index is listed: git never evaluates ignore patterns for it, so a
    hostile ``.gitignore`` cannot stall it. Untracked files come from the walk.
    """
    if not (root / ".git").exists():
        return set()
    try:
        out = subprocess.run(
            git_command(root, "ls-files", "-z", "--cached"), cwd=root, env=_git_env(),
            stdin=subprocess.DEVNULL, capture_output=True, check=True, timeout=max(min(timeout, GIT_TIMEOUT), 0.001),
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("git ls-files failed in %s (%s); using .gitignore matching alone", root, exc)
        return set()
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def pattern_problem(pattern: str) -> str | None:
    """Why an ignore pattern is too costly to match (None when it is fine)."""
    plain = re.sub(r"\\.", "x", pattern)  # an escaped star is a literal
    runs = 0
    for name in plain.split("/"):
        if name == "**":
            runs += 1
            continue
        here = len(re.findall(r"\*+", name))
        if here > MAX_WILDCARDS_PER_NAME:
            return f"{here} wildcards in one name (more than {MAX_WILDCARDS_PER_NAME}) can backtrack without bound"
        runs += here
    if runs > MAX_WILDCARDS:
        return f"{runs} wildcards (more than {MAX_WILDCARDS}) can backtrack without bound"
    return None


class _IgnoreRules:
    """Nested ``.gitignore`` files, each applied relative to its own folder."""

    def __init__(self, result: WalkResult) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        self._result = result

    def add_file(self, path: Path, rel_dir: str, shown: str) -> None:
        """Add the rules of ignore file ``path`` (shown as ``shown``) for folder ``rel_dir``."""
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            return
        kept = []
        for number, line in enumerate(lines, 1):
            problem = pattern_problem(line.strip()) if line.strip() and not line.startswith("#") else None
            if problem:
                self._result.skipped.append(Skipped(
                    f"{shown}:{number}", f"ignore pattern {line.strip()!r} skipped: {problem}"))
                continue
            kept.append(line)
        if kept:
            self._specs.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(kept)))

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


def shown_name(rel_path: str) -> str:
    """A path as it can be printed: bytes that are not UTF-8 become U+FFFD, and
    control characters are escaped (``\\x0a``)."""
    return escape_controls(rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


#: why a file or folder with a control character in its name is passed over
CONTROL_REASON = "name holds a control character (shown escaped): it could forge lines in a context"


def _not_utf8(rel_path: str) -> bool:
    try:
        rel_path.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def walk_repository(
    root: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    time_budget: float = DEFAULT_TIME_BUDGET,
    content: str = DEFAULT_CONTENT,
) -> WalkResult:
    """List the files under ``root`` an index of ``content`` takes (``ingest.content``)
    and the ones passed over.

    The walk looks at no more than ``max_entries`` files and folders and stops
    after ``time_budget`` seconds; where it stopped is reported as skipped.
    """
    check_content(content)
    root_path = Path(root).resolve()
    root_str = str(root_path)
    result = WalkResult()
    deadline = time.monotonic() + time_budget
    tracked = _git_tracked(root_path, time_budget)
    listing = sorted(tracked | set(
        _walk_with_gitignore(root_path, result, tracked, max_entries, time_budget, deadline, content)))
    for rel in listing:
        taken = listed(rel, content)
        if taken is None:
            continue
        if _is_vendored(rel):
            continue
        if _not_utf8(rel):
            result.skipped.append(Skipped(shown_name(rel), "file name is not UTF-8"))
            continue
        if has_control(rel):
            result.skipped.append(Skipped(shown_name(rel), f"file {CONTROL_REASON}"))
            continue
        if taken.skip is not None:
            result.skipped.append(Skipped(rel, taken.skip))
            continue
        abspath = os.path.join(root_str, rel)
        limit = min(max_bytes, taken.max_bytes) if taken.max_bytes is not None else max_bytes
        reason, size = _check_file(root_path, abspath, limit)
        if taken.sniff:  # a file with no ending: a script when its first lines say so
            sniffed = None if reason else _script_language(abspath)
            if sniffed is None:
                continue
            taken = Listed(sniffed)
        if reason:
            if limit < max_bytes and reason.startswith("over size limit"):
                reason = f"over the size limit of {taken.language} files ({size} bytes > {limit})"
            result.skipped.append(Skipped(rel, reason))
            continue
        result.files.append(SourceFile(rel, abspath, taken.language, size))
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    return result


def _walk_with_gitignore(
    root: Path, result: WalkResult, tracked: set[str],
    max_entries: int, time_budget: float, deadline: float, content: str,
) -> list[str]:
    """Files under ``root`` that no ignore rule drops (tracked ones are not matched)."""
    rules = _IgnoreRules(result)
    exclude = root / ".git" / "info" / "exclude"
    if exclude.is_file():
        rules.add_file(exclude, "", ".git/info/exclude")
    out: list[str] = []
    root_str = str(root)
    prefix = len(root_str.rstrip(os.sep)) + 1  # of dirpath, up to its repository-relative part
    entries = 0
    for dirpath, dirnames, filenames in os.walk(root_str, followlinks=False):
        rel_dir = dirpath[prefix:].replace(os.sep, "/") if dirpath != root_str else ""
        entries += len(dirnames) + len(filenames)
        over = (f"over the step budget of {max_entries}" if entries > max_entries
                else f"over the time budget of {time_budget:g} s" if time.monotonic() > deadline
                else None)
        if over:
            result.skipped.append(Skipped(
                shown_name(rel_dir or ".") + "/",
                f"walk stopped after {min(entries, max_entries)} entries: {over}; "
                "the rest of the repository is not listed"))
            break
        if ".gitignore" in filenames:
            rules.add_file(Path(dirpath) / ".gitignore", rel_dir,
                           shown_name(f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"))
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in VENDORED_DIRS or rules.ignored(rel, is_dir=True):
                continue
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                reason = _symlink_problem(root, Path(full)) or "symlinked folder (indexed at its real path)"
                result.skipped.append(Skipped(shown_name(rel) + "/", reason))
                continue
            if _not_utf8(d):
                result.skipped.append(Skipped(shown_name(rel) + "/", "folder name is not UTF-8"))
                continue
            if has_control(d):
                result.skipped.append(Skipped(shown_name(rel) + "/", f"folder {CONTROL_REASON}"))
                continue
            if os.path.exists(os.path.join(full, ".git")):
                continue  # another repository (a submodule): git does not list its files either
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if rel in tracked or listed(rel, content) is None:
                continue  # listed already, or never indexed: no need to match it
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


def _script_language(path: str) -> str | None:
    """The language the first lines of the file at ``path`` name (``content.script_language``)."""
    try:
        with open(path, "rb") as f:
            return script_language(f.read(SNIFF_BYTES))
    except OSError:
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
