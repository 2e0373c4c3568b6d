"""The direction the paper's method must show on the dev corpora, in the default run.

Six real repositories (fetched once into the corpus cache, indexed once into
the index cache; about 15 s after that), the fixed pool, B = 4096. Where the
gold fits b_obj whole, VITAL-RAG renders it whole nearly whenever it holds a
slot, and keeps more golds than Entity-First 4+1, which pastes each slot's
representative view (a body, slice, call site, test...) as written.
"""

from __future__ import annotations

import pytest

from vitalrag.eval.corpora import expand, fetch
from vitalrag.eval.index_cache import corpus_store
from vitalrag.eval.run import RunPlan, run_tasks
from vitalrag.eval.summary import FITS_GROUP
from vitalrag.eval.tables import SummaryView
from vitalrag.eval.tasks import build_tasks

pytestmark = [pytest.mark.network]


@pytest.fixture(scope="module")
def dev_summary(tmp_path_factory):
    tasks = []
    for spec in expand(["dev"]):
        c = fetch(spec)
        found, _ = build_tasks(corpus_store(c.path, c.name), c.name, root=str(c.path), corpus=spec)
        tasks += found
    return SummaryView(run_tasks(tasks, RunPlan(policies=("vital", "entity-first-4+1")),
                                 tmp_path_factory.mktemp("dev-run")))


def test_vital_keeps_more_fitting_golds_than_entity_first(dev_summary):
    for group in ("all", FITS_GROUP):
        vital, base = dev_summary.result("vital", group), dev_summary.result("entity-first-4+1", group)
        assert vital["n"] >= 30
        assert vital["rb"]["mean"] >= base["rb"]["mean"], group


def test_where_the_gold_fits_vital_loses_almost_nothing_after_entry(dev_summary):
    vital = dev_summary.result("vital", FITS_GROUP)
    assert vital["delta"]["mean"] <= 0.02  # R@5 - R@4K, at most 2 points
    assert vital["rb_ceiling"]["mean"] >= 0.95


@pytest.mark.xfail(strict=True, reason=(
    "not so on the dev corpora (159 tasks, fixed pool): where the gold fits, vital renders whole "
    "definitions (2,607 tokens) and entity-first-4+1 pastes the views BM25 ranks first (1,017 tokens): "
    "of the gold's slots, 42 of 128 hold its body, the rest a call site (33), a slice (25), a test (21) "
    "or a docstring or signature (7); the paper's 35.6% reduction is not reproduced"))
def test_where_the_gold_fits_vital_uses_fewer_tokens(dev_summary):
    vital, base = dev_summary.result("vital", FITS_GROUP), dev_summary.result("entity-first-4+1", FITS_GROUP)
    assert vital["tokens"]["mean"] < base["tokens"]["mean"]
