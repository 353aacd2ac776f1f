"""The simulator end to end on small scenarios: loop contract, controllers, spread effects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from topospread.engine.sim.scenario import parse_scenario
from topospread.engine.sim.simulator import EmptySchedule, Simulator, simulate
from topospread.io.scenarios import load_scenario

SCENARIOS = Path(__file__).resolve().parents[3] / "src" / "topospread" / "examples" / "scenarios"

HEADER = """
apiVersion: topospread.dev/v1alpha1
kind: Scenario
metadata: {name: t}
cluster:
  nodes: {zones: [a, b, c], perZone: 2}
steps:
"""


def workload(kind="Deployment", name="web", replicas=6, extra_spec="", constraint=True):
    spread = (
        "            topologySpreadConstraints:\n"
        "            - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
        f"whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: {name}}}}}}}\n"
        if constraint
        else ""
    )
    return (
        f"    - apiVersion: apps/v1\n      kind: {kind}\n      metadata: {{name: {name}}}\n"
        f"      spec:\n        replicas: {replicas}\n{extra_spec}"
        f"        selector: {{matchLabels: {{app: {name}}}}}\n"
        f"        template:\n          metadata: {{labels: {{app: {name}}}}}\n"
        f"          spec:\n{spread}"
        f"            containers: [{{name: c, image: pause}}]\n"
    )


def run(text: str, seed: int = 0):
    return simulate(parse_scenario(yaml.safe_load(HEADER + text), "t.yaml"), seed)


def zone_counts(step, constraint=0, workload=0):
    return dict(step.spread[workload].constraints[constraint].domain_counts)


def test_step_on_an_empty_schedule_raises_a_named_exception():
    scenario = parse_scenario(yaml.safe_load(HEADER.replace("steps:", "steps: []")), "t.yaml")
    simulator = Simulator(scenario)
    with pytest.raises(EmptySchedule):
        simulator.step()


def test_run_until_stops_before_later_events():
    scenario = parse_scenario(yaml.safe_load(HEADER.replace("steps:", "steps: []")), "t.yaml")
    simulator = Simulator(scenario)
    simulator.schedule(10, 0, lambda: None)
    simulator.schedule(40, 0, lambda: None)
    simulator.run(until=20)
    assert simulator.now == 20
    assert simulator.peek() == 40


def test_a_deployment_spreads_its_replicas_evenly_over_zones():
    result = run("- apply:\n    objects:\n" + workload())
    step = result.steps[-1]
    assert zone_counts(step) == {"a": 2, "b": 2, "c": 2}
    assert not step.pending
    names = [p.name for n in step.layout for p in n.pods]
    rs = step.spread[0].template.removeprefix("ReplicaSet ")
    assert all(name.startswith(rs + "-") and len(name) == len(rs) + 6 for name in names)


def test_scale_down_leaves_the_spread_unbalanced():
    # The documented limitation, asserted: victims are ranked without any topology.
    result = simulate(load_scenario(SCENARIOS / "scale-down-imbalance.yaml"))
    deployed, scaled_down, scaled_up = result.steps[1:]
    assert zone_counts(deployed) == {"zone-a": 3, "zone-b": 3, "zone-c": 3}
    report = scaled_down.spread[0].constraints[0]
    assert dict(report.domain_counts) == {"zone-a": 0, "zone-b": 3, "zone-c": 3}
    assert report.skew == 3 > report.max_skew
    assert not report.satisfied
    assert {e.kind for e in scaled_down.events} == {"deleted"}
    assert zone_counts(scaled_up) == {"zone-a": 3, "zone-b": 3, "zone-c": 3}


def test_with_match_label_keys_the_new_replica_set_spreads_independently():
    result = simulate(load_scenario(SCENARIOS / "rollout-match-label-keys.yaml"))
    after_plain, after_keyed = result.steps[-2], result.steps[-1]
    plain = after_keyed.spread[0]
    keyed = after_keyed.spread[1]
    assert plain.workload == "Deployment/default/plain"
    assert keyed.workload == "Deployment/default/keyed"
    # Without matchLabelKeys the new pods were placed against old+new counts and end
    # up crowded into the zones the old ReplicaSet had fewest pods in.
    assert not plain.constraints[0].satisfied
    assert "pod-template-hash" not in plain.constraints[0].selector
    # With it, only the new ReplicaSet's pods count: it is spread on its own.
    assert keyed.constraints[0].satisfied
    assert "pod-template-hash in (" in keyed.constraints[0].selector
    assert sum(keyed.constraints[0].domain_counts.values()) == 4
    assert after_plain.spread[0].constraints[0].skew == plain.constraints[0].skew


def test_same_seed_same_json_and_another_seed_other_names():
    scenario = load_scenario(SCENARIOS / "story.yaml")
    first = json.dumps(simulate(scenario, 3).to_json())
    assert first == json.dumps(simulate(scenario, 3).to_json())
    assert first != json.dumps(simulate(scenario, 4).to_json())


def test_rolling_update_respects_max_surge_and_max_unavailable():
    result = run(
        "- apply:\n    objects:\n"
        + workload(
            replicas=4,
            extra_spec="        strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n",
        )
        + "- rollout: {deployment: web, image: pause:2}\n"
    )
    events = result.steps[-1].events
    live, peak = 4, 4
    for e in events:
        live += {"created": 1, "deleted": -1}.get(e.kind, 0)
        peak = max(peak, live)
    assert peak == 5  # replicas + maxSurge, never more
    assert live == 4
    assert len({e.pod.rsplit("-", 1)[0] for e in events if e.kind == "created"}) == 1


def test_zone_failure_not_ready_evicts_after_toleration_and_pods_stay_pending():
    result = run(
        "- apply:\n    objects:\n" + workload() + "- failZone: {zone: a}\n"
        "- taintNode: {zone: a, remove: [node.kubernetes.io/unreachable]}\n"
    )
    failed, recovered = result.steps[-2], result.steps[-1]
    evictions = [e for e in failed.events if e.kind == "evicted"]
    assert len(evictions) == 2
    assert {e.time for e in evictions} == {failed.started + 300}
    # nodeTaintsPolicy defaults to Ignore: the tainted zone still counts (with 0 pods).
    assert len(failed.pending) == 2
    assert "didn't match pod topology spread constraints" in failed.pending[0].message
    assert "untolerated taint" in failed.pending[0].message
    assert not recovered.pending
    assert zone_counts(recovered) == {"a": 2, "b": 2, "c": 2}


def test_removed_nodes_take_their_pods_and_the_zone_leaves_the_domains():
    result = run("- apply:\n    objects:\n" + workload() + "- failZone: {zone: a, mode: remove}\n")
    step = result.steps[-1]
    assert not step.pending
    assert zone_counts(step) == {"b": 3, "c": 3}


def test_drain_respects_a_pod_disruption_budget():
    pdb = (
        "    - apiVersion: policy/v1\n      kind: PodDisruptionBudget\n"
        "      metadata: {name: web}\n"
        "      spec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\n"
    )
    result = run(
        "- apply:\n    objects:\n"
        + workload(constraint=False)
        + pdb
        + "- drain: {nodes: [node-a-1]}\n"
    )
    step = result.steps[-1]
    assert any("PodDisruptionBudget web" in note for note in step.notes)
    node = next(n for n in step.layout if n.name == "node-a-1")
    assert node.unschedulable
    assert node.pods


def test_drain_without_budget_moves_pods_elsewhere():
    result = run("- apply:\n    objects:\n" + workload(constraint=False) + "- drain: {zone: a}\n")
    step = result.steps[-1]
    assert all(not n.pods for n in step.layout if n.zone == "a")
    assert sum(len(n.pods) for n in step.layout) == 6


def test_stateful_set_ordered_ready_creates_one_pod_at_a_time_in_order():
    result = run("- apply:\n    objects:\n" + workload(kind="StatefulSet", name="db", replicas=3))
    created = [e for e in result.steps[-1].events if e.kind == "created"]
    assert [e.pod for e in created] == ["default/db-0", "default/db-1", "default/db-2"]
    assert created[0].time < created[1].time < created[2].time


def test_stateful_set_parallel_creates_all_pods_at_once_and_scales_down_from_the_top():
    spec = "        podManagementPolicy: Parallel\n"
    result = run(
        "- apply:\n    objects:\n"
        + workload(kind="StatefulSet", name="db", replicas=3, extra_spec=spec)
        + "- scale: {statefulSet: db, replicas: 1}\n"
    )
    created = [e for e in result.steps[-2].events if e.kind == "created"]
    assert len({e.time for e in created}) == 1
    deleted = [e.pod for e in result.steps[-1].events if e.kind == "deleted"]
    assert deleted == ["default/db-2", "default/db-1"]


def test_scaling_during_a_rollout_is_proportional():
    result = run(
        "- apply:\n    objects:\n"
        + workload(
            replicas=4,
            extra_spec="        strategy: {rollingUpdate: {maxSurge: 2, maxUnavailable: 0}}\n",
        )
        + "- cordon: {zone: a}\n- cordon: {zone: b}\n- cordon: {zone: c}\n"
        + "- rollout: {deployment: web, image: pause:2}\n"
        + "- scale: {deployment: web, replicas: 8}\n"
    )
    # The rollout is stuck (new pods Pending); a scale-up is split over both ReplicaSets.
    stuck, scaled = result.steps[-2], result.steps[-1]
    assert len(stuck.pending) == 2
    groups: dict[str, int] = {}
    for node in scaled.layout:
        for pod in node.pods:
            groups[pod.group] = groups.get(pod.group, 0) + 1
    old_rs = next(iter(groups))
    assert groups[old_rs] == 4  # cordoned nodes: the old pods stay, nothing new lands
    assert len(scaled.pending) == 6  # 8 + 2 surge - 4 running: both ReplicaSets grew


def test_the_scheduler_lists_the_replica_sets_deployments_create():
    # System default spreading takes its selector from the pod's ReplicaSet: the
    # scheduler must see ReplicaSets that a Deployment controller creates mid-run.
    sim = Simulator(
        parse_scenario(
            yaml.safe_load(HEADER + "- apply:\n    objects:\n" + workload(constraint=False)), "t"
        )
    )
    sim.run_scenario()
    (framework,) = sim._framework_map().values()
    listed = [rs.metadata.name for rs in framework.handle.objects.replica_sets]
    assert len(listed) == 1
    assert listed[0].startswith("web-")


def test_progress_is_reported_after_each_step_and_during_long_steps(monkeypatch):
    from topospread.engine.sim import simulator as simulator_module

    monkeypatch.setattr(simulator_module, "PROGRESS_EVERY", 2)
    reports = []
    scenario = parse_scenario(yaml.safe_load(HEADER + "- apply:\n    objects:\n" + workload()), "t")
    simulate(scenario, 0, progress=reports.append)
    assert [(r.steps_done, r.steps_total) for r in reports][-1] == (2, 2)
    assert reports[-1].pods_bound == 6
    within_step = [r for r in reports if r.steps_done == 1 and r.pods_bound > 0]
    assert within_step, "no report while the step's six pods were being scheduled"
    assert [r.pods_bound for r in reports] == sorted(r.pods_bound for r in reports)


def test_a_namespace_s_labels_are_what_pod_affinity_s_namespace_selector_matches():
    # web must run beside a db of a namespace labelled team=data: only the Namespace's
    # labels say that "data" is one; without them web would stay Pending.
    result = run(
        """
- apply:
    objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: data, labels: {team: data}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: db, namespace: data, labels: {app: db}}
      spec: {containers: [{name: c, image: pause}]}
- apply:
    objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, labels: {app: web}}
      spec:
        containers: [{name: c, image: pause}]
        affinity:
          podAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector: {matchLabels: {app: db}}
              namespaceSelector: {matchLabels: {team: data}}
              topologyKey: kubernetes.io/hostname
"""
    )
    first, second = result.steps[1], result.steps[2]
    assert not any("not simulated" in note for note in first.notes)
    (db,) = first.placements
    (web,) = second.placements
    assert web.node == db.node
