"""Views: the renderings of code objects a repository pipeline really produces.

For every definition: its ``body`` (long bodies also as overlapping ``slice``
views), its ``signature`` and its ``docstring``; for every object that is
called, a ``call_site`` view per calling line (the line with one line of
context, from the caller's file); for every object a test exercises, a ``test``
view holding that test; and sliding line ``window`` views over every file, each
tagged with the innermost object that contains the whole window. A text file
without sections (config, SQL, a build file, source without a parser:
``kernel.textformats``) has no definitions: its windows are ``text`` views,
which are embedded, so the dense retriever finds it too. A document's sections
are definitions (``section``) and get their views as code's do.

Every view carries the id of the object it belongs to (its provenance), so the
allocator can quotient views by object.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from vitalrag.graph.store import GraphStore
from vitalrag.kernel.paths import is_test_path
from vitalrag.kernel.text import content_hash
from vitalrag.kernel.textformats import BY_NAME
from vitalrag.model import DEFINITION_KINDS, CodeObject, Edge, View, file_id, split_lines


@dataclass(frozen=True, slots=True)
class ViewConfig:
    long_body: int = 60  # bodies longer than this many lines are also sliced
    slice_lines: int = 40
    slice_stride: int = 30
    window_lines: int = 30
    window_stride: int = 15
    #: the windows over a C or C++ header's lines outside its definitions
    declaration_lines: int = 8
    declaration_stride: int = 4
    call_context: int = 1  # lines of context around a call site


#: the view kinds that get an embedding: the dense retriever searches these, BM25
#: and the walk see every view. Windows, call sites and tests (about two thirds
#: of the tokens an encoder would see) are left out: on bench/context_quality.py
#: (154 questions, 8 corpora) dense search over definitions alone lost at most
#: 0.6 points on any metric at any budget and gained up to 3.3. The windows of a
#: text file without sections (``text``) are its only views, and are embedded
EMBEDDED_KINDS: frozenset[str] = frozenset({"body", "slice", "signature", "docstring", "text"})
#: whether the definitions of test files (``kernel.paths.is_test_path``) are embedded too
EMBEDS_TEST_FILES = False


def embeds(view: View) -> bool:
    """Does ``view`` get an embedding? A definition's view (``EMBEDDED_KINDS``)
    outside test files. The definitions of test files were 39-66% of the tokens
    encoded on the quick corpora of bench/context_quality.py and httpx; leaving
    them to BM25 and the walk changed the 154 questions' mean file, entry and
    survival rates by -1.1 to +1.2 points at every budget (docs/retrieval.md)."""
    return view.kind in EMBEDDED_KINDS and (EMBEDS_TEST_FILES or not is_test_path(view.path))


def _view(obj_id: str, kind: str, repo: str, path: str, start: int, end: int, text: str,
          identifier: str) -> View:
    return View(
        id=f"{obj_id}#{kind}:{path}:{start}-{end}", object_id=obj_id, kind=kind, path=path,
        start_line=start, end_line=end, text=text, content_hash=content_hash(text),
        identifier=identifier, repo=repo,
    )


def _lines(text: str | None) -> list[str]:
    return split_lines(text) if text else []


def _span(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1:end])


def object_views(obj: CodeObject, lines: list[str], config: ViewConfig) -> list[View]:
    """body, slices, signature and docstring views of one definition."""
    out: list[View] = []
    body = _span(lines, obj.start_line, obj.end_line)
    if body.strip():
        out.append(_view(obj.id, "body", obj.repo, obj.path, obj.start_line, obj.end_line, body, obj.name))
    n = obj.end_line - obj.start_line + 1
    if n > config.long_body:
        start = obj.start_line
        while start <= obj.end_line:
            end = min(start + config.slice_lines - 1, obj.end_line)
            text = _span(lines, start, end)
            if text.strip():
                out.append(_view(obj.id, "slice", obj.repo, obj.path, start, end, text, obj.name))
            if end == obj.end_line:
                break
            start += config.slice_stride
    if obj.signature:
        out.append(_view(obj.id, "signature", obj.repo, obj.path, obj.start_line, obj.start_line,
                         obj.signature, obj.name))
    if obj.docstring:
        out.append(_view(obj.id, "docstring", obj.repo, obj.path, obj.start_line, obj.end_line,
                         obj.docstring, obj.name))
    return out


def window_views(repo: str, path: str, lines: list[str], defs: Sequence[CodeObject], fid: str,
                 config: ViewConfig, kind: str = "window") -> list[View]:
    """Sliding windows over a file, each tagged with its innermost enclosing object
    (``kind``: ``text`` for a text file without sections)."""
    out: list[View] = []
    total = len(lines)
    start = 1
    while start <= total:
        end = min(start + config.window_lines - 1, total)
        text = _span(lines, start, end)
        if text.strip():
            owner = min((d for d in defs if d.start_line <= start and d.end_line >= end),
                        key=lambda d: (d.end_line - d.start_line, d.id), default=None)
            owner_id, ident = (owner.id, owner.name) if owner else (fid, path.rsplit("/", 1)[-1])
            out.append(_view(owner_id, kind, repo, path, start, end, text, ident))
        if end == total:
            break
        start += config.window_stride
    return out


#: C and C++ headers (``.h`` read as either)
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")


def _windowed_text(language: str) -> bool:
    """Is ``language`` a text format read as line windows (not split into sections)?"""
    fmt = BY_NAME.get(language)
    return fmt is not None and not fmt.sectioned


def build_views(store: GraphStore, repo: str, *, paths: Iterable[str] | None = None,
                config: ViewConfig = ViewConfig()) -> list[View]:
    """Every view of one repository (or of the objects in ``paths``), sorted by id.

    Call-site and test views belong to the called / tested object; with ``paths``
    given, the views of objects in those files are produced, wherever the call or
    the test is written.
    """
    objects = store.find_objects(repo=repo)
    by_id = {o.id: o for o in objects}
    by_path: dict[str, list[CodeObject]] = defaultdict(list)
    for o in objects:
        if o.kind in DEFINITION_KINDS:
            by_path[o.path].append(o)
    wanted = set(paths) if paths is not None else {o.path for o in objects if o.kind == "file"}
    windowed = {o.path for o in objects if o.kind == "file" and _windowed_text(o.language)}
    line_cache: dict[str, list[str]] = {}

    def lines_of(path: str) -> list[str]:
        if path not in line_cache:
            line_cache[path] = _lines(store.source(file_id(repo, path)))
        return line_cache[path]

    views: list[View] = []
    for path in sorted(wanted):
        lines = lines_of(path)
        if not lines:
            continue
        defs = by_path.get(path, [])
        for obj in defs:
            views.extend(object_views(obj, lines, config))
        fid = file_id(repo, path)
        if path.endswith(_HEADERS):
            # a header's lines outside its definitions are declarations: prototypes,
            # each with its doc comment, found by short windows
            views.extend(v for v in window_views(repo, path, lines, defs, fid, config) if v.object_id != fid)
            views.extend(v for v in window_views(repo, path, lines, defs, fid, replace(
                config, window_lines=config.declaration_lines, window_stride=config.declaration_stride))
                if v.object_id == fid)
        else:
            views.extend(window_views(repo, path, lines, defs, fid, config,
                                      "text" if path in windowed else "window"))

    calls: list[Edge] = store.find_edges(repo=repo, kind="CALLS")
    tests: list[Edge] = store.find_edges(repo=repo, kind="TESTS")
    for e in calls:
        target, caller = by_id.get(e.target), by_id.get(e.source)
        if target is None or caller is None or target.path not in wanted:
            continue
        caller_lines = lines_of(caller.path)
        for line in e.lines:
            start = max(1, line - config.call_context)
            end = min(len(caller_lines), line + config.call_context)
            views.append(_view(target.id, "call_site", repo, caller.path, start, end,
                               _span(caller_lines, start, end), target.name))
    for e in tests:
        target, test = by_id.get(e.target), by_id.get(e.source)
        if target is None or test is None or target.path not in wanted:
            continue
        views.append(_view(target.id, "test", repo, test.path, test.start_line, test.end_line,
                           _span(lines_of(test.path), test.start_line, test.end_line), target.name))
    unique = {v.id: v for v in views}
    return [unique[k] for k in sorted(unique)]
