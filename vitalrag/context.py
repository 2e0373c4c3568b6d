"""``context``: a query in, C(q) out. Retrieval, then allocation, end to end.

    >>> from vitalrag.context import ContextSettings, context
    >>> result = context("send a prepared request", ContextSettings(budget=4096), index=".vitalrag")
    >>> result.text      # C(q)
    >>> result.record    # why each candidate view and each slot ended as it did

This module sits above both layers it joins: the retriever returns a pool of
ranked views (``pool``, deeper than the ``k`` slots, so the quotient and the
companion slot have something to choose from); the allocator (``vitalrag.allocate``,
the paper's model) reads object text and same-file peers from the same store.
The query and the settings are checked once, when their values are made, before
any index is opened, so a message names the caller's mistake rather than a
missing store.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from vitalrag.allocate.api import allocate
from vitalrag.allocate.base import Allocation
from vitalrag.allocate.controls import DEFAULT_POLICY, get_policy
from vitalrag.allocate.fill import TESTS_MODES
from vitalrag.errors import InputError
from vitalrag.graph.store import DEFAULT_STORE
from vitalrag.index import Index
from vitalrag.retrieve.api import RETRIEVERS, Retriever
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.rank import WEIGHTS
from vitalrag.tokens import TokenCounter

log = logging.getLogger(__name__)

#: how many ranked views the allocator chooses from by default
DEFAULT_POOL = 100


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """How a context is made: the retriever and its pool depth, the policy, its
    slots and budgets, and (for ``vital-fill``) tests and line numbers. Checked
    when made. ``b_obj`` None: the policy's own cap (``vital-fill``: 2,048; the
    paper's policies: 1,024)."""

    policy: str = DEFAULT_POLICY
    budget: int = 4096
    k: int = 5
    pool: int = DEFAULT_POOL
    retriever: str = "fused"
    b_obj: int | None = None
    b_min: int = 128
    tests: str = "auto"
    line_numbers: bool = True

    def __post_init__(self) -> None:
        get_policy(self.policy)  # unknown names raise with the list of valid ones
        if self.retriever not in RETRIEVERS:
            raise InputError(f"unknown retriever {self.retriever!r}: choose one of {', '.join(RETRIEVERS)}")
        for name, value in (("budget", self.budget), ("k", self.k), ("pool", self.pool)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a whole number >= 1, got {value!r}")
        if self.tests not in TESTS_MODES:
            raise InputError(f"tests must be one of {', '.join(TESTS_MODES)}, got {self.tests!r}")
        if not isinstance(self.line_numbers, bool):
            raise InputError(f"line_numbers must be true or false, got {self.line_numbers!r}")


#: how a context is made unless told otherwise
DEFAULTS = ContextSettings()


def _allocate(retriever: Retriever, query: Query, settings: ContextSettings,
              counter: TokenCounter | None) -> Allocation:
    shape = None
    if settings.retriever == "fused":
        ranked = retriever.ranked(query, settings.pool, spread=False, priors=False)
        hits, shape = ranked.pool(settings.pool), ranked.shape
    else:
        hits = retriever.search(query, k=settings.pool, retriever=settings.retriever)
    log.debug("retrieved %d views for %r with %s", len(hits), query.text, settings.retriever)
    chosen = get_policy(settings.policy).with_options(tests=settings.tests, line_numbers=settings.line_numbers)
    b_obj = chosen.b_obj if settings.b_obj is None else settings.b_obj
    result = allocate(query.text, hits, policy=chosen, budget=settings.budget, k=settings.k,
                      store=retriever.store, b_obj=b_obj, b_min=settings.b_min, counter=counter)
    # The record also says where its candidates came from, so it explains itself.
    params: dict[str, Any] = {**result.record.params, "retriever": settings.retriever, "pool": settings.pool}
    if shape is not None:
        params["question"] = shape.kind
        params["weights"] = dict(WEIGHTS[shape.kind])
    if query.file is not None:
        params["file"] = query.file
        if query.line is not None:
            params["line"] = query.line
    record = dataclasses.replace(result.record, params=params)
    return dataclasses.replace(result, record=record)


def context_from(retriever: Retriever, query: str | Query, settings: ContextSettings = DEFAULTS, *,
                 counter: TokenCounter | None = None) -> Allocation:
    """``context`` over an already open ``Retriever`` (servers and evaluations
    that answer many queries keep one open), all reads in one ``snapshot()`` of
    its store (a server store: one version of each repository, its pins read once)."""
    asked = query if isinstance(query, Query) else Query.of(query)
    with retriever.store.snapshot():
        return _allocate(retriever, asked, settings, counter)


def context(query: str | Query, settings: ContextSettings = DEFAULTS, *, index: str = DEFAULT_STORE,
            index_dir: str | None = None, counter: TokenCounter | None = None) -> Allocation:
    """Retrieve ``settings.pool`` views for ``query`` from the index at ``index``
    (a folder or a Neo4j URI) and allocate ``settings.k`` slots and
    ``settings.budget`` tokens among them with ``settings.policy``.

    A ``Query`` with a ``file`` (and a ``line`` in it) anchors the graph walk;
    its ``repos`` limit the search. Object text and same-file peers come from
    the store. Raises ``InputError`` for bad arguments and ``StoreError`` when
    there is no index."""
    asked = query if isinstance(query, Query) else Query.of(query)
    with Index.open(index, index_dir=index_dir) as opened:
        return context_from(opened.retriever(), asked, settings, counter=counter)


__all__ = ["DEFAULTS", "DEFAULT_POOL", "ContextSettings", "context", "context_from"]
