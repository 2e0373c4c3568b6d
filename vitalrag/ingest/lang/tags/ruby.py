"""Ruby: classes and modules, ``require``, constant lookup, RSpec and minitest.

Objects: a ``class`` or ``module`` is a ``class`` object (``class A::B`` is
``A.B``), a ``def`` inside one a ``method`` (``def self.x`` and the ``def``s of
``class << self`` too: the facts remember which are singleton methods), a
top-level ``def`` a ``function``. In a test file (``*_spec.rb``, ``*_test.rb``,
``test_*.rb``, or under ``spec/`` or ``test/``) an example block (``it``,
``specify``, ``test "..." do``...) is a ``test`` named by its description,
inside the ``describe``/``context`` blocks that prefix its name; a ``test_*``
method of a class deriving from a ``...Test`` or ``...TestCase`` is a test too.

Imports: ``require_relative "x"`` names the file beside this one;
``require "a/b"`` the repository file ``a/b.rb`` under the root or a ``lib/``
folder when exactly one fits (none: a gem or the standard library, external;
several: ``ambiguous-module``).

Calls resolve when certain: ``helper()`` to a method of the caller's class (of
any of the files that reopen it; singleton methods from singleton methods), else
to a top-level ``def`` of this file or a required one; ``self.x`` the same way;
``Const.x`` through Ruby's lexical constant lookup (``A::B::C`` is looked up
in ``A::B``, then ``A``, then the top level) to a singleton method of that
class or module, and ``Const.new`` to the class. A constant the repository
does not define is external; a method of any other value, one a mixin or
superclass may provide and ``send``/``method_missing`` stay unresolved with
their reason. Bare words without arguments or parentheses (``total``) are not
recorded: the grammar cannot tell a method call from a local variable.
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

_TEST_FILE = re.compile(r"(^|/)(spec|test|tests)/|_spec\.rb$|_test\.rb$|(^|/)test_[^/]*\.rb$")
_TEST_BASE = re.compile(r"(Test|TestCase|Spec)$")
_CONSTANT = re.compile(r"^(::)?[A-Z]\w*(::[A-Z]\w*)*$")
#: magic comments (``# frozen_string_literal: true``) document nothing
_MAGIC = re.compile(r"^#\s*-?\*?-?\s*(frozen_string_literal|(en)?coding|warn_indent|shareable_constant_value)\b")
_REQUIRES = frozenset({"require", "require_relative", "load"})
#: Kernel, Module and test-framework methods a bare call may name: external
_BUILTINS = frozenset({
    "puts", "print", "p", "pp", "format", "sprintf", "printf", "raise", "fail", "require", "require_relative",
    "load", "autoload", "loop", "lambda", "proc", "catch", "throw", "sleep", "rand", "srand", "gets",
    "open", "exit", "abort", "at_exit", "block_given?", "binding", "caller", "warn", "freeze", "frozen?",
    "attr_reader", "attr_writer", "attr_accessor", "include", "extend", "prepend", "private", "public",
    "protected", "module_function", "private_constant", "define_method", "alias_method", "new", "super",
    "instance_variable_get", "instance_variable_set", "respond_to?", "send", "public_send", "is_a?",
    "kind_of?", "nil?", "to_s", "inspect", "hash", "dup", "clone", "tap", "then", "Integer", "Float",
    "String", "Array", "Hash", "Rational", "Complex", "system", "exec", "spawn", "trap", "sprintf",
    # RSpec and minitest
    "describe", "context", "it", "specify", "example", "scenario", "its", "let", "let!", "subject",
    "before", "after", "around", "expect", "allow", "receive", "eq", "eql", "be", "match", "include",
    "raise_error", "double", "instance_double", "shared_examples", "it_behaves_like", "test", "setup",
    "teardown", "refute", "assert", "assert_equal", "assert_nil", "assert_raises", "refute_equal",
    "assert_includes", "assert_match", "refute_nil", "assert_predicate", "assert_empty",
})


@dataclass(frozen=True, slots=True)
class RubyFacts(Fact):
    """A Ruby file's ``FileFacts.data``."""

    #: ids of the singleton (class) methods: ``def self.x``, ``class << self``
    singletons: list[str]


@dataclass(frozen=True, slots=True)
class RubyRequire(RefDetail):
    #: ``require_relative`` (and ``load`` of a ``./`` path): the path is the file's folder's
    relative: bool


