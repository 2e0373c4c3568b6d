"""Bash: functions, ``source``/``.``, commands as calls, bats and shunit2 tests.

Objects: every ``f() { ... }`` and ``function f { ... }`` is a ``function``
(inside another: ``outer.f``). In a ``.bats`` file, a ``@test "..." { ... }``
block is a ``test`` named by its description (the grammar reads it as
commands: the block is found here, from its ``@test`` line to its closing
``}``); in a shell test file (``test_*.sh``, ``*_test.sh``, or under ``test/``
or ``tests/``) a function named ``test*`` is a ``test`` (shunit2).

Imports: ``source path`` and ``. path`` (and bats' ``load x``, which means
``x.bash``) name the file relative to the sourcing file's folder, else to the
repository root. A leading ``$(dirname "$0")/``, ``${BASH_SOURCE%/*}/`` or
``$DIR/`` is the script's folder as far as the repository can tell: the rest
of the path is looked up beside the file, then as the one file of the
repository whose path ends with it. A path that is only variables stays
unresolved (``dynamic-path``), one naming no file ``missing-module`` (a bare
name, which ``source`` also looks up on the PATH, is external).

Calls: a command whose name is a function of the same file, or else of a file
it sources (directly or through the files those source), is a CALLS edge (so is bats' ``run f``). A command whose name no
function of the repository defines is a program or a builtin (external); one
that a file not sourced here defines is ``unknown-name``; a command named by a
variable (``$CMD``) is ``dynamic-name``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, IdSuffixes, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import end_line, start_line, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject, object_id

_TEST_FILE = re.compile(r"(^|/)(test|tests)/|_test\.(sh|bash)$|(^|/)test_[^/]*\.(sh|bash)$|\.bats$")
#: ``$(dirname "$0")/``, ``${BASH_SOURCE%/*}/``, ``$DIR/``: the script's own folder, as written
_SCRIPT_DIR = re.compile(r'^(\$\(\s*dirname\s+[^)]*\)|\$\{?[A-Za-z_][A-Za-z0-9_]*[^}/]*\}?|\$\{BASH_SOURCE[^}]*\})/')
_SOURCES = frozenset({"source", "."})


@dataclass(frozen=True, slots=True)
class BashFacts(Fact):
    """A Bash file's ``FileFacts.data`` (nothing beyond the facts themselves)."""


@dataclass(frozen=True, slots=True)
class BashSource(RefDetail):
    #: the path as written began with the script's folder (``$(dirname "$0")/``)
    script_dir: bool


FACT_TYPES: tuple[type, ...] = (BashFacts, BashSource)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    lines = [re.sub(r"^#+ ?", "", c.strip()) for c in comments if not c.startswith("#!")]
    return "\n".join(lines).strip()


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.name.startswith("test") and is_test_file(path) and not path.endswith(".bats"):
        cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    words = node.named_children
    if len(words) == 1 and words[0].type == "word":
        return text(words[0])
    return None


def _literal(node: Node) -> str | None:
    """The path an argument spells, ``$VAR/`` prefixes kept; None with other expansions."""
    if node.type in ("word", "raw_string"):
        return text(node).strip("'")
    if node.type == "string":
        return text(node)[1:-1]
    if node.type == "concatenation":
        return "".join(p if (p := _literal(c)) is not None else text(c) for c in node.children)
    if node.type in ("simple_expansion", "expansion", "command_substitution"):
        return text(node)
    return None


def _bats_tests(root: Node, facts: FileFacts[BashFacts], lines: list[str]) -> None:
    """``@test "..." {`` ... ``}`` blocks of a bats file: test objects, and the
    calls within them theirs."""
    children = root.named_children
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(children):
        node = children[i]
        i += 1
        name = node.child_by_field_name("name")
        if node.type != "command" or name is None or text(name) != "@test":
            continue
        args = node.named_children[1:]
        description = " ".join(text(a) for a in args if text(a) != "{").strip().strip("\"'")
        while i < len(children):
            closing = children[i]
            i += 1
            closing_name = closing.child_by_field_name("name")
            if closing.type == "command" and closing_name is not None and text(closing_name) == "}":
                spans.append((start_line(node), end_line(closing), " ".join(description.split())))
                break
    fid = facts.file.id
    suffixes = IdSuffixes()
    for first, last, written in spans:
        oid, description = suffixes(object_id(facts.file.repo, facts.path, written), written)
        facts.objects.append(CodeObject(
            id=oid, kind="test", name=written, qualname=description, repo=facts.file.repo,
            path=facts.path, language=facts.language, start_line=first, end_line=last,
            signature=lines[first - 1].strip(), content_hash=content_hash("\n".join(lines[first - 1:last]))))
        facts.parents[oid] = fid
        for ref in facts.refs:
            if ref.source == fid and first <= ref.line <= last:
                ref.source = oid


