"""``scripts/neo4j-local``: the daemonised server keeps none of its caller's descriptors."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "neo4j-local"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.neo4j
def test_start_does_not_hand_the_callers_descriptors_to_the_server(tmp_path):
    if not (shutil.which("java") and shutil.which("javac") and shutil.which("mvn")):
        pytest.skip("needs Java 17+ (java, javac) and Maven to run scripts/neo4j-local")
    home = tmp_path / "neo4j"
    env = {**os.environ, "NEO4J_BOLT_PORT": str(_free_port()), "NEO4J_HTTP_PORT": str(_free_port()),
           "NEO4J_LOCAL_DIR": str(home), "NEO4J_LOCAL_HEAP": "512m", "NEO4J_LOCAL_PAGECACHE": "32m"}
    env.pop("NEO4J_PASSWORD", None)
    lock = tmp_path / "caller.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        started = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True,
                                 timeout=300, pass_fds=(fd,))
        assert started.returncode == 0, started.stderr[-3000:]
        pid = int((home / "neo4j.pid").read_text())
        held = [os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir() if f.is_symlink()]
        assert str(lock) not in held
        os.close(fd)
        fd = -1
        other = os.open(lock, os.O_RDWR)
        try:  # with the caller's copy closed, nobody holds the lock any more
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    finally:
        if fd >= 0:
            os.close(fd)
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)
