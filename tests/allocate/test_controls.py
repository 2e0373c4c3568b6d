"""Each policy against a small hand-computed example.

Ranking (score): f body .95, f signature .90, f signature again with other
whitespace .88, f call site (in pkg/main.py) .85, test_f .80, format_error .75,
Input .70, parse_config (pkg/config.py) .68, cleanup (pkg/core.py, nothing in
common with the query) .67, helper (pkg/core.py) .65.

Objects by score: f, test_f, format_error, Input, parse_config, cleanup, helper.
The budget is roomy, so selection alone decides these tests.
"""

from __future__ import annotations

import pytest

from vitalrag.allocate import allocate, get_policy, policy_names
from vitalrag.errors import InputError

from .conftest import node, scored, view

QUERY = "Complete f using helper"
F, B, C = node("pkg/core.py", "f"), node("tests/test_core.py", "test_f"), node("pkg/core.py", "helper")
D, E = node("pkg/errors.py", "format_error"), node("pkg/types.py", "Input")
P, G = node("pkg/config.py", "parse_config"), node("pkg/core.py", "cleanup")


@pytest.fixture
def views():
    return [
        scored(view("A-body", F, "def f(x: int) -> int:\n    return helper(x)\n", start=10), 0.95),
        scored(view("A-sig", F, "def f(x: int) -> int:", kind="signature", start=10), 0.90),
        scored(view("A-sig2", F, "def f(x: int)  ->  int:  ", kind="signature", start=10), 0.88),
        scored(view("A-call", F, "y = f(x)", kind="call_site", path="pkg/main.py", start=30), 0.85),
        scored(view("B", B, "def test_f():\n    assert f(5) == 5\n", kind="test"), 0.80),
        scored(view("D", D, 'def format_error(x: int) -> str:\n    return f"invalid: {x}"\n'), 0.75),
        scored(view("E", E, "class Input:\n    value: int\n"), 0.70),
        scored(view("P", P, "def parse_config(path):\n    return load(path)\n"), 0.68),
        scored(view("G", G, "def cleanup():\n    pass\n", start=20), 0.67),
        scored(view("C", C, "def helper(z: int) -> int:\n    return z\n", start=1), 0.65),
    ]


def chosen_views(views, policy, **kw):
    return [s.view_id for s in allocate(QUERY, views, policy=policy, **kw).record.slots]


EXPECTED = {
    # top five views, whatever they belong to
    "raw-surface": ["A-body", "A-sig", "A-sig2", "A-call", "B"],
    "no-structure": ["A-body", "A-sig", "A-sig2", "A-call", "B"],
    # A-sig2 is A-sig with other whitespace: merged; the rest survive
    "exact-dedup": ["A-body", "A-sig", "A-call", "B", "D"],
    # strongest view per object, top five objects
    "canonical-5": ["A-body", "B", "D", "E", "P"],
    # unseen paths first: A-sig, A-sig2 (pkg/core.py again) are deferred
    "file-quota": ["A-body", "A-call", "B", "D", "E"],
    # objects f, test_f, format_error, Input; then the first same-file object,
    # ungated: cleanup (pkg/core.py, like f)
    "entity-first-4+1": ["A-body", "B", "D", "E", "G"],
    "entity-first-object": ["A-body", "B", "D", "E", "G"],
    # the companion must also share a query token: helper
    "vital": ["A-body", "B", "D", "E", "C"],
    "4+1": ["A-body", "B", "D", "E", "C"],
    "no-rendering": ["A-body", "B", "D", "E", "C"],
    "no-rendering-object": ["A-body", "B", "D", "E", "C"],
    # top five objects
    "5+0": ["A-body", "B", "D", "E", "P"],
    # core f, test_f, format_error; helper qualifies; nothing else does, so the
    # best remaining object (Input) fills the last slot
    "3+2": ["A-body", "B", "D", "C", "E"],
    # every view its own object: four views of f are the core; helper is in
    # f's file and names the query's helper
    "no-quotient": ["A-body", "A-sig", "A-sig2", "A-call", "C"],
}


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_selection(views, counter, policy):
    assert chosen_views(views, policy, counter=counter) == EXPECTED[policy]


def test_every_registered_policy_is_covered():
    # vital-fill's selection is covered by test_fill.py
    assert sorted(policy_names()) == sorted(EXPECTED | {"mmr": None, "vital-fill": None})


def test_roles_of_the_object_policies(views, counter):
    roles = {p: [s.role for s in allocate(QUERY, views, policy=p, counter=counter).record.slots]
             for p in ("vital", "5+0", "3+2", "entity-first-4+1")}
    assert roles["vital"] == ["core"] * 4 + ["companion"]
    assert roles["5+0"] == ["core"] * 5
    assert roles["3+2"] == ["core"] * 3 + ["companion", "fill"]
    assert roles["entity-first-4+1"] == ["core"] * 4 + ["companion"]


def test_dropped_objects_say_why(views, counter):
    rec = allocate(QUERY, views, policy="vital", counter=counter).record
    fate = {v.view_id: v for v in rec.views}
    assert fate["G"].status == "dropped"
    assert "shares no identifier with the query" in fate["G"].reason
    assert fate["P"].status == "dropped" and "not in the file of a core object" in fate["P"].reason
    dedup = {v.view_id: v for v in allocate(QUERY, views, policy="exact-dedup", counter=counter).record.views}
    assert dedup["A-sig2"].status == "merged" and dedup["A-sig2"].merged_into == "A-sig"


