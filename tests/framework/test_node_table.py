"""Columns kept across cycles (``UsageColumns.kept_column``) stay equal to computing afresh.

NodeResourcesFit's verdicts and the resource scores of one pod shape are kept over every
node and brought up to date only where a node's usage changed. Whatever the history of
pods added and removed, what the plugins answer in bulk equals their per-node answer.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.framework.config.types import NodeResourcesFitArgs, ScoringStrategy
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.node_info import Snapshot
from topospread.framework.node_table import IntArray
from topospread.plugins.noderesources.balanced_allocation import (
    DEFAULT_RESOURCES,
    BalancedAllocation,
)
from topospread.plugins.noderesources.fit import Fit
from topospread.testing.resources import requests_node, requests_pod

NODES = 12


def _snapshot() -> Snapshot:
    nodes = [requests_node(f"node-{i}", cpu="2", memory="4Gi", pods="5") for i in range(NODES)]
    return Snapshot(nodes)


class Counting:
    """A column of each row's pod count, counting how it was computed."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.arrays: list[list[int]] = []
        self.rows: list[int] = []
        self.refuse = False

    def compute(self, rows: IntArray) -> IntArray | None:
        if self.refuse:
            return None
        self.arrays.append(rows.tolist())
        usage = self.snapshot.table().usage(True)
        counts: IntArray = usage.pod_count[rows].copy()
        return counts

    def compute_row(self, row: int) -> int:
        self.rows.append(row)
        return len(self.snapshot.node_infos[row].pods)

    def column(self) -> IntArray | None:
        usage = self.snapshot.table().usage(True)
        return usage.kept_column("pods", self.compute, self.compute_row)


def _place(snapshot: Snapshot, node: int, name: str) -> None:
    snapshot.node_infos[node].add_pod(requests_pod({"cpu": "100m"}, node=f"node-{node}", name=name))


def test_a_kept_column_is_computed_once_for_every_node() -> None:
    snapshot = _snapshot()
    counting = Counting(snapshot)
    first = counting.column()
    again = counting.column()
    assert first is again
    assert counting.arrays == [list(range(NODES))]
    assert counting.rows == []


def test_only_the_rows_whose_usage_changed_are_computed_again() -> None:
    snapshot = _snapshot()
    counting = Counting(snapshot)
    counting.column()
    _place(snapshot, 3, "a")
    _place(snapshot, 3, "b")
    _place(snapshot, 7, "c")
    column = counting.column()
    assert column is not None
    assert counting.rows == [3, 7]
    assert column.tolist() == [len(info.pods) for info in snapshot.node_infos]


def test_many_changed_rows_are_computed_in_one_array_call() -> None:
    snapshot = _snapshot()
    counting = Counting(snapshot)
    counting.column()
    for node in range(10):
        _place(snapshot, node, f"p-{node}")
    column = counting.column()
    assert column is not None
    assert counting.arrays[1] == list(range(10))
    assert counting.rows == []
    assert column.tolist() == [len(info.pods) for info in snapshot.node_infos]


def test_a_refusal_is_remembered_until_the_table_is_replaced() -> None:
    snapshot = _snapshot()
    counting = Counting(snapshot)
    counting.refuse = True
    assert counting.column() is None
    counting.refuse = False
    assert counting.column() is None
    assert counting.arrays == []
    snapshot.add_node(requests_node("late", cpu="1"))  # a node change: a new table
    column = counting.column()
    assert column is not None
    assert len(column) == NODES + 1


def test_a_column_left_behind_by_a_long_history_is_computed_afresh() -> None:
    snapshot = _snapshot()
    counting = Counting(snapshot)
    counting.column()
    usage = snapshot.table().usage(True)
    for i in range(5000):  # more changes than the log keeps (4,096 at this size)
        _place(snapshot, i % NODES, f"p-{i}")
        snapshot.node_infos[i % NODES].remove_pod(
            requests_pod(node=f"node-{i % NODES}", name=f"p-{i}")
        )
    _place(snapshot, 5, "last")
    snapshot.table().usage(True)
    assert len(usage._changed) <= 4096 + 1
    column = counting.column()
    assert column is not None
    assert counting.arrays == [list(range(NODES)), list(range(NODES))]
    assert column.tolist() == [len(info.pods) for info in snapshot.node_infos]


_step = st.tuples(
    st.booleans(),  # add (True) or remove
    st.integers(0, NODES - 1),
    st.sampled_from(["100m", "500m", "1", "0"]),
    st.sampled_from(["128Mi", "1Gi", "0"]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_step, max_size=40))
def test_resource_verdicts_and_scores_in_bulk_equal_the_per_node_answers(steps) -> None:
    snapshot = _snapshot()
    table_rows = np.arange(NODES, dtype=np.int64)
    features = Features()
    fit = Fit(NodeResourcesFitArgs(), features)
    most = Fit(
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="MostAllocated")), features
    )
    balanced = BalancedAllocation(DEFAULT_RESOURCES, features)
    incoming = requests_pod({"cpu": "300m", "memory": "512Mi"}, name="incoming")
    placed: list[tuple[int, str]] = []
    for index, (add, node, cpu, memory) in enumerate(steps):
        if add or not placed:
            name = f"p-{index}"
            pod = requests_pod({"cpu": cpu, "memory": memory}, node=f"node-{node}", name=name)
            snapshot.node_infos[node].add_pod(pod)
            placed.append((node, name))
        else:
            where, name = placed.pop(node % len(placed))
            gone = requests_pod(node=f"node-{where}", name=name)
            assert snapshot.node_infos[where].remove_pod(gone)
        table = snapshot.table()
        state = CycleState()
        fit.pre_filter(state, incoming, snapshot.node_infos)
        verdicts = fit.filter_batch(state, incoming, table)
        assert verdicts is not None
        expected = [fit.filter(state, incoming, info) is None for info in snapshot.node_infos]
        assert verdicts.tolist() == expected
        for plugin in (fit, most, balanced):
            state = CycleState()
            plugin.pre_score(state, incoming, snapshot.node_infos)
            scores = plugin.score_batch(state, incoming, table, table_rows)
            assert scores is not None
            per_node = [plugin.score(state, incoming, info)[0] for info in snapshot.node_infos]
            assert scores.tolist() == per_node, plugin.name


def test_a_replica_with_other_requests_gets_its_own_column() -> None:
    snapshot = _snapshot()
    _place(snapshot, 0, "a")
    fit = Fit(NodeResourcesFitArgs(), Features())
    rows = np.arange(NODES, dtype=np.int64)
    small = requests_pod({"cpu": "100m"}, name="small")
    large = requests_pod({"cpu": "1900m"}, name="large")
    answers = []
    for pod in (small, large, small):
        state = CycleState()
        fit.pre_score(state, pod, snapshot.node_infos)
        scores = fit.score_batch(state, pod, snapshot.table(), rows)
        assert scores is not None
        answers.append(scores.tolist())
    assert answers[0] == answers[2]
    assert answers[0] != answers[1]
