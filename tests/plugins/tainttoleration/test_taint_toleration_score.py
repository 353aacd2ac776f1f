"""TaintToleration PreScore, Score and NormalizeScore.

Cases follow taint_toleration_test.go (v1.37.1, TestTaintTolerationScore).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import NodeScore
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code
from topospread.model.objects import Node, ObjectMeta, Pod, Taint, Toleration
from topospread.plugins.tainttoleration import TaintToleration

PREFER = "PreferNoSchedule"


def pod(*tolerations: Toleration) -> Pod:
    return Pod(ObjectMeta("p", "default"), tolerations=tolerations)


def node(name: str, *taints: Taint) -> NodeInfo:
    return NodeInfo(Node(ObjectMeta(name), taints=taints))


def run(p: Pod, infos: Sequence[NodeInfo]) -> list[int]:
    plugin = TaintToleration(Features())
    state = CycleState()
    assert plugin.pre_score(state, p, infos) is None
    scores = []
    for info in infos:
        value, status = plugin.score(state, p, info)
        assert status is None
        scores.append(NodeScore(info.name, value))
    assert plugin.normalize_score(state, p, scores) is None
    return [s.score for s in scores]


CASES = [
    pytest.param(
        pod(Toleration("foo", "Equal", "bar", PREFER)),
        [node("nodeA", Taint("foo", PREFER, "bar")), node("nodeB", Taint("foo", PREFER, "blah"))],
        [100, 0],
        id="a node whose PreferNoSchedule taint is tolerated beats one whose taint is not",
    ),
    pytest.param(
        pod(
            Toleration("cpu-type", "Equal", "arm64", PREFER),
            Toleration("disk-type", "Equal", "ssd", PREFER),
        ),
        [
            node("nodeA"),
            node("nodeB", Taint("cpu-type", PREFER, "arm64")),
            node("nodeC", Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")),
        ],
        [100, 100, 100],
        id="tolerated taints do not lower a node's score",
    ),
    pytest.param(
        pod(Toleration("foo", "Equal", "bar", PREFER)),
        [
            node("nodeA"),
            node("nodeB", Taint("cpu-type", PREFER, "arm64")),
            node("nodeC", Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")),
        ],
        [100, 50, 0],
        id="more untolerated taints score lower, 100 - 100 * count // max",
    ),
    pytest.param(
        pod(
            Toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
            Toleration("disk-type", "Equal", "ssd", "NoSchedule"),
        ),
        [
            node("nodeA"),
            node("nodeB", Taint("cpu-type", "NoSchedule", "arm64")),
            node("nodeC", Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")),
        ],
        [100, 100, 0],
        id="only PreferNoSchedule taints count and NoSchedule tolerations do not tolerate them",
    ),
    pytest.param(
        pod(Toleration("cpu-type", "Exists")),
        [node("nodeA", Taint("cpu-type", PREFER, "x")), node("nodeB", Taint("other", PREFER))],
        [100, 0],
        id="a toleration without effect tolerates PreferNoSchedule taints",
    ),
    pytest.param(
        pod(),
        [node("nodeA", Taint("a", "NoSchedule")), node("nodeB")],
        [100, 100],
        id="when no node has PreferNoSchedule taints every node scores 100",
    ),
]


@pytest.mark.parametrize(("p", "infos", "expected"), CASES)
def test_taint_toleration_scores(p, infos, expected):
    assert run(p, infos) == expected


def test_score_without_pre_score_is_an_error():
    plugin = TaintToleration(Features())
    _, status = plugin.score(CycleState(), pod(), node("nodeA"))
    assert status is not None
    assert status.code is Code.ERROR
    assert status.message == 'failed to read "PreScoreTaintToleration" from cycleState: not found'
