"""``push`` and ``pull``: copy code graphs between an embedded index and Neo4j."""

from __future__ import annotations

from contextlib import nullcontext

import click

from vitalrag.cli.output import echo, emit_json, progress_bar
from vitalrag.errors import InputError
from vitalrag.graph.store import DEFAULT_STORE, GraphStore, is_server_uri, open_store
from vitalrag.graph.transfer import TransferReport, copy_store

_folder_option = click.option(
    "--store", "store_location", envvar="VITALRAG_STORE", default=DEFAULT_STORE, show_default=True,
    help="The embedded index folder.",
)
_repo_option = click.option("--repo", help="Only this repository (default: every one).")
_json_option = click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")


def _server(uri: str, flag: str) -> str:
    if not is_server_uri(uri):
        raise InputError(f"{flag} takes a neo4j:// or bolt:// URI, not {uri!r}")
    return uri


def _folder(location: str) -> str:
    if is_server_uri(location):
        raise InputError(f"--store takes an index folder here, not a server URI ({location})")
    return location


def _copy(src: GraphStore, dst: GraphStore, repo: str | None, verb: str, as_json: bool,
          folder: str, *, wait: bool = False) -> None:
    """Copy the graph, then the retrieval views: a push writes the folder's views and
    embeddings into Neo4j, a pull restores the folder's retrieval index from them
    (incremental by view hash both ways; nothing is embedded again). A push is one
    new version of each repository in Neo4j, switched to at its end; a pull reads
    one version, and its folder switches to the new graph and retrieval index
    together (it holds the folder's writer lock: see ``pull``); a pull that fails
    removes what it wrote there, and a full disk is one line (``Staged``). ``wait``:
    a push waits for another writer of a repository instead of failing."""
    from vitalrag.graph.version import Staged, has_retrieval
    from vitalrag.retrieve.index import RetrievalIndex
    from vitalrag.retrieve.server_index import pull_views, push_views, repos_with_views

    views: dict[str, int] = {}
    staged = Staged(folder) if verb == "pulled" else None
    try:
        with staged or nullcontext():
            with progress_bar() as progress, src.snapshot(), dst.writing(wait=wait, staged=staged):
                report = copy_store(src, dst, repo, progress=progress)
                repos = list(report.repos)
                if verb == "pushed" and has_retrieval(folder):
                    writes = push_views(dst, RetrievalIndex.load(folder), repos, progress=progress)
                    views = {"views": sum(w.written + w.kept for w in writes),
                             "views_written": sum(w.written for w in writes)}
                elif verb == "pulled":
                    with_views = [r for r in repos if r in repos_with_views(src)]
                    if with_views:
                        index, read = pull_views(src, folder, with_views, progress=progress, staged=staged)
                        views = {"views": len(index.views), "views_written": read}
            if staged is not None:
                staged.commit()
    finally:
        src.close()
        dst.close()
    if as_json:
        emit_json({**report.to_json(), **views})
        return
    _print_report(report, verb, views)


def _print_report(report: TransferReport, verb: str, views: dict[str, int]) -> None:
    echo(f"{verb} {', '.join(report.repos) or 'nothing'}: {report.objects} objects, "
         f"{report.edges} edges, {report.unresolved} unresolved, {report.sources} sources "
         f"from {report.source} to {report.destination} in {report.seconds:.2f}s")
    if views:
        echo(f"views: {views['views']} ({views['views_written']} copied, the rest unchanged)")


@click.command()
@_folder_option
@click.option("--to", "target", envvar="NEO4J_URI", required=True,
              help="Neo4j URI, e.g. bolt://127.0.0.1:7687 (default: $NEO4J_URI).")
@_repo_option
@_json_option
@click.option("--wait", is_flag=True,
              help="When another writer is writing a repository into Neo4j, wait for it instead of failing.")
def push(store_location: str, target: str, repo: str | None, as_json: bool, wait: bool) -> None:
    """Copy an embedded index into Neo4j.

    Objects, edges, unresolved references, file sources and metadata are copied;
    a repository already in Neo4j is replaced, so pushing twice is harmless. The
    retrieval views and their embeddings go too (only views that changed are
    rewritten), so Neo4j then serves search and context with no local folder.
    Readers of Neo4j see the old copy until the push ends and the new one after;
    a push that fails or is killed leaves the old copy. Credentials come from
    NEO4J_USERNAME / NEO4J_PASSWORD, the database from NEO4J_DATABASE.
    """
    src = open_store(_folder(store_location), create=False)
    try:
        dst = open_store(_server(target, "--to"))
    except BaseException:
        src.close()
        raise
    _copy(src, dst, repo, "pushed", as_json, store_location, wait=wait)


@click.command()
@click.option("--from", "origin", envvar="NEO4J_URI", required=True,
              help="Neo4j URI, e.g. bolt://127.0.0.1:7687 (default: $NEO4J_URI).")
@_folder_option
@_repo_option
@_json_option
def pull(origin: str, store_location: str, repo: str | None, as_json: bool) -> None:
    """Copy code graphs from Neo4j into an embedded index.

    The index folder is created when missing; a repository already in it is
    replaced. Its retrieval index is restored from the server's views and
    embeddings (nothing is embedded again). The folder's readers see the new
    graph and retrieval index together, and a second writer of the folder (an
    index, another pull) fails at once. A folder that holds other files and is
    not an index is refused.
    """
    from vitalrag.graph import version
    from vitalrag.kernel.locks import writer_lock

    folder = _folder(store_location)
    version.check_folder(folder)  # before anything is written there
    src = open_store(_server(origin, "--from"))
    try:
        with writer_lock(folder):
            version.adopt(folder)
            version.sweep(folder)  # what failed or killed writers left
            dst = open_store(folder, write=True)
            _copy(src, dst, repo, "pulled", as_json, store_location)  # closes both
    except BaseException:
        src.close()  # a second close is harmless
        raise


def register(group: click.Group) -> None:
    for cmd in (push, pull):
        group.add_command(cmd)
