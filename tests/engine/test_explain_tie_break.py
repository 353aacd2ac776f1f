"""Ties for the best score: the first node by default, a seeded draw on request."""

from __future__ import annotations

import pytest

from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.framework.config.decode import default_configuration
from topospread.testing import make_node, make_pod

NODES = [f"node-{i}" for i in range(6)]


def _identical_nodes_and_a_pod():
    nodes = [make_node().name(name).label("kubernetes.io/hostname", name).obj() for name in NODES]
    return Cluster(nodes=tuple(nodes)), make_pod().name("web").obj()


def test_by_default_the_first_of_the_tied_nodes_is_selected() -> None:
    cluster, pod = _identical_nodes_and_a_pod()
    result = explain(cluster, pod, default_configuration())
    assert result.tied_nodes == tuple(NODES)
    assert result.selected_node == "node-0"


def test_a_random_tie_break_draws_among_the_tied_nodes_reproducibly() -> None:
    cluster, pod = _identical_nodes_and_a_pod()
    picks = {
        seed: explain(cluster, pod, default_configuration(), tie_break="random", seed=seed)
        for seed in range(20)
    }
    assert all(r.selected_node in r.tied_nodes for r in picks.values())
    assert len({r.selected_node for r in picks.values()}) > 1, "twenty seeds, one node"
    again = explain(cluster, pod, default_configuration(), tie_break="random", seed=7)
    assert again.selected_node == picks[7].selected_node


def test_an_unknown_tie_break_is_refused() -> None:
    cluster, pod = _identical_nodes_and_a_pod()
    with pytest.raises(ValueError, match="tie_break"):
        explain(cluster, pod, default_configuration(), tie_break="best")
