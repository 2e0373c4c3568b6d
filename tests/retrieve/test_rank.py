"""The ranking stage (``retrieve.rank``): each signal, on views made by hand so the
signal alone decides (end to end on both stores: tests/graph/test_rank_stores.py)."""

from __future__ import annotations

import pytest

from vitalrag.model import ScoredView, View
from vitalrag.retrieve import rank as rank_module
from vitalrag.retrieve.rank import PathWords, prior, rank, shape


def view(path: str, name: str, kind: str = "body", line: int = 1) -> View:
    oid = f"r:{path}:{name}"
    return View(id=f"{oid}#{kind}:{path}:{line}-{line + 5}", object_id=oid, kind=kind, path=path,
                start_line=line, end_line=line + 5, text=f"def {name}(): pass", content_hash=f"{path}{name}{kind}",
                identifier=name, repo="r")


def hit(v: View, **ranks: int) -> ScoredView:
    return ScoredView(v, 0.0, tuple(sorted(ranks.items())))


def order(ranked) -> list[str]:  # noqa: ANN001
    return [sv.view.object_id for sv in ranked.objects]


# -- the question's shape --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind", "names"), [
    ("Session.send", "identifier", ("Session.send",)),
    ("parse_header", "identifier", ("parse_header",)),
    ("JsonReader", "identifier", ("JsonReader",)),
    ("send()", "identifier", ("send",)),
    ("`send`", "identifier", ("send",)),
    ("how does JsonReader handle lenient parsing", "mixed", ("JsonReader",)),
    ("what calls send() on a session", "mixed", ("send",)),
    ("session management", "prose", ()),
    ("how are routes registered", "prose", ()),
    ("Fix redirect handling when the Location header is relative", "prose", ()),
])
def test_the_shape_of_a_question(text: str, kind: str, names: tuple[str, ...]) -> None:
    got = shape(text)
    assert (got.kind, got.names) == (kind, names)


def test_a_lone_lowercase_word_is_an_identifier_only_when_something_is_called_so() -> None:
    assert shape("session").kind == "prose"
    assert shape("session", {"session"}).kind == "identifier"


def test_a_question_about_tests_is_told_apart() -> None:
    assert shape("how are fixtures torn down").about_tests
    assert not shape("how are routes registered").about_tests


# -- each signal -----------------------------------------------------------------------------------

def test_one_object_is_listed_once_by_its_best_view() -> None:
    a_body, a_sig = view("a.py", "f"), view("a.py", "f", "signature")
    b = view("b.py", "g")
    ranked = rank("something", [hit(a_body, bm25=1), hit(a_sig, bm25=2), hit(b, bm25=3)], names_of={})
    assert order(ranked) == ["r:a.py:f", "r:b.py:g"]
    assert ranked.objects[0].view == a_body
    # every view stays for the allocator, following its object
    assert [sv.view for sv in ranked.views] == [a_body, a_sig, b]


def test_fusion_weights_follow_the_shape() -> None:
    # one view first in BM25, the other first in the dense retriever
    lexical, semantic = view("a.py", "lexical"), view("b.py", "semantic")
    hits = [hit(lexical, bm25=1, dense=2), hit(semantic, dense=1, bm25=2)]
    prose = rank("where things happen", hits, names_of={}).objects
    ident = rank("do_thing", hits, names_of={}).objects
    # BM25 counts more for an identifier than for prose (relative to dense)
    assert ident[0].view == lexical
    w = rank_module.WEIGHTS
    assert w["identifier"]["bm25"] / w["identifier"]["dense"] > w["prose"]["bm25"] / w["prose"]["dense"]
    assert {sv.view.object_id for sv in prose} == {lexical.object_id, semantic.object_id}


def test_a_named_definition_comes_first_even_when_the_retrievers_missed_it() -> None:
    found = [hit(view(f"m{i}.py", f"other{i}"), bm25=i, dense=i) for i in range(1, 6)]
    send = view("sessions.py", "Session.send")
    ranked = rank("Session.send", found, names_of={"send": ["r:sessions.py:Session.send"]},
                  extra={"r:sessions.py:Session.send": send})
    assert order(ranked)[0] == "r:sessions.py:Session.send"


