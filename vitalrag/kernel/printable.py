"""Repository text made safe to show: no control character reaches a descriptor,
a terminal or an agent as itself.

A repository's bytes (file and folder names, identifiers, code) may hold control
characters. A newline in a file name would write a forged descriptor line, and a
forged numbered body under it, into a context; ESC, BEL and the C1 controls,
printed to a terminal, set its title, clear it, write the clipboard (OSC 52) or
hide text, and a lone carriage return overwrites what a line showed.

"Control character" means Unicode category Cc: C0 (U+0000-U+001F), DEL (U+007F)
and C1 (U+0080-U+009F). The rule holds at three places:

- **The walk** (``ingest.walk``) does not index a file whose path, in any of its
  components, holds a control character: it is reported as skipped, its path
  written with ``escape_controls``. No object, view or id is made from it.
- **Descriptors** (``--- path:lines identifier``, ``--- sig:``, ``--- called
  from``) write paths through ``escape_controls`` and identifiers and
  signatures through ``one_line``, as defence in depth (an index written by an
  older version, a Neo4j store pushed from elsewhere, a heading in a document):
  every control character, and the line and paragraph separators U+2028 and
  U+2029, is written as ``\\xNN`` (``\\u2028``), so a descriptor is one line.
- **Output**: what the CLI prints and what the MCP tools return goes through
  ``printable``: tab, newline and the CR of a CRLF are kept, every other
  control character (a lone CR included) is written as ``\\xNN``. Ordinary
  code comes through byte for byte. JSON printed by the CLI stays lossless
  instead (``json_printable``): the controls ``json.dumps`` leaves raw are
  written as JSON's own ``\\u00NN`` escapes.

A backslash is not escaped: a name that spells ``\\x0a`` with four printable
characters reads the same as an escaped newline, and misleads no parser.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Unicode category Cc: C0, DEL and C1
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: what may not stand in one line of a descriptor: Cc and the Unicode line separators
_NOT_IN_A_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: what output may not carry: Cc but tab and newline, and a CR that does not end a CRLF
_NOT_PRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
#: what ``json.dumps(..., ensure_ascii=False)`` leaves raw (it escapes C0 itself)
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (C0, DEL or C1)."""
    return _CONTROL.search(text) is not None


def escape_controls(text: str) -> str:
    """``text`` on one line, as written otherwise: each control character and
    U+2028/U+2029 as ``\\xNN``/``\\uNNNN`` (for paths, whose spaces count)."""
    return _NOT_IN_A_LINE.sub(_escaped, text)


def one_line(text: str) -> str:
    """``text`` as one line of a descriptor: runs of whitespace (newlines and tabs
    included) become one space, and the control characters left are escaped
    (for identifiers and signatures, which may span lines in the source)."""
    return escape_controls(" ".join(text.split()))


def printable(text: str) -> str:
    """``text`` safe to print or hand to an agent: tab, newline and CRLF kept,
    every other control character (a lone CR too) written as ``\\xNN``."""
    return _NOT_PRINTABLE.sub(_escaped, text)


def printable_data(data: Any) -> Any:
    """``data`` (JSON-like: mappings, lists, tuples, scalars) with ``printable``
    applied to every string in it, keys included."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, Mapping):
        return {printable_data(k): printable_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [printable_data(v) for v in data]
    return data


def json_printable(text: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` with the control
    characters it leaves raw (DEL, C1) written as ``\\u00NN``: the same JSON value,
    safe on a terminal. Those characters only occur inside JSON strings, where the
    escape means the same character."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


__all__ = ["escape_controls", "has_control", "json_printable", "one_line", "printable", "printable_data"]
