"""NodeResourcesFit: a pod fits a node whose free allocatable covers its requests.

Upstream ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (v1.37.1). Filter
collects every shortfall, in this order, each as its own reason:

* ``Too many pods`` when the node already runs ``allocatable pods`` pods;
* ``Insufficient cpu``, ``Insufficient memory``, ``Insufficient ephemeral-storage``;
* ``Insufficient <name>`` for each scalar resource (extended, hugepages, ...).
  Upstream walks a Go map here, so its order among several scalars is random;
  topospread sorts them by name.

A resource is only checked when the pod requests a positive amount of it. The status
is Unschedulable, or UnschedulableAndUnresolvable as soon as one request exceeds the
node's whole allocatable (no preemption could free enough). ``ignoredResources`` and
``ignoredResourceGroups`` (the part before ``/``) only exempt extended resources.

PreScore and Score rank the feasible nodes with the configured scoring strategy
(``scoringStrategy.type``, default ``LeastAllocated`` over cpu and memory, weight 1
each; ``MostAllocated``; ``RequestedToCapacityRatio`` with its shape): see
:mod:`.resource_allocation` for the requested/allocatable vectors (cpu and memory with
the 100m / 200Mi non-zero defaults, the pod included) and :mod:`.least_allocated`,
:mod:`.most_allocated`, :mod:`.requested_to_capacity_ratio` for the formulas. PreScore
never skips; there is no NormalizeScore. Default weight in the default profile: 1.

Not modelled: DRA-backed extended resources (no DeviceClasses are read, so none are
delegated to DRA) and the in-place-resize adjustments behind the alpha
InPlacePodVerticalScalingSchedulerPreemption gate.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.errors import ConfigError
from topospread.framework.config.types import NodeResourcesFitArgs, ScoringStrategy
from topospread.framework.config.validation import validate_node_resources_fit_args
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, IntArray, NodeTable
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import Pod
from topospread.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resource,
    is_extended_resource_name,
    node_allocatable,
    pod_requests,
    sum_pod_resources,
)
from topospread.plugins import names
from topospread.plugins.noderesources.least_allocated import (
    least_resource_batch_scorer,
    least_resource_scorer,
)
from topospread.plugins.noderesources.most_allocated import (
    most_resource_batch_scorer,
    most_resource_scorer,
)
from topospread.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from topospread.plugins.noderesources.resource_allocation import (
    BatchScorerFunction,
    ResourceAllocationScorer,
    ScorerFunction,
)

__all__ = [
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "REQUESTED_TO_CAPACITY_RATIO",
    "Fit",
    "InsufficientResource",
    "NodeResourcesFitArgs",
    "fits",
    "fits_request",
    "new_fit",
]

NAME: Final = names.NODE_RESOURCES_FIT

PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"

REASON_TOO_MANY_PODS: Final = "Too many pods"
"""Filter reason when the node already runs as many pods as it allows."""


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One shortfall of a node for a pod (``noderesources.InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False
    """The request exceeds the node's whole allocatable: preemption cannot help."""


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The incoming pod's requests; unaffected by other pods."""

    requests: Resource

    def clone(self) -> _PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The incoming pod's requests of the scored resources, in strategy order."""

    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def _strategy_batch_function(strategy: ScoringStrategy) -> BatchScorerFunction | None:
    # The strategies with a bulk form; RequestedToCapacityRatio is scored per node.
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_batch_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_resource_batch_scorer(strategy.resources)
    return None


