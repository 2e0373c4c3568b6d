"""Every Cypher statement the Neo4j store runs, as constants or small builders.

Values always travel as ``$parameters``. The only text spliced into a query is
labels and relationship types, and those come from the closed sets in
``vitalrag.model`` (``NODE_KINDS``, ``EDGE_KINDS``) after validation, and
property names from the fixed tuple ``OBJECT_FILTERS``; nothing a user or a
parsed repository wrote ever becomes query text.

Graph layout::

    (:CodeObject:<Kind> {id, kind, name, ..., caption})   one per code object
    (a)-[:CALLS {lines}]->(b)                            one per edge, type = edge kind
    (:CodeObject)-[:UNRESOLVED]->(:Unresolved {key, source, kind, name, line, reason})
    (:Source {id, text})                                 file text, id = file node id
    (:RepositoryMeta {repo, json})                       per-repository metadata
    (:VitalRAGSchema {name: "vitalrag", version})        the schema version of the data
"""

from __future__ import annotations

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
}
assert set(KIND_LABELS) == set(NODE_KINDS)

#: the filters ``find_objects`` accepts, which are also property names
OBJECT_FILTERS: tuple[str, ...] = ("repo", "kind", "path", "name")

_ALL_EDGE_TYPES = "|".join(EDGE_KINDS)

# -- schema ------------------------------------------------------------------

SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT vitalrag_object_id IF NOT EXISTS FOR (n:CodeObject) REQUIRE n.id IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_unresolved_key IF NOT EXISTS FOR (u:Unresolved) REQUIRE u.key IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_source_id IF NOT EXISTS FOR (s:Source) REQUIRE s.id IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_meta_repo IF NOT EXISTS FOR (m:RepositoryMeta) REQUIRE m.repo IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_schema_name IF NOT EXISTS FOR (v:VitalRAGSchema) REQUIRE v.name IS UNIQUE",
    "CREATE INDEX vitalrag_object_repo_path IF NOT EXISTS FOR (n:CodeObject) ON (n.repo, n.path)",
    "CREATE INDEX vitalrag_object_repo IF NOT EXISTS FOR (n:CodeObject) ON (n.repo)",
    "CREATE INDEX vitalrag_object_kind IF NOT EXISTS FOR (n:CodeObject) ON (n.kind)",
    "CREATE INDEX vitalrag_object_name IF NOT EXISTS FOR (n:CodeObject) ON (n.name)",
    "CREATE INDEX vitalrag_object_path IF NOT EXISTS FOR (n:CodeObject) ON (n.path)",
    "CREATE INDEX vitalrag_unresolved_source IF NOT EXISTS FOR (u:Unresolved) ON (u.source)",
)

SCHEMA_AWAIT = "CALL db.awaitIndexes(300)"

GET_SCHEMA_VERSION = "MATCH (v:VitalRAGSchema {name: 'vitalrag'}) RETURN v.version AS version"

SET_SCHEMA_VERSION = "MERGE (v:VitalRAGSchema {name: 'vitalrag'}) SET v.version = $version"

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
    """MERGE a batch of one kind by id. A node whose kind changed loses its old
    kind label (checked per row, so the common case pays nothing for it)."""
    label = kind_label(kind)
    others = ":".join(v for v in KIND_LABELS.values() if v != label)
    return (
        "UNWIND $rows AS row "
        "MERGE (n:CodeObject {id: row.id}) "
        "WITH n, row, n.kind AS old "
        "SET n = row.props "
        f"SET n:{label} "
        "WITH n, old WHERE old IS NOT NULL AND old <> n.kind "
        f"REMOVE n:{others}"
    )


def create_objects(kind: str) -> str:
    """CREATE a batch of one kind: for a repository known to hold none of them."""
    return f"UNWIND $rows AS row CREATE (n:CodeObject:{kind_label(kind)}) SET n = row.props"


MISSING_OBJECTS = (
    "UNWIND $ids AS id "
    "OPTIONAL MATCH (n:CodeObject {id: id}) "
    "WITH id, n WHERE n IS NULL "
    "RETURN id"
)


