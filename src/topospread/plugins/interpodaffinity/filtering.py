"""PreFilter, Filter and AddPod/RemovePod of InterPodAffinity (required terms).

PreFilter counts, per topology pair ``(key, value)``:

* existing pods whose required *anti*-affinity terms match the incoming pod (each
  matching term counts once, at the value its key has on the existing pod's node);
* existing pods matching *all* of the incoming pod's required affinity terms (counted
  once per term, under that term's key);
* existing pods matching each of the incoming pod's required anti-affinity terms.

Filter then checks, in this order, on the node's labels:

1. affinity — every term's key must be on the node and its pair must count > 0; a pod
   whose terms no pod in the cluster matches may still go anywhere it has every key, if it
   matches all its own terms (the first pod of a group). Else UnschedulableAndUnresolvable.
2. the incoming pod's anti-affinity — no term's pair may count > 0. Else Unschedulable.
3. existing pods' anti-affinity — no label pair of the node may count > 0. Else
   Unschedulable.

This is the algorithm with the ``InterPodAffinityHostnameFastPath`` gate off (alpha in
v1.37, off by default); the fast path gives the same verdicts by other means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status
from topospread.model.objects import Node, Pod
from topospread.plugins.interpodaffinity.terms import (
    AffinityTerm,
    PodTerms,
    pod_matches_all_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "PreFilterState",
    "TopologyCounts",
    "TopologyPair",
    "compute_pre_filter_state",
    "filter_node",
    "get_pre_filter_state",
    "update_with_pod",
]

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
"""Filter reason: a pod on the node's domain has anti-affinity to the incoming pod."""
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
"""Filter reason: the node's domains hold no pod the incoming pod's affinity wants."""
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
"""Filter reason: the node's domain holds a pod the incoming pod's anti-affinity avoids."""

TopologyPair = tuple[str, str]
"""A node label as ``(topology key, value)``: one domain."""
TopologyCounts = dict[TopologyPair, int]
"""Matching pods per domain (``topologyToMatchedTermCount``); no entry means 0."""


def _update(counts: TopologyCounts, node: Node, key: str, delta: int) -> None:
    # topologyToMatchedTermCount.update: nodes without the key are not counted; entries
    # brought down to zero are dropped, so "any entry" means "some pod counted".
    value = node.labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


def _update_with_affinity_terms(
    counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod, node: Node, delta: int
) -> None:
    # A pod counts for affinity only when it matches every term at once.
    if pod_matches_all_terms(terms, pod):
        for term in terms:
            _update(counts, node, term.topology_key, delta)


def _update_with_anti_affinity_terms(
    counts: TopologyCounts,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str] | None,
    node: Node,
    delta: int,
) -> None:
    # Each anti-affinity term a pod matches counts on its own.
    for term in terms:
        if term.matches(pod, ns_labels):
            _update(counts, node, term.topology_key, delta)


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter counted; Filter reads it, AddPod/RemovePod change the counts.

    Written only when there is something to check (PreFilter returns Skip otherwise).
    ``clone`` copies the three count maps; the pod, its terms and the labels are shared.
    """

    pod: Pod
    """The incoming pod."""
    affinity_terms: tuple[AffinityTerm, ...]
    """The incoming pod's required affinity terms, namespace selectors merged."""
    anti_affinity_terms: tuple[AffinityTerm, ...]
    """The incoming pod's required anti-affinity terms, namespace selectors merged."""
    namespace_labels: Mapping[str, str]
    """Labels of the incoming pod's namespace, for existing pods' namespace selectors."""
    existing_anti_affinity_counts: TopologyCounts
    """Existing pods' required anti-affinity terms that match the incoming pod."""
    affinity_counts: TopologyCounts
    """Existing pods matching all of the incoming pod's affinity terms, per term key."""
    anti_affinity_counts: TopologyCounts
    """Existing pods matching each of the incoming pod's anti-affinity terms."""

    def clone(self) -> PreFilterState:
        """A copy whose counts AddPod/RemovePod may change freely."""
        return PreFilterState(
            self.pod,
            self.affinity_terms,
            self.anti_affinity_terms,
            self.namespace_labels,
            dict(self.existing_anti_affinity_counts),
            dict(self.affinity_counts),
            dict(self.anti_affinity_counts),
        )


