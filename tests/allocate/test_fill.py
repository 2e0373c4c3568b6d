"""vital-fill: the agent-facing allocation (budget filling, containment, tests
after code, names the query spells, numbered statement-complete rendering)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from vitalrag.allocate import MappingObjectSource, ObjectText, allocate
from vitalrag.allocate.agent_render import blocks, display_identifier, render_for_agent, statement_starts
from vitalrag.allocate.fill import FillPolicy, is_test_path, named_in_query, outline_rendering
from vitalrag.model import ScoredView, View

from .test_allocation_properties import candidate_sets, params, queries

REPO = "demo"
_DESC = re.compile(r"^--- (?P<path>\S+?):(?P<spans>[\d,-]+) (?P<ident>.*?)(?: \(of (?P<a>\d+)-(?P<b>\d+)\))?$")


def obj(path: str, qual: str, text: str, *, start: int = 1, kind: str = "function",
        children: tuple = ()) -> ObjectText:
    lines = tuple(text.splitlines())
    return ObjectText(f"{REPO}:{path}:{qual}", path, qual, lines[0].strip(), start, lines,
                      f"{REPO}:{path}", kind=kind, children=children)


def sv(o: ObjectText, score: float, kind: str = "body", *, text: str | None = None,
       path: str | None = None, start: int | None = None) -> ScoredView:
    body = text if text is not None else "\n".join(o.lines)
    s = o.start_line if start is None else start
    return ScoredView(View(f"{o.key}#{kind}:{s}", o.key, kind, path or o.path, s,
                           s + len(body.splitlines()) - 1, body, repo=REPO), score)


#: the filling rule alone: no outline, no containers' lines
PLAIN = FillPolicy(outline=0.0, outer_lines=False)


def run(query, views, objects, policy=PLAIN, **p):
    return allocate(query, views, policy=policy, source=MappingObjectSource({o.key: o for o in objects}), **p)


def parse(part: str) -> tuple[dict, dict[int, str]]:
    """A vital-fill rendering: its descriptor fields and its numbered source lines."""
    lines = part.split("\n")
    assert lines[-1] == "" and lines[0].startswith("--- ")
    m = _DESC.match(lines[0])
    head = m.groupdict() if m else {"path": None, "spans": ""}
    shown: dict[int, str] = {}
    for line in lines[1:-1]:
        if line.startswith("--- called from"):
            break
        if line.startswith("--- sig: ") or line == "⋮":
            continue
        m = re.match(r"^ *(\d+)(?: (.*))?$", line)
        assert m, line
        shown[int(m.group(1))] = m.group(2) or ""
    return head, shown


def small(i: int, path: str = "pkg/core.py") -> ObjectText:
    return obj(path, f"helper_{i}", f"def helper_{i}(x):\n    return x + {i}\n", start=10 * i + 1)


# -- budget filling ------------------------------------------------------------------

def test_k_is_a_minimum_the_budget_is_filled(counter):
    objects = [small(i) for i in range(12)]
    views = [sv(o, 1.0 - i / 20) for i, o in enumerate(objects)]
    rec = run("helper", views, objects, counter=counter, budget=4096).record
    assert len(rec.slots) == 12 and rec.slots[4].role == "companion"
    assert [s.role for s in rec.slots[5:]] == ["fill"] * 7
    vital = allocate("helper", views, policy="vital", source=MappingObjectSource({o.key: o for o in objects}),
                     counter=counter, budget=4096).record
    assert len(vital.slots) == 5


def test_filling_stops_when_the_next_share_would_fall_under_the_floor(counter):
    big = [obj("pkg/big.py", f"f{i}", "\n".join([f"def f{i}():"] + [f"    x_{j} = compute({j}, {i})"
                                                                     for j in range(80)]),
               start=100 * i + 1) for i in range(6)]
    views = [sv(o, 1.0 - i / 10) for i, o in enumerate(big)]
    rec = run("compute", views, big, counter=counter, budget=1500, b_obj=400, b_min=128).record
    assert sum(s.b for s in rec.slots) <= 1500 and rec.tokens <= 1500
    assert all(s.tokens <= 400 for s in rec.slots)
    left = 1500 - rec.tokens
    dropped = [v for v in rec.views if v.status == "dropped"]
    assert left < 128 or not dropped
    assert any("under its floor" in v.reason for v in dropped)


def test_a_small_budget_guarantees_fewer_slots_so_the_first_object_is_not_squeezed(counter):
    """At B=1,024 Eq. 4 over K=5 slots keeps four floors of 128 for the later slots and
    the first object gets 512; vital-fill guarantees 4 slots there (a mean share of two
    floors each), so the first gets 640. The paper's ``vital`` keeps its K."""
    big = [obj("pkg/big.py", f"f{i}", "\n".join([f"def f{i}():"] + [f"    x_{j} = compute({j}, {i})"
                                                                     for j in range(80)]),
               start=100 * i + 1) for i in range(6)]
    views = [sv(o, 1.0 - i / 10) for i, o in enumerate(big)]
    rec = run("compute", views, big, counter=counter, budget=1024, b_obj=1024, b_min=128).record
    assert rec.params["k_min"] == 4
    assert 512 < rec.slots[0].tokens <= 640 and rec.slots[0].b == rec.slots[0].tokens
    assert rec.tokens <= 1024
    assert FillPolicy.guaranteed(5, 1024, 128) == 4 and FillPolicy.guaranteed(5, 1280, 128) == 5
    assert FillPolicy.guaranteed(5, 100, 128) == 1 and FillPolicy.guaranteed(5, 1024, 0) == 5
    vital = allocate("compute", views, policy="vital", source=MappingObjectSource({o.key: o for o in big}),
                     counter=counter, budget=1024, b_obj=1024, b_min=128).record
    assert len(vital.slots) == 5 and vital.slots[0].tokens <= 512