def upsert_edges(kind: str) -> str:
    """MERGE a batch of one edge kind; ``lines`` are replaced, as in the embedded store."""
    rel = edge_type(kind)
    return (
        "UNWIND $rows AS row "
        "MATCH (s:CodeObject {id: row.source}) "
        "MATCH (t:CodeObject {id: row.target}) "
        f"MERGE (s)-[r:{rel}]->(t) "
        "SET r.lines = row.lines "
        "RETURN count(*) AS written"
    )


UPSERT_UNRESOLVED = (
    "UNWIND $rows AS row "
    "MERGE (u:Unresolved {key: row.key}) "
    "SET u += row.props "
    "WITH u "
    "OPTIONAL MATCH (s:CodeObject {id: u.source}) "
    "FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | MERGE (s)-[:UNRESOLVED]->(u))"
)

#: for a repository just deleted: none of its references exists yet
CREATE_UNRESOLVED = (
    "UNWIND $rows AS row "
    "CREATE (u:Unresolved) "
    "SET u = row.props, u.key = row.key "
    "WITH u "
    "MATCH (s:CodeObject {id: u.source}) "
    "CREATE (s)-[:UNRESOLVED]->(u)"
)

PUT_SOURCES = "UNWIND $rows AS row MERGE (s:Source {id: row.id}) SET s.text = row.text"

SET_META = "MERGE (m:RepositoryMeta {repo: $repo}) SET m.json = $json"

DELETE_FILES = (
    "MATCH (n:CodeObject {repo: $repo}) WHERE n.path IN $paths "
    "WITH collect(n) AS nodes, collect(n.id) AS ids "
    "OPTIONAL MATCH (u:Unresolved) WHERE u.source IN ids "
    "WITH nodes, ids, collect(u) AS refs "
    "OPTIONAL MATCH (s:Source) WHERE s.id IN ids "
    "WITH nodes, refs, collect(s) AS sources "
    "FOREACH (u IN refs | DETACH DELETE u) "
    "FOREACH (s IN sources | DELETE s) "
    "FOREACH (n IN nodes | DETACH DELETE n)"
)

DELETE_OBJECTS = (
    "UNWIND $ids AS id "
    "MATCH (n:CodeObject {id: id}) "
    "OPTIONAL MATCH (s:Source {id: id}) "
    "DELETE s "
    "WITH n, id "
    "OPTIONAL MATCH (u:Unresolved {source: id}) "
    "DETACH DELETE u "
    "WITH DISTINCT n "
    "DETACH DELETE n"
)


def create_edges(kind: str) -> str:
    """CREATE a batch of one edge kind between existing nodes (no MERGE lookup)."""
    rel = edge_type(kind)
    return (
        "UNWIND $rows AS row "
        "MATCH (s:CodeObject {id: row.source}) "
        "MATCH (t:CodeObject {id: row.target}) "
        f"CREATE (s)-[r:{rel}]->(t) SET r.lines = row.lines "
        "RETURN count(*) AS written"
    )


def delete_edges(kind: str) -> str:
    """Delete a batch of edges of one kind by (source, target); missing ones are no-ops."""
    rel = edge_type(kind)
    return (
        "UNWIND $rows AS row "
        f"MATCH (:CodeObject {{id: row.source}})-[r:{rel}]->(:CodeObject {{id: row.target}}) "
        "DELETE r"
    )


DELETE_UNRESOLVED = "UNWIND $keys AS key MATCH (u:Unresolved {key: key}) DETACH DELETE u"

REPOSITORY_PATHS = "MATCH (n:CodeObject {repo: $repo}) RETURN DISTINCT n.path AS path"

DELETE_META = "MATCH (m:RepositoryMeta {repo: $repo}) DELETE m"

# -- reads -------------------------------------------------------------------

GET_OBJECTS = "UNWIND $ids AS id MATCH (n:CodeObject {id: id}) RETURN n {.*} AS n"


