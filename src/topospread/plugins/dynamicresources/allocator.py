"""The structured allocator, for the claims topospread decides.

Upstream ``k8s.io/dynamic-resource-allocation/structured`` (v0.37.1) picks its
implementation by the enabled features; with kube-scheduler v1.37.1's defaults
(PrioritizedList, PartitionableDevices, DeviceTaints, DeviceBindingAndStatus,
ConsumableCapacity on) that is the "incubating" one, whose search this module follows:

* Pools: the node's slices (``nodeName`` equal to the node's, ``allNodes``, or a matching
  ``nodeSelector``), grouped by (driver, pool) keeping only the newest generation. A pool
  with fewer slices of that generation than ``resourceSliceCount`` is incomplete (unless
  the slices the node does not see make up the count, or a newer generation exists
  elsewhere, which drops the pool), one with a device name twice is invalid. Pools are
  visited by driver then pool name, slices by name, devices in slice order.
* Requests: claims in order, requests in order, devices of a request first fit with
  backtracking; the devices of one request are tried in increasing position only, so each
  combination is tried once. ``All`` takes every selectable device of the complete pools
  (an incomplete or invalid pool is an error then) and needs at least one. A
  ``firstAvailable`` request tries its subrequests in order and keeps the first that fits.
* A device is usable when no other claim holds it (claims allocated in the cluster and
  devices picked earlier in this attempt), the class's selectors and the request's
  selectors match, and the claim's ``matchAttribute`` / ``distinctAttribute`` constraints
  still hold. At most 32 devices per claim.
* When nothing fits and an invalid pool was seen, the failure is the node-local error
  "invalid resource pools were encountered"; otherwise no allocation.

What this module does not decide (device taints, shared counters, consumable capacity,
per-device node selection, binding conditions, admin access) is refused before a pod gets
here (:mod:`.support`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from topospread.errors import UnsupportedError
from topospread.model.nodeaffinity import node_selector
from topospread.model.objects import Node, NodeSelector
from topospread.model.resource import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    Device,
    DeviceAttribute,
    DeviceClass,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceSlice,
)

if TYPE_CHECKING:
    from topospread.plugins.dynamicresources.cel import Selector

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocationError",
    "Allocator",
    "DeviceID",
    "allocated_devices",
    "node_matches",
]

ALLOCATION_RESULTS_MAX_SIZE: Final = 32
"""``resourceapi.AllocationResultsMaxSize``."""

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""


class AllocationError(Exception):
    """A failed ``Allocate``: ``on_node`` errors (``ErrFailedAllocationOnNode``) only mean
    this node; the others abort scheduling (an Error status)."""

    def __init__(self, message: str, *, on_node: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.on_node = on_node


class _MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``: backtrack further."""


def _device_id_text(device_id: DeviceID) -> str:
    return "/".join(device_id)


