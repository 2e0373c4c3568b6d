"""Program-semantic transfer (paper 5.5, Table 6(d)) on seeded program pairs.

    .venv/bin/python bench/transfer.py [SPEC ...] [--max-lines 60] [--json OUT]

Default specs: ``pypi:requests==2.32.3`` and ``maven:org.apache.commons:commons-csv:1.12.0``
(fetched into the corpus cache, indexed into a temporary MemoryStore).

For every non-test function/method of 3..max-lines lines, the original is the
correct program. Seeded mutations (each where it applies, deterministically):

  rename-call   a fitting call to a repository object gets a typo in its name
  arity         a fitting call to a repository object loses its last argument
                (or gains one when it has none)
  syntax        Python: the ``def`` colon removed; Java: the body's closing brace removed
  helper        a call to an undefined helper inserted as the first statement
  drop-stmt     one single-line, non-final body statement deleted (shorter, valid)

Pairs: for each mutation, (default = mutant, alternative = original), where a
transfer is a **win**, and (default = original, alternative = mutant), where a
transfer is a **loss**. Two reformatted alternatives of the original
(``compact``: comments and blank lines removed; ``spread``: a blank line after
every statement) make (original, reformat) pairs; a transfer there is
**neutral** (same semantics). Witnesses are computed once per pair and every
gate is applied to them.

Columns: pairs, transfers, W/L/N, precision as the brief asks (wins /
transfers) and as the paper reports it (wins / (wins + losses)), and "correct"
(share of pairs whose chosen program is the original or a reformat of it, the
stand-in for Pass@1 here).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from vitalrag.eval.corpora import fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.transfer import GATES, RepositoryIndex, load_scope, rule, witnesses
from vitalrag.transfer.programs import parse_program, walk

DEFAULT_SPECS = ("pypi:requests==2.32.3", "maven:org.apache.commons:commons-csv:1.12.0")
_CALLS = {"python": ("call",), "java": ("method_invocation", "object_creation_expression")}
_STATEMENTS = {
    "python": ("expression_statement",),
    "java": ("expression_statement", "local_variable_declaration"),
}


@dataclass(frozen=True, slots=True)
class Pair:
    function: str
    language: str
    mutation: str
    outcome: str  # what a transfer is: win, loss, neutral
    default: str
    alternative: str


def _splice(src: bytes, start: int, end: int, new: str) -> str:
    return (src[:start] + new.encode() + src[end:]).decode()


def _typo(name: str) -> str:
    for i in range(len(name) // 2, len(name) - 1):
        if name[i] != name[i + 1]:
            return name[:i] + name[i + 1] + name[i] + name[i + 2:]
    return name + "s"


def _callee(node: Node, language: str) -> Node | None:
    if language == "python":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "attribute":
            fn = fn.child_by_field_name("attribute")
        return fn if fn is not None and fn.type == "identifier" else None
    if node.type == "object_creation_expression":
        return None
    return node.child_by_field_name("name")


def mutations(code: str, language: str, scope: Any) -> dict[str, str]:
    """The seeded mutants of one original program (those that apply)."""
    program = parse_program(code, language)
    src = program.root.text or b""
    shell = len(b"class VitalShell__ { ") if program.shelled else 0
    out: dict[str, str] = {}

    def cut(start: int, end: int, new: str) -> str:
        text = _splice(src, start, end, new)
        return text[shell:len(text) - 2] if program.shelled else text

    fitting = {(c.line, c.call) for c in scope.check_calls(program) if c.fits and c.target}
    for node in walk(program.root):
        if node.type not in _CALLS[language]:
            continue
        shown = " ".join((node.text or b"").decode().split())
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        if (node.start_point[0] + 1, shown) not in fitting:
            continue
        name = _callee(node, language)
        if name is not None and "rename-call" not in out:
            out["rename-call"] = cut(name.start_byte, name.end_byte, _typo((name.text or b"").decode()))
        args = node.child_by_field_name("arguments")
        if args is not None and "arity" not in out:
            named = [a for a in args.named_children if "comment" not in a.type]
            if named:
                last = named[-1]
                start = named[-2].end_byte if len(named) > 1 else args.start_byte + 1
                out["arity"] = cut(start, last.end_byte, "")
            else:
                out["arity"] = cut(args.start_byte + 1, args.start_byte + 1, "None" if language == "python" else "null")
    definition = next((n for n in walk(program.root) if n.type in ("function_definition", "method_declaration",
                                                                     "constructor_declaration")), None)
    if definition is None:
        return out
    body = definition.child_by_field_name("body")
    if language == "python":
        colon = next((c for c in definition.children if c.type == ":"), None)
        if colon is not None:
            out["syntax"] = cut(colon.start_byte, colon.end_byte, "")
    elif body is not None and body.children and body.children[-1].type == "}":
        close = body.children[-1]
        out["syntax"] = cut(close.start_byte, close.end_byte, "")
    stmts = [s for s in (body.named_children if body is not None else [])
             if s.type not in ("comment", "line_comment", "block_comment")]
    if not stmts:
        return out
    first = stmts[0]
    if language == "python" and first.type == "expression_statement" and first.named_children \
            and first.named_children[0].type == "string" and len(stmts) > 1:
        first = stmts[1]  # after the docstring
    indent = " " * first.start_point[1]
    name_node = definition.child_by_field_name("name")
    helper = "_ensure_" + ((name_node.text if name_node is not None else None) or b"x").decode().lstrip("_")
    line = (f"{helper}()\n{indent}" if language == "python"
            else f"Object checked__ = {helper.replace('_', '')}();\n{indent}")
    out["helper"] = cut(first.start_byte, first.start_byte, line)
    for s in stmts[:-1]:
        docstring = language == "python" and s.named_children and s.named_children[0].type == "string"
        if s.type in _STATEMENTS[language] and s.start_point[0] == s.end_point[0] and not docstring:
            line_start = src.rfind(b"\n", 0, s.start_byte) + 1
            line_end = src.find(b"\n", s.end_byte)
            out["drop-stmt"] = cut(line_start, line_end + 1 if line_end >= 0 else len(src), "")
            break
    return out


def reformats(code: str, language: str) -> dict[str, str]:
    program = parse_program(code, language)
    src = program.root.text or b""
    shell = len(b"class VitalShell__ { ") if program.shelled else 0
    comments = sorted((n for n in walk(program.root) if n.type in ("comment", "line_comment", "block_comment")),
                      key=lambda n: n.start_byte, reverse=True)
    text = src
    for c in comments:
        text = text[:c.start_byte] + text[c.end_byte:]
    compact = text.decode()
    compact = compact[shell:len(compact) - 2] if program.shelled else compact
    compact = "\n".join(line.rstrip() for line in compact.splitlines() if line.strip()) + "\n"
    ends = sorted({s.end_point[0] for s in walk(program.root)
                   if s.type in _STATEMENTS[language] + ("return_statement",)})
    lines = code.splitlines()
    spread = "\n".join(line + ("\n" if i in ends else "") for i, line in enumerate(lines)) + "\n"
    return {"compact": compact, "spread": spread}


def build_pairs(index: RepositoryIndex, max_lines: int) -> tuple[list[tuple[Pair, Any]], int]:
    pairs: list[tuple[Pair, Any]] = []
    functions = 0
    for obj in sorted(index.by_id.values(), key=lambda o: o.id):
        if obj.kind not in ("function", "method") or "test" in obj.path.lower():
            continue
        if not 3 <= obj.end_line - obj.start_line + 1 <= max_lines:
            continue
        source = index.store.source(f"{obj.repo}:{obj.path}")
        if source is None:
            continue
        code = textwrap.dedent("\n".join(source.splitlines()[obj.start_line - 1:obj.end_line])) + "\n"
        scope = load_scope(index, obj.id)
        if not parse_program(code, scope.language).valid:
            continue
        functions += 1
        for kind, mutant in mutations(code, scope.language, scope).items():
            if mutant.strip() == code.strip():
                continue
            pairs.append((Pair(obj.id, scope.language, kind, "win", mutant, code), scope))
            pairs.append((Pair(obj.id, scope.language, kind, "loss", code, mutant), scope))
        for kind, variant in reformats(code, scope.language).items():
            if variant.strip() != code.strip():
                pairs.append((Pair(obj.id, scope.language, kind, "neutral", code, variant), scope))
    return pairs, functions


def evaluate(pairs: list[tuple[Pair, Any]]) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]]]:
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    by_mutation: dict[str, Counter[str]] = defaultdict(Counter)
    for pair, scope in pairs:
        found = witnesses(parse_program(pair.default, pair.language),
                          parse_program(pair.alternative, pair.language), scope)
        no_compact = tuple(w for w in found if w.family != "compactness")
        for gate in GATES + ("full-no-compactness",):
            transfer = (rule("full", no_compact)[0] if gate == "full-no-compactness"
                        else rule(gate, found)[0])
            c = totals[gate]
            c["pairs"] += 1
            c[pair.outcome + "_pairs"] += 1
            if transfer:
                c["transfers"] += 1
                c[pair.outcome] += 1
            correct = (pair.outcome == "win") == transfer if pair.outcome != "neutral" else True
            c["correct"] += correct
            if gate == "full":
                key = f"{pair.language}/{pair.mutation}/{pair.outcome}"
                by_mutation[key]["pairs"] += 1
                by_mutation[key]["transfers"] += transfer
    return totals, by_mutation


def table(totals: dict[str, Counter[str]]) -> str:
    names = {"full": "Full", "no-abstention": "No abstention", "no-veto": "No veto (extra)",
             "no-direction": "No direction", "no-types": "No types",
             "full-no-compactness": "Full w/o compact."}
    rows = [f"{'Variant':<17} {'Correct':>8} {'Trans.':>7} {'W/L/N':>15} {'W/Trans.':>9} {'W/(W+L)':>8}"]
    for gate in GATES + ("full-no-compactness",):
        c = totals[gate]
        t, w, lo, n = c["transfers"], c["win"], c["loss"], c["neutral"]
        prec = f"{100 * w / t:.1f}%" if t else "-"
        paper = f"{100 * w / (w + lo):.1f}%" if w + lo else "-"
        rows.append(f"{names[gate]:<17} {100 * c['correct'] / c['pairs']:>7.2f}% {t:>7} "
                    f"{f'{w}/{lo}/{n}':>15} {prec:>9} {paper:>8}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="*", default=list(DEFAULT_SPECS))
    ap.add_argument("--max-lines", type=int, default=60)
    ap.add_argument("--json", dest="json_out", help="Also write the counts as JSON here.")
    args = ap.parse_args(argv)
    all_pairs: list[tuple[Pair, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            corpus = fetch(spec)
            store = MemoryStore(f"{tmp}/{corpus.name}")
            index_repository(corpus.path, store, name=corpus.name, workers=1)
            started = time.perf_counter()
            pairs, functions = build_pairs(RepositoryIndex(store, corpus.name), args.max_lines)
            kinds = Counter(f"{p.mutation}:{p.outcome}" for p, _ in pairs)
            print(f"{spec}: {functions} functions, {len(pairs)} pairs "
                  f"({time.perf_counter() - started:.1f}s) {dict(sorted(kinds.items()))}", file=sys.stderr)
            all_pairs.extend(pairs)
        started = time.perf_counter()
        totals, by_mutation = evaluate(all_pairs)
        elapsed = time.perf_counter() - started
    c = totals["full"]
    print(f"pairs: {c['pairs']} (gain {c['win_pairs']}, loss {c['loss_pairs']}, neutral {c['neutral_pairs']}); "
          f"witnesses for all pairs in {elapsed:.1f}s")
    print(table(totals))
    print("\nfull gate, transfers per mutation (transfers / pairs):")
    for key in sorted(by_mutation):
        m = by_mutation[key]
        print(f"  {key:<32} {m['transfers']:>5} / {m['pairs']}")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"totals": {g: dict(c) for g, c in totals.items()},
                       "by_mutation": {k: dict(v) for k, v in by_mutation.items()}}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
