"""The fixtures of tests/data/volumebinding through ``topospread explain``: each node's
VolumeBinding verdict and score as upstream gives them (tests/differential/
test_volume_binding.py checks the same fixtures against the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "volumebinding"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: VolumeRestrictions}, {name: VolumeZone}, {name: NodeVolumeLimits}]
"""

AFFINITY = "node(s) didn't match PersistentVolume's node affinity"
BIND = "node(s) didn't find available persistent volumes to bind"
SPACE = "node(s) did not have enough free storage"
MISSING_PV = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

# Per node: the VolumeBinding score of a feasible node, else the rejection's reasons.
Verdict = int | tuple[str, ...]
EVERY_NODE = ("n1", "n2", "n3")


def everywhere(*reasons: str) -> dict[str, Verdict]:
    return dict.fromkeys(EVERY_NODE, reasons)


EXPECTED: dict[str, dict[str, Verdict]] = {
    "allowed-topologies": {"n1": 0, "n2": 0, "n3": (BIND,)},
    "bound-and-unbound": {"n1": (BIND,), "n2": (AFFINITY,), "n3": (AFFINITY, BIND)},
    "bound-missing-volume": everywhere(MISSING_PV),
    "bound-zonal": {"n1": 0, "n2": (AFFINITY,), "n3": (AFFINITY,)},
    "claim-deleting": everywhere('persistentvolumeclaim "data" is being deleted'),
    "csi-migration": everywhere(AFFINITY),
    "csi-migration-off": {"n1": 0, "n2": (AFFINITY,), "n3": (AFFINITY,)},
    "ephemeral-missing": everywhere(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"'
    ),
    "ephemeral-not-owned": everywhere(
        "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
    ),
    "ephemeral-owned": {"n1": 0, "n2": 0, "n3": (BIND,)},
    "missing-claim": everywhere('persistentvolumeclaim "data" not found'),
    # The static binding alone is scored (5Gi of 10Gi); elsewhere the local claim has no
    # volume and its class cannot provision.
    "mixed-static-dynamic": {"n1": 50, "n2": (BIND,), "n3": (BIND,)},
    "selected-node": {"n1": (BIND,), "n2": 0, "n3": (BIND,)},
    # 5Gi claims: on 10Gi utilization 50 scores 50, on 20Gi 25 scores 75, on 50Gi 90.
    "static-binding": {"n1": 50, "n2": 75, "n3": (BIND,)},
    "static-scores": {"n1": 50, "n2": 90, "n3": (BIND,)},
    # 10Gi of zone a's 100Gi: utilization 10, score 90.
    "storage-capacity": {"n1": 90, "n2": (SPACE,), "n3": (BIND,)},
    "unbound-immediate": everywhere("pod has unbound immediate PersistentVolumeClaims"),
}


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(EXPECTED) == sorted(p.stem for p in FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_explain_reports_volume_binding(name: str, tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all((FIXTURES / f"{name}.yaml").read_text("utf-8")) if d]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(docs[:-1]), "utf-8")
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(docs[-1]), "utf-8")
    (tmp_path / "config.yaml").write_text(CONFIG, "utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "explain",
            "--cluster",
            str(tmp_path / "cluster.yaml"),
            "--pod",
            str(tmp_path / "pod.yaml"),
            "--config",
            str(tmp_path / "config.yaml"),
            "--output",
            "json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    got: dict[str, Verdict] = {}
    for node in json.loads(result.stdout)["nodes"]:
        verdict = node["filter"]
        if verdict["code"] == "Success":
            got[node["name"]] = node["scores"]["VolumeBinding"]
        else:
            assert verdict["plugin"] == "VolumeBinding"
            assert verdict["code"] == "UnschedulableAndUnresolvable"
            got[node["name"]] = tuple(verdict["reasons"])
    assert got == EXPECTED[name]
