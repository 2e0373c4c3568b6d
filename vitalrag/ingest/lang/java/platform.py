"""What the Java resolver knows of the platform without reading it.

``java.lang`` is imported implicitly, so its simple names are external types in
every file; ``Object``'s methods are callable on every type; primitive widening
and boxing decide whether an argument can be passed to a parameter.
"""

from __future__ import annotations

JAVA_LANG: frozenset[str] = frozenset("""
Appendable AutoCloseable Boolean Byte CharSequence Character Class ClassLoader ClassValue Cloneable
Comparable Deprecated Double Enum Float FunctionalInterface InheritableThreadLocal Integer Iterable
Long Math Module ModuleLayer Number Object Override Package Process ProcessBuilder ProcessHandle
Readable Record Runnable Runtime SafeVarargs Short StackTraceElement StackWalker StrictMath String
StringBuffer StringBuilder SuppressWarnings System Thread ThreadGroup ThreadLocal Throwable Void
ArithmeticException ArrayIndexOutOfBoundsException ArrayStoreException ClassCastException
ClassNotFoundException CloneNotSupportedException EnumConstantNotPresentException Exception
IllegalAccessException IllegalArgumentException IllegalCallerException IllegalMonitorStateException
IllegalStateException IllegalThreadStateException IndexOutOfBoundsException InstantiationException
InterruptedException LayerInstantiationException NegativeArraySizeException NoSuchFieldException
NoSuchMethodException NullPointerException NumberFormatException ReflectiveOperationException
RuntimeException SecurityException StringIndexOutOfBoundsException TypeNotPresentException
UnsupportedOperationException WrongThreadException MatchException
AbstractMethodError AssertionError BootstrapMethodError ClassCircularityError ClassFormatError Error
ExceptionInInitializerError IllegalAccessError IncompatibleClassChangeError InstantiationError
InternalError LinkageError NoClassDefFoundError NoSuchFieldError NoSuchMethodError OutOfMemoryError
StackOverflowError ThreadDeath UnknownError UnsatisfiedLinkError UnsupportedClassVersionError
VerifyError VirtualMachineError SecurityManager Compiler StableValue ScopedValue IO
""".split())

OBJECT_METHODS: frozenset[str] = frozenset({
    "clone", "equals", "finalize", "getClass", "hashCode", "notify", "notifyAll", "toString", "wait",
})

PRIMITIVES: frozenset[str] = frozenset({"boolean", "byte", "char", "short", "int", "long", "float", "double"})

BOXES: dict[str, str] = {
    "boolean": "Boolean", "byte": "Byte", "char": "Character", "short": "Short",
    "int": "Integer", "long": "Long", "float": "Float", "double": "Double",
}
_UNBOX = {v: k for k, v in BOXES.items()}

_WIDER: dict[str, frozenset[str]] = {
    "byte": frozenset({"short", "int", "long", "float", "double"}),
    "short": frozenset({"int", "long", "float", "double"}),
    "char": frozenset({"int", "long", "float", "double"}),
    "int": frozenset({"long", "float", "double"}),
    "long": frozenset({"float", "double"}),
    "float": frozenset({"double"}),
}

#: supertypes of the final platform types an argument is most often typed with
_FINAL_SUPERS: dict[str, frozenset[str]] = {
    "String": frozenset({"Object", "CharSequence", "Comparable", "Serializable", "Constable", "ConstantDesc"}),
    **{box: frozenset({"Object", "Comparable", "Serializable", "Constable", "ConstantDesc"}
                      | ({"Number"} if box not in ("Boolean", "Character") else set()))
       for box in BOXES.values()},
    "Class": frozenset({"Object", "Serializable", "GenericDeclaration", "Type", "AnnotatedElement",
                        "TypeDescriptor", "TypeDescriptor.OfField"}),
}


#: complete supertype sets of a few platform types that arguments are often typed with
_KNOWN_SUPERS: dict[str, frozenset[str]] = {
    "File": frozenset({"Object", "Serializable", "Comparable"}),
    "Path": frozenset({"Object", "Comparable", "Iterable", "Watchable"}),
    "URL": frozenset({"Object", "Serializable"}),
    "URI": frozenset({"Object", "Serializable", "Comparable"}),
    "Charset": frozenset({"Object", "Comparable"}),
    "List": frozenset({"Object", "Collection", "Iterable", "SequencedCollection"}),
    "Set": frozenset({"Object", "Collection", "Iterable"}),
    "Map": frozenset({"Object"}),
    "InputStream": frozenset({"Object", "Closeable", "AutoCloseable"}),
    "Reader": frozenset({"Object", "Readable", "Closeable", "AutoCloseable"}),
    "Writer": frozenset({"Object", "Appendable", "Closeable", "Flushable", "AutoCloseable"}),
}

