"""PreFilter, Filter and AddPod/RemovePod, table-driven after upstream's filtering_test.go."""

from __future__ import annotations

from dataclasses import replace

import pytest

from topospread.framework.config.types import InterPodAffinityArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import ClusterObjects, Snapshot
from topospread.framework.status import Code
from topospread.model.objects import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
)
from topospread.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)
from topospread.plugins.interpodaffinity.filtering import get_pre_filter_state
from topospread.testing import make_node, make_pod

HOST = "kubernetes.io/hostname"
OK, AFFINITY, ANTI, EXISTING = "ok", "affinity", "anti", "existing"


def sel(**labels: str) -> LabelSelector:
    return LabelSelector(match_labels=labels)


def expr(key: str, operator: str, *values: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, operator, values),))


def term(key: str, selector: LabelSelector | None, **kwargs: object) -> PodAffinityTerm:
    return PodAffinityTerm(topology_key=key, label_selector=selector, **kwargs)  # type: ignore[arg-type]


def with_affinity(
    pod: Pod,
    *,
    affinity: tuple[PodAffinityTerm, ...] = (),
    anti: tuple[PodAffinityTerm, ...] = (),
) -> Pod:
    return replace(
        pod, affinity=Affinity(pod_affinity_required=affinity, pod_anti_affinity_required=anti)
    )


def node(name: str, **labels: str) -> Node:
    builder = make_node().name(name)
    for key, value in {HOST: name, **labels}.items():
        builder = builder.label(key, value)
    return builder.obj()


def pod(name: str, on: str = "", namespace: str = "default", **labels: str) -> Pod:
    builder = make_pod().name(name).namespace(namespace).labels(labels)
    return builder.node(on).obj() if on else builder.obj()


def terminating(p: Pod) -> Pod:
    return replace(p, metadata=replace(p.metadata, deletion_timestamp="2026-01-01T00:00:00Z"))


def namespace(name: str, **labels: str) -> Namespace:
    return Namespace(ObjectMeta(name=name, labels={"kubernetes.io/metadata.name": name, **labels}))


def build(
    nodes: list[Node],
    pods: list[Pod],
    *,
    namespaces: tuple[Namespace, ...] = (),
) -> tuple[InterPodAffinity, Snapshot]:
    snapshot = Snapshot(nodes, pods)
    handle = Handle(snapshot, ClusterObjects(namespaces=namespaces))
    return InterPodAffinity(InterPodAffinityArgs(), handle, Features()), snapshot


_VERDICTS = {
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH): AFFINITY,
    (Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH): ANTI,
    (Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH): EXISTING,
}


def verdicts(plugin: InterPodAffinity, snapshot: Snapshot, incoming: Pod) -> dict[str, str]:
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot.node_infos)
    skipped = status is not None and status.code is Code.SKIP
    assert skipped or status is None
    result = {}
    for info in snapshot.node_infos:
        # After a PreFilter Skip the framework does not call Filter: every node fits.
        verdict = None if skipped else plugin.filter(state, incoming, info)
        if verdict is None:
            result[info.name] = OK
        else:
            (reason,) = verdict.reasons
            result[info.name] = _VERDICTS[(verdict.code, reason)]
    return result


ZONES = [node("nodeA", zone="z1"), node("nodeB", zone="z1"), node("nodeC", zone="z2")]

