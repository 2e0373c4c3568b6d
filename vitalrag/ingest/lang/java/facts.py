"""What Java extraction hands to resolution beyond objects: ``JavaFacts`` (a
file's ``FileFacts.data``: its package, types and methods) and the details of
its raw references (``RawRef.data``):

- ``import``: ``ImportDecl``;
- ``inherit``: ``Supertype`` (source the type, ``name`` the erased supertype as written);
- ``reference``: ``TypeUse`` (a type written in a field, parameter, return,
  throws or local declaration);
- ``call``: ``CallSite``, whose ``call`` holds the receiver and arguments as
  ``Expr`` encodings: what the resolver needs to type them (see
  ``walk.ReferenceWalker.encode``).
"""

from __future__ import annotations

from dataclasses import dataclass

from vitalrag.ingest.facts import Fact, RefDetail

#: enclosing anonymous classes, innermost first: (supertype as written, names of its own methods)
Anon = tuple[tuple[str, tuple[str, ...]], ...]
#: how many enclosing anonymous classes a reference keeps (``CallSite.anon``): a
#: reference that kept them all would make the facts quadratic in their nesting
MAX_ANON = 8


@dataclass(slots=True)
class JavaType(Fact):
    """A class, interface, enum or record the file declares (not an anonymous one)."""

    id: str
    name: str
    qualname: str
    kind: str
    #: the declaration's node type (``record_declaration``...)
    decl: str
    #: the enclosing type's id, for a member or local type
    outer: str | None
    #: type parameter -> its first bound, erased ("" when unbounded)
    tparams: dict[str, str]
    #: field (enum constant, record component) -> its declared type; the walk fills it
    fields: dict[str, str]


@dataclass(slots=True)
class JavaMethod(Fact):
    """A method or constructor of a named type."""

    id: str
    name: str
    #: the id of the type it belongs to
    cls: str | None
    #: parameter types, erased, as written (``String...`` for varargs)
    params: list[str]
    varargs: bool
    #: the erased return type ("" for a constructor)
    returns: str
    static: bool
    tparams: dict[str, str]
    ctor: bool


@dataclass(slots=True)
class JavaFacts(Fact):
    package: str
    types: list[JavaType]
    methods: list[JavaMethod]


@dataclass(frozen=True, slots=True)
class ImportDecl(RefDetail):
    static: bool
    #: ``import p.*;`` (``import static p.T.*;``)
    ondemand: bool


@dataclass(frozen=True, slots=True)
class Supertype(RefDetail):
    #: "extends" or "implements"
    rel: str


@dataclass(frozen=True, slots=True)
class TypeUse(RefDetail):
    #: the innermost named class around it
    cls: str | None


# -- expressions: a receiver or an argument, as far as the resolver can type it ---------------

@dataclass(slots=True)
class Var(Fact):
    """A local or parameter; ``declared`` its type (``?var``, ``?lambda``, ``?union`` when not written)."""

    declared: str


@dataclass(slots=True)
class Name(Fact):
    """A name that is no local: a field, a type or a package."""

    name: str


@dataclass(slots=True)
class This(Fact):
    """``this``, or ``Outer.this`` (``qualifier``)."""

    qualifier: str | None = None


@dataclass(slots=True)
class Super(Fact):
    """``super``, or ``Iface.super`` (``qualifier``)."""

    qualifier: str | None = None


@dataclass(slots=True)
class FieldAccess(Fact):
    """``of.name``."""

    of: Expr
    name: str


@dataclass(slots=True)
class Call(Fact):
    """A method call, or what a call site calls: the method (or, for ``new``, the
    type) ``name``, the ``receiver`` it is called on, the argument count (None
    for a method reference) and the arguments."""

    name: str
    receiver: Expr | None
    args: int | None
    argv: list[Expr]


@dataclass(slots=True)
class New(Fact):
    """``new T(...)``, or ``outer.new T(...)``."""

    type_name: str
    outer: Expr | None = None


@dataclass(slots=True)
class Cast(Fact):
    type_name: str


@dataclass(slots=True)
class Lit(Fact):
    """A literal (``null`` too) or an array creation, of type ``type_name``."""

    type_name: str


@dataclass(slots=True)
class Element(Fact):
    """``of[i]``."""

    of: Expr


@dataclass(slots=True)
class Cond(Fact):
    """``c ? then : otherwise``."""

    then: Expr
    otherwise: Expr


@dataclass(slots=True)
class Opaque(Fact):
    """Anything else (a lambda, an operator, an expression past the depth cut): ``what`` it is."""

    what: str


Expr = Var | Name | This | Super | FieldAccess | Call | New | Cast | Lit | Element | Cond | Opaque


@dataclass(frozen=True, slots=True)
class CallSite(RefDetail):
    """A call, ``new``, ``this(...)``/``super(...)`` or method reference (``mode``
    ``call``, ``new``, ``this``, ``super``, ``ref``) where it is written."""

    mode: str
    call: Call
    #: the innermost named class around it
    cls: str | None
    #: the innermost ``MAX_ANON`` anonymous classes around it
    anon: Anon = ()
    #: more anonymous classes are around it than ``anon`` holds (what it names is left unresolved)
    deeper: bool = False


FACT_TYPES: tuple[type, ...] = (
    JavaFacts, JavaType, JavaMethod, ImportDecl, Supertype, TypeUse, CallSite,
    Var, Name, This, Super, FieldAccess, Call, New, Cast, Lit, Element, Cond, Opaque,
)
