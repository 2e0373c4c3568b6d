"""``context`` and ``explain``: retrieve, allocate, and show C(q) or why it is what it is."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vitalrag.allocate.controls import policy_names
from vitalrag.allocate.fill import TESTS_MODES
from vitalrag.allocate.report import render_html, spans_text, view_label
from vitalrag.cli.index_commands import store_option
from vitalrag.cli.output import echo, emit_json
from vitalrag.context import DEFAULTS, ContextSettings, context
from vitalrag.errors import InputError
from vitalrag.kernel.printable import printable
from vitalrag.model import AllocationRecord, ViewDecision
from vitalrag.retrieve.api import RETRIEVERS
from vitalrag.retrieve.query import Query

if TYPE_CHECKING:
    from rich.console import Console

    from vitalrag.allocate.base import Allocation

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = [
    store_option,
    click.option("--index-dir", envvar="VITALRAG_INDEX_DIR", default=None,
                 help="Folder of the retrieval index (default: the store folder; .vitalrag for Neo4j)."),
    click.option("--file", "file", help="The file the query is about (anchors the graph walk)."),
    click.option("--line", type=click.IntRange(min=1),
                 help="A line in --file (its enclosing object anchors the walk)."),
    click.option("--repo", multiple=True,
                 help="Repository to search when the store holds several (repeat for several)."),
    click.option("--policy", type=click.Choice(policy_names()), default=DEFAULTS.policy, show_default=True,
                 help="Allocation policy: vital-fill (for agents), vital (the paper's), a control or an ablation."),
    click.option("--tests", type=click.Choice(TESTS_MODES), default=DEFAULTS.tests, show_default=True,
                 help="Tests in the context (vital-fill): after the code unless the query is about "
                      "tests (auto), ranked as retrieved (include), or never (exclude)."),
    click.option("--line-numbers/--no-line-numbers", default=DEFAULTS.line_numbers, show_default=True,
                 help="Number the shown lines (vital-fill)."),
    click.option("--budget", type=click.IntRange(min=1), default=DEFAULTS.budget, show_default=True,
                 help="Token budget B for the whole context."),
    click.option("-k", "--k", "k", type=click.IntRange(min=1), default=DEFAULTS.k, show_default=True,
                 help="Slots K: how many objects (or views) get a place."),
    click.option("--pool", type=click.IntRange(min=1), default=DEFAULTS.pool, show_default=True,
                 help="How many ranked views the allocator chooses from (then the best object of up to 30 further files)."),
    click.option("--retriever", type=click.Choice(RETRIEVERS), default=DEFAULTS.retriever, show_default=True),
    click.option("--b-obj", type=click.IntRange(min=0), default=None,
                 help="Per-object token cap.  [default: 2048 for vital-fill, 1024 for the paper's "
                      "policies]"),
    click.option("--b-min", type=click.IntRange(min=0), default=DEFAULTS.b_min, show_default=True,
                 help="Per-object token floor when the budget allows it."),
]


def context_options(f: F) -> F:
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


def _allocate(query: str, opts: dict[str, Any]) -> Allocation:
    if opts["line"] is not None and opts["file"] is None:
        raise click.UsageError("--line needs --file")
    if not query.strip():
        raise click.UsageError("empty query: say what code you are looking for")
    settings = ContextSettings(**{f.name: opts[f.name] for f in dataclasses.fields(ContextSettings)})
    return context(Query.of(query, opts["file"], opts["line"], opts["repo"]), settings,
                   index=opts["store_location"], index_dir=opts["index_dir"])


def _fate(v: ViewDecision, by_id: dict[str, ViewDecision]) -> tuple[str, str]:
    """What became of a view, and why, in a few words."""
    if v.status == "representative":
        return (f"slot {v.slot}" if v.slot is not None else "representative"), v.reason
    if v.status == "dropped":
        return "dropped", v.reason
    target = by_id.get(v.merged_into or "")
    where = f"slot {v.slot}" if v.slot is not None else "no slot"
    if target is None:
        return f"merged into {v.merged_into} ({where})", v.reason
    if target.object_key == v.object_key:
        # the record's reason repeats the object id, which this row already shows
        held = "which holds a slot" if v.slot is not None else "which got no slot"
        return f"merged into {where}", f"the view ranked {target.rank} represents the object, {held}"
    # exact dedup merges equal text of another object: name the one kept
    return f"merged into {target.object_key} ({where})", v.reason


def print_record(record: AllocationRecord, console: Console | None = None) -> None:
    """The record as tables: a header, the selected objects, every candidate view."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if console is None:
        # the tables are this command's data: stdout, plain and wide when piped
        tty = sys.stdout.isatty()
        wide = tty or os.environ.get("COLUMNS", "").isdigit()  # a terminal's width, or the one asked for
        console = Console(file=sys.stdout, highlight=False, markup=False, width=None if wide else 200)
    p = record.params
    budget = p.get("budget", "?")
    settings = "  ".join(f"{k}={v}" for k, v in p.items() if k != "budget")
    def text(value: object) -> Text:  # repository text, escaped: rich keeps ESC and C1 as they are
        return Text(printable(str(value)))

    console.print(text(f"query: {record.query}"))
    console.print(text(f"policy: {record.policy}  budget={budget}  {settings}"))
    console.print(text(f"tokens: {record.tokens} of {budget} used; query tokens: "
                       f"{', '.join(record.query_tokens) or 'none'}"))

    merged_count: dict[int, int] = {}
    for v in record.views:
        if v.status == "merged" and v.slot is not None:
            merged_count[v.slot] = merged_count.get(v.slot, 0) + 1
    slots = Table(title=f"selected objects ({len(record.slots)})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for name, right in (("slot", True), ("role", False), ("object", False), ("lines", False),
                        ("score", True), ("d", True), ("b", True), ("used", True),
                        ("clipped", False), ("merged", True), ("why", False)):
        _column(slots, name, right)
    for s in record.slots:
        shown = (spans_text(s.spans) or "-") if s.tokens else "-"
        slots.add_row(*(text(c) for c in (
            s.slot, s.role, s.object_key, shown, f"{s.score:.4f}", s.d, s.b, s.tokens,
            "yes" if s.clipped else "no", merged_count.get(s.slot, 0), s.reason)))
    console.print(slots)

    views = Table(title=f"candidate views ({len(record.views)})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for name, right in (("rank", True), ("score", True), ("object", False), ("view", False),
                        ("fate", False), ("why", False)):
        _column(views, name, right)
    by_id = {v.view_id: v for v in record.views}
    for v in record.views:
        views.add_row(*(text(c) for c in (
            v.rank, f"{v.score:.4f}", v.object_key, view_label(v.view_id, v.object_key),
            *_fate(v, by_id))))
    console.print(views)


