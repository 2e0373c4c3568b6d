"""Run allocation policies over tasks: per-task results and a summary.

    >>> plan = RunPlan(policies=("vital", "entity-first-4+1"))
    >>> summary = run_tasks(read_tasks("tasks.jsonl"), plan, "runs/dev")

``RUN_DIR`` then holds ``results.jsonl`` (one row per task, policy and budget),
``summary.json`` (metrics with intervals, paired comparisons against the base
policy) and ``plan.json``. Tasks are grouped by repository; each repository's
graph comes from the per-corpus index cache, so a rerun does no ingest.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vitalrag.allocate import allocate, policy_names
from vitalrag.allocate.provenance import object_key
from vitalrag.allocate.render import full_rendering
from vitalrag.allocate.source import ObjectSource
from vitalrag.errors import InputError
from vitalrag.kernel.files import replacing
from vitalrag.kernel.progress import Progress
from vitalrag.eval.metrics import auth_at_k, gold_survives, recall_at_k
from vitalrag.eval.pool import DEFAULT_DEPTH, CachedGraphSource, FixedPool, Pool, RetrievedPool, bm25_rank
from vitalrag.eval.repobench import lay_out, task_source, task_views
from vitalrag.eval.summary import SMALL_GROUP, summarise
from vitalrag.eval.tasks import Task
from vitalrag.graph.store import GraphStore
from vitalrag.model import ScoredView, file_id
from vitalrag.tokens import get_counter

if TYPE_CHECKING:
    from vitalrag.ingest.parallel import ParseExecutor

log = logging.getLogger(__name__)

#: opens the graph of a task's repository: (repo, root) -> store
StoreOpener = Callable[[str, str], GraphStore]

BASE_POLICY = "entity-first-4+1"
DEFAULT_SWEEP_POLICIES = ("vital", "no-rendering")
POOLS = ("fixed", "retrieved")


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Which policies at which budgets, over which pool."""

    policies: tuple[str, ...] = tuple(policy_names())
    budget: int = 4096
    sweep_budgets: tuple[int, ...] = ()
    sweep_policies: tuple[str, ...] = DEFAULT_SWEEP_POLICIES
    pool: str = "fixed"
    depth: int = DEFAULT_DEPTH
    model: str | None = None
    k: int = 5
    b_obj: int = 1024
    b_min: int = 128
    seed: int = 0
    base: str = BASE_POLICY
    #: run a seeded sample of this many tasks (None: all of them)
    limit: int | None = None

    def __post_init__(self) -> None:
        known = set(policy_names())
        for p in (*self.policies, *self.sweep_policies):
            if p not in known:
                raise InputError(f"unknown policy {p!r}; choose from: {', '.join(policy_names())}")
        if not self.policies:
            raise InputError("no policies to run")
        if self.pool not in POOLS:
            raise InputError(f"unknown pool {self.pool!r}; choose fixed or retrieved")
        for b in (self.budget, *self.sweep_budgets):
            if b < 1:
                raise InputError(f"budgets must be positive, got {b}")
        if self.depth < 1:
            raise InputError(f"pool depth must be at least 1, got {self.depth}")
        if self.limit is not None and self.limit < 1:
            raise InputError(f"--limit must be at least 1, got {self.limit}")

    def runs(self) -> list[tuple[str, int]]:
        """(policy, budget) pairs, in run order, without repeats."""
        out = [(p, self.budget) for p in self.policies]
        for b in self.sweep_budgets:
            out.extend((p, b) for p in self.sweep_policies)
        return list(dict.fromkeys(out))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class RunState:
    """Counters a run reports beside its metrics."""

    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    mismatches: int = 0


def evaluate_task(task: Task, pool_views: Sequence[ScoredView], plan: RunPlan, source: ObjectSource,
                  gold_lines: Sequence[str]) -> list[dict[str, Any]]:
    """One row per (policy, budget) for one task."""
    counter = get_counter()
    gold_objects = [sv for sv in pool_views if object_key(sv.view) == task.gold_id]
    ranked_objects = list(dict.fromkeys(object_key(sv.view) for sv in
                                        sorted(pool_views, key=lambda sv: -sv.score)))
    gold_rank = ranked_objects.index(task.gold_id) + 1 if gold_objects else None
    gold_text = source.objects([task.gold_id], {}).get(task.gold_id)
    # d of the gold: above b_obj it can never survive whole, under any policy
    gold_full = full_rendering(gold_text, counter).tokens if gold_text else None
    rows = []
    for policy, budget in plan.runs():
        alloc = allocate(task.query, pool_views, policy, budget=budget, k=plan.k, source=source,
                         b_obj=plan.b_obj, b_min=plan.b_min, counter=counter)
        rec = alloc.record
        surv = gold_survives(alloc, task.gold_id, task.gold.path, task.gold.start, task.gold.end, gold_lines)
        gold_slot = rec.slot_of(task.gold_id)
        rows.append({
            "task": task.id, "repo": task.repo, "language": task.language, "setting": task.setting,
            "difficulty": task.difficulty, "policy": policy, "budget": budget,
            "r5": int(recall_at_k(rec, task.gold_id, plan.k)), "rb": int(surv.survived),
            "auth5": auth_at_k(rec, plan.k), "tokens": rec.tokens,
            "slots": len(rec.slots), "companion": any(s.role == "companion" for s in rec.slots),
            "gold_in_pool": bool(gold_objects), "gold_rank": gold_rank,
            "gold_slot": gold_slot.slot if gold_slot else None,
            "gold_d": gold_slot.d if gold_slot else None,
            "gold_tokens": gold_slot.tokens if gold_slot else None, "gold_full_tokens": gold_full,
            "span_text_mismatch": surv.mismatch, "pool_views": len(pool_views),
        })
    return rows


