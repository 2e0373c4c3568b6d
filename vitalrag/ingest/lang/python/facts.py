"""What Python extraction hands to resolution beyond objects and references:
``PythonFacts``, a file's ``FileFacts.data``, keyed by the id of the scope
(function, class or file) each fact was written in."""

from __future__ import annotations

from dataclasses import dataclass, field

from vitalrag.ingest.facts import Fact


@dataclass(frozen=True, slots=True)
class Import(Fact):
    """``import module`` or ``import module as alias``."""

    module: str
    alias: str | None
    line: int
    #: the scope it binds the name in
    source: str


@dataclass(frozen=True, slots=True)
class FromImport(Fact):
    """``from module import name as alias, ...`` (``level`` leading dots; ``star`` for ``*``)."""

    module: str
    level: int
    names: list[tuple[str, str | None]]
    star: bool
    line: int
    source: str


@dataclass(frozen=True, slots=True)
class PythonFacts(Fact):
    imports: list[Import | FromImport] = field(default_factory=list)
    #: scope -> name -> the callee of ``name = callee(...)``
    assigns: dict[str, dict[str, str]] = field(default_factory=dict)
    #: class -> attribute -> the callee of ``self.attribute = callee(...)`` in its methods
    attr_assigns: dict[str, dict[str, str]] = field(default_factory=dict)
    #: function -> parameter -> the class its annotation names
    params: dict[str, dict[str, str]] = field(default_factory=dict)
    #: scope -> names assigned in it (sorted); a class's include ``self.x`` attributes
    variables: dict[str, list[str]] = field(default_factory=dict)
    #: ``@overload`` stubs and property setters/deleters: they yield to the main definition
    secondary: list[str] = field(default_factory=list)
    #: scope -> name -> the callee of ``with callee(...) as name``
    with_assigns: dict[str, dict[str, str]] = field(default_factory=dict)
    #: function -> its return annotation as written
    returns: dict[str, str] = field(default_factory=dict)
    #: properties (their value is their return annotation's)
    properties: list[str] = field(default_factory=list)
    #: ``__enter__`` methods whose every return is ``return self``
    returns_self: list[str] = field(default_factory=list)
    #: set by ``prepare``: the folder the file's top-level package sits in, and
    #: whether it is a package's ``__init__.py``
    source_root: str = ""
    is_package: bool = False


FACT_TYPES: tuple[type, ...] = (PythonFacts, Import, FromImport)
