"""Documentation questions: does "how do I deploy" reach the document that answers it?

Each repository is indexed with ``--content all`` (the default) and the default
embedding model into ``--store-dir/<name>``; for each question, written before
the rankings were looked at and labelled with the document that answers it, the
script prints the rank of that document's first view in ``search`` (fused, and
BM25 and dense alone, within the top 100), the section it hit, and the
document's slot in ``context`` (vital-fill, budget 4096).

    python bench/doc_questions.py --repo flask=../flask --repo click=../click --repo vitalrag=.

Repositories not named are left out; a store folder already holding the index
is reused (an unchanged repository is not indexed again).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vitalrag.context import context_from
from vitalrag.index import Index
from vitalrag.retrieve.dense import make_embedder

QUESTIONS: dict[str, list[tuple[str, str]]] = {
    "flask": [
        ("how do I deploy my app to production", "docs/deploying/index.rst"),
        ("how do I deploy my app to production", "docs/tutorial/deploy.rst"),
        ("how do I run the app with gunicorn", "docs/deploying/gunicorn.rst"),
        ("how do I put nginx in front of the app", "docs/deploying/nginx.rst"),
        ("how do I install flask", "docs/installation.rst"),
        ("how do I load configuration from environment variables", "docs/config.rst"),
    ],
    "click": [
        ("how do I enable shell completion for my command", "docs/shell-completion.md"),
        ("how do I test a click command", "docs/testing.md"),
        ("how do I ask the user for a password", "docs/prompts.md"),
        ("how do I install click in a virtualenv", "docs/virtualenv.md"),
        ("how do I make my script installable as a command with entry points", "docs/entry-points.md"),
    ],
    "vitalrag": [
        ("how do I run the MCP server for my agent", "README.md"),
        ("how do I share indexes across my organisation with Neo4j", "README.md"),
        ("how do I keep the index up to date while I edit files", "README.md"),
        ("what happens when a file name holds control characters", "docs/reliability.md"),
        ("how do I index only the code and leave the documentation out", "docs/text-files.md"),
        ("which languages are supported", "docs/languages.md"),
    ],
}
RETRIEVERS = ("fused", "bm25", "dense")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", required=True, metavar="NAME=PATH",
                        help=f"a repository to index and ask ({', '.join(QUESTIONS)})")
    parser.add_argument("--store-dir", default=".bench-doc-questions", help="where the indexes are kept")
    args = parser.parse_args()
    embedder = make_embedder(None)
    print("| repository | question | document | fused | bm25 | dense | section hit (fused) | context slot |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.repo:
        name, _, path = spec.partition("=")
        if name not in QUESTIONS or not path:
            raise SystemExit(f"--repo {spec!r}: use NAME=PATH with NAME one of {', '.join(QUESTIONS)}")
        store = str(Path(args.store_dir) / name)
        with Index.open(store, mode="write") as index:
            index.update(path, embedder=embedder, name=name, content="all")
        with Index.open(store, mode="serve") as index:
            retriever = index.retriever(embedder)
            for question, want in QUESTIONS[name]:
                cells = []
                hit = ""
                for which in RETRIEVERS:
                    hits = retriever.search(question, k=100, retriever=which)
                    found = next(((i, h.view.object_id) for i, h in enumerate(hits, 1) if h.view.path == want),
                                 None)
                    cells.append(str(found[0]) if found else "-")
                    if which == "fused" and found:
                        hit = found[1].split(":", 2)[-1]
                alloc = context_from(retriever, question)
                slot = next((i for i, s in enumerate(alloc.record.slots, 1) if s.path == want), None)
                print(f"| {name} | {question} | `{want}` | {' | '.join(cells)} | `{hit}` | {slot or '-'} |",
                      flush=True)


if __name__ == "__main__":
    main()
