"""Versions of the repositories in a Neo4j store: readers see one whole version of
each, a writer stages the next beside it and switches in one short transaction.

The layout is in ``neo4j_queries`` (``born``/``died`` on every node and edge of a
repository's copy, ``(:RepositoryVersion {repo, current})``). This module keeps
the protocol around it:

- **Readers** pass ``$pin`` (repository -> version) with every read. Outside a
  block each read takes the current versions afresh; ``snapshot()`` takes them once
  for a block (an MCP call), so the block's reads all see the same versions, and a
  store opened ``held`` (a CLI command) is one such block for its whole life. A pin older than half the grace period is taken again: rows a flip
  ended are deleted only ``grace`` seconds after it, so no read meets them half gone.
- **Writers** hold a lease per repository (``lease`` seconds, renewed by a thread
  while the block runs) and write version current+1: ``writing(repos)`` is the
  block; writes outside one are a block each. At the end of the outermost block one
  transaction makes every staged version current (``FLIP``). A block that raises
  undoes what it wrote; a writer killed anywhere leaves the old versions current and
  its rows unseen, and the next writer of that repository, finding the lease run
  out, undoes them.
- **Garbage**: what a version removed is deleted by the first writer of that
  repository that comes ``grace`` seconds or more after the flip (the writer itself,
  with a grace of 0).

A writer has two test pause points (``kernel.pause``): before its flip, and after
the N-th write transaction of its block.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vitalrag.errors import StoreBusy
from vitalrag.graph import neo4j_queries as q
from vitalrag.kernel.pause import NEO4J_FLIP, neo4j_write, pause

if TYPE_CHECKING:
    from vitalrag.graph.neo4j_session import Neo4jSession

log = logging.getLogger(__name__)

#: rows deleted or reopened per transaction when collecting garbage
GARBAGE_BATCH = 10_000


@dataclass(slots=True)
class _Pin:
    """Versions read once (``taken``: the monotonic time the read was sent)."""

    versions: dict[str, int] | None = None
    taken: float = 0.0


@dataclass(slots=True)
class _Scope:
    """One outermost ``writing`` block: the versions it stages and its leases."""

    token: str
    staged: dict[str, int] = field(default_factory=dict)
    pin: _Pin = field(default_factory=_Pin)
    stop: threading.Event = field(default_factory=threading.Event)
    renewer: threading.Thread | None = None
    lost: str | None = None
    writes: int = 0
    #: a repository another writer holds is waited for (else ``StoreBusy``)
    wait: bool = False


class Versions:
    """The version protocol of one Neo4j store (through its ``Neo4jSession``)."""

    def __init__(self, store: Neo4jSession, *, held: bool = False) -> None:
        self.store = store
        self._scope: _Scope | None = None
        self._snapshot: ContextVar[_Pin | None] = ContextVar(f"vitalrag_pin_{id(self)}", default=None)
        #: the pin of every read outside a block, for a store opened ``held``
        self._held = _Pin() if held else None

    @property
    def grace(self) -> float:
        return self.store.settings.grace

    @property
    def lease(self) -> float:
        return self.store.settings.lease

    # -- reading ----------------------------------------------------------------------
    def pins(self) -> dict[str, int]:
        """The version of every repository a read sees now (with this store's staged
        versions, when it is writing)."""
        scope = self._scope
        holder = self._snapshot.get()
        if holder is None:
            holder = scope.pin if scope is not None else self._held
        if holder is None:
            versions = self._read_pins()
        else:
            if holder.versions is None or time.monotonic() - holder.taken > self.grace / 2:
                holder.taken = time.monotonic()
                holder.versions = self._read_pins()
            versions = holder.versions
        if scope is not None and scope.staged:
            return {**versions, **scope.staged}
        return versions

    def _read_pins(self) -> dict[str, int]:
        return {r["repo"]: int(r["current"]) for r in self.store.read_rows(q.PINS)}

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads in this block (in this thread or task) see one version of each
        repository: the current ones at its first read."""
        if self._snapshot.get() is not None:  # nested: the outer block's versions
            yield
            return
        token = self._snapshot.set(_Pin())
        try:
            yield
        finally:
            self._snapshot.reset(token)

    # -- writing ----------------------------------------------------------------------
    @property
    def staged(self) -> dict[str, int]:
        return dict(self._scope.staged) if self._scope is not None else {}

    def repo_of(self, node_id: str) -> str:
        """The repository of an object id: the longest known repository name it starts
        with (``repo`` or ``repo:...``), else what comes before its first colon."""
        known: Iterable[str] = self._scope.staged if self._scope is not None else ()
        for names in (known, None):
            candidates = names if names is not None else self.pins()
            best = max((r for r in candidates if node_id == r or node_id.startswith(r + ":")),
                       key=len, default=None)
            if best is not None:
                return best
        return node_id.split(":", 1)[0]

    @contextmanager
    def writing(self, repos: Iterable[str] = (), *, wait: bool = False) -> Iterator[None]:
        """Stage a new version of ``repos`` (more can join later in the block); at
        the end of the outermost block they all become current at once. ``wait``
        (the outermost block's): a lease another writer holds is waited for."""
        scope = self._scope
        if scope is not None:
            self._join(scope, repos)
            yield
            return
        scope = _Scope(token=secrets.token_hex(8), wait=wait)
        self._scope = scope
        switched = False
        try:
            self._join(scope, repos)
            yield
            self._flip(scope)
            switched = True
        except BaseException:
            if not switched:
                self._undo(scope)
            raise
        finally:
            scope.stop.set()
            self._scope = None
        # what this block replaced once its grace is over, and what other repositories'
        # versions replaced that is due now (a deleted repository is never written
        # again, so no writer of its own would ever collect it)
        graces: dict[str, float | None] = {repo: None for repo in sorted(scope.staged)}  # None: this store's
        try:
            for r in self.store.read(q.DUE_ELSEWHERE, skip=sorted(scope.staged)):
                graces[r["repo"]] = float(r["grace"]) / 1000
        except Exception as exc:  # noqa: BLE001 - garbage waits for the next writer
            log.warning("could not look for versions due for collection (%s); the next write will", exc)
        for repo, grace in graces.items():
            try:
                self.collect(repo, grace=grace)
            except Exception as exc:  # noqa: BLE001 - the flip is done; the next writer collects
                log.warning("could not remove what %s's versions replaced (%s); the next write will", repo, exc)

    def check(self) -> None:
        """Before a write transaction: refuse when this writer lost its lease."""
        scope = self._scope
        if scope is not None and scope.lost:
            raise StoreBusy(scope.lost)

    def wrote(self) -> None:
        """After a write transaction of a block (a test pause point)."""
        scope = self._scope
        if scope is None:
            return
        scope.writes += 1
        pause(neo4j_write(scope.writes))

    def _join(self, scope: _Scope, repos: Iterable[str]) -> None:
        for repo in sorted(set(repos) - scope.staged.keys()):
            self.store.ensure_schema()
            current = self._take_lease(scope.token, repo, scope.wait)
            scope.staged[repo] = current + 1
            if scope.renewer is None:
                scope.renewer = threading.Thread(target=self._renew, args=(scope,), daemon=True,
                                                 name="vitalrag-neo4j-lease")
                scope.renewer.start()

    def _take_lease(self, token: str, repo: str, wait: bool) -> int:
        announced = False
        while True:
            (r,) = self.store.write(q.TAKE_LEASE, repo=repo, token=token, lease_ms=int(self.lease * 1000))
            current = int(r["current"])
            if r["free"]:
                if r["expired"]:
                    log.warning("the last writer of %s into %s did not finish (its lease ran out): "
                                "removing what it wrote", repo, self.store.location)
                    self._garbage(repo, current, ("unborn", "reopen"))
                self.collect(repo)
                return current
            left = max(0.0, float(r["left"] or 0) / 1000)
            message = (f"another writer is writing repository {repo!r} into {self.store.location} "
                       f"(its lease ends in {left:.0f}s unless it renews it)")
            if not wait:
                raise StoreBusy(message)
            if not announced:
                log.warning("%s: waiting", message)
                announced = True
            time.sleep(min(1.0, max(0.1, left)))

    def _renew(self, scope: _Scope) -> None:
        while not scope.stop.wait(self.lease / 3):
            repos = list(scope.staged)
            try:
                (r,) = self.store.write(q.RENEW_LEASES, repos=repos, token=scope.token,
                                         lease_ms=int(self.lease * 1000))
            except Exception as exc:  # noqa: BLE001 - retried at the next tick; the flip checks the lease
                log.warning("could not renew the write lease of %s: %s", ", ".join(repos), exc)
                continue
            if int(r["n"]) < len(repos):
                scope.lost = (f"lost the write lease of {', '.join(repos)} on {self.store.location} "
                              "(another writer took it over): nothing of this write was switched to")

    def _flip(self, scope: _Scope) -> None:
        if not scope.staged:
            return
        pause(NEO4J_FLIP)
        self.check()
        rows = [{"repo": repo, "version": v} for repo, v in sorted(scope.staged.items())]

        def work(tx: Any) -> None:
            # the grace is recorded: a writer of another repository collects by it
            n = tx.run(q.FLIP, rows=rows, token=scope.token, grace_ms=int(self.grace * 1000)).single()["n"]
            if n != len(rows):
                raise StoreBusy(f"lost the write lease of {', '.join(scope.staged)} on "
                                f"{self.store.location} (another writer took it over): nothing was switched to")

        self.store.commit(work)
        log.debug("switched %s", ", ".join(f"{r['repo']} to version {r['version']}" for r in rows))

    def _undo(self, scope: _Scope) -> None:
        """Remove what a failed block wrote and give its leases back; when that fails
        too, the leases run out and the next writer removes it."""
        try:
            for repo, version in sorted(scope.staged.items()):
                self._garbage(repo, version - 1, ("unborn", "reopen"))
            if scope.staged:
                self.store.write(q.RELEASE_LEASES, repos=list(scope.staged), token=scope.token)
        except Exception as exc:  # noqa: BLE001 - the error that failed the block is the one to raise
            log.warning("could not undo the unfinished write of %s (%s); the next writer will, once "
                        "its lease runs out", ", ".join(scope.staged), exc)

    def collect(self, repo: str, *, grace: float | None = None) -> None:
        """Delete what versions of ``repo`` flipped at least ``grace`` seconds ago
        (default: the store's) removed."""
        wait = self.grace if grace is None else grace
        (r,) = self.store.read(q.DUE, repo=repo, grace_ms=int(wait * 1000)) or ({"due": None},)
        due = r["due"]
        if due is None:
            return
        self._garbage(repo, int(due), ("ended",))
        self.store.write(q.FORGET_FLIPS, repo=repo, upto=int(due))

    def _garbage(self, repo: str, upto: int, kinds: tuple[str, ...]) -> None:
        statements = [q.garbage_edges(k) for k in kinds]
        statements += [q.garbage_nodes(label, k) for k in kinds for label in q.VERSIONED_LABELS]
        for statement in statements:
            while True:
                (r,) = self.store.write(statement, repo=repo, upto=upto, batch=GARBAGE_BATCH)
                if int(r["n"]) < GARBAGE_BATCH:
                    break
