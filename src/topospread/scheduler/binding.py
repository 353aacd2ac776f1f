"""The live scheduler's binding port: the informer cache and the API server.

Implements :class:`topospread.framework.binding.BindingPort` for the plugins' Reserve,
PreBind and Unreserve (VolumeBinding's, ``plugins/volumebinding``; DynamicResources',
``plugins/dynamicresources``, whose claim writes are :mod:`topospread.scheduler.claims`):

* assumptions go into the informer cache (:meth:`SchedulerCache.assume_objects`), so the
  next cycles do not hand the same PersistentVolume to another claim; restoring puts the
  informer's copies back;
* each static binding writes the volume's ``claimRef`` (and
  ``pv.kubernetes.io/bound-by-controller: "yes"`` unless it was pre-bound to the claim),
  each claim to provision gets ``volume.kubernetes.io/selected-node``
  (``bindAPIUpdate``); every write carries the ``resourceVersion`` just read, so a volume
  another scheduler took in the meantime answers 409 and the pod is retried, as
  upstream's ``Update`` of its cached copy does;
* the wait polls the informer cache every second (``PollUntilContextTimeout`` without an
  immediate first check) until the plugin's ``checkBindings`` holds, the timeout passes
  or the scheduler stops.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from topospread.client.chained import ChainedWrites, FollowUp
from topospread.client.source import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, Resource
from topospread.client.transport import (
    AsyncWrites,
    Request,
    Response,
    Transport,
    status_message,
)
from topospread.errors import ClusterError
from topospread.framework.binding import (
    AssumedObject,
    BindDone,
    BindingError,
    BindingGone,
    ClaimAllocation,
    VolumeCheck,
)
from topospread.model.objects import Pod
from topospread.model.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.scheduler.api import binding_request
from topospread.scheduler.cache import SchedulerCache
from topospread.scheduler.claims import ClaimBindingError, bind_pod_claims, unreserve_claims

__all__ = ["POLL_INTERVAL", "ApiBinding"]

POLL_INTERVAL: Final = 1.0
"""``BindPodVolumes`` polls its caches once a second."""


class ApiBinding:
    """The binding port over the live API and the scheduler's cache."""

    def __init__(
        self,
        transport: Transport,
        cache: SchedulerCache,
        *,
        stopped: Callable[[], bool] = lambda: False,
        poll_interval: float = POLL_INTERVAL,
        on_bind: Callable[[str], None] = lambda _outcome: None,
    ) -> None:
        self.transport = transport
        self._async_sender = (
            transport if isinstance(transport, AsyncWrites) and transport.sends_async else None
        )
        self.cache = cache
        self.stopped = stopped
        self.poll_interval = poll_interval
        self.on_bind = on_bind
        """Told each Binding's outcome: ``bound``, ``conflict`` or ``error`` (a metric)."""
        self._chained_sender = (
            transport if isinstance(transport, ChainedWrites) and transport.chains else None
        )
        self.follow_bind: Callable[[Pod, str], FollowUp | None] | None = None
        """Asked, for each Binding sent without waiting, for a write to follow it once it
        succeeded (the Scheduled Event); used where the transport chains writes."""

    @property
    def chains(self) -> bool:
        """Whether a Binding can take a follow-up (:attr:`follow_bind`)."""
        return self._chained_sender is not None

    # -- Bind (DefaultBinder) ------------------------------------------------------------

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        """POST the pod's Binding; 404 and 409 (deleted, or bound by another client
        meanwhile) raise :class:`BindingGone`, any other failure :class:`BindingError`
        with the API server's words."""
        answer: Response | ClusterError
        try:
            answer = self.transport.send(binding_request(pod, node_name))
        except ClusterError as error:
            answer = error
        failure = self._outcome(answer)
        if failure is not None:
            raise failure

    @property
    def sends_async(self) -> bool:
        """Whether the transport sends without waiting (the write processes)."""
        return self._async_sender is not None

    def bind_pod_async(self, pod: Pod, node_name: str, done: BindDone) -> bool:
        """The same Binding through the transport's ``send_async``, when it has one that
        can send now (:class:`~topospread.client.transport.AsyncWrites`); ``done`` gets
        what :meth:`bind_pod` would raise, or None."""
        sender = self._async_sender
        if sender is None:
            return False
        request = binding_request(pod, node_name)
        follow_up = None
        if self._chained_sender is not None and self.follow_bind is not None:
            follow_up = self.follow_bind(pod, node_name)

        def answered(answer: Response | ClusterError) -> None:
            done(self._outcome(answer))

        try:
            if follow_up is None:
                return sender.send_async(request, answered)
            assert self._chained_sender is not None
            sent = self._chained_sender.send_async_then(request, answered, follow_up)
        except ClusterError as error:
            if follow_up is not None:
                follow_up.done(None, None)
            done(self._outcome(error))
            return True
        if not sent:
            follow_up.done(None, None)
        return sent

    def _outcome(self, answer: Response | ClusterError) -> BindingError | None:
        if isinstance(answer, ClusterError):
            self.on_bind("error")
            return BindingError(str(answer))
        if 200 <= answer.status < 300:
            self.on_bind("bound")
            return None
        message = status_message(answer)
        if answer.status in (404, 409):
            self.on_bind("conflict")
            return BindingGone(message)
        self.on_bind("error")
        return BindingError(message)

    # -- Reserve / Unreserve -------------------------------------------------------------

    def assume_objects(self, assumed: Sequence[AssumedObject]) -> None:
        """Into the cache until the informer confirms or Unreserve restores."""
        self.cache.assume_objects(assumed)

    def restore_objects(
        self,
        assumed: Sequence[AssumedObject],
        originals: Sequence[AssumedObject],
    ) -> None:
        """The informer's copies win again."""
        self.cache.restore_objects(assumed, originals)

    # -- PreBind -------------------------------------------------------------------------

    def bind_volume(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim, node_name: str
    ) -> None:
        """``bindAPIUpdate``'s volume update: claimRef, bound-by-controller unless pre-bound."""

        def set_claim_ref(obj: dict[str, Any]) -> dict[str, Any]:
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

        self._update(PERSISTENT_VOLUMES, volume.name, None, set_claim_ref)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """``bindAPIUpdate``'s claim update: the selected-node annotation."""
        self._update(
            PERSISTENT_VOLUME_CLAIMS,
            claim.name,
            claim.namespace,
            lambda _obj: {"metadata": {"annotations": {ANN_SELECTED_NODE: node_name}}},
        )

    def wait_for_volumes(
        self, node_name: str, pod_key: str, check: VolumeCheck, timeout: float
    ) -> None:
        """Poll the informer cache until ``check`` holds (the PV controller's work)."""
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(min(self.poll_interval, max(0.0, deadline - time.monotonic())))
            with self.cache.lock:
                objects = self.cache.cluster_objects()
                node = self.cache.nodes.get(node_name)
                exists = self.cache.pods.get(pod_key) is not None
            if check(objects, node, exists):
                return
            if time.monotonic() >= deadline or self.stopped():
                raise BindingError("context deadline exceeded")

    def reserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """DynamicResources' ``bindClaim`` per claim (:func:`bind_pod_claims`)."""
        try:
            bind_pod_claims(self.transport, pod, planned)
        except (ClaimBindingError, ClusterError) as error:
            raise BindingError(str(error)) from None

    def unreserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """The pod out of the claims' ``reservedFor`` (:func:`unreserve_claims`)."""
        unreserve_claims(self.transport, pod, planned)

    # -- the API -------------------------------------------------------------------------

    def _get(self, resource: Resource, name: str, namespace: str | None) -> Any:
        response = self.transport.send(Request("GET", resource.path(namespace, name)))
        if response.status != 200:
            raise BindingError(_api_error("get", resource, name, response))
        return orjson.loads(response.data)

    def _update(
        self,
        resource: Resource,
        name: str,
        namespace: str | None,
        change: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        # Read, then write the change with the read resourceVersion: the API server refuses
        # it (409) when the object changed meanwhile, as upstream's Update of its cached copy.
        obj = self._get(resource, name, namespace)
        patch = change(obj)
        patch.setdefault("metadata", {})["resourceVersion"] = obj["metadata"]["resourceVersion"]
        response = self.transport.send(
            Request(
                "PATCH",
                resource.path(namespace, name),
                body=json.dumps(patch).encode(),
                content_type="application/merge-patch+json",
            )
        )
        if not 200 <= response.status < 300:
            raise BindingError(_api_error("update", resource, name, response))


def _api_error(verb: str, resource: Resource, name: str, response: Response) -> str:
    return f"{verb} {resource.plural} {name!r}: {status_message(response)}"