@given(data=candidate_sets(), p=params, query=queries, tests=st.sampled_from(["auto", "include", "exclude"]))
def test_shares_and_renderings_hold_their_promises(counter, data, p, query, tests):
    objects, views = data
    result = allocate(query, views, policy=FillPolicy(tests=tests), source=MappingObjectSource(objects),
                      counter=counter, **p)
    rec = result.record
    assert result.text == "".join(result.parts) and len(result.parts) == len(rec.slots)
    # the shares (settled at what each rendering used) never exceed B, nor b_obj each
    assert counter.count(result.text) == rec.tokens == sum(s.b for s in rec.slots) <= p["budget"]
    assert all(s.tokens <= s.b <= p["b_obj"] for s in rec.slots)
    assert len({s.key for s in rec.slots}) == len(rec.slots)
    for slot, part in zip(rec.slots, result.parts):
        if not part:
            continue
        head, shown = parse(part)
        src = objects.get(slot.key)
        if src is None or not slot.spans:
            continue
        # every numbered line is the source line of that number, whole; the
        # descriptor names exactly the shown ranges
        for n, text in shown.items():
            if n < src.start_line:  # the definition line of a retrieved object containing it
                assert any(o.file == src.file and o.start_line <= n and src.end_line <= o.end_line
                           and o.lines[n - o.start_line] == text for o in objects.values())
                continue
            assert src.lines[n - src.start_line] == text
        assert sorted(shown) == [n for a, b in slot.spans for n in range(a, b + 1)]
        assert head["spans"] == ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in slot.spans)


# -- containment ------------------------------------------------------------------------

CLASS_SRC = """class Engine:
    \"\"\"Runs jobs.\"\"\"

    def prepare(self, job):
        return job.ready()

    def run(self, job):
        self.prepare(job)
        return job.go()
"""


def _engine():
    prepare = obj("pkg/core.py", "Engine.prepare", "    def prepare(self, job):\n        return job.ready()",
                  start=4, kind="method")
    run_ = obj("pkg/core.py", "Engine.run", "    def run(self, job):\n        self.prepare(job)\n"
               "        return job.go()", start=7, kind="method")
    cls = obj("pkg/core.py", "Engine", CLASS_SRC, kind="class",
              children=((4, 5, prepare.key), (7, 9, run_.key)))
    return cls, prepare, run_


