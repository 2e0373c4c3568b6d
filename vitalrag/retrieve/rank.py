"""Ranking for the question: the stage between the retrievers and their users
(``search``, ``context``, ``get_context``, ``explain``).

Fusion ranks views; people ask about files, modules and concepts as often as
about identifiers. This stage reads the question's shape, then ranks *objects*:

1. **Shape.** A question is an ``identifier`` (``Session.send``, ``parse_header``,
   ``JsonReader``: one code-like name), ``mixed`` (prose naming code-like names:
   "how does ``JsonReader`` handle lenient parsing") or ``prose`` (a topic, a
   "how does" question, a change request). Code-like: a dotted or ``::`` path,
   snake_case, camelCase or PascalCase with two humps, backticks or a call's
   parentheses; a lone word counts only when it is the whole question and
   capitalised or a definition's name.
2. **Fusion weights by shape.** Each view's retriever ranks are fused again
   (reciprocal rank): an identifier leans on BM25 and the walk from the named
   definitions, prose on the dense retriever.
3. **Quotient.** One object, one entry: its strongest view's score.
4. **Named definitions.** An object whose name is one the question writes
   code-like (its qualifier, if any, naming its container) is lifted above
   everything else found (a third of that for ``mixed``); definitions the
   retrievers missed are brought in through the index's names.
5. **Where the code lives.** For prose, the share of the question's words that
   name the object's file or folder (prefix-tolerant: "sessions" is "session",
   "templating" is "template"), each word weighted by how few files of the
   repository it names (a word in every path, such as the package's own name,
   says nothing), lifts the object by up to twice the top score (a file named
   well enough that no retriever found joins the candidates with its object the
   words name best: "unit tests for printing numbers" and
   ``tests/print_number.c``); a file holding
   several strong objects (at least half the top score) lifts its best one
   (coherence).
6. **Priors.** Tests (unless the question is about tests), re-export files
   (``__init__.py``, ``package-info.java``) and compat, legacy and example
   folders count less.
7. **Spread.** Each further object of a file already listed counts half as
   much again, so the list covers more files.

``search`` takes every step; ``context`` all but 6 and 7 (see ``rank``).

Every step reads only the views, their paths and the index's names, so the
embedded and the Neo4j stores rank alike.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from vitalrag.kernel.paths import is_test_path
from vitalrag.kernel.text import STOPWORDS, identifier_parts
from vitalrag.model import ScoredView, View

#: how much each retriever counts in the fused score, by question shape
WEIGHTS: Mapping[str, Mapping[str, float]] = {
    "identifier": {"bm25": 1.5, "walk": 1.0, "dense": 0.6},
    "mixed": {"bm25": 1.5, "walk": 1.0, "dense": 1.0},
    "prose": {"bm25": 1.5, "walk": 1.0, "dense": 1.0},
}
RRF_K = 60
#: a named definition is lifted by this many top scores (``mixed``: a third)
NAMED_LIFT = 3.0
#: the path words lift an object by up to this many top scores (bench/nl_quality.py's
#: dev questions: NDCG@10 0.893 at 1.0, 0.903 at 2.0, 0.899 at 3.0)
PATH_LIFT = 2.0
#: a file whose name or folder the question's words name by at least this share
#: (``PathWords.match``) is looked at even when no retriever found it: its object
#: the words name best joins the candidates, for the path words to lift (at most
#: ``PATH_FIND_MOST`` such files, the best named first)
PATH_FIND = 0.3
PATH_FIND_MOST = 3
#: the allocator's pool holds the best object of this many further files besides its
#: first views (bench/nl_quality.py, 205 questions: context R@1K/2K/4K/8K +0.5/+0.9/
#: +0.8/+1.5 points at 30, the same at 60; the history questions unchanged)
POOL_FILES = 30
#: a file's best object is lifted by up to this share of the top score
COHERENCE_LIFT = 0.2
#: the objects that count for their file's coherence: at least this share of the top score
STRONG = 0.5
#: each further object of a listed file is multiplied by this
SPREAD_DECAY = 0.5
TEST_PRIOR = 0.3
REEXPORT_PRIOR = 0.5
ASIDE_PRIOR = 0.3

_REEXPORT_FILES = frozenset({"__init__.py", "package-info.java", "module-info.java", "mod.rs", "index.js",
                             "index.ts"})
_ASIDE_FOLDERS = frozenset({"compat", "_compat", "legacy", "example", "examples", "_examples", "docs_src"})
_TEST_WORDS = frozenset({"test", "tests", "testing", "fixture", "fixtures", "mock", "mocks", "assert",
                         "assertion", "pytest", "junit", "spec", "specs"})
_WORD = re.compile(r"[^\W\d]\w*")
_QUALIFIED = re.compile(r"[^\W\d][\w$]*(?:(?:\.|::|#|->)[^\W\d][\w$]*)+")
# "_+\w+" once is the same as repeated (\w holds "_"), and repeated it backtracks
# exponentially on a long snake_case token that fails at its end ("a_b_..._z-")
_SNAKE = re.compile(r"_*[^\W\d_]+_\w+|_\w+")
_CAMEL = re.compile(r"[a-z][a-z0-9]*[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}[a-z]\w*")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_CALL = re.compile(r"\(?([^\W\d][\w.$]*)\((?:\)\)?)?")


@dataclass(frozen=True, slots=True)
class Shape:
    """What kind of question: ``identifier``, ``mixed`` or ``prose``; the code-like
    names it writes (as written, qualified ones whole); its content words
    (casefolded, function words out)."""

    kind: str
    names: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    about_tests: bool = False


def _code_like(token: str) -> bool:
    return bool(_QUALIFIED.fullmatch(token) or _SNAKE.fullmatch(token) or _CAMEL.fullmatch(token))


def shape(text: str, defined: Container[str] = frozenset()) -> Shape:
    """The shape of the question ``text``; ``defined``: which of its lone words
    name a definition in the index (a lone-word question naming one is an
    identifier)."""
    names: list[str] = [m.strip().rstrip("()") for m in _CODE_SPAN.findall(text)]
    plain = _CODE_SPAN.sub(" ", text)
    for token in re.findall(r"[^\s,;:!?\"'\[\]{}<>]+", plain):
        token = token.rstrip(".")
        call = _CALL.fullmatch(token)
        if call:  # a call, "send()" or "send(": code whatever its case
            names.append(call.group(1))
        elif _code_like(token := token.strip("().")):
            names.append(token)
    words = [w.casefold() for w in _WORD.findall(text)]
    content = tuple(dict.fromkeys(w for w in words if len(w) > 2 and w not in STOPWORDS))
    about_tests = any(w in _TEST_WORDS or w.startswith("test") for w in words)
    lone = text.strip().strip("`").removesuffix("()")
    if len(_WORD.findall(lone)) == 1 and _WORD.fullmatch(lone) and (lone[:1].isupper() or lone in defined):
        names.append(lone)
    names = list(dict.fromkeys(n for n in names if n))
    if not names:
        return Shape("prose", (), content, about_tests)
    covered = {p for n in names for part in re.split(r"\W+", n) if part for p in identifier_parts(part)}
    rest = [w for w in content if w not in covered]
    return Shape("identifier" if not rest else "mixed", tuple(names), content, about_tests)


def _tail(name: str) -> tuple[str, str | None]:
    """``Session.send`` -> ("send", "Session"); ``send`` -> ("send", None)."""
    parts = [p for p in re.split(r"\.|::|#|->", name) if p]
    return parts[-1], (parts[-2] if len(parts) > 1 else None)


def named_ids(shape_: Shape, names_of: Mapping[str, Sequence[str]]) -> set[str]:
    """The object ids the question names: a definition called like a name's last
    part, inside a container called like its qualifier when it has one."""
    out: set[str] = set()
    for name in shape_.names:
        tail, qualifier = _tail(name)
        for oid in names_of.get(tail, ()):
            if qualifier is None or _qualifier_matches(oid, qualifier):
                out.add(oid)
    return out


def _qualifier_matches(oid: str, qualifier: str) -> bool:
    # an id is repo:path:Outer.Inner.name(params); the qualifier names a container
    # in its dotted part, or the file (a module: "sessions.send")
    _, path, qual = _split_id(oid)
    containers = qual.split("(", 1)[0].split(".")[:-1]
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return qualifier in containers or qualifier == stem


def _split_id(oid: str) -> tuple[str, str, str]:
    repo, _, rest = oid.partition(":")
    path, _, qual = rest.partition(":")
    return repo, path, qual


# -- path words ----------------------------------------------------------------------------

def _path_parts(path: str) -> frozenset[str]:
    """The words of a file's name and of the folder holding it."""
    segments = path.split("/")
    out: set[str] = set()
    for seg in segments[-2:]:
        stem = seg.split(".", 1)[0]
        for ident in _WORD.findall(stem):
            out.update(p for p in identifier_parts(ident) if len(p) > 2)
    return frozenset(out)


