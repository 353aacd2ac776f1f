"""The ``RequestedToCapacityRatio`` scoring strategy of NodeResourcesFit.

Upstream ``noderesources/requested_to_capacity_ratio.go`` and ``helper/shape_score.go``
(v1.37.1). The configured shape maps utilization (0..100 %) to a score (0..10), scaled
by 10 onto 0..100 and interpolated linearly between points with int64 arithmetic::

    utilization    = requested * 100 // allocatable       (100 if requested > allocatable)
    f(p)           = score[0]                               for p <= utilization[0]
                   = s[i-1] + (s[i] - s[i-1]) * (p - u[i-1]) / (u[i] - u[i-1])
                                                            for u[i-1] < p <= u[i]
                   = score[n-1]                             beyond the last point
    node score     = round(Σ f × weight / Σ weight)

The division in ``f`` truncates toward zero (it matters for decreasing shapes); only
resources whose score is positive count in either sum, and the final mean is a
float64 division rounded half away from zero (Go's ``math.Round``); 0 if no resource
counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

from topospread.framework.config.types import ResourceSpec, UtilizationShapePoint
from topospread.framework.interfaces import MAX_NODE_SCORE
from topospread.plugins.helper import go_div
from topospread.plugins.noderesources.resource_allocation import ScorerFunction

__all__ = [
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "broken_linear_function",
    "go_round",
    "requested_to_capacity_ratio_scorer",
]

MAX_UTILIZATION: Final = 100
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""The top of the shape's score scale (``config.MaxCustomPriorityScore``)."""


def go_round(value: float) -> int:
    """Round half away from zero, as Go's ``math.Round`` does (Python rounds half to even)."""
    magnitude = abs(value)
    whole = math.floor(magnitude)
    # magnitude - whole is exact for float64 values, so the 0.5 comparison is too.
    if magnitude - whole >= 0.5:
        whole += 1
    return int(whole) if value >= 0 else -int(whole)


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """A piecewise-linear function through ``(utilization, score)`` points.

    ``helper.BuildBrokenLinearFunction``; constant before the first and after the last point.
    """
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return points[0][1]
                prev_u, prev_s = points[i - 1]
                return prev_s + go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> ScorerFunction:
    """The strategy function for a shape and resources (``requestedToCapacityRatioScorer``)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    weights = tuple(spec.weight for spec in resources)

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def score(
        requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
    ) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            value = resource_score(requested[i], capacity)
            if value > 0:
                node_score += value * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_round(float(node_score) / float(weight_sum))

    return score
