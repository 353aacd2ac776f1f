"""Reserve's allocation results: the devices Filter found, shaped as upstream writes them."""

from __future__ import annotations

from typing import Any

import pytest

from topospread.engine.cluster import Cluster
from topospread.io.loader import decode_objects
from topospread.model.objects import NodeSelectorRequirement, Pod
from topospread.plugins.dynamicresources.allocation import NodeSelectorError, plan_allocations
from topospread.plugins.dynamicresources.allocator import AllocationError
from topospread.testing.dra import (
    DRIVER,
    GPU_CLASS,
    allocation,
    claim,
    device,
    incoming,
    node,
    ref,
    request,
    slice_,
)

ZONE = "topology.kubernetes.io/zone"


def _plan(objects: list[dict[str, Any]], pod: dict[str, Any], node_name: str = "n1"):
    decoded, _ = decode_objects(objects, "cluster")
    (decoded_pod,), _ = decode_objects([pod], "pod")
    assert isinstance(decoded_pod, Pod)
    cluster = Cluster.from_objects(decoded)
    chosen = next(n for n in cluster.nodes if n.name == node_name)
    return plan_allocations(cluster.objects, decoded_pod, chosen)


def _zone_selector(*zones: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}
        ]
    }


def test_a_device_of_a_node_local_slice_pins_the_claim_to_that_node() -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        slice_("s1", [device("gpu-0"), device("gpu-1")], node_name="n1"),
        claim("c", [request("gpu", count=2)]),
    ]

    [planned] = _plan(objects, incoming(ref("gpu", claim_name="c")))

    assert planned.allocation is not None
    assert [(r.request, r.driver, r.pool, r.device) for r in planned.allocation.results] == [
        ("gpu", DRIVER, "n1", "gpu-0"),
        ("gpu", DRIVER, "n1", "gpu-1"),
    ]
    [term] = planned.allocation.node_selector.node_selector_terms  # type: ignore[union-attr]
    assert term.match_fields == (NodeSelectorRequirement("metadata.name", "In", ("n1",)),)
    assert term.match_expressions == ()
    assert planned.class_requests == (("gpu", "gpu"),)


def test_devices_of_selected_slices_carry_their_merged_selector_and_all_nodes_adds_nothing() -> (
    None
):
    objects = [
        node("n1", zone="a"),
        GPU_CLASS,
        slice_("zonal", [device("gpu-0")], pool="zonal", nodeSelector=_zone_selector("a")),
        slice_("again", [device("gpu-1")], pool="again", nodeSelector=_zone_selector("a")),
        slice_("everywhere", [device("gpu-2")], pool="everywhere", allNodes=True),
        claim("c", [request("gpu", count=3)]),
    ]

    [planned] = _plan(objects, incoming(ref("gpu", claim_name="c")))

    assert planned.allocation is not None
    assert [r.pool for r in planned.allocation.results] == ["again", "everywhere", "zonal"]
    # Two slices with the same requirement: it is written once.
    [term] = planned.allocation.node_selector.node_selector_terms  # type: ignore[union-attr]
    assert term.match_expressions == (NodeSelectorRequirement(ZONE, "In", ("a",)),)


def test_devices_usable_on_all_nodes_leave_the_claim_without_a_node_selector() -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        slice_("everywhere", [device("gpu-0")], pool="everywhere", allNodes=True),
        claim("c", [request("gpu")]),
    ]

    [planned] = _plan(objects, incoming(ref("gpu", claim_name="c")))

    assert planned.allocation is not None
    assert planned.allocation.node_selector is None


def test_a_slice_selector_of_two_terms_is_refused_as_upstream_refuses_it() -> None:
    two_terms = {"nodeSelectorTerms": [*_zone_selector("a")["nodeSelectorTerms"]] * 2}
    objects = [
        node("n1", zone="a"),
        GPU_CLASS,
        slice_("odd", [device("gpu-0")], pool="odd", nodeSelector=two_terms),
        claim("c", [request("gpu")]),
    ]

    with pytest.raises(NodeSelectorError, match=r"NodeSelector with 2 terms"):
        _plan(objects, incoming(ref("gpu", claim_name="c")))


def test_an_allocated_claim_needs_only_the_reservation_and_its_devices_stay_taken() -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        slice_("s1", [device("gpu-0"), device("gpu-1")], node_name="n1"),
        claim("held", [request("gpu")], allocation=allocation("n1", (DRIVER, "n1", "gpu-0"))),
        claim("c", [request("gpu")]),
    ]

    held, new = _plan(objects, incoming(ref("a", claim_name="held"), ref("b", claim_name="c")))

    assert held.allocation is None
    assert new.allocation is not None
    assert [r.device for r in new.allocation.results] == ["gpu-1"]


def test_a_first_available_claim_names_the_subrequest_that_got_the_devices() -> None:
    first_available = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "two", "deviceClassName": "gpu", "count": 2},
            {"name": "one", "deviceClassName": "gpu"},
        ],
    }
    objects = [
        node("n1"),
        GPU_CLASS,
        slice_("s1", [device("gpu-0")], node_name="n1"),
        claim("c", [first_available]),
    ]

    [planned] = _plan(objects, incoming(ref("gpu", claim_name="c")))

    assert planned.allocation is not None
    assert [r.request for r in planned.allocation.results] == ["gpu/one"]
    assert planned.class_requests == (("gpu", "gpu/one"),)


def test_claims_that_no_longer_fit_are_an_error() -> None:
    objects = [node("n1"), GPU_CLASS, claim("c", [request("gpu")])]

    with pytest.raises(AllocationError, match="cannot allocate all claims"):
        _plan(objects, incoming(ref("gpu", claim_name="c")))
