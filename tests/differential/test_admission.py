"""Manifest pods are admitted as upstream's own admission plugins admit them (issue 25).

The oracle runs kube-apiserver's LimitRanger, Priority, DefaultTolerationSeconds,
DefaultStorageClass and RuntimeClass plugins as a chain (oracle/admission.go); topospread
runs :mod:`topospread.model.admission`. Each case is a manifest pod on the cluster of
``tests/data/admission/cluster.yaml``: both must place it alike, or refuse it in the same
words.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.errors import InputError
from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    upstream_result,
)

pytestmark = pytest.mark.differential

Obj = dict[str, Any]
DATA = Path(__file__).resolve().parents[1] / "data" / "admission"


def _load(name: str) -> list[Obj]:
    with (DATA / name).open(encoding="utf-8") as handle:
        return [d for d in yaml.safe_load_all(handle) if d]


CLUSTER = _load("cluster.yaml")


def _pod(namespace: str = "default", **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def _limits(**amounts: str) -> Obj:
    return {"name": "c", "image": "i", "resources": {"limits": amounts}}


CLAIM: Obj = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}
LOCAL_VOLUME: Obj = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "local-b"},
    "spec": {
        "capacity": {"storage": "5Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "standard",
        "local": {"path": "/mnt/disk"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/hostname",
                                "operator": "In",
                                "values": ["zone-b-1"],
                            }
                        ]
                    }
                ]
            }
        },
    },
    "status": {"phase": "Available"},
}
WITH_CLAIM = _pod(volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])

PLACED: list[tuple[str, list[Obj], Obj]] = [
    ("limit-range-defaults", CLUSTER, _load("no-requests.yaml")[0]),
    ("runtime-class", CLUSTER, _load("sandboxed.yaml")[0]),
    ("default-toleration-seconds", CLUSTER, _load("plain.yaml")[0]),
    ("priority-class", CLUSTER, _pod(priorityClassName="high", priority=1000)),
    ("system-priority-class", CLUSTER, _pod(priorityClassName="system-cluster-critical")),
    # The claim names no class: DefaultStorageClass gives it "standard" (WaitForFirstConsumer),
    # whose local volume only zone-b-1 reaches.
    ("default-storage-class", [*CLUSTER, CLAIM, LOCAL_VOLUME], WITH_CLAIM),
    (
        "empty-class-is-kept",
        [*CLUSTER, {**CLAIM, "spec": {**CLAIM["spec"], "storageClassName": ""}}, LOCAL_VOLUME],
        WITH_CLAIM,
    ),
]

CLAIM_LIMITS: Obj = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": {"name": "storage", "namespace": "default"},
    "spec": {"limits": [{"type": "PersistentVolumeClaim", "min": {"storage": "2Gi"},
                         "max": {"storage": "4Gi"}}]},
}  # fmt: skip
BIG_CLAIM: Obj = {**CLAIM, "spec": {**CLAIM["spec"], "resources": {"requests": {"storage": "5Gi"}}}}

REFUSED: list[tuple[str, list[Obj], Obj]] = [
    # LimitRanger validates a claim being created against PersistentVolumeClaim items.
    ("claim-over-limit-range-max", [*CLUSTER, CLAIM_LIMITS, BIG_CLAIM], WITH_CLAIM),
    ("claim-under-limit-range-min", [*CLUSTER, CLAIM_LIMITS, CLAIM], WITH_CLAIM),
    ("container-over-max", CLUSTER, _pod("team-a", containers=[_limits(cpu="2500m")])),
    (
        "pod-over-max",
        CLUSTER,
        _pod(
            "team-a",
            containers=[_limits(memory="1536Mi", cpu="3"), {**_limits(memory="1Gi"), "name": "d"}],
        ),
    ),
    ("priority-not-from-class", CLUSTER, _pod(priority=7)),
    (
        "preemption-policy-not-from-class",
        CLUSTER,
        _pod(priorityClassName="high", preemptionPolicy="PreemptLowerPriority"),
    ),
    ("unknown-priority-class", CLUSTER, _pod(priorityClassName="missing")),
    ("unknown-runtime-class", CLUSTER, _pod(runtimeClassName="kata")),
    (
        "runtime-class-selector-conflict",
        CLUSTER,
        _pod(runtimeClassName="gvisor", nodeSelector={"sandbox.example.com/runtime": "kata"}),
    ),
    ("overhead-mismatch", CLUSTER, _pod(runtimeClassName="gvisor", overhead={"cpu": "1"})),
    ("overhead-without-class", CLUSTER, _pod(overhead={"cpu": "1"})),
]


def _scenario(cluster: list[Obj], pod: Obj) -> Scenario:
    # Priorities here are written on purpose, to be checked against their classes.
    return Scenario(copy.deepcopy(cluster), copy.deepcopy(pod), None, name_priorities=False)


@pytest.mark.parametrize(("name", "cluster", "pod"), PLACED, ids=[c[0] for c in PLACED])
def test_a_manifest_pod_is_placed_as_upstream_admits_and_places_it(
    oracle: Any, name: str, cluster: list[Obj], pod: Obj
) -> None:
    scenario = _scenario(cluster, pod)
    response = oracle.run([scenario.request(name)])[name]
    assert "result" in response, f"upstream refused {name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    problems = differences(ours, theirs)
    assert not problems, "\n".join([f"{name}: topospread disagrees with upstream:", *problems])


@pytest.mark.parametrize(("name", "cluster", "pod"), REFUSED, ids=[c[0] for c in REFUSED])
def test_a_manifest_pod_the_api_server_refuses_is_refused_in_its_words(
    oracle: Any, differential: Any, name: str, cluster: list[Obj], pod: Obj
) -> None:
    scenario = _scenario(cluster, pod)
    response = oracle.run([scenario.request(name)])[name]
    assert "error" in response, f"upstream admitted {name}"
    with pytest.raises(InputError) as refused:
        run_python(scenario)
    assert differential.same_refusal(response["error"], str(refused.value)), (
        f"{name}: upstream says {response['error']!r}, topospread {str(refused.value)!r}"
    )
