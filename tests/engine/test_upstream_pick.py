"""kube-scheduler v1.37.1 takes the node its score heap pops (framework.NewSortedScoredNodes
then Pop, no Randomizer without extenders): among equal totals, the heap's order, not
always the first. The expected picks below were printed by upstream's own heap (Go)."""

from __future__ import annotations

import pytest

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
