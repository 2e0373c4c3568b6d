"""``RUN_DIR/report/``: the paper's tables as markdown, CSV and JSON, and plots.

    report.md           every table, with the run's setting and caveats
    <table>.md/.csv     one file per table (table1, table1_breakdown, table2,
    tables.json         table3, table6a, table6b, table6c) and all of them as JSON
    results.csv         every policy x budget x group row of the summary, flat
    *.png               recall against budget, tokens per policy
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from vitalrag.errors import InputError
from vitalrag.eval.tables import Table, all_tables


def read_summary(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        raise InputError(f"{run_dir} holds no summary.json (run `vitalrag eval run ... -o {run_dir}` first)")
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}_"))
        return out
    return {prefix.rstrip("_"): value}


def write_csv(table: Table, path: Path) -> None:
    rows = [_flat(r) for r in table.data]
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def header(summary: dict[str, Any]) -> str:
    plan, run = summary["plan"], summary.get("run", {})
    g = summary["groups"]["all"]
    lines = [
        "# VitalRAG evaluation report", "",
        f"- tasks: {summary['tasks']} (" + ", ".join(
            f"{k.split(':', 1)[1]} {v['n']}" for k, v in summary["groups"].items() if k.startswith("language:")) + ")",
        f"- pool: {plan['pool']} (depth {plan['depth']}"
        + (f", model {run.get('model') or plan['model'] or 'the default'}" if plan["pool"] == "retrieved" else ", BM25 over candidate views")
        + f"); K = {plan['k']}, B = {plan['budget']}, b_obj = {plan['b_obj']}, b_min = {plan['b_min']}",
        f"- gold object in the pool: {100 * g['gold_in_pool']:.1f}% of tasks; gold definition fits the "
        f"per-object cap ({plan['b_obj']} tokens) whole: {100 * g['gold_fits_cap']:.1f}% "
        "(an upper bound on Recall@B for object-level policies)",
        f"- intervals: {summary['bootstrap']['interval']} bootstrap, {summary['bootstrap']['samples']} "
        f"resamples, seed {summary['bootstrap']['seed']}",
    ]
    if run:
        lines.append(f"- run time: {run.get('seconds', '?')} s; skipped tasks: {run.get('skipped') or 'none'}; "
                     f"slots claiming spans their text does not show: {run.get('span_text_mismatches', 0)}")
    return "\n".join(lines) + "\n"


def write_report(run_dir: str | Path, out_dir: str | Path | None = None, *, plots: bool = True) -> dict[str, Any]:
    """Write every table and plot; returns ``{"markdown": str, "files": [paths]}``."""
    summary = read_summary(run_dir)
    out = Path(out_dir) if out_dir else Path(run_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)
    tables = all_tables(summary)
    files: list[Path] = []
    for t in tables:
        (out / f"{t.name}.md").write_text(t.markdown(), encoding="utf-8")
        write_csv(t, out / f"{t.name}.csv")
        files += [out / f"{t.name}.md", out / f"{t.name}.csv"]
    # every policy, budget and group (language, setting, difficulty, repository), flat
    all_rows = Table("results", "all results", [], data=list(summary["results"]))
    write_csv(all_rows, out / "results.csv")
    files.append(out / "results.csv")
    (out / "tables.json").write_text(json.dumps(
        {t.name: {"title": t.title, "headers": t.headers, "rows": t.data, "notes": t.notes} for t in tables},
        indent=2), encoding="utf-8")
    files.append(out / "tables.json")
    markdown = header(summary) + "\n" + "\n".join(t.markdown() for t in tables)
    if plots:
        from vitalrag.eval.plots import write_plots

        pngs = write_plots(summary, out)
        files += pngs
        markdown += "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pngs) + "\n"
    (out / "report.md").write_text(markdown, encoding="utf-8")
    files.append(out / "report.md")
    return {"markdown": markdown, "files": [str(p) for p in files]}
