"""The ``vitalrag`` command line. Data goes to stdout; progress and logs to stderr."""

from __future__ import annotations

import gc
import logging
from typing import Any

import click

from vitalrag import __version__
from vitalrag.errors import VitalRAGError
from vitalrag.kernel.printable import printable


#: young objects allocated between two collections (CPython's default is 700), and
#: young collections between two of the middle generation, and those between two
#: of the oldest (CPython's defaults are 10 and 10)
GC_YOUNG_THRESHOLD = 100_000
GC_OLDER_THRESHOLDS = (50, 100)


def tune_gc() -> None:
    """The collector's setting for a ``vitalrag`` process, made once at its start.

    An index run allocates millions of long-lived objects (facts, nodes, edges)
    and almost no reference cycles; at CPython's default of a young collection
    every 700 allocations, the collector re-scans them so often that the best
    ingest of ``bench/ingest.py`` (which applies this setting too) took 7.9-8.4 s
    on Django 5.1.4 and 3.7-4.2 s on guava 33.3.1, against 4.4-5.4 s and
    1.7 s with it. The older generations' thresholds (50 and 100 instead of 10
    and 10) cut the collections that re-scan the objects an index keeps: the best
    of 3 ingests of Django in one process took 3.94-3.97 s against 4.25-4.48 s
    with CPython's (3.82 s with the collector off). Cyclic garbage still goes
    with the next young collection, and a full collection waits, as it did, for
    the long-lived objects to grow by a quarter. The program sets it once, as mypy does; the library
    never touches the collector, and the parse workers, forked from this process,
    inherit it.
    """
    gc.set_threshold(GC_YOUNG_THRESHOLD, *GC_OLDER_THRESHOLDS)


class VitalGroup(click.Group):
    """Turns every ``VitalRAGError`` into one clear line on stderr and exit 1 (a
    message naming a repository's file prints its control characters escaped)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VitalRAGError as exc:
            raise click.ClickException(printable(str(exc))) from exc


class PrintableFormatter(logging.Formatter):
    """Log lines with their control characters escaped: a message may name a
    repository's file."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


@click.group(cls=VitalGroup)
@click.version_option(__version__, prog_name="vitalrag")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
def main(verbose: int) -> None:
    """VitalRAG: index repositories into a code graph and build bounded contexts
    for coding agents."""
    tune_gc()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    from rich.logging import RichHandler

    from vitalrag.cli.output import stderr_console

    handler = RichHandler(console=stderr_console(), show_path=False, level=level)
    handler.setFormatter(PrintableFormatter("%(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


from vitalrag.cli import (  # noqa: E402  (register commands)
    context_commands,
    eval_commands,
    index_commands,
    neo4j_commands,
    search_commands,
    serve_commands,
    transfer_commands,
)

index_commands.register(main)
search_commands.register(main)
context_commands.register(main)
eval_commands.register(main)
neo4j_commands.register(main)
serve_commands.register(main)
transfer_commands.register(main)
