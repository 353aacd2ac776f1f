"""The scheduler's cache: what the informers saw, as one long-lived engine Snapshot.

Follows ``pkg/scheduler/backend/cache``: nodes and assigned pods are kept as they arrive
from the informers, and pods the scheduler has decided on are *assumed* onto their node
before the bind is sent (``AssumePod``), so the next cycle sees them; the informer's
report of the bound pod confirms the assumption (``AddPod``), a failed bind forgets it
(``ForgetPod``). A pod bound elsewhere than assumed (another client won the race) moves
to where the API server says it is.

The Snapshot is updated in place, one pod or node at a time, so the engine's incremental
counters (PodTopologySpread's per-node and per-domain counts, the node table) stay valid
and no cycle rebuilds anything. Upstream copies its cache into a snapshot at the start of
every cycle; here cycles and updates take :attr:`SchedulerCache.lock` instead.

Pods may arrive before their node (the informers list in parallel) and stay after it (a
node deleted with pods on it): they are kept per node name and join the Snapshot when
the node does, as upstream's cache keeps a NodeInfo without a Node.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from topospread.errors import DecodeError
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.model.decode import decode_object, decode_pod_update
from topospread.model.objects import (
    KubeObject,
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
from topospread.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["CachedPod", "PodDecoder", "SchedulerCache", "decode_one"]

log = logging.getLogger("topospread.scheduler.cache")


def decode_one(raw: dict[str, Any], source: str = "informer") -> KubeObject | None:
    """One object from the informers, decoded as stored (as
    :func:`topospread.client.objects.decode_stored` and ``explain pod/NAME`` decode it:
    the server validated it when it was written, so an object an older release admitted
    is scheduled, not dropped); None (logged) when it cannot be read or is of a kind the
    scheduler does not model. The object alone goes through the decoder, without the list
    handling and duplicate checks of ``decode_stored`` (a third of the time per watch
    event, for nothing: one object has no duplicate)."""
    try:
        return decode_object(raw, "")
    except DecodeError as error:
        log.warning("object skipped: %s", DecodeError(source, error.errors))
        return None


SIBLINGS_REMEMBERED = 1024
"""How many pod templates (namespace and labels) :class:`PodDecoder` keeps a decoded
replica of; the oldest is forgotten first."""

_Decoded = tuple[dict[str, Any], Pod]


class PodDecoder:
    """The pod informer's objects decoded, each spec read once where it can be.

    A pod's next version (a bind, a status update) usually has the spec of the last one,
    and a new pod usually has the spec of the pod created before it with the same
    namespace and labels (the replicas of one ReplicaSet, Job or StatefulSet template):
    both are decoded from that pod with
    :func:`~topospread.model.decode.decode_pod_update`, which reads the spec again only
    when it differs. A new replica so decodes in 16-22 µs instead of 39-53 µs
    (`benchmarks/pod_decode.py`).
    """

    def __init__(self, siblings: int = SIBLINGS_REMEMBERED) -> None:
        self._versions: dict[str, _Decoded] = {}
        self._siblings: dict[tuple[object, ...], _Decoded] = {}
        self._sibling_limit = siblings

    def decode(self, key: str, raw: dict[str, Any]) -> KubeObject | None:
        """:func:`decode_one` of the pod ``key``'s version ``raw``; None (logged) when it
        cannot be read."""
        previous = self._versions.get(key)
        template = None
        if previous is None:
            template = _template(raw)
            try:
                previous = self._siblings.pop(template, None) if template else None
            except TypeError:  # a label value that is not a string (refused below)
                template = None
        if previous is None:
            pod = decode_one(raw)
        else:
            try:
                pod = decode_pod_update(raw, previous[0], previous[1], "")
            except DecodeError as error:
                log.warning("object skipped: %s", DecodeError("informer", error.errors))
                return None
        if isinstance(pod, Pod):
            self._versions[key] = (raw, pod)
            if template is not None:
                if len(self._siblings) >= self._sibling_limit:
                    del self._siblings[next(iter(self._siblings))]
                self._siblings[template] = (raw, pod)
        return pod

    def forget(self, key: str) -> None:
        """The pod ``key`` is gone (its replicas may still decode from it)."""
        self._versions.pop(key, None)


def _template(raw: dict[str, Any]) -> tuple[object, ...] | None:
    # What a pod shares with the replicas of its template (unhashable if a label value is
    # not a string); None without metadata.
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        return None
    labels = meta.get("labels")
    return (meta.get("namespace"), tuple(labels.items()) if isinstance(labels, dict) else None)


@dataclass(slots=True)
class CachedPod:
    """An assigned pod in the cache: confirmed by the informer, or assumed."""

    pod: Pod
    assumed: bool = False
    binding_finished: bool = False


_OBJECT_KINDS: dict[type, str] = {
    Service: "services",
    ReplicationController: "replication_controllers",
    ReplicaSet: "replica_sets",
    StatefulSet: "stateful_sets",
    Namespace: "namespaces",
    PodDisruptionBudget: "pod_disruption_budgets",
    PersistentVolume: "persistent_volumes",
    PersistentVolumeClaim: "persistent_volume_claims",
    StorageClass: "storage_classes",
    CSINode: "csi_nodes",
    CSIDriver: "csi_drivers",
    CSIStorageCapacity: "csi_storage_capacities",
    VolumeAttachment: "volume_attachments",
    ResourceClaim: "resource_claims",
    DeviceClass: "device_classes",
    ResourceSlice: "resource_slices",
    DeviceTaintRule: "device_taint_rules",
}


class SchedulerCache:
    """Nodes, assigned and assumed pods, and the listed objects, under one lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        """Held by every update and by each scheduling cycle."""
        self.snapshot = Snapshot(())
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, CachedPod] = {}
        """Assigned (or assumed) pods by ``namespace/name``."""
        self._on_node: dict[str, dict[str, Pod]] = {}
        """Node name -> its assigned pods, also for nodes not (or no longer) known."""
        self._objects: dict[str, dict[str, Any]] = {kind: {} for kind in _OBJECT_KINDS.values()}
        self._cluster_objects: ClusterObjects | None = None
        self.objects_generation = 0
        """Bumped whenever a listed object changes: frameworks built before are stale."""

    # -- nodes ---------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """``AddNode`` (or an update when the name is known)."""
        with self.lock:
            if node.name in self.nodes:
                self.update_node(node)
                return
            self.nodes[node.name] = node
            info = self.snapshot.add_node(node)
            for pod in self._on_node.get(node.name, {}).values():
                info.add_pod(pod)

    def update_node(self, node: Node) -> bool:
        """``UpdateNode``; False when nothing the scheduler reads changed."""
        with self.lock:
            old = self.nodes.get(node.name)
            if old is None:
                self.add_node(node)
                return True
            if old == node:
                return False
            self.nodes[node.name] = node
            self.snapshot.update_node(node)
            return True

    def remove_node(self, name: str) -> None:
        """``RemoveNode``: its pods stay known until they are deleted themselves."""
        with self.lock:
            if self.nodes.pop(name, None) is not None:
                self.snapshot.remove_node(name)

    # -- pods ----------------------------------------------------------------------------

    def _place(self, pod: Pod) -> None:
        self._on_node.setdefault(pod.node_name, {})[pod.key] = pod
        info = self.snapshot.get(pod.node_name)
        if info is not None:
            info.add_pod(pod)

    def _unplace(self, pod: Pod) -> None:
        on_node = self._on_node.get(pod.node_name)
        if on_node is not None:
            on_node.pop(pod.key, None)
            if not on_node:
                del self._on_node[pod.node_name]
        info = self.snapshot.get(pod.node_name)
        if info is not None:
            info.remove_pod(pod)

    def assume_pod(self, pod: Pod, node: str) -> Pod:
        """``AssumePod``: count ``pod`` on ``node`` before the bind; returns the assumed pod."""
        with self.lock:
            assumed = replace(pod, node_name=node)
            existing = self.pods.get(pod.key)
            if existing is not None:
                self._unplace(existing.pod)
            self.pods[pod.key] = CachedPod(assumed, assumed=True)
            self._place(assumed)
            return assumed

    def finish_binding(self, pod: Pod) -> None:
        """``FinishBinding``: the bind was accepted; the informer will confirm the pod."""
        with self.lock:
            cached = self.pods.get(pod.key)
            if cached is not None and cached.assumed:
                cached.binding_finished = True

    def forget_pod(self, pod: Pod) -> bool:
        """``ForgetPod``: undo an assumption (the bind failed). False when the pod is no
        longer assumed (the informer already reported where it really is)."""
        with self.lock:
            cached = self.pods.get(pod.key)
            if cached is None or not cached.assumed:
                return False
            if cached.pod.metadata.uid != pod.metadata.uid:
                return False
            self._unplace(cached.pod)
            del self.pods[pod.key]
            return True

    def is_assumed(self, key: str) -> bool:
        """Whether the pod is assumed and not yet confirmed."""
        with self.lock:
            cached = self.pods.get(key)
            return cached is not None and cached.assumed

    def add_pod(self, pod: Pod) -> None:
        """``AddPod``/``UpdatePod`` for an assigned pod: confirms an assumption, or moves the
        pod to the node the API server names."""
        with self.lock:
            existing = self.pods.get(pod.key)
            if existing is not None:
                if existing.pod == pod and not existing.assumed:
                    return
                if existing.assumed and self._confirm(existing.pod, pod):
                    return
                self._unplace(existing.pod)
            self.pods[pod.key] = CachedPod(pod)
            self._place(pod)

    def _confirm(self, assumed: Pod, bound: Pod) -> bool:
        # The informer's report of the bind of an assumed pod, on the node it was assumed
        # on: the bound object takes the assumed one's place without the counts being
        # undone and redone (NodeInfo.replace_pod), as the bind changes no request. The
        # binding may add the node's topology labels to the pod (v1.37), which the
        # counters see.
        if assumed.node_name != bound.node_name or assumed.metadata.uid != bound.metadata.uid:
            return False
        info = self.snapshot.get(bound.node_name)
        if info is None or not info.replace_pod(assumed, bound):
            return False
        self.pods[bound.key] = CachedPod(bound)
        self._on_node[bound.node_name][bound.key] = bound
        return True

    def remove_pod(self, key: str) -> Pod | None:
        """``RemovePod``: the pod is gone (deleted, terminal); returns what was cached."""
        with self.lock:
            cached = self.pods.pop(key, None)
            if cached is None:
                return None
            self._unplace(cached.pod)
            return cached.pod

    def pods_on(self, node: str) -> list[Pod]:
        """The pods the cache holds on ``node``."""
        with self.lock:
            return list(self._on_node.get(node, {}).values())

    # -- listed objects ------------------------------------------------------------------

    def set_object(self, obj: KubeObject) -> None:
        """Add or replace a Service, RC, ReplicaSet, StatefulSet, Namespace, PDB or storage
        object."""
        kind = _OBJECT_KINDS.get(type(obj))
        if kind is None:
            return
        with self.lock:
            key = f"{obj.metadata.namespace}/{obj.metadata.name}"
            if self._objects[kind].get(key) == obj:
                return
            self._objects[kind][key] = obj
            self._objects_changed()

    def assume_objects(self, assumed: Sequence[KubeObject]) -> None:
        """Reserve's assumptions (``AssumePodVolumes``): these objects stand in for the
        listed ones until the informer reports a change or :meth:`restore_objects`."""
        with self.lock:
            for obj in assumed:
                self.set_object(obj)

    def restore_objects(
        self, assumed: Sequence[KubeObject], originals: Sequence[KubeObject]
    ) -> None:
        """Unreserve: put ``originals`` back where the assumption still stands (an object
        the informer replaced meanwhile is newer than both and stays)."""
        with self.lock:
            for stand_in, original in zip(assumed, originals, strict=True):
                kind = _OBJECT_KINDS.get(type(stand_in))
                if kind is None:
                    continue
                key = f"{stand_in.metadata.namespace}/{stand_in.metadata.name}"
                if self._objects[kind].get(key) is stand_in:
                    self.set_object(original)

    def delete_object(self, kind: str, key: str) -> None:
        """Remove a listed object (``kind`` as in :class:`ClusterObjects`' fields)."""
        with self.lock:
            if self._objects[kind].pop(key, None) is not None:
                self._objects_changed()

    def _objects_changed(self) -> None:
        self._cluster_objects = None
        self.objects_generation += 1

    def cluster_objects(self) -> ClusterObjects:
        """The listed objects as the frameworks' handle takes them."""
        with self.lock:
            if self._cluster_objects is None:
                o = self._objects
                self._cluster_objects = ClusterObjects(
                    tuple(o["services"].values()),
                    tuple(o["replication_controllers"].values()),
                    tuple(o["replica_sets"].values()),
                    tuple(o["stateful_sets"].values()),
                    namespaces=tuple(o["namespaces"].values()),
                    pod_disruption_budgets=tuple(o["pod_disruption_budgets"].values()),
                    persistent_volumes=tuple(o["persistent_volumes"].values()),
                    persistent_volume_claims=tuple(o["persistent_volume_claims"].values()),
                    storage_classes=tuple(o["storage_classes"].values()),
                    csi_nodes=tuple(o["csi_nodes"].values()),
                    csi_drivers=tuple(o["csi_drivers"].values()),
                    csi_storage_capacities=tuple(o["csi_storage_capacities"].values()),
                    volume_attachments=tuple(o["volume_attachments"].values()),
                    resource_claims=tuple(o["resource_claims"].values()),
                    device_classes=tuple(o["device_classes"].values()),
                    resource_slices=tuple(o["resource_slices"].values()),
                    device_taint_rules=tuple(o["device_taint_rules"].values()),
                )
            return self._cluster_objects


OBJECT_FIELDS: dict[str, str] = {
    "Service": "services",
    "ReplicationController": "replication_controllers",
    "ReplicaSet": "replica_sets",
    "StatefulSet": "stateful_sets",
    "Namespace": "namespaces",
    "PodDisruptionBudget": "pod_disruption_budgets",
    "PersistentVolume": "persistent_volumes",
    "PersistentVolumeClaim": "persistent_volume_claims",
    "StorageClass": "storage_classes",
    "CSINode": "csi_nodes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_storage_capacities",
    "VolumeAttachment": "volume_attachments",
    "ResourceClaim": "resource_claims",
    "DeviceClass": "device_classes",
    "ResourceSlice": "resource_slices",
    "DeviceTaintRule": "device_taint_rules",
}
"""API kind -> the cache's collection of it."""
