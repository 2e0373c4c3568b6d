"""Python: ``extraction`` (objects and raw references of one file, and the
``facts`` resolution needs) and ``resolution`` (packages from ``__init__.py``,
then import-aware name resolution over the whole repository)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vitalrag.ingest.facts import FileFacts, Resolver
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline

if TYPE_CHECKING:
    from vitalrag.ingest.lang.python.facts import PythonFacts


class Python:
    """The ``Language`` of ``.py`` files."""

    name = "python"
    family = "python"
    extensions = (".py",)
    tags = "python"

    def grammar(self) -> object:
        import tree_sitter_python

        return tree_sitter_python.language()

    def load(self) -> None:
        from vitalrag.ingest.lang.python import extraction, resolution  # noqa: F401

    def fact_types(self) -> tuple[type, ...]:
        from vitalrag.ingest.lang.python.facts import FACT_TYPES

        return FACT_TYPES

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts[PythonFacts]:
        from vitalrag.ingest.lang.python.extraction import extract

        return extract(repo, path, text, deadline)

    def prepare(self, repo: str, facts: list[FileFacts[PythonFacts]]) -> None:
        from vitalrag.ingest.lang.python.resolution import prepare

        prepare(repo, facts)

    def resolver(self, repo: str, facts: list[FileFacts[PythonFacts]]) -> Resolver:
        from vitalrag.ingest.lang.python.resolution import PythonResolver

        return PythonResolver(repo, facts)


PYTHON = Python()
