"""RepoBench-style cross-file tasks from an indexed repository.

For each source file (Python, Java) the builder keeps the names its import
statements bind to definitions of the same repository, as the code graph's
IMPORTS edges resolve them (a module import, ``import httpx`` or ``import
pkg.mod as m``, binds the module's definitions the file writes as ``httpx.X``
or ``m.X``), and masks a line that uses one of them:

- ``cross_file_first``: the first line after the import section that uses an
  imported name;
- ``cross_file_random``: a random later line (seeded per file) using exactly
  one imported name.

A line that uses two or more different imported names is skipped (for the
first setting the file then gets no first task). The gold is the whole
definition of the used object, its source lines as the graph records them;
the candidates are one definition per imported name of the file, at least
``min_candidates`` of them (``easy`` below 10, ``hard`` from 10). The query
is the file's import lines and the ``context_lines`` lines before the masked
line, never the masked line itself: a task whose masked line's text still
appears in its query (a repeated line) is dropped as a leak. Exact duplicate
tasks (same query, masked line and gold) are dropped, as are tasks whose gold
is ambiguous (an overloaded static import), empty or not in the graph. Every
drop and every skipped file is counted with its reason.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vitalrag.errors import InputError
from vitalrag.kernel.files import replacing
from vitalrag.eval.imports import FileImports, ImportParseError, read_imports
from vitalrag.graph.store import GraphStore
from vitalrag.kernel.progress import Progress
from vitalrag.model import DEFINITION_KINDS, CodeObject, file_id

log = logging.getLogger(__name__)

SETTINGS = ("cross_file_first", "cross_file_random")
LANGUAGES = ("python", "java")
HARD_FROM = 10


@dataclass(frozen=True, slots=True)
class GoldLines:
    path: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Snippet:
    """A candidate that comes with its task (RepoBench's context), not from an index."""

    identifier: str
    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Task:
    """One masked line and the definition it needs.

    ``snippets``: for imported tasks (RepoBench), the candidates themselves;
    the gold and candidates are then keyed by the paper's adapter and the
    gold's lines are those of its snippet in the task's virtual file
    (``vitalrag.eval.repobench``). Tasks built from an index have none."""

    id: str
    repo: str
    path: str
    line: int
    setting: str
    language: str
    query: str
    next_line: str
    used_name: str
    gold_id: str
    gold: GoldLines
    candidates: tuple[str, ...]
    difficulty: str
    root: str = ""
    corpus: str = ""
    snippets: tuple[Snippet, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["candidates"] = list(self.candidates)
        if not self.snippets:
            del data["snippets"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        g = data["gold"]
        return cls(
            id=data["id"], repo=data["repo"], path=data["path"], line=int(data["line"]),
            setting=data["setting"], language=data["language"], query=data["query"],
            next_line=data["next_line"], used_name=data["used_name"], gold_id=data["gold_id"],
            gold=GoldLines(g["path"], int(g["start"]), int(g["end"])),
            candidates=tuple(data["candidates"]), difficulty=data["difficulty"],
            root=data.get("root", ""), corpus=data.get("corpus", ""),
            snippets=tuple(Snippet(c["identifier"], c["path"], c["text"]) for c in data.get("snippets") or ()),
        )


@dataclass(slots=True)
class BuildReport:
    """What the builder kept, dropped (by reason) and skipped (files, by reason)."""

    repo: str
    files: int = 0
    tasks: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    skipped_files: Counter[str] = field(default_factory=Counter)
    #: candidate lines no task may mask
    skipped_lines: Counter[str] = field(default_factory=Counter)
    by_setting: Counter[str] = field(default_factory=Counter)
    by_difficulty: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "files": self.files, "tasks": self.tasks,
                "by_setting": dict(sorted(self.by_setting.items())),
                "by_difficulty": dict(sorted(self.by_difficulty.items())),
                "dropped": dict(sorted(self.dropped.items())),
                "skipped_files": dict(sorted(self.skipped_files.items())),
                "skipped_lines": dict(sorted(self.skipped_lines.items()))}


def difficulty(n_candidates: int) -> str:
    return "hard" if n_candidates >= HARD_FROM else "easy"


@dataclass(frozen=True, slots=True)
class ImportedNames:
    """A file's imported repository names: name -> its definitions (first is the
    candidate), in the order the imports bind them."""

    targets: dict[str, tuple[CodeObject, ...]]

    def candidates(self) -> list[str]:
        seen: dict[str, None] = {}
        for objs in self.targets.values():
            seen.setdefault(objs[0].id, None)
        return list(seen)


def _module_name(path: str) -> str:
    """``pkg/sub/mod.py`` and ``pkg/sub/mod/__init__.py`` -> ``pkg.sub.mod``."""
    stem = path.removesuffix(".py").removesuffix("/__init__")
    return stem.replace("/", ".")


def _is_module(binding_module: str, path: str) -> bool:
    """Is the file at ``path`` the module ``binding_module`` names? (A suffix
    match: sources live under ``src/`` and relative imports drop their dots.)"""
    name = _module_name(path)
    return bool(binding_module) and (name == binding_module or name.endswith("." + binding_module))


def _top_level(store: GraphStore, module: CodeObject) -> list[CodeObject]:
    return [o for o in store.find_objects(repo=module.repo, path=module.path)
            if o.kind in DEFINITION_KINDS and o.qualname == o.name and o.start_line >= 1]


def _module_exports(store: GraphStore, module: CodeObject) -> dict[str, list[CodeObject]]:
    """The definitions a module gives its importers: its top-level definitions,
    then the definitions it imports (a package ``__init__`` re-exporting), then
    those of the modules it imports whole (``from ._models import *``: a code
    line writing ``pkg.X`` for such an ``X`` can only mean the re-export)."""
    out: dict[str, list[CodeObject]] = {}
    for o in _top_level(store, module):
        out.setdefault(o.name, []).append(o)
    edges = store.find_edges(source=module.id, kind="IMPORTS")
    # by id, not in the set's order: the same task file in every process
    targets = sorted(store.get_objects({e.target for e in edges}).values(), key=lambda o: o.id)
    for o in targets:
        if o.kind in DEFINITION_KINDS and o.name not in out:
            out.setdefault(o.name, []).append(o)
    for t in targets:
        if t.kind == "file" and t.id != module.id:
            for o in _top_level(store, t):
                if o.name not in out:
                    out[o.name] = [o]
    return out


def imported_names(store: GraphStore, repo: str, path: str, imports: FileImports) -> ImportedNames:
    """Bind each import statement's names to the definitions its IMPORTS edges
    reach: an edge counts for a name when it is written on the statement's
    lines and its target is a definition with the imported name.

    A statement that imports a module of the repository (its edge reaches a
    file) binds, for each definition ``X`` of that module the file writes as
    ``m.X`` (``pkg.sub.mod.X`` after ``import pkg.sub.mod``), the name ``m.X``."""
    edges = store.find_edges(source=file_id(repo, path), kind="IMPORTS")
    objs = store.get_objects({e.target for e in edges})
    written = frozenset().union(*imports.dotted_by_line.values()) if imports.dotted_by_line else frozenset()
    targets: dict[str, list[CodeObject]] = {}

    def bind(name: str, obj: CodeObject) -> None:
        found = targets.setdefault(name, [])
        if obj not in found:
            found.append(obj)

    for b in imports.bindings:
        for e in edges:
            obj = objs.get(e.target)
            if obj is None or obj.path == path or not any(b.start <= ln <= b.end for ln in e.lines):
                continue
            if obj.kind in DEFINITION_KINDS and obj.name == b.imported:
                bind(b.local, obj)
            elif obj.kind == "file" and b.prefix and _is_module(b.module, obj.path):
                head = ".".join(b.prefix)
                for name, defs in _module_exports(store, obj).items():
                    dotted = f"{head}.{name}"
                    if dotted in written:
                        for d in defs:
                            if d.path != path:
                                bind(dotted, d)
    return ImportedNames({name: tuple(sorted(objs_, key=lambda o: (o.path, o.start_line, o.id)))
                          for name, objs_ in targets.items()})


def _uses(imports: FileImports, names: Iterable[str]) -> list[tuple[int, frozenset[str]]]:
    """Lines after the import section using an imported name (``m.X`` for a
    module's definition), with the names used."""
    wanted = frozenset(names)
    out = []
    for line in sorted(set(imports.names_by_line) | set(imports.dotted_by_line)):
        if line <= imports.end:
            continue
        used = (imports.names_by_line.get(line, frozenset()) | imports.dotted_by_line.get(line, frozenset())) & wanted
        if used:
            out.append((line, used))
    return out


def build_query(lines: Sequence[str], import_lines: Sequence[int], line: int, context: int) -> str:
    """The file's import lines and the ``context`` lines before ``line`` (1-based)."""
    chosen = {n for n in import_lines if n < line}
    chosen.update(range(max(1, line - context), line))
    return "\n".join(lines[n - 1] for n in sorted(chosen) if n - 1 < len(lines))


def build_tasks(store: GraphStore, repo: str, *, context_lines: int = 30, seed: int = 0,
                min_candidates: int = 5, random_per_file: int = 1, root: str = "", corpus: str = "",
                progress: Progress | None = None) -> tuple[list[Task], BuildReport]:
    """Every task of one indexed repository, deterministic for a given ``seed``.

    ``random_per_file`` random lines per file (RepoBench takes one)."""
    if context_lines < 1:
        raise InputError(f"--context-lines must be at least 1, got {context_lines}")
    if random_per_file < 0 or min_candidates < 1:
        raise InputError("random lines per file must be >= 0 and the candidate minimum >= 1")
    files = [o for o in store.find_objects(repo=repo, kind="file") if o.language in LANGUAGES]
    report = BuildReport(repo=repo, files=len(files))
    tasks: list[Task] = []
    seen: set[tuple[str, str, str]] = set()
    for i, f in enumerate(sorted(files, key=lambda o: o.path), 1):
        for task in _file_tasks(store, repo, f, report, context_lines=context_lines, seed=seed,
                                min_candidates=min_candidates, random_per_file=random_per_file,
                                root=root, corpus=corpus):
            key = (task.query, task.next_line, task.gold_id)
            if key in seen:
                report.dropped["duplicate"] += 1
                continue
            seen.add(key)
            tasks.append(task)
            report.by_setting[task.setting] += 1
            report.by_difficulty[task.difficulty] += 1
        if progress:
            progress(f"tasks {repo}", i, len(files))
    report.tasks = len(tasks)
    return tasks, report


def _file_tasks(store: GraphStore, repo: str, f: CodeObject, report: BuildReport, *,
                context_lines: int, seed: int, min_candidates: int, random_per_file: int,
                root: str, corpus: str) -> Iterator[Task]:
    text = store.source(f.id)
    if not text:
        report.skipped_files["no-source"] += 1
        return
    try:
        imports = read_imports(f.language, text)
    except ImportParseError as exc:
        log.info("%s: %s", f.path, exc)
        report.skipped_files["unparsable"] += 1
        return
    names = imported_names(store, repo, f.path, imports)
    if not names.targets:
        report.skipped_files["no-repository-imports"] += 1
        return
    candidates = names.candidates()
    if len(candidates) < min_candidates:
        report.skipped_files[f"fewer-than-{min_candidates}-candidates"] += 1
        return
    uses = _uses(imports, names.targets)
    if not uses:
        report.skipped_files["imported-names-unused"] += 1
        return
    lines = text.splitlines()
    picks: list[tuple[str, int, frozenset[str]]] = []
    first_line, first_used = uses[0]
    if len(first_used) > 1:
        report.dropped["first-line-uses-several-names"] += 1
    else:
        picks.append(("cross_file_first", first_line, first_used))
    later = [(ln, used) for ln, used in uses[1:] if len(used) == 1]
    report.skipped_lines["uses-several-names"] += sum(1 for _, u in uses if len(u) > 1)
    if later:
        rng = random.Random(f"{seed}:{repo}:{f.path}")
        for ln, used in sorted(rng.sample(later, min(random_per_file, len(later)))):
            picks.append(("cross_file_random", ln, used))
    else:
        report.dropped["no-later-single-name-line"] += 1
    for setting, line, used in picks:
        task = _make_task(store, repo, f, lines, imports, names, candidates, setting, line,
                          next(iter(used)), report, context_lines=context_lines, root=root, corpus=corpus)
        if task is not None:
            yield task


def _make_task(store: GraphStore, repo: str, f: CodeObject, lines: list[str], imports: FileImports,
               names: ImportedNames, candidates: list[str], setting: str, line: int, name: str,
               report: BuildReport, *, context_lines: int, root: str, corpus: str) -> Task | None:
    defs = names.targets[name]
    if len(defs) > 1:
        report.dropped["ambiguous-gold"] += 1
        return None
    gold = defs[0]
    if gold.start_line < 1 or gold.end_line < gold.start_line:
        report.dropped["gold-not-found"] += 1
        return None
    gold_text = store.source(file_id(repo, gold.path))
    gold_lines = gold_text.splitlines()[gold.start_line - 1:gold.end_line] if gold_text else []
    if not "".join(gold_lines).strip():
        report.dropped["empty-gold"] += 1
        return None
    next_line = lines[line - 1]
    query = build_query(lines, imports.import_lines, line, context_lines)
    if next_line.strip() in query:
        report.dropped["leak"] += 1
        return None
    return Task(
        id=f"{repo}:{f.path}:{line}:{setting}", repo=repo, path=f.path, line=line, setting=setting,
        language=f.language, query=query, next_line=next_line, used_name=name, gold_id=gold.id,
        gold=GoldLines(gold.path, gold.start_line, gold.end_line), candidates=tuple(candidates),
        difficulty=difficulty(len(candidates)), root=root, corpus=corpus,
    )


# -- JSONL ------------------------------------------------------------------------

def write_tasks(tasks: Iterable[Task], path: str | Path) -> int:
    """Write tasks as JSON lines (atomically); returns how many."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with replacing(target) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for t in tasks:
            fh.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def read_tasks(path: str | Path) -> list[Task]:
    """Tasks from a JSONL file; a malformed line is a clear error."""
    src = Path(path)
    if not src.is_file():
        raise InputError(f"no task file {src}")
    out = []
    with src.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                out.append(Task.from_dict(json.loads(raw)))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{src}:{n}: not a task ({type(exc).__name__}: {exc})") from exc
    return out
