"""kube-scheduler v1.37.1 takes the node its score heap pops (framework.NewSortedScoredNodes
then Pop, no Randomizer without extenders): among equal totals, the heap's order, not
always the first. The expected picks below were printed by upstream's own heap (Go)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.engine.cycle import upstream_pick

# (totals in feasible order, the index upstream's heap pops), from the Go module itself.
UPSTREAM = [
    ([1, 1, 2, 2, 2, 0], 3),
    ([1, 3, 2, 3], 1),
    ([10, 10, 10, 10], 0),
    ([5, 10, 10], 1),
    ([0, 0, 0, 100, 100, 50, 50, 50, 0], 3),
    ([50, 100, 100, 50, 100, 50, 0], 1),
    ([100, 0, 0, 0, 100, 100, 0, 50], 0),
    ([50, 50, 0, 100], 3),
    ([50, 100, 100], 1),
    ([0, 50, 50, 0, 50, 100, 50], 5),
    ([100, 50, 100, 0, 0, 100, 0, 0], 0),
    ([100, 0, 100, 100, 100], 0),
    ([0, 100, 100, 0, 100, 100, 0, 100, 0, 50], 1),
    ([50, 100, 0, 50, 100, 50], 1),
    ([50, 50, 0, 100, 0, 0, 0], 3),
    ([100, 100, 50, 50, 0, 0, 50, 50], 0),
    ([50, 0, 100, 50, 100, 100], 4),
    ([0, 0, 0, 50, 0, 100, 100, 0, 50], 5),
    ([100, 50, 50, 50, 50], 0),
    ([100, 100, 50, 100, 50, 0, 0, 0], 0),
    ([50, 0, 50], 0),
    ([100, 0, 50, 0, 0, 100, 50, 0], 0),
    ([50, 100, 50, 50, 100, 50, 50, 0, 50, 0], 1),
    ([100, 100, 0, 0, 50, 100], 0),
    ([100, 100, 50, 50, 50, 50, 100, 0], 0),
    ([0, 0, 100, 50, 100, 0, 100, 100, 50], 7),
    ([0, 50, 100], 2),
    ([100, 0, 50, 100, 50], 0),
]


@pytest.mark.parametrize(("totals", "picked"), UPSTREAM)
def test_the_pick_is_upstreams_heap_pop(totals: list[int], picked: int) -> None:
    assert upstream_pick(totals) == picked


def test_the_pick_always_has_the_best_total() -> None:
    for totals, _ in UPSTREAM:
        assert totals[upstream_pick(totals)] == max(totals)


def test_equal_totals_do_not_always_go_to_the_first() -> None:
    assert any(upstream_pick(t) != t.index(max(t)) for t, _ in UPSTREAM)


def heap_pop_reference(totals: list[int]) -> int:
    """container/heap's ``Init`` then ``Pop`` over ``totals`` (``Less``: the higher total),
    transcribed step by step from the Go standard library: the index of the popped one."""
    order = list(range(len(totals)))

    def less(a: int, b: int) -> bool:
        return totals[order[a]] > totals[order[b]]

    def down(i: int, n: int) -> None:
        while True:
            left = 2 * i + 1
            if left >= n:
                return
            child = left
            if left + 1 < n and less(left + 1, left):
                child = left + 1
            if not less(child, i):
                return
            order[i], order[child] = order[child], order[i]
            i = child

    for start in range(len(order) // 2 - 1, -1, -1):
        down(start, len(order))
    return order[0]


@given(st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=300))
@settings(max_examples=500, deadline=None)
def test_the_pick_is_the_heaps_for_any_totals(totals: list[int]) -> None:
    assert upstream_pick(totals) == heap_pop_reference(totals)


def test_the_pick_over_thousands_of_nodes_is_the_heaps() -> None:
    rng = np.random.default_rng(7)
    for size in (4999, 5000, 8191, 8192, 8193):
        totals = rng.integers(0, 3, size).tolist()
        assert upstream_pick(np.array(totals)) == heap_pop_reference(totals)
