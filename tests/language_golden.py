"""The golden checks every language's fixture repository passes: a test module
(``tests/ingest/test_*_languages.py``) holds ``GOLDEN`` (per fixture under
``tests/fixtures/repos``: its objects, CONTAINS below the repository node,
IMPORTS and CALLS edges, unresolved references, the file that does not parse,
and whether it has tests), makes its ``indexed`` fixture with ``indexed_fixture``
and imports the ``test_*`` functions here, which pytest then runs in it. Ids are
written without the ``fx:`` repository prefix."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.lang import REGISTRY, language_for_path

FIXTURES = Path(__file__).parent / "fixtures" / "repos"


def short(node_id: str) -> str:
    return node_id.removeprefix("fx:")


def indexed_fixture(golden: Mapping[str, dict], content: str = "all"):  # noqa: ANN201 - a pytest fixture
    """A module-scoped fixture: each fixture repository of ``golden`` indexed
    (``content``: what ``index --content`` takes), as (its golden entry, store, report)."""

    @pytest.fixture(scope="module", params=sorted(golden))
    def indexed(request, tmp_path_factory):  # noqa: ANN001, ANN202
        name = request.param
        store = MemoryStore(tmp_path_factory.mktemp(name) / "idx")
        report = index_repository(FIXTURES / name, store, name="fx", workers=1, content=content)
        return golden[name], store, report

    return indexed


def test_objects_match_golden(indexed) -> None:  # noqa: ANN001
    golden, store, _ = indexed
    found = {(o.kind, short(o.id)) for o in store.find_objects(repo="fx") if o.kind != "repository"}
    assert found == golden["objects"]


@pytest.mark.parametrize("kind", ["CONTAINS", "IMPORTS", "CALLS"])
def test_edges_match_golden(indexed, kind: str) -> None:  # noqa: ANN001
    golden, store, _ = indexed
    found = {(short(e.source), short(e.target)) for e in store.find_edges(repo="fx", kind=kind)
             if e.source != "fx"}
    assert found == golden[kind]


def test_repository_contains_every_top_file_or_folder(indexed) -> None:  # noqa: ANN001
    _, store, _ = indexed
    contained = {e.target for e in store.find_edges(repo="fx", kind="CONTAINS")}
    assert {o.id for o in store.find_objects(repo="fx") if o.kind in ("file", "module")} <= contained


def test_unresolved_match_golden(indexed) -> None:  # noqa: ANN001
    golden, store, _ = indexed
    found = {(short(u.source), u.kind, u.name, u.reason) for u in store.unresolved("fx")}
    assert found == golden["unresolved"]


def test_tests_edges_follow_calls_from_tests(indexed) -> None:  # noqa: ANN001
    golden, store, _ = indexed
    kinds = {o.id: o.kind for o in store.find_objects(repo="fx")}
    expected = {(e.source, e.target) for e in store.find_edges(repo="fx", kind="CALLS")
                if kinds[e.source] == "test" and kinds[e.target] != "test"}
    assert {(e.source, e.target) for e in store.find_edges(repo="fx", kind="TESTS")} == expected
    if golden.get("tests", True):
        assert expected


def test_broken_file_is_partly_indexed_and_reported(indexed) -> None:  # noqa: ANN001
    golden, store, report = indexed
    broken = golden["broken"]
    assert any(s.path == broken and "syntax" in s.reason for s in report.skipped)
    assert store.find_objects(repo="fx", path=broken, kind="file")
    assert [o for o in store.find_objects(repo="fx", path=broken) if o.kind != "file"]


def test_every_definition_has_lines_hash_and_language(indexed) -> None:  # noqa: ANN001
    _, store, _ = indexed
    for o in store.find_objects(repo="fx"):
        if o.kind in ("repository", "module"):
            continue
        assert 1 <= o.start_line <= o.end_line, o.id
        assert o.content_hash and o.language, o.id


def facts(path: str, text: str) -> FileFacts:
    """One file's facts, extracted by the language its path names."""
    language = language_for_path(path)
    assert language is not None, path
    return REGISTRY[language].extract("r", path, text)


def by_qualname(file_facts: FileFacts) -> dict:
    return {o.qualname: o for o in file_facts.objects}
