"""Elixir: modules, protocols, ``alias``/``import``/``use``, ExUnit tests.

Objects: ``defmodule A.B`` is a ``class`` object ``A.B`` (nested modules
prefix their names, as Elixir does); ``defprotocol`` an ``interface``;
``defimpl P, for: T`` the ``class`` ``P.T`` (Elixir's own name for it);
``def``/``defp``/``defmacro``/``defguard``/``defdelegate`` inside a module a
``method`` of it (a function of the module), its clauses one object. ``@doc``
and ``@moduledoc`` strings are the docstrings. In a test file (``*_test.exs``
or under ``test/``) an ExUnit ``test "..." do`` block is a ``test``, inside
the ``describe`` blocks that prefix its name.

Imports: ``alias``, ``import``, ``require`` and ``use`` of a module the
repository defines link the file to that module (``alias A.{B, C}`` to each);
other modules (``Enum``, ``GenServer``, a dependency's) are external.

Calls resolve when certain: ``f(...)`` (and ``|> f()``) to a function of the
caller's module, else of a module it ``import``s; ``Mod.f(...)`` with ``Mod``
expanded through the file's aliases (``__MODULE__`` is the caller's module) to
a function of that module of the repository. A module the repository does not
define, and Kernel's functions and special forms, are external; a call on a
variable (``fun.()``, ``mod.f()``) stays unresolved (``dynamic-receiver``), a
function the module does not define ``unknown-attribute``/``unknown-name``.
``x.field`` without parentheses is a map access, not recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.clauses import merge_clauses
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import descendants, end_line, start_line, text
from vitalrag.model import CodeObject

_TEST_FILE = re.compile(r"(^|/)test/|_test\.exs$")
_DEFINERS = frozenset({"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn",
                       "defnp"})
#: the definitions' own keywords: the syntax of a definition, not calls
_MODULE_DEFINERS = frozenset({"defmodule", "defprotocol", "defimpl", "defstruct", "defexception"})
_IMPORTERS = frozenset({"alias", "import", "require", "use"})
#: the module attributes whose arguments are types (their ``f(t)`` are no calls)
_TYPESPECS = frozenset({"spec", "type", "typep", "opaque", "callback", "macrocallback"})
#: a callee that is no call worth a reference (``x.field`` map access)
_SKIP = "\0"
#: Kernel's functions and macros and the special forms (and ExUnit's): external
_KERNEL = frozenset("""
abs apply binary_part bit_size byte_size ceil div elem exit floor hd is_atom is_binary is_bitstring
is_boolean is_float is_function is_integer is_list is_map is_map_key is_nil is_number is_pid is_port
is_reference is_tuple length make_ref map_size max min node not rem round self send spawn spawn_link
spawn_monitor throw tl trunc tuple_size raise reraise inspect to_string to_charlist put_elem
get_in put_in update_in pop_in struct struct! if unless case cond with for fn try receive quote unquote
unquote_splicing import alias require use def defp defmacro defmacrop defmodule defprotocol defimpl
defstruct defexception defdelegate defguard defguardp defoverridable defcallback then tap match? sigil_r
sigil_s sigil_w dbg super __MODULE__ __ENV__ __CALLER__ __DIR__ __STACKTRACE__ and or in
describe test setup setup_all assert refute assert_raise assert_receive refute_receive assert_in_delta
doctest on_exit start_supervised start_supervised! flunk catch_throw catch_exit
""".split())


@dataclass(frozen=True, slots=True)
class ElixirFacts(Fact):
    """An Elixir file's ``FileFacts.data``: nothing beyond the facts themselves."""


@dataclass(frozen=True, slots=True)
class ElixirImport(RefDetail):
    """An ``alias``/``import``/``require``/``use`` of a module (the reference's name)."""

    verb: str
    #: the name it binds: ``as:``, else the module's last part (``alias`` only)
    alias: str | None
    #: the module whose body holds it ("" at the top level)
    scope: str


FACT_TYPES: tuple[type, ...] = (ElixirFacts, ElixirImport)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    return "\n".join(re.sub(r"^#+ ?", "", c.strip()) for c in comments).strip()


