"""The pod's ResourceClaims as DynamicResources finds them (``foreachPodResourceClaim``).

Shared by the plugin's PreEnqueue / PreFilter and Reserve's allocation planning
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`` and
``k8s.io/dynamic-resource-allocation/resourceclaim``, v1.37.1).
"""

from __future__ import annotations

from topospread.framework.node_info import ClusterObjects
from topospread.model.objects import Pod
from topospread.model.resource import PodResourceClaim, ResourceClaim

__all__ = ["resolve_claims"]


def _claim_name(pod: Pod, ref: PodResourceClaim) -> tuple[str | None, bool, str | None]:
    """``resourceclaim.Name``: (name, must check owner, error)."""
    if ref.resource_claim_name is not None:
        return ref.resource_claim_name, False, None
    if ref.resource_claim_template_name is not None:
        for status in pod.resource_claim_statuses:
            if status.name == ref.name:
                return status.resource_claim_name, True, None
        return None, False, f'pod "{pod.key}": ResourceClaim not created yet'
    return (
        None,
        False,
        f'pod "{pod.key}", spec.resourceClaim "{ref.name}": none of the supported fields are set',
    )


def _is_for_pod(pod: Pod, claim: ResourceClaim) -> str | None:
    """``resourceclaim.IsForPod``: the claim is in the pod's namespace and controlled by it."""
    ns, name = claim.metadata.namespace, claim.metadata.name
    if ns != pod.namespace:
        return f"ResourceClaim {ns}/{name} is not in the same namespace as Pod {pod.key}"
    controller = next((o for o in claim.metadata.owner_references if o.controller), None)
    if controller is None or controller.uid != pod.metadata.uid:
        return f"ResourceClaim {ns}/{name} was not created for Pod {pod.key} (Pod is not owner)"
    return None


def resolve_claims(pod: Pod, objects: ClusterObjects) -> tuple[list[ResourceClaim], str | None]:
    """The pod's claims (``foreachPodResourceClaim``), or why they cannot be used yet: the
    reason PreEnqueue and PreFilter give (claim not created yet, missing, being deleted,
    not the pod's own)."""
    claims: list[ResourceClaim] = []
    for ref in pod.resource_claim_refs:
        name, check_owner, error = _claim_name(pod, ref)
        if error is not None:
            return [], error
        if name is None:
            # A template entry that needed no claim.
            continue
        claim = objects.resource_claim(pod.namespace, name)
        if claim is None:
            return [], f'could not find ResourceClaim "{pod.namespace}/{name}"'
        if claim.metadata.deletion_timestamp is not None:
            return [], f'resourceclaim "{claim.metadata.name}" is being deleted'
        if check_owner:
            error = _is_for_pod(pod, claim)
            if error is not None:
                return [], error
        claims.append(claim)
    return claims, None
