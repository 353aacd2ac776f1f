"""The parsed spread constraint and the counting rules shared by filtering and scoring."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from topospread.framework.node_info import ClusterObjects, NodeInfo, PodCounter, Snapshot
from topospread.framework.node_table import BoolArray, NodeTable
from topospread.model.labels import (
    Operator,
    Requirement,
    Selector,
    selector_from_set,
)
from topospread.model.nodeaffinity import RequiredNodeAffinity, node_selection_key
from topospread.model.objects import (
    LabelSelector,
    Node,
    NodeInclusionPolicy,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    TopologySpreadConstraint,
)
from topospread.model.taints import do_not_schedule_taints, find_matching_untolerated_taint

__all__ = [
    "Constraint",
    "SelectorError",
    "count_pods_match_selector",
    "counted_node_columns",
    "counters_for",
    "counts_every_node",
    "default_selector",
    "has_keys_column",
    "label_selector_as_selector",
    "node_labels_match_spread_constraints",
    "parse_constraints",
    "tolerated_column",
]


class SelectorError(ValueError):
    """A labelSelector that cannot be converted (only reachable with unvalidated input)."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A topology spread constraint as the plugin uses it: defaulted, selector compiled."""

    max_skew: int
    """Largest allowed difference between a domain's count and the global minimum."""
    topology_key: str
    """Node label whose values are the domains."""
    selector: Selector
    """Which pods are counted, with matchLabelKeys already ANDed in."""
    min_domains: int
    """Fewer eligible domains than this forces the global minimum to 0; nil means 1."""
    node_affinity_policy: NodeInclusionPolicy
    """Honor (the default) counts only nodes matching the pod's required node affinity."""
    node_taints_policy: NodeInclusionPolicy
    """Ignore (the default) counts tainted nodes too; Honor skips untolerated ones."""

    def match_node_inclusion_policies(
        self,
        pod: Pod,
        node: Node,
        required: RequiredNodeAffinity,
        comparison_operators: bool,
    ) -> bool:
        """Whether ``node``'s pods count for this constraint (``matchNodeInclusionPolicies``)."""
        if self.node_affinity_policy is NodeInclusionPolicy.HONOR and not required.match(node):
            return False
        if self.node_taints_policy is NodeInclusionPolicy.HONOR:
            untolerated = find_matching_untolerated_taint(
                node.taints,
                pod.tolerations,
                do_not_schedule_taints,
                comparison_operators=comparison_operators,
            )
            if untolerated is not None:
                return False
        return True


def label_selector_as_selector(selector: LabelSelector | None) -> Selector:
    """Convert a selector (``metav1.LabelSelectorAsSelector``): nil ⇒ nothing, {} ⇒ everything."""
    if selector is None:
        return Selector(None)
    if not selector.match_labels and not selector.match_expressions:
        return Selector(())
    requirements = [
        Requirement(key, Operator.EQUALS, frozenset((value,)))
        for key, value in selector.match_labels.items()
    ]
    for expression in selector.match_expressions:
        operator = _SELECTOR_OPERATORS.get(expression.operator)
        if operator is None:
            raise SelectorError(f'"{expression.operator}" is not a valid label selector operator')
        requirements.append(Requirement(expression.key, operator, frozenset(expression.values)))
    return Selector(()).add(requirements)


_SELECTOR_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def _merge_label_set_with_selector(labels: Mapping[str, str], selector: Selector) -> Selector:
    # mergeLabelSetWithSelector: a selector without a requirement list (NOTHING) is
    # returned unchanged, so matchLabelKeys never revive a nil labelSelector.
    if selector.requirements is None:
        return selector
    return selector_from_set(labels).add(selector.requirements)


def parse_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    *,
    match_label_keys: bool,
    node_inclusion_policy: bool,
) -> tuple[Constraint, ...]:
    """The constraints whose whenUnsatisfiable is ``action``, parsed and defaulted, in order."""
    result: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = label_selector_as_selector(c.label_selector)
        if match_label_keys and c.match_label_keys:
            from_pod = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if from_pod:
                selector = _merge_label_set_with_selector(from_pod, selector)
        # Defaults: minDomains nil ⇒ 1, nodeAffinityPolicy nil ⇒ Honor, nodeTaintsPolicy
        # nil ⇒ Ignore; the pod's policies apply only while the inclusion gate is on.
        affinity_policy = NodeInclusionPolicy.HONOR
        taints_policy = NodeInclusionPolicy.IGNORE
        if node_inclusion_policy:
            if c.node_affinity_policy is not None:
                affinity_policy = NodeInclusionPolicy(c.node_affinity_policy)
            if c.node_taints_policy is not None:
                taints_policy = NodeInclusionPolicy(c.node_taints_policy)
        result.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=1 if c.min_domains is None else c.min_domains,
                node_affinity_policy=affinity_policy,
                node_taints_policy=taints_policy,
            )
        )
    return tuple(result)


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[Constraint]
) -> bool:
    """Whether the node carries every constraint's topology key (presence, not value)."""
    return all(c.topology_key in node_labels for c in constraints)


def count_pods_match_selector(node_info: NodeInfo, selector: Selector, namespace: str) -> int:
    """Pods on the node in ``namespace``, not terminating, that ``selector`` matches.

    CAVEAT: an *empty* selector (``labelSelector: {}``) counts 0 rather than every pod.
    Upstream added this short-circuit for nil selectors (kubernetes#116607) but it also
    catches ``{}``; kubernetes#141339 reports it and v1.37.1 still behaves this way.
    """
    if selector.empty:
        return 0
    count = 0
    for pod in node_info.pods_in_namespace(namespace):
        # Terminating pods are not counted (kubernetes#87621).
        if pod.metadata.deletion_timestamp is None and selector.matches(pod.metadata.labels):
            count += 1
    return count


