"""Batch (vectorised) forms of per-node plugin work, shared by the plugins.

Many Filter and Score answers depend only on the node object and on a few fields of the
pod: taints and tolerations, labels and node affinity, images. For those,
:func:`node_verdicts` and :func:`node_scores` evaluate the plugin's own per-node method
once per node and keep the column in the snapshot's
:class:`~topospread.framework.node_table.NodeTable`, keyed by the plugin and the pod
fields it reads, until a node changes. The per-node method stays the single definition
of the rule; the column only remembers its answers.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import FilterPlugin, ScorePlugin
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, IntArray, NodeTable
from topospread.framework.status import Code
from topospread.model.objects import Pod

__all__ = ["default_normalize_batch", "go_div_batch", "node_scores", "node_verdicts"]


class _Declined(Exception):
    """A per-node call that cannot be memoised (it returned an error)."""


def _hashable(key: Hashable) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def node_verdicts(
    table: NodeTable, plugin: FilterPlugin, key: Hashable, state: CycleState, pod: Pod
) -> BoolArray | None:
    """Per node, whether ``plugin.filter`` passes, for a Filter whose verdict depends only
    on the node object and on ``key`` (the pod fields it reads). None if ``key`` cannot
    be hashed or a node's verdict is an Error."""
    if not _hashable(key):
        return None

    def passes(info: NodeInfo) -> bool:
        status = plugin.filter(state, pod, info)
        if status is not None and not status.is_rejected and status.code is not Code.SUCCESS:
            raise _Declined
        return status is None or status.code is Code.SUCCESS

    try:
        column: BoolArray = table.node_column((plugin, "filter", key), passes, np.bool_)
    except _Declined:
        return None
    return column


def node_scores(
    table: NodeTable,
    plugin: ScorePlugin,
    key: Hashable,
    state: CycleState,
    pod: Pod,
    rows: IntArray,
) -> IntArray | None:
    """The raw ``plugin.score`` of the nodes at ``rows``, for a Score whose raw score
    depends only on the node object and on ``key``. None as for :func:`node_verdicts`."""
    if not _hashable(key):
        return None

    def score(info: NodeInfo) -> int:
        value, status = plugin.score(state, pod, info)
        if status is not None and status.code is not Code.SUCCESS:
            raise _Declined
        return value

    try:
        column: IntArray = table.node_column((plugin, "score", key), score, np.int64)
    except _Declined:
        return None
    return column[rows]


def go_div_batch(numerator: IntArray, denominator: int) -> IntArray:
    """Go's truncating integer division of an array by a positive integer."""
    quotient: IntArray = np.abs(numerator) // denominator
    return np.where(numerator < 0, -quotient, quotient)


def default_normalize_batch(max_priority: int, reverse: bool, scores: IntArray) -> IntArray | None:
    """``helper.DefaultNormalizeScore`` over an array; None for negative scores (the
    per-node form then decides what they become)."""
    if not len(scores):
        return scores
    if int(scores.min()) < 0:
        return None
    max_count = int(scores.max())
    if max_count == 0:
        return np.full(len(scores), max_priority if reverse else 0, np.int64)
    normalized: IntArray = max_priority * scores // max_count
    return max_priority - normalized if reverse else normalized