FACT_TYPES: tuple[type, ...] = (RubyFacts, RubyRequire)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    lines = [re.sub(r"^#+ ?", "", c.rstrip()) for c in comments
             if c.startswith("#") and not c.startswith("#!") and not _MAGIC.match(c)]
    return "\n".join(lines).strip()


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] in "\"'" and name[-1] == name[0]:
        return name[1:-1]
    return name.removeprefix(":")


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.kind in ("test", "module"):  # an example or example group: in test files only
        if not is_test_file(path):
            return None
        cand.name = " ".join(_unquote(cand.name).split())
        return cand
    if cand.kind == "class":
        cand.name = cand.name.removeprefix("::").replace("::", ".")
    elif cand.kind == "function" and cand.name.startswith("test_") and is_test_file(path):
        body = cand.node.parent
        cls = body.parent if body is not None else None
        base = cls.child_by_field_name("superclass") if cls is not None and cls.type == "class" else None
        if base is not None and _TEST_BASE.search(text(base).strip()):
            cand.kind = "test"
    return cand


def _short(node: Node) -> str:
    shown = " ".join(text(node).split())
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _call_name(node: Node) -> str | None:
    method = node.child_by_field_name("method")
    if method is None:
        return None
    receiver = node.child_by_field_name("receiver")
    name = text(method)
    return name if receiver is None else f"{_short(receiver)}.{name}"


def _string(node: Node | None) -> str | None:
    """The text of a string literal without interpolation, else None."""
    if node is None or node.type != "string":
        return None
    parts = node.named_children
    if any(p.type != "string_content" for p in parts):
        return None
    return "".join(text(p) for p in parts)


def _comment_lines_above(lines: list[str], line: int) -> list[str]:
    out: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i].strip())
        i -= 1
    return out[::-1]


def _annotate(root: Node, facts: FileFacts[RubyFacts]) -> RubyFacts:
    singleton_lines: set[tuple[int, str]] = set()
    for node in descendants(root, frozenset({"call", "singleton_method", "singleton_class"})):
        if node.type == "singleton_method":
            singleton_lines.add((start_line(node), text(node.child_by_field_name("name"))))
        elif node.type == "singleton_class":
            body = node.child_by_field_name("body")
            for m in body.named_children if body is not None else ():
                if m.type == "method":
                    singleton_lines.add((start_line(m), text(m.child_by_field_name("name"))))
        elif node.child_by_field_name("receiver") is None and text(node.child_by_field_name("method")) in _REQUIRES:
            args = node.child_by_field_name("arguments")
            spec = _string(args.named_children[0]) if args is not None and args.named_children else None
            if spec:
                method = text(node.child_by_field_name("method"))
                relative = method == "require_relative" or spec.startswith(("./", "../"))
                facts.refs.append(RawRef("import", facts.file.id, spec, start_line(node), RubyRequire(relative)))
    lines = facts.text.split("\n")
    singletons: list[str] = []
    objects: list[CodeObject] = []
    for o in facts.objects:
        if not o.docstring and o.kind != "test":
            # a comment right after ``module X`` belongs to the module node, not to the first
            # definition of its body that it documents: read it off the lines
            o = replace(o, docstring=_docstring(_comment_lines_above(lines, o.start_line)))
        if o.kind == "class":  # the name written (``A::B``) is ``A.B``, named ``B``; no comment after it
            o = replace(o, name=o.name.rsplit(".", 1)[-1], signature=o.signature.split(" #", 1)[0])
        elif o.kind == "test":  # an example block: its first line, not the whole block
            o = replace(o, signature=lines[o.start_line - 1].strip())
        elif o.kind in ("method", "function"):
            # ``def x = expr`` and ``def x; end`` have no body to stop the signature at
            o = replace(o, signature=o.signature.split(";", 1)[0].removesuffix("=").rstrip())
            if (o.start_line, o.name) in singleton_lines:
                singletons.append(o.id)
        objects.append(o)
    facts.objects = objects
    return RubyFacts(singletons)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[RubyFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

def _qualname(o: CodeObject) -> str:
    return o.qualname.split("#", 1)[0]


class _Classes:
    """Classes and modules by qualified name (all the files that open one), and
    their methods by (class qualified name, singleton?, name)."""

    def __init__(self, facts: list[FileFacts[RubyFacts]]) -> None:
        self.defs: dict[str, list[CodeObject]] = {}
        self.methods: dict[tuple[str, bool, str], list[CodeObject]] = {}
        self.singleton: set[str] = set()
        self.owner: dict[str, str] = {}  # method id -> its class's qualified name
        for f in facts:
            self.singleton.update(f.data.singletons)
        for f in facts:
            by_id = {o.id: o for o in f.objects}
            for o in f.objects:
                if o.kind == "class":
                    self.defs.setdefault(_qualname(o), []).append(o)
                elif o.kind in ("method", "test", "function"):
                    parent = by_id.get(f.parents.get(o.id, ""))
                    if parent is not None and parent.kind == "class":
                        cls = _qualname(parent)
                        self.owner[o.id] = cls
                        key = (cls, o.id in self.singleton, o.name)
                        self.methods.setdefault(key, []).append(o)

    def constructed(self, qualname: str) -> list[CodeObject]:
        """What ``new`` of a class calls: the class, or of the files that reopen
        it, the one that defines ``initialize``."""
        defs = self.defs.get(qualname, [])
        if len(defs) < 2:
            return defs
        ids = {o.id for o in self.methods.get((qualname, False, "initialize"), [])}
        with_init = [d for d in defs if any(i.startswith(d.id + ".") for i in ids)]
        return with_init if len(with_init) == 1 else defs

    def lookup(self, const: str, scope: str) -> str | None:
        """The qualified name ``const`` (``A::B``) denotes from inside ``scope`` (``X.Y``)."""
        dotted = const.replace("::", ".")
        if const.startswith("::"):
            dotted = dotted.lstrip(".")
            return dotted if dotted in self.defs else None
        parts = scope.split(".") if scope else []
        for i in range(len(parts), -1, -1):
            candidate = ".".join([*parts[:i], dotted])
            if candidate in self.defs:
                return candidate
        return None


def _require_target(f: FileFacts[RubyFacts], ref: RawRef, files: set[str],
                    roots: list[str]) -> list[str]:
    spec = ref.name if ref.name.endswith(".rb") else ref.name + ".rb"
    if isinstance(ref.data, RubyRequire) and ref.data.relative:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), spec))
        return [path] if path in files else []
    return sorted({posixpath.join(root, spec) for root in roots} & files)