def counters_for(
    snapshot: Snapshot | None,
    nodes: Sequence[NodeInfo],
    constraints: Sequence[Constraint],
    namespace: str,
) -> list[PodCounter] | None:
    """Per constraint, the snapshot's cached count of the pods it matches, per node.

    Only when ``nodes`` is the snapshot's own node list (plugins may be handed other
    lists in tests); None otherwise or when caching is off, and callers then recount.
    The predicate is exactly :func:`count_pods_match_selector`'s rule (namespace by the
    counter, not terminating, selector matches, the ``{}`` quirk), so counts agree.
    """
    if snapshot is None or nodes is not snapshot.node_infos:
        return None
    counters: list[PodCounter] = []
    for constraint in constraints:
        selector = constraint.selector

        def predicate(pod: Pod, selector: Selector = selector) -> bool:
            return (
                not selector.empty
                and pod.metadata.deletion_timestamp is None
                and selector.matches(pod.metadata.labels)
            )

        counter = snapshot.pod_counter(
            ("PodTopologySpread", namespace, selector), namespace, predicate
        )
        if counter is None:
            return None
        counters.append(counter)
    return counters


def default_selector(pod: Pod, objects: ClusterObjects) -> Selector:
    """The selector deduced from the pod's Services and controller (``helper.DefaultSelector``)."""
    label_set: dict[str, str] = {}
    for service in objects.services_in(pod.namespace):
        # Services with a nil selector match nothing, not everything.
        if service.selector is None:
            continue
        if selector_from_set(service.selector).matches(pod.labels):
            label_set.update(service.selector)
    selector = selector_from_set(label_set)

    owner = pod.metadata.controller()
    if owner is None:
        return selector
    group_version = owner.api_version
    if group_version.count("/") > 1:
        return selector
    if group_version == "v1" and owner.kind == "ReplicationController":
        rc = objects.get("ReplicationController", pod.namespace, owner.name)
        if isinstance(rc, ReplicationController):
            label_set.update(rc.selector or {})
            selector = selector_from_set(label_set)
    elif group_version == "apps/v1" and owner.kind in ("ReplicaSet", "StatefulSet"):
        workload = objects.get(owner.kind, pod.namespace, owner.name)
        if isinstance(workload, ReplicaSet | StatefulSet):
            try:
                other = label_selector_as_selector(workload.selector)
            except SelectorError:
                return selector
            if other.requirements is not None:
                selector = selector.add(other.requirements)
    return selector


def counts_every_node(
    required: RequiredNodeAffinity, constraints: Sequence[Constraint], node_inclusion_policy: bool
) -> bool:
    """Whether every node carrying the keys counts: the pod selects nodes by neither
    nodeSelector nor required node affinity, and no constraint honours taints."""
    return (
        required.label_selector is None
        and required.node_selector is None
        and not (
            node_inclusion_policy
            and any(c.node_taints_policy is NodeInclusionPolicy.HONOR for c in constraints)
        )
    )


def has_keys_column(table: NodeTable, keys: frozenset[str]) -> BoolArray:
    """Per node, whether it carries every topology key in ``keys`` (memoised)."""
    column: BoolArray = table.node_column(
        ("PodTopologySpread/keys", keys),
        lambda info: all(key in info.node.metadata.labels for key in keys),
        np.bool_,
    )
    return column


def tolerated_column(table: NodeTable, pod: Pod, comparison_operators: bool) -> BoolArray:
    """Per node, whether the pod tolerates its NoSchedule/NoExecute taints (the
    ``nodeTaintsPolicy: Honor`` rule), memoised by the pod's tolerations."""
    column: BoolArray = table.node_column(
        ("PodTopologySpread/taints", pod.tolerations, comparison_operators),
        lambda info: (
            find_matching_untolerated_taint(
                info.node.taints,
                pod.tolerations,
                do_not_schedule_taints,
                comparison_operators=comparison_operators,
            )
            is None
        ),
        np.bool_,
    )
    return column


def counted_node_columns(
    table: NodeTable,
    pod: Pod,
    constraints: Sequence[Constraint],
    required: RequiredNodeAffinity,
    base: BoolArray,
    *,
    node_inclusion_policy: bool,
    comparison_operators: bool,
) -> list[BoolArray]:
    """Per constraint, the nodes whose pods count (of ``base``): the node loop's rules —
    the pod's required node affinity for every constraint without node inclusion
    policies, else each constraint's nodeAffinityPolicy and nodeTaintsPolicy."""
    matches_affinity: BoolArray = table.node_column(
        ("PodTopologySpread/affinity", node_selection_key(pod)),
        lambda info: required.match(info.node),
        np.bool_,
    )
    if not node_inclusion_policy:
        base = base & matches_affinity
    columns: list[BoolArray] = []
    for constraint in constraints:
        eligible = base
        if node_inclusion_policy:
            if constraint.node_affinity_policy is NodeInclusionPolicy.HONOR:
                eligible = eligible & matches_affinity
            if constraint.node_taints_policy is NodeInclusionPolicy.HONOR:
                eligible = eligible & tolerated_column(table, pod, comparison_operators)
        columns.append(eligible)
    return columns