def _claim_key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def node_matches(
    node: Node, node_name: str, all_nodes: bool, selector: NodeSelector | None
) -> bool:
    """``NodeMatches``: a node name, all nodes, or a node selector; nothing matches none."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector(selector).match(node)
    return False


@dataclass(slots=True)
class _Pool:
    driver: str
    pool: str
    incomplete: bool = False
    invalid: bool = False
    slices: list[ResourceSlice] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.driver}/{self.pool}"


def _gather_pools(
    node: Node, for_node: Sequence[ResourceSlice], all_slices: Sequence[ResourceSlice]
) -> list[_Pool]:
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in for_node:
        if not (s.node_name or s.all_nodes or s.node_selector is not None):
            continue
        if not node_matches(node, s.node_name or "", s.all_nodes, s.node_selector):
            continue
        key = (s.driver, s.pool_name)
        current = pools.get(key)
        if current is None or s.pool_generation > current[0].pool_generation:
            pools[key] = [s]
        elif s.pool_generation == current[0].pool_generation:
            current.append(s)
    result: list[_Pool] = []
    for (driver, pool_name), slices in pools.items():
        generation = slices[0].pool_generation
        count = slices[0].resource_slice_count
        if len(slices) != count:
            same = [s for s in all_slices if s.driver == driver and s.pool_name == pool_name]
            if any(s.pool_generation > generation for s in same):
                continue  # obsolete: a newer generation is being published
            if sum(1 for s in same if s.pool_generation == generation) != count:
                result.append(_Pool(driver, pool_name, incomplete=True))
                continue
        ordered = sorted(slices, key=lambda s: s.metadata.name)
        names: set[str] = set()
        invalid = False
        for s in ordered:
            for d in s.devices:
                if d.name in names:
                    invalid = True
                names.add(d.name)
        result.append(_Pool(driver, pool_name, invalid=invalid, slices=[] if invalid else ordered))
    result.sort(key=lambda p: (p.driver, p.pool))
    return result


def _lookup_attribute(device: Device, device_id: DeviceID, name: str) -> DeviceAttribute | None:
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id[0]:
        return None
    return device.attributes.get(ident)


def _same_value(a: DeviceAttribute, b: DeviceAttribute) -> bool | None:
    """Whether ``a``'s value equals ``b``'s of the same type (None: ``a`` has no value)."""
    if a.string_value is not None:
        return b.string_value is not None and a.string_value == b.string_value
    if a.int_value is not None:
        return b.int_value is not None and a.int_value == b.int_value
    if a.bool_value is not None:
        return b.bool_value is not None and a.bool_value == b.bool_value
    if a.version_value is not None:
        return b.version_value is not None and a.version_value == b.version_value
    return None


class _Constraint:
    """``matchAttribute`` (``distinct=False``) or ``distinctAttribute``."""

    def __init__(self, requests: Sequence[str], attribute: str, *, distinct: bool) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.distinct = distinct
        self.values: list[DeviceAttribute] = []

    def _applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        if not sub_request:
            return request in self.requests
        return request in self.requests or f"{request}/{sub_request}" in self.requests

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> bool:
        if not self._applies(request, sub_request):
            return True
        value = _lookup_attribute(device, device_id, self.attribute)
        if value is None:
            return False
        if self.distinct:
            for seen in self.values:
                same = _same_value(value, seen)
                if same is None or same:
                    return False
        elif self.values and not _same_value(value, self.values[0]):
            return False
        self.values.append(value)
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self._applies(request, sub_request):
            self.values.pop()


@dataclass(slots=True)
class _Request:
    name: str
    exact: ExactDeviceRequest
    parent: str | None = None
    device_class: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] = field(default_factory=list)
    selected_sub: int = 0

    @property
    def qualified_name(self) -> str:
        return self.name if self.parent is None else f"{self.parent}/{self.name}"


_Key = tuple[int, int, int]
"""(claim index, request index, subrequest index)."""


class Allocator:
    """The allocator of one scheduling cycle (``structured.NewAllocator``)."""

    def __init__(
        self,
        allocated: frozenset[DeviceID],
        device_class: Callable[[str], DeviceClass | None],
        slices: Sequence[ResourceSlice],
        cel_cache: dict[str, Selector],
    ) -> None:
        self.allocated = allocated
        self.device_class = device_class
        self.all_slices = tuple(slices)
        self.on_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        for s in slices:
            if s.node_name:
                self.on_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
        self.cel_cache = cel_cache

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> list[list[str]] | None:
        """For each claim, the (qualified) request names of its devices; None when the
        claims do not fit on the node. Raises :class:`AllocationError`."""
        attempt = self._attempt(node, claims)
        return attempt.results if attempt.run() else None

    def allocate_devices(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[list[AllocatedDevice]] | None:
        """For each claim, its devices in allocation order, each with the request that got
        it and the slice it came from; None when the claims do not fit on the node."""
        attempt = self._attempt(node, claims)
        if not attempt.run():
            return None
        return [
            [
                AllocatedDevice(request, device_id, in_slice)
                for request, (device_id, in_slice) in zip(names, devices, strict=True)
            ]
            for names, devices in zip(attempt.results, attempt.devices, strict=True)
        ]

    def _attempt(self, node: Node, claims: Sequence[ResourceClaim]) -> _Attempt:
        pools = _gather_pools(
            node, [*self.on_node.get(node.name, ()), *self.shared], self.all_slices
        )
        return _Attempt(self, node, claims, pools)


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """One device of an allocation: the (qualified) request it serves and where it is."""

    request: str
    device_id: DeviceID
    slice: ResourceSlice


class _Attempt:
    """One ``Allocate`` call."""

    def __init__(
        self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim], pools: list[_Pool]
    ) -> None:
        self.owner = owner
        self.node = node
        self.claims = claims
        self.pools = pools
        self.requests: dict[_Key, _Request] = {}
        self.constraints: list[list[_Constraint]] = []
        self.matches: dict[tuple[DeviceID, _Key], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[str]] = [[] for _ in claims]
        self.devices: list[list[tuple[DeviceID, ResourceSlice]]] = [[] for _ in claims]

    def run(self) -> bool:
        for ci, claim in enumerate(self.claims):
            min_per_claim = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available:
                    min_per_request = None
                    for si, sub in enumerate(request.first_available):
                        data = self._validate(
                            _Request(sub.name, sub.request, parent=request.name), (ci, ri, si)
                        )
                        self.requests[(ci, ri, si)] = data
                        n = data.num_devices
                        min_per_request = n if min_per_request is None else min(min_per_request, n)
                    needed = min_per_request or 0
                else:
                    exact = request.exactly or ExactDeviceRequest()
                    data = self._validate(_Request(request.name, exact), (ci, ri, 0))
                    self.requests[(ci, ri, 0)] = data
                    needed = data.num_devices
                if needed > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, request {request.name}: adding {needed} "
                        f"devices exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, "
                        f"with {min_per_claim} already accounted for"
                    )
                min_per_claim += needed
            constraints: list[_Constraint] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is not None:
                    constraints.append(_Constraint(c.requests, c.match_attribute, distinct=False))
                elif c.distinct_attribute is not None:
                    constraints.append(_Constraint(c.requests, c.distinct_attribute, distinct=True))
                else:
                    raise AllocationError(
                        f"claim {_claim_key(claim)}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
            self.constraints.append(constraints)
        try:
            done = self._allocate_one((0, 0, 0, 0), False, (0, 0, 0))
        except _MaxSizeExceeded as exc:
            # Not caught on the first claim's way up: Allocate returns it as an error.
            raise AllocationError("allocation max size exceeded") from exc
        if not done:
            if any(p.invalid for p in self.pools):
                raise AllocationError("invalid resource pools were encountered", on_node=True)
            return False
        return True

    def _validate(self, data: _Request, key: _Key) -> _Request:
        claim = self.claims[key[0]]
        where = f"claim {_claim_key(claim)}, request {data.name}"
        for i, selector in enumerate(data.exact.selectors):
            if selector is None:
                raise AllocationError(
                    f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not data.exact.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.owner.device_class(data.exact.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {data.exact.device_class_name}: "
                f'deviceclass.resource.k8s.io "{data.exact.device_class_name}" not found'
            )
        data.device_class = device_class
        mode = data.exact.allocation_mode
        if mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = data.exact.count
        elif mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.text} is "
                        "currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.text} is "
                        "currently invalid"
                    )
                for s in pool.slices:
                    for device in s.devices:
                        device_id = (s.driver, s.pool_name, device.name)
                        if self._selectable(key, data, device_id, device):
                            data.all_devices.append((device_id, device, s))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return data

    def _selectable(self, key: _Key, data: _Request, device_id: DeviceID, device: Device) -> bool:
        cache_key = (device_id, key)
        known = self.matches.get(cache_key)
        if known is not None:
            return known
        claim = self.claims[key[0]]
        found = True
        if (
            data.device_class is not None
            and not self._selectors_match(
                f"class {data.device_class.metadata.name}",
                data.device_class.selectors,
                device_id,
                device,
            )
        ) or not self._selectors_match(
            f"claim {_claim_key(claim)}", data.exact.selectors, device_id, device
        ):
            found = False
        self.matches[cache_key] = found
        return found

    def _selectors_match(
        self, owner: str, selectors: Sequence[str | None], device_id: DeviceID, device: Device
    ) -> bool:
        # cel-python is imported only when a selector is evaluated (it is slow to load).
        from topospread.plugins.dynamicresources.cel import (
            CelRuntimeError,
            CelUnsupported,
            compile_selector,
        )

        for i, expression in enumerate(selectors):
            if expression is None:
                continue
            selector = compile_selector(expression, self.owner.cel_cache)
            try:
                matched = selector.matches(device_id[0], device.attributes, device.capacity)
            except CelRuntimeError as exc:
                raise AllocationError(
                    f"{owner}: selector #{i} on device {_device_id_text(device_id)}: "
                    f"CEL runtime error: {exc}"
                ) from exc
            except CelUnsupported as exc:
                # Upstream's error text for this cannot be reproduced: refuse the pod.
                raise UnsupportedError(
                    f"{owner}: selector #{i} on device {_device_id_text(device_id)}: {exc}"
                ) from exc
            if not matched:
                return False
        return True

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.owner.allocated or bool(self.allocating.get(device_id))

    def _allocate_one(
        self, r: tuple[int, int, int, int], allocate_sub: bool, start: tuple[int, int, int]
    ) -> bool:
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one((ci + 1, 0, 0, 0), False, (0, 0, 0))
            except _MaxSizeExceeded:
                # Another allocation of an earlier claim may leave room for subrequests
                # that need fewer devices: not fatal here.
                return False
        data = self.requests[(ci, ri, si)]
        if not allocate_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    success = self._allocate_one((ci, ri, sub, di), True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    self.requests[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        all_mode = data.exact.allocation_mode == ALLOCATION_MODE_ALL
        if all_mode and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one((ci, ri + 1, 0, 0), False, (0, 0, 0))
        if data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded
        if all_mode:
            device_id, device, in_slice = data.all_devices[di]
            undo = self._allocate_device(r, data, device_id, device, in_slice, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one((ci, ri, si, di + 1), allocate_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            slice_start = start[1] if pi == start[0] else 0
            for sli in range(slice_start, len(pool.slices)):
                s = pool.slices[sli]
                device_start = start[2] if (pi, sli) == start[:2] else 0
                for dvi in range(device_start, len(s.devices)):
                    device = s.devices[dvi]
                    device_id = (pool.driver, pool.pool, device.name)
                    if self._in_use(device_id):
                        continue
                    if not self._selectable((ci, ri, si), data, device_id, device):
                        continue
                    undo = self._allocate_device(r, data, device_id, device, s, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(
                            (ci, ri, si, di + 1), allocate_sub, (pi, sli, dvi + 1)
                        )
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocate_device(
        self,
        r: tuple[int, int, int, int],
        data: _Request,
        device_id: DeviceID,
        device: Device,
        in_slice: ResourceSlice,
        *,
        must: bool,
    ) -> Callable[[], None] | None:
        ci = r[0]
        if self._in_use(device_id):
            return None
        base = data.parent if data.parent is not None else data.name
        sub = data.name if data.parent is not None else ""
        added: list[_Constraint] = []
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, device, device_id):
                for c in added:
                    c.remove(base, sub)
                if must:
                    raise AllocationError(
                        f"claim {_claim_key(self.claims[ci])}, request {data.name}: cannot add "
                        f"device {_device_id_text(device_id)} because a claim constraint would "
                        "not be satisfied"
                    )
                return None
            added.append(constraint)
        self.allocating.setdefault(device_id, set()).add(ci)
        self.results[ci].append(data.qualified_name)
        self.devices[ci].append((device_id, in_slice))

        def undo() -> None:
            self.results[ci].pop()
            self.devices[ci].pop()
            self.allocating[device_id].discard(ci)
            for c in reversed(added):
                c.remove(base, sub)

        return undo


def allocated_devices(claims: Sequence[ResourceClaim]) -> frozenset[DeviceID]:
    """Devices held by allocated claims (``ListAllAllocatedDevices``): admin-access results
    do not hold their device."""
    held: set[DeviceID] = set()
    for claim in claims:
        if claim.allocation is None:
            continue
        for result in claim.allocation.results:
            if result.admin_access:
                continue
            held.add((result.driver, result.pool, result.device))
    return frozenset(held)
