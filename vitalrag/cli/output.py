"""Where the CLI writes: data to stdout, progress and messages to stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console


def stderr_console() -> Console:
    return Console(stderr=True)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False))


@contextmanager
def progress_bar(enabled: bool | None = None) -> Iterator[Any]:
    """A rich progress callback ``(stage, done, total)``; silent when stderr is not a terminal."""
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=stderr_console(), transient=True) as prog:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = prog.add_task(stage, total=total)
            prog.update(tasks[stage], completed=done, total=total)

        yield update
