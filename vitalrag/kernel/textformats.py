"""The text files an index takes in besides code: what a path says about its format.

A file in a language VitalRAG parses is code (``ingest.lang.REGISTRY`` decides
that first); the formats here are the rest of what an organisation keeps:

- ``docs``: Markdown, reStructuredText, AsciiDoc, plain text (and READMEs,
  changelogs and licences without an extension), split by section heading;
- ``config``: YAML, TOML, JSON and INI-like files (JSON and INI under a tighter
  size limit: a large one is data, not configuration);
- ``sql``;
- ``build``: Makefiles, Dockerfiles, CMake, Gradle, Maven and Ant, Bazel, ...;
- ``source``: code in a language without a parser (C, Ruby, shell, ... until
  one is registered).

Lock files are generated: they are named here so the walk can say why it
passes them over. Pure tables: the retrieval side reads them too, without
importing the parsers.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

#: what ``--content`` chooses between (``takes`` says what each takes in), and the
#: default (``ingest.content`` says why)
CONTENT_CHOICES: tuple[str, ...] = ("all", "code", "docs")
DEFAULT_CONTENT = "all"
#: the categories of text file (``TextFormat.category``)
CATEGORIES: tuple[str, ...] = ("docs", "config", "sql", "build", "source")
#: the tighter limit of the formats whose large files are data (JSON, INI)
CONFIG_MAX_BYTES = 100_000


@dataclass(frozen=True, slots=True)
class TextFormat:
    """One format: the language name its files carry (``markdown``, ``yaml``), its
    category, how paths are recognised, and a size limit tighter than the run's."""

    name: str
    category: str
    extensions: tuple[str, ...] = ()
    #: whole file names, lower case (``makefile``, ``cmakelists.txt``)
    filenames: tuple[str, ...] = ()
    #: file name prefixes, lower case, followed by a dot (``dockerfile`` for ``Dockerfile.dev``)
    prefixes: tuple[str, ...] = ()
    max_bytes: int | None = None

    @property
    def sectioned(self) -> bool:
        """Split by section heading (documentation); line windows otherwise."""
        return self.category == "docs"


_SOURCE_EXTENSIONS = (
    # C family and other compiled languages
    ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp", ".m", ".mm",
    ".kt", ".kts", ".scala", ".sc", ".swift", ".zig", ".nim", ".cr", ".f90", ".f95",
    ".pas", ".ada", ".adb", ".ads", ".vb", ".fs", ".fsi", ".fsx", ".dart", ".groovy",
    # scripting and functional
    ".rb", ".rake", ".gemspec", ".php", ".lua", ".pl", ".pm", ".r", ".jl", ".tcl", ".ex", ".exs",
    ".erl", ".hrl", ".hs", ".lhs", ".ml", ".mli", ".clj", ".cljs", ".cljc", ".el", ".lisp", ".scm",
    ".rkt", ".elm", ".purs", ".vim", ".awk", ".sed",
    # shells
    ".sh", ".bash", ".zsh", ".fish", ".ksh", ".ps1", ".psm1", ".bat", ".cmd",
    # interface, schema and infrastructure languages
    ".proto", ".thrift", ".graphql", ".gql", ".tf", ".hcl", ".nix", ".cue", ".bicep",
    # web
    ".css", ".scss", ".sass", ".less", ".html", ".htm", ".vue", ".svelte", ".astro",
)

