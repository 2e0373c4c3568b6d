"""One text file's facts: its file object and, for documentation, its sections.

A section is an object of kind ``section``: name its title, qualname its
heading path (``Deploying > Release steps``, what a context's descriptor shows),
id the path of heading slugs (``repo:docs/DEPLOY.md:deploying/release-steps``,
readable, and stable while the headings are). Text before the first heading is
a section named after the file (slug ``top``); a second section of one slug
path gets ``#2``. Sections do not nest: a heading's section ends where the next
heading starts, whatever its level, so no line is shown twice. Config, SQL,
build files and source without a parser get their file object alone: their
views are line windows (``retrieve.views``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from vitalrag.ingest.facts import Fact, FileFacts, IdSuffixes
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline, Unindexable
from vitalrag.ingest.text.sections import HEADINGS, Section, sections
from vitalrag.kernel.text import content_hash
from vitalrag.kernel.textformats import TextFormat
from vitalrag.model import CodeObject, file_id, object_id, split_lines

#: how many first lines may say that a file is generated
GENERATED_LINES = 5
_GENERATED = re.compile(r"DO NOT EDIT|@generated")
_SLUG_DROPS = re.compile(r"[^\w]+")
#: the slug of the text before the first heading
TOP = "top"


@dataclass(frozen=True, slots=True)
class TextFacts(Fact):
    """What a text file's facts hold beyond objects: its category (``docs``,
    ``config``, ``sql``, ``build``, ``source``)."""

    category: str


def slug(title: str) -> str:
    """A heading as an id part: casefolded words joined by ``-`` (no ``:`` nor ``/``)."""
    return _SLUG_DROPS.sub("-", title.casefold()).strip("-") or "section"


def extract_text(repo: str, path: str, text: str, fmt: TextFormat,
                 deadline: Deadline = NO_DEADLINE) -> FileFacts[TextFacts]:
    """The facts of one text file of format ``fmt``; ``Unindexable`` when its
    first lines say it is generated."""
    lines = split_lines(text)
    for line in lines[:GENERATED_LINES]:
        marker = _GENERATED.search(line)
        if marker:
            raise Unindexable(f"generated: its first lines say {marker.group(0)!r}")
    fid = file_id(repo, path)
    name = posixpath.basename(path)
    facts: FileFacts[TextFacts] = FileFacts(
        path=path, language=fmt.name,
        file=CodeObject(id=fid, kind="file", name=name, qualname=path, repo=repo, path=path,
                        language=fmt.name, start_line=1, end_line=len(lines), content_hash=content_hash(text)),
        data=TextFacts(fmt.category), text=text,
    )
    if not fmt.sectioned:
        return facts
    find = HEADINGS.get(fmt.name)
    found = sections(lines, find(lines) if find is not None else [])
    deadline.check()
    suffixes = IdSuffixes()
    for s in found:
        obj = _section(repo, path, name, fmt.name, lines, s, suffixes)
        facts.objects.append(obj)
        facts.parents[obj.id] = fid
    return facts


def _section(repo: str, path: str, file_name: str, language: str, lines: list[str], s: Section,
             suffixes: IdSuffixes) -> CodeObject:
    title = s.titles[-1] if s.titles else file_name
    heading_path = " > ".join(s.titles) if s.titles else file_name
    slugs = "/".join(slug(t) for t in s.titles) if s.titles else TOP
    oid, qualname = suffixes(object_id(repo, path, slugs), heading_path)
    body = "\n".join(lines[s.start_line - 1:s.end_line])
    return CodeObject(id=oid, kind="section", name=title, qualname=qualname, repo=repo, path=path,
                      language=language, start_line=s.start_line, end_line=s.end_line,
                      signature=heading_path, content_hash=content_hash(body))
