"""VolumeBinding's binding cycle: what Reserve assumes and what PreBind waits for.

After ``pkg/scheduler/framework/plugins/volumebinding/binder.go`` (v1.37.1):

* Reserve (``AssumePodVolumes``): the chosen volumes get the claim's ``claimRef`` (and
  ``pv.kubernetes.io/bound-by-controller: "yes"`` unless pre-bound to it,
  ``GetBindVolumeToClaim``), the claims to provision the ``selected-node`` annotation;
  these stand in for the stored objects so the next cycles do not hand the same volume
  to another claim;
* PreBind (``BindPodVolumes``): the writes (``bindAPIUpdate``), then ``checkBindings``
  until every claim is fully bound.

Pure: the writes and the waiting go through the framework's binding port.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from topospread.framework.binding import BindingError
from topospread.framework.node_info import ClusterObjects
from topospread.model.objects import Node, ObjectMeta, Pod
from topospread.model.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.plugins.volumebinding.binder import (
    VolumeDecision,
    check_node_affinity,
    is_pvc_fully_bound,
    is_volume_bound_to_claim,
    volume_decision,
)

__all__ = ["AssumedVolumes", "assume_pod_volumes", "check_bindings"]


@dataclass(frozen=True, slots=True)
class AssumedVolumes:
    """What Reserve assumed for one pod on one node, and what PreBind must write."""

    node: str
    decision: VolumeDecision
    assumed_volumes: tuple[PersistentVolume, ...] = ()
    assumed_claims: tuple[PersistentVolumeClaim, ...] = ()
    originals: tuple[PersistentVolume | PersistentVolumeClaim, ...] = field(default=())
    """The stored objects the assumptions replaced (Unreserve puts them back)."""

    @property
    def needs_binding(self) -> bool:
        """Whether PreBind has anything to write (``PreBindPreFlight`` skips otherwise)."""
        return bool(self.decision.static_bindings or self.decision.dynamic_provisions)

    def clone(self) -> AssumedVolumes:
        """Immutable: itself (CycleState data)."""
        return self


def assume_pod_volumes(objects: ClusterObjects, pod: Pod, node: Node) -> AssumedVolumes | None:
    """``AssumePodVolumes`` for ``pod`` on ``node``: the volumes and claims as they will be
    once bound. None when the pod has no claim needing a write."""
    if not any(v.claim_for(pod.name) is not None for v in pod.volumes):
        return None
    decision = volume_decision(objects, pod, node)
    if decision.all_bound or not (decision.static_bindings or decision.dynamic_provisions):
        return None
    volumes: list[PersistentVolume] = []
    claims: list[PersistentVolumeClaim] = []
    originals: list[PersistentVolume | PersistentVolumeClaim] = []
    for binding in decision.static_bindings:
        originals.append(binding.pv)
        volumes.append(_bound_to(binding.pv, binding.pvc))
    for provision in decision.dynamic_provisions:
        originals.append(provision.pvc)
        claims.append(_with_selected_node(provision.pvc, node.name))
    return AssumedVolumes(node.name, decision, tuple(volumes), tuple(claims), tuple(originals))


def _bound_to(volume: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
    # GetBindVolumeToClaim: claimRef to the claim; bound-by-controller unless pre-bound.
    annotations = dict(volume.metadata.annotations)
    if not is_volume_bound_to_claim(volume, claim):
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    ref = ClaimReference(claim.name, claim.namespace, claim.metadata.uid)
    return replace(
        volume, claim_ref=ref, metadata=replace(volume.metadata, annotations=annotations)
    )


def _with_selected_node(claim: PersistentVolumeClaim, node: str) -> PersistentVolumeClaim:
    meta: ObjectMeta = claim.metadata
    annotations = {**meta.annotations, ANN_SELECTED_NODE: node}
    return replace(claim, metadata=replace(meta, annotations=annotations))


def check_bindings(
    objects: ClusterObjects, node: Node | None, pod_exists: bool, assumed: AssumedVolumes
) -> bool:
    """``checkBindings``: True when every claim is fully bound; raises
    :class:`~topospread.framework.binding.BindingError` when the binding can no longer
    succeed."""
    if node is None:
        raise BindingError(f'failed to get node "{assumed.node}"')
    if not pod_exists:
        raise BindingError("pod does not exist any more")
    done = True
    for binding in assumed.decision.static_bindings:
        volume = objects.persistent_volume(binding.pv.name)
        claim = objects.persistent_volume_claim(binding.pvc.namespace, binding.pvc.name)
        if volume is None or claim is None:
            raise BindingError(f'failed to check binding: "{binding.pv.name}" not found')
        if not check_node_affinity(volume, node.labels):
            raise BindingError(
                f'pv "{volume.name}" node affinity doesn\'t match node "{node.name}": '
                "no matching NodeSelectorTerms"
            )
        if volume.claim_ref is None or not volume.claim_ref.uid:
            raise BindingError(f'ClaimRef got reset for pv "{volume.name}"')
        done = done and is_pvc_fully_bound(claim)
    for provision in assumed.decision.dynamic_provisions:
        claim = objects.persistent_volume_claim(provision.pvc.namespace, provision.pvc.name)
        if claim is None:
            raise BindingError(
                f'failed to check provisioning pvc: "{provision.pvc.name}" not found'
            )
        if claim.metadata.annotations.get(ANN_SELECTED_NODE) != assumed.node:
            raise BindingError(f'provisioning failed for PVC "{claim.name}"')
        if claim.spec.volume_name:
            volume = objects.persistent_volume(claim.spec.volume_name)
            if volume is None:
                done = False
                continue
            if not check_node_affinity(volume, node.labels):
                raise BindingError(
                    f'pv "{volume.name}" node affinity doesn\'t match node "{node.name}": '
                    "no matching NodeSelectorTerms"
                )
        done = done and is_pvc_fully_bound(claim)
    return done
