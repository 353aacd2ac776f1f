"""A nominated pod's next cycle: upstream ``findNodesThatFitPod`` tries
``status.nominatedNodeName`` first (``evaluateNominatedNode``, schedule_one.go).

After PreFilter only the nominated node is filtered; if it passes it is selected without
scoring and ``nextStartNodeIndex`` does not move; otherwise the usual search runs.
``explain`` (no node search) evaluates every node on purpose, as the Go oracle does.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from topospread.engine.cycle import NodeSearch, schedule_one
from topospread.framework.config.decode import default_configuration
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.plugins.registry import in_tree_registry
from topospread.testing import make_node, make_pod


def _framework(count: int = 3, cordoned: tuple[str, ...] = ()) -> Framework:
    nodes = []
    for i in range(count):
        builder = make_node().name(f"n{i}").allocatable(cpu="4", memory="8Gi", pods="110")
        if f"n{i}" in cordoned:
            builder = builder.unschedulable()
        nodes.append(builder.obj())
    profile = default_configuration().profiles[0]
    return Framework(profile, in_tree_registry(), Handle(Snapshot(nodes)))


POD = make_pod().name("p").requests(cpu="100m").obj()


def _nominated(node: str):
    return replace(POD, nominated_node_name=node)


def test_without_a_nomination_empty_nodes_tie_and_the_first_wins() -> None:
    search = NodeSearch()
    result = schedule_one(_framework(), POD, search)
    assert result.selected_node == "n0"
    assert set(result.statuses) == {"n0", "n1", "n2"}
    assert search.next_start_node_index == 0  # 3 feasible of 3 nodes: (0 + 3) % 3


def test_a_nominated_node_that_fits_is_taken_without_search_or_scoring() -> None:
    search = NodeSearch()
    search.next_start_node_index = 1
    result = schedule_one(_framework(), _nominated("n2"), search)
    assert result.selected_node == "n2"
    assert result.tied_nodes == ("n2",)
    assert result.statuses == {"n2": None}
    assert [info.name for info in result.feasible] == ["n2"]
    assert result.scores == {}
    assert result.totals == {}
    assert result.message is None
    assert not result.post_filter_ran
    assert search.next_start_node_index == 1


def test_a_nominated_node_that_rejects_the_pod_falls_back_to_the_search() -> None:
    search = NodeSearch()
    result = schedule_one(_framework(cordoned=("n2",)), _nominated("n2"), search)
    assert result.selected_node == "n0"
    assert result.statuses["n2"] is not None
    assert set(result.statuses) == {"n0", "n1", "n2"}
    assert search.next_start_node_index == 0  # (0 + 2 feasible + 1 rejected) % 3


def test_a_nominated_node_that_is_gone_falls_back_to_the_search() -> None:
    result = schedule_one(_framework(), _nominated("gone"), NodeSearch())
    assert result.selected_node == "n0"
    assert set(result.statuses) == {"n0", "n1", "n2"}


@pytest.mark.parametrize("bulk", [True, False])
def test_the_nominated_node_counts_the_other_nominated_pods(bulk: bool) -> None:
    # n0 is half full, so n1 scores higher; but a higher-priority pod nominated to n1
    # takes all of it: the nominated node is rejected and the search lands on n0.
    framework = _framework(2)
    framework.batch_enabled = bulk
    n0 = framework.handle.snapshot.get("n0")
    assert n0 is not None
    n0.add_pod(make_pod().name("busy").node("n0").requests(cpu="2").obj())
    assert schedule_one(framework, POD, NodeSearch()).selected_node == "n1"
    big = replace(make_pod().name("big").requests(cpu="4").obj(), priority=10)
    framework.nominated_pods_for_node = lambda name: [big] if name == "n1" else []
    framework.nominated_node_names = lambda: ["n1"]  # what the bulk search re-checks
    result = schedule_one(framework, _nominated("n1"), NodeSearch())
    assert result.selected_node == "n0"
    if not bulk:  # the bulk path re-runs rejected nodes without nominated pods
        status = result.statuses["n1"]
        assert status is not None
        assert status.reasons == ("Insufficient cpu",)


def test_explain_evaluates_every_node_but_takes_the_nominated_one_unscored() -> None:
    # evaluateNominatedNode (issue 12): the nominated node fits, so it is selected without
    # scoring; explain still filters every node for the report.
    result = schedule_one(_framework(), _nominated("n2"))
    assert set(result.statuses) == {"n0", "n1", "n2"}
    assert result.selected_node == "n2"
    assert result.nominated_node_shortcut
    assert result.totals == {}
