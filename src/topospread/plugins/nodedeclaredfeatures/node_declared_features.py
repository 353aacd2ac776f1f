"""NodeDeclaredFeatures: a pod that needs a node feature fits only nodes declaring it.

Upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures`` (v1.37.1, the
``NodeDeclaredFeatures`` gate GA and locked on) with the feature registry of
``k8s.io/component-helpers/nodedeclaredfeatures`` v0.37.1. PreFilter infers the features
the pod needs (``InferForPodScheduling``) and returns Skip when there are none; Filter
rejects, UnschedulableAndUnresolvable, a node whose ``status.declaredFeatures`` lacks one.

Of the nine registered features only three are inferred for scheduling (the others are
about pod updates or nothing at all): ``RestartAllContainersOnContainerExits`` (a regular
or init container with a ``restartPolicyRules`` action ``RestartAllContainers``),
``UserNamespacesHostNetworkSupport`` (``hostNetwork`` with ``hostUsers: false``) and
``VolumeBindMountOptions`` (a volume mount with ``bindMountOptions``, in any container,
init or ephemeral). None has a maximum version, so the scheduler's version plays no part.

A node's list is mapped as ``FeatureMapper.TryMap`` maps it: one merge walk against the
sorted registry that assumes the list sorted (as the kubelet writes it) and skips
unknown names, so a name that comes after a larger one in an unsorted list is missed.
The ``InPlacePodVerticalScalingSchedulerPreemption`` gate, which would skip pods with a
deferred resize, is off at v1.37.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, NodeTable
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import Node, Pod
from topospread.plugins import names
from topospread.plugins.helper.batch import node_verdicts

__all__ = [
    "ERR_REASON",
    "NAME",
    "REGISTERED_FEATURES",
    "NodeDeclaredFeatures",
    "declared_features",
    "new",
    "required_features",
]

NAME: Final = names.NODE_DECLARED_FEATURES
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON: Final = "node(s) didn't match Pod's required features"
"""Filter reason (``errReasonUnsatisfiedRequirements``)."""

RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK: Final = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS: Final = "VolumeBindMountOptions"
_RESTART_ALL_CONTAINERS_ACTION: Final = "RestartAllContainers"

REGISTERED_FEATURES: Final = tuple(
    sorted(
        (
            RESTART_ALL_CONTAINERS,
            "InPlacePodLevelResourcesVerticalScaling",
            "ExtendWebSocketsToKubelet",
            "InPlacePodVerticalScalingInitContainers",
            "InPlacePodVerticalScalingMemoryBackedVolumes",
            USER_NAMESPACES_HOST_NETWORK,
            "DRANodeAllocatableResources",
            VOLUME_BIND_MOUNT_OPTIONS,
            "DRAOptionalNodeOperations",
        )
    )
)
"""``features.AllFeatures`` by name, sorted as ``FeatureMapper`` keeps them (Go compares
strings byte-wise, which for these ASCII names is Python's order)."""


def required_features(pod: Pod) -> frozenset[str]:
    """``InferForPodScheduling`` of every registered feature, for the pod's spec."""
    required: set[str] = set()
    if any(
        _RESTART_ALL_CONTAINERS_ACTION in c.restart_policy_rule_actions
        for c in (*pod.containers, *pod.init_containers)
    ):
        required.add(RESTART_ALL_CONTAINERS)
    if pod.host_network and pod.host_users is False:
        required.add(USER_NAMESPACES_HOST_NETWORK)
    if pod.ephemeral_bind_mount_options or any(
        c.bind_mount_options for c in (*pod.containers, *pod.init_containers)
    ):
        required.add(VOLUME_BIND_MOUNT_OPTIONS)
    return frozenset(required)


def declared_features(node: Node) -> frozenset[str]:
    """``FeatureMapper.TryMap(node.Status.DeclaredFeatures)``: the registered features the
    merge walk finds in the list, which it takes to be sorted."""
    found: set[str] = set()
    listed, registered = node.declared_features, REGISTERED_FEATURES
    i = j = 0
    while i < len(listed) and j < len(registered):
        if listed[i] == registered[j]:
            found.add(registered[j])
            i += 1
            j += 1
        elif listed[i] < registered[j]:
            i += 1  # unknown to this scheduler: ignored
        else:
            j += 1
    return frozenset(found)


class _State:
    """What PreFilter found the pod to need."""

    __slots__ = ("required",)

    def __init__(self, required: frozenset[str]) -> None:
        self.required = required

    def clone(self) -> _State:
        """Immutable: itself."""
        return self


class NodeDeclaredFeatures:
    """Filters out nodes that do not declare every feature the pod needs."""

    @property
    def name(self) -> str:
        """``NodeDeclaredFeatures``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodedeclaredfeatures/nodedeclaredfeatures.go``), the gate
        GA in v1.37. Upstream's hints (whether the node now declares, or the pod no longer
        needs, the features) are not evaluated: these events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
                )
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Infer the pod's needs; Skip when it needs nothing."""
        required = required_features(pod)
        if not required:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(required))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the verdict does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable unless the node declares every needed feature."""
        try:
            required = state.read(PRE_FILTER_STATE_KEY, _State).required
        except StateNotFoundError:
            return as_status(f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        if required <= declared_features(node_info.node):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node's verdict: it depends on the node and the pod's needs only."""
        try:
            required = state.read(PRE_FILTER_STATE_KEY, _State).required
        except StateNotFoundError:
            return None
        return node_verdicts(table, self, required, state, pod)


def new(args: object | None, handle: Handle, features: Features) -> NodeDeclaredFeatures:
    """The plugin factory (``nodedeclaredfeatures.New``); takes no args."""
    return NodeDeclaredFeatures()


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = NodeDeclaredFeatures()
    _filter: FilterPlugin = NodeDeclaredFeatures()
