"""The graph of a repository's extracted files before resolution: repository,
module (package) and file nodes, definitions, CONTAINS edges; and TESTS, drawn
from the resolved calls."""

from __future__ import annotations

from collections.abc import Iterable

from vitalrag.ingest.facts import FileFacts
from vitalrag.model import CodeObject, Edge, module_id, repository_id


def build_graph(repo: str, facts: list[FileFacts]) -> tuple[list[CodeObject], list[Edge]]:
    """Repository, module (package) and file nodes, definitions, and CONTAINS edges."""
    objects: list[CodeObject] = [
        CodeObject(id=repository_id(repo), kind="repository", name=repo, qualname=repo, repo=repo, path="")
    ]
    edges: list[Edge] = []
    packages: dict[str, str] = {}  # package dir -> dotted name
    for f in facts:
        if f.package_dir is not None and f.package_dir not in packages:
            packages[f.package_dir] = f.package_name
    for d in sorted(packages):
        dotted = packages[d]
        # dotted (Python, Java) or an import path (Go: example.com/shop/store)
        last = dotted.rsplit("/", 1)[-1] if "/" in dotted else dotted.rsplit(".", 1)[-1]
        objects.append(CodeObject(
            id=module_id(repo, d), kind="module", name=last or d.rsplit("/", 1)[-1],
            qualname=dotted or d, repo=repo, path=d + "/",
        ))
        edges.append(Edge(_container_of_dir(repo, d, packages), module_id(repo, d), "CONTAINS"))
    for f in facts:
        objects.append(f.file)
        parent = (module_id(repo, f.package_dir) if f.package_dir is not None
                  else _container_of_dir(repo, f.path.rsplit("/", 1)[0] if "/" in f.path else "", packages,
                                         inclusive=True))
        edges.append(Edge(parent, f.file.id, "CONTAINS"))
        objects.extend(f.objects)
        for child, container in f.parents.items():
            edges.append(Edge(container, child, "CONTAINS"))
    return objects, edges


def _container_of_dir(repo: str, d: str, packages: dict[str, str], inclusive: bool = False) -> str:
    """The nearest package folder above ``d`` (or ``d`` itself), else the repository."""
    cur = d if inclusive else (d.rsplit("/", 1)[0] if "/" in d else "")
    while cur:
        if cur in packages:
            return module_id(repo, cur)
        cur = cur.rsplit("/", 1)[0] if "/" in cur else ""
    return repository_id(repo)


def tests_edges(objects: Iterable[CodeObject], calls: Iterable[Edge]) -> list[Edge]:
    """TESTS: a test links to every non-test repository object it calls."""
    kinds = {o.id: o.kind for o in objects}
    tests = {i for i, k in kinds.items() if k == "test"}
    out = []
    for e in calls:
        if e.source in tests and e.kind == "CALLS" and kinds.get(e.target) not in (None, "test"):
            out.append(Edge(e.source, e.target, "TESTS", e.lines))
    return out

