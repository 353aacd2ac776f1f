"""A manifest explained from files is decided as the real API server admits it (issue 25).

Each manifest pod is created through the test control plane's kube-apiserver (whose
default admission plugins run: LimitRanger, Priority, DefaultTolerationSeconds,
RuntimeClass), then explained live; the same manifest, never stored, is explained from a
``snapshot`` of the cluster with topospread's own admission. Both answers must be equal,
and each shows what its admission plugin changed.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.testing.live import node

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def admission_story(kube, control_plane) -> dict[str, Any]:
    """Three nodes of one story: one unreachable (NoExecute), one plain, one sandbox node
    for a RuntimeClass; a namespace whose LimitRange defaults container requests."""
    suffix = os.urandom(3).hex()
    namespace = f"admission-{suffix}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    names = {kind: f"adm-{suffix}-{kind}" for kind in ("unreachable", "plain", "sandbox")}
    for kind, name in names.items():
        made = node(name, f"zone-{suffix}-{kind}", cpu="2")
        made["metadata"]["labels"]["story"] = suffix
        if kind == "unreachable":
            made["spec"] = {
                "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
            }
        if kind == "sandbox":
            made["metadata"]["labels"]["sandbox"] = f"gvisor-{suffix}"
            made["spec"] = {
                "taints": [{"key": "sandbox", "value": f"gvisor-{suffix}", "effect": "NoSchedule"}]
            }
        kube.create(made)
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "defaults", "namespace": namespace},
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "defaultRequest": {"cpu": "1500m", "memory": "256Mi"},
                        "default": {"cpu": "2", "memory": "512Mi"},
                    }
                ]
            },
        }
    )
    kube.create(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": f"gvisor-{suffix}"},
            "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox": f"gvisor-{suffix}"},
                "tolerations": [
                    {
                        "key": "sandbox",
                        "operator": "Equal",
                        "value": f"gvisor-{suffix}",
                        "effect": "NoSchedule",
                    }
                ],
            },
        }
    )
    # A pod already running on the plain node uses 1 of its 2 CPUs.
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "running", "namespace": namespace},
            "spec": {
                "nodeName": names["plain"],
                "containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}
                ],
            },
        }
    )
    return {"namespace": namespace, "suffix": suffix, "nodes": names}


def _manifest(story: dict[str, Any], name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": story["namespace"]},
        "spec": {
            "nodeSelector": {"story": story["suffix"]},
            "containers": [{"name": "app", "image": "app"}],
            **spec,
        },
    }


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _explained_both_ways(
    story: dict[str, Any], manifest: dict[str, Any], kube, kubeconfig: Path, tmp_path: Path
) -> dict[str, Any]:
    pod_file = tmp_path / f"{manifest['metadata']['name']}.json"
    pod_file.write_text(json.dumps(manifest))
    kube.create(copy.deepcopy(manifest))  # admitted by kube-apiserver; no scheduler runs
    snapshot = tmp_path / "snapshot.yaml"
    code, _, err = run("snapshot", "-o", str(snapshot), "--kubeconfig", str(kubeconfig))
    assert code == 0, err
    name = f"{story['namespace']}/{manifest['metadata']['name']}"
    code, live_out, err = run("explain", name, "--kubeconfig", str(kubeconfig), "-o", "json")
    assert code == 0, err
    code, file_out, err = run(
        "explain", "--cluster", str(snapshot), "--pod", str(pod_file), "-o", "json"
    )
    assert code == 0, err
    live, from_files = json.loads(live_out), json.loads(file_out)
    for answer in (live, from_files):
        answer.pop("notes", None)
    assert from_files == live
    return {n["name"]: n for n in live["nodes"]} | {"_selected": live["selectedNode"]}


def test_a_manifest_pod_tolerates_an_unreachable_node_as_the_api_server_makes_it(
    admission_story, kube, admin_kubeconfig, tmp_path
) -> None:
    manifest = _manifest(admission_story, "plain")
    nodes = _explained_both_ways(admission_story, manifest, kube, admin_kubeconfig, tmp_path)
    # DefaultTolerationSeconds added the 300 s unreachable toleration: the node fits.
    assert nodes[admission_story["nodes"]["unreachable"]]["filter"]["code"] == "Success"
    assert nodes[admission_story["nodes"]["sandbox"]]["filter"]["plugin"] == "TaintToleration"


def test_a_pod_without_requests_gets_the_namespace_limit_range_defaults(
    admission_story, kube, admin_kubeconfig, tmp_path
) -> None:
    manifest = _manifest(admission_story, "no-requests")
    nodes = _explained_both_ways(admission_story, manifest, kube, admin_kubeconfig, tmp_path)
    # 1500m requested by the LimitRange does not fit beside the running pod's 1 CPU.
    plain = nodes[admission_story["nodes"]["plain"]]["filter"]
    assert (plain["plugin"], plain["reasons"]) == ("NodeResourcesFit", ["Insufficient cpu"])
    assert nodes["_selected"] == admission_story["nodes"]["unreachable"]


def test_a_runtime_class_brings_its_overhead_node_selector_and_toleration(
    admission_story, kube, admin_kubeconfig, tmp_path
) -> None:
    manifest = _manifest(
        admission_story,
        "sandboxed",
        runtimeClassName=f"gvisor-{admission_story['suffix']}",
        containers=[{"name": "app", "image": "app", "resources": {"requests": {"cpu": "1"}}}],
    )
    nodes = _explained_both_ways(admission_story, manifest, kube, admin_kubeconfig, tmp_path)
    assert nodes["_selected"] == admission_story["nodes"]["sandbox"]
    for other in ("plain", "unreachable"):
        assert nodes[admission_story["nodes"][other]]["filter"]["plugin"] == "NodeAffinity"
