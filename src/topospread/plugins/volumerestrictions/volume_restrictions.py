"""VolumeRestrictions: disks that cannot be shared with pods already on a node, and
ReadWriteOncePod claims already in use anywhere.

Upstream ``pkg/scheduler/framework/plugins/volumerestrictions`` (v1.37.1).

Inline disks: a GCE persistent disk with the same ``pdName`` unless both mounts are
read-only, an AWS EBS volume with the same ``volumeID`` (read-only or not), an iSCSI volume
with the same ``iqn`` unless both are read-only, and an RBD volume with an overlapping
monitor, the same pool and image unless both are read-only, conflict with any volume of
any pod on the node: the node is Unschedulable ("node(s) had no available disk").

ReadWriteOncePod: PreFilter looks up every ``persistentVolumeClaim`` volume of the pod (a
missing claim is UnschedulableAndUnresolvable with the lister's text, whatever its access
modes) and counts those of its ReadWriteOncePod claims that some pod of the snapshot, on
any node, already mounts. While that count is above zero every node is Unschedulable
("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode
already in-use by another pod"). AddPod and RemovePod (nominated pods, preemption) move
the count by the number of the pod's claim volumes named like one of those claims —
upstream compares names only, not namespaces. Generic ephemeral volumes take no part.

PreFilter returns Skip for a pod without inline disks and without claims in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.errors import go_quote
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from topospread.framework.node_info import ClusterObjects, NodeInfo
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import InlineVolume, Pod
from topospread.model.storage import PersistentVolumeClaim
from topospread.plugins import names

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "NAME",
    "VolumeRestrictions",
    "is_volume_conflict",
    "new",
]

NAME: Final = names.VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
"""Filter reason (``ErrReasonDiskConflict``)."""

ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
"""Filter reason (``ErrReasonReadWriteOncePodConflict``)."""

READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"


def is_volume_conflict(volume: InlineVolume, pod: Pod) -> bool:
    """``isVolumeConflict``: whether ``volume`` cannot be used beside ``pod``'s volumes."""
    for existing in pod.inline_volumes:
        gce, other_gce = volume.gce_persistent_disk, existing.gce_persistent_disk
        if (
            gce is not None
            and other_gce is not None
            and gce[0] == other_gce[0]
            and not (gce[1] and other_gce[1])
        ):
            return True
        aws, other_aws = volume.aws_elastic_block_store, existing.aws_elastic_block_store
        if aws is not None and other_aws is not None and aws == other_aws:
            return True
        iscsi, other_iscsi = volume.iscsi, existing.iscsi
        if (
            iscsi is not None
            and other_iscsi is not None
            and iscsi[0] == other_iscsi[0]
            and not (iscsi[1] and other_iscsi[1])
        ):
            return True
        rbd, other_rbd = volume.rbd, existing.rbd
        if rbd is not None and other_rbd is not None:
            monitors, pool, image, read_only = rbd
            other_monitors, other_pool, other_image, other_read_only = other_rbd
            if (
                not set(monitors).isdisjoint(other_monitors)
                and pool == other_pool
                and image == other_image
                and not (read_only and other_read_only)
            ):
                return True
    return False


class _State:
    """``preFilterState``: the pod's ReadWriteOncePod claim names and how many claim
    references of other pods hold them; AddPod/RemovePod change the count of a clone."""

    __slots__ = ("conflicting", "read_write_once_pod_claims")

    def __init__(self, read_write_once_pod_claims: frozenset[str], conflicting: int) -> None:
        self.read_write_once_pod_claims = read_write_once_pod_claims
        self.conflicting = conflicting

    def clone(self) -> _State:
        """A copy whose count can change independently."""
        return _State(self.read_write_once_pod_claims, self.conflicting)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        """``updateWithPod``: count ``pod``'s references to the claims in or out."""
        claims = self.read_write_once_pod_claims
        self.conflicting += multiplier * sum(
            1 for v in pod.volumes if v.claim_name is not None and v.claim_name in claims
        )


def _state_error() -> Status:
    return as_status(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


def _claims_in_use(nodes: Sequence[NodeInfo]) -> set[str]:
    # The snapshot's PVC reference counts: "namespace/claim" of every claim volume of
    # every pod on a node of the snapshot.
    return {
        f"{pod.namespace}/{volume.claim_name}"
        for info in nodes
        for pod in info.pods
        for volume in pod.volumes
        if volume.claim_name is not None
    }


class VolumeRestrictions:
    """Rejects nodes where an inline disk of the pod is in use, and every node while one of
    its ReadWriteOncePod claims is."""

    __slots__ = ("_objects",)

    def __init__(self, objects: ClusterObjects = ClusterObjects()) -> None:
        self._objects = objects

    @property
    def name(self) -> str:
        """``VolumeRestrictions``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``volumerestrictions/volume_restrictions.go``), with the
        new claim's hint; the deleted pod's (its volumes against the pod's) is not
        evaluated: deletions always queue."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_persistent_volume_claim_added,
            ),
        ]

    def is_schedulable_after_persistent_volume_claim_added(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterPersistentVolumeClaimAdded``: a claim the pod names (by
        ``persistentVolumeClaim.claimName``) in its namespace."""
        if not isinstance(new, PersistentVolumeClaim):
            return QueueingHint.QUEUE
        if new.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if any(v.claim_name == new.name for v in pod.volumes if v.claim_name is not None):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Find the pod's ReadWriteOncePod claims in use; Skip when nothing can conflict."""
        read_write_once_pod: set[str] = set()
        for volume in pod.volumes:
            if volume.claim_name is None:
                continue
            claim = self._objects.persistent_volume_claim(pod.namespace, volume.claim_name)
            if claim is None:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f"persistentvolumeclaim {go_quote(volume.claim_name)} not found",),
                )
            if READ_WRITE_ONCE_POD in claim.spec.access_modes:
                read_write_once_pod.add(claim.name)
        conflicting = 0
        if read_write_once_pod:
            in_use = _claims_in_use(nodes)
            conflicting = sum(
                1 for name in read_write_once_pod if f"{pod.namespace}/{name}" in in_use
            )
        if not pod.inline_volumes and conflicting == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(frozenset(read_write_once_pod), conflicting))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod: count the claim references of pods added or removed."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_to_add``'s references to the pod's ReadWriteOncePod claims."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY, _State)
        except StateNotFoundError:
            return _state_error()
        s.update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Uncount ``pod_to_remove``'s references to the pod's ReadWriteOncePod claims."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY, _State)
        except StateNotFoundError:
            return _state_error()
        s.update_with_pod(pod_to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when a pod on the node holds one of the pod's disks, or when one
        of its ReadWriteOncePod claims is in use."""
        for volume in pod.inline_volumes:
            for existing in node_info.pods:
                if is_volume_conflict(volume, existing):
                    return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
        try:
            s = state.read(PRE_FILTER_STATE_KEY, _State)
        except StateNotFoundError:
            return _state_error()
        if s.conflicting > 0:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,))
        return None


def new(args: object | None, handle: Handle, features: Features) -> VolumeRestrictions:
    """The plugin factory (``volumerestrictions.New``); takes no args."""
    return VolumeRestrictions(handle.objects)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = VolumeRestrictions()
    _filter: FilterPlugin = VolumeRestrictions()
