"""Live clusters end to end, against the real control plane the test session starts.

A Pending pod created through the API is explained three ways that must agree: live
(``explain NS/NAME``), from a ``snapshot`` of the cluster (``explain --cluster``), and by
the upstream oracle on that snapshot.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.client.config import connect
from topospread.client.source import SCHEDULER_RESOURCES, read_resources
from topospread.testing.live import node, pod

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "oracle" / "bin" / "oracle"

SPREAD_BY_ZONE = {
    "maxSkew": 1,
    "topologyKey": "topology.kubernetes.io/zone",
    "whenUnsatisfiable": "DoNotSchedule",
}


@pytest.fixture(scope="module")
def spread_story(kube, control_plane):
    """Zones a, b, c with two nodes each; web pods 2/1/0 per zone; one Pending web pod."""
    suffix = os.urandom(3).hex()
    namespace = f"live-{suffix}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    nodes = [f"live-{suffix}-{zone}{i}" for zone in "abc" for i in (1, 2)]
    for name in nodes:
        story_node = node(name, f"zone-{suffix}-{name[-2]}")
        story_node["metadata"]["labels"]["story"] = suffix
        kube.create(story_node)
    labels = {"app": f"web-{suffix}"}
    for i, where in enumerate([nodes[0], nodes[1], nodes[2]]):
        kube.create(pod(f"web-{i}", namespace, labels, node_name=where))
    spread = [{**SPREAD_BY_ZONE, "labelSelector": {"matchLabels": labels}}]
    pending = pod("pending", namespace, labels, spread=spread)
    # The session's cluster is shared: other tests' nodes would be domains with no web pod.
    # Selecting the story's nodes leaves them out (nodeAffinityPolicy Honor).
    pending["spec"]["nodeSelector"] = {"story": suffix}
    kube.create(pending)
    return {"namespace": namespace, "nodes": nodes, "suffix": suffix}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_pending_pod_is_explained_alike_live_from_a_snapshot_and_by_upstream(
    spread_story, admin_kubeconfig, tmp_path
) -> None:
    namespace, nodes = spread_story["namespace"], spread_story["nodes"]
    snapshot = tmp_path / "snapshot.yaml"
    code, _, err = run("snapshot", "-o", str(snapshot), "--kubeconfig", str(admin_kubeconfig))
    assert code == 0, err
    code, live_out, err = run(
        "explain", f"{namespace}/pending", "--kubeconfig", str(admin_kubeconfig), "-o", "json"
    )
    assert code == 0, err
    live = json.loads(live_out)

    items = yaml.safe_load(snapshot.read_text())["items"]
    pending = next(
        i
        for i in items
        if i["kind"] == "Pod"
        and i["metadata"] == {**i["metadata"], "name": "pending", "namespace": namespace}
    )
    pod_file = tmp_path / "pod.json"
    pod_file.write_text(json.dumps(pending))
    code, file_out, err = run(
        "explain", "--cluster", str(snapshot), "--pod", str(pod_file), "-o", "json"
    )
    assert code == 0, err
    assert json.loads(file_out) == live

    # Zone c has no web pod: only its nodes keep the skew within 1.
    ours = {n["name"]: n for n in live["nodes"]}
    assert {n for n in nodes if ours[n]["filter"]["code"] == "Success"} == set(nodes[4:])
    assert live["selectedNode"] in nodes[4:]

    if not ORACLE.is_file():
        if os.environ.get("TOPOSPREAD_REQUIRE_ORACLE") == "1":
            pytest.fail("TOPOSPREAD_REQUIRE_ORACLE=1 but the oracle is not built", pytrace=False)
        pytest.skip("the oracle is not built (bash oracle/build.sh)")
    upstream = json.loads(
        subprocess.run(
            [str(ORACLE), "explain", "--cluster", str(snapshot), "--pod", str(pod_file)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    theirs = {n["name"]: n for n in upstream["nodes"]}
    assert set(theirs) == set(ours)
    for name, mine in ours.items():
        assert (
            mine["filter"]["code"],
            mine["filter"].get("plugin"),
            mine["filter"].get("reasons"),
        ) == (
            theirs[name]["filter"]["code"],
            theirs[name]["filter"].get("plugin"),
            theirs[name]["filter"].get("reasons"),
        ), name
        assert mine["totalScore"] == theirs[name]["totalScore"], name
    assert live["message"] == upstream["message"]
    assert set(live["tiedNodes"]) == set(upstream["tiedNodes"])


def test_lists_are_paginated_and_every_page_is_read(spread_story, admin_kubeconfig) -> None:
    connection = connect(admin_kubeconfig)
    try:
        whole = read_resources(connection.transport, SCHEDULER_RESOURCES)
        paged = read_resources(connection.transport, SCHEDULER_RESOURCES, page_size=2)
    finally:
        connection.close()
    assert whole.counts["Pod"] >= 4
    assert paged.requests > whole.requests
    names = lambda read: sorted(  # noqa: E731
        (i["kind"], i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in read.items
    )
    assert names(paged) == names(whole)


def test_a_token_without_list_rights_gets_the_403_and_the_rule_that_grants_it(
    spread_story, reader_kubeconfig
) -> None:
    code, out, err = run(
        "explain", f"{spread_story['namespace']}/pending", "--kubeconfig", str(reader_kubeconfig)
    )
    assert code == 2
    assert out == ""
    [line] = err.strip().splitlines()
    assert "403 Forbidden: " in line
    assert 'User "topospread-reader" cannot list resource' in line
    assert 'verbs: ["list"]} grants it' in line


def test_a_missing_pod_is_reported_as_kubectl_reports_it(spread_story, admin_kubeconfig) -> None:
    code, _, err = run(
        "explain",
        f"pod/nope-{spread_story['suffix']}",
        "-n",
        spread_story["namespace"],
        "--kubeconfig",
        str(admin_kubeconfig),
    )
    assert code == 2
    assert err.strip() == (
        f'pods "nope-{spread_story["suffix"]}" not found in namespace "{spread_story["namespace"]}"'
    )


def test_a_server_whose_certificate_is_not_trusted_is_named_in_one_line(
    control_plane, tmp_path
) -> None:
    config = yaml.safe_load(control_plane.admin_token_kubeconfig.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"].pop("certificate-authority", None)
        cluster["cluster"].pop("certificate-authority-data", None)
    other_ca = tmp_path / "ca.crt"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            str(tmp_path / "ca.key"),
            "-out",
            str(other_ca),
            "-subj",
            "/CN=someone-else",
            "-days",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    for cluster in config["clusters"]:
        cluster["cluster"]["certificate-authority"] = str(other_ca)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    code, _, err = run("explain", "default/any", "--kubeconfig", str(kubeconfig))
    assert code == 2
    [line] = err.strip().splitlines()
    assert line == (
        f"cannot connect to {control_plane.server}: TLS handshake failed: "
        "certificate verify failed: unable to get local issuer certificate"
    )


def test_a_server_that_is_down_is_named_in_one_line(control_plane, tmp_path) -> None:
    config = yaml.safe_load(control_plane.admin_token_kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    code, _, err = run("explain", "default/any", "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert err.strip() == "cannot connect to https://127.0.0.1:1: connection refused"


def test_an_exec_credential_plugin_supplies_the_token(
    spread_story, control_plane, tmp_path
) -> None:
    plugin = tmp_path / "credential-plugin"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": control_plane.admin_token},
    }
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "exec",
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": control_plane.server,
                    "certificate-authority": str(control_plane.ca_file),
                },
            }
        ],
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": str(plugin),
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [
            {
                "name": "exec",
                "context": {"cluster": "c", "user": "u", "namespace": spread_story["namespace"]},
            }
        ],
    }
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    code, out, err = run("explain", "pending", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["pod"] == f"{spread_story['namespace']}/pending"


def test_simulate_starts_from_the_live_cluster_and_places_its_pending_pod(
    spread_story, admin_kubeconfig, tmp_path
) -> None:
    namespace, nodes = spread_story["namespace"], spread_story["nodes"]
    code, out, err = run(
        "simulate", "--from-cluster", "--kubeconfig", str(admin_kubeconfig), "-o", "json"
    )
    assert code == 0, err
    initial = json.loads(out)["steps"][0]
    placed = {p["pod"]: p["node"] for p in initial["placements"]}
    assert placed[f"{namespace}/pending"] in nodes[4:]


def test_simulate_from_the_live_cluster_takes_a_deployment_s_replica_set_and_pods_as_they_are(
    kube, admin_kubeconfig
) -> None:
    # The Deployment's ReplicaSet and pods exist (kube-controller-manager made them): the
    # simulated controllers adopt them, create no pod and no second ReplicaSet, and only
    # the one Pending pod is placed.
    suffix = os.urandom(3).hex()
    namespace = f"adopt-{suffix}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    nodes = [f"adopt-{suffix}-{zone}" for zone in "abc"]
    for name in nodes:
        kube.create(node(name, f"zone-{suffix}-{name[-1]}"))
    labels = {"app": f"web-{suffix}"}
    template = pod("t", namespace, labels)
    kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": template["spec"]},
            },
        }
    )
    deadline = time.monotonic() + 60
    while len(pods := kube.list("Pod", namespace)) < 4:
        assert time.monotonic() < deadline, "kube-controller-manager made no pods"
        time.sleep(0.5)
    names = sorted(p["metadata"]["name"] for p in pods)
    for name, where in zip(names[:3], nodes, strict=True):
        kube.bind(name, where, namespace)
    replica_sets = {p["metadata"]["ownerReferences"][0]["name"] for p in pods}
    assert len(replica_sets) == 1

    code, out, err = run(
        "simulate", "--from-cluster", "--kubeconfig", str(admin_kubeconfig), "-o", "json"
    )
    assert code == 0, err
    initial = json.loads(out)["steps"][0]
    created = sorted(
        e["pod"].split("/", 1)[1]
        for e in initial["events"]
        if e["kind"] == "created" and e["pod"].startswith(f"{namespace}/")
    )
    assert created == names
    placed = [p["pod"] for p in initial["placements"] if p["pod"].startswith(f"{namespace}/")]
    assert placed == [f"{namespace}/{names[3]}"]
    workloads = [s["workload"] for s in initial["spread"] if f"/{namespace}/" in s["workload"]]
    assert workloads in ([], [f"Deployment/{namespace}/web"])


def test_a_scenario_file_adds_its_steps_to_the_live_cluster(
    spread_story, admin_kubeconfig, tmp_path
) -> None:
    namespace = spread_story["namespace"]
    scenario = tmp_path / "story.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "topospread.dev/v1alpha1",
                "kind": "Scenario",
                "metadata": {"name": "live-story"},
                "steps": [{"deletePods": {"names": ["web-0"], "namespace": namespace}}],
            }
        )
    )
    code, out, err = run(
        "simulate",
        str(scenario),
        "--from-cluster",
        "--kubeconfig",
        str(admin_kubeconfig),
        "-o",
        "json",
    )
    assert code == 0, err
    steps = json.loads(out)["steps"]
    assert [s["kind"] for s in steps] == ["initial", "deletePods"]
    deleted = [e["pod"] for e in steps[1]["events"] if e["kind"] == "deleted"]
    assert deleted == [f"{namespace}/web-0"]


def test_the_reader_cluster_role_grants_what_explain_needs_and_nothing_to_write(
    spread_story, kube, control_plane, tmp_path
) -> None:
    namespace = spread_story["namespace"]
    role = yaml.safe_load((ROOT / "deploy" / "rbac" / "reader.yaml").read_text())
    role["metadata"]["name"] = f"topospread-reader-{spread_story['suffix']}"
    kube.create(role)
    account = f"reader-{spread_story['suffix']}"
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": namespace},
        }
    )
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role["metadata"]["name"]},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role["metadata"]["name"],
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )
    token = kube.token(account, namespace)
    kubeconfig = tmp_path / "kubeconfig"
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
                            "server": control_plane.server,
                            "certificate-authority": str(control_plane.ca_file),
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
    code, _, err = run("explain", "pending", "--kubeconfig", str(kubeconfig))
    assert code == 0, err
    code, _, err = run("snapshot", "-o", str(tmp_path / "s.yaml"), "--kubeconfig", str(kubeconfig))
    assert code == 0, err
    code, _, err = run("audit", "-A", "--kubeconfig", str(kubeconfig), "--fail-on", "none")
    assert code == 0, err
    # The role cannot write: a Binding (what a scheduler would send) is refused.
    reader = connect(kubeconfig)
    try:
        from topospread.client.transport import Request

        response = reader.transport.send(
            Request(
                "POST",
                f"/api/v1/namespaces/{namespace}/pods/pending/binding",
                body=json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Binding",
                        "metadata": {"name": "pending"},
                        "target": {"kind": "Node", "name": spread_story["nodes"][4]},
                    }
                ).encode(),
            )
        )
    finally:
        reader.close()
    assert response.status == 403


def test_a_token_the_server_does_not_know_gets_the_401_in_one_line(control_plane, tmp_path) -> None:
    config = yaml.safe_load(control_plane.admin_token_kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": "not-a-token-the-server-knows"}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    code, out, err = run("explain", "default/any", "--kubeconfig", str(kubeconfig))
    assert (code, out) == (2, "")
    [line] = err.strip().splitlines()
    assert line.startswith(f"{control_plane.server}: 401 Unauthorized: ")


def test_inside_a_pod_the_service_account_is_used_when_there_is_no_kubeconfig(
    spread_story, kube, control_plane, tmp_path, monkeypatch
) -> None:
    import kubernetes.config.incluster_config as incluster

    import topospread.client.config as client_config

    namespace = spread_story["namespace"]
    account = f"in-cluster-{spread_story['suffix']}"
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": namespace},
        }
    )
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": account},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )
    # What the kubelet mounts into a pod, and the Service variables it sets.
    mounted = tmp_path / "serviceaccount"
    mounted.mkdir()
    (mounted / "token").write_text(kube.token(account, namespace))
    (mounted / "ca.crt").write_bytes(control_plane.ca_file.read_bytes())
    (mounted / "namespace").write_text(namespace)
    monkeypatch.setattr(incluster, "SERVICE_TOKEN_FILENAME", str(mounted / "token"))
    monkeypatch.setattr(incluster, "SERVICE_CERT_FILENAME", str(mounted / "ca.crt"))
    monkeypatch.setattr(client_config, "_IN_CLUSTER_DIR", mounted)
    host, port = control_plane.server.removeprefix("https://").rsplit(":", 1)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    code, out, err = run("explain", "pending", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["pod"] == f"{namespace}/pending"
