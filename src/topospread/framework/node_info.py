"""The scheduler's view of the cluster: nodes with the pods assigned to them.

``NodeInfo`` keeps its pods grouped by namespace, because every counting rule of
PodTopologySpread (and of inter-pod affinity later) looks only at one namespace; the
grouping lets counts be kept per node and updated by one pod at a time, which is what a
simulator running thousands of cycles needs.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from topospread.framework.node_table import IntArray, NodeTable
from topospread.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.model.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from topospread.model.resources import requests_signature
from topospread.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["ClusterObjects", "DomainTotals", "NodeInfo", "PodCounter", "Snapshot"]


class NodeInfo:
    """A node and the pods assigned to it (``framework.NodeInfo``)."""

    __slots__ = (
        "_by_namespace",
        "_requested",
        "dropped_ports",
        "generation",
        "name",
        "node",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "snapshot",
    )

    def __init__(self, node: Node, pods: Iterable[Pod] = ()) -> None:
        self.node = node
        """The node object."""
        # A plain attribute, not a property: it is read per node per plugin in every
        # cycle. CAVEAT: valid because a NodeInfo's node is only ever replaced by a node
        # of the same name (Snapshot.update_node looks it up by that name).
        self.name: str = node.name
        """The node's name."""
        self.pods: list[Pod] = []
        """Assigned pods in the order they were added."""
        self._by_namespace: dict[str, list[Pod]] = {}
        self.pods_with_affinity: list[Pod] = []
        """Assigned pods with inter-pod affinity or anti-affinity terms (``PodsWithAffinity``)."""
        self.pods_with_required_anti_affinity: list[Pod] = []
        """Assigned pods with required anti-affinity terms (``PodsWithRequiredAntiAffinity``)."""
        self._requested: object | None = None
        self.generation = 0
        """Bumped on every change, so caches keyed by it stay correct."""
        self.snapshot: Snapshot | None = None
        """The snapshot this node belongs to; it is told of every pod added or removed."""
        self.dropped_ports: frozenset[tuple[str, str, int]] = frozenset()
        """Host ports (ip, protocol, port; sanitized) that upstream's ``UsedPorts`` lost
        although a remaining pod still holds them: ``UsedPorts`` is a set, and
        ``RemovePod`` deletes the removed pod's entries even when shared. A port is here
        when the last pod added or removed with it was removed; NodePorts subtracts these."""
        for pod in pods:
            self.add_pod(pod)

    def pods_in_namespace(self, namespace: str) -> Sequence[Pod]:
        """The assigned pods of one namespace."""
        return self._by_namespace.get(namespace, ())

    def add_pod(self, pod: Pod) -> None:
        """Assign a pod to this node."""
        if self.dropped_ports:
            self.dropped_ports = self.dropped_ports - _host_port_keys(pod)
        self.pods.append(pod)
        self._by_namespace.setdefault(pod.namespace, []).append(pod)
        affinity = pod.affinity
        if affinity is not None and affinity.has_pod_affinity:
            self.pods_with_affinity.append(pod)
            if affinity.pod_anti_affinity_required:
                self.pods_with_required_anti_affinity.append(pod)
        self._requested = None
        self.generation += 1
        if self.snapshot is not None:
            self.snapshot._pod_changed(self, pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove a pod (matched by namespace and name); False if it was not here."""
        for index, existing in enumerate(self.pods):
            if existing.namespace == pod.namespace and existing.name == pod.name:
                del self.pods[index]
                ports = _host_port_keys(existing)
                if ports:
                    self.dropped_ports = self.dropped_ports | ports
                group = self._by_namespace[pod.namespace]
                group.remove(existing)
                affinity = existing.affinity
                if affinity is not None and affinity.has_pod_affinity:
                    _remove_identical(self.pods_with_affinity, existing)
                    if affinity.pod_anti_affinity_required:
                        _remove_identical(self.pods_with_required_anti_affinity, existing)
                self._requested = None
                self.generation += 1
                if self.snapshot is not None:
                    # The stored pod, not the argument: the counters counted that one.
                    self.snapshot._pod_changed(self, existing, -1)
                return True
        return False

    def replace_pod(self, old: Pod, new: Pod) -> bool:
        """Exactly ``remove_pod(old)`` then ``add_pod(new)``, cheaper, for a pod whose
        newer object takes up what the older one did: the same namespace and name,
        requests (:func:`requests_signature`), host ports and affinity terms, as when the
        informer reports the bind of a pod assumed here (only labels, conditions and
        such differ). The counters recount the pod only where their predicate's answer
        changed, and the node table's usage is untouched. False, with nothing done, when
        the pods differ in more than that or ``old`` is not here."""
        if (
            old.namespace != new.namespace
            or old.name != new.name
            or old.affinity != new.affinity
            or requests_signature(old) != requests_signature(new)
        ):
            return False
        ports = _host_port_keys(old)
        if ports != _host_port_keys(new):
            return False
        index = next(
            (
                i
                for i, pod in enumerate(self.pods)
                if pod.namespace == old.namespace and pod.name == old.name
            ),
            None,
        )
        if index is None:
            return False
        # The same list order as removing the old object and appending the new one.
        existing = self.pods.pop(index)
        self.pods.append(new)
        group = self._by_namespace[new.namespace]
        group.remove(existing)
        group.append(new)
        affinity = existing.affinity
        if affinity is not None and affinity.has_pod_affinity:
            _remove_identical(self.pods_with_affinity, existing)
            self.pods_with_affinity.append(new)
            if affinity.pod_anti_affinity_required:
                _remove_identical(self.pods_with_required_anti_affinity, existing)
                self.pods_with_required_anti_affinity.append(new)
        if ports:
            self.dropped_ports = self.dropped_ports - ports  # (dropped | ports) - ports
        self.generation += 1
        if self.snapshot is not None:
            self.snapshot._pod_replaced(self, existing, new)
        return True

    def clone(self) -> NodeInfo:
        """An independent copy with the same pods, attached to no snapshot (``Snapshot()``)."""
        copy = NodeInfo(self.node, self.pods)
        copy.dropped_ports = self.dropped_ports
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.node.name!r}, pods={len(self.pods)})"


def _remove_identical(pods: list[Pod], pod: Pod) -> None:
    for index, candidate in enumerate(pods):
        if candidate is pod:
            del pods[index]
            return


def _host_port_keys(pod: Pod) -> frozenset[tuple[str, str, int]]:
    # util.GetHostPorts (sidecars, then containers), sanitized as HostPortInfo does.
    keys = set()
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            for port in container.ports:
                if port.host_port > 0:
                    keys.add((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port))
    for container in pod.containers:
        for port in container.ports:
            if port.host_port > 0:
                keys.add((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port))
    return frozenset(keys)


@dataclass(frozen=True, slots=True)
class ClusterObjects:
    """Objects the scheduler lists besides nodes and pods: workloads, Namespaces, PDBs,
    and the storage objects the volume plugins read."""

    services: tuple[Service, ...] = ()
    replication_controllers: tuple[ReplicationController, ...] = ()
    replica_sets: tuple[ReplicaSet, ...] = ()
    stateful_sets: tuple[StatefulSet, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    """Namespace objects; a namespace without one is treated as having no labels."""
    pod_disruption_budgets: tuple[PodDisruptionBudget, ...] = ()
    """PodDisruptionBudgets, in input order (preemption's PDB lister)."""
    persistent_volumes: tuple[PersistentVolume, ...] = ()
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    csi_drivers: tuple[CSIDriver, ...] = ()
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = ()
    volume_attachments: tuple[VolumeAttachment, ...] = ()
    resource_claims: tuple[ResourceClaim, ...] = ()
    """ResourceClaims (``resource.k8s.io/v1``), in input order (DynamicResources)."""
    device_classes: tuple[DeviceClass, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()
    device_taint_rules: tuple[DeviceTaintRule, ...] = ()
    _index: dict[tuple[str, str, str], object] = field(
        default_factory=dict, compare=False, repr=False
    )
    _namespace_index: dict[str, Namespace | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _storage_index: dict[tuple[str, str, str], object] = field(
        default_factory=dict, compare=False, repr=False
    )

    def _storage(self, kind: str, namespace: str, name: str) -> object | None:
        # The listers' Get: by (namespace, name); the first object wins when repeated.
        if not self._storage_index:
            index = self._storage_index
            for collection in (
                self.persistent_volumes,
                self.persistent_volume_claims,
                self.storage_classes,
                self.csi_nodes,
                self.csi_drivers,
            ):
                for obj in collection:
                    key = (type(obj).__name__, obj.metadata.namespace, obj.metadata.name)
                    index.setdefault(key, obj)
            index[("", "", "")] = None  # built, even when nothing was listed
        return self._storage_index.get((kind, namespace, name))

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PersistentVolume with this name, if listed."""
        found = self._storage("PersistentVolume", "", name)
        return found if isinstance(found, PersistentVolume) else None

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The PersistentVolumeClaim ``namespace/name``, if listed."""
        found = self._storage("PersistentVolumeClaim", namespace, name)
        return found if isinstance(found, PersistentVolumeClaim) else None

    def storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass with this name, if listed."""
        found = self._storage("StorageClass", "", name)
        return found if isinstance(found, StorageClass) else None

    def csi_node(self, name: str) -> CSINode | None:
        """The CSINode of the node with this name, if listed."""
        found = self._storage("CSINode", "", name)
        return found if isinstance(found, CSINode) else None

    def csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver with this name, if listed."""
        found = self._storage("CSIDriver", "", name)
        return found if isinstance(found, CSIDriver) else None

    def volume_attachments_on(self, node_name: str) -> Iterator[VolumeAttachment]:
        """VolumeAttachments whose ``spec.nodeName`` is this node, in input order."""
        return (va for va in self.volume_attachments if va.node_name == node_name)

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The ResourceClaim ``namespace/name``, if listed (the first one, if repeated)."""
        return next(
            (
                c
                for c in self.resource_claims
                if c.metadata.namespace == namespace and c.metadata.name == name
            ),
            None,
        )

    def device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass with this name, if listed (the first one, if repeated)."""
        return next((c for c in self.device_classes if c.metadata.name == name), None)

    def services_in(self, namespace: str) -> Iterator[Service]:
        """Services of one namespace, in input order."""
        return (s for s in self.services if s.metadata.namespace == namespace)

    def namespace(self, name: str) -> Namespace | None:
        """The Namespace object with this name, if listed (the first one, if repeated)."""
        index = self._namespace_index
        if not index:
            for ns in self.namespaces:
                index.setdefault(ns.metadata.name, ns)
            index[""] = None  # built, even when nothing was listed
        return index.get(name) if name else None

    def get(self, kind: str, namespace: str, name: str) -> object | None:
        """The ReplicationController, ReplicaSet or StatefulSet with this name, if listed."""
        if not self._index:
            for collection in (self.replication_controllers, self.replica_sets, self.stateful_sets):
                for obj in collection:
                    key = (type(obj).__name__, obj.metadata.namespace, obj.metadata.name)
                    self._index[key] = obj
        return self._index.get((kind, namespace, name))


PodPredicate = Callable[[Pod], bool]
"""Whether a pod is counted; must depend only on the pod object (see :class:`PodCounter`)."""


class DomainTotals:
    """Counted pods per domain of one topology key, over the nodes that carry every key.

    A node takes part when it has every label in ``required_keys``; its domain is its
    ``topology_key`` value, or ``""`` when it lacks the key (only possible when
    ``required_keys`` does not contain it). ``totals`` has an entry, possibly 0, for every
    domain with at least one taking-part node, in the order the domains first appear in
    snapshot node order — the order a full recount over the nodes would produce.
    """

    __slots__ = ("required_keys", "topology_key", "totals")

    def __init__(self, topology_key: str, required_keys: frozenset[str]) -> None:
        self.topology_key = topology_key
        self.required_keys = required_keys
        self.totals: dict[str, int] = {}
        """Domain -> counted pods on its taking-part nodes."""

    def domain_of(self, node: Node) -> str | None:
        """The node's domain, or None when it does not take part."""
        labels = node.metadata.labels
        for key in self.required_keys:
            if key not in labels:
                return None
        return labels.get(self.topology_key, "")


class PodCounter:
    """Pods that a predicate selects, per node, kept current as pods come and go.

    CAVEAT (the invariant every count relies on): ``per_node[n]`` equals the number of
    pods of ``namespace`` on node ``n`` for which ``predicate`` is true, and every
    :class:`DomainTotals` in ``domains`` equals the sum of ``per_node`` over its taking-part
    nodes. It holds because (1) pods are immutable values — a pod's labels, namespace or
    deletionTimestamp change only by removing it and adding the new object, so the
    predicate gives the same answer at removal as at addition; (2) every pod enters or
    leaves a node of the snapshot through ``NodeInfo.add_pod``/``remove_pod`` (which call
    back here), is swapped for its newer object through ``NodeInfo.replace_pod`` (which
    moves the count by the difference of the predicate's answers), or comes and goes
    with its node through ``Snapshot.add_node``/``remove_node``; (3) node
    objects change only through ``Snapshot.update_node``, which drops the domain totals
    (node labels decide domains) — per-node counts survive, since pods did not move.
    """

    __slots__ = ("column", "domains", "namespace", "per_node", "predicate")

    def __init__(self, namespace: str, predicate: PodPredicate) -> None:
        self.namespace = namespace
        self.predicate = predicate
        self.per_node: dict[str, int] = {}
        """Node name -> counted pods; nodes with none may be absent."""
        self.domains: dict[tuple[str, frozenset[str]], DomainTotals] = {}
        """(topology key, required keys) -> totals, built on first use."""
        self.column: tuple[NodeTable, IntArray] | None = None
        """``per_node`` as an array over a node table's rows, once asked for
        (:meth:`Snapshot.counter_column`); kept current while that table is."""

    def count(self, node_name: str) -> int:
        """Counted pods on one node."""
        return self.per_node.get(node_name, 0)


class Snapshot:
    """All nodes (in input order) with their pods: the cluster as one cycle sees it.

    The snapshot also keeps :class:`PodCounter` caches that plugins register with
    :meth:`pod_counter` (PodTopologySpread counts matching pods per node and domain from
    them instead of walking every pod each cycle).
    """

    __slots__ = (
        "_affinity_pods",
        "_anti_affinity_pods",
        "_by_name",
        "_counters",
        "_table",
        "generation",
        "node_infos",
    )

    use_count_cache: bool = True
    """Whether :meth:`pod_counter` serves caches; tests switch it off to compare with a
    full recount. Not a user option."""
    MAX_COUNTERS = 64
    """Counters kept (least recently used dropped): each one costs a predicate call per
    pod added or removed in its namespace."""

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> None:
        self.node_infos: list[NodeInfo] = []
        """Every node, in the order given."""
        self._by_name: dict[str, NodeInfo] = {}
        self._counters: OrderedDict[Hashable, PodCounter] = OrderedDict()
        self._table: NodeTable | None = None
        self._affinity_pods = 0
        self._anti_affinity_pods = 0
        self.generation = 0
        """Bumped by every change of a node or of the pods on one: equal generations
        mean the same cluster (what a cycle saw)."""
        for node in nodes:
            info = NodeInfo(node)
            info.snapshot = self
            self.node_infos.append(info)
            self._by_name[info.name] = info
        for pod in pods:
            found = self._by_name.get(pod.node_name)
            if found is not None:
                found.add_pod(pod)

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
        info.snapshot = self
        self.node_infos.append(info)
        self._by_name[node.name] = info
        self._nodes_changed()
        return info

    def remove_node(self, node_name: str) -> NodeInfo | None:
        """Remove a node with its pods and return it; None if it was not here. O(nodes)."""
        info = self._by_name.pop(node_name, None)
        if info is not None:
            self.node_infos.remove(info)
            info.snapshot = None
            self._affinity_pods -= len(info.pods_with_affinity)
            self._anti_affinity_pods -= len(info.pods_with_required_anti_affinity)
            for counter in self._counters.values():
                counter.per_node.pop(node_name, None)
            self._nodes_changed()
        return info

    def update_node(self, node: Node) -> NodeInfo:
        """Replace a node object (labels, taints, unschedulable) in place, keeping its pods."""
        info = self._by_name[node.name]
        info.node = node  # same name, so info.name stays right
        info.generation += 1
        self._nodes_changed()
        return info

    def table(self) -> NodeTable:
        """The nodes as columns for vectorised plugins, kept current with every change."""
        table = self._table
        if table is None:
            table = self._table = NodeTable(self.node_infos)
        return table

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        """Nodes with at least one pod with inter-pod (anti-)affinity terms, in node order
        (``HavePodsWithAffinityList``)."""
        if not self._affinity_pods:
            return []
        return [info for info in self.node_infos if info.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        """Nodes with at least one pod with required anti-affinity terms, in node order
        (``HavePodsWithRequiredAntiAffinityList``)."""
        if not self._anti_affinity_pods:
            return []
        return [info for info in self.node_infos if info.pods_with_required_anti_affinity]

    # -- counters ------------------------------------------------------------------

    def pod_counter(
        self, key: Hashable, namespace: str, predicate: PodPredicate
    ) -> PodCounter | None:
        """The counter registered under ``key``, built with one pass over the pods if new.

        ``key`` must determine ``namespace`` and ``predicate`` (e.g. the namespace and a
        selector). None when caching is switched off.
        """
        if not self.use_count_cache:
            return None
        counter = self._counters.get(key)
        if counter is not None:
            self._counters.move_to_end(key)
            return counter
        counter = PodCounter(namespace, predicate)
        per_node = counter.per_node
        for info in self.node_infos:
            n = 0
            for pod in info.pods_in_namespace(namespace):
                if predicate(pod):
                    n += 1
            if n:
                per_node[info.name] = n
        self._counters[key] = counter
        if len(self._counters) > self.MAX_COUNTERS:
            self._counters.popitem(last=False)
        return counter

    def counter_column(self, counter: PodCounter) -> IntArray:
        """``counter``'s per-node counts as an array over :meth:`table`'s rows."""
        table = self.table()
        if counter.column is not None and counter.column[0] is table:
            return counter.column[1]
        column = np.zeros(len(table), np.int64)
        row_of = table.row_of
        for name, count in counter.per_node.items():
            row = row_of.get(name)
            if row is not None:
                column[row] = count
        counter.column = (table, column)
        return column

    def domain_totals(
        self, counter: PodCounter, topology_key: str, required_keys: frozenset[str]
    ) -> DomainTotals:
        """``counter``'s pods summed per domain (see :class:`DomainTotals`); O(nodes) once."""
        key = (topology_key, required_keys)
        domains = counter.domains.get(key)
        if domains is None:
            domains = DomainTotals(topology_key, required_keys)
            totals = domains.totals
            per_node = counter.per_node
            for info in self.node_infos:
                value = domains.domain_of(info.node)
                if value is not None:
                    totals[value] = totals.get(value, 0) + per_node.get(info.name, 0)
            counter.domains[key] = domains
        return domains

    def _pod_changed(self, info: NodeInfo, pod: Pod, delta: int) -> None:
        # Called by NodeInfo.add_pod/remove_pod of this snapshot's nodes.
        self.generation += 1
        if self._table is not None:
            self._table.pod_changed(info.name, pod, delta)
        affinity = pod.affinity
        if affinity is not None and affinity.has_pod_affinity:
            self._affinity_pods += delta
            if affinity.pod_anti_affinity_required:
                self._anti_affinity_pods += delta
        for counter in self._counters.values():
            if counter.namespace == pod.namespace and counter.predicate(pod):
                self._count(counter, info, delta)

    def _count(self, counter: PodCounter, info: NodeInfo, delta: int) -> None:
        per_node = counter.per_node
        name = info.name
        per_node[name] = per_node.get(name, 0) + delta
        if counter.column is not None:
            table, column = counter.column
            if table is self._table:
                column[table.row_of[name]] += delta
            else:
                counter.column = None
        for domains in counter.domains.values():
            value = domains.domain_of(info.node)
            if value is not None:
                domains.totals[value] += delta

    def _pod_replaced(self, info: NodeInfo, old: Pod, new: Pod) -> None:
        # Called by NodeInfo.replace_pod: the pod's requests, ports and affinity are the
        # same, so only the counters whose predicate answers otherwise move.
        self.generation += 1
        for counter in self._counters.values():
            if counter.namespace != new.namespace:
                continue
            delta = int(counter.predicate(new)) - int(counter.predicate(old))
            if delta:
                self._count(counter, info, delta)

    def _nodes_changed(self) -> None:
        # Node labels and node order decide domains and their order: rebuild on next use.
        self.generation += 1
        self._table = None
        for counter in self._counters.values():
            counter.domains.clear()
