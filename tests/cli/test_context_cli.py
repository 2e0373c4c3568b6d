"""``vitalrag context`` and ``vitalrag explain``: text, JSON record, tables, HTML, clean errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.allocate import AllocationRecord, policy_names
from vitalrag.cli import context_commands, main
from vitalrag.context import ContextSettings, context
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.rank import POOL_FILES
from vitalrag.tokens import get_counter

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
QUERY = "run the engine and prepare its setup"

if "context" not in main.commands:  # until vitalrag/cli/__init__.py registers them
    context_commands.register(main)


@pytest.fixture(scope="module")
def store(tmp_path_factory, packaged_model) -> str:
    """Indexed with the default model, as a user's index is (the session's
    ``packaged_model`` is loaded already, so the CLI's embedder reuses it)."""
    folder = tmp_path_factory.mktemp("cli-ctx") / "idx"
    result = CliRunner().invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(folder),
                                       "--name", "pyr", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == packaged_model.name
    return str(folder)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_context_prints_the_rendered_context(runner, store):
    result = runner.invoke(main, ["context", QUERY, "--store", store, "--budget", "300"])
    assert result.exit_code == 0, result.output
    assert result.stdout == context(QUERY, ContextSettings(budget=300), index=store).text
    assert result.stdout.startswith("--- ") and result.stderr == ""


@pytest.mark.parametrize("policy", policy_names())
def test_every_policy_from_the_cli(runner, store, policy):
    result = runner.invoke(main, ["context", QUERY, "--store", store, "--policy", policy,
                                  "--budget", "512", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["policy"] == policy and data["tokens"] <= 512
    assert 1 <= len(data["slots"]) and (policy == "vital-fill" or len(data["slots"]) <= 5)


def test_json_record_round_trips(runner, store):
    args = ["context", QUERY, "--store", store, "--file", "pkg/core.py", "--line", "17",
            "--k", "3", "--pool", "20", "--budget", "400", "--retriever", "fused", "--policy", "vital",
            "--json"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    record = AllocationRecord.from_dict(data)
    assert record.to_dict() == data
    assert record == context(Query.of(QUERY, "pkg/core.py", 17),
                             ContextSettings(k=3, pool=20, budget=400, policy="vital"), index=store).record
    assert 20 <= len(record.views) <= 20 + POOL_FILES and len(record.slots) <= 3


@pytest.mark.parametrize("budget", ["60", "256", "4096"])
def test_budget_is_respected(runner, store, budget):
    text = runner.invoke(main, ["context", QUERY, "--store", store, "--budget", budget]).stdout
    assert get_counter().count(text) <= int(budget)


def test_explain_shows_slots_and_merged_views(runner, store):
    result = runner.invoke(main, ["explain", QUERY, "--store", store, "--policy", "vital"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    record = context(QUERY, ContextSettings(policy="vital"), index=store).record
    assert f"query: {QUERY}" in out and "policy: vital" in out
    assert "selected objects (5)" in out and f"candidate views ({len(record.views)})" in out
    for slot in record.slots:
        assert slot.object_key in out
    assert re.search(r"merged into slot \d", out)
    assert "dropped" in out and "companion" in out
    assert "\x1b[" not in out  # plain when not a terminal



def test_explain_fits_the_width_asked_for_without_squeezing_the_reasons(runner, store):
    """Piped output is 200 columns wide unless COLUMNS says otherwise; the tables then
    fold ids and reasons into that width rather than printing past it or cutting a
    reason into a few letters a line."""
    result = runner.invoke(main, ["explain", QUERY, "--store", store, "--policy", "vital"],
                           env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    # the reasons wrap at words: none of the slots' reasons' words is cut, nor the views'
    words = {w for s in context(QUERY, ContextSettings(policy="vital"), index=store).record.slots
             for w in s.reason.split() if w.isalpha() and len(w) <= 12}
    assert {"ranked", "object", "shares"} <= words
    assert all(w in result.stdout for w in words | {"represents", "merged into"})
    wide = runner.invoke(main, ["explain", QUERY, "--store", store, "--policy", "vital"]).stdout
    assert max(len(line) for line in wide.splitlines()) == 200

def test_explain_writes_a_self_contained_html_report(runner, store, tmp_path):
    out = tmp_path / "report.html"
    result = runner.invoke(main, ["explain", QUERY, "--store", store, "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert str(out) in result.stderr and "selected objects" in result.stdout
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"https?://", page) and "<script" not in page
    record = context(QUERY, index=store).record
    for slot in record.slots:
        assert slot.object_key in page
        assert f'<svg class="bar" data-slot="{slot.slot}"' in page


def test_explain_html_to_an_unwritable_place(runner, store, tmp_path):
    target = tmp_path / "no-such-dir" / "r.html"
    result = runner.invoke(main, ["explain", QUERY, "--store", store, "--html", str(target)])
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and str(target) in result.stderr


@pytest.mark.parametrize("command", ["context", "explain"])
@pytest.mark.parametrize("args,message", [
    (["", "--store", "{store}"], "empty query"),
    (["  ", "--store", "{store}"], "empty query"),
    ([QUERY, "--store", "{store}", "--policy", "nope"], "vital"),
    ([QUERY, "--store", "{store}", "--budget", "0"], "--budget"),
    ([QUERY, "--store", "{store}", "--k", "0"], "--k"),
    ([QUERY, "--store", "{store}", "--line", "3"], "--line needs --file"),
    ([QUERY, "--store", "{store}", "--file", "nowhere.py"], "not in the index"),
    ([QUERY, "--store", "{missing}"], "no index"),
])
def test_bad_input_is_one_clean_error(runner, store, tmp_path, command, args, message):
    args = [a.format(store=store, missing=str(tmp_path / "missing")) for a in args]
    result = runner.invoke(main, [command, *args])
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.stdout == "" and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error:") and message in last


def test_unknown_policy_lists_every_policy(runner, store):
    result = runner.invoke(main, ["context", QUERY, "--store", store, "--policy", "vital-rag"])
    for name in policy_names():
        assert name in result.stderr


def test_help(runner):
    for command in ("context", "explain"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "--policy" in result.stdout and "--budget" in result.stdout
