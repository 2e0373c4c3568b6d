"""``eval``: corpora, RepoBench-style tasks, policy runs and the paper's tables."""

from __future__ import annotations

from pathlib import Path

import click

from vitalrag.cli.output import echo, emit_json, progress_bar
from vitalrag.errors import InputError


def _ints(value: str | None, option: str) -> tuple[int, ...]:
    if not value:
        return ()
    try:
        return tuple(int(v) for v in value.replace(" ", "").split(",") if v)
    except ValueError:
        raise click.BadParameter(f"expected whole numbers separated by commas, got {value!r}",
                                 param_hint=option) from None


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


@click.group(name="eval")
def eval_group() -> None:
    """Evaluate allocation policies on real repositories (RepoBench-style tasks,
    paper sections 3-6): fetch corpora, build tasks, run policies, report tables."""


@eval_group.group()
def corpus() -> None:
    """Real repositories to evaluate on, fetched into a cache."""


@corpus.command("fetch")
@click.argument("names", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def corpus_fetch(names: tuple[str, ...], as_json: bool) -> None:
    """Fetch corpora: a dev corpus name (requests, click, flask, jsoup,
    commons-csv, commons-io), ``dev`` for all six, a held-out one (httpx, attrs,
    joda-time, gson), ``heldout`` for all four, a ``pypi:NAME==VERSION`` or
    ``maven:GROUP:ARTIFACT:VERSION`` spec, or a local folder. Prints where each
    one is and the sha256 of its archive."""
    from vitalrag.eval.corpora import expand, fetch

    rows = []
    for spec in expand(names):
        c = fetch(spec)
        rows.append({"name": c.name, "spec": c.spec, "path": str(c.path), "sha256": c.sha256})
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        echo(f"{r['name']:<12} {r['spec']:<46} {r['path']}  sha256:{r['sha256'] or '-'}")


@corpus.command("list")
def corpus_list() -> None:
    """The named corpora (the dev set, then the held-out set) and their pinned specs."""
    from vitalrag.eval.corpora import ALIASES, NAMED_CORPORA

    for alias, names in ALIASES.items():
        for name in names:
            echo(f"{name:<12} {NAMED_CORPORA[name]:<46} {alias}")


@eval_group.command("build")
@click.argument("repos", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Task file to write (JSON lines).")
@click.option("--context-lines", type=click.IntRange(min=1), default=30, show_default=True,
              help="Lines before the masked line the query keeps (besides the import lines).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random-line setting.")
@click.option("--name", help="Repository name (one REPO only; default: the corpus name).")
@click.option("--min-candidates", type=click.IntRange(min=1), default=5, show_default=True,
              help="Fewest imported repository names a file needs to yield tasks.")
@click.option("--random-per-file", type=click.IntRange(min=0), default=1, show_default=True,
              help="Random-setting lines per file (RepoBench takes one).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parser processes for indexing.")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON.")
def build(repos: tuple[str, ...], output: Path, context_lines: int, seed: int, name: str | None,
          min_candidates: int, random_per_file: int, workers: int | None, as_json: bool) -> None:
    """Build RepoBench-style tasks from REPOS (dev corpus names, ``dev``, specs
    or folders) into a JSONL file: per file, the first and a random later line
    using one imported repository name, the used definition as gold, one
    definition per imported name as candidates. Reports what was dropped and why."""
    from vitalrag.eval.corpora import expand, fetch, unique_names
    from vitalrag.eval.index_cache import corpus_store
    from vitalrag.eval.tasks import build_tasks, write_tasks
    from vitalrag.ingest.parallel import ParsePool

    specs = expand(repos)
    if name and len(specs) != 1:
        raise InputError("--name needs exactly one REPO")
    tasks, reports = [], []
    with ParsePool(workers) as pool, progress_bar() as progress:
        corpora = [fetch(spec) for spec in specs]
        for spec, c, unique in zip(specs, corpora, unique_names(corpora)):
            repo = name or unique
            store = corpus_store(c.path, repo, progress=progress, executor=pool)
            found, report = build_tasks(store, repo, context_lines=context_lines, seed=seed,
                                        min_candidates=min_candidates, random_per_file=random_per_file,
                                        root=str(c.path), corpus=spec, progress=progress)
            tasks.extend(found)
            reports.append(report.to_json())
    n = write_tasks(tasks, output)
    if as_json:
        emit_json({"output": str(output), "tasks": n, "repositories": reports})
        return
    for r in reports:
        dropped = ", ".join(f"{k} {v}" for k, v in r["dropped"].items()) or "none"
        skipped = ", ".join(f"{k} {v}" for k, v in r["skipped_files"].items()) or "none"
        echo(f"{r['repo']}: {r['tasks']} tasks from {r['files']} files "
             f"({', '.join(f'{k} {v}' for k, v in r['by_setting'].items()) or 'none'}; "
             f"{', '.join(f'{k} {v}' for k, v in r['by_difficulty'].items()) or '-'})")
        echo(f"  dropped: {dropped}")
        echo(f"  files without tasks: {skipped}")
    echo(f"wrote {n} tasks to {output}")


@eval_group.command("import-repobench")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Task file to write (JSON lines).")
@click.option("--context-lines", type=click.IntRange(min=1), default=30, show_default=True,
              help="Lines of each row's cropped code the query keeps (besides its import statement).")
@click.option("--setting", default="",
              help="Setting to record on every task (e.g. cross_file_first; default: the row's "
                   "'setting' column, else 'repobench').")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
def import_repobench(files: tuple[Path, ...], output: Path, context_lines: int, setting: str,
                     as_json: bool) -> None:
    """Turn RepoBench v1.1 rows (JSON lines, or parquet with the ``repobench``
    extra) into tasks: each row's context snippets are its candidates (several
    views per snippet, keyed by normalised path and casefolded identifier), the
    snippet at gold_snippet_index its gold. Run them with ``vitalrag eval run``."""
    from vitalrag.eval.repobench import import_files
    from vitalrag.eval.tasks import write_tasks

    tasks, report = import_files(files, context_lines=context_lines, setting=setting)
    n = write_tasks(tasks, output)
    data = report.to_json()
    if as_json:
        emit_json({"output": str(output), **data})
        return
    dropped = ", ".join(f"{k} {v}" for k, v in data["dropped"].items()) or "none"
    langs = ", ".join(f"{k} {v}" for k, v in data["by_language"].items()) or "none"
    echo(f"{data['rows']} rows: {n} tasks ({langs}); dropped: {dropped}")
    echo(f"wrote {n} tasks to {output}")


@eval_group.command("run")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--policies", default="all", show_default=True,
              help="Comma-separated policies, or 'all' (see `vitalrag eval policies`).")
@click.option("--budget", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Token budget every policy runs at.")
@click.option("--budgets", default=None,
              help="Budget sweep, e.g. 1024,2048,4096,8192, run for the --sweep-policies.")
@click.option("--sweep-policies", default="vital,no-rendering", show_default=True,
              help="Policies run at every --budgets value.")
@click.option("--pool", type=click.Choice(["fixed", "retrieved"]), default="fixed", show_default=True,
              help="fixed: the candidates' views ranked by BM25 (only allocation varies); "
                   "retrieved: the fused retriever over the whole repository.")
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Views per task in the pool.")
@click.option("--model", envvar="VITALRAG_MODEL", default=None,
              help="Embedding model of the retrieved pool (default: all-MiniLM-L6-v2, the model "
                   "`vitalrag index` uses; 'hashing' for the fast, weak hashing embedder).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap intervals (and of the --limit sample).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Run a seeded sample of this many tasks (a quick look; intervals widen).")
@click.option("-o", "--output", "run_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Run folder: results.jsonl, summary.json, plan.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary's overall rows as JSON.")
def run(tasks_file: Path, policies: str, budget: int, budgets: str | None, sweep_policies: str, pool: str,
        depth: int, model: str | None, seed: int, limit: int | None, run_dir: Path, as_json: bool) -> None:
    """Run allocation policies on TASKS and save per-task results and a summary
    (Recall@5, Recall@B, delta, Auth@5, tokens with 95% bootstrap intervals,
    paired comparisons against entity-first-4+1)."""
    from vitalrag.allocate import policy_names
    from vitalrag.eval.run import RunPlan, default_opener, run_tasks
    from vitalrag.eval.tasks import read_tasks
    from vitalrag.ingest.parallel import ParsePool

    chosen = tuple(policy_names()) if policies.strip() == "all" else _names(policies)
    sweep = tuple(b for b in _ints(budgets, "--budgets"))
    plan = RunPlan(policies=chosen, budget=budget, sweep_budgets=sweep, sweep_policies=_names(sweep_policies),
                   pool=pool, depth=depth, model=model, seed=seed, limit=limit)
    tasks = read_tasks(tasks_file)
    with ParsePool() as parser, progress_bar() as progress:  # for the corpora not indexed yet
        summary = run_tasks(tasks, plan, run_dir, progress=progress,
                            open_store=default_opener(progress=progress, executor=parser))
    overall = [r for r in summary["results"] if r["group"] == "all"]
    if as_json:
        emit_json({"run_dir": str(run_dir), "run": summary["run"], "results": overall})
        return
    echo(f"{summary['tasks']} tasks, {len(overall)} policy/budget runs in {summary['run']['seconds']} s "
         f"-> {run_dir}")
    width = max((len(r["policy"]) for r in overall), default=0)
    for r in overall:
        echo(f"  {r['policy']:<{width}} B={r['budget']:<5} R@5 {100 * r['r5']['mean']:6.2f}  "
             f"R@B {100 * r['rb']['mean']:6.2f}  Auth@5 {r['auth5']['mean']:.3f}  "
             f"tokens {r['tokens']['mean']:7.0f}")


@eval_group.command("report")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder (default RUN_DIR/report).")
@click.option("--no-plots", is_flag=True, help="Tables only.")
def report(run_dir: Path, output: Path | None, no_plots: bool) -> None:
    """Write the paper's Tables 1, 2, 3 and 6 (markdown, CSV, JSON) and plots for
    a run, and print the markdown."""
    from vitalrag.eval.report import write_report

    result = write_report(run_dir, output, plots=not no_plots)
    echo(result["markdown"])
    echo(f"wrote {len(result['files'])} files to {Path(result['files'][-1]).parent}", err=True)


@eval_group.command("policies")
def policies_cmd() -> None:
    """The allocation policies a run can compare."""
    from vitalrag.allocate import POLICIES

    width = max(map(len, POLICIES))
    for name, p in POLICIES.items():
        echo(f"{name:<{width}} {p.description}")


def register(group: click.Group) -> None:
    group.add_command(eval_group)
