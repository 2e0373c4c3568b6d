"""Token authority (Eq. 4) and line-complete rendering."""

from __future__ import annotations

import pytest

from vitalrag.allocate import render_prefix, render_window, token_authority
from vitalrag.allocate.provenance import identifier_tokens
from vitalrag.allocate.render import full_rendering

from .conftest import obj_text, parse_rendering


def test_eq4_by_hand():
    # beta = 128 (1000 >= 4 * 128); R: 1000, 600, 550, 150
    # b1 = min(900, 400, 1000 - 3*128 = 616) = 400
    # b2 = min(50, 400, 600 - 2*128 = 344) = 50
    # b3 = min(700, 400, 550 - 128 = 422) = 400
    # b4 = min(300, 400, 150) = 150
    assert token_authority([900, 50, 700, 300], 1000, 400, 128) == [400, 50, 400, 150]


def test_eq4_drops_the_floor_when_the_budget_cannot_give_everyone_b_min():
    assert token_authority([900, 50, 700, 300], 300, 400, 128) == [300, 0, 0, 0]


def test_eq4_reserves_the_floor_for_later_objects():
    shares = token_authority([5000] * 5, 4096, 1024, 128)
    assert shares == [1024, 1024, 1024, 896, 128]
    assert sum(shares) <= 4096


LONG = "\n".join(
    ["def process(batch, options):"]
    + [f"    step_{i} = stage_{i}(batch, options)" for i in range(30)]
    + ["    return finalize_helper(step_29)"]
    + [f"    log_{i}(batch)" for i in range(20)]
)


@pytest.fixture
def long_obj():
    return obj_text("demo:pkg/proc.py:process", LONG, start=100)


def test_the_full_object_when_it_fits(counter, long_obj):
    full = full_rendering(long_obj, counter)
    r = render_window(long_obj, frozenset(), full.tokens, counter)
    assert r == full and not r.clipped and r.spans == ((100, 151),)


def test_window_is_centred_on_the_best_matching_line(counter, long_obj):
    q = identifier_tokens("use finalize_helper")
    r = render_window(long_obj, q, 120, counter)
    head, sig, body = parse_rendering(r.text)
    assert head == "--- pkg/proc.py:100-151 process"
    assert sig == "--- sig: def process(batch, options):"
    assert "    return finalize_helper(step_29)" in body
    (a, b), = r.spans
    assert body == LONG.splitlines()[a - 100:b - 100 + 1]  # whole source lines, in order
    assert r.tokens == counter.count(r.text) <= 120
    mid = 100 + 31
    assert abs((mid - a) - (b - mid)) <= 2  # grown on both sides


def test_without_a_match_the_window_starts_at_the_top(counter, long_obj):
    r = render_window(long_obj, identifier_tokens("nothing relevant"), 80, counter)
    head, sig, body = parse_rendering(r.text)
    assert sig is None and r.spans[0][0] == 100 and body[0] == "def process(batch, options):"


def test_never_a_partial_line(counter):
    obj = obj_text("demo:m.py:blob", "x = '" + "abc " * 400 + "'")
    r = render_window(obj, frozenset({"x"}), 100, counter)
    assert r.spans == () and r.text.startswith("--- m.py:1-1 blob\n") and r.tokens <= 100
    assert render_window(obj, frozenset(), 3, counter).text == ""  # not even the descriptor fits


@pytest.mark.parametrize("render", ["window", "prefix"])
def test_every_budget_is_respected_exactly(counter, long_obj, render):
    # blank-line runs make a joined text count differently from its lines
    obj = obj_text("demo:pkg/proc.py:process", LONG.replace("\n    log_", "\n\n\n    log_"), start=100)
    q = identifier_tokens("finalize_helper log_3")
    full = full_rendering(obj, counter).tokens
    last = -1
    for budget in range(0, full + 2, 7):
        r = render_window(obj, q, budget, counter) if render == "window" else render_prefix(obj, budget, counter)
        assert r.tokens == counter.count(r.text) <= budget
        if r.spans:
            _, _, body = parse_rendering(r.text)
            (a, b), = r.spans
            assert body == list(obj.lines[a - 100:b - 100 + 1])
        if render == "prefix":
            assert r.tokens >= last  # more budget never shows less
            last = r.tokens


class UnderCountingLines:
    """Per-line counts that under-estimate: growth by estimate overshoots and the
    exact check has to take lines back (BPE never does this on real code, but
    the budget must not depend on that)."""

    def __init__(self, counter):
        self._c = counter

    def count(self, text):
        return self._c.count(text)

    def count_lines(self, lines):
        return [max(n - 3, 0) for n in self._c.count_lines(lines)]


@pytest.mark.parametrize("render", ["window", "prefix"])
def test_the_exact_check_takes_back_lines_the_estimate_let_in(counter, long_obj, render):
    fake = UnderCountingLines(counter)
    q = identifier_tokens("finalize_helper")
    for budget in (40, 90, 200, 333):
        r = (render_window(long_obj, q, budget, fake) if render == "window"
             else render_prefix(long_obj, budget, fake))
        assert counter.count(r.text) == r.tokens <= budget
        assert r.spans
