"""Embedding throughput: VitalRAG's encoders against a plain
``SentenceTransformer.encode`` of the same view texts, in one run.

    python bench/embed.py [--store DIR] [--views 2000] [--seq 256,128] [--backends torch,onnx]
        [--no-int8]

The views are a seeded sample of an index's views (``--store``; default: this
repository indexed with ``--no-embed`` into a temporary folder), in index order,
as ``vitalrag index`` hands them to the encoder. The baseline is the packaged
model loaded by sentence-transformers with its defaults (``max_seq_length`` 256,
batch 32) and ``encode(texts, normalize_embeddings=True)``. The onnx backend is
also run quantised (``+int8``) at each length, unless ``--no-int8``. Each row gives views
per second, the speed-up over the baseline, and the cosine of its vectors with
the baseline's (mean and minimum): 1.0000 is the same vectors.

The last row is what ``vitalrag index`` does with the same views: the default
encoder, over the distinct texts of the kinds it embeds (``EMBEDDED_KINDS``;
the others get no vector). Its views/s counts every view of the sample, as the
baseline's does; its cosines are over the views it embeds.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from vitalrag.retrieve.dense import DEFAULT_MODEL, make_embedder, packaged_model_path
from vitalrag.model import View
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.views import EMBEDDED_KINDS, embeds


def views(store: str | None, n: int, seed: int) -> list[View]:
    if store is None:
        tmp = tempfile.mkdtemp(prefix="vitalrag-embed-bench-")
        subprocess.run([sys.executable, "-m", "vitalrag", "index", str(Path(__file__).parents[1]),
                        "--no-embed", "--store", tmp], check=True, capture_output=True)
        store = tmp
    found = RetrievalIndex.load(Path(store)).views
    if n < len(found):
        keep = sorted(random.Random(seed).sample(range(len(found)), n))
        found = [found[i] for i in keep]
    return found


def timed(encode, texts: list[str]) -> tuple[np.ndarray, float]:  # noqa: ANN001
    encode(texts[:8])  # load, and warm the runtime
    t = time.perf_counter()
    out = encode(texts)
    return np.asarray(out, dtype=np.float32), time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default=None, help="an index folder (default: this repository, no embeddings)")
    ap.add_argument("--views", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seq", default="256,128", help="sequence lengths to try (256: the model's own)")
    ap.add_argument("--backends", default="torch,onnx")
    ap.add_argument("--no-int8", action="store_true", help="leave out the int8 rows of the onnx backend")
    args = ap.parse_args()
    sample = views(args.store, args.views, args.seed)
    texts = [v.text for v in sample]
    chars = sum(map(len, texts))
    print(f"{len(texts)} views, {chars / len(texts):.0f} characters on average")

    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(packaged_model_path() or DEFAULT_MODEL, device="cpu", local_files_only=True)
    base, base_s = timed(lambda t: plain.encode(t, normalize_embeddings=True), texts)
    rows = [("plain SentenceTransformer.encode (baseline)", base_s, base)]
    for backend in args.backends.split(","):
        for seq in (int(s) for s in args.seq.split(",")):
            name = DEFAULT_MODEL if seq == plain.max_seq_length else f"{DEFAULT_MODEL}@{seq}"
            for quant in ("", "+int8") if backend == "onnx" and not args.no_int8 else ("",):
                emb = make_embedder(name + quant, backend=backend)
                vec, secs = timed(emb.encode, texts)
                rows.append((f"vitalrag {backend}{quant}, max_seq_length {seq} ({type(emb).__name__})", secs, vec))
    # as an index run: the default encoder over the distinct texts of the kinds embedded
    chosen = [i for i, v in enumerate(sample) if embeds(v)]
    distinct = list(dict.fromkeys(texts[i] for i in chosen))
    emb = make_embedder(None)
    vec, secs = timed(emb.encode, distinct)
    by_text = dict(zip(distinct, vec))
    index_vec = np.zeros_like(base)
    index_vec[chosen] = [by_text[texts[i]] for i in chosen]
    rows.append((f"vitalrag index: {type(emb).__name__}, {len(distinct)} distinct texts of "
                 f"{', '.join(sorted(EMBEDDED_KINDS))}", secs, index_vec))
    print(f"\n| encoder | views/s | speed-up | cosine mean | cosine min |\n|---|---:|---:|---:|---:|")
    for label, secs, vec in rows:
        cos = (vec * base).sum(axis=1)[vec.any(axis=1)]
        print(f"| {label} | {len(texts) / secs:.1f} | {base_s / secs:.2f}x | {cos.mean():.4f} | {cos.min():.4f} |")


if __name__ == "__main__":
    main()
