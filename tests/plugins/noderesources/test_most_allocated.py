"""NodeResourcesFit scoring with the MostAllocated strategy.

Cases follow most_allocated_test.go (v1.37.1, TestMostAllocatedScoringStrategy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from topospread.framework.config.types import (
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.model.objects import Container, Node, ObjectMeta, Pod
from topospread.model.quantity import parse_quantity
from topospread.plugins.noderesources import Fit

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
        [0, 0],
        id="nothing scheduled and nothing requested scores every node 0",
    ),
    pytest.param(
        REQUESTING,
        TWO_SIZES,
        [],
        DEFAULT,
        [62, 50],
        id="the fuller of two differently sized nodes scores higher",
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
        [30, 42],
        id="the node's pods count even when the pod requests nothing",
    ),
    pytest.param(
        REQUESTING,
        TWO_BIG,
        existing(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [42, 55],
        id="the requesting pod is added to what the node's pods already request",
    ),
    pytest.param(
        make_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
        [
            make_node("node1", cpu="5000", memory="10000"),
            make_node("node2", cpu="10000", memory="9000"),
        ],
        [],
        DEFAULT,
        [95, 75],
        id="requests equal to a node's capacity score 100 for that resource",
    ),
    pytest.param(
        REQUESTING,
        TWO_SIZES,
        [],
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        [58, 50],
        id="weights average the resource scores: (75*1 + 50*2) // 3 = 58",
    ),
    pytest.param(
        make_pod({}),
        [
            make_node("node1", cpu="250m", memory="1000Mi"),
            make_node("node2", cpu="250m", memory="1000Mi"),
        ],
        existing(("node1", {}), ("node1", {})),
        DEFAULT,
        [80, 30],
        id="non-zero defaults beyond capacity are capped at capacity, not scored 0",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing_pods", "resources", "expected"), CASES)
def test_most_allocated_scores(pod, nodes, existing_pods, resources, expected):
    strategy = ScoringStrategy("MostAllocated", tuple(resources))
    assert scores(strategy, pod, nodes, existing_pods) == expected
