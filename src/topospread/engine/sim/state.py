"""The simulated API server's objects: nodes, pods, the workloads that own them and storage.

Mutable on purpose (a simulation changes it thousands of times); every change goes
through a method here, which tells the :class:`Listener` (the simulator) so that the
scheduler's snapshot, its queue and the controllers' work queues follow. Pure.

Simplifications, each documented where it matters:

* a pod is Running and Ready the moment it is bound (no image pulls, no probes,
  minReadySeconds 0), and a deleted pod is gone at once (no graceful termination);
* the API server's admission on pod create is applied
  (:func:`topospread.model.admission.admit_pod`, the same for every pod topospread
  reads: LimitRanger, Priority, DefaultTolerationSeconds and RuntimeClass over the
  scenario's LimitRanges, PriorityClasses and RuntimeClasses, then ``matchLabelKeys``
  merged into spread and affinity selectors, host-network ports, pod-level requests); a
  pod gets ``metadata.uid`` (the owner of its ephemeral claims is named by it) unless it
  already has one;
* storage objects (classes, volumes, claims, CSI objects) are held as the API server holds
  them; what the volume controllers do with them is in :mod:`.volumes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from topospread.model.admission import (
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    AdmissionObjects,
    admit_pod,
)
from topospread.model.objects import (
    Deployment,
    LimitRange,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    RuntimeClass,
    Service,
    StatefulSet,
)
from topospread.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = [
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
    "ClusterState",
    "DeploymentState",
    "Listener",
    "OwnerKey",
    "PodRecord",
    "ReplicaSetState",
    "StatefulSetState",
    "StorageObject",
]


OwnerKey = tuple[str, str, str]
"""(kind, namespace, name) of a pod's controller."""

StorageObject = (
    PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | VolumeAttachment
)
"""The storage kinds a scenario may hold."""


@dataclass(slots=True)
class PodRecord:
    """A pod and the status fields controllers rank by."""

    pod: Pod
    """The object; ``node_name`` and ``phase`` change when it is bound."""
    uid: str
    created: int
    """Creation time (simulated seconds)."""
    owner: OwnerKey | None = None
    ready_since: int | None = None
    """When it became Ready (= bound), None while Pending."""
    restarts: int = 0
    revision: str = ""
    """StatefulSet pods: the controller-revision-hash they were created from."""

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return self.pod.key

    @property
    def node_name(self) -> str:
        """The node it is bound to, or ``""``."""
        return self.pod.node_name

    @property
    def ready(self) -> bool:
        """Bound pods are Running and Ready (simulator simplification)."""
        return self.ready_since is not None


@dataclass(slots=True)
class ReplicaSetState:
    """A ReplicaSet as its controller and the deployment controller see it."""

    obj: ReplicaSet
    uid: str
    created: int
    replicas: int
    owner: OwnerKey | None = None
    """The Deployment that controls it, if any."""
    annotations: dict[str, str] = field(default_factory=dict)
    """``deployment.kubernetes.io/{desired,max}-replicas`` and ``revision``."""

    @property
    def name(self) -> str:
        """The ReplicaSet's name."""
        return self.obj.metadata.name

    @property
    def namespace(self) -> str:
        """The ReplicaSet's namespace."""
        return self.obj.metadata.namespace


@dataclass(slots=True)
class DeploymentState:
    """A Deployment: its desired spec (template, replicas) and collision count."""

    obj: Deployment
    uid: str
    created: int
    replicas: int
    template: Pod
    collision_count: int = 0


@dataclass(slots=True)
class StatefulSetState:
    """A StatefulSet: desired replicas and template; revision is the template's hash."""

    obj: StatefulSet
    uid: str
    created: int
    replicas: int
    template: Pod
    revision: str = ""


class Listener(Protocol):
    """What the simulator does when the state changes."""

    def pod_created(self, record: PodRecord) -> None:
        """A new pod exists (pending unless created with a node)."""
        ...

    def pod_deleted(self, record: PodRecord, reason: str) -> None:
        """A pod is gone; ``reason`` says why (scale-down, eviction, node failure...)."""
        ...

    def workload_changed(self, owner: OwnerKey) -> None:
        """A controller's spec changed: it must sync."""
        ...

    def storage_changed(self, what: str, provisioned: str = "") -> None:
        """A storage object was created, changed or deleted; ``what`` says which and how.
        ``provisioned`` is set when a volume was provisioned: ``claim in where``."""
        ...


