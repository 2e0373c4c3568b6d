"""Repository names of corpora: never ``src``, never two alike."""

from __future__ import annotations

import json
from pathlib import Path

from vitalrag.eval.corpora import Corpus, fetch, unique_names


def _jar(cache: Path, folder: str, name: str) -> Path:
    dest = cache / "maven" / folder
    (dest / "src" / "org").mkdir(parents=True)
    (dest / "manifest.json").write_text(json.dumps({"name": name, "root": "src", "sha256": "x"}))
    return dest / "src"


def test_a_fetched_sources_jar_given_as_a_folder_keeps_its_corpus_name(tmp_path):
    a = _jar(tmp_path, "org.jsoup.jsoup-1.18.1", "jsoup")
    b = _jar(tmp_path, "commons-io.commons-io-2.18.0", "commons-io")
    assert [fetch(str(a)).name, fetch(str(b)).name] == ["jsoup", "commons-io"]


def test_a_bare_src_folder_is_named_after_its_parent(tmp_path):
    (tmp_path / "myproject" / "src").mkdir(parents=True)
    assert fetch(str(tmp_path / "myproject" / "src")).name == "myproject"


def test_names_shared_by_several_corpora_get_their_version(tmp_path):
    corpora = [Corpus("maven:commons-io:commons-io:2.18.0", "commons-io", tmp_path / "a" / "src", ""),
               Corpus("maven:commons-io:commons-io:2.17.0", "commons-io", tmp_path / "b" / "src", ""),
               Corpus("pypi:click==8.1.7", "click", tmp_path / "c", ""),
               Corpus(str(tmp_path / "x" / "lib"), "lib", tmp_path / "x" / "lib", ""),
               Corpus(str(tmp_path / "y" / "lib"), "lib", tmp_path / "y" / "lib", "")]
    assert unique_names(corpora) == ["commons-io-2.18.0", "commons-io-2.17.0", "click", "x-lib", "y-lib"]