def _keyword(node: Node, key: str) -> Node | None:
    """The value of ``key:`` among a call's keyword arguments."""
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    for kw in (c for c in (args.named_children if args is not None else ()) if c.type == "keywords"):
        for pair in kw.named_children:
            k = pair.child_by_field_name("key")
            if k is not None and text(k).rstrip(": ") == key:
                return pair.child_by_field_name("value")
    return None


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.kind in ("test", "module"):
        if not is_test_file(path):
            return None
        cand.name = " ".join(cand.name.strip("\"'").split())
        return cand
    if cand.node.type == "call" and cand.kind == "class":
        target = cand.node.child_by_field_name("target")
        if target is not None and text(target) == "defimpl":
            for_ = _keyword(cand.node, "for")
            if for_ is None:
                return None
            cand.name = f"{cand.name}.{text(for_)}"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        call = node.parent
        attribute = call.parent if call is not None else None
        if attribute is not None and attribute.type == "unary_operator" and text(attribute).startswith("@"):
            return _SKIP  # ``@doc "..."``, ``@spec f(t)``: a module attribute
        name = text(node)
        return _SKIP if name in _DEFINERS or name in _MODULE_DEFINERS else name
    if node.type == "dot":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or right.type != "identifier":
            return None
        call = node.parent
        if left.type == "identifier" and text(left) != "__MODULE__" and call is not None and not any(
                c.type == "arguments" for c in call.children):
            return _SKIP  # ``map.field``
        if left.type in ("alias", "identifier", "atom"):
            return f"{text(left)}.{text(right)}"
    return None


def _alias_refs(node: Node, facts: FileFacts[ElixirFacts], verb: str, scope: str) -> None:
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    first = args.named_children[0] if args is not None and args.named_children else None
    if first is None:
        return
    as_ = _keyword(node, "as")
    line = start_line(node)
    if first.type == "alias":
        module = text(first)
        alias = text(as_) if as_ is not None else module.rsplit(".", 1)[-1]
        facts.refs.append(RawRef("import", facts.file.id, module, line,
                                 ElixirImport(verb, alias if verb == "alias" else None, scope)))
    elif first.type == "dot":  # ``alias A.{B, C}``
        left, right = first.child_by_field_name("left"), first.child_by_field_name("right")
        if left is None or right is None or right.type != "tuple":
            return
        for part in right.named_children:
            if part.type == "alias":
                module = f"{text(left)}.{text(part)}"
                facts.refs.append(RawRef("import", facts.file.id, module, line,
                                         ElixirImport(verb, text(part).rsplit(".", 1)[-1] if verb == "alias"
                                                      else None, scope)))


def _module_at(modules: list[CodeObject], line: int) -> str:
    inside = [m for m in modules if m.start_line <= line <= m.end_line]
    return max(inside, key=lambda m: m.start_line).qualname if inside else ""


