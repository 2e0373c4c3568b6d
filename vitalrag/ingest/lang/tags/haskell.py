"""Haskell: functions of many equations, types and classes, ``import``, hspec and tasty.

Objects: a top-level function (its type signature, its equations, one object)
is a ``function``, one in a ``where`` a function named ``outer.inner``;
``data``, ``newtype`` and ``type`` declarations are ``class`` objects; a type
class an ``interface``, its signatures (and default equations) ``method``s;
an ``instance C T`` is a scope whose equations are named ``instance C
T.method``. Haddock comments (``-- |``) are the docstrings. The module header
is the file's namespace. In a test file (under ``test/`` or ``tests/``, or
``*Spec.hs``/``*Test.hs``) hspec's ``it "..." $ ...`` and tasty's
``testCase "..." ...`` are ``test`` objects, inside the ``describe``/
``testGroup`` blocks that prefix their names.

Imports: ``import A.B`` of a module the repository defines (by its header)
links the file to that file; other modules (``base``, packages) are external.

Calls resolve when certain: ``f x`` to a function of the ``where`` blocks
around the caller, else to a top-level function or class method of the file,
else of the modules imported unqualified (within their import lists), when
exactly one fits; ``M.f x`` through a qualified import or a full module name.
Operators, constructors and functions passed as values are not calls. A
name no module in reach defines stays ``unknown-name`` (a parameter applied,
a package's function imported unqualified); Prelude's and the test
frameworks' functions, and modules the repository does not define, are
external.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.clauses import merge_clauses
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import start_line, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject

_TEST_FILE = re.compile(r"(^|/)(test|tests)/|Spec\.l?hs$|Tests?\.l?hs$")
#: Prelude's and the test frameworks' functions most code applies: external
_PRELUDE = frozenset("""
abs all and any appendFile concat concatMap const curry cycle div divMod drop dropWhile either elem
error errorWithoutStackTrace even filter flip floor fmap foldl foldl1 foldr foldr1 fromIntegral
fromEnum toEnum fst gcd getContents getLine head id init interact iterate last lcm length lex lines
lookup map mapM mapM_ max maximum maybe min minimum mod negate not notElem null odd or otherwise pi
print product pure putStr putStrLn quot quotRem read readFile readLn reads realToFrac recip rem repeat
replicate return reverse round scanl scanl1 scanr scanr1 seq sequence sequence_ show showString
showParen shows snd span splitAt sqrt subtract sum tail take takeWhile toInteger truncate uncurry
undefined unlines until unwords unzip unzip3 words writeFile zip zip3 zipWith zipWith3 traverse
traverse_ for_ forM forM_ when unless void liftA2 mconcat mempty mappend foldMap toList sequenceA
describe context it specify prop shouldBe shouldSatisfy shouldReturn shouldThrow hspec testGroup
testCase testProperty assertEqual assertBool defaultMain quickCheck property
""".split())


@dataclass(frozen=True, slots=True)
class HaskellFacts(Fact):
    """A Haskell file's ``FileFacts.data``: its module name (``Main`` without a header)."""

    module: str


@dataclass(frozen=True, slots=True)
class HaskellImport(RefDetail):
    qualified: bool
    #: the ``as`` name
    alias: str | None
    #: the import list (None: everything it exports)
    names: list[str] | None


FACT_TYPES: tuple[type, ...] = (HaskellFacts, HaskellImport)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    lines: list[str] = []
    for c in comments:
        for line in c.splitlines():
            line = line.strip()
            lines.append(re.sub(r"^--\s*[|^]?\s?", "", line) if line.startswith("--") else line)
    return "\n".join(lines).strip()


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.node.type == "instance":
        parts = [cand.node.child_by_field_name("name"), cand.node.child_by_field_name("patterns")]
        cand.name = "instance " + " ".join(" ".join(text(p).split()) for p in parts if p is not None)
        return cand
    if cand.kind in ("test", "module"):
        if not is_test_file(path):
            return None
        cand.name = " ".join(cand.name.strip('"').split())
    return cand


def _call_name(node: Node) -> str | None:
    return text(node) if node.type in ("variable", "qualified") else None


def _module_name(node: Node | None) -> str:
    return ".".join(text(m) for m in node.named_children) if node is not None else ""


def _haddock_above(lines: list[str], line: int) -> list[str]:
    out: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].lstrip().startswith("--"):
        out.append(lines[i].strip())
        i -= 1
    out.reverse()
    return out if out and re.match(r"^--\s*\|", out[0]) else []


def _signature_start(lines: list[str], line: int, name: str) -> int:
    """The first line of the type signature right above line ``line`` (``line`` without one)."""
    i = line - 2
    while i >= 0 and lines[i][:1] in (" ", "\t") and lines[i].strip():
        i -= 1  # the continuation lines of a signature spread over several
    if i >= 0 and re.match(rf"^{re.escape(name)}\s*::", lines[i]):
        return i + 1
    return line