FORMATS: tuple[TextFormat, ...] = (
    TextFormat("markdown", "docs", (".md", ".markdown", ".mdown", ".mkd", ".mdx")),
    TextFormat("restructuredtext", "docs", (".rst", ".rest")),
    TextFormat("asciidoc", "docs", (".adoc", ".asciidoc")),
    TextFormat("text", "docs", (".txt", ".text"), filenames=(
        "readme", "changelog", "changes", "history", "news", "contributing", "authors", "contributors",
        "install", "notice", "todo", "license", "licence", "copying", "maintainers", "security")),
    TextFormat("yaml", "config", (".yaml", ".yml")),
    TextFormat("toml", "config", (".toml",), filenames=("pipfile",)),
    TextFormat("json", "config", (".json", ".jsonc", ".json5"), max_bytes=CONFIG_MAX_BYTES),
    TextFormat("ini", "config", (".ini", ".cfg", ".conf", ".properties"), filenames=(
        "requirements.txt", "requirements-dev.txt", "constraints.txt", "procfile", ".editorconfig"),
        max_bytes=CONFIG_MAX_BYTES),
    TextFormat("sql", "sql", (".sql",)),
    TextFormat("make", "build", (".mk", ".mak"), filenames=("makefile", "gnumakefile")),
    TextFormat("dockerfile", "build", (".dockerfile",), filenames=("dockerfile", "containerfile"),
               prefixes=("dockerfile", "containerfile")),
    TextFormat("cmake", "build", (".cmake",), filenames=("cmakelists.txt",)),
    TextFormat("gradle", "build", (".gradle",), filenames=("build.gradle.kts", "settings.gradle.kts")),
    TextFormat("maven", "build", filenames=("pom.xml",)),
    TextFormat("ant", "build", filenames=("build.xml", "ivy.xml")),
    TextFormat("bazel", "build", (".bzl", ".bazel"), filenames=("build", "workspace")),
    TextFormat("build", "build", filenames=(
        "meson.build", "justfile", "rakefile", "gemfile", "podfile", "brewfile", "vagrantfile", "jenkinsfile",
        "go.mod", "go.work", "manifest.in")),
    TextFormat("source", "source", _SOURCE_EXTENSIONS),
)

#: generated lock files: passed over, with this reason
LOCK_FILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "poetry.lock",
    "pipfile.lock", "uv.lock", "pdm.lock", "cargo.lock", "gemfile.lock", "composer.lock", "go.sum",
    "mix.lock", "flake.lock", "pubspec.lock", "podfile.lock", "packages.lock.json", "gradle.lockfile",
    "package.resolved",
})
LOCK_REASON = "generated: a lock file"
MINIFIED_REASON = "minified (by its name)"

BY_NAME: dict[str, TextFormat] = {f.name: f for f in FORMATS}
_BY_FILENAME: dict[str, TextFormat] = {n: f for f in FORMATS for n in f.filenames}
_BY_EXTENSION: dict[str, TextFormat] = {e: f for f in FORMATS for e in f.extensions}
_BY_PREFIX: tuple[tuple[str, TextFormat], ...] = tuple((p + ".", f) for f in FORMATS for p in f.prefixes)


def text_format(path: str) -> TextFormat | None:
    """The text format of ``path`` by its name (None: not a text file we index).

    Whole names first (``CMakeLists.txt`` is CMake, not plain text), then name
    prefixes (``Dockerfile.dev``), then the longest matching ending."""
    name = posixpath.basename(path).lower()
    found = _BY_FILENAME.get(name)
    if found is not None:
        return found
    for prefix, fmt in _BY_PREFIX:
        if name.startswith(prefix):
            return fmt
    dot = name.find(".", 1)  # a leading dot names a hidden file, not an ending
    while dot > 0:
        found = _BY_EXTENSION.get(name[dot:])
        if found is not None:
            return found
        dot = name.find(".", dot + 1)
    return None


def skip_reason(path: str) -> str | None:
    """Why a text file is passed over by its name alone: a lock file, a minified file."""
    name = posixpath.basename(path).lower()
    if name in LOCK_FILES:
        return LOCK_REASON
    if ".min." in name:
        return MINIFIED_REASON
    return None


def takes(content: str, category: str) -> bool:
    """Does an index of ``content`` (``CONTENT_CHOICES``) take files of ``category``
    (a text category, or ``code`` for the languages VitalRAG parses)?"""
    if content == "all":
        return True
    if content == "code":
        return category == "code"
    return category == "docs"
