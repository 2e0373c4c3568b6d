"""Issue 20's embedded-store targets, each trial in fresh ``vitalrag`` processes on temporary folders.

    python bench/robustness.py [--only writers,reads,gitconfig,redos,hostile] [--trials 20] [--reindexes 10]
        [--readers 2] [--calls 1000] [--scale 1]

- writers: ``--trials`` times, two ``vitalrag index`` runs of two generated
  repositories (600 small modules each, ``--model hashing``: a run holds the
  writer lock for about a second) started together (the second 0-0.5 s later)
  into one store folder, every other trial a store that already holds a third
  repository; first as they are (the later one should fail fast with "another
  index is writing"), then both with ``--wait``. A trial loses a
  repository when, after both ended, a repository the store held before or one
  whose run exited 0 (with ``--wait``: either) is missing from ``vitalrag stats``,
  from the live graph or from the live retrieval snapshot, or when graph and
  retrieval name different repositories. Target: 0 lost.
- reads: a repository in two versions (v2 renames every other module's function,
  adds one to each and changes a method's body) is indexed alternately
  ``--reindexes`` times into one store while ``--readers`` processes, each a
  ``ContextService`` (what ``vitalrag serve`` runs), loop over ``index_status``,
  ``search``, ``get_object`` of every id found (and of an object both versions
  hold differently) and ``get_context``. An answer is mixed when its counts, view
  count, ids or object are not all v1's or all v2's, when ``get_object`` lacks an id
  ``search`` returned with no reload between them, or when the answers of one round
  with no reload name both versions. Target: 0 mixed in ``--calls`` (1,000) or more.
- gitconfig: a git checkout whose ``.git/config`` points ``core.fsmonitor``,
  ``core.hooksPath`` (and ``.git/hooks``), ``diff.external``, clean/smudge and
  process filters, a diff driver and textconv, pagers, ``core.sshCommand``,
  ``core.askPass``, ``credential.helper``, ``core.editor`` and
  ``core.alternateRefsCommand`` at scripts that leave a marker, with a dirty work
  tree, is indexed twice (``--force`` the second time). Plain git on a copy (the
  walk's ``ls-files --cached`` without its pinned config, ``diff``, ``status``)
  shows which traps are live. Target: 0 markers.
- redos: ``.gitignore`` (and ``sub/.gitignore``) of ``*a*a*a*a*a*a*a*a*a*a*a*a*b``
  beside files named with 240 ``a``, in a git checkout (untracked) and in a plain
  folder: the wall time of ``vitalrag index`` (the whole command), and whether
  ``skipped`` names each pattern. Plain ``git ls-files --others`` and
  ``pathspec`` are given 3 s on the same files, to show the trap. Target: < 10 s.
- hostile (issue 38, ``bench/hostile.py``): deep nesting per language, a 900 KB
  one-line bundle, forged file names, terminal escapes and a store folder full of
  user files; each case's time, peak memory and bound, ok or FAIL. ``--scale``
  shrinks the nesting (a quick try: the bounds are for 1).

Prints what each trial saw, then one table: trial, measured, target, met; exits 1
when a target is not met. The ``vitalrag`` measured is the one ``python -m
vitalrag`` imports: run from a repository root, that root's package, whatever
PYTHONPATH says (``-m`` puts the current folder first).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostile import hostile

VITALRAG = [sys.executable, "-m", "vitalrag"]
TRIALS = ("writers", "reads", "gitconfig", "redos", "hostile")
BUSY = "another index is writing"
#: the repository of the reads trial, and its two versions
LEDGER = "ledger"
VERSIONS = ("v1", "v2")
PATTERN = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
LONG_NAME = "a" * 240 + ".py"


@dataclass(frozen=True, slots=True)
class Row:
    trial: str
    measured: str
    target: str
    met: bool


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VITALRAG, *args], capture_output=True, text=True, timeout=timeout)


def cli_json(*args: str) -> Any:
    out = cli(*args, "--json")
    if out.returncode != 0:
        sys.exit(f"vitalrag {' '.join(args)}: exit {out.returncode}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def index_args(path: Path, store: Path, *extra: str) -> list[str]:
    return ["index", str(path), "--store", str(store), "--model", "hashing", "--workers", "1", *extra]


# -- repositories ---------------------------------------------------------------------------

def module_text(i: int, word: str, version: int) -> str:
    """Module ``i`` of a generated package: a class whose method calls the module's
    function, which calls the previous module's. Version 2 renames the function of
    every even module, adds an ``audit`` function to each and calls it."""
    def total(j: int) -> str:
        return f"sum_{j}" if version == 2 and j % 2 == 0 else f"total_{j}"

    cls = f"{word.capitalize()}{i}"
    lines = [f'"""{word.capitalize()}s of kind {i}."""', ""]
    if i:
        lines += [f"from pkg.m{i - 1} import {total(i - 1)}", ""]
    audited = f"audit_{i}(self.entries)" if version == 2 else "self.entries"
    lines += [
        "", f"class {cls}:", f'    """A {word} of kind {i}: its entries and their balance."""', "",
        "    def __init__(self):", "        self.entries = []", "",
        "    def add(self, value):", f'        """Add an entry of kind {i} to the {word}."""',
        "        self.entries.append(value)", "",
        "    def balance(self):", f'        """The balance of the {word} of kind {i}."""',
        f"        return {total(i)}({audited})", "", "",
        f"def {total(i)}(values):", f'    """Sum the values of kind {i}."""',
        f"    return sum(values){f' + {total(i - 1)}([])' if i else ''}", "",
    ]
    if version == 2:
        lines += ["", f"def audit_{i}(entries):", f'    """Audit the entries of kind {i}: the negative ones."""',
                  "    return [e for e in entries if e < 0]", ""]
    return "\n".join(lines)


def generate(root: Path, modules: int, word: str, version: int = 1) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(modules):
        (pkg / f"m{i}.py").write_text(module_text(i, word, version))
    return root


def git(root: Path, *args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Plain git, as a user runs it (the repository's config applies), free of this user's config."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=check, stdin=subprocess.DEVNULL)


def git_commit_all(root: Path) -> None:
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.email=bench@example.org", "-c", "user.name=bench", "-c", "commit.gpgsign=false",
        "commit", "-qm", "init")


# -- writers --------------------------------------------------------------------------------

def live_pair(store: Path) -> tuple[set[str], set[str]]:
    """The repositories the live graph and the live retrieval snapshot name, read as
    one version (what every reader loads)."""
    from vitalrag.index import Index
    from vitalrag.retrieve.index import RetrievalIndex

    with Index.open(str(store), mode="serve") as index:
        assert isinstance(index.views, RetrievalIndex)
        return set(index.store.repositories()), set(index.views.repos)


def writer_trial(store: Path, repos: dict[str, Path], first: str, second: str, delay: float,
                 base: set[str], wait: bool) -> dict[str, Any]:
    flag = ["--wait"] if wait else []
    runs = {}
    for name in (first, second):
        runs[name] = subprocess.Popen([*VITALRAG, *index_args(repos[name], store, "--name", name, *flag)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if name == first:
            time.sleep(delay)
    ended = {}
    for name, p in runs.items():
        _, err = p.communicate(timeout=600)
        ended[name] = (p.returncode, err)
    kept = set(base) | {name for name, (rc, _) in ended.items() if rc == 0 or wait}
    problems = []
    stats = cli("stats", "--store", str(store), "--json")
    listed = set(json.loads(stats.stdout)) if stats.returncode == 0 else set()
    if stats.returncode != 0:
        problems.append(f"stats exit {stats.returncode}: {stats.stderr.strip()[-300:]}")
    try:
        graph, views = live_pair(store)
    except Exception as exc:  # noqa: BLE001 - a store no reader can load has lost everything
        graph, views = set(), set()
        problems.append(f"the live version does not load: {type(exc).__name__}: {exc}")
    for where, names in (("stats", listed), ("graph", graph), ("retrieval", views)):
        if kept - names:
            problems.append(f"{where} lacks {sorted(kept - names)}")
    if graph != views:
        problems.append(f"graph names {sorted(graph)}, retrieval {sorted(views)}")
    unexpected = [f"{name}: exit {rc}: {err.strip()[-300:]}" for name, (rc, err) in ended.items()
                  if rc != 0 and (wait or BUSY not in err)]
    failed = [err.strip().replace(str(store), "STORE") for rc, err in ended.values() if rc != 0]
    return {"exits": tuple(rc for rc, _ in ended.values()), "problems": problems, "unexpected": unexpected,
            "messages": failed, "waited": sum("waiting for it" in err for _, err in ended.values())}


def writers(tmp: Path, trials: int) -> list[Row]:
    repos = {name: generate(tmp / "src" / name, 600, word)
             for name, word in (("alpha", "ledger"), ("beta", "parcel"), ("gamma", "invoice"))}
    seeded = tmp / "seeded"
    cli_json(*index_args(repos["gamma"], seeded, "--name", "gamma"))
    rows = []
    for wait in (False, True):
        rng = random.Random(20)
        lost, unexpected, waited = 0, [], 0
        exits: Counter[tuple[int, ...]] = Counter()
        messages: Counter[str] = Counter()
        started = time.perf_counter()
        for t in range(trials):
            store = tmp / f"store-{t}"
            base = set()
            if t % 2:
                shutil.copytree(seeded, store)
                base = {"gamma"}
            first, second = ("alpha", "beta") if t // 2 % 2 == 0 else ("beta", "alpha")
            got = writer_trial(store, repos, first, second, rng.uniform(0, 0.5), base, wait)
            shutil.rmtree(store, ignore_errors=True)
            exits[got["exits"]] += 1
            messages.update(got["messages"])
            waited += got["waited"]
            unexpected += got["unexpected"]
            if got["problems"]:
                lost += 1
                print(f"  trial {t} ({'--wait' if wait else 'fail fast'}): LOST: {'; '.join(got['problems'])}")
        label = "writers --wait" if wait else "writers"
        print(f"{label}: {trials} trials in {time.perf_counter() - started:.0f} s; exit codes "
              f"(first, second): {dict(exits)}; runs that said they waited: {waited}")
        for message, n in messages.most_common():
            print(f"  {n} x {message}")
        for line in unexpected:
            print(f"  unexpected: {line}")
        busy = sum(n for m, n in messages.items() if BUSY in m)
        what = (f"{lost} lost of {trials}; {waited} waited, both exit 0 in {exits[(0, 0)]}" if wait else
                f"{lost} lost of {trials}; {busy} failed fast, both exit 0 in {exits[(0, 0)]}")
        if unexpected:
            what += f"; {len(unexpected)} other failures"
        rows.append(Row(label, what, f"0 lost in {trials}", lost == 0 and not unexpected))
    return rows


# -- reads ----------------------------------------------------------------------------------

def classify(ids: set[str], v: dict[str, set[str]]) -> str:
    in1, in2 = ids <= v["v1"], ids <= v["v2"]
    return "either" if in1 and in2 else "v1" if in1 else "v2" if in2 else "mixed"


def probe_answer(answer: dict[str, Any]) -> dict[str, Any]:
    return {"object": answer["object"], "source": answer["source"],
            "edges": sorted(json.dumps(e, sort_keys=True) for e in answer["edges"])}


class _Counted(logging.Handler):
    """Counts the warnings a reader's service logs (a new version it could not load yet)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def reader(store: str, go: str, stop: str, out: str, expect: dict[str, Any], queries: list[str]) -> None:
    """One server's calls, in a loop from ``go`` to ``stop``; writes its tally to ``out``."""
    from vitalrag.errors import ObjectNotFound
    from vitalrag.retrieve.query import Query
    from vitalrag.serve.service import ContextService

    warnings = _Counted()
    logging.basicConfig(level=logging.WARNING, handlers=[warnings])
    service = ContextService(store).open(warm=True)
    v = {name: set(expect[name]["ids"]) for name in VERSIONS}
    tally: Counter[str] = Counter()
    Path(out + ".ready").touch()
    while not os.path.exists(go):
        time.sleep(0.01)
    i = 0
    while not os.path.exists(stop):
        i += 1
        query = queries[i % len(queries)]
        before = service.reloads
        states: list[str] = []

        def note(call: str, state: str) -> None:
            tally[f"{call}:{state}"] += 1
            states.append(state)

        try:
            status = service.index_status()
            row = next(r for r in status["repositories"] if r["name"] == LEDGER)
            counts = {k: row[k] for k in ("objects", "edges", "unresolved")}
            note("index_status", next((n for n in VERSIONS if counts == expect[n]["counts"]
                                       and status["views"] == expect[n]["views"]), "mixed"))
            ids = [h["id"] for h in service.search(query, k=5)]
            note("search", classify(set(ids), v))
            pinned = service.reloads
            for oid in ids:
                try:
                    note("get_object", classify({service.get_object(oid)["object"]["id"]}, v))
                except ObjectNotFound:
                    if service.reloads == pinned:  # the version search answered from lacks it
                        note("get_object", "mixed")
                    else:
                        tally["get_object:gone after a reload"] += 1
            got = probe_answer(service.get_object(expect["probe"]))
            note("get_object(probe)", next((n for n in VERSIONS if got == expect[n]["probe"]), "mixed"))
            ctx = service.get_context(Query.of(query, repo=LEDGER))
            note("get_context", classify({o["id"] for o in ctx["objects"]}, v))
        except Exception as exc:  # noqa: BLE001 - counted: an error is an answer a caller got
            tally[f"error:{type(exc).__name__}: {str(exc)[:120]}"] += 1
        tally["rounds"] += 1
        if service.reloads == before and {"v1", "v2"} <= set(states):
            tally["round:mixed"] += 1
    Path(out).write_text(json.dumps({"tally": tally, "reloads": service.reloads, "warnings": warnings.count}))