def make_pool(plan: RunPlan, store: GraphStore, repo: str) -> Pool:
    if plan.pool == "fixed":
        from vitalrag.retrieve.views import build_views

        return FixedPool(build_views(store, repo), plan.depth)
    from vitalrag.eval.index_cache import corpus_index

    index, embedder = corpus_index(store, plan.model)
    return RetrievedPool(index.retriever(embedder), plan.depth, model=embedder.name)


def default_opener(workers: int | None = None, progress: Progress | None = None,
                   executor: ParseExecutor | None = None) -> StoreOpener:
    from vitalrag.eval.index_cache import corpus_store

    def open_(repo: str, root: str) -> GraphStore:
        if not root:
            raise InputError(f"tasks of {repo} do not say where its source is (no 'root'); rebuild them")
        return corpus_store(root, repo, workers=workers, progress=progress, executor=executor)

    return open_


def sample_tasks(tasks: Sequence[Task], n: int | None, seed: int = 0) -> list[Task]:
    """``n`` tasks drawn without replacement, the same for the same seed and task
    ids (every repository and language keeps its share on average), in their
    original order; all of them when ``n`` is None or not smaller."""
    if n is None or n >= len(tasks):
        return list(tasks)
    keyed = sorted(range(len(tasks)),
                   key=lambda i: hashlib.sha256(f"{seed}:{tasks[i].id}".encode()).hexdigest())
    keep = set(keyed[:n])
    return [t for i, t in enumerate(tasks) if i in keep]


def run_tasks(tasks: Sequence[Task], plan: RunPlan, out_dir: str | Path, *,
              open_store: StoreOpener | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Evaluate ``plan`` on ``tasks``; write results, plan and summary into ``out_dir``."""
    if not tasks:
        raise InputError("no tasks to run")
    tasks_in = len(tasks)
    tasks = sample_tasks(tasks, plan.limit, plan.seed)
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opener = open_store or default_opener(progress=progress)
    state = RunState()
    model: str | None = None
    by_repo: dict[tuple[str, str], list[Task]] = defaultdict(list)
    carried = sorted((t for t in tasks if t.snippets), key=lambda t: t.id)
    if carried and plan.pool != "fixed":
        raise InputError("imported (RepoBench) tasks carry their own candidates: run them with --pool fixed")
    for t in tasks:
        if not t.snippets:
            by_repo[(t.repo, t.root)].append(t)
    total, done = len(tasks), 0
    rows: list[dict[str, Any]] = []
    with replacing(out / "results.jsonl") as tmp, tmp.open("w", encoding="utf-8") as fh:
        for task in carried:
            done += 1
            layout = lay_out(task.repo, task.snippets)
            pool_views = bm25_rank(task.query, task_views(task, layout), plan.depth)
            task_rows = evaluate_task(task, pool_views, plan, task_source(task, layout),
                                      layout.files.get(task.gold.path, []))
            state.mismatches += sum(r["span_text_mismatch"] for r in task_rows)
            for r in task_rows:
                fh.write(json.dumps(r) + "\n")
            rows.extend(task_rows)
            if progress:
                progress("evaluate", done, total)
        for (repo, root), group in sorted(by_repo.items()):
            store = opener(repo, root)
            pool = make_pool(plan, store, repo)
            model = getattr(pool, "model", None) or model
            source = CachedGraphSource(store)
            file_lines: dict[str, list[str]] = {}
            for task in sorted(group, key=lambda t: t.id):
                done += 1
                lines = file_lines.get(task.gold.path)
                if lines is None:
                    text = store.source(file_id(repo, task.gold.path)) or ""
                    lines = file_lines[task.gold.path] = text.splitlines()
                found = store.get_objects([task.gold_id]).get(task.gold_id)
                if found is None or (found.path, found.start_line, found.end_line) != (
                        task.gold.path, task.gold.start, task.gold.end):
                    log.warning("%s: the index no longer has the gold %s at %s:%d-%d; skipped",
                                task.id, task.gold_id, task.gold.path, task.gold.start, task.gold.end)
                    state.skipped["stale-gold"] += 1
                    continue
                task_rows = evaluate_task(task, pool.pool(task), plan, source, lines)
                state.mismatches += sum(r["span_text_mismatch"] for r in task_rows)
                for r in task_rows:
                    fh.write(json.dumps(r) + "\n")
                rows.extend(task_rows)
                if progress:
                    progress("evaluate", done, total)
    seconds = time.perf_counter() - started
    summary = summarise(rows, plan, seed=plan.seed)
    summary["run"] = {"tasks_in": tasks_in, "tasks_run": len(tasks), "skipped": dict(state.skipped),
                      "span_text_mismatches": state.mismatches, "seconds": round(seconds, 2)}
    if model:
        summary["run"]["model"] = model
    if summary["small_groups"]:
        log.warning("fewer than %d tasks in %s: their 95%% intervals come from too few tasks to rely on",
                    SMALL_GROUP, ", ".join(f"{g} ({n})" for g, n in summary["small_groups"].items()))
    (out / "plan.json").write_text(json.dumps(plan.to_dict(), indent=2))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def read_results(run_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "results.jsonl"
    if not path.is_file():
        raise InputError(f"{run_dir} holds no results.jsonl (run `vitalrag eval run` first)")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