def _annotate(root: Node, facts: FileFacts[HaskellFacts]) -> HaskellFacts:
    lines = facts.text.split("\n")
    merge_clauses(facts, lines, frozenset({"function", "method"}))
    module = "Main"
    for child in root.named_children:
        if child.type == "header":
            module = _module_name(child.child_by_field_name("module")) or module
        elif child.type == "imports":
            for imp in child.named_children:
                if imp.type != "import":
                    continue
                alias = imp.child_by_field_name("alias")
                names_node = imp.child_by_field_name("names")
                hiding = any(c.type == "hiding" or text(c) == "hiding" for c in imp.children)
                names = None
                if names_node is not None and not hiding:
                    names = [text(n).strip("()") for n in names_node.named_children]
                    names = [re.sub(r"\(.*$", "", n).strip() for n in names]
                facts.refs.append(RawRef("import", facts.file.id, _module_name(imp.child_by_field_name("module")),
                                         start_line(imp), HaskellImport(
                                             any(text(c) == "qualified" for c in imp.children),
                                             _module_name(alias) or None, names)))
    facts.namespace = module
    objects: list[CodeObject] = []
    for o in facts.objects:
        if o.kind == "test":
            o = replace(o, signature=lines[o.start_line - 1].strip())
        elif o.kind == "function" and facts.parents.get(o.id) == facts.file.id:
            first = _signature_start(lines, o.start_line, o.name)
            sig = lines[first - 1].strip() if first < o.start_line else o.signature
            o = replace(o, start_line=first, signature=sig.split(" = ", 1)[0].rstrip(" ="),
                        content_hash=content_hash("\n".join(lines[first - 1:o.end_line])))
        elif o.kind in ("class", "interface"):
            o = replace(o, signature=re.split(r"\s+where\b|\s+=\s", lines[o.start_line - 1].strip(), maxsplit=1)[0])
        elif o.kind in ("function", "method"):
            o = replace(o, signature=o.signature.split(" = ", 1)[0].rstrip(" ="))
        if not o.docstring and o.kind != "test":
            o = replace(o, docstring=_docstring(_haddock_above(lines, o.start_line)))
        objects.append(o)
    facts.objects = objects
    return HaskellFacts(module)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment", "haddock"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[HaskellFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

def _instance_equation(f: FileFacts[HaskellFacts], o: CodeObject) -> bool:
    """An ``instance C T``'s method: it runs for ``T`` only, and the argument's type is not
    followed, so a bare call of the method's name is never taken to be it."""
    return o.qualname.startswith("instance ") and f.parents.get(o.id, f.file.id) == f.file.id


def _exported(f: FileFacts[HaskellFacts], name: str) -> list[CodeObject]:
    """The top-level functions and class methods of ``f`` named ``name``."""
    by_id = {o.id: o for o in f.objects}
    out = []
    for o in f.objects:
        if o.name != name or o.kind not in ("function", "method") or _instance_equation(f, o):
            continue
        parent = f.parents.get(o.id, f.file.id)
        if parent == f.file.id or (parent in by_id and by_id[parent].kind == "interface"):
            out.append(o)
    return out


def resolve(repo: str, facts: list[FileFacts[HaskellFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    modules: dict[str, list[FileFacts[HaskellFacts]]] = {}
    for f in facts:
        modules.setdefault(f.data.module, []).append(f)
    for f in facts:
        qualified: dict[str, list[FileFacts[HaskellFacts]]] = {}  # alias or module name -> files
        open_: list[tuple[FileFacts[HaskellFacts], list[str] | None]] = []
        outside: set[str] = set()  # aliases and names of modules outside the repository
        for ref in f.refs:
            if not isinstance(ref.data, HaskellImport):
                continue
            imp = ref.data
            targets = [t for t in modules.get(ref.name, []) if t is not f] if ref.name != "Main" else []
            if len(targets) != 1:
                res.external += 1
                outside.update(filter(None, (imp.alias, ref.name)))
                continue
            target = targets[0]
            link(res, f.file.id, target.file.id, "IMPORTS", ref.line)
            for name in filter(None, (imp.alias, ref.name)):
                qualified.setdefault(name, []).append(target)
            if not imp.qualified:
                open_.append((target, imp.names))
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, qualified, open_, outside, res)
    return res


def _resolve_call(f: FileFacts[HaskellFacts], ref: RawRef, index: ObjectIndex[HaskellFacts],
                  qualified: dict[str, list[FileFacts[HaskellFacts]]],
                  open_: list[tuple[FileFacts[HaskellFacts], list[str] | None]], outside: set[str],
                  res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    prefix, dot, name = ref.name.rpartition(".")
    if dot:
        targets = qualified.get(prefix)
        if targets is None:
            res.external += 1  # ``M.size`` of ``Data.Map``, a module outside the repository
            return
        call_target(res, ref.source, ref.name, ref.line, [o for t in targets for o in _exported(t, name)],
                    reason_none="unknown-attribute")
        return
    caller = index.objects.get(ref.source)
    if caller is not None:  # ``where`` functions of the caller and the functions around it
        parts = caller.qualname.split("#", 1)[0].split(".")
        for i in range(len(parts), 0, -1):
            local = [o for o in f.objects if o.qualname == ".".join([*parts[:i], name]) and o.kind == "function"
                     and not _instance_equation(f, o)]
            if local:
                call_target(res, ref.source, ref.name, ref.line, local)
                return
    found = _exported(f, name)
    if not found:
        found = [o for t, names in open_ if names is None or name in names for o in _exported(t, name)]
    if found:
        call_target(res, ref.source, ref.name, ref.line, found)
    elif name in _PRELUDE:
        res.external += 1
    else:  # a parameter applied, a package's function imported unqualified, a name we do not know
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