def same_word(a: str, b: str) -> bool:
    """One word in two forms: equal, one a prefix of the other (of four letters or
    more, or ending two letters short: "app"/"apps" but not "cli"/"client"), or
    sharing a prefix of at least four letters and three quarters of the shorter
    ("templating"/"template", "registration"/"register")."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < 3:
        return False
    if long_.startswith(short) and (len(short) >= 4 or len(long_) - len(short) <= 2):
        return True
    common = len(_common_prefix(a, b))
    return common >= 4 and common >= math.ceil(0.75 * len(short))


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


@dataclass
class PathWords:
    """How informative each word is about a repository's files: a word naming
    few files (by their name or folder) says much, one in every path nothing."""

    paths: Sequence[str]
    _parts: dict[str, frozenset[str]] = field(default_factory=dict)
    _weight: dict[str, float] = field(default_factory=dict)

    def parts(self, path: str) -> frozenset[str]:
        found = self._parts.get(path)
        if found is None:
            found = self._parts[path] = _path_parts(path)
        return found

    def weight(self, word: str) -> float:
        w = self._weight.get(word)
        if w is None:
            n = len(self.paths)
            hits = sum(1 for p in self.paths if any(same_word(word, part) for part in self.parts(p)))
            w = self._weight[word] = 0.0 if n == 0 or hits == 0 else max(0.0, 1.0 - hits / n)
        return w

    def match(self, words: Sequence[str], path: str) -> float:
        """The weighted share of ``words`` naming ``path``'s file or folder."""
        if not words:
            return 0.0
        parts = self.parts(path)
        got = sum(self.weight(w) for w in words if any(same_word(w, p) for p in parts))
        return got / len(words)

    def named(self, words: Sequence[str], least: float, most: int, skip: Container[str] = ()) -> list[str]:
        """The ``most`` paths (not in ``skip``) that ``words`` name best, each by at
        least ``least``."""
        scored = [(m, p) for p in self.paths if p not in skip and (m := self.match(words, p)) >= least]
        return [p for _, p in sorted(scored, key=lambda mp: (-mp[0], mp[1]))[:most]]


