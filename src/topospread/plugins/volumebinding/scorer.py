"""The StorageCapacityScoring score of one node from its volumes' utilization per class.

Upstream ``pkg/scheduler/framework/plugins/volumebinding/scorer.go`` (v1.37.1): the shape
points' scores (0..10) are scaled by 10 (``MaxNodeScore / MaxCustomPriorityScore``); a
class's utilization is ``requested * 100 / capacity`` in int64 arithmetic (100 when the
capacity is 0 or smaller than the request); the node's score is the mean over classes,
rounded half away from zero (``math.Round``); no classes score 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.framework.config.types import UtilizationShapePoint
from topospread.framework.interfaces import MAX_NODE_SCORE
from topospread.plugins.helper.normalize_score import go_div
from topospread.plugins.noderesources.requested_to_capacity_ratio import broken_linear_function

__all__ = [
    "MAX_UTILIZATION",
    "StorageResource",
    "VolumeCapacityScorer",
    "build_scorer",
    "wrap_int64",
]

MAX_UTILIZATION: Final = 100
_MAX_CUSTOM_PRIORITY_SCORE: Final = 10
_UINT64: Final = 1 << 64


def wrap_int64(value: int) -> int:
    """Two's-complement int64, as Go's int64 sums and products wrap."""
    value %= _UINT64
    return value - _UINT64 if value >= 1 << 63 else value


@dataclass(slots=True)
class StorageResource:
    """Requested and available bytes of one class on one node (``StorageResource``)."""

    requested: int = 0
    capacity: int = 0


VolumeCapacityScorer = Callable[[Mapping[str, StorageResource]], int]


def build_scorer(shape: Sequence[UtilizationShapePoint]) -> VolumeCapacityScorer:
    """``buildScorerFunction`` for the args' shape."""
    scale = MAX_NODE_SCORE // _MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(wrap_int64(requested * MAX_UTILIZATION), capacity))

    def scorer(classes: Mapping[str, StorageResource]) -> int:
        if not classes:
            return 0
        total = sum(class_score(r.requested, r.capacity) for r in classes.values())
        # math.Round(float64(total) / float64(n)): half away from zero; totals are small.
        quotient, remainder = divmod(abs(total), len(classes))
        rounded = quotient + (1 if 2 * remainder >= len(classes) else 0)
        return rounded if total >= 0 else -rounded

    return scorer
