"""The paper's tables (1, 2, 3 and 6) drawn from a run summary.

Each builder returns a ``Table``: a title, column headers, rows of cells
(strings, for markdown) and the same rows as numbers (for CSV and JSON).
Recall values are percentages with two decimals, as in the paper; bracketed
ranges are 95% bootstrap intervals. A policy the run did not include leaves
its row out, and the table's note says so.

Every table shows the ceiling beside the recall: ``Ceil.``, the share of tasks
whose gold is in the policy's portfolio and fits b_obj whole (no object-level
policy can keep a larger gold), and ``R@B in ceil.``, Recall@B among those tasks.
A row drawn from fewer than 30 tasks is flagged in the table's notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

BASE = "entity-first-4+1"
CONTROLS = (("Identity", "raw-surface", "Raw Surface"), ("Identity", "exact-dedup", "Exact Dedup"),
            ("Coverage", "canonical-5", "Canonical-5"), ("Coverage", "file-quota", "File Quota"),
            ("Coverage", "mmr", "MMR"), ("Coverage", BASE, "Entity-First 4+1"),
            ("Method", "vital", "VITAL-RAG"))
ABLATIONS = (("vital", "Full"), ("no-quotient", "No quotient"), ("no-rendering", "No rendering"),
             ("no-structure", "No structure"))
COMPANIONS = (("5+0", "Canonical 5+0"), ("4+1", "VITAL-RAG 4+1"), ("3+2", "Refined 3+2"))
SCOPE_LABELS = {"all": "All", "language:java": "Java", "language:python": "Python"}
SMALL_GROUP = 30
CEILING_NOTE = ("Ceil.: tasks whose gold is in the portfolio and fits b_obj whole (the most Recall@B can "
                "reach); R@B in ceil.: Recall@B among those tasks (n in brackets)")


@dataclass(slots=True)
class Table:
    name: str
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.headers) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.headers))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if not self.rows:
            out.append("| " + " | ".join(["(no data)"] + [""] * (len(self.headers) - 1)) + " |")
        out += [""] + [f"_{n}_" for n in self.notes]
        return "\n".join(out).rstrip() + "\n"


def budget_label(budget: int) -> str:
    return f"{budget // 1024}K" if budget % 1024 == 0 else str(budget)


def pct(x: float) -> str:
    return f"{100 * x:.2f}"


def pct_ci(e: dict[str, float]) -> str:
    return f"{100 * e['mean']:.2f} [{100 * e['lo']:.1f}, {100 * e['hi']:.1f}]"


def tok(x: float) -> str:
    return f"{x:,.0f}"


def signed(x: float) -> str:
    return f"{100 * x:+.2f}"


class SummaryView:
    """Lookups into a summary."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary
        self.budget = int(summary["plan"]["budget"])
        self._results = {(r["policy"], r["budget"], r["group"]): r for r in summary["results"]}
        self._paired = {(p["policy"], p["budget"], p["group"]): p for p in summary["paired"]}

    def result(self, policy: str, group: str = "all", budget: int | None = None) -> dict[str, Any] | None:
        return self._results.get((policy, budget or self.budget, group))

    def paired(self, policy: str, group: str = "all", budget: int | None = None) -> dict[str, Any] | None:
        return self._paired.get((policy, budget or self.budget, group))

    def scopes(self) -> list[str]:
        langs = sorted(g for g in self.summary["groups"] if g.startswith("language:"))
        return ["all", *langs]

    def budgets(self, policy: str) -> list[int]:
        return sorted({b for (p, b, g) in self._results if p == policy and g == "all"})

    def group_n(self, group: str) -> int:
        g = self.summary["groups"].get(group)
        return int(g["n"]) if isinstance(g, dict) else int(g or 0)


def ceiling(r: dict[str, Any]) -> str:
    c = r.get("ceiling")
    return pct(c) if c is not None else "–"


