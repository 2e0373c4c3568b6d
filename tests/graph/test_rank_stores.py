"""The ranking stage end to end over a real index, on both stores."""

from __future__ import annotations

from pathlib import Path

from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve import rank as rank_module
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query


def _repo(root: Path) -> Path:
    files = {
        "pkg/sessions.py": '"""Cookie-based sessions."""\n\n\nclass SessionInterface:\n'
                           '    """Opens and saves the session of a request."""\n\n'
                           '    def open_session(self, app, request):\n        return {}\n\n'
                           '    def save_session(self, app, session, response):\n        pass\n',
        "pkg/ctx.py": '"""The request context."""\n\n\nclass RequestContext:\n'
                      '    def push(self):\n        self.session = self.app.session_interface.open_session(self)\n\n'
                      '    def pop(self):\n        self.session = None\n\n'
                      '    def session_copy(self):\n        return dict(self.session)\n',
        "pkg/app.py": '"""The application."""\n\n\nclass App:\n    session_interface = None\n\n'
                      '    def run(self):\n        pass\n',
        "tests/test_sessions.py": 'def test_session_management():\n    session = {}\n    assert session == {}\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _retriever(store, repo: str, tmp_path: Path) -> Retriever:  # noqa: ANN001
    index_repository(_repo(tmp_path / "src"), store, name=repo, workers=1)
    RetrievalIndex.build(store, tmp_path / "views", embedder=HashingEmbedder(64), repos=[repo])
    return Retriever(store, RetrievalIndex.load(tmp_path / "views"), HashingEmbedder(64))


def test_search_lists_each_object_once_and_reaches_the_file_a_topic_names(store, repo, tmp_path) -> None:  # noqa: ANN001
    r = _retriever(store, repo, tmp_path)
    hits = r.search("session management", k=10, repo=repo)
    ids = [h.view.object_id for h in hits]
    assert len(ids) == len(set(ids))
    assert hits[0].view.path == "pkg/sessions.py"
    # an identifier finds its definition first
    assert r.search("RequestContext.pop", k=5, repo=repo)[0].view.object_id == f"{repo}:pkg/ctx.py:RequestContext.pop"


def test_a_file_the_words_name_is_found_though_no_retriever_reached_it(store, repo, tmp_path,  # noqa: ANN001
                                                                        monkeypatch) -> None:  # noqa: ANN001
    # BM25 alone: the test file shares no word with the question, only its name does
    src = _repo(tmp_path / "src")
    (src / "tests/test_print_number.py").write_text(
        "def test_zero():\n    assert show(0) == '0'\n\n\ndef test_negative():\n    assert show(-1) == '-1'\n")
    index_repository(src, store, name=repo, workers=1)
    RetrievalIndex.build(store, tmp_path / "views", embedder=None, repos=[repo])
    r = Retriever(store, RetrievalIndex.load(tmp_path / "views"))
    question = "unit tests for printing numbers"
    found = r.ranked(Query(question, repos=(repo,)))
    paths = [sv.view.path for sv in found.objects]
    assert paths[0] == "tests/test_print_number.py"
    assert found.objects[0].view.kind == "body"
    monkeypatch.setattr(rank_module, "PATH_FIND", 2.0)  # no file is named that well
    assert "tests/test_print_number.py" not in [sv.view.path for sv in r.ranked(Query(question, repos=(repo,))).objects]
