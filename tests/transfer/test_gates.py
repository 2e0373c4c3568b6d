"""The gate and its ablations (Table 6(d)) on fixed witnesses."""

from __future__ import annotations

import pytest

from vitalrag.errors import InputError, ObjectNotFound
from vitalrag.transfer import GATES, RepositoryIndex, Witness, load_scope, rule


def w(family: str, direction: int, differs: bool | None = None) -> Witness:
    return Witness(family, direction, bool(direction) if differs is None else differs, "")


def flagged(default: int, alternative: int, dt: int = 10, at: int = 10) -> tuple[Witness, ...]:
    side = lambda n: {"valid": True, "error_lines": [1] * n}  # noqa: E731
    return (
        Witness("syntax", 0, False, "", {"default": side(default), "alternative": side(alternative)}),
        Witness("interface", 0, False, "", {"default": {"unfit": 0}, "alternative": {"unfit": 0}}),
        Witness("names", 0, False, "", {"default": [], "alternative": []}),
        Witness("compactness", 0, dt != at, "", {"default": {"tokens": dt}, "alternative": {"tokens": at}}),
    )


@pytest.mark.parametrize("found, expected", [
    ((w("syntax", 1), w("names", 0)), {"full": True, "no-abstention": True, "no-veto": True, "no-direction": True}),
    ((w("syntax", 1), w("names", -1)), {"full": False, "no-abstention": True, "no-veto": True, "no-direction": True}),
    ((w("syntax", 0), w("names", 0)), {"full": False, "no-abstention": True, "no-veto": False, "no-direction": False}),
    ((w("syntax", 0), w("names", -1)), {"full": False, "no-abstention": False, "no-veto": False, "no-direction": True}),
    ((w("syntax", 0), w("compactness", 0, differs=True)),
     {"full": False, "no-abstention": True, "no-veto": False, "no-direction": True}),
    ((w("syntax", 1), w("names", -1), w("interface", -1)),
     {"full": False, "no-abstention": False, "no-veto": True, "no-direction": True}),
])
def test_directional_gates(found, expected):
    for gate, transfer in expected.items():
        assert rule(gate, found)[0] is transfer, gate


def test_no_types_pools_flags_into_one_score():
    assert rule("no-types", flagged(2, 1))[0] is True
    assert rule("no-types", flagged(1, 2))[0] is False
    assert rule("no-types", flagged(1, 1, dt=10, at=9))[0] is True  # tie broken by size, unguarded
    assert rule("no-types", flagged(1, 1))[0] is False


def test_unknown_gate():
    with pytest.raises(InputError):
        rule("sometimes", ())


def test_every_gate_runs_end_to_end(choose):
    target = "shop:shop/pricing.py:Cart.total"
    good = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate)\n"
    bad = "def total(self, rate=TAX_RATE)\n    return with_tax(self.subtotal(), rate)\n"
    for gate in GATES:
        d = choose(target, bad, good, gate=gate)
        assert d.gate == gate and d.chosen == "alternative"


def test_unknown_target(shop):
    index = RepositoryIndex(shop, "shop")
    with pytest.raises(ObjectNotFound):
        load_scope(index, "shop:shop/nowhere.py:f")
    with pytest.raises(InputError):
        load_scope(index, "shop:shop/pricing.py")  # a file, not a definition
    with pytest.raises(InputError):
        RepositoryIndex(shop, "no-such-repo")
