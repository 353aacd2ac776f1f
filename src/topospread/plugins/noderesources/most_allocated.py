"""The ``MostAllocated`` scoring strategy of NodeResourcesFit (bin packing).

Upstream ``noderesources/most_allocated.go`` (v1.37.1). Favors the fullest nodes::

    resource score = min(requested, allocatable) * 100 // allocatable
    node score     = Σ resource score × weight // Σ weight

over the resources with a non-zero allocatable (integer division; 0 if none).
``requested`` may exceed allocatable because of the non-zero request defaults; it is
capped rather than scored 0.
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

__all__ = ["most_requested_score", "most_resource_batch_scorer", "most_resource_scorer"]


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of one resource on a 0..100 scale (``mostRequestedScore``)."""
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return go_div(requested * MAX_NODE_SCORE, capacity)


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> ScorerFunction:
    """The weighted mean of :func:`most_requested_score` (``mostResourceScorer``)."""
    weights = tuple(spec.weight for spec in resources)

    def score(
        requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            node_score += most_requested_score(requested[i], capacity) * weights[i]
            weight_sum += weights[i]
        return go_div(node_score, weight_sum) if weight_sum else 0

    return score


def most_resource_batch_scorer(resources: Sequence[ResourceSpec]) -> BatchScorerFunction:
    """:func:`most_resource_scorer` over ``(resources, nodes)`` arrays."""
    weights = tuple(spec.weight for spec in resources)

    def score(requested: IntArray, allocated: IntArray, allocatable: IntArray) -> IntArray | None:
        if int(requested.min(initial=0)) < 0:
            return None  # Go's truncation of a negative share; left to the per-node form
        counted = allocatable != 0
        capacity = np.where(counted, allocatable, 1)
        used = np.minimum(requested, capacity)
        per_resource = np.where(counted, used * MAX_NODE_SCORE // capacity, 0)
        return weighted_mean_batch(per_resource, allocatable, weights)

    return score
