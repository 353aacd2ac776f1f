"""The resource-allocation scorer shared by NodeResourcesFit and BalancedAllocation.

Upstream ``noderesources/resource_allocation.go`` (v1.37.1). For each configured
resource ``i`` the scorer builds three vectors and hands them to a strategy function:

* ``allocatable[i]``: the node's allocatable amount;
* ``allocated[i]``: what the node's pods already request. For cpu and memory this is
  ``NonZeroRequested`` (containers without a request count 100m / 200Mi) unless the
  scorer uses plain requests (BalancedAllocation does); ephemeral storage and scalar
  resources always use the plain ``Requested`` totals;
* ``requested[i] = allocated[i] + pod[i]``, the pod being scheduled included.

An entry stays 0 in all three vectors, and so is left out by every strategy, when the
node's allocatable of it is 0 (or absent), or when it is a scalar resource (extended,
hugepages, ...) the pod does not request.

The pod's own amounts come from ``resource.PodRequests`` (sidecars, pod-level resources,
overhead), with missing container cpu/memory requests filled with the same 100m / 200Mi
defaults unless plain requests are used; cpu is read in millicores, the rest in base
units, rounding up. Whether the pod's *pod-level* requests count is the scorer's own
setting: BalancedAllocation passes the PodLevelResources gate, but NodeResourcesFit's
scorer never receives it (``NewFit`` sets the gate on the plugin, whose field shadows
the embedded scorer's), so Fit scores the incoming pod by its container requests
alone, while the pods already on the node count their pod-level requests.

Not modelled: extended resources backed by DRA device classes (no DeviceClasses are
read) and the in-place resize status terms.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np

from topospread.framework.config.types import ResourceSpec
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import IntArray, NodeTable, UsageColumns
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod
from topospread.model.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    EPHEMERAL_STORAGE,
    MEMORY,
    Resource,
    is_scalar_resource_name,
    node_allocatable,
    pod_request_amounts,
    requests_signature,
    sum_pod_resources,
)

__all__ = [
    "BatchScorerFunction",
    "NodeUsage",
    "ResourceAllocationScorer",
    "ScorerFunction",
    "node_usage",
]

ScorerFunction = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]
"""A strategy: ``(requested, allocated, allocatable) -> score``, vectors by resource."""

BatchScorerFunction = Callable[[IntArray, IntArray, IntArray], "IntArray | None"]
"""A strategy over many nodes: the same three vectors as ``(resources, nodes)`` arrays;
None when it cannot be computed exactly in bulk."""

_BATCH_LIMIT: Final = 2**55
"""Largest quantity the batch strategies take: ×100 (and sums of a few) stay in int64."""

_DEFAULT_REQUESTS: Final = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """A node's allocatable and the totals its pods request (``NodeInfo`` fields)."""

    allocatable: Resource
    requested: Resource
    """``NodeInfo.Requested``: the sum of the pods' requests."""
    non_zero_requested: Resource
    """``NodeInfo.NonZeroRequested``: cpu and memory with the 100m / 200Mi defaults."""


_CACHE_SIZE: Final = 16384
_REQUEST_LISTS_SIZE: Final = 1024
_usage_cache: OrderedDict[tuple[int, bool], tuple[NodeInfo, int, NodeUsage]] = OrderedDict()


def node_usage(node_info: NodeInfo, *, pod_level_resources: bool = True) -> NodeUsage:
    """The node's allocatable and requested totals, memoised per NodeInfo and generation."""
    key = (id(node_info), pod_level_resources)
    hit = _usage_cache.get(key)
    if hit is not None and hit[0] is node_info and hit[1] == node_info.generation:
        _usage_cache.move_to_end(key)
        return hit[2]
    requested, non_zero = sum_pod_resources(node_info.pods, pod_level_resources=pod_level_resources)
    usage = NodeUsage(node_allocatable(node_info.node), requested, non_zero)
    _usage_cache[key] = (node_info, node_info.generation, usage)
    _usage_cache.move_to_end(key)
    if len(_usage_cache) > _CACHE_SIZE:
        _usage_cache.popitem(last=False)
    return usage