class ClusterState:
    """Every object of the simulated cluster, with indexes the controllers need."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.now = 0
        """Simulated seconds; the simulator advances it."""
        self.nodes: dict[str, Node] = {}
        """Nodes in order of creation (the scheduler's node order)."""
        self.pods: dict[str, PodRecord] = {}
        """Pods by ``namespace/name``, in creation order."""
        self.owned: dict[OwnerKey, dict[str, PodRecord]] = {}
        """Controller -> its pods (creation order)."""
        self.unowned: dict[str, PodRecord] = {}
        """Pods no controller owns (yet): those a scenario wrote, until one claims them."""
        self.deployments: dict[tuple[str, str], DeploymentState] = {}
        self.replica_sets: dict[tuple[str, str], ReplicaSetState] = {}
        self.stateful_sets: dict[tuple[str, str], StatefulSetState] = {}
        self.services: dict[tuple[str, str], Service] = {}
        self.namespaces: dict[str, Namespace] = {}
        """Their labels are what inter-pod affinity's namespaceSelector matches."""
        self.replication_controllers: dict[tuple[str, str], ReplicationController] = {}
        self.budgets: dict[tuple[str, str], PodDisruptionBudget] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.limit_ranges: dict[tuple[str, str], LimitRange] = {}
        self.runtime_classes: dict[str, RuntimeClass] = {}
        # Storage, each kind in creation order (the listers' order); replaced in place.
        self.storage_classes: dict[str, StorageClass] = {}
        self.volumes: dict[str, PersistentVolume] = {}
        self.claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.storage_capacities: dict[tuple[str, str], CSIStorageCapacity] = {}
        self.volume_attachments: dict[str, VolumeAttachment] = {}
        self._uid = 0

    def new_uid(self) -> str:
        """A fresh, ordered uid."""
        self._uid += 1
        return f"uid-{self._uid:08d}"

    # -- pods -----------------------------------------------------------------------------

    def pods_of(self, owner: OwnerKey) -> Iterator[PodRecord]:
        """The pods a controller owns, in creation order."""
        return iter(list(self.owned.get(owner, {}).values()))

    def count_of(self, owner: OwnerKey) -> int:
        """How many pods a controller owns."""
        return len(self.owned.get(owner, ()))

    def admission_objects(self) -> AdmissionObjects:
        """What the admission of a pod or claim created now reads."""
        return AdmissionObjects(
            tuple(self.priority_classes.values()),
            tuple(self.limit_ranges.values()),
            tuple(self.runtime_classes.values()),
            tuple(self.storage_classes.values()),
        )

    def create_pod(self, pod: Pod, owner: OwnerKey | None, revision: str = "") -> PodRecord:
        """Admit and store a pod; the listener queues it for scheduling."""
        admitted = admit_pod(pod, self.admission_objects())
        record = PodRecord(admitted, self.new_uid(), self.now, owner, revision=revision)
        if not record.pod.metadata.uid:
            # The API server gives every pod a uid; the ephemeral volume controller names the
            # pod by it as the owner of its claims, and VolumeBinding checks that owner.
            record.pod = replace(record.pod, metadata=replace(record.pod.metadata, uid=record.uid))
        if pod.node_name:
            record.pod = replace(record.pod, phase="Running")
            record.ready_since = self.now
        self.pods[record.key] = record
        if owner is not None:
            self.owned.setdefault(owner, {})[record.key] = record
        else:
            self.unowned[record.key] = record
        self.listener.pod_created(record)
        return record

    def claim(self, record: PodRecord, owner: OwnerKey, revision: str = "") -> None:
        """A controller takes an existing pod as its own (``ClaimPods``)."""
        self.unowned.pop(record.key, None)
        record.owner = owner
        if revision:
            record.revision = revision
        self.owned.setdefault(owner, {})[record.key] = record

    def bind(self, record: PodRecord, node_name: str, bound: Pod | None = None) -> None:
        """Record a binding: the pod runs on the node and is Ready at once (``bound``: the
        pod as it now is, when the caller made it already)."""
        record.pod = bound or replace(record.pod, node_name=node_name, phase="Running")
        record.ready_since = self.now

    def delete_pod(self, key: str, reason: str) -> PodRecord | None:
        """Delete a pod at once; its controller is told so that it can replace it."""
        record = self.pods.pop(key, None)
        if record is None:
            return None
        if record.owner is not None:
            owned = self.owned.get(record.owner)
            if owned is not None:
                owned.pop(key, None)
        else:
            self.unowned.pop(key, None)
        self.listener.pod_deleted(record, reason)
        if record.owner is not None:
            self.listener.workload_changed(record.owner)
        return record

    # -- workloads ------------------------------------------------------------------------

    def replica_sets_of(self, deployment: tuple[str, str]) -> list[ReplicaSetState]:
        """ReplicaSets a Deployment controls, oldest first (name breaks ties)."""
        owner: OwnerKey = ("Deployment", *deployment)
        found = [rs for rs in self.replica_sets.values() if rs.owner == owner]
        found.sort(key=lambda rs: (rs.created, rs.name))
        return found

    # -- storage --------------------------------------------------------------------------

    def put_storage(self, obj: StorageObject, what: str, provisioned: str = "") -> None:
        """Create or replace a storage object (by kind, namespace and name)."""
        name, namespace = obj.metadata.name, obj.metadata.namespace
        if isinstance(obj, PersistentVolumeClaim):
            self.claims[(namespace, name)] = obj
        elif isinstance(obj, PersistentVolume):
            self.volumes[name] = obj
        elif isinstance(obj, StorageClass):
            self.storage_classes[name] = obj
        elif isinstance(obj, CSINode):
            self.csi_nodes[name] = obj
        elif isinstance(obj, CSIDriver):
            self.csi_drivers[name] = obj
        elif isinstance(obj, CSIStorageCapacity):
            self.storage_capacities[(namespace, name)] = obj
        else:
            self.volume_attachments[name] = obj
        self.listener.storage_changed(what, provisioned)

    def delete_claim(self, namespace: str, name: str, why: str) -> PersistentVolumeClaim | None:
        """Delete a claim at once (no finalizers: nothing here uses it any more)."""
        claim = self.claims.pop((namespace, name), None)
        if claim is not None:
            self.listener.storage_changed(
                f"PersistentVolumeClaim {namespace}/{name} deleted ({why})"
            )
        return claim

    def delete_volume(self, name: str, why: str) -> PersistentVolume | None:
        """Delete a PersistentVolume at once."""
        volume = self.volumes.pop(name, None)
        if volume is not None:
            self.listener.storage_changed(f"PersistentVolume {name} deleted ({why})")
        return volume