def _annotate(root: Node, facts: FileFacts[BashFacts]) -> BashFacts:
    lines = facts.text.split("\n")
    bats = facts.path.endswith(".bats")
    if bats:
        _bats_tests(root, facts, lines)
    stack = list(reversed(root.named_children))
    while stack:
        node = stack.pop()
        if node.type != "command":
            stack.extend(reversed(node.named_children))
            continue
        name = node.child_by_field_name("name")
        verb = text(name) if name is not None else ""
        args = node.named_children[1:]
        if verb in _SOURCES or (bats and verb == "load"):
            path = _literal(args[0]) if args else None
            if path:
                script_dir = bool(_SCRIPT_DIR.match(path))
                path = _SCRIPT_DIR.sub("", path)
                if bats and verb == "load" and not path.endswith((".bash", ".sh")):
                    path += ".bash"
                facts.refs.append(RawRef("import", facts.file.id, path, start_line(node), BashSource(script_dir)))
        elif bats and verb == "run" and args and args[0].type == "word":
            # bats' ``run f args``: ``f`` is the command run (the call's source is set below)
            facts.refs.append(RawRef("call", facts.file.id, text(args[0]), start_line(node)))
        stack.extend(reversed(node.named_children))
    if bats:  # ``run`` calls inside tests belong to them
        tests = [o for o in facts.objects if o.kind == "test"]
        for ref in facts.refs:
            if ref.source == facts.file.id and ref.kind == "call":
                owner = next((t.id for t in tests if t.start_line <= ref.line <= t.end_line), None)
                ref.source = owner or ref.source
    return BashFacts()


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[BashFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

def _source_target(f: FileFacts[BashFacts], ref: RawRef, files: set[str]) -> tuple[list[str], str]:
    """The files a ``source`` names, and the reason when it names none."""
    path = ref.name
    if "$" in path or "`" in path:
        return [], "dynamic-path"
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), path))
    if beside in files:
        return [beside], ""
    rooted = posixpath.normpath(path.lstrip("/"))
    if not path.startswith("/") and rooted in files:
        return [rooted], ""
    if isinstance(ref.data, BashSource) and ref.data.script_dir:
        tail = posixpath.normpath(path).lstrip("./")
        ends = sorted(p for p in files if p == tail or p.endswith("/" + tail))
        return ends, "missing-module" if not ends else ""
    return [], "missing-module"


def resolve(repo: str, facts: list[FileFacts[BashFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    files = {f.path for f in facts}
    defined: dict[str, list[CodeObject]] = {}
    for f in facts:
        for o in f.objects:
            if o.kind in ("function", "test"):
                defined.setdefault(o.name, []).append(o)
    sources: dict[str, list[str]] = {}
    for f in facts:
        sourced = sources[f.path] = []
        for ref in f.refs:
            if ref.kind != "import":
                continue
            found, reason = _source_target(f, ref, files)
            if len(found) == 1:
                link(res, f.file.id, index.files[found[0]].file.id, "IMPORTS", ref.line)
                sourced.append(found[0])
            elif not found and reason == "missing-module" and "/" not in ref.name:
                res.external += 1  # ``source name`` searches the PATH too: an installed script
            else:
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module" if found else reason)
    for f in facts:
        # what a sourced file sources is sourced too
        seen = {f.path}
        todo = list(sources[f.path])
        while todo:
            path = todo.pop()
            if path not in seen:
                seen.add(path)
                todo.extend(sources.get(path, ()))
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, seen, defined, res)
    return res


def _resolve_call(f: FileFacts[BashFacts], ref: RawRef, sourced: set[str],
                  defined: dict[str, list[CodeObject]], res: Resolution) -> None:
    if ref.dynamic:  # ``$CMD args``
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-name")
        return
    functions = [o for o in defined.get(ref.name, ()) if o.kind == "function"]
    found = [o for o in functions if o.path == f.path] or [o for o in functions if o.path in sourced]
    if found:
        call_target(res, ref.source, ref.name, ref.line, found)
    elif functions:  # defined in a file this one does not source
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
    else:  # a program or a builtin
        res.external += 1
