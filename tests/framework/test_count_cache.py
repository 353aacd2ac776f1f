"""The snapshot's incremental pod counters equal a full recount, whatever the history.

Property: after any interleaving of pod adds/removes (terminating pods, other
namespaces, relabelled pods re-added) and node adds/removes/relabels, every
``PodCounter`` and ``DomainTotals`` equals counting from scratch, and PodTopologySpread's
PreFilter/PreScore states computed from the caches equal those computed by walking every
pod — domain order included.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.framework.node_info import Snapshot
from topospread.model.labels import Selector
from topospread.model.objects import (
    LABEL_HOSTNAME,
    ContainerPort,
    Node,
    NodeInclusionPolicy,
    ObjectMeta,
    Pod,
)
from topospread.plugins.podtopologyspread.common import (
    Constraint,
    count_pods_match_selector,
    counters_for,
    label_selector_as_selector,
)
from topospread.plugins.podtopologyspread.filtering import compute_pre_filter_state
from topospread.plugins.podtopologyspread.scoring import compute_pre_score_state
from topospread.testing import make_pod, make_selector

NAMESPACES = ("default", "other")
SELECTORS: tuple[Selector, ...] = (
    label_selector_as_selector(make_selector().label("app", "a").obj()),
    label_selector_as_selector(make_selector().exists("app").obj()),
    label_selector_as_selector(make_selector().obj()),  # {}: counts nothing (the quirk)
    label_selector_as_selector(None),
)
KEYS = ("zone", "rack", LABEL_HOSTNAME)


def _node(name: str, zone: str | None, rack: str | None) -> Node:
    labels = {LABEL_HOSTNAME: name}
    if zone is not None:
        labels["zone"] = zone
    if rack is not None:
        labels["rack"] = rack
    return Node(ObjectMeta(name=name, labels=labels))


def _constraint(key: str, selector: Selector, taints: str = "Ignore") -> Constraint:
    return Constraint(
        max_skew=1,
        topology_key=key,
        selector=selector,
        min_domains=1,
        node_affinity_policy=NodeInclusionPolicy.HONOR,
        node_taints_policy=NodeInclusionPolicy(taints),
    )


_domain = st.sampled_from((None, "z1", "z2", "z3"))
_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            st.integers(0, 7),
            st.sampled_from(NAMESPACES),
            st.sampled_from(({}, {"app": "a"}, {"app": "b"})),
            st.booleans(),
        ),
        st.tuples(st.just("remove"), st.integers(0, 1000)),
        st.tuples(st.just("relabel-pod"), st.integers(0, 1000)),
        st.tuples(
            st.just("swap-pod"),
            st.integers(0, 1000),
            st.sampled_from(({}, {"app": "a"}, {"app": "b"}, {"app": "a", "zone": "z1"})),
            st.booleans(),
        ),
        st.tuples(st.just("add-node"), _domain, _domain),
        st.tuples(st.just("remove-node"), st.integers(0, 7)),
        st.tuples(st.just("relabel-node"), st.integers(0, 7), _domain, _domain),
    ),
    max_size=40,
)


def _recount_totals(snapshot: Snapshot, ns: str, selector: Selector, key: str, required):
    totals: dict[str, int] = {}
    for info in snapshot.node_infos:
        labels = info.node.labels
        if not all(k in labels for k in required):
            continue
        value = labels.get(key, "")
        totals[value] = totals.get(value, 0) + count_pods_match_selector(info, selector, ns)
    return totals


def _check(snapshot: Snapshot) -> None:
    for ns in NAMESPACES:
        for selector in SELECTORS:
            counters = counters_for(
                snapshot, snapshot.node_infos, [_constraint("zone", selector)], ns
            )
            assert counters is not None
            (counter,) = counters
            for info in snapshot.node_infos:
                assert counter.count(info.name) == count_pods_match_selector(info, selector, ns)
            for key in KEYS:
                for required in (frozenset(), frozenset({key}), frozenset({"zone", "rack"})):
                    got = snapshot.domain_totals(counter, key, required).totals
                    want = _recount_totals(snapshot, ns, selector, key, required)
                    assert list(got.items()) == list(want.items())
    # The plugin's states, cached versus walking the pods.
    pod = make_pod().name("incoming").label("app", "a").obj()
    for constraints in (
        (_constraint("zone", SELECTORS[0]), _constraint("rack", SELECTORS[1])),
        (_constraint(LABEL_HOSTNAME, SELECTORS[0]),),
        (_constraint("zone", SELECTORS[2], taints="Honor"),),
    ):
        flags = {"node_inclusion_policy": True, "comparison_operators": False}
        nodes = snapshot.node_infos
        cached = compute_pre_filter_state(pod, nodes, constraints, snapshot=snapshot, **flags)
        walked = compute_pre_filter_state(pod, nodes, constraints, **flags)
        assert [list(m.items()) for m in cached.tp_value_to_match_num] == [
            list(m.items()) for m in walked.tp_value_to_match_num
        ]
        assert cached.critical_paths == walked.critical_paths
        feasible = nodes[::2]
        for require_all in (True, False):
            kw = {"require_all_topologies": require_all, **flags}
            c = compute_pre_score_state(pod, constraints, feasible, nodes, snapshot=snapshot, **kw)
            w = compute_pre_score_state(pod, constraints, feasible, nodes, **kw)
            assert [list(m.items()) for m in c.topology_value_to_pod_counts] == [
                list(m.items()) for m in w.topology_value_to_pod_counts
            ]
            assert c.ignored_nodes == w.ignored_nodes
            assert c.topology_sizes == w.topology_sizes


@settings(max_examples=150, deadline=None)
@given(initial=st.lists(st.tuples(_domain, _domain), min_size=1, max_size=5), ops=_ops)
def test_counters_equal_a_full_recount(initial, ops) -> None:
    snapshot = Snapshot([_node(f"n{i}", z, r) for i, (z, r) in enumerate(initial)])
    _check(snapshot)  # registers every counter and totals before the history starts
    placed: list[Pod] = []
    serial = 0
    for op in ops:
        kind = op[0]
        names = [info.name for info in snapshot.node_infos]
        if kind == "add" and names:
            _, node, ns, labels, terminating = op
            serial += 1
            builder = make_pod().name(f"p{serial}").namespace(ns).labels(labels)
            builder = builder.node(names[node % len(names)])
            pod = (builder.terminating() if terminating else builder).obj()
            snapshot.by_name[pod.node_name].add_pod(pod)
            placed.append(pod)
        elif kind == "remove" and placed:
            pod = placed.pop(op[1] % len(placed))
            info = snapshot.get(pod.node_name)
            if info is not None:
                # A fresh object with the same key: removal goes by namespace and name.
                assert info.remove_pod(replace(pod, metadata=replace(pod.metadata, labels={})))
        elif kind == "relabel-pod" and placed:
            # A label change is a removal of the old object and the add of the new one.
            index = op[1] % len(placed)
            pod = placed[index]
            info = snapshot.get(pod.node_name)
            if info is not None:
                new = replace(pod, metadata=replace(pod.metadata, labels={"app": "a"}))
                info.remove_pod(pod)
                info.add_pod(new)
                placed[index] = new
        elif kind == "swap-pod" and placed:
            # The bound object takes the assumed one's place (the informer's report of a
            # bind, which may add labels): only the counters whose answer changed move.
            _, index, labels, terminating = op
            index %= len(placed)
            pod = placed[index]
            info = snapshot.get(pod.node_name)
            if info is not None:
                meta = replace(
                    pod.metadata,
                    labels=labels,
                    deletion_timestamp="2026-01-01T00:00:00Z" if terminating else None,
                )
                new = replace(pod, metadata=meta)
                assert info.replace_pod(pod, new)
                placed[index] = new
        elif kind == "add-node":
            serial += 1
            snapshot.add_node(_node(f"m{serial}", op[1], op[2]))
        elif kind == "remove-node" and names:
            name = names[op[1] % len(names)]
            snapshot.remove_node(name)
            placed = [p for p in placed if p.node_name != name]
        elif kind == "relabel-node" and names:
            name = names[op[1] % len(names)]
            snapshot.update_node(_node(name, op[2], op[3]))
        _check(snapshot)


def test_switch_off_serves_no_counter(monkeypatch) -> None:
    monkeypatch.setattr(Snapshot, "use_count_cache", False)
    snapshot = Snapshot([_node("n0", "z1", None)])
    assert snapshot.pod_counter("k", "default", lambda pod: True) is None


def test_detached_nodes_do_not_report() -> None:
    snapshot = Snapshot([_node("n0", "z1", None)])
    counter = snapshot.pod_counter("k", "default", lambda pod: True)
    assert counter is not None
    clone = snapshot.node_infos[0].clone()
    clone.add_pod(make_pod().name("p").node("n0").obj())
    assert counter.count("n0") == 0
    removed = snapshot.remove_node("n0")
    assert removed is not None
    removed.add_pod(make_pod().name("q").node("n0").obj())
    assert counter.per_node == {}


def test_a_swapped_pod_sits_where_removing_and_adding_it_would_put_it() -> None:
    snapshot = Snapshot([_node("n0", "z1", None)])
    info = snapshot.node_infos[0]
    pods = [make_pod().name(f"p{i}").node("n0").obj() for i in range(3)]
    for pod in pods:
        info.add_pod(pod)
    bound = replace(pods[0], metadata=replace(pods[0].metadata, labels={"zone": "z1"}))
    generation = info.generation
    assert info.replace_pod(pods[0], bound)
    assert info.pods == [pods[1], pods[2], bound]
    assert info.pods_in_namespace("default") == [pods[1], pods[2], bound]
    assert info.generation > generation


def test_a_pod_that_asks_for_more_is_not_swapped() -> None:
    snapshot = Snapshot([_node("n0", "z1", None)])
    info = snapshot.node_infos[0]
    pod = make_pod().name("p").node("n0").requests(cpu="100m").obj()
    info.add_pod(pod)
    (container,) = pod.containers
    with_port = replace(container, ports=(ContainerPort(container_port=80, host_port=8080),))
    for other in (
        make_pod().name("p").node("n0").requests(cpu="200m").obj(),
        replace(pod, containers=(with_port,)),
        make_pod().name("q").node("n0").requests(cpu="100m").obj(),
        make_pod().name("p").node("n0").requests(cpu="100m").node_affinity_in("zone", "z1").obj(),
    ):
        assert not info.replace_pod(pod, other)
    assert info.pods == [pod]
