"""The sparse retriever: BM25 (``bm25s``) over views with code-aware tokens.

The index is saved as bm25s's plain arrays and JSON (no pickle) and loaded
memory-mapped.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vitalrag.errors import StoreCorrupt
from vitalrag.kernel.text import code_token_ids, code_tokens

log = logging.getLogger(__name__)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores``, best first; equal scores in
    position order (views are kept by repository, then id), at the cut too. So a
    ranking never depends on how a selection algorithm breaks ties, and a server
    store, which orders ties the same way, returns the same views."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    above = np.flatnonzero(scores > kth)
    picked = np.concatenate([above, np.flatnonzero(scores == kth)[:k - len(above)]])
    return picked[np.lexsort((picked, -scores[picked]))]


def bm25_scores(distinct: Sequence[Sequence[int]], which: np.ndarray, n_vocab: int, *,
                k1: float, b: float) -> dict[str, Any]:
    """bm25s's score matrix (``BM25(method="lucene")``: its ``scores``, a
    term-by-document CSC matrix of each term's BM25 weight in each document) for
    documents ``which[i]`` of the token-id lists ``distinct``, computed with array
    operations where bm25s loops over documents in Python (about 3 s of a 6 s
    build on Django's 221,828 views). The arithmetic is bm25s's, step for step
    and in its dtypes, so the arrays are the same to the bit
    (``tests/retrieve/test_sparse.py`` compares them).
    """
    sizes = np.fromiter((len(d) for d in distinct), dtype=np.int64, count=len(distinct))
    flat = np.fromiter(itertools.chain.from_iterable(distinct), dtype=np.int64, count=int(sizes.sum()))
    # each distinct text's (term, count) pairs once, then repeated for the documents showing it
    owner = np.repeat(np.arange(len(distinct), dtype=np.int64), sizes)
    # np.unique, without its quicksort: the keys are in text order already, so a stable
    # sort (timsort) only orders each text's few terms and merges the runs (0.2-0.4 s
    # against np.unique's 0.8-1.0 s on Django's 9 million)
    keys = owner * n_vocab + flat
    keys.sort(kind="stable")
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    pairs = keys[starts]
    tf = np.diff(starts, append=len(keys))
    first = np.searchsorted(pairs // n_vocab, np.arange(len(distinct) + 1))
    width = np.diff(first)[which]
    picked = np.repeat(first[which] - np.cumsum(width) + width, width) + np.arange(int(width.sum()))
    rows = np.repeat(np.arange(len(which), dtype=np.int64), width)
    cols = pairs[picked] % n_vocab
    counts = tf[picked].astype(np.float32)
    n_docs = len(which)
    lengths = sizes[which]
    doc_freq = np.bincount(cols, minlength=n_vocab)
    idf = np.zeros(n_vocab, dtype=np.float32)
    for term in np.flatnonzero(doc_freq):  # math.log, as bm25s (numpy's log may differ in the last bit)
        df = int(doc_freq[term])
        idf[term] = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    avg = np.array(lengths).mean()
    # bm25s: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf) in float64, times the float32 idf
    norm = k1 * ((1 - b) + b * lengths[rows].astype(np.float64) / avg)
    weights = (idf[cols] * (counts / (norm + counts))).astype(np.float32)
    # CSC: by term, then document (bm25s sorts the same keys)
    order = np.argsort((cols << 32) | rows, kind="stable")
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=n_vocab), out=indptr[1:])
    return {"data": weights[order], "indices": rows[order].astype(np.int32), "indptr": indptr,
            "num_docs": n_docs}


def _token_ids(texts: Sequence[str]) -> tuple[list[list[int]], np.ndarray, dict[str, int]]:
    """Each distinct text's token ids, which distinct text each of ``texts`` is, and
    the vocabulary (token -> id, in order of first appearance; a text with no token
    is the one token ``<empty>``, as bm25s needs).

    Token ids straight away (bm25s would otherwise collect and number the strings
    itself). Views repeat text (a call site, a test window) and overlap (windows,
    slices and bodies show each line four or five times): each distinct text is
    tokenized once, and from its lines, each distinct line once (no identifier
    spans a line break; the ids come out in the same order, so the vocabulary is
    the same)."""
    vocab: dict[str, int] = {}
    memo: dict[str, tuple[int, ...]] = {}
    by_line: dict[str, tuple[int, ...]] = {}
    seen: dict[str, int] = {}
    distinct: list[list[int]] = []
    which = np.empty(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        k = seen.get(t)
        if k is None:
            k = seen[t] = len(distinct)
            ids: list[int] = []
            for line in t.split("\n"):
                got = by_line.get(line)
                if got is None:
                    got = by_line[line] = tuple(code_token_ids(line, vocab, memo))
                ids.extend(got)
            distinct.append(ids or [vocab.setdefault(EMPTY, len(vocab))])
        which[i] = k
    return distinct, which, vocab


#: the token of a text that has none (bm25s scores no document without a token)
EMPTY = "<empty>"
#: each document's length in tokens, beside bm25s's arrays
LENGTHS_FILE = "lengths.npy"
#: bm25s's files: its parameters, its vocabulary, its score matrix (CSC)
PARAMS_FILE = "params.index.json"
VOCAB_FILE = "vocab.index.json"
DATA_FILE, INDICES_FILE, INDPTR_FILE = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"


def _check_params(path: Path) -> None:
    """bm25s's parameters as ``SparseIndex.build`` saves them: numbers where it
    computes with numbers, Lucene's method (the one the score matrix is), numpy
    dtypes, the number of documents."""
    try:
        params = json.loads(path.read_text())
    except OSError as exc:
        raise StoreCorrupt(f"cannot read BM25 index file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise StoreCorrupt(f"cannot read BM25 index file {path}: {exc}") from exc
    if not isinstance(params, dict):
        raise StoreCorrupt(f"{path} is damaged: not a JSON object")
    problems = [f"{key} is {params.get(key)!r}, not a number" for key in ("k1", "b", "delta")
                if key in params and not _is_number(params[key])]
    if params.get("method", "lucene") != "lucene" or params.get("idf_method") not in (None, "lucene"):
        problems.append(f"method is {params.get('method')!r}/{params.get('idf_method')!r}, not 'lucene'")
    for key, kinds in (("dtype", "f"), ("int_dtype", "iu")):
        if key in params and not _is_dtype(params[key], kinds):
            problems.append(f"{key} is {params[key]!r}")
    num_docs = params.get("num_docs")
    if isinstance(num_docs, bool) or not isinstance(num_docs, int) or num_docs < 0:
        problems.append(f"num_docs is {num_docs!r}, not a count")
    if params.get("backend", "numpy") not in ("numpy", "auto"):
        problems.append(f"backend is {params.get('backend')!r}, not 'numpy'")
    if problems:
        raise StoreCorrupt(f"{path} is damaged: {'; '.join(problems)}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_dtype(name: object, kinds: str) -> bool:
    try:
        return isinstance(name, str) and np.dtype(name).kind in kinds
    except TypeError:
        return False


def _check_arrays(folder: Path, retriever: Any) -> None:
    """The score matrix a search reads: one-dimensional arrays of the right kinds,
    term columns that start at 0, never go back and end at the last weight, finite
    weights, document numbers within the documents, and a vocabulary whose term
    numbers name columns (bm25s's own empty token names the one past the last)."""
    scores = retriever.scores
    data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
    num_docs = scores["num_docs"]
    for name, array, kinds in ((DATA_FILE, data, "f"), (INDICES_FILE, indices, "iu"), (INDPTR_FILE, indptr, "iu")):
        if not isinstance(array, np.ndarray) or array.ndim != 1 or array.dtype.kind not in kinds:
            raise StoreCorrupt(f"{folder / name} is damaged: not a one-dimensional array of "
                               f"{'weights' if kinds == 'f' else 'whole numbers'}")
    if len(indices) != len(data):
        raise StoreCorrupt(f"{folder / INDICES_FILE} is damaged: {len(indices)} document numbers for "
                           f"{len(data)} weights in {DATA_FILE}")
    if len(indptr) < 1 or indptr[0] != 0 or indptr[-1] != len(data) or bool(np.any(np.diff(indptr) < 0)):
        raise StoreCorrupt(f"{folder / INDPTR_FILE} is damaged: its term columns do not run from 0 to the "
                           f"{len(data)} weights in order")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= num_docs):
        raise StoreCorrupt(f"{folder / INDICES_FILE} is damaged: document numbers outside 0..{num_docs - 1}")
    if not bool(np.isfinite(data).all()):
        raise StoreCorrupt(f"{folder / DATA_FILE} is damaged: weights that are not finite numbers")
    vocab = retriever.vocab_dict
    terms = len(indptr) - 1
    if not isinstance(vocab, dict) or not all(
            type(v) is int and (0 <= v < terms or (k == "" and v == terms)) for k, v in vocab.items()):
        raise StoreCorrupt(f"{folder / VOCAB_FILE} is damaged: not a map of tokens to term numbers "
                           f"0..{terms - 1}")


def bm25_rescore(query: Sequence[str], docs: Sequence[str], df: Mapping[str, int], n_docs: int,
                 total: int, *, k1: float = 1.5, b: float = 0.75) -> list[float]:
    """bm25s's score of each of ``docs`` (a document's tokens joined by single
    spaces: a view's search text) for the query tokens ``query`` (a repeated token
    counts again, as bm25s sums it), in a collection of ``n_docs`` documents of
    ``total`` length with document frequencies ``df``: the arithmetic of
    ``bm25_scores`` and of bm25s's search (float32 weights summed in float32 in
    query order), so a document scores what ``SparseIndex.search`` gives it. A
    server's fulltext index finds the candidates; this ranks them as the embedded
    store would. Term counts are substring counts of `` token `` in the text with
    its spaces doubled (so that neighbouring matches do not share a space), and the
    sums run over all documents at once, term by term (element for element the
    same operations)."""
    terms = [t for t in query if df.get(t, 0) > 0]
    if not terms or not n_docs or not docs:
        return [0.0] * len(docs)
    avg = np.float64(total) / n_docs
    lengths = np.fromiter((d.count(" ") + 1 if d else 1 for d in docs), dtype=np.float64, count=len(docs))
    norm = k1 * ((1 - b) + b * lengths / avg)
    spaced = [f" {d.replace(' ', '  ')} " for d in docs]
    score = np.zeros(len(docs), dtype=np.float32)
    for t in terms:
        idf = np.float32(math.log(1 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)))
        needle = f" {t} "
        tf = np.fromiter((d.count(needle) for d in spaced), dtype=np.float32, count=len(docs))
        weight = (idf * (tf / (norm + tf))).astype(np.float32)  # 0 where the term is absent
        score = (score + weight).astype(np.float32)
    return [float(x) for x in score]