def _column(table: Any, name: str, right: bool) -> None:
    """A column of the record's tables: numbers and short labels on one line; ids,
    views, lines and reasons fold into the width left, none under a few words wide,
    so a long id cannot squeeze a reason to a few letters a line."""
    if name in ("object", "why", "view", "lines"):
        table.add_column(name, overflow="fold", min_width=8 if name == "lines" else 12)
    else:
        table.add_column(name, justify="right" if right else "left", no_wrap=True)


@click.command("context")
@click.argument("query")
@context_options
@click.option("--json", "as_json", is_flag=True, help="Print the allocation record as JSON instead.")
def context_command(query: str, as_json: bool, **opts: Any) -> None:
    """Build the context C(q) for QUERY: retrieve candidate views, give K code
    objects a place and a share of the token budget, and print their rendered
    lines.

    With --json, print the allocation record (every candidate view's fate and
    every slot's tokens) instead of the text.
    """
    result = _allocate(query, opts)
    if as_json:
        emit_json(result.record.to_dict())
        return
    if not result.text:
        needs = min((s.d for s in result.record.slots if s.d), default=None)
        if needs is None:
            echo(f"no code found for {query!r}", err=True)
            return
        raise InputError(f"nothing fits in --budget {opts['budget']}: the smallest selected object "
                         f"needs {needs} tokens")
    echo(result.text, nl=False)


@click.command()
@click.argument("query")
@context_options
@click.option("--html", "html_out", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Also write a self-contained HTML report to this file.")
@click.option("--to-neo4j", "neo4j_uri", metavar="URI", default=None,
              help="Also write this allocation's provenance to Neo4j at URI (an :Allocation node "
                   "linked to the objects it selected and the views it merged or dropped).")
def explain(query: str, html_out: Path | None, neo4j_uri: str | None, **opts: Any) -> None:
    """Explain the context for QUERY: the candidate views and their fate
    (representative, merged into an object, or dropped and why), and the
    selected objects with their role, score, tokens needed (d), given (b) and
    used, and the lines shown.

    With --html, also write the same as a self-contained HTML page with a
    budget bar per object; with --to-neo4j, store it in Neo4j for the Browser.
    """
    result = _allocate(query, opts)
    store = _provenance_store(neo4j_uri, result.record) if neo4j_uri is not None else None
    print_record(result.record)
    if html_out is not None:
        try:
            html_out.write_text(render_html(result.record, parts=result.parts), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {html_out}: {exc.strerror or exc}") from exc
        echo(f"wrote {html_out}", err=True)
    if store is not None:
        try:
            aid = store.write_allocation(result.record)
        finally:
            store.close()
        # plain echo: the Cypher line must not be wrapped, so it can be pasted
        echo(f"wrote allocation {aid} to {neo4j_uri}; paste in the Browser:", err=True)
        echo(f"MATCH p=(a:Allocation {{id: '{aid}'}})-[:SELECTED|CONSIDERED]->()-[*0..1]->() RETURN p",
             err=True)


def _provenance_store(neo4j_uri: str, record: AllocationRecord) -> Any:
    """The Neo4j store to write ``record`` to, once it is known to hold every
    object the allocation selected (else its SELECTED edges would point nowhere)."""
    from vitalrag.graph.store import is_server_uri, open_store

    if not is_server_uri(neo4j_uri):
        raise InputError(f"--to-neo4j needs a neo4j:// or bolt:// URI, not {neo4j_uri!r}")
    store = open_store(neo4j_uri)
    try:
        keys = [s.object_key for s in record.slots]
        missing = [k for k in keys if k not in store.get_objects(keys)]
        if missing:
            repos = sorted({k.split(":", 1)[0] for k in missing})
            raise InputError(f"{neo4j_uri} does not hold {', '.join(repos)} (the objects this allocation "
                             f"selected): vitalrag push --store STORE --to {neo4j_uri} first")
    except BaseException:
        store.close()
        raise
    return store


def register(group: click.Group) -> None:
    for cmd in (context_command, explain):
        group.add_command(cmd)


__all__ = ["context_command", "context_options", "explain", "print_record", "register"]
