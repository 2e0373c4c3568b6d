"""`index` says where its time goes: every phase, embedding included, the whole
run's wall time, and progress lines on a stderr that is not a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from vitalrag.kernel import pause

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def _index(store: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vitalrag", "index", str(FIXTURES / "py_resolution"),
                             "--store", str(store), "--model", "hashing", "--workers", "1", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def test_index_reports_an_embed_phase_and_the_whole_wall_time(tmp_path):
    marker = tmp_path / "paused"
    started = time.monotonic()
    proc = _index(tmp_path / "s", "--json", env=pause.env(pause.RETRIEVAL, marker))
    while not marker.exists() and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(1.0)  # a slow retrieval step: it must show in the total
    marker.unlink()
    out, err = proc.communicate(timeout=120)
    wall = time.monotonic() - started
    assert proc.returncode == 0, err
    data = json.loads(out)
    assert {"walk", "parse", "views", "embed", "snapshot", "switch"} <= set(data["phases"])
    assert data["seconds"] >= 1.0 and data["seconds"] <= wall
    assert data["seconds"] >= sum(data["phases"].values()) - 0.01
    assert data["graph_seconds"] < data["seconds"]


def test_the_human_summary_gives_the_total_and_the_phases(tmp_path):
    out, err = _index(tmp_path / "s").communicate(timeout=120)
    first = out.splitlines()[0]
    assert "(graph " in first and "embed " in first, out
    assert any(line.startswith("time by phase: ") and "embed" in line for line in out.splitlines())


def test_progress_off_a_terminal_is_plain_lines_on_stderr(tmp_path):
    proc = _index(tmp_path / "s", "--json", env={"VITALRAG_PROGRESS_EVERY": "0.001"})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = [line for line in err.splitlines() if line.startswith(("parse: ", "embed: "))]
    assert any(line.startswith("embed: ") for line in lines), err
    assert all("\x1b" not in line and "/" in line for line in lines)
    json.loads(out)  # stdout is still only the data
