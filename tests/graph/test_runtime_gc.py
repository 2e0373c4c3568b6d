"""``vitalrag.runtime.gc_paused``: the collector is paused inside and back after,
and what was made inside goes straight to the oldest generation."""

from __future__ import annotations

import gc

import pytest

from vitalrag.runtime import gc_paused


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _generation_of(obj: object) -> int | None:
    for generation in (0, 1, 2):
        if any(o is obj for o in gc.get_objects(generation)):
            return generation
    return None


def test_objects_made_while_paused_land_in_the_oldest_generation():
    with gc_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]  # lists: always tracked
    assert gc.isenabled()
    assert _generation_of(made) == 2 and _generation_of(made[500]) == 2
    assert gc.get_freeze_count() == 0  # nothing is left frozen


def test_objects_frozen_by_the_caller_stay_frozen():
    kept = [{"frozen": True}]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            made = [[1]]
        assert gc.get_freeze_count() == frozen  # not thawed
        assert _generation_of(made) in (0, 1)  # and this run's objects were left where they were
    finally:
        gc.unfreeze()
    assert kept


def test_a_paused_caller_stays_paused():
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
