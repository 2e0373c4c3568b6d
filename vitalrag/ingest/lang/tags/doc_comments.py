"""Doc text from the comments of the C family of syntaxes (C, C++, Kotlin,
Scala, Swift, PHP): ``/** ... */`` blocks, ``///`` and ``//`` lines, ``/* */``
and ``#`` comments, their markers and leading asterisks dropped."""

from __future__ import annotations

import re

_OPEN = re.compile(r"^/\*+!?|^//[/!]?<?|^#")
_CLOSE = re.compile(r"\*+/$")
_STAR = re.compile(r"^\s*\*(?!/) ?")
#: a separator or licence banner line: no words in it
_RULE = re.compile(r"^[\W_]*$")


def c_style_docstring(comments: list[str]) -> str:
    """The text of the comments right before a definition, in order.

    A comment opening the file with a licence (``Copyright``, ``License``) is
    no documentation and is left out."""
    lines: list[str] = []
    for c in comments:
        if re.search(r"\b(?:Copyright|SPDX-License-Identifier|Permission is hereby granted)\b", c):
            continue
        body = _CLOSE.sub("", _OPEN.sub("", c.strip()))
        for i, line in enumerate(body.splitlines()):
            line = _STAR.sub("", line) if i else line
            line = line.strip()
            if line and not _RULE.match(line):
                lines.append(line)
    return "\n".join(lines).strip()
