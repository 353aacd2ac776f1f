"""What DynamicResources' Reserve allocates: the claims' allocation results on the chosen node.

Filter only needs to know that the pod's unallocated claims fit on a node; a scheduler that
binds the pod must also write the allocation into each claim's status. This module computes
it for the node the cycle chose, with the same allocator and inputs as Filter (so the same
devices), and shapes it as upstream's incubating allocator does (``allocator_incubating.go``
v0.37.1):

* one result per device, in allocation order, naming the request (``req/sub`` for a
  ``firstAvailable`` subrequest), driver, pool and device; admin access, tolerations,
  shared devices and binding conditions are refused before a pod gets here
  (:mod:`.support`), so those fields stay unset;
* the node selector (``createNodeSelector``): a device from a slice with ``nodeName``
  pins the claim to the node (``matchFields metadata.name In [node]``); the one-term node
  selectors of the other devices' slices are merged into one term (requirements equal in
  key, operator and value set kept once); ``allNodes`` devices add nothing; nothing left:
  no selector. A slice selector of several terms is an error, as upstream's.

Device configuration (``devices.config``) comes from the DeviceClass and claim objects
as the API serves them and is assembled by the live scheduler's PreBind.
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.binding import ClaimAllocation
from topospread.framework.node_info import ClusterObjects
from topospread.model.objects import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
)
from topospread.model.resource import (
    AllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaim,
)
from topospread.plugins.dynamicresources.allocator import (
    AllocatedDevice,
    AllocationError,
    Allocator,
    allocated_devices,
)
from topospread.plugins.dynamicresources.podclaims import resolve_claims

__all__ = ["ClaimAllocation", "NodeSelectorError", "plan_allocations"]

_NODE_NAME_FIELD = "metadata.name"


class NodeSelectorError(Exception):
    """A slice's node selector the allocation result cannot carry (upstream's error)."""


def plan_allocations(objects: ClusterObjects, pod: Pod, node: Node) -> list[ClaimAllocation]:
    """The pod's claims and the allocations Reserve makes for it on ``node``.

    Raises :class:`AllocationError` or :class:`NodeSelectorError` when the claims no
    longer fit (the cycle decided on the same objects, so only a changed cache does this).
    """
    claims, error = resolve_claims(pod, objects)
    if error is not None:
        raise AllocationError(error)
    pending = [c for c in claims if c.allocation is None]
    picked: list[list[AllocatedDevice]] = []
    if pending:
        allocator = Allocator(
            allocated_devices(objects.resource_claims),
            objects.device_class,
            objects.resource_slices,
            {},
        )
        found = allocator.allocate_devices(node, pending)
        if found is None:
            raise AllocationError("cannot allocate all claims")
        picked = found
    by_claim = iter(picked)
    planned: list[ClaimAllocation] = []
    for claim in claims:
        if claim.allocation is not None:
            planned.append(ClaimAllocation(claim, None))
            continue
        devices = next(by_claim)
        results = tuple(DeviceRequestAllocationResult(d.request, *d.device_id) for d in devices)
        allocation = AllocationResult(results, _node_selector(node, devices))
        planned.append(ClaimAllocation(claim, allocation, _class_requests(claim, devices)))
    return planned


def _class_requests(
    claim: ResourceClaim, devices: Sequence[AllocatedDevice]
) -> tuple[tuple[str, str], ...]:
    # The request (or selected subrequest) of each of the claim's requests, with its class.
    chosen = {d.request for d in devices}
    pairs: list[tuple[str, str]] = []
    for request in claim.spec.requests:
        if request.exactly is not None:
            pairs.append((request.exactly.device_class_name, request.name))
            continue
        for sub in request.first_available:
            qualified = f"{request.name}/{sub.name}"
            if qualified in chosen:
                pairs.append((sub.request.device_class_name, qualified))
                break
    return tuple(pairs)


def _node_selector(node: Node, devices: Sequence[AllocatedDevice]) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for device in devices:
        source = device.slice
        if source.node_name:
            return NodeSelector(
                (
                    NodeSelectorTerm(
                        match_fields=(
                            NodeSelectorRequirement(_NODE_NAME_FIELD, "In", (node.name,)),
                        )
                    ),
                )
            )
        selector = source.node_selector
        if selector is None:
            continue  # allNodes
        if len(selector.node_selector_terms) != 1:
            raise NodeSelectorError(
                "unsupported ResourceSlice.NodeSelector with "
                f"{len(selector.node_selector_terms)} terms"
            )
        term = selector.node_selector_terms[0]
        _merge(fields, term.match_fields)
        _merge(expressions, term.match_expressions)
    if not fields and not expressions:
        return None
    return NodeSelector(
        (NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields)),)
    )


def _merge(into: list[NodeSelectorRequirement], add: Sequence[NodeSelectorRequirement]) -> None:
    # addNewNodeSelectorRequirements: a requirement equal in key, operator and value set to
    # one already there is not added again.
    for requirement in add:
        values = set(requirement.values)
        if any(
            r.key == requirement.key
            and r.operator == requirement.operator
            and set(r.values) == values
            for r in into
        ):
            continue
        into.append(requirement)