def rb_ceiling(r: dict[str, Any]) -> str:
    c = r.get("rb_ceiling")
    if not c or not c.get("n"):
        return "–"
    return f"{pct(c['mean'])} ({c['n']})"


def ceiling_data(r: dict[str, Any]) -> dict[str, Any]:
    return {"ceiling": r.get("ceiling"), "rb_ceiling": r.get("rb_ceiling")}


def flag_small(t: Table, sizes: dict[str, int]) -> None:
    """Note the rows drawn from fewer than ``SMALL_GROUP`` tasks."""
    small = {g: n for g, n in sizes.items() if 0 < n < SMALL_GROUP}
    if small:
        t.notes.append(f"fewer than {SMALL_GROUP} tasks: " + ", ".join(
            f"{_scope(g)} (n = {n})" for g, n in small.items())
            + "; intervals from so few tasks are wide, read these rows as indicative only")


def _scope(group: str) -> str:
    if group in SCOPE_LABELS:
        return SCOPE_LABELS[group]
    kind, _, value = group.partition(":")
    return f"{kind}: {value}" if value else group


def table1(s: SummaryView, groups: Sequence[str] | None = None) -> Table:
    """Evidence-survival gap under Entity-First 4+1."""
    b = budget_label(s.budget)
    t = Table("table1", f"Table 1: evidence-survival gap under Entity-First 4+1 (B = {s.budget})",
              ["Scope", "Tasks", "R@5", "Auth.@5", f"R@{b}", "ΔRecall", "Tokens", "Ceil.", f"R@{b} in ceil."])
    sizes = {}
    for g in groups or s.scopes():
        r = s.result(BASE, g)
        if r is None:
            continue
        sizes[g] = r["n"]
        t.rows.append([_scope(g), str(r["n"]), pct_ci(r["r5"]), f"{r['auth5']['mean']:.3f}",
                       pct_ci(r["rb"]), pct(r["delta"]["mean"]), tok(r["tokens"]["mean"]),
                       ceiling(r), rb_ceiling(r)])
        t.data.append({"scope": g, "tasks": r["n"], "r5": r["r5"], "auth5": r["auth5"], "rb": r["rb"],
                       "delta": r["delta"], "tokens": r["tokens"], **ceiling_data(r)})
    if not t.rows:
        t.notes.append(f"the run has no {BASE} results")
    t.notes.append(CEILING_NOTE)
    flag_small(t, sizes)
    return t


def table1_breakdown(s: SummaryView) -> Table:
    groups = sorted(g for g in s.summary["groups"]
                    if g.split(":")[0] in ("setting", "difficulty", "repo"))
    t = table1(s, groups)
    t.name, t.title = "table1_breakdown", f"Table 1 (breakdown): Entity-First 4+1 by setting, difficulty and repository (B = {s.budget})"
    return t


def table2(s: SummaryView) -> Table:
    """Standard allocation controls (and VITAL-RAG for reference)."""
    b = budget_label(s.budget)
    t = Table("table2", f"Table 2: allocation controls (B = {s.budget})",
              ["Control", "Method", "R@5", "Auth.@5", f"R@{b}", "Tokens", "Ceil.", f"R@{b} in ceil."])
    for control, policy, label in CONTROLS:
        r = s.result(policy)
        if r is None:
            t.notes.append(f"{policy} was not run")
            continue
        t.rows.append([control, label, pct_ci(r["r5"]), f"{r['auth5']['mean']:.3f}", pct_ci(r["rb"]),
                       tok(r["tokens"]["mean"]), ceiling(r), rb_ceiling(r)])
        t.data.append({"control": control, "policy": policy, "r5": r["r5"], "auth5": r["auth5"],
                       "rb": r["rb"], "tokens": r["tokens"], **ceiling_data(r)})
    t.notes.append("the controls paste each slot's representative retrieved view as written; "
                   "VITAL-RAG renders each object's definition")
    t.notes.append(CEILING_NOTE)
    flag_small(t, {"all": s.group_n("all")})
    return t