def _strategy_function(strategy: ScoringStrategy) -> ScorerFunction:
    # nodeResourceStrategyTypeMap
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scorer(strategy.resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        ratio = strategy.requested_to_capacity_ratio
        if ratio is None:
            raise ConfigError(NAME, ["requestedToCapacityRatio: required for this strategy"])
        return requested_to_capacity_ratio_scorer(strategy.resources, ratio.shape)
    raise ConfigError(NAME, [f"scoring strategy {strategy.type} is not supported"])


def fits_request(
    requests: Resource,
    allocatable: Resource,
    requested: Resource,
    pod_count: int,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_resource_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """Every resource the node lacks for the pod (``fitsRequest``), in upstream order.

    ``requested`` is what the node's ``pod_count`` pods already request.
    """
    insufficient: list[InsufficientResource] = []
    allowed = allocatable.allowed_pod_number
    if pod_count + 1 > allowed:
        insufficient.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, pod_count, allowed))
    if requests.is_zero:
        return insufficient

    checks = (
        (CPU, requests.milli_cpu, requested.milli_cpu, allocatable.milli_cpu),
        (MEMORY, requests.memory, requested.memory, allocatable.memory),
        (
            EPHEMERAL_STORAGE,
            requests.ephemeral_storage,
            requested.ephemeral_storage,
            allocatable.ephemeral_storage,
        ),
    )
    for name, want, used, capacity in checks:
        if want > 0 and want > capacity - used:
            insufficient.append(
                InsufficientResource(
                    name, f"Insufficient {name}", want, used, capacity, want > capacity
                )
            )

    for name in sorted(requests.scalar_resources):
        want = requests.scalar_resources[name]
        if want == 0:
            continue
        if is_extended_resource_name(name):
            group = name.split("/")[0] if ignored_resource_groups else ""
            if name in ignored_resources or group in ignored_resource_groups:
                continue
        capacity = allocatable.scalar(name)
        used = requested.scalar(name)
        if want > 0 and want > capacity - used:
            insufficient.append(
                InsufficientResource(
                    name, f"Insufficient {name}", want, used, capacity, want > capacity
                )
            )
    return insufficient


