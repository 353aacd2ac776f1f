"""The InterPodAffinity plugin: places pods near or away from other pods, by topology.

Extension points: PreFilter (with AddPod/RemovePod), Filter, PreScore, Score and
NormalizeScore. Default weight in the default profile: 2.

Skip conditions, as upstream:

* PreFilter skips when the incoming pod has no required (anti-)affinity terms and no
  existing pod's required anti-affinity term matches it;
* PreScore skips when ``ignorePreferredTermsOfExistingPods`` is set and the incoming pod
  has no preferred terms, and when no term of any pod matched anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.errors import ConfigError
from topospread.framework.config.types import InterPodAffinityArgs
from topospread.framework.config.validation import validate_inter_pod_affinity_args
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
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    compute_pre_filter_state,
    filter_node,
    get_pre_filter_state,
    update_with_pod,
)
from topospread.plugins.interpodaffinity.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    compute_topology_score,
    get_pre_score_state,
    normalize_scores,
    score_node,
)
from topospread.plugins.interpodaffinity.terms import (
    PodTerms,
    WeightedAffinityTerm,
    merge_namespaces,
    namespace_labels,
    parse_pod_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "InterPodAffinity",
    "new",
]

NAME: Final = names.INTER_POD_AFFINITY

_NOT_FOUND_PRE_FILTER: Final = f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
_NOT_FOUND_PRE_SCORE: Final = f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
_TERMS_CACHE_LIMIT: Final = 1 << 16


def _aggregate(errors: Sequence[str]) -> str:
    # utilerrors.Aggregate.Error(): one error as is, several as "[a, b]".
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class InterPodAffinity:
    """Enforces required inter-pod (anti-)affinity and scores preferred terms."""

    def __init__(self, args: InterPodAffinityArgs, handle: Handle, features: Features) -> None:
        self.args = args
        """The plugin's (defaulted, validated) args."""
        self._handle = handle
        self._features = features
        # Parsed terms of existing pods, as upstream's PodInfo keeps them; keyed by
        # identity, the pod kept alongside so that a reused id never hits.
        self._terms: dict[int, tuple[Pod, PodTerms]] = {}

    @property
    def name(self) -> str:
        """``InterPodAffinity``."""
        return NAME

    def terms_of(self, pod: Pod) -> PodTerms:
        """An existing pod's parsed terms (groups that fail to parse are empty)."""
        cached = self._terms.get(id(pod))
        if cached is not None and cached[0] is pod:
            return cached[1]
        terms, _ = parse_pod_terms(pod)
        if len(self._terms) >= _TERMS_CACHE_LIMIT:
            self._terms.clear()
        self._terms[id(pod)] = (pod, terms)
        return terms

    # -- PreFilter / Filter -----------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``interpodaffinity/plugin.go``). Upstream's hints
        (whether the changed pod matches a term, the node a topology key) are not
        evaluated: these events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.ASSIGNED_POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count matching pods per domain; Skip when nothing required is in play."""
        terms, errors = parse_pod_terms(pod)
        if errors:
            return None, Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"parsing pod: {_aggregate(errors)}",)
            )
        objects = self._handle.objects
        affinity_terms = tuple(merge_namespaces(t, objects) for t in terms.required_affinity)
        anti_terms = tuple(merge_namespaces(t, objects) for t in terms.required_anti_affinity)
        snapshot = self._handle.snapshot
        if not affinity_terms and not anti_terms and nodes is snapshot.node_infos:
            # getExistingAntiAffinityCounts visits only HavePodsWithRequiredAntiAffinityList.
            nodes = snapshot.have_pods_with_required_anti_affinity()
        s = compute_pre_filter_state(
            pod,
            affinity_terms,
            anti_terms,
            namespace_labels(pod.namespace, objects),
            nodes,
            self.terms_of,
        )
        if not s.existing_anti_affinity_counts and not affinity_terms and not anti_terms:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod keep the counts right for nominated pods and preemption."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_to_add`` as running on ``node_info``."""
        return self._update(state, pod_to_add, node_info, +1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Stop counting ``pod_to_remove`` on ``node_info``."""
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        try:
            s = get_pre_filter_state(state)
        except StateNotFoundError:
            return as_status(_NOT_FOUND_PRE_FILTER)
        update_with_pod(s, pod, node_info.node, delta, self.terms_of(pod))
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject nodes that break required affinity, anti-affinity, or others' anti-affinity."""
        try:
            s = get_pre_filter_state(state)
        except StateNotFoundError:
            return as_status(_NOT_FOUND_PRE_FILTER)
        return filter_node(s, node_info.node)

    # -- PreScore / Score -------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Sum preferred-term weights per domain over all nodes; Skip when nothing matched."""
        affinity = pod.affinity
        has_constraints = affinity is not None and bool(
            affinity.pod_affinity_preferred or affinity.pod_anti_affinity_preferred
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        terms, errors = parse_pod_terms(pod)
        if errors:
            return as_status(f"failed to parse pod: {_aggregate(errors)}")
        objects = self._handle.objects
        merged = PodTerms(
            terms.required_affinity,
            terms.required_anti_affinity,
            tuple(
                WeightedAffinityTerm(merge_namespaces(w.term, objects), w.weight)
                for w in terms.preferred_affinity
            ),
            tuple(
                WeightedAffinityTerm(merge_namespaces(w.term, objects), w.weight)
                for w in terms.preferred_anti_affinity
            ),
        )
        # Unless the incoming pod has preferred terms, upstream visits only the nodes with
        # pods with affinity terms (HavePodsWithAffinityList), and only those pods.
        snapshot = self._handle.snapshot
        topology_score = compute_topology_score(
            pod,
            merged,
            namespace_labels(pod.namespace, objects),
            snapshot.node_infos if has_constraints else snapshot.have_pods_with_affinity(),
            self.terms_of,
            hard_pod_affinity_weight=self.args.hard_pod_affinity_weight,
            only_pods_with_affinity=not has_constraints,
        )
        if not topology_score:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The raw score: summed weights of the node's domains."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError:
            return 0, as_status(_NOT_FOUND_PRE_SCORE)
        return score_node(s, node_info.node), None

    def score_extensions(self) -> ScoreExtensions | None:
        """NormalizeScore maps the signed raw scores onto 0..100."""
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Scale raw scores linearly: the lowest 0, the highest 100."""
        try:
            s = get_pre_score_state(state)
        except StateNotFoundError:
            return as_status(_NOT_FOUND_PRE_SCORE)
        normalize_scores(s, scores)
        return None


def new(args: object | None, handle: Handle, features: Features) -> InterPodAffinity:
    """The plugin factory (``interpodaffinity.New``); ``args`` must be InterPodAffinityArgs."""
    if args is None:
        args = InterPodAffinityArgs()
    if not isinstance(args, InterPodAffinityArgs):
        raise ConfigError(
            NAME, [f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}"]
        )
    # New validates its args itself, so a plugin built outside a profile is checked too.
    errors = validate_inter_pod_affinity_args("", args)
    if errors:
        raise ConfigError(NAME, errors)
    return InterPodAffinity(args, handle, features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = InterPodAffinity.__new__(InterPodAffinity)
    _filter: FilterPlugin = InterPodAffinity.__new__(InterPodAffinity)
    _pre_score: PreScorePlugin = InterPodAffinity.__new__(InterPodAffinity)
    _score: ScorePlugin = InterPodAffinity.__new__(InterPodAffinity)
