"""The critical paths computed from arrays equal those the one-domain-at-a-time updates
leave, ties included (slot 0 the first least domain, slot 1 the first least of the rest)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from topospread.plugins.podtopologyspread.filtering import CriticalPaths, _critical_paths_of


def _sequential(values: list[str], numbers: list[int]) -> CriticalPaths:
    paths = CriticalPaths()
    for value, number in zip(values, numbers, strict=True):
        paths.update(value, number)
    return paths


@pytest.mark.parametrize("seed", range(200))
def test_bulk_critical_paths_equal_the_sequential_updates(seed) -> None:
    rng = random.Random(seed)
    size = rng.randrange(0, 8)
    values = [f"d{i}" for i in range(size)]
    numbers = [rng.randrange(0, 4) for _ in range(size)]  # small range: many ties
    bulk = _critical_paths_of(values, np.array(numbers, np.int64))
    assert bulk == _sequential(values, numbers)