def path_words(shape_: Shape) -> list[str]:
    """The question's words that may name a file: its content words but the parts
    of the names it writes (those name definitions)."""
    named = {p for n in shape_.names for p in identifier_parts(_tail(n)[0])}
    return [w for w in shape_.words if w not in named]


def files_named(text: str, hits: Sequence[ScoredView], *, names_of: Mapping[str, Sequence[str]],
                paths: PathWords) -> list[str]:
    """The files the question's words name (``PATH_FIND``) that no view in ``hits``
    is from: a prose question about "printing numbers" and a test file
    ``print_number.c`` whose functions share no word with it."""
    sh = shape(text, names_of)
    if sh.kind == "identifier" or not sh.words:
        return []
    return paths.named(path_words(sh), PATH_FIND, PATH_FIND_MOST, skip={h.view.path for h in hits})


# -- the stage --------------------------------------------------------------------------------

def prior(path: str, about_tests: bool) -> float:
    """How much an object counts for where it lives."""
    name = path.rsplit("/", 1)[-1]
    folders = path.split("/")[:-1]
    p = 1.0
    if not about_tests and is_test_path(path):
        p *= TEST_PRIOR
    if name in _REEXPORT_FILES:
        p *= REEXPORT_PRIOR
    if any(f.lower() in _ASIDE_FOLDERS for f in folders):
        p *= ASIDE_PRIOR
    return p


