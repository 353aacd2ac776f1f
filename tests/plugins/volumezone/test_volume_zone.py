"""VolumeZone rule by rule, without the oracle (tests/differential/test_volume_plugins.py
compares the fixtures of tests/data/volumezone with upstream)."""

from __future__ import annotations

from typing import Any

import pytest

from topospread.engine.cluster import Cluster
from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod
from topospread.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone, label_zones
from topospread.plugins.volumezone.volume_zone import new

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def _node(name: str, labels: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _pv(name: str, labels: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "d", "volumeHandle": name},
        },
    }


def _pvc(name: str, volume: str = "", storage_class: str | None = None, **meta: Any) -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": spec,
    }


def _class(name: str, mode: str) -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "d",
        "volumeBindingMode": mode,
    }


def _pod(*volumes: Obj) -> Pod:
    (pod,) = decode_documents(
        [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": list(volumes)},
            }
        ]
    ).objects
    assert isinstance(pod, Pod)
    return pod


def _claim(name: str) -> Obj:
    return {"name": f"v-{name}", "persistentVolumeClaim": {"claimName": name}}


NODES = [
    _node("a", {ZONE: "a", REGION: "r1"}),
    _node("b", {ZONE: "b", REGION: "r1"}),
    _node("bare", {}),
    _node("beta", {BETA_ZONE: "a"}),
]


def _run(objects: list[Obj], pod: Pod) -> tuple[Status | None, dict[str, Status | None]]:
    cluster = Cluster.from_objects(decode_documents([*NODES, *objects]).objects)
    snapshot = cluster.snapshot()
    plugin = new(None, Handle(snapshot, cluster.objects), features=None)  # type: ignore[arg-type]
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snapshot.node_infos)
    if status is not None:
        return status, {}
    return None, {i.name: plugin.filter(state, pod, i) for i in snapshot.node_infos}


@pytest.mark.parametrize(
    ("value", "zones"),
    [
        ("a", {"a"}),
        ("a__b", {"a", "b"}),
        (" a __ b ", {"a", "b"}),  # members are trimmed
        ("a___b", {"a", "_b"}),
        ("a__", None),  # an empty member: the label is ignored
        ("", None),
        ("a__\u3000", None),  # Go's TrimSpace trims ideographic space
        ("a__\x1c", {"a", "\x1c"}),  # but not the separators Python's strip() trims
    ],
)
def test_label_value_is_a_set_of_zones(value: str, zones: set[str] | None) -> None:
    assert label_zones(value) == (None if zones is None else frozenset(zones))


def test_bound_volume_keeps_the_pod_in_its_zone_and_passes_unlabelled_nodes() -> None:
    pre, verdicts = _run([_pv("pv", {ZONE: "a"}), _pvc("c", "pv")], _pod(_claim("c")))
    assert pre is None
    conflict = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))
    # "beta" has a zone label, but only the beta one: the PV's GA key is not translated.
    assert verdicts == {"a": None, "b": conflict, "bare": None, "beta": conflict}


def test_beta_label_on_the_volume_matches_a_ga_label_on_the_node() -> None:
    _, verdicts = _run([_pv("pv", {BETA_ZONE: "b"}), _pvc("c", "pv")], _pod(_claim("c")))
    assert [n for n, v in verdicts.items() if v is None] == ["b", "bare"]


def test_every_label_of_every_volume_must_match() -> None:
    objects = [
        _pv("pv1", {ZONE: "a__b"}),
        _pvc("c1", "pv1"),
        _pv("pv2", {REGION: "r1", ZONE: "b"}),
        _pvc("c2", "pv2"),
    ]
    _, verdicts = _run(objects, _pod(_claim("c1"), _claim("c2")))
    assert [n for n, v in verdicts.items() if v is None] == ["b", "bare"]


def test_nothing_to_compare_is_a_skip() -> None:
    cases: list[tuple[list[Obj], Pod]] = [
        ([], _pod({"name": "e", "emptyDir": {}})),
        ([_pv("pv", {}), _pvc("c", "pv")], _pod(_claim("c"))),
        ([_pv("pv", {ZONE: "a__"}), _pvc("c", "pv")], _pod(_claim("c"))),
        (
            [_class("wffc", "WaitForFirstConsumer"), _pvc("c", storage_class="wffc")],
            _pod(_claim("c")),
        ),
    ]
    for objects, pod in cases:
        pre, _ = _run(objects, pod)
        assert pre == Status(Code.SKIP)


def test_generic_ephemeral_volumes_are_not_looked_at() -> None:
    ephemeral = {
        "name": "scratch",
        "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
    }
    pre, _ = _run([], _pod(ephemeral))
    assert pre == Status(Code.SKIP)


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ([], 'persistentvolumeclaim "c" not found'),
        ([_pvc("c", "pv")], 'persistentvolume "pv" not found'),
        (
            [_pvc("c", storage_class="")],
            "PersistentVolumeClaim had no pv name and storageClass name",
        ),
        ([_pvc("c")], "PersistentVolumeClaim had no pv name and storageClass name"),
        ([_pvc("c", storage_class="gone")], 'storageclass.storage.k8s.io "gone" not found'),
        (
            [_class("now", "Immediate"), _pvc("c", storage_class="now")],
            "PersistentVolume had no name",
        ),
        (
            # The beta annotation is read before storageClassName.
            [
                _class("now", "Immediate"),
                _pvc(
                    "c",
                    storage_class="gone",
                    annotations={"volume.beta.kubernetes.io/storage-class": "now"},
                ),
            ],
            "PersistentVolume had no name",
        ),
    ],
)
def test_claims_that_cannot_be_resolved_are_unresolvable(objects: list[Obj], message: str) -> None:
    pre, _ = _run(objects, _pod(_claim("c")))
    assert pre == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def test_filter_without_prefilter_state_computes_it() -> None:
    cluster = Cluster.from_objects(
        decode_documents([*NODES, _pv("pv", {ZONE: "a"}), _pvc("c", "pv")]).objects
    )
    plugin = VolumeZone(cluster.objects)
    infos: dict[str, NodeInfo] = {i.name: i for i in cluster.snapshot().node_infos}
    pod = _pod(_claim("c"))
    assert plugin.filter(CycleState(), pod, infos["a"]) is None
    assert plugin.filter(CycleState(), pod, infos["b"]) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,)
    )
