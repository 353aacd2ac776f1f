"""``topospread scheduler`` beside the real kube-scheduler v1.37.1 on one API server.

Each scheduler has its own profile name and namespace; both place the same Deployments on
the same Nodes. The spreads satisfy the same constraints with the same per-zone counts, and
a pod that fits nowhere gets the same FailedScheduling Event and PodScheduled condition
from both, word for word (and `explain` on the live cluster agrees); both place it once a
big enough Node is added.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from topospread.api import explain_pod
from topospread.client.config import connect
from topospread.scheduler.app import SchedulerApp
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import (
    create_all,
    list_pods,
    list_raw,
    spread_violations,
    wait_for,
)

from .conftest import scheduler_options
from .test_live_placement import deployment

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SIDES = {"kube": "kube-side", "topo": "topo-side"}


@pytest.fixture(scope="module")
def plane(control_plane_binaries) -> Iterator[ControlPlane]:
    with ControlPlane(control_plane_binaries) as cp:
        yield cp


@pytest.fixture(scope="module")
def schedulers(plane: ControlPlane) -> Iterator[None]:
    config = plane.workdir / "kube-side.json"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": str(plane.admin_kubeconfig)},
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": SIDES["kube"]}],
            }
        )
    )
    log = (plane.workdir / "kube-side.log").open("wb")
    process = subprocess.Popen(
        [str(plane.binaries / "kube-scheduler"), f"--config={config}", "--secure-port=0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    app = SchedulerApp(
        connect(plane.admin_kubeconfig).transport,
        scheduler_options(SIDES["topo"]),
        port=None,
        seed=3,
    )
    app.start()
    try:
        wait_for(lambda: app.state == "leader", 60, what="topospread to sync")
        yield
    finally:
        app.stop(drain_timeout=10)
        process.terminate()
        process.wait(20)
        log.close()


@pytest.fixture(scope="module")
def kube(plane: ControlPlane) -> Kube:
    return Kube(connect(plane.admin_kubeconfig))


def test_same_workloads_same_spread(plane, schedulers, kube, unique_name):
    run = unique_name("beside")
    marker = {"topospread.dev/test": run}
    nodes = []
    for i in range(60):
        item = node(f"{run}-n{i}", f"{run}-z{i % 3}")
        item["metadata"]["labels"].update(marker)
        nodes.append(item)
    create_all(kube, nodes, workers=32)
    admin = connect(plane.admin_kubeconfig)
    results: dict[str, list[dict[str, Any]]] = {}
    for side, name in SIDES.items():
        namespace = f"{run}-{side}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        hard = {"whenUnsatisfiable": "DoNotSchedule"}
        create_all(
            kube,
            [
                deployment(
                    "web",
                    namespace,
                    30,
                    name,
                    marker,
                    [
                        {"maxSkew": 1, "topologyKey": ZONE, **hard},
                        {"maxSkew": 1, "topologyKey": HOST, **hard},
                    ],
                ),
                deployment(
                    "api",
                    namespace,
                    6,
                    name,
                    marker,
                    [{"maxSkew": 2, "topologyKey": ZONE, "minDomains": 4, **hard}],
                ),
            ],
        )
    for side in SIDES:
        namespace = f"{run}-{side}"

        def bound(ns: str = namespace) -> bool:
            pods = list_pods(admin, ns)
            return len(pods) == 36 and all(p["spec"].get("nodeName") for p in pods)

        wait_for(bound, 120, 0.5, f"the {side} side's pods to be bound")
        results[side] = list_pods(admin, namespace)
    ours = [
        n
        for n in list_raw(admin, "/api/v1/nodes")
        if (n["metadata"].get("labels") or {}).get("topospread.dev/test") == run
    ]
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in ours}
    counts = {}
    for side, pods in results.items():
        assert spread_violations(pods, ours) == [], side
        counts[side] = {
            app: sorted(
                Counter(
                    zone_of[p["spec"]["nodeName"]]
                    for p in pods
                    if p["metadata"]["labels"]["app"] == app
                ).values()
            )
            for app in ("web", "api")
        }
    assert counts["topo"] == counts["kube"] == {"web": [10, 10, 10], "api": [2, 2, 2]}


def failed_scheduling(admin, namespace: str, name: str) -> list[str]:
    events = list_raw(admin, f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    return [
        e["note"]
        for e in events
        if e["regarding"]["name"] == name and e["reason"] == "FailedScheduling"
    ]


def test_unschedulable_pod_same_event_and_condition_then_bound(
    plane, schedulers, kube, unique_name
):
    run = unique_name("nofit")
    admin = connect(plane.admin_kubeconfig)
    for side, name in SIDES.items():
        namespace = f"{run}-{side}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        item = pod("big", namespace, {"app": "big"}, cpu="100")
        item["spec"]["schedulerName"] = name
        kube.create(item)
    notes: dict[str, str] = {}
    conditions: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        namespace = f"{run}-{side}"
        wait_for(
            lambda ns=namespace: failed_scheduling(admin, ns, "big"),
            60,
            0.3,
            f"the {side} side's FailedScheduling event",
        )
        notes[side] = failed_scheduling(admin, namespace, "big")[0]

        def condition(ns: str = namespace) -> dict[str, Any] | None:
            item = list_pods(admin, ns)[0]
            return next(
                (c for c in item["status"].get("conditions") or () if c["type"] == "PodScheduled"),
                None,
            )

        wait_for(lambda c=condition: c() is not None, 30, 0.3, "the PodScheduled condition")
        conditions[side] = condition()
    assert notes["topo"] == notes["kube"]
    assert notes["topo"].startswith("0/")
    assert "Insufficient cpu" in notes["topo"]
    assert "preemption: " in notes["topo"]
    for side in SIDES:
        assert conditions[side]["status"] == "False"
        assert conditions[side]["reason"] == "Unschedulable"
        assert conditions[side]["message"] == notes[side]
    # `topospread explain` on the live cluster gives the same reasoning.
    explanation = explain_pod(
        f"{run}-topo/big",
        kubeconfig=plane.admin_kubeconfig,
        config=scheduler_options(SIDES["topo"]).configuration,
    )
    assert explanation.message == notes["topo"]
    kube.create(node(f"{run}-huge", f"{run}-z", cpu="256", memory="512Gi"))
    for side in SIDES:
        namespace = f"{run}-{side}"
        wait_for(
            lambda ns=namespace: list_pods(admin, ns)[0]["spec"].get("nodeName") == f"{run}-huge",
            60,
            0.3,
            f"the {side} side to bind the pod",
        )


def local_volume(name: str, zone: str, size: str, storage_class: str) -> dict[str, Any]:
    """A local PersistentVolume pinned to one zone, as a static provisioner creates it."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
        },
    }


