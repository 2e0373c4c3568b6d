"""``transfer``: choose between a default and an alternative program (paper Eq. 6)."""

from __future__ import annotations

from pathlib import Path

import click

from vitalrag.cli.index_commands import store_option
from vitalrag.cli.output import echo, emit_json
from vitalrag.errors import InputError
from vitalrag.transfer.gate import GATES

_ARROW = {1: "alternative", -1: "default", 0: "neither"}


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what} program {path}: {exc}") from exc


@click.command()
@click.option("--default", "default_path", required=True, metavar="FILE",
              help="The default program (one function or class).")
@click.option("--alt", "alt_path", required=True, metavar="FILE", help="The alternative program.")
@click.option("--target", required=True, metavar="ID",
              help="Object id of the function being generated; its file gives the scope, its repository the objects.")
@store_option
@click.option("--gate", type=click.Choice(GATES), default="full", show_default=True,
              help="The full gate or one of its ablations.")
@click.option("--task", default="", help="The task text, recorded with the decision.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
def transfer(default_path: str, alt_path: str, target: str, store_location: str, gate: str, task: str,
             as_json: bool) -> None:
    """Keep the default program unless typed witnesses show the alternative is
    better (syntax repair, interface consistency, fewer unresolved names,
    validity-guarded compactness) and none shows it is worse."""
    from vitalrag.graph.store import open_store
    from vitalrag.transfer import RepositoryIndex, decide, load_scope, resolve_target

    default, alternative = _read(default_path, "default"), _read(alt_path, "alternative")
    store = open_store(store_location, create=False)
    try:
        repo = resolve_target(store, target).repo
        scope = load_scope(RepositoryIndex(store, repo), target)
        decision = decide(default, alternative, scope, gate=gate, task=task, target=target)
    finally:
        store.close()
    if as_json:
        emit_json(decision.to_dict())
        return
    echo(f"chosen: {decision.chosen} ({decision.reason})")
    for w in decision.witnesses:
        echo(f"  {w.family:<12} {w.direction:+d} {_ARROW[w.direction]:<11} {w.summary}")
        if w.family == "interface":
            for side in ("default", "alternative"):
                for c in w.evidence[side]["calls"]:
                    if not c["fits"]:
                        echo(f"      {side}:{c['line']}  {c['call']}  -- {c['why']}")


def register(group: click.Group) -> None:
    group.add_command(transfer)
