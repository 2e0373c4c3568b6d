"""What an index run takes in, as ``--content`` chooses: ``code`` (the languages of
``lang.REGISTRY``, with their objects and edges), ``docs`` (documentation
alone) or ``all`` (both, and config, SQL, build files and source in languages
without a parser: ``kernel.textformats``). ``all`` is the default: a question
about deploying or configuring is answered by a README or a YAML file, and a
new user who indexes a repository expects to find its text.

A path whose ending a code language claims is code; only the rest is looked
up among the text formats, so a language registered later takes its files from
the ``source`` format.
"""

from __future__ import annotations

from dataclasses import dataclass

from vitalrag.errors import InputError
from vitalrag.ingest.lang import REGISTRY, Language, language_for_path
from vitalrag.ingest.text import TEXT_LANGUAGES
from vitalrag.kernel.textformats import CONTENT_CHOICES, DEFAULT_CONTENT, skip_reason, takes, text_format

#: every language an index run may meet, code and text, by name (code wins a clash)
LANGUAGES: dict[str, Language] = {**TEXT_LANGUAGES, **REGISTRY}


def handler(language: str) -> Language:
    """The ``Language`` files of ``language`` are extracted and resolved by."""
    return LANGUAGES[language]


def check_content(content: str) -> str:
    """``content`` when it is one of ``CONTENT_CHOICES``; ``InputError`` otherwise."""
    if content not in CONTENT_CHOICES:
        raise InputError(f"unknown content {content!r}: use one of {', '.join(CONTENT_CHOICES)}")
    return content


@dataclass(frozen=True, slots=True)
class Listed:
    """What the walk does with a path: index it as ``language`` (no larger than
    ``max_bytes``, when the format is held to less than the run), or pass it over
    because ``skip`` says so."""

    language: str
    max_bytes: int | None = None
    skip: str | None = None


def listed(path: str, content: str = DEFAULT_CONTENT) -> Listed | None:
    """How an index of ``content`` treats ``path`` (None: not a file it takes)."""
    language = language_for_path(path)
    if language is not None:
        return Listed(language) if takes(content, "code") else None
    fmt = text_format(path)
    reason = skip_reason(path)
    if fmt is None:
        # a lock file of no format of ours (yarn.lock) is still worth a reason
        return Listed("text", skip=reason) if reason is not None and takes(content, "config") else None
    if not takes(content, fmt.category):
        return None
    return Listed(fmt.name, fmt.max_bytes, reason)


__all__ = ["CONTENT_CHOICES", "DEFAULT_CONTENT", "LANGUAGES", "Listed", "check_content", "handler", "listed"]
