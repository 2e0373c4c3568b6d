"""The shared kernel: atomic replacement, and that it stays below every layer."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import vitalrag.kernel
from vitalrag.kernel.files import replacing, replacing_dir


def test_replacing_swaps_the_whole_file_in_at_the_end(tmp_path):
    dest = tmp_path / "vectors.npz"
    with replacing(dest) as tmp:
        np.savez(tmp, a=np.arange(3))  # np.savez adds .npz to a name without it
        assert not dest.exists()
    assert np.load(dest)["a"].tolist() == [0, 1, 2]
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.npz"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    dest = tmp_path / "current.json"
    dest.write_text("old")
    with pytest.raises(RuntimeError), replacing(dest, durable=True) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed mid-write")
    assert dest.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["current.json"]


def test_a_killed_writer_leaves_a_temporary_named_by_its_prefix(tmp_path):
    with pytest.raises(RuntimeError), replacing(tmp_path / "graph-1.json", temp_prefix=".graph-") as tmp:
        assert tmp.name.startswith(".graph-") and tmp.name.endswith(".tmp")
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []


def test_replacing_dir_puts_a_whole_folder_in_place_of_a_full_one(tmp_path):
    dest = tmp_path / "corpus"
    (dest / "old").mkdir(parents=True)
    with replacing_dir(dest, temp_prefix=".unpack-") as tmp:
        (tmp / "new").write_text("x")
        assert (dest / "old").is_dir()  # readers see the old folder until the end
    assert [p.name for p in dest.iterdir()] == ["new"]
    with pytest.raises(RuntimeError), replacing_dir(dest) as tmp:
        (tmp / "half").write_text("x")
        raise RuntimeError("failed mid-fill")
    assert [p.name for p in dest.iterdir()] == ["new"]
    assert [p.name for p in tmp_path.iterdir()] == ["corpus"]


def test_the_kernel_imports_no_layer_above_it():
    root = Path(vitalrag.kernel.__file__).parent
    allowed = {"vitalrag.errors"}
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                if name.startswith("vitalrag"):
                    assert name.startswith("vitalrag.kernel") or name in allowed, f"{path.name} imports {name}"
