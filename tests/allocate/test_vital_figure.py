"""The paper's running example (Figures 1 and 2): the body, signature and call
site of ``f``, its test ``B``, helper ``C``, exception helper ``D``
(``format_error``) and type ``E`` (``class Input``), for the query
"Complete f using helper"."""

from __future__ import annotations

import pytest

from vitalrag.allocate import allocate

from .conftest import node, scored, view

QUERY = "Complete f using helper"
F = node("pkg/core.py", "f")
B = node("tests/test_core.py", "test_f")
C = node("pkg/core.py", "helper")
D = node("pkg/errors.py", "format_error")
E = node("pkg/types.py", "Input")

HELPER = "def helper(z: int) -> int:\n    return z\n"


def figure_views(f_body: str = "def f(x: int) -> int:\n    return helper(x)\n", *, c_score: float = 0.65,
                 extra=()):
    return [
        scored(view("A-body", F, f_body, start=10), 0.95),
        scored(view("A-sig", F, "def f(x: int) -> int:", kind="signature", start=10), 0.90),
        scored(view("A-call", F, "y = f(x)", kind="call_site", path="pkg/main.py", start=30), 0.85),
        scored(view("B", B, "def test_f():\n    assert f(5) == 5\n", kind="test"), 0.80),
        scored(view("D", D, 'def format_error(x: int) -> str:\n    return f"invalid: {x}"\n'), 0.75),
        scored(view("E", E, "class Input:\n    value: int\n"), 0.70),
        scored(view("C", C, HELPER), c_score),
        *extra,
    ]


def test_vital_keeps_helper_as_the_query_relevant_companion(counter):
    result = allocate(QUERY, figure_views(), policy="vital", counter=counter)
    rec = result.record
    assert rec.objects == (F, B, D, E, C)
    c = rec.slot_of(C)
    assert c is not None and c.role == "companion" and not c.clipped
    assert "helper" in c.reason
    assert HELPER in result.text  # rendered in full
    # the three views of f own one slot
    fates = {v.view_id: v for v in rec.views}
    assert fates["A-body"].status == "representative"
    assert fates["A-sig"].status == fates["A-call"].status == "merged"
    assert fates["A-sig"].merged_into == fates["A-call"].merged_into == "A-body"
    assert fates["A-call"].slot == 1


def test_raw_surface_lets_the_views_of_f_crowd_out_the_helper(counter):
    result = allocate(QUERY, figure_views(), policy="raw-surface", counter=counter)
    rec = result.record
    assert [s.view_id for s in rec.slots] == ["A-body", "A-sig", "A-call", "B", "D"]
    assert rec.slot_of(C) is None
    assert "def helper" not in result.text
    assert len(set(rec.objects)) == 3  # Auth@5: five slots, three objects


def test_under_a_tight_budget_vital_renders_the_helper_whole_and_raw_surface_clips_it(counter):
    # Figure 1: the helper is ranked fifth and retrieved, but the budget runs
    # out on the views of f before it.
    big_body = "def f(x: int) -> int:\n" + "".join(
        f"    step_{i} = transform_{i}(x, offset={i})\n" for i in range(60)) + "    return helper(x)\n"
    views = figure_views(big_body)
    views = [v for v in views if v.view.id not in ("D", "E")]
    views[-1] = scored(views[-1].view, 0.78)  # C just below B, fifth view
    roomy = allocate(QUERY, views, policy="raw-surface", counter=counter)
    budget = sum(s.tokens for s in roomy.record.slots[:4]) + 10  # C needs 23
    raw = allocate(QUERY, views, policy="raw-surface", budget=budget, counter=counter)
    assert [s.view_id for s in raw.record.slots] == ["A-body", "A-sig", "A-call", "B", "C"]
    assert raw.record.slots[-1].clipped  # C is in the top five but does not survive
    assert HELPER not in raw.text

    vital = allocate(QUERY, views, policy="vital", budget=budget, counter=counter)
    slots = vital.record.slots
    assert [s.object_key for s in slots] == [F, B, C]
    assert HELPER in vital.text and not slots[2].clipped
    # f is clipped, its window centred on the line that calls the helper
    f_slot = slots[0]
    assert f_slot.clipped and f_slot.b == budget - 2 * 128
    assert "return helper(x)" in vital.parts[0]
    assert vital.parts[0].startswith("--- pkg/core.py:10-71 f\n")
    assert "--- sig: def f(x: int) -> int:" in vital.parts[0]
    assert vital.tokens <= budget


@pytest.mark.parametrize("policy", ["vital", "raw-surface", "no-rendering", "3+2"])
def test_the_figure_allocation_is_deterministic(counter, policy):
    a = allocate(QUERY, figure_views(), policy=policy, counter=counter)
    b = allocate(QUERY, list(reversed(figure_views())), policy=policy, counter=counter)
    assert a.text == b.text
    assert a.record.slots == b.record.slots
