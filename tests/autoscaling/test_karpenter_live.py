"""Karpenter beside kube-scheduler: batches of Pending spread-constrained pods, the nodes
Karpenter's KWOK provider adds for them, where kube-scheduler then binds the pods, and
topospread's prediction of that scale-up.

Every case runs on a fresh cluster (see ``conftest.py``) and goes the same way: the pods
are created while no NodePool exists (or while the NodePool is held at its CPU limit), so
that they are all Pending when the cluster is captured; then the NodePool is created (or
released) and Karpenter scales up. What it did is asserted (it is stable across runs) and
recorded; topospread's prediction from the capture must give the same node count and the
same zones.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.testing.autoscaler import (
    HOSTNAME_LABEL,
    ZONE_LABEL,
    Api,
    Autoscaler,
    Claim,
    claims,
    node_pool,
    placements,
    snapshot,
    wait_for,
)

pytestmark = pytest.mark.cluster

A, B, C, D = (f"test-zone-{z}" for z in "abcd")
"""The zones the KWOK provider's instance types are offered in."""

SCALE_UP_TIMEOUT = 60.0


# -- objects ---------------------------------------------------------------------------------------


def deployment(
    name: str, replicas: int, spread: list[dict[str, Any]], *, cpu: str = "1"
) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
                        }
                    ],
                    "topologySpreadConstraints": [
                        {**constraint, "labelSelector": {"matchLabels": labels}}
                        for constraint in spread
                    ],
                },
            },
        },
    }


def spread(key: str, *, max_skew: int = 1, min_domains: int | None = None) -> dict[str, Any]:
    constraint: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
    }
    if min_domains is not None:
        constraint["minDomains"] = min_domains
    return constraint


# -- one scale-up -------------------------------------------------------------------------------


@dataclass
class ScaleUp:
    """What one batch did: the NodeClaims Karpenter added, and each pod's zone."""

    claims: list[Claim]
    zones_of_pods: dict[str, str]
    seconds: float
    """From Karpenter's trigger to every expected pod bound and every claim Ready."""
    capture: list[dict[str, Any]]
    """The cluster as it was just before, every pod of the batch Pending."""
    pending: list[dict[str, Any]]
    """The batch's pods that were Pending in the capture."""
    nominated_elsewhere: int
    """Pods kube-scheduler bound to another node than the new one Karpenter nominated them
    to (its Nominated Events are advice; kube-scheduler decides alone)."""

    @property
    def claim_zones(self) -> Counter[str]:
        return Counter(c.zone for c in self.claims)

    @property
    def pod_zones(self) -> Counter[str]:
        return Counter(zone for zone in self.zones_of_pods.values() if zone)

    @property
    def still_pending(self) -> int:
        return sum(1 for zone in self.zones_of_pods.values() if not zone)

    def describe(self) -> str:
        kinds = Counter(f"{c.zone}:{c.instance_type}" for c in self.claims)
        return (
            f"{len(self.claims)} NodeClaim(s) {dict(sorted(kinds.items()))}; pods by zone "
            f"{dict(sorted(self.pod_zones.items()))}, {self.still_pending} Pending; "
            f"{self.nominated_elsewhere} bound elsewhere than nominated; {self.seconds:.1f} s"
        )


def _pending_pods(api: Api, app: str, count: int) -> list[dict[str, Any]] | None:
    """The app's pods once ``count`` are unbound and kube-scheduler has found none a node."""
    unschedulable = [
        p
        for p in api.list("Pod", "default", f"app={app}")
        if not p["spec"].get("nodeName")
        and any(
            c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in p.get("status", {}).get("conditions", ())
        )
    ]
    return unschedulable if len(unschedulable) == count else None


def _karpenter_events(api: Api, reason: str) -> dict[str, str]:
    """Pod name → the message of Karpenter's latest Event with ``reason`` about it."""
    return {
        e["involvedObject"]["name"]: e["message"]
        for e in sorted(api.list("Event", "default"), key=lambda e: e["metadata"]["name"])
        if e["involvedObject"]["kind"] == "Pod"
        and e["reason"] == reason
        and e.get("reportingComponent") == "karpenter"
    }


