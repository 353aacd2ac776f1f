"""VolumeZone: a pod whose bound PersistentVolumes carry zone or region labels fits only
nodes with matching labels.

Upstream ``pkg/scheduler/framework/plugins/volumezone`` (v1.37.1). PreFilter walks the
pod's ``persistentVolumeClaim`` volumes (generic ephemeral volumes are not looked at):

* a claim that cannot be found is UnschedulableAndUnresolvable with the lister's text
  (``persistentvolumeclaim "x" not found``), and so is a missing PersistentVolume or
  StorageClass;
* an unbound claim (no ``spec.volumeName``) is looked up by class: without a class it is
  rejected ("PersistentVolumeClaim had no pv name and storageClass name"), with a
  WaitForFirstConsumer class it is skipped (VolumeBinding places it), with an Immediate
  class it is rejected ("PersistentVolume had no name": the binder has not bound it yet);
* a bound claim contributes each of the four topology labels its volume carries
  (``topology.kubernetes.io/zone|region`` and the ``failure-domain.beta.kubernetes.io``
  ones), the value read as a ``__``-separated set of zones; a value with an empty member
  is ignored, as upstream ignores what ``LabelZonesToSet`` cannot parse.

PreFilter returns Skip when nothing was collected. Filter passes a node without any of the
four labels (a single-zone cluster may not label its nodes); otherwise every collected
label must be on the node, a beta key also matching the node's GA key, with a value in
the volume's set, else the node is UnschedulableAndUnresolvable ("node(s) had no
available volume zone"). The ``InPlacePodVerticalScalingSchedulerPreemption`` gate, which
would skip pods with a deferred resize, is off at v1.37.1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.errors import go_quote
from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
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
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod
from topospread.model.storage import BETA_STORAGE_CLASS_ANNOTATION, PersistentVolume
from topospread.plugins import names

__all__ = ["ERR_REASON_CONFLICT", "NAME", "TOPOLOGY_LABELS", "VolumeZone", "label_zones", "new"]

NAME: Final = names.VOLUME_ZONE
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
"""Filter reason (``ErrReasonConflict``)."""

BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
GA_ZONE: Final = "topology.kubernetes.io/zone"
GA_REGION: Final = "topology.kubernetes.io/region"

TOPOLOGY_LABELS: Final = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
"""The labels compared, in upstream's order (which decides nothing but the walk)."""

_GA_OF_BETA: Final = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}

MULTI_ZONE_DELIMITER: Final = "__"
"""``LabelMultiZoneDelimiter``: a regional volume lists its zones joined by this."""

_HAD_NO_NAME: Final = "PersistentVolumeClaim had no name"
_NO_PV_NO_CLASS: Final = "PersistentVolumeClaim had no pv name and storageClass name"
_PV_HAD_NO_NAME: Final = "PersistentVolume had no name"


_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What Go's ``strings.TrimSpace`` trims (``unicode.IsSpace``); Python's ``str.strip``
also trims U+001C..U+001F."""


def _not_found(resource: str, name: str) -> str:
    # The listers' NotFound error text (apierrors.NewNotFound).
    return f"{resource} {go_quote(name)} not found"


def claim_class(annotations: Mapping[str, str], class_name: str | None) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``storageClassName``."""
    annotated = annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return class_name or ""


def label_zones(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the zones a label value lists, or None when a member is empty
    (after Go's whitespace trimming), which upstream logs and ignores."""
    zones = set()
    for part in value.split(MULTI_ZONE_DELIMITER):
        zone = part.strip(_GO_SPACE)
        if not zone:
            return None
        zones.add(zone)
    return frozenset(zones)


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of one bound volume (``pvTopology``)."""

    pv_name: str
    key: str
    values: frozenset[str]


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """``getPVTopologies``: the volume's parsable topology labels, in label order."""
    found = []
    for key in TOPOLOGY_LABELS:
        value = pv.metadata.labels.get(key)
        if value is None:
            continue
        zones = label_zones(value)
        if zones is not None:
            found.append(PVTopology(pv.name, key, zones))
    return found


@dataclass(frozen=True, slots=True)
class _State:
    """``stateData``: the labels collected in PreFilter; never changed afterwards."""

    topologies: tuple[PVTopology, ...]

    def clone(self) -> _State:
        """Immutable: itself."""
        return self


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def topologies_of_pod(objects: ClusterObjects, pod: Pod) -> tuple[list[PVTopology], Status | None]:
    """``getPVbyPod``: the topology labels of the pod's bound claims, or a rejection."""
    found: list[PVTopology] = []
    for volume in pod.volumes:
        claim_name = volume.claim_name
        if claim_name is None:
            continue
        if not claim_name:
            return [], _unresolvable(_HAD_NO_NAME)
        claim = objects.persistent_volume_claim(pod.namespace, claim_name)
        if claim is None:
            return [], _unresolvable(_not_found("persistentvolumeclaim", claim_name))
        pv_name = claim.spec.volume_name
        if not pv_name:
            class_name = claim_class(claim.metadata.annotations, claim.spec.storage_class_name)
            if not class_name:
                return [], _unresolvable(_NO_PV_NO_CLASS)
            storage_class = objects.storage_class(class_name)
            if storage_class is None:
                return [], _unresolvable(_not_found("storageclass.storage.k8s.io", class_name))
            if storage_class.volume_binding_mode == "WaitForFirstConsumer":
                continue  # VolumeBinding decides where it is provisioned
            return [], _unresolvable(_PV_HAD_NO_NAME)
        pv = objects.persistent_volume(pv_name)
        if pv is None:
            return [], _unresolvable(_not_found("persistentvolume", pv_name))
        found.extend(pv_topologies(pv))
    return found, None


class VolumeZone:
    """Keeps a pod on the nodes in the zones (and regions) of its bound volumes."""

    __slots__ = ("_objects",)

    def __init__(self, objects: ClusterObjects) -> None:
        self._objects = objects

    @property
    def name(self) -> str:
        """``VolumeZone``."""
        return NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``volumezone/volume_zone.go``). Upstream's hints
        (the class's binding mode, the claim and volume the pod uses) are not evaluated:
        these events always queue."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Collect the bound volumes' topology labels; Skip when there are none."""
        topologies, status = topologies_of_pod(self._objects, pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(tuple(topologies)))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: nothing depends on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when a labelled node is outside a volume's zones."""
        if not pod.volumes:
            return None
        try:
            topologies: Sequence[PVTopology] = state.read(PRE_FILTER_STATE_KEY, _State).topologies
        except StateNotFoundError:
            # Upstream recomputes what PreFilter would have stored.
            topologies, status = topologies_of_pod(self._objects, pod)
            if status is not None:
                return status
        labels = node_info.node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA_OF_BETA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return _unresolvable(ERR_REASON_CONFLICT)
        return None


def new(args: object | None, handle: Handle, features: Features) -> VolumeZone:
    """The plugin factory (``volumezone.New``); takes no args."""
    return VolumeZone(handle.objects)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = VolumeZone(ClusterObjects())
    _filter: FilterPlugin = VolumeZone(ClusterObjects())
