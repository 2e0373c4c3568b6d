"""Aggregate per-task rows into the summary a report is drawn from.

Groups: ``all``, and ``language:``, ``setting:``, ``difficulty:``, ``repo:``
values, plus ``companion-eligible``: the tasks where VITAL-RAG's record shows a
query-relevant same-file companion (the strict subset of paper Table 6b), and
``gold-fits-cap``: the tasks whose gold definition fits b_obj whole.

The ceiling: a gold larger than b_obj can never survive whole, so each result
also carries ``ceiling``, the share of tasks whose gold is in the policy's
portfolio and fits b_obj, and ``rb_ceiling``, Recall@B among those tasks.
``gold_sizes`` gives the distribution of gold sizes (tokens of the gold's
unclipped rendering) per language. A group of fewer than ``SMALL_GROUP``
tasks is listed in ``small_groups``: its intervals come from too few tasks.
Every group's bootstrap resamples the same tasks for every policy (one index
matrix per group, seeded from the run seed and the group name), so intervals
of different policies are comparable and paired differences are exact pairs.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from vitalrag.eval.metrics import (
    BOOTSTRAP_SAMPLES,
    bootstrap_ci,
    bootstrap_indices,
    mcnemar,
    reduction,
)

METRICS = ("r5", "rb", "delta", "auth5", "tokens")
GROUP_FIELDS = ("language", "setting", "difficulty", "repo")
COMPANION_GROUP = "companion-eligible"
FITS_GROUP = "gold-fits-cap"
#: groups with fewer tasks than this get a warning beside their intervals
SMALL_GROUP = 30


def _group_seed(seed: int, group: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{group}".encode()).digest()[:4], "big")


def summarise(rows: Sequence[dict[str, Any]], plan: Any, *, seed: int = 0,
              samples: int = BOOTSTRAP_SAMPLES) -> dict[str, Any]:
    """Metrics per (policy, budget, group) and paired comparisons against ``plan.base``."""
    by_run: dict[tuple[str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        by_run[(r["policy"], r["budget"])][r["task"]] = r
    task_ids = sorted({r["task"] for r in rows})
    info = {r["task"]: r for r in rows}
    groups: dict[str, list[str]] = {"all": task_ids}
    for f in GROUP_FIELDS:
        for t in task_ids:
            groups.setdefault(f"{f}:{info[t][f]}", []).append(t)
    vital = by_run.get(("vital", plan.budget))
    if vital is not None:
        groups[COMPANION_GROUP] = [t for t in task_ids if vital[t]["companion"]]

    def fits(t: str) -> bool:
        d = info[t].get("gold_full_tokens")
        return d is not None and d <= plan.b_obj

    groups[FITS_GROUP] = [t for t in task_ids if fits(t)]
    indices = {g: bootstrap_indices(len(ids), _group_seed(seed, g), samples) for g, ids in groups.items()}

    def column(run: dict[str, dict[str, Any]], ids: list[str], metric: str) -> np.ndarray:
        if metric == "delta":
            return np.array([run[t]["r5"] - run[t]["rb"] for t in ids], dtype=float)
        return np.array([run[t][metric] for t in ids], dtype=float)

    results = []
    for (policy, budget), run in sorted(by_run.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        for g, ids in groups.items():
            if not ids or any(t not in run for t in ids):
                continue
            entry: dict[str, Any] = {"policy": policy, "budget": budget, "group": g, "n": len(ids)}
            for m in METRICS:
                entry[m] = bootstrap_ci(column(run, ids, m), indices=indices[g]).to_dict()
            entry["gold_in_pool"] = float(np.mean([run[t]["gold_in_pool"] for t in ids]))
            within = [t for t in ids if run[t]["r5"] and fits(t)]
            entry["ceiling"] = len(within) / len(ids)
            entry["rb_ceiling"] = {"n": len(within), "mean": float(np.mean([run[t]["rb"] for t in within]))
                                   if within else float("nan")}
            results.append(entry)

    paired = []
    for (policy, budget), run in sorted(by_run.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        base = by_run.get((plan.base, budget))
        if base is None or policy == plan.base:
            continue
        for g, ids in groups.items():
            if not ids or any(t not in run or t not in base for t in ids):
                continue
            entry = {"policy": policy, "base": plan.base, "budget": budget, "group": g, "n": len(ids)}
            for m in ("r5", "rb", "tokens"):
                diff = column(run, ids, m) - column(base, ids, m)
                entry[f"{m}_diff"] = bootstrap_ci(diff, indices=indices[g]).to_dict()
            for m in ("r5", "rb"):
                entry[f"{m}_mcnemar"] = mcnemar(column(run, ids, m) > 0, column(base, ids, m) > 0).to_dict()
            entry["token_reduction_pct"] = reduction(float(column(run, ids, "tokens").mean()),
                                                     float(column(base, ids, "tokens").mean()))
            paired.append(entry)

    return {
        "plan": plan.to_dict(),
        "tasks": len(task_ids),
        # per group: tasks, how many have the gold in the pool, and how many
        # have a gold whose whole rendering fits the per-object cap b_obj (the
        # ceiling of Recall@B for every object-level policy)
        "groups": {g: {"n": len(ids),
                       "gold_in_pool": float(np.mean([info[t]["gold_in_pool"] for t in ids])) if ids else 0.0,
                       "gold_fits_cap": float(np.mean([fits(t) for t in ids])) if ids else 0.0}
                   for g, ids in groups.items()},
        "gold_sizes": {g: gold_sizes([info[t].get("gold_full_tokens") for t in ids], plan.b_obj)
                       for g, ids in groups.items() if g == "all" or g.startswith("language:")},
        "small_groups": {g: len(ids) for g, ids in groups.items() if 0 < len(ids) < SMALL_GROUP},
        "bootstrap": {"samples": samples, "seed": seed, "interval": "95% percentile"},
        "results": results,
        "paired": paired,
    }


def gold_sizes(tokens: Sequence[int | None], b_obj: int) -> dict[str, Any]:
    """The distribution of gold sizes in tokens: quantiles, and the share at or
    under b_obj (and under half and twice it)."""
    x = np.array([t for t in tokens if t is not None], dtype=float)
    if x.size == 0:
        return {"n": 0}
    q = np.percentile(x, [0, 25, 50, 75, 90, 100])
    return {"n": int(x.size), "min": float(q[0]), "p25": float(q[1]), "median": float(q[2]),
            "p75": float(q[3]), "p90": float(q[4]), "max": float(q[5]), "mean": float(x.mean()),
            "fits_half_cap": float(np.mean(x <= b_obj // 2)), "fits_cap": float(np.mean(x <= b_obj)),
            "fits_twice_cap": float(np.mean(x <= 2 * b_obj))}
