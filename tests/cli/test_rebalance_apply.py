"""The --apply edge without a server: evictions through the Eviction API (429 is a refusal,
not an error), local storage read from raw pods, the Lease taken, renewed and respected."""

from __future__ import annotations

import json

from topospread.cli.rebalance_apply import Lease, evict, local_storage_pods
from topospread.client.config import Connection
from topospread.client.transport import FakeTransport, Request, Response


def _connection(handler) -> tuple[Connection, FakeTransport]:
    transport = FakeTransport(handler)
    return Connection(transport, "default", "test"), transport  # type: ignore[arg-type]


def test_eviction_is_a_policy_v1_post() -> None:
    connection, transport = _connection(lambda r: Response(201, b"{}"))
    assert evict(connection, "shop/web-1") == (True, "")
    request = transport.requests[0]
    assert request.method == "POST"
    assert request.path == "/api/v1/namespaces/shop/pods/web-1/eviction"
    body = json.loads(request.body or b"")
    assert body["apiVersion"] == "policy/v1"
    assert body["kind"] == "Eviction"
    assert body["metadata"] == {"name": "web-1", "namespace": "shop"}


def test_a_budget_refusal_is_reported_not_raised() -> None:
    message = b'{"message": "Cannot evict pod as it would violate the pod\'s disruption budget."}'
    connection, _ = _connection(lambda r: Response(429, message))
    done, why = evict(connection, "shop/web-1")
    assert not done
    assert "disruption budget" in why
    gone, why = evict(_connection(lambda r: Response(404, b"{}"))[0], "shop/web-1")
    assert not gone
    assert "gone" in why


def test_local_storage_pods() -> None:
    items = [
        {
            "kind": "Pod",
            "metadata": {"name": "a", "namespace": "x"},
            "spec": {"volumes": [{"name": "s", "emptyDir": {}}]},
        },
        {
            "kind": "Pod",
            "metadata": {"name": "b"},
            "spec": {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]},
        },
        {
            "kind": "Pod",
            "metadata": {"name": "c"},
            "spec": {"volumes": [{"name": "t", "projected": {}}]},
        },
        {"kind": "Node", "metadata": {"name": "n"}},
    ]
    assert local_storage_pods(items) == frozenset({"x/a", "default/b"})


class _LeaseServer:
    def __init__(self) -> None:
        self.lease: dict | None = None
        self.version = 0

    def __call__(self, request: Request) -> Response:
        if request.method == "GET":
            if self.lease is None:
                return Response(404, b"{}")
            return Response(200, json.dumps(self.lease).encode())
        body = json.loads(request.body or b"")
        if request.method == "PUT" and body["metadata"].get("resourceVersion") != str(self.version):
            return Response(409, b"{}")
        self.version += 1
        body["metadata"]["resourceVersion"] = str(self.version)
        self.lease = body
        return Response(201 if request.method == "POST" else 200, json.dumps(body).encode())


def test_lease_is_created_renewed_and_respected() -> None:
    server = _LeaseServer()
    mine, _ = _connection(server)
    theirs, _ = _connection(server)
    a = Lease(mine, "kube-system", "topospread-rebalance", "a", 30)
    b = Lease(theirs, "kube-system", "topospread-rebalance", "b", 30)
    assert a.acquire()
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == "a"
    assert not b.acquire()  # held, and renewed within its duration
    assert a.acquire()  # renewed
    assert server.lease["spec"]["holderIdentity"] == "a"
    assert server.lease["spec"]["leaseTransitions"] == 0


def test_apply_stops_when_an_eviction_is_refused() -> None:
    from pathlib import Path

    from topospread.cli.rebalance_apply import apply_rebalance
    from topospread.engine.audit import Scope
    from topospread.engine.rebalance import RebalanceOptions
    from topospread.framework.config.decode import default_configuration
    from topospread.io.manifests import load_audit_objects

    data = Path(__file__).parents[1] / "data" / "rebalance" / "scaled-down.yaml"
    objects, _ = load_audit_objects([str(data)])

    def handler(request: Request) -> Response:
        if request.method == "POST":
            return Response(429, b'{"message": "Cannot evict pod as it would violate the budget"}')
        if request.path.endswith("/pods"):
            return Response(200, b'{"items": []}')
        name = request.path.rsplit("/", 1)[1]
        return Response(200, json.dumps({"metadata": {"name": name, "uid": "u"}}).encode())

    connection, transport = _connection(handler)
    result = apply_rebalance(
        connection,
        lambda: (objects, frozenset()),
        default_configuration(),
        Scope(),
        RebalanceOptions(),
        timeout=1,
        poll=0.01,
    )
    assert not result.converged
    assert result.evictions == 0
    assert "refused" in (result.reason or "")
    assert [r.method for r in transport.requests].count("POST") == 1
