"""SchedulingGates: the PreEnqueue that holds gated pods.

Upstream ``pkg/scheduler/framework/plugins/schedulinggates`` (v1.37.1): a pod with
scheduling gates is UnschedulableAndUnresolvable with ``waiting for scheduling gates:
[a b]`` (Go's ``%v`` of the gate names) and is not tried until an update removes every
gate (``UpdatePodSchedulingGatesEliminated``, whose hint queues only the pod itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod
from topospread.plugins import names

__all__ = ["NAME", "SchedulingGates", "new"]

NAME: Final = names.SCHEDULING_GATES


class SchedulingGates:
    """Holds a pod while it has scheduling gates."""

    @property
    def name(self) -> str:
        """``SchedulingGates``."""
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """``PreEnqueue``: None without gates."""
        if not pod.scheduling_gates:
            return None
        gates = " ".join(pod.scheduling_gates)
        return Status.of(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{gates}]"
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """``EventsToRegister``: the pod's own update that removed its last gate."""
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                _gates_eliminated,
            ),
        )


def _gates_eliminated(pod: Pod, old: object | None, new: object | None) -> QueueingHint:
    # isSchedulableAfterUpdatePodSchedulingGatesEliminated: only the pod's own update.
    del old
    if isinstance(new, Pod) and new.metadata.uid == pod.metadata.uid:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: object | None, handle: Handle, features: Features) -> Plugin:
    """The factory (``schedulinggates.New``); SchedulingGates takes no args."""
    del args, handle, features
    return SchedulingGates()
