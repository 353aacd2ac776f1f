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


def _dra_objects(run: str, side: str, zones: list[str]) -> list[dict[str, Any]]:
    """One side's devices: a GPU per node (an A100 on n0, T4s elsewhere) and a pool of
    three NICs shared by the nodes of zone 1, each under the side's own driver."""
    driver = f"{side}-{run}.example.com"
    prefix = f"{side}-{run}"

    def device(name: str, kind: str, model: str) -> dict[str, Any]:
        attributes = {"kind": {"string": kind}, "model": {"string": model}}
        return {"name": name, "attributes": attributes}

    objects: list[dict[str, Any]] = []
    for kind, config in (
        ("gpu", [{"opaque": {"driver": driver, "parameters": {"from": "class"}}}]),
        ("nic", []),
    ):
        spec: dict[str, Any] = {
            "selectors": [
                {
                    "cel": {
                        "expression": f'device.driver == "{driver}" && '
                        f'device.attributes["{driver}"].kind == "{kind}"'
                    }
                }
            ]
        }
        if config:
            spec["config"] = config
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": f"{prefix}-{kind}"},
                "spec": spec,
            }
        )
    gpus = {0: [("gpu-0", "a100")], 1: [("gpu-0", "t4"), ("gpu-1", "t4")], 2: [("gpu-0", "t4")]}
    for index, devices in gpus.items():
        node_name = f"{run}-n{index}"
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{prefix}-n{index}"},
                "spec": {
                    "driver": driver,
                    "nodeName": node_name,
                    "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [device(name, "gpu", model) for name, model in devices],
                },
            }
        )
    objects.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{prefix}-nics"},
            "spec": {
                "driver": driver,
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": [zones[1]]},
                                {"key": "topospread.dev/test", "operator": "In", "values": [run]},
                            ]
                        }
                    ]
                },
                "pool": {"name": "zone-1-nics", "generation": 1, "resourceSliceCount": 1},
                "devices": [device(f"nic-{i}", "nic", "x") for i in range(3)],
            },
        }
    )
    return objects


def _claim_spec(run: str, side: str, kind: str) -> dict[str, Any]:
    prefix = f"{side}-{run}"
    driver = f"{side}-{run}.example.com"
    if kind == "a100":
        return {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": f"{prefix}-gpu",
                            "selectors": [
                                {
                                    "cel": {
                                        "expression": (
                                            f'device.attributes["{driver}"].model == "a100"'
                                        )
                                    }
                                }
                            ],
                        },
                    }
                ],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {"driver": driver, "parameters": {"from": "claim"}},
                    }
                ],
            }
        }
    if kind == "nics-and-gpu":
        return {
            "devices": {
                "requests": [
                    {
                        "name": "nic",
                        "firstAvailable": [
                            {"name": "two", "deviceClassName": f"{prefix}-nic", "count": 2},
                            {"name": "one", "deviceClassName": f"{prefix}-nic"},
                        ],
                    },
                    {"name": "gpu", "exactly": {"deviceClassName": f"{prefix}-gpu"}},
                ],
                "config": [
                    {
                        "requests": ["nic/one"],
                        "opaque": {"driver": driver, "parameters": {"n": "1"}},
                    },
                    {
                        "requests": ["nic/two"],
                        "opaque": {"driver": driver, "parameters": {"n": "2"}},
                    },
                ],
            }
        }
    return {
        "devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": f"{prefix}-nic"}}]}
    }


def _normalized(obj: Any, side: str, run: str) -> Any:
    text = json.dumps(obj, sort_keys=True).replace(f"{side}-{run}", "SIDE")
    return json.loads(text)


