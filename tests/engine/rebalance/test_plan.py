"""The rebalance planner on YAML fixtures (tests/data/rebalance): the simulated end state
satisfies every target constraint, no PodDisruptionBudget is broken, no DaemonSet pod is
evicted, no other workload's spread gets worse, and a plan that cannot balance says why.
Each step is re-checked independently with ``explain`` (the replacement's tied nodes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from topospread.engine.audit import Scope
from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.engine.rebalance import (
    RebalanceOptions,
    RebalancePlan,
    minimum_moves,
    plan_rebalance,
)
from topospread.framework.config.decode import default_configuration
from topospread.io.manifests import load_audit_objects
from topospread.model.objects import Pod, PodDisruptionBudget

DATA = Path(__file__).parents[2] / "data" / "rebalance"
CONVERGING = [
    "scaled-down",
    "zone-and-hostname",
    "zone-and-hostname-crowded",
    "min-domains",
    "two-workloads",
]


def _load(name: str):
    objects, _ = load_audit_objects([str(DATA / f"{name}.yaml")])
    return objects


def _constraints(report):
    return {
        (w.ref, c.report.topology_key, c.report.when_unsatisfiable): c.report
        for w in report.workloads
        for c in w.constraints
        if c.report is not None
    }


def _replay(objects, plan: RebalancePlan) -> list[Pod]:
    """The plan replayed with explain: each replacement's tied nodes as explain finds them."""
    pods = [o for o in objects if isinstance(o, Pod)]
    others = [o for o in objects if not isinstance(o, Pod)]
    configuration = default_configuration()
    batch = 1
    for e in plan.evictions:
        if e.batch != batch:
            # A new batch: the pods evicted before it have terminated.
            pods = [p for p in pods if p.metadata.deletion_timestamp is None]
            batch = e.batch
        evicted = next(p for p in pods if p.key == e.pod)
        assert evicted.node_name == e.node
        terminating = replace(evicted, metadata=replace(evicted.metadata, deletion_timestamp="x"))
        pods = [terminating if p.key == e.pod else p for p in pods]
        new = replace(
            evicted,
            metadata=replace(evicted.metadata, name=f"{evicted.name}-new", uid=f"new-{e.step}"),
            node_name="",
            phase="Pending",
        )
        cluster = Cluster.from_objects([*others, *pods])
        answer = explain(cluster, new, configuration)
        assert set(answer.tied_nodes or (answer.selected_node,)) == set(e.tied_nodes), e
        assert e.expected_node in e.tied_nodes
        pods.append(replace(new, node_name=e.expected_node, phase="Running"))
    return [p for p in pods if p.metadata.deletion_timestamp is None]


@pytest.mark.parametrize("name", CONVERGING)
def test_converging_plans_satisfy_every_constraint(name: str) -> None:
    objects = _load(name)
    plan = plan_rebalance(objects)
    assert plan.converged, plan.reason
    assert plan.evictions
    assert len(plan.evictions) >= plan.lower_bound
    after = _constraints(plan.after)
    for (ref, _, action), report in after.items():
        if ref in plan.targets and action == "DoNotSchedule":
            assert report.satisfied, (ref, report)
    # Never worse: no constraint anywhere ends further above its maxSkew than it began.
    before = _constraints(plan.before)
    for key, report in after.items():
        excess_before = max(0, before[key].skew - before[key].max_skew)
        assert max(0, report.skew - report.max_skew) <= excess_before, key
    # Independent replay: the same end state from explain's placements.
    settled = _replay(objects, plan)
    others = [o for o in objects if not isinstance(o, Pod)]
    replayed = plan_rebalance([*others, *settled])
    assert replayed.converged
    assert not replayed.targets


@pytest.mark.parametrize("name", CONVERGING)
def test_no_daemonset_or_protected_pod_is_evicted_and_budgets_hold(name: str) -> None:
    objects = _load(name)
    plan = plan_rebalance(objects)
    pods = {o.key: o for o in objects if isinstance(o, Pod)}
    budgets = [o for o in objects if isinstance(o, PodDisruptionBudget)]
    per_batch: dict[tuple[int, str], int] = {}
    for e in plan.evictions:
        owner = pods[e.pod].metadata.controller()
        assert owner is not None
        assert owner.kind in {"ReplicaSet", "StatefulSet"}
        for b in budgets:
            if b.metadata.namespace == pods[e.pod].namespace and all(
                pods[e.pod].labels.get(k) == v for k, v in b.selector.match_labels.items()
            ):
                key = (e.batch, b.metadata.name)
                per_batch[key] = per_batch.get(key, 0) + 1
                assert per_batch[key] <= b.disruptions_allowed


def test_scale_down_is_fixed_with_the_fewest_evictions_and_other_workloads_untouched() -> None:
    plan = plan_rebalance(_load("scaled-down"))
    assert plan.targets == ("Deployment/shop/web",)
    assert len(plan.evictions) == 1
    assert plan.proven_minimal
    e = plan.evictions[0]
    assert e.domains == {"topology.kubernetes.io/zone": "zone-a"}
    assert e.tied_nodes == ("node-c-2",)  # node-c-1 holds a web pod: less room
    api = {w.ref: w for w in plan.after.workloads}["Deployment/shop/api"]
    assert api.constraints[0].report is not None
    assert api.constraints[0].report.skew == 0


def test_min_domains_fills_the_new_zone() -> None:
    plan = plan_rebalance(_load("min-domains"))
    assert plan.converged
    assert len(plan.evictions) == 2
    assert plan.proven_minimal
    assert all(e.expected_node.startswith("node-c-") for e in plan.evictions)


