"""NodeResourcesBalancedAllocation: favor nodes whose resources stay evenly used.

Upstream ``noderesources/balanced_allocation.go`` (v1.37.1). Default weight 1; args
``resources`` default to cpu and memory, each weight 1 (validation allows only 1).

* PreScore computes the pod's *plain* requests (no 100m / 200Mi defaults) of the
  configured resources and returns Skip when all are 0 (a best-effort pod).
* Score works on plain requests too (``useRequested``): with the vectors of
  :mod:`.resource_allocation`, for each counted resource (non-zero allocatable)
  ``fraction = min(requested / allocatable, 1)`` as float64, and::

      std(fractions) = |f0 - f1| / 2                  for two resources
                     = sqrt(Σ (f - mean)² / n)        for more, 0 for fewer
      balance(v)     = int((1 - std(v)) * 100)        (truncated)
      score          = 50 + (50 + balance(with pod) - balance(without pod)) / 2

  where "with pod" uses ``requested`` (node + pod) and "without pod" the node's
  ``allocated``; the last division truncates toward zero, as Go's does. A node the
  pod leaves exactly as balanced as it was scores 75.
* No NormalizeScore.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from topospread.errors import ConfigError, FieldError
from topospread.framework.config.types import ResourceSpec
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    MAX_NODE_SCORE,
    Handle,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import IntArray, NodeTable
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.helper import go_div
from topospread.plugins.helper.batch import go_div_batch
from topospread.plugins.noderesources.resource_allocation import ResourceAllocationScorer

__all__ = [
    "DEFAULT_RESOURCES",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "BalancedAllocation",
    "balanced_resource_score",
    "balanced_resource_scorer",
    "new_balanced_allocation",
]

NAME: Final = names.NODE_RESOURCES_BALANCED_ALLOCATION

PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

DEFAULT_RESOURCES: Final = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
"""The v1 default of ``NodeResourcesBalancedAllocationArgs.resources``."""


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``int((1 - std) * 100)`` of the used fractions (``balancedResourceScore``)."""
    fractions: list[float] = []
    total = 0.0
    for i, capacity in enumerate(allocatable):
        if capacity == 0:
            continue
        fraction = min(float(requested[i]) / float(capacity), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / float(len(fractions)))
    # int64(float) truncates toward zero, as int() does.
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_batch_score(requested: IntArray, allocatable: IntArray) -> IntArray | None:
    """:func:`balanced_resource_score` over ``(resources, nodes)`` arrays, when every node
    counts every resource (the fractions then line up); None otherwise."""
    if not bool((allocatable != 0).all()):
        return None
    fractions = np.minimum(requested.astype(np.float64) / allocatable.astype(np.float64), 1.0)
    count = len(fractions)
    if count == 2:
        std = np.abs((fractions[0] - fractions[1]) / 2)
    elif count > 2:
        # Sums in Go's order, one resource after the other (no pairwise summation).
        total = fractions[0].copy()
        for row in fractions[1:]:
            total = total + row
        mean = total / float(count)
        squares = np.zeros(fractions.shape[1], np.float64)
        for row in fractions:
            squares = squares + (row - mean) * (row - mean)
        std = np.sqrt(squares / float(count))
    else:
        std = np.zeros(fractions.shape[1], np.float64)
    balance: IntArray = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return balance


def balanced_resource_batch_scorer(
    requested: IntArray, allocated: IntArray, allocatable: IntArray
) -> IntArray | None:
    """:func:`balanced_resource_scorer` over ``(resources, nodes)`` arrays."""
    with_pod = balanced_resource_batch_score(requested, allocatable)
    without_pod = balanced_resource_batch_score(allocated, allocatable)
    if with_pod is None or without_pod is None:
        return None
    half = MAX_NODE_SCORE // 2
    return half + go_div_batch(half + with_pod - without_pod, 2)