def find_objects(filters: Sequence[str]) -> str:
    """Objects matching every filter named in ``filters`` (each a ``$param`` of the same name)."""
    for f in filters:
        if f not in OBJECT_FILTERS:
            raise ValueError(f"not an object filter: {f!r}")
    where = " AND ".join(f"n.{f} = ${f}" for f in filters)
    return "MATCH (n:CodeObject) " + (f"WHERE {where} " if where else "") + "RETURN n {.*} AS n"


def rel_types(kinds: Sequence[str] | None) -> str | None:
    """``CALLS|IMPORTS`` for the known kinds among ``kinds``; every edge type when
    ``kinds`` is None or empty; None when no kind asked for is an edge kind (no match)."""
    if not kinds:
        return _ALL_EDGE_TYPES
    known = [k for k in EDGE_KINDS if k in set(kinds)]
    return "|".join(known) if known else None


_EDGE_RETURN = "RETURN s.id AS source, t.id AS target, type(r) AS kind, r.lines AS lines"


def find_edges(types: str, *, repo: bool, source: bool, target: bool) -> str:
    """Edges of ``types`` (from ``rel_types``), filtered by the ``$repo``, ``$source``
    and ``$target`` parameters that are switched on."""
    conds = []
    if repo:
        conds.append("s.repo = $repo")
    s = "(s:CodeObject {id: $source})" if source else "(s:CodeObject)"
    t = "(t:CodeObject {id: $target})" if target else "(t:CodeObject)"
    where = f"WHERE {' AND '.join(conds)} " if conds else ""
    return f"MATCH {s}-[r:{types}]->{t} {where}{_EDGE_RETURN}"


def edges_of(types: str, direction: str) -> str:
    """Edges of ``types`` touching any of ``$ids`` in ``direction`` (out, in, both)."""
    if direction == "out":
        pattern = f"(s:CodeObject {{id: id}})-[r:{types}]->(t:CodeObject)"
    elif direction == "in":
        pattern = f"(s:CodeObject)-[r:{types}]->(t:CodeObject {{id: id}})"
    elif direction == "both":
        # undirected match; read the ends back from the relationship
        return (
            f"UNWIND $ids AS id MATCH (:CodeObject {{id: id}})-[r:{types}]-(:CodeObject) "
            "WITH DISTINCT r "
            "RETURN startNode(r).id AS source, endNode(r).id AS target, type(r) AS kind, r.lines AS lines"
        )
    else:
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    return f"UNWIND $ids AS id MATCH {pattern} WITH DISTINCT s, r, t {_EDGE_RETURN}"


def neighbor_hop(types: str, direction: str) -> str:
    """The ids one hop away from any of ``$ids``."""
    arrow = {"out": ("-", "->"), "in": ("<-", "-"), "both": ("-", "-")}.get(direction)
    if arrow is None:
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    left, right = arrow
    return (
        f"UNWIND $ids AS id MATCH (:CodeObject {{id: id}}){left}[:{types}]{right}(b:CodeObject) "
        "RETURN DISTINCT b.id AS id"
    )


SAME_FILE = (
    "UNWIND $ids AS id "
    "MATCH (n:CodeObject {id: id}) "
    "OPTIONAL MATCH (p:CodeObject {repo: n.repo, path: n.path}) "
    "WHERE p.id <> n.id AND p.kind IN $kinds "
    "RETURN n.id AS id, collect(p.id) AS peers"
)

ALL_UNRESOLVED = "MATCH (u:Unresolved) RETURN u {.source, .kind, .name, .line, .reason} AS u"

REPO_UNRESOLVED = (
    "MATCH (u:Unresolved) "
    "MATCH (s:CodeObject {id: u.source}) WHERE s.repo = $repo "
    "RETURN u {.source, .kind, .name, .line, .reason} AS u"
)

GET_SOURCE = "MATCH (s:Source {id: $id}) RETURN s.text AS text"

GET_META = "MATCH (m:RepositoryMeta {repo: $repo}) RETURN m.json AS json"

