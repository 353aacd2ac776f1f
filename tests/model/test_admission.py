"""A manifest pod is admitted as kube-apiserver v1.37.1 admits it (topospread.model.admission):
LimitRanger, Priority, DefaultTolerationSeconds, RuntimeClass, DefaultStorageClass. The same
cases run against upstream's own plugins in tests/differential/test_admission.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.errors import InputError
from topospread.model.admission import (
    NO_ADMISSION_OBJECTS,
    UNKNOWN_ADMISSION_OBJECTS,
    AdmissionObjects,
    admit_claim,
    admit_pod,
    default_storage_class,
    merge_tolerations,
)
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod, Toleration
from topospread.model.quantity import parse_quantity
from topospread.model.storage import PersistentVolumeClaim, StorageClass

DATA = Path(__file__).resolve().parents[1] / "data" / "admission"


def _objects(name: str) -> tuple[Any, ...]:
    with (DATA / name).open(encoding="utf-8") as handle:
        return decode_documents(list(yaml.safe_load_all(handle))).objects


CLUSTER = AdmissionObjects.of(_objects("cluster.yaml"))


def _pod(name: str) -> Pod:
    (pod,) = _objects(name)
    assert isinstance(pod, Pod)
    return pod


def _decode(doc: dict[str, Any]) -> Any:
    (obj,) = decode_documents([doc]).objects
    return obj


def _manifest(spec: dict[str, Any], namespace: str = "default", **meta: Any) -> Pod:
    pod = _decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": namespace, **meta},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
        }
    )
    assert isinstance(pod, Pod)
    return pod


def _cpu(amount: str) -> Any:
    return parse_quantity(amount, "cpu").amount


# -- LimitRanger -------------------------------------------------------------------------------


def test_a_limit_range_gives_containers_the_requests_and_limits_they_leave_out() -> None:
    pod = admit_pod(_pod("no-requests.yaml"), CLUSTER)
    web, sidecar = pod.containers
    assert web.requests["cpu"].amount == _cpu("500m")
    assert web.limits["cpu"].amount == _cpu("1")
    assert web.requests["memory"].amount == 256 * 2**20
    # The sidecar's limit made its request (SetDefaults_Pod, before admission); only the
    # memory it left out comes from the LimitRange.
    assert sidecar.requests["cpu"].amount == _cpu("200m")
    assert sidecar.limits["memory"].amount == 512 * 2**20
    assert pod.metadata.annotations["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; "
        "cpu, memory limit for container web; memory request for container sidecar; "
        "memory limit for container sidecar"
    )


def test_a_limit_range_applies_only_in_its_namespace_and_only_to_unstored_pods() -> None:
    other = replace(
        _pod("no-requests.yaml"),
        metadata=replace(_pod("no-requests.yaml").metadata, namespace="elsewhere"),
    )
    assert not admit_pod(other, CLUSTER).containers[0].requests
    stored = _manifest({}, namespace="team-a", uid="u1")
    assert not admit_pod(stored, CLUSTER).containers[0].requests


def test_a_limit_range_default_comes_from_max_and_the_request_from_the_default() -> None:
    (limit_range,) = _objects_of_kind("LimitRange")
    container = limit_range.limits[0]
    # SetDefaults_LimitRangeItem: default cpu is given; max would have been its source.
    assert container.default["cpu"].amount == 1
    implied = _decode(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "l", "namespace": "x"},
            "spec": {
                "limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}}]
            },
        }
    )
    item = implied.limits[0]
    assert item.default["cpu"].amount == 2
    assert item.default_request["cpu"].amount == 2
    assert item.default_request["memory"].amount == 2**20


def _objects_of_kind(kind: str) -> list[Any]:
    return [o for o in _objects("cluster.yaml") if type(o).__name__ == kind]


def test_a_container_above_the_limit_range_maximum_is_refused_in_upstream_words() -> None:
    big = _manifest(
        {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "2500m"}}}]},
        namespace="team-a",
    )
    with pytest.raises(InputError) as refused:
        admit_pod(big, CLUSTER)
    assert str(refused.value).endswith(
        'pods "p" is forbidden: maximum cpu usage per Container is 2, but limit is 2500m'
    )


def test_a_pod_over_the_pod_maximum_lists_every_problem_of_the_limit_range() -> None:
    spec = {
        "containers": [
            {"name": "a", "image": "i", "resources": {"limits": {"memory": "1536Mi", "cpu": "3"}}},
            {"name": "b", "image": "i", "resources": {"limits": {"memory": "1Gi"}}},
        ]
    }
    with pytest.raises(InputError) as refused:
        admit_pod(_manifest(spec, namespace="team-a"), CLUSTER)
    assert str(refused.value).endswith(
        'pods "p" is forbidden: [maximum cpu usage per Container is 2, but limit is 3, '
        "maximum memory usage per Pod is 2Gi, but limit is 2560Mi]"
    )


# -- Priority ----------------------------------------------------------------------------------


def test_a_priority_class_gives_its_value_and_preemption_policy() -> None:
    pod = admit_pod(_manifest({"priorityClassName": "high"}), CLUSTER)
    assert (pod.priority, pod.preemption_policy) == (1000, "Never")


def test_a_written_priority_that_its_class_does_not_give_is_refused() -> None:
    with pytest.raises(InputError) as refused:
        admit_pod(_manifest({"priority": 7}), CLUSTER)
    assert str(refused.value).endswith(
        'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod '
        "spec; priority admission controller computed 0 from the given PriorityClass name"
    )
    assert (
        admit_pod(_manifest({"priority": 1000, "priorityClassName": "high"}), CLUSTER).priority
        == 1000
    )


def test_the_system_classes_exist_without_being_listed() -> None:
    pod = admit_pod(_manifest({"priorityClassName": "system-node-critical"}), NO_ADMISSION_OBJECTS)
    assert pod.priority == 2000001000


def test_lint_on_bare_manifests_leaves_priorities_and_unknown_runtime_classes_alone() -> None:
    pod = admit_pod(
        _manifest({"priority": 7, "priorityClassName": "elsewhere", "runtimeClassName": "kata"}),
        UNKNOWN_ADMISSION_OBJECTS,
    )
    assert (pod.priority, pod.overhead) == (7, {})


# -- DefaultTolerationSeconds ------------------------------------------------------------------


def test_every_manifest_pod_tolerates_not_ready_and_unreachable_for_300_seconds() -> None:
    pod = admit_pod(_pod("plain.yaml"), NO_ADMISSION_OBJECTS)
    assert pod.tolerations[-2:] == (
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300),
        Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300),
    )


def test_a_pod_that_already_tolerates_a_no_execute_taint_keeps_its_own_toleration() -> None:
    own = {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 5,
    }
    pod = admit_pod(_manifest({"tolerations": [own]}), NO_ADMISSION_OBJECTS)
    assert [t.key for t in pod.tolerations] == [
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/not-ready",
    ]
    assert pod.tolerations[0].toleration_seconds == 5
    everything = admit_pod(
        _manifest({"tolerations": [{"operator": "Exists"}]}), NO_ADMISSION_OBJECTS
    )
    assert len(everything.tolerations) == 1


# -- RuntimeClass ------------------------------------------------------------------------------


def test_a_runtime_class_adds_its_overhead_node_selector_and_tolerations() -> None:
    pod = admit_pod(_pod("sandboxed.yaml"), CLUSTER)
    assert {k: q.amount for k, q in pod.overhead.items()} == {
        "cpu": _cpu("250m"),
        "memory": 64 * 2**20,
    }
    assert pod.node_selector == {"sandbox.example.com/runtime": "gvisor"}
    assert (
        Toleration("sandbox.example.com/runtime", "Equal", "gvisor", "NoSchedule")
        in pod.tolerations
    )


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"runtimeClassName": "kata"}, 'pod rejected: RuntimeClass "kata" not found'),
        (
            {"runtimeClassName": "gvisor", "nodeSelector": {"sandbox.example.com/runtime": "kata"}},
            "conflict: runtimeClass.scheduling.nodeSelector[sandbox.example.com/runtime] = gvisor; "
            "pod.spec.nodeSelector[sandbox.example.com/runtime] = kata",
        ),
        (
            {"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}},
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        ),
        (
            {"overhead": {"cpu": "1"}},
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
        ),
    ],
    ids=["unknown-class", "selector-conflict", "overhead-mismatch", "overhead-without-class"],
)
def test_the_runtime_class_plugin_refuses_what_the_api_server_refuses(
    spec: dict[str, Any], why: str
) -> None:
    with pytest.raises(InputError) as refused:
        admit_pod(_manifest(spec), CLUSTER)
    assert str(refused.value).endswith(f'pods "p" is forbidden: {why}')


def test_merged_tolerations_drop_those_another_one_covers() -> None:
    exists = Toleration("k", "Exists", "", "NoSchedule")
    equal = Toleration("k", "Equal", "v", "NoSchedule")
    timed = Toleration("t", "Exists", "", "NoExecute", 60)
    longer = Toleration("t", "Exists", "", "NoExecute", 600)
    assert merge_tolerations((equal,), (exists,)) == (exists,)
    assert merge_tolerations((timed,), (longer,)) == (longer,)
    assert merge_tolerations((exists, exists), ()) == (exists,)


# -- DefaultStorageClass -----------------------------------------------------------------------


def _claim(**spec: Any) -> PersistentVolumeClaim:
    claim = _decode(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                **spec,
            },
        }
    )
    assert isinstance(claim, PersistentVolumeClaim)
    return claim


def test_a_claim_without_a_class_gets_the_default_one_and_an_empty_class_stays_empty() -> None:
    assert admit_claim(_claim(), CLUSTER.storage_classes).spec.storage_class_name == "standard"
    assert (
        admit_claim(_claim(storageClassName=""), CLUSTER.storage_classes).spec.storage_class_name
        == ""
    )


def _class(name: str, created: str | None) -> StorageClass:
    meta: dict[str, Any] = {
        "name": name,
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    }
    if created:
        meta["creationTimestamp"] = created
    obj = _decode(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta,
            "provisioner": "p",
        }
    )
    assert isinstance(obj, StorageClass)
    return obj


def test_of_several_default_classes_the_newest_wins_then_the_first_by_name() -> None:
    older, newer = _class("a", "2025-01-01T00:00:00Z"), _class("z", "2026-01-01T00:00:00Z")
    assert default_storage_class([older, newer]).name == "z"  # type: ignore[union-attr]
    assert default_storage_class([_class("b", None), _class("a", None)]).name == "a"  # type: ignore[union-attr]


def test_a_claim_outside_its_namespaces_limit_range_is_refused_in_upstream_words() -> None:
    limits = _decode(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "storage", "namespace": "default"},
            "spec": {"limits": [{"type": "PersistentVolumeClaim", "max": {"storage": "4Gi"}}]},
        }
    )
    big = _claim(resources={"requests": {"storage": "5Gi"}})
    with pytest.raises(InputError) as refused:
        admit_claim(big, (), [limits])
    assert str(refused.value).endswith(
        'persistentvolumeclaims "data" is forbidden: '
        "maximum storage usage per PersistentVolumeClaim is 4Gi, but request is 5Gi"
    )
    assert admit_claim(_claim(), (), [limits]).spec.storage_request is not None