def _annotate(root: Node, facts: FileFacts[ElixirFacts]) -> ElixirFacts:
    lines = facts.text.split("\n")
    merge_clauses(facts, lines, frozenset({"function", "method"}))
    modules = [o for o in facts.objects if o.kind in ("class", "interface")]
    heads = {(o.id, o.name, o.start_line) for o in facts.objects if o.kind in ("function", "method")}
    # a definition's head (``def total(items)``) is no call of ``total``; nor is ``map.field``
    facts.refs = [r for r in facts.refs if r.name != _SKIP and (r.source, r.name, r.line) not in heads]
    docs: list[tuple[int, int, str, str]] = []  # (first line, last line, attribute, text)
    typespecs: list[tuple[int, int]] = []  # the lines of ``@spec``, ``@type``, ``@callback``...
    for node in descendants(root, frozenset({"call", "unary_operator"})):
        if node.type == "unary_operator":
            operand = node.child_by_field_name("operand")
            target = operand.child_by_field_name("target") if operand is not None else None
            if target is not None and text(target) in _TYPESPECS:
                typespecs.append((start_line(node), end_line(node)))
            if operand is not None and target is not None and text(target) in ("doc", "moduledoc"):
                strings = list(descendants(operand, frozenset({"quoted_content"})))
                if strings:
                    docs.append((start_line(node), end_line(node), text(target), text(strings[0]).strip()))
            continue
        target = node.child_by_field_name("target")
        verb = text(target) if target is not None and target.type == "identifier" else ""
        if verb in _IMPORTERS:
            _alias_refs(node, facts, verb, _module_at(modules, start_line(node)))
    if typespecs:  # ``f(t)`` and ``t()`` in ``@spec f(t) :: t()`` are types: the module called nothing
        module_ids = {m.id for m in modules}
        facts.refs = [r for r in facts.refs if r.kind != "call" or r.source not in module_ids
                      or not any(a <= r.line <= b for a, b in typespecs)]
    objects = list(facts.objects)
    for first, last, attribute, doc in docs:
        if attribute == "moduledoc":
            owner = [i for i, o in enumerate(objects) if o.kind in ("class", "interface")
                     and o.start_line < first and last <= o.end_line]
            pick = max(owner, key=lambda i: objects[i].start_line) if owner else None
        else:
            after = [i for i, o in enumerate(objects) if o.start_line > last and o.kind in ("function", "method")]
            pick = min(after, key=lambda i: objects[i].start_line) if after else None
        if pick is not None and not objects[pick].docstring:
            objects[pick] = replace(objects[pick], docstring=doc)
    for i, o in enumerate(objects):
        if o.kind == "test":
            objects[i] = replace(o, signature=lines[o.start_line - 1].strip())
        elif o.kind in ("function", "method"):  # ``def f(x), do: ...`` has no body field
            objects[i] = replace(o, signature=re.split(r",\s*do:|\s+do\b", o.signature, maxsplit=1)[0])
        elif o.kind in ("class", "interface"):  # the block is no body field: the first line
            objects[i] = replace(o, signature=lines[o.start_line - 1].strip().removesuffix(" do"))
    facts.objects = objects
    return ElixirFacts()


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[ElixirFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

def resolve(repo: str, facts: list[FileFacts[ElixirFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    modules: dict[str, list[CodeObject]] = {}
    functions: dict[str, list[CodeObject]] = {}  # module qualname -> its functions
    module_of: dict[str, str] = {}  # function id -> its module's qualname
    for f in facts:
        by_id = {o.id: o for o in f.objects}
        for o in f.objects:
            if o.kind in ("class", "interface"):
                modules.setdefault(o.qualname, []).append(o)
            elif o.kind in ("function", "method", "test"):
                parent = by_id.get(f.parents.get(o.id, ""))
                if parent is not None and parent.kind in ("class", "interface"):
                    module_of[o.id] = parent.qualname
                    if o.kind != "test":
                        functions.setdefault(parent.qualname, []).append(o)
    for f in facts:
        aliases: dict[tuple[str, str], str] = {}  # (scope, alias) -> module
        imported: dict[str, list[str]] = {}  # scope -> imported modules of the repository
        for ref in f.refs:
            if not isinstance(ref.data, ElixirImport):
                continue
            imp = ref.data
            if imp.alias:
                aliases[(imp.scope, imp.alias)] = ref.name
            found = modules.get(ref.name, [])
            if not found:
                res.external += 1
                continue
            for m in found:
                link(res, f.file.id, m.id, "IMPORTS", ref.line)
            if imp.verb == "import":
                imported.setdefault(imp.scope, []).append(ref.name)
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(ref, index, modules, functions, module_of, aliases, imported, res)
    return res


def _scopes(module: str) -> list[str]:
    """The module and the modules around it, innermost first, then the top level."""
    parts = module.split(".") if module else []
    return [".".join(parts[:i]) for i in range(len(parts), -1, -1)]


def _resolve_call(ref: RawRef, index: ObjectIndex[ElixirFacts], modules: dict[str, list[CodeObject]],
                  functions: dict[str, list[CodeObject]], module_of: dict[str, str],
                  aliases: dict[tuple[str, str], str], imported: dict[str, list[str]], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    caller = index.objects.get(ref.source)
    here = module_of.get(ref.source, caller.qualname if caller is not None and caller.kind == "class" else "")
    head, dot, name = ref.name.rpartition(".")
    if not dot:
        found = [o for o in functions.get(here, []) if o.name == name]
        if not found:
            found = [o for scope in _scopes(here) for m in imported.get(scope, []) for o in functions.get(m, [])
                     if o.name == name]
        if found:
            call_target(res, ref.source, ref.name, ref.line, found)
        elif name in _KERNEL:
            res.external += 1
        else:  # a local variable's function, a macro from a ``use``, a name we do not know
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if head[:1].islower() and head != "__MODULE__":  # ``var.f()``: a module or map in a variable
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    module = _expand(head, here, aliases)
    if module not in modules:
        res.external += 1  # ``Enum``, ``Logger``, ``:ets``, a dependency's module
        return
    call_target(res, ref.source, ref.name, ref.line, [o for o in functions.get(module, []) if o.name == name],
                reason_none="unknown-attribute")


def _expand(head: str, here: str, aliases: dict[tuple[str, str], str]) -> str:
    if head == "__MODULE__":
        return here
    first, _, rest = head.partition(".")
    for scope in _scopes(here):
        full = aliases.get((scope, first))
        if full is not None:
            return f"{full}.{rest}" if rest else full
    return head
