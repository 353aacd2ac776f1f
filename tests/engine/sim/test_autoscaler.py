"""simulate with node pools: the autoscaler adds nodes for unschedulable pods and removes
unneeded ones, as Cluster Autoscaler does; setPool, scalePool and rebalance steps."""

from __future__ import annotations

import pytest
import yaml

from topospread.engine.sim.result import SimulationResult, StepResult
from topospread.engine.sim.scenario import Scenario, parse_scenario
from topospread.engine.sim.simulator import simulate
from topospread.errors import InputError


def template(pool: str, zone: str, minimum: int, maximum: int, delay: int = 60) -> str:
    return f"""
  - apiVersion: v1
    kind: Node
    metadata:
      name: {pool}-template
      labels: {{topology.kubernetes.io/zone: {zone}}}
      annotations:
        autoscaling.topospread.dev/pool: {pool}
        autoscaling.topospread.dev/min-size: "{minimum}"
        autoscaling.topospread.dev/max-size: "{maximum}"
        autoscaling.topospread.dev/provision-delay: "{delay}"
    status:
      allocatable: {{cpu: "2", memory: 8Gi, pods: "110"}}"""


def nodes(zone: str, count: int, pool: str | None = None) -> str:
    label = f", labels: {{autoscaling.topospread.dev/pool: {pool}}}" if pool else ""
    return (
        f'  - {{zones: [{zone}], perZone: {count}, namePattern: "{zone}-{{i}}", '
        f'allocatable: {{cpu: "2", memory: 8Gi, pods: 110}}{label}}}'
    )


def deployment(replicas: int, spread: bool = True, cpu: str = "500m") -> str:
    constraint = (
        """
            topologySpreadConstraints:
            - {maxSkew: 1, minDomains: 3, topologyKey: topology.kubernetes.io/zone,
               whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}"""
        if spread
        else ""
    )
    return f"""
- apply:
    objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web}}
      spec:
        replicas: {replicas}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:{constraint}
            containers:
            - {{name: web, image: pause, resources: {{requests: {{cpu: {cpu}, memory: 1Gi}}}}}}"""


def scenario(
    generators: list[str], templates: list[str], steps: str, autoscaler: str = ""
) -> Scenario:
    text = (
        "apiVersion: topospread.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"
        + (f"autoscaler: {autoscaler}\n" if autoscaler else "")
        + "cluster:\n  nodes:\n"
        + "\n".join(generators)
        + ("\n  objects:" + "".join(templates) if templates else "")
        + "\nsteps:"
        + steps
        + "\n"
    )
    return parse_scenario(yaml.safe_load(text), "t.yaml")


def run(s: Scenario) -> SimulationResult:
    return simulate(s, 0)


def pools(step: StepResult) -> dict[str, int]:
    return {p.pool: p.nodes for p in step.pools}


def autoscaler_events(step: StepResult) -> list[str]:
    return [e.detail for e in step.events if e.kind == "autoscaler"]


def zone_counts(step: StepResult) -> dict[str, int]:
    return dict(step.spread[0].constraints[0].domain_counts)


ZONE_AB = [nodes("zone-a", 1, "zone-a"), nodes("zone-b", 1, "zone-b")]
POOLS_ABC = [
    template("zone-a", "zone-a", 1, 3),
    template("zone-b", "zone-b", 1, 3),
    template("zone-c", "zone-c", 0, 3),
]


def test_pods_pending_for_a_zone_at_zero_get_a_node_there_after_the_provision_delay() -> None:
    result = run(scenario(ZONE_AB, POOLS_ABC, deployment(3)))
    step = result.steps[1]
    assert autoscaler_events(step) == [
        "scale-up: pool zone-c +1 node(s) (zone-c: 1) for 1 unschedulable pod(s), planned "
        f"onto the new node(s): {step.placements[-1].pod}; Ready in 60s"
    ]
    added = next(e for e in step.events if e.kind == "node" and e.node == "zone-c-1")
    assert added.time == 20 + 60  # the scan after the failure (every 10 s), then the delay
    assert step.pending == ()
    assert zone_counts(step) == {"zone-a": 1, "zone-b": 1, "zone-c": 1}
    assert pools(step) == {"zone-a": 1, "zone-b": 1, "zone-c": 1}