def test_a_member_of_a_chosen_class_is_shown_inside_it_not_again(counter):
    cls, prepare, run_ = _engine()
    other = small(7, "pkg/util.py")
    views = [sv(cls, 0.9), sv(prepare, 0.8), sv(other, 0.7), sv(run_, 0.6)]
    result = run("engine prepare", views, [cls, prepare, run_, other], counter=counter)
    keys = [s.key for s in result.record.slots]
    assert cls.key in keys and prepare.key not in keys and run_.key not in keys
    assert result.text.count("def prepare") == 1
    fates = {v.object_key: v for v in result.record.views}
    assert fates[prepare.key].status == "merged" and "inside" in fates[prepare.key].reason


def test_a_class_after_its_chosen_member_gets_no_slot(counter):
    cls, prepare, run_ = _engine()
    views = [sv(prepare, 0.9), sv(cls, 0.8)]
    rec = run("engine prepare", views, [cls, prepare, run_], counter=counter).record
    assert [s.key for s in rec.slots] == [prepare.key]
    assert "contains" in next(v.reason for v in rec.views if v.object_key == cls.key)


def test_a_clipped_class_shows_its_header_and_the_members_asked_for(counter):
    methods = []
    lines = ["class Big:", '    """Many methods."""', ""]
    for i in range(30):
        start = len(lines) + 1
        lines += [f"    def m{i}(self):", f"        return self.value_{i} * {i}", ""]
        methods.append((start, start + 1, f"{REPO}:pkg/big.py:Big.m{i}"))
    big = obj("pkg/big.py", "Big", "\n".join(lines), kind="class", children=tuple(methods))
    r = render_for_agent(big, frozenset({"value_17"}), 120, counter)
    assert r.clipped and r.tokens <= 120
    assert "class Big:" in r.text and "def m17" in r.text and "return self.value_17" in r.text
    assert "def m3(" not in r.text and "⋮" in r.text
    assert len(r.spans) == 2 and r.spans[0][0] == 1



def test_members_pointed_at_inside_a_nested_class_come_with_its_declaration_not_its_top(counter):
    """A Java class with a long nested builder: the retrieval pointed at a setter of
    the builder and at a method of the class. The builder (too big to show) is
    not shown from its top at the cost of the rest: its declaration comes with the
    setter, and the other member still gets its lines."""
    lines = ["public final class Format {", "", "    /**", "     * Builds formats: a Builder.", "     */",
             "    public static class Builder {"]
    for i in range(60):
        lines += [f"        private int field{i} = {i};"]
    setter = len(lines) + 1
    lines += ["        public Builder setTrim(final boolean trim) {", "            this.trim = trim;",
              "            return this;", "        }", "    }", ""]
    builder_end = len(lines) - 1
    quote = len(lines) + 1
    lines += ["    private void printWithQuotes(final Object value) {"]
    lines += [f"        out.append(quoteChar, {i});" for i in range(30)] + ["    }", "}"]
    fmt = obj("src/Format.java", "Format", "\n".join(lines), kind="class",
              children=((3, builder_end, f"{REPO}:src/Format.java:Format.Builder"),
                        (quote, quote + 31, f"{REPO}:src/Format.java:Format.printWithQuotes(Object)")))
    r = render_for_agent(fmt, frozenset({"trim", "quote"}), 260, counter,
                         focus=[(3, builder_end), (setter, setter + 3), (quote, quote + 31)])
    assert r.clipped and r.tokens <= 260
    assert "public static class Builder {" in r.text and "public Builder setTrim(" in r.text
    assert "private void printWithQuotes(" in r.text
    assert "field0" not in r.text  # not the builder from its top
    assert "a Builder." not in r.text  # its Javadoc names it, but is not where it is declared


# -- ranking for the question ----------------------------------------------------------

