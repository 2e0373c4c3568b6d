"""RepoBench v1.1 rows as evaluation tasks (the paper's Tables 1-3 and 6 data).

A row (``repo_name, file_path, context[{identifier, path, snippet}],
import_statement, cropped_code, next_line, gold_snippet_index, level``) becomes
one task whose candidates are the row's context snippets, keyed by the paper's
adapter (normalised path, casefolded identifier); the gold is the snippet at
``gold_snippet_index``. Rows are read from JSON lines or, with pyarrow (the
``repobench`` extra), from parquet.

There is no repository to index: the snippets of one path are laid out, in
context order and one blank line apart, as a virtual file, so every snippet
has line numbers and Recall@B checks the gold's lines like any other gold.
Each snippet gives the views a repository pipeline would: its body, body
slices (when long), sliding windows (when longer than a window), its
signature and its docstring. The pool ranks them by BM25 against the query,
as the fixed pool does for our own repositories.

Screening, counted by reason: exact duplicate rows, a gold index outside the
context or pointing at an empty snippet (invalid label), a row whose next line
appears in its query (leak).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from vitalrag.allocate.provenance import ObjectKey, external_key, normalise_path
from vitalrag.allocate.source import MappingObjectSource, ObjectText
from vitalrag.errors import InputError
from vitalrag.eval.tasks import GoldLines, Snippet, Task
from vitalrag.model import View
from vitalrag.retrieve.views import ViewConfig

log = logging.getLogger(__name__)

SOURCE = "repobench"
REQUIRED = ("repo_name", "file_path", "context", "cropped_code", "next_line", "gold_snippet_index")
_LANGUAGES = {".py": "python", ".java": "java"}


@dataclass(slots=True)
class ImportReport:
    """Rows read, tasks kept, and every dropped row by reason."""

    rows: int = 0
    tasks: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    by_language: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "tasks": self.tasks, "by_language": dict(sorted(self.by_language.items())),
                "dropped": dict(sorted(self.dropped.items()))}


# -- reading rows -----------------------------------------------------------------

def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """The rows of a ``.jsonl``/``.json`` file (one object a line) or a ``.parquet`` file."""
    src = Path(path)
    if not src.is_file():
        raise InputError(f"no RepoBench file {src}")
    if src.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError(f"{src}: reading parquet needs pyarrow: pip install 'vitalrag[repobench]' "
                             "(or convert the rows to JSON lines)") from None
        try:
            table = pq.read_table(src)
        except Exception as exc:  # pyarrow raises its own ArrowInvalid, OSError, ...
            raise InputError(f"{src}: not a readable parquet file ({exc})") from exc
        yield from table.to_pylist()
        return
    with src.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as exc:
                raise InputError(f"{src}:{n}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise InputError(f"{src}:{n}: a row must be a JSON object")
            yield row


# -- rows to tasks ----------------------------------------------------------------

def language_of(row: Mapping[str, Any]) -> str:
    lang = str(row.get("language") or "").lower()
    if lang:
        return lang
    return _LANGUAGES.get(Path(str(row["file_path"])).suffix, "")


def build_query(import_statement: str, cropped_code: str, context_lines: int) -> str:
    """The row's import statements and the last ``context_lines`` lines of its code."""
    tail = cropped_code.splitlines()[-context_lines:]
    return "\n".join([*import_statement.splitlines(), *tail]).strip("\n")