def _nudge(api: Api, pods: list[dict[str, Any]]) -> None:
    """Karpenter's provisioner runs on pod events (and on each Pending pod's 10 s requeue):
    a NodePool turning Ready or getting a higher limit starts nothing. An annotation on
    each Pending pod makes it look now."""
    for pod in pods:
        patch = {"metadata": {"annotations": {"topospread.dev/look-again": "now"}}}
        api.patch("Pod", pod["metadata"]["name"], patch)


def scale_up(
    karpenter: Autoscaler,
    app: str,
    *,
    pending: int,
    bound: int,
    release: Callable[[], object],
    before: list[Claim] | None = None,
) -> ScaleUp:
    """Wait for ``pending`` of the app's pods to be Pending, capture the cluster, call
    ``release`` (which makes a NodePool usable), let Karpenter look, and wait until ``bound``
    pods are bound on Ready claims and Karpenter has said why it leaves each other pod
    Pending; returns the claims added since ``before``."""
    api = karpenter.api
    pods = wait_for(
        lambda: _pending_pods(api, app, pending), 30, f"{pending} Pending pods of {app}"
    )
    capture = snapshot(api)
    known = {c.name for c in before or ()}
    release()
    wait_for(lambda: all(_ready(pool) for pool in api.list("NodePool")), 30, "every NodePool Ready")
    began = time.monotonic()
    _nudge(api, pods)

    def settled() -> ScaleUp | None:
        added = [c for c in claims(api) if c.name not in known]
        zones = placements(api, "default", f"app={app}")
        if sum(1 for z in zones.values() if z) < bound or not all(c.ready for c in added):
            return None
        # A pod left Pending is done with once Karpenter has published why.
        refused = _karpenter_events(api, "FailedScheduling")
        if any(not zone and pod not in refused for pod, zone in zones.items()):
            return None
        node_of = {c.name: c.node for c in added}
        nominated = {
            pod: node_of.get(found.group(1))
            for pod, message in _karpenter_events(api, "Nominated").items()
            if (found := re.search(r"nodeclaim/([^,\s]+)", message))
        }
        bound_to = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in api.list("Pod")}
        elsewhere = sum(1 for pod, node in nominated.items() if node and bound_to.get(pod) != node)
        return ScaleUp(added, zones, time.monotonic() - began, capture, pods, elsewhere)

    return wait_for(settled, SCALE_UP_TIMEOUT, f"{bound} pods of {app} bound on Ready NodeClaims")


def _ready(obj: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in obj.get("status", {}).get("conditions", ())
    )


# -- the prediction ------------------------------------------------------------------------------