def test_a_pool_at_its_max_size_adds_nothing_and_the_pods_stay_pending() -> None:
    capped = [*POOLS_ABC[:2], template("zone-c", "zone-c", 0, 0)]
    step = run(scenario(ZONE_AB, capped, deployment(3))).steps[1]
    assert autoscaler_events(step) == []
    assert len(step.pending) == 1
    assert pools(step) == {"zone-a": 1, "zone-b": 1, "zone-c": 0}


def test_set_pool_raises_the_max_and_the_next_scan_adds_the_node() -> None:
    capped = [*POOLS_ABC[:2], template("zone-c", "zone-c", 0, 0)]
    result = run(
        scenario(ZONE_AB, capped, deployment(3) + "\n- setPool: {pool: zone-c, maxSize: 2}")
    )
    assert len(result.steps[1].pending) == 1
    assert result.steps[2].pending == ()
    assert pools(result.steps[2]) == {"zone-a": 1, "zone-b": 1, "zone-c": 1}


def test_an_underutilized_node_is_drained_and_deleted_after_the_unneeded_time() -> None:
    two = [nodes("zone-a", 2, "zone-a")]
    steps = deployment(2, spread=False) + "\n- setPool: {pool: zone-a, minSize: 1}"
    result = run(scenario(two, [template("zone-a", "zone-a", 2, 3)], steps))
    # Two 500m pods, one per 2-cpu node (LeastAllocated): both nodes at 25% of cpu, below
    # the 0.5 threshold, and either pod fits the other node; min-size 2 keeps both until
    # the pool's minimum drops to 1. The first is then drained once unneeded for 600 s.
    step = result.steps[2]
    assert autoscaler_events(step) == [
        "pool zone-a: minSize 1, maxSize 3",
        f"scale-down: pool zone-a -1 node: zone-a-1 (1 pod(s) moved; unneeded since "
        f"t={step.started + 9}s)",
    ]
    evicted = [e for e in step.events if e.kind == "evicted"]
    assert [(e.node, e.time) for e in evicted] == [("zone-a-1", step.started + 9 + 600)]
    assert pools(step) == {"zone-a": 1}
    assert [len(n.pods) for n in step.layout] == [2]


def test_nothing_is_removed_below_min_size() -> None:
    two = [nodes("zone-a", 2, "zone-a")]
    step = run(scenario(two, [template("zone-a", "zone-a", 2, 3)], deployment(2, False))).steps[1]
    assert pools(step) == {"zone-a": 2}
    assert autoscaler_events(step) == []


def test_a_pod_without_a_controller_keeps_its_node() -> None:
    two = [nodes("zone-a", 2, "zone-a")]
    bare = """
  - apiVersion: v1
    kind: Pod
    metadata: {name: bare}
    spec:
      nodeName: zone-a-2
      containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]"""
    result = run(scenario(two, [template("zone-a", "zone-a", 0, 3), bare], ""))
    # zone-a-1 is empty and goes; zone-a-2 holds a pod no controller would recreate.
    assert [n.name for n in result.steps[-1].layout] == ["zone-a-2"]


def test_a_budget_that_allows_no_disruption_keeps_the_node() -> None:
    one = [nodes("zone-a", 1, "zone-a")]
    steps = (
        deployment(1, spread=False)
        + """
- apply:
    objects:
    - apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: web}
      spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
- addNodes:
    objects:
    - apiVersion: v1
      kind: Node
      metadata:
        name: zone-a-9
        labels: {topology.kubernetes.io/zone: zone-a, autoscaling.topospread.dev/pool: zone-a}
      status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}"""
    )
    result = run(scenario(one, [template("zone-a", "zone-a", 0, 3)], steps))
    # The empty zone-a-9 goes; zone-a-1's pod may not be disrupted, so zone-a-1 stays.
    assert [n.name for n in result.steps[-1].layout] == ["zone-a-1"]


def test_scale_pool_adds_and_removes_nodes_by_hand() -> None:
    s = scenario(
        ZONE_AB,
        POOLS_ABC,
        "\n- scalePool: {pool: zone-c, size: 2}\n- setPool: {pool: zone-c, minSize: 1}"
        "\n- scalePool: {pool: zone-c, size: 1}",
        autoscaler="{scaleDownEnabled: false}",
    )
    result = run(s)
    assert pools(result.steps[1])["zone-c"] == 2
    assert [n.name for n in result.steps[3].layout if n.zone == "zone-c"] == ["zone-c-1"]


