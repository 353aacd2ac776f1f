"""NodeUnschedulable: filters out nodes with ``spec.unschedulable: true``.

Upstream ``pkg/scheduler/framework/plugins/nodeunschedulable`` (v1.37.1): a pod that
tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint also tolerates
``spec.unschedulable``, whether or not the node carries that taint. The rejection is
UnschedulableAndUnresolvable: preemption cannot uncordon a node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState
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
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, NodeTable
from topospread.framework.status import Code, Status
from topospread.model.objects import Node, Pod, Taint, TaintEffect
from topospread.model.taints import TAINT_NODE_UNSCHEDULABLE, tolerations_tolerate_taint
from topospread.plugins import names
from topospread.plugins.helper.batch import node_verdicts

__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "new",
]

NAME: Final = names.NODE_UNSCHEDULABLE

ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
"""Kept for parity with upstream, which no longer returns it."""
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
"""Filter reason for a cordoned node the pod does not tolerate."""

_UNSCHEDULABLE_TAINT: Final = Taint(
    key=TAINT_NODE_UNSCHEDULABLE, effect=TaintEffect.NO_SCHEDULE.value
)


class NodeUnschedulable:
    """Rejects ``spec.unschedulable`` nodes unless the pod tolerates the unschedulable taint."""

    def __init__(self, features: Features) -> None:
        self._comparison_operators = features.enable_taint_toleration_comparison_operators

    @property
    def name(self) -> str:
        """``NodeUnschedulable``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodeunschedulable/node_unschedulable.go``)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            # A new toleration: no hint here (upstream's checks the unschedulable taint).
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION)
            ),
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: a node added schedulable, or one that stopped
        being unschedulable."""
        if not isinstance(new, Node):
            return QueueingHint.QUEUE
        if (isinstance(old, Node) and old.unschedulable and not new.unschedulable) or (
            old is None and not new.unschedulable
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Nothing to precompute.

        Upstream skips here only for pods with a deferred in-place resize
        (InPlacePodVerticalScalingSchedulerPreemption, alpha and off), which
        topospread does not model.
        """
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the verdict does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a cordoned node unless the pod tolerates ``node.kubernetes.io/unschedulable``."""
        if not node_info.node.unschedulable:
            return None
        if tolerations_tolerate_taint(
            pod.tolerations, _UNSCHEDULABLE_TAINT, self._comparison_operators
        ):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node's verdict: it depends on the node and the pod's tolerations."""
        return node_verdicts(table, self, pod.tolerations, state, pod)


def new(args: object | None, handle: Handle, features: Features) -> NodeUnschedulable:
    """The plugin factory (``nodeunschedulable.New``); takes no args."""
    return NodeUnschedulable(features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = NodeUnschedulable(Features())
    _filter: FilterPlugin = NodeUnschedulable(Features())
