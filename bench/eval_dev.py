"""The whole dev-corpus evaluation, timed: fetch, index (cached), build tasks,
run all 13 policies at B=4096 on the fixed pool plus the 1K/2K/8K sweep for
vital and no-rendering, and write the report.

    python bench/eval_dev.py [--out runs/dev] [--seed 0] [--cold] [--pool fixed|retrieved]

``--cold`` empties the evaluation index cache first, so indexing is timed too.
The same run from the command line::

    vitalrag eval corpus fetch dev
    vitalrag eval build dev -o runs/dev/tasks.jsonl
    vitalrag eval run runs/dev/tasks.jsonl --budgets 1024,2048,4096,8192 -o runs/dev
    vitalrag eval report runs/dev
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from vitalrag.cli.output import progress_bar
from vitalrag.eval.corpora import expand, fetch
from vitalrag.eval.index_cache import corpus_store, index_cache_root
from vitalrag.eval.report import write_report
from vitalrag.eval.run import RunPlan, run_tasks
from vitalrag.eval.tasks import build_tasks, write_tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/dev")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool", default="fixed", choices=("fixed", "retrieved"))
    ap.add_argument("--cold", action="store_true", help="drop the cached indexes first")
    args = ap.parse_args()
    out = Path(args.out)
    times: dict[str, float] = {}
    if args.cold:
        shutil.rmtree(index_cache_root(), ignore_errors=True)
    t0 = time.perf_counter()
    corpora = [fetch(spec) for spec in expand(["dev"])]
    times["fetch"] = time.perf_counter() - t0
    tasks, reports = [], []
    with progress_bar() as progress:
        t0 = time.perf_counter()
        stores = {c.spec: corpus_store(c.path, c.name, progress=progress) for c in corpora}
        times["index"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for c in corpora:
            found, report = build_tasks(stores[c.spec], c.name, seed=args.seed, root=str(c.path), corpus=c.spec)
            tasks += found
            reports.append(report.to_json())
        write_tasks(tasks, out / "tasks.jsonl")
        times["build"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        plan = RunPlan(sweep_budgets=(1024, 2048, 4096, 8192), pool=args.pool, seed=args.seed)
        run_tasks(tasks, plan, out, progress=progress)
        times["run"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_report(out)
    times["report"] = time.perf_counter() - t0
    times["total"] = sum(times.values())
    (out / "build.json").write_text(json.dumps(reports, indent=2))
    (out / "timing.json").write_text(json.dumps({k: round(v, 2) for k, v in times.items()}, indent=2))
    print(json.dumps({"tasks": len(tasks), "seconds": {k: round(v, 1) for k, v in times.items()}}))


if __name__ == "__main__":
    main()
