"""Lua: functions of module tables, ``require``, ``self`` members, busted tests.

Objects: ``function f()``, ``local function f()`` and ``f = function() end``
at the top level are ``function`` objects; ``function M.f()`` and
``M.f = function() end`` are functions named ``M.f``, ``function M:m()`` a
``method`` ``M.m``. A table is no object of its own (a Lua module is its file,
and the table it returns names its functions). In a test file (``*_spec.lua``,
``*_test.lua``, or under ``spec/`` or ``test/``) busted's ``it("...",
function() ... end)`` blocks are ``test`` objects named by their description,
inside the ``describe`` blocks that prefix their name.

Imports: ``require("a.b")`` (or ``require "a.b"``) names ``a/b.lua`` or
``a/b/init.lua`` under the repository root or a ``lua/``, ``src/`` or ``lib/``
folder, when exactly one file fits (none: a rock or the runtime's, external;
several: ``ambiguous-module``).

Calls resolve when certain: ``f()`` to a function of this file, else to a
global (non-``local``) function of a required file; ``M.f()`` to the function
``M.f`` of this file; ``x.f()``/``x:f()`` where ``local x = require(...)`` to
the function ``R.f`` of that file, ``R`` being the table the file returns;
``self.f()``/``self:f()`` in a function ``M.g`` to ``M.f`` of this file. The
standard library's tables (``string``, ``table``, ``vim``...) are external;
the methods of other values stay unresolved (``dynamic-receiver``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import descendants, start_line, text
from vitalrag.model import CodeObject

_TEST_FILE = re.compile(r"(^|/)(spec|specs|test|tests)/|_spec\.lua$|_test\.lua$|(^|/)test_[^/]*\.lua$")
_FUNCTION_HEAD = re.compile(r"^.*?function\b[^(]*\([^)]*\)")
_NAME = re.compile(r"^[A-Za-z_]\w*([.:][A-Za-z_]\w*)*$")
#: the runtime's global functions and tables (Lua 5.1-5.4, LuaJIT, Neovim, busted): external
_GLOBAL_FUNCTIONS = frozenset({
    "assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs", "load", "loadfile",
    "loadstring", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require",
    "select", "setmetatable", "tonumber", "tostring", "type", "unpack", "xpcall", "module", "setfenv",
    "getfenv", "describe", "context", "it", "pending", "spy", "stub", "mock", "before_each", "after_each",
    "setup", "teardown", "finally", "insulate", "expose",
})
_GLOBAL_TABLES = frozenset({
    "string", "table", "math", "os", "io", "coroutine", "debug", "utf8", "package", "bit", "bit32", "jit",
    "ffi", "vim", "assert", "spy", "stub", "mock", "match", "ngx",
})


@dataclass(frozen=True, slots=True)
class LuaFacts(Fact):
    """A Lua file's ``FileFacts.data``."""

    #: the name of the table the file returns (``return M``), None if it returns no name
    returns: str | None
    #: ids of the ``local`` functions (a required file's globals are the others)
    locals: list[str]


@dataclass(frozen=True, slots=True)
class LuaRequire(RefDetail):
    #: the local the module is bound to (``local x = require "x"``)
    alias: str | None


FACT_TYPES: tuple[type, ...] = (LuaFacts, LuaRequire)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    lines = [re.sub(r"^--+ ?", "", c.strip()) for c in comments if c.startswith("--") and not c.startswith("--[[")]
    return "\n".join(lines).strip()


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.kind in ("test", "module"):
        if not is_test_file(path):
            return None
        cand.name = " ".join(cand.name.strip("\"'[]=").split())
        return cand
    owner, sep, name = cand.name.replace(":", ".").rpartition(".")
    if sep:
        cand.owner, cand.name = owner, name
    return cand


def _call_name(node: Node) -> str | None:
    if node.type in ("identifier", "dot_index_expression", "method_index_expression"):
        written = text(node)
        return written if _NAME.match(written) else None
    return None


def _string(node: Node | None) -> str | None:
    if node is None or node.type != "string":
        return None
    content = node.child_by_field_name("content")
    return text(content) if content is not None else ""


def _require_spec(call: Node) -> str | None:
    """The module a ``require "x"`` call names, else None."""
    name = call.child_by_field_name("name")
    if name is None or name.type != "identifier" or text(name) != "require":
        return None
    args = call.child_by_field_name("arguments")
    if args is None:
        return None
    if args.type == "string":
        return _string(args)
    first = args.named_children[0] if args.named_children else None
    return _string(first)


