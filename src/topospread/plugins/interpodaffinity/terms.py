"""Inter-pod affinity terms as the scheduler matches them (``fwk.AffinityTerm`` upstream).

A term names the pods it is about by three things: a label selector, a set of namespace
names and a namespace selector. A pod matches when its namespace is in the set *or* its
namespace's labels match the namespace selector, and its labels match the selector.

Rules kept from upstream (``newAffinityTerm``, ``getNamespacesFromPodAffinityTerm``):

* ``namespaces`` empty and ``namespaceSelector`` nil: the term is about the owning pod's
  own namespace only;
* a nil ``namespaceSelector`` matches no namespace, ``namespaceSelector: {}`` matches all;
* a nil ``labelSelector`` matches no pod, ``labelSelector: {}`` matches every pod;
* ``matchLabelKeys``/``mismatchLabelKeys`` are ignored here: the API server merges them
  into ``labelSelector`` when the pod is created, and the scheduler reads only the selector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from topospread.framework.node_info import ClusterObjects
from topospread.model.labels import NOTHING, Selector
from topospread.model.objects import Pod, PodAffinityTerm, WeightedPodAffinityTerm
from topospread.plugins.podtopologyspread.common import SelectorError, label_selector_as_selector

__all__ = [
    "AffinityTerm",
    "PodTerms",
    "SelectorError",
    "WeightedAffinityTerm",
    "merge_namespaces",
    "namespace_labels",
    "parse_pod_terms",
    "pod_matches_all_terms",
    "pod_matches_any_term",
]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A pod (anti-)affinity term with its selectors compiled."""

    namespaces: frozenset[str]
    """Namespaces the term is about by name."""
    selector: Selector
    """Which pods' labels match."""
    topology_key: str
    """Node label whose value is the domain the term is about."""
    namespace_selector: Selector
    """Namespaces the term is about by their labels; NOTHING once merged into ``namespaces``."""

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` (whose namespace has ``ns_labels``) is one the term is about.

        ``ns_labels`` is None where the term's namespace selector was already merged into
        ``namespaces``; an EVERYTHING selector still matches then (``AffinityTerm.Matches``).
        """
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod.labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    """A preferred term with its weight (1..100)."""

    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """The four term lists of one pod (``PodInfo``'s precomputed terms)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()


def _new_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    selector = label_selector_as_selector(term.label_selector)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(
        namespaces=namespaces,
        selector=selector,
        topology_key=term.topology_key,
        namespace_selector=label_selector_as_selector(term.namespace_selector),
    )


def _terms(pod: Pod, terms: Sequence[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
    return tuple(_new_term(pod, t) for t in terms)


def _weighted(
    pod: Pod, terms: Sequence[WeightedPodAffinityTerm]
) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(WeightedAffinityTerm(_new_term(pod, t.term), t.weight) for t in terms)


def parse_pod_terms(pod: Pod) -> tuple[PodTerms, list[str]]:
    """The pod's terms (``framework.NewPodInfo``) and the errors of groups that failed.

    A group whose selector cannot be converted (only possible with unvalidated input) is
    left empty and reported, as upstream leaves it nil and aggregates the error.
    """
    affinity = pod.affinity
    if affinity is None:
        return PodTerms(), []
    errors: list[str] = []
    required: list[tuple[AffinityTerm, ...]] = []
    for label, raw in (
        ("requiredAffinityTerms", affinity.pod_affinity_required),
        ("requiredAntiAffinityTerms", affinity.pod_anti_affinity_required),
    ):
        try:
            required.append(_terms(pod, raw))
        except SelectorError as exc:
            errors.append(f"{label}: {exc}")
            required.append(())
    preferred: list[tuple[WeightedAffinityTerm, ...]] = []
    for label, weighted in (
        ("preferredAffinityTerms", affinity.pod_affinity_preferred),
        ("preferredAntiAffinityTerms", affinity.pod_anti_affinity_preferred),
    ):
        try:
            preferred.append(_weighted(pod, weighted))
        except SelectorError as exc:
            errors.append(f"{label}: {exc}")
            preferred.append(())
    terms = PodTerms(required[0], required[1], preferred[0], preferred[1])
    return terms, errors


def merge_namespaces(term: AffinityTerm, objects: ClusterObjects) -> AffinityTerm:
    """Unroll the namespace selector of an incoming pod's term into names.

    ``mergeAffinityTermNamespacesIfNotEmpty``: an EVERYTHING selector is kept (it matches
    any namespace, with or without labels); any other selector is replaced by the names
    of the listed Namespace objects it matches, and becomes NOTHING. Namespaces without
    an object are never listed, so a selector cannot pick them.
    """
    if term.namespace_selector.empty:
        return term
    listed = {ns.name for ns in objects.namespaces if term.namespace_selector.matches(ns.labels)}
    return AffinityTerm(
        namespaces=term.namespaces | listed,
        selector=term.selector,
        topology_key=term.topology_key,
        namespace_selector=NOTHING,
    )


def namespace_labels(namespace: str, objects: ClusterObjects) -> Mapping[str, str]:
    """The labels of a namespace (``GetNamespaceLabelsSnapshot``); none if it has no object."""
    ns = objects.namespace(namespace)
    return dict(ns.labels) if ns is not None else {}


def pod_matches_all_terms(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether there are terms and ``pod`` matches every one (``podMatchesAllAffinityTerms``).

    For the incoming pod's terms, whose namespace selectors are merged: no labels needed.
    """
    if not terms:
        return False
    return all(t.matches(pod, None) for t in terms)


def pod_matches_any_term(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches at least one of the (merged) terms."""
    return any(t.matches(pod, None) for t in terms)
