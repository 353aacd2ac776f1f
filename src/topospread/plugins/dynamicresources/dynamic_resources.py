"""DynamicResources: ResourceClaims with structured parameters (PreFilter, Filter,
PostFilter, Score).

Upstream ``pkg/scheduler/framework/plugins/dynamicresources`` (v1.37.1, DRA GA), with the
default feature gates (DRAPrioritizedList on, so Score runs; DRAWorkloadResourceClaims and
DRANodeAllocatableResources off). Pods topospread cannot decide are refused before the
cycle (:mod:`.support`); for the others:

* PreFilter resolves each ``spec.resourceClaims`` entry: a ``resourceClaimName`` as is, a
  ``resourceClaimTemplateName`` through the pod's ``status.resourceClaimStatuses`` (no
  entry: ``pod "ns/name": ResourceClaim not created yet``; an entry without a name: the
  entry is skipped), neither: ``none of the supported fields are set``. A missing claim is
  ``could not find ResourceClaim "ns/name"``, one being deleted ``resourceclaim "name" is
  being deleted``, a generated one must be controlled by the pod (same namespace, owner
  UID). All of these reject the pod on every node (UnschedulableAndUnresolvable). No
  claims left: Skip. Allocated claims contribute their allocation's node selector; the
  requests of unallocated ones must name existing device classes (``request R: device
  class C does not exist``; an empty class name is an Error). Reservations never block:
  any number of pods may share a claim (``CanBeReserved``).
* Filter: an allocated claim whose node selector does not match the node makes it
  unavailable; the unallocated claims go through the allocator, whose failure is
  ``cannot allocate all claims``, whose node-local error rejects the node with its text and
  whose other errors (a CEL runtime error, a constraint an ``All`` request cannot meet)
  are an Error status. The allocator runs before the availability verdict, so its verdict
  wins; otherwise an unavailable claim gives ``resourceclaim not available on the node``.
* PostFilter: if some allocated claim was unavailable on a node and is reserved for no one
  or only for this pod, upstream deallocates it and returns Unschedulable
  ``deallocation of ResourceClaim completed`` (nothing is written here); otherwise
  Unschedulable. Without PreFilter state (an earlier plugin rejected the pod) it is the
  Error ``not found``, which ends the PostFilter phase without preemption.
* Score: for each claim, ``8 - i`` for every ``firstAvailable`` subrequest ``i`` that
  got devices; 0 for pods without such requests. NormalizeScore is the default one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

import numpy as np

from topospread.framework.binding import BindingError, ClaimAllocation
from topospread.framework.cycle_state import CycleState, StateData, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    Handle,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
)
from topospread.framework.node_info import ClusterObjects, NodeInfo
from topospread.framework.node_table import IntArray, NodeTable
from topospread.framework.status import Code, Status, as_status
from topospread.model.nodeaffinity import NodeSelectorMatcher, NodeSelectorParseError, node_selector
from topospread.model.objects import Pod
from topospread.model.resource import ResourceClaim
from topospread.plugins import names
from topospread.plugins.dynamicresources.allocation import NodeSelectorError, plan_allocations
from topospread.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    allocated_devices,
)
from topospread.plugins.dynamicresources.podclaims import resolve_claims
from topospread.plugins.helper.batch import default_normalize_batch
from topospread.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from topospread.plugins.dynamicresources.cel import Selector

__all__ = ["NAME", "DynamicResources", "new", "resolve_claims"]

NAME: Final = names.DYNAMIC_RESOURCES
RESERVE_STATE_KEY: Final = f"{NAME}/reserved"
"""Reserve's allocations, for PreBind and Unreserve."""


@dataclass(slots=True)
class _Reserved:
    """The pod's claims as Reserve planned them, and what the binding cycle has done."""

    planned: tuple[ClaimAllocation, ...]
    assumed: tuple[ResourceClaim, ...]
    """The claims as assumed allocated, standing in for ``originals``."""
    originals: tuple[ResourceClaim, ...]
    written: bool = False
    """Whether PreBind began writing (Unreserve then takes the reservations back)."""
    restored: bool = False

    def clone(self) -> _Reserved:
        return self


_STATE_KEY: Final = "PreFilter" + NAME
_MAX_NODE_SCORE: Final = 100
_FIRST_AVAILABLE_MAX_SIZE: Final = 8
"""``resourceapi.FirstAvailableDeviceRequestMaxSize``."""


