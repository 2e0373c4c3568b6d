"""``render_html``: a self-contained, escaped picture of an allocation record."""

from __future__ import annotations

import re
from html import escape

from vitalrag.allocate import allocate
from vitalrag.allocate.report import render_html

from .conftest import node, scored, view

F = node("pkg/core.py", "f")
HELPER = node("pkg/core.py", "helper")
OTHER = node("pkg/other.py", "other")


def views():
    body = "def f(x):\n" + "".join(f"    y{i} = helper(x) + {i}\n" for i in range(60))
    return [
        scored(view("v-f", F, body), 0.9),
        scored(view("v-f-sig", F, "def f(x):", kind="signature"), 0.8),
        scored(view("v-other", OTHER, "def other():\n    return 1\n"), 0.7),
        scored(view("v-helper", HELPER, "def helper(z):\n    return z\n", start=70), 0.6),
        scored(view("v-evil", "demo:pkg/<evil>.py:x&y", "<script>alert(1)</script>\n"), 0.1),
    ]


def test_report_is_self_contained_and_draws_a_bar_per_object(counter):
    result = allocate("Complete f using helper", views(), k=2, budget=200, counter=counter)
    record = result.record
    page = render_html(record, parts=result.parts)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"https?://", page)
    for tag in ("<script", "<link", " src=", "@import", "url("):
        assert tag not in page
    for slot in record.slots:
        assert escape(slot.object_key) in page
        assert f'<svg class="bar" data-slot="{slot.slot}"' in page
    assert page.count('<svg class="bar" data-slot=') == len(record.slots)
    assert "v-f-sig" in page  # the merged view, listed under its object
    assert "Dropped views (2)" in page and "v-evil" in page
    clipped = [s for s in record.slots if s.clipped]
    assert clipped and 'class="clipped"' in page


def test_everything_from_the_record_is_escaped(counter):
    result = allocate("<b>f</b> & helper", views(), k=5, budget=4096, counter=counter)
    page = render_html(result.record, parts=result.parts)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>f</b>" not in page and "&lt;b&gt;f&lt;/b&gt; &amp; helper" in page
    assert "pkg/&lt;evil&gt;.py:x&amp;y" in page


def test_query_override_and_no_parts(counter):
    record = allocate("f", views(), k=1, counter=counter).record
    page = render_html(record, query="what the user typed")
    assert "what the user typed" in page and "<details>" not in page
