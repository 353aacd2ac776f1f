"""NodeVolumeLimits: a node takes no more volumes of a CSI driver than its CSINode allows.

Upstream ``pkg/scheduler/framework/plugins/nodevolumelimits`` (``CSILimits``, v1.37.1).

PreFilter returns Skip unless the pod has a ``persistentVolumeClaim``, a generic
``ephemeral`` or a migratable in-tree volume (see :mod:`.csi_translation`).

Filter, per node, with the node's CSINode (a node without one has no limits and no
migrated plugins):

1. The new pod's volumes, each as ``driver/handle`` -> driver: a claim (generic ephemeral
   claims are named ``<pod>-<volume>`` and must be controlled by the pod) is read through
   its bound PV — a CSI PV gives its driver and handle, an in-tree PV its translation when
   the plugin's migration is on — and an unbound claim, or one whose PV is missing,
   through its StorageClass: the provisioner (or, for a migratable in-tree provisioner,
   its CSI driver) with a handle unique to the claim, so that it is never taken for an
   attached volume. Migration counts as on, given a CSINode, for AWS EBS, Azure Disk,
   Cinder, GCE PD and Portworx (not Azure File or vSphere); upstream no longer reads the
   CSINode's migrated-plugins annotation. A missing claim is UnschedulableAndUnresolvable
   with the lookup's text; an ephemeral claim the pod does not own, an inline volume that
   does not translate and an empty claim name are Errors. Nothing counted: fits.
2. VolumeLimitScaling (beta, on in 1.37): a driver whose CSIDriver sets
   ``preventPodSchedulingIfMissing`` must be on the node's CSINode, else the node is
   Unschedulable ("<driver> CSI driver is not installed on the node"); an unknown driver
   passes.
3. No ``allocatable.count`` on any driver of the CSINode: fits.
4. Volumes in use: those of the node's pods (claims that cannot be found are not counted
   here; other errors are Errors) and the node's VolumeAttachments (attacher and the CSI
   handle of the named PV). A volume counts once however many pods use it, and the new
   pod's volumes already in use are not new.
5. A driver whose in-use plus new volumes exceed its count makes the node Unschedulable
   ("node(s) exceed max volume count").

Where upstream walks Go maps (the driver check of step 2), topospread walks the pod's
volumes in order: with two missing drivers upstream names either, topospread the first.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.errors import go_quote
from topospread.framework.cycle_state import CycleState
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
from topospread.model.objects import Pod, PodVolume
from topospread.model.storage import (
    BETA_STORAGE_CLASS_ANNOTATION,
    CSINode,
    PersistentVolumeClaim,
    VolumeAttachment,
)
from topospread.plugins import names
from topospread.plugins.nodevolumelimits.csi_translation import (
    Translated,
    TranslationError,
    csi_driver_of_plugin,
    is_migratable_plugin,
    plugin_of,
    translate_inline,
    translate_pv,
)

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "MIGRATION_ON_PLUGINS",
    "NAME",
    "CSILimits",
    "driver_not_installed",
    "new",
]

NAME: Final = names.NODE_VOLUME_LIMITS

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
"""Filter reason (``ErrReasonMaxVolumeCountExceeded``)."""

MIGRATION_ON_PLUGINS: Final = frozenset(
    {
        "kubernetes.io/aws-ebs",
        "kubernetes.io/portworx-volume",
        "kubernetes.io/gce-pd",
        "kubernetes.io/azure-disk",
        "kubernetes.io/cinder",
    }
)
"""In-tree plugins whose volumes count against their CSI driver (``isCSIMigrationOn``)."""

_RANDOM_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``rand.String``'s alphabet (k8s.io/apimachinery/pkg/util/rand)."""


def driver_not_installed(driver: str) -> str:
    """The Filter reason of VolumeLimitScaling's check."""
    return f"{driver} CSI driver is not installed on the node"


@dataclass(frozen=True, slots=True)
class _Failure:
    """Why a pod's volumes could not be counted; ``not_found`` for a missing claim."""

    message: str
    not_found: bool = False


def _migration_on(csi_node: CSINode | None, plugin_name: str) -> bool:
    return csi_node is not None and plugin_name in MIGRATION_ON_PLUGINS


def _claim_class(claim: PersistentVolumeClaim) -> str:
    # GetPersistentVolumeClaimClass: the beta annotation wins over storageClassName.
    annotated = claim.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return claim.spec.storage_class_name or ""


def _pod_owns(pod: Pod, claim: PersistentVolumeClaim) -> bool:
    # ephemeral.VolumeIsForPod: same namespace and the pod is the claim's controller.
    controller = claim.metadata.controller()
    return (
        claim.namespace == pod.namespace
        and controller is not None
        and controller.uid == pod.metadata.uid
    )