def fuse(hits: Iterable[ScoredView], weights: Mapping[str, float]) -> dict[str, float]:
    """Each view's score again from its ranks, with ``weights`` by retriever."""
    return {h.view.id: sum(weights.get(name, 1.0) / (RRF_K + rank) for name, rank in h.retrievers)
            for h in hits}


@dataclass(frozen=True, slots=True)
class Ranked:
    """The stage's answer: each object's best view, in order, with its final
    score (``objects``), and every view found rescored to follow its object's
    place (``views``: what the allocator chooses from)."""

    objects: list[ScoredView]
    views: list[ScoredView]
    shape: Shape
    #: how many views the fusion ranked above each view (its place in the fused list)
    fused_rank: Mapping[str, int] = field(default_factory=dict)

    def pool(self, n: int) -> list[ScoredView]:
        """What an allocator chooses from: the views the fusion ranked in its first
        ``n`` and the best view of each of the first ``n`` objects, in their
        objects' order, ``n`` at most (``views[:n]`` would give the first objects'
        every call site and window, and fewer objects); then the best object of
        each further file, in rank order, ``POOL_FILES`` at most (the first objects'
        views fill ``n`` long before the objects of the tenth file are reached)."""
        best = {sv.view.id for sv in self.objects[:n]}
        out = [sv for sv in self.views if self.fused_rank.get(sv.view.id, n) < n or sv.view.id in best][:n]
        files = {sv.view.path for sv in out}
        taken = {sv.view.id for sv in out}
        for sv in self.objects:
            if len(out) >= n + POOL_FILES:
                break
            if sv.view.path not in files and sv.view.id not in taken:
                out.append(sv)
                files.add(sv.view.path)
                taken.add(sv.view.id)
        return out