def predict(
    karpenter: Autoscaler, done: ScaleUp, pools: list[dict[str, Any]], tmp_path: Path
) -> dict[str, Any]:
    """``topospread explain --node-pools`` on the capture: the scale-up it predicts for
    every Pending pod, one of them explained."""
    explained = done.pending[0]
    name = explained["metadata"]["name"]
    cluster = [
        o for o in done.capture if not (o["kind"] == "Pod" and o["metadata"]["name"] == name)
    ]
    files = {
        "cluster.yaml": {"apiVersion": "v1", "kind": "List", "items": cluster},
        "pools.yaml": {"apiVersion": "v1", "kind": "List", "items": pools},
        "pod.yaml": explained,
    }
    for file, content in files.items():
        (tmp_path / file).write_text(yaml.safe_dump(content), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "explain",
            "--cluster",
            str(tmp_path / "cluster.yaml"),
            "--node-pools",
            str(tmp_path / "pools.yaml"),
            "--instance-types",
            str(karpenter.instance_types_file),
            "--pod",
            str(tmp_path / "pod.yaml"),
            "--autoscaler",
            "karpenter",
            "--output",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    answer: dict[str, Any] = json.loads(result.stdout)
    scale: dict[str, Any] = answer["autoscaling"]["scaleUp"]
    return scale


def assert_predicted(scale: dict[str, Any], done: ScaleUp) -> None:
    """The predicted node count and zones are Karpenter's."""
    assert (scale["nodes"], Counter(scale["byZone"])) == (len(done.claims), done.claim_zones), (
        f"topospread predicted {scale['nodes']} node(s) {scale['byZone']}; Karpenter made "
        f"{done.describe()}"
    )


class Record:
    """What Karpenter did and what topospread predicted, in the JUnit report's properties
    and on stdout (``pytest -s``)."""

    def __init__(self, record_property: Callable[[str, object], None]) -> None:
        self._record_property = record_property

    def __call__(self, key: str, value: str) -> None:
        self._record_property(key, value)
        print(f"{key}: {value}")

    def karpenter(self, done: ScaleUp) -> None:
        self("karpenter", done.describe())

    def prediction(self, scale: dict[str, Any], done: ScaleUp) -> None:
        kinds = Counter(f"{n['zone']}:{n['instanceType']}" for n in scale["newNodes"])
        zone_of = {n["name"]: n["zone"] for n in scale["newNodes"]}
        explained = done.pending[0]["metadata"]["name"]
        self(
            "topospread",
            f"{scale['nodes']} node(s) {dict(sorted(kinds.items()))} from pool "
            f"{scale['pool']}; {explained} lands in {zone_of.get(scale['landsOn'])} "
            f"(kube-scheduler bound it in {done.zones_of_pods.get(explained) or 'none'})",
        )


@pytest.fixture
def record(record_property: Callable[[str, object], None]) -> Record:
    return Record(record_property)


@pytest.fixture
def prediction(
    karpenter: Autoscaler, tmp_path: Path, record: Record
) -> Callable[..., dict[str, Any]]:
    """``prediction(done, pools)``: topospread's scale-up for the capture, recorded."""

    def predicted(done: ScaleUp, pools: list[dict[str, Any]]) -> dict[str, Any]:
        scale = predict(karpenter, done, pools, tmp_path)
        record.prediction(scale, done)
        return scale

    return predicted


# -- the cases -------------------------------------------------------------------------------------


def test_six_pods_spread_by_zone_get_one_node_in_each_of_the_pools_three_zones(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    pools = [node_pool("default", [A, B, C])]
    karpenter.api.create(deployment("web", 6, [spread(ZONE_LABEL)]))

    done = scale_up(
        karpenter, "web", pending=6, bound=6, release=lambda: _create_all(karpenter, pools)
    )
    record.karpenter(done)

    assert done.claim_zones == {A: 1, B: 1, C: 1}
    assert done.pod_zones == {A: 2, B: 2, C: 2}
    # The provider sets a Node's capacity to its claim's requests (what the pods asked for),
    # below the instance type's allocatable: kube-scheduler reads only allocatable.
    for node in karpenter.api.list("Node"):
        status = node["status"]
        assert _millicores(status["capacity"]["cpu"]) < _millicores(status["allocatable"]["cpu"])
    assert_predicted(prediction(done, pools), done)


def test_a_second_batch_fills_the_existing_nodes_first_then_gets_one_node_per_zone(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    pools = [node_pool("default", [A, B, C])]
    karpenter.api.create(deployment("web", 6, [spread(ZONE_LABEL)]))
    first = scale_up(
        karpenter, "web", pending=6, bound=6, release=lambda: _create_all(karpenter, pools)
    )
    # Hold the pool at its limit while 6 more replicas come: kube-scheduler puts what fits
    # on the existing nodes (one more each), the rest stays Pending for the capture.
    room = _room_for_one_cpu_pods(karpenter.api)
    assert room == 3
    karpenter.api.patch("NodePool", "default", {"spec": {"limits": {"cpu": "0"}}})
    karpenter.api.patch("Deployment", "web", {"spec": {"replicas": 12}})

    done = scale_up(
        karpenter,
        "web",
        pending=12 - 6 - room,
        bound=12,
        release=lambda: karpenter.api.patch(
            "NodePool", "default", {"spec": {"limits": {"cpu": "1000"}}}
        ),
        before=first.claims,
    )
    record.karpenter(done)

    assert done.claim_zones == {A: 1, B: 1, C: 1}
    assert done.pod_zones == {A: 4, B: 4, C: 4}
    assert_predicted(prediction(done, pools), done)


def test_a_pool_limited_to_two_zones_spreads_over_those_two_only(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    pools = [node_pool("two-zones", [A, B])]
    karpenter.api.create(deployment("web", 4, [spread(ZONE_LABEL)]))

    done = scale_up(
        karpenter, "web", pending=4, bound=4, release=lambda: _create_all(karpenter, pools)
    )
    record.karpenter(done)

    assert set(done.claim_zones) == {A, B}
    assert done.pod_zones == {A: 2, B: 2}
    assert_predicted(prediction(done, pools), done)


def test_a_pool_without_zones_spreads_over_every_zone_the_offerings_have(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    # The domains come from the NodePool and the instance types' offerings, not from Nodes:
    # there are none yet.
    pools = [node_pool("any-zone", None)]
    karpenter.api.create(deployment("web", 4, [spread(ZONE_LABEL)]))

    done = scale_up(
        karpenter, "web", pending=4, bound=4, release=lambda: _create_all(karpenter, pools)
    )
    record.karpenter(done)

    assert done.claim_zones == {A: 1, B: 1, C: 1, D: 1}
    assert done.pod_zones == {A: 1, B: 1, C: 1, D: 1}
    assert_predicted(prediction(done, pools), done)


def test_a_hostname_spread_gets_one_node_per_pod_from_karpenter_where_kube_scheduler_needs_fewer(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    pools = [node_pool("default", [A, B, C])]
    karpenter.api.create(deployment("web", 4, [spread(HOSTNAME_LABEL)]))

    done = scale_up(
        karpenter, "web", pending=4, bound=4, release=lambda: _create_all(karpenter, pools)
    )
    record.karpenter(done)

    # Karpenter takes a hostname spread's global minimum as 0 always (it could add one
    # more empty node), so no new node gets more than maxSkew pods: 4 pods, 4 nodes.
    assert len(done.claims) == 4
    bound_to = Counter(
        p["spec"]["nodeName"] for p in karpenter.api.list("Pod", "default", "app=web")
    )
    assert sorted(bound_to.values()) == [1, 1, 1, 1]
    # Its hostname domain is the NodeClaim's name: the Node carries that as its hostname
    # label although the Node's own name differs.
    nodes = {n["metadata"]["name"]: n for n in karpenter.api.list("Node")}
    for claim in done.claims:
        assert nodes[claim.node]["metadata"]["labels"][HOSTNAME_LABEL] == claim.name
        assert claim.node != claim.name
    # kube-scheduler alone would accept 3 nodes (2/1/1 has skew 1 over the nodes that
    # exist); topospread's Karpenter mode applies Karpenter's rule and predicts 4 nodes of
    # one pod. The zones of these claims are not compared: the spread leaves them free,
    # and the KWOK provider draws one at random among the cheapest offerings.
    scale = prediction(done, pools)
    assert scale["nodes"] == 4
    assert sorted(len(n["pods"]) for n in scale["newNodes"]) == [1, 1, 1, 1]


def test_min_domains_beyond_the_pools_zones_caps_each_zone_at_max_skew(
    karpenter: Autoscaler, record: Record, prediction: Callable[..., dict[str, Any]]
) -> None:
    # 3 zones < minDomains 4: the global minimum counts as 0, so no zone may hold more than
    # maxSkew (1) pod. kube-scheduler binds 3; 2 stay Pending, and Karpenter, which applies
    # the same rule to the domains its NodePool allows, adds no node for them.
    pools = [node_pool("default", [A, B, C])]
    karpenter.api.create(deployment("web", 5, [spread(ZONE_LABEL, min_domains=4)]))

    done = scale_up(
        karpenter, "web", pending=5, bound=3, release=lambda: _create_all(karpenter, pools)
    )
    record.karpenter(done)

    assert done.claim_zones == {A: 1, B: 1, C: 1}
    assert done.pod_zones == {A: 1, B: 1, C: 1}
    assert done.still_pending == 2
    assert_predicted(prediction(done, pools), done)


# -- helpers -------------------------------------------------------------------------------------


def _create_all(karpenter: Autoscaler, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        karpenter.api.create(obj)


def _room_for_one_cpu_pods(api: Api) -> int:
    """How many more 1-CPU pods the Nodes hold, by allocatable CPU less bound requests."""
    used: Counter[str] = Counter()
    for pod in api.list("Pod"):
        node = pod["spec"].get("nodeName")
        if node:
            for container in pod["spec"]["containers"]:
                cpu = container.get("resources", {}).get("requests", {}).get("cpu", "0")
                used[node] += _millicores(cpu)
    return sum(
        (_millicores(n["status"]["allocatable"]["cpu"]) - used[n["metadata"]["name"]]) // 1000
        for n in api.list("Node")
    )


def _millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)
