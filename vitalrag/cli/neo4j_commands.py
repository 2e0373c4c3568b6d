"""``push`` and ``pull``: copy code graphs between an embedded index and Neo4j."""

from __future__ import annotations

import click

from vitalrag.cli.output import echo, emit_json, progress_bar
from vitalrag.errors import InputError
from vitalrag.graph.store import DEFAULT_STORE, is_server_uri
from vitalrag.graph.transfer import TransferReport

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


def _print_report(copied: tuple[TransferReport, dict[str, int]], verb: str, as_json: bool) -> None:
    report, views = copied
    if as_json:
        emit_json({**report.to_json(), **views})
        return
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
    from vitalrag.index import Index

    server = _server(target, "--to")
    with Index.open(_folder(store_location), mode="write") as index, progress_bar() as progress:
        copied = index.push(server, repo, wait=wait, progress=progress)
    _print_report(copied, "pushed", as_json)


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
    from vitalrag.index import Index

    server = _server(origin, "--from")
    with Index.open(_folder(store_location), mode="write") as index, progress_bar() as progress:
        copied = index.pull(server, repo, progress=progress)
    _print_report(copied, "pulled", as_json)


def register(group: click.Group) -> None:
    for cmd in (push, pull):
        group.add_command(cmd)