def test_a_named_definition_is_shown_where_it_is_defined_not_where_it_is_called() -> None:
    call = View(id="r:a.py:Reader.consume_to#call:b.py:9", object_id="r:a.py:Reader.consume_to", kind="call_site",
                path="b.py", start_line=9, end_line=9, text="reader.consume_to(x)", content_hash="c",
                identifier="Reader.consume_to", repo="r")
    body = view("a.py", "Reader.consume_to", line=20)
    found = [hit(call, bm25=1), hit(view("c.py", "other"), bm25=2)]
    ranked = rank("Reader.consume_to", found, names_of={"consume_to": ["r:a.py:Reader.consume_to"]},
                  extra={"r:a.py:Reader.consume_to": body})
    first = ranked.objects[0].view
    assert first.object_id == "r:a.py:Reader.consume_to" and first.path == "a.py" and first.kind == "body"


def test_a_qualifier_picks_the_definition_inside_its_container() -> None:
    ids = ["r:a.py:Session.send", "r:b.py:Adapter.send"]
    found = [hit(view("b.py", "Adapter.send"), bm25=1), hit(view("a.py", "Session.send"), bm25=2)]
    assert order(rank("Session.send", found, names_of={"send": ids}))[0] == "r:a.py:Session.send"


def test_a_mixed_question_lifts_its_named_definition_less_than_an_identifier_does() -> None:
    found = [hit(view("a.py", "other"), bm25=1, dense=1), hit(view("b.py", "Reader"), bm25=9, dense=9)]
    names = {"Reader": ["r:b.py:Reader"]}
    ident = rank("Reader", found, names_of=names).objects
    mixed = rank("how does Reader handle lenient parsing", found, names_of=names).objects
    lift = {sv.view.object_id: sv.score for sv in ident}["r:b.py:Reader"]
    assert {sv.view.object_id: sv.score for sv in mixed}["r:b.py:Reader"] < lift


def test_prose_words_naming_a_file_lift_its_objects() -> None:
    paths = PathWords(["pkg/ctx.py", "pkg/sessions.py", "pkg/app.py", "pkg/cli.py"])
    found = [hit(view("pkg/ctx.py", "push"), bm25=1, dense=1), hit(view("pkg/ctx.py", "pop"), bm25=2, dense=2),
             hit(view("pkg/sessions.py", "SessionInterface"), bm25=5, dense=5)]
    plain = rank("session management", found, names_of={})
    lifted = rank("session management", found, names_of={}, paths=paths)
    assert order(plain)[0] == "r:pkg/ctx.py:push"
    assert order(lifted)[0] == "r:pkg/sessions.py:SessionInterface"


def test_a_word_in_every_path_says_nothing() -> None:
    paths = PathWords(["requests/a.py", "requests/b.py"])
    assert paths.weight("request") == 0.0
    assert paths.match(["request"], "requests/a.py") == 0.0
    assert PathWords(["requests/a.py", "requests/sessions.py"]).match(["sessions"], "requests/sessions.py") > 0


@pytest.mark.parametrize(("a", "b", "same"), [
    ("session", "sessions", True), ("templating", "template", True), ("registration", "register", True),
    ("route", "routing", True), ("app", "apps", True), ("app", "application", False), ("cli", "client", False), ("io", "ioutils", False),
    ("config", "context", False),
])
def test_words_in_two_forms(a: str, b: str, same: bool) -> None:
    assert rank_module.same_word(a, b) is same


def test_a_file_found_several_times_lifts_its_best_object() -> None:
    # b.py's lead is a little behind a.py's, but b.py was found three times
    found = [hit(view("a.py", "f"), bm25=1), hit(view("b.py", "g"), bm25=2),
             hit(view("b.py", "h"), bm25=3), hit(view("b.py", "i"), bm25=4)]
    assert order(rank("something", found, names_of={}))[0] == "r:b.py:g"
    saved = rank_module.COHERENCE_LIFT
    try:
        rank_module.COHERENCE_LIFT = 0.0
        assert order(rank("something", found, names_of={}))[0] == "r:a.py:f"
    finally:
        rank_module.COHERENCE_LIFT = saved


