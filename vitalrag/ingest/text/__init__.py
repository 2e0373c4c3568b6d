"""The text formats as languages the pipeline can run: one ``TextLanguage`` per
format of ``kernel.textformats`` (documentation, config, SQL, build files,
source without a parser), held apart from the code ``REGISTRY`` (whose
languages are code).

A text file is extracted without a grammar (``extraction``: its file object
and, for documentation, its sections) and resolved to nothing: every text
format is of the ``text`` family, whose resolver finds no edges.
"""

from __future__ import annotations

from dataclasses import dataclass

from vitalrag.ingest.facts import FileFacts, Resolution, Resolver, WholeResolver
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline
from vitalrag.ingest.text.extraction import TextFacts, extract_text
from vitalrag.kernel.textformats import FORMATS, TextFormat

#: the family every text format is of (the plain-text format's name)
FAMILY = "text"


def _no_edges(repo: str, facts: list[FileFacts]) -> Resolution:
    return Resolution()


@dataclass(frozen=True, slots=True)
class TextLanguage:
    """A text format, as the ``Language`` protocol has it."""

    format: TextFormat

    @property
    def name(self) -> str:
        return self.format.name

    @property
    def family(self) -> str:
        return FAMILY

    @property
    def extensions(self) -> tuple[str, ...]:
        return self.format.extensions

    @property
    def tags(self) -> str:
        return ""

    def grammar(self) -> object:
        raise LookupError(f"{self.name} files are read without a grammar")

    def load(self) -> None:
        pass

    def fact_types(self) -> tuple[type, ...]:
        return (TextFacts,)

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts:
        return extract_text(repo, path, text, self.format, deadline)

    def prepare(self, repo: str, facts: list[FileFacts]) -> None:
        pass

    def resolver(self, repo: str, facts: list[FileFacts]) -> Resolver:
        return WholeResolver(_no_edges, repo, facts)


#: every text format, by name
TEXT_LANGUAGES: dict[str, TextLanguage] = {f.name: TextLanguage(f) for f in FORMATS}
assert FAMILY in TEXT_LANGUAGES

__all__ = ["FAMILY", "TEXT_LANGUAGES", "TextFacts", "TextLanguage"]