def test_zone_and_hostname_are_balanced_together() -> None:
    plan = plan_rebalance(_load("zone-and-hostname"))
    after = _constraints(plan.after)
    skews = {key[1]: r.skew for key, r in after.items()}
    assert skews == {"topology.kubernetes.io/zone": 1, "kubernetes.io/hostname": 1}
    assert plan.proven_minimal


def test_lower_priority_first() -> None:
    plan = plan_rebalance(_load("two-workloads"))
    assert plan.converged
    priorities = [e.priority for e in plan.evictions]
    assert priorities == sorted(priorities)
    assert {e.workload for e in plan.evictions} == {"Deployment/shop/web", "Deployment/shop/batch"}


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("no-capacity", "Insufficient cpu"),
        ("pdb-blocked", "PodDisruptionBudget web allows no disruption"),
        # A replacement keeps its claim, and the claim's volume pins the zone.
        ("pinned-volumes", "didn't match PersistentVolume's node affinity"),
    ],
)
def test_a_plan_that_cannot_balance_says_why_and_evicts_nothing(name: str, says: str) -> None:
    plan = plan_rebalance(_load(name))
    assert not plan.converged
    assert plan.evictions == ()
    assert plan.reason is not None
    assert says in plan.reason


def test_local_storage_is_allowed_on_request() -> None:
    objects = _load("local-storage")
    pods = frozenset(o.key for o in objects if isinstance(o, Pod))
    refused = plan_rebalance(objects, options=RebalanceOptions(local_storage=pods))
    assert not refused.converged
    assert refused.evictions == ()
    assert "local storage" in (refused.reason or "")
    allowed = plan_rebalance(
        objects, options=RebalanceOptions(local_storage=pods, allow_local_storage=True)
    )
    assert allowed.converged
    assert len(allowed.evictions) == 1


def test_limits_stop_the_plan() -> None:
    plan = plan_rebalance(_load("min-domains"), options=RebalanceOptions(max_evictions=1))
    assert not plan.converged
    assert "--max-evictions 1" in (plan.reason or "")
    assert len(plan.best_effort) == 1
    per_node = plan_rebalance(_load("two-workloads"), options=RebalanceOptions(max_per_node=1))
    sources = [e.node for e in per_node.evictions or per_node.best_effort]
    assert len(sources) == len(set(sources))


def test_scope_and_balanced_cluster() -> None:
    plan = plan_rebalance(_load("two-workloads"), scope=Scope(name="web", kind="Deployment"))
    assert plan.targets == ("Deployment/shop/web",)
    assert {e.workload for e in plan.evictions} == {"Deployment/shop/web"}
    settled = plan_rebalance([*_load("scaled-down")][:6])
    assert settled.converged
    assert settled.evictions == ()
    assert settled.targets == ()


@pytest.mark.parametrize(
    ("counts", "max_skew", "min_domains", "moves"),
    [
        ([4, 2, 1], 1, 1, 1),
        ([3, 1, 1], 1, 1, 1),
        ([3, 3, 0], 1, 3, 2),
        ([6, 0], 1, 1, 3),
        ([3, 3], 1, 3, None),  # two domains, minDomains 3: at most 1 pod each
        ([2, 2, 2], 1, 1, 0),
    ],
)
def test_minimum_moves(counts, max_skew, min_domains, moves) -> None:
    assert minimum_moves(counts, max_skew, min_domains) == moves


def test_json_shape() -> None:
    data = plan_rebalance(_load("scaled-down")).to_json()
    assert {"converged", "reason", "evictions", "before", "after"} <= set(data)
    e = data["evictions"][0]
    assert {"step", "pod", "node", "expectedNode", "tiedNodes"} <= set(e)
    assert data["before"]["workloads"][0]["constraints"][0]["skew"] == 3


def test_zone_and_hostname_evictions_are_taken_from_the_crowded_nodes() -> None:
    plan = plan_rebalance(_load("zone-and-hostname-crowded"))
    assert plan.converged
    assert len(plan.evictions) == 2
    assert plan.proven_minimal
    assert plan.evictions[0].node == "node-b-1"


def test_soft_constraints_only_with_include_soft() -> None:
    objects = _load("soft")
    assert plan_rebalance(objects).targets == ()
    plan = plan_rebalance(objects, options=RebalanceOptions(include_soft=True))
    assert plan.targets == ("Deployment/shop/web",)
    assert plan.converged
    assert len(plan.evictions) == 1


def test_cluster_default_constraints_are_balanced() -> None:
    from topospread.io import load_configuration

    objects = _load("defaults")
    assert plan_rebalance(objects).targets == ()  # System defaults are soft
    configuration = load_configuration(DATA / "defaults-config.yaml")
    plan = plan_rebalance(objects, configuration)
    assert plan.targets == ("Deployment/shop/web",)
    assert plan.converged
    assert plan.proven_minimal
    (workload,) = [w for w in plan.after.workloads if w.name == "web"]
    assert workload.source == "defaults"
    assert all(c.report is not None and c.report.satisfied for c in workload.constraints)


def test_ownerless_and_mirror_pods_are_never_evicted() -> None:
    objects = _load("local-storage")
    bare = [
        replace(o, metadata=replace(o.metadata, owner_references=())) if isinstance(o, Pod) else o
        for o in objects
    ]
    plan = plan_rebalance(bare)
    assert not plan.converged
    assert plan.evictions == ()
    assert "no controller would recreate it" in (plan.reason or "")
    mirrored = [
        replace(
            o,
            metadata=replace(o.metadata, annotations={"kubernetes.io/config.mirror": "abc"}),
        )
        if isinstance(o, Pod)
        else o
        for o in objects
    ]
    plan = plan_rebalance(mirrored)
    assert not plan.converged
    assert "static (mirror) pod" in (plan.reason or "")
