"""CI's guard against silent skips (tests/conftest.py, set by .ci/run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _run(tmp_path: Path, env_flag: bool) -> int:
    (tmp_path / "conftest.py").write_text((Path(__file__).parent / "conftest.py").read_text())
    (tmp_path / "test_x.py").write_text("import pytest\n\ndef test_ok():\n    pass\n\n"
                                        "def test_skip():\n    pytest.skip('no server')\n")
    import os

    env = {k: v for k, v in os.environ.items() if k != "VITALRAG_FORBID_SKIPS"}
    if env_flag:
        env["VITALRAG_FORBID_SKIPS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True).returncode


def test_a_skip_fails_the_run_only_when_ci_forbids_skips(tmp_path):
    assert _run(tmp_path, env_flag=False) == 0
    assert _run(tmp_path, env_flag=True) == 1