class SparseIndex:
    """BM25 over a fixed list of texts; search returns (position, score) pairs."""

    def __init__(self, retriever: object, size: int, lengths: np.ndarray) -> None:
        self._bm25 = retriever
        self.size = size
        vocab = getattr(retriever, "vocab_dict", None) or {}
        self._vocab = set(vocab)
        #: each document's length in tokens
        self.lengths = lengths

    @classmethod
    def build(cls, texts: Sequence[str]) -> SparseIndex:
        import bm25s

        retriever = bm25s.BM25()
        distinct, which, vocab = _token_ids(texts)
        if len(texts):
            retriever.scores = bm25_scores(distinct, which, len(vocab), k1=retriever.k1, b=retriever.b)
            # what bm25s's index() sets besides: its empty token, the ids' set, no BM25L/+ array
            retriever.vocab_dict = {**vocab, "": len(vocab)}
            retriever.unique_token_ids_set = set(retriever.vocab_dict.values())
            retriever.nonoccurrence_array = None
        sizes = np.fromiter((len(d) for d in distinct), dtype=np.int32, count=len(distinct))
        return cls(retriever, len(texts), sizes[which])

    def save(self, folder: str | os.PathLike[str]) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if self.size:
            self._bm25.save(str(folder), show_progress=False)  # type: ignore[attr-defined]
            np.save(Path(folder) / LENGTHS_FILE, self.lengths)

    def statistics(self, documents: np.ndarray) -> tuple[dict[str, int], int]:
        """What BM25 knows of the documents at positions ``documents`` besides their own
        tokens: each token's document frequency among them, and their total length
        (a text with no token has length 1). With their number, enough to score any
        of them as this index does (``bm25_rescore``). Read off the score matrix (a
        term's documents are its column) and the kept lengths, without tokenizing
        anything."""
        if self.size == 0 or not len(documents):
            return {}, 0
        scores = self._bm25.scores  # type: ignore[attr-defined]
        indptr = np.asarray(scores["indptr"])
        chosen = np.zeros(self.size, dtype=bool)
        chosen[documents] = True
        terms = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))[chosen[np.asarray(scores["indices"])]]
        df = np.bincount(terms, minlength=len(indptr) - 1)
        names = {i: t for t, i in self._bm25.vocab_dict.items()}  # type: ignore[attr-defined]
        return ({names[t]: int(df[t]) for t in np.flatnonzero(df) if names[t] != EMPTY},
                int(self.lengths[documents].astype(np.int64).sum()))

    @classmethod
    def load(cls, folder: str | os.PathLike[str], size: int) -> SparseIndex:
        """The index saved in ``folder`` for ``size`` views, its arrays memory-mapped.
        What a search reads is checked here (the parameters' types, the arrays'
        shapes, every document and term number in range), so a damaged file is a
        ``StoreCorrupt`` naming it, not an error deep in a later query."""
        import bm25s

        if size == 0:
            return cls(bm25s.BM25(), 0, np.zeros(0, dtype=np.int32))
        folder = Path(folder)
        _check_params(folder / PARAMS_FILE)
        try:
            retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        except (OSError, ValueError, TypeError, KeyError, ImportError) as exc:
            raise StoreCorrupt(f"cannot read BM25 index in {folder}: {exc}") from exc
        _check_arrays(folder, retriever)
        lengths_file = folder / LENGTHS_FILE
        try:
            lengths = np.load(lengths_file, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise StoreCorrupt(f"cannot read BM25 index file {lengths_file}: {exc}") from exc
        if lengths.ndim != 1 or len(lengths) != size or lengths.dtype.kind not in "iu" or int(lengths.min()) < 0:
            raise StoreCorrupt(f"{lengths_file} is damaged: not one token count per view ({size})")
        return cls(retriever, size, lengths)

    @property
    def documents(self) -> int:
        """How many documents the BM25 arrays hold (to check them against the views)."""
        if self.size == 0:
            return 0
        return int(self._bm25.scores["num_docs"])  # type: ignore[attr-defined]

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """(position, score) of the ``k`` best documents sharing a term with
        ``query``; ``allowed``: a mask of the documents that may be returned."""
        tokens = [t for t in code_tokens(query) if t in self._vocab]
        if not tokens or self.size == 0:
            return []
        scores = np.asarray(self._bm25.get_scores(tokens))  # type: ignore[attr-defined]
        if allowed is not None:
            scores = np.where(allowed, scores, 0)
        return [(int(d), float(scores[d])) for d in top_k(scores, k) if scores[d] > 0]
