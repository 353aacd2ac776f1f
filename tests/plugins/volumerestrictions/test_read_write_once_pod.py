"""VolumeRestrictions' ReadWriteOncePod check without the oracle (the same cases run
against upstream in tests/differential/test_volume_plugins.py)."""

from __future__ import annotations

from typing import Any

from topospread.engine.cluster import Cluster
from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod
from topospread.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)

Obj = dict[str, Any]
RWOP = Status(Code.UNSCHEDULABLE, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,))


def _node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def _pvc(name: str, mode: str = "ReadWriteOncePod", namespace: str = "default") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "1Gi"}}},
    }


def _pod(name: str, *volumes: Obj, node_name: str = "", namespace: str = "default") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _claim(name: str) -> Obj:
    return {"name": f"v-{name}", "persistentVolumeClaim": {"claimName": name}}


GCE = {"name": "disk", "gcePersistentDisk": {"pdName": "d"}}


def _decoded(obj: Obj) -> Pod:
    (pod,) = decode_documents([obj]).objects
    assert isinstance(pod, Pod)
    return pod


def _setup(
    objects: list[Obj], incoming: Obj
) -> tuple[VolumeRestrictions, CycleState, Pod, dict[str, NodeInfo], Status | None]:
    cluster = Cluster.from_objects(decode_documents(objects).objects)
    infos = cluster.snapshot().node_infos
    plugin = VolumeRestrictions(cluster.objects)
    state = CycleState()
    pod = _decoded(incoming)
    _, status = plugin.pre_filter(state, pod, infos)
    return plugin, state, pod, {i.name: i for i in infos}, status


def test_a_claim_in_use_anywhere_rejects_every_node() -> None:
    objects = [_node("n1"), _node("n2"), _pvc("c"), _pod("e", _claim("c"), node_name="n1")]
    plugin, state, pod, infos, status = _setup(objects, _pod("p", _claim("c")))
    assert status is None
    assert {n: plugin.filter(state, pod, i) for n, i in infos.items()} == {"n1": RWOP, "n2": RWOP}


def test_nothing_in_use_or_no_read_write_once_pod_claim_is_a_skip() -> None:
    free = [_node("n1"), _pvc("c")]
    assert _setup(free, _pod("p", _claim("c")))[4] == Status(Code.SKIP)
    shared = [_node("n1"), _pvc("c", "ReadWriteOnce"), _pod("e", _claim("c"), node_name="n1")]
    assert _setup(shared, _pod("p", _claim("c")))[4] == Status(Code.SKIP)
    # Claims are keyed by namespace: the same name used elsewhere is another claim.
    other = [_node("n1"), _pvc("c"), _pod("e", _claim("c"), node_name="n1", namespace="x")]
    assert _setup(other, _pod("p", _claim("c")))[4] == Status(Code.SKIP)
    # A pod on a node outside the snapshot does not count.
    ghost = [_node("n1"), _pvc("c"), _pod("e", _claim("c"), node_name="gone")]
    assert _setup(ghost, _pod("p", _claim("c")))[4] == Status(Code.SKIP)


def test_a_missing_claim_is_unresolvable_whatever_its_modes() -> None:
    status = _setup([_node("n1")], _pod("p", _claim("c")))[4]
    assert status == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "c" not found',)
    )


def test_remove_pod_and_add_pod_move_the_count() -> None:
    user = _pod("e", _claim("c"), node_name="n1")
    objects = [_node("n1"), _pvc("c"), user]
    plugin, state, pod, infos, _ = _setup(objects, _pod("p", _claim("c")))
    preempting = state.clone()
    assert plugin.remove_pod(preempting, pod, _decoded(user), infos["n1"]) is None
    assert plugin.filter(preempting, pod, infos["n1"]) is None
    assert plugin.filter(state, pod, infos["n1"]) == RWOP  # the clone changed alone
    # AddPod compares claim names only, not namespaces (as upstream does).
    elsewhere = _decoded(_pod("x", _claim("c"), namespace="other"))
    assert plugin.add_pod(preempting, pod, elsewhere, infos["n1"]) is None
    assert plugin.filter(preempting, pod, infos["n1"]) == RWOP


def test_extensions_without_prefilter_state_are_errors() -> None:
    plugin = VolumeRestrictions()
    pod = _decoded(_pod("p", _claim("c")))
    info = NodeInfo(Cluster.from_objects(decode_documents([_node("n1")]).objects).nodes[0])
    expected = Status(Code.ERROR, ('cannot read "PreFilterVolumeRestrictions" from cycleState',))
    assert plugin.add_pod(CycleState(), pod, pod, info) == expected
    assert plugin.remove_pod(CycleState(), pod, pod, info) == expected


def test_disk_conflicts_are_reported_before_claims() -> None:
    objects = [
        _node("n1"),
        _node("n2"),
        _pvc("c"),
        _pod("e1", _claim("c"), node_name="n1"),
        _pod("e2", GCE, node_name="n2"),
    ]
    plugin, state, pod, infos, _ = _setup(objects, _pod("p", _claim("c"), GCE))
    assert plugin.filter(state, pod, infos["n2"]) == Status(
        Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,)
    )
    assert plugin.filter(state, pod, infos["n1"]) == RWOP
