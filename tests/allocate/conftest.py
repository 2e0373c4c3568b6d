from __future__ import annotations

import pytest

from vitalrag.allocate.source import ObjectText
from vitalrag.model import ScoredView, View
from vitalrag.tokens import TokenCounter, get_counter

REPO = "demo"


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return get_counter("cl100k_base")


def node(path: str, qualname: str) -> str:
    return f"{REPO}:{path}:{qualname}"


def view(vid: str, oid: str, text: str, *, kind: str = "body", path: str | None = None,
         start: int = 1, identifier: str = "") -> View:
    """A graph view; ``path`` defaults to the object's own file."""
    if path is None:
        path = oid.split(":")[1]
    n = max(len(text.splitlines()), 1)
    return View(vid, oid, kind, path, start, start + n - 1, text, identifier=identifier, repo=REPO)


def scored(v: View, score: float) -> ScoredView:
    return ScoredView(v, score)


def obj_text(oid: str, text: str, start: int = 1, signature: str = "") -> ObjectText:
    _, path, qual = oid.split(":")
    lines = tuple(text.splitlines())
    return ObjectText(oid, path, qual, signature or (lines[0].strip() if lines else ""), start,
                      lines, f"{REPO}:{path}")


def parse_rendering(part: str) -> tuple[str, str | None, list[str]]:
    """(descriptor, signature line or None, code lines) of one rendering."""
    lines = part.split("\n")
    assert lines[-1] == "", "a rendering ends with a newline"
    lines = lines[:-1]
    head = lines[0]
    assert head.startswith("--- ")
    sig = None
    body = lines[1:]
    if body and body[0].startswith("--- sig: "):
        sig, body = body[0], body[1:]
    return head, sig, body