def test_resource_claims_allocated_and_reserved_alike(plane, schedulers, kube, unique_name):
    run = unique_name("dra")
    marker = {"topospread.dev/test": run}
    zones = [f"{run}-z0", f"{run}-z1"]
    nodes = []
    for i, zone in enumerate((zones[0], zones[0], zones[1])):
        item = node(f"{run}-n{i}", zone)
        item["metadata"]["labels"].update(marker)
        nodes.append(item)
    create_all(kube, nodes)
    admin = connect(plane.admin_kubeconfig)
    pods = (
        # (pod, claim kind, from a template): each waits for the one before.
        ("trainer", "a100", True),
        ("router", "nics-and-gpu", False),
        ("probe", "one-nic", False),
        ("second-trainer", "a100", True),
    )
    for side in SIDES:
        namespace = f"{run}-{side}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for obj in _dra_objects(run, side, zones):
            kube.create(obj)
        kube.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "a100", "namespace": namespace},
                "spec": {"spec": _claim_spec(run, side, "a100")},
            }
        )
        for pod_name, kind, _ in pods[1:3]:
            kube.create(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": pod_name, "namespace": namespace},
                    "spec": _claim_spec(run, side, kind),
                }
            )
    placed: dict[str, dict[str, str | None]] = {side: {} for side in SIDES}
    for pod_name, _, templated in pods:
        for side, name in SIDES.items():
            namespace = f"{run}-{side}"
            item = pod(pod_name, namespace, {"app": pod_name})
            item["spec"]["schedulerName"] = name
            item["spec"]["nodeSelector"] = marker
            reference = (
                {"resourceClaimTemplateName": "a100"}
                if templated
                else {"resourceClaimName": pod_name}
            )
            item["spec"]["resourceClaims"] = [{"name": "devices", **reference}]
            item["spec"]["containers"][0]["resources"]["claims"] = [{"name": "devices"}]
            kube.create(item)
        for side in SIDES:
            namespace = f"{run}-{side}"

            def settled(ns: str = namespace, name: str = pod_name) -> bool:
                found = kube.get("Pod", name, ns)
                return bool(found["spec"].get("nodeName")) or bool(
                    failed_scheduling(admin, ns, name)
                )

            wait_for(settled, 90, 0.3, f"the {side} side's {pod_name} pod to be bound or refused")
            placed[side][pod_name] = kube.get("Pod", pod_name, namespace)["spec"].get("nodeName")
    assert (
        placed["topo"]
        == placed["kube"]
        == {
            "trainer": f"{run}-n0",
            "router": f"{run}-n2",
            "probe": f"{run}-n2",
            "second-trainer": None,
        }
    ), {
        side: {p: failed_scheduling(admin, f"{run}-{side}", p) for p, _, _ in pods}
        for side in SIDES
    }
    claims: dict[str, dict[str, Any]] = {side: {} for side in SIDES}
    for side in SIDES:
        namespace = f"{run}-{side}"
        for item in list_raw(
            admin, f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"
        ):
            owner = next(iter(item["metadata"].get("ownerReferences") or []), {}).get("name")
            key = owner or item["metadata"]["name"]
            status = item.get("status") or {}
            allocation = dict(status.get("allocation") or {})
            assert key == "second-trainer" or allocation.pop("allocationTimestamp", None), item
            claims[side][key] = {
                "allocation": _normalized(allocation, side, run),
                "reservedFor": [
                    {k: v for k, v in ref.items() if k != "uid"}
                    for ref in status.get("reservedFor") or ()
                ],
                "finalizers": item["metadata"].get("finalizers"),
            }
    assert claims["topo"] == claims["kube"], json.dumps(claims, indent=1)
    trainer = claims["topo"]["trainer"]
    assert trainer["reservedFor"] == [{"resource": "pods", "name": "trainer"}]
    assert trainer["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    router = claims["topo"]["router"]["allocation"]
    assert [r["request"] for r in router["devices"]["results"]] == ["nic/two", "nic/two", "gpu"]
    notes = {side: failed_scheduling(admin, f"{run}-{side}", "second-trainer")[0] for side in SIDES}
    assert notes["topo"] == notes["kube"], notes
