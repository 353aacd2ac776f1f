"""Preemption carried out on the shared real control plane, as DefaultPreemption does it.

Two full Nodes; the pods of node A are covered by a PodDisruptionBudget that allows no
disruption (minAvailable 3 of 3; the disruption controller computes its status), those of
node B are not. A higher-priority pod that fits nowhere is nominated to B (the PDB is
honoured), exactly the victims it needs on B get the DisruptionTarget condition and are
deleted (a finalizer holds them here, so the condition can be read), and once they are
gone the pod is bound to B.
"""

from __future__ import annotations

import json
from typing import Any

from topospread.client.config import connect
from topospread.client.transport import Request
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import list_pods, list_raw, wait_for

FINALIZER = "topospread.dev/hold"


def post(admin, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = admin.transport.send(Request("POST", path, body=json.dumps(body).encode()))
    assert answer.status in (200, 201), answer.data
    return json.loads(answer.data)


def test_preemption_honours_pdbs_and_marks_victims(
    control_plane, run_scheduler, scheduler_name, unique_name
):
    kube = Kube(connect(control_plane.admin_kubeconfig))
    admin = connect(control_plane.admin_kubeconfig)
    run = unique_name("preempt")
    marker = {"topospread.dev/test": run}
    namespace = run
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    high = f"{run}-high"
    post(
        admin,
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": high},
            "value": 1000,
        },
    )
    for side in ("a", "b"):
        item = node(f"{run}-{side}", f"{run}-z", cpu="1")
        item["metadata"]["labels"].update(marker)
        kube.create(item)
        for i in range(3):
            low = pod(
                f"{side}{i}", namespace, {"group": side}, node_name=f"{run}-{side}", cpu="300m"
            )
            low["metadata"]["finalizers"] = [FINALIZER]
            kube.create(low)
    post(
        admin,
        f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "keep-a", "namespace": namespace},
            "spec": {"minAvailable": 3, "selector": {"matchLabels": {"group": "a"}}},
        },
    )

    def pdb_observed() -> bool:
        items = list_raw(admin, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets")
        return bool(items) and items[0].get("status", {}).get("observedGeneration") == 1

    wait_for(pdb_observed, 60, 0.3, "the disruption controller to compute the PDB status")
    app = run_scheduler(control_plane.admin_kubeconfig, scheduler_name)
    preemptor = pod("urgent", namespace, {"app": "urgent"}, cpu="700m")
    preemptor["spec"].update(
        schedulerName=scheduler_name, priorityClassName=high, nodeSelector=marker
    )
    kube.create(preemptor)

    def by_name() -> dict[str, dict[str, Any]]:
        return {p["metadata"]["name"]: p for p in list_pods(admin, namespace)}

    wait_for(
        lambda: by_name()["urgent"]["status"].get("nominatedNodeName") == f"{run}-b",
        60,
        0.3,
        "the preemptor to be nominated to node b",
    )
    wait_for(
        lambda: sum(1 for p in by_name().values() if p["metadata"].get("deletionTimestamp")) == 2,
        30,
        0.3,
        "two victims to be deleted",
    )
    pods = by_name()
    victims = [p for p in pods.values() if p["metadata"].get("deletionTimestamp")]
    assert {p["metadata"]["labels"]["group"] for p in victims} == {"b"}
    for victim in victims:
        condition = next(
            c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget"
        )
        assert condition["status"] == "True"
        assert condition["reason"] == "PreemptionByScheduler"
        assert condition["message"] == (
            f"{scheduler_name}: preempting to accommodate a higher priority pod"
        )
    assert pods["urgent"]["spec"].get("nodeName") is None
    scheduled = next(
        c for c in pods["urgent"]["status"]["conditions"] if c["type"] == "PodScheduled"
    )
    assert scheduled["reason"] == "Unschedulable"
    assert app.metrics.preemption_attempts._value.get() >= 1
    # The victims go (the finalizer released, and the termination a kubelet would
    # confirm forced): the room is the preemptor's.
    for victim in victims:
        path = f"/api/v1/namespaces/{namespace}/pods/{victim['metadata']['name']}"
        answer = admin.transport.send(
            Request(
                "PATCH",
                path,
                body=json.dumps({"metadata": {"finalizers": None}}).encode(),
                content_type="application/merge-patch+json",
            )
        )
        assert answer.status == 200
        answer = admin.transport.send(
            Request("DELETE", path, body=json.dumps({"gracePeriodSeconds": 0}).encode())
        )
        assert answer.status in (200, 404)
    wait_for(
        lambda: by_name()["urgent"]["spec"].get("nodeName") == f"{run}-b",
        60,
        0.3,
        "the preemptor to be bound to node b",
    )
    for name, item in by_name().items():
        if item["metadata"].get("finalizers"):
            admin.transport.send(
                Request(
                    "PATCH",
                    f"/api/v1/namespaces/{namespace}/pods/{name}",
                    body=json.dumps({"metadata": {"finalizers": None}}).encode(),
                    content_type="application/merge-patch+json",
                )
            )
