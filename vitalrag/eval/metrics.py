"""Evidence metrics (paper 3.1) and their uncertainty.

Per task and policy:

- Recall@5: the gold object is among the objects of the first five slots;
- Recall@B (Recall@4K at B=4096): every line of the gold definition is shown,
  whole, in the rendered context: the line spans the record gives for the
  slots of the gold object, in the gold's file, cover the gold's lines, and
  the rendered text of those slots really ends with those source lines;
- delta = Recall@5 - Recall@B;
- Auth@5: distinct objects among the first five slots;
- tokens: the context's exact token count (the record's).

Over tasks: means with seeded percentile-bootstrap 95% intervals; against a
base policy, a paired bootstrap of the per-task difference and, for the
recall metrics, an exact McNemar test on the discordant pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vitalrag.allocate.base import Allocation
from vitalrag.allocate.provenance import normalise_path
from vitalrag.model import AllocationRecord

K = 5
BOOTSTRAP_SAMPLES = 1000


def recall_at_k(record: AllocationRecord, gold_id: str, k: int = K) -> bool:
    """Is the gold object among the objects of the first ``k`` slots?"""
    return gold_id in record.objects[:k]


def auth_at_k(record: AllocationRecord, k: int = K) -> int:
    """How many distinct objects the first ``k`` slots hold."""
    return len(set(record.objects[:k]))


def _covered(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Do the inclusive ``spans`` together cover every line of start..end?"""
    need = start
    for a, b in sorted(spans):
        if a > need:
            return False
        need = max(need, b + 1)
        if need > end:
            return True
    return need > end


@dataclass(frozen=True, slots=True)
class Survival:
    """Whether the gold survived; ``mismatch``: some slot of the gold object
    claims source spans its text does not show (such spans never count)."""

    survived: bool
    mismatch: bool


def gold_survives(allocation: Allocation, gold_id: str, gold_path: str, start: int, end: int,
                  file_lines: Sequence[str]) -> Survival:
    """Recall@B for one allocation: the gold's lines ``start..end`` of
    ``gold_path`` (``file_lines`` is that file, 0-based) shown whole in the
    slots of the gold object. A span counts only when its slot's rendered text
    ends with exactly those source lines."""
    path = normalise_path(gold_path)
    parts = allocation.parts
    numbered = bool(allocation.record.params.get("line_numbers"))
    verified: list[tuple[int, int]] = []
    mismatch = False
    for s in allocation.record.slots:
        if s.object_key != gold_id or normalise_path(s.path) != path:
            continue
        part = parts[s.slot - 1] if 0 < s.slot <= len(parts) else ""
        lines = numbered_lines(part) if numbered else {}
        for a, b in s.spans:
            if numbered:
                ok = b >= a and all(lines.get(i) == file_lines[i - 1] for i in range(a, b + 1)
                                    if i <= len(file_lines))
            else:
                ok = b >= a and part.endswith("".join(line + "\n" for line in file_lines[a - 1:b]))
            if ok:
                verified.append((a, b))
            else:
                mismatch = True
    return Survival(_covered(verified, start, end), mismatch)


_NUMBERED = re.compile(r"^ *(\d+)(?: (.*))?$")


def numbered_lines(part: str) -> dict[int, str]:
    """The source lines a numbered rendering (``vital-fill``'s: ``N code``) shows,
    by line number; descriptors, gaps and a call site's lines are left out."""
    out: dict[int, str] = {}
    in_call = False
    for line in part.split("\n"):
        if line.startswith("--- "):
            in_call = line.startswith("--- called from ")
            continue
        m = _NUMBERED.match(line)
        if m and not in_call:
            out.setdefault(int(m.group(1)), m.group(2) or "")
    return out


# -- aggregation ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean and its 95% interval."""

    mean: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "lo": self.lo, "hi": self.hi}


def bootstrap_indices(n: int, seed: int, samples: int = BOOTSTRAP_SAMPLES) -> np.ndarray:
    """``samples`` resamples of ``range(n)`` with replacement, from ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(samples, n)) if n else np.zeros((samples, 0), dtype=np.int64)


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, seed: int = 0,
                 samples: int = BOOTSTRAP_SAMPLES, indices: np.ndarray | None = None) -> Estimate:
    """The mean of ``values`` with a percentile-bootstrap 95% interval. The same
    ``seed`` (or ``indices``) gives the same interval."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"))
    idx = indices if indices is not None else bootstrap_indices(x.size, seed, samples)
    means = x[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return Estimate(float(x.mean()), float(lo), float(hi))


def paired_bootstrap(x: Sequence[float] | np.ndarray, base: Sequence[float] | np.ndarray, *,
                     seed: int = 0, samples: int = BOOTSTRAP_SAMPLES) -> Estimate:
    """Mean of the per-task difference ``x - base`` with a paired bootstrap 95% interval."""
    a, b = np.asarray(x, dtype=float), np.asarray(base, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    return bootstrap_ci(a - b, seed=seed, samples=samples)


@dataclass(frozen=True, slots=True)
class McNemar:
    """Discordant pairs: ``wins`` (x right, base wrong), ``losses``, and the
    exact two-sided binomial p-value."""

    wins: int
    losses: int
    p: float

    def to_dict(self) -> dict[str, float]:
        return {"wins": self.wins, "losses": self.losses, "p": self.p}


def mcnemar(x: Sequence[bool] | np.ndarray, base: Sequence[bool] | np.ndarray) -> McNemar:
    """Exact McNemar test of paired binary outcomes."""
    a, b = np.asarray(x, dtype=bool), np.asarray(base, dtype=bool)
    wins = int(np.sum(a & ~b))
    losses = int(np.sum(~a & b))
    n = wins + losses
    if n == 0:
        return McNemar(0, 0, 1.0)
    from math import comb

    tail = sum(comb(n, i) for i in range(min(wins, losses) + 1))
    return McNemar(wins, losses, min(1.0, 2 * tail / 2 ** n))


def reduction(tokens: float, base_tokens: float) -> float:
    """Relative token reduction against the base, in percent (of unrounded means)."""
    return 100.0 * (1.0 - tokens / base_tokens) if base_tokens else float("nan")
