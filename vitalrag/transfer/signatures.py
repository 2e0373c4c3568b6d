"""Callable signatures of repository objects, and whether a call fits one.

Python: positional-only, positional-or-keyword and keyword-only parameters with
their defaults, ``*args`` and ``**kwargs``; a call through an instance or a
class method binds the first parameter (``self``/``cls``). Java: one arity per
overload, varargs accept any count from the fixed part up.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.ingest.lang.treesitter import text


@dataclass(frozen=True, slots=True)
class PyParam:
    name: str
    kind: str  # "positional" (positional-only), "either", "keyword" (keyword-only)
    has_default: bool


@dataclass(frozen=True, slots=True)
class PySignature:
    params: tuple[PyParam, ...]
    varargs: bool
    varkw: bool
    decorators: tuple[str, ...] = ()

    @property
    def binds_first(self) -> bool:
        """Whether a call through an instance or class binds the first parameter."""
        return "staticmethod" not in self.decorators

    def bound(self) -> PySignature:
        """The signature with its first positional parameter bound (self/cls)."""
        for i, p in enumerate(self.params):
            if p.kind != "keyword":
                return PySignature(self.params[:i] + self.params[i + 1:], self.varargs, self.varkw,
                                   self.decorators)
        return self


@dataclass(frozen=True, slots=True)
class PyCallShape:
    positional: int
    keywords: tuple[str, ...]
    star: bool  # *args in the call: any number of positionals
    double_star: bool  # **kwargs in the call: any keywords


def python_signature(definition: Node) -> PySignature:
    """The signature of a tree-sitter ``function_definition`` (decorators from its parent)."""
    params: list[PyParam] = []
    varargs = varkw = False
    kind = "either"
    node = definition.child_by_field_name("parameters")
    for child in node.named_children if node is not None else []:
        t = child.type
        if t == "positional_separator":
            params = [PyParam(p.name, "positional", p.has_default) for p in params]
        elif t == "keyword_separator":
            kind = "keyword"
        elif t == "list_splat_pattern":
            varargs, kind = True, "keyword"
        elif t == "dictionary_splat_pattern":
            varkw = True
        elif t == "identifier":
            params.append(PyParam(text(child), kind, False))
        elif t == "typed_parameter":
            inner = child.named_children[0] if child.named_children else None
            if inner is not None and inner.type == "list_splat_pattern":
                varargs, kind = True, "keyword"
            elif inner is not None and inner.type == "dictionary_splat_pattern":
                varkw = True
            elif inner is not None:
                params.append(PyParam(text(inner), kind, False))
        elif t in ("default_parameter", "typed_default_parameter"):
            params.append(PyParam(text(child.child_by_field_name("name")), kind, True))
    decorators: list[str] = []
    parent = definition.parent
    if parent is not None and parent.type == "decorated_definition":
        for dec in parent.children:
            if dec.type == "decorator" and dec.named_children:
                decorators.append(text(dec.named_children[0]).split("(", 1)[0].rsplit(".", 1)[-1])
    return PySignature(tuple(params), varargs, varkw, tuple(decorators))


def python_fit(sig: PySignature, call: PyCallShape) -> str | None:
    """Why ``call`` cannot bind to ``sig``, or None when it fits."""
    positional = [p for p in sig.params if p.kind != "keyword"]
    if call.positional > len(positional) and not sig.varargs:
        return f"{call.positional} positional arguments, at most {len(positional)} accepted"
    filled = {p.name for p in positional[: call.positional]}
    names = {p.name: p for p in sig.params}
    for kw in call.keywords:
        p = names.get(kw)
        if p is None or p.kind == "positional":
            if not sig.varkw:
                return f"unexpected keyword argument {kw!r}"
            continue
        if kw in filled:
            return f"argument {kw!r} given twice"
        filled.add(kw)
    if call.star or call.double_star:
        return None  # unpacked arguments may fill what is missing
    missing = [p.name for p in sig.params if not p.has_default and p.name not in filled]
    if missing:
        return "missing argument(s) " + ", ".join(missing)
    return None


@dataclass(frozen=True, slots=True)
class JavaSignature:
    arity: int
    varargs: bool

    def accepts(self, n: int) -> bool:
        return n == self.arity or (self.varargs and n >= self.arity - 1)


def java_signature(declaration: Node) -> JavaSignature:
    """The arity of a ``method_declaration`` / ``constructor_declaration``."""
    params = declaration.child_by_field_name("parameters")
    kids = [c for c in params.named_children if c.type in ("formal_parameter", "spread_parameter",
                                                            "receiver_parameter")] if params else []
    kids = [c for c in kids if c.type != "receiver_parameter"]
    return JavaSignature(len(kids), bool(kids) and kids[-1].type == "spread_parameter")


def java_fit(overloads: list[JavaSignature], n: int) -> str | None:
    if any(s.accepts(n) for s in overloads):
        return None
    shown = sorted({f"{s.arity}{'+' if s.varargs else ''}" for s in overloads})
    return f"{n} argument(s); overloads take {', '.join(shown)}"