def test_tests_come_after_code_unless_asked_for(counter):
    code = small(1)
    t = obj("tests/test_core.py", "test_helper", "def test_helper():\n    assert helper_1(1) == 2\n",
            kind="test")
    views = [sv(t, 0.9), sv(code, 0.5)]
    auto = run("helper result", views, [code, t], counter=counter, k=1).record
    assert [s.key for s in auto.slots] == [code.key, t.key]
    asked = run("the test of helper", views, [code, t], counter=counter, k=1).record
    assert [s.key for s in asked.slots] == [t.key, code.key]
    included = run("helper result", views, [code, t], FillPolicy(tests="include"), counter=counter, k=1).record
    assert included.slots[0].key == t.key
    excluded = run("helper result", views, [code, t], FillPolicy(tests="exclude"), counter=counter).record
    assert [s.key for s in excluded.slots] == [code.key]


def test_a_test_view_supports_its_object_without_lifting_it(counter):
    a, b = small(1), small(2)
    views = [sv(a, 0.9, "test", text="def test_one():\n    helper_1(1)", path="tests/test_x.py", start=1),
             sv(a, 0.3), sv(b, 0.5)]
    rec = run("helper", views, [a, b], counter=counter).record
    assert [s.key for s in rec.slots] == [b.key, a.key]


def test_a_name_the_query_spells_comes_first(counter):
    objs = [obj(f"src/{n}.java", f"{n}.hashCode", f"public int hashCode() {{\n  return {i};\n}}", start=1,
                kind="method") for i, n in enumerate(["JsonArray", "JsonObject", "JsonNull", "JsonPrimitive"])]
    views = [sv(o, 0.9 - i / 10) for i, o in enumerate(objs)]
    rec = run("fix JsonPrimitive.hashCode for big numbers", views, objs, counter=counter).record
    assert rec.slots[0].key == objs[3].key and "named by the query" in rec.slots[0].reason
    assert named_in_query("call send_request then parseHeader(x)")[1] >= {"send_request", "parseheader"}
    assert named_in_query("where are redirects followed") == (frozenset(), frozenset())


def test_test_paths():
    assert is_test_path("tests/test_api.py") and is_test_path("src/test/java/a/FooTest.java")
    assert is_test_path("pkg/conftest.py") and not is_test_path("src/pkg/contest.py")
    assert not is_test_path("src/main/java/a/Tester.java")


# -- rendering --------------------------------------------------------------------------

LONG = '''def load(path, *, strict=False):
    """Read a config file.

    Every key is checked.
    """
    data = read_file(path,
                     encoding="utf-8",
                     errors="strict")
    result = {}
    for key, value in parse_pairs(data):
        result[key] = convert(value,
                              strict=strict)
    if strict and not result:
        raise ValueError(
            "empty config")
    return validate(result)
'''


def test_clipped_windows_start_and_end_on_statement_boundaries(counter):
    o = obj("pkg/cfg.py", "load", LONG, start=20)
    starts = statement_starts(o.lines)
    for budget in range(30, 140, 4):
        r = render_for_agent(o, frozenset({"convert", "strict"}), budget, counter)
        assert r.tokens <= budget
        for a, b in r.spans:
            assert starts[a - 20], (budget, a)
            assert b - 20 == len(o.lines) - 1 or starts[b - 20 + 1], (budget, b)


def test_blocks_follow_brackets_strings_and_continuations():
    src = ["x = f(1,", "      2)", 's = """a', 'b"""', "y = a + \\", "    b", "z = 1"]
    assert blocks(src) == [(0, 1), (2, 3), (4, 5), (6, 6)]


def test_line_numbers_can_be_turned_off(counter):
    o = obj("pkg/cfg.py", "load", LONG, start=20)
    on = render_for_agent(o, frozenset(), 10_000, counter)
    off = render_for_agent(o, frozenset(), 10_000, counter, line_numbers=False)
    assert "\n20 def load(" in on.text and "\ndef load(" in off.text
    assert on.spans == off.spans == ((20, 35),)


