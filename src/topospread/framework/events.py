"""Cluster events and queueing hints: what a plugin's EnqueueExtensions declare.

After kube-scheduler v1.37.1: the types are ``staging/src/k8s.io/kube-scheduler/framework/
types.go`` (``ActionType``, ``EventResource``, ``ClusterEvent``, ``ClusterEventWithHint``,
``QueueingHint``); matching, the wildcard unrolling and the node / pod update extractors are
``pkg/scheduler/framework/types.go`` (``MatchClusterEvents``, ``UnrollWildCardResource``,
``UnrollPodEvent``) and ``pkg/scheduler/framework/events.go``
(``NodeSchedulingPropertiesChange``, ``PodSchedulingPropertiesChange``).

A plugin rejecting pods declares, with ``events_to_register()``, the events that may make
those pods schedulable, each optionally with a :data:`QueueingHintFn` that looks at the
changed object and says whether this event can help this pod (``QUEUE``) or not
(``QUEUE_SKIP``). No hint means "queue on any such event". The scheduling queue asks only
the plugins that rejected the pod.

Hints here are pure functions of ``(pod, old, new)`` and the plugin's own args: they run on
the informers' threads, outside any scheduling cycle, so they must not read the cycle's
snapshot.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from topospread.model.objects import Node, Pod

__all__ = [
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_NODE_ADD",
    "EVENT_NODE_DELETE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "KIND_RESOURCES",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
    "node_scheduling_properties_change",
    "pod_scheduling_properties_change",
    "unroll_pod_event",
    "unroll_wildcard_resource",
]


class ActionType(enum.IntFlag):
    """What happened to the resource (``fwk.ActionType``, the same bits in the same order)."""

    NONE = 0
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    """The node's taints, or ``spec.unschedulable`` turned off."""
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_NODE_DECLARED_FEATURE = 1 << 7
    UPDATE_NODE_PREEMPTION_POLICY = 1 << 8
    UPDATE_POD_LABEL = 1 << 9
    UPDATE_POD_SCALE_DOWN = 1 << 10
    UPDATE_POD_SCALE_UP = 1 << 11
    UPDATE_POD_TOLERATION = 1 << 12
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 13
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 14
    ALL = (1 << 15) - 1
    UPDATE = ALL & ~(ADD | DELETE)
    """Any update (``fwk.Update``: every UpdateNode* and UpdatePod* bit)."""


class EventResource(enum.StrEnum):
    """The resource an event is about (``fwk.EventResource``)."""

    POD = "Pod"
    """Any pod: expands to the three below (``UnrollPodEvent``)."""
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    TARGET_POD = "TargetPod"
    """The pending pod itself (its own updates)."""
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


KIND_RESOURCES: Final[Mapping[str, EventResource]] = {
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "CSINode": EventResource.CSI_NODE,
    "CSIDriver": EventResource.CSI_DRIVER,
    "VolumeAttachment": EventResource.VOLUME_ATTACHMENT,
    "CSIStorageCapacity": EventResource.CSI_STORAGE_CAPACITY,
    "StorageClass": EventResource.STORAGE_CLASS,
    "ResourceClaim": EventResource.RESOURCE_CLAIM,
    "ResourceSlice": EventResource.RESOURCE_SLICE,
    "DeviceClass": EventResource.DEVICE_CLASS,
}
"""Object kind -> its event resource, for the kinds besides Pods and Nodes that upstream's
scheduler turns into cluster events (``addAllEventHandlers``); other kinds make none."""


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A resource and what happened to it (``fwk.ClusterEvent``)."""

    resource: EventResource
    action_type: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        """``ClusterEvent.Label``: the custom label, else resource and action."""
        if self.custom_label:
            return self.custom_label
        action = self.action_type.name or "None"
        words = "".join(part.capitalize() for part in action.split("_"))
        return f"{self.resource.value}{words}"

    def is_wildcard(self) -> bool:
        """``ClusterEventIsWildCard``: any resource, every action."""
        return self.resource is EventResource.WILDCARD and self.action_type == ActionType.ALL

    def match(self, incoming: ClusterEvent) -> bool:
        """``MatchClusterEvents(self, incoming)``: ``incoming`` is this event or a more
        specific one (a registered ``Update`` matches an incoming ``UpdateNodeLabel``, not
        the other way round)."""
        return self.is_wildcard() or (
            _match_resources(self.resource, incoming.resource)
            and bool(self.action_type & incoming.action_type)
            and incoming.action_type <= self.action_type
        )


def _match_resources(registered: EventResource, incoming: EventResource) -> bool:
    return (
        registered is EventResource.WILDCARD
        or registered is incoming
        or (
            registered is EventResource.POD
            and incoming
            in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)
        )
    )


class QueueingHint(enum.Enum):
    """A plugin's verdict on one event for one rejected pod (``fwk.QueueingHint``)."""

    QUEUE_SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[[Pod, object | None, object | None], QueueingHint]
