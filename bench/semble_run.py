"""Run semble over one repository for bench/nl_quality.py, inside semble's own
virtualenv: a JSON request on stdin ({"root", "model", "k", "queries": {id: text}}),
for each query its ranked chunks on stdout ({"ndcg": top 10, "read": top k}),
each {"path", "start", "end", "text"}."""

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from semble import SembleIndex  # noqa: E402


def chunks(results):
    return [{"path": r.chunk.file_path, "start": r.chunk.start_line, "end": r.chunk.end_line,
             "text": r.chunk.content} for r in results]


def main() -> None:
    request = json.load(sys.stdin)
    index = SembleIndex.from_path(request["root"], model_path=request["model"])
    out = {qid: {"ndcg": chunks(index.search(text, top_k=10)),
                 "read": chunks(index.search(text, top_k=request["k"]))}
           for qid, text in request["queries"].items()}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