def _annotate(root: Node, facts: FileFacts[LuaFacts]) -> LuaFacts:
    for call in descendants(root, frozenset({"function_call"})):
        spec = _require_spec(call)
        if not spec:
            continue
        alias = None
        up = call.parent
        if up is not None and up.type == "expression_list":
            assignment = up.parent
            names = next((c for c in assignment.named_children if c.type == "variable_list"), None) \
                if assignment is not None else None
            if names is not None and names.named_children and names.named_children[0].type == "identifier":
                alias = text(names.named_children[0])
        facts.refs.append(RawRef("import", facts.file.id, spec, start_line(call), LuaRequire(alias)))
    returns = None
    last = root.named_children[-1] if root.named_children else None
    if last is not None and last.type == "return_statement" and last.named_children:
        values = last.named_children[0]
        if values.named_children and values.named_children[0].type == "identifier":
            returns = text(values.named_children[0])
    local_lines = {start_line(n) for n in root.named_children
                   if n.type == "variable_declaration" or (n.type == "function_declaration" and
                                                            text(n).startswith("local"))}
    lines = facts.text.split("\n")
    objects: list[CodeObject] = []
    for o in facts.objects:
        if o.kind == "test":
            o = replace(o, signature=lines[o.start_line - 1].strip())
        else:  # ``f = function(a) ... end`` has no body field to stop the signature at
            head = _FUNCTION_HEAD.match(o.signature)
            o = replace(o, signature=head.group(0) if head else o.signature)
        objects.append(o)
    facts.objects = objects
    locals_ = [o.id for o in objects if o.kind == "function" and facts.parents.get(o.id) == facts.file.id
               and o.start_line in local_lines]
    return LuaFacts(returns, locals_)


SUPPORT = Support(
    wrappers=frozenset({"variable_declaration"}),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[LuaFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

def _module_files(spec: str, files: set[str], roots: list[str]) -> list[str]:
    rel = spec.replace(".", "/")
    out = set()
    for root in roots:
        for candidate in (f"{rel}.lua", f"{rel}/init.lua"):
            path = posixpath.join(root, candidate)
            if path in files:
                out.add(path)
    return sorted(out)


def resolve(repo: str, facts: list[FileFacts[LuaFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    files = {f.path for f in facts}
    roots = sorted({""} | {"/".join(parts[:i + 1]) for parts in (p.split("/") for p in files)
                           for i, part in enumerate(parts[:-1]) if part in ("lua", "src", "lib")})
    for f in facts:
        required: list[FileFacts[LuaFacts]] = []
        bound: dict[str, FileFacts[LuaFacts]] = {}
        outside: set[str] = set()  # locals bound to a module outside the repository
        for ref in f.refs:
            if ref.kind != "import":
                continue
            found = _module_files(ref.name, files, roots)
            if len(found) == 1:
                target = index.files[found[0]]
                link(res, f.file.id, target.file.id, "IMPORTS", ref.line)
                required.append(target)
                if isinstance(ref.data, LuaRequire) and ref.data.alias:
                    bound[ref.data.alias] = target
            elif found:
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module")
            else:
                res.external += 1
                if isinstance(ref.data, LuaRequire) and ref.data.alias:
                    outside.add(ref.data.alias)
        by_qualname: dict[str, list[CodeObject]] = {}
        for o in f.objects:
            by_qualname.setdefault(o.qualname, []).append(o)
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, by_qualname, required, bound, outside, res)
    return res


def _resolve_call(f: FileFacts[LuaFacts], ref: RawRef, index: ObjectIndex[LuaFacts],
                  by_qualname: dict[str, list[CodeObject]], required: list[FileFacts[LuaFacts]],
                  bound: dict[str, FileFacts[LuaFacts]], outside: set[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    parts = ref.name.replace(":", ".").split(".")
    if len(parts) == 1:
        name = parts[0]
        # a ``local function`` is visible after its line (and in itself)
        found = [o for o in by_qualname.get(name, []) if o.kind == "function"
                 and (o.id not in f.data.locals or o.start_line <= ref.line)]
        if not found:
            found = [o for r in required for o in index.top_level(r.path, name)
                     if o.kind == "function" and o.qualname == name and o.id not in r.data.locals]
        if found:
            call_target(res, ref.source, ref.name, ref.line, found)
        elif name in _GLOBAL_FUNCTIONS:
            res.external += 1
        else:  # a local closure, a parameter, a global of a file not required
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    head, member = parts[0], ".".join(parts[1:])
    if head == "self":
        caller = index.objects.get(ref.source)
        owner = caller.qualname.rsplit(".", 1)[0] if caller is not None and "." in caller.qualname else None
        if owner is None:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
            return
        call_target(res, ref.source, ref.name, ref.line, by_qualname.get(f"{owner}.{member}", []),
                    reason_none="unknown-attribute")
    elif head in bound:
        target = bound[head]
        table = target.data.returns
        found = [o for o in target.objects if table is not None and o.qualname == f"{table}.{member}"]
        call_target(res, ref.source, ref.name, ref.line, found, reason_none="unknown-attribute")
    elif any(q.startswith(head + ".") for q in by_qualname):  # a table of this file
        call_target(res, ref.source, ref.name, ref.line, by_qualname.get(f"{head}.{member}", []),
                    reason_none="unknown-attribute")
    elif head in _GLOBAL_TABLES or head in outside:
        res.external += 1
    else:  # a method of a value: its table is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