CASES = [
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(pod("in"), affinity=(term("zone", expr("app", "In", "web", "db")),)),
        {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY},
        id="affinity with In lets every node of the zone of a matching pod fit, and no other",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(pod("in"), affinity=(term("zone", expr("app", "NotIn", "db")),)),
        {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY},
        id="affinity with NotIn matches a pod whose label is not listed",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", namespace="other", app="web")],
        with_affinity(pod("in"), affinity=(term("zone", sel(app="web")),)),
        {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": AFFINITY},
        id="affinity looks only at the pod's own namespace by default",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", namespace="other", app="web")],
        with_affinity(pod("in"), affinity=(term("zone", sel(app="web"), namespaces=("other",)),)),
        {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY},
        id="affinity with listed namespaces looks only there",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", namespace="other", app="web")],
        with_affinity(
            pod("in"), affinity=(term("zone", sel(app="web"), namespace_selector=LabelSelector()),)
        ),
        {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY},
        id="an empty namespace selector matches every namespace",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web", tier="front"), pod("p2", "nodeC", app="web")],
        with_affinity(
            pod("in"),
            affinity=(term("zone", sel(app="web")), term(HOST, sel(tier="front"))),
        ),
        {"nodeA": OK, "nodeB": AFFINITY, "nodeC": AFFINITY},
        id="one pod must match every affinity term, each in the node's own domain",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web"), pod("p2", "nodeC", tier="front")],
        with_affinity(
            pod("in"),
            affinity=(term("zone", sel(app="web")), term("zone", sel(tier="front"))),
        ),
        {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": AFFINITY},
        id="two pods each matching one term do not satisfy the pod's affinity",
    ),
    pytest.param(
        [*ZONES, make_node().name("nodeD").obj()],
        [],
        with_affinity(pod("in", app="web"), affinity=(term("zone", sel(app="web")),)),
        {"nodeA": OK, "nodeB": OK, "nodeC": OK, "nodeD": AFFINITY},
        id="the first pod of a group matching its own affinity fits where the key exists",
    ),
    pytest.param(
        ZONES,
        [],
        with_affinity(pod("in", app="db"), affinity=(term("zone", sel(app="web")),)),
        {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": AFFINITY},
        id="a pod not matching its own affinity cannot be the first of a group",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeC", app="web")],
        with_affinity(pod("in", app="web"), affinity=(term("zone", sel(app="web")),)),
        {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": OK},
        id="once a matching pod exists the first-pod rule no longer applies",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(pod("in"), affinity=(term("zone", None),)),
        {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": AFFINITY},
        id="a nil label selector matches no pod",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(pod("in"), anti=(term("zone", sel(app="web")),)),
        {"nodeA": ANTI, "nodeB": ANTI, "nodeC": OK},
        id="anti-affinity rejects the whole zone of a matching pod as Unschedulable",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(pod("in"), anti=(term(HOST, LabelSelector()),)),
        {"nodeA": ANTI, "nodeB": OK, "nodeC": OK},
        id="anti-affinity with an empty selector avoids every pod of the namespace",
    ),
    pytest.param(
        ZONES,
        [pod("p1", "nodeA", app="web")],
        with_affinity(
            pod("in", app="web"),
            affinity=(term("zone", sel(app="web")),),
            anti=(term(HOST, sel(app="web")),),
        ),
        {"nodeA": ANTI, "nodeB": OK, "nodeC": AFFINITY},
        id="affinity is checked before anti-affinity and both must hold",
    ),
    pytest.param(
        [*ZONES, make_node().name("nodeD").label(HOST, "nodeD").obj()],
        [with_affinity(pod("p1", "nodeA", app="db"), anti=(term("zone", sel(app="web")),))],
        pod("in", app="web"),
        {"nodeA": EXISTING, "nodeB": EXISTING, "nodeC": OK, "nodeD": OK},
        id="an existing pod's anti-affinity rejects its zone for the incoming pod",
    ),
    pytest.param(
        ZONES,
        [with_affinity(pod("p1", "nodeA", app="db"), anti=(term("zone", sel(app="web")),))],
        pod("in", namespace="other", app="web"),
        {"nodeA": OK, "nodeB": OK, "nodeC": OK},
        id="an existing pod's anti-affinity is about its own namespace by default",
    ),
    pytest.param(
        ZONES,
        [
            with_affinity(
                pod("p1", "nodeA", app="db"),
                anti=(term("zone", sel(app="web"), namespace_selector=LabelSelector()),),
            )
        ],
        pod("in", namespace="other", app="web"),
        {"nodeA": EXISTING, "nodeB": EXISTING, "nodeC": OK},
        id="an existing pod's anti-affinity with an empty namespace selector spans namespaces",
    ),
    pytest.param(
        ZONES,
        [
            with_affinity(
                pod("p1", "nodeA", app="db"),
                anti=(term("zone", sel(app="web")), term("rack", sel(app="web"))),
            )
        ],
        pod("in", app="web"),
        {"nodeA": EXISTING, "nodeB": EXISTING, "nodeC": OK},
        id="an existing pod's term whose key its node lacks counts nowhere",
    ),
    pytest.param(
        ZONES,
        [
            terminating(
                with_affinity(pod("p1", "nodeA", app="db"), anti=(term("zone", sel(app="web")),))
            )
        ],
        pod("in", app="web"),
        {"nodeA": EXISTING, "nodeB": EXISTING, "nodeC": OK},
        id="terminating pods still count, unlike in topology spreading",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "incoming", "expected"), CASES)
def test_filter_verdicts_follow_the_required_terms(nodes, pods, incoming, expected):
    plugin, snapshot = build(nodes, pods)
    assert verdicts(plugin, snapshot, incoming) == expected


NAMESPACED = [
    pod("p-team", "nodeA", namespace="team-a", app="web"),
    pod("p-other", "nodeC", namespace="other", app="web"),
]
TEAM_SELECTOR = sel(team="a")


@pytest.mark.parametrize(
    ("namespaces", "expected"),
    [
        pytest.param(
            (namespace("team-a", team="a"), namespace("other")),
            {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY},
            id="a namespace selector picks the namespaces whose objects carry the labels",
        ),
        pytest.param(
            (namespace("other"),),
            {"nodeA": AFFINITY, "nodeB": AFFINITY, "nodeC": AFFINITY},
            id="a namespace without an object has no labels, so no selector picks it",
        ),
    ],
)
def test_the_incoming_pods_namespace_selector_is_resolved_through_namespace_objects(
    namespaces, expected
):
    plugin, snapshot = build(ZONES, NAMESPACED, namespaces=namespaces)
    incoming = with_affinity(
        pod("in"), affinity=(term("zone", sel(app="web"), namespace_selector=TEAM_SELECTOR),)
    )
    assert verdicts(plugin, snapshot, incoming) == expected


@pytest.mark.parametrize(
    ("namespaces", "expected"),
    [
        pytest.param(
            (namespace("default", team="a"),),
            {"nodeA": EXISTING, "nodeB": EXISTING, "nodeC": OK},
            id="an existing pod's namespace selector matches the incoming pod's namespace labels",
        ),
        pytest.param(
            (),
            {"nodeA": OK, "nodeB": OK, "nodeC": OK},
            id="without a Namespace object the incoming pod's namespace has no labels",
        ),
    ],
)
def test_existing_pods_namespace_selectors_meet_the_incoming_pods_namespace_labels(
    namespaces, expected
):
    existing = with_affinity(
        pod("p1", "nodeA", namespace="team-a", app="db"),
        anti=(term("zone", sel(app="web"), namespace_selector=TEAM_SELECTOR),),
    )
    plugin, snapshot = build(ZONES, [existing], namespaces=namespaces)
    assert verdicts(plugin, snapshot, pod("in", app="web")) == expected


def test_match_label_keys_are_left_to_the_api_server():
    # The scheduler reads only labelSelector; matchLabelKeys would have been merged into
    # it when the pod was created.
    plugin, snapshot = build(ZONES, [pod("p1", "nodeA", app="web", version="1")])
    incoming = with_affinity(
        pod("in", version="2"),
        affinity=(term("zone", sel(app="web"), match_label_keys=("version",)),),
    )
    assert verdicts(plugin, snapshot, incoming) == {"nodeA": OK, "nodeB": OK, "nodeC": AFFINITY}


def test_pre_filter_skips_when_nothing_required_is_in_play():
    plugin, snapshot = build(
        ZONES,
        [with_affinity(pod("p1", "nodeA", app="db"), anti=(term("zone", sel(app="other")),))],
    )
    _, status = plugin.pre_filter(CycleState(), pod("in", app="web"), snapshot.node_infos)
    assert status is not None
    assert status.code is Code.SKIP


def test_pre_filter_counts_each_topology_pair():
    existing = [
        with_affinity(pod("p1", "nodeA", app="db"), anti=(term("zone", sel(app="web")),)),
        pod("p2", "nodeB", app="web"),
        pod("p3", "nodeC", app="web"),
        pod("p4", "nodeC", app="cache"),
    ]
    plugin, snapshot = build(ZONES, existing)
    incoming = with_affinity(
        pod("in", app="web"),
        affinity=(term("zone", sel(app="web")),),
        anti=(term(HOST, sel(app="cache")), term("zone", sel(app="db"))),
    )
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, snapshot.node_infos)
    assert status is None
    s = get_pre_filter_state(state)
    assert s.existing_anti_affinity_counts == {("zone", "z1"): 1}
    assert s.affinity_counts == {("zone", "z1"): 1, ("zone", "z2"): 1}
    assert s.anti_affinity_counts == {(HOST, "nodeC"): 1, ("zone", "z1"): 1}


def test_add_and_remove_pod_update_a_clone_only():
    plugin, snapshot = build(ZONES, [pod("p1", "nodeA", app="web")])
    incoming = with_affinity(
        pod("in", app="web"),
        affinity=(term("zone", sel(app="web")),),
        anti=(term(HOST, sel(app="web")),),
    )
    state = CycleState()
    plugin.pre_filter(state, incoming, snapshot.node_infos)
    original = get_pre_filter_state(state)
    before = (dict(original.affinity_counts), dict(original.anti_affinity_counts))
    assert before == ({("zone", "z1"): 1}, {(HOST, "nodeA"): 1})

    copy = state.clone()
    node_c = snapshot.get("nodeC")
    assert node_c is not None
    hater = with_affinity(pod("p2", "nodeC", app="web"), anti=(term("zone", sel(app="web")),))
    assert plugin.add_pod(copy, incoming, hater, node_c) is None
    added = get_pre_filter_state(copy)
    assert added.affinity_counts == {("zone", "z1"): 1, ("zone", "z2"): 1}
    assert added.anti_affinity_counts == {(HOST, "nodeA"): 1, (HOST, "nodeC"): 1}
    assert added.existing_anti_affinity_counts == {("zone", "z2"): 1}
    assert plugin.filter(copy, incoming, node_c) is not None

    node_a = snapshot.get("nodeA")
    assert node_a is not None
    assert plugin.remove_pod(copy, incoming, pod("p1", "nodeA", app="web"), node_a) is None
    # Entries brought down to zero are dropped.
    assert added.affinity_counts == {("zone", "z2"): 1}
    assert added.anti_affinity_counts == {(HOST, "nodeC"): 1}
    assert (original.affinity_counts, original.anti_affinity_counts) == before
    assert original.existing_anti_affinity_counts == {}


def test_an_unparsable_selector_makes_pre_filter_unresolvable():
    plugin, snapshot = build(ZONES, [])
    incoming = with_affinity(pod("in"), affinity=(term("zone", expr("app", "Foo", "x")),))
    _, status = plugin.pre_filter(CycleState(), incoming, snapshot.node_infos)
    assert status is not None
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (
        'parsing pod: requiredAffinityTerms: "Foo" is not a valid label selector operator',
    )


def test_filter_without_pre_filter_state_is_an_error():
    plugin, snapshot = build(ZONES, [])
    status = plugin.filter(CycleState(), pod("in"), snapshot.node_infos[0])
    assert status is not None
    assert status.code is Code.ERROR
    assert status.reasons == (
        'error reading "PreFilterInterPodAffinity" from cycleState: not found',
    )
