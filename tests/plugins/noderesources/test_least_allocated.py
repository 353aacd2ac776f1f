"""NodeResourcesFit scoring with the LeastAllocated strategy (the default).

Cases follow least_allocated_test.go (v1.37.1, TestLeastAllocatedScoringStrategy).
Nodes there are ``Capacity(cpu: "4000", memory: "10000")``: whole cores and bytes.
Pods built with ``st.MakePod()`` have one container per ``Req`` call and none
without, so a pod with no containers adds no non-zero defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from topospread.framework.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Code
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.plugins.noderesources import Fit
from topospread.plugins.noderesources.least_allocated import least_resource_scorer
from topospread.plugins.noderesources.resource_allocation import ResourceAllocationScorer

DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def make_pod(*reqs: Mapping[str, str], node: str = "", name: str = "p") -> Pod:
    containers = tuple(
        Container(requests={k: parse_quantity(v) for k, v in r.items()}) for r in reqs
    )
    return Pod(ObjectMeta(name, "default"), node_name=node, containers=containers)


def make_node(name: str, **allocatable: str) -> Node:
    return Node(
        ObjectMeta(name), allocatable={k: parse_quantity(v) for k, v in allocatable.items()}
    )


def scores(
    strategy: ScoringStrategy, pod: Pod, nodes: Sequence[Node], existing: Sequence[Pod]
) -> list[int]:
    fit = Fit(NodeResourcesFitArgs(scoring_strategy=strategy), Features())
    snapshot = Snapshot(nodes, list(existing))
    state = CycleState()
    assert fit.pre_score(state, pod, snapshot.node_infos) is None
    out = []
    for info in snapshot.node_infos:
        value, status = fit.score(state, pod, info)
        assert status is None
        out.append(value)
    return out


def existing(*specs: tuple[str, Mapping[str, str] | None]) -> list[Pod]:
    """Assigned pods: one container with these requests, or none for ``None``."""
    return [
        make_pod(*([] if req is None else [req]), node=node, name=f"e{i}")
        for i, (node, req) in enumerate(specs)
    ]


TWO_SMALL = [
    make_node("node1", cpu="4000", memory="10000"),
    make_node("node2", cpu="4000", memory="10000"),
]
TWO_SIZES = [
    make_node("node1", cpu="4000", memory="10000"),
    make_node("node2", cpu="6000", memory="10000"),
]
TWO_BIG = [
    make_node("node1", cpu="10000", memory="20000"),
    make_node("node2", cpu="10000", memory="20000"),
]
REQUESTING = make_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})

CASES = [
    pytest.param(
        make_pod(),
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
        make_pod(),
        TWO_SMALL,
        existing(("node1", None), ("node1", None), ("node2", None), ("node2", None)),
        DEFAULT,
        [100, 100],
        id="pods without containers add nothing, so the nodes stay at 100",
    ),
    pytest.param(
        make_pod(),
        TWO_BIG,
        existing(
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
        existing(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [57, 45],
        id="the requesting pod is added to what the node's pods already request",
    ),
    pytest.param(
        REQUESTING,
        [
            make_node("node1", cpu="10000", memory="20000"),
            make_node("node2", cpu="10000", memory="50000"),
        ],
        existing(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [57, 60],
        id="a node with more memory left scores higher",
    ),
    pytest.param(
        make_pod({"cpu": "3000", "memory": "0"}),
        TWO_SMALL,
        existing(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [50, 25],
        id="a resource requested beyond capacity scores 0 for that resource",
    ),
    pytest.param(
        make_pod(),
        [make_node("node1"), make_node("node2")],
        existing(
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
        make_pod({}),
        [make_node("node1", cpu="250m", memory="1000Mi")],
        existing(("node1", {})),
        DEFAULT,
        [40],
        id="containers without requests count 100m cpu and 200Mi memory",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing_pods", "resources", "expected"), CASES)
def test_least_allocated_scores(pod, nodes, existing_pods, resources, expected):
    strategy = ScoringStrategy("LeastAllocated", tuple(resources))
    assert scores(strategy, pod, nodes, existing_pods) == expected


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
    nodes = [make_node("node1", cpu="4", memory="8Gi")]
    assert scores(ScoringStrategy(), pod, nodes, []) == [(97 + 100) // 2]
