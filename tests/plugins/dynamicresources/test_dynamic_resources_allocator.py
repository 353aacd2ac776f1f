"""Unit tests of DynamicResources' structured allocator subset and its CEL evaluation."""

from __future__ import annotations

import pytest

from topospread.model.objects import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
)
from topospread.model.quantity import parse_quantity
from topospread.model.resource import (
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceSlice,
)
from topospread.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    allocated_devices,
)
from topospread.plugins.dynamicresources.cel import (
    CelRuntimeError,
    CelUnsupported,
    Selector,
    unsupported_reason,
)

DRIVER = "gpu.example.com"
NODE = Node(ObjectMeta(name="n1", labels={"zone": "a"}))
CLASS = DeviceClass(ObjectMeta(name="gpu"), selectors=(f'device.driver == "{DRIVER}"',))


def dev(name: str, model: str = "a100", index: int = 0) -> Device:
    return Device(
        name,
        attributes={
            "model": DeviceAttribute(string_value=model),
            "index": DeviceAttribute(int_value=index),
        },
        capacity={"memory": parse_quantity("40Gi", "memory")},
    )


def slice_(
    name: str,
    *devices: Device,
    pool: str = "p",
    generation: int = 1,
    count: int = 1,
    node_name: str | None = "n1",
    driver: str = DRIVER,
    node_selector: NodeSelector | None = None,
) -> ResourceSlice:
    return ResourceSlice(
        ObjectMeta(name=name),
        driver=driver,
        pool_name=pool,
        pool_generation=generation,
        resource_slice_count=count,
        node_name=node_name,
        node_selector=node_selector,
        devices=devices,
    )


def req(name: str, *selectors: str, count: int = 1, mode: str = "ExactCount") -> DeviceRequest:
    return DeviceRequest(name, ExactDeviceRequest("gpu", selectors, mode, count))


def claim(
    *requests: DeviceRequest, constraints: tuple[DeviceConstraint, ...] = ()
) -> ResourceClaim:
    return ResourceClaim(
        ObjectMeta(name="c", namespace="default"), DeviceClaim(requests, constraints)
    )


def allocate(
    slices: list[ResourceSlice], *claims: ResourceClaim, held: frozenset = frozenset()
) -> list[list[str]] | None:
    classes = {"gpu": CLASS}
    return Allocator(held, classes.get, slices, {}).allocate(NODE, claims)


def test_first_fit_takes_devices_in_pool_slice_and_device_order() -> None:
    slices = [slice_("b", dev("d2", "t4"), count=2), slice_("a", dev("d1", "t4"), count=2)]
    # Holding d1 (slice "a" sorts first) leaves d2; holding both leaves nothing.
    assert allocate(slices, claim(req("r")), held=frozenset({(DRIVER, "p", "d1")})) == [["r"]]
    assert (
        allocate(
            slices, claim(req("r")), held=frozenset({(DRIVER, "p", "d1"), (DRIVER, "p", "d2")})
        )
        is None
    )


def test_backtracking_satisfies_match_attribute() -> None:
    slices = [slice_("s", dev("d0", "t4"), dev("d1", "a100"), dev("d2", "a100"))]
    c = claim(
        req("a"), req("b"), constraints=(DeviceConstraint(match_attribute=f"{DRIVER}/model"),)
    )
    assert allocate(slices, c) == [["a", "b"]]
    c3 = claim(
        req("a", count=3), constraints=(DeviceConstraint(match_attribute=f"{DRIVER}/model"),)
    )
    assert allocate(slices, c3) is None


def test_distinct_attribute() -> None:
    slices = [slice_("s", dev("d0", index=1), dev("d1", index=1), dev("d2", index=2))]
    c = claim(
        req("a", count=2), constraints=(DeviceConstraint(distinct_attribute=f"{DRIVER}/index"),)
    )
    assert allocate(slices, c) == [["a", "a"]]
    c3 = claim(
        req("a", count=3), constraints=(DeviceConstraint(distinct_attribute=f"{DRIVER}/index"),)
    )
    assert allocate(slices, c3) is None


def test_newest_generation_only_and_incomplete_pools() -> None:
    old = slice_("old", dev("d0"), generation=1)
    new = slice_("new", dev("d9", "t4"), generation=2)
    t4 = claim(req("r", 'device.attributes["gpu.example.com"].model == "t4"'))
    assert allocate([old, new], t4) == [["r"]]
    assert allocate([old], t4) is None
    # Two slices announced, one published: incomplete, never allocated from.
    assert allocate([slice_("half", dev("d0"), count=2)], claim(req("r"))) is None
    with pytest.raises(
        AllocationError, match=r"resource pool gpu\.example\.com/p is currently being updated"
    ):
        allocate([slice_("half", dev("d0"), count=2)], claim(req("r", mode="All", count=0)))
    # The other slice of the pool is another node's: the pool is complete.
    other = slice_("other", dev("d5"), count=2, node_name="n2")
    assert allocate([slice_("half", dev("d0"), count=2), other], claim(req("r"))) == [["r"]]


