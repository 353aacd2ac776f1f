"""The test control plane: its pins, its launcher, and the live cluster it gives."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import topospread
from topospread.client.config import connect
from topospread.client.source import PODS, read_resources
from topospread.errors import Forbidden
from topospread.testing.controlplane import (
    BINARIES,
    ETCD_VERSION,
    READER_USER,
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    binaries_dir,
    find_binaries,
)
from topospread.testing.live import Kube

ROOT = Path(__file__).resolve().parents[2]
ORACLE_GO_MOD = ROOT / "oracle" / "go.mod"
ETCD_GO_MOD = ROOT / "controlplane" / "etcd" / "go.mod"
KUBECTL_GO_MOD = ROOT / "controlplane" / "kubectl" / "go.mod"


def _requirement(go_mod: Path, module: str) -> str | None:
    found = re.search(
        rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)(?: // indirect)?$",
        go_mod.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    return found.group(1) if found else None


# -- the pins ------------------------------------------------------------------------------------


def test_etcd_is_the_release_the_pinned_kubernetes_requires() -> None:
    # kube-apiserver links etcd's client modules; the server is built from the same release.
    oracle = {
        module: _requirement(ORACLE_GO_MOD, module)
        for module in ("go.etcd.io/etcd/api/v3", "go.etcd.io/etcd/client/v3")
    }
    assert set(oracle.values()) == {ETCD_VERSION}, oracle
    assert _requirement(ETCD_GO_MOD, "go.etcd.io/etcd/server/v3") == ETCD_VERSION
    assert _requirement(ETCD_GO_MOD, "go.etcd.io/etcd/client/v3") == ETCD_VERSION


def test_kubectl_is_the_client_release_of_the_pinned_kubernetes() -> None:
    # k8s.io/kubectl v0.X.Y is cut with Kubernetes v1.X.Y.
    kubernetes = _requirement(ORACLE_GO_MOD, "k8s.io/kubernetes")
    assert kubernetes is not None
    assert kubernetes.startswith("v1.")
    assert _requirement(KUBECTL_GO_MOD, "k8s.io/kubectl") == "v0." + kubernetes[len("v1.") :]


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed")
def test_the_oracle_module_selects_the_etcd_server_release_of_the_etcd_module() -> None:
    # k8s.io/kubernetes's own go.mod requires go.etcd.io/etcd/server/v3; the oracle module's
    # graph holds that requirement even though the oracle links no etcd server.
    done = subprocess.run(
        ["go", "list", "-mod=readonly", "-m", "-f", "{{.Version}}", "go.etcd.io/etcd/server/v3"],
        cwd=ROOT / "oracle",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ETCD_VERSION


def test_the_kube_binaries_are_tools_of_the_oracle_module() -> None:
    tools = re.search(r"^tool \(\n(.*?)^\)", ORACLE_GO_MOD.read_text(encoding="utf-8"), re.M | re.S)
    assert tools is not None, "oracle/go.mod has no tool block"
    assert set(tools.group(1).split()) == {
        f"k8s.io/kubernetes/cmd/{name}"
        for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
    }


def test_the_build_script_and_the_launcher_agree_on_the_binaries_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOPOSPREAD_CONTROLPLANE_BIN", raising=False)
    for env in ({"TOPOSPREAD_CACHE_DIR": str(tmp_path / "c")}, {"XDG_CACHE_HOME": str(tmp_path)}):
        for name in ("TOPOSPREAD_CACHE_DIR", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        script = subprocess.run(
            ["bash", str(ROOT / "controlplane" / "build.sh"), "--dir"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert Path(script.stdout.strip()) == binaries_dir()
    assert binaries_dir().name == f"k8s-{topospread.KUBERNETES_VERSION}-etcd-{ETCD_VERSION}"


# -- the launcher without real binaries ----------------------------------------------------------


def test_missing_binaries_are_named_with_the_command_that_builds_them(tmp_path: Path) -> None:
    with pytest.raises(ControlPlaneUnavailable, match=r"no etcd, kube-apiserver.*build\.sh"):
        find_binaries(tmp_path)


def test_a_process_that_dies_at_start_is_reported_with_its_log(tmp_path: Path) -> None:
    for name in BINARIES:
        fake = tmp_path / name
        fake.write_text("#!/bin/sh\necho 'fatal: cannot start' >&2\nexit 3\n", encoding="utf-8")
        fake.chmod(0o755)
    plane = ControlPlane(tmp_path, ready_timeout=10)
    with pytest.raises(ControlPlaneError, match=r"etcd exited with status 3(.|\n)*cannot start"):
        plane.start()
    with pytest.raises(ControlPlaneError, match="not running"):
        _ = plane.workdir


# -- the live control plane ----------------------------------------------------------------------


def _get_json(plane: ControlPlane, path: str, token: str) -> dict[str, Any]:
    context = ssl.create_default_context(cafile=str(plane.ca_file))
    request = urllib.request.Request(
        plane.server + path, headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


@pytest.mark.cluster
def test_the_api_server_is_the_pinned_release(control_plane: ControlPlane) -> None:
    version = _get_json(control_plane, "/version", control_plane.admin_token)
    assert version["gitVersion"] == topospread.KUBERNETES_VERSION
    assert version["major"] == "1"
    assert version["minor"] == topospread.KUBERNETES_VERSION.split(".")[1]
    # Every authenticated identity may read the version, the reader included.
    assert _get_json(control_plane, "/version", control_plane.reader_token) == version


@pytest.mark.cluster
def test_the_admin_creates_nodes_that_stay_untainted_and_spread_pods(
    kube: Kube, unique_name: Callable[[str], str]
) -> None:
    node_name = unique_name("node")
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node_name, "labels": {"topology.kubernetes.io/zone": "zone-a"}},
            # A Node's status is dropped on create: Kube writes it through the status
            # subresource.
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        }
    )
    node = kube.get("Node", node_name)
    assert "taints" not in node["spec"]  # no TaintNodesByCondition, no node-lifecycle controller
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}

    pod_name = unique_name("web")
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": pod_name}},
        "minDomains": 2,
        "matchLabelKeys": ["pod-template-hash"],
        "nodeAffinityPolicy": "Honor",
        "nodeTaintsPolicy": "Ignore",
    }
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod_name, "namespace": "default", "labels": {"app": pod_name}},
            "spec": {
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                "topologySpreadConstraints": [constraint],
            },
        }
    )
    pod = kube.get("Pod", pod_name)
    (stored,) = pod["spec"]["topologySpreadConstraints"]
    assert stored == constraint
    assert "nodeName" not in pod["spec"]  # no scheduler runs


@pytest.mark.cluster
def test_the_reader_token_is_forbidden_to_list_pods(reader_kubeconfig: Path) -> None:
    reader = connect(reader_kubeconfig)
    try:
        with pytest.raises(Forbidden) as raised:
            read_resources(reader.transport, [PODS])
    finally:
        reader.close()
    assert f'User "{READER_USER}" cannot list resource "pods"' in str(raised.value)


@pytest.mark.cluster
def test_the_controller_manager_turns_a_deployment_into_pods(
    kube: Kube, unique_name: Callable[[str], str]
) -> None:
    name = unique_name("deploy")
    labels = {"app": name}
    kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
                },
            },
        }
    )
    deadline = time.monotonic() + 20
    while True:
        pods = kube.list("Pod", label_selector=f"app={name}")
        if len(pods) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(pods) == 2
    for pod in pods:
        (owner,) = pod["metadata"]["ownerReferences"]
        assert owner["kind"] == "ReplicaSet"
        assert owner["name"].startswith(f"{name}-")


@pytest.mark.cluster
def test_the_control_plane_is_fast_and_its_processes_run(control_plane: ControlPlane) -> None:
    assert control_plane.started_seconds is not None
    assert control_plane.started_seconds < 30, control_plane.started_seconds
    assert set(control_plane.pids) == {"etcd", "kube-apiserver", "kube-controller-manager"}
    for pid in control_plane.pids.values():
        os.kill(pid, 0)  # raises if the process is gone


@pytest.mark.cluster
def test_a_port_taken_before_the_server_binds_it_is_chosen_again(
    control_plane_binaries: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from topospread.testing import controlplane

    real = controlplane._free_ports
    calls: list[list[int]] = []
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]

        def first_etcd_port_taken(count: int) -> list[int]:
            ports = real(count)
            if not calls:
                ports[0] = taken  # the etcd client port
            calls.append(ports)
            return ports

        monkeypatch.setattr(controlplane, "_free_ports", first_etcd_port_taken)
        with ControlPlane(control_plane_binaries, controller_manager=False) as plane:
            assert len(calls) == 2
            assert plane.etcd_url != f"http://127.0.0.1:{taken}"
            assert set(plane.pids) == {"etcd", "kube-apiserver"}


@pytest.mark.cluster
def test_kube_scheduler_runs_on_request_and_binds_pods(control_plane_binaries: Path) -> None:
    with ControlPlane(control_plane_binaries, controller_manager=False, scheduler=True) as plane:
        token = plane.admin_token
        _send(plane, "POST", "/api/v1/nodes", {"metadata": {"name": "n1"}}, token)
        allocatable = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        status = {"status": {"allocatable": allocatable, "capacity": allocatable}}
        _send(plane, "PATCH", "/api/v1/nodes/n1/status", status, token)
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        _send(plane, "POST", "/api/v1/namespaces/default/pods", pod, token)
        deadline = time.monotonic() + 20
        while True:
            stored = _get_json(plane, "/api/v1/namespaces/default/pods/p", token)
            node = stored["spec"].get("nodeName")
            if node or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert node == "n1"


def _send(plane: ControlPlane, method: str, path: str, body: object, token: str) -> None:
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    request = urllib.request.Request(
        plane.server + path,
        method=method,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    context = ssl.create_default_context(cafile=str(plane.ca_file))
    with urllib.request.urlopen(request, timeout=10, context=context) as response:
        response.read()
