"""VolumeBinding's Reserve, PreBind and Unreserve through the framework's binding port.

A recording port stands for the live API and the simulated cluster (each has its own
tests: tests/scheduler (live volume binding) and tests/engine/sim/volumes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from topospread.framework.binding import BindingError, VolumeCheck
from topospread.framework.config.decode import default_configuration
from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.framework.runtime import Framework
from topospread.framework.status import Code
from topospread.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.plugins.registry import registry

from .test_volume_binding import CLASSES, NO_PROVISIONER, NODES, claim, pod_with, pv


class Port:
    """Records every write; the wait answers with ``check`` over ``objects``."""

    def __init__(self, objects: ClusterObjects, *, fail: str = "") -> None:
        self.objects = objects
        self.fail = fail
        self.calls: list[tuple[str, ...]] = []

    def assume_objects(self, assumed: Sequence[PersistentVolume | PersistentVolumeClaim]) -> None:
        self.calls.append(("assume", *(o.metadata.name for o in assumed)))

    def restore_objects(self, assumed, originals) -> None:
        self.calls.append(("restore", *(o.metadata.name for o in originals)))

    def bind_volume(self, volume, claim, node_name) -> None:
        if self.fail:
            raise BindingError(self.fail)
        self.calls.append(("bind_volume", volume.name, claim.name, node_name))

    def select_node(self, claim, node_name) -> None:
        self.calls.append(("select_node", claim.name, node_name))

    def wait_for_volumes(self, node_name, pod_key, check: VolumeCheck, timeout) -> None:
        self.calls.append(("wait", node_name, pod_key, str(timeout)))
        node = next(n for n in NODES if n.name == node_name)
        if not check(self.objects, node, True):
            raise BindingError("context deadline exceeded")


def framework(objects: ClusterObjects, port: Port) -> Framework:
    profile = default_configuration().profiles[0]
    return Framework(profile, registry(), Handle(Snapshot(NODES), objects, binding=port))


def objects(claims, volumes) -> ClusterObjects:
    return ClusterObjects(
        persistent_volumes=tuple(volumes),
        persistent_volume_claims=tuple(claims),
        storage_classes=CLASSES,
    )


def bound(c: PersistentVolumeClaim, volume: str) -> PersistentVolumeClaim:
    annotations = {**c.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
    return replace(
        c,
        metadata=replace(c.metadata, annotations=annotations),
        spec=replace(c.spec, volume_name=volume),
        phase="Bound",
    )


def test_a_static_binding_is_assumed_written_and_waited_for_in_upstreams_order():
    data = claim("data", cls=NO_PROVISIONER)
    volume = pv("pv-a", cls=NO_PROVISIONER, zones=("a",))
    pod = pod_with("data")
    port = Port(objects([data], [volume]))
    fw = framework(objects([data], [volume]), port)
    state = CycleState()
    assert fw.run_reserve_plugins_reserve(state, pod, "n1").code is Code.SUCCESS
    assert port.calls == [("assume", "pv-a")]
    # The PV controller has bound the claim by the time PreBind checks.
    bound_volume = replace(volume, claim_ref=ClaimReference("data", "default", "uid-data"))
    port.objects = objects([bound(data, "pv-a")], [bound_volume])
    assert fw.run_pre_bind_plugins(state, pod, "n1").code is Code.SUCCESS
    assert port.calls[1:] == [
        ("bind_volume", "pv-a", "data", "n1"),
        ("wait", "n1", "default/p", "600.0"),
    ]


def test_a_claim_to_provision_gets_the_selected_node():
    data = claim("data")  # WaitForFirstConsumer with a provisioner, no volume
    pod = pod_with("data")
    port = Port(objects([data], []))
    fw = framework(objects([data], []), port)
    state = CycleState()
    fw.run_reserve_plugins_reserve(state, pod, "n2")
    assert port.calls == [("assume", "data")]
    provisioned = pv("pvc-uid-data", zones=("b",), claim_ref="data")
    selected = replace(
        data,
        metadata=replace(data.metadata, annotations={ANN_SELECTED_NODE: "n2"}),
    )
    port.objects = objects([bound(selected, provisioned.name)], [provisioned])
    assert fw.run_pre_bind_plugins(state, pod, "n2").code is Code.SUCCESS
    assert ("select_node", "data", "n2") in port.calls


def test_a_failed_write_is_upstreams_prebind_error_and_unreserve_restores_once():
    data = claim("data", cls=NO_PROVISIONER)
    volume = pv("pv-a", cls=NO_PROVISIONER, zones=("a",))
    pod = pod_with("data")
    port = Port(objects([data], [volume]), fail="update persistentvolumes 'pv-a': conflict")
    fw = framework(objects([data], [volume]), port)
    state = CycleState()
    fw.run_reserve_plugins_reserve(state, pod, "n1")
    status = fw.run_pre_bind_plugins(state, pod, "n1")
    assert status.code is Code.ERROR
    assert status.message == (
        'running PreBind plugin "VolumeBinding": binding volumes: '
        "update persistentvolumes 'pv-a': conflict"
    )
    fw.run_reserve_plugins_unreserve(state, pod, "n1")
    fw.run_reserve_plugins_unreserve(state, pod, "n1")
    assert [c for c in port.calls if c[0] == "restore"] == [("restore", "pv-a")]


def test_a_claim_the_controller_did_not_bind_times_out():
    data = claim("data", cls=NO_PROVISIONER)
    volume = pv("pv-a", cls=NO_PROVISIONER, zones=("a",))
    pod = pod_with("data")
    port = Port(objects([data], [volume]))
    fw = framework(objects([data], [volume]), port)
    state = CycleState()
    fw.run_reserve_plugins_reserve(state, pod, "n1")
    # The volume got its claimRef, the claim is still Pending: not done.
    claimed = replace(volume, claim_ref=ClaimReference("data", "default", "uid-data"))
    port.objects = objects([data], [claimed])
    status = fw.run_pre_bind_plugins(state, pod, "n1")
    assert status.message == (
        'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    )


def test_a_pod_whose_claims_are_bound_writes_nothing():
    volume = pv("pv-a", cls=NO_PROVISIONER, zones=("a",), claim_ref="data", phase="Bound")
    data = bound(claim("data", cls=NO_PROVISIONER), "pv-a")
    pod = pod_with("data")
    port = Port(objects([data], [volume]))
    fw = framework(objects([data], [volume]), port)
    state = CycleState()
    assert fw.run_reserve_plugins_reserve(state, pod, "n1").code is Code.SUCCESS
    assert fw.run_pre_bind_plugins(state, pod, "n1").code is Code.SUCCESS
    fw.run_reserve_plugins_unreserve(state, pod, "n1")
    assert port.calls == []
