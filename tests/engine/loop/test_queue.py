"""The scheduling queue against kube-scheduler's PriorityQueue rules, on a fake clock."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from topospread.engine.loop.queue import SchedulingQueue, build_queueing_hint_map
from topospread.framework.config.decode import default_configuration
from topospread.framework.config.types import PluginRef, Plugins, PluginSet
from topospread.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_FORCE_ACTIVATE,
    EVENT_NODE_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    node_scheduling_properties_change,
    pod_scheduling_properties_change,
    unroll_pod_event,
)
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.framework.status import Code, Status
from topospread.model.objects import ClaimTemplate, ContainerPort, Node, ObjectMeta, Pod, PodVolume
from topospread.model.resources import pod_request_amounts
from topospread.model.storage import PersistentVolumeClaim
from topospread.plugins.registry import registry
from topospread.scheduler.cache import decode_one
from topospread.testing.live import node as node_dict
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


def default_framework() -> Framework:
    return Framework(default_configuration().profiles[0], registry(), Handle(Snapshot([])))


def default_hints() -> dict:
    """The default profile's requeue map, from its plugins' events_to_register."""
    framework = default_framework()
    return {"default-scheduler": build_queueing_hint_map(framework.enqueue_extensions())}


@pytest.fixture
def queue(clock: Clock) -> SchedulingQueue:
    # The default profile's PreEnqueue plugins (SchedulingGates) hold gated pods.
    return SchedulingQueue(
        initial_backoff=1,
        max_backoff=10,
        max_in_unschedulable=300,
        clock=clock,
        queueing_hints=default_hints(),
        pre_enqueue=default_framework().run_pre_enqueue_plugins,
    )


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
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, make_pod("a")) == 0
    assert queue.where("default/p") == "unschedulable"
    # A deleted pod can; the pod is still backing off (1 s from its attempt).
    deleted = replace(make_pod("a"), node_name="n1")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, deleted, None) == 1
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
    queue.move_all_to_active_or_backoff(EVENT_NODE_ADD)
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
    queue.move_all_to_active_or_backoff(EVENT_NODE_ADD)
    assert queue.pop(0) is None
    assert queue.pods()[0].message == "waiting for scheduling gates: [example.com/wait]"
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


# -- requeueing by the rejecting plugins' events_to_register -------------------------------


def make_node(name: str, labels: dict[str, str] | None = None, **spec: object) -> Node:
    raw = node_dict(name, "z1")
    raw["metadata"]["labels"].update(labels or {})
    raw["spec"] = dict(spec)
    decoded = decode_one(raw)
    assert isinstance(decoded, Node)
    return decoded


def rejected(queue: SchedulingQueue, pod: Pod, *plugins: str) -> None:
    queue.add(pod)
    info = queue.pop(0)
    assert info is not None
    assert info.key == pod.key
    info.unschedulable_plugins = frozenset(plugins)
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    assert queue.where(pod.key) == "unschedulable"


def with_host_port(pod: Pod, port: int) -> Pod:
    container = replace(
        pod.containers[0], ports=(ContainerPort(container_port=80, host_port=port),)
    )
    return replace(pod, containers=(container,))


def test_node_ports_hint_queues_only_for_a_deleted_pod_holding_the_wanted_port(queue):
    rejected(queue, with_host_port(make_pod("p"), 8080), "NodePorts")
    other_port = replace(with_host_port(make_pod("a"), 9090), node_name="n1")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, other_port, None) == 0
    no_ports = replace(make_pod("b"), node_name="n1")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, no_ports, None) == 0
    same_port = replace(with_host_port(make_pod("c"), 8080), node_name="n1")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, same_port, None) == 1


def test_a_node_update_is_split_into_the_update_node_events_and_hinted(queue):
    pod = replace(make_pod("p"), node_selector={"disk": "ssd"})
    rejected(queue, pod, "NodeAffinity")
    old = make_node("n1")
    # Annotations only: UpdateNodeAnnotation, which NodeAffinity does not register.
    annotated = replace(old, metadata=replace(old.metadata, annotations={"a": "b"}))
    (event,) = node_scheduling_properties_change(annotated, old)
    assert event.action_type is ActionType.UPDATE_NODE_ANNOTATION
    assert queue.move_all_to_active_or_backoff(event, old, annotated) == 0
    # A label the selector does not ask for: UpdateNodeLabel, the hint says skip.
    other = make_node("n1", {"disk": "hdd"})
    (event,) = node_scheduling_properties_change(other, old)
    assert event.action_type is ActionType.UPDATE_NODE_LABEL
    assert queue.move_all_to_active_or_backoff(event, old, other) == 0
    # The label it asks for: the node turns from unmatched to matched.
    ssd = make_node("n1", {"disk": "ssd"})
    assert queue.move_all_to_active_or_backoff(event, other, ssd) == 1


def test_node_unschedulable_and_taint_hints(queue):
    rejected(queue, make_pod("u"), "NodeUnschedulable")
    rejected(queue, make_pod("t"), "TaintToleration")
    cordoned = make_node("n1", unschedulable=True)
    tainted = make_node("n1", taints=[{"key": "k", "effect": "NoSchedule"}])
    both = make_node("n1", unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}])
    # A new node that is cordoned and tainted helps neither.
    assert queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, both) == 0
    # Uncordoning: an UpdateNodeTaint event; NodeUnschedulable's hint queues, TaintToleration's
    # (the node never had an untolerated taint) does not.
    plain = make_node("n1")
    events = node_scheduling_properties_change(plain, cordoned)
    assert [e.action_type for e in events] == [ActionType.UPDATE_NODE_TAINT]
    assert queue.move_all_to_active_or_backoff(events[0], cordoned, plain) == 1
    assert queue.where("default/u") != "unschedulable"
    assert queue.where("default/t") == "unschedulable"
    # Removing the taint frees the other.
    (event,) = node_scheduling_properties_change(plain, tainted)
    assert queue.move_all_to_active_or_backoff(event, tainted, plain) == 1


def test_a_plugin_without_events_to_register_is_requeued_on_every_event(clock):
    class Declares:
        name = "Declares"

        def filter(self, state, pod, node_info):
            return None

        def events_to_register(self):
            return []

    class Silent:
        name = "Silent"

        def filter(self, state, pod, node_info):
            return None

    def hints(plugin: object) -> dict:
        framework = Framework(
            replace(
                default_configuration().profiles[0],
                plugins=Plugins(filter=PluginSet(enabled=(PluginRef(plugin.name),))),
            ),
            {plugin.name: lambda args, handle, features: plugin},
            Handle(Snapshot([])),
        )
        return {"default-scheduler": build_queueing_hint_map(framework.enqueue_extensions())}

    # No declaration: every event may help (upstream's defaultEnqueueExtension).
    queue = SchedulingQueue(clock=clock, queueing_hints=hints(Silent()))
    rejected(queue, make_pod("p"), "Silent")
    deleted = replace(make_pod("a"), node_name="n1")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, deleted, None) == 1
    # An empty declaration: no cluster event helps, only the timeout or the pod's update.
    queue = SchedulingQueue(clock=clock, queueing_hints=hints(Declares()))
    rejected(queue, make_pod("p"), "Declares")
    assert queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, deleted, None) == 0
    assert queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n")) == 0
    assert queue.move_all_to_active_or_backoff(EVENT_FORCE_ACTIVATE) == 1


def test_a_failing_hint_queues_the_pod(clock):
    def broken(pod, old, new):
        raise RuntimeError("boom")

    hint_map = build_queueing_hint_map([("Broken", [ClusterEventWithHint(EVENT_NODE_ADD, broken)])])
    queue = SchedulingQueue(clock=clock, queueing_hints={"default-scheduler": hint_map})
    rejected(queue, make_pod("p"), "Broken")
    assert queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, make_node("n")) == 1


def test_cluster_event_matching_is_upstreams():
    node = EventResource.NODE
    registered = ClusterEvent(node, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    assert registered.match(ClusterEvent(node, ActionType.UPDATE_NODE_LABEL))
    assert not registered.match(ClusterEvent(node, ActionType.UPDATE_NODE_TAINT))
    # A general Update is not as specific as a registered UpdateNodeLabel, and vice versa.
    assert not registered.match(ClusterEvent(node, ActionType.UPDATE))
    assert ClusterEvent(node, ActionType.UPDATE).match(
        registered_label := ClusterEvent(node, ActionType.UPDATE_NODE_LABEL)
    )
    assert not ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ALL).match(registered_label)
    assert EVENT_FORCE_ACTIVATE.match(registered_label)
    # A Pod registration unrolls into the three pod resources.
    pod_events = unroll_pod_event(ClusterEvent(EventResource.POD, ActionType.DELETE))
    assert {e.resource for e in pod_events} == {
        EventResource.ASSIGNED_POD,
        EventResource.UNSCHEDULED_POD,
        EventResource.TARGET_POD,
    }


def test_pod_update_events_are_upstreams():
    old = replace(make_pod("p"), node_name="n1")
    relabelled = replace(old, metadata=replace(old.metadata, labels={"app": "y"}))
    events = pod_scheduling_properties_change(relabelled, old, requests=pod_request_amounts)
    assert events == [ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)]
    raw = pod_dict("p", "default", {"app": "x"}, cpu="10m")  # make_pod asks for 100m
    raw["metadata"]["uid"] = "uid-p"
    smaller = replace(decode_one(raw), node_name="n1")
    events = pod_scheduling_properties_change(smaller, old, requests=pod_request_amounts)
    assert events == [ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)]
    assert pod_scheduling_properties_change(old, old) == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
    ]


def test_volume_plugins_hint_a_new_claim_the_pod_uses(queue):
    pod = replace(
        make_pod("p"),
        volumes=(
            PodVolume(name="data", claim_name="data"),
            PodVolume(name="scratch", ephemeral=ClaimTemplate(ObjectMeta(name=""))),
        ),
    )
    rejected(queue, pod, "VolumeRestrictions")
    event = ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)

    def claim(name: str, namespace: str = "default") -> PersistentVolumeClaim:
        return PersistentVolumeClaim(ObjectMeta(name=name, namespace=namespace))

    assert queue.move_all_to_active_or_backoff(event, None, claim("other")) == 0
    assert queue.move_all_to_active_or_backoff(event, None, claim("data", "elsewhere")) == 0
    # VolumeRestrictions looks at claimName volumes only, not the ephemeral claim.
    assert queue.move_all_to_active_or_backoff(event, None, claim("p-scratch")) == 0
    assert queue.move_all_to_active_or_backoff(event, None, claim("data")) == 1
    # NodeVolumeLimits counts the ephemeral volume's claim too.
    queue.delete(pod.key)
    rejected(queue, pod, "NodeVolumeLimits")
    assert queue.move_all_to_active_or_backoff(event, None, claim("other")) == 0
    assert queue.move_all_to_active_or_backoff(event, None, claim("p-scratch")) == 1


def test_a_pending_pods_own_update_is_judged_by_the_plugins_that_rejected_it(queue):
    # A label change is a TargetPod/UpdatePodLabel event: PodTopologySpread registers it,
    # NodeResourcesFit does not (only a smaller request, UpdatePodScaleDown, may help it).
    spread = make_pod("spread")
    fit = make_pod("fit")
    rejected(queue, spread, "PodTopologySpread")
    rejected(queue, fit, "NodeResourcesFit")
    relabel = {**spread.labels, "tier": "b"}
    queue.update(replace(spread, metadata=replace(spread.metadata, labels=relabel)))
    queue.update(replace(fit, metadata=replace(fit.metadata, labels=relabel)))
    assert queue.where("default/spread") in ("active", "backoff")
    assert queue.where("default/fit") == "unschedulable"
    # An update that changes nothing the scheduler reads (UpdatePodOther) moves neither.
    annotated = replace(fit, metadata=replace(fit.metadata, annotations={"note": "x"}))
    queue.update(annotated)
    assert queue.where("default/fit") == "unschedulable"


def test_a_gated_pod_stays_gated_until_its_last_gate_goes(queue):
    queue.add(make_pod("g", gates=("a", "b")))
    queue.update(make_pod("g", gates=("b",)))
    assert queue.where("default/g") == "unschedulable"
    assert queue.pods()[0].message == "waiting for scheduling gates: [b]"
    queue.update(make_pod("g"))
    assert queue.where("default/g") == "active"


def test_a_pod_gated_at_pop_is_asked_again_when_it_changed_or_was_helped_in_flight(queue):
    # The pod as popped is held by a PreEnqueue plugin (its claims not there yet); while
    # it was in flight the pod itself was updated: it goes straight back to activeQ.
    queue.add(make_pod("p"))
    info = queue.pop(0)
    judged = info.pod
    queue.update(replace(judged, metadata=replace(judged.metadata, labels={"app": "y"})))
    held = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("claim missing",), "DynamicResources")
    queue.gate(info, held, judged)
    assert queue.where("default/p") == "active"
    # Unchanged and no event in flight: it waits, gated, with no attempt counted.
    info = queue.pop(0)
    queue.gate(info, held, info.pod)
    assert queue.pending_pods()["gated"] == 1
    assert info.attempts == 0  # two pops, no cycle