def _unique_name(driver: str, handle: str) -> str:
    return f"{driver}/{handle}"


class CSILimits:
    """Rejects nodes where the pod's CSI volumes would exceed a driver's attach limit."""

    __slots__ = (
        "_attachments_by_node",
        "_claim_infos",
        "_enable_volume_limit_scaling",
        "_objects",
        "_random_prefix",
    )

    def __init__(self, objects: ClusterObjects, features: Features = Features()) -> None:
        self._objects = objects
        self._enable_volume_limit_scaling = features.enable_volume_limit_scaling
        # Handles of claims counted through their class carry a random prefix, as
        # upstream's do, so that they never equal a real volume's handle.
        self._random_prefix = "".join(secrets.choice(_RANDOM_ALPHABET) for _ in range(32))
        self._attachments_by_node: dict[str, list[VolumeAttachment]] | None = None
        # _claim_driver_info by claim (identity, kept beside) and whether the node has a
        # CSINode, the only thing of the node it reads: every node's pods are counted in
        # every cycle, and the objects a plugin instance sees do not change.
        self._claim_infos: dict[
            tuple[int, bool], tuple[PersistentVolumeClaim, tuple[str, str]]
        ] = {}

    @property
    def name(self) -> str:
        """``NodeVolumeLimits``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodevolumelimits/csi.go``), with the new claim's hint;
        upstream's other hints (CSINode limits, the deleted pod's volumes, the attachment)
        are not evaluated: those events always queue."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self.is_schedulable_after_pvc_added,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE)),
        ]

    def is_schedulable_after_pvc_added(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterPVCAdded``: a claim one of the pod's volumes uses (by name,
        or the ``<pod>-<volume>`` claim of an ephemeral volume) in its namespace."""
        if not isinstance(new, PersistentVolumeClaim):
            return QueueingHint.QUEUE
        if new.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if any(v.claim_for(pod.name) == new.name for v in pod.volumes):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip a pod without claims, ephemeral volumes or migratable in-tree volumes."""
        for volume in pod.volumes:
            if volume.claim_name is not None or volume.ephemeral is not None:
                return None, None
            if volume.in_tree is not None:
                return None, None
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the Filter reads the node's pods directly."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when a driver's limit on this node would be exceeded."""
        if not pod.volumes:
            return None
        objects = self._objects
        csi_node = objects.csi_node(node_info.name)
        new_volumes: dict[str, str] = {}
        failure = self._attachable_volumes(pod, csi_node, True, new_volumes)
        if failure is not None:
            if failure.not_found:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (failure.message,))
            return as_status(failure.message)
        if not new_volumes:
            return None

        if self._enable_volume_limit_scaling:
            for driver in new_volumes.values():
                if not self._driver_installed(driver, csi_node):
                    return Status(Code.UNSCHEDULABLE, (driver_not_installed(driver),))

        limits = _volume_limits(csi_node)
        if not limits:
            return None

        attached: dict[str, str] = {}
        for existing in node_info.pods:
            failure = self._attachable_volumes(existing, csi_node, False, attached)
            if failure is not None:
                return as_status(failure.message)
        in_use: dict[str, int] = {}
        for unique_name, driver in attached.items():
            new_volumes.pop(unique_name, None)
            in_use[driver] = in_use.get(driver, 0) + 1
        for unique_name, driver in self._attachments(node_info.name).items():
            if unique_name not in attached:
                in_use[driver] = in_use.get(driver, 0) + 1

        wanted: dict[str, int] = {}
        for driver in new_volumes.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and in_use.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
        return None

    # -- counting ------------------------------------------------------------------

    def _driver_installed(self, driver: str, csi_node: CSINode | None) -> bool:
        # checkCSIDriverOnNode: only a driver that opts in is required on the node.
        csi_driver = self._objects.csi_driver(driver)
        if csi_driver is None or not csi_driver.prevent_pod_scheduling_if_missing:
            return True
        if csi_node is None:
            return False
        return any(d.name == driver for d in csi_node.drivers)

    def _attachable_volumes(
        self, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]
    ) -> _Failure | None:
        """``filterAttachableVolumes``: add the pod's countable volumes to ``result``."""
        for volume in pod.volumes:
            if volume.claim_name is None and volume.ephemeral is None:
                failure = self._inline_volume(volume, csi_node, result)
                if failure is not None:
                    return failure
                continue
            claim_name = volume.claim_for(pod.name) or ""
            if not claim_name:
                return _Failure("PersistentVolumeClaim had no name")
            claim = self._objects.persistent_volume_claim(pod.namespace, claim_name)
            if claim is None:
                if new_pod:
                    # The pod cannot run without it; an existing pod's is not counted.
                    return _Failure(
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        f"persistentvolumeclaim {go_quote(claim_name)} not found",
                        not_found=True,
                    )
                continue
            if volume.claim_name is None and not _pod_owns(pod, claim):
                return _Failure(
                    f"PVC {claim.namespace}/{claim.name} was not created for pod "
                    f"{pod.namespace}/{pod.name} (pod is not owner)"
                )
            key = (id(claim), csi_node is not None)
            cached = self._claim_infos.get(key)
            if cached is None or cached[0] is not claim:
                cached = (claim, self._claim_driver_info(csi_node, claim))
                self._claim_infos[key] = cached
            driver, handle = cached[1]
            if driver and handle:
                result[_unique_name(driver, handle)] = driver
        return None

    def _inline_volume(
        self, volume: PodVolume, csi_node: CSINode | None, result: dict[str, str]
    ) -> _Failure | None:
        """``checkAttachableInlineVolume``: count a migrated in-tree volume of the pod."""
        source = volume.in_tree
        if source is None:
            return None
        plugin_name = plugin_of(source)
        if not _migration_on(csi_node, plugin_name):
            return None
        translated = translate_inline(source)
        if isinstance(translated, TranslationError):
            return _Failure(
                f"converting volume({volume.name}) from inline to csi: {translated.message}"
            )
        result[_unique_name(translated.driver, translated.volume_handle)] = translated.driver
        return None

    def _claim_driver_info(
        self, csi_node: CSINode | None, claim: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """``getCSIDriverInfo``: the driver and handle a claim counts as ("" when none)."""
        pv_name = claim.spec.volume_name
        if not pv_name:
            return self._class_driver_info(csi_node, claim)
        pv = self._objects.persistent_volume(pv_name)
        if pv is None:
            # Deleted, or pre-bound to a volume not created yet: count it by its class.
            return self._class_driver_info(csi_node, claim)
        if pv.csi is not None:
            return pv.csi.driver, pv.csi.volume_handle
        if pv.in_tree is None:
            return "", ""
        if not _migration_on(csi_node, plugin_of(pv.in_tree)):
            return "", ""
        translated = translate_pv(pv)
        if not isinstance(translated, Translated):
            return "", ""
        return translated.driver, translated.volume_handle

    def _class_driver_info(
        self, csi_node: CSINode | None, claim: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """``getCSIDriverInfoFromSC``: an unbound claim counts against its provisioner."""
        class_name = _claim_class(claim)
        if not class_name:
            # Without a class the claim binds Immediately, so it is bound before this.
            return "", ""
        storage_class = self._objects.storage_class(class_name)
        if storage_class is None:
            return "", ""
        handle = f"{self._random_prefix}-{claim.namespace}/{claim.name}"
        provisioner = storage_class.provisioner
        if is_migratable_plugin(provisioner):
            if not _migration_on(csi_node, provisioner):
                return "", ""
            return csi_driver_of_plugin(provisioner) or "", handle
        return provisioner, handle

    def _attachments(self, node_name: str) -> dict[str, str]:
        """``getNodeVolumeAttachmentInfo``: the node's VolumeAttachments of CSI PVs."""
        if self._attachments_by_node is None:
            # Indexed by node once (upstream's informer index): the objects a plugin
            # instance sees do not change; frameworks are rebuilt when they do.
            index: dict[str, list[VolumeAttachment]] = {}
            for attachment in self._objects.volume_attachments:
                index.setdefault(attachment.node_name, []).append(attachment)
            self._attachments_by_node = index
        found: dict[str, str] = {}
        for attachment in self._attachments_by_node.get(node_name, ()):
            if not attachment.attacher or attachment.persistent_volume_name is None:
                continue
            pv = self._objects.persistent_volume(attachment.persistent_volume_name)
            if pv is None or pv.csi is None:
                continue
            found[_unique_name(attachment.attacher, pv.csi.volume_handle)] = attachment.attacher
        return found


def _volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    # getVolumeLimits: a driver without allocatable.count has no limit.
    if csi_node is None:
        return {}
    return {
        d.name: d.allocatable_count for d in csi_node.drivers if d.allocatable_count is not None
    }


def new(args: object | None, handle: Handle, features: Features) -> CSILimits:
    """The plugin factory (``nodevolumelimits.NewCSI``); takes no args."""
    return CSILimits(handle.objects, features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = CSILimits(ClusterObjects())
    _filter: FilterPlugin = CSILimits(ClusterObjects())
