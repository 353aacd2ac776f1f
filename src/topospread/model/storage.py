"""The storage objects the volume plugins read: PersistentVolumes and their claims,
StorageClasses, and the CSI objects (CSINode, CSIDriver, CSIStorageCapacity,
VolumeAttachment), as frozen, typed values holding what scheduling reads.

Defaults are the API server's (``SetDefaults_*`` of core/v1 and storage/v1): a claim's and
a volume's ``volumeMode`` is ``Filesystem``, a StorageClass's ``volumeBindingMode`` is
``Immediate``, a CSIDriver's ``attachRequired`` is true and ``storageCapacity`` false, a
claim's phase is ``Pending`` and a volume's ``Pending`` until a controller writes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from topospread.model.objects import (
    CSIVolumeSource,
    InTreeSource,
    LabelSelector,
    NodeSelector,
    ObjectMeta,
    PersistentVolumeClaimSpec,
)
from topospread.model.quantity import Quantity

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_MIGRATED_PLUGINS",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "VolumeAttachment",
]

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
"""Read before ``storageClassName`` on claims and volumes (``GetPersistentVolumeClaimClass``)."""
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""Set on a WaitForFirstConsumer claim by the scheduler's PreBind: provision on this node."""
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"
ANN_MIGRATED_PLUGINS: Final = "storage.alpha.kubernetes.io/migrated-plugins"
"""On a CSINode: the in-tree plugins whose volumes the node's CSI drivers serve."""


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    """A core/v1 PersistentVolumeClaim."""

    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec = field(default_factory=PersistentVolumeClaimSpec)
    phase: str = "Pending"
    """``status.phase``: ``Pending``, ``Bound`` or ``Lost``."""

    @property
    def name(self) -> str:
        """The claim's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The claim's namespace."""
        return self.metadata.namespace

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


@dataclass(frozen=True, slots=True)
class ClaimReference:
    """A PV's ``spec.claimRef``: the claim it is bound or pre-bound to."""

    name: str
    namespace: str = ""
    uid: str = ""


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    """A core/v1 PersistentVolume (cluster-scoped)."""

    metadata: ObjectMeta
    capacity: Quantity | None = None
    """``spec.capacity.storage``."""
    access_modes: tuple[str, ...] = ()
    claim_ref: ClaimReference | None = None
    storage_class_name: str = ""
    volume_mode: str = "Filesystem"
    volume_attributes_class_name: str | None = None
    node_affinity: NodeSelector | None = None
    """``spec.nodeAffinity.required``."""
    phase: str = "Pending"
    """``status.phase``: ``Pending``, ``Available``, ``Bound``, ``Released`` or ``Failed``."""
    csi: CSIVolumeSource | None = None
    in_tree: InTreeSource | None = None
    """A migratable in-tree source (GCE PD, AWS EBS, ...), when the volume has one."""
    sources: tuple[str, ...] = ()
    """The volume source fields the spec sets (``csi``, ``local``, ``nfs``, ...), in the
    order ``ValidatePersistentVolumeSpec`` visits them; valid volumes have exactly one."""

    @property
    def name(self) -> str:
        """The volume's name."""
        return self.metadata.name


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """A StorageClass ``allowedTopologies`` term: every (key, values) requirement must hold."""

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class StorageClass:
    """A storage.k8s.io/v1 StorageClass."""

    metadata: ObjectMeta
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"
    """``Immediate`` or ``WaitForFirstConsumer``."""
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    parameters: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The class's name."""
        return self.metadata.name


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    """A CSINode ``spec.drivers`` entry."""

    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    allocatable_count: int | None = None
    """``allocatable.count``: how many of this driver's volumes the node may attach."""


@dataclass(frozen=True, slots=True)
class CSINode:
    """A storage.k8s.io/v1 CSINode; named as its node."""

    metadata: ObjectMeta
    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def name(self) -> str:
        """The node's name."""
        return self.metadata.name


@dataclass(frozen=True, slots=True)
class CSIDriver:
    """A storage.k8s.io/v1 CSIDriver."""

    metadata: ObjectMeta
    attach_required: bool = True
    storage_capacity: bool = False
    """Whether the scheduler checks CSIStorageCapacity before provisioning."""
    prevent_pod_scheduling_if_missing: bool | None = None

    @property
    def name(self) -> str:
        """The driver's name."""
        return self.metadata.name


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    """A storage.k8s.io/v1 CSIStorageCapacity: free space of one class in one topology."""

    metadata: ObjectMeta
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None
    """None matches no node."""
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    """A storage.k8s.io/v1 VolumeAttachment."""

    metadata: ObjectMeta
    attacher: str = ""
    node_name: str = ""
    persistent_volume_name: str | None = None
    """``spec.source.persistentVolumeName`` (None for inline volume specs)."""
    attached: bool = False
    inline_volume_spec: bool = False
    """Whether ``spec.source.inlineVolumeSpec`` is set (a migrated inline volume)."""
