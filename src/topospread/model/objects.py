"""The Kubernetes objects the scheduler reads, as frozen, typed values.

Only the fields that scheduling decisions depend on are modelled; everything else in
an input file is ignored. Field names follow the Go API types in snake case, and each
wire-level default (``namespace: default``, nil vs empty selectors) is kept exactly as
the API server would store it, because nil and empty mean different things here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final, Union

from topospread.model.quantity import Quantity

if TYPE_CHECKING:
    from topospread.model.resource import (
        DeviceClass,
        DeviceTaintRule,
        PodResourceClaim,
        PodResourceClaimStatus,
        ResourceClaim,
        ResourceClaimTemplate,
        ResourceSlice,
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
    "LABEL_HOSTNAME",
    "LABEL_METADATA_NAME",
    "LABEL_TOPOLOGY_REGION",
    "LABEL_TOPOLOGY_ZONE",
    "OMIT_EMPTY",
    "PREEMPT_LOWER_PRIORITY",
    "Affinity",
    "CSIVolumeSource",
    "ClaimTemplate",
    "Container",
    "ContainerPort",
    "Deployment",
    "DeploymentStrategy",
    "InTreeSource",
    "InlineVolume",
    "IntOrString",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LimitRange",
    "LimitRangeItem",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeInclusionPolicy",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectMeta",
    "OwnerReference",
    "PersistentVolumeClaimSpec",
    "Pod",
    "PodAffinityTerm",
    "PodCondition",
    "PodDisruptionBudget",
    "PodVolume",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "RuntimeClass",
    "Service",
    "StatefulSet",
    "Taint",
    "TaintEffect",
    "Toleration",
    "TolerationOperator",
    "TopologySpreadConstraint",
    "UnsatisfiableConstraintAction",
    "WeightedPodAffinityTerm",
]

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_METADATA_NAME: Final = "kubernetes.io/metadata.name"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION: Final = "topology.kubernetes.io/region"

ResourceList = Mapping[str, Quantity]

OMIT_EMPTY: Final[Mapping[str, bool]] = {"omitempty": True}
"""Field metadata: renderings that list every field (the simulator's template hash) leave
the field out while it holds its default, so that adding it changed no earlier value."""


class UnsatisfiableConstraintAction(StrEnum):
    """``whenUnsatisfiable``: what to do with a pod that cannot satisfy a constraint."""

    DO_NOT_SCHEDULE = "DoNotSchedule"
    SCHEDULE_ANYWAY = "ScheduleAnyway"


class NodeInclusionPolicy(StrEnum):
    """``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` values."""

    HONOR = "Honor"
    IGNORE = "Ignore"


class TaintEffect(StrEnum):
    """Taint effects."""

    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class TolerationOperator(StrEnum):
    """Toleration operators; ``Gt``/``Lt`` exist only behind an alpha gate upstream."""

    EXISTS = "Exists"
    EQUAL = "Equal"
    GT = "Gt"
    LT = "Lt"


@dataclass(frozen=True, slots=True)
class OwnerReference:
    """A ``metadata.ownerReferences`` entry."""

    api_version: str
    kind: str
    name: str
    uid: str = ""
    controller: bool | None = None
    """Only an owner with ``controller: true`` counts as the pod's controller."""


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """The metadata fields scheduling reads."""

    name: str
    namespace: str = ""
    """Empty for cluster-scoped objects; namespaced objects default to ``default`` at decode."""
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    deletion_timestamp: str | None = None
    """Set on terminating objects; terminating pods are never counted (kubernetes#87621)."""
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: str | None = field(default=None, metadata=OMIT_EMPTY)
    """``creationTimestamp`` as written (RFC 3339); of several default StorageClasses the
    DefaultStorageClass admission plugin takes the newest."""

    def controller(self) -> OwnerReference | None:
        """The owner with ``controller: true`` (``metav1.GetControllerOf``), if any."""
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


@dataclass(frozen=True, slots=True)
class LabelSelectorRequirement:
    """A ``matchExpressions`` entry of a LabelSelector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """The wire form of ``metav1.LabelSelector``; a missing selector is ``None`` where used."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """One ``spec.topologySpreadConstraints`` entry as written; the plugin applies defaults."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    """Kept as a string so that invalid values reach validation and are reported there."""
    label_selector: LabelSelector | None = None
    """``None`` selects no pods; an empty selector selects all pods of the namespace."""
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """A node selector expression (label or field)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """An OR-ed term of a NodeSelector: AND of its expressions and fields."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``requiredDuringSchedulingIgnoredDuringExecution``: the OR of its terms."""

    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """A weighted preferred node affinity term."""

    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    """Node affinity of a pod."""

    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    preferred_given: bool = field(default=False, metadata={"omitempty": True})
    """Whether ``preferredDuringSchedulingIgnoredDuringExecution`` was given as a list, even
    an empty one: upstream tests that slice for nil, and an explicit ``[]`` is not nil, so
    NodeAffinity's PreScore runs (and scores 0) instead of skipping. (Objects read back from
    an API server never carry ``[]``: storage drops empty lists.)"""


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """An inter-pod (anti-)affinity term."""

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    """A preferred inter-pod (anti-)affinity term."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class Affinity:
    """``spec.affinity``. Pod affinity terms are modelled for detection and validation."""

    node_affinity: NodeAffinity | None = None
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_affinity(self) -> bool:
        """Whether any inter-pod affinity or anti-affinity term is set."""
        return bool(
            self.pod_affinity_required
            or self.pod_affinity_preferred
            or self.pod_anti_affinity_required
            or self.pod_anti_affinity_preferred
        )


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint."""

    key: str
    effect: str
    value: str = ""


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; an empty operator means ``Equal``."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class ContainerPort:
    """A container port; only ``hostPort`` matters to scheduling."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True, slots=True)
class Container:
    """A (regular, init or sidecar) container's scheduling-relevant fields."""

    name: str = ""
    image: str = ""
    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    """``Always`` on an init container makes it a sidecar (restartable init container)."""
    restart_policy_rule_actions: tuple[str, ...] = field(default=(), metadata=OMIT_EMPTY)
    """``restartPolicyRules[*].action`` (NodeDeclaredFeatures infers a node feature)."""
    bind_mount_options: bool = field(default=False, metadata=OMIT_EMPTY)
    """Whether a ``volumeMounts`` entry has ``bindMountOptions`` (NodeDeclaredFeatures)."""


@dataclass(frozen=True, slots=True)
class InlineVolume:
    """A pod volume's in-tree disk sources that VolumeRestrictions compares (each None when
    the volume does not set it; validation allows one source, decoding keeps them all)."""

    name: str = ""
    gce_persistent_disk: tuple[str, bool] | None = None
    """(``pdName``, ``readOnly``)."""
    aws_elastic_block_store: str | None = None
    """``volumeID``."""
    iscsi: tuple[str, bool] | None = None
    """(``iqn``, ``readOnly``)."""
    rbd: tuple[tuple[str, ...], str, str, bool] | None = None
    """(``monitors``, ``pool`` — defaulted to ``rbd`` —, ``image``, ``readOnly``)."""


IN_TREE_MIGRATABLE_SOURCES: Final = (
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cinder",
    "gcePersistentDisk",
    "portworxVolume",
    "vsphereVolume",
)
"""Volume source fields of the in-tree plugins that CSI migration translates
(``k8s.io/csi-translation-lib``), as spelt in a pod volume and in a PV spec."""


@dataclass(frozen=True, slots=True)
class InTreeSource:
    """An in-tree volume source that CSI migration can translate (NodeVolumeLimits counts
    it against the CSI driver's limit), with its scalar fields as written.

    ``kind`` is the source's field name (one of :data:`IN_TREE_MIGRATABLE_SOURCES`);
    ``fields`` maps each scalar field of the source to its value as a string (booleans
    ``true``/``false``, numbers in decimal), so the CSI translation can build the same
    volume handle as upstream's translator does.
    """

    kind: str
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CSIVolumeSource:
    """A ``csi`` volume source: a PV's (driver and ``volumeHandle``) or a pod's inline
    CSI ephemeral volume (driver only; NodeVolumeLimits does not count those)."""

    driver: str
    volume_handle: str = ""
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaimSpec:
    """``spec`` of a PersistentVolumeClaim (also the template of an ``ephemeral`` volume and
    a StatefulSet's ``volumeClaimTemplates``), as the API server stores it."""

    access_modes: tuple[str, ...] = ()
    selector: LabelSelector | None = None
    storage_request: Quantity | None = None
    """``resources.requests.storage``."""
    storage_class_name: str | None = None
    """None when unset (the default StorageClass applies at admission); ``""`` asks for
    no class."""
    volume_name: str = ""
    """``volumeName``: the PV the claim is bound (or pre-bound) to."""
    volume_mode: str = "Filesystem"
    """Defaulted to ``Filesystem`` (``SetDefaults_PersistentVolumeClaimSpec``)."""
    volume_attributes_class_name: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimTemplate:
    """A claim template: a StatefulSet's ``volumeClaimTemplates`` entry or an ``ephemeral``
    volume's ``volumeClaimTemplate`` (metadata without a name for the latter)."""

    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec = field(default_factory=PersistentVolumeClaimSpec)


@dataclass(frozen=True, slots=True)
class PodVolume:
    """A ``spec.volumes`` entry, with the sources the volume plugins read.

    At most one of ``claim_name``, ``ephemeral``, ``in_tree`` and ``csi`` is set (API
    validation allows one source); other sources (emptyDir, configMap, hostPath, ...) leave
    all of them unset.
    """

    name: str
    claim_name: str | None = None
    """``persistentVolumeClaim.claimName``."""
    read_only: bool = False
    """``persistentVolumeClaim.readOnly``."""
    ephemeral: ClaimTemplate | None = None
    """A generic ephemeral volume: its claim is named ``<pod name>-<volume name>`` and must
    be owned by the pod (``ephemeral.VolumeClaimName``, ``VolumeIsForPod``)."""
    in_tree: InTreeSource | None = None
    """A migratable in-tree source (GCE PD, AWS EBS, Azure Disk/File, Cinder, vSphere,
    Portworx)."""
    csi: CSIVolumeSource | None = None
    """An inline CSI ephemeral volume."""

    def claim_for(self, pod_name: str) -> str | None:
        """The name of the PersistentVolumeClaim this volume uses in a pod named
        ``pod_name``, or None when it uses none."""
        if self.claim_name is not None:
            return self.claim_name
        if self.ephemeral is not None:
            return f"{pod_name}-{self.name}"
        return None


@dataclass(frozen=True, slots=True)
class PodCondition:
    """A ``status.conditions`` entry; preemption reads ``DisruptionTarget``."""

    type: str
    status: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod: an existing one (``node_name`` set) or the incoming one."""

    metadata: ObjectMeta
    node_name: str = ""
    scheduler_name: str = "default-scheduler"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = field(default_factory=dict)
    pod_resources_requests: ResourceList | None = None
    """Pod-level ``spec.resources.requests`` (PodLevelResources)."""
    priority: int | None = None
    priority_class_name: str = ""
    scheduling_gates: tuple[str, ...] = ()
    volume_claims: tuple[str, ...] = ()
    """Names of PersistentVolumeClaims (and ephemeral volumes) the pod mounts."""
    nominated_node_name: str = ""
    phase: str = ""
    resource_claims: tuple[str, ...] = ()
    preemption_policy: str | None = None
    """``spec.preemptionPolicy``: ``Never`` keeps the pod from preempting others."""
    start_time: str | None = None
    """``status.startTime`` as written (RFC 3339); preemption prefers younger victims."""
    conditions: tuple[PodCondition, ...] = ()
    """``status.conditions``."""
    host_network: bool = field(default=False, metadata=OMIT_EMPTY)
    """``spec.hostNetwork``."""
    host_users: bool | None = field(default=None, metadata=OMIT_EMPTY)
    """``spec.hostUsers`` (None when unset)."""
    pod_resources_limits: ResourceList | None = field(default=None, metadata=OMIT_EMPTY)
    """Pod-level ``spec.resources.limits`` (PodLevelResources)."""
    inline_volumes: tuple[InlineVolume, ...] = field(default=(), metadata=OMIT_EMPTY)
    """Volumes with GCE PD, AWS EBS, iSCSI or RBD sources (VolumeRestrictions)."""
    ephemeral_bind_mount_options: bool = field(default=False, metadata=OMIT_EMPTY)
    """Whether an ephemeral container's ``volumeMounts`` has ``bindMountOptions``."""
    volumes: tuple[PodVolume, ...] = field(default=(), metadata=OMIT_EMPTY)
    """``spec.volumes`` entries with a claim, a migratable in-tree or an inline CSI source
    (the volume plugins' view; other volumes are left out)."""
    resource_claim_refs: tuple[PodResourceClaim, ...] = field(default=(), metadata=OMIT_EMPTY)
    """``spec.resourceClaims`` entries (``resource_claims`` keeps their names)."""
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = field(
        default=(), metadata=OMIT_EMPTY
    )
    """``status.resourceClaimStatuses``: the claims generated for template entries."""
    runtime_class_name: str | None = field(default=None, metadata=OMIT_EMPTY)
    """``spec.runtimeClassName``: the RuntimeClass admission plugin adds the class's
    overhead, node selector and tolerations to a pod being created."""

    @property
    def name(self) -> str:
        """The pod's name."""
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The pod's namespace."""
        return self.metadata.namespace

    @property
    def labels(self) -> Mapping[str, str]:
        """The pod's labels."""
        return self.metadata.labels

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


@dataclass(frozen=True, slots=True)
class Node:
    """A node."""

    metadata: ObjectMeta
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    allocatable: ResourceList = field(default_factory=dict)
    images: tuple[tuple[tuple[str, ...], int], ...] = ()
    """(names, sizeBytes) of images present on the node."""
    declared_features: tuple[str, ...] = field(default=(), metadata=OMIT_EMPTY)
    """``status.declaredFeatures`` as written (NodeDeclaredFeatures)."""

    @property
    def name(self) -> str:
        """The node's name."""
        return self.metadata.name

    @property
    def labels(self) -> Mapping[str, str]:
        """The node's labels."""
        return self.metadata.labels


@dataclass(frozen=True, slots=True)
class Service:
    """A Service; only its selector matters (default spreading)."""

    metadata: ObjectMeta
    selector: Mapping[str, str] | None = None
    """``None`` selects nothing (not everything)."""


@dataclass(frozen=True, slots=True)
class ReplicationController:
    """A ReplicationController; its map selector feeds default spreading."""

    metadata: ObjectMeta
    selector: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class ReplicaSet:
    """An apps/v1 ReplicaSet."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int | None = None
    """``spec.replicas``; None (absent) defaults to 1. Only the simulator reads it."""
    template: Pod | None = None
    """``spec.template`` as a pod without a name; only the simulator reads it."""


@dataclass(frozen=True, slots=True)
class StatefulSet:
    """An apps/v1 StatefulSet."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int | None = None
    """``spec.replicas``; None (absent) defaults to 1. Only the simulator reads it."""
    template: Pod | None = None
    """``spec.template`` as a pod without a name; only the simulator reads it."""
    pod_management_policy: str = "OrderedReady"
    """``OrderedReady`` (one pod at a time, in ordinal order) or ``Parallel``."""
    update_strategy: str = "RollingUpdate"
    """``RollingUpdate`` (replace pods from the highest ordinal down) or ``OnDelete``."""
    volume_claim_templates: tuple[ClaimTemplate, ...] = ()
    """``spec.volumeClaimTemplates``: the controller creates claim
    ``<template>-<statefulset>-<ordinal>`` for each pod and keeps it."""
    claim_retention_when_scaled: str = "Retain"
    """``persistentVolumeClaimRetentionPolicy.whenScaled`` (``Retain`` or ``Delete``)."""
    claim_retention_when_deleted: str = "Retain"
    """``persistentVolumeClaimRetentionPolicy.whenDeleted`` (``Retain`` or ``Delete``)."""


@dataclass(frozen=True, slots=True)
class Namespace:
    """A Namespace; only its labels matter (inter-pod affinity ``namespaceSelector``)."""

    metadata: ObjectMeta
    """Cluster-scoped: ``namespace`` is empty. Labels include ``kubernetes.io/metadata.name``,
    which the API server's defaulting (``SetDefaults_Namespace``) sets to the name."""

    @property
    def name(self) -> str:
        """The namespace's name."""
        return self.metadata.name

    @property
    def labels(self) -> Mapping[str, str]:
        """The namespace's labels."""
        return self.metadata.labels


IntOrString = int | str
"""``intstr.IntOrString``: an absolute number or a percentage such as ``"25%"``."""


@dataclass(frozen=True, slots=True)
class DeploymentStrategy:
    """``spec.strategy`` of a Deployment, defaulted as ``SetDefaults_Deployment`` does."""

    type: str = "RollingUpdate"
    """``RollingUpdate`` or ``Recreate``."""
    max_surge: IntOrString = "25%"
    """Pods above ``replicas`` allowed during a rolling update (percentages round up)."""
    max_unavailable: IntOrString = "25%"
    """Pods below ``replicas`` allowed during a rolling update (percentages round down)."""


@dataclass(frozen=True, slots=True)
class Deployment:
    """An apps/v1 Deployment: the simulator runs it as upstream's deployment controller does."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int | None = None
    """``spec.replicas``; None (absent) defaults to 1."""
    template: Pod | None = None
    """``spec.template`` as a pod without a name."""
    strategy: DeploymentStrategy = field(default_factory=DeploymentStrategy)


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget; evictions (``drain``) and preemption respect it."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    """``None`` selects no pods; ``{}`` selects every pod of the namespace (policy/v1).
    (Preemption, unlike eviction, treats an empty selector as selecting nothing.)"""
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    disruptions_allowed: int = 0
    """``status.disruptionsAllowed`` as the disruption controller last wrote it; preemption
    reads this, not the spec."""
    disrupted_pods: frozenset[str] = frozenset()
    """Names in ``status.disruptedPods``: evictions the API server already processed."""
    current_healthy: int = 0
    """``status.currentHealthy``: covered pods that are Ready, as the controller counted."""
    desired_healthy: int = 0
    """``status.desiredHealthy``: the fewest Ready pods the budget wants."""
    unhealthy_pod_eviction_policy: str | None = None
    """``spec.unhealthyPodEvictionPolicy``: ``IfHealthyBudget`` (None: the default) lets an
    unready pod go only while the budget is healthy; ``AlwaysAllow`` always."""


PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"


@dataclass(frozen=True, slots=True)
class PriorityClass:
    """A ``scheduling.k8s.io/v1`` PriorityClass: its value, whether it is the global
    default, its preemption policy."""

    metadata: ObjectMeta
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    """``preemptionPolicy``, defaulted by ``SetDefaults_PriorityClass``."""

    @property
    def name(self) -> str:
        """The class's name."""
        return self.metadata.name


@dataclass(frozen=True, slots=True)
class LimitRangeItem:
    """A LimitRange ``spec.limits`` entry, defaulted as the API server stores it
    (``SetDefaults_LimitRangeItem``: for ``Container``, a missing ``default`` comes from
    ``max``, a missing ``defaultRequest`` from ``default``, then from ``min``)."""

    type: str
    """``Container``, ``Pod`` or ``PersistentVolumeClaim``."""
    max: ResourceList = field(default_factory=dict)
    min: ResourceList = field(default_factory=dict)
    default: ResourceList = field(default_factory=dict)
    """Default limits of a container that sets none for the resource."""
    default_request: ResourceList = field(default_factory=dict)
    """Default requests of a container that sets none for the resource."""
    max_limit_request_ratio: ResourceList = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LimitRange:
    """A core/v1 LimitRange: the LimitRanger admission plugin defaults the requests and
    limits of the containers of pods created in its namespace, and refuses pods outside
    its bounds."""

    metadata: ObjectMeta
    limits: tuple[LimitRangeItem, ...] = ()

    @property
    def namespace(self) -> str:
        """The namespace whose pods it applies to."""
        return self.metadata.namespace


@dataclass(frozen=True, slots=True)
class RuntimeClass:
    """A ``node.k8s.io/v1`` RuntimeClass, as the RuntimeClass admission plugin reads it."""

    metadata: ObjectMeta
    handler: str = ""
    overhead: ResourceList | None = None
    """``overhead.podFixed``: set as the pod's ``spec.overhead`` (None: no overhead)."""
    node_selector: Mapping[str, str] | None = None
    """``scheduling.nodeSelector``: merged into the pod's node selector."""
    tolerations: tuple[Toleration, ...] = ()
    """``scheduling.tolerations``: merged into the pod's tolerations."""

    @property
    def name(self) -> str:
        """The class's name."""
        return self.metadata.name


KubeObject = Union[
    Node,
    Pod,
    Service,
    ReplicationController,
    ReplicaSet,
    StatefulSet,
    Namespace,
    PodDisruptionBudget,
    PriorityClass,
    LimitRange,
    RuntimeClass,
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
]
"""Every kind topospread reads (the storage kinds are defined in :mod:`.storage`)."""