def expected_version(src: Path, store: Path, probe_suffix: str) -> dict[str, Any]:
    """What a reader must see of one version, from its own index (fresh processes)."""
    views = cli_json(*index_args(src, store, "--name", LEDGER))["views"]
    counts = cli_json("stats", "--store", str(store))[LEDGER]
    ids = sorted(o["id"] for o in cli_json("objects", "--store", str(store), "--repo", LEDGER))
    probe = next(i for i in ids if i.endswith(probe_suffix))
    return {"views": views, "counts": counts, "ids": ids, "probe_id": probe,
            "probe": probe_answer(cli_json("show", probe, "--store", str(store)))}


def reads(tmp: Path, reindexes: int, n_readers: int, min_calls: int) -> list[Row]:
    modules = 40
    src = {name: generate(tmp / f"ledger-{name}", modules, "ledger", version=k)
           for k, name in enumerate(VERSIONS, 1)}
    expect: dict[str, Any] = {name: expected_version(src[name], tmp / f"expect-{name}", ":Ledger2.balance")
                              for name in VERSIONS}
    expect["probe"] = expect["v1"]["probe_id"]
    only = {n: set(expect[n]["ids"]) - set(expect[m]["ids"]) for n, m in (("v1", "v2"), ("v2", "v1"))}
    if expect["v1"]["probe"] == expect["v2"]["probe"] or not all(only.values()) \
            or expect["v1"]["views"] == expect["v2"]["views"]:
        sys.exit("the two versions do not differ enough to tell them apart")
    print(f"reads: v1 {len(expect['v1']['ids'])} objects, {expect['v1']['views']} views; "
          f"v2 {len(expect['v2']['ids'])} objects, {expect['v2']['views']} views; "
          f"{len(only['v1'])} ids only in v1, {len(only['v2'])} only in v2")
    repo, store = tmp / LEDGER, tmp / "live"
    shutil.copytree(src["v1"], repo)
    cli_json(*index_args(repo, store, "--name", LEDGER))
    queries = [q for i in (2, 7, 12, 21, 30) for q in (f"sum the values of kind {i}",
                                                     f"audit the entries of kind {i}",
                                                     f"balance of the ledger of kind {i}")]
    go, stop = tmp / "go", tmp / "stop"
    ctx = mp.get_context("spawn")
    outs = [str(tmp / f"reader{i}.json") for i in range(n_readers)]
    procs = [ctx.Process(target=reader, args=(str(store), str(go), str(stop), out, expect, queries))
             for out in outs]
    for p in procs:
        p.start()
    deadline = time.monotonic() + 300
    while not all(os.path.exists(o + ".ready") for o in outs):
        if time.monotonic() > deadline or not all(p.is_alive() for p in procs):
            for p in procs:
                p.terminate()
            sys.exit("a reader did not start")
        time.sleep(0.1)
    go.touch()
    started, seconds, failed = time.perf_counter(), [], []
    for k in range(reindexes):
        shutil.rmtree(repo)
        shutil.copytree(src["v2" if k % 2 == 0 else "v1"], repo)
        t = time.perf_counter()
        out = cli(*index_args(repo, store, "--name", LEDGER, "--json"))
        seconds.append(time.perf_counter() - t)
        if out.returncode != 0:
            failed.append(f"re-index {k}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
    stop.touch()
    during = time.perf_counter() - started
    for p in procs:
        p.join(120)
    total: Counter[str] = Counter()
    reloads = warnings = 0
    for i, o in enumerate(outs):
        if not os.path.exists(o):
            total[f"error:reader {i} ended without its tally (exit {procs[i].exitcode})"] += 1
            continue
        got = json.loads(Path(o).read_text())
        total.update(got["tally"])
        reloads += got["reloads"]
        warnings += got["warnings"]
    rounds, mixed_rounds = total.pop("rounds", 0), total.pop("round:mixed", 0)
    calls = sum(total.values())  # every answer, errors and ids gone after a reload included
    errors = sum(n for key, n in total.items() if key.startswith("error:"))
    mixed = sum(n for key, n in total.items() if key.endswith(":mixed")) + mixed_rounds
    print(f"reads: {n_readers} readers, {reindexes} re-indexes in {during:.0f} s "
          f"({min(seconds):.1f}-{max(seconds):.1f} s each): {rounds} rounds, {calls} calls "
          f"({errors} errors); reloads seen {reloads}, warnings logged {warnings}")
    for key in sorted(total):
        print(f"  {key:<36} {total[key]}")
    print(f"  {'rounds naming both versions':<36} {mixed_rounds}")
    for line in failed:
        print(f"  {line}")
    seen = {n: sum(c for key, c in total.items() if key.endswith(f":{n}")) for n in VERSIONS}
    measured = (f"{mixed} mixed in {calls} calls ({seen['v1']} v1, {seen['v2']} v2 answers; "
                f"{reloads} reloads; {errors} errors)")
    if failed:
        measured += f"; {len(failed)} re-indexes failed"
    met = mixed == 0 and errors == 0 and calls >= min_calls and not failed
    return [Row("reads", measured, f"0 mixed in >= {min_calls:,} calls", met)]


# -- gitconfig ------------------------------------------------------------------------------

HOOKS = ("post-index-change", "pre-commit", "post-checkout", "reference-transaction", "pre-auto-gc",
         "fsmonitor-watchman", "post-merge", "post-rewrite", "pre-push")


#: plain git on a copy of the checkout: what its traps do to a command that honours its config
CONTROLS = (
    ("ls-files", "-z", "--cached"),  # what the walk runs, without its pinned config
    ("diff", "--", "pkg"),
    ("status",),  # aborts in the process filter, which answers no handshake
    ("-c", "filter.trapproc.process=", "status"),  # so it gets as far as writing the index
)


def trap(folder: Path, marks: Path, name: str, tail: str = "cat") -> str:
    """A script that appends its name and arguments to ``marks/name`` (then ``tail``)."""
    script = folder / f"{name}.sh"
    script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{marks / name}"\n{tail}\n')
    script.chmod(0o755)
    return str(script)


def armed_repository(root: Path, traps: Path, marks: Path) -> None:
    """A git checkout whose config runs a marking script wherever git would run one."""
    generate(root, 5, "trap")
    (root / ".gitattributes").write_text("*.py filter=trap diff=trap\n*.txt filter=trapproc\n")
    (root / "notes.txt").write_text("notes\n")
    git_commit_all(root)
    hooks = traps / "hooks"
    for folder in (hooks, root / ".git" / "hooks"):
        folder.mkdir(parents=True, exist_ok=True)
        for hook in HOOKS:
            Path(trap(folder, marks, f"hook-{hook}", "exit 0")).rename(folder / hook)
    config = {
        "core.fsmonitor": trap(traps, marks, "fsmonitor", "exit 0"),
        "core.hooksPath": str(hooks),
        "diff.external": trap(traps, marks, "diff-external", "exit 0"),
        "diff.trap.command": trap(traps, marks, "diff-driver", "exit 0"),
        "diff.trap.textconv": trap(traps, marks, "textconv"),
        "filter.trap.clean": trap(traps, marks, "filter-clean"),
        "filter.trap.smudge": trap(traps, marks, "filter-smudge"),
        "filter.trapproc.process": trap(traps, marks, "filter-process", "exit 1"),
        "core.pager": trap(traps, marks, "pager"),
        "pager.ls-files": trap(traps, marks, "pager-ls-files"),
        "core.sshCommand": trap(traps, marks, "ssh", "exit 1"),
        "core.askPass": trap(traps, marks, "askpass", "exit 1"),
        "credential.helper": "!" + trap(traps, marks, "credential", "exit 0"),
        "core.editor": trap(traps, marks, "editor", "exit 0"),
        "core.alternateRefsCommand": trap(traps, marks, "alternate-refs", "exit 0"),
    }
    for key, value in config.items():
        git(root, "config", key, value)
    # a dirty work tree: a status would have to run the clean filter and fsmonitor
    with (root / "pkg" / "m1.py").open("a") as fh:
        fh.write("\n\ndef edited():\n    return 1\n")
    (root / "pkg" / "untracked.py").write_text("def untracked():\n    return 2\n")


def marked(marks: Path) -> Counter[str]:
    """The markers left in ``marks``, by trap; the folder is emptied for the next count."""
    found = Counter({p.name: len(p.read_text().splitlines()) for p in marks.iterdir()})
    shutil.rmtree(marks)
    marks.mkdir()
    return found


def gitconfig(tmp: Path) -> list[Row]:
    traps, marks = tmp / "traps", tmp / "marks"
    traps.mkdir()
    marks.mkdir()  # it must exist: a script's `>>` into a missing folder leaves no marker
    root = tmp / "armed"
    armed_repository(root, traps, marks)
    marked(marks)  # what setting it up ran (nothing, before its config was written)
    # the control: a copy of the checkout (its config names the same scripts) under plain git
    control = tmp / "control"
    shutil.copytree(root, control, symlinks=True)
    live: Counter[str] = Counter()
    for args in CONTROLS:
        try:
            git(control, *args, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            pass
        fired = marked(marks)
        live.update(fired)
        print(f"gitconfig control: plain `git {' '.join(args)}` ran {', '.join(sorted(fired)) or 'nothing'}")
    shutil.rmtree(control)
    store = tmp / "store-armed"
    runs = [cli(*index_args(root, store, "--json")), cli(*index_args(root, store, "--json", "--force"))]
    found = marked(marks)
    files = [json.loads(r.stdout)["files"] if r.returncode == 0 else None for r in runs]
    print(f"gitconfig: two `vitalrag index` runs: exits {[r.returncode for r in runs]}, files indexed {files}; "
          f"markers: {dict(found) or 0}")
    for r in runs:
        if r.returncode != 0:
            print(f"  {r.stderr.strip()[-500:]}")
    ok_runs = all(r.returncode == 0 for r in runs)
    measured = f"{sum(found.values())} markers ({len(live)} traps fire under plain git)"
    if not ok_runs:
        measured += "; an index run failed"
    return [Row("gitconfig", measured, "0 commands run", not found and ok_runs)]


# -- redos ----------------------------------------------------------------------------------

def ignore_trap(root: Path, checkout: bool) -> Path:
    root.mkdir()
    (root / "ok.py").write_text("def ok():\n    return 0\n")
    (root / ".gitignore").write_text(f"{PATTERN}\n*.gen.py\n")
    if checkout:
        git_commit_all(root)  # the long names stay untracked: the walk, not git's index, finds them
    (root / LONG_NAME).write_text("def long_name():\n    return 1\n")
    (root / "sub").mkdir()
    (root / "sub" / ".gitignore").write_text(f"{PATTERN}\n")
    (root / "sub" / LONG_NAME).write_text("def long_nested():\n    return 2\n")
    (root / "skip.gen.py").write_text("def generated():\n    return 3\n")
    return root


def stalls(cmd: list[str], cwd: Path, limit: float) -> str:
    """How long ``cmd`` took, or that it was stopped at ``limit`` seconds."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    t = time.perf_counter()
    try:
        subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=limit, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"stopped after {limit:.0f} s"
    return f"{time.perf_counter() - t:.2f} s"


def redos(tmp: Path) -> list[Row]:
    walls, reported = {}, {}
    for label, checkout in (("git checkout", True), ("plain folder", False)):
        root = ignore_trap(tmp / label.replace(" ", "-"), checkout)
        t = time.perf_counter()
        try:
            out = cli(*index_args(root, tmp / f"store-{root.name}", "--json"), timeout=300)
        except subprocess.TimeoutExpired:
            walls[label], reported[label] = 300.0, False
            print(f"redos ({label}): index still running after 300 s, stopped")
            continue
        walls[label] = time.perf_counter() - t
        if out.returncode != 0:
            reported[label] = False
            print(f"redos ({label}): exit {out.returncode}: {out.stderr.strip()[-500:]}")
            continue
        data = json.loads(out.stdout)
        reasons = {s["path"]: s["reason"] for s in data["skipped"]}
        patterns = {p: reasons.get(p, "") for p in (".gitignore:1", "sub/.gitignore:1")}
        # the long names indexed, skip.gen.py still ignored by the other pattern
        reported[label] = data["files"] == 3 and all(
            r.startswith(f"ignore pattern {PATTERN!r} skipped") for r in patterns.values())
        print(f"redos ({label}): index {walls[label]:.1f} s, {data['files']} files (3 expected); "
              f"skipped: {json.dumps(data['skipped'])}")
        if label == "git checkout":
            probe = ("import sys,pathspec;s=pathspec.PathSpec.from_lines('gitwildmatch',[sys.argv[1]]);"
                     "s.match_file(sys.argv[2])")
            print(f"  control: plain `git ls-files --others --exclude-standard` "
                  f"{stalls(['git', 'ls-files', '--others', '--exclude-standard'], root, 3)}; "
                  f"pathspec on the long name {stalls([sys.executable, '-c', probe, PATTERN, LONG_NAME], root, 3)}")
    worst = max(walls.values())
    measured = ", ".join(f"{w:.1f} s ({label}{'' if reported[label] else ', pattern NOT reported or files wrong'})"
                         for label, w in walls.items())
    return [Row("redos", measured, "< 10 s, pattern reported", worst < 10 and all(reported.values()))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(TRIALS), help=f"trials, comma-separated: {', '.join(TRIALS)}")
    ap.add_argument("--trials", type=int, default=20, help="writer trials, each fail-fast and with --wait")
    ap.add_argument("--reindexes", type=int, default=10)
    ap.add_argument("--readers", type=int, default=2, help="reader processes during the re-indexes")
    ap.add_argument("--calls", type=int, default=1000, help="answered calls the reads trial needs")
    ap.add_argument("--scale", type=float, default=1.0, help="nesting sizes of the hostile trial (1: the issue's)")
    args = ap.parse_args()
    only = [t for t in args.only.split(",") if t]
    unknown = set(only) - set(TRIALS)
    if unknown:
        ap.error(f"unknown trial(s) {', '.join(sorted(unknown))}: choose from {', '.join(TRIALS)}")
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="vr-robustness-") as tmp_name:
        tmp = Path(tmp_name)
        for name in TRIALS:
            if name not in only:
                continue
            (tmp / name).mkdir()
            if name == "writers":
                rows += writers(tmp / name, args.trials)
            elif name == "reads":
                rows += reads(tmp / name, args.reindexes, args.readers, args.calls)
            elif name == "gitconfig":
                rows += gitconfig(tmp / name)
            elif name == "redos":
                rows += redos(tmp / name)
            else:
                rows += [Row(r.case, f"{r.seconds:.1f} s, {r.peak_mb:.0f} MiB", r.bound, r.ok)
                         for r in hostile(tmp / name, args.scale)]
    width = max(len(r.measured) for r in rows)
    tw = max(16, *(len(r.trial) for r in rows))
    gw = max(26, *(len(r.target) for r in rows))
    print(f"\n{'trial':<{tw}} {'measured':<{width}}  {'target':<{gw}} met")
    for r in rows:
        print(f"{r.trial:<{tw}} {r.measured:<{width}}  {r.target:<{gw}} {'yes' if r.met else 'NO'}")
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    sys.exit(0 if all(r.met for r in rows) else 1)


if __name__ == "__main__":
    main()
