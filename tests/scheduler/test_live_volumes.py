"""``topospread scheduler`` provisions and binds claims as kube-scheduler's VolumeBinding does.

A WaitForFirstConsumer claim whose class has a provisioner gets the
``volume.kubernetes.io/selected-node`` annotation from the scheduler's PreBind; the test
plays the external provisioner (creates a volume in that node's zone, pre-bound to the
claim), kube-controller-manager's PV controller binds the pair, and only then is the pod
bound — to the node the claim was provisioned for. Without a provisioner the PreBind
times out after ``bindTimeoutSeconds`` with upstream's words.
"""

from __future__ import annotations

from typing import Any

from topospread.client.config import connect
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import create_all, list_raw, wait_for

ZONE = "topology.kubernetes.io/zone"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def storage_class(name: str, provisioner: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def claim(name: str, namespace: str, class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": class_name,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod_with_claim(
    name: str, namespace: str, scheduler: str, marker: dict[str, str], claim_name: str
) -> dict[str, Any]:
    item = pod(name, namespace, {"app": name})
    item["spec"]["schedulerName"] = scheduler
    item["spec"]["nodeSelector"] = marker
    item["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    return item


def in_zone(zone: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}


def setup(kube: Kube, run: str) -> dict[str, str]:
    marker = {"topospread.dev/test": run}
    nodes = []
    for i in range(4):
        item = node(f"{run}-n{i}", f"{run}-z{i % 2}")
        item["metadata"]["labels"].update(marker)
        nodes.append(item)
    create_all(kube, nodes)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": run}})
    return marker


def test_a_provisioned_claim_is_bound_before_its_pod_lands_on_the_selected_node(
    control_plane, run_scheduler, scheduler_name, unique_name
):
    kube = Kube(connect(control_plane.admin_kubeconfig))
    run = unique_name("provision")
    marker = setup(kube, run)
    kube.create(storage_class(run, "provisioner.test.example.com"))
    kube.create(claim("data", run, run))
    run_scheduler(control_plane.admin_kubeconfig, scheduler_name)
    kube.create(pod_with_claim("db", run, scheduler_name, marker, "data"))

    def selected() -> str | None:
        annotations = kube.get("PersistentVolumeClaim", "data", run)["metadata"].get(
            "annotations", {}
        )
        return annotations.get(SELECTED_NODE)

    wait_for(lambda: selected() is not None, 60, 0.2, "the claim's selected-node annotation")
    chosen = selected()
    assert chosen is not None
    assert not kube.get("Pod", "db", run)["spec"].get("nodeName"), "bound before its volume"
    data = kube.get("PersistentVolumeClaim", "data", run)
    zone = kube.get("Node", chosen, "")["metadata"]["labels"][ZONE]
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": f"pvc-{data['metadata']['uid']}",
                "annotations": {"pv.kubernetes.io/provisioned-by": "provisioner.test.example.com"},
            },
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": run,
                "csi": {"driver": "provisioner.test.example.com", "volumeHandle": run},
                "claimRef": {
                    "namespace": run,
                    "name": "data",
                    "uid": data["metadata"]["uid"],
                },
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": ZONE, "operator": "In", "values": [zone]}
                                ]
                            }
                        ]
                    }
                },
            },
        }
    )
    wait_for(lambda: kube.get("Pod", "db", run)["spec"].get("nodeName"), 60, 0.3, "the pod's bind")
    assert kube.get("Pod", "db", run)["spec"]["nodeName"] == chosen
    assert kube.get("PersistentVolumeClaim", "data", run)["status"]["phase"] == "Bound"


def test_without_a_provisioner_prebind_times_out_in_upstreams_words(
    control_plane, run_scheduler, scheduler_name, unique_name
):
    kube = Kube(connect(control_plane.admin_kubeconfig))
    admin = connect(control_plane.admin_kubeconfig)
    run = unique_name("noprov")
    marker = setup(kube, run)
    kube.create(storage_class(run, "nobody.test.example.com"))
    kube.create(claim("data", run, run))
    run_scheduler(
        control_plane.admin_kubeconfig,
        scheduler_name,
        profiles=[
            {
                "schedulerName": scheduler_name,
                "pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 2}}],
            }
        ],
    )
    kube.create(pod_with_claim("db", run, scheduler_name, marker, "data"))

    def notes() -> list[str]:
        events = list_raw(admin, f"/apis/events.k8s.io/v1/namespaces/{run}/events")
        return [
            e["note"]
            for e in events
            if e["regarding"]["name"] == "db" and e["reason"] == "FailedScheduling"
        ]

    wait_for(notes, 60, 0.3, "a FailedScheduling event")
    assert notes()[0] == (
        'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    )
    assert not kube.get("Pod", "db", run)["spec"].get("nodeName")
