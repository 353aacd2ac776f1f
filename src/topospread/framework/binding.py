"""The binding port: what the binding cycle's plugins write, and where.

Upstream's Reserve / PreBind plugins write through the scheduler's clients and caches
(VolumeBinding's ``volumeBinder``: ``AssumePodVolumes`` on its assume caches,
``BindPodVolumes``' ``bindAPIUpdate`` and ``checkBindings`` polling,
``pkg/scheduler/framework/plugins/volumebinding/binder.go``). Here the plugins own that
logic and write through one small port, implemented twice:

* the live scheduler's (``topospread.scheduler.binding``): the informer cache for the
  assumptions, the API server for the writes (each carrying the object's
  ``resourceVersion``, so a concurrent change answers 409 and the pod is retried), and a
  poll of the informer cache for the controllers' work;
* the simulator's (``topospread.engine.sim.binding``): the in-memory cluster, whose
  controllers act in the instant of the write, so there is nothing to wait for.

The framework itself does no I/O: this module is only the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from topospread.framework.node_info import ClusterObjects
from topospread.model.objects import Node, Pod
from topospread.model.resource import AllocationResult, ResourceClaim
from topospread.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = [
    "AssumedObject",
    "AsyncBindingPort",
    "BindDone",
    "BindingError",
    "BindingGone",
    "BindingPort",
    "ClaimAllocation",
    "VolumeCheck",
]

AssumedObject = PersistentVolume | PersistentVolumeClaim | ResourceClaim
"""What Reserve assumes: VolumeBinding's volumes and claims, DynamicResources' claims."""

VolumeCheck = Callable[[ClusterObjects, Node | None, bool], bool]
"""``checkBindings`` over a view of the cluster: (objects, the node, whether the pod still
exists) -> True when every claim is bound; raises :class:`BindingError` when the binding
can no longer succeed."""


@dataclass(frozen=True, slots=True)
class ClaimAllocation:
    """One of the pod's ResourceClaims at Reserve: ``allocation`` is what this scheduler
    allocates (None when the claim was allocated already and only needs the pod's
    reservation)."""

    claim: ResourceClaim
    allocation: AllocationResult | None
    class_requests: tuple[tuple[str, str], ...] = ()
    """(device class, qualified request) in request order, for the class configs."""


class BindingError(Exception):
    """A write or wait of the binding cycle failed; the message is upstream's error text
    (the plugin wraps it as its status)."""


class BindingGone(BindingError):
    """The pod cannot be bound because it is gone or already bound (the API's 404 or 409
    to the Binding): nothing to retry, the informer says where the pod really is."""


class BindingPort(Protocol):
    """The writes the binding cycle's plugins make (``Handle.binding``)."""

    def assume_objects(self, assumed: Sequence[AssumedObject]) -> None:
        """Reserve: these objects stand in for the stored ones until confirmed or restored
        (``AssumePodVolumes``, ``SignalClaimPendingAllocation`` on the assume caches)."""
        ...

    def restore_objects(
        self,
        assumed: Sequence[AssumedObject],
        originals: Sequence[AssumedObject],
    ) -> None:
        """Unreserve: drop the assumptions, the stored objects win again
        (``RevertAssumedPodVolumes``)."""
        ...

    def bind_volume(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim, node_name: str
    ) -> None:
        """PreBind: give ``volume`` the claim's ``claimRef`` (``bindAPIUpdate``'s volume
        update, with ``bound-by-controller`` unless it was pre-bound to the claim), for a
        pod going to ``node_name``."""
        ...

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """PreBind: annotate ``claim`` with ``volume.kubernetes.io/selected-node``, so its
        volume is provisioned there (``bindAPIUpdate``'s claim update)."""
        ...

    def wait_for_volumes(
        self, node_name: str, pod_key: str, check: VolumeCheck, timeout: float
    ) -> None:
        """PreBind: wait until ``check`` says every claim is bound (the PV controller and
        the provisioner at work), polling once a second up to ``timeout`` seconds; raise
        :class:`BindingError` (``context deadline exceeded``) after it."""
        ...

    def reserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """PreBind (DynamicResources' ``bindClaim`` per claim): the claims this scheduler
        allocates get the delete-protection finalizer and ``status.allocation``, every
        claim the pod in ``status.reservedFor``; conflicts retried on the claim read again.
        Raises :class:`BindingError` with upstream's text."""
        ...

    def unreserve_claims(self, pod: Pod, planned: Sequence[ClaimAllocation]) -> None:
        """Unreserve's write: take the pod out of the claims' ``reservedFor`` (failures
        are logged, as upstream logs them)."""
        ...

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        """Bind: set the pod's node (DefaultBinder's ``pods/binding``, with the pod's uid
        as precondition). Raises :class:`BindingGone` when the pod was deleted or bound by
        another client meanwhile, :class:`BindingError` on any other failure."""
        ...


BindDone = Callable[[BindingError | None], None]
"""Told a Binding's outcome: None once bound, :class:`BindingGone` or :class:`BindingError`."""


@runtime_checkable
class AsyncBindingPort(BindingPort, Protocol):
    """A binding port that can send a pod's Binding without holding a thread until the
    answer (the live scheduler's, over its write processes)."""

    @property
    def sends_async(self) -> bool:
        """Whether :meth:`bind_pod_async` can ever send (False: it always answers False)."""
        ...

    def bind_pod_async(self, pod: Pod, node_name: str, done: BindDone) -> bool:
        """Send the Binding :meth:`BindingPort.bind_pod` would send; False when it cannot
        be sent at once (no such transport, or the rate limiter would make it wait: the
        caller binds with ``bind_pod`` instead). When True, ``done`` is called exactly
        once with the outcome, on the thread that reads the answers; it must not block."""
        ...
