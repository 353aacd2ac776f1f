"""NodeResourcesFit scoring with the RequestedToCapacityRatio strategy.

Cases follow requested_to_capacity_ratio_test.go (v1.37.1:
TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from topospread.framework.config.types import (
    RequestedToCapacityRatio,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from topospread.plugins.noderesources.requested_to_capacity_ratio import (
    broken_linear_function,
    go_round,
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

LEAST_SHAPE = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))
"""Score 10 at 0 % utilization down to 0 at 100 %: prefers the emptiest node."""


def rtcr(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> ScoringStrategy:
    return ScoringStrategy(
        "RequestedToCapacityRatio", tuple(resources), RequestedToCapacityRatio(tuple(shape))
    )


CASES = [
    pytest.param(
        requests_pod(),
        TWO_SMALL,
        [],
        DEFAULT,
        [100, 100],
        id="nothing requested on empty nodes scores the top of the shape",
    ),
    pytest.param(
        REQUESTING,
        TWO_SIZES,
        [],
        DEFAULT,
        [38, 50],
        id="the weighted mean 37.5 rounds half away from zero to 38",
    ),
    pytest.param(
        requests_pod(),
        TWO_SIZES,
        assigned_pods(
            ("node1", {"cpu": "3000", "memory": "5000"}),
            ("node2", {"cpu": "3000", "memory": "5000"}),
        ),
        DEFAULT,
        [38, 50],
        id="the node's pods alone set the utilization when the pod requests nothing",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing_pods", "resources", "expected"), CASES)
def test_requested_to_capacity_ratio_scores(pod, nodes, existing_pods, resources, expected):
    assert fit_scores(rtcr(resources, LEAST_SHAPE), pod, nodes, existing_pods) == expected


BROKEN_LINEAR = [
    pytest.param(
        ((10, 1), (90, 9)),
        [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ],
        id="an increasing shape is constant outside its points and truncates between",
    ),
    pytest.param(
        ((0, 2), (40, 10), (100, 0)),
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
        id="a shape that rises then falls interpolates each segment",
    ),
    pytest.param(
        ((0, 2), (40, 2), (100, 2)),
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
        id="a flat shape is constant",
    ),
    pytest.param(
        ((0, 10), (30, 0)),
        [(10, 7), (20, 4), (25, 2), (29, 1)],
        id="a falling segment truncates toward zero like Go, not toward minus infinity",
    ),
]


@pytest.mark.parametrize(("points", "checks"), BROKEN_LINEAR)
def test_broken_linear_function(points, checks):
    f = broken_linear_function(points)
    assert [(p, f(p)) for p, _ in checks] == checks


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (37.5, 38), (2.4999999999999996, 2), (-0.5, -1), (0.0, 0)],
)
def test_go_round_rounds_half_away_from_zero(value, expected):
    assert go_round(value) == expected


GPU = "intel.com/foo"
BIN_PACKING = (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10))


def test_an_extended_resource_the_pod_does_not_request_is_not_scored():
    # TestResourceBinPackingSingleExtended: "nothing scheduled, nothing requested".
    nodes = [
        requests_node("node1", cpu="4000", memory="10000", **{GPU: "8"}),
        requests_node("node2", cpu="4000", memory="10000", **{GPU: "4"}),
    ]
    strategy = rtcr((ResourceSpec(GPU, 1),), BIN_PACKING)
    assert fit_scores(strategy, requests_pod(), nodes, []) == [0, 0]


def test_an_extended_resource_request_bin_packs_onto_the_fuller_node():
    # TestResourceBinPackingSingleExtended: "resources requested, pods scheduled with
    # less resources": node1 (2+2)/8 = 50 % -> 5 * 10 = 50; node2 (0+2)/4 = 50 % -> 50...
    nodes = [
        requests_node("node1", cpu="4000", memory="10000", **{GPU: "8"}),
        requests_node("node2", cpu="4000", memory="10000", **{GPU: "4"}),
    ]
    pod = requests_pod({GPU: "2"})
    strategy = rtcr((ResourceSpec(GPU, 1),), BIN_PACKING)
    assert fit_scores(strategy, pod, nodes, assigned_pods(("node1", {GPU: "2"}))) == [50, 50]
    assert fit_scores(strategy, pod, nodes, []) == [25, 50]