def test_mmr_trades_relevance_for_novelty(counter):
    # rel: v1 = 1, v2 = (0.9 - 0.1) / 0.9 = 0.889, v3 = 0.  After v1, v2 has
    # Jaccard 1 with it: 0.5 * 0.889 - 0.5 = -0.056 < v3's 0.
    vs = [scored(view("v1", node("a.py", "alpha"), "alpha_beta(gamma)"), 1.0),
          scored(view("v2", node("b.py", "beta"), "alpha_beta( gamma )"), 0.9),
          scored(view("v3", node("c.py", "delta"), "delta_epsilon()"), 0.1)]
    assert chosen_views(vs, "mmr", k=2, counter=counter) == ["v1", "v3"]
    assert chosen_views(vs, "raw-surface", k=2, counter=counter) == ["v1", "v2"]


def test_controls_clip_in_order_until_the_budget_runs_out(counter):
    # Three 3-line views of 10 + 3 * 6 tokens each under a budget that holds
    # the first whole, the second in part and leaves nothing for the third.
    lines = "".join(f"value_{i} = compute({i})\n" for i in range(3))
    vs = [scored(view(f"v{i}", node(f"m{i}.py", f"o{i}"), lines), 1 - i / 10) for i in range(3)]
    one = allocate("x", vs[:1], policy="raw-surface", counter=counter).record.slots[0].tokens
    budget = one + one - 3
    rec = allocate("x", vs, policy="raw-surface", budget=budget, b_obj=1024, counter=counter).record
    s1, s2, s3 = rec.slots
    assert (s1.tokens, s1.clipped, s1.b) == (one, False, budget)
    assert s2.clipped and 0 < s2.tokens <= budget - one == s2.b
    assert s2.spans == ((1, 2),)  # a prefix of whole lines
    assert s3.tokens == 0 and s3.b == budget - one - s2.tokens
    assert rec.tokens <= budget


def test_controls_cap_each_view_at_b_obj(counter):
    text = "".join(f"item_{i} = build_item({i}, name='n{i}')\n" for i in range(40))
    vs = [scored(view("v", node("m.py", "o"), text), 1.0)]
    s = allocate("x", vs, policy="raw-surface", b_obj=100, counter=counter).record.slots[0]
    assert s.b == 100 and s.clipped and 90 <= s.tokens <= 100


def test_unknown_policy_is_an_input_error():
    with pytest.raises(InputError, match="unknown allocation policy 'best'"):
        get_policy("best")


def test_controls_paste_the_representative_view_and_vital_shows_the_definition(counter):
    # f's signature outranks its body: the controls paste the signature (the
    # view that won the slot), so f's body is not in their context even though
    # f is in the portfolio; VITAL-RAG renders f's definition.
    body = "def f(x: int) -> int:\n    y = helper(x)\n    return y\n"
    vs = [scored(view("A-sig", F, "def f(x: int) -> int:", kind="signature", start=10), 0.95),
          scored(view("A-body", F, body, start=10), 0.50),
          scored(view("C", C, "def helper(z: int) -> int:\n    return z\n"), 0.40)]
    for policy in ("entity-first-4+1", "no-rendering", "canonical-5"):
        result = allocate(QUERY, vs, policy=policy, counter=counter)
        first = result.record.slots[0]
        assert (first.view_id, first.object_key) == ("A-sig", F)
        assert result.parts[0] == "def f(x: int) -> int:\n"  # as written, no descriptor
        assert first.spans == ()  # a signature view is not the file's lines
        assert "return y" not in result.text
        assert result.record.params["rendering"] == "verbatim"
    raw = allocate(QUERY, vs, policy="raw-surface", counter=counter)
    assert raw.parts[:2] == ("def f(x: int) -> int:\n", body)  # two slots for f
    vital = allocate(QUERY, vs, policy="vital", counter=counter)
    assert vital.parts[0] == "--- pkg/core.py:10-12 f\n" + body
    assert vital.record.slots[0].spans == ((10, 12),)
    prefix = allocate(QUERY, vs, policy="entity-first-object", counter=counter)
    assert prefix.parts[0] == vital.parts[0] and prefix.record.params["rendering"] == "prefix"


def test_a_view_is_pasted_from_its_first_line_clipped_at_b_obj(counter):
    lines = [f"    total_{i} = accumulate(total_{i - 1}, weight={i})" for i in range(1, 40)]
    text = "\n" + "def run(x):\n" + "\n".join(lines) + "\n"  # a leading blank line is not shown
    vs = [scored(view("W", F, text, kind="window", start=20), 1.0)]
    rec = allocate(QUERY, vs, policy="entity-first-4+1", b_obj=60, counter=counter)
    slot, part = rec.record.slots[0], rec.parts[0]
    assert part.startswith("def run(x):\n    total_1 = ") and slot.clipped and slot.tokens <= 60
    n = part.count("\n")
    assert slot.spans == ((21, 21 + n - 1),)
    assert counter.count(part) == slot.tokens
