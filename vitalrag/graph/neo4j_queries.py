"""Every Cypher statement the Neo4j store runs, as constants or small builders.

Values always travel as ``$parameters``. The only text spliced into a query is
labels and relationship types, and those come from the closed sets in
``vitalrag.model`` (``NODE_KINDS``, ``EDGE_KINDS``) after validation, property
names from the fixed tuple ``OBJECT_FILTERS``, and integers this module checks;
nothing a user or a parsed repository wrote ever becomes query text.

Graph layout (layout 3; a database of another layout is re-indexed, not migrated)::

    (:CodeObject:<Kind> {id, kind, name, ..., caption, born, died})   one per code object and version
    (a)-[:CALLS {lines, born, died}]->(b)                one per edge, type = edge kind
    (:CodeObject)-[:UNRESOLVED]->(:Unresolved {key, repo, source, kind, name, line, reason, born, died})
    (:Source {id, repo, text, born, died})               file text, id = file node id
    (:RepositoryMeta {repo, json, born, died})           per-repository metadata
    (:RepositoryVersion {repo, current, writer, lease_until, flips, flipped_at})
    (:VitalRAGSchema {name: "vitalrag", version, layout})   the schema version of the data

**Versions.** Every node of a repository's copy and every edge is part of the
versions ``born <= v < died`` of its repository (``died`` is ``ALIVE`` until a
version removes it). ``RepositoryVersion.current`` is the version readers see;
each read passes ``$pin`` (repository -> version) and keeps only what ``seen``
says is in it. A writer holds a lease on the repository (``writer``,
``lease_until``) and writes version current+1 beside the live one: what it
removes or replaces gets ``died`` = that version, what it adds ``born`` = that
version, the rest is shared. One short transaction then moves ``current``
(``FLIP``). What a version removed stays for readers still pinned to the old one
and is deleted a grace period after the flip (``flips``/``flipped_at``); what a
killed writer left (born or ended after ``current``) is undone by the next one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from vitalrag.errors import InputError
from vitalrag.model import EDGE_KINDS, NODE_KINDS

#: node kind -> the label it gets besides ``:CodeObject``
KIND_LABELS: dict[str, str] = {
    "repository": "Repository",
    "module": "Module",
    "file": "File",
    "class": "Class",
    "interface": "Interface",
    "enum": "Enum",
    "function": "Function",
    "method": "Method",
    "test": "Test",
    "section": "Section",
}
assert set(KIND_LABELS) == set(NODE_KINDS)

#: the filters ``find_objects`` accepts, which are also property names
OBJECT_FILTERS: tuple[str, ...] = ("repo", "kind", "path", "name")

_ALL_EDGE_TYPES = "|".join(EDGE_KINDS)

#: ``died`` of what no version has removed (a version number never gets there)
ALIVE = 2**62
#: the layout of the data this module reads and writes (see the module docstring)
LAYOUT = 3
#: labels whose nodes belong to one version of one repository
VERSIONED_LABELS: tuple[str, ...] = ("CodeObject", "Source", "Unresolved", "RepositoryMeta", "View",
                                     "RetrievalMeta")


def seen(var: str, repo: str | None = None) -> str:
    """Cypher: ``var`` is in the version ``$pin`` names for its repository (``repo``:
    the expression naming that repository, by default ``var.repo``)."""
    return f"{var}.born <= $pin[{repo or var + '.repo'}] < {var}.died"


def _retire(var: str) -> str:
    """The tail of a statement that matched ``var``: remove it from the version being
    written. Made by that version, it is deleted; older, it ends there (readers of the
    live version still see it)."""
    return (
        f"WITH {var}, $pin[{var}.repo] AS w, {var}.born = $pin[{var}.repo] AS mine "
        f"CALL ({var}, w, mine) {{ WITH {var}, w, mine WHERE NOT mine SET {var}.died = w }} "
        f"CALL ({var}, mine) {{ WITH {var}, mine WHERE mine DETACH DELETE {var} }}"
    )


def _put_versioned(label: str, key: str, after_create: str = "") -> str:
    """Insert or replace ``label`` nodes by ``key`` in the version being written
    (rows ``{key, repo, props}``): a node that version made is updated in place, an
    older one ends there and a new one is made."""
    return (
        "UNWIND $rows AS row "
        "WITH row, $pin[row.repo] AS w "
        f"OPTIONAL MATCH (o:{label} {{{key}: row.key}}) WHERE {seen('o')} "
        "WITH row, w, o, o IS NOT NULL AND o.born = w AS mine "
        f"CALL (o, row, w, mine) {{ WITH o, row, w, mine WHERE mine SET o = row.props, o.born = w, o.died = {ALIVE} }} "
        "CALL (o, row, w, mine) { WITH o, row, w, mine WHERE NOT mine "
        f"CREATE (n:{label}) SET n = row.props, n.born = w, n.died = {ALIVE} "
        "WITH o, n, w "
        "CALL (o, w) { WITH o, w WHERE o IS NOT NULL SET o.died = w } "
        f"{after_create}}} "
        "RETURN count(*) AS written"
    )

# -- schema ------------------------------------------------------------------

SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT vitalrag_schema_name IF NOT EXISTS FOR (v:VitalRAGSchema) REQUIRE v.name IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_repository_version IF NOT EXISTS FOR (g:RepositoryVersion) REQUIRE g.repo IS UNIQUE",
    "CREATE INDEX vitalrag_object_lookup IF NOT EXISTS FOR (n:CodeObject) ON (n.id)",
    "CREATE INDEX vitalrag_object_repo_path IF NOT EXISTS FOR (n:CodeObject) ON (n.repo, n.path)",
    "CREATE INDEX vitalrag_object_repo IF NOT EXISTS FOR (n:CodeObject) ON (n.repo)",
    "CREATE INDEX vitalrag_object_kind IF NOT EXISTS FOR (n:CodeObject) ON (n.kind)",
    "CREATE INDEX vitalrag_object_name IF NOT EXISTS FOR (n:CodeObject) ON (n.name)",
    "CREATE INDEX vitalrag_object_path IF NOT EXISTS FOR (n:CodeObject) ON (n.path)",
    "CREATE INDEX vitalrag_unresolved_lookup IF NOT EXISTS FOR (u:Unresolved) ON (u.key)",
    "CREATE INDEX vitalrag_unresolved_source IF NOT EXISTS FOR (u:Unresolved) ON (u.source)",
    "CREATE INDEX vitalrag_unresolved_repo IF NOT EXISTS FOR (u:Unresolved) ON (u.repo)",
    "CREATE INDEX vitalrag_source_lookup IF NOT EXISTS FOR (s:Source) ON (s.id)",
    "CREATE INDEX vitalrag_source_repo IF NOT EXISTS FOR (s:Source) ON (s.repo)",
    "CREATE INDEX vitalrag_meta_lookup IF NOT EXISTS FOR (m:RepositoryMeta) ON (m.repo)",
)

SCHEMA_AWAIT = "CALL db.awaitIndexes(300)"

GET_SCHEMA_VERSION = (
    "MATCH (v:VitalRAGSchema {name: 'vitalrag'}) RETURN v.version AS version, v.layout AS layout"
)

SET_SCHEMA_VERSION = (
    "MERGE (v:VitalRAGSchema {name: 'vitalrag'}) SET v.version = $version, v.layout = $layout"
)

# -- versions: pins, leases, the flip, garbage ------------------------------------------

#: (reads that may give hundreds of rows return them as one record, ``rows``: a
#: list of maps, read by ``Neo4jStore.read_rows``; the driver handles each record
#: on its own, about 20 µs apiece)
PINS = "MATCH (g:RepositoryVersion) RETURN collect({repo: g.repo, current: g.current}) AS rows"

#: take the write lease of a repository when no live writer holds it; ``expired``:
#: the last holder never gave it back (killed), so what it wrote must be undone
TAKE_LEASE = (
    "MERGE (g:RepositoryVersion {repo: $repo}) "
    "ON CREATE SET g.current = 0, g.flips = [], g.flipped_at = [] "
    "WITH g, timestamp() AS now, g.writer AS holder, g.lease_until AS until "
    "WITH g, now, holder, until, holder IS NULL OR until < now AS free "
    "CALL (g, now, free) { WITH g, now, free WHERE free SET g.writer = $token, g.lease_until = now + $lease_ms } "
    "RETURN free, free AND holder IS NOT NULL AS expired, g.current AS current, until - now AS left"
)

RENEW_LEASES = (
    "UNWIND $repos AS repo MATCH (g:RepositoryVersion {repo: repo}) WHERE g.writer = $token "
    "SET g.lease_until = timestamp() + $lease_ms RETURN count(*) AS n"
)

RELEASE_LEASES = (
    "UNWIND $repos AS repo MATCH (g:RepositoryVersion {repo: repo}) WHERE g.writer = $token "
    "SET g.writer = null, g.lease_until = null"
)

#: make the written versions current, all in one transaction, and give the leases back
FLIP = (
    "UNWIND $rows AS row MATCH (g:RepositoryVersion {repo: row.repo}) WHERE g.writer = $token "
    "SET g.current = row.version, g.flips = g.flips + row.version, g.flipped_at = g.flipped_at + timestamp(), "
    "g.writer = null, g.lease_until = null, g.grace_ms = $grace_ms "
    "RETURN count(*) AS n"
)

#: the newest version whose flip is at least ``$grace_ms`` old: what it and the ones
#: before it removed is read by no one any more
DUE = (
    "MATCH (g:RepositoryVersion {repo: $repo}) "
    "RETURN reduce(due = null, i IN range(0, size(g.flips) - 1) | "
    "CASE WHEN g.flipped_at[i] <= timestamp() - $grace_ms THEN g.flips[i] ELSE due END) AS due"
)

#: the repositories other than ``$skip`` with no writer now and a flip older than
#: the grace its writer gave it whose
#: leftovers are not collected yet: a deleted repository, or one never written
#: again since, keeps them until someone collects
DUE_ELSEWHERE = (
    "MATCH (g:RepositoryVersion) WHERE NOT g.repo IN $skip AND g.writer IS NULL "
    "WITH g, g.grace_ms AS grace "
    "WHERE any(t IN g.flipped_at WHERE t <= timestamp() - grace) "
    "RETURN g.repo AS repo, grace ORDER BY repo"
)

FORGET_FLIPS = (
    "MATCH (g:RepositoryVersion {repo: $repo}) "
    "SET g.flipped_at = [i IN range(0, size(g.flips) - 1) WHERE g.flips[i] > $upto | g.flipped_at[i]], "
    "g.flips = [f IN g.flips WHERE f > $upto]"
)

_GARBAGE = {
    "ended": "x.died <= $upto",              # removed by a version readers no longer see
    "unborn": "x.born > $upto",              # written after the current version by a writer that died
    "reopen": f"$upto < x.died < {ALIVE}",   # removed by such a writer: alive again
}


def garbage_nodes(label: str, what: str) -> str:
    """Up to ``$batch`` nodes of ``label`` of ``$repo``, deleted (``ended``, ``unborn``)
    or made alive again (``reopen``); returns how many."""
    if label not in VERSIONED_LABELS:
        raise ValueError(f"not a versioned label: {label!r}")
    act = f"SET x.died = {ALIVE}" if what == "reopen" else "DETACH DELETE x"
    return (f"MATCH (x:{label} {{repo: $repo}}) WHERE {_GARBAGE[what]} WITH x LIMIT $batch {act} "
            "RETURN count(*) AS n")


def garbage_edges(what: str) -> str:
    """Up to ``$batch`` edges from objects of ``$repo``, as ``garbage_nodes``."""
    act = f"SET x.died = {ALIVE}" if what == "reopen" else "DELETE x"
    return (f"MATCH (:CodeObject {{repo: $repo}})-[x:{_ALL_EDGE_TYPES}]->() WHERE {_GARBAGE[what]} "
            f"WITH x LIMIT $batch {act} RETURN count(*) AS n")


# -- writes ------------------------------------------------------------------


def kind_label(kind: str) -> str:
    """The label of a node kind; anything outside ``NODE_KINDS`` is refused."""
    try:
        return KIND_LABELS[kind]
    except KeyError:
        raise InputError(f"unknown object kind {kind!r} (expected one of {', '.join(NODE_KINDS)})") from None


def edge_type(kind: str) -> str:
    """The relationship type of an edge kind; anything outside ``EDGE_KINDS`` is refused."""
    if kind not in EDGE_KINDS:
        raise InputError(f"unknown edge kind {kind!r} (expected one of {', '.join(EDGE_KINDS)})")
    return kind


def upsert_objects(kind: str) -> str:
    """Insert or replace a batch of one kind by id in the version being written. An
    object that version made is updated in place (its kind label too); an older one
    ends there and a new node takes its place, with a copy of every link whose other
    end is in the version (edges both ways, self-loops, unresolved references, views)."""
    label = kind_label(kind)
    others = ":".join(v for v in KIND_LABELS.values() if v != label)
    return (
        "UNWIND $rows AS row "
        "WITH row, $pin[row.props.repo] AS w "
        f"OPTIONAL MATCH (o:CodeObject {{id: row.id}}) WHERE {seen('o')} "
        "WITH row, w, o, o IS NOT NULL AND o.born = w AS mine "
        "CALL (o, row, w, mine) { WITH o, row, w, mine WHERE mine "
        f"SET o = row.props, o.born = w, o.died = {ALIVE} REMOVE o:{others} SET o:{label} }} "
        "CALL (o, row, w, mine) { WITH o, row, w, mine WHERE NOT mine "
        f"CREATE (n:CodeObject:{label}) SET n = row.props, n.born = w, n.died = {ALIVE} "
        "WITH o, n, w WHERE o IS NOT NULL "
        "SET o.died = w "
        "WITH o, n, w "
        "CALL (o, n, w) { MATCH (o)-[r]->(t) "
        f"WHERE t <> o AND (r.born IS NULL OR r.born <= w < r.died) AND {seen('t')} "
        "CREATE (n)-[c:$(type(r))]->(t) SET c = properties(r) } "
        "CALL (o, n) { MATCH (o)<-[r]-(s) "
        f"WHERE s <> o AND (r.born IS NULL OR {seen('r', 's.repo')}) AND {seen('s')} "
        "CREATE (s)-[c:$(type(r))]->(n) SET c = properties(r) } "
        "CALL (o, n, w) { MATCH (o)-[r]->(o) WHERE r.born IS NULL OR r.born <= w < r.died "
        "CREATE (n)-[c:$(type(r))]->(n) SET c = properties(r) } "
        "}"
    )


def create_objects(kind: str) -> str:
    """CREATE a batch of one kind: for a version known to hold none of them."""
    return (f"UNWIND $rows AS row CREATE (n:CodeObject:{kind_label(kind)}) "
            f"SET n = row.props, n.born = $pin[row.props.repo], n.died = {ALIVE}")


MISSING_OBJECTS = (
    "UNWIND $ids AS id "
    f"OPTIONAL MATCH (n:CodeObject {{id: id}}) WHERE {seen('n')} "
    "WITH id, n WHERE n IS NULL "
    "RETURN id"
)

_EDGE_ENDS = (
    "UNWIND $rows AS row "
    f"MATCH (s:CodeObject {{id: row.source}}) WHERE {seen('s')} "
    f"MATCH (t:CodeObject {{id: row.target}}) WHERE {seen('t')} "
)


def upsert_edges(kind: str) -> str:
    """Insert or replace a batch of one edge kind; ``lines`` are replaced, as in the
    embedded store (an edge the version being written made is updated in place, an
    older one ends there and a new one starts)."""
    rel = edge_type(kind)
    return (
        _EDGE_ENDS
        + "WITH row, s, t, $pin[s.repo] AS w "
        f"OPTIONAL MATCH (s)-[r:{rel}]->(t) WHERE r.born <= w < r.died "
        "WITH row, s, t, w, r, r IS NOT NULL AND r.born = w AS mine "
        "CALL (r, row, mine) { WITH r, row, mine WHERE mine SET r.lines = row.lines } "
        "CALL (s, t, r, row, w, mine) { WITH s, t, r, row, w, mine WHERE NOT mine "
        f"CREATE (s)-[:{rel} {{lines: row.lines, born: w, died: {ALIVE}}}]->(t) "
        "WITH r, w WHERE r IS NOT NULL SET r.died = w } "
        "RETURN count(*) AS written"
    )


def create_edges(kind: str) -> str:
    """CREATE a batch of one edge kind between existing nodes (no lookup of the edge)."""
    rel = edge_type(kind)
    return (
        _EDGE_ENDS
        + f"CREATE (s)-[r:{rel}]->(t) SET r.lines = row.lines, r.born = $pin[s.repo], r.died = {ALIVE} "
        "RETURN count(*) AS written"
    )


def delete_edges(kind: str) -> str:
    """Remove a batch of edges of one kind by (source, target); missing ones are no-ops."""
    rel = edge_type(kind)
    return (
        "UNWIND $rows AS row "
        f"MATCH (s:CodeObject {{id: row.source}}) WHERE {seen('s')} "
        f"MATCH (s)-[r:{rel}]->(t:CodeObject {{id: row.target}}) WHERE {seen('t')} AND {seen('r', 's.repo')} "
        "WITH r, $pin[s.repo] AS w "
        "WITH r, w, r.born = w AS mine "
        "CALL (r, w, mine) { WITH r, w, mine WHERE NOT mine SET r.died = w } "
        "CALL (r, mine) { WITH r, mine WHERE mine DELETE r }"
    )


#: rows ``{key, repo, props}``; linked from their source object when it is in the version
UPSERT_UNRESOLVED = _put_versioned(
    "Unresolved", "key",
    f"WITH n OPTIONAL MATCH (s:CodeObject {{id: n.source}}) WHERE {seen('s')} "
    "FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | CREATE (s)-[:UNRESOLVED]->(n)) ",
)

#: for a version known to hold none of these references
CREATE_UNRESOLVED = (
    "UNWIND $rows AS row "
    f"CREATE (u:Unresolved) SET u = row.props, u.born = $pin[row.repo], u.died = {ALIVE} "
    "WITH u "
    f"MATCH (s:CodeObject {{id: u.source}}) WHERE {seen('s')} "
    "CREATE (s)-[:UNRESOLVED]->(u)"
)

#: rows ``{key: file id, repo, props: {id, repo, text}}``
PUT_SOURCES = _put_versioned("Source", "id")

#: rows ``{key: repo, repo, props: {repo, json}}``
SET_META = _put_versioned("RepositoryMeta", "repo")

#: the ids of the objects in ``$paths`` of ``$repo``
FILE_OBJECT_IDS = (
    f"MATCH (n:CodeObject {{repo: $repo}}) WHERE n.path IN $paths AND {seen('n')} RETURN n.id AS id"
)

#: objects by id, with their sources and unresolved references (three statements,
#: run in this order in one transaction)
DELETE_OBJECTS: tuple[str, ...] = (
    f"UNWIND $ids AS id MATCH (x:Unresolved {{source: id}}) WHERE {seen('x')} " + _retire("x"),
    f"UNWIND $ids AS id MATCH (x:Source {{id: id}}) WHERE {seen('x')} " + _retire("x"),
    f"UNWIND $ids AS id MATCH (x:CodeObject {{id: id}}) WHERE {seen('x')} " + _retire("x"),
)

DELETE_UNRESOLVED = f"UNWIND $keys AS key MATCH (x:Unresolved {{key: key}}) WHERE {seen('x')} " + _retire("x")

REPOSITORY_PATHS = f"MATCH (n:CodeObject {{repo: $repo}}) WHERE {seen('n')} RETURN DISTINCT n.path AS path"

DELETE_META = f"MATCH (x:RepositoryMeta {{repo: $repo}}) WHERE {seen('x')} " + _retire("x")

# -- reads -------------------------------------------------------------------

GET_OBJECTS = (
    f"UNWIND $ids AS id MATCH (n:CodeObject {{id: id}}) WHERE {seen('n')} RETURN collect({{n: n {{.*}}}}) AS rows"
)


def find_objects(filters: Sequence[str]) -> str:
    """Objects matching every filter named in ``filters`` (each a ``$param`` of the same name)."""
    for f in filters:
        if f not in OBJECT_FILTERS:
            raise ValueError(f"not an object filter: {f!r}")
    where = " AND ".join([*(f"n.{f} = ${f}" for f in filters), seen("n")])
    return f"MATCH (n:CodeObject) WHERE {where} RETURN n {{.*}} AS n"


def rel_types(kinds: Sequence[str] | None) -> str | None:
    """``CALLS|IMPORTS`` for the known kinds among ``kinds``; every edge type when
    ``kinds`` is None or empty; None when no kind asked for is an edge kind (no match)."""
    if not kinds:
        return _ALL_EDGE_TYPES
    known = [k for k in EDGE_KINDS if k in set(kinds)]
    return "|".join(known) if known else None


_EDGE_RETURN = "RETURN s.id AS source, t.id AS target, type(r) AS kind, r.lines AS lines"
#: an edge ``r`` from ``s`` to ``t``, all three in the pinned versions
_EDGE_SEEN = f"{seen('s')} AND {seen('t')} AND {seen('r', 's.repo')}"


def find_edges(types: str, *, repo: bool, source: bool, target: bool) -> str:
    """Edges of ``types`` (from ``rel_types``), filtered by the ``$repo``, ``$source``
    and ``$target`` parameters that are switched on."""
    conds = ["s.repo = $repo"] if repo else []
    s = "(s:CodeObject {id: $source})" if source else "(s:CodeObject)"
    t = "(t:CodeObject {id: $target})" if target else "(t:CodeObject)"
    where = " AND ".join([*conds, _EDGE_SEEN])
    return f"MATCH {s}-[r:{types}]->{t} WHERE {where} {_EDGE_RETURN}"


def edges_of(types: str, direction: str) -> str:
    """Edges of ``types`` touching any of ``$ids`` in ``direction`` (out, in, both)."""
    if direction == "out":
        pattern = f"(s:CodeObject {{id: id}})-[r:{types}]->(t:CodeObject)"
    elif direction == "in":
        pattern = f"(s:CodeObject)-[r:{types}]->(t:CodeObject {{id: id}})"
    elif direction == "both":
        # undirected match; read the ends back from the relationship
        return (
            f"UNWIND $ids AS id MATCH (a:CodeObject {{id: id}})-[r:{types}]-(b:CodeObject) "
            f"WHERE {seen('a')} AND {seen('b')} AND {seen('r', 'startNode(r).repo')} "
            "WITH DISTINCT r "
            "RETURN startNode(r).id AS source, endNode(r).id AS target, type(r) AS kind, r.lines AS lines"
        )
    else:
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    return f"UNWIND $ids AS id MATCH {pattern} WHERE {_EDGE_SEEN} WITH DISTINCT s, r, t {_EDGE_RETURN}"


def _hop(types: str, direction: str, returns: str) -> str:
    """From each of ``$ids`` (``a``) one edge of ``types`` to ``b``, both seen."""
    arrow = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}.get(direction)
    if arrow is None:
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    left, right = arrow
    return (
        f"UNWIND $ids AS id MATCH (a:CodeObject {{id: id}}){left}[r:{types}]{right}(b:CodeObject) "
        f"WHERE {seen('a')} AND {seen('b')} AND {seen('r', 'startNode(r).repo')} RETURN {returns}"
    )


def adjacent(types: str, direction: str) -> str:
    """Each of ``$ids`` with the ids one edge of ``types`` away."""
    return _hop(types, direction, "a.id AS id, collect(DISTINCT b.id) AS peers")


def neighbor_hop(types: str, direction: str) -> str:
    """The ids one hop away from any of ``$ids``."""
    return _hop(types, direction, "DISTINCT b.id AS id")


#: per file of the given objects, those objects and the file's definitions: each file
#: is matched and sent once, however many of its objects are asked about (a walk's
#: frontier holds hundreds, many in one file); the caller leaves each object out of
#: its own peers
SAME_FILE = (
    "UNWIND $ids AS id "
    f"MATCH (n:CodeObject {{id: id}}) WHERE {seen('n')} "
    "WITH n.repo AS repo, n.path AS path, collect(DISTINCT n.id) AS ids "
    "OPTIONAL MATCH (p:CodeObject {repo: repo, path: path}) "
    f"WHERE p.kind IN $kinds AND {seen('p')} "
    "WITH ids, collect(p.id) AS defs RETURN collect({ids: ids, defs: defs}) AS rows"
)

_UNRESOLVED_FIELDS = "u {.source, .kind, .name, .line, .reason}"

ALL_UNRESOLVED = f"MATCH (u:Unresolved) WHERE {seen('u')} RETURN {_UNRESOLVED_FIELDS} AS u"

#: the references whose source object belongs to ``$repo``
REPO_UNRESOLVED = (
    f"MATCH (s:CodeObject {{repo: $repo}}) WHERE {seen('s')} "
    f"MATCH (u:Unresolved {{source: s.id}}) WHERE {seen('u')} "
    f"RETURN {_UNRESOLVED_FIELDS} AS u"
)

GET_SOURCE = f"MATCH (s:Source {{id: $id}}) WHERE {seen('s')} RETURN s.text AS text"

GET_SOURCES = f"UNWIND $ids AS id MATCH (s:Source {{id: id}}) WHERE {seen('s')} RETURN s.id AS id, s.text AS text"

FILE_OBJECTS = (
    f"UNWIND $ids AS id MATCH (f:CodeObject {{id: id}}) WHERE {seen('f')} "
    f"MATCH (n:CodeObject {{repo: f.repo, path: f.path}}) WHERE {seen('n')} "
    "RETURN collect({file: f.id, n: n {.*}}) AS rows"
)

#: ``FILE_OBJECTS`` with four fields of each object (``file_spans``)
FILE_SPANS = (
    f"UNWIND $ids AS id MATCH (f:CodeObject {{id: id}}) WHERE {seen('f')} "
    f"MATCH (n:CodeObject {{repo: f.repo, path: f.path}}) WHERE {seen('n')} "
    "RETURN collect([f.id, n.id, n.kind, n.start_line, n.end_line]) AS rows"
)

GET_META = f"MATCH (m:RepositoryMeta {{repo: $repo}}) WHERE {seen('m')} RETURN m.json AS json"

REPOSITORIES = f"MATCH (n:CodeObject {{kind: 'repository'}}) WHERE {seen('n')} RETURN n.id AS id"

COUNT_OBJECTS = f"MATCH (n:CodeObject) WHERE {seen('n')} RETURN n.kind AS kind, count(*) AS n"

COUNT_REPO_OBJECTS = (
    f"MATCH (n:CodeObject {{repo: $repo}}) WHERE {seen('n')} RETURN n.kind AS kind, count(*) AS n"
)

COUNT_EDGES = (
    f"MATCH (s:CodeObject)-[r:{_ALL_EDGE_TYPES}]->(t:CodeObject) WHERE {_EDGE_SEEN} "
    "RETURN type(r) AS kind, count(*) AS n"
)

COUNT_REPO_EDGES = (
    f"MATCH (s:CodeObject {{repo: $repo}})-[r:{_ALL_EDGE_TYPES}]->(t:CodeObject) WHERE {_EDGE_SEEN} "
    "RETURN type(r) AS kind, count(*) AS n"
)


# -- allocation provenance ------------------------------------------------------
# (:Allocation)-[:SELECTED {slot, role, ...}]->(:CodeObject)
# (:Allocation)-[:CONSIDERED {rank, score, status, reason}]->(:CandidateView)
# (:CandidateView)-[:VIEW_OF]->(:CodeObject)      when the view's object is in the graph
# (:CandidateView)-[:MERGED_INTO]->(:CandidateView) the view that represents its object

ALLOCATION_SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT vitalrag_allocation_id IF NOT EXISTS FOR (a:Allocation) REQUIRE a.id IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_candidate_key IF NOT EXISTS FOR (v:CandidateView) REQUIRE v.key IS UNIQUE",
)

WRITE_ALLOCATION = (
    "MERGE (a:Allocation {id: $id}) SET a += $props "
    "WITH a "
    "OPTIONAL MATCH (a)-[old:SELECTED|CONSIDERED]->() DELETE old"
)

WRITE_CANDIDATES = (
    "MATCH (a:Allocation {id: $id}) "
    "UNWIND $rows AS row "
    "MERGE (v:CandidateView {key: row.key}) SET v += row.props "
    "MERGE (a)-[c:CONSIDERED]->(v) SET c += row.edge "
    "WITH v, row "
    f"OPTIONAL MATCH (o:CodeObject {{id: row.props.object_key}}) WHERE {seen('o')} "
    "FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END | MERGE (v)-[:VIEW_OF]->(o))"
)

LINK_MERGED = (
    "UNWIND $rows AS row "
    "MATCH (v:CandidateView {key: row.key}) MATCH (r:CandidateView {key: row.into}) "
    "MERGE (v)-[:MERGED_INTO]->(r)"
)

WRITE_SELECTED = (
    "MATCH (a:Allocation {id: $id}) "
    "UNWIND $rows AS row "
    f"MATCH (o:CodeObject {{id: row.object}}) WHERE {seen('o')} "
    "MERGE (a)-[s:SELECTED {slot: row.slot}]->(o) SET s += row.props"
)

READ_ALLOCATION = (
    "MATCH (a:Allocation {id: $id}) "
    "OPTIONAL MATCH (a)-[s:SELECTED]->(o:CodeObject) "
    "WITH a, s, o ORDER BY s.slot "
    "WITH a, collect(CASE WHEN o IS NULL THEN NULL ELSE {object: o.id, props: s {.*}} END) AS selected "
    "OPTIONAL MATCH (a)-[c:CONSIDERED]->(v:CandidateView) "
    "OPTIONAL MATCH (v)-[:MERGED_INTO]->(r:CandidateView) "
    "WITH a, selected, c, v, r ORDER BY c.rank "
    "RETURN a {.*} AS allocation, selected, "
    "collect(CASE WHEN v IS NULL THEN NULL ELSE {view: v {.*}, edge: c {.*}, into: r.view_id} END) AS views"
)

DELETE_ALLOCATION = (
    "MATCH (a:Allocation {id: $id}) "
    "OPTIONAL MATCH (a)-[:CONSIDERED]->(v:CandidateView) "
    "DETACH DELETE v, a"
)


# -- retrieval views -------------------------------------------------------------
# (:View {id, object_id, kind, path, start_line, end_line, text, content_hash,
#         identifier, repo, hash, search, embedding, born, died})-[:VIEW_OF]->(:CodeObject)
# (:View:Dim<d>)                                     a view with an embedding of d dimensions
# (:RetrievalMeta {repo, model, dim, views, born, died})   the model a repository's views are embedded with
#
# One vector index per dimension (over ``:Dim<d>``), so repositories embedded with
# models of different sizes can share a database; a query searches those of its model.
# Views are versioned as the graph is: the indexes hold every version's views, and
# a search keeps those in the pinned versions.
#
# ``search`` is the view's text as the BM25 tokenizer splits it (identifier parts,
# casefolded, space-separated), so the fulltext index's whitespace analyzer sees
# the same terms as bm25s. ``scope`` is the view's repository as one term
# (``view_scope``), indexed beside ``search``: a search of some repositories asks
# Lucene for their views only (a required clause of boost 0, which adds nothing to
# the score), where a filter after the search would have to fetch ever more hits.
# ``hash`` covers everything a view row holds (its content, its identifier and the
# model of its embedding): a push rewrites only the views whose hash changed.

VIEW_VECTOR_INDEX = "vitalrag_view_embedding"
VIEW_FULLTEXT_INDEX = "vitalrag_view_scoped"

VIEW_SCHEMA: tuple[str, ...] = (
    "CREATE INDEX vitalrag_view_lookup IF NOT EXISTS FOR (v:View) ON (v.id)",
    "CREATE INDEX vitalrag_retrieval_meta_lookup IF NOT EXISTS FOR (m:RetrievalMeta) ON (m.repo)",
    "CREATE INDEX vitalrag_view_repo IF NOT EXISTS FOR (v:View) ON (v.repo)",
    "CREATE INDEX vitalrag_view_object IF NOT EXISTS FOR (v:View) ON (v.object_id)",
    "CREATE INDEX vitalrag_view_identifier IF NOT EXISTS FOR (v:View) ON (v.identifier)",
    f"CREATE FULLTEXT INDEX {VIEW_FULLTEXT_INDEX} IF NOT EXISTS FOR (v:View) ON EACH [v.search, v.scope] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}}",
)


def view_scope(repo: str) -> str:
    """A repository as one term of the fulltext index (the whitespace analyzer keeps
    it whole, whatever characters the name has)."""
    return "r" + hashlib.blake2b(repo.encode(), digest_size=8).hexdigest()


def _dim(dim: int) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool) or not 1 <= dim <= 4096:
        raise InputError(f"an embedding dimension must be an integer from 1 to 4096, not {dim!r}")
    return dim


def dim_label(dim: int) -> str:
    """The label of views embedded in ``dim`` dimensions (an int checked here)."""
    return f"Dim{_dim(dim)}"


def vector_index_name(dim: int) -> str:
    return f"{VIEW_VECTOR_INDEX}_{_dim(dim)}"


def view_vector_index(dim: int) -> str:
    """The vector index over views of ``dim`` dimensions: cosine, exact vectors (no
    quantisation: its scores should match the embedded store's), and an HNSW
    ef_construction of 32 instead of 100 (building the graph is what bounds the
    write rate: 10,000 384-d vectors indexed at 1,350/s with 100, 3,800/s with 32,
    on two loaded cores). Index options cannot be parameters, hence the checked int."""
    return (
        f"CREATE VECTOR INDEX {vector_index_name(dim)} IF NOT EXISTS FOR (v:{dim_label(dim)}) ON (v.embedding) "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dim}, `vector.similarity_function`: 'cosine', "
        "`vector.quantization.enabled`: false, `vector.hnsw.ef_construction`: 32}}"
    )


RETRIEVAL_META = (
    f"MATCH (m:RetrievalMeta) WHERE {seen('m')} "
    "RETURN m.repo AS repo, m.model AS model, m.dim AS dim, m.views AS views"
)

#: each repository's BM25 statistics where its writer recorded them: ``tokens``
#: (the views' total length) here, ``df`` (JSON, token -> document frequency) read
#: by ``RETRIEVAL_DF`` only for records a reader has not read yet (``born``)
RETRIEVAL_STATS = (
    f"MATCH (m:RetrievalMeta) WHERE {seen('m')} AND m.df IS NOT NULL "
    "RETURN m.repo AS repo, m.born AS born, m.views AS views, m.tokens AS tokens"
)
RETRIEVAL_DF = (
    f"UNWIND $repos AS repo MATCH (m:RetrievalMeta {{repo: repo}}) WHERE {seen('m')} "
    "RETURN m.repo AS repo, m.born AS born, m.df AS df"
)

#: rows ``{key: repo, repo, props: {repo, model, dim, views, tokens, df}}``
SET_RETRIEVAL_META = _put_versioned("RetrievalMeta", "repo")

DELETE_RETRIEVAL_META = (
    f"UNWIND $repos AS repo MATCH (x:RetrievalMeta {{repo: repo}}) WHERE {seen('x')} " + _retire("x")
)

VIEW_HASHES = f"MATCH (v:View {{repo: $repo}}) WHERE {seen('v')} RETURN v.id AS id, v.hash AS hash"


def create_views(dim: int | None) -> str:
    """CREATE a batch of views (a changed view is removed first); with ``dim``, each
    with its embedding, stored as a float32 vector property (half the size of a
    list of floats) under the label the vector index of ``dim`` reads."""
    made = f"SET v = row.props, v.born = $pin[row.props.repo], v.died = {ALIVE} "
    if dim is None:
        return f"UNWIND $rows AS row CREATE (v:View) {made}RETURN count(*) AS written"
    return (
        "UNWIND $rows AS row "
        f"CREATE (v:View:{dim_label(dim)}) {made}"
        "WITH v, row "
        "CALL db.create.setNodeVectorProperty(v, 'embedding', row.embedding) "
        "RETURN count(*) AS written"
    )


#: views of ``$repo`` not linked to their object in the version (new views, and views
#: whose object was written again): link them
LINK_VIEWS = (
    f"MATCH (v:View {{repo: $repo}}) WHERE {seen('v')} "
    f"AND NOT EXISTS {{ MATCH (v)-[:VIEW_OF]->(o:CodeObject) WHERE {seen('o')} }} "
    f"MATCH (o:CodeObject {{id: v.object_id}}) WHERE {seen('o')} "
    "MERGE (v)-[:VIEW_OF]->(o)"
)

DELETE_VIEWS = f"UNWIND $ids AS id MATCH (x:View {{id: id}}) WHERE {seen('x')} " + _retire("x")

_VIEW_FIELDS = "{.id, .object_id, .kind, .path, .start_line, .end_line, .text, .content_hash, .identifier, .repo}"

COUNT_VIEWS = f"MATCH (v:View) WHERE {seen('v')} RETURN count(v) AS n"

COUNT_REPO_VIEWS = f"MATCH (v:View) WHERE v.repo IN $repos AND {seen('v')} RETURN count(v) AS n"

READ_VIEWS_EMBEDDED = (
    f"UNWIND $ids AS id MATCH (v:View {{id: id}}) WHERE {seen('v')} "
    f"RETURN v {_VIEW_FIELDS} AS v, v.hash AS hash, v.embedding AS embedding"
)

#: a hit of an index search is kept when it is in the pinned versions and in
#: ``$repos`` (null: every repository; the caller counts what the index gave, to
#: tell a filtered-out hit from the index running out)
_KEPT = f"{seen('node')} AND ($repos IS NULL OR node.repo IN $repos)"

#: BM25 over ``search``, with only what rescoring needs of each hit: its id,
#: repository and search text (an empty list: not in the pinned versions or in
#: ``$repos``; not null, which ``collect`` would leave out, and the caller counts every
#: hit to tell whether the index has more); the views kept are read by id (``READ_VIEWS``)
SEARCH_VIEW_TERMS = (
    "CALL db.index.fulltext.queryNodes($index, $text, {limit: $n}) YIELD node, score "
    f"RETURN collect(CASE WHEN {_KEPT} THEN [node.id, node.repo, node.search] ELSE [] END) AS rows"
)

#: approximate (HNSW) nearest views, as ids (null: not in the pinned versions or in
#: ``$repos``) and scores, Neo4j's (1 + cosine) / 2: the index is asked for many more
#: than are kept (see ``ServerViews.nearest``), and the kept ones are read by id
SEARCH_VIEWS_VECTOR = (
    "CALL db.index.vector.queryNodes($index, $n, $vector) YIELD node, score "
    f"RETURN collect({{id: CASE WHEN {_KEPT} THEN node.id END, score: score}}) AS rows"
)

#: the embedded views of a repository in the version pinned, a page at a time (after
#: ``$after`` by id): what an exact search compares (the searcher keeps them, a
#: version's views never change)
VIEW_VECTORS = (
    f"MATCH (v:View {{repo: $repo}}) WHERE v.id > $after AND {seen('v')} AND v.embedding IS NOT NULL "
    "RETURN v.id AS id, v.embedding AS embedding ORDER BY id LIMIT $n"
)

#: views by id, in the versions pinned
READ_VIEWS = (
    f"UNWIND $ids AS id MATCH (v:View {{id: id}}) WHERE {seen('v')} "
    f"RETURN collect({{v: v {_VIEW_FIELDS}}}) AS rows"
)

#: object ids by name, from body and signature views (the graph walk's anchors)
VIEW_NAMES = (
    "MATCH (v:View) WHERE v.identifier IN $names AND v.kind IN ['body', 'signature'] "
    f"AND ($repos IS NULL OR v.repo IN $repos) AND {seen('v')} "
    "RETURN v.identifier AS name, collect(DISTINCT v.object_id) AS ids"
)

#: the body view of each object (what the walk returns for it)
BODY_VIEWS = (
    f"UNWIND $ids AS id MATCH (v:View {{object_id: id}}) WHERE v.kind = 'body' AND {seen('v')} "
    f"WITH v ORDER BY v.id RETURN collect({{v: v {_VIEW_FIELDS}}}) AS rows"
)

#: Lucene's query syntax characters (and the two-character operators built of them)
_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')


def lucene_escape(term: str) -> str:
    """``term`` as one literal Lucene term: every syntax character backslashed, and
    the operator words AND, OR, NOT quoted."""
    if term in ("AND", "OR", "NOT"):
        return f'"{term}"'
    return "".join("\\" + c if c in _LUCENE_SPECIAL else c for c in term)


def lucene_query(terms: Sequence[str], max_clauses: int = 1000, *,
                 repos: Sequence[str] | None = None) -> str:
    """Terms OR-ed (Lucene's default) over the ``search`` field as one query string;
    each escaped, repeats kept once, at most ``max_clauses`` (Lucene refuses more
    than 1024). With ``repos``, only views whose ``scope`` is one of theirs match,
    and the scope adds nothing to the score (boost 0). No term: an empty string."""
    scopes = sorted({view_scope(r) for r in repos}) if repos is not None else []
    unique = [t for t in dict.fromkeys(terms) if t.strip()][:max(1, max_clauses - len(scopes))]
    if not unique:
        return ""
    text = "search:(" + " ".join(lucene_escape(t) for t in unique) + ")"
    if repos is None:
        return text
    return f"+{text} +scope:({' '.join(scopes)})^0"
