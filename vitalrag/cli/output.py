"""Where the CLI writes: data to stdout, progress and messages to stderr.

Everything printed passes through here, so repository text reaches a terminal
without its control characters (``kernel.printable``: tab and newline kept,
ESC, BEL, C1 and a lone CR escaped as ``\\xNN``) and without rich markup being
read from it (a folder named ``[wip]`` prints as itself).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console

from vitalrag.kernel.printable import json_printable, printable


def stderr_console() -> Console:
    """A rich console on stderr that reads no markup from what it prints: print
    user and repository text through ``printable`` too (``echo`` does)."""
    return Console(stderr=True, markup=False)


def echo(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` with its control characters escaped."""
    click.echo(printable(message), err=err, nl=nl)


def emit_json(data: Any) -> None:
    """``data`` as JSON on stdout: lossless, and safe on a terminal (``json.dumps``
    escapes C0 itself; ``json_printable`` the DEL and C1 it leaves raw)."""
    click.echo(json_printable(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False)))


#: seconds between the plain progress lines written when stderr is not a terminal
PROGRESS_EVERY = 5.0


@contextmanager
def progress_bar(enabled: bool | None = None) -> Iterator[Any]:
    """A progress callback ``(stage, done, total)``: a rich bar on a terminal; else
    (a log, a CI job) a plain line on stderr every few seconds
    (``$VITALRAG_PROGRESS_EVERY``, default 5; 0 turns the lines off)."""
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        yield _plain_progress(float(os.environ.get("VITALRAG_PROGRESS_EVERY", PROGRESS_EVERY)))
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                  console=stderr_console(), transient=True) as prog:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = prog.add_task(stage, total=total)
            prog.update(tasks[stage], completed=done, total=total)

        yield update


def _plain_progress(every: float) -> Any:
    return _PlainProgress(every) if every > 0 else None


class _PlainProgress:
    """Progress lines for a stderr that is not a terminal: one when ``every`` seconds
    passed since the last line, and the last one of a step that ran that long."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.started = self.last = self.stage_start = time.monotonic()
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:
            self.stage, self.stage_start = stage, now
        finished = total > 0 and done >= total and now - self.stage_start >= self.every
        if now - self.last < self.every and not finished:
            return
        self.last = self.stage_start = now  # a step's last line is written once
        share = f" ({100 * done // total}%)" if total else ""
        click.echo(f"{stage}: {done}/{total}{share}, {now - self.started:.0f}s", err=True)
