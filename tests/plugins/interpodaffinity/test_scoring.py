"""PreScore, Score and NormalizeScore, table-driven after upstream's scoring_test.go."""

from __future__ import annotations

from dataclasses import replace

import pytest

from topospread.framework.config.types import InterPodAffinityArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, NodeScore
from topospread.framework.node_info import Snapshot
from topospread.framework.status import Code
from topospread.model.objects import (
    Affinity,
    LabelSelector,
    Node,
    Pod,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from topospread.plugins.interpodaffinity import InterPodAffinity
from topospread.plugins.interpodaffinity.scoring import get_pre_score_state
from topospread.testing import make_node, make_pod

WEB = LabelSelector(match_labels={"app": "web"})


def weighted(weight: int, key: str, selector: LabelSelector = WEB) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(
        weight, PodAffinityTerm(topology_key=key, label_selector=selector)
    )


def pod(name: str, on: str = "", *, affinity: Affinity | None = None, **labels: str) -> Pod:
    builder = make_pod().name(name).labels(labels)
    built = builder.node(on).obj() if on else builder.obj()
    return replace(built, affinity=affinity)


def node(name: str, **labels: str) -> Node:
    builder = make_node().name(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.obj()


NODES = [
    node("nodeA", region="r1", zone="z1"),
    node("nodeB", region="r1", zone="z2"),
    node("nodeC", region="r2", zone="z3"),
]

PREFERS_WEB_REGION = Affinity(pod_affinity_preferred=(weighted(5, "region"),))
AVOIDS_WEB_ZONE = Affinity(pod_anti_affinity_preferred=(weighted(5, "zone"),))
NEEDS_WEB_REGION = Affinity(
    pod_affinity_required=(PodAffinityTerm(topology_key="region", label_selector=WEB),)
)


def run(
    nodes: list[Node], pods: list[Pod], incoming: Pod, args: InterPodAffinityArgs
) -> tuple[CycleState, dict[str, int] | None]:
    snapshot = Snapshot(nodes, pods)
    plugin = InterPodAffinity(args, Handle(snapshot), Features())
    state = CycleState()
    status = plugin.pre_score(state, incoming, snapshot.node_infos)
    if status is not None:
        assert status.code is Code.SKIP
        return state, None
    scores = []
    for info in snapshot.node_infos:
        raw, score_status = plugin.score(state, incoming, info)
        assert score_status is None
        scores.append(NodeScore(info.name, raw))
    assert plugin.normalize_score(state, incoming, scores) is None
    return state, {entry.name: entry.score for entry in scores}


DEFAULT = InterPodAffinityArgs()

CASES = [
    pytest.param(
        [pod("p1", "nodeA", app="web")],
        pod("in", affinity=PREFERS_WEB_REGION),
        DEFAULT,
        {"region": {"r1": 5}},
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
        id="preferred affinity favours every node of the region of a matching pod",
    ),
    pytest.param(
        [pod("p1", "nodeA", app="web")],
        pod("in", affinity=AVOIDS_WEB_ZONE),
        DEFAULT,
        {"zone": {"z1": -5}},
        {"nodeA": 0, "nodeB": 100, "nodeC": 100},
        id="preferred anti-affinity pushes the zone of a matching pod to the bottom",
    ),
    pytest.param(
        [pod("p1", "nodeA", app="web")],
        pod(
            "in",
            affinity=Affinity(
                pod_affinity_preferred=(weighted(3, "region"),),
                pod_anti_affinity_preferred=(weighted(2, "zone"),),
            ),
        ),
        DEFAULT,
        {"region": {"r1": 3}, "zone": {"z1": -2}},
        {"nodeA": 33, "nodeB": 100, "nodeC": 0},
        id="weights add up per node and normalization truncates (1 of 3 is 33)",
    ),
    pytest.param(
        [pod("p1", "nodeA", app="web")],
        pod(
            "in",
            affinity=Affinity(
                pod_affinity_preferred=(weighted(5, "zone"),),
                pod_anti_affinity_preferred=(weighted(5, "zone"),),
            ),
        ),
        DEFAULT,
        {"zone": {"z1": 0}},
        {"nodeA": 0, "nodeB": 0, "nodeC": 0},
        id="weights cancelling out still count as a match: no Skip, every node 0",
    ),
    pytest.param(
        [pod("p1", "nodeC", affinity=NEEDS_WEB_REGION, app="db")],
        pod("in", app="web"),
        DEFAULT,
        {"region": {"r2": 1}},
        {"nodeA": 0, "nodeB": 0, "nodeC": 100},
        id="an existing pod's required affinity to the pod scores with hardPodAffinityWeight",
    ),
    pytest.param(
        [pod("p1", "nodeC", affinity=NEEDS_WEB_REGION, app="db")],
        pod("in", app="web"),
        InterPodAffinityArgs(hard_pod_affinity_weight=0),
        None,
        None,
        id="a hardPodAffinityWeight of zero ignores existing pods' required affinity",
    ),
    pytest.param(
        [
            pod(
                "p1",
                "nodeA",
                affinity=Affinity(pod_anti_affinity_preferred=(weighted(10, "zone"),)),
                app="db",
            ),
            pod(
                "p2",
                "nodeC",
                affinity=Affinity(pod_affinity_preferred=(weighted(4, "region"),)),
                app="db",
            ),
        ],
        pod("in", app="web"),
        DEFAULT,
        {"zone": {"z1": -10}, "region": {"r2": 4}},
        {"nodeA": 0, "nodeB": 71, "nodeC": 100},
        id="existing pods' preferred terms towards the pod count too",
    ),
    pytest.param(
        [
            pod(
                "p1",
                "nodeA",
                affinity=Affinity(pod_anti_affinity_preferred=(weighted(10, "zone"),)),
                app="db",
            )
        ],
        pod("in", app="web"),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        None,
        None,
        id="ignorePreferredTermsOfExistingPods skips pods without preferred terms",
    ),
    pytest.param(
        [
            pod(
                "p1",
                "nodeA",
                affinity=Affinity(pod_anti_affinity_preferred=(weighted(10, "zone"),)),
                app="web",
            )
        ],
        pod("in", affinity=PREFERS_WEB_REGION, app="web"),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        {"region": {"r1": 5}, "zone": {"z1": -10}},
        {"nodeA": 0, "nodeB": 100, "nodeC": 50},
        id="ignorePreferredTermsOfExistingPods still counts them when the pod has its own",
    ),
    pytest.param(
        [pod("p1", "nodeA", app="db")],
        pod("in", affinity=PREFERS_WEB_REGION),
        DEFAULT,
        None,
        None,
        id="PreScore skips when no term matches any pod",
    ),
    pytest.param(
        [pod("p1", "bare", app="web")],
        pod("in", affinity=PREFERS_WEB_REGION),
        DEFAULT,
        None,
        None,
        id="pods on a node without labels contribute nothing",
    ),
    pytest.param(
        [pod("p1", "nodeA", app="web")],
        pod(
            "in",
            affinity=Affinity(
                pod_affinity_preferred=(weighted(5, "region", LabelSelector()),),
            ),
        ),
        DEFAULT,
        {"region": {"r1": 5}},
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
        id="an empty label selector in a preferred term matches every pod of the namespace",
    ),
]


@pytest.mark.parametrize(("pods", "incoming", "args", "topology", "expected"), CASES)
def test_scores_follow_the_preferred_terms(pods, incoming, args, topology, expected):
    # A node without labels hosts pods in one case; it scores raw 0 like nodeC or nodeB.
    nodes = [*NODES, make_node().name("bare").obj()]
    state, scores = run(nodes, pods, incoming, args)
    if expected is None:
        assert scores is None
        return
    assert get_pre_score_state(state).topology_score == topology
    assert scores is not None
    assert {name: scores[name] for name in expected} == expected


def test_normalize_without_pre_score_state_is_an_error():
    snapshot = Snapshot(NODES)
    plugin = InterPodAffinity(DEFAULT, Handle(snapshot), Features())
    status = plugin.normalize_score(CycleState(), pod("in"), [NodeScore("nodeA", 1)])
    assert status is not None
    assert status.code is Code.ERROR
    assert status.reasons == (
        'failed to read "PreScoreInterPodAffinity" from cycleState: not found',
    )
