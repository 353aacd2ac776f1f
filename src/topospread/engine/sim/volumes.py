"""Storage in the simulated cluster: claims, volumes and the controllers that bind them.

Faithful to kube-controller-manager v1.37.1 and the scheduler's VolumeBinding where
placement depends on it:

* **StatefulSet claims** (``pkg/controller/statefulset``): each ``volumeClaimTemplates``
  entry gives claim ``<template>-<statefulset>-<ordinal>``, created before the pod and
  reused when a pod of that ordinal comes back. Its labels are the template's with the
  set's ``selector.matchLabels`` written over them (the selector's labels alone when the
  template has none). Owner references follow ``persistentVolumeClaimRetentionPolicy``:
  the set owns the claim when ``whenDeleted: Delete``; the pod owns it once the pod is
  scaled away under ``whenScaled: Delete`` (so deleting the pod deletes the claim);
  ``Retain``/``Retain`` leaves the claim unowned, kept for ever. The pod's volume named
  after the template points at the claim, replacing a template volume of that name.
* **Ephemeral volumes** (``pkg/controller/volume/ephemeral``): claim ``<pod>-<volume>``
  with the template's labels, annotations and spec, owned by the pod (controller), and
  deleted with it by the garbage collector.
* **PersistentVolume controller** (``pkg/controller/volume/persistentvolume``): a claim
  pre-bound to a volume (``spec.volumeName``) is bound to it; an unbound claim is bound to
  a volume pre-bound to it, else to the smallest matching Available volume among those
  with the fewest access modes that include the claim's (``findByClaim``); for
  ``WaitForFirstConsumer`` classes only once the scheduler has chosen (a volume given the
  claim's reference, or the ``selected-node`` annotation). A new volume without a phase
  becomes Available (free, or pre-bound by name only).
* **Provisioning** (what an external provisioner does): a claim of a class with a
  provisioner and no matching volume gets volume ``pvc-<claim uid>``: capacity the claim's
  request, its access modes and volume mode, the class, a ``claimRef``, phase Bound, a CSI
  source of the provisioner's driver (none for ``kubernetes.io/`` in-tree provisioners), and
  node affinity pinning one topology segment: for ``WaitForFirstConsumer``, the selected
  node's values of the topology keys its CSINode lists for the driver (a driver listed with
  no keys is reachable from every node: no affinity), else — no CSINode entry — the node's
  ``topology.kubernetes.io/zone``; for ``Immediate``, the first value of each key of the
  class's first ``allowedTopologies`` term, else the segment of the first node (node order)
  that has one. The choice is deterministic where a real provisioner may pick any
  reachable segment.
* **The scheduler's PreBind** (VolumeBinding): when a pod is bound, the plugin's own
  Reserve and PreBind (``plugins/volumebinding``) run through this module's binding port
  (:class:`VolumeControllers` is the simulator's
  :class:`~topospread.framework.binding.BindingPort`): its unbound
  ``WaitForFirstConsumer`` claims are bound to the volumes the plugin matched on that node
  or provisioned there.
* **Admission**: a claim without ``storageClassName`` gets the default StorageClass
  (:func:`topospread.model.admission.admit_claim`, the DefaultStorageClass admission
  plugin: the newest class annotated default, then the first by name).

Simplifications: every controller acts in the instant the change happens (so a pod never
sees its ``Immediate`` claim unbound, nor waits for its ephemeral claim); deletions are
immediate (no ``kubernetes.io/pvc-protection`` finalizer wait); a deleted claim's
provisioned volume is deleted (the classes' default ``reclaimPolicy: Delete``), a static
volume is left ``Released``; claims of a deleted StatefulSet are not collected (scenarios
never delete one); VolumeAttachments and CSIStorageCapacities are held as given (nothing
attaches or detaches, provisioning does not use up capacity).
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from fractions import Fraction
from typing import Final

from topospread.framework.binding import AssumedObject, BindingError, ClaimAllocation, VolumeCheck
from topospread.model.admission import admit_claim
from topospread.model.objects import (
    LABEL_TOPOLOGY_ZONE,
    CSIVolumeSource,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodVolume,
    StatefulSet,
)
from topospread.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    ClaimReference,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from topospread.plugins.volumebinding.binder import (
    claim_class,
    is_volume_bound_to_claim,
    volume_class,
)

from .controllers import selector_matches
from .state import ClusterState, PodRecord, StatefulSetState

__all__ = [
    "ANN_PROVISIONED_BY",
    "NO_PROVISIONER",
    "VolumeControllers",
    "claim_owner_references",
    "ephemeral_claim",
    "find_matching_volume",
    "find_volume_for_claim",
    "provisioned_volume_name",
    "stateful_set_claim_name",
    "stateful_set_claims",
    "topology_segment",
    "with_claim_volumes",
]

ANN_PROVISIONED_BY: Final = "pv.kubernetes.io/provisioned-by"
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""The provisioner of classes for static (local) volumes only: nothing is provisioned."""
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"

