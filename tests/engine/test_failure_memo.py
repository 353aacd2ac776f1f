"""FailureMemo answers a pod from the last failed cycle only when the cycle would repeat."""

from __future__ import annotations

from dataclasses import replace

from topospread.engine.cycle import FailureMemo, NodeSearch, schedule_one
from topospread.framework.config.decode import default_configuration
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import Snapshot
from topospread.framework.runtime import Framework
from topospread.model.objects import ObjectMeta, Pod
from topospread.plugins.registry import in_tree_registry
from topospread.testing import make_node, make_pod


def setup() -> tuple[Framework, Snapshot, NodeSearch]:
    nodes = [make_node().name(f"n{i}").allocatable(cpu="1", pods="110").obj() for i in range(3)]
    snapshot = Snapshot(nodes)
    framework = Framework(default_configuration().profiles[0], in_tree_registry(), Handle(snapshot))
    return framework, snapshot, NodeSearch()


def replica(name: str, cpu: str = "2") -> Pod:
    return make_pod().name(name).label("app", "web").requests(cpu=cpu).obj()


def failed(memo: FailureMemo, framework: Framework, search: NodeSearch, pod: Pod) -> None:
    start = search.next_start_node_index
    result = schedule_one(framework, pod, search)
    assert result.selected_node is None
    memo.remember(framework, pod, start, search, result)


def test_an_identical_replica_in_an_unchanged_cluster_gets_the_same_answer():
    framework, _, search = setup()
    memo = FailureMemo()
    failed(memo, framework, search, replica("a"))
    again = memo.lookup(framework, replica("b"), search)
    assert again is not None
    assert again.message is not None
    assert again.message.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert memo.hits == 1


def test_a_changed_cluster_a_different_pod_or_a_nomination_runs_the_cycle():
    framework, snapshot, search = setup()
    memo = FailureMemo()
    failed(memo, framework, search, replica("a"))
    assert memo.lookup(framework, replica("b", cpu="3"), search) is None
    other_labels = replace(replica("b"), metadata=ObjectMeta("b", "default", labels={"app": "x"}))
    assert memo.lookup(framework, other_labels, search) is None
    snapshot.add_node(make_node().name("big").allocatable(cpu="8", pods="110").obj())
    assert memo.lookup(framework, replica("b"), search) is None
    failed(memo, framework, search, replica("c", cpu="16"))
    framework.nominated_node_names = lambda: ("n0",)
    assert memo.lookup(framework, replica("d", cpu="16"), search) is None
    assert memo.hits == 0


def test_a_pod_with_claims_or_a_nomination_is_never_reused():
    framework, _, search = setup()
    memo = FailureMemo()
    failed(memo, framework, search, replica("a"))
    claimed = replace(replica("b"), volume_claims=("data-b",))
    assert memo.lookup(framework, claimed, search) is None
    nominated = replace(replica("c"), nominated_node_name="n1")
    assert memo.lookup(framework, nominated, search) is None
