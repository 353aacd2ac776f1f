"""The scheduling queue against kube-scheduler's PriorityQueue rules, on a fake clock."""

from __future__ import annotations

import threading

import pytest

from topospread.model.objects import Pod
from topospread.scheduler.cache import decode_one
from topospread.scheduler.queue import ClusterEvent, SchedulingQueue
from topospread.testing.live import pod as pod_dict


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_pod(name: str, *, priority: int = 0, gates: tuple[str, ...] = ()) -> Pod:
    raw = pod_dict(name, "default", {"app": "x"})
    raw["metadata"]["uid"] = f"uid-{name}"
    raw["spec"]["priority"] = priority
    if gates:
        raw["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    decoded = decode_one(raw)
    assert isinstance(decoded, Pod)
    return decoded


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(clock: Clock) -> SchedulingQueue:
    return SchedulingQueue(initial_backoff=1, max_backoff=10, max_in_unschedulable=300, clock=clock)


def test_active_queue_orders_by_priority_then_arrival(queue, clock):
    queue.add(make_pod("low", priority=1))
    clock.now += 1
    queue.add(make_pod("high", priority=10))
    clock.now += 1
    queue.add(make_pod("low2", priority=1))
    popped = [queue.pop(0).key for _ in range(3)]
    assert popped == ["default/high", "default/low", "default/low2"]
    assert queue.pop(0) is None
    assert queue.scheduling_cycle == 3


def test_unschedulable_pod_waits_for_an_event_its_rejector_cares_about(queue, clock):
    queue.add(make_pod("p"))
    info = queue.pop(0)
    info.unschedulable_plugins = frozenset({"NodeResourcesFit"})
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    assert queue.where("default/p") == "unschedulable"
    # A new assigned pod cannot free resources: NodeResourcesFit does not register for it.
    assert queue.move_all_to_active_or_backoff(ClusterEvent.ASSIGNED_POD_ADD) == 0
    assert queue.where("default/p") == "unschedulable"
    # A deleted pod can; the pod is still backing off (1 s from its attempt).
    assert queue.move_all_to_active_or_backoff(ClusterEvent.ASSIGNED_POD_DELETE) == 1
    assert queue.where("default/p") == "backoff"
    clock.now += 2
    assert queue.flush_backoff_completed() == 1
    assert queue.where("default/p") == "active"
    assert queue.pending_pods() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_backoff_doubles_to_the_maximum(queue, clock):
    queue.add(make_pod("p"))
    expiries = []
    for _ in range(6):
        info = queue.pop(0) or queue.pop(0)
        assert info is not None
        queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle, error=True)
        assert queue.where("default/p") == "backoff"
        expiries.append(queue._backoff_time(info) - int(clock.now))
        clock.now = queue._backoff_time(info) + 1
        queue.flush_backoff_completed()
    assert expiries == [1, 2, 4, 8, 10, 10]


def test_error_backoff_is_not_popped_early_but_unschedulable_backoff_is(queue, clock):
    queue.add(make_pod("err"))
    queue.add(make_pod("uns"))
    first, second = queue.pop(0), queue.pop(0)
    queue.add_unschedulable_if_not_present(first, queue.scheduling_cycle, error=True)
    second.unschedulable_plugins = frozenset({"PodTopologySpread"})
    # A move request during the cycle sends the unschedulable pod to backoffQ.
    queue.move_all_to_active_or_backoff(ClusterEvent.NODE_ADD)
    queue.add_unschedulable_if_not_present(second, queue.scheduling_cycle - 1)
    assert queue.where("default/uns") == "backoff"
    # activeQ is empty: the unschedulable one is popped before its backoff ends; the
    # pod that failed with an error waits.
    assert queue.pop(0).key == "default/uns"
    assert queue.pop(0) is None


def test_scheduling_gates_hold_the_pod_until_removed(queue):
    gated = make_pod("g", gates=("example.com/wait",))
    queue.add(gated)
    assert queue.pending_pods()["gated"] == 1
    assert queue.pop(0) is None
    queue.move_all_to_active_or_backoff(ClusterEvent.NODE_ADD)
    assert queue.pop(0) is None
    queue.update(make_pod("g"))
    assert queue.pop(0).key == "default/g"


def test_leftover_unschedulable_pods_are_flushed(queue, clock):
    queue.add(make_pod("p"))
    info = queue.pop(0)
    info.unschedulable_plugins = frozenset({"NodeAffinity"})
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    clock.now += 299
    assert queue.flush_unschedulable_leftover() == 0
    clock.now += 2
    assert queue.flush_unschedulable_leftover() == 1
    assert queue.where("default/p") == "active"


def test_a_pod_deleted_in_flight_is_not_requeued(queue):
    queue.add(make_pod("p"))
    info = queue.pop(0)
    queue.delete("default/p")
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    assert queue.where("default/p") is None
    assert queue.pods() == []


def test_an_update_in_flight_is_kept_for_the_retry(queue):
    queue.add(make_pod("p", priority=1))
    info = queue.pop(0)
    queue.update(make_pod("p", priority=5))
    assert queue.where("default/p") == "inflight"
    assert info.pod.priority == 5


def test_nominator(queue):
    p = make_pod("p", priority=5)
    queue.add(p)
    queue.nominate(p, "node-1")
    assert [x.key for x in queue.nominated_pods_for_node("node-1")] == ["default/p"]
    assert queue.nominated_pods_for_node("node-1")[0].nominated_node_name == "node-1"
    queue.nominate(p, "")
    assert queue.nominated_node_names() == ()
    queue.nominate(p, "node-2")
    queue.delete("default/p")
    assert queue.nominated_node_names() == ()


def test_pop_blocks_until_a_pod_arrives_and_close_ends_it():
    queue = SchedulingQueue()
    got = []
    thread = threading.Thread(target=lambda: got.append(queue.pop()))
    thread.start()
    queue.add(make_pod("p"))
    thread.join(5)
    assert got
    assert got[0].key == "default/p"
    thread = threading.Thread(target=lambda: got.append(queue.pop()))
    thread.start()
    queue.close()
    thread.join(5)
    assert got[-1] is None
