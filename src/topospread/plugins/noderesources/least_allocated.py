"""The ``LeastAllocated`` scoring strategy of NodeResourcesFit (the default).

Upstream ``noderesources/least_allocated.go`` (v1.37.1). Favors nodes with the most
room left once the pod is placed::

    resource score = (allocatable - requested) * 100 // allocatable   (0 if requested > allocatable)
    node score     = Σ resource score × weight // Σ weight

over the resources with a non-zero allocatable (integer division; 0 if none).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from topospread.framework.config.types import ResourceSpec
from topospread.framework.interfaces import MAX_NODE_SCORE
from topospread.framework.node_table import IntArray
from topospread.plugins.helper import go_div
from topospread.plugins.noderesources.resource_allocation import (
    BatchScorerFunction,
    ScorerFunction,
    weighted_mean_batch,
)

__all__ = ["least_requested_score", "least_resource_batch_scorer", "least_resource_scorer"]


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of one resource on a 0..100 scale (``leastRequestedScore``)."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> ScorerFunction:
    """The weighted mean of :func:`least_requested_score` (``leastResourceScorer``)."""
    weights = tuple(spec.weight for spec in resources)

    def score(
        requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            node_score += least_requested_score(requested[i], capacity) * weights[i]
            weight_sum += weights[i]
        return go_div(node_score, weight_sum) if weight_sum else 0

    return score


def least_resource_batch_scorer(resources: Sequence[ResourceSpec]) -> BatchScorerFunction:
    """:func:`least_resource_scorer` over ``(resources, nodes)`` arrays."""
    weights = tuple(spec.weight for spec in resources)

    def score(requested: IntArray, allocated: IntArray, allocatable: IntArray) -> IntArray:
        usable = (allocatable != 0) & (requested <= allocatable)
        capacity = np.where(usable, allocatable, 1)
        per_resource = np.where(usable, (capacity - requested) * MAX_NODE_SCORE // capacity, 0)
        return weighted_mean_batch(per_resource, allocatable, weights)

    return score
