"""The commands and files README.md shows exist as written: every ``vitalrag``
command line (in code blocks and inline code) names commands the CLI has and
options those commands take, every ``bench/`` script it runs exists and takes the
options shown, and every source path it names is in the checkout. What the
commands do is other tests' business; this one catches a README left behind by a
renamed option, command or file."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from vitalrag.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_SEPARATORS = {"|", "||", "&&", ";", "(", ")", "&"}
_PATH = re.compile(r"^(?:vitalrag|bench|scripts|tests|\.ci)/[\w./-]*[\w-]$")


def snippets(text: str) -> list[str]:
    """The lines of the fenced code blocks, and the inline code spans of the rest
    (a span may wrap: its whitespace is folded)."""
    out: list[str] = []
    prose: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            out.append(line)
        else:
            prose.append(line)
    out += [" ".join(s.split()) for s in re.findall(r"`([^`\n]+(?:\n[^`\n]+)*)`", "\n".join(prose))]
    return out


def segments(line: str) -> list[list[str]]:
    """``line``'s simple commands as tokens: split at pipes, ``&&``, ``;`` and
    parentheses, comments dropped; a usage line's ``[``, ``]`` and ``...`` go."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: prose, not a command
        return []
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in _SEPARATORS:
            out.append([])
            continue
        tok = tok.strip("[]")
        if tok and tok != "...":
            out[-1].append(tok)
    for seg in out:
        while seg and re.match(r"^[A-Z_][A-Z0-9_]*=", seg[0]):  # VAR=value before the command
            seg.pop(0)
    return [seg for seg in out if seg]


def _options(cmd: click.Command) -> set[str]:
    names = {"--help"}
    for p in cmd.params:
        names.update(getattr(p, "opts", ()))
        names.update(getattr(p, "secondary_opts", ()))
    return names


def vitalrag_problems(seg: list[str]) -> list[str]:
    """What is wrong with a ``vitalrag ...`` command: an unknown command or option."""
    cmd: click.Command = cli
    words = seg[1:]
    i = 0
    while isinstance(cmd, click.Group) and i < len(words) and not words[i].startswith("-"):
        sub = cmd.get_command(click.Context(cmd), words[i])
        if sub is None:
            if cmd is cli:
                return [f"no command {words[i]!r}"]
            break  # an argument of the group's command line (a usage line's QUERY, PATH...)
        cmd, i = sub, i + 1
    known = _options(cmd)
    return [f"{cmd.name} takes no option {w.split('=', 1)[0]}" for w in words[i:]
            if w.startswith("-") and w not in ("-", "--") and not re.match(r"^-\d", w)
            and w.split("=", 1)[0] not in known]


def bench_problems(seg: list[str]) -> list[str]:
    """What is wrong with a ``python bench/x.py ...`` command: no such script, or an
    option its argument parser does not define."""
    at = next(i for i, w in enumerate(seg) if re.search(r"(^|/)bench/\w+\.py$", w))
    script = ROOT / "bench" / Path(seg[at]).name
    if not script.is_file():
        return [f"no script {seg[at]}"]
    source = script.read_text()
    return [f"{script.name} takes no option {w}" for w in seg[at + 1:]
            if w.startswith("--") and f'"{w.split("=", 1)[0]}"' not in source]


def readme_problems(text: str) -> list[str]:
    problems: list[str] = []
    for snippet in snippets(text):
        for seg in segments(snippet):
            if Path(seg[0]).name == "vitalrag":
                problems += [f"`{snippet}`: {p}" for p in vitalrag_problems(seg)]
            elif any(re.search(r"(^|/)bench/\w+\.py$", w) for w in seg):
                problems += [f"`{snippet}`: {p}" for p in bench_problems(seg)]
        if _PATH.match(snippet) and "<" not in snippet and not (ROOT / snippet).exists():
            problems.append(f"`{snippet}`: no such file in the checkout")
    return problems


def test_every_command_and_file_the_readme_shows_exists():
    text = README.read_text()
    assert len([s for s in snippets(text) for seg in segments(s) if Path(seg[0]).name == "vitalrag"]) > 30
    assert readme_problems(text) == []


@pytest.mark.parametrize("line, problem", [
    ("vitalrag index . --no-such-option", "index takes no option --no-such-option"),
    ("vitalrag indx .", "no command 'indx'"),
    ("vitalrag eval run tasks.jsonl --polices all -o run/", "run takes no option --polices"),
    ("NEO4J_URI=x python bench/context_quality.py --no-aider --nope", "context_quality.py takes no option --nope"),
    ("python bench/nothing_here.py", "no script bench/nothing_here.py"),
    ("vitalrag/allocate/nowhere.py", "no such file in the checkout"),
])
def test_a_stale_readme_line_is_caught(line, problem):
    found = readme_problems(f"```bash\n{line}\n```\n" if " " in line else f"see `{line}`\n")
    assert len(found) == 1 and found[0].endswith(problem), found


def test_usage_lines_alternatives_and_comments_are_read_as_a_reader_would():
    text = ("```\nvitalrag push --store .vitalrag --to neo4j://...   |   vitalrag pull --from neo4j://x --store s\n"
            "vitalrag search QUERY [--file F --line N] [--retriever dense|bm25|walk|fused] [-k K] [--json]\n"
            ".venv/bin/vitalrag index . --json   # a comment with --not-an-option\n```\n"
            "Run (`cd x && vitalrag context \"a question\" --budget 2048`) to see it.\n")
    assert readme_problems(text) == []
    assert readme_problems(text.replace("--budget", "--budgte")) == [
        '`cd x && vitalrag context "a question" --budgte 2048`: context takes no option --budgte']
