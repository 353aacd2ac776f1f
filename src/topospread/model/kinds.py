"""The object kinds topospread reads: one table, from which everything else derives.

Each row says, for one kind, where it lives in the API (group, version, plural, whether
namespaced), which decoder reads it from files and from the server, whether the live
commands list it (and whether a server may not serve it), the verbs
``deploy/rbac/reader.yaml`` grants on it, whether ``topospread scheduler``'s informers
watch it, and how ``snapshot --anonymize`` treats it. From the table derive:

- :data:`topospread.model.decode.SUPPORTED_KINDS` and :func:`~topospread.model.decode.
  decode_object`'s dispatch (``decoder``);
- :mod:`topospread.client.source`'s :class:`~topospread.client.source.Resource` objects and
  the lists the live commands read (``listed``, ``optional``);
- the scheduler's informers (``watched``);
- :class:`~topospread.client.snapshot.Anonymizer`'s dispatch (``anonymizer``);
- the live tests' resource map (:mod:`topospread.testing.live`);
- and the RBAC manifests under ``deploy/`` are kept in step with it by a test (they are
  YAML that users apply, not generated at run time).

Adding a kind is one row here (plus its decoder, its model type and its anonymizer hook,
where it needs one); a test fails for each place the row does not reach yet.

The rows hold plain data only: the model imports no client code, so the client builds its
``Resource`` objects from ``group``, ``version`` and ``plural``, and names such as the
decoder and the anonymizer hook are resolved by the layer that owns them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from enum import Enum
from typing import Final

__all__ = [
    "KINDS",
    "KINDS_BY_NAME",
    "METADATA_ONLY",
    "READ",
    "Decoder",
    "Kind",
    "Listing",
]


class Decoder(Enum):
    """Which decoder :func:`~topospread.model.decode.decode_object` hands a kind to."""

    CORE = "core"
    """:mod:`topospread.model.decode` itself (pods, nodes, namespaces, services...)."""
    WORKLOAD = "workload"
    """:func:`~topospread.model.decode.decode_workload`, the whole object."""
    PRIORITY_CLASS = "priorityclass"
    """:func:`~topospread.model.priorityclass.decode_priority_class`."""
    STORAGE = "storage"
    """:func:`~topospread.model.decode_storage.decode_storage_object`."""
    RESOURCE = "resource"
    """:func:`~topospread.model.decode_resource.decode_resource_object` (``resource.k8s.io``)."""


class Listing(Enum):
    """Which live reads list a kind."""

    SCHEDULER = "scheduler"
    """Every live read: what the scheduler reads (``explain pod/NAME``, ``snapshot``,
    ``simulate --from-cluster``), and so also ``audit`` and ``rebalance``."""
    AUDIT = "audit"
    """Only ``audit`` and ``rebalance``: the other owners of pods."""
    AUTOSCALER = "autoscaler"
    """Only ``explain --autoscaler``: the autoscaler's own objects."""


READ: Final = ("get", "list")
"""What the reader role grants on every kind the live commands list: no watch, no write."""

METADATA_ONLY: Final = "metadata"
"""The anonymizer hook of kinds with nothing private beyond their metadata: names,
namespaces, labels and uids get stand-ins and annotations are dropped, as for every kind."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One object kind: where the API serves it and what each part of topospread does
    with it."""

    kind: str
    group: str
    """The API group; ``""`` is the core group (``v1``)."""
    version: str
    plural: str
    """The resource name in URLs and RBAC rules."""
    _: KW_ONLY
    namespaced: bool
    decoder: Decoder | None
    """None: :func:`~topospread.model.decode.decode_object` skips it (a note names it);
    commands that need it read it themselves (Deployments with
    :func:`~topospread.model.decode.decode_workload`, audit's workload owners)."""
    listed: Listing
    optional: bool = False
    """A server may not serve it (an API group that is off, a CRD not installed): a 404 on
    its list means there are none, not an error."""
    reader_verbs: tuple[str, ...] = READ
    """What ``deploy/rbac/reader.yaml`` grants on it."""
    watched: bool = False
    """``topospread scheduler`` runs an informer for it (and ``deploy/scheduler/rbac.yaml``
    grants get, list and watch on it)."""
    anonymizer: str = METADATA_ONLY
    """The name of the :class:`~topospread.client.snapshot.Anonymizer` hook for its
    fields, or :data:`METADATA_ONLY`."""

    @property
    def api_version(self) -> str:
        """``v1`` or ``group/version``, as objects carry it."""
        return f"{self.group}/{self.version}" if self.group else self.version


_S, _A = Listing.SCHEDULER, Listing.AUDIT
_CORE, _APPS, _STORAGE, _RESOURCE = "", "apps", "storage.k8s.io", "resource.k8s.io"