REPOSITORIES = "MATCH (n:CodeObject {kind: 'repository'}) RETURN n.id AS id"

COUNT_OBJECTS = "MATCH (n:CodeObject) RETURN n.kind AS kind, count(*) AS n"

COUNT_REPO_OBJECTS = "MATCH (n:CodeObject {repo: $repo}) RETURN n.kind AS kind, count(*) AS n"

COUNT_EDGES = f"MATCH (:CodeObject)-[r:{_ALL_EDGE_TYPES}]->(:CodeObject) RETURN type(r) AS kind, count(*) AS n"

COUNT_REPO_EDGES = (
    f"MATCH (:CodeObject {{repo: $repo}})-[r:{_ALL_EDGE_TYPES}]->(:CodeObject) "
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
    "OPTIONAL MATCH (o:CodeObject {id: row.props.object_key}) "
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
    "MATCH (o:CodeObject {id: row.object}) "
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
#         identifier, repo, hash, search, embedding})-[:VIEW_OF]->(:CodeObject)
# (:View:Dim<d>)                                     a view with an embedding of d dimensions
# (:RetrievalMeta {repo, model, dim, views})         the model a repository's views are embedded with
#
# One vector index per dimension (over ``:Dim<d>``), so repositories embedded with
# models of different sizes can share a database; a query searches those of its model.
#
# ``search`` is the view's text as the BM25 tokenizer splits it (identifier parts,
# casefolded, space-separated), so the fulltext index's whitespace analyzer sees
# the same terms as bm25s. ``hash`` covers everything a view row holds (its
# content, its identifier and the model of its embedding): a push rewrites only
# the views whose hash changed.

VIEW_VECTOR_INDEX = "vitalrag_view_embedding"
VIEW_FULLTEXT_INDEX = "vitalrag_view_search"

VIEW_SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT vitalrag_view_id IF NOT EXISTS FOR (v:View) REQUIRE v.id IS UNIQUE",
    "CREATE CONSTRAINT vitalrag_retrieval_meta IF NOT EXISTS FOR (m:RetrievalMeta) REQUIRE m.repo IS UNIQUE",
    "CREATE INDEX vitalrag_view_repo IF NOT EXISTS FOR (v:View) ON (v.repo)",
    "CREATE INDEX vitalrag_view_object IF NOT EXISTS FOR (v:View) ON (v.object_id)",
    "CREATE INDEX vitalrag_view_identifier IF NOT EXISTS FOR (v:View) ON (v.identifier)",
    f"CREATE FULLTEXT INDEX {VIEW_FULLTEXT_INDEX} IF NOT EXISTS FOR (v:View) ON EACH [v.search] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}}",
)


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
    "MATCH (m:RetrievalMeta) RETURN m.repo AS repo, m.model AS model, m.dim AS dim, m.views AS views"
)

SET_RETRIEVAL_META = (
    "MERGE (m:RetrievalMeta {repo: $repo}) SET m.model = $model, m.dim = $dim, m.views = $views"
)

DELETE_RETRIEVAL_META = "UNWIND $repos AS repo MATCH (m:RetrievalMeta {repo: repo}) DELETE m"

VIEW_HASHES = "MATCH (v:View {repo: $repo}) RETURN v.id AS id, v.hash AS hash"

def create_views(dim: int | None) -> str:
    """CREATE a batch of views (a changed view is deleted first); with ``dim``, each
    with its embedding, stored as a float32 vector property (half the size of a
    list of floats) under the label the vector index of ``dim`` reads."""
    if dim is None:
        return "UNWIND $rows AS row CREATE (v:View) SET v = row.props RETURN count(*) AS written"
    return (
        "UNWIND $rows AS row "
        f"CREATE (v:View:{dim_label(dim)}) SET v = row.props "
        "WITH v, row "
        "CALL db.create.setNodeVectorProperty(v, 'embedding', row.embedding) "
        "RETURN count(*) AS written"
    )


