"""NodeName: a pod with ``spec.nodeName`` fits only that node.

Upstream ``pkg/scheduler/framework/plugins/nodename`` (v1.37.1). Since 1.37 its PreFilter
also narrows the candidates to the named node, so every other node is
UnschedulableAndUnresolvable without running Filter.
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
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.helper.batch import node_verdicts

__all__ = ["ERR_REASON", "NAME", "NodeName", "fits", "new"]

NAME: Final = names.NODE_NAME

ERR_REASON: Final = "node(s) didn't match the requested node name"
"""Filter reason when ``spec.nodeName`` names another node."""


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod names no node or names this one (``nodename.Fits``)."""
    return not pod.node_name or pod.node_name == node_info.node.name


class NodeName:
    """Restricts a pod with ``spec.nodeName`` to that node."""

    @property
    def name(self) -> str:
        """``NodeName``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodename/node_name.go``): a new node; no hint, the pod
        is retried with backoff anyway."""
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Narrow the candidates to ``spec.nodeName`` when it is set."""
        if pod.node_name:
            return PreFilterResult(frozenset((pod.node_name,))), None
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the verdict does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject every node but the one named in ``spec.nodeName``."""
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node's verdict: it depends on the node's name and ``spec.nodeName``."""
        return node_verdicts(table, self, pod.node_name, state, pod)


def new(args: object | None, handle: Handle, features: Features) -> NodeName:
    """The plugin factory (``nodename.New``); takes no args."""
    return NodeName()


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = NodeName()
    _filter: FilterPlugin = NodeName()
