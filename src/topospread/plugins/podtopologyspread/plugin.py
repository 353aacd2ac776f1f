"""The PodTopologySpread plugin object: construction, args, default constraints.

Extension points: PreFilter (with AddPod/RemovePod), Filter, PreScore, Score and
NormalizeScore. Default weight in the default profile: 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.framework.config.types import PodTopologySpreadArgs
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
from topospread.model.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Pod,
    TopologySpreadConstraint,
    UnsatisfiableConstraintAction,
)
from topospread.plugins import names
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    SelectorError,
    default_selector,
    parse_constraints,
)
from topospread.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    compute_pre_filter_state,
    filter_batch,
    filter_node,
    get_pre_filter_state,
    update_with_pod,
)
from topospread.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    compute_pre_score_state,
    get_pre_score_state,
    normalize_batch,
    normalize_scores,
    score_batch,
    score_node,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
]

NAME: Final = names.POD_TOPOLOGY_SPREAD

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
"""Filter reason for a skew violation (Unschedulable)."""
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)
"""Filter reason for a node without the topology key (UnschedulableAndUnresolvable)."""

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(
        max_skew=3,
        topology_key=LABEL_HOSTNAME,
        when_unsatisfiable=UnsatisfiableConstraintAction.SCHEDULE_ANYWAY,
    ),
    TopologySpreadConstraint(
        max_skew=5,
        topology_key=LABEL_TOPOLOGY_ZONE,
        when_unsatisfiable=UnsatisfiableConstraintAction.SCHEDULE_ANYWAY,
    ),
)
"""Used when args say ``defaultingType: System``: soft hostname (3) and zone (5) spreading."""

_DO_NOT_SCHEDULE = UnsatisfiableConstraintAction.DO_NOT_SCHEDULE.value
_SCHEDULE_ANYWAY = UnsatisfiableConstraintAction.SCHEDULE_ANYWAY.value


class PodTopologySpread:
    """Ensures pods' topologySpreadConstraints are satisfied (hard) and preferred (soft)."""

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle, features: Features) -> None:
        self._handle = handle
        self._features = features
        self._node_inclusion_policy = features.enable_node_inclusion_policy_in_pod_topology_spread
        self._match_label_keys = features.enable_match_label_keys_in_pod_topology_spread
        self._comparison_operators = features.enable_taint_toleration_comparison_operators
        self.system_defaulted = args.defaulting_type == "System"
        """Whether the built-in defaults are in force (relaxes key requirements in scoring)."""
        self.default_constraints: tuple[TopologySpreadConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints
        )
        """Constraints applied to pods that have none of their own."""
        self._last_parsed: dict[
            str,
            tuple[
                Sequence[TopologySpreadConstraint], tuple[str | None, ...], tuple[Constraint, ...]
            ],
        ] = {}
        """Per action: the last constraints parsed, the pod label values their
        matchLabelKeys read, and the result."""

    @property
    def name(self) -> str:
        """``PodTopologySpread``."""
        return NAME

    # -- constraints -------------------------------------------------------------

    def _parse(
        self, constraints: Sequence[TopologySpreadConstraint], pod: Pod, action: str
    ) -> tuple[Constraint, ...]:
        # The replicas of one workload carry equal constraints, and parsing builds label
        # selectors: the last parse per action is reused while the constraints are equal
        # and the pod labels that matchLabelKeys reads have the same values.
        labels = pod.labels
        read: tuple[str | None, ...] = ()
        if self._match_label_keys:
            read = tuple(labels.get(key) for c in constraints for key in c.match_label_keys)
        last = self._last_parsed.get(action)
        if (
            last is not None
            and last[1] == read
            and (last[0] is constraints or last[0] == constraints)
        ):
            return last[2]
        parsed = parse_constraints(
            constraints,
            labels,
            action,
            match_label_keys=self._match_label_keys,
            node_inclusion_policy=self._node_inclusion_policy,
        )
        self._last_parsed[action] = (constraints, read, parsed)
        return parsed

    def _default_constraints(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        # buildDefaultConstraints: one selector, deduced from Services and the controller,
        # replaces every default's selector; none deduced ⇒ no default constraints.
        constraints = self._parse(self.default_constraints, pod, action)
        if not constraints:
            return ()
        selector = default_selector(pod, self._handle.objects)
        if selector.empty:
            return ()
        return tuple(
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in constraints
        )

    def constraints_for(self, pod: Pod, action: str) -> tuple[Constraint, ...]:
        """The pod's own constraints of ``action``, or the defaults when it has none at all."""
        if pod.topology_spread_constraints:
            return self._parse(pod.topology_spread_constraints, pod, action)
        return self._default_constraints(pod, action)

    # -- PreFilter / Filter -----------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``podtopologyspread/plugin.go``). Upstream's hints
        (whether the pod or node matches a constraint's selector or topology keys) are not
        evaluated: these events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.ASSIGNED_POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.TARGET_POD,
                    ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                )
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count matching pods per domain; Skip when the pod has no hard constraints."""
        try:
            constraints = self.constraints_for(pod, _DO_NOT_SCHEDULE)
        except SelectorError as exc:
            return None, as_status(f"get constraints from pod: {exc}")
        if not constraints:
            return None, Status(Code.SKIP)
        state.write(
            PRE_FILTER_STATE_KEY,
            compute_pre_filter_state(
                pod,
                nodes,
                constraints,
                node_inclusion_policy=self._node_inclusion_policy,
                comparison_operators=self._comparison_operators,
                snapshot=self._handle.snapshot,
            ),
        )
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod keep the counts right for nominated pods and preemption."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_to_add`` as running on ``node_info``."""
        return self._update(state, pod_to_schedule, pod_to_add, node_info, +1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Stop counting ``pod_to_remove`` on ``node_info``."""
        return self._update(state, pod_to_schedule, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, preemptor: Pod, pod: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        try:
            s = get_pre_filter_state(state)
        except StateNotFoundError as exc:
            return as_status(exc)
        update_with_pod(
            s,
            pod,
            preemptor,
            node_info.node,
            delta,
            node_inclusion_policy=self._node_inclusion_policy,
            comparison_operators=self._comparison_operators,
        )
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject nodes that lack a topology key or would exceed maxSkew."""
        try:
            s = get_pre_filter_state(state)
        except StateNotFoundError as exc:
            return as_status(exc)
        return filter_node(
            s,
            pod,
            node_info.node,
            ERR_REASON_NODE_LABEL_NOT_MATCH,
            ERR_REASON_CONSTRAINTS_NOT_MATCH,
        )

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """:meth:`filter` for every node at once."""
        try:
            s = get_pre_filter_state(state)
        except StateNotFoundError:
            return None
        return filter_batch(s, pod, table)

    # -- PreScore / Score -------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Count matching pods per domain of the feasible nodes; Skip without soft constraints."""
        all_nodes = self._handle.snapshot.node_infos
        if not all_nodes:
            return Status(Code.SKIP)
        try:
            constraints = self.constraints_for(pod, _SCHEDULE_ANYWAY)
        except SelectorError as exc:
            return as_status(f"calculating preScoreState: {exc}")
        if not constraints:
            return Status(Code.SKIP)
        # Only the System defaults let nodes lack some keys: zone-less clusters still get
        # hostname spreading.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        state.write(
            PRE_SCORE_STATE_KEY,
            compute_pre_score_state(
                pod,
                constraints,
                filtered_nodes,
                all_nodes,
                require_all_topologies=require_all,
                node_inclusion_policy=self._node_inclusion_policy,
                comparison_operators=self._comparison_operators,
                snapshot=self._handle.snapshot,
                filtered_rows=state.feasible_rows,
            ),
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The raw score: weighted matching pods in the node's domains."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError as exc:
            return 0, as_status(exc)
        return score_node(s, pod, node_info), None

    def score_extensions(self) -> ScoreExtensions | None:
        """NormalizeScore is needed: fewer matching pods must score higher."""
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Map raw scores into 0..100, the least crowded node best."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError as exc:
            return as_status(exc)
        normalize_scores(s, scores)
        return None

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """:meth:`score` of many nodes at once."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError:
            return None
        return score_batch(s, table, rows)

    def normalize_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, scores: IntArray
    ) -> IntArray | None:
        """:meth:`normalize_score` over an array."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError:
            return None
        return normalize_batch(s, table, rows, scores)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = PodTopologySpread.__new__(PodTopologySpread)
    _filter: FilterPlugin = PodTopologySpread.__new__(PodTopologySpread)
    _pre_score: PreScorePlugin = PodTopologySpread.__new__(PodTopologySpread)
    _score: ScorePlugin = PodTopologySpread.__new__(PodTopologySpread)