def row_task(row: Mapping[str, Any], report: ImportReport, *, context_lines: int = 30,
             setting: str = "") -> Task | None:
    """The task of one row, or None (counted in ``report``) when it is screened out."""
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise InputError(f"not a RepoBench v1.1 row: it lacks {', '.join(missing)}")
    repo, path = str(row["repo_name"]), normalise_path(str(row["file_path"]))
    context = row["context"] or []
    snippets = tuple(Snippet(str(c.get("identifier") or ""), normalise_path(str(c.get("path") or "")),
                             str(c.get("snippet") or "")) for c in context)
    try:
        gold_index = int(row["gold_snippet_index"])
    except (TypeError, ValueError):
        gold_index = -1
    if not 0 <= gold_index < len(snippets) or not snippets[gold_index].text.strip() \
            or not snippets[gold_index].identifier:
        report.dropped["invalid-label"] += 1
        return None
    next_line = str(row["next_line"])
    query = build_query(str(row.get("import_statement") or ""), str(row["cropped_code"]), context_lines)
    if next_line.strip() and next_line.strip() in query:
        report.dropped["leak"] += 1
        return None
    gold = snippets[gold_index]
    gold_key = external_key(repo, gold.path, gold.identifier)
    layout = lay_out(repo, snippets)
    if layout.owner.get(gold_key) != gold_index:
        # another snippet with the same path and identifier and other text comes first
        report.dropped["ambiguous-gold"] += 1
        return None
    start, end = layout.lines[gold_index]
    digest = hashlib.sha1(json.dumps([repo, path, row["cropped_code"], next_line, gold_index],
                                     ensure_ascii=False).encode()).hexdigest()[:12]
    level = str(row.get("level") or "")
    return Task(
        id=f"{repo}:{path}:{digest}", repo=repo, path=path, line=len(str(row["cropped_code"]).splitlines()) + 1,
        setting=setting or str(row.get("setting") or SOURCE), language=language_of(row), query=query,
        next_line=next_line, used_name=gold.identifier, gold_id=gold_key, gold=GoldLines(gold.path, start, end),
        candidates=tuple(dict.fromkeys(external_key(repo, s.path, s.identifier) for s in snippets if s.text.strip())),
        difficulty=level or "-", corpus=SOURCE, snippets=snippets,
    )


