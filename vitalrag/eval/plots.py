"""PNG plots of a run summary (matplotlib, Agg backend, imported lazily).

- ``recall_vs_budget.png``: Recall@B against the token budget for every policy
  run at several budgets (solid), with Recall@5 for reference (dotted);
  policies run at one budget appear as single points.
- ``tokens_by_policy.png``: mean context tokens per policy at the main
  budget, beside Recall@5 and Recall@B, with 95% intervals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vitalrag.eval.tables import SummaryView, budget_label

HIGHLIGHT = {"vital": "#c0392b", "entity-first-4+1": "#2c3e50", "no-rendering": "#2980b9"}


def _pyplot():  # noqa: ANN202
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def recall_vs_budget(summary: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    s = SummaryView(summary)
    policies = list(dict.fromkeys(r["policy"] for r in summary["results"] if r["group"] == "all"))
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=130)
    budgets_seen: set[int] = set()
    for policy in policies:
        budgets = s.budgets(policy)
        budgets_seen.update(budgets)
        rb = [100 * s.result(policy, budget=b)["rb"]["mean"] for b in budgets]  # type: ignore[index]
        color = HIGHLIGHT.get(policy)
        if len(budgets) > 1:
            lo = [100 * s.result(policy, budget=b)["rb"]["lo"] for b in budgets]  # type: ignore[index]
            hi = [100 * s.result(policy, budget=b)["rb"]["hi"] for b in budgets]  # type: ignore[index]
            line, = ax.plot(budgets, rb, marker="o", linewidth=2, color=color, label=f"{policy} R@B")
            ax.fill_between(budgets, lo, hi, color=line.get_color(), alpha=0.12)
            r5 = [100 * s.result(policy, budget=b)["r5"]["mean"] for b in budgets]  # type: ignore[index]
            ax.plot(budgets, r5, linestyle=":", color=line.get_color(), label=f"{policy} R@5")
        else:
            ax.scatter(budgets, rb, s=22, color=color, alpha=0.8, label=policy, zorder=3)
    ax.set_xscale("log", base=2)
    ticks = sorted(budgets_seen)
    ax.set_xticks(ticks, [budget_label(b) for b in ticks])
    ax.set_xlabel("token budget B")
    ax.set_ylabel("recall (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Recall@B against budget ({summary['tasks']} tasks, {summary['plan']['pool']} pool)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def tokens_by_policy(summary: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    s = SummaryView(summary)
    rows = [r for r in summary["results"] if r["group"] == "all" and r["budget"] == s.budget]
    rows.sort(key=lambda r: r["tokens"]["mean"])
    names = [r["policy"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 0.38 * len(rows) + 1.6), dpi=130, sharey=True)
    y = range(len(rows))
    tokens = [r["tokens"]["mean"] for r in rows]
    err = [[r["tokens"]["mean"] - r["tokens"]["lo"] for r in rows],
           [r["tokens"]["hi"] - r["tokens"]["mean"] for r in rows]]
    colors = [HIGHLIGHT.get(n, "#95a5a6") for n in names]
    ax1.barh(list(y), tokens, xerr=err, color=colors, capsize=2)
    ax1.axvline(s.budget, color="black", linestyle="--", linewidth=1)
    ax1.set_yticks(list(y), names)
    ax1.set_xlabel(f"mean context tokens (budget {s.budget} dashed)")
    ax1.grid(True, axis="x", alpha=0.3)
    h = 0.38
    r5 = [100 * r["r5"]["mean"] for r in rows]
    rb = [100 * r["rb"]["mean"] for r in rows]
    ax2.barh([i + h / 2 for i in y], r5, height=h, color="#bdc3c7", label="R@5")
    ax2.barh([i - h / 2 for i in y], rb, height=h, color=colors, label=f"R@{budget_label(s.budget)}")
    ax2.set_xlim(0, 100)
    ax2.set_xlabel("recall (%)")
    ax2.legend(fontsize=8, loc="lower right")
    ax2.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"Tokens and recall per policy (B = {s.budget}, {summary['tasks']} tasks)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_plots(summary: dict[str, Any], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [recall_vs_budget(summary, folder / "recall_vs_budget.png"),
            tokens_by_policy(summary, folder / "tokens_by_policy.png")]
