"""``context``: retrieval and allocation end to end over an indexed fixture repository.

The rendered context of a fixed query is checked against golden files in
``tests/allocate/golden/``; regenerate them with ``VITALRAG_UPDATE_GOLDEN=1``
after a deliberate change, and read the diff before committing it.
"""

from __future__ import annotations

import difflib
import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vitalrag.allocate import AllocationRecord, policy_names
from vitalrag.context import DEFAULT_POOL, ContextSettings, context, context_from
from vitalrag.errors import InputError, StoreNotFound
from vitalrag.graph.memory import MemoryStore
from vitalrag.index import Index
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve.rank import POOL_FILES
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.rank import WEIGHTS
from vitalrag.tokens import get_counter

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
GOLDEN = Path(__file__).parent / "golden"
QUERY = "run the engine and prepare its setup"


def assert_golden(name: str, actual: str) -> None:
    """``actual`` equals the golden file ``name``, or fail with a unified diff."""
    path = GOLDEN / name
    if os.environ.get("VITALRAG_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"no golden file {path}; create it with VITALRAG_UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"golden/{name}", tofile="actual"))
        pytest.fail(f"rendered context differs from golden/{name} "
                    f"(VITALRAG_UPDATE_GOLDEN=1 regenerates it):\n{diff}", pytrace=False)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("ctx") / "idx"
    store = MemoryStore(folder)
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    RetrievalIndex.build(store, store.folder, embedder=HashingEmbedder())
    return str(folder)


@pytest.mark.parametrize("policy", policy_names())
def test_every_policy_end_to_end(store_dir, policy):
    result = context(QUERY, ContextSettings(policy=policy, budget=1024), index=store_dir)
    record = result.record
    assert record.policy == policy and record.query == QUERY
    # K caps the paper's policies; vital-fill keeps admitting objects while B lasts
    assert 1 <= len(record.slots) and (policy == "vital-fill" or len(record.slots) <= 5)
    assert record.params["retriever"] == "fused" and record.params["pool"] == DEFAULT_POOL == 100
    assert record.params["question"] == "prose" and record.params["weights"] == dict(WEIGHTS["prose"])
    assert result.text == "".join(result.parts)
    # the controls paste retrieved views as written; VITAL-RAG shows definitions after a descriptor
    verbatim = record.params["rendering"] == "verbatim"
    assert all(p.startswith("--- ") != verbatim for p in result.parts if p)
    assert get_counter().count(result.text) == record.tokens <= 1024


@pytest.mark.parametrize("budget", [40, 200, 700, 4096])
@pytest.mark.parametrize("policy", ["vital", "raw-surface", "no-quotient"])
def test_budget_is_respected_by_the_real_counter(store_dir, policy, budget):
    result = context(QUERY, ContextSettings(policy=policy, budget=budget, b_min=16), index=store_dir)
    assert get_counter().count(result.text) <= budget
    assert record_tokens(result.record) <= budget


def record_tokens(record: AllocationRecord) -> int:
    assert record.tokens == sum(s.tokens for s in record.slots)
    return record.tokens


def test_companion_is_a_same_file_peer_from_the_store(store_dir):
    record = context(QUERY, ContextSettings(policy="vital"), index=store_dir).record
    roles = [s.role for s in record.slots]
    assert roles[:4] == ["core"] * 4
    companion = record.slots[4]
    assert companion.role == "companion"
    assert companion.path in {s.path for s in record.slots[:4]}


def test_views_of_one_object_share_its_slot(store_dir):
    record = context(QUERY, ContextSettings(pool=50, policy="vital"), index=store_dir).record
    assert 50 <= len(record.views) <= 50 + POOL_FILES  # then the best object of further files
    merged = [v for v in record.views if v.status == "merged" and v.slot is not None]
    assert merged, "the fixture query has several views per selected object"
    for v in merged:
        assert record.slots[v.slot - 1].object_key == v.object_key
    assert len(set(record.objects)) == len(record.objects)


def test_record_round_trips_through_json(store_dir):
    record = context(Query.of(QUERY, "pkg/core.py", 17), ContextSettings(budget=512), index=store_dir).record
    assert record.params["file"] == "pkg/core.py" and record.params["line"] == 17
    assert AllocationRecord.from_dict(json.loads(record.to_json())) == record


def test_deterministic_and_same_over_an_open_retriever(store_dir):
    first = context(QUERY, ContextSettings(budget=600), index=store_dir)
    retriever = Index.open(store_dir).retriever()
    again = context_from(retriever, QUERY, ContextSettings(budget=600))
    assert again.text == first.text and again.record == first.record


