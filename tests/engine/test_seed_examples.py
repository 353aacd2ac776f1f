"""Every worked example of the source documents, with the outcome the documents state.

The Kubernetes concept page's examples are bundled (``topospread examples``); the KEP's
MaxSkew and infeasible-domain cases are built here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.engine.cluster import Cluster
from topospread.engine.explain import Explanation, explain
from topospread.framework.config.decode import default_configuration
from topospread.framework.status import Code
from topospread.io import load_cluster, load_pod
from topospread.model.objects import Node, Pod
from topospread.testing import make_node, make_pod, make_selector

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "topospread" / "examples"


def run_example(name: str) -> Explanation:
    cluster, _ = load_cluster([EXAMPLES / name / "cluster.yaml"])
    return explain(cluster, load_pod(EXAMPLES / name / "pod.yaml"), default_configuration())


def feasible(result: Explanation) -> list[str]:
    return [n.name for n in result.nodes if n.filter.passed]


def test_one_constraint_puts_the_pod_in_zone_b() -> None:
    result = run_example("one-constraint")
    assert feasible(result) == ["node3", "node4"]
    assert result.selected_node in {"node3", "node4"}
    rejected = {n.name: n.filter for n in result.nodes if not n.filter.passed}
    assert {name: (f.code, f.plugin) for name, f in rejected.items()} == {
        "node1": (Code.UNSCHEDULABLE, "PodTopologySpread"),
        "node2": (Code.UNSCHEDULABLE, "PodTopologySpread"),
    }
    (zone,) = result.hard_constraints
    assert dict(zone.domain_counts) == {"zoneA": 2, "zoneB": 1}
    assert zone.checks["node1"].skew == 2
    assert zone.checks["node3"].skew == 1


def test_two_constraints_leave_only_node4() -> None:
    result = run_example("two-constraints")
    assert feasible(result) == ["node4"]
    assert result.selected_node == "node4"


def test_conflicting_constraints_keep_the_pod_pending() -> None:
    result = run_example("conflicting-constraints")
    assert feasible(result) == []
    assert result.selected_node is None
    assert result.message == (
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
        " preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_node_affinity_excludes_zone_c_from_the_minimum_and_places_the_pod_in_zone_b() -> None:
    result = run_example("node-affinity")
    assert feasible(result) == ["node3", "node4"]
    node5 = next(n for n in result.nodes if n.name == "node5")
    assert node5.filter.plugin == "NodeAffinity"
    assert dict(result.hard_constraints[0].domain_counts) == {"zoneA": 2, "zoneB": 1}


def test_min_domains_caps_each_zone_at_max_skew_when_zones_are_missing() -> None:
    result = run_example("min-domains")
    assert feasible(result) == []
    (report,) = result.hard_constraints
    assert report.min_forced_to_zero
    assert report.min_match_num == 0
    assert result.message == (
        "0/4 nodes are available: 4 node(s) didn't match pod topology spread constraints."
        " preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )


def test_system_defaults_prefer_the_emptiest_node_of_the_emptiest_zone() -> None:
    result = run_example("system-defaults")
    assert result.spread_source == "defaults"
    assert result.hard_constraints == ()
    assert len(result.soft_constraints) == 2
    assert result.selected_node == "node-b2"


# --- KEP-895 -----------------------------------------------------------------------


def kep_cluster(zone_counts: dict[str, int]) -> tuple[Cluster, list[Node]]:
    nodes = [make_node().name(f"node-{zone}").label("zone", zone).obj() for zone in zone_counts]
    pods = [
        make_pod().name(f"p-{zone}-{i}").label("app", "web").node(f"node-{zone}").obj()
        for zone, count in zone_counts.items()
        for i in range(count)
    ]
    return Cluster(tuple(nodes), tuple(pods)), nodes


def kep_pod(max_skew: int, action: str = "DoNotSchedule") -> Pod:
    return (
        make_pod()
        .name("incoming")
        .label("app", "web")
        .spread_constraint(max_skew, "zone", action, make_selector().label("app", "web").obj())
        .obj()
    )


@pytest.mark.parametrize(
    ("zone_counts", "max_skew", "expected"),
    [
        pytest.param(
            {"z1": 3, "z2": 2, "z3": 2},
            1,
            ["node-z2", "node-z3"],
            id="KEP MaxSkew 1 with 3/2/2: only zones at the minimum accept the pod",
        ),
        pytest.param(
            {"z1": 3, "z2": 2, "z3": 2},
            2,
            ["node-z1", "node-z2", "node-z3"],
            id="KEP MaxSkew 2 with 3/2/2: every zone accepts the pod",
        ),
        pytest.param(
            {"z1": 4, "z2": 3, "z3": 2},
            1,
            ["node-z3"],
            id="KEP MaxSkew 1 with 4/3/2: only the emptiest zone accepts the pod",
        ),
    ],
)
def test_kep_max_skew_semantics(
    zone_counts: dict[str, int], max_skew: int, expected: list[str]
) -> None:
    cluster, _ = kep_cluster(zone_counts)
    assert feasible(explain(cluster, kep_pod(max_skew), default_configuration())) == expected


def test_kep_hard_constraint_with_an_infeasible_domain_keeps_the_pod_pending() -> None:
    # The only zone with room is tainted: the DoNotSchedule constraint still counts it as
    # the global minimum (nodeTaintsPolicy defaults to Ignore), so nowhere else is allowed.
    nodes = [
        make_node().name("node-z1").label("zone", "z1").obj(),
        make_node().name("node-z2").label("zone", "z2").taint("full", "", "NoSchedule").obj(),
    ]
    pods = [make_pod().name("p1").label("app", "web").node("node-z1").obj()]
    result = explain(Cluster(tuple(nodes), tuple(pods)), kep_pod(1), default_configuration())
    assert feasible(result) == []
    assert result.message == (
        "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def test_kep_soft_constraint_with_an_infeasible_domain_still_schedules_the_pod() -> None:
    nodes = [
        make_node().name("node-z1").label("zone", "z1").obj(),
        make_node().name("node-z2").label("zone", "z2").taint("full", "", "NoSchedule").obj(),
    ]
    pods = [make_pod().name("p1").label("app", "web").node("node-z1").obj()]
    result = explain(
        Cluster(tuple(nodes), tuple(pods)), kep_pod(1, "ScheduleAnyway"), default_configuration()
    )
    assert result.selected_node == "node-z1"
