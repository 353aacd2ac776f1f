"""deploy/scheduler: the manifests parse, the ConfigMap's configuration decodes, and the
least-privilege RBAC is enough to schedule on the real control plane (a ServiceAccount
token bound only to it syncs, holds the Lease, binds, reports failures) and no more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from topospread.client.config import connect
from topospread.client.transport import Request
from topospread.scheduler.options import options_from_document
from topospread.testing.live import Kube, node, pod
from topospread.testing.scheduling import list_pods, list_raw, wait_for

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "scheduler"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_manifests_and_configuration():
    kinds = [
        d["kind"]
        for f in ("namespace.yaml", "rbac.yaml", "config.yaml", "deployment.yaml")
        for d in documents(f)
    ]
    assert kinds == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ConfigMap",
        "Deployment",
    ]
    config = yaml.safe_load(documents("config.yaml")[0]["data"]["config.yaml"])
    options = options_from_document(config, "deploy/scheduler/config.yaml")
    assert [p.scheduler_name for p in options.configuration.profiles] == ["topospread"]
    assert options.leader_election.resource_namespace == "topospread-system"
    deployment = documents("deployment.yaml")[0]
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"


def _path(obj: dict[str, Any]) -> str:
    group_version = obj["apiVersion"]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = {
        "ServiceAccount": "serviceaccounts",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Role": "roles",
        "RoleBinding": "rolebindings",
        "Namespace": "namespaces",
        "ConfigMap": "configmaps",
    }[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


def test_rbac_is_enough_to_schedule_and_no_more(
    control_plane, run_scheduler, scheduler_name, unique_name, tmp_path
):
    admin = connect(control_plane.admin_kubeconfig)
    for obj in documents("namespace.yaml") + documents("rbac.yaml"):
        answer = admin.transport.send(Request("POST", _path(obj), body=json.dumps(obj).encode()))
        assert answer.status in (201, 409), answer.data
    token = Kube(admin).token("topospread-scheduler", "topospread-system")
    kubeconfig = tmp_path / "scheduler.kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "sa",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": control_plane.server,
                            "certificate-authority": str(control_plane.ca_file),
                        },
                    }
                ],
                "users": [{"name": "sa", "user": {"token": token}}],
                "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}],
            }
        )
    )
    run = unique_name("rbac")
    kube = Kube(admin)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": run}})
    item = node(f"{run}-n", f"{run}-z")
    item["metadata"]["labels"]["topospread.dev/test"] = run
    kube.create(item)
    app = run_scheduler(
        kubeconfig,
        scheduler_name,
        leaderElection={
            "leaderElect": True,
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
            "resourceName": "topospread-scheduler",
            "resourceNamespace": "topospread-system",
        },
    )
    fits = pod("fits", run, {"app": "x"})
    too_big = pod("too-big", run, {"app": "x"}, cpu="64")
    for item in (fits, too_big):
        item["spec"].update(schedulerName=scheduler_name, nodeSelector={"topospread.dev/test": run})
        kube.create(item)
    wait_for(
        lambda: (
            {p["metadata"]["name"]: p["spec"].get("nodeName") for p in list_pods(admin, run)}.get(
                "fits"
            )
            == f"{run}-n"
        ),
        60,
        0.3,
        "the pod to be bound with the ServiceAccount's rights",
    )
    wait_for(
        lambda: any(
            e["reason"] == "FailedScheduling"
            for e in list_raw(admin, f"/apis/events.k8s.io/v1/namespaces/{run}/events")
        ),
        30,
        0.3,
        "a FailedScheduling Event",
    )
    big = next(p for p in list_pods(admin, run) if p["metadata"]["name"] == "too-big")
    wait_for(
        lambda: any(
            c["type"] == "PodScheduled"
            for c in next(p for p in list_pods(admin, run) if p["metadata"]["name"] == "too-big")[
                "status"
            ].get("conditions")
            or ()
        ),
        30,
        0.3,
        "the PodScheduled condition",
    )
    assert big["spec"].get("nodeName") is None
    lease = json.loads(
        admin.transport.send(
            Request(
                "GET",
                "/apis/coordination.k8s.io/v1/namespaces/topospread-system/leases/"
                "topospread-scheduler",
            )
        ).data
    )
    assert lease["spec"]["holderIdentity"] == app.identity
    for reflector in app.scheduler.reflectors:  # no list or watch was refused
        assert app.metrics.relists.labels(reflector.resource.plural)._value.get() == 0
    # Nothing beyond: no Secrets, no writes to Nodes.
    sa = connect(kubeconfig)
    assert sa.transport.send(Request("GET", "/api/v1/secrets")).status == 403
    assert sa.transport.send(Request("DELETE", f"/api/v1/nodes/{run}-n")).status == 403
