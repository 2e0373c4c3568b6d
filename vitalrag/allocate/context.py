"""``context``: a query in, C(q) out. Retrieval and allocation end to end.

    >>> from vitalrag.allocate import context
    >>> result = context("send a prepared request", store=".vitalrag", budget=4096)
    >>> result.text      # C(q)
    >>> result.record    # why each candidate view and each slot ended as it did

The retriever returns a pool of ranked views (``pool``, deeper than the ``k``
slots, so the quotient and the companion slot have something to choose from);
the allocator reads object text and same-file peers from the same store.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from vitalrag.allocate.api import allocate
from vitalrag.allocate.base import PAPER_B_OBJ, Allocation
from vitalrag.allocate.controls import DEFAULT_POLICY, get_policy
from vitalrag.allocate.fill import TESTS_MODES, FillPolicy
from vitalrag.errors import InputError
from vitalrag.graph.store import DEFAULT_STORE
from vitalrag.retrieve.api import RETRIEVERS, Retriever
from vitalrag.tokens import TokenCounter

log = logging.getLogger(__name__)

#: the fused ranking ``context`` allocates from: BM25 counts one and a half times
#: (measured on bench/context_quality.py: +1.3 entry, +2.7 survival at 4,096 tokens)
FUSION_WEIGHTS = {"bm25": 1.5}

#: how many ranked views the allocator chooses from by default
DEFAULT_POOL = 100


def check_context_args(query: str, file: str | None, line: int | None, *, policy: str,
                       budget: int, k: int, pool: int, retriever: str, tests: str = "auto") -> None:
    """Reject what cannot work before any index is opened, so the message names
    the user's mistake rather than a missing store."""
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query: say what code you are looking for")
    get_policy(policy)  # unknown names raise with the list of valid ones
    if retriever not in RETRIEVERS:
        raise InputError(f"unknown retriever {retriever!r}: choose one of {', '.join(RETRIEVERS)}")
    for name, value in (("budget", budget), ("k", k), ("pool", pool)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be a whole number >= 1, got {value!r}")
    if tests not in TESTS_MODES:
        raise InputError(f"tests must be one of {', '.join(TESTS_MODES)}, got {tests!r}")
    if line is not None and file is None:
        raise InputError("a line needs a file: give --file with --line")
    if line is not None and line < 1:
        raise InputError(f"line must be >= 1, got {line!r}")


def context_from(retriever_index: Retriever, query: str, file: str | None = None,
                 line: int | None = None, *, policy: str = DEFAULT_POLICY, budget: int = 4096,
                 k: int = 5, pool: int = DEFAULT_POOL, retriever: str = "fused",
                 repo: str | Sequence[str] | None = None, b_obj: int | None = None, b_min: int = 128,
                 counter: TokenCounter | None = None, tests: str = "auto",
                 line_numbers: bool = True) -> Allocation:
    """``context`` over an already open ``Retriever`` (servers and evaluations
    that answer many queries keep one open). ``b_obj`` None: the policy's own cap
    (``vital-fill``: 2,048; the paper's policies: 1,024)."""
    check_context_args(query, file, line, policy=policy, budget=budget, k=k, pool=pool,
                       retriever=retriever, tests=tests)
    hits = retriever_index.search(query, k=pool, retriever=retriever, file=file, line=line, repo=repo,
                                  weights=FUSION_WEIGHTS)
    log.debug("retrieved %d views for %r with %s", len(hits), query, retriever)
    chosen = get_policy(policy)
    if isinstance(chosen, FillPolicy):
        chosen = dataclasses.replace(chosen, tests=tests, line_numbers=line_numbers)  # type: ignore[arg-type]
    if b_obj is None:
        b_obj = chosen.b_obj if isinstance(chosen, FillPolicy) else PAPER_B_OBJ
    result = allocate(query, hits, policy=chosen, budget=budget, k=k, store=retriever_index.store,
                      b_obj=b_obj, b_min=b_min, counter=counter)
    # The record also says where its candidates came from, so it explains itself.
    params = {**result.record.params, "retriever": retriever, "pool": pool}
    if retriever == "fused":
        params["weights"] = FUSION_WEIGHTS
    if file is not None:
        params["file"] = file
        if line is not None:
            params["line"] = line
    record = dataclasses.replace(result.record, params=params)
    return dataclasses.replace(result, record=record)


def context(query: str, file: str | None = None, line: int | None = None, *,
            store: str = DEFAULT_STORE, index_dir: str | None = None, policy: str = DEFAULT_POLICY,
            budget: int = 4096, k: int = 5, pool: int = DEFAULT_POOL, retriever: str = "fused",
            repo: str | Sequence[str] | None = None, b_obj: int | None = None, b_min: int = 128,
            counter: TokenCounter | None = None, tests: str = "auto",
            line_numbers: bool = True) -> Allocation:
    """Retrieve ``pool`` views for ``query`` from the index at ``store`` and
    allocate ``k`` slots and ``budget`` tokens among them with ``policy``.

    ``file`` (and ``line`` in it) anchor the graph walk. Object text and
    same-file peers come from the store. Raises ``InputError`` for bad
    arguments and ``StoreError`` when there is no index."""
    check_context_args(query, file, line, policy=policy, budget=budget, k=k, pool=pool,
                       retriever=retriever, tests=tests)
    opened = Retriever.open(store, index_dir=index_dir)
    try:
        return context_from(opened, query, file, line, policy=policy, budget=budget, k=k, pool=pool,
                            retriever=retriever, repo=repo, b_obj=b_obj, b_min=b_min,
                            counter=counter, tests=tests, line_numbers=line_numbers)
    finally:
        opened.store.close()


__all__ = ["DEFAULT_POOL", "FUSION_WEIGHTS", "check_context_args", "context", "context_from"]
