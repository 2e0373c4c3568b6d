"""What an index run takes in, as ``--content`` chooses: ``code`` (the languages of
``lang.REGISTRY``, with their objects and edges), ``docs`` (documentation
alone) or ``all`` (both, and config, SQL, build files and source in languages
without a parser: ``kernel.textformats``). ``all`` is the default: a question
about deploying or configuring is answered by a README or a YAML file, and a
new user who indexes a repository expects to find its text.

A path whose ending a code language claims is code; only the rest is looked
up among the text formats, so a language registered later takes its files from
the ``source`` format. A file with no ending that no text format names (a
script such as bash-completion's ``bash_completion`` or ``bin/deploy``) is code
when its first lines say which language it is written in: a ``#!`` line naming
an interpreter (``#!/usr/bin/env bash``, ``#!/bin/sh``, ``python3``, ``ruby``...)
or an Emacs mode line (``-*- shell-script -*-``); the walk reads those lines
(``script_language``), anything else stays out silently.
"""

from __future__ import annotations

import posixpath
import re
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
    #: a file with no ending: its language is the one its first lines name (``script_language``)
    sniff: bool = False


#: interpreters a ``#!`` line may name -> the language of the script
_INTERPRETERS = {"sh": "bash", "bash": "bash", "dash": "bash", "ash": "bash", "ksh": "bash",
                 "python": "python", "ruby": "ruby",
                 "lua": "lua", "luajit": "lua", "node": "javascript", "nodejs": "javascript",
                 "php": "php", "elixir": "elixir", "runghc": "haskell", "runhaskell": "haskell"}
#: Emacs major modes a ``-*- ... -*-`` line may name -> language
_MODES = {"sh": "bash", "shell-script": "bash", "bash": "bash", "python": "python", "ruby": "ruby",
          "lua": "lua", "js": "javascript", "javascript": "javascript", "php": "php"}
_SHEBANG = re.compile(r"#!\s*(?:/\S*/)?(?:env\s+(?:-\S+\s+)*)?([\w.+-]+)")
_MODE = re.compile(r"-\*-\s*(?:.*?\bmode:\s*)?([\w-]+)[\s;]*(?:.*?)-\*-")
#: bytes of a file with no ending the walk reads to find its language
SNIFF_BYTES = 512


def script_language(head: bytes) -> str | None:
    """The language the first lines of a file with no ending name (``#!``, an Emacs
    mode line), when VitalRAG parses it; None otherwise."""
    lines = head.decode("utf-8", "replace").splitlines()[:2]
    if not lines:
        return None
    name: str | None = None
    shebang = _SHEBANG.match(lines[0])
    if shebang is not None:  # ``python3.12`` is ``python``
        name = _INTERPRETERS.get(re.sub(r"[\d.]+$", "", shebang.group(1)))
    for line in lines:
        mode = _MODE.search(line) if name is None else None
        if mode is not None:
            name = _MODES.get(mode.group(1).lower())
    return name if name in REGISTRY else None


def listed(path: str, content: str = DEFAULT_CONTENT) -> Listed | None:
    """How an index of ``content`` treats ``path`` (None: not a file it takes)."""
    language = language_for_path(path)
    if language is not None:
        return Listed(language) if takes(content, "code") else None
    fmt = text_format(path)
    reason = skip_reason(path)
    if fmt is None and reason is None and "." not in posixpath.basename(path).lstrip("."):
        # no ending: perhaps a script, as its first lines say (the walk reads them)
        return Listed("", sniff=True) if takes(content, "code") else None
    if fmt is None:
        # a lock file of no format of ours (yarn.lock) is still worth a reason
        return Listed("text", skip=reason) if reason is not None and takes(content, "config") else None
    if not takes(content, fmt.category):
        return None
    return Listed(fmt.name, fmt.max_bytes, reason)


__all__ = ["CONTENT_CHOICES", "DEFAULT_CONTENT", "LANGUAGES", "Listed", "check_content", "handler", "listed",
           "script_language"]
