"""NodeResourcesFit scoring with the MostAllocated strategy.

Cases follow most_allocated_test.go (v1.37.1, TestMostAllocatedScoringStrategy).
"""

from __future__ import annotations

import pytest

from topospread.framework.config.types import (
    ResourceSpec,
    ScoringStrategy,
)
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
        requests_pod(),
        TWO_BIG,
        assigned_pods(
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
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})
        ),
        DEFAULT,
        [42, 55],
        id="the requesting pod is added to what the node's pods already request",
    ),
    pytest.param(
        requests_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
        [
            requests_node("node1", cpu="5000", memory="10000"),
            requests_node("node2", cpu="10000", memory="9000"),
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
        requests_pod({}),
        [
            requests_node("node1", cpu="250m", memory="1000Mi"),
            requests_node("node2", cpu="250m", memory="1000Mi"),
        ],
        assigned_pods(("node1", {}), ("node1", {})),
        DEFAULT,
        [80, 30],
        id="non-zero defaults beyond capacity are capped at capacity, not scored 0",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing_pods", "resources", "expected"), CASES)
def test_most_allocated_scores(pod, nodes, existing_pods, resources, expected):
    strategy = ScoringStrategy("MostAllocated", tuple(resources))
    assert fit_scores(strategy, pod, nodes, existing_pods) == expected
