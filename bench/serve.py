"""MCP server latency: ``get_context`` over streamable HTTP on a real repository.

    python bench/serve.py [SPEC] [--calls 200] [--concurrency 8] [--model all-MiniLM-L6-v2] [--store DIR]

SPEC defaults to pypi:requests==2.32.3. The repository is indexed into a
temporary embedded store (or into --store DIR, reused when it already holds an
index) with the real (default) embedding model, so every call includes dense
query encoding; then ``vitalrag serve --transport http --workers W`` (default
2: one compute process per core) runs as a subprocess on a free loopback port
(bearer token on, CPU only) and CALLS
``get_context`` calls (budget 4096, policy vital) are made over the SDK's
ClientSession with CONCURRENCY in flight at once, one session each (and once
more with one in flight). The same calls are then made by a lean client: one
thread per connection, each a kept-alive ``http.client`` connection posting the
JSON-RPC ``tools/call`` requests an MCP client sends (after the ``initialize``
handshake). The server and the load generator share this machine's cores, and
the SDK client (anyio, httpx, pydantic) spends a good part of them; the lean
client measures the server with less of that in the way, and the target is
judged on it. Prints the client-side p50/p95/max per call, the throughput, and
for comparison the same queries in-process (retrieval + allocation without
MCP/HTTP, sequential). Last, a full index of a copy of the
repository against an incremental re-index after a one-file change.
Targets: get_context p95 < 150 ms; the one-file re-index at least 20x faster.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from _common import pct, queries

from vitalrag.eval.corpora import Corpus, fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.retrieve.dense import make_embedder
from vitalrag.graph.version import has_retrieval
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.serve import ContextService

TOKEN = "bench-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    env = {**os.environ, "VITALRAG_TOKEN": TOKEN, "CUDA_VISIBLE_DEVICES": ""}
    process = subprocess.Popen([sys.executable, "-m", "vitalrag", "serve", "--store", str(store),
                                "--transport", "http", "--port", str(port), "--workers", str(workers)],
                               env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            httpx2.get(url, timeout=1)
            return process
        except httpx2.TransportError:
            if time.monotonic() > deadline:
                process.terminate()
                raise SystemExit("server did not answer within 120 s") from None
            time.sleep(0.2)


async def load(url: str, qs: list[str], concurrency: int) -> tuple[list[float], int, float]:
    """Every query once, ``concurrency`` sessions in flight; per-call ms, errors, wall s."""
    times: list[float] = []
    errors = 0

    async def worker(n: int) -> None:
        nonlocal errors
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    for _ in range(3):  # every worker process warm before the timed calls
                        await session.call_tool("get_context", {"query": "warm up this session"})
                    await barrier.wait()
                    for q in qs[n::concurrency]:
                        t = time.perf_counter()
                        result = await session.call_tool("get_context", {"query": q, "budget": 4096})
                        times.append((time.perf_counter() - t) * 1000)
                        errors += bool(result.is_error)

    barrier = _Barrier(concurrency)
    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for n in range(concurrency):
            tg.start_soon(worker, n)
    return times, errors, time.perf_counter() - started


class _LeanSession:
    """An MCP client reduced to what a tool call needs: the initialize handshake,
    then JSON-RPC posts on one kept-alive connection (Nagle off)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.next_id = 0
        init = self.post("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "vitalrag-bench", "version": "0"}})
        self.headers["MCP-Protocol-Version"] = init["result"]["protocolVersion"]
        self.post("notifications/initialized", None, notification=True)

    def post(self, method: str, params: dict[str, object] | None, notification: bool = False) -> dict:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notification:
            self.next_id += 1
            message["id"] = self.next_id
        self.conn.request("POST", "/mcp", json.dumps(message).encode(), self.headers)
        response = self.conn.getresponse()
        body = response.read()
        session = response.getheader("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        if notification:
            return {}
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")
        if response.getheader("content-type", "").startswith("text/event-stream"):
            body = next(line[5:] for line in body.splitlines() if line.startswith(b"data:"))
        return json.loads(body)

    def get_context(self, query: str) -> bool:
        """One call; whether it came back an error."""
        answer = self.post("tools/call", {"name": "get_context", "arguments": {"query": query, "budget": 4096}})
        return "error" in answer or bool(answer.get("result", {}).get("isError"))


def lean_load(port: int, qs: list[str], concurrency: int) -> tuple[list[float], int, float]:
    """Every query once, ``concurrency`` lean sessions in flight; per-call ms, errors, wall s."""
    times: list[float] = []
    errors = 0
    lock = threading.Lock()
    ready = threading.Barrier(concurrency + 1)

    def worker(n: int) -> None:
        nonlocal errors
        session = _LeanSession(port)
        for _ in range(3):
            session.get_context("warm up this session")
        ready.wait()
        for q in qs[n::concurrency]:
            t = time.perf_counter()
            failed = session.get_context(q)
            elapsed = (time.perf_counter() - t) * 1000
            with lock:
                times.append(elapsed)
                errors += failed

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(concurrency)]
    for t in threads:
        t.start()
    ready.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return times, errors, time.perf_counter() - started


class _Barrier:
    """Start the timed calls together, after every session has connected."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.count = 0
        self.event = anyio.Event()

    async def wait(self) -> None:
        self.count += 1
        if self.count == self.parties:
            self.event.set()
        await self.event.wait()


def reindex_timing(corpus: Corpus, model: str | None) -> dict[str, float]:
    """A full index of a copy of the repository (graph, views, BM25, every view
    embedded) against an incremental re-index after editing one file, each
    timed end to end the way `vitalrag index` runs them (model load excluded)."""
    embedder = make_embedder(model)
    embedder.encode(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / corpus.name
        shutil.copytree(corpus.path, repo)
        folder = Path(tmp) / "idx"

        def index() -> float:
            t = time.perf_counter()
            store = MemoryStore.open(folder)
            index_repository(repo, store, name=corpus.name, cache_dir=folder / "facts")
            RetrievalIndex.build(store, folder, embedder=embedder)
            return time.perf_counter() - t

        full = index()
        target = max((p for p in repo.rglob("*.py") if "test" not in p.name), key=lambda p: p.stat().st_size)
        with target.open("a") as fh:
            fh.write("\n\ndef added_by_the_bench(x):\n    \"\"\"A new helper.\"\"\"\n    return x\n")
        one_file = index()
    return {"full index": full, f"after a one-file change ({target.name})": one_file,
            "speed-up": full / one_file}


def report(name: str, times: list[float]) -> None:
    print(f"{name:<34} p50 {pct(times, 50):7.1f} ms  p95 {pct(times, 95):7.1f} ms  "
          f"mean {statistics.fmean(times):7.1f} ms  max {max(times):7.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", nargs="?", default="pypi:requests==2.32.3")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--model", default=None, help="embedding model (default: the packaged all-MiniLM-L6-v2)")
    ap.add_argument("--target-p95", type=float, default=150.0)
    ap.add_argument("--store", type=Path, default=None, help="index folder to build once and reuse")
    ap.add_argument("--workers", type=int, default=2, help="serve --workers: compute processes (default 2, one per core)")
    ap.add_argument("--no-reindex", action="store_true", help="skip the full vs one-file re-index timing")
    args = ap.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the figure is for CPU
    corpus = fetch(args.spec)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.store or Path(tmp) / "idx"
        if has_retrieval(folder):
            store = MemoryStore.open(folder, create=False)
            loaded = RetrievalIndex.load(folder)
            views, model = len(loaded.views), loaded.model
        else:
            store = MemoryStore(folder)
            index_repository(corpus.path, store, name=corpus.name)
            _, stats = RetrievalIndex.build(store, folder, embedder=make_embedder(args.model))
            views, model = stats.views, stats.model
        qs = queries(store, args.calls)
        print(f"{corpus.name}: {views} views, model {model}, {len(qs)} get_context calls, "
              f"{args.concurrency} in flight, serve --workers {args.workers}, "
              f"CPU ({os.cpu_count()} cores visible)")

        service = ContextService(str(folder)).open()
        in_process = []
        for q in qs:
            t = time.perf_counter()
            service.get_context(q)
            in_process.append((time.perf_counter() - t) * 1000)
        service.close()

        port = free_port()
        process = start_server(folder, port, args.workers)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            sequential, _, _ = anyio.run(load, url, qs, 1)
            sdk_times, sdk_errors, sdk_wall = anyio.run(load, url, qs, args.concurrency)
            times, errors, wall = lean_load(port, qs, args.concurrency)
        finally:
            process.terminate()
            process.wait(timeout=30)
        report("in-process get_context (seq.)", in_process)
        report("MCP/HTTP get_context (1 in flight)", sequential)
        report(f"SDK client ({args.concurrency} in flight)", sdk_times)
        print(f"  throughput {len(sdk_times) / sdk_wall:.1f} calls/s, errors {sdk_errors}/{len(sdk_times)}")
        report(f"lean client ({args.concurrency} in flight)", times)
        print(f"  throughput {len(times) / wall:.1f} calls/s, errors {errors}/{len(times)}, "
              f"p95 target {args.target_p95:.0f} ms: "
              f"{'met' if pct(times, 95) < args.target_p95 else 'NOT met'}")
        reindex = {} if args.no_reindex else reindex_timing(corpus, args.model)
        for name, value in reindex.items():
            unit = "x" if name == "speed-up" else " s"
            print(f"re-index {name}: {value:.2f}{unit}")


if __name__ == "__main__":
    main()
