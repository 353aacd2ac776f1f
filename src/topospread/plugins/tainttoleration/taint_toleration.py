"""TaintToleration: filters out nodes with an untolerated NoSchedule or NoExecute taint.

Upstream ``pkg/scheduler/framework/plugins/tainttoleration`` (v1.37.1). The Filter
reason no longer names the taint (older releases printed ``{key: value}``); it is
the fixed text ``node(s) had untolerated taint(s)``, UnschedulableAndUnresolvable.

PreferNoSchedule taints only matter to scoring (default weight 3). PreScore keeps the
pod's tolerations whose effect is empty or PreferNoSchedule (it never skips); Score
counts the node's PreferNoSchedule taints none of them tolerates; NormalizeScore is
``DefaultNormalizeScore`` reversed: ``100 - 100 * count // max count``, so nodes
without such taints get 100 (and all get 100 when no node has any).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

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
    MAX_NODE_SCORE,
    FilterPlugin,
    Handle,
    NodeScore,
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
from topospread.model.objects import Node, Pod, Taint, TaintEffect, Toleration
from topospread.model.taints import (
    do_not_schedule_taints,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from topospread.plugins import names
from topospread.plugins.helper import default_normalize_score
from topospread.plugins.helper.batch import default_normalize_batch, node_scores, node_verdicts

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "TaintToleration",
    "new",
]

NAME: Final = names.TAINT_TOLERATION

PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"
"""Upstream's exported ``ErrReasonNotMatch``; Filter does not return it."""
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
"""The Filter reason for a node with an untolerated NoSchedule/NoExecute taint."""


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's tolerations that can tolerate a PreferNoSchedule taint."""

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations with an empty or PreferNoSchedule effect.

    ``getAllTolerationPreferNoSchedule``.
    """
    return tuple(
        t for t in tolerations if not t.effect or t.effect == TaintEffect.PREFER_NO_SCHEDULE
    )


class TaintToleration:
    """Rejects nodes carrying a NoSchedule/NoExecute taint the pod does not tolerate."""

    def __init__(self, features: Features) -> None:
        self._comparison_operators = features.enable_taint_toleration_comparison_operators

    @property
    def name(self) -> str:
        """``TaintToleration``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``tainttoleration/taint_toleration.go``)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            # A new toleration: no hint here (upstream's checks the new tolerations).
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION)
            ),
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: the node had an untolerated NoSchedule or
        NoExecute taint (or is new) and has none now."""
        if not isinstance(new, Node):
            return QueueingHint.QUEUE

        def untolerated(node: Node) -> bool:
            taint = find_matching_untolerated_taint(
                node.taints,
                pod.tolerations,
                do_not_schedule_taints,
                comparison_operators=self._comparison_operators,
            )
            return taint is not None

        was_untolerated = untolerated(old) if isinstance(old, Node) else True
        if was_untolerated and not untolerated(new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

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

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node's verdict: it depends on the node's taints and the pod's tolerations."""
        return node_verdicts(table, self, pod.tolerations, state, pod)

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Keep the tolerations that matter to PreferNoSchedule taints; never skips."""
        state.write(
            PRE_SCORE_STATE_KEY, _PreScoreState(prefer_no_schedule_tolerations(pod.tolerations))
        )
        return None

    def count_intolerable_prefer_no_schedule(
        self, taints: Sequence[Taint], tolerations: Sequence[Toleration]
    ) -> int:
        """PreferNoSchedule taints none of ``tolerations`` tolerates."""
        return sum(
            1
            for taint in taints
            if taint.effect == TaintEffect.PREFER_NO_SCHEDULE
            and not tolerations_tolerate_taint(tolerations, taint, self._comparison_operators)
        )

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The number of the node's untolerated PreferNoSchedule taints (lower is better)."""
        try:
            s = state.read(PRE_SCORE_STATE_KEY, _PreScoreState)
        except StateNotFoundError:
            return 0, as_status(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        except TypeError as exc:
            return 0, as_status(exc)
        count = self.count_intolerable_prefer_no_schedule(
            node_info.node.taints, s.tolerations_prefer_no_schedule
        )
        return count, None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Reverse-scale onto 0..100: fewest untolerated taints get 100."""
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Raw scores of many nodes: they depend on the node's taints and the tolerations."""
        return node_scores(table, self, pod.tolerations, state, pod, rows)

    def normalize_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, scores: IntArray
    ) -> IntArray | None:
        """:meth:`normalize_score` over an array."""
        return default_normalize_batch(MAX_NODE_SCORE, True, scores)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin: it normalizes its scores."""
        return self


def new(args: object | None, handle: Handle, features: Features) -> TaintToleration:
    """The plugin factory (``tainttoleration.New``); takes no args."""
    return TaintToleration(features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = TaintToleration(Features())
    _filter: FilterPlugin = TaintToleration(Features())
    _pre_score: PreScorePlugin = TaintToleration(Features())
    _score: ScorePlugin = TaintToleration(Features())
    _normalize: ScoreExtensions = TaintToleration(Features())