def test_only_strong_objects_make_a_file_coherent() -> None:
    # b.py holds many objects the retrievers found far down: together they would
    # lift its best one above a.py's, but none of them is a strong hit
    found = [hit(view("a.py", "f"), bm25=1), hit(view("b.py", "g"), bm25=8),
             *(hit(view("b.py", f"w{i}"), bm25=100 + i) for i in range(30))]
    assert order(rank("something", found, names_of={}))[0] == "r:a.py:f"
    saved = rank_module.STRONG
    try:
        rank_module.STRONG = 0.0
        assert order(rank("something", found, names_of={}))[0] == "r:b.py:g"
    finally:
        rank_module.STRONG = saved


@pytest.mark.parametrize("path", ["tests/test_a.py", "pkg/__init__.py", "examples/demo.py", "pkg/compat/x.py", "lib/legacy/old.py"])
def test_tests_reexports_and_asides_count_less(path: str) -> None:
    assert prior(path, about_tests=False) < 1.0
    assert prior("pkg/core.py", about_tests=False) == 1.0


def test_tests_count_fully_when_the_question_is_about_tests() -> None:
    assert prior("tests/test_a.py", about_tests=True) == 1.0
    found = [hit(view("tests/test_app.py", "test_run"), bm25=1), hit(view("app.py", "run"), bm25=2)]
    assert order(rank("run the app", found, names_of={}))[0] == "r:app.py:run"
    assert order(rank("tests that run the app", found, names_of={}))[0] == "r:tests/test_app.py:test_run"
    # context ranks without priors (its allocator puts tests after code itself)
    assert order(rank("run the app", found, names_of={}, priors=False))[0] == "r:tests/test_app.py:test_run"


def test_the_allocators_pool_is_the_fused_top_views_in_their_objects_order() -> None:
    """``Ranked.pool(n)``: the views the fusion ranked in its first n, regrouped by
    object, not the first objects' every view (a call site or window each)."""
    busy = [hit(View(id=f"r:a.py:f#call:{i}", object_id="r:a.py:f", kind="call_site", path=f"c{i}.py",
                     start_line=1, end_line=1, text="f()", content_hash=f"c{i}", identifier="f", repo="r"),
                bm25=20 + i) for i in range(10)]
    found = [hit(view("a.py", "f"), bm25=1), hit(view("b.py", "g"), bm25=2), hit(view("c.py", "h"), bm25=3), *busy]
    ranked = rank("something", found, names_of={})
    assert [sv.view.object_id for sv in ranked.views[:3]] == ["r:a.py:f"] * 3  # f's call sites first
    pool = ranked.pool(3)
    assert [sv.view.object_id for sv in pool] == ["r:a.py:f", "r:b.py:g", "r:c.py:h"]


def test_the_pool_reaches_further_files_past_its_first_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first objects' views fill n; the best object of each further file follows,
    ``POOL_FILES`` of them at most, in rank order."""
    many = [hit(view("a.py", f"f{i}"), bm25=1 + i) for i in range(8)]
    others = [hit(view(f"o{i}.py", f"g{i}"), bm25=20 + i) for i in range(5)]
    again = [hit(view("o0.py", "g_second"), bm25=30)]
    ranked = rank("something", [*many, *others, *again], names_of={}, spread=False, priors=False)
    pool = ranked.pool(4)
    assert [sv.view.path for sv in pool[:4]] == ["a.py"] * 4
    assert [sv.view.path for sv in pool[4:]] == [f"o{i}.py" for i in range(5)]  # one each, g_second not
    monkeypatch.setattr(rank_module, "POOL_FILES", 2)
    assert [sv.view.path for sv in ranked.pool(4)[4:]] == ["o0.py", "o1.py"]
    monkeypatch.setattr(rank_module, "POOL_FILES", 0)
    assert len(ranked.pool(4)) == 4


def test_the_list_spreads_over_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank_module, "COHERENCE_LIFT", 0.0)  # the spread alone
    found = [hit(view("a.py", f"f{i}"), bm25=i) for i in range(1, 4)] + [hit(view("b.py", "g"), bm25=4)]
    assert order(rank("something", found, names_of={})).index("r:b.py:g") == 1
    # context ranks without it: a change's definitions are often in one file
    assert order(rank("something", found, names_of={}, spread=False)).index("r:b.py:g") == 3
    monkeypatch.setattr(rank_module, "SPREAD_DECAY", 1.0)
    assert order(rank("something", found, names_of={})).index("r:b.py:g") == 3
