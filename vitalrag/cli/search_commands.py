"""``search``: ranked views from the dense, BM25 and graph-walk retrievers."""

from __future__ import annotations

import click

from vitalrag.cli.index_commands import store_option
from vitalrag.cli.output import echo, emit_json
from vitalrag.retrieve.api import RETRIEVERS


@click.command()
@click.argument("query")
@store_option
@click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
              help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j).")
@click.option("--file", "file", help="The file the query is about (anchors the graph walk).")
@click.option("--line", type=click.IntRange(min=1), help="A line in --file (its enclosing object anchors the walk).")
@click.option("--repo", multiple=True,
              help="Repository to search when the store holds several (repeat for several).")
@click.option("--retriever", type=click.Choice(RETRIEVERS), default="fused", show_default=True)
@click.option("-k", "--k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="How many views.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, store_location: str, index_dir: str | None, file: str | None, line: int | None,
           repo: tuple[str, ...], retriever: str, k: int, as_json: bool) -> None:
    """Search the index for views of code objects matching QUERY."""
    from vitalrag.index import Index

    if line is not None and file is None:
        raise click.UsageError("--line needs --file")
    with Index.open(store_location, index_dir=index_dir) as index:
        hits = index.retriever().search(query, k=k, retriever=retriever, file=file, line=line,
                                        repo=list(repo) or None)
    if as_json:
        emit_json([h.to_dict() for h in hits])
        return
    if not hits:
        echo(f"no views found for {query!r}", err=True)
    for rank, h in enumerate(hits, 1):
        v = h.view
        found = ",".join(f"{name}#{pos}" for name, pos in h.retrievers)
        echo(f"{rank:>3}  {h.score:8.4f}  {v.kind:<9} {v.object_id}  {v.path}:{v.start_line}-{v.end_line}  [{found}]")


def register(group: click.Group) -> None:
    group.add_command(search)
