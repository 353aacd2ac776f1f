"""PreScore, Score and NormalizeScore of PodTopologySpread (soft constraints).

Raw score of a node = round( Σ over constraints whose key the node has of
``count(domain) × ln(domains + 2) + (maxSkew − 1)`` ), with Go's round-half-away-from-zero.
NormalizeScore maps the lowest raw score to 100: ``100 × (max + min − raw) ÷ max`` with
truncating integer division, ignored nodes 0, and every node 100 when max is 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import MAX_NODE_SCORE, NodeScore
from topospread.framework.node_info import NodeInfo
from topospread.model.nodeaffinity import required_node_affinity
from topospread.model.objects import LABEL_HOSTNAME, Pod
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "compute_pre_score_state",
    "get_pre_score_state",
    "go_round",
    "normalize_scores",
    "score_node",
    "topology_normalizing_weight",
]

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
_INVALID_SCORE = -1


def go_round(x: float) -> int:
    """Round half away from zero, as Go's ``math.Round`` (Python's round is half-to-even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def topology_normalizing_weight(size: int) -> float:
    """``ln(size + 2)``: keeps the counts of topologies with few domains from being watered down."""
    return math.log(size + 2)


@dataclass(slots=True)
class PreScoreState:
    """Matching pods per domain of the soft constraints, for the nodes being scored.

    Immutable once PreScore has written it, so ``clone`` returns itself. Hostname
    constraints keep no domain map: their counts are taken per node in Score.
    """

    constraints: tuple[Constraint, ...]
    """Soft constraints, in order (pod's own, or the defaults)."""
    ignored_nodes: frozenset[str]
    """Feasible nodes lacking a required topology key; they score 0."""
    topology_value_to_pod_counts: list[dict[str, int]]
    """Per constraint: domain value -> matching pods, only for domains of feasible nodes."""
    topology_normalizing_weight: list[float]
    """Per constraint: ln(number of domains + 2)."""
    require_all_topologies: bool = True
    """False only under System default constraints: nodes may then lack some keys."""
    topology_sizes: list[int] = field(default_factory=list)
    """Per constraint: the domain count the weight was computed from."""

    def clone(self) -> PreScoreState:
        """The state is read-only after PreScore."""
        return self


def compute_pre_score_state(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    filtered_nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    *,
    require_all_topologies: bool,
    node_inclusion_policy: bool,
    comparison_operators: bool,
) -> PreScoreState:
    """Seed domains from the feasible nodes, then count pods over all nodes (``PreScore``)."""
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    sizes = [0] * len(constraints)
    for node_info in filtered_nodes:
        labels = node_info.node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            ignored.add(node_info.name)
            continue
        for index, constraint in enumerate(constraints):
            if constraint.topology_key == LABEL_HOSTNAME:
                continue
            # A missing key (possible only under System defaults) forms the "" domain.
            value = labels.get(constraint.topology_key, "")
            if value not in counts[index]:
                counts[index][value] = 0
                sizes[index] += 1
    weights: list[float] = []
    for index, constraint in enumerate(constraints):
        size = sizes[index]
        if constraint.topology_key == LABEL_HOSTNAME:
            # Hostname domains are the scored nodes themselves.
            size = len(filtered_nodes) - len(ignored)
            sizes[index] = size
        weights.append(topology_normalizing_weight(size))

    required = required_node_affinity(pod)
    namespace = pod.namespace
    for node_info in all_nodes:
        node = node_info.node
        if not node_inclusion_policy and not required.match(node):
            continue
        labels = node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        for index, constraint in enumerate(constraints):
            if node_inclusion_policy and not constraint.match_node_inclusion_policies(
                pod, node, required, comparison_operators
            ):
                continue
            value = labels.get(constraint.topology_key, "")
            domain_counts = counts[index]
            # Only domains of feasible nodes are counted; pods on infeasible nodes of
            # such a domain still count towards it.
            if value not in domain_counts:
                continue
            domain_counts[value] += count_pods_match_selector(
                node_info, constraint.selector, namespace
            )
    return PreScoreState(
        constraints=constraints,
        ignored_nodes=frozenset(ignored),
        topology_value_to_pod_counts=counts,
        topology_normalizing_weight=weights,
        require_all_topologies=require_all_topologies,
        topology_sizes=sizes,
    )


def get_pre_score_state(state: CycleState) -> PreScoreState:
    """The state PreScore wrote; raises StateNotFoundError if it did not run."""
    return state.read(PRE_SCORE_STATE_KEY, PreScoreState)


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The raw score of one feasible node (lower is better before normalization)."""
    if node_info.name in s.ignored_nodes:
        return 0
    labels = node_info.node.labels
    score = 0.0
    for index, constraint in enumerate(s.constraints):
        value = labels.get(constraint.topology_key)
        if value is None:
            continue
        if constraint.topology_key == LABEL_HOSTNAME:
            count = count_pods_match_selector(node_info, constraint.selector, pod.namespace)
        else:
            count = s.topology_value_to_pod_counts[index][value]
        score += count * s.topology_normalizing_weight[index] + (constraint.max_skew - 1)
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Map raw scores into 0..100 in place, lowest raw score best (``NormalizeScore``)."""
    min_score = 2**63 - 1
    max_score = 0
    for entry in scores:
        if entry.name in s.ignored_nodes:
            entry.score = _INVALID_SCORE
            continue
        min_score = min(min_score, entry.score)
        max_score = max(max_score, entry.score)
    for entry in scores:
        if entry.score == _INVALID_SCORE:
            entry.score = 0
        elif max_score == 0:
            entry.score = MAX_NODE_SCORE
        else:
            # Go's int64 division truncates towards zero; operands are non-negative here.
            entry.score = MAX_NODE_SCORE * (max_score + min_score - entry.score) // max_score
