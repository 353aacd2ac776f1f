"""NodeAffinity PreScore, Score and NormalizeScore.

Cases follow node_affinity_test.go (v1.37.1, TestNodeAffinityPriority).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from topospread.framework.config.types import NodeAffinityArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import NodeScore
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code
from topospread.model.objects import (
    Affinity,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PreferredSchedulingTerm,
)
from topospread.model.objects import Node as NodeObj
from topospread.plugins.nodeaffinity import NodeAffinity as NodeAffinityPlugin

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def term(weight: int, **labels: str) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(
        weight,
        NodeSelectorTerm(tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in labels.items())),
    )


AFFINITY1 = NodeAffinity(preferred=(term(2, foo="bar"),))
AFFINITY2 = NodeAffinity(
    preferred=(term(2, foo="bar"), term(4, key="value"), term(5, foo="bar", key="value", az="az1"))
)


def pod(node_affinity: NodeAffinity | None = None) -> Pod:
    affinity = Affinity(node_affinity=node_affinity) if node_affinity is not None else None
    return Pod(ObjectMeta("p", "default"), affinity=affinity)


def nodes(*named: tuple[str, Mapping[str, str]]) -> list[NodeInfo]:
    return [NodeInfo(NodeObj(ObjectMeta(name, labels=labels))) for name, labels in named]


def run(
    plugin: NodeAffinityPlugin, p: Pod, infos: Sequence[NodeInfo], pre_score: bool
) -> list[int]:
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, p, infos) is None
    scores = []
    for info in infos:
        value, status = plugin.score(state, p, info)
        assert status is None
        scores.append(NodeScore(info.name, value))
    extensions = plugin.score_extensions()
    assert extensions is not None
    assert extensions.normalize_score(state, p, scores) is None
    return [s.score for s in scores]


CASES = [
    pytest.param(
        pod(NodeAffinity()),
        nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
        None,
        False,
        [0, 0, 0],
        id="without preferred terms every node scores 0",
    ),
    pytest.param(
        pod(AFFINITY1),
        nodes(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)),
        None,
        True,
        [0, 0, 0],
        id="when no node matches a preferred term every node scores 0",
    ),
    pytest.param(
        pod(AFFINITY1),
        nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
        None,
        True,
        [100, 0, 0],
        id="the only matching node scores 100",
    ),
    pytest.param(
        pod(AFFINITY2),
        nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
        None,
        True,
        [18, 100, 36],
        id="matched weights 2, 11 and 4 normalize to 18, 100 and 36",
    ),
    pytest.param(
        pod(),
        nodes(("node1", LABEL1), ("node2", LABEL2)),
        AFFINITY1,
        True,
        [100, 0],
        id="added affinity's preferred terms score on their own",
    ),
    pytest.param(
        pod(AFFINITY1),
        nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)),
        NodeAffinity(preferred=(term(3, key="value"),)),
        True,
        [40, 60, 100],
        id="added affinity's weights add to the pod's",
    ),
    pytest.param(
        pod(AFFINITY2),
        nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
        None,
        False,
        [18, 100, 36],
        id="score works out the terms itself when PreScore did not run",
    ),
]


@pytest.mark.parametrize(("p", "infos", "added", "pre_score", "expected"), CASES)
def test_node_affinity_scores(p, infos, added, pre_score, expected):
    plugin = NodeAffinityPlugin(NodeAffinityArgs(added_affinity=added), Features())
    assert run(plugin, p, infos, pre_score) == expected


def test_pre_score_skips_a_pod_without_preferred_terms_when_nothing_is_added():
    plugin = NodeAffinityPlugin(NodeAffinityArgs(), Features())
    status = plugin.pre_score(CycleState(), pod(), nodes(("node1", LABEL1)))
    assert status is not None
    assert status.code is Code.SKIP


def test_pre_score_fails_on_a_preferred_term_that_does_not_parse():
    broken = NodeAffinity(
        preferred=(
            PreferredSchedulingTerm(
                2, NodeSelectorTerm((NodeSelectorRequirement("invalid key", "In", ("bar",)),))
            ),
        )
    )
    plugin = NodeAffinityPlugin(NodeAffinityArgs(), Features())
    status = plugin.pre_score(CycleState(), pod(broken), nodes(("node1", LABEL1)))
    assert status is not None
    assert status.code is Code.ERROR
    assert status.message.startswith('[0].matchExpressions[0].key: Invalid value: "invalid key"')
