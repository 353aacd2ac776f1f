"""Leader election on a fake Lease store, and the component configuration."""

from __future__ import annotations

import json
import threading
import time

import pytest

from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterUnreachable, ConfigError
from topospread.scheduler.leader import LeaderElector
from topospread.scheduler.options import options_from_document, parse_duration


class LeaseServer:
    """One Lease with resourceVersion preconditions, as the API server keeps it."""

    def __init__(self) -> None:
        self.lease: dict | None = None
        self.version = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            if request.method == "GET":
                if self.lease is None:
                    return Response(404, b"{}")
                return Response(200, json.dumps(self.lease).encode())
            body = json.loads(request.body or b"{}")
            if request.method == "POST":
                if self.lease is not None:
                    return Response(409, b"{}")
            elif body["metadata"].get("resourceVersion") != str(self.version):
                return Response(409, b"{}")
            self.version += 1
            body["metadata"]["resourceVersion"] = str(self.version)
            self.lease = body
            return Response(200 if request.method == "PUT" else 201, json.dumps(body).encode())


def elector(server: LeaseServer, identity: str, events: list[str]) -> LeaderElector:
    return LeaderElector(
        FakeTransport(server),
        namespace="kube-system",
        name="topospread",
        identity=identity,
        lease_duration=1.0,
        renew_deadline=0.6,
        retry_period=0.1,
        on_started_leading=lambda: events.append(f"{identity} leads"),
        on_stopped_leading=lambda: events.append(f"{identity} lost"),
    )


def wait(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_one_leader_then_release_hands_over_at_once():
    server, events = LeaseServer(), []
    a, b = elector(server, "a", events), elector(server, "b", events)
    a.start()
    wait(lambda: a.is_leader)
    b.start()
    time.sleep(0.5)
    assert not b.is_leader
    assert server.lease["spec"]["holderIdentity"] == "a"
    began = time.monotonic()
    a.stop()  # releases
    assert server.lease["spec"]["holderIdentity"] == ""
    wait(lambda: b.is_leader)
    assert time.monotonic() - began < 0.5
    assert server.lease["spec"]["leaseTransitions"] == 1
    b.stop()
    assert events == ["a leads", "b leads"]


def test_a_dead_leader_is_replaced_after_the_lease_duration():
    server, events = LeaseServer(), []
    a, b = elector(server, "a", events), elector(server, "b", events)
    a.start()
    wait(lambda: a.is_leader)
    b.start()
    killed = time.monotonic()
    a.stop(release=False)  # as if killed: the lease is left held
    wait(lambda: b.is_leader)
    waited = time.monotonic() - killed
    assert 0.8 <= waited <= 2.0
    b.stop()


def test_a_leader_that_cannot_renew_steps_down():
    server, events = LeaseServer(), []
    a = elector(server, "a", events)
    a.start()
    wait(lambda: a.is_leader)
    server.lease["spec"]["holderIdentity"] = "usurper"  # someone else wrote the lease
    server.version += 1
    server.lease["metadata"]["resourceVersion"] = str(server.version)
    wait(lambda: "a lost" in events)
    assert not a.is_leader
    a.stop()


class HangingTransport(FakeTransport):
    """The Lease server until ``hang`` is set; then every request hangs for its own
    timeout and fails, as KubeTransport does on a server that stopped answering."""

    def __init__(self, server: LeaseServer) -> None:
        super().__init__(server)
        self.hang = threading.Event()
        self.timeouts: list[float | None] = []

    def send(self, request: Request) -> Response:
        if not self.hang.is_set():
            return super().send(request)
        self.timeouts.append(request.timeout)
        time.sleep(request.timeout if request.timeout is not None else 30.0)
        raise ClusterUnreachable("cannot connect to https://fake.invalid: timed out")


def test_a_leader_whose_api_server_hangs_steps_down_within_the_renew_deadline():
    events: list[str] = []
    transport = HangingTransport(LeaseServer())
    a = LeaderElector(
        transport,
        namespace="kube-system",
        name="topospread",
        identity="a",
        lease_duration=1.0,
        renew_deadline=0.6,
        retry_period=0.1,
        on_stopped_leading=lambda: events.append("a lost"),
    )
    a.start()
    wait(lambda: a.is_leader)
    transport.hang.set()
    hung = time.monotonic()
    wait(lambda: "a lost" in events, timeout=3.0)
    # renewDeadline after the last renewal, which was at most retryPeriod before the hang.
    assert time.monotonic() - hung < 0.6 + 0.1 + 0.3
    assert transport.timeouts
    assert all(t is not None and t <= 0.6 for t in transport.timeouts)
    a.stop(release=False)


def test_options_from_the_configuration_file():
    options = options_from_document(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 30,
            "podMaxBackoffSeconds": 20,
            "leaderElection": {
                "leaseDuration": "30s",
                "renewDeadline": "20s",
                "retryPeriod": "500ms",
                "resourceName": "topospread",
                "resourceNamespace": "topospread-system",
            },
            "clientConnection": {"kubeconfig": "/etc/k.conf", "qps": 200, "burst": 400},
            "profiles": [{"schedulerName": "topospread"}],
        },
        "config.yaml",
    )
    le = options.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (30.0, 20.0, 0.5)
    assert (le.resource_name, le.resource_namespace) == ("topospread", "topospread-system")
    assert options.client_connection.qps == 200
    assert options.client_connection.burst == 400
    assert options.configuration.percentage_of_nodes_to_score == 30
    assert options.configuration.pod_max_backoff_seconds == 20
    assert [p.scheduler_name for p in options.configuration.profiles] == ["topospread"]


def test_defaults_and_bad_values():
    defaults = options_from_document(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        "c",
    )
    assert defaults.leader_election.lease_duration == 15.0
    assert defaults.leader_election.resource_name == "kube-scheduler"
    assert defaults.client_connection.qps == 50.0
    with pytest.raises(ConfigError) as error:
        options_from_document(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {
                    "leaseDuration": "5s",
                    "renewDeadline": "10s",
                    "retryPeriod": "soon",
                },
            },
            "c.yaml",
        )
    # A field that does not decode stops before validation, as kube-scheduler's decoding.
    assert [str(e) for e in error.value.errors] == [
        'leaderElection.retryPeriod: Invalid value: "soon": expected a duration like 15s'
    ]


def test_validation_errors_come_together_leader_election_first_in_upstreams_words():
    with pytest.raises(ConfigError) as error:
        options_from_document(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s"},
                "clientConnection": {"burst": -1},
                "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}],
            },
            "c.yaml",
        )
    # ValidateKubeSchedulerConfiguration: clientConnection, leaderElection, then profiles
    # (a duplicate's value is a *field.Path, which encoding/json renders {}).
    assert [str(e) for e in error.value.errors] == [
        "clientConnection.burst: Invalid value: -1: must be non-negative",
        'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
        "profiles[1].schedulerName: Duplicate value: {}",
    ]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("2h", 7200.0),
        ("0", 0.0),
        ("1.5s", 1.5),
        ("abc", None),
        ("10", None),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds
