"""Real code: the sources jar of commons-csv 1.12.0, fetched from Maven Central into a cache.

Each assertion was checked by hand against the source of that release.
"""

from __future__ import annotations

import pytest

from vitalrag.eval.corpora import fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

pytestmark = pytest.mark.network

CSV = "commons-csv:org/apache/commons/csv/"


@pytest.fixture(scope="module")
def csv_graph(tmp_path_factory):
    corpus = fetch("maven:org.apache.commons:commons-csv:1.12.0")
    store = MemoryStore(tmp_path_factory.mktemp("commons-csv") / "idx")
    report = index_repository(corpus.path, store, name="commons-csv", workers=1)
    return store, report


def _lines(store, source: str, target: str, kind: str) -> tuple[int, ...] | None:
    found = [e.lines for e in store.find_edges(source=source, kind=kind) if e.target == target]
    return found[0] if found else None


@pytest.mark.parametrize("source,target,kind,lines", [
    # lexer.nextToken(reusableToken): a field typed with a same-package class
    ("CSVParser.java:CSVParser.nextRecord()", "Lexer.java:Lexer.nextToken(Token)", "CALLS", (773,)),
    ("CSVParser.java:CSVParser.close()", "Lexer.java:Lexer.close()", "CALLS", (467,)),
    # Lexer.nextToken: its own methods and those of its ExtendedBufferedReader field
    ("Lexer.java:Lexer.nextToken(Token)", "Lexer.java:Lexer.parseSimpleToken(Token,int)", "CALLS", (292,)),
    ("Lexer.java:Lexer.nextToken(Token)", "ExtendedBufferedReader.java:ExtendedBufferedReader.readLine()",
     "CALLS", (253,)),
    # new CSVParser(reader, this) / new CSVPrinter(out, this): constructors by arity
    ("CSVFormat.java:CSVFormat.parse(Reader)", "CSVParser.java:CSVParser.CSVParser(Reader,CSVFormat)",
     "CALLS", (2074,)),
    ("CSVFormat.java:CSVFormat.print(Appendable)", "CSVPrinter.java:CSVPrinter.CSVPrinter(Appendable,CSVFormat)",
     "CALLS", (2089,)),
    # Builder.create(this): a static call on a nested class by its simple name
    ("CSVFormat.java:CSVFormat.builder()", "CSVFormat.java:CSVFormat.Builder.create(CSVFormat)", "CALLS", (1632,)),
    # setDelimiter(String.valueOf(delimiter)): the String overload, not itself
    ("CSVFormat.java:CSVFormat.Builder.setDelimiter(char)", "CSVFormat.java:CSVFormat.Builder.setDelimiter(String)",
     "CALLS", (406,)),
    # format.print(value, appendable, newRecord): 3-argument overloads told apart by the Object argument
    ("CSVPrinter.java:CSVPrinter.print(Object)", "CSVFormat.java:CSVFormat.print(Object,Appendable,boolean)",
     "CALLS", (174,)),
    # parse(file.toPath(), charset, format): File.toPath() returns Path
    ("CSVParser.java:CSVParser.parse(File,Charset,CSVFormat)",
     "CSVParser.java:CSVParser.parse(Path,Charset,CSVFormat)", "CALLS", (233,)),
    # enum constants Default(DEFAULT), Excel(EXCEL), ... call the Predefined(CSVFormat) constructor
    ("CSVFormat.java:CSVFormat.Predefined", "CSVFormat.java:CSVFormat.Predefined.Predefined(CSVFormat)", "CALLS",
     (842, 849, 857, 865, 873, 881, 888, 895, 903, 910, 917, 924)),
    # import static org.apache.commons.csv.Constants.CR; (LF, SP): fields, so the edge goes to their class
    ("CSVPrinter.java", "Constants.java:Constants", "IMPORTS", (20, 21, 22)),
    ("CSVParser.java", "Token.java:Token.Type", "IMPORTS", (20,)),
    # private final Lexer lexer;
    ("CSVParser.java:CSVParser", "Lexer.java:Lexer", "REFERENCES", (373,)),
])
def test_resolved_edges(csv_graph, source, target, kind, lines):
    store, _ = csv_graph
    assert _lines(store, CSV + source, CSV + target, kind) == lines


def test_objects(csv_graph):
    store, _ = csv_graph
    objs = {o.qualname: o for o in store.find_objects(repo="commons-csv") if o.path.endswith("CSVFormat.java")}
    builder = objs["CSVFormat.Builder"]
    assert (builder.kind, builder.start_line, builder.end_line) == ("class", 185, 828)
    assert builder.signature == "public static class Builder"
    assert builder.docstring.startswith("Builds CSVFormat instances.")
    prints = sorted(q for q, o in objs.items() if o.name == "print")
    assert prints == ["CSVFormat.print(Appendable)", "CSVFormat.print(File,Charset)",
                      "CSVFormat.print(InputStream,Appendable,boolean)", "CSVFormat.print(Object,Appendable,boolean)",
                      "CSVFormat.print(Object,CharSequence,Appendable,boolean)", "CSVFormat.print(Path,Charset)",
                      "CSVFormat.print(Reader,Appendable,boolean)"]
    assert objs["CSVFormat.Predefined"].kind == "enum"
    quote_mode = store.get_objects([CSV + "QuoteMode.java:QuoteMode"])[CSV + "QuoteMode.java:QuoteMode"]
    assert quote_mode.kind == "enum"
    module = store.get_objects(["commons-csv:org/apache/commons/csv/"])["commons-csv:org/apache/commons/csv/"]
    assert (module.kind, module.qualname) == ("module", "org.apache.commons.csv")


def test_external_supertypes_make_no_edges(csv_graph):
    store, _ = csv_graph
    # CSVParser implements Iterable<CSVRecord>, Closeable; CSVException extends IOException
    assert store.find_edges(source=CSV + "CSVParser.java:CSVParser", kind="INHERITS") == []
    assert store.find_edges(source=CSV + "CSVException.java:CSVException", kind="INHERITS") == []


def test_ambiguity_is_kept_not_guessed(csv_graph):
    store, report = csv_graph
    # setHeader(resultSet != null ? resultSet.getMetaData() : null): ResultSetMetaData is
    # a JDBC type, and four setHeader overloads take one argument
    refs = {(u.source.removeprefix(CSV), u.name, u.line, u.reason) for u in store.unresolved("commons-csv")}
    assert ("CSVFormat.java:CSVFormat.Builder.setHeader(ResultSet)", "setHeader", 517, "ambiguous-overload") in refs
    assert not _lines(store, CSV + "CSVFormat.java:CSVFormat.Builder.setHeader(ResultSet)",
                      CSV + "CSVFormat.java:CSVFormat.Builder.setHeader(ResultSet)", "CALLS")
    assert report.unresolved < 20
    assert report.edges["CALLS"] > 300