#: platform calls that return their first argument
ARGUMENT_RETURNS: frozenset[tuple[str, str]] = frozenset({
    ("Objects", "requireNonNull"), ("Objects", "requireNonNullElse"),
})

#: return types of Object's methods, whatever the receiver
OBJECT_RETURNS: dict[str, str] = {"toString": "String", "hashCode": "int", "equals": "boolean",
                                  "getClass": "Class"}

#: (receiver simple type, method) -> return type, for platform calls often used as arguments
KNOWN_RETURNS: dict[tuple[str, str], str] = {
    **{(box, "valueOf"): box for box in BOXES.values()},
    **{(box, f"{prim}Value"): prim for prim, box in BOXES.items()},
    **{("String", m): "String" for m in ("valueOf", "format", "join", "trim", "strip", "substring",
                                          "toLowerCase", "toUpperCase", "replace", "concat", "repeat")},
    **{("String", m): "int" for m in ("length", "indexOf", "lastIndexOf", "compareTo")},
    **{("String", m): "boolean" for m in ("isEmpty", "isBlank", "startsWith", "endsWith", "contains",
                                           "equalsIgnoreCase")},
    ("String", "charAt"): "char", ("String", "toCharArray"): "char[]", ("String", "getBytes"): "byte[]",
    ("CharSequence", "length"): "int", ("CharSequence", "charAt"): "char",
    ("StringBuilder", "length"): "int", ("StringBuilder", "append"): "StringBuilder",
    ("StringBuilder", "substring"): "String", ("StringBuilder", "charAt"): "char",
    ("Files", "newInputStream"): "InputStream", ("Files", "newOutputStream"): "OutputStream",
    ("System", "lineSeparator"): "String", ("System", "getProperty"): "String", ("System", "getenv"): "String",
    ("System", "currentTimeMillis"): "long", ("System", "nanoTime"): "long",
    ("Integer", "parseInt"): "int", ("Long", "parseLong"): "long", ("Double", "parseDouble"): "double",
    ("Boolean", "parseBoolean"): "boolean",
    ("Enum", "name"): "String", ("Enum", "ordinal"): "int",
    ("Class", "getName"): "String", ("Class", "getSimpleName"): "String",
    ("Throwable", "getMessage"): "String",
    ("File", "toPath"): "Path", ("Path", "toFile"): "File", ("Paths", "get"): "Path", ("Path", "of"): "Path",
    ("Arrays", "asList"): "List", ("List", "of"): "List", ("Set", "of"): "Set", ("Map", "of"): "Map",
}


def compatibility(arg: str, param: str) -> str:
    """``exact``, ``maybe`` or ``no``: can a value of external type ``arg`` be passed as
    external type ``param`` (both simple names; ``arg`` empty when unknown, ``null`` for null)?"""
    if not arg:
        return "maybe"
    if arg == param:
        return "exact"
    if arg == "null":
        return "no" if param in PRIMITIVES else "maybe"
    if arg.endswith("[]") or param.endswith("[]"):
        if arg.endswith("[]") and param.endswith("[]"):
            return "no" if arg[:-2] in PRIMITIVES or param[:-2] in PRIMITIVES else "maybe"
        return "maybe" if arg.endswith("[]") and param in ("Object", "Cloneable", "Serializable") else "no"
    if arg == "Object":
        return "no"  # the top type goes only where Object (or a type variable) is taken
    if arg in PRIMITIVES:
        if param in PRIMITIVES:
            return "maybe" if param in _WIDER.get(arg, ()) else "no"
        box = BOXES[arg]
        return "maybe" if param == box or param in _FINAL_SUPERS[box] else "no"
    if param in PRIMITIVES:
        prim = _UNBOX.get(arg)
        return "maybe" if prim is not None and (prim == param or param in _WIDER.get(prim, ())) else "no"
    if arg in _FINAL_SUPERS:
        return "maybe" if param in _FINAL_SUPERS[arg] else "no"
    if arg in _KNOWN_SUPERS:
        return "maybe" if param in _KNOWN_SUPERS[arg] else "no"
    if param in _FINAL_SUPERS:
        return "no"  # a final type: nothing else is one
    return "maybe"
