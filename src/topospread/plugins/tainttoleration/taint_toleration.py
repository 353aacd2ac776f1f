"""TaintToleration: filters out nodes with an untolerated NoSchedule or NoExecute taint.

Upstream ``pkg/scheduler/framework/plugins/tainttoleration`` (v1.37.1). The Filter
reason no longer names the taint (older releases printed ``{key: value}``); it is
the fixed text ``node(s) had untolerated taint(s)``, UnschedulableAndUnresolvable.
PreferNoSchedule taints only matter to Score, which is not implemented yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod, Taint
from topospread.model.taints import do_not_schedule_taints, find_matching_untolerated_taint
from topospread.plugins import names

__all__ = ["ERR_REASON_NOT_MATCH", "ERR_REASON_UNTOLERATED", "NAME", "TaintToleration", "new"]

NAME: Final = names.TAINT_TOLERATION

ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"
"""Upstream's exported ``ErrReasonNotMatch``; Filter does not return it."""
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
"""The Filter reason for a node with an untolerated NoSchedule/NoExecute taint."""


class TaintToleration:
    """Rejects nodes carrying a NoSchedule/NoExecute taint the pod does not tolerate."""

    def __init__(self, features: Features) -> None:
        self._comparison_operators = features.enable_taint_toleration_comparison_operators

    @property
    def name(self) -> str:
        """``TaintToleration``."""
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Nothing to precompute (upstream skips only for deferred in-place resizes)."""
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the verdict does not depend on other pods."""
        return None

    def untolerated_taint(self, pod: Pod, node_info: NodeInfo) -> Taint | None:
        """The first NoSchedule/NoExecute taint of the node that the pod does not tolerate."""
        return find_matching_untolerated_taint(
            node_info.node.taints,
            pod.tolerations,
            do_not_schedule_taints,
            comparison_operators=self._comparison_operators,
        )

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node if any NoSchedule/NoExecute taint is untolerated."""
        if self.untolerated_taint(pod, node_info) is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,))


def new(args: object | None, handle: Handle, features: Features) -> TaintToleration:
    """The plugin factory (``tainttoleration.New``); takes no args."""
    return TaintToleration(features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = TaintToleration(Features())
    _filter: FilterPlugin = TaintToleration(Features())
