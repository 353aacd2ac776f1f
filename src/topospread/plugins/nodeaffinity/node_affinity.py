"""NodeAffinity: a pod fits nodes matching its nodeSelector and required node affinity.

Upstream ``pkg/scheduler/framework/plugins/nodeaffinity`` (v1.37.1):

* PreFilter returns Skip when the pod has no required node affinity, no nodeSelector
  and the profile sets no ``addedAffinity``.
* PreFilter narrows the candidate nodes when *every* required term pins node names
  with a ``metadata.name In`` field expression: the names of one term are intersected
  over its expressions, then the terms are unioned. If one term has no such
  expression, all nodes stay candidates. If the union ends up empty, the terms
  contradict each other and PreFilter returns UnschedulableAndUnresolvable
  ``pod affinity terms conflict``.
* Filter checks the scheduler-enforced ``addedAffinity`` first, then the pod's own
  nodeSelector AND required affinity; both rejections are UnschedulableAndUnresolvable.
  Terms that fail to parse never match.
* PreScore returns Skip when the pod has no preferred node affinity and the profile's
  ``addedAffinity`` has no preferred terms; a preferred term that fails to parse is an
  Error. Score is the sum of the weights of the matching preferred terms, the pod's
  own and ``addedAffinity``'s; NormalizeScore scales them so the best node gets 100
  (``DefaultNormalizeScore``, ``100 * score // max``). Default weight: 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.errors import ConfigError
from topospread.framework.config.types import NodeAffinityArgs
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
from topospread.model.nodeaffinity import (
    OBJECT_NAME_FIELD,
    NodeSelectorMatcher,
    NodeSelectorParseError,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    node_selection_key,
    node_selector,
    preferred_scheduling_terms,
    required_node_affinity,
)
from topospread.model.objects import Node, Pod
from topospread.plugins import names
from topospread.plugins.helper import default_normalize_score
from topospread.plugins.helper.batch import default_normalize_batch, node_scores, node_verdicts

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "NodeAffinityArgs",
    "new",
]

NAME: Final = names.NODE_AFFINITY

PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
"""Filter reason when the pod's own nodeSelector or required affinity does not match."""
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
"""Filter reason when the profile's ``addedAffinity`` does not match."""
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
"""PreFilter reason when the ``metadata.name`` field terms leave no node."""


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's parsed nodeSelector and required affinity; unaffected by other pods."""

    required: RequiredNodeAffinity

    def clone(self) -> _PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's parsed preferred terms; None when the pod has none."""

    preferred: PreferredSchedulingTerms | None

    def clone(self) -> _PreScoreState:
        return self


def _pod_preferred_terms(pod: Pod) -> PreferredSchedulingTerms | None:
    """``getPodPreferredNodeAffinity``; raises NodeSelectorParseError for a bad term."""
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    # Upstream tests the slice for nil: an explicit empty list still gets (empty) terms,
    # so PreScore does not skip and every node scores 0.
    if not affinity.node_affinity.preferred and not affinity.node_affinity.preferred_given:
        return None
    return preferred_scheduling_terms(affinity.node_affinity.preferred)