#: views whose object was (re)written since: link them again (a DETACH DELETE of
#: an object takes its VIEW_OF links with it)
LINK_VIEWS = (
    "MATCH (v:View {repo: $repo}) WHERE NOT (v)-[:VIEW_OF]->() "
    "MATCH (o:CodeObject {id: v.object_id}) "
    "MERGE (v)-[:VIEW_OF]->(o)"
)

DELETE_VIEWS = "UNWIND $ids AS id MATCH (v:View {id: id}) DETACH DELETE v"

#: views of repositories the graph no longer holds
STALE_VIEW_IDS = "MATCH (v:View) WHERE NOT v.repo IN $repos RETURN v.id AS id"

_VIEW_FIELDS = "{.id, .object_id, .kind, .path, .start_line, .end_line, .text, .content_hash, .identifier, .repo}"

COUNT_VIEWS = "MATCH (v:View) RETURN count(v) AS n"

COUNT_REPO_VIEWS = "MATCH (v:View) WHERE v.repo IN $repos RETURN count(v) AS n"

READ_REPO_VIEWS = f"MATCH (v:View {{repo: $repo}}) RETURN v {_VIEW_FIELDS} AS v, v.hash AS hash"

READ_VIEWS_EMBEDDED = (
    f"UNWIND $ids AS id MATCH (v:View {{id: id}}) RETURN v {_VIEW_FIELDS} AS v, v.hash AS hash, "
    "v.embedding AS embedding"
)

#: BM25 over ``search``; ``$repos`` null searches every repository. The index's
#: limit applies before the filter, so a filtered caller over-fetches.
SEARCH_VIEWS_FULLTEXT = (
    "CALL db.index.fulltext.queryNodes($index, $text, {limit: $n}) YIELD node, score "
    f"WHERE $repos IS NULL OR node.repo IN $repos RETURN node {_VIEW_FIELDS} AS v, score"
)

#: approximate (HNSW) nearest views; the score is Neo4j's (1 + cosine) / 2
SEARCH_VIEWS_VECTOR = (
    "CALL db.index.vector.queryNodes($index, $n, $vector) YIELD node, score "
    f"WHERE $repos IS NULL OR node.repo IN $repos RETURN node {_VIEW_FIELDS} AS v, score"
)

#: exact nearest views of the given repositories (a narrow filter)
SEARCH_VIEWS_EXACT = (
    "MATCH (v:View) WHERE v.repo IN $repos AND v.embedding IS NOT NULL "
    "WITH v, vector.similarity.cosine(v.embedding, $vector) AS score "
    "ORDER BY score DESC, v.id LIMIT $n "
    f"RETURN v {_VIEW_FIELDS} AS v, score"
)

#: object ids by name, from body and signature views (the graph walk's anchors)
VIEW_NAMES = (
    "MATCH (v:View) WHERE v.identifier IN $names AND v.kind IN ['body', 'signature'] "
    "AND ($repos IS NULL OR v.repo IN $repos) "
    "RETURN v.identifier AS name, collect(DISTINCT v.object_id) AS ids"
)

#: the body view of each object (what the walk returns for it)
BODY_VIEWS = (
    "UNWIND $ids AS id MATCH (v:View {object_id: id}) WHERE v.kind = 'body' "
    f"RETURN v {_VIEW_FIELDS} AS v ORDER BY v.id"
)

#: Lucene's query syntax characters (and the two-character operators built of them)
_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')


def lucene_escape(term: str) -> str:
    """``term`` as one literal Lucene term: every syntax character backslashed, and
    the operator words AND, OR, NOT quoted."""
    if term in ("AND", "OR", "NOT"):
        return f'"{term}"'
    return "".join("\\" + c if c in _LUCENE_SPECIAL else c for c in term)


def lucene_query(terms: Sequence[str], max_clauses: int = 1000) -> str:
    """Terms OR-ed (Lucene's default) as one query string; each escaped, repeats
    kept once, at most ``max_clauses`` (Lucene refuses more than 1024)."""
    unique = [t for t in dict.fromkeys(terms) if t.strip()][:max_clauses]
    return " ".join(lucene_escape(t) for t in unique)