def test_invalid_pool_is_a_node_local_error() -> None:
    slices = [slice_("a", dev("d0"), count=2), slice_("b", dev("d0"), count=2)]
    with pytest.raises(AllocationError) as info:
        allocate(slices, claim(req("r")))
    assert info.value.on_node
    assert info.value.message == "invalid resource pools were encountered"


def test_shared_slices_by_node_selector() -> None:
    term = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("zone", "In", ("b",)),))
    shared = slice_("shared", dev("d0"), node_name=None, node_selector=NodeSelector((term,)))
    assert allocate([shared], claim(req("r"))) is None
    term_a = NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("zone", "In", ("a",)),))
    shared_a = slice_("shared", dev("d0"), node_name=None, node_selector=NodeSelector((term_a,)))
    assert allocate([shared_a], claim(req("r"))) == [["r"]]


def test_first_available_keeps_the_first_subrequest_that_fits() -> None:
    subs = (
        DeviceSubRequest("two", ExactDeviceRequest("gpu", (), "ExactCount", 2)),
        DeviceSubRequest("one", ExactDeviceRequest("gpu", (), "ExactCount", 1)),
    )
    c = claim(DeviceRequest("r", first_available=subs))
    assert allocate([slice_("s", dev("d0"), dev("d1"))], c) == [["r/two", "r/two"]]
    assert allocate([slice_("s", dev("d0"))], c) == [["r/one"]]


def test_claim_limit_of_32_devices() -> None:
    with pytest.raises(AllocationError, match="adding 33 devices exceeds the claim limit of 32"):
        allocate([slice_("s", dev("d0"))], claim(req("r", count=33)))


def test_allocated_devices_skip_admin_access() -> None:
    results = (
        DeviceRequestAllocationResult("r", DRIVER, "p", "d0"),
        DeviceRequestAllocationResult("r", DRIVER, "p", "d1", admin_access=True),
    )
    held = ResourceClaim(ObjectMeta(name="h", namespace="x"), allocation=AllocationResult(results))
    assert allocated_devices([held]) == frozenset({(DRIVER, "p", "d0")})


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].index == 1u', True),
        ('device.attributes["gpu.example.com"].index == "1"', False),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("64Gi"))', True),
        ('device.attributes["gpu.example.com"].v.isGreaterThan(semver("1.10.0"))', False),
        ('device.attributes["gpu.example.com"].v.isGreaterThan(semver("1.2.0-rc.1"))', True),
        ('device.attributes["gpu.example.com"].v.minor() == 2', True),
    ],
)
def test_cel_environment(expression: str, expected: bool) -> None:
    assert unsupported_reason(expression) is None
    attributes = {
        "model": DeviceAttribute(string_value="a100"),
        "index": DeviceAttribute(int_value=1),
        "v": DeviceAttribute(version_value="1.2.0"),
    }
    capacity = {"memory": parse_quantity("40Gi", "memory")}
    assert Selector(expression).matches(DRIVER, attributes, capacity) is expected


def test_cel_missing_key_is_upstreams_error() -> None:
    with pytest.raises(
        CelRuntimeError, match=r"^no such key: vendor\. consider using CEL optional"
    ):
        Selector('device.attributes["gpu.example.com"].vendor == "x"').matches(DRIVER, {}, {})


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["a"].model.lowerAscii() == "x"',
        "device.attributes.?a.orValue(1)",
        "size(other) > 0",
        "device.vendor == 1",
    ],
)
def test_cel_outside_the_subset_is_named(expression: str) -> None:
    assert unsupported_reason(expression) is not None


def test_cel_runtime_type_errors() -> None:
    # Attributes are dyn: a mismatched operator is cel-go's runtime "no such overload".
    attributes = {"model": DeviceAttribute(string_value="a100")}
    with pytest.raises(CelRuntimeError, match=r"^no such overload$"):
        Selector('device.attributes["gpu.example.com"].model > 1').matches(DRIVER, attributes, {})
    # Capacities are quantities, typed statically: cel-go refuses these when compiling.
    capacity = {"memory": parse_quantity("1Gi", "memory")}
    for expression in (
        'device.capacity["gpu.example.com"].memory > 1',
        'device.capacity["gpu.example.com"].memory == 1',
    ):
        with pytest.raises(CelUnsupported):
            Selector(expression).matches(DRIVER, {}, capacity)
