"""A cluster as the tools see it: nodes, assigned pods and workload objects."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.model.admission import (
    NO_ADMISSION_OBJECTS,
    AdmissionObjects,
    admit_claim,
    admit_pod,
)
from topospread.model.objects import (
    KubeObject,
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
from topospread.model.pools import is_pool_template
from topospread.model.resource import (
    DeviceClass,
    DeviceTaintRule,
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

__all__ = ["Cluster"]

_TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class Cluster:
    """Objects of a cluster, in input order, and notes on what was left out."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    """Pods the scheduler's cache holds: assigned to a known node and not terminal."""
    objects: ClusterObjects = ClusterObjects()
    notes: tuple[str, ...] = ()
    """Why some input pods are not part of the cluster (pending, terminal, unknown node)."""
    admission: AdmissionObjects = NO_ADMISSION_OBJECTS
    """PriorityClasses, LimitRanges, RuntimeClasses and StorageClasses: the admission of
    pods and claims that were not stored yet (:func:`~topospread.model.admission.admit_pod`)."""
    node_templates: tuple[Node, ...] = ()
    """Nodes annotated ``autoscaling.topospread.dev/pool``: templates of the nodes a pool
    may add (:mod:`topospread.model.pools`), not nodes of the cluster."""
    pending_pods: tuple[Pod, ...] = ()
    """Pending pods (no ``spec.nodeName``, not terminal, not nominated), as written: what
    an autoscaler would add nodes for."""
    nominated_pods: tuple[Pod, ...] = ()
    """Pending pods (no ``spec.nodeName``, not terminal) with ``status.nominatedNodeName``:
    the scheduling queue's nominator holds them, and the Filters on their nominated node
    count those of at least the incoming pod's priority (``addGENominatedPods``)."""

    @classmethod
    def from_objects(cls, objects: Iterable[KubeObject]) -> Cluster:
        """Sort decoded objects into a cluster, as the scheduler's informers would see them."""
        nodes: list[Node] = []
        pods: list[Pod] = []
        services: list[Service] = []
        rcs: list[ReplicationController] = []
        rss: list[ReplicaSet] = []
        sss: list[StatefulSet] = []
        namespaces: list[Namespace] = []
        budgets: list[PodDisruptionBudget] = []
        classes: list[PriorityClass] = []
        limit_ranges: list[LimitRange] = []
        runtime_classes: list[RuntimeClass] = []
        # resource.k8s.io: claims, device classes and slices (DynamicResources reads them;
        # templates only matter to the controller that creates claims from them).
        claims: list[ResourceClaim] = []
        device_classes: list[DeviceClass] = []
        slices: list[ResourceSlice] = []
        taint_rules: list[DeviceTaintRule] = []
        pvs: list[PersistentVolume] = []
        pvcs: list[PersistentVolumeClaim] = []
        storage_classes: list[StorageClass] = []
        csi_nodes: list[CSINode] = []
        csi_drivers: list[CSIDriver] = []
        capacities: list[CSIStorageCapacity] = []
        attachments: list[VolumeAttachment] = []
        templates: list[Node] = []
        for obj in objects:
            if isinstance(obj, Node):
                (templates if is_pool_template(obj) else nodes).append(obj)
            elif isinstance(obj, Pod):
                pods.append(obj)
            elif isinstance(obj, Service):
                services.append(obj)
            elif isinstance(obj, ReplicationController):
                rcs.append(obj)
            elif isinstance(obj, ReplicaSet):
                rss.append(obj)
            elif isinstance(obj, Namespace):
                namespaces.append(obj)
            elif isinstance(obj, PodDisruptionBudget):
                budgets.append(obj)
            elif isinstance(obj, PriorityClass):
                classes.append(obj)
            elif isinstance(obj, LimitRange):
                limit_ranges.append(obj)
            elif isinstance(obj, RuntimeClass):
                runtime_classes.append(obj)
            elif isinstance(obj, ResourceClaim):
                claims.append(obj)
            elif isinstance(obj, DeviceClass):
                device_classes.append(obj)
            elif isinstance(obj, ResourceSlice):
                slices.append(obj)
            elif isinstance(obj, DeviceTaintRule):
                taint_rules.append(obj)
            elif isinstance(obj, ResourceClaimTemplate):
                pass
            elif isinstance(obj, StatefulSet):
                sss.append(obj)
            elif isinstance(obj, PersistentVolume):
                pvs.append(obj)
            elif isinstance(obj, PersistentVolumeClaim):
                pvcs.append(obj)
            elif isinstance(obj, StorageClass):
                storage_classes.append(obj)
            elif isinstance(obj, CSINode):
                csi_nodes.append(obj)
            elif isinstance(obj, CSIDriver):
                csi_drivers.append(obj)
            elif isinstance(obj, CSIStorageCapacity):
                capacities.append(obj)
            elif isinstance(obj, VolumeAttachment):
                attachments.append(obj)
        admission = AdmissionObjects(
            tuple(classes), tuple(limit_ranges), tuple(runtime_classes), tuple(storage_classes)
        )
        # DefaultStorageClass: a claim written without a class gets the default one.
        pvcs = [admit_claim(claim, storage_classes, limit_ranges) for claim in pvcs]
        node_names = {node.name for node in nodes}
        kept: list[Pod] = []
        notes: list[str] = []
        nominated: list[Pod] = []
        pending_pods: list[Pod] = []
        pending = 0
        for pod in pods:
            if not pod.node_name and pod.nominated_node_name and pod.phase not in _TERMINAL_PHASES:
                nominated.append(admit_pod(pod, admission))
            elif not pod.node_name:
                pending += 1
                if pod.phase not in _TERMINAL_PHASES:
                    pending_pods.append(pod)
            elif pod.phase in _TERMINAL_PHASES:
                # The scheduler's pod informer excludes Succeeded and Failed pods.
                notes.append(f"pod {pod.key} is {pod.phase}: not counted")
            elif pod.node_name not in node_names:
                notes.append(f"pod {pod.key} is on unknown node {pod.node_name}: not counted")
            else:
                # As the API server stored it (create-time defaulting for manifests).
                kept.append(admit_pod(pod, admission))
        if pending:
            notes.append(f"{pending} pod(s) without spec.nodeName are pending: not counted")
        if nominated:
            notes.append(
                f"{len(nominated)} pending pod(s) nominated to a node (status.nominatedNodeName): "
                "counted on that node by the Filters, as the scheduler's nominator does"
            )
        return cls(
            tuple(nodes),
            tuple(kept),
            ClusterObjects(
                tuple(services),
                tuple(rcs),
                tuple(rss),
                tuple(sss),
                namespaces=tuple(namespaces),
                pod_disruption_budgets=tuple(budgets),
                resource_claims=tuple(claims),
                device_classes=tuple(device_classes),
                resource_slices=tuple(slices),
                device_taint_rules=tuple(taint_rules),
                persistent_volumes=tuple(pvs),
                persistent_volume_claims=tuple(pvcs),
                storage_classes=tuple(storage_classes),
                csi_nodes=tuple(csi_nodes),
                csi_drivers=tuple(csi_drivers),
                csi_storage_capacities=tuple(capacities),
                volume_attachments=tuple(attachments),
            ),
            tuple(notes),
            admission,
            tuple(templates),
            tuple(pending_pods),
            tuple(nominated),
        )

    def snapshot(self) -> Snapshot:
        """A fresh snapshot of nodes and their pods."""
        return Snapshot(self.nodes, self.pods)