def table3(s: SummaryView, policy: str = "vital") -> Table:
    """Paired base (Entity-First 4+1) against VITAL-RAG."""
    b = budget_label(s.budget)
    t = Table("table3", f"Table 3: paired results, base = Entity-First 4+1 (B = {s.budget})",
              ["Scope", "Tasks", f"Base R@{b}", f"VITAL-RAG R@{b}", "Gain [95% CI]", "W/L (McNemar p)",
               "Tokens B/V", "Red.", "Ceil. B/V", f"R@{b} in ceil. B/V"])
    sizes = {}
    for g in s.scopes():
        base, ours, p = s.result(BASE, g), s.result(policy, g), s.paired(policy, g)
        if base is None or ours is None or p is None:
            continue
        sizes[g] = p["n"]
        d, m = p["rb_diff"], p["rb_mcnemar"]
        t.rows.append([_scope(g), str(p["n"]), pct(base["rb"]["mean"]), pct(ours["rb"]["mean"]),
                       f"{signed(d['mean'])} [{signed(d['lo'])}, {signed(d['hi'])}]",
                       f"{m['wins']}/{m['losses']} (p={m['p']:.3g})",
                       f"{tok(base['tokens']['mean'])}/{tok(ours['tokens']['mean'])}",
                       f"{p['token_reduction_pct']:.2f}%", f"{ceiling(base)}/{ceiling(ours)}",
                       f"{rb_ceiling(base)}/{rb_ceiling(ours)}"])
        t.data.append({"scope": g, "tasks": p["n"], "base_rb": base["rb"], "vital_rb": ours["rb"],
                       "gain": d, "mcnemar": m, "base_tokens": base["tokens"], "vital_tokens": ours["tokens"],
                       "token_reduction_pct": p["token_reduction_pct"],
                       "base_ceiling": ceiling_data(base), "vital_ceiling": ceiling_data(ours)})
    if not t.rows:
        t.notes.append(f"needs both {BASE} and {policy} at B = {s.budget}")
    t.notes.append("Gain: paired bootstrap of the per-task difference; W/L: tasks only VITAL-RAG / only "
                   "the base keeps whole; reductions use unrounded means")
    t.notes.append(CEILING_NOTE)
    flag_small(t, sizes)
    return t


def table6a(s: SummaryView) -> Table:
    b = budget_label(s.budget)
    t = Table("table6a", f"Table 6 (a): context-allocation components (B = {s.budget})",
              ["Variant", "R@5", f"R@{b}", "ΔRecall", "Tokens", "Ceil.", f"R@{b} in ceil."])
    for policy, label in ABLATIONS:
        r = s.result(policy)
        if r is None:
            t.notes.append(f"{policy} was not run")
            continue
        t.rows.append([label, pct(r["r5"]["mean"]), pct(r["rb"]["mean"]), pct(r["delta"]["mean"]),
                       tok(r["tokens"]["mean"]), ceiling(r), rb_ceiling(r)])
        t.data.append({"variant": policy, "r5": r["r5"], "rb": r["rb"], "delta": r["delta"],
                       "tokens": r["tokens"], **ceiling_data(r)})
    t.notes.append(CEILING_NOTE)
    flag_small(t, {"all": s.group_n("all")})
    return t


