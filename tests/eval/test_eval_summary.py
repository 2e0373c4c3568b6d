"""The summary's ceiling, gold sizes and small-group warnings, and their tables."""

from __future__ import annotations

import math

from vitalrag.eval.run import RunPlan, sample_tasks
from vitalrag.eval.summary import FITS_GROUP, summarise
from vitalrag.eval.tables import SummaryView, all_tables, gold_size_table, table1, table2
from vitalrag.eval.tasks import GoldLines, Task


def _row(task, policy, r5, rb, gold_d, language="python"):
    return {"task": task, "repo": "demo", "language": language, "setting": "cross_file_first",
            "difficulty": "easy", "policy": policy, "budget": 4096, "r5": r5, "rb": rb, "auth5": 5,
            "tokens": 1000, "slots": 5, "companion": False, "gold_in_pool": True,
            "gold_full_tokens": gold_d}


def _rows():
    # t1: in the portfolio, fits, survives; t2: in the portfolio, fits, clipped;
    # t3: in the portfolio, too big; t4: not in the portfolio, fits
    spec = [("t1", 1, 1, 300, "python"), ("t2", 1, 0, 1000, "python"), ("t3", 1, 0, 3000, "java"),
            ("t4", 0, 0, 100, "java")]
    return [_row(t, p, r5, rb if p == "vital" else 0, d, lang)
            for p in ("vital", "entity-first-4+1") for t, r5, rb, d, lang in spec]


def test_ceiling_is_the_portfolio_share_that_fits_and_recall_among_it():
    summary = summarise(_rows(), RunPlan(policies=("vital", "entity-first-4+1")))
    s = SummaryView(summary)
    vital = s.result("vital")
    assert vital["ceiling"] == 0.5  # t1 and t2 of four
    assert vital["rb_ceiling"] == {"n": 2, "mean": 0.5}
    assert s.result("entity-first-4+1")["rb_ceiling"] == {"n": 2, "mean": 0.0}
    java = s.result("vital", "language:java")
    assert java["ceiling"] == 0.0 and java["rb_ceiling"]["n"] == 0 and math.isnan(java["rb_ceiling"]["mean"])
    # the fits group: t1, t2, t4
    assert summary["groups"][FITS_GROUP]["n"] == 3
    assert s.result("vital", FITS_GROUP)["delta"]["mean"] == (2 - 1) / 3


def test_gold_sizes_per_language():
    sizes = summarise(_rows(), RunPlan(policies=("vital",)))["gold_sizes"]
    assert sizes["all"]["n"] == 4 and sizes["all"]["fits_cap"] == 0.75 and sizes["all"]["max"] == 3000
    assert sizes["language:java"]["median"] == 1550 and sizes["language:java"]["fits_cap"] == 0.5
    assert sizes["language:python"]["fits_half_cap"] == 0.5
    table = gold_size_table(SummaryView(summarise(_rows(), RunPlan(policies=("vital",)))))
    assert [r[0] for r in table.rows] == ["All", "Java", "Python"]
    assert table.rows[1][-2] == "50.00"


def test_tables_show_the_ceiling_and_flag_small_groups():
    summary = summarise(_rows(), RunPlan(policies=("vital", "entity-first-4+1")))
    assert summary["small_groups"]["all"] == 4
    t1 = table1(SummaryView(summary))
    assert t1.headers[-2:] == ["Ceil.", "R@4K in ceil."]
    assert t1.rows[0][-2:] == ["50.00", "0.00 (2)"]
    assert any("fewer than 30 tasks" in n and "All (n = 4)" in n for n in t1.notes)
    t2 = table2(SummaryView(summary))
    vital_row = next(r for r in t2.rows if r[1] == "VITAL-RAG")
    assert vital_row[-2:] == ["50.00", "50.00 (2)"]
    for t in all_tables(summary):  # a cell never breaks the markdown table
        for r in t.rows:
            assert all("|" not in cell for cell in r)
        assert all("|" not in h for h in t.headers)


def _task(i, repo):
    return Task(id=f"{repo}:t{i}", repo=repo, path="a.py", line=i, setting="cross_file_first",
                language="python", query="q", next_line="x", used_name="n", gold_id="g",
                gold=GoldLines("b.py", 1, 2), candidates=("g",), difficulty="easy")


def test_limit_draws_the_same_spread_sample_for_a_seed():
    tasks = [_task(i, repo) for repo in ("a", "b", "c") for i in range(20)]
    first = sample_tasks(tasks, 15, seed=0)
    assert len(first) == 15
    # which tasks, not where they stand in the file
    assert sample_tasks(list(reversed(tasks)), 15, seed=0) == first[::-1]
    assert [t for t in tasks if t in first] == first  # original order kept
    assert len({t.repo for t in first}) == 3
    assert sample_tasks(tasks, 15, seed=1) != first
    assert sample_tasks(tasks, None) == tasks == sample_tasks(tasks, 100)
