"""``Framework.run_filter_plugins_with_nominated_pods``: upstream's
RunFilterPluginsWithNominatedPods with addGENominatedPods (framework/runtime/framework.go).

Pods nominated to the node with a priority at least the incoming pod's (not the pod
itself) are added to a clone of the NodeInfo and, through AddPod, of the cycle state;
the Filters must pass with them and, if any were added, without them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from topospread.framework.config.decode import default_configuration
from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import Handle
from topospread.framework.node_info import NodeInfo, Snapshot
from topospread.framework.runtime import Framework
from topospread.framework.status import Code
from topospread.model.objects import Affinity, Node, Pod, PodAffinityTerm
from topospread.plugins.registry import in_tree_registry
from topospread.testing import make_node, make_pod, make_selector

HOSTNAME = "kubernetes.io/hostname"


def _nodes(*names: str, cpu: str = "2") -> list[Node]:
    return [
        make_node().name(n).label(HOSTNAME, n).allocatable(cpu=cpu, memory="8Gi", pods="110").obj()
        for n in names
    ]


def _framework(nodes: list[Node], nominated: dict[str, list[Pod]] | None = None) -> Framework:
    framework = Framework(
        default_configuration().profiles[0], in_tree_registry(), Handle(Snapshot(nodes))
    )
    if nominated is not None:
        table = nominated

        def for_node(name: str) -> Sequence[Pod]:
            return table.get(name, ())

        framework.nominated_pods_for_node = for_node
    return framework


def _pod(name: str, priority: int | None = None, cpu: str = "1", **labels: str) -> Pod:
    return replace(make_pod().name(name).labels(labels).requests(cpu=cpu).obj(), priority=priority)


def _filter(framework: Framework, pod: Pod, node: str) -> tuple[CycleState, NodeInfo, object]:
    state = CycleState()
    pre = framework.run_pre_filter_plugins(state, pod)
    assert pre.status is None
    info = framework.handle.snapshot.get(node)
    assert info is not None
    return state, info, framework.run_filter_plugins_with_nominated_pods(state, pod, info)


def test_without_a_nominator_it_is_run_filter_plugins() -> None:
    framework = _framework(_nodes("n1", cpu="1"))
    state, info, status = _filter(framework, _pod("p", cpu="2"), "n1")
    assert status == framework.run_filter_plugins(state, _pod("p", cpu="2"), info)
    assert status is not None
    assert status.reasons == ("Insufficient cpu",)


def test_nominated_pods_of_equal_or_higher_priority_take_their_room() -> None:
    nominated = _pod("big", priority=1000, cpu="2")
    framework = _framework(_nodes("n1", "n2"), {"n1": [nominated]})
    for priority in (500, 1000):
        _, info, status = _filter(framework, _pod("p", priority=priority), "n1")
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == ("Insufficient cpu",)
        assert status.plugin == "NodeResourcesFit"
        assert [p.name for p in info.pods] == []  # the snapshot's NodeInfo is untouched
    assert _filter(framework, _pod("p", priority=500), "n2")[2] is None


def test_lower_priority_nominated_pods_and_the_pod_itself_are_left_out() -> None:
    nominated = _pod("big", priority=1000, cpu="2")
    framework = _framework(_nodes("n1"), {"n1": [nominated]})
    assert _filter(framework, _pod("p", priority=1001), "n1")[2] is None
    assert _filter(framework, nominated, "n1")[2] is None
    # Same UID: the pod itself even under another object.
    with_uid = replace(nominated, metadata=replace(nominated.metadata, uid="u1"))
    framework = _framework(_nodes("n1"), {"n1": [with_uid]})
    renamed = replace(with_uid, metadata=replace(with_uid.metadata, name="other"))
    assert _filter(framework, renamed, "n1")[2] is None
    # Same namespace/name under another uid (a file listing the incoming pod again): a
    # cluster holds one pod per name, so it is the pod itself too (issue 25).
    other_uid = replace(with_uid, metadata=replace(with_uid.metadata, uid="u2"))
    assert _filter(framework, other_uid, "n1")[2] is None
    stranger = replace(other_uid, metadata=replace(other_uid.metadata, name="stranger"))
    assert _filter(framework, stranger, "n1")[2] is not None


def test_nominated_pods_count_in_prefilter_state_through_add_pod() -> None:
    # maxSkew 1 over hostnames: a matching nominated pod on n1 makes n1 too crowded
    # (1 - 0 + 1 > 1) while n2 stays fine; the cycle state the caller holds is not changed.
    selector = make_selector().label("app", "web").obj()
    incoming = replace(
        make_pod()
        .name("p")
        .label("app", "web")
        .spread_constraint(1, HOSTNAME, "DoNotSchedule", selector)
        .obj(),
        priority=0,
    )
    framework = _framework(_nodes("n1", "n2"), {"n1": [_pod("w", priority=0, app="web")]})
    state, _, status = _filter(framework, incoming, "n1")
    assert status is not None
    assert status.plugin == "PodTopologySpread"
    n2 = framework.handle.snapshot.get("n2")
    assert n2 is not None
    assert framework.run_filter_plugins_with_nominated_pods(state, incoming, n2) is None
    n1 = framework.handle.snapshot.get("n1")
    assert n1 is not None
    assert framework.run_filter_plugins(state, incoming, n1) is None


def test_the_filters_must_also_pass_without_the_nominated_pods() -> None:
    # Required pod affinity to app=db over hostnames: the only db pod is nominated to n1.
    # With it, n1 passes; without it (it may land elsewhere) it does not: rejected.
    term = PodAffinityTerm(HOSTNAME, make_selector().label("app", "db").obj())
    incoming = replace(
        make_pod().name("p").obj(), priority=0, affinity=Affinity(pod_affinity_required=(term,))
    )
    db = _pod("db", priority=100, app="db")
    framework = _framework(_nodes("n1"), {"n1": [db]})
    status = _filter(framework, incoming, "n1")[2]
    assert status is not None
    assert status.plugin == "InterPodAffinity"
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    # Sanity: with the db pod really there, the pod fits.
    placed = replace(db, node_name="n1")
    framework = _framework(_nodes("n1"), {})
    n1 = framework.handle.snapshot.get("n1")
    assert n1 is not None
    n1.add_pod(placed)
    assert _filter(framework, incoming, "n1")[2] is None


def test_no_nominated_pod_added_means_one_pass() -> None:
    calls: list[str] = []
    framework = _framework(_nodes("n1"), {"n1": [_pod("low", priority=1)]})
    original = framework.run_filter_plugins

    def counting(state: CycleState, pod: Pod, node_info: NodeInfo):
        calls.append(node_info.name)
        return original(state, pod, node_info)

    framework.run_filter_plugins = counting
    assert _filter(framework, _pod("p", priority=5), "n1")[2] is None
    assert calls == ["n1"]
    calls.clear()
    framework.nominated_pods_for_node = lambda name: [_pod("high", priority=9)]
    assert _filter(framework, _pod("p", priority=5), "n1")[2] is None
    assert calls == ["n1", "n1"]  # with the nominated pod, then without


def test_an_add_pod_failure_is_an_error() -> None:
    # PodTopologySpread's AddPod reads its PreFilter state: without PreFilter it fails.
    selector = make_selector().label("app", "web").obj()
    incoming = (
        make_pod()
        .name("p")
        .label("app", "web")
        .spread_constraint(1, HOSTNAME, "DoNotSchedule", selector)
        .obj()
    )
    framework = _framework(_nodes("n1"), {"n1": [_pod("w", app="web")]})
    info = framework.handle.snapshot.get("n1")
    assert info is not None
    status = framework.run_filter_plugins_with_nominated_pods(CycleState(), incoming, info)
    assert status is not None
    assert status.code is Code.ERROR
    assert status.message.startswith('running AddPod on PreFilter plugin "')
