"""DynamicResources for pods without resource claims: PreFilter and PostFilter only.

Upstream ``pkg/scheduler/framework/plugins/dynamicresources`` (v1.37.1, DRA GA and on).
topospread refuses pods with resource claims (explain and the simulator say so), so for
every pod it schedules the plugin's PreFilter writes an empty state and returns Skip (its
Filter, Score and the rest do not run), and its PostFilter — which runs before
DefaultPreemption in the default profile — returns Unschedulable without reasons. When
PreFilter stopped before reaching this plugin (an earlier plugin rejected the pod), the
state is missing and PostFilter returns Error ``not found``, which ends the PostFilter
phase: preemption is not attempted and the FailedScheduling message ends in
``not found``, exactly as kube-scheduler's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.framework.cycle_state import CycleState, StateData, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    Handle,
    NodeToStatus,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import Pod
from topospread.plugins import names

__all__ = ["NAME", "DynamicResources", "new"]

NAME: Final = names.DYNAMIC_RESOURCES
_STATE_KEY: Final = "PreFilter" + NAME


class _State:
    """The (empty) ``stateData`` PreFilter writes for a pod without claims."""

    def clone(self) -> StateData:
        """Immutable here: itself."""
        return self


class DynamicResources:
    """PreFilter (Skip for pods without claims) and PostFilter of DynamicResources."""

    @property
    def name(self) -> str:
        """``DynamicResources``."""
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Record that PreFilter ran; a pod without claims has nothing else to check."""
        state.write(_STATE_KEY, _State())
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: no AddPod/RemovePod."""
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """No claims to deallocate: Unschedulable; Error when PreFilter never ran."""
        try:
            state.read(_STATE_KEY, _State)
        except StateNotFoundError:
            # getStateData: CycleState.Read's fwk.ErrNotFound.
            return None, as_status("not found")
        return None, Status(Code.UNSCHEDULABLE)


def new(args: object | None, handle: Handle, features: Features) -> DynamicResources:
    """The registry factory; DynamicResources has no args."""
    return DynamicResources()
