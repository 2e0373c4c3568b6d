"""Helpers shared by tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vitalrag.retrieve.dense import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures" / "repos"


def make_python_tree(root: Path, files: int) -> Path:
    """A package of ``files`` modules, each calling a function of the previous one."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(files):
        prev = f"from pkg.m{i - 1} import f{i - 1}\n\n" if i else ""
        call = f"f{i - 1}()" if i else "1"
        (pkg / f"m{i}.py").write_text(
            f'{prev}def f{i}():\n    """Function {i}."""\n    return {call}\n\n\n'
            f"class C{i}:\n    def g{i}(self):\n        return f{i}()\n"
        )
    return root


def make_java_tree(root: Path, files: int) -> Path:
    """A package of ``files`` classes: each extends a base class, holds the
    previous one in a field, and calls it, its own overloads and a statically
    imported helper, so that resolution needs the whole repository's index."""
    pkg = root / "src" / "p"
    pkg.mkdir(parents=True)
    (pkg / "Base.java").write_text(
        "package p;\n\npublic class Base {\n    protected int shared(int x) { return x; }\n}\n")
    (pkg / "Util.java").write_text(
        "package p;\n\npublic final class Util {\n    public static int twice(int x) { return 2 * x; }\n}\n")
    for i in range(files):
        prev = f"C{i - 1}" if i else "Base"
        call = f"next.m{i - 1}(x) + next.f(\"s\") + next.shared(x)" if i else "shared(x)"
        (pkg / f"C{i}.java").write_text(
            f"package p;\n\nimport static p.Util.twice;\n\n/** Class {i}. */\npublic class C{i} extends Base {{\n"
            f"    private final {prev} next = new {prev}();\n\n"
            f"    public int m{i}(int x) {{ return twice({call}) + f(x) + shared(x); }}\n\n"
            f"    int f(int x) {{ return x; }}\n\n    int f(String s) {{ return s.length(); }}\n}}\n"
        )
    return root


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting how many texts it was asked to encode."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim=dim)
        self.encoded = 0

    def encode(self, texts, progress=None) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts, progress)


def edit_add_rename_delete(repo: Path) -> None:
    """Edit, add, rename and delete files of a copy of the py_resolution fixture."""
    # edit: a renamed function changes who resolves to what in unchanged files
    (repo / "pkg" / "helpers.py").write_text(
        'def slugify(text):\n    """Lower-case and dash-join."""\n    return "-".join(text.split())\n\n\n'
        "def shout(text):\n    return text.upper()\n")
    # edit a re-export: app.py (unchanged) imports deep_fn through pkg.sub
    (repo / "pkg" / "sub" / "__init__.py").write_text("from .deep import deep_fn, deeper\n")
    (repo / "pkg" / "sub" / "deep.py").write_text(
        'def deep_fn():\n    return "deep"\n\n\ndef deeper():\n    return deep_fn()\n')
    # add
    (repo / "pkg" / "extra.py").write_text("from pkg.helpers import shout\n\n\ndef loud(x):\n    return shout(x)\n")
    # rename
    (repo / "pkg" / "util.py").rename(repo / "pkg" / "tools.py")
    (repo / "pkg" / "core.py").write_text(
        (repo / "pkg" / "core.py").read_text().replace("from . import util", "from . import tools as util"))
    # delete
    (repo / "tests" / "test_core.py").unlink()


def pair_mismatch(retriever: object) -> set[str]:
    """Object ids that one side of a loaded index has and the other lacks: objects
    of retrieval views missing from its graph, and definitions in its graph with
    no views (every definition gets some). Empty for a consistent pair."""
    from vitalrag.model import DEFINITION_KINDS

    store, index = retriever.store, retriever.views  # type: ignore[attr-defined]
    objects = store.find_objects()
    viewed = {v.object_id for v in index.views}
    return (viewed - {o.id for o in objects}) | ({o.id for o in objects if o.kind in DEFINITION_KINDS} - viewed)


def graph_payload(store: Path) -> dict:
    """What the live graph snapshot of an index folder holds (``MemoryStore``'s payload)."""
    from vitalrag.graph import packed

    return packed.read(graph_file(store))


def write_graph_payload(store: Path, payload: dict) -> None:
    """Replace the live graph snapshot of an index folder with ``payload``."""
    from vitalrag.graph import packed

    path = graph_file(store)
    tmp = path.with_name(".edited.tmp")
    packed.write(tmp, payload)
    tmp.replace(path)


def graph_file(store: Path) -> Path:
    """The live graph file of an index folder."""
    from vitalrag.graph.memory import graph_path

    path = graph_path(store)
    assert path is not None, f"nothing indexed in {store}"
    return path


def retrieval_snapshot(store: Path) -> Path:
    """The live retrieval snapshot folder of an index folder."""
    from vitalrag.graph.version import current

    name = current(store).retrieval
    assert name is not None, f"no retrieval index in {store}"
    return store / name
