"""Java: ``extraction`` (one walk of a file's tree, ``walk``, reading
declarations with ``syntax``; what it finds typed in ``facts``) and
``resolution`` (types through ``index``, calls through ``calls``, with what
``platform`` knows of the JDK)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vitalrag.ingest.facts import FileFacts, Resolver
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline

if TYPE_CHECKING:
    from vitalrag.ingest.lang.java.facts import JavaFacts


class Java:
    """The ``Language`` of ``.java`` files."""

    name = "java"
    family = "java"
    extensions = (".java",)
    tags = "java"

    def grammar(self) -> object:
        import tree_sitter_java

        return tree_sitter_java.language()

    def load(self) -> None:
        from vitalrag.ingest.lang.java import extraction, resolution  # noqa: F401

    def fact_types(self) -> tuple[type, ...]:
        from vitalrag.ingest.lang.java.facts import FACT_TYPES

        return FACT_TYPES

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts[JavaFacts]:
        from vitalrag.ingest.lang.java.extraction import extract

        return extract(repo, path, text, deadline)

    def prepare(self, repo: str, facts: list[FileFacts[JavaFacts]]) -> None:
        """Nothing needs every file before the graph is built."""

    def resolver(self, repo: str, facts: list[FileFacts[JavaFacts]]) -> Resolver:
        from vitalrag.ingest.lang.java.resolution import JavaResolver

        return JavaResolver(repo, facts)


JAVA = Java()