def test_a_call_site_that_won_the_slot_is_shown(counter):
    callee = small(3)
    call = sv(callee, 0.9, "call_site", text="    cfg = load(p)\n    total = helper_3(cfg)\n    return total",
              path="pkg/app.py", start=40)
    result = run("total", [call], [callee], counter=counter)
    assert "--- called from pkg/app.py:40-42" in result.text and "41     total = helper_3(cfg)" in result.text
    assert "def helper_3" in result.text


def test_internal_suffixes_never_reach_the_text(counter):
    setter = obj("pkg/m.py", "Model.name#setter", "def name(self, v):\n    self._name = v", kind="method")
    text = run("name", [sv(setter, 1.0)], [setter], counter=counter).text
    assert "#setter" not in text and "Model.name" in text
    assert display_identifier("helper#2") == "helper"


def test_an_object_known_only_by_a_test_of_it_counts_at_half(counter):
    a, b = small(1), small(2)
    views = [sv(a, 0.9, "test", text="def test_one():\n    helper_1(1)", path="tests/test_x.py", start=1),
             sv(b, 0.5)]
    rec = run("helper", views, [a, b], counter=counter).record
    assert [s.key for s in rec.slots] == [b.key, a.key]
    assert rec.slots[1].score == 0.45


def test_a_block_too_big_for_the_share_shows_whole_lines_around_the_anchor(counter):
    lines = ["TABLE = ["] + [f"    ({i}, 'value_{i}', {i * i})," for i in range(300)] + ["]"]
    o = obj("pkg/table.py", "TABLE", "\n".join(lines), kind="")
    assert len(blocks(o.lines)) == 1
    for budget in (40, 150, 600):
        r = render_for_agent(o, frozenset({"value_150"}), budget, counter)
        assert 0 < r.tokens <= budget and len(r.spans) == 1
        a, z = r.spans[0]
        assert a <= 152 <= z  # line 152 holds value_150
        head, shown = parse(r.text)
        assert sorted(shown) == list(range(a, z + 1))
        assert all(o.lines[n - 1] == text for n, text in shown.items())


# -- the outline and containers' definition lines ---------------------------------------

def _big(i: int) -> ObjectText:
    return obj("pkg/big.py", f"f{i}", "\n".join([f"@cached", f"def f{i}(a, b):"]
                                                + [f"    x_{j} = compute({j}, {i})" for j in range(60)]),
               start=100 * i + 1)


def test_the_outline_shows_the_next_objects_definition_lines_in_the_reserved_share(counter):
    objects = [_big(i) for i in range(30)]
    views = [sv(o, 1.0 - i / 40) for i, o in enumerate(objects)]
    budget = 8192  # the core's five Eq. 4 shares leave room to fill
    rec = run("compute", views, objects, counter=counter, budget=budget,
              policy=FillPolicy(outline=0.2, outer_lines=False)).record
    roles = [s.role for s in rec.slots]
    assert "outline" in roles and roles.index("outline") >= 5
    assert roles[roles.index("outline"):] == ["outline"] * roles.count("outline")  # the tail, in rank order
    filled = sum(s.tokens for s in rec.slots if s.role != "outline")
    assert filled <= budget - int(0.2 * budget) and rec.tokens <= budget
    for s in rec.slots:
        if s.role != "outline":
            continue
        o = next(o for o in objects if o.key == s.key)
        assert s.spans == ((o.start_line + 1, o.start_line + 1),)  # past the decorator: the def line
    alloc = run("compute", views, objects, counter=counter, budget=budget, policy=FillPolicy(outline=0.2, outer_lines=False))
    part = alloc.parts[roles.index("outline")]
    head, shown = parse(part)
    line = rec.slots[roles.index("outline")].spans[0][0]
    assert head["spans"] == str(line) and list(shown) == [line] and shown[line].startswith("def f")
    assert counter.count(alloc.text) == alloc.record.tokens
    # without the outline the same budget is filled with whole objects only
    plain = run("compute", views, objects, counter=counter, budget=budget, policy=PLAIN).record
    assert "outline" not in [s.role for s in plain.slots]


