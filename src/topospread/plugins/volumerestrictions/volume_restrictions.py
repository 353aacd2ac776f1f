"""VolumeRestrictions: in-tree disks that cannot be shared with pods already on a node.

Upstream ``pkg/scheduler/framework/plugins/volumerestrictions`` (v1.37.1), the part about
volumes written inline in the pod: a GCE persistent disk with the same ``pdName`` unless
both mounts are read-only, an AWS EBS volume with the same ``volumeID`` (read-only or
not), an iSCSI volume with the same ``iqn`` unless both are read-only, and an RBD volume
with an overlapping monitor, the same pool and image unless both are read-only, conflict
with any volume of any pod on the node: the node is Unschedulable ("node(s) had no
available disk"). PreFilter returns Skip for a pod without such volumes.

The ReadWriteOncePod part reads PersistentVolumeClaims, which topospread does not model:
explain refuses pods that mount claims before this plugin runs, and here a pod with
claims is an Error rather than a silent answer (issue 12).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import InlineVolume, Pod
from topospread.plugins import names

__all__ = ["ERR_REASON_DISK_CONFLICT", "NAME", "VolumeRestrictions", "is_volume_conflict", "new"]

NAME: Final = names.VOLUME_RESTRICTIONS
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
"""Filter reason (``ErrReasonDiskConflict``)."""

UNSUPPORTED_CLAIMS: Final = (
    "unsupported: VolumeRestrictions needs the pod's PersistentVolumeClaims "
    "(ReadWriteOncePod), which topospread does not read"
)


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
    """``preFilterState`` of a pod without ReadWriteOncePod claims: nothing to count."""

    __slots__ = ()

    def clone(self) -> _State:
        """Immutable: itself."""
        return self


def _state_error() -> Status:
    return as_status(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


class VolumeRestrictions:
    """Rejects nodes where an inline disk of the pod is already in use."""

    @property
    def name(self) -> str:
        """``VolumeRestrictions``."""
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip a pod without inline disks; refuse one with claims (not modelled)."""
        if pod.volume_claims:
            return None, as_status(UNSUPPORTED_CLAIMS)
        if not pod.inline_volumes:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State())
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod: they only count ReadWriteOncePod claims, none here."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """No claims to count; an Error without PreFilter state, as upstream's."""
        try:
            state.read(PRE_FILTER_STATE_KEY, _State)
        except StateNotFoundError:
            return _state_error()
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """No claims to count; an Error without PreFilter state, as upstream's."""
        return self.add_pod(state, pod_to_schedule, pod_to_remove, node_info)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when a pod on the node holds one of the pod's disks."""
        for volume in pod.inline_volumes:
            for existing in node_info.pods:
                if is_volume_conflict(volume, existing):
                    return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
        try:
            state.read(PRE_FILTER_STATE_KEY, _State)
        except StateNotFoundError:
            return _state_error()
        return None


def new(args: object | None, handle: Handle, features: Features) -> VolumeRestrictions:
    """The plugin factory (``volumerestrictions.New``); takes no args."""
    return VolumeRestrictions()


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = VolumeRestrictions()
    _filter: FilterPlugin = VolumeRestrictions()
