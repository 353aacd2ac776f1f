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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

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
from topospread.framework.status import Code, Status, as_status
from topospread.model.nodeaffinity import NodeSelectorMatcher, NodeSelectorParseError, node_selector
from topospread.model.objects import Pod
from topospread.model.resource import PodResourceClaim, ResourceClaim
from topospread.plugins import names
from topospread.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    allocated_devices,
)
from topospread.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from topospread.plugins.dynamicresources.cel import Selector

__all__ = ["NAME", "DynamicResources", "new", "resolve_claims"]

NAME: Final = names.DYNAMIC_RESOURCES
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


def _unresolvable(reason: str) -> Status:
    # statusUnschedulable: every rejection of this plugin is UnschedulableAndUnresolvable.
    return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


class DynamicResources:
    """DynamicResources for claims with structured parameters."""

    def __init__(self, objects: ClusterObjects) -> None:
        self._objects = objects
        self._cel_cache: dict[str, Selector] = {}

    @property
    def name(self) -> str:
        """``DynamicResources``."""
        return NAME

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

    def score_extensions(self) -> DynamicResources:
        """Itself: NormalizeScore."""
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """``helper.DefaultNormalizeScore`` onto 0..100."""
        return default_normalize_score(_MAX_NODE_SCORE, False, scores)


def new(args: object | None, handle: Handle, features: Features) -> DynamicResources:
    """The registry factory; DynamicResources' args (timeouts) do not change decisions."""
    return DynamicResources(handle.objects)
