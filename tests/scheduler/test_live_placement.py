"""``topospread scheduler`` on the shared real control plane: Deployments spread as asked.

The session's cluster is shared with other tests, so this scheduler has its own
schedulerName, and the test's Nodes and pods carry a label of their own (the pods select
it with a nodeSelector, which also keeps other tests' Nodes out of every spread domain).
"""

from __future__ import annotations

import urllib.request
from collections import Counter
from typing import Any

from topospread.client.config import connect
from topospread.testing.live import Kube, node
from topospread.testing.scheduling import (
    create_all,
    list_pods,
    list_raw,
    spread_violations,
    wait_for,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def deployment(
    name: str,
    namespace: str,
    replicas: int,
    scheduler: str,
    marker: dict[str, str],
    spread: list[dict[str, Any]],
) -> dict[str, Any]:
    labels = {"app": name}
    for constraint in spread:
        constraint.setdefault("labelSelector", {"matchLabels": labels})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": scheduler,
                    "nodeSelector": marker,
                    "topologySpreadConstraints": spread,
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


def test_deployments_spread_over_hundreds_of_nodes(
    control_plane, run_scheduler, scheduler_name, unique_name
):
    kube = Kube(connect(control_plane.admin_kubeconfig))
    run = unique_name("spread")
    marker = {"topospread.dev/test": run}
    zones = [f"{run}-z{k}" for k in range(4)]
    nodes = []
    for i in range(240):
        item = node(f"{run}-n{i}", zones[i % 4])
        item["metadata"]["labels"].update(marker)
        nodes.append(item)
    create_all(kube, nodes, workers=32)
    namespace = run
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    app = run_scheduler(control_plane.admin_kubeconfig, scheduler_name)

    def hard(key: str, skew: int, **more: Any) -> dict[str, Any]:
        return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", **more}

    workloads = [
        # Zone and hostname, with the rollout-safe matchLabelKeys.
        deployment(
            "web",
            namespace,
            60,
            scheduler_name,
            marker,
            [hard(ZONE, 1, matchLabelKeys=["pod-template-hash"]), hard(HOST, 1)],
        ),
        # minDomains above the 4 zones: the global minimum is 0, so at most 2 per zone.
        deployment("api", namespace, 8, scheduler_name, marker, [hard(ZONE, 2, minDomains=6)]),
        # Hostname hard, zone soft.
        deployment(
            "db",
            namespace,
            30,
            scheduler_name,
            marker,
            [
                hard(HOST, 1),
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
            ],
        ),
    ]
    create_all(kube, workloads)
    admin = connect(control_plane.admin_kubeconfig)

    def all_bound() -> bool:
        pods = list_pods(admin, namespace)
        return len(pods) == 98 and all(p["spec"].get("nodeName") for p in pods)

    wait_for(all_bound, 120, 0.5, "every pod of the Deployments to be bound")
    pods = list_pods(admin, namespace)
    ours = [
        n
        for n in list_raw(admin, "/api/v1/nodes")
        if (n["metadata"].get("labels") or {}).get("topospread.dev/test") == run
    ]
    assert spread_violations(pods, ours) == []
    node_zone = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in ours}
    api_zones = Counter(
        node_zone[p["spec"]["nodeName"]] for p in pods if p["metadata"]["labels"]["app"] == "api"
    )
    assert sorted(api_zones.values()) == [2, 2, 2, 2]
    web_zones = Counter(
        node_zone[p["spec"]["nodeName"]] for p in pods if p["metadata"]["labels"]["app"] == "web"
    )
    assert sorted(web_zones.values()) == [15, 15, 15, 15]
    web_hosts = Counter(
        p["spec"]["nodeName"] for p in pods if p["metadata"]["labels"]["app"] == "web"
    )
    assert max(web_hosts.values()) == 1
    # Each pod's PodScheduled condition is True (set by the binding), no failures needed.
    for pod in pods:
        conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or ()}
        assert conditions.get("PodScheduled") == "True"
    # The endpoints: ready as leader, kube-scheduler's metric names.
    base = f"http://127.0.0.1:{app.port}"
    # As the apiserver's health handlers: "ok", a listing with ?verbose, one check by path.
    with urllib.request.urlopen(f"{base}/readyz", timeout=5) as answer:
        assert (answer.status, answer.read()) == (200, b"ok")
    with urllib.request.urlopen(f"{base}/readyz?verbose", timeout=5) as answer:
        listing = answer.read().decode()
    assert "[+]leaderElection ok" in listing
    assert "state: leader" in listing
    assert listing.endswith("readyz check passed\n")
    with urllib.request.urlopen(f"{base}/livez/leaderElection", timeout=5) as answer:
        assert answer.read() == b"ok"
    head = urllib.request.Request(f"{base}/metrics", method="HEAD")
    with urllib.request.urlopen(head, timeout=5) as answer:
        assert (answer.status, answer.read()) == (200, b"")
    with urllib.request.urlopen(f"http://127.0.0.1:{app.port}/metrics", timeout=5) as answer:
        metrics = answer.read().decode()
    assert (
        f'scheduler_schedule_attempts_total{{profile="{scheduler_name}",result="scheduled"}} 98.0'
        in metrics
    )
    assert 'scheduler_pending_pods{queue="active"} 0.0' in metrics
    assert "scheduler_scheduling_attempt_duration_seconds_bucket" in metrics
    assert "scheduler_pod_scheduling_sli_duration_seconds_count" in metrics
    assert 'topospread_scheduler_state{state="leader"} 1.0' in metrics
