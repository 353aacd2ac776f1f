"""VolumeZone, NodeVolumeLimits and VolumeRestrictions' ReadWriteOncePod check compared with
the Go oracle (upstream v1.37.1): filter codes, plugins and reasons, scores, totals, the
selected node, the FailedScheduling message and preemption must be identical.

Three sets of cases: the fixtures of tests/data/volumezone and tests/data/nodevolumelimits
(whose recorded upstream answer must also still be upstream's), inline EBS volume IDs that
reach Go's ``net/url`` parser in every way it accepts or refuses them, and hand-made
ReadWriteOncePod scenarios, preemption included. All run with the whole default profile
unless a fixture carries its own configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    scenario_from_documents,
    upstream_result,
)

pytestmark = pytest.mark.differential

Obj = dict[str, Any]
DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURES = sorted([*DATA.glob("volumezone/*.yaml"), *DATA.glob("nodevolumelimits/*.yaml")])
EBS = "ebs.csi.aws.com"


def _fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _agree(oracle: Any, scenario: Scenario, name: str) -> Obj:
    """Both engines' answers must be identical; returns upstream's (compared fields)."""
    response = oracle.run([scenario.request(name)])[name]
    assert "result" in response, f"upstream rejected {name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    problems = differences(python_result(run_python(scenario)), theirs)
    assert not problems, "\n".join([f"{name}: topospread disagrees with upstream:", *problems])
    return theirs


@pytest.mark.parametrize("path", FIXTURES, ids=[_fixture_id(p) for p in FIXTURES])
def test_fixture_agrees_with_upstream(oracle: Any, path: Path) -> None:
    scenario, recorded = scenario_from_documents(list(yaml.safe_load_all(path.read_text())))
    theirs = _agree(oracle, scenario, _fixture_id(path))
    assert recorded is not None
    stale = differences(theirs, recorded)
    assert not stale, "\n".join([f"{path.name}: the recorded answer is stale:", *stale])


# -- builders ----------------------------------------------------------------------------------


def node(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def csinode(name: str, count: int) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": EBS, "nodeID": name, "allocatable": {"count": count}}]},
    }


def bound_claim(name: str, mode: str = "ReadWriteOncePod") -> list[Obj]:
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"pv-{name}"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": [mode],
            "claimRef": {"name": name, "namespace": "default"},
            "csi": {"driver": EBS, "volumeHandle": f"vol-{name}"},
        },
        "status": {"phase": "Bound"},
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": [mode],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": f"pv-{name}",
            "storageClassName": "",
        },
        "status": {"phase": "Bound"},
    }
    return [volume, claim]


def pod(
    name: str,
    *volumes: Obj,
    node_name: str = "",
    priority: int | None = None,
    namespace: str = "default",
) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "img"}]}
    if volumes:
        spec["volumes"] = list(volumes)
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    meta: Obj = {"name": name, "namespace": namespace}
    if node_name:
        meta["uid"] = f"uid-{namespace}-{name}"
    result: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if node_name:
        result["status"] = {"phase": "Running"}
    return result


def claim(name: str) -> Obj:
    return {"name": f"v-{name}", "persistentVolumeClaim": {"claimName": name}}


# -- aws:// volume IDs ---------------------------------------------------------------------------

EBS_IDS = [
    "vol-plain",
    "aws://us-east-1a/vol-1",
    "aws://zone/vol-1?x#frag",
    "aws:///vol-1",
    "aws://h//vol-1//",
    "aws://h/vol-%41",
    "aws://h/vol-%2F",
    "aws://h/vol-%2Fx",
    "aws://u:p@h:12/vol-1",
    "aws://u{@h/vol-1",
    "aws://[::1]/vol-1",
    "aws://[fe80::1%25en0]/vol-1",
    "aws://[1.2.3.4]/vol-1",
    "aws://a[b/vol-1",
    "aws://a:b/vol-1",
    "aws://us east/vol-1",
    "aws://%41/vol-1",
    "aws://%c3%a9/vol-1",
    "aws://h/%zz",
    "aws://h/vol-1%",
    "aws://h/vol-1#%zz",
    "aws://h",
    "aws://h/vol-1/x",
    "aws://h?/vol-1",
    "aws://h/vol-\u00e9",
    "aws://h/v\u00e9",
    "aws://zone/disk-1",
]


@pytest.mark.parametrize("volume_id", EBS_IDS)
def test_inline_ebs_volume_id_agrees_with_upstream(oracle: Any, volume_id: str) -> None:
    inline = {"name": "disk", "awsElasticBlockStore": {"volumeID": volume_id}}
    # n1 already holds vol-1, n2 holds nothing: the handle decides between them.
    cluster = [
        node("n1"),
        node("n2"),
        csinode("n1", 1),
        csinode("n2", 1),
        pod("e", {"name": "d", "awsElasticBlockStore": {"volumeID": "vol-1"}}, node_name="n1"),
    ]
    _agree(oracle, Scenario(cluster, pod("p", inline), None), f"ebs {volume_id!r}")


# -- ReadWriteOncePod ----------------------------------------------------------------------------

GCE = {"name": "disk", "gcePersistentDisk": {"pdName": "d"}}


def _rwop_cases() -> dict[str, Scenario]:
    two = [node("n1"), node("n2"), *bound_claim("c")]
    return {
        "in use, preemption frees it": Scenario(
            [*two, pod("e", claim("c"), node_name="n1", priority=1)],
            pod("p", claim("c"), priority=10),
            None,
        ),
        "in use by a more important pod": Scenario(
            [*two, pod("e", claim("c"), node_name="n1", priority=100)],
            pod("p", claim("c"), priority=10),
            None,
        ),
        "in use on two nodes": Scenario(
            [
                *two,
                pod("e1", claim("c"), node_name="n1", priority=1),
                pod("e2", claim("c"), node_name="n2", priority=1),
            ],
            pod("p", claim("c"), priority=10),
            None,
        ),
        "free": Scenario(two, pod("p", claim("c")), None),
        "missing claim": Scenario([node("n1")], pod("p", claim("c")), None),
        "same name in another namespace": Scenario(
            [*two, pod("e", claim("c"), node_name="n1", priority=1, namespace="other")],
            pod("p", claim("c"), priority=10),
            None,
        ),
        "read-write-once is not restricted": Scenario(
            [
                node("n1"),
                *bound_claim("c", "ReadWriteOnce"),
                pod("e", claim("c"), node_name="n1"),
            ],
            pod("p", claim("c")),
            None,
        ),
        "with a disk conflict": Scenario(
            [
                *two,
                pod("e1", claim("c"), node_name="n1", priority=1),
                pod("e2", GCE, node_name="n2", priority=1),
            ],
            pod("p", claim("c"), GCE, priority=10),
            None,
        ),
    }


RWOP_CASES = _rwop_cases()


@pytest.mark.parametrize("name", list(RWOP_CASES))
def test_read_write_once_pod_agrees_with_upstream(oracle: Any, name: str) -> None:
    _agree(oracle, RWOP_CASES[name], f"rwop {name}")
