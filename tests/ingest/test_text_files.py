"""Text files besides code: documentation split by section heading, config, SQL,
build files and source without a parser as line windows; what --content takes,
and what is passed over with a reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vitalrag.errors import InputError
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.cache import FactsCache, file_digest
from vitalrag.ingest.content import LANGUAGES, listed
from vitalrag.ingest.lang import EXTENSIONS, REGISTRY
from vitalrag.ingest.parse import parse_file
from vitalrag.ingest.text import TEXT_LANGUAGES
from vitalrag.ingest.text.sections import asciidoc_headings, markdown_headings, rst_headings
from vitalrag.ingest.walk import walk_repository
from vitalrag.kernel.textformats import text_format
from vitalrag.retrieve.views import build_views, embeds

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "text_basic"

SECTIONS = {
    "DEPLOY.md:top": ("DEPLOY.md", 1, 3),
    "DEPLOY.md:deploying": ("Deploying", 5, 7),
    "DEPLOY.md:deploying/release-steps": ("Deploying > Release steps", 9, 17),
    "DEPLOY.md:deploying/rollback": ("Deploying > Rollback", 19, 21),
    "DEPLOY.md:deploying/monitoring": ("Deploying > Monitoring", 23, 26),
    "NOTES.txt:top": ("NOTES.txt", 1, 2),
    "docs/guide.rst:shop-guide": ("Shop guide", 1, 5),
    "docs/guide.rst:shop-guide/installing": ("Shop guide > Installing", 7, 10),
    "docs/guide.rst:shop-guide/installing/upgrading": ("Shop guide > Installing > Upgrading", 12, 20),
    "docs/guide.rst:shop-guide/configuring": ("Shop guide > Configuring", 22, 25),
    "docs/manual.adoc:shop-manual": ("Shop manual", 1, 3),
    "docs/manual.adoc:shop-manual/payments": ("Shop manual > Payments", 5, 11),
    "docs/manual.adoc:shop-manual/payments/refunds": ("Shop manual > Payments > Refunds", 13, 15),
}
LANGUAGE_OF = {"DEPLOY.md": "markdown", "Makefile": "make", "NOTES.txt": "text", "config.yaml": "yaml",
               "docs/guide.rst": "restructuredtext", "docs/manual.adoc": "asciidoc", "schema.sql": "sql",
               "shop.py": "python"}


def _index(root: Path, tmp_path: Path, **options: object) -> tuple[MemoryStore, object]:
    store = MemoryStore(tmp_path / "idx")
    report = index_repository(root, store, name="t", workers=1, **options)
    return store, report


@pytest.mark.parametrize(("path", "expected"), [
    ("docs/DEPLOY.md", "markdown"), ("guide.rst", "restructuredtext"), ("x.adoc", "asciidoc"),
    ("notes.txt", "text"), ("README", "text"), ("LICENSE", "text"),
    ("CMakeLists.txt", "cmake"), ("requirements.txt", "ini"), ("a/b/Dockerfile.dev", "dockerfile"),
    ("Makefile", "make"), ("build.gradle", "gradle"), ("build.gradle.kts", "gradle"), ("pom.xml", "maven"),
    ("ci/release.yml", "yaml"), ("pyproject.toml", "toml"), ("tsconfig.json", "json"), ("setup.cfg", "ini"),
    ("db/schema.sql", "sql"), ("go.mod", "build"), ("bin/run.sh", "source"),
    ("logo.png", None), ("data.bin", None), ("other.xml", None),
])
def test_text_formats_by_name(path, expected):
    fmt = text_format(path)
    assert (fmt.name if fmt else None) == expected


def test_what_has_a_parser_is_code_and_the_rest_is_text():
    """The no-parser set is what the registry does not claim: every registered ending
    is code (never a text format), an ending of no registered language is text."""
    assert not set(REGISTRY) & set(TEXT_LANGUAGES), "a text format shadows a language"
    for ext, language in EXTENSIONS.items():
        assert listed(f"src/x{ext}").language == language
        assert listed(f"src/x{ext}", "docs") is None
    unparsed = [e for e in (".pl", ".jl", ".hs", ".sh", ".php", ".dart") if e not in EXTENSIONS]
    assert unparsed
    for ext in unparsed:
        assert listed(f"src/x{ext}").language == "source"
        assert listed(f"src/x{ext}", "code") is None
    assert listed("docs/a.md", "code") is None and listed("docs/a.md", "docs").language == "markdown"
    assert listed("config.yaml", "docs") is None
    assert set(LANGUAGES) == set(REGISTRY) | set(TEXT_LANGUAGES)


def test_markdown_headings_skip_fences_and_front_matter():
    lines = ["---", "title: # not a heading", "---", "# One", "```", "# in a fence", "```", "text",
             "", "Two", "===", "", "- item", "---", "", "### Three ###", "####", "#no space"]
    found = [(h.line, h.level, h.title) for h in markdown_headings(lines)]
    assert found == [(4, 1, "One"), (10, 1, "Two"), (16, 3, "Three")]


def test_rst_headings_take_levels_in_order_of_appearance():
    lines = ["=====", "Title", "=====", "", "Sub", "===", "", "Deeper", "------", "", "Again", "=====",
             "", "::", "", "    Indented", "    ========"]
    found = [(h.line, h.level, h.title) for h in rst_headings(lines)]
    assert found == [(1, 1, "Title"), (5, 2, "Sub"), (8, 3, "Deeper"), (11, 2, "Again")]


def test_asciidoc_headings_skip_delimited_blocks():
    lines = ["= Doc", "", "== A", "----", "== listed", "----", "////", "== comment", "////", "=== B"]
    found = [(h.line, h.level, h.title) for h in asciidoc_headings(lines)]
    assert found == [(1, 0, "Doc"), (3, 1, "A"), (10, 2, "B")]


def test_a_repository_of_text_files_indexes_every_file(tmp_path):
    store, report = _index(FIXTURE, tmp_path)
    files = {o.path: o.language for o in store.find_objects(repo="t", kind="file")}
    assert files == LANGUAGE_OF
    assert report.skipped == []
    sections = {o.id.removeprefix("t:"): (o.qualname, o.start_line, o.end_line)
                for o in store.find_objects(repo="t", kind="section")}
    assert sections == SECTIONS
    deploy = store.get_objects(["t:DEPLOY.md:deploying/release-steps"])["t:DEPLOY.md:deploying/release-steps"]
    assert deploy.name == "Release steps" and deploy.signature == "Deploying > Release steps"
    # every section is in its file, and nothing else links them
    contains = {(e.source, e.target) for e in store.find_edges(repo="t", kind="CONTAINS")}
    assert all((f"t:{sid.split(':')[0]}", f"t:{sid}") in contains for sid in SECTIONS)
    assert {e.kind for e in store.find_edges(repo="t")} == {"CONTAINS"}
    assert store.get_meta("t")["content"] == "all"


def test_content_code_leaves_the_text_out_and_docs_takes_only_documentation(tmp_path):
    store, _ = _index(FIXTURE, tmp_path / "code", content="code")
    assert {o.path for o in store.find_objects(repo="t", kind="file")} == {"shop.py"}
    assert store.find_objects(repo="t", kind="section") == []
    store, _ = _index(FIXTURE, tmp_path / "docs", content="docs")
    assert {o.path for o in store.find_objects(repo="t", kind="file")} == {
        "DEPLOY.md", "NOTES.txt", "docs/guide.rst", "docs/manual.adoc"}
    with pytest.raises(InputError, match="unknown content 'prose'"):
        _index(FIXTURE, tmp_path / "bad", content="prose")


def test_views_of_text_files(tmp_path):
    store, _ = _index(FIXTURE, tmp_path)
    views = build_views(store, "t")
    by_path: dict[str, set[str]] = {}
    for v in views:
        by_path.setdefault(v.path, set()).add(v.kind)
    # config, SQL and build files: line windows, embedded; documents: their sections
    for path in ("config.yaml", "schema.sql", "Makefile"):
        assert by_path[path] == {"text"}
    assert {"body", "signature", "window"} <= by_path["DEPLOY.md"] and "text" not in by_path["DEPLOY.md"]
    embedded = {(v.kind, v.object_id) for v in views if embeds(v)}
    assert ("text", "t:config.yaml") in embedded
    assert ("body", "t:DEPLOY.md:deploying/release-steps") in embedded
    assert not any(kind == "window" for kind, _ in embedded)
    body = next(v for v in views if v.kind == "body" and v.object_id == "t:DEPLOY.md:deploying/release-steps")
    assert body.text.startswith("## Release steps\n") and "make deploy" in body.text
    assert (body.start_line, body.end_line) == (9, 17)


def test_text_facts_come_back_from_the_cache(tmp_path):
    cache = FactsCache(tmp_path, "r")
    cache.lookup({})
    parsed, wanted = {}, {}
    for sf in walk_repository(FIXTURE).files:
        facts = parse_file("r", sf)
        parsed[sf.path] = facts
        wanted[sf.path] = (file_digest(Path(sf.abspath).read_bytes()), sf.language, facts.text)
        cache.put(sf.path, wanted[sf.path][0], facts)
    cache.save(set(parsed))
    assert FactsCache(tmp_path, "r").lookup(wanted) == parsed


def test_text_files_passed_over_say_why(tmp_path):
    root = tmp_path / "r"
    shutil.copytree(FIXTURE, root)
    (root / "blob.txt").write_bytes(b"header\0\x01\x02 binary")
    (root / "big.json").write_text("{\n" + ",\n".join(f'"k{i}": {i}' for i in range(20_000)) + "\n}\n")
    (root / "huge.md").write_text("# Huge\n" + "word " * 300_000)
    (root / "one_line.yaml").write_text("k: [" + ", ".join(str(i) for i in range(3000)) + "]\n")
    (root / "site.min.css").write_text("a{color:red}\n")
    (root / "package-lock.json").write_text("{}\n")
    (root / "yarn.lock").write_text("# yarn lockfile v1\n")
    (root / "api.yaml").write_text("# Code generated by openapi-gen. DO NOT EDIT.\nopenapi: 3.0.0\n")
    page = "".join(f"<p>line {i} of the guide</p>\n" for i in range(100))
    (root / "sphinx.html").write_text('<html><head><meta name="generator" content="Docutils 0.20"/></head>\n' + page)
    (root / "javadoc.html").write_text("<!DOCTYPE HTML>\n<!-- Generated by javadoc (17) -->\n" + page)
    (root / "ldoc.html").write_text("<html><body>\n" + page
                                    + '<i>generated by <a href="http://github.com/stevedonovan/LDoc">LDoc</a></i>\n')
    (root / "hand.html").write_text("<html><body>\n<p>The table is generated by the build.</p>\n" + page)
    store, report = _index(root, tmp_path)
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons == {
        "blob.txt": "binary content under a source extension",
        "big.json": f"over the size limit of json files ({(root / 'big.json').stat().st_size} bytes > 100000)",
        "huge.md": f"over size limit ({(root / 'huge.md').stat().st_size} bytes > 1000000)",
        "one_line.yaml": f"minified (longest line {len((root / 'one_line.yaml').read_text()) - 1} chars)",
        "site.min.css": "minified (by its name)",
        "package-lock.json": "generated: a lock file",
        "yarn.lock": "generated: a lock file",
        "api.yaml": "generated: its first lines say 'DO NOT EDIT'",
        "sphinx.html": "generated: an HTML page its generator signed ('<meta name=\"generator\"')",
        "javadoc.html": "generated: an HTML page its generator signed ('<!-- Generated by')",
        "ldoc.html": "generated: an HTML page its generator signed ('generated by <a')",
    }
    assert {o.path for o in store.find_objects(repo="t", kind="file")} == set(LANGUAGE_OF) | {"hand.html"}
    # an index of code alone does not look at them
    _, code = _index(root, tmp_path / "code", content="code")
    assert code.skipped == []


def test_watch_follows_the_content_choice(tmp_path):
    from vitalrag.ingest.watch import _relevant

    root = tmp_path.resolve()
    everything, code = _relevant(root, ()), _relevant(root, (), "code")
    assert everything(None, str(root / "docs" / "DEPLOY.md")) and everything(None, str(root / "a.py"))
    assert not code(None, str(root / "docs" / "DEPLOY.md")) and code(None, str(root / "a.py"))
    assert not everything(None, str(root / "logo.png"))
