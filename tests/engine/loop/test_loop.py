"""The scheduling loop's cycle and binding cycle, run in memory (:class:`MemoryScheduler`,
the same loop ``simulate`` and ``topospread scheduler`` run): Permit's Wait, failures
after the node was chosen, and what the loop reports."""

from __future__ import annotations

from dataclasses import replace

from topospread.engine.loop import MemoryScheduler
from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import PluginRef, PluginSet, SchedulerConfiguration
from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod
from topospread.plugins.registry import registry
from topospread.scheduler.cache import decode_one
from topospread.testing.gang import GANG, Gang, gang_factory
from topospread.testing.live import node as node_dict
from topospread.testing.live import pod as pod_dict


class RejectAtReserve:
    name = "RejectAtReserve"

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.of(Code.UNSCHEDULABLE, "node(s) were reserved for someone else")

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pass

    def events_to_register(self) -> tuple[()]:
        return ()


def with_plugin(point: str, name: str) -> SchedulerConfiguration:
    configuration = default_configuration()
    profile = configuration.profiles[0]
    plugins = replace(profile.plugins, **{point: PluginSet(enabled=(PluginRef(name),))})
    return replace(configuration, profiles=(replace(profile, plugins=plugins),))


def nodes(count: int) -> Snapshot:
    decoded = [decode_one(node_dict(f"n{i}", f"z{i % 3}")) for i in range(count)]
    return Snapshot(tuple(n for n in decoded if n is not None), ())


def member(name: str, gang: str, size: int) -> Pod:
    raw = pod_dict(name, "default", {"gang": gang, "size": str(size)})
    raw["metadata"]["uid"] = f"uid-{name}"
    decoded = decode_one(raw)
    assert isinstance(decoded, Pod)
    return decoded


def gang_scheduler(snapshot: Snapshot) -> tuple[MemoryScheduler, list[Gang]]:
    made: list[Gang] = []
    plugins = {**registry(), GANG: gang_factory(10.0, made)}
    return MemoryScheduler(with_plugin("permit", GANG), snapshot, registry=plugins), made


def test_a_gang_waits_at_permit_assumed_until_its_last_member_lets_it_go():
    scheduler, gangs = gang_scheduler(nodes(3))
    for i in range(3):
        scheduler.add(member(f"g{i}", "a", 3))
    scheduler.run()
    assert sorted(scheduler.placements) == ["default/g0", "default/g1", "default/g2"]
    assert gangs[0].assumed_at_permit == [1, 2, 3]  # each member is assumed before Permit
    assert scheduler.now == 0  # no timeout was needed
    assert [e.reason for e in scheduler.events] == ["Scheduled"] * 3
    assert list(scheduler.waiting_pods) == []


def test_an_incomplete_gang_times_out_unschedulable_and_leaves_the_snapshot():
    snapshot = nodes(3)
    scheduler, _ = gang_scheduler(snapshot)
    scheduler.add(member("g0", "b", 3))
    scheduler.add(member("g1", "b", 3))
    scheduler.run()
    assert scheduler.placements == {}
    assert scheduler.now == 10
    message = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang."
    assert scheduler.conditions == {
        "default/g0": ("Unschedulable", message),
        "default/g1": ("Unschedulable", message),
    }
    assert all(not info.pods for info in snapshot.node_infos)
    assert scheduler.pending() == {"default/g0": message, "default/g1": message}


def test_a_reserve_rejection_is_a_fit_error_over_the_chosen_node():
    plugins = {**registry(), "RejectAtReserve": lambda args, handle, features: RejectAtReserve()}
    scheduler = MemoryScheduler(
        with_plugin("reserve", "RejectAtReserve"), nodes(2), registry=plugins
    )
    scheduler.add(member("p", "c", 1))
    scheduler.run()
    message = "0/1 nodes are available: 1 node(s) were reserved for someone else."
    assert scheduler.conditions == {"default/p": ("Unschedulable", message)}
    assert scheduler.nominations == {"default/p": ""}  # clearNominatedNode
