"""The RepoBench task builder's rules, each on a fixture written to exercise it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vitalrag.eval.imports import java_code_lines, read_imports
from vitalrag.eval.tasks import (
    Task,
    build_query,
    build_tasks,
    difficulty,
    imported_names,
    read_tasks,
    write_tasks,
)
from vitalrag.errors import InputError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
PY = "eval_py"
JAVA = "eval_java"


def _by_id(tasks):
    return {t.id: t for t in tasks}


def test_python_build_report_counts_every_drop_and_skip(eval_tasks):
    _, tasks, report = eval_tasks(PY)
    assert report.to_json() == {
        "repo": PY, "files": 9, "tasks": 5,
        "by_setting": {"cross_file_first": 2, "cross_file_random": 3},
        "by_difficulty": {"easy": 2, "hard": 3},
        # orders.py: its first use line names Customer and make_item;
        # report_copy.py repeats report.py's first task; leaky.py's only later line repeats its first
        "dropped": {"duplicate": 1, "first-line-uses-several-names": 1, "leak": 1},
        # few.py imports 2 names, lazy.py 4 at module level (2 more inside a function)
        "skipped_files": {"fewer-than-5-candidates": 2, "no-repository-imports": 2, "no-source": 1},
        "skipped_lines": {"uses-several-names": 5},
    }
    assert len(tasks) == report.tasks


def test_first_setting_is_the_first_use_after_the_imports(eval_tasks):
    store, tasks, _ = eval_tasks(PY)
    first = _by_id(tasks)["eval_py:shop/report.py:8:cross_file_first"]
    assert first.next_line == "    amount = total(order)"
    assert first.used_name == "total"
    assert first.gold_id == "eval_py:shop/pricing.py:total"
    obj = store.get_objects([first.gold_id])[first.gold_id]
    # the gold is the whole definition, as the graph records its lines
    assert (first.gold.path, first.gold.start, first.gold.end) == (obj.path, obj.start_line, obj.end_line)
    assert (first.gold.start, first.gold.end) == (25, 26)  # def total(order): ... return sum(...)


def test_random_setting_is_a_later_single_name_line(eval_tasks):
    _, tasks, _ = eval_tasks(PY)
    first_lines = {t.path: t.line for t in tasks if t.setting == "cross_file_first"}
    for t in tasks:
        if t.setting == "cross_file_random" and t.path in first_lines:
            assert t.line > first_lines[t.path]


def test_a_line_using_two_imported_names_is_never_masked(eval_tasks):
    for name in (PY, JAVA):
        store, tasks, _ = eval_tasks(name)
        for t in tasks:
            imports = read_imports(t.language, store.source(f"{name}:{t.path}"))
            # only names bound to definitions of this repository count (java.util.List does not)
            imported = set(imported_names(store, name, t.path, imports).targets)
            assert imports.names_by_line[t.line] & imported == {t.used_name}
    _, tasks, _ = eval_tasks(PY)
    # orders.py line 11 uses Customer and make_item: no first task for that file
    assert not [t for t in tasks if t.path == "shop/orders.py" and t.setting == "cross_file_first"]


def test_imports_inside_functions_and_strings_do_not_count(eval_tasks):
    _, tasks, _ = eval_tasks(PY)
    assert not [t for t in tasks if t.path in ("shop/lazy.py", "shop/few.py")]
    orders = read_imports("python", (FIXTURES / "eval_py/shop/orders.py").read_text())
    # the comment and the string on lines 6-7 mention Item, Order and Customer
    assert 6 not in orders.names_by_line and "Customer" not in orders.names_by_line.get(7, set())


def test_java_same_package_classes_are_not_imports(eval_tasks):
    _, tasks, _ = eval_tasks(JAVA)
    app = _by_id(tasks)
    first = app["eval_java:com/acme/app/App.java:19:cross_file_first"]
    # line 18 uses Helper (same package, no import): it is neither a use nor a candidate
    assert first.next_line.strip() == "if (Strings.isBlank(name)) {"
    for t in tasks:
        assert not any("Helper" in c for c in t.candidates)
        assert t.line != 18 or t.path != "com/acme/app/App.java"
    assert len(first.candidates) == 5 and first.difficulty == "easy"


def test_java_comments_strings_and_javadoc_are_blanked():
    text = '/** see {@link Dates} */\nString s = "Maps"; // Numbers\nint n = Strings.x(\'a\');'
    code = java_code_lines(text)
    assert "Dates" not in code[0] and "Maps" not in code[1] and "Numbers" not in code[1]
    assert "Strings" in code[2] and "String s" in code[1]
    assert [len(c) for c in code] == [len(line) for line in text.split("\n")]  # columns kept


def test_overloaded_static_import_is_an_ambiguous_gold(eval_tasks):
    _, tasks, report = eval_tasks(JAVA)
    assert report.dropped["ambiguous-gold"] == 1
    statics = [t for t in tasks if t.path == "com/acme/app/Statics.java"]
    assert [t.setting for t in statics] == ["cross_file_random"]
    # the static import still yields one candidate for its name
    assert sum("Numbers.clamp" in c for c in statics[0].candidates) == 1


def test_no_task_leaks_its_masked_line_into_the_query(eval_tasks):
    for name in (PY, JAVA):
        _, tasks, _ = eval_tasks(name)
        assert tasks
        for t in tasks:
            assert t.next_line.strip() not in t.query
            assert t.next_line not in t.query.splitlines()


def test_query_is_import_lines_plus_context_lines():
    lines = [f"line{i}" for i in range(1, 101)]
    q = build_query(lines, [1, 2], 50, 30)
    assert q.splitlines() == ["line1", "line2"] + [f"line{i}" for i in range(20, 50)]
    assert build_query(lines, [1, 2], 4, 30).splitlines() == ["line1", "line2", "line3"]


def test_context_lines_option(eval_tasks):
    _, tasks, _ = eval_tasks(PY, context_lines=2)
    t = _by_id(tasks)["eval_py:shop/report.py:31:cross_file_random"]
    assert t.query.splitlines()[-2:] == ["", "def empty(customer):"]
    assert t.query.splitlines()[:2] == ["from shop.models import Customer, Item, Order, make_item, make_order",
                                        "from shop.pricing import Currency, discount, price_of, round_money, tax, total"]


def test_duplicates_are_dropped(eval_tasks):
    _, tasks, report = eval_tasks(PY)
    keys = [(t.query, t.next_line, t.gold_id) for t in tasks]
    assert len(keys) == len(set(keys))
    assert report.dropped["duplicate"] == 1
    assert not [t for t in tasks if t.path == "shop/report_copy.py" and t.setting == "cross_file_first"]


@pytest.mark.parametrize("n,label", [(5, "easy"), (9, "easy"), (10, "hard"), (25, "hard")])
def test_difficulty_labels(n, label):
    assert difficulty(n) == label


def test_labels_follow_candidate_counts(eval_tasks):
    _, tasks, _ = eval_tasks(PY)
    for t in tasks:
        assert len(t.candidates) >= 5 and t.gold_id in t.candidates
        assert t.difficulty == ("hard" if len(t.candidates) >= 10 else "easy")
    assert {t.path: t.difficulty for t in tasks}["shop/report.py"] == "hard"


def test_tasks_are_deterministic_for_a_seed(index_fixture):
    store, _ = index_fixture(PY)
    a, _ = build_tasks(store, PY, seed=7, random_per_file=2)
    b, _ = build_tasks(store, PY, seed=7, random_per_file=2)
    assert [t.to_dict() for t in a] == [t.to_dict() for t in b]
    lines = {s: sorted(t.line for t in build_tasks(store, PY, seed=s)[0] if t.setting == "cross_file_random")
             for s in range(6)}
    assert len({tuple(v) for v in lines.values()}) > 1  # the seed does choose the random line


def test_jsonl_round_trip_and_bad_lines(eval_tasks, tmp_path):
    _, tasks, _ = eval_tasks(JAVA)
    path = tmp_path / "t.jsonl"
    assert write_tasks(tasks, path) == len(tasks)
    assert read_tasks(path) == tasks
    path.write_text('{"id": 1}\n')
    with pytest.raises(InputError, match=re.escape("t.jsonl:1: not a task")):
        read_tasks(path)
    with pytest.raises(InputError, match="no task file"):
        read_tasks(tmp_path / "missing.jsonl")


def test_task_records_what_the_brief_asks():
    fields = set(Task.__dataclass_fields__)
    assert {"repo", "path", "line", "setting", "language", "query", "gold_id", "gold", "candidates",
            "difficulty"} <= fields


MODULE_IMPORTS = {
    "pkg/__init__.py": "from ._client import Client, helper\nfrom ._models import *\n",
    "pkg/_models.py": "class Response:\n    status = 200\n",
    "pkg/_client.py": "class Client:\n    def get(self):\n        return 1\n\n\ndef helper(x):\n    return x\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/mod.py": "def thing():\n    return 2\n",
    "user.py": ("import pkg\nimport pkg.sub.mod as m\nfrom pkg.sub import mod\n\n\ndef run():\n"
                "    c = pkg.Client()\n    y = m.thing()\n    z = mod.thing()\n    r = pkg.Response()\n"
                "    return pkg.helper(c)\n"),
}


def test_module_attribute_uses_are_repository_imports(tmp_path):
    # import httpx; httpx.Client(...): the package re-exports Client from a
    # private module, and the gold is the definition there
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    for rel, text in MODULE_IMPORTS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path / "src", store, name="mini", workers=1)
    tasks, _ = build_tasks(store, "mini", min_candidates=3, random_per_file=4)
    got = {t.line: (t.used_name, t.gold_id) for t in tasks}
    assert got == {7: ("pkg.Client", "mini:pkg/_client.py:Client"),
                   8: ("m.thing", "mini:pkg/sub/mod.py:thing"),
                   9: ("mod.thing", "mini:pkg/sub/mod.py:thing"),
                   10: ("pkg.Response", "mini:pkg/_models.py:Response"),  # through from ._models import *
                   11: ("pkg.helper", "mini:pkg/_client.py:helper")}
    assert set(tasks[0].candidates) == {"mini:pkg/_client.py:Client", "mini:pkg/_client.py:helper",
                                        "mini:pkg/sub/mod.py:thing", "mini:pkg/_models.py:Response"}
    imports = read_imports("python", MODULE_IMPORTS["user.py"])
    assert imports.dotted_by_line[7] == {"pkg.Client"} and "Client" not in imports.names_by_line[7]