@pytest.mark.parametrize("policy,budget", [("vital", 4096), ("vital", 100), ("raw-surface", 300)])
def test_rendered_context_matches_golden(store_dir, policy, budget):
    result = context(QUERY, ContextSettings(policy=policy, budget=budget), index=store_dir)
    assert_golden(f"context_{policy}_b{budget}.txt", result.text)


def test_anchor_file_and_line_reach_the_walk(store_dir):
    record = context(Query.of("helper", "pkg/core.py", 34), ContextSettings(retriever="walk", k=3),
                     index=store_dir).record
    assert record.slots and record.params["retriever"] == "walk"


@pytest.mark.parametrize("kwargs,message", [
    ({"query": ""}, "empty query"),
    ({"query": "   "}, "empty query"),
    ({"policy": "nope"}, "vital"),
    ({"budget": 0}, "budget"),
    ({"k": 0}, "k must"),
    ({"pool": 0}, "pool"),
    ({"retriever": "grep"}, "fused"),
    ({"line": 3}, "--file"),
])
def test_bad_input_is_rejected_before_the_index_is_opened(tmp_path, kwargs, message):
    args = {"query": QUERY, **kwargs}
    query, line = args.pop("query"), args.pop("line", None)
    with pytest.raises(InputError, match=message):
        context(Query.of(query, line=line), ContextSettings(**args), index=str(tmp_path / "missing"))


def test_unknown_policy_lists_the_valid_ones(store_dir):
    with pytest.raises(InputError) as info:
        context(QUERY, ContextSettings(policy="vital-rag"), index=store_dir)
    for name in policy_names():
        assert name in str(info.value)


def test_missing_index_is_a_store_error(tmp_path):
    with pytest.raises(StoreNotFound, match="vitalrag index"):
        context(QUERY, index=str(tmp_path / "missing"))


def test_file_not_in_the_index(store_dir):
    with pytest.raises(InputError, match="not in the index"):
        context(Query.of(QUERY, "nowhere.py"), index=store_dir)


def test_the_default_cap_is_the_policys_own(tmp_path):
    """``b_obj`` left out: vital-fill shows a function of about 1,500 tokens whole
    (its cap is 2,048), the paper's ``vital`` clips it at 1,024, and a cap the
    caller names holds for both."""
    repo = tmp_path / "repo"
    repo.mkdir()
    body = "\n".join(f"    total_{i} = accumulate(values, offset={i}, label='step {i}')" for i in range(90))
    (repo / "long.py").write_text(f"def accumulate_everything(values):\n{body}\n    return total_0\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(repo, store, name="r", workers=1)
    index, _ = RetrievalIndex.build(store, store.folder, embedder=HashingEmbedder())
    r = Retriever(store, index, HashingEmbedder())

    def slot(**kw):
        rec = context_from(r, "accumulate_everything", ContextSettings(budget=4096, **kw)).record
        return next(s for s in rec.slots if s.identifier.endswith("accumulate_everything"))

    whole = slot()
    assert 1024 < whole.d <= 2048 and not whole.clipped and whole.b == whole.d
    assert slot(b_obj=1024).clipped and slot(b_obj=1024).tokens <= 1024
    paper = slot(policy="vital")
    assert paper.clipped and paper.tokens <= 1024 and paper.d > 1024


def test_allocate_stays_below_retrieval_and_the_context_above_both():
    """Importing the paper's model loads neither the retrievers nor ``vitalrag.context``."""
    code = ("import sys, vitalrag.allocate; print(sorted(m for m in sys.modules "
            "if m.startswith(('vitalrag.retrieve', 'vitalrag.context', 'vitalrag.index'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_each_policy_takes_the_options_it_has_from_the_settings(store_dir):
    """``tests`` and ``line_numbers`` reach vital-fill and its cap is its own
    (2,048); the paper's policies have neither option and keep the paper's cap."""
    def run(**kw):
        return context(QUERY, ContextSettings(budget=8192, **kw), index=store_dir)

    numbered, plain = run(), run(line_numbers=False)
    assert numbered.record.params["b_obj"] == 2048 and plain.record.params["line_numbers"] is False
    assert re.search(r"^\d+ ", numbered.text, re.M) and not re.search(r"^\d+ ", plain.text, re.M)
    tests_in = {s.path for s in run(tests="include").record.slots if s.path.startswith("tests/")}
    assert tests_in and not any(s.path.startswith("tests/") for s in run(tests="exclude").record.slots)
    paper = run(policy="vital", tests="exclude", line_numbers=False)
    assert paper.record.params["b_obj"] == 1024 and paper.text == run(policy="vital").text