def test_at_a_small_budget_the_agent_first_sees_where_the_answer_may_be(counter):
    """At B=500 the core leaves the outline its floor, and the outline shows files
    not shown yet first: more files reach the agent than whole objects would bring."""
    objects = [obj(f"pkg/m{i // 2}.py", f"f{i}", "\n".join([f"def f{i}(a, b):"]
                                                         + [f"    x_{j} = compute({j}, {i})" for j in range(40)]),
                   start=100 * (i % 2) + 1) for i in range(20)]
    views = [sv(o, 1.0 - i / 40) for i, o in enumerate(objects)]

    def files(policy: FillPolicy) -> tuple[int, int]:
        rec = run("compute", views, objects, counter=counter, budget=500, policy=policy).record
        assert rec.tokens <= 500
        whole = sum(s.tokens for s in rec.slots if s.role != "outline")
        assert policy.outline_floor == 0 or whole <= 500 - min(policy.outline_floor, 200)
        return len({s.path for s in rec.slots if s.spans}), len([s for s in rec.slots if s.role == "outline"])

    floor_files, floor_lines = files(FillPolicy(outer_lines=False))
    plain_files, _ = files(FillPolicy(outer_lines=False, outline_floor=0))
    assert floor_files >= plain_files + 3 and floor_lines >= 4
    # at 4K the outline keeps its share of B, as before
    big = run("compute", views, objects, counter=counter, budget=4096, policy=FillPolicy(outer_lines=False)).record
    again = run("compute", views, objects, counter=counter, budget=4096,
                policy=FillPolicy(outer_lines=False, outline_floor=0)).record
    assert [s.key for s in big.slots] == [s.key for s in again.slots]


def test_at_any_budget_the_outline_first_shows_files_not_shown_yet(counter):
    """At 4K the filling leaves ``new_files`` tokens: the outline's first lines are
    the best object of each file not shown yet, not more of the first file."""
    objects = [obj("pkg/big.py", f"f{i}", "\n".join([f"def f{i}(a, b):"] + [f"    x_{j} = compute({j}, {i})"
                                                                          for j in range(15)]), start=20 * i + 1)
               for i in range(40)] + [small(i, f"pkg/other_{i}.py") for i in range(6)]
    views = [sv(o, 1.0 - i / 50) for i, o in enumerate(objects)]

    def record(new_files: int):
        return run("compute", views, objects, counter=counter, budget=4096,
                   policy=FillPolicy(outer_lines=False, new_files=new_files)).record

    with_files, without = record(200), record(0)
    assert {s.path for s in without.slots if s.spans} == {"pkg/big.py"}
    others = [s for s in with_files.slots if s.path != "pkg/big.py"]
    assert len(others) == 6 and all(s.role == "outline" for s in others)
    assert with_files.tokens <= 4096
    # the core's shares are the same: the block comes out of the filling
    core = [(s.key, s.tokens) for s in with_files.slots if s.role in ("core", "companion")]
    assert core and core == [(s.key, s.tokens) for s in without.slots if s.role in ("core", "companion")]


def test_a_definition_line_is_code_not_the_javadoc_that_names_it(counter):
    m = obj("src/A.java", "A.parse(String)", "    /**\n     * Like parse(), but lenient.\n     */\n"
            "    @Override\n    public int parse(final String s) {\n        return 1;\n    }", start=20,
            kind="method")
    r = outline_rendering(m, counter, True)
    assert r is not None and r.spans == ((24, 24),) and "public int parse(" in r.text


