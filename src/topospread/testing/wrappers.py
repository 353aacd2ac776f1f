"""Fluent builders, in the manner of upstream's ``pkg/scheduler/testing/wrappers.go``.

Each builder returns itself from every setter and produces a frozen model object from
``obj()``, so a table case reads as one sentence::

    make_pod().name("p").label("foo", "").node("node-a").obj()
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Self

from topospread.model.objects import (
    Affinity,
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from topospread.model.quantity import parse_quantity

__all__ = ["NodeBuilder", "PodBuilder", "SelectorBuilder", "make_node", "make_pod", "make_selector"]


class SelectorBuilder:
    """Builds a wire-form LabelSelector."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._expressions: list[LabelSelectorRequirement] = []

    def label(self, key: str, value: str) -> Self:
        """Add a matchLabels entry."""
        self._labels[key] = value
        return self

    def exists(self, key: str) -> Self:
        """Add ``key Exists``."""
        self._expressions.append(LabelSelectorRequirement(key, "Exists"))
        return self

    def not_exist(self, key: str) -> Self:
        """Add ``key DoesNotExist``."""
        self._expressions.append(LabelSelectorRequirement(key, "DoesNotExist"))
        return self

    def in_(self, key: str, *values: str) -> Self:
        """Add ``key In values``."""
        self._expressions.append(LabelSelectorRequirement(key, "In", tuple(values)))
        return self

    def not_in(self, key: str, *values: str) -> Self:
        """Add ``key NotIn values``."""
        self._expressions.append(LabelSelectorRequirement(key, "NotIn", tuple(values)))
        return self

    def obj(self) -> LabelSelector:
        """The selector."""
        return LabelSelector(dict(self._labels), tuple(self._expressions))


def make_selector() -> SelectorBuilder:
    """A new selector builder."""
    return SelectorBuilder()


class PodBuilder:
    """Builds a Pod."""

    def __init__(self) -> None:
        self._pod = Pod(ObjectMeta(name="", namespace="default"))

    def _meta(self, **changes: Any) -> Self:
        self._pod = replace(self._pod, metadata=replace(self._pod.metadata, **changes))
        return self

    def name(self, name: str) -> Self:
        """Set the name."""
        return self._meta(name=name)

    def namespace(self, namespace: str) -> Self:
        """Set the namespace."""
        return self._meta(namespace=namespace)

    def label(self, key: str, value: str) -> Self:
        """Add a label."""
        return self._meta(labels={**self._pod.metadata.labels, key: value})

    def labels(self, labels: dict[str, str]) -> Self:
        """Replace all labels."""
        return self._meta(labels=dict(labels))

    def terminating(self) -> Self:
        """Mark the pod as being deleted."""
        return self._meta(deletion_timestamp="2026-01-01T00:00:00Z")

    def owner(self, kind: str, name: str, api_version: str = "apps/v1") -> Self:
        """Set a controller owner reference."""
        ref = OwnerReference(api_version=api_version, kind=kind, name=name, controller=True)
        return self._meta(owner_references=(ref,))

    def node(self, node_name: str) -> Self:
        """Assign the pod to a node."""
        self._pod = replace(self._pod, node_name=node_name)
        return self

    def node_selector(self, selector: dict[str, str]) -> Self:
        """Set spec.nodeSelector."""
        self._pod = replace(self._pod, node_selector=dict(selector))
        return self

    def node_affinity_in(self, key: str, *values: str) -> Self:
        """Require nodes whose label ``key`` is one of ``values``."""
        return self._node_affinity(NodeSelectorRequirement(key, "In", tuple(values)))

    def node_affinity_not_in(self, key: str, *values: str) -> Self:
        """Require nodes whose label ``key`` is none of ``values``."""
        return self._node_affinity(NodeSelectorRequirement(key, "NotIn", tuple(values)))

    def _node_affinity(self, requirement: NodeSelectorRequirement) -> Self:
        term = NodeSelectorTerm(match_expressions=(requirement,))
        affinity = Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,))))
        self._pod = replace(self._pod, affinity=affinity)
        return self

    def toleration(
        self, key: str, value: str = "", effect: str = "", operator: str = "Equal"
    ) -> Self:
        """Add a toleration."""
        toleration = Toleration(key=key, operator=operator, value=value, effect=effect)
        self._pod = replace(self._pod, tolerations=(*self._pod.tolerations, toleration))
        return self

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str,
        selector: LabelSelector | None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: tuple[str, ...] = (),
    ) -> Self:
        """Append a topology spread constraint."""
        constraint = TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=topology_key,
            when_unsatisfiable=when_unsatisfiable,
            label_selector=selector,
            min_domains=min_domains,
            node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy,
            match_label_keys=match_label_keys,
        )
        self._pod = replace(
            self._pod,
            topology_spread_constraints=(*self._pod.topology_spread_constraints, constraint),
        )
        return self

    def requests(self, **quantities: str) -> Self:
        """Add a container with these requests (``cpu="100m", memory="1Gi"``)."""
        container = Container(
            name=f"c{len(self._pod.containers)}",
            requests={k.replace("_", "-"): parse_quantity(v) for k, v in quantities.items()},
        )
        self._pod = replace(self._pod, containers=(*self._pod.containers, container))
        return self

    def obj(self) -> Pod:
        """The pod."""
        return self._pod


def make_pod() -> PodBuilder:
    """A new pod builder (namespace ``default``)."""
    return PodBuilder()


class NodeBuilder:
    """Builds a Node."""

    def __init__(self) -> None:
        self._node = Node(
            ObjectMeta(name=""),
            allocatable={
                "cpu": parse_quantity("32"),
                "memory": parse_quantity("64Gi"),
                "pods": parse_quantity("110"),
            },
        )

    def name(self, name: str) -> Self:
        """Set the name."""
        self._node = replace(self._node, metadata=replace(self._node.metadata, name=name))
        return self

    def label(self, key: str, value: str) -> Self:
        """Add a label."""
        labels = {**self._node.metadata.labels, key: value}
        self._node = replace(self._node, metadata=replace(self._node.metadata, labels=labels))
        return self

    def taint(self, key: str, value: str, effect: str) -> Self:
        """Add a taint."""
        self._node = replace(self._node, taints=(*self._node.taints, Taint(key, effect, value)))
        return self

    def unschedulable(self) -> Self:
        """Cordon the node."""
        self._node = replace(self._node, unschedulable=True)
        return self

    def allocatable(self, **quantities: str) -> Self:
        """Set allocatable resources (``cpu="4", memory="8Gi", pods="110"``)."""
        self._node = replace(
            self._node,
            allocatable={k.replace("_", "-"): parse_quantity(v) for k, v in quantities.items()},
        )
        return self

    def obj(self) -> Node:
        """The node."""
        return self._node


def make_node() -> NodeBuilder:
    """A new node builder with roomy allocatable resources."""
    return NodeBuilder()
