"""Which pods the planner may move and what replaces them (issue 22, items 9-11): every
movable pod the selector counts, whoever owns it; replacements made from the controller's
current template; a choice that does not depend on pod names; and the Eviction API's rule
for unready pods under a PodDisruptionBudget (pkg/registry/core/pod/storage/eviction.go)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.engine.rebalance import RebalanceOptions, RebalancePlan, plan_rebalance
from topospread.framework.config.decode import default_configuration
from topospread.io.manifests import load_audit_objects
from topospread.model.objects import Pod, PodDisruptionBudget, ReplicaSet

DATA = Path(__file__).parents[2] / "data" / "rebalance"


def _load(name: str) -> list:
    objects, _ = load_audit_objects([str(DATA / f"{name}.yaml")])
    return list(objects)


def _skews(plan: RebalancePlan) -> dict[str, int]:
    return {
        w.ref: c.report.skew
        for w in plan.after.workloads
        for c in w.constraints
        if c.report is not None
    }


def _shape(plan: RebalancePlan) -> tuple[object, ...]:
    """A plan without its pod names: sources, landings, batches, skews."""
    return (
        plan.converged,
        plan.lower_bound,
        tuple(
            (e.batch, e.workload, e.node, e.expected_node, e.tied_nodes, e.certain, e.skew)
            for e in plan.evictions or plan.best_effort
        ),
    )


def _renamed(objects: list, names: dict[str, str]) -> list:
    return [
        replace(o, metadata=replace(o.metadata, name=names[o.name]))
        if isinstance(o, Pod) and o.name in names
        else o
        for o in objects
    ]


def _with_budget(objects: list, **changes: object) -> list:
    return [replace(o, **changes) if isinstance(o, PodDisruptionBudget) else o for o in objects]


# -- item 9: every pod the selector counts ------------------------------------------------------


def test_a_pod_of_another_workload_that_the_selector_counts_is_moved() -> None:
    plan = plan_rebalance(_load("other-replicaset"))
    assert plan.targets == ("Deployment/shop/web",)
    assert plan.converged, plan.reason
    assert plan.proven_minimal
    (eviction,) = plan.evictions
    assert eviction.workload == "Deployment/shop/web-canary"
    assert eviction.node.startswith("node-a-")
    assert not eviction.expected_node.startswith("node-a-")
    # The step is reported on the constraint it moves: web's, counting the canary pod.
    assert [(s.workload, s.before, s.after) for s in eviction.skew] == [
        ("Deployment/shop/web", 2, 1)
    ]
    assert _skews(plan)["Deployment/shop/web"] == 1


def test_another_workloads_pods_stay_when_they_are_not_movable() -> None:
    bare = [
        replace(o, metadata=replace(o.metadata, owner_references=()))
        if isinstance(o, Pod) and o.labels.get("track") == "canary"
        else o
        for o in _load("other-replicaset")
    ]
    plan = plan_rebalance(bare)
    assert not plan.converged
    assert plan.evictions == ()
    assert "no controller would recreate it" in (plan.reason or "")


def test_system_critical_pods_are_never_evicted() -> None:
    critical = [
        replace(o, priority=2_000_000_000, priority_class_name="system-cluster-critical")
        if isinstance(o, Pod) and o.labels.get("track") == "canary"
        else o
        for o in _load("other-replicaset")
    ]
    plan = plan_rebalance(critical)
    assert not plan.converged
    assert "system-critical priority" in (plan.reason or "")


# -- item 10: replacements from the current template, names do not matter ----------------------


def test_the_replacement_is_made_from_the_replica_sets_current_template() -> None:
    objects = _load("edited-template")
    plan = plan_rebalance(objects)
    assert plan.converged, plan.reason
    (eviction,) = plan.evictions
    assert eviction.node.startswith("node-a-")
    # Only a pod of the edited template tolerates zone-c's taint.
    assert set(eviction.tied_nodes) == {"node-c-1", "node-c-2"}
    assert _skews(plan)["Deployment/shop/web"] == 1
    # explain agrees on the template's pod; a copy of the evicted pod would fit nowhere.
    pods = [o for o in objects if isinstance(o, Pod)]
    evicted = next(p for p in pods if p.key == eviction.pod)
    others = [o for o in objects if not isinstance(o, Pod)]
    terminating = replace(evicted, metadata=replace(evicted.metadata, deletion_timestamp="x"))
    cluster = Cluster.from_objects(
        [*others, *(terminating if p.key == eviction.pod else p for p in pods)]
    )
    (rs,) = [o for o in objects if isinstance(o, ReplicaSet)]
    assert rs.template is not None
    made = replace(
        rs.template,
        metadata=replace(
            rs.template.metadata,
            name="web-ca84d-new",
            namespace="shop",
            owner_references=evicted.metadata.owner_references,
        ),
    )
    answer = explain(cluster, made, default_configuration())
    assert set(answer.tied_nodes or (answer.selected_node,)) == set(eviction.tied_nodes)
    copy = replace(
        evicted,
        metadata=replace(evicted.metadata, name="copy", uid=""),
        node_name="",
        phase="Pending",
    )
    # zone-c is a domain (nodeTaintsPolicy Ignore) the copy cannot reach: it fits nowhere.
    assert explain(cluster, copy, default_configuration()).selected_node is None


@pytest.mark.parametrize(
    "name",
    [
        "scaled-down",
        "zone-and-hostname",
        "zone-and-hostname-crowded",
        "min-domains",
        "two-workloads",
        "other-replicaset",
        "edited-template",
    ],
)
def test_renaming_pods_does_not_change_the_plan(name: str) -> None:
    objects = _load(name)
    pods = sorted(o.name for o in objects if isinstance(o, Pod))
    reversed_names = dict(zip(pods, [f"z-{n}" for n in reversed(pods)], strict=True))
    rotated = dict(zip(pods, [f"a-{n}" for n in pods[1:] + pods[:1]], strict=True))
    plan = plan_rebalance(objects)
    for names in (reversed_names, rotated):
        assert _shape(plan_rebalance(_renamed(objects, names))) == _shape(plan)


# -- item 11: unready pods and the budget's health -----------------------------------------------


def test_an_unready_pod_stays_while_its_budget_is_unhealthy() -> None:
    plan = plan_rebalance(_load("unready-unhealthy-budget"))
    assert not plan.converged
    assert plan.evictions == ()
    assert (
        "the pod is not Ready and the budget is not healthy: it needs 4 healthy pods and has "
        "3 currently" in (plan.reason or "")
    )


def test_an_unready_pod_goes_past_a_healthy_budget_without_spending_it() -> None:
    # minAvailable 3: 3 healthy of 3 desired, no disruption allowed, yet healthy.
    objects = _with_budget(_load("unready-unhealthy-budget"), desired_healthy=3)
    plan = plan_rebalance(objects)
    assert plan.converged, plan.reason
    (eviction,) = plan.evictions
    pods = {o.key: o for o in objects if isinstance(o, Pod)}
    assert not any(c.type == "Ready" and c.status == "True" for c in pods[eviction.pod].conditions)


def test_always_allow_lets_unready_pods_go_past_an_unhealthy_budget() -> None:
    objects = _with_budget(
        _load("unready-unhealthy-budget"), unhealthy_pod_eviction_policy="AlwaysAllow"
    )
    plan = plan_rebalance(objects)
    assert plan.converged, plan.reason
    assert len(plan.evictions) == 1


def test_a_budget_that_desires_no_healthy_pod_is_not_healthy() -> None:
    # desiredHealthy 0: the unready pod goes through checkAndDecrement, which needs
    # disruptionsAllowed (0 here).
    objects = _with_budget(_load("unready-unhealthy-budget"), desired_healthy=0, current_healthy=0)
    plan = plan_rebalance(objects)
    assert not plan.converged
    assert "allows no disruption" in (plan.reason or "")


def test_an_unready_pod_spends_a_disruption_where_the_budget_is_not_healthy() -> None:
    # A budget that desires no healthy pod (desiredHealthy 0) is never "healthy" for the
    # Eviction API: its unready pods go through checkAndDecrement and spend
    # disruptionsAllowed like Ready ones. One allowed: the two moves of a 4/1/0 spread
    # take two batches, however large a batch may be.
    objects = _with_budget(
        _load("unready-unhealthy-budget"), desired_healthy=0, disruptions_allowed=1
    )
    pods = [o for o in objects if isinstance(o, Pod)]
    moved = next(p for p in pods if p.node_name == "node-b-2")
    objects = [
        replace(o, node_name="node-a-2") if isinstance(o, Pod) and o.key == moved.key else o
        for o in objects
    ]
    plan = plan_rebalance(objects, options=RebalanceOptions(batch_size=5))
    assert plan.converged, plan.reason
    assert [e.batch for e in plan.evictions] == [1, 2]
    # Healthy (3 of 3 desired), the unready pods spend nothing: one batch.
    healthy = _with_budget(objects, desired_healthy=3)
    plan = plan_rebalance(healthy, options=RebalanceOptions(batch_size=5))
    assert plan.converged, plan.reason
    assert [e.batch for e in plan.evictions] == [1, 1]