KINDS: Final[tuple[Kind, ...]] = (
    # Order matters: live reads list (and return objects) in this order, and the informers
    # start in it.
    Kind(
        "Node",
        _CORE,
        "v1",
        "nodes",
        namespaced=False,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="node",
    ),
    Kind(
        "Pod",
        _CORE,
        "v1",
        "pods",
        namespaced=True,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="pod",
    ),
    Kind(
        "Namespace",
        _CORE,
        "v1",
        "namespaces",
        namespaced=False,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
    ),
    Kind(
        "Service",
        _CORE,
        "v1",
        "services",
        namespaced=True,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="service",
    ),
    Kind(
        "ReplicationController",
        _CORE,
        "v1",
        "replicationcontrollers",
        namespaced=True,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="replication_controller",
    ),
    Kind(
        "ReplicaSet",
        _APPS,
        "v1",
        "replicasets",
        namespaced=True,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="workload",
    ),
    Kind(
        "StatefulSet",
        _APPS,
        "v1",
        "statefulsets",
        namespaced=True,
        decoder=Decoder.CORE,
        listed=_S,
        watched=True,
        anonymizer="workload",
    ),
    # Not watched: the owners of ReplicaSets, for the simulator and audit.
    Kind(
        "Deployment",
        _APPS,
        "v1",
        "deployments",
        namespaced=True,
        decoder=None,
        listed=_S,
        anonymizer="workload",
    ),
    Kind(
        "PodDisruptionBudget",
        "policy",
        "v1",
        "poddisruptionbudgets",
        namespaced=True,
        decoder=Decoder.WORKLOAD,
        listed=_S,
        watched=True,
        anonymizer="pod_disruption_budget",
    ),
    # What the API server's admission reads (pods read from a server are admitted already;
    # a pod from a manifest is admitted over these: topospread.model.admission.admit_pod).
    Kind(
        "PriorityClass",
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        namespaced=False,
        decoder=Decoder.PRIORITY_CLASS,
        listed=_S,
    ),
    Kind(
        "LimitRange", _CORE, "v1", "limitranges", namespaced=True, decoder=Decoder.CORE, listed=_S
    ),
    Kind(
        "RuntimeClass",
        "node.k8s.io",
        "v1",
        "runtimeclasses",
        namespaced=False,
        decoder=Decoder.CORE,
        listed=_S,
        anonymizer="runtime_class",
    ),
    # What the volume plugins read (VolumeBinding, VolumeZone, NodeVolumeLimits,
    # VolumeRestrictions).
    Kind(
        "PersistentVolume",
        _CORE,
        "v1",
        "persistentvolumes",
        namespaced=False,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="persistent_volume",
    ),
    Kind(
        "PersistentVolumeClaim",
        _CORE,
        "v1",
        "persistentvolumeclaims",
        namespaced=True,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="persistent_volume_claim",
    ),
    Kind(
        "StorageClass",
        _STORAGE,
        "v1",
        "storageclasses",
        namespaced=False,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="storage_class",
    ),
    Kind(
        "CSINode",
        _STORAGE,
        "v1",
        "csinodes",
        namespaced=False,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="csi_node",
    ),
    Kind(
        "CSIDriver",
        _STORAGE,
        "v1",
        "csidrivers",
        namespaced=False,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
    ),
    Kind(
        "CSIStorageCapacity",
        _STORAGE,
        "v1",
        "csistoragecapacities",
        namespaced=True,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="csi_storage_capacity",
    ),
    Kind(
        "VolumeAttachment",
        _STORAGE,
        "v1",
        "volumeattachments",
        namespaced=False,
        decoder=Decoder.STORAGE,
        listed=_S,
        watched=True,
        anonymizer="volume_attachment",
    ),
    # What DynamicResources reads (resource.k8s.io/v1, GA since 1.34; a server without it,
    # or with DeviceTaintRules off, answers 404 and has none). Templates only matter to the
    # controller that creates claims from them: listed, not watched.
    Kind(
        "ResourceClaim",
        _RESOURCE,
        "v1",
        "resourceclaims",
        namespaced=True,
        decoder=Decoder.RESOURCE,
        listed=_S,
        optional=True,
        watched=True,
        anonymizer="resource_claim",
    ),
    Kind(
        "ResourceClaimTemplate",
        _RESOURCE,
        "v1",
        "resourceclaimtemplates",
        namespaced=True,
        decoder=Decoder.RESOURCE,
        listed=_S,
        optional=True,
        anonymizer="resource_claim_template",
    ),
    Kind(
        "DeviceClass",
        _RESOURCE,
        "v1",
        "deviceclasses",
        namespaced=False,
        decoder=Decoder.RESOURCE,
        listed=_S,
        optional=True,
        watched=True,
        anonymizer="device_class",
    ),
    Kind(
        "ResourceSlice",
        _RESOURCE,
        "v1",
        "resourceslices",
        namespaced=False,
        decoder=Decoder.RESOURCE,
        listed=_S,
        optional=True,
        watched=True,
        anonymizer="resource_slice",
    ),
    Kind(
        "DeviceTaintRule",
        _RESOURCE,
        "v1",
        "devicetaintrules",
        namespaced=False,
        decoder=Decoder.RESOURCE,
        listed=_S,
        optional=True,
        watched=True,
        anonymizer="device_taint_rule",
    ),
    # The other workload kinds that own pods, for audit.
    Kind(
        "DaemonSet",
        _APPS,
        "v1",
        "daemonsets",
        namespaced=True,
        decoder=None,
        listed=_A,
        anonymizer="workload",
    ),
    Kind("Job", "batch", "v1", "jobs", namespaced=True, decoder=None, listed=_A),
    Kind("CronJob", "batch", "v1", "cronjobs", namespaced=True, decoder=None, listed=_A),
    # Karpenter's NodePools (explain --autoscaler); a server without Karpenter's CRDs
    # answers 404 and has none.
    Kind(
        "NodePool",
        "karpenter.sh",
        "v1",
        "nodepools",
        namespaced=False,
        decoder=None,
        listed=Listing.AUTOSCALER,
        optional=True,
    ),
)

KINDS_BY_NAME: Final[Mapping[str, Kind]] = {k.kind: k for k in KINDS}
