"""VolumeBinding's Reserve, PreBind and Unreserve for the live scheduler.

The engine decides where a pod with PersistentVolumeClaims may go; a real scheduler must
then make its delayed (WaitForFirstConsumer) claims real before binding the pod, as
upstream's ``volumeBinder`` does:

* Reserve (``AssumePodVolumes``): the chosen volumes and claims are assumed in the cache,
  so the next cycles do not hand the same PersistentVolume to another claim;
* PreBind (``BindPodVolumes``): each static binding writes the volume's ``claimRef`` (and
  ``pv.kubernetes.io/bound-by-controller: "yes"``), each claim to provision gets
  ``volume.kubernetes.io/selected-node``; then the PV controller and the provisioner do
  the rest while the scheduler waits — polling its informer cache every second, up to
  ``VolumeBindingArgs.bindTimeoutSeconds`` — until every claim is fully bound
  (``checkBindings``);
* Unreserve: the assumed objects are dropped again; the informer's copies win.

Writes carry the object's ``resourceVersion``, so a volume another scheduler took in
the meantime answers 409 and the pod is retried, as upstream's ``Update`` does.
Failures become the pod's scheduling error, worded as upstream's PreBind wraps them:
``running PreBind plugin "VolumeBinding": binding volumes: ...``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import orjson

from topospread.client.source import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, Resource
from topospread.client.transport import Request, Response, Transport, status_message
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

__all__ = ["PREBIND_PREFIX", "AssumedVolumes", "VolumeBindingError", "bind_pod_volumes", "plan"]

PREBIND_PREFIX: Final = 'running PreBind plugin "VolumeBinding": '
POLL_INTERVAL: Final = 1.0
"""``BindPodVolumes`` polls its caches once a second."""


class VolumeBindingError(Exception):
    """PreBind failed; the message is the status text upstream reports."""


@dataclass(frozen=True, slots=True)
class AssumedVolumes:
    """What Reserve assumed for one pod on one node, and what PreBind must write."""

    node: str
    decision: VolumeDecision
    assumed_volumes: tuple[PersistentVolume, ...] = ()
    assumed_claims: tuple[PersistentVolumeClaim, ...] = ()
    originals: tuple[PersistentVolume | PersistentVolumeClaim, ...] = field(default=())
    """The cached objects the assumptions replaced (Unreserve puts them back)."""

    @property
    def needs_binding(self) -> bool:
        """Whether PreBind has anything to write (``PreBindPreFlight`` skips otherwise)."""
        return bool(self.decision.static_bindings or self.decision.dynamic_provisions)


def plan(objects: ClusterObjects, pod: Pod, node: Node) -> AssumedVolumes | None:
    """Reserve's ``AssumePodVolumes`` for ``pod`` on ``node``: the volumes and claims as
    they will be once bound. None when the pod has no claim needing a write."""
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


def _get(transport: Transport, resource: Resource, name: str, namespace: str | None) -> Any:
    response = transport.send(Request("GET", resource.path(namespace, name)))
    if response.status != 200:
        raise VolumeBindingError(_api_error("get", resource, name, response))
    return orjson.loads(response.data)


def _api_error(verb: str, resource: Resource, name: str, response: Response) -> str:
    return f"{verb} {resource.plural} {name!r}: {status_message(response)}"


def _update(
    transport: Transport,
    resource: Resource,
    name: str,
    namespace: str | None,
    change: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    # Read, then write the change with the read resourceVersion: the API server refuses it
    # (409) when the object changed meanwhile, as upstream's Update of its cached copy.
    obj = _get(transport, resource, name, namespace)
    patch = change(obj)
    patch.setdefault("metadata", {})["resourceVersion"] = obj["metadata"]["resourceVersion"]
    response = transport.send(
        Request(
            "PATCH",
            resource.path(namespace, name),
            body=json.dumps(patch).encode(),
            content_type="application/merge-patch+json",
        )
    )
    if not 200 <= response.status < 300:
        raise VolumeBindingError(_api_error("update", resource, name, response))


def _write_bindings(transport: Transport, assumed: AssumedVolumes) -> None:
    """``bindAPIUpdate``: volumes first, then the claims to provision."""
    for binding in assumed.decision.static_bindings:
        claim = binding.pvc

        def set_claim_ref(
            obj: dict[str, Any], claim: PersistentVolumeClaim = claim
        ) -> dict[str, Any]:
            ref = (obj.get("spec") or {}).get("claimRef") or {}
            patch: dict[str, Any] = {
                "spec": {
                    "claimRef": {
                        "kind": "PersistentVolumeClaim",
                        "apiVersion": "v1",
                        "namespace": claim.namespace,
                        "name": claim.name,
                        "uid": claim.metadata.uid,
                    }
                }
            }
            already = (
                ref.get("name") == claim.name
                and ref.get("namespace") == claim.namespace
                and (not ref.get("uid") or ref.get("uid") == claim.metadata.uid)
            )
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not already and ANN_BOUND_BY_CONTROLLER not in annotations:
                patch["metadata"] = {"annotations": {ANN_BOUND_BY_CONTROLLER: "yes"}}
            return patch

        _update(transport, PERSISTENT_VOLUMES, binding.pv.name, None, set_claim_ref)
    for provision in assumed.decision.dynamic_provisions:
        claim = provision.pvc

        def select_node(obj: dict[str, Any]) -> dict[str, Any]:
            return {"metadata": {"annotations": {ANN_SELECTED_NODE: assumed.node}}}

        _update(transport, PERSISTENT_VOLUME_CLAIMS, claim.name, claim.namespace, select_node)


def _check_bindings(
    objects: ClusterObjects, node: Node | None, pod_exists: bool, assumed: AssumedVolumes
) -> bool:
    """``checkBindings`` on the informer cache: True when every claim is fully bound;
    raises when the binding can no longer succeed."""
    if node is None:
        raise VolumeBindingError(f'failed to get node "{assumed.node}"')
    if not pod_exists:
        raise VolumeBindingError("pod does not exist any more")
    done = True
    for binding in assumed.decision.static_bindings:
        volume = objects.persistent_volume(binding.pv.name)
        claim = objects.persistent_volume_claim(binding.pvc.namespace, binding.pvc.name)
        if volume is None or claim is None:
            raise VolumeBindingError(f'failed to check binding: "{binding.pv.name}" not found')
        if not check_node_affinity(volume, node.labels):
            raise VolumeBindingError(
                f'pv "{volume.name}" node affinity doesn\'t match node "{node.name}": '
                "no matching NodeSelectorTerms"
            )
        if volume.claim_ref is None or not volume.claim_ref.uid:
            raise VolumeBindingError(f'ClaimRef got reset for pv "{volume.name}"')
        done = done and is_pvc_fully_bound(claim)
    for provision in assumed.decision.dynamic_provisions:
        claim = objects.persistent_volume_claim(provision.pvc.namespace, provision.pvc.name)
        if claim is None:
            raise VolumeBindingError(
                f'failed to check provisioning pvc: "{provision.pvc.name}" not found'
            )
        if claim.metadata.annotations.get(ANN_SELECTED_NODE) != assumed.node:
            raise VolumeBindingError(f'provisioning failed for PVC "{claim.name}"')
        if claim.spec.volume_name:
            volume = objects.persistent_volume(claim.spec.volume_name)
            if volume is None:
                done = False
                continue
            if not check_node_affinity(volume, node.labels):
                raise VolumeBindingError(
                    f'pv "{volume.name}" node affinity doesn\'t match node "{node.name}": '
                    "no matching NodeSelectorTerms"
                )
        done = done and is_pvc_fully_bound(claim)
    return done


def bind_pod_volumes(
    transport: Transport,
    pod: Pod,
    assumed: AssumedVolumes,
    view: Callable[[], tuple[ClusterObjects, Node | None, bool]],
    *,
    timeout: float,
    poll_interval: float = POLL_INTERVAL,
    stopped: Callable[[], bool] = lambda: False,
) -> None:
    """PreBind: write the bindings, then wait until the claims are bound.

    ``view`` returns the informer cache's objects, the node and whether the pod still
    exists. Raises :class:`VolumeBindingError` with upstream's status text."""
    try:
        _write_bindings(transport, assumed)
        deadline = time.monotonic() + timeout
        while True:
            # PollUntilContextTimeout without an immediate first check.
            time.sleep(min(poll_interval, max(0.0, deadline - time.monotonic())))
            objects, node, exists = view()
            if _check_bindings(objects, node, exists, assumed):
                return
            if time.monotonic() >= deadline or stopped():
                raise VolumeBindingError("context deadline exceeded")
    except VolumeBindingError as error:
        raise VolumeBindingError(f"{PREBIND_PREFIX}binding volumes: {error}") from None
