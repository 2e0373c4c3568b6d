"""RepoBench v1.1 rows, written here by hand in the dataset's schema, as tasks."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vitalrag.allocate import allocate
from vitalrag.cli import eval_commands, main
from vitalrag.errors import InputError
from vitalrag.eval.pool import bm25_rank
from vitalrag.eval.repobench import import_files, import_rows, lay_out, task_source, task_views
from vitalrag.eval.run import RunPlan, run_tasks
from vitalrag.eval.tasks import read_tasks, write_tasks

if "eval" not in main.commands:
    eval_commands.register(main)

HELPER = '''def parse_header(line):
    """Split one header line into its name and value."""
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()
'''
BIG = "class Session:\n" + "".join(f"    def step_{i}(self, x):\n        return x + {i}\n\n" for i in range(60))
OTHER = "def format_date(ts):\n    return ts.isoformat()\n"
JAVA_GOLD = """/**
 * A parsed record.
 */
public final class Record {
    private final String[] values;

    public String get(int i) {
        return values[i];
    }
}"""


def _py_row(**over):
    row = {
        "repo_name": "acme/webkit",
        "file_path": "webkit/client.py",
        "context": [
            {"identifier": "Session", "path": "webkit/sessions.py", "snippet": BIG},
            {"identifier": "parse_header", "path": "webkit/./utils.py", "snippet": HELPER},
            {"identifier": "format_date", "path": "webkit/utils.py", "snippet": OTHER},
        ],
        "import_statement": "from webkit.utils import parse_header, format_date\nfrom webkit.sessions import Session",
        "token_num": 512,
        "cropped_code": "def read_headers(lines):\n    out = {}\n    for line in lines:",
        "all_code": "...",
        "next_line": "        name, value = parse_header(line)",
        "gold_snippet_index": 1,
        "created_at": "2023-08-01T00:00:00",
        "level": "2k",
    }
    row.update(over)
    return row


def _java_row():
    return {
        "repo_name": "acme/csvkit", "file_path": "src/main/java/acme/Reader.java",
        "context": [{"identifier": "Record", "path": "src/main/java/acme/Record.java", "snippet": JAVA_GOLD},
                    {"identifier": "Lexer", "path": "src/main/java/acme/Lexer.java",
                     "snippet": "final class Lexer {\n    int next() { return 0; }\n}"}],
        "import_statement": "import acme.Record;\nimport acme.Lexer;",
        "cropped_code": "public class Reader {\n    Record read(Lexer lexer) {",
        "next_line": "        return new Record(lexer.next());",
        "gold_snippet_index": 0, "level": "4k",
    }


def test_a_row_becomes_a_task_keyed_by_the_papers_adapter():
    (task,), report = import_rows([_py_row()])
    assert report.to_json() == {"rows": 1, "tasks": 1, "by_language": {"python": 1}, "dropped": {}}
    # normalised path, casefolded identifier, repository first
    assert task.gold_id == "acme/webkit:webkit/utils.py::parse_header"
    assert task.candidates == ("acme/webkit:webkit/sessions.py::session", task.gold_id,
                               "acme/webkit:webkit/utils.py::format_date")
    assert task.language == "python" and task.difficulty == "2k" and task.setting == "repobench"
    assert task.query.startswith("from webkit.utils import") and task.query.endswith("for line in lines:")
    # the two snippets of utils.py are laid out one blank line apart
    layout = lay_out(task.repo, task.snippets)
    assert (task.gold.path, task.gold.start, task.gold.end) == ("webkit/utils.py", 1, 4)
    assert layout.lines[2] == (6, 7) and layout.files["webkit/utils.py"][4] == ""


def test_each_snippet_gives_the_views_a_pipeline_would():
    (task,), _ = import_rows([_py_row()])
    views = task_views(task)
    kinds = {}
    for v in views:
        kinds.setdefault(v.identifier, []).append(v.kind)
    assert kinds["parse_header"] == ["body", "signature", "docstring"]
    assert kinds["format_date"] == ["body", "signature"]
    big = kinds["Session"]  # 181 lines: slices and windows too
    assert big[0] == "body" and "slice" in big and "window" in big and big[-1] == "signature"
    assert all(not v.object_id for v in views)  # external: keyed by path and identifier
    for v in views:
        if v.kind in ("body", "slice", "window"):
            lines = lay_out(task.repo, task.snippets).files[v.path]
            assert v.text == "\n".join(lines[v.start_line - 1:v.end_line])


def test_java_row_and_its_javadoc():
    (task,), _ = import_rows([_java_row()])
    assert task.language == "java"
    views = {v.kind: v for v in task_views(task) if v.identifier == "Record"}
    assert views["signature"].text == "public final class Record {"
    assert views["docstring"].text.startswith("/**") and views["docstring"].end_line == 3


def test_vital_keeps_the_gold_snippet_whole_where_a_baseline_pastes_its_signature():
    (task,), _ = import_rows([_py_row()])
    layout = lay_out(task.repo, task.snippets)
    pool = bm25_rank(task.query, task_views(task, layout), 100)
    source = task_source(task, layout)
    vital = allocate(task.query, pool, policy="vital", source=source)
    slot = vital.record.slot_of(task.gold_id)
    assert slot is not None and slot.spans == ((1, 4),) and HELPER in vital.text


def test_screening_counts_duplicates_invalid_labels_and_leaks():
    rows = [_py_row(), _py_row(), _py_row(gold_snippet_index=7), _py_row(gold_snippet_index=None),
            _py_row(cropped_code="x = parse_header(line)\n        name, value = parse_header(line)"),
            _java_row()]
    tasks, report = import_rows(rows)
    assert len(tasks) == 2
    assert report.to_json()["dropped"] == {"duplicate-row": 1, "invalid-label": 2, "leak": 1}


def test_not_a_repobench_row_is_an_input_error():
    with pytest.raises(InputError, match="lacks"):
        import_rows([{"repo_name": "x"}])


def test_tasks_round_trip_and_run_with_the_fixed_pool(tmp_path):
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in (_py_row(), _java_row())))
    tasks, _ = import_files([src])
    write_tasks(tasks, tmp_path / "tasks.jsonl")
    back = read_tasks(tmp_path / "tasks.jsonl")
    assert back == tasks
    summary = run_tasks(back, RunPlan(policies=("vital", "entity-first-4+1")), tmp_path / "run")
    vital = next(r for r in summary["results"] if r["policy"] == "vital" and r["group"] == "all")
    assert vital["n"] == 2 and vital["r5"]["mean"] == 1.0 and vital["rb"]["mean"] == 1.0
    assert summary["run"]["span_text_mismatches"] == 0
    with pytest.raises(InputError, match="--pool fixed"):
        run_tasks(back, RunPlan(policies=("vital",), pool="retrieved"), tmp_path / "r2")


def test_parquet_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([_py_row(), _java_row()]), tmp_path / "rows.parquet")
    tasks, report = import_files([tmp_path / "rows.parquet"])
    assert report.tasks == 2 and tasks[0].gold_id == "acme/webkit:webkit/utils.py::parse_header"


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    (tmp_path / "rows.parquet").write_bytes(b"PAR1")
    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InputError, match=r"vitalrag\[repobench\]"):
        import_files([tmp_path / "rows.parquet"])


def test_import_repobench_command(tmp_path, monkeypatch):
    monkeypatch.setenv("VITALRAG_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in (_py_row(), _py_row(), _java_row())))
    runner = CliRunner()
    result = runner.invoke(main, ["eval", "import-repobench", str(src), "-o", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 0, result.output
    assert "3 rows: 2 tasks (java 1, python 1); dropped: duplicate-row 1" in result.stdout
    run = runner.invoke(main, ["eval", "run", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "run"),
                               "--policies", "vital,entity-first-4+1,no-rendering"])
    assert run.exit_code == 0, run.output
    missing = runner.invoke(main, ["eval", "import-repobench", str(tmp_path / "nope.jsonl"), "-o", "x"])
    assert missing.exit_code != 0 and "no RepoBench file" in missing.output
