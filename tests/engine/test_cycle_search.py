"""percentageOfNodesToScore and the rotating start index, hand-computed from schedule_one.go.

A sequential (parallelism 1) kube-scheduler visits nodes from ``nextStartNodeIndex``;
after K feasible nodes it keeps going, recording rejected nodes in NodeToStatus, until
the (K+1)-th feasible node (dropped) or the end of the list. Then
``next = (start + feasible + recorded rejections) % len(all nodes)``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from topospread.engine.cycle import NodeSearch, num_feasible_nodes_to_find, schedule_one
from topospread.framework.config.decode import default_configuration
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.model.objects import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from topospread.plugins.registry import in_tree_registry
from topospread.testing import make_node, make_pod


@pytest.mark.parametrize(
    ("global_pct", "profile_pct", "nodes", "expected"),
    [
        (0, None, 0, 0),
        (0, None, 99, 99),  # below 100 nodes: every node
        (0, None, 100, 100),  # 50% of 100 = 50, raised to the minimum 100
        (0, None, 500, 230),  # adaptive 50 - 500/125 = 46%
        (0, None, 1000, 420),  # 42%
        (0, None, 5000, 500),  # 10%
        (0, None, 5624, 337),  # 50 - 5624/125 = 50 - 44 = 6%: 337.44 truncated
        (0, None, 6000, 300),  # 50 - 48 = 2%, floored to 5%
        (0, None, 15000, 750),  # 5% floor
        (10, None, 500, 100),  # 50 raised to 100
        (10, 30, 500, 150),  # the profile's value wins
        (30, 0, 1000, 420),  # a profile value of 0 is adaptive too
        (100, None, 1000, 1000),
        (1, None, 100_000, 1000),
    ],
)
def test_num_feasible_nodes_to_find(global_pct, profile_pct, nodes, expected) -> None:
    assert num_feasible_nodes_to_find(global_pct, profile_pct, nodes) == expected


def _framework(nodes, percentage: int | None = None) -> Framework:
    profile = default_configuration().profiles[0]
    profile = replace(profile, percentage_of_nodes_to_score=percentage)
    return Framework(profile, in_tree_registry(), Handle(Snapshot(nodes)))


def _nodes(count: int, cordoned: range = range(0)):
    result = []
    for i in range(count):
        builder = make_node().name(f"n{i:03}").allocatable(cpu="4", memory="8Gi", pods="110")
        if i in cordoned:
            builder = builder.unschedulable()
        result.append(builder.obj())
    return result


POD = make_pod().name("p").requests(cpu="100m").obj()


def test_rejections_after_the_kth_feasible_node_count_towards_the_next_start() -> None:
    # 120 nodes, K = 100: n000..n099 feasible, n100..n109 rejected, n110 feasible.
    framework = _framework(_nodes(120, cordoned=range(100, 110)))
    search = NodeSearch()
    result = schedule_one(framework, POD, search)
    assert [i.name for i in result.feasible] == [f"n{i:03}" for i in range(100)]
    assert sum(s is not None for s in result.statuses.values()) == 10
    assert "n110" not in result.statuses  # found, dropped, not counted
    assert search.next_start_node_index == 110  # 100 feasible + 10 rejected
    # Second cycle from n110: n110..n119 (10), n000..n089 (90) = 100, then n090 ends it.
    result = schedule_one(framework, POD, search)
    names = {i.name for i in result.feasible}
    assert names == {f"n{i:03}" for i in (*range(110, 120), *range(90))}
    assert search.next_start_node_index == (110 + 100) % 120


def test_rejections_before_the_kth_feasible_node() -> None:
    # Start 0: n000..n009 feasible, n010..n019 rejected, n020..n109 feasible (100 in all).
    framework = _framework(_nodes(120, cordoned=range(10, 20)))
    search = NodeSearch()
    schedule_one(framework, POD, search)
    assert search.next_start_node_index == 110


def test_too_few_feasible_nodes_visits_every_node_and_wraps_to_the_start() -> None:
    framework = _framework(_nodes(120, cordoned=range(30)))
    search = NodeSearch()
    search.next_start_node_index = 7
    result = schedule_one(framework, POD, search)
    assert len(result.feasible) == 90
    assert search.next_start_node_index == 7  # (7 + 120) % 120


def test_profile_percentage_overrides_the_global_one() -> None:
    # 400 nodes: global 10% -> 40, raised to 100; the profile's 50% -> 200.
    framework = _framework(_nodes(400), percentage=50)
    search = NodeSearch(percentage_of_nodes_to_score=10)
    result = schedule_one(framework, POD, search)
    assert len(result.feasible) == 200
    assert search.next_start_node_index == 200


def test_fewer_than_100_nodes_the_search_still_rotates() -> None:
    framework = _framework(_nodes(10, cordoned=range(2)))
    search = NodeSearch()
    result = schedule_one(framework, POD, search)
    assert len(result.feasible) == 8
    assert search.next_start_node_index == 0  # all 10 processed
    search.next_start_node_index = 3
    schedule_one(framework, POD, search)
    assert search.next_start_node_index == 3


def _pinned(*names: str):
    # One term per name: a metadata.name field requirement takes exactly one value.
    terms = tuple(
        NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (name,)),))
        for name in names
    )
    affinity = Affinity(node_affinity=NodeAffinity(required=NodeSelector(terms)))
    return replace(POD, affinity=affinity)


def test_prefilter_narrowing_searches_the_narrowed_list_but_advances_over_all_nodes() -> None:
    framework = _framework(_nodes(120))
    search = NodeSearch()
    search.next_start_node_index = 5
    pod = _pinned("n007", "n003")
    result = schedule_one(framework, pod, search)
    assert [i.name for i in result.feasible] == ["n003", "n007"]
    # Absent (narrowed-out) nodes are not in NodeToStatus: processed = 2.
    assert search.next_start_node_index == 7
    assert result.selected_node is not None


def test_a_lone_feasible_node_is_taken_without_scoring_when_asked() -> None:
    framework = _framework(_nodes(120))
    pod = _pinned("n042")
    scored = schedule_one(framework, pod, NodeSearch())
    assert scored.selected_node == "n042"
    assert scored.scores
    shortcut = schedule_one(framework, pod, NodeSearch(), skip_single_node_scoring=True)
    assert shortcut.selected_node == "n042"
    assert shortcut.tied_nodes == ("n042",)
    assert not shortcut.scores


def test_a_prefilter_rejection_leaves_the_start_index() -> None:
    framework = _framework(_nodes(120))
    search = NodeSearch()
    search.next_start_node_index = 9
    result = schedule_one(framework, _pinned("absent-node"), search)
    assert result.selected_node is None
    assert result.message is not None
    assert search.next_start_node_index == 9


def test_no_feasible_node_gives_the_full_fit_error() -> None:
    framework = _framework(_nodes(120, cordoned=range(120)))
    sampled = schedule_one(framework, POD, NodeSearch())
    full = schedule_one(framework, POD)
    assert sampled.message == full.message
    assert sampled.message.startswith("0/120 nodes are available: 120 node(s) were unschedulable")


def test_without_a_search_every_node_is_evaluated() -> None:
    framework = _framework(_nodes(300))
    result = schedule_one(framework, POD)
    assert len(result.feasible) == 300
