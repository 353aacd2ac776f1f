"""The simulator preempts as kube-scheduler's DefaultPreemption does.

Two nodes of 2 CPU; low-priority pods fill them; a higher-priority pod that fits nowhere
evicts the victims the PostFilter chose on the node it nominated, is nominated there and
lands there on its next attempt, while the nominated room is kept from lower-priority
pods (the victims' replacements among them) by the nominator. Every test runs both with
the bulk Filter path and with the per-node one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml

from topospread.engine.loop import SchedulingQueue
from topospread.engine.sim import simulator as simulator_module
from topospread.engine.sim.scenario import parse_scenario
from topospread.engine.sim.simulator import SimulationLimitError, Simulator
from topospread.framework.runtime import Framework
from topospread.model.objects import Container, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity

HEADER = """
apiVersion: topospread.dev/v1alpha1
kind: Scenario
metadata: {name: preemption}
cluster:
  nodes: {zones: [a], perZone: 2, allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
  objects:"""


MAX_EVENTS = 20_000
"""A preemption loop fails fast instead of running to the default event budget."""


@pytest.fixture(autouse=True, params=["bulk", "per-node"])
def filter_path(request, monkeypatch):
    if request.param == "per-node":
        monkeypatch.setattr(Framework, "run_filter_plugins_batch", lambda self, state, pod: None)
    return request.param


def simulate(scenario: Any):
    return Simulator(scenario, max_events_per_step=MAX_EVENTS).run_scenario()


CPU2 = (Container("c", "pause", {"cpu": parse_quantity("2")}),)


def deployment(
    name: str, replicas: int, priority: int, cpu: str = "1", node: str | None = None
) -> str:
    selector = f"          nodeSelector: {{kubernetes.io/hostname: {node}}}\n" if node else ""
    return (
        f"  - apiVersion: apps/v1\n    kind: Deployment\n    metadata: {{name: {name}}}\n"
        f"    spec:\n      replicas: {replicas}\n"
        f"      selector: {{matchLabels: {{app: {name}}}}}\n"
        f"      template:\n        metadata: {{labels: {{app: {name}}}}}\n"
        f"        spec:\n          priorityClassName: {priority_class(priority)}\n"
        + selector
        + f"          containers: [{{name: c, image: pause, resources: {{requests: "
        f"{{cpu: '{cpu}'}}}}}}]\n"
    )


def pod(name: str, priority: int, cpu: str = "1") -> str:
    resources = f"{{requests: {{cpu: '{cpu}'}}}}"
    return (
        f"  - apiVersion: v1\n    kind: Pod\n    metadata: {{name: {name}}}\n"
        f"    spec:\n      priorityClassName: {priority_class(priority)}\n"
        f"      containers: [{{name: c, image: pause, resources: {resources}}}]\n"
    )


def budget(name: str, app: str, min_available: int, stale_allowed: int = 5) -> str:
    # status.disruptionsAllowed as written is stale on purpose: the simulator computes it.
    return (
        "  - apiVersion: policy/v1\n    kind: PodDisruptionBudget\n"
        f"    metadata: {{name: {name}}}\n"
        f"    spec: {{minAvailable: {min_available}, selector: {{matchLabels: {{app: {app}}}}}}}\n"
        f"    status: {{disruptionsAllowed: {stale_allowed}}}\n"
    )


def step(objects: str) -> str:
    indented = "".join("    " + line + "\n" for line in objects.splitlines())
    return "- apply:\n    objects:\n" + indented


def priority_class(value: int) -> str:
    return f"priority-{value}"


def priority_classes() -> str:
    # The API server's Priority admission gives a pod its class's value.
    return "".join(
        f"  - apiVersion: scheduling.k8s.io/v1\n    kind: PriorityClass\n"
        f"    metadata: {{name: {priority_class(value)}}}\n    value: {value}\n"
        for value in PRIORITIES
    )


PRIORITIES = (0, 1, 5, 10, 50, 100, 500, 1000, 2000, 5000)


def scenario(initial: str, *steps: str) -> Any:
    objects = "\n" + priority_classes() + initial
    text = HEADER + objects + "steps:\n" + "".join(step(s) for s in steps)
    return parse_scenario(yaml.safe_load(text), "preemption.yaml")


def node_pods(step_result, node: str) -> list[str]:
    return [p.name for n in step_result.layout if n.name == node for p in n.pods]


def of_kind(step_result, kind: str) -> list:
    return [e for e in step_result.events if e.kind == kind]


def test_a_high_priority_deployment_preempts_low_priority_pods():
    result = simulate(scenario(deployment("batch", 4, 0), deployment("web", 1, 1000, cpu="2")))
    initial, applied = result.steps
    assert sum(len(n.pods) for n in initial.layout) == 4
    preempted = of_kind(applied, "preempted")
    # Both nodes hold two batch pods; the first candidate in node order wins the tie.
    assert [e.node for e in preempted] == ["node-a-1", "node-a-1"]
    web = next(e.pod for e in applied.events if e.kind == "created" and "/web-" in e.pod)
    assert all(e.detail == f"preempted by {web} (priority 1000) on node-a-1" for e in preempted)
    # The ReplicaSet replaces its victims; they stay Pending: the nominated room is
    # kept for web, and they cannot preempt anything (nothing has a lower priority).
    created = [e.pod for e in of_kind(applied, "created") if "/batch-" in e.pod]
    assert len(created) == 2
    assert sorted(f"{p.namespace}/{p.name}" for p in applied.pending) == sorted(created)
    assert all("2 Insufficient cpu" in p.message for p in applied.pending)
    # web lands on the nominated node at its next attempt: the victims' deletion during
    # its cycle sent it to backoffQ, and with activeQ empty (the replacements tried and
    # failed) it is popped from there at once (SchedulerPopFromBackoffQ, on in v1.37).
    placed = [e for e in applied.placements if "/web-" in e.pod]
    assert [(e.node, e.time) for e in placed] == [("node-a-1", preempted[0].time)]
    assert node_pods(applied, "node-a-1") == [web.split("/")[1]]
    assert len(node_pods(applied, "node-a-2")) == 2
    assert not any(p.workload == "Deployment/web" for p in applied.pending)


def test_preemption_spares_pods_a_budget_protects():
    # db (priority 10) on node-a-1, batch (priority 100) on node-a-2: without a budget
    # the lower-priority db pods are the victims; with one that allows no disruption
    # (its stale status says 5: the live count is what counts) batch pays instead.
    initial = deployment("db", 2, 10, node="node-a-1") + deployment(
        "batch", 2, 100, node="node-a-2"
    )
    web = pod("web", 1000, cpu="2")
    unprotected = simulate(scenario(initial, web)).steps[-1]
    assert {e.pod.split("-")[0] for e in of_kind(unprotected, "preempted")} == {"default/db"}
    assert node_pods(unprotected, "node-a-1") == ["web"]

    protected = simulate(scenario(initial + budget("db", "db", 2), web)).steps[-1]
    preempted = of_kind(protected, "preempted")
    assert {e.pod.split("-")[0] for e in preempted} == {"default/batch"}
    assert {e.node for e in preempted} == {"node-a-2"}
    assert node_pods(protected, "node-a-2") == ["web"]
    assert len(node_pods(protected, "node-a-1")) == 2


def test_a_budget_is_violated_when_every_candidate_violates_one():
    initial = deployment("db", 4, 10) + budget("db", "db", 4)
    applied = simulate(scenario(initial, pod("web", 1000, cpu="2"))).steps[-1]
    assert len(of_kind(applied, "preempted")) == 2
    assert "web" in node_pods(applied, "node-a-1")


def test_nominated_room_is_kept_from_a_lower_priority_pod():
    # web (1000) preempts both batch pods on node-a-1 and is nominated there. mid (500)
    # comes next in the same second: node-a-1 has 2 free CPUs, but web counts there
    # as nominated, so mid does not take the room; it preempts a batch pod on node-a-2.
    applied = simulate(
        scenario(deployment("batch", 4, 0), pod("web", 1000, cpu="2") + pod("mid", 500))
    ).steps[-1]
    preempted = of_kind(applied, "preempted")
    by_node = {
        node: [e.detail.split()[2] for e in preempted if e.node == node]
        for node in ("node-a-1", "node-a-2")
    }
    assert by_node == {
        "node-a-1": ["default/web", "default/web"],
        "node-a-2": ["default/mid"],
    }
    assert {(e.pod, e.node) for e in applied.placements} == {
        ("default/web", "node-a-1"),
        ("default/mid", "node-a-2"),
    }
    assert len(node_pods(applied, "node-a-2")) == 2
    assert len(applied.pending) == 3  # the batch replacements


def test_without_the_nominator_the_freed_room_is_taken_and_preemption_never_ends(monkeypatch):
    # The counterpart of the test above, to show what the nominator prevents: blind to
    # nominated pods, mid and the batch replacements bind into the room web's
    # preemption opened, web preempts again, and so on without end.
    monkeypatch.setattr(SchedulingQueue, "nominated_pods_for_node", lambda self, node: [])
    monkeypatch.setattr(SchedulingQueue, "nominated_node_names", lambda self: ())
    sim = Simulator(
        scenario(deployment("batch", 4, 0), pod("web", 1000, cpu="2") + pod("mid", 500)),
        max_events_per_step=2_000,
    )
    with pytest.raises(SimulationLimitError):
        sim.run_scenario()
    first = {}
    for e in sim._events:
        if e.kind == "scheduled":
            first.setdefault(e.pod, e.node)
    assert first["default/mid"] == "node-a-1"


def test_a_pod_equal_in_priority_may_not_take_the_nominated_room_either():
    applied = simulate(
        scenario(deployment("batch", 4, 0), pod("web", 1000, cpu="2") + pod("peer", 1000))
    ).steps[-1]
    placed = {e.pod: e.node for e in applied.placements}
    assert placed["default/web"] == "node-a-1"
    assert placed["default/peer"] == "node-a-2"


def test_the_nomination_is_set_while_pending_and_cleared_on_binding():
    sim = Simulator(scenario(deployment("batch", 4, 0)), max_events_per_step=MAX_EVENTS)
    sim.run_scenario()
    web = sim.state.create_pod(
        Pod(
            ObjectMeta("web", "default"),
            priority=1000,
            priority_class_name=priority_class(1000),
            containers=CPU2,
        ),
        None,
    )
    while not web.pod.nominated_node_name:  # web's first attempt: it preempts
        sim.step()
    assert web.node_name == ""
    assert web.pod.nominated_node_name == "node-a-1"
    assert [p.name for p in sim.queue.nominated_pods_for_node("node-a-1")] == ["web"]
    sim.run()
    assert web.node_name == "node-a-1"
    assert web.pod.nominated_node_name == ""  # ClearingNominatedNodeNameAfterBinding
    assert sim.queue.nominated_pods_for_node("node-a-1") == []


def test_preempting_clears_lower_priority_nominations_to_the_node():
    sim = Simulator(scenario(deployment("batch", 4, 0)), max_events_per_step=MAX_EVENTS)
    sim.run_scenario()
    create = sim.state.create_pod
    # Pending pods nominated earlier (as if their own preemptions were under way).
    lower = create(
        Pod(
            ObjectMeta("lower", "default"),
            priority=10,
            priority_class_name=priority_class(10),
            containers=CPU2,
        ),
        None,
    )
    equal = create(
        Pod(
            ObjectMeta("equal", "default"),
            priority=1000,
            priority_class_name=priority_class(1000),
            containers=CPU2,
        ),
        None,
    )
    far = create(
        Pod(
            ObjectMeta("far", "default"),
            priority=10,
            priority_class_name=priority_class(10),
            containers=CPU2,
        ),
        None,
    )
    for record, node in ((lower, "node-a-1"), (equal, "node-a-1"), (far, "node-a-2")):
        record.pod = replace(record.pod, nominated_node_name=node)
        sim.queue.nominate(record.pod, node)
    web = create(
        Pod(
            ObjectMeta("web", "default"),
            priority=1000,
            priority_class_name=priority_class(1000),
            containers=CPU2,
        ),
        None,
    )
    sim.loop._clear_lower_nominations(web.pod, "node-a-1")
    assert lower.pod.nominated_node_name == ""
    assert [p.name for p in sim.queue.nominated_pods_for_node("node-a-1")] == ["equal"]
    assert [p.name for p in sim.queue.nominated_pods_for_node("node-a-2")] == ["far"]


def test_a_pod_created_with_a_nominated_node_name_is_nominated_and_tries_it_first():
    sim = Simulator(scenario(""), max_events_per_step=MAX_EVENTS)
    sim.run_scenario()
    nominated = Pod(ObjectMeta("p", "default"), containers=CPU2, nominated_node_name="node-a-2")
    record = sim.state.create_pod(nominated, None)
    assert [p.name for p in sim.queue.nominated_pods_for_node("node-a-2")] == ["p"]
    sim.run()
    # Without the nomination, the empty first node would win the score tie.
    assert record.node_name == "node-a-2"
    assert sim.queue.nominated_pods_for_node("node-a-2") == []


def test_budgets_are_counted_when_preemption_runs(monkeypatch):
    # The scheduler's frameworks are built before the scenario's objects exist, so the
    # budgets they were built with are stale (here: none at all). The dry run must see
    # them as they are when it runs: db is protected, batch pays.
    initial = (
        deployment("db", 2, 10, node="node-a-1")
        + deployment("batch", 2, 100, node="node-a-2")
        + budget("db", "db", 2)
    )
    applied = simulate(scenario(initial, pod("web", 1000, cpu="2"))).steps[-1]
    assert {e.pod.split("-")[0] for e in of_kind(applied, "preempted")} == {"default/batch"}
    # Without the refresh the stale view (no budget) would sacrifice db. (The frameworks
    # are also rebuilt when the listed workloads change; that is switched off too.)
    monkeypatch.setattr(Simulator, "_budgets_changed", lambda self, result: False)
    monkeypatch.setattr(simulator_module, "_same_objects", lambda listed, before: True)
    stale = simulate(scenario(initial, pod("web", 1000, cpu="2"))).steps[-1]
    assert {e.pod.split("-")[0] for e in of_kind(stale, "preempted")} == {"default/db"}
