"""VolumeBinding: a pod fits nodes where its claims' volumes are, or can be bound or provisioned.

Upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` (v1.37.1):

* PreFilter returns Skip for a pod without ``persistentVolumeClaim`` or ``ephemeral``
  volumes (after recording empty state, which PreScore reads). A claim that is missing,
  ``Lost``, being deleted, or — for an ephemeral volume — not controlled by the pod makes
  the pod UnschedulableAndUnresolvable with the claim's problem as the message; so does an
  unbound claim that is not WaitForFirstConsumer ("pod has unbound immediate
  PersistentVolumeClaims"). PreFilter never narrows the nodes (v1.37.1 has no
  ``GetEligibleNodes`` any more).
* Filter asks the binder (:mod:`.binder`) per node; any reason makes the node
  UnschedulableAndUnresolvable with all the reasons, in the binder's order; a binder error
  is an Error status.
* PreScore returns Skip only when StorageCapacityScoring is off; with it on (the v1.37
  default) every feasible node gets a score, 0 for a pod without volumes. Score groups the
  node's volumes by class — static bindings when there are any (by the volume's
  ``spec.storageClassName``, summing requests and capacities), else the provisions with a
  tracked CSIStorageCapacity (summing requests, the capacity taken once per class) — and
  maps each class's utilization through the args' shape (:mod:`.scorer`). There is no
  NormalizeScore.
* Reserve and PreBind (binding, provisioning) are not run here; :func:`.binder.volume_decision`
  says what they would do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np

from topospread.errors import ConfigError
from topospread.framework.binding import BindingError
from topospread.framework.config.types import VolumeBindingArgs
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
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import IntArray, NodeTable
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import Pod
from topospread.plugins import names
from topospread.plugins.volumebinding.assume import (
    AssumedVolumes,
    assume_pod_volumes,
    check_bindings,
)
from topospread.plugins.volumebinding.binder import (
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)
from topospread.plugins.volumebinding.scorer import (
    StorageResource,
    VolumeCapacityScorer,
    build_scorer,
    wrap_int64,
)

__all__ = ["ERR_UNBOUND_IMMEDIATE", "NAME", "STATE_KEY", "VolumeBinding", "new"]

NAME: Final = names.VOLUME_BINDING
STATE_KEY: Final = NAME
RESERVE_STATE_KEY: Final = f"{NAME}/reserved"
"""Reserve's assumptions, for PreBind and Unreserve."""


@dataclass(slots=True)
class _Reserved:
    """What Reserve assumed (None: nothing to write); Unreserve restores it once."""

    assumed: AssumedVolumes | None
    restored: bool = False

    def clone(self) -> _Reserved:
        return self


ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
"""PreFilter reason: a claim that should have been bound already is not."""


@dataclass(slots=True)
class _State:
    """``stateData``: the claims PreFilter sorted, and what Filter found per node. Shared,
    not copied, by clones, as upstream's pointer is."""

    claims: PodVolumeClaims | None = None
    """None when the pod has no claims (PreFilter skipped)."""
    binder: VolumeBinder | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False

    def clone(self) -> _State:
        return self


def _read_state(state: CycleState) -> _State | Status:
    # getStateData: the cycle state's own error (fwk.ErrNotFound, "not found") unwrapped.
    try:
        return state.read(STATE_KEY, _State)
    except StateNotFoundError:
        return as_status("not found")
    except TypeError:
        return as_status("unable to convert state into stateData")


