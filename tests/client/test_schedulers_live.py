"""Live commands learn a second scheduler's profiles from its published ConfigMap.

A scheduler beside kube-scheduler (deploy/scheduler's ``topospread scheduler``) publishes
its KubeSchedulerConfiguration in a ConfigMap labelled ``topospread.dev/scheduler-config``.
Its pods (here Pending: no such scheduler runs in the test cluster, which is what a pod
looks like to ``explain`` before it is placed) are explained with its profile, audited
with its constraints, and a pod that no known profile serves is an audit finding.
"""

from __future__ import annotations

import copy
import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.client.transport import Request
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube, node

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
SCHEDULER_NAMESPACE = "topospread-system"
ZONE = "topology.kubernetes.io/zone"


def _send(kube: Kube, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    return kube.connection.transport.send(Request(method, path, (), data))


def _deployment(name: str, namespace: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "schedulerName": scheduler,
                    "nodeSelector": {"published-story": namespace},
                    "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": name}},
                            "matchLabelKeys": ["pod-template-hash"],
                        }
                    ],
                },
            },
        },
    }


def _pending_pods(kube: Kube, namespace: str, app: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        pods = kube.list("Pod", namespace, f"app={app}")
        if len(pods) >= count or time.monotonic() > deadline:
            return pods
        time.sleep(0.2)


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def published(kube: Kube) -> Iterator[dict[str, str]]:
    """The shipped scheduler ConfigMap, under a unique name and schedulerName, in the
    scheduler's namespace; a namespace with nodes in two zones and two Deployments: one
    for that scheduler, one for a scheduler nobody runs. Removed again at the end (other
    live tests of the session would otherwise see the profile too)."""
    suffix = secrets.token_hex(3)
    namespace, scheduler = f"published-{suffix}", f"topospread-{suffix}"
    for ns in (SCHEDULER_NAMESPACE, namespace):
        answer = _send(
            kube,
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
        assert answer.status in (201, 409), answer.data
    for zone in "ab":
        story_node = node(f"published-{suffix}-{zone}", f"zone-{suffix}-{zone}")
        story_node["metadata"]["labels"]["published-story"] = namespace
        kube.create(story_node)
    config_map = copy.deepcopy(
        yaml.safe_load((ROOT / "deploy" / "scheduler" / "config.yaml").read_text())
    )
    config_map["metadata"]["name"] = f"scheduler-{suffix}"
    config_map["data"]["config.yaml"] = config_map["data"]["config.yaml"].replace(
        "schedulerName: topospread", f"schedulerName: {scheduler}"
    )
    path = f"/api/v1/namespaces/{SCHEDULER_NAMESPACE}/configmaps"
    created = _send(kube, "POST", path, config_map)
    assert created.status == 201, created.data
    kube.create(_deployment("served", namespace, scheduler))
    kube.create(_deployment("orphan", namespace, f"nobody-{suffix}"))
    served = _pending_pods(kube, namespace, "served", 2)
    assert len(served) == 2
    assert len(_pending_pods(kube, namespace, "orphan", 2)) == 2
    try:
        yield {
            "namespace": namespace,
            "scheduler": scheduler,
            "suffix": suffix,
            "config_map": config_map["metadata"]["name"],
            "pod": served[0]["metadata"]["name"],
        }
    finally:
        _send(kube, "DELETE", f"{path}/{config_map['metadata']['name']}")


def test_explain_uses_the_published_profile_of_the_pods_scheduler(published, admin_kubeconfig):
    pod = published["pod"]

    result = _run(
        "explain",
        f"pod/{pod}",
        "-n",
        published["namespace"],
        "--kubeconfig",
        str(admin_kubeconfig),
        "-o",
        "json",
    )

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["profile"] == published["scheduler"]
    assert (
        f"note: scheduler profiles from ConfigMap {SCHEDULER_NAMESPACE}/"
        f"{published['config_map']}: {published['scheduler']}"
    ) in result.stderr


def test_audit_counts_the_second_schedulers_constraints_and_flags_pods_nobody_serves(
    published, admin_kubeconfig
):
    result = _run(
        "audit", "-n", published["namespace"], "--kubeconfig", str(admin_kubeconfig), "-o", "json"
    )

    report = json.loads(result.stdout)
    served = next(w for w in report["workloads"] if w["name"] == "served")
    assert served["constraintSource"] == "pod"
    assert [c["topologyKey"] for c in served["constraints"]] == [ZONE]
    [finding] = [f for f in report["findings"] if f["rule"] == "unserved-scheduler-name"]
    assert finding["object"] == f"Deployment/{published['namespace']}/orphan"
    assert finding["severity"] == "error"
    assert finding["fieldPath"] == "spec.template.spec.schedulerName"
    assert finding["message"].startswith(
        f'2 pod(s) Pending with schedulerName "nobody-{published["suffix"]}", which no known '
        "scheduler profile serves"
    )
    assert result.exit_code == 1


def test_audit_with_the_rule_disabled_has_no_such_finding(published, admin_kubeconfig):
    result = _run(
        "audit",
        "-n",
        published["namespace"],
        "--kubeconfig",
        str(admin_kubeconfig),
        "-o",
        "json",
        "--disable",
        "unserved-scheduler-name",
        "--fail-on",
        "none",
    )

    assert result.exit_code == 0, result.stderr
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    assert "unserved-scheduler-name" not in rules


def _account_kubeconfig(
    kube: Kube, plane: ControlPlane, published: dict[str, str], tmp_path: Path, *, configs: bool
) -> Path:
    suffix = f"{published['suffix']}-{secrets.token_hex(2)}"
    namespace = published["namespace"]
    account = f"reader-{suffix}"
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": namespace},
        }
    )
    subject = {"kind": "ServiceAccount", "name": account, "namespace": namespace}
    reader = yaml.safe_load((ROOT / "deploy" / "rbac" / "reader.yaml").read_text())
    reader["metadata"]["name"] = f"topospread-reader-{suffix}"
    kube.create(reader)
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": reader["metadata"]["name"]},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": reader["metadata"]["name"],
            },
            "subjects": [subject],
        }
    )
    if configs:
        role = yaml.safe_load((ROOT / "deploy" / "rbac" / "scheduler-configs.yaml").read_text())
        role["metadata"]["name"] = f"topospread-scheduler-configs-{suffix}"
        kube.create(role)
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": role["metadata"]["name"], "namespace": SCHEDULER_NAMESPACE},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role["metadata"]["name"],
            },
            "subjects": [subject],
        }
        answer = _send(
            kube,
            "POST",
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{SCHEDULER_NAMESPACE}/rolebindings",
            binding,
        )
        assert answer.status == 201, answer.data
    token = kube.token(account, namespace)
    kubeconfig = tmp_path / f"kubeconfig-{suffix}"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "reader",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": plane.server,
                            "certificate-authority": str(plane.ca_file),
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [
                    {
                        "name": "reader",
                        "context": {"cluster": "c", "user": "u", "namespace": namespace},
                    }
                ],
            }
        )
    )
    return kubeconfig


def test_the_reader_role_with_the_scheduler_configs_role_in_its_namespace_is_enough(
    published, kube, control_plane, tmp_path
):
    pod = published["pod"]
    with_configs = _account_kubeconfig(kube, control_plane, published, tmp_path, configs=True)
    without = _account_kubeconfig(kube, control_plane, published, tmp_path, configs=False)
    time.sleep(0.5)  # RBAC's authorizer cache sees new bindings within a moment

    allowed = _run("explain", f"pod/{pod}", "--kubeconfig", str(with_configs), "-o", "json")
    refused = _run("explain", f"pod/{pod}", "--kubeconfig", str(without), "-o", "json")

    assert allowed.exit_code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["profile"] == published["scheduler"]
    # Bound in topospread-system only: kube-system stays closed, and that is said once.
    assert "may not list ConfigMaps in kube-system (RBAC)" in allowed.stderr
    assert refused.exit_code == 2
    assert f'no profile has schedulerName "{published["scheduler"]}"' in refused.stderr
