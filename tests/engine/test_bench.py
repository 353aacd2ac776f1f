"""The sequential loop of ``topospread.engine.bench`` and the visit-order tie-break.

The same expectations as the Go oracle's ``bench`` tests (oracle/bench_test.go).
"""

from __future__ import annotations

import itertools

from topospread.engine.bench import Placement, schedule_sequentially
from topospread.engine.cluster import Cluster
from topospread.engine.cycle import NodeSearch, schedule_one
from topospread.framework.config.decode import default_configuration
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.plugins.registry import in_tree_registry
from topospread.testing import make_node, make_pod


def _nodes(count: int):
    return [
        make_node().name(f"n{i}").allocatable(cpu="4", memory="32Gi", pods="110").obj()
        for i in range(count)
    ]


def test_ties_go_as_upstreams_score_heap_pops_them_and_pods_are_assumed() -> None:
    # Identical nodes: the least loaded nodes tie; kube-scheduler takes the node its score
    # heap pops over them in visit order (the search starts at 0 and visits all 4 nodes):
    # with n0 and n1 loaded, the heap of totals [lower, lower, top, top] pops n3, not n2.
    cluster = Cluster(nodes=tuple(_nodes(4)))
    pods = [make_pod().name(f"p{i}").requests(cpu="100m", memory="500Mi").obj() for i in range(6)]
    ticks = itertools.count()
    run = schedule_sequentially(
        cluster, pods, default_configuration(), clock=lambda: float(next(ticks))
    )
    assert [p.node for p in run.placements] == ["n0", "n1", "n3", "n2", "n0", "n1"]
    assert run.scheduled == 6
    assert run.seconds == 1.0  # the clock is read before and after the loop only
    assert run.placements[0].line() == "default/p0\tn0\t"


def test_a_pod_nothing_fits_is_recorded_and_the_loop_goes_on() -> None:
    cluster = Cluster(nodes=tuple(_nodes(2)))
    big = make_pod().name("big").requests(cpu="64").obj()
    small = make_pod().name("small").requests(cpu="1").obj()
    run = schedule_sequentially(cluster, [big, small], default_configuration())
    assert run.placements[0].node is None
    assert run.placements[0].message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert run.placements[0].line().startswith("default/big\t-\t0/2 nodes are available")
    assert run.placements[1] == Placement("default/small", "n0")
    assert run.scheduled == 1


def test_visit_order_ties_against_snapshot_order_ties() -> None:
    # Start the search at n2: visited n2, n3, n0, n1, all tied.
    profile = default_configuration().profiles[0]
    framework = Framework(profile, in_tree_registry(), Handle(Snapshot(_nodes(4))))
    pod = make_pod().name("p").requests(cpu="100m").obj()
    for visit_order, expected in ((True, "n2"), (False, "n0")):
        search = NodeSearch()
        search.next_start_node_index = 2
        result = schedule_one(framework, pod, search, visit_order_ties=visit_order)
        assert result.selected_node == expected
        assert len(result.tied_nodes) == 4