Segment = tuple[tuple[str, str], ...]
"""A topology segment: (label key, value) pairs a provisioned volume is pinned to."""


# -- StatefulSet and ephemeral claims ------------------------------------------------------------


def stateful_set_claim_name(template: str, stateful_set: str, ordinal: int) -> str:
    """``<template>-<statefulset>-<ordinal>`` (``getPersistentVolumeClaimName``)."""
    return f"{template}-{stateful_set}-{ordinal}"


def stateful_set_claims(ss: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """The claims a StatefulSet's pod ``ordinal`` uses, in template order, without owners."""
    selector_labels = ss.selector.match_labels if ss.selector is not None else {}
    claims = []
    for template in ss.volume_claim_templates:
        # The selector's labels win over the template's, so the set's selector finds them.
        labels = {**template.metadata.labels, **selector_labels}
        meta = ObjectMeta(
            name=stateful_set_claim_name(template.metadata.name, ss.metadata.name, ordinal),
            namespace=ss.metadata.namespace,
            labels=labels,
            annotations=dict(template.metadata.annotations),
        )
        claims.append(PersistentVolumeClaim(meta, template.spec))
    return claims


def claim_owner_references(
    claim: PersistentVolumeClaim,
    ss: StatefulSet,
    ss_uid: str,
    pod: Pod,
    *,
    scaled_down: bool,
) -> tuple[OwnerReference, ...]:
    """The claim's owner references under the set's retention policy.

    References to the set and to the pod are replaced; other owners are kept.
    ``Retain``/``Retain``: none; ``whenDeleted: Delete``: the set while the pod is in range;
    ``whenScaled: Delete``: the pod once it is scaled away (then the set no longer).
    """
    kept = [
        ref
        for ref in claim.metadata.owner_references
        if not (ref.kind == "StatefulSet" and ref.name == ss.metadata.name)
        and not (ref.kind == "Pod" and ref.name == pod.name)
    ]
    delete_scaled = ss.claim_retention_when_scaled == "Delete"
    delete_deleted = ss.claim_retention_when_deleted == "Delete"
    if delete_scaled and scaled_down:
        kept.append(OwnerReference("v1", "Pod", pod.name, pod.metadata.uid, controller=True))
    elif delete_deleted:
        kept.append(
            OwnerReference("apps/v1", "StatefulSet", ss.metadata.name, ss_uid, controller=True)
        )
    return tuple(kept)


def with_claim_volumes(pod: Pod, ss: StatefulSet, ordinal: int) -> Pod:
    """The pod with one claim volume per template (``updateStorage``): named as the
    template, pointing at the ordinal's claim, ahead of the template's other volumes."""
    if not ss.volume_claim_templates:
        return pod
    names = {t.metadata.name for t in ss.volume_claim_templates}
    volumes = [
        PodVolume(
            t.metadata.name,
            claim_name=stateful_set_claim_name(t.metadata.name, ss.metadata.name, ordinal),
        )
        for t in ss.volume_claim_templates
    ]
    volumes.extend(v for v in pod.volumes if v.name not in names)
    claims = tuple(
        dict.fromkeys([*(t.metadata.name for t in ss.volume_claim_templates), *pod.volume_claims])
    )
    return replace(pod, volumes=tuple(volumes), volume_claims=claims)


def ephemeral_claim(pod: Pod, volume: PodVolume) -> PersistentVolumeClaim:
    """The claim the ephemeral volume controller creates for ``volume`` of ``pod``."""
    template = volume.ephemeral
    assert template is not None
    name = volume.claim_for(pod.name)
    assert name is not None
    meta = ObjectMeta(
        name=name,
        namespace=pod.namespace,
        labels=dict(template.metadata.labels),
        annotations=dict(template.metadata.annotations),
        owner_references=(
            OwnerReference("v1", "Pod", pod.name, pod.metadata.uid, controller=True),
        ),
    )
    return PersistentVolumeClaim(meta, template.spec)


# -- the PV controller's matching ---------------------------------------------------------------


def find_volume_for_claim(
    claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], *, delay_binding: bool
) -> PersistentVolume | None:
    """The PV controller's ``findByClaim``: volumes grouped by their set of access modes;
    of the groups offering every mode the claim asks for, fewest modes first (then by
    name, where upstream's order is unspecified), the first group with a match decides
    (:func:`find_matching_volume`)."""
    groups: dict[frozenset[str], list[PersistentVolume]] = {}
    for volume in volumes:
        groups.setdefault(frozenset(volume.access_modes), []).append(volume)
    wanted = set(claim.spec.access_modes)
    for modes in sorted((m for m in groups if wanted <= m), key=lambda m: (len(m), sorted(m))):
        found = find_matching_volume(claim, groups[modes], delay_binding=delay_binding)
        if found is not None:
            return found
    return None


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    *,
    delay_binding: bool,
) -> PersistentVolume | None:
    """``FindMatchingVolume`` as the PV controller calls it, without a node: a volume
    pre-bound to the claim (it wins outright), else — unless the claim's class waits for
    its first consumer, whose volumes the scheduler chooses — the smallest Available
    volume of the claim's class that fits its request, volume mode, attributes class and
    selector, the first of equally small ones."""
    request = claim.spec.storage_request.amount if claim.spec.storage_request is not None else 0
    wanted_class = claim_class(claim)
    best: PersistentVolume | None = None
    best_size: Fraction | int = 0
    for volume in volumes:
        if volume.claim_ref is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        size = volume.capacity.amount if volume.capacity is not None else 0
        if size < request or volume.volume_mode != claim.spec.volume_mode:
            continue
        if (claim.spec.volume_attributes_class_name or "") != (
            volume.volume_attributes_class_name or ""
        ):
            continue
        if volume.metadata.deletion_timestamp is not None:
            continue
        if is_volume_bound_to_claim(volume, claim):
            return volume
        if delay_binding or volume.phase != "Available":
            continue
        if claim.spec.selector is not None and not selector_matches(
            claim.spec.selector, volume.metadata.labels
        ):
            continue
        if volume_class(volume) != wanted_class:
            continue
        if best is None or best_size > size:
            best, best_size = volume, size
    return best


