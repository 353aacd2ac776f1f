"""One scheduling loop: the same pods through the loop in memory and through the live
scheduler on the real control plane end in the same places, with the same Events and
the same PodScheduled conditions.

The in-memory run (:class:`MemoryScheduler`, the loop ``simulate`` and the planners use)
starts from the cluster as topospread reads it live just before the scheduler starts —
every Node of the shared test cluster, so "0/N nodes are available" counts the same N —
and takes the pods in the order the live informer lists them (by name). Both draw among
tied nodes with the seed the live fixture gives (1).
"""

from __future__ import annotations

import random
from typing import Any

from topospread.client.config import connect
from topospread.client.live import read_live
from topospread.client.objects import cluster_from_items, decode_stored
from topospread.engine.loop import MemoryScheduler
from topospread.model.objects import Pod
from topospread.plugins.registry import registry
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import create_all, list_pods, list_raw, wait_for

from .conftest import scheduler_options

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def pending_pods(run: str, namespace: str, scheduler: str) -> list[dict[str, Any]]:
    marker = {"topospread.dev/test": run}
    pods: list[dict[str, Any]] = []

    def add(name: str, labels: dict[str, str], cpu: str, **spec: Any) -> None:
        item = pod(name, namespace, labels, cpu=cpu)
        item["spec"].update(schedulerName=scheduler, nodeSelector=dict(marker), **spec)
        pods.append(item)

    web = {"app": "web"}
    spread = [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
    ]
    for constraint in spread:
        constraint["labelSelector"] = {"matchLabels": web}
    for i in range(9):
        add(f"a-web-{i}", web, "500m", topologySpreadConstraints=spread)
    for i in range(2):
        add(f"b-big-{i}", {"app": "big"}, "3")  # more CPU than any node has
    add("c-gated", {"app": "gated"}, "100m", schedulingGates=[{"name": "example.com/hold"}])
    add("d-nowhere", {"app": "nowhere"}, "100m")
    pods[-1]["spec"]["nodeSelector"] = {"topospread.dev/test": f"{run}-absent"}
    return pods


def live_events(kube_connection: Any, namespace: str) -> set[tuple[str, str, str, str]]:
    events = list_raw(kube_connection, f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    return {
        (e["regarding"]["name"], e["type"], e["reason"], e.get("note", ""))
        for e in events
        if e.get("reportingController", "").startswith("topospread")
        or e.get("reason") in ("Scheduled", "FailedScheduling")
    }


def test_the_loop_in_memory_and_the_live_scheduler_decide_alike(
    control_plane, run_scheduler, scheduler_name, unique_name
):
    connection = connect(control_plane.admin_kubeconfig)
    kube = Kube(connection)
    run = unique_name("loop")
    namespace = run
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    nodes = []
    for i in range(6):
        item = node(f"{run}-n{i}", f"{run}-z{i % 3}", cpu="2")
        item["metadata"]["labels"]["topospread.dev/test"] = run
        nodes.append(item)
    create_all(kube, nodes)
    create_all(kube, pending_pods(run, namespace, scheduler_name))

    # In memory: the cluster as read live, the pending pods in the informer's order.
    read = read_live(control_plane.admin_kubeconfig)
    cluster, _ = cluster_from_items(read.items, read.source)
    ours = [i for i in read.items if (i.get("metadata") or {}).get("namespace") == namespace]
    decoded, _ = decode_stored([i for i in ours if i.get("kind") == "Pod"], read.source)
    mine = sorted((p for p in decoded if isinstance(p, Pod)), key=lambda p: p.name)
    assert len(mine) == 13
    configuration = scheduler_options(scheduler_name).configuration
    memory = MemoryScheduler(
        configuration,
        cluster.snapshot(),
        cluster.objects,
        registry=registry(),
        tie_break=random.Random(1),
    )
    for item in mine:
        memory.add(item)
    memory.run()
    expected_events = {(e.pod.split("/")[1], e.type, e.reason, e.message) for e in memory.events}
    assert len(memory.placements) == 9
    assert memory.pending()[f"{namespace}/c-gated"] == (
        "waiting for scheduling gates: [example.com/hold]"
    )

    # Live: the same pods, the same seed.
    run_scheduler(control_plane.admin_kubeconfig, scheduler_name)
    wait_for(
        lambda: live_events(connection, namespace) >= expected_events,
        60,
        what="the live scheduler's Events",
    )
    live = {p["metadata"]["name"]: p for p in list_pods(connection, namespace)}
    placements = {
        f"{namespace}/{name}": p["spec"]["nodeName"]
        for name, p in live.items()
        if p["spec"].get("nodeName")
    }
    assert placements == memory.placements
    assert live_events(connection, namespace) == expected_events
    conditions = {}
    for name, item in live.items():
        for condition in (item.get("status") or {}).get("conditions") or ():
            if condition["type"] == "PodScheduled" and condition["status"] == "False":
                conditions[f"{namespace}/{name}"] = (condition["reason"], condition["message"])
    # The API server, not the scheduler, marks the gated pod (SchedulingGated).
    assert conditions.pop(f"{namespace}/c-gated")[0] == "SchedulingGated"
    assert conditions == memory.conditions
    assert set(memory.conditions) == {
        f"{namespace}/b-big-0",
        f"{namespace}/b-big-1",
        f"{namespace}/d-nowhere",
    }
