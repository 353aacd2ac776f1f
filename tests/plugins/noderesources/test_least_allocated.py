"""NodeResourcesFit scoring with the LeastAllocated strategy (the default).

Cases follow least_allocated_test.go (v1.37.1, TestLeastAllocatedScoringStrategy).
Nodes there are ``Capacity(cpu: "4000", memory: "10000")``: whole cores and bytes.
Pods built with ``st.MakePod()`` have one container per ``Req`` call and none
without, so a pod with no containers adds no non-zero defaults.
"""

from __future__ import annotations

import pytest

from topospread.framework.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Code
from topospread.model.objects import Container, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.plugins.noderesources import Fit
from topospread.plugins.noderesources.least_allocated import least_resource_scorer
from topospread.plugins.noderesources.resource_allocation import ResourceAllocationScorer
from topospread.testing.resources import assigned_pods, fit_scores, requests_node, requests_pod

DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


TWO_SMALL = [
    requests_node("node1", cpu="4000", memory="10000"),
    requests_node("node2", cpu="4000", memory="10000"),
]
TWO_SIZES = [
    requests_node("node1", cpu="4000", memory="10000"),
    requests_node("node2", cpu="6000", memory="10000"),
]
TWO_BIG = [
    requests_node("node1", cpu="10000", memory="20000"),
    requests_node("node2", cpu="10000", memory="20000"),
]
REQUESTING = requests_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})

CASES = [
    pytest.param(
        requests_pod(),
        TWO_SMALL,
        [],
        DEFAULT,
        [100, 100],
        id="nothing scheduled and nothing requested scores every node 100",
    ),
    pytest.param(
        REQUESTING,
        TWO_SIZES,
        [],
        DEFAULT,
        [37, 50],
        id="a requesting pod on differently sized empty nodes scores 37 and 50",
    ),
    pytest.param(
        requests_pod(),
        TWO_SMALL,
        assigned_pods(("node1", None), ("node1", None), ("node2", None), ("node2", None)),
        DEFAULT,
        [100, 100],
        id="pods without containers add nothing, so the nodes stay at 100",
    ),
    pytest.param(
        requests_pod(),
        TWO_BIG,
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "5000"}),
        ),
        DEFAULT,
        [70, 57],
        id="an explicit zero memory request stays zero in the non-zero totals",
    ),
    pytest.param(
        REQUESTING,
        TWO_BIG,
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [57, 45],
        id="the requesting pod is added to what the node's pods already request",
    ),
    pytest.param(
        REQUESTING,
        [
            requests_node("node1", cpu="10000", memory="20000"),
            requests_node("node2", cpu="10000", memory="50000"),
        ],
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [57, 60],
        id="a node with more memory left scores higher",
    ),
    pytest.param(
        requests_pod({"cpu": "3000", "memory": "0"}),
        TWO_SMALL,
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [50, 25],
        id="a resource requested beyond capacity scores 0 for that resource",
    ),
    pytest.param(
        requests_pod(),
        [requests_node("node1"), requests_node("node2")],
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [0, 0],
        id="nodes without allocatable resources score 0",
    ),
    pytest.param(
        REQUESTING,
        TWO_SIZES,
        [],
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        [41, 50],
        id="weights average the resource scores: (25*1 + 50*2) // 3 = 41",
    ),
    pytest.param(
        requests_pod({}),
        [requests_node("node1", cpu="250m", memory="1000Mi")],
        assigned_pods(("node1", {})),
        DEFAULT,
        [40],
        id="containers without requests count 100m cpu and 200Mi memory",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing_pods", "resources", "expected"), CASES)
def test_least_allocated_scores(pod, nodes, existing_pods, resources, expected):
    strategy = ScoringStrategy("LeastAllocated", tuple(resources))
    assert fit_scores(strategy, pod, nodes, existing_pods) == expected


def test_a_scorer_without_resources_returns_an_error_status():
    scorer = ResourceAllocationScorer(
        "LeastAllocated", least_resource_scorer(()), (), use_requested=False
    )
    snapshot = Snapshot(TWO_SMALL)
    value, status = scorer.score(snapshot.node_infos[0], ())
    assert value == 0
    assert status is not None
    assert status.code is Code.ERROR
    assert status.reasons == ("resources not found",)


def test_score_without_pre_score_computes_the_requests_itself():
    fit = Fit(NodeResourcesFitArgs(), Features())
    snapshot = Snapshot(TWO_SIZES)
    got = [fit.score(CycleState(), REQUESTING, info)[0] for info in snapshot.node_infos]
    assert got == [37, 50]


def test_fit_scores_ignore_the_incoming_pods_pod_level_requests_as_upstream_does():
    # NewFit never passes the PodLevelResources gate to its scorer: the 1500m pod-level
    # cpu request is ignored and the container's 100m counts (4000m node: 97.5 -> 97).
    pod = Pod(
        ObjectMeta("p", "default"),
        containers=(
            Container(requests={"cpu": parse_quantity("100m"), "memory": parse_quantity("0")}),
        ),
        pod_resources_requests={"cpu": parse_quantity("1500m")},
    )
    nodes = [requests_node("node1", cpu="4", memory="8Gi")]
    assert fit_scores(ScoringStrategy(), pod, nodes, []) == [(97 + 100) // 2]
