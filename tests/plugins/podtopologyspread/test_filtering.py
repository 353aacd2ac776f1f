"""PreFilter, Filter and AddPod/RemovePod, table-driven after upstream's filtering_test.go."""

from __future__ import annotations

import pytest

from topospread.framework.status import Code
from topospread.model.objects import Node, Pod
from topospread.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from topospread.plugins.podtopologyspread.filtering import (
    MAX_INT32,
    CriticalPaths,
    get_pre_filter_state,
)
from topospread.testing import make_node, make_pod, make_selector
from topospread.testing.harness import build_spread_plugin as build_plugin
from topospread.testing.harness import fresh_state

DNS = "DoNotSchedule"
FOO = make_selector().exists("foo").obj()

OK, SKEW, LABEL = "ok", "skew", "label"


def zone_node(name: str, zone: str | None) -> Node:
    builder = make_node().name(name).label("node", name)
    if zone is not None:
        builder = builder.label("zone", zone)
    return builder.obj()


FOUR_NODES = [
    zone_node("node-a", "zone1"),
    zone_node("node-b", "zone1"),
    zone_node("node-x", "zone2"),
    zone_node("node-y", "zone2"),
]


def pods_on(counts: dict[str, int], *, label: str = "foo", namespace: str = "default") -> list[Pod]:
    return [
        make_pod().name(f"p-{node}-{i}").namespace(namespace).label(label, "").node(node).obj()
        for node, count in counts.items()
        for i in range(count)
    ]


def verdicts(nodes: list[Node], existing: list[Pod], pod: Pod) -> dict[str, str]:
    plugin, snapshot = build_plugin(nodes, existing)
    state = fresh_state()
    _, status = plugin.pre_filter(state, pod, snapshot.node_infos)
    assert status is None
    result = {}
    for info in snapshot.node_infos:
        verdict = plugin.filter(state, pod, info)
        if verdict is None:
            result[info.name] = OK
        elif verdict.code is Code.UNSCHEDULABLE:
            assert verdict.reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
            result[info.name] = SKEW
        else:
            assert verdict.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            assert verdict.reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
            result[info.name] = LABEL
    return result


def incoming(*, label: bool = True) -> Pod:
    builder = make_pod().name("p")
    return (
        (builder.label("foo", "") if label else builder)
        .spread_constraint(1, "zone", DNS, FOO)
        .obj()
    )


SINGLE_CONSTRAINT_CASES = [
    pytest.param(
        FOUR_NODES,
        [],
        incoming(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="with no existing pods every node carrying the key fits",
    ),
    pytest.param(
        FOUR_NODES,
        [],
        incoming(label=False),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="a pod that does not match its own selector fits anywhere when nothing matches",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 1, "node-b": 1, "node-x": 0}, namespace="other"),
        incoming(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="pods in a different namespace do not count",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 2, "node-b": 1, "node-x": 1, "node-y": 2}),
        incoming(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="pods spread across zones as 3/3 let every node fit",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 1, "node-b": 2, "node-x": 1, "node-y": 0}),
        incoming(),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK},
        id="pods spread across zones as 3/1 only let zone2 fit",
    ),
    pytest.param(
        [
            zone_node("node-a", "zone1"),
            zone_node("node-b", None),
            zone_node("node-x", "zone2"),
            zone_node("node-y", "zone2"),
        ],
        pods_on({"node-a": 1, "node-b": 2, "node-x": 1, "node-y": 1}),
        incoming(),
        {"node-a": OK, "node-b": LABEL, "node-x": SKEW, "node-y": SKEW},
        id="pods on a node without the zone label vanish from the counts (1/2)",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 1}),
        make_pod().name("p").label("foo", "").spread_constraint(1, "rack", DNS, FOO).obj(),
        {"node-a": LABEL, "node-b": LABEL, "node-x": LABEL, "node-y": LABEL},
        id="no node has the rack label, so none can host the pod",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 2, "node-b": 1, "node-y": 3}),
        make_pod().name("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj(),
        {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW},
        id="pods spread across nodes as 2/1/0/3 only let node-x fit",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 2, "node-b": 1, "node-y": 3}),
        make_pod().name("p").label("foo", "").spread_constraint(2, "node", DNS, FOO).obj(),
        {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW},
        id="pods spread across nodes as 2/1/0/3 with maxSkew 2 let node-b and node-x fit",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 2, "node-b": 1, "node-y": 3}),
        make_pod().name("p").label("bar", "").spread_constraint(1, "node", DNS, FOO).obj(),
        {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW},
        id="a pod that does not match itself adds no self-match to the skew",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 2, "node-b": 1, "node-y": 3}),
        make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", "node-a", "node-y")
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": SKEW},
        id="node affinity excludes node-b and node-x from the counts (2/~1~/~0~/3), so node-a fits",
    ),
    pytest.param(
        FOUR_NODES,
        [
            *pods_on({"node-a": 1, "node-x": 1}),
            make_pod().name("dying").label("foo", "").node("node-a").terminating().obj(),
        ],
        incoming(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="terminating pods are not counted",
    ),
    pytest.param(
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1"), zone_node("node-c", "zone1")],
        pods_on({"node-a": 2, "node-b": 2, "node-c": 1}),
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", DNS, FOO, min_domains=4)
        .obj(),
        {"node-a": SKEW, "node-b": SKEW, "node-c": OK},
        id="2/2/1 with maxSkew 2 and fewer domains than minDomains: only the third node fits",
    ),
    pytest.param(
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1"), zone_node("node-c", "zone1")],
        pods_on({"node-a": 2, "node-b": 2, "node-c": 1}),
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", DNS, FOO, min_domains=3)
        .obj(),
        {"node-a": OK, "node-b": OK, "node-c": OK},
        id="2/2/1 with maxSkew 2 and enough domains for minDomains: every node fits",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 1, "node-b": 1, "node-x": 1}),
        make_pod().name("p").label("foo", "").spread_constraint(1, "zone", DNS, None).obj(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="a nil labelSelector matches nothing, so everything fits",
    ),
    pytest.param(
        FOUR_NODES,
        pods_on({"node-a": 3, "node-b": 1}),
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, make_selector().obj())
        .obj(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="an empty labelSelector counts no pod at all (kubernetes#141339), so everything fits",
    ),
]


