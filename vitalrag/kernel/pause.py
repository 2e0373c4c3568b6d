"""One named pause point for fault tests: a process whose environment holds
``VITALRAG_TEST_PAUSE=POINT=MARKER`` creates the file MARKER when it reaches
``pause(POINT)`` and waits there until the file is removed (at most 60 s), so a
test can kill it at that point or look at what readers see meanwhile. Outside
tests the variable is unset and a pause point costs one lookup.

The points (``pause.env(point, marker)`` is the environment a test passes):

- ``GRAPH_WRITTEN``: an embedded store's ``save`` wrote its new graph snapshot,
  before anything names it;
- ``RETRIEVAL``: ``RetrievalIndex.build`` built the views (an index run's graph is
  written by then), before it writes the snapshot;
- ``NEO4J_FLIP``: a Neo4j writer before it switches to its versions;
- ``neo4j_write(n)``: a Neo4j writer after the n-th write transaction of its block.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ENV = "VITALRAG_TEST_PAUSE"
#: seconds a paused process waits at most
LONGEST = 60.0

GRAPH_WRITTEN = "graph-written"
RETRIEVAL = "retrieval"
NEO4J_FLIP = "neo4j-flip"


def neo4j_write(n: int) -> str:
    return f"neo4j-write-{n}"


def env(point: str, marker: str | os.PathLike[str]) -> dict[str, str]:
    """The environment that pauses a process at ``point``, marking it with ``marker``."""
    return {ENV: f"{point}={os.fspath(marker)}"}


def pause(point: str) -> None:
    """Wait here when the environment names ``point`` (see the module's docstring)."""
    value = os.environ.get(ENV)
    if not value:
        return
    name, _, marker = value.partition("=")
    if name != point or not marker:
        return
    Path(marker).touch()
    deadline = time.monotonic() + LONGEST
    while os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
