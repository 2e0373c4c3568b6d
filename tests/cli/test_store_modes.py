"""Every file and folder of a store has the mode the umask gives (issue 20
failure 11: they were 0600/0700 whatever the umask, so a store shared with a
group, or served by another user, could not be read)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "py_resolution"


@pytest.fixture(params=[0o002, 0o022], ids=["umask002", "umask022"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _modes(folder: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(folder.stat().st_mode)}
    for p in folder.rglob("*"):
        out[str(p.relative_to(folder))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def test_store_files_follow_the_umask(tmp_path, umask):
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    store = tmp_path / "idx"
    runner = CliRunner()
    for _ in range(2):  # the first index, then a re-index that rewrites what changed
        r = runner.invoke(main, ["index", str(repo), "--store", str(store), "--model", "hashing",
                                 "--workers", "2"])
        assert r.exit_code == 0, r.output
        (repo / "app.py").write_text((repo / "app.py").read_text() + "\n\ndef more():\n    return 2\n")
    modes = _modes(store)
    assert any(name.startswith("facts") for name in modes) and len(modes) > 5
    wrong = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o777 if (store / name).is_dir() else 0o666) & ~umask}
    assert not wrong, f"umask {umask:03o}"