@pytest.mark.parametrize(("nodes", "existing", "pod", "expected"), SINGLE_CONSTRAINT_CASES)
def test_single_constraint(
    nodes: list[Node], existing: list[Pod], pod: Pod, expected: dict[str, str]
) -> None:
    assert verdicts(nodes, existing, pod) == expected


TAINTED = [
    make_node().name("node-a").label("node", "node-a").obj(),
    make_node().name("node-b").label("node", "node-b").taint("k", "v", "NoSchedule").obj(),
    make_node().name("node-c").label("node", "node-c").obj(),
]


@pytest.mark.parametrize(
    ("taints_policy", "expected"),
    [
        pytest.param(
            None,
            {"node-a": SKEW, "node-b": OK, "node-c": SKEW},
            id="by default tainted nodes count, so the empty node-b holds the minimum 0",
        ),
        pytest.param(
            "Honor",
            {"node-a": OK, "node-b": OK, "node-c": OK},
            id="with nodeTaintsPolicy Honor the tainted node-b is not an eligible domain",
        ),
    ],
)
def test_node_taints_policy(taints_policy: str | None, expected: dict[str, str]) -> None:
    existing = pods_on({"node-a": 1, "node-c": 1})
    pod = (
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DNS, FOO, node_taints_policy=taints_policy)
        .obj()
    )
    assert verdicts(TAINTED, existing, pod) == expected


def test_node_affinity_policy_ignore_counts_nodes_the_pod_cannot_use() -> None:
    existing = pods_on({"node-a": 2, "node-b": 1, "node-y": 3})
    pod = (
        make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", "node-a", "node-y")
        .spread_constraint(1, "node", DNS, FOO, node_affinity_policy="Ignore")
        .obj()
    )
    assert verdicts(FOUR_NODES, existing, pod) == {
        "node-a": SKEW,
        "node-b": SKEW,
        "node-x": OK,
        "node-y": SKEW,
    }


def test_two_constraints_are_anded_and_the_first_failure_decides_the_code() -> None:
    nodes = [
        zone_node("node-a", "zone1"),
        make_node().name("node-b").label("zone", "zone1").obj(),
        zone_node("node-x", "zone2"),
        make_node().name("node-y").label("zone", "zone2").obj(),
    ]
    existing = pods_on({"node-a": 2, "node-b": 1, "node-x": 1})
    pod = (
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj()
    )
    # node-b and node-y lack "node", so they drop out of both constraints' counts:
    # zone1 = 2, zone2 = 1. node-b fails the zone constraint before its missing label
    # is looked at, so it is Unschedulable rather than UnschedulableAndUnresolvable.
    assert verdicts(nodes, existing, pod) == {
        "node-a": SKEW,
        "node-b": SKEW,
        "node-x": OK,
        "node-y": LABEL,
    }


