"""Helpers shared by tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vitalrag.retrieve.dense import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures" / "repos"


def make_python_tree(root: Path, files: int) -> Path:
    """A package of ``files`` modules, each calling a function of the previous one."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(files):
        prev = f"from pkg.m{i - 1} import f{i - 1}\n\n" if i else ""
        call = f"f{i - 1}()" if i else "1"
        (pkg / f"m{i}.py").write_text(
            f'{prev}def f{i}():\n    """Function {i}."""\n    return {call}\n\n\n'
            f"class C{i}:\n    def g{i}(self):\n        return f{i}()\n"
        )
    return root


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting how many texts it was asked to encode."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.encoded = 0

    def encode(self, texts, progress=None) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts, progress)
