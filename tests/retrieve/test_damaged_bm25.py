"""A damaged BM25 or dense file in the live retrieval snapshot: every query command
says which file in one line and to re-index, with a non-zero exit and no
traceback; it is checked when the snapshot is loaded, not left to fail inside a
later query (bm25s's IndexError, FAISS's assertion)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import faiss
import numpy as np
import pytest
from click.testing import CliRunner

from vitalrag.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
COMMANDS = [["context", "engine prepare setup"], ["search", "engine prepare setup"],
            ["search", "helper local", "--retriever", "bm25"], ["explain", "run the engine"]]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("damaged") / "idx"
    result = CliRunner().invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(folder),
                                       "--name", "pyr", "--model", "hashing-64"])
    assert result.exit_code == 0, result.output
    return folder


def _snapshot(store: Path) -> Path:
    (snap,) = store.glob("retrieval-*")
    return snap


def _json(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    path.write_text(json.dumps(change(data)))


def _array(path: Path, change: Callable[[np.ndarray], np.ndarray]) -> None:
    np.save(path, change(np.load(path)))


def _random_indices(a: np.ndarray) -> np.ndarray:
    return np.random.default_rng(0).integers(-2**31, 2**31 - 1, size=a.shape, dtype=np.int64).astype(a.dtype)


def _other_dimension(snap: Path) -> None:
    path = snap / "dense" / "vectors.faiss"
    old = faiss.read_index(str(path))
    index = faiss.IndexFlatIP(32)
    index.add(np.random.default_rng(0).random((old.ntotal, 32), dtype=np.float32))
    faiss.write_index(index, str(path))


def _other_model(snap: Path) -> None:
    """Both records name a model of 32 dimensions; the vectors have 64."""
    _json(snap / "meta.json", lambda d: {**d, "model": "hashing-32"})
    _json(snap / "dense" / "model.json", lambda d: {**d, "model": "hashing-32", "dim": 64})


def _vocab_out_of_range(d: dict) -> dict:
    first = next(k for k in d if k)
    return {**d, first: 10**6}


DAMAGE: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "params hold only k1, a word": (lambda s: (s / "bm25" / "params.index.json").write_text('{"k1": "x"}'),
                                    ["params.index.json is damaged", "k1 is 'x'"]),
    "k1 is a word": (lambda s: _json(s / "bm25" / "params.index.json", lambda d: {**d, "k1": "x"}),
                     ["params.index.json is damaged: k1 is 'x', not a number"]),
    "params are not JSON": (lambda s: (s / "bm25" / "params.index.json").write_bytes(b"\x00\xff{"),
                            ["params.index.json"]),
    "params are a list": (lambda s: (s / "bm25" / "params.index.json").write_text("[1, 2]"),
                          ["params.index.json is damaged: not a JSON object"]),
    "another method": (lambda s: _json(s / "bm25" / "params.index.json", lambda d: {**d, "method": "bm25l"}),
                       ["params.index.json is damaged: method"]),
    "random document numbers": (lambda s: _array(s / "bm25" / "indices.csc.index.npy", _random_indices),
                                ["indices.csc.index.npy is damaged: document numbers outside 0.."]),
    "document numbers cut short": (lambda s: _array(s / "bm25" / "indices.csc.index.npy", lambda a: a[:-3]),
                                   ["indices.csc.index.npy is damaged"]),
    "term columns out of order": (lambda s: _array(s / "bm25" / "indptr.csc.index.npy", lambda a: a[::-1]),
                                  ["indptr.csc.index.npy is damaged"]),
    "weights that are not numbers": (lambda s: _array(s / "bm25" / "data.csc.index.npy",
                                                      lambda a: np.full_like(a, np.nan)),
                                     ["data.csc.index.npy is damaged"]),
    "weights as a matrix": (lambda s: _array(s / "bm25" / "data.csc.index.npy", lambda a: a.reshape(1, -1)),
                            ["data.csc.index.npy is damaged"]),
    "a term number past the columns": (lambda s: _json(s / "bm25" / "vocab.index.json", _vocab_out_of_range),
                                       ["vocab.index.json is damaged"]),
    "token counts cut short": (lambda s: _array(s / "bm25" / "lengths.npy", lambda a: a[:-1]),
                               ["lengths.npy is damaged"]),
    "vectors of another dimension": (_other_dimension,
                                     ["vectors.faiss is damaged: it holds vectors of 32 dimensions",
                                      "hashing-64 gives 64"]),
    "a model of another dimension": (_other_model,
                                     ["the query's embedding has 32 dimensions",
                                      "holds vectors of 64 (hashing-32's)"]),
    "records of two models": (lambda s: _json(s / "meta.json", lambda d: {**d, "model": "hashing-32"}),
                              ["meta.json names the model hashing-32 and dense/model.json hashing-64"]),
    "dense views not a count": (lambda s: _json(s / "dense" / "model.json", lambda d: {**d, "views": "many"}),
                                ["model.json is damaged: views is 'many'"]),
    # part of every dense snapshot: one without them is damaged, not read as an older format
    "dense dimension not recorded": (lambda s: _json(s / "dense" / "model.json",
                                                     lambda d: {k: v for k, v in d.items() if k != "dim"}),
                                     ["model.json is damaged: dim is None"]),
    "dense hashes missing": (lambda s: (s / "dense" / "hashes.npy").unlink(),
                             ["cannot read dense index", "hashes.npy"]),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_retrieval_file_is_one_line_naming_it(pristine, tmp_path, kind):
    store = tmp_path / "idx"
    shutil.copytree(pristine, store)
    damage, expected = DAMAGE[kind]
    damage(_snapshot(store))
    for command in COMMANDS:
        if kind == "a model of another dimension" and "bm25" in command:
            continue  # BM25 alone embeds nothing: it answers
        result = CliRunner().invoke(main, [*command, "--store", str(store)])
        assert result.exit_code != 0, (command, result.output)
        assert isinstance(result.exception, SystemExit), (command, result.exception)  # no traceback
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, (command, result.output)
        assert all(e in lines[0] for e in expected), (command, lines[0])
        assert "re-index" in lines[0]


def test_the_pristine_copy_answers(pristine, tmp_path):
    store = tmp_path / "idx"
    shutil.copytree(pristine, store)
    for command in COMMANDS:
        result = CliRunner().invoke(main, [*command, "--store", str(store)])
        assert result.exit_code == 0, (command, result.output)
