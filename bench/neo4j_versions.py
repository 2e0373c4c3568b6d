"""A repository's copy in Neo4j is replaced whole: pushes killed at random, readers during pushes, push time.

    NEO4J_URI=bolt://127.0.0.1:7687 python bench/neo4j_versions.py [PATH] [--kills 10] [--readers 3]
        [--pushes 6] [--repeat 3] [--only timing,kills,reads]

PATH (default: this checkout's ``vitalrag`` package) is copied twice: v1 as it is,
v2 with every tenth file deleted, every seventh file given a new function and
every docstring of every fifth file changed. Both are indexed into embedded stores
(``--model hashing``, so no model is needed), then pushed into Neo4j under a
repository name of this run (removed at the end):

- timing: wall seconds of ``vitalrag push`` (the whole command: start, graph,
  views) into an empty repository, of v1 again (unchanged), and of v2 over v1;
- kills: ``--kills`` pushes, each of the other copy than the one live, killed with
  SIGKILL at a random moment of a push's duration; then ``stats``, ``show`` of an
  object only v1 has and of one only v2 has, ``search`` and the repository's view
  count must all show v1 whole or v2 whole with honest exit codes (a ``show`` of
  what the copy lacks exits 1); anything else is a half copy;
- reads: ``--readers`` processes, each a ``ContextService`` (what ``vitalrag serve``
  runs) calling ``index_status``, ``get_object`` and ``get_context`` in a loop while
  ``--pushes`` pushes alternate v2 and v1; every answer must be all v1 or all v2.

It runs the code it is given: ``PYTHONPATH=OLD_TREE python bench/neo4j_versions.py``
measures a checkout from before (a push there has no ``--wait``: the kills trial
then waits out nothing).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from vitalrag.graph.memory import MemoryStore
from vitalrag.retrieve.index import RetrievalIndex

VITALRAG = [sys.executable, "-m", "vitalrag"]
#: seconds a killed push's lease holds the repository (the trial waits it out)
LEASE = 3


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VITALRAG, *args], capture_output=True, text=True, env=env, timeout=900)


def make_copies(path: Path, tmp: Path) -> tuple[Path, Path]:
    v1 = tmp / "v1"
    shutil.copytree(path, v1, ignore=shutil.ignore_patterns("__pycache__"))
    v2 = tmp / "v2"
    shutil.copytree(v1, v2)
    for i, f in enumerate(sorted(v2.rglob("*.py"))):
        if i % 10 == 9:
            f.unlink()
        elif i % 7 == 3:
            f.write_text(f.read_text() + f"\n\ndef bench_added_{i}():\n    return {i}\n")
        elif i % 5 == 1:
            f.write_text(f.read_text().replace('"""', '"""Changed. ', 1))
    return v1, v2


def expected(folder: Path, repo: str) -> dict[str, Any]:
    mem = MemoryStore.open(folder, create=False)
    return {"counts": mem.counts(repo), "ids": {o.id for o in mem.find_objects(repo=repo)}, "store": mem,
            "views": len(RetrievalIndex.load(folder).views)}


def classify(ids: set[str], v: dict[str, dict[str, Any]]) -> str:
    in1, in2 = ids <= v["v1"]["ids"], ids <= v["v2"]["ids"]
    return "either" if in1 and in2 else "v1" if in1 else "v2" if in2 else "mixed"


# -- timing ---------------------------------------------------------------------------------

def timing(uri: str, folders: dict[str, Path], repeat: int) -> None:
    rows: dict[str, list[float]] = {"first push (empty)": [], "v1 again (unchanged)": [], "v2 over v1": []}
    for _ in range(repeat):
        for label, name in (("first push (empty)", "v1"), ("v1 again (unchanged)", "v1"), ("v2 over v1", "v2")):
            t = time.perf_counter()
            out = cli("push", "--store", str(folders[name]), "--to", uri, "--json")
            if out.returncode != 0:
                sys.exit(out.stderr[-2000:])
            rows[label].append(time.perf_counter() - t)
        repo = json.loads(out.stdout)["repos"][0]
        drop(uri, repo)
    print("push wall time (the whole command), median of", repeat)
    for label, xs in rows.items():
        print(f"  {label:<24} {statistics.median(xs):6.2f} s   (all: {', '.join(f'{x:.2f}' for x in xs)})")


def drop(uri: str, repo: str) -> None:
    """Remove a repository and everything of it (its views too), at once."""
    from vitalrag.graph.neo4j import Neo4jStore
    from vitalrag.graph.neo4j_views import Neo4jViews

    store = Neo4jStore.from_uri(uri)
    try:
        writing = getattr(store, "writing", None)
        if writing is None:  # before versions
            Neo4jViews(store).delete_repositories([repo])
            store.delete_repository(repo)
            return
        with writing([repo]):
            Neo4jViews(store).delete_repositories([repo])
            store.delete_repository(repo)
        store.collect(repo, grace=0)
    finally:
        store.close()


# -- kills ----------------------------------------------------------------------------------

def seen_by_cli(uri: str, repo: str, v: dict[str, dict[str, Any]], only: dict[str, str]) -> str:
    stats = cli("stats", "--store", uri, "--repo", repo, "--json")
    if stats.returncode != 0:
        return "half"
    counts = json.loads(stats.stdout).get(repo)
    state = next((n for n in ("v1", "v2") if counts == v[n]["counts"]), "half")
    if state == "half":
        return state
    for name, oid in only.items():  # an object only v1 has, one only v2 has
        code = cli("show", oid, "--store", uri, "--json").returncode
        if code != (0 if name == state else 1):
            return "half"
    found = cli("search", "store graph write", "--store", uri, "--repo", repo, "--json")
    if found.returncode != 0:
        return "half"
    ids = {h["view"]["object_id"] for h in json.loads(found.stdout)}
    if classify(ids, v) not in (state, "either"):
        return "half"
    from vitalrag.graph.neo4j import Neo4jStore
    from vitalrag.graph.neo4j_views import Neo4jViews

    store = Neo4jStore.from_uri(uri)
    try:
        views = Neo4jViews(store).count([repo])
    finally:
        store.close()
    return state if views == v[state]["views"] else "half"


def kills(uri: str, repo: str, folders: dict[str, Path], v: dict[str, dict[str, Any]], n: int,
          wait_flag: list[str]) -> None:
    env = {**os.environ, "VITALRAG_NEO4J_LEASE": str(LEASE)}
    only = {"v1": sorted(v["v1"]["ids"] - v["v2"]["ids"])[0], "v2": sorted(v["v2"]["ids"] - v["v1"]["ids"])[0]}
    cli("push", "--store", str(folders["v1"]), "--to", uri, *wait_flag, env=env)
    durations = []
    for name in ("v2", "v1"):  # the kind of push the trial kills: one copy over the other
        t = time.perf_counter()
        cli("push", "--store", str(folders[name]), "--to", uri, *wait_flag, env=env)
        durations.append(time.perf_counter() - t)
    duration = min(durations)
    t = time.perf_counter()
    cli("stats", "--store", uri, "--repo", repo, "--json")
    startup = time.perf_counter() - t  # a command's start: a kill before it writes proves nothing
    rng = random.Random(20)
    state, results, ended = "v1", [], 0
    while len(results) < n and ended < 2 * n:
        target = "v2" if state == "v1" else "v1"
        proc = subprocess.Popen([*VITALRAG, "push", "--store", str(folders[target]), "--to", uri, *wait_flag],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        delay = rng.uniform(startup, duration)
        time.sleep(delay)
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        after = seen_by_cli(uri, repo, v, only)
        time.sleep(LEASE + 0.5)  # the killed push's lease runs out: the next push writes from its start
        print(f"  kill at {delay:5.2f}s of ~{duration:.1f}s ({'it had ended' if finished else 'mid-push'}): "
              f"{state} live, push of {target} -> readers see {after}")
        if finished:
            ended += 1
        else:
            results.append("old" if after == state else "new" if after == target else "half")
        state = after if after != "half" else state
    print(f"kills mid-push: {len(results)} (and {ended} pushes that had ended before their kill): "
          f"old copy whole {results.count('old')}, new copy whole {results.count('new')}, "
          f"half copies {results.count('half')}")


# -- reads ----------------------------------------------------------------------------------

def reader(uri: str, stop: str, out: str, probe: str, queries: list[str], expect: dict[str, Any]) -> None:
    from vitalrag.retrieve.query import Query
    from vitalrag.serve.service import ContextService

    empty = tempfile.mkdtemp()
    os.chdir(empty)
    service = ContextService(uri, index_dir=empty).open(warm=True)
    v = {name: {"ids": set(expect[name]["ids"])} for name in ("v1", "v2")}
    tally: dict[str, int] = {}

    def note(kind: str, state: str) -> None:
        tally[f"{kind}:{state}"] = tally.get(f"{kind}:{state}", 0) + 1

    i = 0
    while not os.path.exists(stop):
        i += 1
        try:
            status = service.index_status()
            counts = next((({k: r[k] for k in ("objects", "edges", "unresolved")})
                           for r in status["repositories"] if r["name"] == expect["repo"]), None)
            note("index_status", next((n for n in ("v1", "v2") if counts == expect[n]["counts"]), "mixed"))
            obj = service.get_object(probe)
            got = {"object": obj["object"], "edges": sorted(json.dumps(e, sort_keys=True) for e in obj["edges"])}
            note("get_object", next((n for n in ("v1", "v2") if got == expect[n]["probe"]), "mixed"))
            ctx = service.get_context(Query.of(queries[i % len(queries)], repo=expect["repo"]))
            note("get_context", classify({o["id"] for o in ctx["objects"]}, v))
        except Exception as exc:  # noqa: BLE001 - counted: an error is an answer a reader got
            note("error", type(exc).__name__)
    Path(out).write_text(json.dumps(tally))


def reads(uri: str, repo: str, folders: dict[str, Path], v: dict[str, dict[str, Any]], n_readers: int,
          pushes: int, tmp: Path) -> None:
    probe = sorted(i for i in v["v1"]["ids"] & v["v2"]["ids"]
                   if v["v1"]["store"].get_objects([i])[i] != v["v2"]["store"].get_objects([i])[i])[0]
    expect: dict[str, Any] = {"repo": repo}
    for name in ("v1", "v2"):
        mem = v[name]["store"]
        expect[name] = {"counts": v[name]["counts"], "ids": sorted(v[name]["ids"]),
                        "probe": {"object": mem.get_objects([probe])[probe].to_dict(),
                                  "edges": sorted(json.dumps(e.to_dict(), sort_keys=True)
                                                  for e in mem.edges_of([probe]))}}
    queries = ["write the graph into the store", "parse a python file", "render a context window",
               "how are edges resolved"]
    cli("push", "--store", str(folders["v1"]), "--to", uri)
    stop = tmp / "stop"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=reader, args=(uri, str(stop), str(tmp / f"r{i}.json"), probe, queries, expect))
             for i in range(n_readers)]
    for p in procs:
        p.start()
    time.sleep(15)  # the readers load their model and start answering
    seconds = []
    for k in range(pushes):
        t = time.perf_counter()
        cli("push", "--store", str(folders["v2" if k % 2 == 0 else "v1"]), "--to", uri)
        seconds.append(time.perf_counter() - t)
    stop.touch()
    for p in procs:
        p.join(120)
    total: dict[str, int] = {}
    for i in range(n_readers):
        for key, n in json.loads((tmp / f"r{i}.json").read_text()).items():
            total[key] = total.get(key, 0) + n
    calls = sum(total.values())
    mixed = sum(n for key, n in total.items() if key.endswith(":mixed"))
    errors = sum(n for key, n in total.items() if key.startswith("error:"))
    print(f"reads: {n_readers} reader processes, {pushes} pushes ({statistics.median(seconds):.1f}s each), "
          f"{calls} calls, mixed answers: {mixed}, errors: {errors}")
    for key in sorted(total):
        print(f"  {key:<24} {total[key]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", default=str(Path(__file__).parents[1] / "vitalrag"))
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--pushes", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="timing,kills,reads")
    args = ap.parse_args()
    uri = os.environ.get("NEO4J_URI") or sys.exit("set NEO4J_URI (scripts/neo4j-local start)")
    only = set(args.only.split(","))
    repo = f"bench20v{uuid.uuid4().hex[:8]}"
    wait_flag = ["--wait"] if "--wait" in cli("push", "--help").stdout else []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        v1_src, v2_src = make_copies(Path(args.path), tmp)
        folders = {}
        for name, src in (("v1", v1_src), ("v2", v2_src)):
            folders[name] = tmp / f"idx-{name}"
            out = cli("index", str(src), "--store", str(folders[name]), "--name", repo, "--model", "hashing",
                      "--json")
            if out.returncode != 0:
                sys.exit(out.stderr[-2000:])
            data = json.loads(out.stdout)
            print(f"{name}: {data['files']} files, {sum(data['objects'].values())} objects, "
                  f"{sum(data['edges'].values())} edges, {data['views']} views")
        v = {name: expected(folders[name], repo) for name in ("v1", "v2")}
        try:
            if "timing" in only:
                timing(uri, folders, args.repeat)
            if "kills" in only:
                kills(uri, repo, folders, v, args.kills, wait_flag)
            if "reads" in only:
                reads(uri, repo, folders, v, args.readers, args.pushes, tmp)
        finally:
            drop(uri, repo)


if __name__ == "__main__":
    main()