def balanced_resource_scorer(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """How much placing the pod improves the node's balance (``balancedResourceScorer``)."""
    with_pod = balanced_resource_score(requested, allocatable)
    without_pod = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's plain requests, one per configured resource."""

    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation:
    """Scores nodes by how evenly the pod leaves cpu, memory (and other resources) used."""

    def __init__(self, resources: Sequence[ResourceSpec], features: Features) -> None:
        self._scorer = ResourceAllocationScorer(
            NAME,
            balanced_resource_scorer,
            resources,
            use_requested=True,
            pod_level_resources=features.enable_pod_level_resources,
            node_pod_level_resources=features.enable_pod_level_resources,
            batch_scorer=balanced_resource_batch_scorer,
        )

    @property
    def name(self) -> str:
        """``NodeResourcesBalancedAllocation``."""
        return NAME

    @property
    def resources(self) -> tuple[ResourceSpec, ...]:
        """The configured resources."""
        return self._scorer.resources

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Record the pod's requests; Skip for a pod requesting none of the resources."""
        requests = self._scorer.pod_request_list(pod)
        if self._scorer.is_best_effort(requests):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The balance score of one node (0..100)."""
        try:
            requests = state.read(PRE_SCORE_STATE_KEY, _PreScoreState).pod_requests
        except (StateNotFoundError, TypeError):
            # PreScore did not run: compute here, as upstream falls back to.
            requests = self._scorer.pod_request_list(pod)
            if self._scorer.is_best_effort(requests):
                return 0, None
        return self._scorer.score(node_info, requests)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """:meth:`score` of many nodes at once."""
        try:
            requests = state.read(PRE_SCORE_STATE_KEY, _PreScoreState).pod_requests
        except (StateNotFoundError, TypeError):
            return None
        return self._scorer.score_batch(table, rows, requests)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already in 0..100."""
        return None


def _resources_from_args(args: Mapping[str, object]) -> tuple[ResourceSpec, ...]:
    raw = args.get("resources")
    if not raw:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        raise ConfigError(NAME, ["resources: must be a list"])
    specs: list[ResourceSpec] = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise ConfigError(NAME, ["resources: each entry must be an object"])
        name = item.get("name", "")
        weight = item.get("weight") or 1
        if not isinstance(name, str) or not isinstance(weight, int):
            raise ConfigError(NAME, ["resources: name must be a string, weight an integer"])
        specs.append(ResourceSpec(name, weight))
    return tuple(specs)


def _validate(resources: Sequence[ResourceSpec]) -> list[FieldError]:
    # ValidateNodeResourcesBalancedAllocationArgs
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, spec in enumerate(resources):
        if spec.name in seen:
            errors.append(FieldError.duplicate(f"resources[{i}].name", spec.name))
        seen.add(spec.name)
        if spec.weight != 1:
            errors.append(FieldError.invalid(f"resources[{i}].weight", spec.weight, "must be 1"))
    return errors


def new_balanced_allocation(
    args: object | None, handle: Handle, features: Features
) -> BalancedAllocation:
    """The plugin factory (``NewBalancedAllocation``).

    ``args`` is the defaulted v1 JSON form (``{"resources": [{"name", "weight"}]}``)
    as the configuration keeps it, or None for the defaults.
    """
    resources: tuple[ResourceSpec, ...]
    if args is None:
        resources = DEFAULT_RESOURCES
    elif isinstance(args, Mapping):
        resources = _resources_from_args(args)
    else:
        raise ConfigError(
            NAME,
            [
                "want args to be of type NodeResourcesBalancedAllocationArgs, "
                f"got {type(args).__name__}"
            ],
        )
    errors = _validate(resources)
    if errors:
        raise ConfigError(NAME, errors)
    return BalancedAllocation(resources, features)


if TYPE_CHECKING:
    _pre_score: PreScorePlugin = BalancedAllocation(DEFAULT_RESOURCES, Features())
    _score: ScorePlugin = BalancedAllocation(DEFAULT_RESOURCES, Features())