def test_pre_filter_state_counts_every_eligible_domain_and_finds_the_minimum() -> None:
    plugin, snapshot = build_plugin(FOUR_NODES, pods_on({"node-a": 2, "node-b": 1, "node-y": 3}))
    pod = (
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj()
    )
    state = fresh_state()
    plugin.pre_filter(state, pod, snapshot.node_infos)
    s = get_pre_filter_state(state)
    assert s.tp_value_to_match_num == [
        {"zone1": 3, "zone2": 3},
        {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 3},
    ]
    assert [p.min_match_num for p in s.critical_paths] == [3, 0]
    assert s.critical_paths[1] == CriticalPaths("node-x", 0, "node-b", 1)


def test_pre_filter_skips_a_pod_without_hard_constraints() -> None:
    plugin, snapshot = build_plugin(FOUR_NODES)
    pod = make_pod().name("p").spread_constraint(1, "zone", "ScheduleAnyway", FOO).obj()
    state = fresh_state()
    _, status = plugin.pre_filter(state, pod, snapshot.node_infos)
    assert status is not None
    assert status.code is Code.SKIP


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin, snapshot = build_plugin(FOUR_NODES)
    status = plugin.filter(fresh_state(), incoming(), snapshot.node_infos[0])
    assert status is not None
    assert status.code is Code.ERROR
    assert "PreFilterPodTopologySpread" in status.message


def test_critical_paths_start_empty_and_track_the_two_smallest_domains() -> None:
    paths = CriticalPaths()
    assert paths == CriticalPaths("", MAX_INT32, "", MAX_INT32)
    for value, num in [("a", 3), ("b", 1), ("c", 2), ("", 0)]:
        paths.update(value, num)
    assert paths == CriticalPaths("", 0, "b", 1)
    paths.update("", 5)
    assert paths == CriticalPaths("b", 1, "", 5)


class TestAddAndRemovePod:
    """AddPod/RemovePod as preemption and nominated pods use them."""

    pod = make_pod().name("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj()

    def _state(self, counts: dict[str, int]):  # type: ignore[no-untyped-def]
        plugin, snapshot = build_plugin(FOUR_NODES, pods_on(counts))
        state = fresh_state()
        plugin.pre_filter(state, self.pod, snapshot.node_infos)
        return plugin, snapshot, state

    def test_adding_a_matching_pod_on_the_minimum_node_moves_the_minimum(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 1, "node-b": 1, "node-x": 0, "node-y": 1})
        added = make_pod().name("new").label("foo", "").node("node-x").obj()
        plugin.add_pod(state, self.pod, added, snapshot.get("node-x"))  # type: ignore[arg-type]
        s = get_pre_filter_state(state)
        assert s.tp_value_to_match_num[0]["node-x"] == 1
        assert s.min_match_num(0) == 1

    def test_adding_a_pod_on_a_non_critical_node_keeps_the_minimum(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 2, "node-b": 0, "node-x": 1, "node-y": 1})
        added = make_pod().name("new").label("foo", "").node("node-a").obj()
        plugin.add_pod(state, self.pod, added, snapshot.get("node-a"))  # type: ignore[arg-type]
        s = get_pre_filter_state(state)
        assert s.tp_value_to_match_num[0]["node-a"] == 3
        assert s.min_match_num(0) == 0

    def test_removing_a_pod_that_does_not_match_changes_nothing(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
        removed = make_pod().name("other").label("bar", "").node("node-a").obj()
        plugin.remove_pod(state, self.pod, removed, snapshot.get("node-a"))  # type: ignore[arg-type]
        assert get_pre_filter_state(state).tp_value_to_match_num[0]["node-a"] == 1

    def test_removing_a_matching_pod_from_another_namespace_changes_nothing(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
        removed = make_pod().name("x").namespace("other").label("foo", "").node("node-a").obj()
        plugin.remove_pod(state, self.pod, removed, snapshot.get("node-a"))  # type: ignore[arg-type]
        assert get_pre_filter_state(state).tp_value_to_match_num[0]["node-a"] == 1

    def test_removing_a_matching_pod_lowers_the_minimum(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
        removed = make_pod().name("p-node-b-0").label("foo", "").node("node-b").obj()
        plugin.remove_pod(state, self.pod, removed, snapshot.get("node-b"))  # type: ignore[arg-type]
        s = get_pre_filter_state(state)
        assert s.tp_value_to_match_num[0]["node-b"] == 0
        assert s.min_match_num(0) == 0

    def test_a_cloned_state_is_independent_of_the_original(self) -> None:
        plugin, snapshot, state = self._state({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
        copy = state.clone()
        added = make_pod().name("new").label("foo", "").node("node-a").obj()
        plugin.add_pod(copy, self.pod, added, snapshot.get("node-a"))  # type: ignore[arg-type]
        assert get_pre_filter_state(state).tp_value_to_match_num[0]["node-a"] == 1
        assert get_pre_filter_state(copy).tp_value_to_match_num[0]["node-a"] == 2