def table6b(s: SummaryView) -> Table:
    b = budget_label(s.budget)
    strict = "companion-eligible"
    n_strict = s.group_n(strict)
    t = Table("table6b", f"Table 6 (b): companion-slot boundary (B = {s.budget}; strict = {n_strict} tasks "
              "where VITAL-RAG finds a query-relevant same-file companion)",
              ["Allocation", f"All R@{b}", f"Strict R@{b}", "All R@5", "All Tok.", "Strict Tok.", "Ceil.",
               f"R@{b} in ceil."])
    for policy, label in COMPANIONS:
        r = s.result(policy)
        if r is None:
            t.notes.append(f"{policy} was not run")
            continue
        st = s.result(policy, strict)
        t.rows.append([label, pct(r["rb"]["mean"]), pct(st["rb"]["mean"]) if st else "–",
                       pct(r["r5"]["mean"]), tok(r["tokens"]["mean"]), tok(st["tokens"]["mean"]) if st else "–",
                       ceiling(r), rb_ceiling(r)])
        t.data.append({"allocation": policy, "all_rb": r["rb"], "strict_rb": st["rb"] if st else None,
                       "all_r5": r["r5"], "all_tokens": r["tokens"], "strict_tokens": st["tokens"] if st else None,
                       "strict_n": n_strict, **ceiling_data(r)})
    t.notes.append(CEILING_NOTE)
    flag_small(t, {"all": s.group_n("all"), strict: n_strict})
    return t


def table6c(s: SummaryView, full: str = "vital", ablation: str = "no-rendering") -> Table:
    t = Table("table6c", "Table 6 (c): context-budget sensitivity (R@B; Δ = Full − No rendering)",
              ["Budget", "Full", "No rendering", "ΔRecall", "Tokens Full/No rend.", "Ceil. Full/No rend.",
               "R@B in ceil. Full/No rend."])
    for b in sorted(set(s.budgets(full)) & set(s.budgets(ablation))):
        f, a = s.result(full, budget=b), s.result(ablation, budget=b)
        assert f is not None and a is not None
        t.rows.append([budget_label(b), pct(f["rb"]["mean"]), pct(a["rb"]["mean"]),
                       signed(f["rb"]["mean"] - a["rb"]["mean"]),
                       f"{tok(f['tokens']['mean'])}/{tok(a['tokens']['mean'])}",
                       f"{ceiling(f)}/{ceiling(a)}", f"{rb_ceiling(f)}/{rb_ceiling(a)}"])
        t.data.append({"budget": b, "full_rb": f["rb"], "no_rendering_rb": a["rb"],
                       "full_tokens": f["tokens"], "no_rendering_tokens": a["tokens"],
                       "full_ceiling": ceiling_data(f), "no_rendering_ceiling": ceiling_data(a)})
    if len(t.rows) < 2:
        t.notes.append("run with --budgets 1024,2048,4096,8192 for the sweep")
    t.notes.append(CEILING_NOTE)
    flag_small(t, {"all": s.group_n("all")})
    return t


def gold_size_table(s: SummaryView) -> Table:
    """How large the golds are: no object-level policy keeps one above b_obj whole."""
    b_obj = int(s.summary["plan"]["b_obj"])
    t = Table("gold_sizes", f"Gold sizes (tokens of the gold definition's unclipped rendering; b_obj = {b_obj})",
              ["Scope", "Tasks", "Min", "P25", "Median", "P75", "P90", "Max", f"<= {b_obj // 2}",
               f"<= {b_obj}", f"<= {2 * b_obj}"])
    sizes = s.summary.get("gold_sizes") or {}
    for g in s.scopes():
        d = sizes.get(g)
        if not d or not d.get("n"):
            continue
        t.rows.append([_scope(g), str(d["n"]), *(tok(d[k]) for k in ("min", "p25", "median", "p75", "p90", "max")),
                       pct(d["fits_half_cap"]), pct(d["fits_cap"]), pct(d["fits_twice_cap"])])
        t.data.append({"scope": g, **d})
    if not t.rows:
        t.notes.append("the summary has no gold sizes (rerun `vitalrag eval run`)")
    return t


def all_tables(summary: dict[str, Any]) -> list[Table]:
    s = SummaryView(summary)
    return [table1(s), table1_breakdown(s), table2(s), table3(s), table6a(s), table6b(s), table6c(s),
            gold_size_table(s)]