class NodeAffinity:
    """Filters nodes by the pod's nodeSelector, required node affinity and ``addedAffinity``."""

    def __init__(self, args: NodeAffinityArgs, features: Features) -> None:
        self._added_node_selector: NodeSelectorMatcher | None = None
        self._added_pref_sched_terms: PreferredSchedulingTerms | None = None
        added = args.added_affinity
        if added is None:
            return
        # ValidateNodeAffinityArgs, then New: a term that does not parse is a config error.
        errors: list[str] = []
        if added.required is not None:
            try:
                self._added_node_selector = node_selector(
                    added.required, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                )
            except NodeSelectorParseError as exc:
                errors.append(str(exc))
        if added.preferred:
            try:
                self._added_pref_sched_terms = preferred_scheduling_terms(
                    added.preferred, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
                )
            except NodeSelectorParseError as exc:
                errors.append(str(exc))
        if errors:
            raise ConfigError(NAME, errors)

    @property
    def name(self) -> str:
        """``NodeAffinity``."""
        return NAME

    @property
    def added_preferred_terms(self) -> PreferredSchedulingTerms | None:
        """The parsed preferred terms of ``addedAffinity``, for Score."""
        return self._added_pref_sched_terms

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodeaffinity/node_affinity.go``)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: the node (now) matches ``addedAffinity`` and
        the pod's required affinity, and did not match it before an update."""
        if not isinstance(new, Node):
            return QueueingHint.QUEUE
        if self._added_node_selector is not None and not self._added_node_selector.match(new):
            return QueueingHint.QUEUE_SKIP
        required = required_node_affinity(pod)
        if not required.match(new):
            return QueueingHint.QUEUE_SKIP
        if not isinstance(old, Node):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP if required.match(old) else QueueingHint.QUEUE

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Parse the pod's affinity once; narrow to pinned node names where every term pins."""
        affinity = pod.affinity
        required = (
            affinity.node_affinity.required
            if affinity is not None and affinity.node_affinity is not None
            else None
        )
        # A nil and an empty nodeSelector are one and the same once decoded.
        if required is None and self._added_node_selector is None and not pod.node_selector:
            return None, Status(Code.SKIP)

        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(required_node_affinity(pod)))

        if required is None or not required.node_selector_terms:
            return None, None

        node_names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == OBJECT_NAME_FIELD and req.operator == "In":
                    # Expressions of one term are ANDed: intersect their names.
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                # Terms are ORed: one term without a name pin admits every node.
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))
        if node_names:
            return PreFilterResult(frozenset(node_names)), None
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject nodes outside ``addedAffinity``, then nodes outside the pod's affinity."""
        node = node_info.node
        if self._added_node_selector is not None and not self._added_node_selector.match(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,))
        try:
            required = state.read(PRE_FILTER_STATE_KEY, _PreFilterState).required
        except (StateNotFoundError, TypeError):
            # PreFilter skipped or disabled: compute here, as upstream falls back to.
            required = required_node_affinity(pod)
        if not required.match(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,))
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node's verdict: it depends on the node and the pod's node selection."""
        return node_verdicts(table, self, node_selection_key(pod), state, pod)

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Parse the pod's preferred terms; Skip when neither the pod nor the profile has any."""
        try:
            preferred = _pod_preferred_terms(pod)
        except NodeSelectorParseError as exc:
            return as_status(exc)
        if preferred is None and self._added_pref_sched_terms is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The summed weights of the matching preferred terms, ``addedAffinity``'s and the pod's."""
        node = node_info.node
        count = 0
        if self._added_pref_sched_terms is not None:
            count += self._added_pref_sched_terms.score(node)
        try:
            preferred = state.read(PRE_SCORE_STATE_KEY, _PreScoreState).preferred
        except (StateNotFoundError, TypeError):
            try:
                preferred = _pod_preferred_terms(pod)
            except NodeSelectorParseError as exc:
                return 0, as_status(exc)
        if preferred is not None:
            count += preferred.score(node)
        return count, None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Scale onto 0..100, the highest raw score becoming 100 (``DefaultNormalizeScore``)."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Raw scores of many nodes: they depend on the node and the pod's node affinity."""
        return node_scores(table, self, node_selection_key(pod), state, pod, rows)

    def normalize_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, scores: IntArray
    ) -> IntArray | None:
        """:meth:`normalize_score` over an array."""
        return default_normalize_batch(MAX_NODE_SCORE, False, scores)

    def score_extensions(self) -> ScoreExtensions | None:
        """This plugin: it normalizes its scores."""
        return self


def new(args: object | None, handle: Handle, features: Features) -> NodeAffinity:
    """The plugin factory (``nodeaffinity.New``); ``args`` must be NodeAffinityArgs or None."""
    if args is None:
        args = NodeAffinityArgs()
    if not isinstance(args, NodeAffinityArgs):
        raise ConfigError(
            NAME, [f"args are not of type NodeAffinityArgs, got {type(args).__name__}"]
        )
    return NodeAffinity(args, features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = NodeAffinity(NodeAffinityArgs(), Features())
    _filter: FilterPlugin = NodeAffinity(NodeAffinityArgs(), Features())
    _pre_score: PreScorePlugin = NodeAffinity(NodeAffinityArgs(), Features())
    _score: ScorePlugin = NodeAffinity(NodeAffinityArgs(), Features())
    _normalize: ScoreExtensions = NodeAffinity(NodeAffinityArgs(), Features())
