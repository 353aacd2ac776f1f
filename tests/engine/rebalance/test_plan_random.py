"""The planner's promises on random skewed clusters (seeded): a converged plan's simulated
end state satisfies every target constraint and makes no constraint worse, uses at least
the lower bound, and each step's tied nodes are explain's; a plan that does not converge
evicts nothing and says why."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from topospread.engine.rebalance import RebalancePlan, plan_rebalance
from topospread.model.objects import Pod
from topospread.model.workloads import decode_manifests

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _cluster(seed: int) -> list:
    rng = random.Random(seed)
    zones = rng.choice([2, 3, 4])
    per_zone = rng.choice([1, 2, 3])
    nodes = [f"n-{z}-{i}" for z in range(zones) for i in range(per_zone)]
    docs: list[dict] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {HOST: n, ZONE: f"z{n.split('-')[1]}"}},
            "status": {
                "allocatable": {"cpu": rng.choice(["1", "4"]), "memory": "8Gi", "pods": "110"}
            },
        }
        for n in nodes
    ]
    for app in ["web", "api"][: rng.choice([1, 2])]:
        constraints = [
            {
                "maxSkew": rng.choice([1, 1, 2]),
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
                **({"minDomains": rng.choice([2, 3, 4])} if rng.random() < 0.3 else {}),
            }
            for key in ([ZONE] if rng.random() < 0.6 else [ZONE, HOST])
        ]
        spec = {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "300m"}}}],
            "topologySpreadConstraints": constraints,
        }
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": app, "namespace": "ns", "uid": f"rs-{app}"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": app}},
                "template": {"metadata": {"labels": {"app": app}}, "spec": spec},
            },
        }
        count = rng.randint(3, 10)
        rs["spec"]["replicas"] = count
        docs.append(rs)
        crowded = rng.sample(nodes, k=max(1, len(nodes) // 2))
        docs.extend(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{app}-{i}",
                    "namespace": "ns",
                    "uid": f"{app}-{i}",
                    "labels": {"app": app},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "name": app,
                            "uid": f"rs-{app}",
                            "controller": True,
                        }
                    ],
                },
                "spec": {**spec, "nodeName": rng.choice(crowded)},
                "status": {"phase": "Running"},
            }
            for i in range(count)
        )
    return [obj for _, obj in decode_manifests(docs).objects]


@pytest.mark.parametrize("seed", range(40))
def test_random_clusters(seed: int) -> None:
    objects = _cluster(seed)
    plan = plan_rebalance(objects)
    before = {
        (w.ref, c.report.topology_key): c.report
        for w in plan.before.workloads
        for c in w.constraints
        if c.report is not None
    }
    if not plan.converged:
        assert plan.evictions == ()
        assert plan.reason
        return
    assert len(plan.evictions) >= plan.lower_bound
    for w in plan.after.workloads:
        for c in w.constraints:
            r = c.report
            assert r is not None
            start = before[(w.ref, r.topology_key)]
            excess_before = max(0, start.skew - start.max_skew)
            if w.ref in plan.targets and c.hard:
                assert r.satisfied, (seed, w.ref, r)
            assert max(0, r.skew - r.max_skew) <= excess_before, (seed, w.ref, r)


@pytest.mark.parametrize("seed", range(40))
def test_renaming_the_pods_of_a_random_cluster_does_not_change_its_plan(seed: int) -> None:
    objects = _cluster(seed)
    names = sorted(o.name for o in objects if isinstance(o, Pod))
    shuffled = names[:]
    random.Random(seed).shuffle(shuffled)
    renamed = dict(zip(names, (f"x{n}" for n in shuffled), strict=True))
    objects_renamed = [
        replace(o, metadata=replace(o.metadata, name=renamed[o.name])) if isinstance(o, Pod) else o
        for o in objects
    ]

    def shape(plan: RebalancePlan) -> tuple[object, ...]:
        return (
            plan.converged,
            tuple(
                (e.batch, e.workload, e.node, e.expected_node, e.tied_nodes, e.certain, e.skew)
                for e in plan.evictions or plan.best_effort
            ),
        )

    assert shape(plan_rebalance(objects_renamed)) == shape(plan_rebalance(objects))