class VolumeBinding:
    """Filters and scores nodes by the pod's PersistentVolumeClaims."""

    def __init__(self, args: VolumeBindingArgs, handle: Handle, features: Features) -> None:
        self._handle = handle
        self.bind_timeout_seconds = args.bind_timeout_seconds
        """How long a scheduler's PreBind waits for the claims to be bound."""
        self._scorer: VolumeCapacityScorer | None = (
            build_scorer(args.shape) if features.enable_storage_capacity_scoring else None
        )

    @property
    def name(self) -> str:
        """``VolumeBinding``."""
        return NAME

    # -- the binding cycle (volume_binding.go: Reserve, PreBind, Unreserve) ------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``Reserve``: assume the chosen volumes and claims (``AssumePodVolumes``) through
        ``Handle.binding``; nothing to do for a pod whose claims are all bound."""
        node_info = self._handle.snapshot.get(node_name)
        assumed = (
            assume_pod_volumes(self._handle.objects, pod, node_info.node)
            if node_info is not None and pod.volumes
            else None
        )
        state.write(RESERVE_STATE_KEY, _Reserved(assumed))
        if assumed is not None and self._handle.binding is not None:
            self._handle.binding.assume_objects((*assumed.assumed_volumes, *assumed.assumed_claims))
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``PreBindPreFlight``: Skip unless Reserve assumed volumes or claims to write."""
        del pod, node_name
        try:
            assumed = state.read(RESERVE_STATE_KEY, _Reserved).assumed
        except (StateNotFoundError, TypeError):
            return Status(Code.SKIP)
        if assumed is None or not assumed.needs_binding:
            return Status(Code.SKIP)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``PreBind`` (``BindPodVolumes``): write the static bindings and the selected
        node, then wait until the claims are bound, up to ``bindTimeoutSeconds``."""
        try:
            assumed = state.read(RESERVE_STATE_KEY, _Reserved).assumed
        except (StateNotFoundError, TypeError):
            return None
        if assumed is None or not assumed.needs_binding:
            return None
        binding = self._handle.binding
        if binding is None:
            return as_status("binding volumes: no binding port")
        try:
            for static in assumed.decision.static_bindings:
                binding.bind_volume(static.pv, static.pvc, node_name)
            for provision in assumed.decision.dynamic_provisions:
                binding.select_node(provision.pvc, node_name)
            binding.wait_for_volumes(
                node_name,
                pod.key,
                lambda objects, node, exists: check_bindings(objects, node, exists, assumed),
                float(self.bind_timeout_seconds),
            )
        except BindingError as error:
            return as_status(f"binding volumes: {error}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``Unreserve`` (``RevertAssumedPodVolumes``): the stored objects win again."""
        try:
            reserved = state.read(RESERVE_STATE_KEY, _Reserved)
        except (StateNotFoundError, TypeError):
            return
        assumed = reserved.assumed
        if assumed is None or reserved.restored or self._handle.binding is None:
            return
        reserved.restored = True
        self._handle.binding.restore_objects(
            (*assumed.assumed_volumes, *assumed.assumed_claims), assumed.originals
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``volumebinding/volume_binding.go``). Upstream's hints
        (the class, claim, CSINode, driver and capacity the pod's volumes use) are not
        evaluated: these events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Sort the pod's claims; reject missing, lost, deleted, foreign, unbound immediate ones."""
        binder = VolumeBinder(self._handle.objects)
        has_pvc, problem = binder.pod_has_pvcs(pod)
        if problem is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (problem,))
        if not has_pvc:
            state.write(STATE_KEY, _State())
            return None, Status(Code.SKIP)
        try:
            claims = binder.get_pod_volume_claims(pod)
        except BinderError as exc:
            return None, as_status(exc)
        if claims.unbound_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,))
        state.write(STATE_KEY, _State(claims=claims, binder=binder))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: other pods do not change the answer."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable with the binder's reasons, if the node cannot serve
        the pod's claims."""
        data = _read_state(state)
        if isinstance(data, Status):
            return data
        if data.claims is None or data.binder is None:
            return None
        try:
            volumes, reasons = data.binder.find_pod_volumes(data.claims, node_info.node)
        except BinderError as exc:
            return as_status(exc)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        data.by_node[node_info.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return None

    def pre_score(
        self, state: CycleState, pod: Pod, filtered_nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Skip only without StorageCapacityScoring."""
        if self._scorer is None:
            return Status(Code.SKIP)
        data = _read_state(state)
        if isinstance(data, Status):
            return data
        # With the gate on, upstream scores even without static bindings.
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The shape's score of the node's volume utilization, averaged over classes."""
        if self._scorer is None:
            return 0, None
        data = _read_state(state)
        if isinstance(data, Status):
            return 0, data
        volumes = data.by_node.get(node_info.name)
        if volumes is None:
            return 0, None
        classes = _class_resources(volumes)
        if isinstance(classes, Status):
            return 0, classes
        return self._scorer(classes), None

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Every node 0 when no node has volumes to score (a pod without claims, the
        common case, which upstream still scores node by node with the gate on); None
        otherwise, and on a state error (the per-node path reports it)."""
        del pod, table
        if self._scorer is not None:
            data = _read_state(state)
            if isinstance(data, Status) or data.by_node:
                return None
        return np.zeros(len(rows), np.int64)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already 0..100."""
        return None


def _class_resources(volumes: PodVolumes) -> Mapping[str, StorageResource] | Status:
    classes: dict[str, StorageResource] = {}
    if volumes.static_bindings:
        for binding in volumes.static_bindings:
            resource = classes.setdefault(binding.storage_class_name(), StorageResource())
            resource.requested = wrap_int64(resource.requested + binding.requested())
            resource.capacity = wrap_int64(resource.capacity + binding.capacity())
        return classes
    for provision in volumes.dynamic_provisions:
        capacity = provision.node_capacity
        if capacity is None:
            continue
        class_name = provision.pvc.spec.storage_class_name
        if class_name is None or capacity.capacity is None:
            # Upstream dereferences both pointers here and kube-scheduler panics.
            return as_status(
                "unsupported: VolumeBinding's Score dereferences a nil "
                + ("spec.storageClassName" if class_name is None else "CSIStorageCapacity.capacity")
                + f" of claim {provision.pvc.key} (kube-scheduler v1.37.1 panics)"
            )
        resource = classes.setdefault(class_name, StorageResource())
        # One class's provisions share one capacity: it is set, not summed.
        resource.capacity = capacity.capacity.value()
        request = provision.pvc.spec.storage_request
        resource.requested = wrap_int64(
            resource.requested + (0 if request is None else request.value())
        )
    return classes


def _validate(args: VolumeBindingArgs, features: Features) -> list[str]:
    # ValidateVolumeBindingArgsWithOptions, with the messages of validateFunctionShape.
    errors: list[str] = []
    if args.bind_timeout_seconds < 0:
        errors.append(
            f"bindTimeoutSeconds: Invalid value: {args.bind_timeout_seconds}: "
            "invalid BindTimeoutSeconds, should not be a negative value"
        )
    if not features.enable_storage_capacity_scoring:
        return errors
    shape = args.shape
    if not shape:
        errors.append("shape: Required value: at least one point must be specified")
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(
                f"shape[{i}].utilization: Invalid value: {shape[i].utilization}: "
                "values must be sorted in increasing order"
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errors.append(
                f"shape[{i}].utilization: Invalid value: {point.utilization}: "
                "not in valid range [0, 100]"
            )
        if not 0 <= point.score <= 10:
            errors.append(
                f"shape[{i}].score: Invalid value: {point.score}: not in valid range [0, 10]"
            )
    return errors


def new(args: object | None, handle: Handle, features: Features) -> VolumeBinding:
    """The plugin factory (``volumebinding.New``); ``args`` is the defaulted v1 form (a dict),
    typed VolumeBindingArgs, or None."""
    if args is None:
        typed = VolumeBindingArgs()
    elif isinstance(args, VolumeBindingArgs):
        typed = args
    elif isinstance(args, Mapping):
        typed = VolumeBindingArgs.from_v1(args)
    else:
        raise ConfigError(
            NAME, [f"want args to be of type VolumeBindingArgs, got {type(args).__name__}"]
        )
    errors = _validate(typed, features)
    if errors:
        raise ConfigError(NAME, errors)
    return VolumeBinding(typed, handle, features)


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = VolumeBinding(
        VolumeBindingArgs(), Handle.__new__(Handle), Features()
    )
    _filter: FilterPlugin = VolumeBinding(VolumeBindingArgs(), Handle.__new__(Handle), Features())
    _pre_score: PreScorePlugin = VolumeBinding(
        VolumeBindingArgs(), Handle.__new__(Handle), Features()
    )
    _score: ScorePlugin = VolumeBinding(VolumeBindingArgs(), Handle.__new__(Handle), Features())