def resolve(repo: str, facts: list[FileFacts[RubyFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    classes = _Classes(facts)
    files = {f.path for f in facts}
    # load path roots: the repository root and every ``lib/`` folder
    roots = sorted({""} | {"/".join(parts[:i + 1]) for parts in (p.split("/") for p in files)
                           for i, part in enumerate(parts[:-1]) if part == "lib"})
    for f in facts:
        required: list[str] = []
        for ref in f.refs:
            if ref.kind != "import":
                continue
            found = _require_target(f, ref, files, roots)
            if len(found) == 1:
                link(res, f.file.id, index.files[found[0]].file.id, "IMPORTS", ref.line)
                required.append(found[0])
            elif found:
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module")
            elif isinstance(ref.data, RubyRequire) and ref.data.relative:
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "missing-module")
            else:
                res.external += 1  # a gem or the standard library
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, classes, required, res)
    return res


def _top_level(index: ObjectIndex[RubyFacts], paths: list[str], name: str) -> list[CodeObject]:
    return [o for p in paths for o in index.top_level(p, name) if o.kind == "function"]


def _resolve_call(f: FileFacts[RubyFacts], ref: RawRef, index: ObjectIndex[RubyFacts], classes: _Classes,
                  required: list[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    caller = index.objects.get(ref.source)
    cls = classes.owner.get(ref.source, "") if caller is not None else ""
    if not cls and caller is not None and caller.kind == "class":
        cls = _qualname(caller)  # a call in a class body (``include``, a macro)
    singleton = ref.source in classes.singleton or (caller is not None and caller.kind == "class")
    receiver, dot, method = ref.name.rpartition(".")
    if not dot:
        if method == "new" and singleton and cls:
            call_target(res, ref.source, ref.name, ref.line, classes.constructed(cls))
            return
        found = classes.methods.get((cls, singleton, method), []) if cls else []
        if not found:
            found = _top_level(index, [f.path], method) or _top_level(index, required, method)
        if found:
            call_target(res, ref.source, ref.name, ref.line, found)
        elif method in _BUILTINS or method.startswith("assert_") or method.startswith("refute_"):
            res.external += 1
        else:  # a mixin's or a superclass's method, or a name we do not know
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if receiver == "self":
        if not cls:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
            return
        call_target(res, ref.source, ref.name, ref.line, classes.methods.get((cls, singleton, method), []),
                    reason_none="unknown-attribute")
        return
    if not _CONSTANT.match(receiver):  # a value: its class is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    target = classes.lookup(receiver, cls)
    if target is None:
        res.external += 1  # ``JSON``, ``File``, a gem's constant
    elif method == "new":
        call_target(res, ref.source, ref.name, ref.line, classes.constructed(target))
    else:
        call_target(res, ref.source, ref.name, ref.line, classes.methods.get((target, True, method), []),
                    reason_none="unknown-attribute")
