"""The provenance adapter g(v) and the identifier-like tokens T(x) (paper 5.2-5.3).

g(v) decides which views make the same authority claim: the node id when the
view came from our graph, else the paper's adapter (normalised path, casefolded
identifier), prefixed by the repository when the view names one so that two
repositories in one store never share a key.

T(x) is what the companion gate and the query-centred window compare: every
identifier in ``x``, casefolded, plus its snake_case and camelCase parts, less
the reserved words of the languages we index (a query saying "for", "class" or
"using" has not named any code).
"""

from __future__ import annotations

import posixpath

from vitalrag.model import View
from vitalrag.kernel.text import KEYWORDS, identifier_tokens

__all__ = ["KEYWORDS", "ObjectKey", "external_key", "identifier_tokens", "normalise_path",
           "object_file", "object_identifier", "object_key"]

ObjectKey = str

def normalise_path(path: str) -> str:
    """A repo-relative posix path without ``./``, ``..`` detours or backslashes."""
    if not path:
        return ""
    p = posixpath.normpath(path.replace("\\", "/"))
    return "" if p == "." else p.removeprefix("./")


def external_key(repo: str, path: str, identifier: str) -> ObjectKey:
    """The paper's adapter: (normalised path, casefolded identifier)."""
    base = f"{normalise_path(path)}::{identifier.casefold()}"
    return f"{repo}:{base}" if repo else base


def object_key(view: View) -> ObjectKey:
    """g(v): the object a view belongs to."""
    if view.object_id:
        return view.object_id
    return external_key(view.repo, view.path, view.identifier)


def object_file(view: View) -> str:
    """The file of the object ``view`` belongs to, as ``repo:path``.

    A call-site view is written in the caller's file, so for graph views the
    file comes from the node id (``repo:path:qualname``), not from the view."""
    oid = view.object_id
    if oid:
        if view.path and oid.startswith(f"{view.repo}:{view.path}:"):
            return f"{view.repo}:{normalise_path(view.path)}"
        repo, sep, rest = oid.partition(":")
        if sep and ":" in rest:
            return f"{repo}:{normalise_path(rest.rsplit(':', 1)[0])}"
    path = normalise_path(view.path)
    # an unknown path is no file: it must not make every path-less view a neighbour
    return f"{view.repo}:{path}" if path else ""


def object_identifier(view: View) -> str:
    """The identifier to show for the object of ``view``."""
    if view.identifier:
        return view.identifier
    prefix = f"{view.repo}:{view.path}:"
    if view.object_id.startswith(prefix):
        return view.object_id[len(prefix):]
    return view.object_id.rsplit(":", 1)[-1]