class Fit:
    """Checks that a node has room for the pod's requests and one more pod; scores by usage."""

    def __init__(self, args: NodeResourcesFitArgs, features: Features) -> None:
        strategy = args.scoring_strategy
        self._scorer = ResourceAllocationScorer(
            strategy.type,
            _strategy_function(strategy),
            strategy.resources,
            use_requested=False,
            # Upstream quirk: NewFit sets enablePodLevelResources on Fit, not on the
            # embedded resourceAllocationScorer, so the score ignores the incoming pod's
            # pod-level requests (SkipPodLevelResources) even with the gate on.
            pod_level_resources=False,
            node_pod_level_resources=features.enable_pod_level_resources,
            batch_scorer=_strategy_batch_function(strategy),
        )
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self._pod_level_resources = features.enable_pod_level_resources
        # NodeInfo keeps no totals yet: memoise them per node object and generation.
        self._usage: OrderedDict[int, tuple[NodeInfo, int, Resource, Resource]] = OrderedDict()

    @property
    def name(self) -> str:
        """``NodeResourcesFit``."""
        return NAME

    def pod_requests(self, pod: Pod) -> Resource:
        """The pod's requests as PreFilter computes them (``computePodResourceRequest``)."""
        return pod_requests(pod, pod_level_resources=self._pod_level_resources)

    def node_usage(self, node_info: NodeInfo) -> tuple[Resource, Resource]:
        """``(allocatable, requested)`` of a node, the latter summed over its pods."""
        key = id(node_info)
        hit = self._usage.get(key)
        if hit is not None and hit[0] is node_info and hit[1] == node_info.generation:
            return hit[2], hit[3]
        allocatable = node_allocatable(node_info.node)
        requested, _ = sum_pod_resources(
            node_info.pods, pod_level_resources=self._pod_level_resources
        )
        self._usage[key] = (node_info, node_info.generation, allocatable, requested)
        self._usage.move_to_end(key)
        if len(self._usage) > 16384:
            self._usage.popitem(last=False)
        return allocatable, requested

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``noderesources/fit.go``) with v1.37.1's gates:
        InPlacePodVerticalScaling (GA) adds the scale-down events, DRAExtendedResource
        (GA) the DeviceClass events; InPlacePodVerticalScalingSchedulerPreemption (alpha)
        is off. Only the deletion has its hint here; the node, scale-down and DeviceClass
        hints (which fit the pod against the node or class) are not evaluated, so those
        events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_delete,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN)
            ),
        ]

    def is_schedulable_after_assigned_pod_delete(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterAssignedPodDelete``: any placed or nominated pod's deletion
        may free room (the deferred-resize case is behind an alpha gate)."""
        if isinstance(old, Pod) and not old.node_name and not old.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Compute the pod's requests once per cycle."""
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(self.pod_requests(pod)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def insufficient_resources(
        self, requests: Resource, node_info: NodeInfo
    ) -> list[InsufficientResource]:
        """What the node lacks for a pod with these requests."""
        allocatable, requested = self.node_usage(node_info)
        return fits_request(
            requests,
            allocatable,
            requested,
            len(node_info.pods),
            self._ignored_resources,
            self._ignored_resource_groups,
        )

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node with one reason per insufficient resource."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY, _PreFilterState)
        except StateNotFoundError:
            return as_status(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        except TypeError as exc:
            return as_status(exc)
        insufficient = self.insufficient_resources(s.requests, node_info)
        if not insufficient:
            return None
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if any(r.unresolvable for r in insufficient)
            else Code.UNSCHEDULABLE
        )
        return Status(code, tuple(r.reason for r in insufficient))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """:meth:`filter` for every node at once: room for one more pod and every request."""
        try:
            requests = state.read(PRE_FILTER_STATE_KEY, _PreFilterState).requests
        except (StateNotFoundError, TypeError):
            return None
        usage = table.usage(self._pod_level_resources)
        if not usage.exact:
            return None
        checked = [
            (want, used, capacity)
            for want, used, capacity in (
                (requests.milli_cpu, usage.req_cpu, usage.alloc_cpu),
                (requests.memory, usage.req_memory, usage.alloc_memory),
                (requests.ephemeral_storage, usage.req_ephemeral, usage.alloc_ephemeral),
            )
            if want > 0
        ]
        for name, want in requests.scalar_resources.items():
            if want <= 0:
                continue
            if is_extended_resource_name(name):
                group = name.split("/")[0] if self._ignored_resource_groups else ""
                if name in self._ignored_resources or group in self._ignored_resource_groups:
                    continue
            checked.append((want, usage.requested_scalar(name), usage.allocatable_scalar(name)))

        def compute(rows: IntArray) -> BoolArray:
            fits: BoolArray = usage.pod_count[rows] + 1 <= usage.allowed_pods[rows]
            for want, used, capacity in checked:
                fits &= capacity[rows] - used[rows] >= want
            return fits

        def compute_row(row: int) -> bool:
            if int(usage.pod_count[row]) + 1 > int(usage.allowed_pods[row]):
                return False
            return all(
                int(capacity[row]) - int(used[row]) >= want for want, used, capacity in checked
            )

        key = (
            self,
            requests.milli_cpu,
            requests.memory,
            requests.ephemeral_storage,
            tuple(sorted(requests.scalar_resources.items())),
        )
        verdicts: BoolArray | None = usage.kept_column(key, compute, compute_row)
        return verdicts

    @property
    def scoring_strategy(self) -> str:
        """The scoring strategy's type, e.g. ``LeastAllocated``."""
        return self._scorer.name

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Compute the pod's requests of the scored resources (with non-zero defaults)."""
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._scorer.pod_request_list(pod)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The strategy's score (0..100) of the node with the pod placed on it."""
        try:
            requests = state.read(PRE_SCORE_STATE_KEY, _PreScoreState).pod_requests
        except (StateNotFoundError, TypeError):
            # PreScore did not run: compute here, as upstream falls back to.
            requests = self._scorer.pod_request_list(pod)
        return self._scorer.score(node_info, requests)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """:meth:`score` of many nodes, for the strategies with a bulk form."""
        try:
            requests = state.read(PRE_SCORE_STATE_KEY, _PreScoreState).pod_requests
        except (StateNotFoundError, TypeError):
            return None
        return self._scorer.score_batch(table, rows, requests)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already in 0..100."""
        return None


def fits(
    pod: Pod, node_info: NodeInfo, features: Features | None = None
) -> list[InsufficientResource]:
    """What ``node_info`` lacks for ``pod``, with no ignored resources (``noderesources.Fits``)."""
    plugin = Fit(NodeResourcesFitArgs(), features or Features())
    return plugin.insufficient_resources(plugin.pod_requests(pod), node_info)


def new_fit(args: object | None, handle: Handle, features: Features) -> Fit:
    """The plugin factory (``noderesources.NewFit``); ``args`` must be NodeResourcesFitArgs."""
    if args is None:
        args = NodeResourcesFitArgs()
    if not isinstance(args, NodeResourcesFitArgs):
        raise ConfigError(
            NAME, [f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}"]
        )
    # NewFit validates its args itself, so a plugin built outside a profile is checked too.
    errors = validate_node_resources_fit_args("", args)
    if errors:
        raise ConfigError(NAME, errors)
    return Fit(args, features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = Fit(NodeResourcesFitArgs(), Features())
    _filter: FilterPlugin = Fit(NodeResourcesFitArgs(), Features())
    _pre_score: PreScorePlugin = Fit(NodeResourcesFitArgs(), Features())
    _score: ScorePlugin = Fit(NodeResourcesFitArgs(), Features())