def test_a_member_shows_the_definition_line_of_its_retrieved_class(counter):
    cls = obj("pkg/a.py", "Parser", "class Parser:\n    x = 1\n\n    def parse(self):\n        return 2\n"
              "\n    def peek(self):\n        return 3", start=10, kind="class")
    member = obj("pkg/a.py", "Parser.parse", "    def parse(self):\n        return 2", start=13,
                 kind="method")
    views = [sv(member, 2.0), sv(cls, 1.0, "signature", text="class Parser:")]
    alloc = run("parse", views, [cls, member], counter=counter, policy=FillPolicy(outer_lines=True))
    rec = alloc.record
    assert [s.key for s in rec.slots] == [member.key]  # the class takes no slot of its own
    assert rec.slots[0].spans == ((10, 10), (13, 14))
    head, shown = parse(alloc.parts[0])
    assert head["spans"] == "10,13-14" and shown == {10: "class Parser:", 13: "    def parse(self):",
                                                     14: "        return 2"}
    assert "\n⋮\n" in alloc.parts[0] and counter.count(alloc.text) == rec.tokens
    off = run("parse", views, [cls, member], counter=counter, policy=PLAIN).record
    assert off.slots[0].spans == ((13, 14),)


def test_a_member_shows_every_retrieved_container_line_above_it_but_never_a_file_line(counter):
    """Containers far up the file (multi-digit line numbers the descriptor names too):
    the member fitting whole shows each container's definition line; the file
    object, which holds them all, has none to show."""
    src = (['"""The module."""'] + ["x = 0"] * 98 + ["class Outer:"] + ["    a = 1"] * 149
           + ["    class Inner:"] + ["        b = 2"] * 49 + ["        def parse(self, text):"]
           + [f"            text = text.replace('{i}', '[{i}]')" for i in range(9)] + ["            return text"]
           + ["        c = 3"] * 9)
    def part(first: int, last: int) -> str:
        return "\n".join(src[first - 1:last])
    module = obj("pkg/a.py", "pkg/a.py", part(1, len(src)), start=1, kind="file")
    outer = obj("pkg/a.py", "Outer", part(100, len(src)), start=100, kind="class")
    inner = obj("pkg/a.py", "Outer.Inner", part(250, len(src)), start=250, kind="class")
    member = obj("pkg/a.py", "Outer.Inner.parse", part(300, 310), start=300, kind="method")
    views = [sv(member, 2.0), sv(outer, 1.0, "signature", text="class Outer:"),
             sv(inner, 0.9, "signature", text="    class Inner:"), sv(module, 0.8, "docstring", text="The module.")]
    alloc = run("parse", views, [module, outer, inner, member], counter=counter, budget=4096,
                policy=FillPolicy(outer_lines=True, outline=0.0))
    slot = alloc.record.slots[0]
    assert slot.key == member.key and not slot.clipped
    assert slot.spans == ((100, 100), (250, 250), (300, 310))
    head, shown = parse(alloc.parts[0])
    assert head["spans"] == "100,250,300-310" and shown[100] == "class Outer:" and 1 not in shown
    assert counter.count(alloc.text) == alloc.record.tokens


_LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                max_size=30)


@given(lines=st.lists(_LINE, min_size=1, max_size=25), data=st.data(), start=st.integers(1, 200_000),
       signature=st.sampled_from(["", "def f(x):", "class  A( B ) :"]), call=st.booleans())
def test_the_summed_token_count_is_the_exact_count_of_the_text(counter, lines, data, start, signature, call):
    """Windows grow by summing cached per-line counts (agent_render._Builder.tokens): with
    line numbers that sum must be the exact count of the text the agent receives."""
    from vitalrag.allocate.agent_render import CallSite, _Builder

    o = ObjectText(f"{REPO}:pkg/x.py:f", "pkg/x.py", "f", signature, start, tuple(lines), f"{REPO}:pkg/x.py")
    site = CallSite("pkg/y.py", 7, ("    f(1)", "", "  return  ")) if call else None
    b = _Builder(o, counter, True, site)
    shown = data.draw(st.sets(st.integers(0, len(lines) - 1)))
    assert b.tokens(shown) == counter.count(b.text(shown))
    plain = _Builder(o, counter, False, site)
    for i in range(len(lines)):  # what _lines_around grows by, with numbers and without
        assert b.line_tokens(i) == counter.count(b.line(i))
        assert plain.line_tokens(i) == counter.count(plain.line(i))
