"""Properties of the allocation over random candidate sets (hypothesis)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vitalrag.allocate.base import DERIVED_VIEW_KINDS
from vitalrag.allocate import AllocationRecord, MappingObjectSource, allocate, policy_names
from vitalrag.model import ScoredView, View

from .conftest import obj_text, parse_rendering

FILES = ["pkg/core.py", "pkg/io.py", "tests/test_core.py"]
NAMES = ["helper", "parse_config", "format_error", "Input", "load", "run_task", "HTTPClient", "f"]
WORDS = NAMES + ["x", "value", "return", "self", "data", "", "    ", "résumé", "\t", "#", "==", "(", ")"]
AUTHORITY = {"vital", "4+1", "5+0", "3+2", "no-quotient"}
OBJECT_POLICIES = {"vital", "4+1", "5+0", "3+2", "no-rendering", "entity-first-4+1", "canonical-5"}

settings.register_profile("allocate", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("allocate")

code_line = st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join)
scores = st.sampled_from([0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0]) | st.floats(0, 1)


@st.composite
def candidate_sets(draw):
    n_obj = draw(st.integers(1, 9))
    objects, views = {}, []
    for i in range(n_obj):
        path = draw(st.sampled_from(FILES))
        name = f"{draw(st.sampled_from(NAMES))}_{i}"
        oid = f"demo:{path}:{name}"
        start = draw(st.integers(1, 200))
        lines = [f"def {name}(x):"] + draw(st.lists(code_line, min_size=0, max_size=25))
        objects[oid] = obj_text(oid, "\n".join(lines), start=start)
        for j in range(draw(st.integers(1, 4))):
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(a, len(lines) - 1))
            kind = draw(st.sampled_from(["body", "signature", "call_site", "window"]))
            views.append(ScoredView(View(f"{name}#v{j}", oid, kind, path, start + a, start + b,
                                         "\n".join(lines[a:b + 1]), repo="demo"), draw(scores)))
    order = draw(st.permutations(range(len(views))))
    return objects, [views[i] for i in order]


params = st.fixed_dictionaries({
    "budget": st.integers(0, 2500),
    "k": st.integers(1, 7),
    "b_obj": st.integers(1, 1024),
    "b_min": st.integers(0, 200),
})
queries = st.lists(st.sampled_from(NAMES + ["complete", "using", "the", "fix"]), max_size=5).map(" ".join)


def run(objects, views, query, p, policy, counter):
    return allocate(query, views, policy=policy, source=MappingObjectSource(objects), counter=counter, **p)


#: vital-fill renders numbered, multi-span text: test_fill.py checks it
PAPER_FORMAT = [name for name in policy_names() if name != "vital-fill"]


@given(data=candidate_sets(), p=params, query=queries, policy=st.sampled_from(PAPER_FORMAT))
def test_budgets_renderings_and_whole_lines(counter, data, p, query, policy):
    objects, views = data
    result = run(objects, views, query, p, policy, counter)
    rec = result.record
    assert result.text == "".join(result.parts)
    assert len(result.parts) == len(rec.slots)
    assert counter.count(result.text) == rec.tokens == sum(s.tokens for s in rec.slots) <= p["budget"]
    if policy in AUTHORITY:
        assert sum(s.b for s in rec.slots) <= p["budget"]
        assert all(s.b <= p["b_obj"] for s in rec.slots)
    for slot, part in zip(rec.slots, result.parts):
        assert counter.count(part) == slot.tokens <= slot.b
        if not part:
            continue
        if rec.params["rendering"] == "verbatim":
            # the controls: the representative view's lines as written, from
            # its first non-blank line, no descriptor
            v = next(sv.view for sv in views if sv.view.id == slot.view_id)
            lines = v.text.splitlines()
            first = next(i for i, line in enumerate(lines) if line.strip())
            shown = part.split("\n")[:-1]
            assert part.endswith("\n") and shown == lines[first:first + len(shown)]
            if slot.spans:
                assert v.kind not in DERIVED_VIEW_KINDS
                assert slot.spans == ((v.start_line + first, v.start_line + first + len(shown) - 1),)
            continue
        _, _, body = parse_rendering(part)
        if slot.spans:
            (a, b), = slot.spans
            # the definition policies show the object (no-quotient too: one per slot)
            src = objects.get(slot.object_key)
            if src is not None:
                assert body == list(src.lines[a - src.start_line:b - src.start_line + 1])
            else:  # a view rendered as itself
                v = next(sv.view for sv in views if sv.view.id == slot.view_id)
                lines = v.text.splitlines()
                assert body == lines[a - v.start_line:b - v.start_line + 1]
        else:
            v = next(sv.view for sv in views if sv.view.id == slot.view_id)
            if v.kind in DERIVED_VIEW_KINDS and slot.object_key not in objects:
                # a signature or docstring rendered as itself: whole lines of its
                # text, but no source span (its text is not the file's lines)
                assert body == v.text.splitlines()[:len(body)]
            else:
                assert body == []


@given(data=candidate_sets(), p=params, query=queries, policy=st.sampled_from(sorted(OBJECT_POLICIES)))
def test_at_most_one_slot_per_object(counter, data, p, query, policy):
    objects, views = data
    rec = run(objects, views, query, p, policy, counter).record
    assert len(set(rec.objects)) == len(rec.objects) == min(p["k"], len(objects))


@given(data=candidate_sets(), p=params, query=queries, policy=st.sampled_from(sorted(OBJECT_POLICIES)),
       extra=st.lists(st.tuples(st.integers(0, 100), st.floats(0.01, 1.0), st.sampled_from(WORDS)),
                      min_size=1, max_size=6))
def test_more_views_of_a_present_object_never_add_a_slot_or_move_another(counter, data, p, query,
                                                                         policy, extra):
    objects, views = data
    before = run(objects, views, query, p, policy, counter)
    best = {}
    for sv in views:
        best[sv.view.object_id] = max(best.get(sv.view.object_id, 0.0), sv.score)
    oids = sorted(best)
    added = []
    for n, (pick, frac, word) in enumerate(extra):
        oid = oids[pick % len(oids)]
        path = oid.split(":")[1]
        # a weaker, redundant rendering of an object already present
        added.append(ScoredView(View(f"extra{n}", oid, "window", path, 1, 1, f"{word} {oid}", repo="demo"),
                                best[oid] * frac * 0.999))
    after = run(objects, views + added, query, p, policy, counter)
    assert after.record.slots == before.record.slots
    assert after.text == before.text
    # and with any score: the slot count and one-slot-per-object still hold
    boosted = [ScoredView(sv.view, 2.0) for sv in added]
    rec = run(objects, views + boosted, query, p, policy, counter).record
    assert len(rec.slots) == len(before.record.slots)
    assert len(set(rec.objects)) == len(rec.objects)


@given(data=candidate_sets(), p=params, query=queries, policy=st.sampled_from(policy_names()),
       seed=st.randoms(use_true_random=False))
def test_deterministic_and_independent_of_input_order_on_distinct_scores(counter, data, p, query, policy, seed):
    objects, views = data
    views = [ScoredView(sv.view, sv.score + i * 1e-6) for i, sv in enumerate(views)]
    assume(len({sv.score for sv in views}) == len(views))  # no ties (a + 1e-6 may equal b)
    a = run(objects, views, query, p, policy, counter)
    b = run(objects, views, query, p, policy, counter)
    assert a.record.to_json() == b.record.to_json() and a.text == b.text
    shuffled = list(views)
    seed.shuffle(shuffled)
    c = run(objects, shuffled, query, p, policy, counter)
    assert c.record.to_json() == a.record.to_json() and c.text == a.text


@given(data=candidate_sets(), p=params, query=queries, policy=st.sampled_from(policy_names()))
def test_record_round_trips_through_json(counter, data, p, query, policy):
    objects, views = data
    rec = run(objects, views, query, p, policy, counter).record
    back = AllocationRecord.from_dict(json.loads(rec.to_json()))
    assert back == rec
    fates = {v.status for v in rec.views}
    assert fates <= {"representative", "merged", "dropped"}
    assert len(rec.views) == len(views)
    held = {s.view_id for s in rec.slots}
    for v in rec.views:
        assert (v.status == "representative") == (v.view_id in held)
        if v.status == "merged":
            assert v.merged_into is not None