@dataclass(slots=True)
class _State:
    """``stateData``: the pod's claims, where allocated ones are available, the allocator
    and what Filter learnt per node."""

    claims: list[ResourceClaim] = field(default_factory=list)
    available_on: list[NodeSelectorMatcher | None] = field(default_factory=list)
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[list[str]]] = field(default_factory=dict)

    def clone(self) -> StateData:
        """Shared, as upstream shares the pointer."""
        return self


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _unresolvable(reason: str) -> Status:
    # statusUnschedulable: every rejection of this plugin is UnschedulableAndUnresolvable.
    return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


class DynamicResources:
    """DynamicResources for claims with structured parameters."""

    def __init__(self, objects: ClusterObjects, handle: Handle | None = None) -> None:
        self._objects = objects
        self._handle = handle
        self._cel_cache: dict[str, Selector] = {}

    @property
    def name(self) -> str:
        """``DynamicResources``."""
        return NAME

    # -- the queue (dynamicresources.go: PreEnqueue) --------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """``PreEnqueue``: a pod whose claims are not all there (created from its templates,
        not being deleted, its own) waits without a scheduling attempt or an Event, until a
        claim or the pod's claim statuses change."""
        if not pod.resource_claims:
            return None
        _, error = resolve_claims(pod, self._objects)
        return _unresolvable(error) if error is not None else None

    # -- the binding cycle (dynamicresources.go: Reserve, PreBind, Unreserve) -----------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``Reserve``: allocate the pod's unallocated claims on the node with the devices
        Filter found, and assume them allocated (``SignalClaimPendingAllocation``), so the
        next cycles see the devices in use. Allocated claims are left alone."""
        if not pod.resource_claims:
            return None
        # allocation imports this module (resolve_claims): imported here, not at the top.

        handle = self._handle
        node_info = handle.snapshot.get(node_name) if handle is not None else None
        if node_info is None:
            return as_status(f"node {node_name} not found")
        try:
            planned = tuple(plan_allocations(self._objects, pod, node_info.node))
        except (AllocationError, NodeSelectorError) as error:
            return as_status(str(error))
        assumed = tuple(
            replace(item.claim, allocation=item.allocation)
            for item in planned
            if item.allocation is not None
        )
        originals = tuple(item.claim for item in planned if item.allocation is not None)
        state.write(RESERVE_STATE_KEY, _Reserved(planned, assumed, originals))
        if assumed and handle is not None and handle.binding is not None:
            handle.binding.assume_objects(assumed)
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``PreBindPreFlight``: Skip unless Reserve planned claims for the pod."""
        del pod, node_name
        reserved = self._reserved(state)
        if reserved is None or not reserved.planned:
            return Status(Code.SKIP)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``PreBind`` (``bindClaim`` per claim) through ``Handle.binding``."""
        reserved = self._reserved(state)
        if reserved is None or not reserved.planned:
            return None
        binding = self._handle.binding if self._handle is not None else None
        if binding is None:
            return as_status("no binding port")
        # Marked first: a failure part-way may have reserved some claims already.
        reserved.written = True
        try:
            binding.reserve_claims(pod, reserved.planned)
        except BindingError as error:
            return as_status(str(error))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``Unreserve``: the assumed claims are dropped; reservations PreBind wrote are
        taken back."""
        reserved = self._reserved(state)
        binding = self._handle.binding if self._handle is not None else None
        if reserved is None or reserved.restored or binding is None:
            return
        reserved.restored = True
        if reserved.assumed:
            binding.restore_objects(reserved.assumed, reserved.originals)
        if reserved.written:
            binding.unreserve_claims(pod, reserved.planned)

    @staticmethod
    def _reserved(state: CycleState) -> _Reserved | None:
        try:
            return state.read(RESERVE_STATE_KEY, _Reserved)
        except (StateNotFoundError, TypeError):
            return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``dynamicresources/dynamicresources.go``), the
        DynamicResourceAllocation gate on. Upstream's hints (whether the claim is one of
        the pod's, the pod's generated claims) are not evaluated: these events always queue."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.RESOURCE_CLAIM,
                    ActionType.ADD | ActionType.UPDATE | ActionType.DELETE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Resolve the pod's claims and prepare the allocator (see the module docstring)."""
        s = _State()
        state.write(_STATE_KEY, s)
        objects = self._objects
        claims, error = resolve_claims(pod, objects)
        if error is not None:
            return None, _unresolvable(error)
        if not claims:
            return None, Status(Code.SKIP)
        to_allocate = 0
        available_on: list[NodeSelectorMatcher | None] = []
        for claim in claims:
            if claim.allocation is not None:
                matcher = None
                if claim.allocation.node_selector is not None:
                    try:
                        matcher = node_selector(claim.allocation.node_selector)
                    except NodeSelectorParseError as exc:
                        return None, as_status(exc)
                available_on.append(matcher)
                continue
            available_on.append(None)
            to_allocate += 1
            for request in claim.spec.requests:
                if request.exactly is not None:
                    status = self._validate_class(request.exactly.device_class_name, request.name)
                    if status is not None:
                        return None, status
                elif request.first_available:
                    for sub in request.first_available:
                        status = self._validate_class(
                            sub.request.device_class_name, f"{request.name}/{sub.name}"
                        )
                        if status is not None:
                            return None, status
                else:
                    return None, _unresolvable(
                        f"resource claim {_claim_key(claim)}, request {request.name}: "
                        "unknown request type"
                    )
        s.claims = claims
        s.available_on = available_on
        if to_allocate:
            s.allocator = Allocator(
                allocated_devices(objects.resource_claims),
                objects.device_class,
                objects.resource_slices,
                self._cel_cache,
            )
        return None, None

    def _validate_class(self, class_name: str, request: str) -> Status | None:
        if not class_name:
            return as_status(f"request {request}: unsupported request type")
        if self._objects.device_class(class_name) is None:
            return _unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: no AddPod/RemovePod."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Allocated claims must be available on the node, the others must fit on it."""
        try:
            s = state.read(_STATE_KEY, _State)
        except StateNotFoundError:
            return as_status("not found")
        if not s.claims:
            return None
        node = node_info.node
        unavailable = [
            i
            for i, matcher in enumerate(s.available_on)
            if matcher is not None and not matcher.match(node)
        ]
        if s.allocator is not None:
            to_allocate = [c for c in s.claims if c.allocation is None]
            try:
                result = s.allocator.allocate(node, to_allocate)
            except AllocationError as exc:
                if exc.on_node:
                    return _unresolvable(exc.message)
                return as_status(exc.message)
            if result is None:
                return _unresolvable("cannot allocate all claims")
            s.node_allocations[node.name] = result
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable("resourceclaim not available on the node")
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Deallocate an unavailable claim if only this pod uses it (see the module docstring)."""
        try:
            s = state.read(_STATE_KEY, _State)
        except StateNotFoundError:
            # getStateData: CycleState.Read's fwk.ErrNotFound.
            return None, as_status("not found")
        for index in sorted(s.unavailable):
            reserved = s.claims[index].reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                return None, Status.of(
                    Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"
                )
        return None, Status(Code.UNSCHEDULABLE)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The ``firstAvailable`` preference score of the node's allocation."""
        try:
            s = state.read(_STATE_KEY, _State)
        except StateNotFoundError:
            return 0, as_status("not found")
        if not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.node.name)
        if allocations is None:
            return 0, None
        score = 0
        pending = iter(allocations)
        for claim in s.claims:
            if claim.allocation is not None:
                picked = {r.request for r in claim.allocation.results}
            else:
                picked = set(next(pending, []))
            for request in claim.spec.requests:
                if request.exactly is not None:
                    continue
                for i, sub in enumerate(request.first_available):
                    if f"{request.name}/{sub.name}" in picked:
                        score += _FIRST_AVAILABLE_MAX_SIZE - i
        return score, None

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Every node 0 for a pod without claims (upstream scores it node by node); None
        otherwise, and on a state error (the per-node path reports it)."""
        del pod, table
        try:
            s = state.read(_STATE_KEY, _State)
        except StateNotFoundError:
            return None
        if s.claims:
            return None
        return np.zeros(len(rows), np.int64)

    def score_extensions(self) -> DynamicResources:
        """Itself: NormalizeScore."""
        return self

    def normalize_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray, scores: IntArray
    ) -> IntArray | None:
        """``DefaultNormalizeScore`` of the batch (all-zero scores stay 0)."""
        del state, pod, table, rows
        return default_normalize_batch(_MAX_NODE_SCORE, False, scores)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """``helper.DefaultNormalizeScore`` onto 0..100."""
        return default_normalize_score(_MAX_NODE_SCORE, False, scores)


def new(args: object | None, handle: Handle, features: Features) -> DynamicResources:
    """The registry factory; DynamicResources' args (timeouts) do not change decisions."""
    return DynamicResources(handle.objects, handle)