def compute_pre_filter_state(
    pod: Pod,
    affinity_terms: tuple[AffinityTerm, ...],
    anti_affinity_terms: tuple[AffinityTerm, ...],
    namespace_labels: Mapping[str, str],
    nodes: Sequence[NodeInfo],
    terms_of: Callable[[Pod], PodTerms],
) -> PreFilterState:
    """Count over every pod of ``nodes`` (``PreFilter``); ``terms_of`` parses a pod's terms.

    Without incoming terms only existing pods' required anti-affinity counts, so the
    caller may pass just the nodes with such pods; only those pods are visited then.
    """
    state = PreFilterState(pod, affinity_terms, anti_affinity_terms, namespace_labels, {}, {}, {})
    incoming = bool(affinity_terms or anti_affinity_terms)
    for node_info in nodes:
        node = node_info.node
        for existing in node_info.pods if incoming else node_info.pods_with_required_anti_affinity:
            # getExistingAntiAffinityCounts: the existing pod's own terms, its namespace
            # selector matched against the incoming pod's namespace labels.
            _update_with_anti_affinity_terms(
                state.existing_anti_affinity_counts,
                terms_of(existing).required_anti_affinity,
                pod,
                namespace_labels,
                node,
                1,
            )
            # getIncomingAffinityAntiAffinityCounts: merged terms, no labels needed.
            if affinity_terms:
                _update_with_affinity_terms(
                    state.affinity_counts, affinity_terms, existing, node, 1
                )
            if anti_affinity_terms:
                _update_with_anti_affinity_terms(
                    state.anti_affinity_counts, anti_affinity_terms, existing, None, node, 1
                )
    return state


def update_with_pod(s: PreFilterState, pod: Pod, node: Node, delta: int, terms: PodTerms) -> None:
    """Count ``pod`` (with its parsed ``terms``) as added (+1) to or removed (-1) from ``node``."""
    _update_with_anti_affinity_terms(
        s.existing_anti_affinity_counts,
        terms.required_anti_affinity,
        s.pod,
        s.namespace_labels,
        node,
        delta,
    )
    _update_with_affinity_terms(s.affinity_counts, s.affinity_terms, pod, node, delta)
    _update_with_anti_affinity_terms(
        s.anti_affinity_counts, s.anti_affinity_terms, pod, None, node, delta
    )


def get_pre_filter_state(state: CycleState) -> PreFilterState:
    """The state PreFilter wrote; raises StateNotFoundError if it did not run."""
    return state.read(PRE_FILTER_STATE_KEY, PreFilterState)


def _satisfies_affinity(s: PreFilterState, node: Node) -> bool:
    # nodeTopologyMatchesAffinity
    terms = s.affinity_terms
    if not terms:
        return True
    labels = node.labels
    pods_exist = True
    for term in terms:
        value = labels.get(term.topology_key)
        if value is None:
            # Every term's key must be on the node, also for the first pod of a group.
            return False
        if s.affinity_counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: allowed only when no pod in the
    # cluster matches the terms at all, and the pod matches every one of its own terms.
    return not s.affinity_counts and pod_matches_all_terms(terms, s.pod)


def _satisfies_anti_affinity(s: PreFilterState, node: Node) -> bool:
    # satisfyPodAntiAffinity
    if not s.anti_affinity_counts:
        return True
    labels = node.labels
    for term in s.anti_affinity_terms:
        value = labels.get(term.topology_key)
        if value is not None and s.anti_affinity_counts.get((term.topology_key, value), 0) > 0:
            return False
    return True


def _satisfies_existing_anti_affinity(s: PreFilterState, node: Node) -> bool:
    # satisfyExistingPodsAntiAffinity: any label pair of the node that an existing pod's
    # term counted, whatever that term's key (the counts are keyed by it).
    counts = s.existing_anti_affinity_counts
    if not counts:
        return True
    return not any(counts.get(pair, 0) > 0 for pair in node.labels.items())


def filter_node(s: PreFilterState, node: Node) -> Status | None:
    """The Filter verdict for one node: None if it fits."""
    if not _satisfies_affinity(s, node):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
    if not _satisfies_anti_affinity(s, node):
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
    if not _satisfies_existing_anti_affinity(s, node):
        return Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
    return None