def claim(name: str, namespace: str, storage_class: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
            **spec,
        },
    }


def test_claims_bound_alike_and_a_volume_conflict_reported_alike(
    plane, schedulers, kube, unique_name
):
    run = unique_name("volumes")
    marker = {"topospread.dev/test": run}
    zones = [f"{run}-z0", f"{run}-z1"]
    nodes = []
    for i in range(4):
        item = node(f"{run}-n{i}", zones[i % 2])
        item["metadata"]["labels"].update(marker)
        nodes.append(item)
    create_all(kube, nodes)
    admin = connect(plane.admin_kubeconfig)
    for side in SIDES:
        namespace = f"{run}-{side}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        # One class per side: a claim binds only to its own side's volumes.
        storage_class = f"{namespace}-local"
        kube.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": storage_class},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
        # Two volumes fit the claim; the binder takes the smaller one, in zone 1.
        kube.create(local_volume(f"{namespace}-big", zones[0], "5Gi", storage_class))
        kube.create(local_volume(f"{namespace}-small", zones[1], "2Gi", storage_class))
        # A volume in a zone without nodes, pre-bound to its claim.
        kube.create(local_volume(f"{namespace}-away", f"{run}-nowhere", "1Gi", storage_class))
        kube.create(claim("data", namespace, storage_class))
        kube.create(claim("pinned", namespace, storage_class, volumeName=f"{namespace}-away"))
        # The PV controller binds the pre-bound pair before any pod asks for it.
        wait_for(
            lambda ns=namespace: (
                kube.get("PersistentVolumeClaim", "pinned", ns).get("status", {}).get("phase")
                == "Bound"
            ),
            60,
            0.3,
            "the pre-bound claim to be bound",
        )
    for side, name in SIDES.items():
        namespace = f"{run}-{side}"
        for pod_name, claim_name in (("db", "data"), ("stuck", "pinned")):
            item = pod(pod_name, namespace, {"app": pod_name})
            item["spec"]["schedulerName"] = name
            item["spec"]["nodeSelector"] = marker
            item["spec"]["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
            ]
            kube.create(item)
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in nodes}
    landed: dict[str, tuple[str, str]] = {}
    notes: dict[str, str] = {}
    for side in SIDES:
        namespace = f"{run}-{side}"

        def db_bound(ns: str = namespace) -> dict[str, Any] | None:
            found = kube.get("Pod", "db", ns)
            return found if found["spec"].get("nodeName") else None

        wait_for(lambda f=db_bound: f() is not None, 90, 0.3, f"the {side} side's db pod")
        data = kube.get("PersistentVolumeClaim", "data", namespace)
        assert data["status"]["phase"] == "Bound"
        node_name = db_bound()["spec"]["nodeName"]  # type: ignore[index]
        landed[side] = (data["spec"]["volumeName"].removeprefix(namespace), zone_of[node_name])
        wait_for(
            lambda ns=namespace: failed_scheduling(admin, ns, "stuck"),
            60,
            0.3,
            f"the {side} side's FailedScheduling event for the pinned claim",
        )
        notes[side] = failed_scheduling(admin, namespace, "stuck")[0]
    assert landed["topo"] == landed["kube"], landed
    assert "node(s) didn't match PersistentVolume's node affinity" in notes["topo"]
    assert notes["topo"] == notes["kube"]
