"""`explain pod/NAME --autoscaler cluster-autoscaler` reads the live cluster's node groups
from Cluster Autoscaler's status ConfigMap (issue 21 item 1), against the real API server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.testing.live import node, pod

pytestmark = pytest.mark.cluster

ZONE = "topology.kubernetes.io/zone"
POOL = "autoscaling.topospread.dev/pool"


def _status(suffix: str) -> str:
    # ClusterAutoscalerStatus as Cluster Autoscaler writes it (clusterstate/api/types.go).
    groups = [
        (f"grp-a-{suffix}", 1, 3, 1),
        (f"grp-b-{suffix}", 1, 1, 1),
        (f"grp-c-{suffix}", 0, 3, 0),
    ]
    return yaml.safe_dump(
        {
            "time": "2026-11-26 10:00:00.000000000 +0000 UTC",
            "autoscalerStatus": "Running",
            "clusterWide": {"health": {"status": "Healthy"}},
            "nodeGroups": [
                {
                    "name": name,
                    "health": {
                        "status": "Healthy",
                        "nodeCounts": {"registered": {"total": size, "ready": size}},
                        "cloudProviderTarget": size,
                        "minSize": low,
                        "maxSize": high,
                    },
                }
                for name, low, high, size in groups
            ],
        }
    )


@pytest.fixture(scope="module")
def groups_story(kube, control_plane) -> dict[str, Any]:
    """Zones a and b with a node each (groups grp-a, grp-b), grp-c at zero; two web pods
    running, a third Pending for minDomains 3."""
    suffix = os.urandom(3).hex()
    namespace = f"groups-{suffix}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    labels = {"app": f"web-{suffix}"}
    for zone in "ab":
        made = node(f"grp-{zone}-{suffix}-1", f"zone-{suffix}-{zone}")
        made["metadata"]["labels"].update({POOL: f"grp-{zone}-{suffix}", "story": suffix})
        kube.create(made)
        kube.create(pod(f"web-{zone}", namespace, labels, node_name=f"grp-{zone}-{suffix}-1"))
    spread = [
        {
            "maxSkew": 1,
            "minDomains": 3,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": labels},
        }
    ]
    pending = pod("pending", namespace, labels, spread=spread)
    pending["spec"]["nodeSelector"] = {"story": suffix}
    kube.create(pending)
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
            "data": {"status": _status(suffix)},
        }
    )
    return {"namespace": namespace, "suffix": suffix}


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _template(tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / "grp-c.yaml"
    # JSON, which YAML reads too: a suffix of decimal digits only ("057858") would be a
    # number to sigs.k8s.io/yaml (and to topospread) when PyYAML leaves it unquoted.
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"grp-c-{suffix}-template",
                    "labels": {ZONE: f"zone-{suffix}-c", "story": suffix},
                    "annotations": {
                        POOL: f"grp-c-{suffix}",
                        "autoscaling.topospread.dev/min-size": "0",
                        "autoscaling.topospread.dev/max-size": "3",
                    },
                },
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
    )
    return path


def test_the_node_groups_come_from_the_status_and_the_zone_at_zero_from_its_template(
    groups_story, admin_kubeconfig, tmp_path
) -> None:
    suffix = groups_story["suffix"]
    code, out, err = run(
        "explain", f"{groups_story['namespace']}/pending",
        "--kubeconfig", admin_kubeconfig,
        "--autoscaler", "cluster-autoscaler",
        "--node-pools", _template(tmp_path, suffix),
        "-o", "json",
    )  # fmt: skip
    assert code == 0, err
    answer = json.loads(out)
    assert answer["selectedNode"] is None
    scale = answer["autoscaling"]["scaleUp"]
    assert (scale["pool"], scale["byZone"]) == (f"grp-c-{suffix}", {f"zone-{suffix}-c": 1})
    assert scale["landsOn"] == f"grp-c-{suffix}-1"
    why = {o["pool"]: o["why"] for o in answer["autoscaling"]["options"] if not o["helps"]}
    # grp-b is at its max size (1/1) in the status ConfigMap.
    assert why[f"grp-b-{suffix}"] == "max size reached (1/1 nodes)"


def test_a_group_at_zero_without_a_template_is_one_clear_line(
    groups_story, admin_kubeconfig
) -> None:
    code, out, err = run(
        "explain", f"{groups_story['namespace']}/pending",
        "--kubeconfig", admin_kubeconfig, "--autoscaler", "cluster-autoscaler",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert (
        f"node group 'grp-c-{groups_story['suffix']}' is at zero nodes and has no template" in err
    )
    assert "Traceback" not in err