class ResourceAllocationScorer:
    """Scores a node from per-resource usage vectors (``resourceAllocationScorer``)."""

    def __init__(
        self,
        name: str,
        scorer: ScorerFunction,
        resources: Sequence[ResourceSpec],
        *,
        use_requested: bool,
        pod_level_resources: bool = True,
        node_pod_level_resources: bool = True,
        batch_scorer: BatchScorerFunction | None = None,
    ) -> None:
        self.name = name
        self.batch_scorer = batch_scorer
        """The strategy over many nodes at once, if it has that form."""
        """The strategy (``LeastAllocated``, ...) or plugin name, for messages."""
        self.scorer = scorer
        self.resources: tuple[ResourceSpec, ...] = tuple(resources)
        """Resources and weights, in configuration order; vectors follow this order."""
        self.use_requested = use_requested
        """Plain requests for cpu/memory (True) instead of the non-zero defaults (False)."""
        self.pod_level_resources = pod_level_resources
        """Whether the incoming pod's pod-level requests count (the scorer's own gate)."""
        self.node_pod_level_resources = node_pod_level_resources
        """The PodLevelResources gate as NodeInfo applies it to the pods already placed."""
        self._request_lists: dict[Hashable, tuple[int, ...]] = {}

    def pod_request_list(self, pod: Pod) -> tuple[int, ...]:
        """The pod's requests, one per configured resource (``calculatePodResourceRequestList``);
        memoised per :func:`requests_signature`."""
        signature = requests_signature(pod)
        known = self._request_lists.get(signature)
        if known is not None:
            return known
        amounts = pod_request_amounts(
            pod,
            pod_level_resources=self.pod_level_resources,
            non_missing=None if self.use_requested else _DEFAULT_REQUESTS,
        )
        out = []
        for spec in self.resources:
            amount = amounts.get(spec.name, Fraction(0))
            out.append(math.ceil(amount * 1000) if spec.name == CPU else math.ceil(amount))
        result = tuple(out)
        if len(self._request_lists) >= _REQUEST_LISTS_SIZE:
            self._request_lists.clear()
        self._request_lists[signature] = result
        return result

    @staticmethod
    def is_best_effort(pod_requests: Sequence[int]) -> bool:
        """Whether every configured resource request is 0 (``isBestEffortPod``)."""
        return all(r == 0 for r in pod_requests)

    def _allocatable_and_allocated(self, usage: NodeUsage, resource: str) -> tuple[int, int]:
        # calculateResourceAllocatableRequest
        requested = usage.requested if self.use_requested else usage.non_zero_requested
        if resource == CPU:
            return usage.allocatable.milli_cpu, requested.milli_cpu
        if resource == MEMORY:
            return usage.allocatable.memory, requested.memory
        if resource == EPHEMERAL_STORAGE:
            return usage.allocatable.ephemeral_storage, usage.requested.ephemeral_storage
        if resource in usage.allocatable.scalar_resources:
            return usage.allocatable.scalar(resource), usage.requested.scalar(resource)
        return 0, 0

    def node_vectors(
        self, node_info: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[list[int], list[int], list[int]]:
        """``(requested, allocated, allocatable)`` per resource.

        ``calculateNodeAllocatableRequest``.
        """
        usage = node_usage(node_info, pod_level_resources=self.node_pod_level_resources)
        count = len(self.resources)
        requested, allocated, allocatable = [0] * count, [0] * count, [0] * count
        for i, spec in enumerate(self.resources):
            # A scalar resource the pod does not request is not scored at all.
            if pod_requests[i] == 0 and is_scalar_resource_name(spec.name):
                continue
            node_allocatable_amount, node_allocated = self._allocatable_and_allocated(
                usage, spec.name
            )
            if node_allocatable_amount == 0:
                continue
            allocatable[i] = node_allocatable_amount
            allocated[i] = node_allocated
            requested[i] = node_allocated + pod_requests[i]
        return requested, allocated, allocatable

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        """The strategy's score of the node for a pod with these requests."""
        if not self.resources:
            return 0, Status(Code.ERROR, ("resources not found",))
        requested, allocated, allocatable = self.node_vectors(node_info, pod_requests)
        return self.scorer(requested, allocated, allocatable), None

    def node_vectors_batch(
        self, table: NodeTable, rows: IntArray, pod_requests: Sequence[int]
    ) -> tuple[IntArray, IntArray, IntArray] | None:
        """:meth:`node_vectors` of the nodes at ``rows``, as ``(resources, nodes)`` arrays;
        None when a quantity is too large for exact int64 arithmetic."""
        usage = table.usage(self.node_pod_level_resources)
        if not usage.exact:
            return None
        shape = (len(self.resources), len(rows))
        requested = np.zeros(shape, np.int64)
        allocated = np.zeros(shape, np.int64)
        allocatable = np.zeros(shape, np.int64)
        for i, spec in enumerate(self.resources):
            columns = self._usage_columns(usage, spec.name, pod_requests[i])
            if columns is None:
                continue
            capacity, used = columns
            counted = capacity[rows] != 0
            allocatable[i] = np.where(counted, capacity[rows], 0)
            allocated[i] = np.where(counted, used[rows], 0)
            requested[i] = np.where(counted, allocated[i] + pod_requests[i], 0)
        if len(rows) and (
            int(np.abs(allocatable).max()) >= _BATCH_LIMIT
            or int(np.abs(requested).max()) >= _BATCH_LIMIT
        ):
            return None
        return requested, allocated, allocatable

    def _usage_columns(
        self, usage: UsageColumns, name: str, pod_request: int
    ) -> tuple[IntArray, IntArray] | None:
        # calculateResourceAllocatableRequest over the table: (allocatable, allocated)
        # columns of one resource; None when it is not scored (a scalar resource the pod
        # does not request, or a name the scheduler does not count).
        if pod_request == 0 and is_scalar_resource_name(name):
            return None
        if name == CPU:
            return usage.alloc_cpu, usage.req_cpu if self.use_requested else usage.non_zero_cpu
        if name == MEMORY:
            return (
                usage.alloc_memory,
                usage.req_memory if self.use_requested else usage.non_zero_memory,
            )
        if name == EPHEMERAL_STORAGE:
            return usage.alloc_ephemeral, usage.req_ephemeral
        if is_scalar_resource_name(name):
            return usage.allocatable_scalar(name), usage.requested_scalar(name)
        return None

    def _score_at(self, usage: UsageColumns, row: int, pod_requests: Sequence[int]) -> int:
        # :meth:`score` of the node at ``row``, read from the table's columns.
        count = len(self.resources)
        requested, allocated, allocatable = [0] * count, [0] * count, [0] * count
        for i, spec in enumerate(self.resources):
            columns = self._usage_columns(usage, spec.name, pod_requests[i])
            if columns is None:
                continue
            capacity = int(columns[0][row])
            if capacity == 0:
                continue
            allocatable[i] = capacity
            allocated[i] = int(columns[1][row])
            requested[i] = allocated[i] + pod_requests[i]
        return self.scorer(requested, allocated, allocatable)

    def score_batch(
        self, table: NodeTable, rows: IntArray, pod_requests: Sequence[int]
    ) -> IntArray | None:
        """:meth:`score` of the nodes at ``rows``; None when not computable in bulk."""
        batch_scorer = self.batch_scorer
        if batch_scorer is None or not self.resources:
            return None
        usage = table.usage(self.node_pod_level_resources)
        if not usage.exact:
            return None

        def compute(some: IntArray) -> IntArray | None:
            vectors = self.node_vectors_batch(table, some, pod_requests)
            return None if vectors is None else batch_scorer(*vectors)

        def compute_row(row: int) -> int:
            return self._score_at(usage, row, pod_requests)

        # Every node's score for these requests, kept across cycles (the replicas of one
        # Deployment ask the same); where some node cannot be scored in bulk, the nodes
        # at ``rows`` alone are tried, as before such columns were kept.
        column = usage.kept_column((self, tuple(pod_requests)), compute, compute_row)
        if column is None:
            return compute(rows)
        scores: IntArray = column[rows]
        return scores


def weighted_mean_batch(
    per_resource: IntArray, allocatable: IntArray, weights: Sequence[int]
) -> IntArray:
    """``Σ score × weight ÷ Σ weight`` per node over the resources with a non-zero
    allocatable (Go integer division of non-negative values; 0 where none counts)."""
    weight_column = np.array(weights, np.int64)[:, None]
    counted = allocatable != 0
    weight_sum = (weight_column * counted).sum(axis=0)
    total = (per_resource * weight_column * counted).sum(axis=0)
    result: IntArray = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
    return result
