"""The --apply edge without a server: evictions through the Eviction API (429 is a refusal,
not an error), local storage read from raw pods, the Lease taken, renewed and respected,
and no eviction without it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from topospread.cli.rebalance_apply import apply_rebalance, evict, local_storage_pods
from topospread.client.config import Connection
from topospread.client.leaderelection import LeaderElector, LeaseRecord, check_timing
from topospread.client.transport import FakeTransport, Request, Response
from topospread.engine.audit import Scope
from topospread.engine.rebalance import RebalanceOptions
from topospread.errors import Forbidden
from topospread.framework.config.decode import default_configuration
from topospread.io.manifests import load_audit_objects

SCALED_DOWN = Path(__file__).parents[1] / "data" / "rebalance" / "scaled-down.yaml"


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


def _elector(server, identity: str, **timing: float) -> LeaderElector:
    connection, _ = _connection(server)
    return LeaderElector(
        connection.transport,
        namespace="kube-system",
        name="topospread-rebalance",
        identity=identity,
        lease_duration=timing.get("lease_duration", 30.0),
        renew_deadline=timing.get("renew_deadline", 20.0),
        retry_period=timing.get("retry_period", 2.0),
    )


def _steal(server: _LeaseServer, thief: str) -> None:
    # Another identity writes the Lease (a forced takeover, or an operator's edit).
    assert server.lease is not None
    server.version += 1
    server.lease["spec"]["holderIdentity"] = thief
    server.lease["metadata"]["resourceVersion"] = str(server.version)


class _Holding:
    """A Lease that is held (or not) as the test says."""

    def __init__(self, held: bool) -> None:
        self.held = held
        self.confirmed = 0

    def leading(self) -> bool:
        return self.held

    def confirm(self) -> bool:
        self.confirmed += 1
        return self.held

    def why_not_leading(self) -> str:
        return "lost the Lease kube-system/topospread-rebalance: it is now held by b"


def test_the_lease_is_created_renewed_and_respected() -> None:
    server = _LeaseServer()
    a, b = _elector(server, "a"), _elector(server, "b")
    assert a.acquire(wait=False)
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == "a"
    assert server.lease["spec"]["leaseDurationSeconds"] == 30
    seen: list[LeaseRecord] = []
    assert not b.acquire(wait=False, on_held=seen.append)  # held, renewed within its duration
    assert [r.holder for r in seen] == ["a"]
    acquired = server.lease["spec"]["acquireTime"]
    assert a.confirm()  # renewed: a new renewTime, the same acquisition
    assert server.lease["spec"]["holderIdentity"] == "a"
    assert server.lease["spec"]["acquireTime"] == acquired
    assert server.lease["spec"]["leaseTransitions"] == 0


def test_the_holder_renews_for_the_whole_run() -> None:
    server = _LeaseServer()
    a = _elector(server, "a", lease_duration=1.0, renew_deadline=0.6, retry_period=0.05)
    assert a.acquire()
    a.start_renewing()
    try:
        renewals = set()
        deadline = time.monotonic() + 1.5  # longer than the lease duration
        while time.monotonic() < deadline:
            assert server.lease is not None
            renewals.add(server.lease["spec"]["renewTime"])
            assert a.leading()
            time.sleep(0.02)
        assert len(renewals) >= 10
        assert server.lease["spec"]["leaseTransitions"] == 0
    finally:
        a.stop()
    assert server.lease["spec"]["holderIdentity"] == ""  # released when the run ends


def test_a_holder_whose_lease_is_stolen_knows_it_before_its_next_eviction() -> None:
    server = _LeaseServer()
    a = _elector(server, "a")
    assert a.acquire()
    assert a.leading()
    _steal(server, "b")
    assert a.leading()  # nothing read yet
    assert not a.confirm()  # the renewal just before an eviction reads the Lease
    assert not a.leading()
    assert a.why_not_leading() == (
        "lost the Lease kube-system/topospread-rebalance: it is now held by b"
    )
    a.stop()
    assert server.lease["spec"]["holderIdentity"] == "b"  # not released: not ours


def test_a_forbidden_lease_is_one_error_not_a_wait() -> None:
    forbidden = json.dumps({"message": 'leases.coordination.k8s.io "x" is forbidden'}).encode()
    a = _elector(lambda r: Response(403, forbidden), "a")
    with pytest.raises(Forbidden, match="403 Forbidden"):
        a.acquire(fatal=(Forbidden,))


@pytest.mark.parametrize(
    ("durations", "problem"),
    [
        ((15, 10, 2), None),
        ((10, 10, 2), "leaseDuration must be greater than renewDeadline"),
        ((15, 2.4, 2), "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ],
)
def test_lease_durations_are_checked_as_client_go_checks_them(durations, problem) -> None:
    assert check_timing(*durations) == problem


def _refusing_evictions(request: Request) -> Response:
    if request.method == "POST":
        return Response(429, b'{"message": "Cannot evict pod as it would violate the budget"}')
    if request.path.endswith("/pods"):
        return Response(200, b'{"items": []}')
    name = request.path.rsplit("/", 1)[1]
    return Response(200, json.dumps({"metadata": {"name": name, "uid": "u"}}).encode())


def test_without_the_lease_nothing_is_evicted() -> None:
    objects, _ = load_audit_objects([str(SCALED_DOWN)])
    connection, transport = _connection(_refusing_evictions)
    lease = _Holding(False)
    result = apply_rebalance(
        connection,
        lambda: (objects, frozenset()),
        default_configuration(),
        Scope(),
        RebalanceOptions(),
        lease=lease,
        timeout=1,
        poll=0.01,
    )
    assert not result.converged
    assert result.evictions == 0
    assert result.reason == (
        "stopped: lost the Lease kube-system/topospread-rebalance: it is now held by b"
    )
    assert lease.confirmed == 1
    assert [r.method for r in transport.requests].count("POST") == 0


def test_apply_stops_when_an_eviction_is_refused() -> None:
    objects, _ = load_audit_objects([str(SCALED_DOWN)])
    connection, transport = _connection(_refusing_evictions)
    result = apply_rebalance(
        connection,
        lambda: (objects, frozenset()),
        default_configuration(),
        Scope(),
        RebalanceOptions(),
        lease=_Holding(True),
        timeout=1,
        poll=0.01,
    )
    assert not result.converged
    assert result.evictions == 0
    assert "refused" in (result.reason or "")
    assert [r.method for r in transport.requests].count("POST") == 1
