"""The scheduler's view of the cluster: nodes with the pods assigned to them.

``NodeInfo`` keeps its pods grouped by namespace, because every counting rule of
PodTopologySpread (and of inter-pod affinity later) looks only at one namespace; the
grouping lets counts be kept per node and updated by one pod at a time, which is what a
simulator running thousands of cycles needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from topospread.model.objects import (
    Namespace,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)

__all__ = ["ClusterObjects", "NodeInfo", "Snapshot"]


class NodeInfo:
    """A node and the pods assigned to it (``framework.NodeInfo``)."""

    __slots__ = ("_by_namespace", "_requested", "generation", "node", "pods")

    def __init__(self, node: Node, pods: Iterable[Pod] = ()) -> None:
        self.node = node
        """The node object."""
        self.pods: list[Pod] = []
        """Assigned pods in the order they were added."""
        self._by_namespace: dict[str, list[Pod]] = {}
        self._requested: object | None = None
        self.generation = 0
        """Bumped on every change, so caches keyed by it stay correct."""
        for pod in pods:
            self.add_pod(pod)

    @property
    def name(self) -> str:
        """The node's name."""
        return self.node.name

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        """The assigned pods of one namespace."""
        return self._by_namespace.get(namespace, ())

    def add_pod(self, pod: Pod) -> None:
        """Assign a pod to this node."""
        self.pods.append(pod)
        self._by_namespace.setdefault(pod.namespace, []).append(pod)
        self._requested = None
        self.generation += 1

    def remove_pod(self, pod: Pod) -> bool:
        """Remove a pod (matched by namespace and name); False if it was not here."""
        for index, existing in enumerate(self.pods):
            if existing.namespace == pod.namespace and existing.name == pod.name:
                del self.pods[index]
                group = self._by_namespace[pod.namespace]
                group.remove(existing)
                self._requested = None
                self.generation += 1
                return True
        return False

    def clone(self) -> NodeInfo:
        """An independent copy with the same pods."""
        return NodeInfo(self.node, self.pods)

    def __repr__(self) -> str:
        return f"NodeInfo({self.node.name!r}, pods={len(self.pods)})"


@dataclass(frozen=True, slots=True)
class ClusterObjects:
    """Objects the scheduler lists besides nodes and pods: workloads and Namespaces."""

    services: tuple[Service, ...] = ()
    replication_controllers: tuple[ReplicationController, ...] = ()
    replica_sets: tuple[ReplicaSet, ...] = ()
    stateful_sets: tuple[StatefulSet, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    """Namespace objects; a namespace without one is treated as having no labels."""
    _index: dict[tuple[str, str, str], object] = field(
        default_factory=dict, compare=False, repr=False
    )

    def services_in(self, namespace: str) -> Iterator[Service]:
        """Services of one namespace, in input order."""
        return (s for s in self.services if s.metadata.namespace == namespace)

    def namespace(self, name: str) -> Namespace | None:
        """The Namespace object with this name, if listed (the first one, if repeated)."""
        return next((ns for ns in self.namespaces if ns.metadata.name == name), None)

    def get(self, kind: str, namespace: str, name: str) -> object | None:
        """The ReplicationController, ReplicaSet or StatefulSet with this name, if listed."""
        if not self._index:
            for collection in (self.replication_controllers, self.replica_sets, self.stateful_sets):
                for obj in collection:
                    key = (type(obj).__name__, obj.metadata.namespace, obj.metadata.name)
                    self._index[key] = obj
        return self._index.get((kind, namespace, name))


class Snapshot:
    """All nodes (in input order) with their pods: the cluster as one cycle sees it."""

    __slots__ = ("_by_name", "node_infos")

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> None:
        self.node_infos: list[NodeInfo] = [NodeInfo(node) for node in nodes]
        """Every node, in the order given."""
        self._by_name: dict[str, NodeInfo] = {info.name: info for info in self.node_infos}
        for pod in pods:
            info = self._by_name.get(pod.node_name)
            if info is not None:
                info.add_pod(pod)

    def get(self, node_name: str) -> NodeInfo | None:
        """The node with this name, if present."""
        return self._by_name.get(node_name)

    def __len__(self) -> int:
        return len(self.node_infos)

    @property
    def by_name(self) -> Mapping[str, NodeInfo]:
        """Nodes by name."""
        return self._by_name

    def add_node(self, node: Node) -> NodeInfo:
        """Append a node (no pods yet); it goes last in node order. The name must be new."""
        if node.name in self._by_name:
            raise ValueError(f"node {node.name} is already in the snapshot")
        info = NodeInfo(node)
        self.node_infos.append(info)
        self._by_name[node.name] = info
        return info

    def remove_node(self, node_name: str) -> NodeInfo | None:
        """Remove a node with its pods and return it; None if it was not here. O(nodes)."""
        info = self._by_name.pop(node_name, None)
        if info is not None:
            self.node_infos.remove(info)
        return info

    def update_node(self, node: Node) -> NodeInfo:
        """Replace a node object (labels, taints, unschedulable) in place, keeping its pods."""
        info = self._by_name[node.name]
        info.node = node
        info.generation += 1
        return info
