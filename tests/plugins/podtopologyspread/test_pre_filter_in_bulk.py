"""PreFilter's counts over the node table (the snapshot's counters, many hostname domains
counted with arrays) equal the per-node loop's: the same domains in the same order, the
same counts and critical paths, and Filter's verdicts agree node by node."""

from __future__ import annotations

import random

import pytest

from topospread.framework.node_info import Snapshot
from topospread.model.objects import Node, Pod
from topospread.plugins.podtopologyspread.filtering import (
    compute_pre_filter_state,
    filter_batch,
    filter_node,
)
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.testing import make_node, make_pod, make_selector
from topospread.testing.harness import build_spread_plugin

DNS = "DoNotSchedule"


def cluster(seed: int) -> tuple[list[Node], list[Pod]]:
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randrange(70, 160)):
        builder = make_node().name(f"node-{i:03d}")
        if rng.random() > 0.05:  # a few nodes lack the hostname key
            builder = builder.label("host", f"node-{i:03d}")
        if rng.random() > 0.1:
            builder = builder.label("zone", f"zone-{rng.randrange(4)}")
        nodes.append(builder.obj())
    pods = [
        make_pod()
        .name(f"p-{j}")
        .label("app", rng.choice(["web", "db"]))
        .node(rng.choice(nodes).metadata.name)
        .obj()
        for j in range(rng.randrange(0, 400))
    ]
    return nodes, pods


@pytest.mark.parametrize("seed", range(40))
def test_counts_over_the_table_equal_the_per_node_loop(seed: int) -> None:
    nodes, pods = cluster(seed)
    spread: PodTopologySpread
    spread, snapshot = build_spread_plugin(nodes, pods)
    web = make_selector().label("app", "web").obj()
    incoming = (
        make_pod()
        .name("incoming")
        .label("app", "web")
        .spread_constraint(1, "zone", DNS, web)
        .spread_constraint(2, "host", DNS, web)
        .obj()
    )
    constraints = spread.constraints_for(incoming, DNS)
    in_bulk = compute_pre_filter_state(
        incoming,
        snapshot.node_infos,
        constraints,
        node_inclusion_policy=True,
        comparison_operators=False,
        snapshot=snapshot,
    )
    looped = compute_pre_filter_state(
        incoming,
        list(snapshot.node_infos),  # not the snapshot's own list: no counters
        constraints,
        node_inclusion_policy=True,
        comparison_operators=False,
    )
    assert [p.copy() for p in in_bulk.critical_paths] == looped.critical_paths
    assert [in_bulk.domain_count(i) for i in range(2)] == [
        len(m) for m in looped.tp_value_to_match_num
    ]
    assert [list(m.items()) for m in in_bulk.tp_value_to_match_num] == [
        list(m.items()) for m in looped.tp_value_to_match_num
    ]
    assert_filter_agrees(snapshot, in_bulk, looped, incoming)


def assert_filter_agrees(snapshot: Snapshot, in_bulk, looped, pod: Pod) -> None:
    passes = filter_batch(in_bulk, pod, snapshot.table())
    for row, info in enumerate(snapshot.node_infos):
        verdict = filter_node(looped, pod, info.node, "label", "skew")
        assert bool(passes[row]) == (verdict is None), info.name
