"""``topospread audit`` on a live cluster: what the controller manager did shows up.

A Deployment spread by zone (maxSkew 1) is placed 2/2/2 over three zones, then scaled to 3
through the API: kube-controller-manager's ReplicaSet controller picks the victims by its
own ranking, blind to topology (pods doubled up on a node go first), and the spread breaks.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.testing.live import node

pytestmark = pytest.mark.cluster

ZONE = "topology.kubernetes.io/zone"


def _deployment(name: str, namespace: str, replicas: int, selector_app: str) -> dict:
    # The session's cluster is shared: the pods select this module's nodes, so other tests'
    # zones are no domains of theirs (nodeAffinityPolicy Honor).
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {"audit-story": namespace},
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": selector_app}},
                            "matchLabelKeys": ["pod-template-hash"],
                        }
                    ],
                },
            },
        },
    }


def _pods(kube, namespace: str, app: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 30
    while True:
        pods = [
            p
            for p in kube.list("Pod", namespace, f"app={app}")
            if not p["metadata"].get("deletionTimestamp")
        ]
        if len(pods) == count or time.monotonic() > deadline:
            return sorted(pods, key=lambda p: p["metadata"]["name"])
        time.sleep(0.2)


def _audit(admin_kubeconfig, namespace: str) -> dict:
    result = CliRunner().invoke(
        cli,
        [
            "audit",
            "-n",
            namespace,
            "--kubeconfig",
            str(admin_kubeconfig),
            "-o",
            "json",
            "--fail-on",
            "none",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def zones(kube):
    suffix = os.urandom(3).hex()
    namespace = f"audit-{suffix}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    nodes = {z: [f"audit-{suffix}-{z}{i}" for i in (1, 2)] for z in "abc"}
    for zone, names in nodes.items():
        for name in names:
            story_node = node(name, f"zone-{suffix}-{zone}")
            story_node["metadata"]["labels"]["audit-story"] = namespace
            kube.create(story_node)
    return namespace, nodes


def test_a_deployment_scaled_down_by_the_controller_manager_shows_up_as_skewed(
    kube, zones, admin_kubeconfig
) -> None:
    namespace, nodes = zones
    kube.create(_deployment("web", namespace, 6, "web"))
    pods = _pods(kube, namespace, "web", 6)
    assert len(pods) == 6
    # Zones a and b get two pods on one node each, zone c one pod on each of its nodes.
    targets = [nodes["a"][0], nodes["a"][0], nodes["b"][0], nodes["b"][0], *nodes["c"]]
    for pod, target in zip(pods, targets, strict=True):
        kube.bind(pod["metadata"]["name"], target, namespace)

    before = _audit(admin_kubeconfig, namespace)
    (spread,) = before["workloads"]
    assert spread["constraints"][0]["skew"] == 0
    assert not [f for f in before["findings"] if f["rule"] == "skew-over-max"]

    kube.patch("Deployment", "web", {"spec": {"replicas": 3}}, namespace)
    remaining = _pods(kube, namespace, "web", 3)
    assert len(remaining) == 3
    # The victims were the doubled-up pods: zone c keeps both of its pods.
    assert sorted(p["spec"]["nodeName"] for p in remaining).count(nodes["c"][0]) == 1

    after = _audit(admin_kubeconfig, namespace)
    (spread,) = after["workloads"]
    (constraint,) = spread["constraints"]
    assert constraint["skew"] == 2
    assert constraint["satisfied"] is False
    assert sorted(constraint["domainCounts"].values()) == [0, 1, 2]
    (finding,) = [f for f in after["findings"] if f["rule"] == "skew-over-max"]
    assert finding["object"] == f"Deployment/{namespace}/web"
    assert finding["severity"] == "error"


def test_a_deployment_whose_selector_misses_its_own_pods_is_flagged(
    kube, zones, admin_kubeconfig
) -> None:
    namespace, _ = zones
    kube.create(_deployment("ghost", namespace, 2, "not-ghost"))
    report = _audit(admin_kubeconfig, namespace)
    ghosts = [f for f in report["findings"] if f["rule"] == "ghost-selector"]
    assert [f["object"] for f in ghosts] == [f"Deployment/{namespace}/ghost"]
    assert ghosts[0]["fieldPath"] == "spec.template.spec.topologySpreadConstraints[0]"
