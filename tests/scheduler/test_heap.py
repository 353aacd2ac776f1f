"""The scheduler keeps the cyclic garbage collector off its long-lived cache."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from topospread.scheduler.heap import YOUNG_THRESHOLD, HeapKeeper


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_starting_freezes_what_was_imported_and_collects_the_young_less_often(collector):
    HeapKeeper().started()

    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD


def test_the_listed_cache_is_frozen_once_synced(collector):
    keeper = HeapKeeper()
    keeper.started()
    listed = [[f"pod-{index}"] for index in range(1000)]
    frozen_before = gc.get_freeze_count()

    keeper.synced()

    assert gc.get_freeze_count() >= frozen_before + len(listed)


def test_an_idle_queue_sweeps_only_when_a_sweep_is_due(collector):
    clock = Clock()
    keeper = HeapKeeper(sweep_interval=600.0, clock=clock)
    keeper.synced()
    clock.now += 599.0

    assert not keeper.idle()

    clock.now += 1.0
    assert keeper.idle()
    assert keeper.sweeps == 1
    assert not keeper.idle()


def test_a_sweep_collects_the_garbage_cycles_that_freezing_kept(collector):
    class Node:
        partner: object = None

    first, second = Node(), Node()
    first.partner, second.partner = second, first
    gone = weakref.ref(first)
    keeper = HeapKeeper(sweep_interval=0.0, clock=Clock())
    keeper.synced()
    del first, second

    gc.collect()
    assert gone() is not None  # frozen: out of the collector's sight

    assert keeper.idle()
    assert gone() is None
