"""Dynamic resource allocation objects (``resource.k8s.io/v1``) and a pod's claim references.

ResourceClaim, ResourceClaimTemplate, DeviceClass and ResourceSlice, with the fields the
DynamicResources plugin and its structured allocator read. Fields that belong to features
topospread does not decide (device taints, partitionable devices, consumable capacity,
binding conditions, admin access, per-device node selection) are kept as flags so that a
pod whose answer depends on them is refused instead of misjudged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from topospread.model.kinds import KINDS, Decoder
from topospread.model.objects import NodeSelector, ObjectMeta
from topospread.model.quantity import Quantity

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "API_VERSION",
    "RESOURCE_KINDS",
    "AllocationResult",
    "Device",
    "DeviceAttribute",
    "DeviceClaim",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "DeviceTaintRule",
    "ExactDeviceRequest",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimTemplate",
    "ResourceSlice",
]

API_VERSION: Final = "resource.k8s.io/v1"
RESOURCE_KINDS: Final[Mapping[tuple[str, str], str]] = {
    (k.api_version, k.kind): k.kind for k in KINDS if k.decoder is Decoder.RESOURCE
}
"""The kinds read, each in its one version (``resource.k8s.io/v1`` only): the rows of
:data:`topospread.model.kinds.KINDS` that :mod:`~topospread.model.decode_resource` decodes."""

ALLOCATION_MODE_EXACT_COUNT: Final = "ExactCount"
ALLOCATION_MODE_ALL: Final = "All"


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """A pod's ``spec.resourceClaims`` entry."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True)
class PodResourceClaimStatus:
    """A ``status.resourceClaimStatuses`` entry: the claim generated for a template entry
    (None when none was needed)."""

    name: str
    resource_claim_name: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """One typed attribute value: exactly one of the four is set (``version`` is semver)."""

    string_value: str | None = None
    int_value: int | None = None
    bool_value: bool | None = None
    version_value: str | None = None


@dataclass(frozen=True, slots=True)
class ExactDeviceRequest:
    """``exactly`` of a request (or a ``firstAvailable`` subrequest's equivalent fields)."""

    device_class_name: str = ""
    selectors: tuple[str | None, ...] = ()
    """CEL expressions; None for a selector without ``cel`` (an unknown selector type)."""
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    """Defaulted to ExactCount by the API server."""
    count: int = 1
    """Defaulted to 1 for ExactCount."""
    admin_access: bool | None = None
    has_tolerations: bool = False
    has_capacity_requests: bool = False


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """A ``firstAvailable`` entry."""

    name: str
    request: ExactDeviceRequest = ExactDeviceRequest()


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A ``spec.devices.requests`` entry: ``exactly`` or ``firstAvailable``."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """A ``spec.devices.constraints`` entry."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    """``spec`` of a ResourceClaim or of a ResourceClaimTemplate's claim."""

    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    """One allocated device of ``status.allocation.devices.results``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    share_id: str | None = None
    has_binding_conditions: bool = False


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """``status.allocation``."""

    results: tuple[DeviceRequestAllocationResult, ...] = ()
    node_selector: NodeSelector | None = None


@dataclass(frozen=True, slots=True)
class ResourceClaimConsumerReference:
    """A ``status.reservedFor`` entry."""

    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    """A ResourceClaim."""

    metadata: ObjectMeta
    spec: DeviceClaim = DeviceClaim()
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    """A ResourceClaimTemplate (the scheduler never reads it: the claim generated from it
    is named in the pod's ``status.resourceClaimStatuses``)."""

    metadata: ObjectMeta
    spec: DeviceClaim = DeviceClaim()


@dataclass(frozen=True, slots=True)
class DeviceClass:
    """A DeviceClass."""

    metadata: ObjectMeta
    selectors: tuple[str | None, ...] = ()
    extended_resource_name: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule: it taints devices of ResourceSlices, which topospread does not
    decide, so its presence alone makes pods with claims to allocate refused."""

    metadata: ObjectMeta


@dataclass(frozen=True, slots=True)
class Device:
    """A device of a ResourceSlice."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    unsupported: tuple[str, ...] = ()
    """Fields set that topospread does not decide (``taints``, ``consumesCounters``...)."""


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    """A ResourceSlice."""

    metadata: ObjectMeta
    driver: str = ""
    pool_name: str = ""
    pool_generation: int = 0
    resource_slice_count: int = 0
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    devices: tuple[Device, ...] = ()
    unsupported: tuple[str, ...] = ()
    """Slice fields set that topospread does not decide (``sharedCounters``,
    ``perDeviceNodeSelection``)."""
