"""DynamicResources' PreBind writes: what goes into a claim, and in which requests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from topospread.client.transport import FakeTransport, Request, Response
from topospread.engine.cluster import Cluster
from topospread.framework.config.decode import default_configuration
from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import Framework
from topospread.framework.status import Code
from topospread.io.loader import decode_objects
from topospread.model.objects import Pod
from topospread.plugins.dynamicresources.allocation import plan_allocations
from topospread.plugins.registry import registry
from topospread.scheduler.binding import ApiBinding
from topospread.scheduler.cache import SchedulerCache
from topospread.scheduler.claims import (
    ClaimBindingError,
    bind_pod_claims,
    render_allocation,
)
from topospread.testing.dra import (
    DRIVER,
    GPU_CLASS,
    allocation,
    claim,
    device,
    device_class,
    incoming,
    node,
    ref,
    request,
    slice_,
)

CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


def _opaque(**parameters: str) -> dict[str, Any]:
    return {"opaque": {"driver": DRIVER, "parameters": parameters}}


def _reserve(objects: list[dict[str, Any]], pod: dict[str, Any]):
    decoded, _ = decode_objects(objects, "cluster")
    (decoded_pod,), _ = decode_objects([pod], "pod")
    assert isinstance(decoded_pod, Pod)
    cluster = Cluster.from_objects(decoded)
    return decoded_pod, plan_allocations(cluster.objects, decoded_pod, cluster.nodes[0])


class ApiServer:
    """Claims and classes by path; status and metadata merge patches applied in place."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        for obj in objects:
            meta = obj["metadata"]
            base = (
                CLAIMS
                if obj["kind"] == "ResourceClaim"
                else "/apis/resource.k8s.io/v1/deviceclasses"
            )
            self.objects[f"{base}/{meta['name']}"] = json.loads(json.dumps(obj))
            meta = self.objects[f"{base}/{meta['name']}"]["metadata"]
            meta.setdefault("resourceVersion", "1")
        self.requests: list[tuple[str, str, Any]] = []
        self.conflicts = 0

    def __call__(self, request: Request) -> Response:
        body = json.loads(request.body) if request.body else None
        self.requests.append((request.method, request.path, body))
        path = request.path.removesuffix("/status")
        stored = self.objects.get(path)
        if stored is None:
            return Response(404, b'{"message": "not found"}')
        if request.method == "GET":
            return Response(200, json.dumps(stored).encode())
        if self.conflicts:
            self.conflicts -= 1
            stored["metadata"]["resourceVersion"] = str(
                int(stored["metadata"]["resourceVersion"]) + 1
            )
            return Response(409, b'{"message": "the object has been modified"}')
        if body["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]:
            return Response(409, b'{"message": "the object has been modified"}')
        for section in ("metadata", "status"):
            stored.setdefault(section, {}).update(
                {k: v for k, v in (body.get(section) or {}).items() if k != "resourceVersion"}
            )
        stored["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)
        return Response(200, json.dumps(stored).encode())


def test_an_allocated_claim_gets_the_finalizer_then_allocation_and_reservation_in_one_write():
    gpu_class = device_class("gpu", f'device.driver == "{DRIVER}"')
    gpu_class["spec"]["config"] = [_opaque(source="class")]
    gpu = request("gpu")
    nic = request("nic", "gpu")
    owned = claim("c", [gpu, nic], uid="claim-uid")
    owned["spec"]["devices"]["config"] = [
        {"requests": ["gpu"], **_opaque(source="claim")},
        {**_opaque(source="everyone")},
    ]
    objects = [
        node("n1"),
        gpu_class,
        slice_("s1", [device("gpu-0"), device("gpu-1")], node_name="n1"),
        owned,
    ]
    pod, reserved = _reserve(objects, incoming(ref("gpu", claim_name="c")))
    server = ApiServer(owned, gpu_class)

    assert bind_pod_claims(FakeTransport(server), pod, reserved) == ["default/c"]

    writes = [(m, p, b) for m, p, b in server.requests if m == "PATCH"]
    assert [(m, p) for m, p, _ in writes] == [
        ("PATCH", f"{CLAIMS}/c"),
        ("PATCH", f"{CLAIMS}/c/status"),
    ]
    assert writes[0][2]["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    status = writes[1][2]["status"]
    assert status["reservedFor"] == [{"resource": "pods", "name": "p", "uid": pod.metadata.uid}]
    written = status["allocation"]
    assert written.pop("allocationTimestamp")
    assert written == {
        "devices": {
            "results": [
                {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"},
                {"request": "nic", "driver": DRIVER, "pool": "n1", "device": "gpu-1"},
            ],
            "config": [
                # Both requests use the class: its config applies to all and names none.
                {"source": "FromClass", **_opaque(source="class")},
                {"source": "FromClaim", "requests": ["gpu"], **_opaque(source="claim")},
                {"source": "FromClaim", **_opaque(source="everyone")},
            ],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]
        },
    }


def test_a_claim_allocated_before_only_gets_the_pod_in_reserved_for():
    held = claim(
        "held",
        [request("gpu")],
        allocation=allocation("n1", (DRIVER, "n1", "gpu-0")),
        reserved_for=[{"resource": "pods", "name": "other", "uid": "other-uid"}],
    )
    held["status"]["allocation"]["allocationTimestamp"] = "2026-11-24T00:00:00Z"
    objects = [node("n1"), GPU_CLASS, slice_("s1", [device("gpu-0")], node_name="n1"), held]
    pod, reserved = _reserve(objects, incoming(ref("gpu", claim_name="held")))
    server = ApiServer(held)

    bind_pod_claims(FakeTransport(server), pod, reserved)

    [(_, path, body)] = [r for r in server.requests if r[0] == "PATCH"]
    assert path == f"{CLAIMS}/held/status"
    assert body["status"] == {
        "reservedFor": [
            {"resource": "pods", "name": "other", "uid": "other-uid"},
            {"resource": "pods", "name": "p", "uid": pod.metadata.uid},
        ]
    }


def test_a_conflict_is_retried_on_the_claim_read_again():
    owned = claim("c", [request("gpu")])
    objects = [node("n1"), GPU_CLASS, slice_("s1", [device("gpu-0")], node_name="n1"), owned]
    pod, reserved = _reserve(objects, incoming(ref("gpu", claim_name="c")))
    server = ApiServer(owned)
    server.conflicts = 1

    bind_pod_claims(FakeTransport(server), pod, reserved)

    assert [(m, p.removeprefix(CLAIMS)) for m, p, _ in server.requests] == [
        ("GET", "/c"),
        ("PATCH", "/c"),  # the finalizer: 409
        ("GET", "/c"),
        ("PATCH", "/c"),
        ("GET", "/apis/resource.k8s.io/v1/deviceclasses/gpu"),  # its configs
        ("PATCH", "/c/status"),
    ]
    assert server.objects[f"{CLAIMS}/c"]["status"]["reservedFor"][0]["name"] == "p"


def test_a_claim_allocated_elsewhere_meanwhile_fails_in_upstreams_words():
    owned = claim("c", [request("gpu")])
    objects = [node("n1"), GPU_CLASS, slice_("s1", [device("gpu-0")], node_name="n1"), owned]
    pod, reserved = _reserve(objects, incoming(ref("gpu", claim_name="c")))
    taken = json.loads(json.dumps(owned))
    taken["status"] = {"allocation": allocation("n2", (DRIVER, "n2", "gpu-0"))}

    with pytest.raises(ClaimBindingError) as failure:
        bind_pod_claims(FakeTransport(ApiServer(taken)), pod, reserved)

    # The framework prefixes it: running PreBind plugin "DynamicResources": ... (below).
    assert str(failure.value) == "claim default/c got allocated elsewhere in the meantime"


def test_the_plugins_binding_cycle_through_the_live_port_in_upstreams_words():
    # DynamicResources' Reserve assumes the allocation in the scheduler's cache, its
    # PreBind writes through the API port, the framework words the failure as upstream.
    owned = claim("c", [request("gpu")])
    objects = [node("n1"), GPU_CLASS, slice_("s1", [device("gpu-0")], node_name="n1"), owned]
    decoded, _ = decode_objects(objects, "cluster")
    (pod,), _ = decode_objects([incoming(ref("gpu", claim_name="c"))], "pod")
    cluster = Cluster.from_objects(decoded)
    taken = json.loads(json.dumps(owned))
    taken["status"] = {"allocation": allocation("n2", (DRIVER, "n2", "gpu-0"))}
    cache = SchedulerCache()
    for obj in cluster.objects.resource_claims:
        cache.set_object(obj)
    port = ApiBinding(FakeTransport(ApiServer(taken)), cache)
    handle = Handle(cluster.snapshot(), cluster.objects, binding=port)
    framework = Framework(default_configuration().profiles[0], registry(), handle)
    state = CycleState()

    assert framework.run_reserve_plugins_reserve(state, pod, "n1").code is Code.SUCCESS
    (assumed,) = cache.cluster_objects().resource_claims
    assert assumed.allocation is not None  # the next cycles see gpu-0 in use
    status = framework.run_pre_bind_plugins(state, pod, "n1")
    assert status.message == (
        'running PreBind plugin "DynamicResources": '
        "claim default/c got allocated elsewhere in the meantime"
    )
    # Unreserve: the assumption goes, and (PreBind having begun) the pod is taken out of
    # the claim's reservedFor with upstream's strategic-merge patch.
    unreserve: list[Request] = []
    port.transport = FakeTransport(lambda r: unreserve.append(r) or Response(200, b"{}"))
    framework.run_reserve_plugins_unreserve(state, pod, "n1")
    (restored,) = cache.cluster_objects().resource_claims
    assert restored.allocation is None
    (patch,) = unreserve
    assert (patch.method, patch.path) == ("PATCH", f"{CLAIMS}/c/status")
    assert patch.content_type == "application/strategic-merge-patch+json"
    assert json.loads(patch.body)["status"] == {
        "reservedFor": [{"$patch": "delete", "uid": pod.metadata.uid}]
    }


def test_a_claim_config_for_a_subrequest_not_chosen_is_left_out():
    first_available = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "two", "deviceClassName": "gpu", "count": 2},
            {"name": "one", "deviceClassName": "gpu"},
        ],
    }
    owned = claim("c", [first_available, request("extra")])
    owned["spec"]["devices"]["config"] = [
        {"requests": ["gpu/two"], **_opaque(n="2")},
        {"requests": ["gpu/one"], **_opaque(n="1")},
        {"requests": ["gpu", "extra"], **_opaque(n="any")},
    ]
    objects = [
        node("n1"),
        GPU_CLASS,
        slice_("s1", [device("gpu-0"), device("gpu-1")], node_name="n1"),
        owned,
    ]
    _, reserved = _reserve(objects, incoming(ref("gpu", claim_name="c")))
    [planned] = reserved

    rendered = render_allocation(planned, owned, lambda name: None)

    assert [r["request"] for r in rendered["devices"]["results"]] == ["gpu/one", "extra"]
    assert rendered["devices"]["config"] == [
        {"source": "FromClaim", "requests": ["gpu/one"], **_opaque(n="1")},
        # Names every request of the claim: applies to all.
        {"source": "FromClaim", **_opaque(n="any")},
    ]