def import_rows(rows: Iterable[Mapping[str, Any]], *, context_lines: int = 30, setting: str = "",
                report: ImportReport | None = None) -> tuple[list[Task], ImportReport]:
    """Tasks from RepoBench rows, exact duplicate rows dropped."""
    if context_lines < 1:
        raise InputError(f"--context-lines must be at least 1, got {context_lines}")
    report = report or ImportReport()
    seen: set[str] = set()
    ids: set[str] = set()
    tasks: list[Task] = []
    for row in rows:
        report.rows += 1
        key = hashlib.sha1(json.dumps(row, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()
        if key in seen:
            report.dropped["duplicate-row"] += 1
            continue
        seen.add(key)
        task = row_task(row, report, context_lines=context_lines, setting=setting)
        if task is None:
            continue
        if task.id in ids:  # the same masked line and gold in rows that differ elsewhere
            report.dropped["duplicate-task"] += 1
            continue
        ids.add(task.id)
        tasks.append(task)
        report.by_language[task.language] += 1
    report.tasks = len(tasks)
    return tasks, report


def import_files(paths: Sequence[str | Path], **kwargs: Any) -> tuple[list[Task], ImportReport]:
    """Tasks from the rows of every file in ``paths``, in order (a row repeated
    in another file is a duplicate too)."""
    return import_rows(chain.from_iterable(read_rows(p) for p in paths), **kwargs)


# -- the pool, the object texts and the virtual files of a task -------------------

@dataclass(frozen=True, slots=True)
class Layout:
    """Where each snippet of a task lies in the virtual file of its path."""

    #: snippet index -> (first line, last line) in its path's virtual file
    lines: dict[int, tuple[int, int]]
    #: path -> the virtual file's lines
    files: dict[str, list[str]]
    #: object key -> the index of the snippet that is the object's text (its first snippet)
    owner: dict[ObjectKey, int]


def lay_out(repo: str, snippets: Sequence[Snippet]) -> Layout:
    """Each path's snippets one after another, one blank line apart; a snippet
    repeating an earlier one (same key and text) is laid out once."""
    files: dict[str, list[str]] = {}
    lines: dict[int, tuple[int, int]] = {}
    owner: dict[ObjectKey, int] = {}
    placed: dict[tuple[ObjectKey, str], int] = {}
    for i, s in enumerate(snippets):
        if not s.text.strip():
            continue
        key = external_key(repo, s.path, s.identifier)
        again = placed.get((key, s.text))
        if again is not None:
            lines[i] = lines[again]
            continue
        placed[(key, s.text)] = i
        owner.setdefault(key, i)
        body = s.text.splitlines()
        f = files.setdefault(s.path, [])
        if f:
            f.append("")
        start = len(f) + 1
        f.extend(body)
        lines[i] = (start, start + len(body) - 1)
    return Layout(lines, files, owner)


def _signature(lines: Sequence[str]) -> int | None:
    """The index of the declaration line: the first that is not blank, a
    decorator, an annotation or a comment."""
    for i, line in enumerate(lines):
        s = line.strip()
        if s and not s.startswith(("@", "#", "//", "/*", "*", "*/")):
            return i
    return None


def _docstring(lines: Sequence[str], sig: int | None) -> tuple[int, int] | None:
    """The lines of a Python docstring after the declaration, or of a Java
    ``/** ... */`` comment before it."""
    if sig is None:
        return None
    for i in range(sig + 1, len(lines)):
        s = lines[i].strip()
        if not s:
            continue
        for q in ('"""', "'''"):
            if s.startswith(q) or s[1:].startswith(q) and s[0] in "rRuUbB":
                body = s[s.index(q) + 3:]
                if q in body:
                    return i, i
                for j in range(i + 1, len(lines)):
                    if q in lines[j]:
                        return i, j
                return None
        break
    for i in range(sig):
        if lines[i].strip().startswith("/**"):
            for j in range(i, sig):
                if "*/" in lines[j]:
                    return i, j
    return None


def snippet_views(repo: str, index: int, snippet: Snippet, start: int,
                  config: ViewConfig = ViewConfig()) -> list[View]:
    """The views of one snippet laid out at ``start``: body, slices, windows,
    signature, docstring."""
    lines = snippet.text.splitlines()
    n = len(lines)
    out: list[View] = []

    def add(kind: str, a: int, b: int, text: str | None = None) -> None:
        body = text if text is not None else "\n".join(lines[a:b + 1])
        if body.strip():
            out.append(View(f"{index}#{kind}:{start + a}-{start + b}", "", kind, snippet.path,
                            start + a, start + b, body, identifier=snippet.identifier, repo=repo))

    add("body", 0, n - 1)
    if n > config.long_body:
        for a in range(0, n, config.slice_stride):
            b = min(a + config.slice_lines - 1, n - 1)
            add("slice", a, b)
            if b == n - 1:
                break
    if n > config.window_lines:
        for a in range(0, n, config.window_stride):
            b = min(a + config.window_lines - 1, n - 1)
            add("window", a, b)
            if b == n - 1:
                break
    sig = _signature(lines)
    if sig is not None:
        add("signature", sig, sig, " ".join(lines[sig].split()))
    doc = _docstring(lines, sig)
    if doc is not None:
        add("docstring", doc[0], doc[1])
    return out


def task_views(task: Task, layout: Layout | None = None) -> list[View]:
    """Every view of every snippet of ``task``."""
    layout = layout or lay_out(task.repo, task.snippets)
    out: list[View] = []
    done: set[tuple[int, int, str]] = set()
    for i, s in enumerate(task.snippets):
        if i not in layout.lines:
            continue
        start = layout.lines[i][0]
        if (start, layout.lines[i][1], s.path) in done:  # a repeated snippet
            continue
        done.add((start, layout.lines[i][1], s.path))
        out.extend(snippet_views(task.repo, i, s, start))
    return out


def task_source(task: Task, layout: Layout | None = None) -> MappingObjectSource:
    """Each candidate object's text (its first snippet, at its virtual lines)
    and its same-path peers."""
    layout = layout or lay_out(task.repo, task.snippets)
    objects: dict[ObjectKey, ObjectText] = {}
    by_path: dict[str, list[ObjectKey]] = {}
    for key, i in layout.owner.items():
        s = task.snippets[i]
        start, end = layout.lines[i]
        lines = tuple(layout.files[s.path][start - 1:end])
        sig = _signature(lines)
        objects[key] = ObjectText(key, s.path, s.identifier, lines[sig].strip() if sig is not None else "",
                                  start, lines, f"{task.repo}:{s.path}")
        by_path.setdefault(s.path, []).append(key)
    peers = {k: [p for p in by_path[o.path] if p != k] for k, o in objects.items()}
    return MappingObjectSource(objects, peers)