def rank(text: str, hits: Sequence[ScoredView], *, names_of: Mapping[str, Sequence[str]],
         extra: Mapping[str, View] | None = None, paths: PathWords | None = None,
         located: Sequence[View] = (), spread: bool = True, priors: bool = True) -> Ranked:
    """Rank the fused ``hits`` for the question ``text``.

    ``spread``: each further object of a file counts less (a ranked list a
    person reads); ``priors``: tests, re-exports and aside folders count less.
    ``context`` ranks without either: its allocator keeps one slot per object,
    puts tests after code itself and its outline spreads over files, and the
    definitions a change touches are often in one file (bench/context_quality.py's
    history questions at 4K: entry 75.6 with both, 82.5 without the spread,
    84.7 without either, 83.5 with no ranking stage).

    ``names_of``: the index's object ids by name, for the question's names;
    ``extra``: a view (the body) of each named object, for those the retrievers
    missed; ``paths``: the repository's file paths (for the path words);
    ``located``: a view of each file ``files_named`` found (entering at score 0,
    for the path words to lift)."""
    sh = shape(text, names_of)
    weights = WEIGHTS[sh.kind]
    fused = fuse(hits, weights)
    named = named_ids(sh, names_of)

    # the quotient: one entry per object, its strongest view
    best: dict[str, ScoredView] = {}
    for h in hits:
        s = fused[h.view.id]
        cur = best.get(h.view.object_id)
        if cur is None or s > cur.score:
            best[h.view.object_id] = ScoredView(h.view, s, h.retrievers)
    for oid in named:
        if oid not in best and extra and oid in extra:
            best[oid] = ScoredView(extra[oid], 0.0, ())
        elif oid in best and best[oid].view.kind == "call_site":
            # a named definition is shown where it is defined, not where it is called
            own = max((h for h in hits if h.view.object_id == oid and h.view.kind != "call_site"),
                      key=lambda h: fused[h.view.id], default=None)
            body = own.view if own is not None else (extra or {}).get(oid)
            if body is not None:
                best[oid] = ScoredView(body, best[oid].score, best[oid].retrievers)
    for view in located:
        best.setdefault(view.object_id, ScoredView(view, 0.0, ()))
    if not best:
        return Ranked([], [], sh)
    top = max(s.score for s in best.values()) or 1.0 / RRF_K
    score = {oid: sv.score for oid, sv in best.items()}

    # where the code lives: a file found several times lifts its best object
    per_file: dict[str, float] = defaultdict(float)
    lead: dict[str, str] = {}
    for oid, sv in best.items():
        if sv.score < STRONG * top:
            continue
        per_file[sv.view.path] += sv.score
        if sv.view.path not in lead or sv.score > best[lead[sv.view.path]].score:
            lead[sv.view.path] = oid
    most = max(per_file.values(), default=0.0) or 1.0
    for path, oid in lead.items():
        score[oid] += COHERENCE_LIFT * top * per_file[path] / most

    if sh.kind != "identifier" and paths is not None and sh.words:
        words = path_words(sh)
        for oid, sv in best.items():
            m = paths.match(words, sv.view.path)
            if m > 0:
                score[oid] += PATH_LIFT * top * m

    lift = NAMED_LIFT * (1.0 if sh.kind == "identifier" else 1 / 3)
    for oid in named & best.keys():
        score[oid] += lift * top

    if priors:
        for oid, sv in best.items():
            score[oid] *= prior(sv.view.path, sh.about_tests)

    # spread: each further object of a listed file counts half as much again
    # (decay only lowers a score, so an entry re-scored for its file's count is
    # pushed back and taken once nothing left can beat it)
    decay = SPREAD_DECAY if spread else 1.0
    heap = [(-s, o, 0) for o, s in score.items()]
    heapq.heapify(heap)
    taken: dict[str, int] = defaultdict(int)
    final: dict[str, float] = {}
    while heap:
        neg, o, seen = heapq.heappop(heap)
        path = best[o].view.path
        if seen != taken[path]:
            heapq.heappush(heap, (-score[o] * decay ** taken[path], o, taken[path]))
            continue
        final[o] = -neg
        taken[path] += 1
    objects = [ScoredView(best[o].view, final[o], best[o].retrievers)
               for o in sorted(final, key=lambda o: (-final[o], o))]

    # every view, its object's place kept: the best view takes the object's score,
    # the others follow it in their fused order
    views: list[ScoredView] = []
    by_object: dict[str, list[ScoredView]] = defaultdict(list)
    for h in hits:
        by_object[h.view.object_id].append(h)
    for sv in objects:
        oid = sv.view.object_id
        views.append(sv)
        rest = sorted((h for h in by_object.get(oid, ()) if h.view.id != sv.view.id),
                      key=lambda h: (-fused[h.view.id], h.view.id))
        base = best[oid].score or 1.0
        views.extend(ScoredView(h.view, sv.score * fused[h.view.id] / base * 0.999, h.retrievers)
                     for h in rest)
    return Ranked(objects, views, sh, {h.view.id: i for i, h in enumerate(hits)})
