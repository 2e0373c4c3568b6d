"""aider's repository map as a context baseline, run inside aider's own virtualenv.

    <aider-venv>/bin/python bench/aider_repomap.py < request.json > maps.json

The request is ``{"root": DIR, "files": [rel, ...], "queries": [{"id", "query",
"budgets": [B, ...]}]}``; the answer maps each query id to ``{B: text}``.
``RepoMap(map_tokens=B)`` is called as aider calls it with no file in the chat:
``get_repo_map([], other_files, mentioned_fnames, mentioned_idents)``, where the
mentioned names are what aider's own ``get_ident_mentions`` / file-mention rules
would take from the query (words, and files whose name or stem the query says).
Tokens are counted with the same offline cl100k_base as VitalRAG (aider samples
long texts, so its map can overshoot B; the bench clips it to B).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aider.repomap import RepoMap  # noqa: E402

from vitalrag.tokens import get_counter  # noqa: E402


class _IO:
    def read_text(self, fname: str) -> str | None:
        try:
            return Path(fname).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def tool_output(self, *args: object, **kwargs: object) -> None:
        pass

    tool_warning = tool_error = tool_output


class _Model:
    def __init__(self) -> None:
        self.counter = get_counter()

    def token_count(self, text: str) -> int:
        return self.counter.count(text)


def main() -> None:
    request = json.load(sys.stdin)
    root = request["root"]
    files = [os.path.join(root, f) for f in request["files"]]
    by_name: dict[str, set[str]] = {}
    for rel in request["files"]:
        base = os.path.basename(rel)
        for key in {base, os.path.splitext(base)[0]}:
            by_name.setdefault(key, set()).add(rel)
    out: dict[str, dict[str, object]] = {}
    model, io = _Model(), _IO()
    for q in request["queries"]:
        words = set(re.split(r"\W+", q["query"]))
        mentioned_fnames = {f for w in words for f in by_name.get(w, ())}
        idents = {w for w in words if w}
        maps: dict[str, object] = {}
        for budget in q["budgets"]:
            rm = RepoMap(map_tokens=budget, root=root, main_model=model, io=io, refresh="always")
            t = time.perf_counter()
            text = rm.get_repo_map([], files, mentioned_fnames=mentioned_fnames,
                                   mentioned_idents=idents) or ""
            maps[str(budget)] = {"text": text, "ms": (time.perf_counter() - t) * 1000}
        out[q["id"]] = maps
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
