"""The critical paths computed from arrays equal those the one-domain-at-a-time updates
leave, ties included (slot 0 the first least domain, slot 1 the first least of the rest),
with domains visited in order of their first eligible node, several nodes to a domain."""

from __future__ import annotations

import random

import numpy as np
import pytest

from topospread.plugins.podtopologyspread.filtering import CriticalPaths, _critical_paths_of


def _sequential(values: list[str], node_codes: list[int], per_code: list[int]) -> CriticalPaths:
    paths = CriticalPaths()
    visited: set[int] = set()
    for code in node_codes:
        if code not in visited:
            visited.add(code)
            paths.update(values[code], per_code[code])
    return paths


@pytest.mark.parametrize("seed", range(300))
def test_bulk_critical_paths_equal_the_sequential_updates(seed) -> None:
    rng = random.Random(seed)
    domains = rng.randrange(1, 8)
    values = [f"d{i}" for i in range(domains)]
    node_codes = [rng.randrange(domains) for _ in range(rng.randrange(0, 20))]
    per_code = [rng.randrange(0, 4) for _ in range(domains)] + [0]  # small range: many ties
    bulk = _critical_paths_of(values, np.array(node_codes, np.int64), np.array(per_code, np.int64))
    assert bulk == _sequential(values, node_codes, per_code)