# -- topology of provisioned volumes -------------------------------------------------------------


def topology_segment(node: Node, driver: str, csi_node: CSINode | None) -> Segment:
    """Where a volume of ``driver`` provisioned for ``node`` is reachable from: the node's
    values of the driver's topology keys (its CSINode entry), else its zone."""
    labels = node.labels
    if csi_node is not None:
        for entry in csi_node.drivers:
            if entry.name == driver:
                return tuple((k, labels[k]) for k in entry.topology_keys if k in labels)
    zone = labels.get(LABEL_TOPOLOGY_ZONE)
    return ((LABEL_TOPOLOGY_ZONE, zone),) if zone is not None else ()


def _node_affinity(segment: Segment) -> NodeSelector | None:
    if not segment:
        return None
    requirements = tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in segment)
    return NodeSelector((NodeSelectorTerm(requirements),))


def provisioned_volume_name(claim: PersistentVolumeClaim) -> str:
    """``pvc-<claim uid>``, as external-provisioner names the volumes it creates."""
    return f"pvc-{claim.metadata.uid}"


def _describe(segment: Segment) -> str:
    return ", ".join(f"{k}={v}" for k, v in segment) or "no topology (any node)"


# -- the controllers -----------------------------------------------------------------------------


class VolumeControllers:
    """The PV, ephemeral-volume and garbage-collection controllers, a provisioner, and the
    StatefulSet controller's claim handling, over one cluster state."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self._deferred: list[PodRecord] | None = None
        """While objects are being applied: the pods created so far (None otherwise)."""

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold the controllers while a batch of objects is created, then let them act on
        all of it: ephemeral claims for the new pods that still lack them, then every
        unbound claim."""
        self._deferred = []
        try:
            yield
        finally:
            pods, self._deferred = self._deferred, None
            for record in pods:
                if self.state.pods.get(record.key) is record:
                    self.pod_created(record)
            self.sync_all()

    # -- admission and creation -----------------------------------------------------------

    def admit_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """The claim as the API server stores it on create: the default class, a uid."""
        claim = admit_claim(
            claim, self.state.storage_classes.values(), self.state.limit_ranges.values()
        )
        if claim.metadata.uid:
            return claim
        return replace(claim, metadata=replace(claim.metadata, uid=self.state.new_uid()))

    def create_claim(self, claim: PersistentVolumeClaim, why: str) -> PersistentVolumeClaim:
        """Admit and store a claim, then let the PV controller act on it."""
        claim = self.admit_claim(claim)
        self.state.put_storage(claim, f"PersistentVolumeClaim {claim.key} created ({why})")
        if self._deferred is None:
            self.sync_claim(claim)
        return self.state.claims.get((claim.namespace, claim.name), claim)

    def add_volume(self, volume: PersistentVolume, why: str) -> None:
        """Store a volume; the PV controller gives one without a phase its first phase:
        ``Available`` when it is free or only pre-bound by name (``claimRef`` without a uid),
        so that claims may bind to it. A volume read with its phase keeps it."""
        if volume.phase == "Pending" and (volume.claim_ref is None or not volume.claim_ref.uid):
            volume = replace(volume, phase="Available")
        self.state.put_storage(volume, f"PersistentVolume {volume.name} {why}")
        self.sync_all()

    # -- StatefulSet ----------------------------------------------------------------------

    def stateful_set_pod(self, ss: StatefulSetState, pod: Pod, ordinal: int) -> Pod:
        """Create the pod's missing claims (before the pod, as the controller does) and
        return the pod with its claim volumes."""
        for claim in stateful_set_claims(ss.obj, ordinal):
            if (claim.namespace, claim.name) not in self.state.claims:
                self.create_claim(claim, f"StatefulSet {ss.obj.metadata.name}")
        return with_claim_volumes(pod, ss.obj, ordinal)

    def set_claim_owners(self, ss: StatefulSetState, pod: Pod, *, scaled_down: bool) -> None:
        """``UpdatePodClaimForRetentionPolicy``: owner references per the retention policy."""
        ordinal = int(pod.name.rsplit("-", 1)[1])
        for template in stateful_set_claims(ss.obj, ordinal):
            claim = self.state.claims.get((template.namespace, template.name))
            if claim is None:
                continue
            refs = claim_owner_references(claim, ss.obj, ss.uid, pod, scaled_down=scaled_down)
            if refs != claim.metadata.owner_references:
                meta = replace(claim.metadata, owner_references=refs)
                self.state.put_storage(
                    replace(claim, metadata=meta),
                    f"PersistentVolumeClaim {claim.key} owners: "
                    + (", ".join(f"{r.kind} {r.name}" for r in refs) or "none"),
                )

    # -- pods -----------------------------------------------------------------------------

    def pod_created(self, record: PodRecord) -> None:
        """The ephemeral volume controller: a claim for each ephemeral volume."""
        if self._deferred is not None:
            self._deferred.append(record)
            return
        pod = record.pod
        for volume in pod.volumes:
            if volume.ephemeral is None:
                continue
            name = volume.claim_for(pod.name)
            if name is None or (pod.namespace, name) in self.state.claims:
                continue  # an existing claim not owned by the pod keeps the pod pending
            self.create_claim(ephemeral_claim(pod, volume), f"ephemeral volume of {pod.key}")

    def pod_deleted(self, record: PodRecord) -> None:
        """The garbage collector: claims whose every owner was this pod go with it."""
        uid = record.pod.metadata.uid
        if not uid:
            return
        for (namespace, _), claim in list(self.state.claims.items()):
            refs = claim.metadata.owner_references
            if namespace == record.pod.namespace and refs and all(r.uid == uid for r in refs):
                self.delete_claim(claim, f"owner pod {record.key} deleted")

    def delete_claim(self, claim: PersistentVolumeClaim, why: str) -> None:
        """Delete a claim; its provisioned volume is deleted, a static one released."""
        self.state.delete_claim(claim.namespace, claim.name, why)
        volume = self.state.volumes.get(claim.spec.volume_name)
        if volume is None or not is_volume_bound_to_claim(volume, claim):
            return
        if ANN_PROVISIONED_BY in volume.metadata.annotations:
            self.state.delete_volume(volume.name, f"its claim {claim.key} was deleted")
        else:
            self.state.put_storage(
                replace(volume, phase="Released"),
                f"PersistentVolume {volume.name} released (claim {claim.key} deleted)",
            )

    # -- the binding port (VolumeBinding's Reserve / PreBind write here) -----------------

    def bind_volume(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim, node_name: str
    ) -> None:
        """PreBind's volume update: the claim's reference, then the PV controller binds."""
        annotations = {**volume.metadata.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        ref = ClaimReference(claim.name, claim.namespace, claim.metadata.uid)
        self.state.put_storage(
            replace(
                volume,
                metadata=replace(volume.metadata, annotations=annotations),
                claim_ref=ref,
            ),
            f"PersistentVolume {volume.name} chosen for {claim.key} on node {node_name}",
        )
        self._sync_key(claim.namespace, claim.name)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """PreBind's claim update: the selected node, then the provisioner provisions."""
        current = self.state.claims.get((claim.namespace, claim.name), claim)
        annotations = {**current.metadata.annotations, ANN_SELECTED_NODE: node_name}
        selected = replace(current, metadata=replace(current.metadata, annotations=annotations))
        self.state.put_storage(
            selected, f"PersistentVolumeClaim {claim.key} selected node {node_name}"
        )
        self.sync_claim(selected)

    def assume_objects(self, assumed: Sequence[AssumedObject]) -> None:
        """Nothing to assume: the binding cycle runs in the same instant as the cycle."""

    def restore_objects(
        self,
        assumed: Sequence[AssumedObject],
        originals: Sequence[AssumedObject],
    ) -> None:
        """Nothing was assumed."""

    def wait_for_volumes(
        self, node_name: str, pod_key: str, check: VolumeCheck, timeout: float
    ) -> None:
        """Nothing to wait for: the controllers acted in the instant of the writes (a claim
        they cannot bind is left as it is, and the pod bound, as before)."""

    def reserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """``simulate`` refuses pods with ResourceClaims before scheduling them."""
        if planned:
            raise BindingError("simulate does not allocate ResourceClaims")

    def unreserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """Nothing was reserved."""

    # -- the PV controller and the provisioner --------------------------------------------

    def sync_all(self) -> None:
        """Resync every unbound claim (a volume or class appeared)."""
        if self._deferred is not None:
            return
        for claim in list(self.state.claims.values()):
            if claim.phase != "Bound":
                self._sync_key(claim.namespace, claim.name)

    def _sync_key(self, namespace: str, name: str) -> None:
        claim = self.state.claims.get((namespace, name))
        if claim is not None:
            self.sync_claim(claim)

    def sync_claim(self, claim: PersistentVolumeClaim) -> None:
        """``syncClaim`` for a claim not yet bound, and provisioning when it needs it."""
        if claim.phase == "Bound":
            return
        volumes = self.state.volumes
        if claim.spec.volume_name:
            # Pre-bound by the user to a volume: bind when that volume is free for it.
            volume = volumes.get(claim.spec.volume_name)
            if volume is not None and (
                volume.claim_ref is None or is_volume_bound_to_claim(volume, claim)
            ):
                self._bind(claim, volume, by_controller=False)
            return
        storage_class = self.state.storage_classes.get(claim_class(claim))
        delay = (
            storage_class is not None
            and storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER
        )
        found = find_volume_for_claim(claim, volumes.values(), delay_binding=delay)
        if found is not None:
            self._bind(claim, found, by_controller=True)
            return
        if storage_class is None or storage_class.provisioner in ("", NO_PROVISIONER):
            return  # static volumes only: the claim waits for one
        selected = claim.metadata.annotations.get(ANN_SELECTED_NODE)
        if delay:
            node = self.state.nodes.get(selected) if selected else None
            if node is None:
                return  # WaitForFirstConsumer: provisioned where its first pod goes
            driver = storage_class.provisioner
            segment = topology_segment(node, driver, self.state.csi_nodes.get(node.name))
            where = f"{_describe(segment)}, where its first pod goes ({node.name})"
        else:
            segment = self._immediate_segment(storage_class)
            where = _describe(segment)
        self._provision(claim, storage_class, segment, where)

    def _immediate_segment(self, storage_class: StorageClass) -> Segment:
        # No node to follow: the first allowed topology, else the first node's segment.
        if storage_class.allowed_topologies:
            term = storage_class.allowed_topologies[0]
            return tuple((k, values[0]) for k, values in term.match_label_expressions if values)
        for node in self.state.nodes.values():
            segment = topology_segment(
                node, storage_class.provisioner, self.state.csi_nodes.get(node.name)
            )
            if segment:
                return segment
        return ()

    def _provision(
        self,
        claim: PersistentVolumeClaim,
        storage_class: StorageClass,
        segment: Segment,
        where: str,
    ) -> None:
        provisioner = storage_class.provisioner
        name = provisioned_volume_name(claim)
        volume = PersistentVolume(
            ObjectMeta(name=name, annotations={ANN_PROVISIONED_BY: provisioner}),
            capacity=claim.spec.storage_request,
            access_modes=claim.spec.access_modes,
            claim_ref=ClaimReference(claim.name, claim.namespace, claim.metadata.uid),
            storage_class_name=storage_class.name,
            volume_mode=claim.spec.volume_mode,
            volume_attributes_class_name=claim.spec.volume_attributes_class_name,
            node_affinity=_node_affinity(segment),
            phase="Bound",
            csi=(
                None
                if provisioner.startswith("kubernetes.io/")
                else CSIVolumeSource(provisioner, volume_handle=name)
            ),
        )
        annotations = {**claim.metadata.annotations, ANN_STORAGE_PROVISIONER: provisioner}
        claim = replace(claim, metadata=replace(claim.metadata, annotations=annotations))
        self.state.put_storage(
            volume,
            f"PersistentVolume {name} provisioned for {claim.key} in {where}",
            provisioned=f"{claim.name} in {_describe(segment)}",
        )
        self._bind(claim, volume, by_controller=True)

    def _bind(
        self, claim: PersistentVolumeClaim, volume: PersistentVolume, *, by_controller: bool
    ) -> None:
        # bindVolumeToClaim then bindClaimToVolume: the volume's claimRef and phase, then
        # the claim's volumeName, phase and annotations.
        if not is_volume_bound_to_claim(volume, claim) or volume.phase != "Bound":
            annotations = dict(volume.metadata.annotations)
            if volume.claim_ref is None:
                annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            volume = replace(
                volume,
                metadata=replace(volume.metadata, annotations=annotations),
                claim_ref=ClaimReference(claim.name, claim.namespace, claim.metadata.uid),
                phase="Bound",
            )
            self.state.put_storage(volume, f"PersistentVolume {volume.name} bound to {claim.key}")
        annotations = {**claim.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
        if by_controller:
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        bound = replace(
            claim,
            metadata=replace(claim.metadata, annotations=annotations),
            spec=replace(claim.spec, volume_name=volume.name),
            phase="Bound",
        )
        self.state.put_storage(
            bound, f"PersistentVolumeClaim {claim.key} bound to PersistentVolume {volume.name}"
        )
