"""PreScore, Score and NormalizeScore of InterPodAffinity (preferred terms).

PreScore sums weights per topology pair. For every existing pod on a node with labels:

* +weight for each preferred affinity term of the incoming pod the existing pod matches,
  −weight for each preferred anti-affinity term it matches;
* +hardPodAffinityWeight for each *required* affinity term of the existing pod that the
  incoming pod matches (when the weight is > 0);
* +weight / −weight for each preferred affinity / anti-affinity term of the existing pod
  that the incoming pod matches;

each under ``(term's key, value of that key on the existing pod's node)``. A node's raw
score is the sum over its labels; NormalizeScore maps raw scores linearly onto 0..100
(lowest 0, highest 100, all 0 when equal), truncating like Go's ``int64(float64)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import MAX_NODE_SCORE, NodeScore
from topospread.framework.node_info import NodeInfo
from topospread.model.objects import Node, Pod
from topospread.plugins.interpodaffinity.terms import AffinityTerm, PodTerms, WeightedAffinityTerm

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "TopologyScore",
    "compute_topology_score",
    "get_pre_score_state",
    "normalize_scores",
    "score_node",
]

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

TopologyScore = dict[str, dict[str, int]]
"""Topology key -> value -> summed weight (``scoreMap``)."""


@dataclass(slots=True)
class PreScoreState:
    """The weights per domain that Score sums; read-only after PreScore."""

    topology_score: TopologyScore
    """Key -> value -> weight; an entry exists for every pair some term matched, even at 0."""

    def clone(self) -> PreScoreState:
        """Never changed after PreScore, so shared."""
        return self


def _process_term(
    scores: TopologyScore,
    term: AffinityTerm,
    weight: int,
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    multiplier: int,
) -> None:
    if not term.matches(pod, ns_labels):
        return
    value = node.labels.get(term.topology_key)
    if value is None:
        return
    by_value = scores.setdefault(term.topology_key, {})
    by_value[value] = by_value.get(value, 0) + weight * multiplier


def _process_terms(
    scores: TopologyScore,
    terms: Sequence[WeightedAffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    multiplier: int,
) -> None:
    for weighted in terms:
        _process_term(scores, weighted.term, weighted.weight, pod, ns_labels, node, multiplier)


def compute_topology_score(
    pod: Pod,
    pod_terms: PodTerms,
    namespace_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    terms_of: Callable[[Pod], PodTerms],
    *,
    hard_pod_affinity_weight: int,
    only_pods_with_affinity: bool = False,
) -> TopologyScore:
    """Sum the weights over every existing pod of ``nodes`` (``PreScore``'s loop).

    ``pod_terms`` are the incoming pod's terms with preferred namespace selectors merged.
    ``only_pods_with_affinity`` visits only pods with terms of their own: right when
    the incoming pod has no preferred terms, as then nothing else adds to the score.
    """
    scores: TopologyScore = {}
    for node_info in nodes:
        node = node_info.node
        # processExistingPod: pods on nodes without any label contribute nothing.
        if not node.labels:
            continue
        for existing in node_info.pods_with_affinity if only_pods_with_affinity else node_info.pods:
            # The incoming pod's terms: merged namespaces, no labels needed.
            _process_terms(scores, pod_terms.preferred_affinity, existing, None, node, 1)
            _process_terms(scores, pod_terms.preferred_anti_affinity, existing, None, node, -1)
            # The existing pod's terms: its namespace selectors meet the incoming pod's
            # namespace labels.
            theirs = terms_of(existing)
            if hard_pod_affinity_weight > 0:
                for term in theirs.required_affinity:
                    _process_term(
                        scores, term, hard_pod_affinity_weight, pod, namespace_labels, node, 1
                    )
            _process_terms(scores, theirs.preferred_affinity, pod, namespace_labels, node, 1)
            _process_terms(scores, theirs.preferred_anti_affinity, pod, namespace_labels, node, -1)
    return scores


def get_pre_score_state(state: CycleState) -> PreScoreState:
    """The state PreScore wrote; raises StateNotFoundError if it did not run."""
    return state.read(PRE_SCORE_STATE_KEY, PreScoreState)


def score_node(s: PreScoreState, node: Node) -> int:
    """The raw score: the weights of the node's domains (positive attracts, negative repels)."""
    labels = node.labels
    score = 0
    for key, by_value in s.topology_score.items():
        value = labels.get(key)
        if value is not None:
            score += by_value.get(value, 0)
    return score


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Map raw scores onto 0..100 in place: ``100 × (raw − min) ÷ (max − min)``, truncated."""
    if not s.topology_score or not scores:
        return
    min_count = min(entry.score for entry in scores)
    max_count = max(entry.score for entry in scores)
    diff = max_count - min_count
    for entry in scores:
        f_score = 0.0
        if diff > 0:
            # float64 arithmetic as upstream, then int64() truncation towards zero.
            f_score = float(MAX_NODE_SCORE) * (float(entry.score - min_count) / float(diff))
        entry.score = int(f_score)