"""``(pending pod, old object, new object) -> hint``; an exception counts as QUEUE, as an
error does upstream (the pod must not get stuck)."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """An event a plugin registers, with its optional hint (``fwk.ClusterEventWithHint``)."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None
    """None: queue the pod on every such event (``defaultQueueingHintFn``)."""


EVENT_NODE_ADD: Final = ClusterEvent(EventResource.NODE, ActionType.ADD)
EVENT_NODE_DELETE: Final = ClusterEvent(EventResource.NODE, ActionType.DELETE)
EVENT_ASSIGNED_POD_ADD: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_DELETE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout"
)
EVENT_FORCE_ACTIVATE: Final = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")


def unroll_pod_event(event: ClusterEvent) -> tuple[ClusterEvent, ...]:
    """``UnrollPodEvent``: a ``Pod`` registration stands for the three pod resources."""
    if event.resource is not EventResource.POD:
        return (event,)
    return tuple(
        ClusterEvent(resource, event.action_type, event.custom_label)
        for resource in (
            EventResource.ASSIGNED_POD,
            EventResource.UNSCHEDULED_POD,
            EventResource.TARGET_POD,
        )
    )


def unroll_wildcard_resource() -> tuple[ClusterEventWithHint, ...]:
    """``UnrollWildCardResource``: every resource with every action, no hints — what a
    plugin that does not declare its events is registered for (``defaultEnqueueExtension``)."""
    resources = (
        EventResource.ASSIGNED_POD,
        EventResource.UNSCHEDULED_POD,
        EventResource.TARGET_POD,
        EventResource.NODE,
        EventResource.PERSISTENT_VOLUME,
        EventResource.PERSISTENT_VOLUME_CLAIM,
        EventResource.CSI_NODE,
        EventResource.CSI_DRIVER,
        EventResource.CSI_STORAGE_CAPACITY,
        EventResource.STORAGE_CLASS,
        EventResource.RESOURCE_CLAIM,
        EventResource.DEVICE_CLASS,
        EventResource.RESOURCE_SLICE,
        EventResource.VOLUME_ATTACHMENT,
    )
    return tuple(ClusterEventWithHint(ClusterEvent(r, ActionType.ALL)) for r in resources)


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """``NodeSchedulingPropertiesChange``: the UpdateNode* events of a node update, in
    upstream's extractor order (none when nothing the scheduler watches changed).

    topospread's Node carries no conditions and no preemption policy, so those two never
    fire; NodeDeclaredFeatures is GA in v1.37, so declared features always count.
    """
    events: list[ActionType] = []
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        events.append(ActionType.UPDATE_NODE_TAINT)
    if new.allocatable != old.allocatable:
        events.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if new.labels != old.labels:
        events.append(ActionType.UPDATE_NODE_LABEL)
    if new.taints != old.taints:
        events.append(ActionType.UPDATE_NODE_TAINT)
    if new.metadata.annotations != old.metadata.annotations:
        events.append(ActionType.UPDATE_NODE_ANNOTATION)
    if new.declared_features != old.declared_features:
        events.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [ClusterEvent(EventResource.NODE, action) for action in events]


def pod_scheduling_properties_change(
    new: Pod,
    old: Pod,
    *,
    is_target_pod: bool = False,
    requests: Callable[[Pod], Mapping[str, Fraction]] | None = None,
) -> list[ClusterEvent]:
    """``PodSchedulingPropertiesChange``: the UpdatePod* events of a pod update, or one
    general ``Update`` when none applies.

    ``requests`` gives a pod's exact requests (``resource.PodRequests``, e.g.
    :func:`topospread.model.resources.pod_request_amounts`) for the
    scale-down / scale-up extractors; without it they are not evaluated (the caller then
    gets only the other events).
    """
    if new.node_name:
        resource = EventResource.ASSIGNED_POD
    elif is_target_pod:
        resource = EventResource.TARGET_POD
    else:
        resource = EventResource.UNSCHEDULED_POD
    actions: list[ActionType] = []
    if new.labels != old.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    if requests is not None:
        new_requests, old_requests = requests(new), requests(old)
        if any(
            name not in new_requests or value > new_requests[name]
            for name, value in old_requests.items()
        ):
            actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
        if any(
            name not in old_requests or value > old_requests[name]
            for name, value in new_requests.items()
        ):
            actions.append(ActionType.UPDATE_POD_SCALE_UP)
    if not new.scheduling_gates and old.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.tolerations) != len(old.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if new.resource_claim_statuses != old.resource_claim_statuses:
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]
