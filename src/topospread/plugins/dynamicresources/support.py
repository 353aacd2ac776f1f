"""What of dynamic resource allocation topospread decides, and what it refuses.

Decided exactly as upstream: claims named directly or generated from templates (through
``status.resourceClaimStatuses``), their lookup errors, allocated claims (their node
selector) and unallocated ones (the structured allocator: ExactCount and All, ``count``,
``firstAvailable``, class and request CEL selectors, ``matchAttribute`` and
``distinctAttribute`` constraints, devices held by other claims).

Refused (:func:`unsupported_reasons` names the first thing found for each claim): a pod
requesting an extended resource that a DeviceClass provides (DRAExtendedResource), admin
access, capacity requests, CEL that cel-python cannot evaluate as cel-go does, allocated
devices shared through consumable capacity or waiting on binding conditions, and — when
the pod has a claim to allocate — ResourceSlices with device taints, counters, consumable
capacity policies, multiple allocations, binding conditions or per-device node selection,
or any DeviceTaintRule.
"""

from __future__ import annotations

from collections.abc import Iterator

from topospread.framework.node_info import ClusterObjects
from topospread.model.nodeaffinity import NodeSelectorParseError, node_selector
from topospread.model.objects import Pod
from topospread.model.resource import ExactDeviceRequest, ResourceClaim

__all__ = ["IMPLICIT_EXTENDED_RESOURCE_PREFIX", "pod_claim_names", "unsupported_reasons"]

IMPLICIT_EXTENDED_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"
"""Every DeviceClass also provides the extended resource ``<prefix><class name>``."""


def pod_claim_names(pod: Pod) -> Iterator[str]:
    """The names of the claims the pod's entries resolve to (``resourceclaim.Name``),
    skipping entries that resolve to none or to an error."""
    statuses = {s.name: s.resource_claim_name for s in pod.resource_claim_statuses}
    for ref in pod.resource_claim_refs:
        if ref.resource_claim_name is not None:
            yield ref.resource_claim_name
        elif ref.resource_claim_template_name is not None:
            name = statuses.get(ref.name)
            if name is not None:
                yield name


def _extended_resources(pod: Pod, objects: ClusterObjects) -> list[str]:
    requested: set[str] = set()
    for container in (*pod.containers, *pod.init_containers):
        for resources in (container.requests, container.limits):
            requested.update(name for name, q in resources.items() if q.amount != 0)
    for resources in (pod.overhead, pod.pod_resources_requests or {}):
        requested.update(name for name, q in resources.items() if q.amount != 0)
    return [
        f"the pod requests {resource}, an extended resource provided by DeviceClass "
        f"{device_class.metadata.name} (DRAExtendedResource)"
        for device_class in objects.device_classes
        for resource in (
            device_class.extended_resource_name,
            IMPLICIT_EXTENDED_RESOURCE_PREFIX + device_class.metadata.name,
        )
        if resource is not None and resource in requested
    ]


def _cel_reason(expression: str | None) -> str | None:
    if expression is None:
        return None
    # cel-python is imported only for pods with claims (it is slow to load).
    from topospread.plugins.dynamicresources.cel import unsupported_reason

    return unsupported_reason(expression)


def _request_reason(claim: ResourceClaim, name: str, exact: ExactDeviceRequest) -> str | None:
    where = f"ResourceClaim {claim.metadata.namespace}/{claim.metadata.name} request {name}"
    if exact.admin_access:
        return f"{where} asks for admin access"
    if exact.has_capacity_requests:
        return f"{where} requests device capacity (consumable capacity)"
    for expression in exact.selectors:
        why = _cel_reason(expression)
        if why is not None:
            return f"{where}: {why}"
    return None


def _claim_reason(claim: ResourceClaim, objects: ClusterObjects) -> str | None:
    where = f"ResourceClaim {claim.metadata.namespace}/{claim.metadata.name}"
    if claim.allocation is not None:
        for result in claim.allocation.results:
            if result.share_id is not None:
                return f"{where} is allocated a shared device (consumable capacity)"
            if result.has_binding_conditions:
                return f"{where} is allocated a device with binding conditions"
        return None
    for request in claim.spec.requests:
        subs = [(f"{request.name}/{s.name}", s.request) for s in request.first_available]
        if request.exactly is not None:
            subs.insert(0, (request.name, request.exactly))
        for name, exact in subs:
            why = _request_reason(claim, name, exact)
            if why is not None:
                return why
            device_class = objects.device_class(exact.device_class_name)
            if device_class is None:
                continue
            for expression in device_class.selectors:
                reason = _cel_reason(expression)
                if reason is not None:
                    return f"DeviceClass {device_class.metadata.name}: {reason}"
    return None


def _slices_reason(objects: ClusterObjects) -> str | None:
    if objects.device_taint_rules:
        return (
            f"DeviceTaintRule {objects.device_taint_rules[0].metadata.name} may taint devices "
            "(device taints)"
        )
    for s in objects.resource_slices:
        if s.unsupported:
            return f"ResourceSlice {s.metadata.name} uses {', '.join(s.unsupported)}"
        for device in s.devices:
            if device.unsupported:
                return f"device {device.name} of ResourceSlice {s.metadata.name} uses " + ", ".join(
                    device.unsupported
                )
        if s.node_selector is not None:
            try:
                node_selector(s.node_selector)
            except NodeSelectorParseError:
                return f"ResourceSlice {s.metadata.name} has a node selector that does not parse"
    return None


def unsupported_reasons(pod: Pod, objects: ClusterObjects) -> list[str]:
    """Why topospread cannot decide DynamicResources for this pod as upstream does (empty
    when it can)."""
    reasons = _extended_resources(pod, objects)
    to_allocate = False
    for name in pod_claim_names(pod):
        claim = objects.resource_claim(pod.namespace, name)
        if claim is None:
            continue
        why = _claim_reason(claim, objects)
        if why is not None:
            reasons.append(why)
        to_allocate = to_allocate or claim.allocation is None
    if to_allocate:
        why = _slices_reason(objects)
        if why is not None:
            reasons.append(why)
    return reasons
