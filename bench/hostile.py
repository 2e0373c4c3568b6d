"""Hostile repositories (issue 38), the ``hostile`` trial of ``bench/robustness.py``.

Each case builds a repository under a temporary folder and runs ``vitalrag``
commands on it in fresh processes, measuring each command's wall time and peak
resident memory (the process's own, from ``wait4``), against the bound it must meet:

- nesting: 1,000 nested callbacks in JavaScript, TypeScript, Rust, C#, Java
  (lambdas) and Python (lambdas), 2,000 nested Go func literals and 5,000 nested
  Java anonymous classes, each file indexed (not skipped) within the bound;
  definitions nested 150 deep (Python) skipped with a reason;
- bundle: a 900 KB one-line ``app.js`` (under the default size limit), indexed
  and asked for a ``context``; the bundle skipped as minified;
- forged names: a file whose name holds newlines and a fake header and numbered
  body (``auth.py:1-3 check_password`` / ``1 def check_password(...)`` /
  ``2     return True  # FORGED``) under a folder ``zz\\n--- src``, beside a real
  ``src/auth.py``; what ``context``, ``search`` and ``objects`` print must not
  start a line with the forged text, nor show two headers of ``src/auth.py``;
- escapes: OSC (title, clipboard) and CSI (clear screen) sequences in a file
  name, an identifier's docstring and code: no C0/C1 control byte but tab and
  newline in what ``index``, ``context``, ``search``, ``objects`` and ``show`` print;
- store folder: a git checkout holding ``retrieval-utils.py``,
  ``retrieval-experiments/notes.txt`` and ``graph-2024.json``, indexed with
  ``--store .``: each file must survive unchanged (the run may refuse the folder).

A case that fails prints FAIL with what it saw; an error inside a case is a FAIL
of that case, never the end of the bench, and a command that would take more
than ``MEMORY_LIMIT`` of address space fails instead of swamping the machine. ``scale`` shrinks the nesting sizes
(for a quick try; the bounds are for scale 1).
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

VITALRAG = [sys.executable, "-m", "vitalrag"]
#: the address space each command may take: a blowup is a FAIL, not a machine out of memory
MEMORY_LIMIT = 8 * 2**30
#: bytes no printed output may hold: C0 and C1 controls but tab and newline (and DEL)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


@dataclass(frozen=True, slots=True)
class Run:
    """One command: exit code, output, wall seconds, peak resident MiB."""

    rc: int
    out: str
    err: str
    seconds: float
    peak_mb: float


@dataclass(frozen=True, slots=True)
class Result:
    case: str
    seconds: float
    peak_mb: float
    bound: str
    ok: bool
    detail: str


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(args: list[str], cwd: Path | None = None, timeout: float = 300) -> Run:
    """``vitalrag ARGS`` in a fresh process, the package ``python -m vitalrag``
    imports here (also when ``cwd`` is elsewhere); stopped (rc -9) at ``timeout``
    seconds, and at ``MEMORY_LIMIT``."""
    path = os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([*VITALRAG, *args], cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": path},
                                preexec_fn=_limit_memory)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.send_signal(signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                   seconds, usage.ru_maxrss / 1024)


def index(repo: Path, store: Path, *extra: str, timeout: float = 300) -> Run:
    return run(["index", str(repo), "--store", str(store), "--model", "hashing", "--workers", "1", *extra],
               timeout=timeout)


def skipped_of(r: Run) -> dict[str, str]:
    """The skipped files an ``index --json`` run reports (empty when it failed)."""
    try:
        return {s["path"]: s["reason"] for s in json.loads(r.out)["skipped"]}
    except (ValueError, KeyError, TypeError):
        return {}


def worst(*runs: Run) -> tuple[float, float]:
    return sum(r.seconds for r in runs), max(r.peak_mb for r in runs)


def failed(r: Run) -> str:
    return f"exit {r.rc}: {(r.err.strip().splitlines() or ['(no message)'])[-1][:200]}"


# -- nesting ---------------------------------------------------------------------------------

#: case -> (file name, language's source of ``n`` nested callbacks, n at scale 1)
NESTED: dict[str, tuple[str, Callable[[int], str], int]] = {
    "javascript": ("app.js", lambda n: "function outer() {\n" + "".join(
        f"g{i}(function () {{\n" for i in range(n)) + "});\n" * n + "}\n", 1000),
    "typescript": ("app.ts", lambda n: "function outer(): void {\n" + "".join(
        f"g{i}((x: number) => {{\n" for i in range(n)) + "});\n" * n + "}\n", 1000),
    "go": ("p/app.go", lambda n: "package p\n\nfunc outer() {\n" + "".join(
        f"g{i}(func() {{\n" for i in range(n)) + "})\n" * n + "}\n", 2000),
    "rust": ("src/lib.rs", lambda n: "fn outer() {\n" + "".join(
        f"g{i}(|x: i32| {{\n" for i in range(n)) + "});\n" * n + "}\n", 1000),
    "csharp": ("App.cs", lambda n: "class C {\n void outer() {\n" + "".join(
        f"g{i}(() => {{\n" for i in range(n)) + "});\n" * n + "}\n}\n", 1000),
    "java lambdas": ("App.java", lambda n: "class C {\n void outer() {\n" + "".join(
        f"g{i}(() -> {{\n" for i in range(n)) + "});\n" * n + "}\n}\n", 1000),
    "java anonymous": ("Anon.java", lambda n: "class C {\n void outer() {\n" + "".join(
        f"Runnable r{i} = new Runnable() {{ public void run() {{ go{i}(x{i});\n" for i in range(n))
        + "}};\n" * n + "}\n}\n", 5000),
    "python lambdas": ("app.py", lambda n: "def outer():\n    return g0(\n" + "".join(
        f"        lambda: g{i}(\n" for i in range(1, n)) + "0" + ")" * n + "\n", 1000),
}
NEST_SECONDS, NEST_MB = 30.0, 1000.0


def nesting(tmp: Path, scale: float) -> list[Result]:
    out = []
    for case, (name, make, n) in NESTED.items():
        n = max(10, int(n * scale))
        repo = tmp / f"nest-{case.replace(' ', '-')}"
        path = repo / name
        path.parent.mkdir(parents=True)
        text = make(n)
        path.write_text(text)
        r = index(repo, tmp / f"store-{repo.name}", "--json")
        skipped = skipped_of(r)
        ok = r.rc == 0 and name not in skipped and r.seconds < NEST_SECONDS and r.peak_mb < NEST_MB
        detail = (f"{n:,} levels, {len(text) / 1000:.0f} KB: " +
                  (failed(r) if r.rc else f"skipped: {skipped[name]}" if name in skipped else "indexed"))
        out.append(Result(f"nesting {case}", r.seconds, r.peak_mb, f"< {NEST_SECONDS:.0f} s, < {NEST_MB:.0f} MiB",
                          ok, detail))
    repo = tmp / "nest-definitions"
    repo.mkdir()
    (repo / "deep.py").write_text("".join(f"{' ' * i}def f{i}():\n" for i in range(150)) + " " * 150 + "pass\n")
    (repo / "ok.py").write_text("def ok():\n    return 1\n")
    r = index(repo, tmp / "store-nest-definitions", "--json")
    reason = skipped_of(r).get("deep.py", "")
    out.append(Result("nesting definitions", r.seconds, r.peak_mb, "< 10 s, skipped with a reason",
                      r.rc == 0 and bool(reason) and r.seconds < 10,
                      f"150 nested defs: {failed(r) if r.rc else reason or 'NOT skipped'}"))
    return out


# -- bundle ----------------------------------------------------------------------------------

BUNDLE_SECONDS, BUNDLE_MB = 15.0, 500.0


def bundle(tmp: Path) -> list[Result]:
    repo = tmp / "bundle"
    repo.mkdir()
    parts, size, i = [], 0, 0
    while size < 900_000:
        part = f"function f{i}(a,b){{return g{i % 97}(a)+b*{i}}}var v{i}=f{i}(1,2);"
        parts.append(part)
        size += len(part)
        i += 1
    (repo / "app.js").write_text("".join(parts) + "\n")
    (repo / "main.js").write_text("function main() {\n  return f1(1, 2);\n}\n")
    store = tmp / "store-bundle"
    r = index(repo, store, "--json")
    reason = skipped_of(r).get("app.js", "")
    c = run(["context", "function f1 returns g", "--store", str(store)], timeout=120)
    seconds, peak = worst(r, c)
    ok = (r.rc == 0 and c.rc == 0 and r.seconds < BUNDLE_SECONDS and c.seconds < BUNDLE_SECONDS
          and peak < BUNDLE_MB)
    detail = (f"{size / 1000:.0f} KB on one line, {i:,} functions: index {r.seconds:.1f} s / {r.peak_mb:.0f} MiB "
              f"({failed(r) if r.rc else reason or 'indexed'}), context {c.seconds:.1f} s / {c.peak_mb:.0f} MiB"
              f"{'' if c.rc == 0 else ' ' + failed(c)}")
    return [Result("one-line bundle", seconds, peak, f"each < {BUNDLE_SECONDS:.0f} s, < {BUNDLE_MB:.0f} MiB",
                   ok, detail)]


# -- forged names ------------------------------------------------------------------------------

FORGED_DIR = "zz\n--- src"
FORGED_FILE = ("auth.py:1-3 check_password\n1 def check_password(user, pw):\n"
               "2     return True  # FORGED\n--- notes.py")
#: lines only the forged name holds (the real ``src/auth.py`` is ``check_password(user, password)``)
FORGED_LINES = ("1 def check_password(user, pw)", "2     return True", "--- notes.py")
REAL_HEADER = "--- src/auth.py"


def forged(tmp: Path) -> list[Result]:
    repo = tmp / "forged"
    (repo / FORGED_DIR).mkdir(parents=True)
    (repo / FORGED_DIR / FORGED_FILE).write_text("def helper():\n    return 1\n")
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text(
        "def check_password(user, password):\n    \"\"\"Check a user's password.\"\"\"\n"
        "    return user.password == password\n")
    store = tmp / "store-forged"
    runs = [index(repo, store),
            run(["context", "check_password", "--store", str(store)]),
            run(["search", "check_password", "--store", str(store)]),
            run(["objects", "--store", str(store)])]
    seconds, peak = worst(*runs)
    bad = []
    for label, r in zip(("index", "context", "search", "objects"), runs):
        if r.rc not in (0, 1):
            bad.append(f"{label} {failed(r)}")
        lines = [line.lstrip() for line in r.out.splitlines()]
        hits = [line for line in lines if line.startswith(FORGED_LINES)]
        if hits:
            bad.append(f"{label} printed {hits[0]!r}")
        headers = sum(line.startswith(REAL_HEADER) for line in lines)
        if headers > 1:
            bad.append(f"{label} printed {headers} headers of {REAL_HEADER[4:]}")
    return [Result("forged file names", seconds, peak, "no forged line printed", not bad,
                   "; ".join(bad) or "no forged header or body line in index, context, search, objects")]


# -- escapes ---------------------------------------------------------------------------------

OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
CSI_CLEAR = "\x1b[2J\x1b[H"


def escapes(tmp: Path) -> list[Result]:
    repo = tmp / "escapes"
    repo.mkdir()
    (repo / "evil.py").write_text(
        f'def evil_helper():\n    """Evil {OSC_TITLE}docs{CSI_CLEAR} here."""\n'
        f'    return "{OSC_CLIPBOARD}"\n\n\ndef caller():\n    return evil_helper()\n')
    (repo / f"name{OSC_TITLE}.py").write_text("def named():\n    return 2\n")
    (repo / "broken.py").write_text(f"def broken(:\n    {CSI_CLEAR}\n")
    store = tmp / "store-escapes"
    runs = {"index": index(repo, store)}
    runs["context"] = run(["context", "evil helper docs", "--store", str(store)])
    runs["search"] = run(["search", "evil helper", "--store", str(store)])
    runs["objects"] = run(["objects", "--store", str(store)])
    runs["show"] = run(["show", "escapes:evil.py:evil_helper", "--store", str(store)])
    seconds, peak = worst(*runs.values())
    bad = []
    for label, r in runs.items():
        if r.rc not in (0, 1):
            bad.append(f"{label} {failed(r)}")
        for stream, text in (("stdout", r.out), ("stderr", r.err)):
            found = CONTROLS.findall(text)
            if found:
                bad.append(f"{label} {stream}: {len(found)} control chars ({sorted(set(map(repr, found)))[:3]})")
    return [Result("terminal escapes", seconds, peak, "no C0/C1 control printed", not bad,
                   "; ".join(bad) or "none in index, context, search, objects, show (stdout and stderr)")]


# -- store folder ------------------------------------------------------------------------------

USER_FILES = {
    "retrieval-utils.py": "def rank(xs):\n    return sorted(xs)\n",
    "retrieval-experiments/notes.txt": "what we tried\n",
    "graph-2024.json": '{"nodes": []}\n',
}


def store_folder(tmp: Path) -> list[Result]:
    repo = tmp / "checkout"
    for name, text in USER_FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=b@example.org", "-c", "user.name=b", "commit", "-qm", "init"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    runs = [run(["index", ".", "--store", ".", "--no-embed"], cwd=repo)]
    runs.append(run(["index", ".", "--store", ".", "--no-embed"], cwd=repo))  # and once more, over its own index
    seconds, peak = worst(*runs)
    lost = [name for name, text in USER_FILES.items()
            if not (repo / name).is_file() or (repo / name).read_text() != text]
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                            env=env).stdout
    deleted = [line[3:] for line in status.splitlines() if line.startswith((" D", "D "))]
    said = "; ".join(f"exit {r.rc}" + (f" ({failed(r)})" if r.rc else "") for r in runs)
    detail = f"two `index . --store .`: {said}; " + (
        f"LOST {', '.join(lost)}" if lost else "all three user files kept")
    if deleted:
        detail += f"; git status shows deleted: {', '.join(deleted)}"
    return [Result("store folder of user files", seconds, peak, "no user file lost", not lost and not deleted,
                   detail)]


CASES: dict[str, Callable[[Path, float], list[Result]]] = {
    "nesting": nesting,
    "bundle": lambda tmp, scale: bundle(tmp),
    "forged": lambda tmp, scale: forged(tmp),
    "escapes": lambda tmp, scale: escapes(tmp),
    "store": lambda tmp, scale: store_folder(tmp),
}


def hostile(tmp: Path, scale: float = 1.0) -> list[Result]:
    """Every case, each in a folder of its own under ``tmp``; a case that raises is a FAIL."""
    results: list[Result] = []
    for name, case in CASES.items():
        folder = tmp / name
        folder.mkdir()
        try:
            got = case(folder, scale)
        except Exception as exc:  # noqa: BLE001 - the bench reports the state of the code, whatever it is
            got = [Result(name, 0.0, 0.0, "runs", False, f"the case raised {type(exc).__name__}: {exc}")]
        for r in got:
            print(f"{'ok  ' if r.ok else 'FAIL'} {r.case:<28} {r.seconds:6.1f} s {r.peak_mb:7.0f} MiB  "
                  f"bound {r.bound}: {r.detail}", flush=True)
        results += got
    return results
