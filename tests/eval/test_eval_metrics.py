"""Metric functions on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest

from vitalrag.allocate import Allocation, AllocationRecord, SlotRecord, allocate
from vitalrag.allocate.source import MappingObjectSource, ObjectText
from vitalrag.eval.metrics import (
    auth_at_k,
    bootstrap_ci,
    gold_survives,
    mcnemar,
    paired_bootstrap,
    recall_at_k,
    reduction,
)
from vitalrag.model import ScoredView, View

FILE = ["def helper(z):", "    y = z + 1", "    return y", "", "def other():", "    pass"]


def _slot(i, key, path="pkg/a.py", spans=((1, 3),)):
    return SlotRecord(slot=i, key=key, object_key=key, role="core", score=1.0, view_id=f"v{i}", path=path,
                      identifier=key, d=10, b=10, tokens=10, clipped=False, spans=tuple(spans), reason="")


def _allocation(slots, parts):
    record = AllocationRecord(policy="t", params={}, query="q", query_tokens=(), views=(), slots=tuple(slots),
                              tokens=sum(s.tokens for s in slots))
    return Allocation("".join(parts), record, tuple(parts))


def _part(a, b, lines=FILE):
    return f"--- pkg/a.py:{a}-{b} helper\n" + "".join(line + "\n" for line in lines[a - 1:b])


def test_recall_and_auth_at_5():
    slots = [_slot(1, "a"), _slot(2, "b"), _slot(3, "a"), _slot(4, "c"), _slot(5, "d"), _slot(6, "gold")]
    alloc = _allocation(slots, [""] * 6)
    assert recall_at_k(alloc.record, "a") and recall_at_k(alloc.record, "d")
    assert not recall_at_k(alloc.record, "gold")  # in the sixth slot: not among the five
    assert auth_at_k(alloc.record) == 4  # a, b, c, d: the second "a" adds no authority


def test_whole_gold_survives():
    alloc = _allocation([_slot(1, "g")], [_part(1, 3)])
    assert gold_survives(alloc, "g", "pkg/a.py", 1, 3, FILE).survived


def test_partial_gold_does_not_survive():
    # a clipped rendering shows lines 1-2 of the 3-line gold
    alloc = _allocation([_slot(1, "g", spans=((1, 2),))], [_part(1, 2)])
    result = gold_survives(alloc, "g", "pkg/a.py", 1, 3, FILE)
    assert not result.survived and not result.mismatch


def test_gold_split_over_two_slots_of_the_gold_object_survives():
    alloc = _allocation([_slot(1, "g", spans=((1, 2),)), _slot(2, "g", spans=((3, 3),))],
                        [_part(1, 2), _part(3, 3)])
    assert gold_survives(alloc, "g", "pkg/a.py", 1, 3, FILE).survived


def test_other_objects_other_paths_and_false_spans_do_not_count():
    # another object's slot showing the same lines
    assert not gold_survives(_allocation([_slot(1, "x")], [_part(1, 3)]), "g", "pkg/a.py", 1, 3, FILE).survived
    # the gold object's view from another file (a call site)
    assert not gold_survives(_allocation([_slot(1, "g", path="pkg/b.py")], [_part(1, 3)]),
                             "g", "pkg/a.py", 1, 3, FILE).survived
    # spans that claim lines 1-3 but a text that does not show them (a docstring view)
    bad = _allocation([_slot(1, "g")], ['--- pkg/a.py:1-3 helper\n"""Add one."""\n'])
    result = gold_survives(bad, "g", "pkg/a.py", 1, 3, FILE)
    assert not result.survived and result.mismatch


def test_recall_at_budget_with_a_real_allocation():
    """A 3-line gold survives whole at a roomy budget and not when its share is too small."""
    lines = tuple(FILE[0:3])
    src = MappingObjectSource({"g": ObjectText("g", "pkg/a.py", "helper", "def helper(z):", 1, lines,
                                               "r:pkg/a.py")})
    view = View(id="g#body", object_id="g", kind="body", path="pkg/a.py", start_line=1, end_line=3,
                text="\n".join(lines), repo="r")
    roomy = allocate("helper", [ScoredView(view, 1.0)], "vital", budget=4096, source=src)
    assert gold_survives(roomy, "g", "pkg/a.py", 1, 3, FILE).survived
    tight = allocate("y = z", [ScoredView(view, 1.0)], "vital", budget=18, source=src)
    assert recall_at_k(tight.record, "g") and tight.record.slots[0].clipped
    assert not gold_survives(tight, "g", "pkg/a.py", 1, 3, FILE).survived


def test_bootstrap_interval_is_deterministic_for_a_seed():
    x = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 1], dtype=float)
    a, b = bootstrap_ci(x, seed=3), bootstrap_ci(x, seed=3)
    assert a == b
    assert a.mean == pytest.approx(0.7)
    assert a.lo <= 0.7 <= a.hi and 0.0 <= a.lo and a.hi <= 1.0
    assert bootstrap_ci(x, seed=4).mean == a.mean


def test_bootstrap_of_a_constant_is_that_constant():
    e = bootstrap_ci([2.0] * 20, seed=0)
    assert (e.mean, e.lo, e.hi) == (2.0, 2.0, 2.0)


def test_paired_bootstrap_of_the_difference():
    base = [0, 0, 1, 1, 0, 0]
    ours = [1, 1, 1, 1, 0, 1]
    e = paired_bootstrap(ours, base, seed=0)
    assert e.mean == pytest.approx(0.5)
    assert 0.0 <= e.lo <= 0.5 <= e.hi <= 1.0
    with pytest.raises(ValueError):
        paired_bootstrap([1, 0], [1])


def test_mcnemar_exact():
    # 5 tasks only ours keeps, none only the base: p = 2 * (1/2)^5
    m = mcnemar([1, 1, 1, 1, 1, 0, 1], [0, 0, 0, 0, 0, 0, 1])
    assert (m.wins, m.losses) == (5, 0)
    assert m.p == pytest.approx(0.0625)
    # 3 wins, 1 loss: p = 2 * (1 + 4) / 16
    assert mcnemar([1, 1, 1, 0], [0, 0, 0, 1]).p == pytest.approx(0.625)
    assert mcnemar([1, 0], [1, 0]).p == 1.0


def test_token_reduction():
    assert reduction(1751, 2720) == pytest.approx(35.625, abs=0.01)


def test_a_numbered_vital_fill_rendering_is_verified_line_by_line():
    """vital-fill numbers its lines: its spans are checked against the numbered
    lines (a call site's lines never count), and a false claim is a mismatch."""
    lines = tuple(FILE[0:3])
    src = MappingObjectSource({"g": ObjectText("g", "pkg/a.py", "helper", "def helper(z):", 1, lines,
                                               "r:pkg/a.py")})
    call = View(id="c#call", object_id="g", kind="call_site", path="pkg/a.py", start_line=2, end_line=2,
                text="    y = z + 1", repo="r")
    alloc = allocate("helper", [ScoredView(call, 1.0)], "vital-fill", budget=4096, source=src)
    assert alloc.record.params["line_numbers"] and "  1 def helper(z):" not in alloc.text
    assert "1 def helper(z):\n" in alloc.text and "--- called from pkg/a.py:2-2" in alloc.text
    result = gold_survives(alloc, "g", "pkg/a.py", 1, 3, FILE)
    assert result.survived and not result.mismatch
    wrong = list(FILE)
    wrong[1] = "    y = z - 1"  # the shown line 2 is no longer the file's
    result = gold_survives(alloc, "g", "pkg/a.py", 1, 3, wrong)
    assert not result.survived and result.mismatch