def test_the_bundled_story_scales_zone_c_from_zero_decays_and_is_rebalanced() -> None:
    from topospread.cli import examples as bundled
    from topospread.io.scenarios import load_scenario

    result = simulate(load_scenario(bundled.scenario_path("autoscaling-story")), 0)
    initial, deploy, shrink, minimum, regrow, rebalance = result.steps
    assert pools(initial) == {"zone-a": 2, "zone-b": 2, "zone-c": 0}
    assert "for 4 unschedulable pod(s)" in autoscaler_events(deploy)[0]
    assert pools(deploy)["zone-c"] == 1
    assert zone_counts(deploy) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    # The ReplicaSet deletes the doubled-up zone-c pods; the autoscaler removes the node.
    assert pools(shrink)["zone-c"] == 0
    constraint = shrink.spread[0].constraints[0]
    assert (constraint.skew, constraint.min_domains_shortfall) == (2, 1)
    assert "cannot be within maxSkew 1" in shrink.notes[0]
    assert [p.min_size for p in minimum.pools] == [2, 2, 1]
    assert pools(minimum)["zone-c"] == 0  # CA does not grow a pool to a new minimum
    assert pools(regrow)["zone-c"] == 1
    assert regrow.notes[0].startswith("rebalance would fix it with 1 eviction(s)")
    assert zone_counts(rebalance) == {"zone-a": 1, "zone-b": 2, "zone-c": 1}
    assert rebalance.spread[0].constraints[0].satisfied


@pytest.mark.parametrize(
    ("autoscaler", "line"),
    [
        (
            "{kind: descheduler}",
            't.yaml: autoscaler.kind: Unsupported value: "descheduler": supported values: '
            '"cluster-autoscaler", "karpenter"',
        ),
        (
            "{scanInterval: 0}",
            "t.yaml: autoscaler.scanInterval: Invalid value: 0: must be at least 1 (seconds)",
        ),
        (
            "{scaleDownUtilizationThreshold: 1.5}",
            "t.yaml: autoscaler.scaleDownUtilizationThreshold: Invalid value: 1.5: "
            "must be between 0 and 1",
        ),
        (
            "{scaleDownUnneededTime: 10m}",
            't.yaml: autoscaler.scaleDownUnneededTime: Invalid value: "10m": '
            "expected integer, got string",
        ),
    ],
)
def test_a_bad_autoscaler_field_is_one_line_naming_it(autoscaler: str, line: str) -> None:
    with pytest.raises(InputError) as info:
        scenario(ZONE_AB, POOLS_ABC, "", autoscaler=autoscaler)
    assert info.value.lines() == [line]


@pytest.mark.parametrize(
    ("step", "line"),
    [
        (
            "- setPool: {pool: zone-d, maxSize: 1}",
            't.yaml: steps[0].setPool.pool: Not found: "zone-d": known pools: zone-a, zone-b, '
            "zone-c",
        ),
        (
            "- setPool: {pool: zone-c, minSize: 4}",
            "t.yaml: steps[0].setPool.minSize: Invalid value: 4: maxSize (3) must be greater "
            "than or equal to minSize (4)",
        ),
        (
            "- scalePool: {pool: zone-c, size: 5}",
            "t.yaml: steps[0].scalePool.size: Invalid value: 5: must be within pool zone-c's "
            "minSize 0 and maxSize 3",
        ),
    ],
)
def test_a_bad_pool_step_is_one_line_naming_its_field(step: str, line: str) -> None:
    with pytest.raises(InputError) as info:
        scenario(ZONE_AB, POOLS_ABC, "\n" + step)
    assert info.value.lines() == [line]


def test_an_autoscaler_without_pools_is_refused() -> None:
    with pytest.raises(InputError) as info:
        scenario(ZONE_AB, [], "", autoscaler="{}")
    assert info.value.lines() == [
        "t.yaml: cluster.objects: Required value: an autoscaler needs node pools: template "
        "Nodes annotated autoscaling.topospread.dev/pool"
    ]


def test_the_same_seed_gives_the_same_run() -> None:
    s = scenario(ZONE_AB, POOLS_ABC, deployment(5))
    assert run(s).to_json() == run(s).to_json()
