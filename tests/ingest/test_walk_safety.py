"""An indexed repository cannot run code through git, nor hang the walk."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.walk import walk_repository


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _repo(root: Path) -> Path:
    root.mkdir()
    (root / "a.py").write_text("def a():\n    pass\n")
    _git(root, "init", "-q")
    _git(root, "add", "a.py")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    (root / "new.py").write_text("def new():\n    pass\n")  # untracked, still indexed
    return root


def test_repository_config_cannot_run_commands(tmp_path):
    root = _repo(tmp_path / "r")
    marker = tmp_path / "MARKER"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "post-checkout", "pre-commit"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    _git(root, "config", "core.fsmonitor", f"touch {marker}; false")
    _git(root, "config", "core.hooksPath", str(hooks))
    _git(root, "config", "core.pager", f"touch {marker}; cat")
    walked = walk_repository(root)
    assert [f.path for f in walked.files] == ["a.py", "new.py"]
    assert not marker.exists()


def test_pathological_ignore_pattern_is_reported_and_skipped(tmp_path):
    root = _repo(tmp_path / "r")
    pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
    (root / ".gitignore").write_text(f"{pattern}\n*.gen.py\n")
    (root / ("a" * 200 + ".py")).write_text("def long():\n    pass\n")
    (root / "x.gen.py").write_text("def gen():\n    pass\n")
    started = time.perf_counter()
    report = index_repository(root, MemoryStore(tmp_path / "idx"), name="r", workers=1)
    assert time.perf_counter() - started < 10
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons[".gitignore:1"].startswith(f"ignore pattern {pattern!r} skipped")
    assert report.files == 3  # a.py, new.py and the long name; the other pattern still applies


def test_walk_stops_at_its_step_budget_and_says_so(tmp_path):
    root = tmp_path / "big"
    for d in range(5):
        (root / f"d{d}").mkdir(parents=True)
        for f in range(5):
            (root / f"d{d}" / f"m{f}.py").write_text("x = 1\n")
    walked = walk_repository(root, max_entries=12)
    assert len(walked.files) < 25
    assert any(s.reason.startswith("walk stopped after 12 entries") for s in walked.skipped)


def test_walk_stops_at_its_time_budget_and_says_so(tmp_path):
    root = tmp_path / "slow"
    (root / "d").mkdir(parents=True)
    (root / "d" / "m.py").write_text("x = 1\n")
    walked = walk_repository(root, time_budget=0.0)
    assert any(s.reason.startswith("walk stopped after") and "time budget" in s.reason
               for s in walked.skipped)
