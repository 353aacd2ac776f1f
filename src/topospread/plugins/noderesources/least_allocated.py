"""The ``LeastAllocated`` scoring strategy of NodeResourcesFit (the default).

Upstream ``noderesources/least_allocated.go`` (v1.37.1). Favors nodes with the most
room left once the pod is placed::

    resource score = (allocatable - requested) * 100 // allocatable   (0 if requested > allocatable)
    node score     = Σ resource score × weight // Σ weight

over the resources with a non-zero allocatable (integer division; 0 if none).
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.config.types import ResourceSpec
from topospread.framework.interfaces import MAX_NODE_SCORE
from topospread.plugins.helper import go_div
from topospread.plugins.noderesources.resource_allocation import ScorerFunction

__all__ = ["least_requested_score", "least_resource_scorer"]


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
