"""Decoding the dynamic resource allocation kinds (``resource.k8s.io/v1``): ResourceClaim,
ResourceClaimTemplate, DeviceClass and ResourceSlice, and a pod's ``spec.resourceClaims``
and ``status.resourceClaimStatuses``, with the same reader, errors and paths as every
other kind.

The API server's defaulting (``SetDefaults_ExactDeviceRequest``,
``SetDefaults_DeviceSubRequest``, v1.37.1) is applied: ``allocationMode`` ExactCount and,
for ExactCount, ``count`` 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from topospread.errors import DecodeError, FieldError
from topospread.model.decode_reader import (
    _join,
    _meta,
    _node_selector_term,
    _number_text,
    _Reader,
)
from topospread.model.objects import KubeObject, NodeSelector
from topospread.model.quantity import Quantity, QuantityError, parse_quantity
from topospread.model.resource import (
    ALLOCATION_MODE_EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaintRule,
    ExactDeviceRequest,
    PodResourceClaim,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourceSlice,
)

__all__ = ["decode_pod_resource_claims", "decode_resource_object"]

# Device fields whose features topospread does not decide; a device that sets one makes
# every pod that could be allocated from its slice's pool refused.
_DEVICE_UNSUPPORTED: Final = (
    "taints",
    "consumesCounters",
    "allowMultipleAllocations",
    "bindingConditions",
    "bindingFailureConditions",
    "bindsToNode",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "compatibilityGroups",
    "nodeAllocatableResources",
)
_SLICE_UNSUPPORTED: Final = ("sharedCounters", "perDeviceNodeSelection")


def _selectors(r: _Reader, data: Mapping[str, Any], p: str) -> tuple[str | None, ...]:
    result: list[str | None] = []
    for item, where in r.items(data, "selectors", p):
        if not isinstance(item, dict):
            r._type_error(where, item, "object")
            continue
        cel = r.obj(item, "cel", where)
        result.append(None if cel is None else r.string(cel, "expression", _join(where, "cel")))
    return tuple(result)


def _exact(r: _Reader, data: Mapping[str, Any], p: str) -> ExactDeviceRequest:
    mode = r.string(data, "allocationMode", p) or ALLOCATION_MODE_EXACT_COUNT
    count = r.integer(data, "count", p, bits=64) or 0
    if mode == ALLOCATION_MODE_EXACT_COUNT and count == 0:
        count = 1
    capacity = r.obj(data, "capacity", p)
    return ExactDeviceRequest(
        device_class_name=r.string(data, "deviceClassName", p),
        selectors=_selectors(r, data, p),
        allocation_mode=mode,
        count=count,
        admin_access=r.boolean(data, "adminAccess", p),
        has_tolerations=bool(data.get("tolerations")),
        has_capacity_requests=bool(capacity and capacity.get("requests")),
    )


def _request(r: _Reader, data: Mapping[str, Any], p: str) -> DeviceRequest:
    exactly = r.obj(data, "exactly", p)
    return DeviceRequest(
        name=r.string(data, "name", p),
        exactly=None if exactly is None else _exact(r, exactly, _join(p, "exactly")),
        first_available=r.objects(
            data,
            "firstAvailable",
            p,
            lambda s, q: DeviceSubRequest(r.string(s, "name", q), _exact(r, s, q)),
        ),
    )


def _device_claim(r: _Reader, spec: Mapping[str, Any], p: str) -> DeviceClaim:
    devices = r.obj(spec, "devices", p) or {}
    where = _join(p, "devices")
    return DeviceClaim(
        requests=r.objects(devices, "requests", where, lambda q, s: _request(r, q, s)),
        constraints=r.objects(
            devices,
            "constraints",
            where,
            lambda c, s: DeviceConstraint(
                requests=r.strings(c, "requests", s),
                match_attribute=r.opt_string(c, "matchAttribute", s),
                distinct_attribute=r.opt_string(c, "distinctAttribute", s),
            ),
        ),
    )


def _node_selector(r: _Reader, data: Mapping[str, Any], key: str, p: str) -> NodeSelector | None:
    raw = r.obj(data, key, p)
    if raw is None:
        return None
    where = _join(p, key)
    return NodeSelector(
        r.objects(raw, "nodeSelectorTerms", where, lambda t, q: _node_selector_term(r, t, q))
    )


def _allocation(r: _Reader, status: Mapping[str, Any]) -> AllocationResult | None:
    raw = r.obj(status, "allocation", "status")
    if raw is None:
        return None
    where = "status.allocation"
    devices = r.obj(raw, "devices", where) or {}
    return AllocationResult(
        results=r.objects(
            devices,
            "results",
            _join(where, "devices"),
            lambda d, q: DeviceRequestAllocationResult(
                request=r.string(d, "request", q),
                driver=r.string(d, "driver", q),
                pool=r.string(d, "pool", q),
                device=r.string(d, "device", q),
                admin_access=r.boolean(d, "adminAccess", q),
                share_id=r.opt_string(d, "shareID", q),
                has_binding_conditions=bool(d.get("bindingConditions")),
            ),
        ),
        node_selector=_node_selector(r, raw, "nodeSelector", where),
    )


def _resource_claim(r: _Reader, doc: Mapping[str, Any]) -> ResourceClaim:
    spec = r.obj(doc, "spec", "") or {}
    status = r.obj(doc, "status", "") or {}
    return ResourceClaim(
        metadata=_meta(r, doc, namespaced=True),
        spec=_device_claim(r, spec, "spec"),
        allocation=_allocation(r, status),
        reserved_for=r.objects(
            status,
            "reservedFor",
            "status",
            lambda c, q: ResourceClaimConsumerReference(
                api_group=r.string(c, "apiGroup", q),
                resource=r.string(c, "resource", q),
                name=r.string(c, "name", q),
                uid=r.string(c, "uid", q),
            ),
        ),
    )


def _template(r: _Reader, doc: Mapping[str, Any]) -> ResourceClaimTemplate:
    spec = r.obj(doc, "spec", "") or {}
    claim_spec = r.obj(spec, "spec", "spec") or {}
    return ResourceClaimTemplate(
        metadata=_meta(r, doc, namespaced=True),
        spec=_device_claim(r, claim_spec, "spec.spec"),
    )


def _device_class(r: _Reader, doc: Mapping[str, Any]) -> DeviceClass:
    spec = r.obj(doc, "spec", "") or {}
    return DeviceClass(
        metadata=_meta(r, doc, namespaced=False),
        selectors=_selectors(r, spec, "spec"),
        extended_resource_name=r.opt_string(spec, "extendedResourceName", "spec"),
    )


def _attribute(r: _Reader, data: Mapping[str, Any], p: str) -> DeviceAttribute:
    return DeviceAttribute(
        string_value=r.opt_string(data, "string", p),
        int_value=r.integer(data, "int", p, bits=64),
        bool_value=r.boolean(data, "bool", p),
        version_value=r.opt_string(data, "version", p),
    )


def _quantity(r: _Reader, raw: object, where: str) -> Quantity | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        r._type_error(where, raw, "quantity")
        return None
    text = raw.strip() if isinstance(raw, str) else _number_text(raw)
    try:
        # Read as a count (not cpu): Value() is what the allocator and CEL compare.
        return parse_quantity(text, "devices")
    except QuantityError as exc:
        r.errors.append(FieldError.invalid(where, text, str(exc)))
        return None


def _device(r: _Reader, data: Mapping[str, Any], p: str) -> Device:
    attributes: dict[str, DeviceAttribute] = {}
    raw_attributes = r.obj(data, "attributes", p) or {}
    for name, value in raw_attributes.items():
        where = f"{_join(p, 'attributes')}[{name}]"
        if not isinstance(value, dict):
            r._type_error(where, value, "object")
            continue
        attributes[str(name)] = _attribute(r, value, where)
    capacity: dict[str, Quantity] = {}
    unsupported = [key for key in _DEVICE_UNSUPPORTED if data.get(key) not in (None, False, [])]
    for name, value in (r.obj(data, "capacity", p) or {}).items():
        where = f"{_join(p, 'capacity')}[{name}]"
        if not isinstance(value, dict):
            r._type_error(where, value, "object")
            continue
        if value.get("requestPolicy") is not None and "capacity.requestPolicy" not in unsupported:
            unsupported.append("capacity.requestPolicy")
        quantity = _quantity(r, value.get("value"), _join(where, "value"))
        if quantity is not None:
            capacity[str(name)] = quantity
    return Device(
        name=r.string(data, "name", p),
        attributes=attributes,
        capacity=capacity,
        unsupported=tuple(unsupported),
    )


def _resource_slice(r: _Reader, doc: Mapping[str, Any]) -> ResourceSlice:
    spec = r.obj(doc, "spec", "") or {}
    pool = r.obj(spec, "pool", "spec") or {}
    return ResourceSlice(
        metadata=_meta(r, doc, namespaced=False),
        driver=r.string(spec, "driver", "spec"),
        pool_name=r.string(pool, "name", "spec.pool"),
        pool_generation=r.integer(pool, "generation", "spec.pool", bits=64) or 0,
        resource_slice_count=r.integer(pool, "resourceSliceCount", "spec.pool", bits=64) or 0,
        node_name=r.opt_string(spec, "nodeName", "spec"),
        node_selector=_node_selector(r, spec, "nodeSelector", "spec"),
        all_nodes=bool(r.boolean(spec, "allNodes", "spec")),
        devices=r.objects(spec, "devices", "spec", lambda d, q: _device(r, d, q)),
        unsupported=tuple(k for k in _SLICE_UNSUPPORTED if spec.get(k) not in (None, False, [])),
    )


def decode_resource_object(kind: str, doc: Mapping[str, Any], where: str) -> KubeObject:
    """Decode one object of a :data:`~topospread.model.resource.RESOURCE_KINDS` kind;
    DecodeError naming ``where`` and every bad field."""
    r = _Reader()
    obj: KubeObject
    if kind == "ResourceClaim":
        obj = _resource_claim(r, doc)
    elif kind == "ResourceClaimTemplate":
        obj = _template(r, doc)
    elif kind == "DeviceClass":
        obj = _device_class(r, doc)
    elif kind == "DeviceTaintRule":
        obj = DeviceTaintRule(_meta(r, doc, namespaced=False))
    else:
        obj = _resource_slice(r, doc)
    if r.errors:
        raise DecodeError(where, r.errors)
    return obj


def decode_pod_resource_claims(
    r: _Reader, spec: Mapping[str, Any], status: Mapping[str, Any]
) -> dict[str, Any]:
    """The Pod fields for ``spec.resourceClaims`` and ``status.resourceClaimStatuses``, as
    keyword arguments (errors go to ``r``)."""
    refs = r.objects(
        spec,
        "resourceClaims",
        "spec",
        lambda c, p: PodResourceClaim(
            name=r.string(c, "name", p),
            resource_claim_name=r.opt_string(c, "resourceClaimName", p),
            resource_claim_template_name=r.opt_string(c, "resourceClaimTemplateName", p),
        ),
    )
    statuses = r.objects(
        status,
        "resourceClaimStatuses",
        "status",
        lambda c, p: PodResourceClaimStatus(
            name=r.string(c, "name", p),
            resource_claim_name=r.opt_string(c, "resourceClaimName", p),
        ),
    )
    return {"resource_claim_refs": refs, "resource_claim_statuses": statuses}
