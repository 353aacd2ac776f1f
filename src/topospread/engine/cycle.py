"""One scheduling cycle of one pod: PreFilter → Filter → PreScore → Score → host selection.

Mirrors ``schedulePod`` / ``findNodesThatFitPod`` of ``pkg/scheduler/schedule_one.go``.
By default (``explain``) every node is evaluated in snapshot order and even a single
feasible node is scored. With a :class:`NodeSearch` (the simulator) the search stops as
kube-scheduler's does — ``numFeasibleNodesToFind`` feasible nodes, starting at the
rotating ``nextStartNodeIndex`` — as a scheduler with parallelism 1 would run it; and
``skip_single_node_scoring`` takes a lone feasible node without scoring. Ties for the
best total go to the first node in snapshot order (with a :class:`NodeSearch` and
``visit_order_ties``: the first in the order the search visited the nodes, as the Go
oracle's ``bench`` does); kube-scheduler picks at random.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from topospread.framework.cycle_state import CycleState
from topospread.framework.interfaces import NodeToStatus, PostFilterResult
from topospread.framework.node_info import NodeInfo
from topospread.framework.node_table import BoolArray, IntArray
from topospread.framework.runtime import Framework, PreFilterOutcome
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NO_NODES_AVAILABLE",
    "NO_NODE_AVAILABLE",
    "CycleResult",
    "FailureMemo",
    "NodeSearch",
    "fit_error_message",
    "num_feasible_nodes_to_find",
    "schedule_one",
    "upstream_pick",
]

NO_NODE_AVAILABLE = "0/{} nodes are available"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
"""``ErrNoNodesAvailable``: the message when the cluster has no node at all."""

MIN_FEASIBLE_NODES_TO_FIND = 100
"""``minFeasibleNodesToFind``: below this many nodes every node is searched."""
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
"""``minFeasibleNodesPercentageToFind``: floor of the adaptive percentage."""


def num_feasible_nodes_to_find(
    global_percentage: int, profile_percentage: int | None, num_all_nodes: int
) -> int:
    """How many feasible nodes end the search (``numFeasibleNodesToFind``).

    Fewer than 100 nodes: all of them. Otherwise the profile's percentage if set, else the
    scheduler-wide one; 0 means adaptive, ``50 − nodes/125`` (Go integer division) with a
    floor of 5; the result ``nodes × percentage / 100`` is at least 100.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = profile_percentage if profile_percentage is not None else global_percentage
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    # Both operands are non-negative, so floor division equals Go's truncation.
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


class NodeSearch:
    """Scheduler-wide search state: ``percentageOfNodesToScore`` and ``nextStartNodeIndex``.

    One per scheduler (shared by its profiles, as upstream keeps it on ``Scheduler``).
    """

    __slots__ = ("next_start_node_index", "percentage_of_nodes_to_score")

    def __init__(self, percentage_of_nodes_to_score: int = 0) -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        """The configuration's global value; 0 is adaptive."""
        self.next_start_node_index = 0
        """Where the next cycle starts searching, an index into the snapshot's nodes."""


@dataclass(slots=True)
class CycleResult:
    """Everything one cycle decided, and the cycle state the plugins wrote."""

    state: CycleState
    pre_filter: PreFilterOutcome
    statuses: dict[str, Status | None]
    """Node name -> the rejecting status, or None for a feasible node (snapshot order).
    With a :class:`NodeSearch`: only the nodes visited (and those PreFilter left out),
    in the order visited."""
    feasible: list[NodeInfo]
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    """Feasible node -> score plugin -> normalized score (before weight)."""
    totals: dict[str, int] = field(default_factory=dict)
    """Feasible node -> weighted total."""
    selected_node: str | None = None
    tied_nodes: Sequence[str] = ()
    """The nodes with the best total (a tuple; with ``lean``, possibly an array)."""
    message: str | None = None
    """The FailedScheduling message when no node is selected."""
    post_filter_ran: bool = False
    """Whether PostFilter (preemption) ran: no node fit and the profile has PostFilters."""
    post_filter: PostFilterResult | None = None
    """The PostFilter result: the nominated node ("" clears a nomination) and, from
    DefaultPreemption, the victims per candidate node; None leaves the nomination as is."""
    post_filter_status: Status | None = None
    """The PostFilter status; its message ends the FailedScheduling message."""
    nominated_node_shortcut: bool = False
    """The pod's ``nominated_node_name`` passed the filters first (``evaluateNominatedNode``)
    and was taken without searching or scoring."""

    @property
    def nominated_node(self) -> str | None:
        """The node nominated for the pod by preemption, if any."""
        if self.post_filter is None or not self.post_filter.nominated_node_name:
            return None
        return self.post_filter.nominated_node_name


def fit_error_message(
    total_nodes: int,
    statuses: Mapping[str, Status],
    absent_status: Status | None = None,
    pre_filter_message: str = "",
) -> str:
    """kube-scheduler's ``FitError.Error()``: a sorted histogram of rejection reasons."""
    message = NO_NODE_AVAILABLE.format(total_nodes) + ":"
    if pre_filter_message:
        return message + f" {pre_filter_message}."
    histogram: Counter[str] = Counter()
    for status in statuses.values():
        histogram.update(status.reasons)
    if absent_status is not None and len(statuses) < total_nodes:
        for reason in absent_status.reasons:
            histogram[reason] += total_nodes - len(statuses)
    # Go sorts the "<count> <reason>" strings, so "10 x" sorts before "2 y".
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    if parts:
        message += " " + ", ".join(parts) + "."
    return message


def schedule_one(
    framework: Framework,
    pod: Pod,
    search: NodeSearch | None = None,
    *,
    skip_single_node_scoring: bool = False,
    visit_order_ties: bool = False,
    lean: bool = False,
    random_ties: bool = False,
) -> CycleResult:
    """Run one cycle of ``pod`` against the framework's snapshot.

    ``search`` None evaluates every node; otherwise the search is cut off and rotated as
    kube-scheduler does and ``search.next_start_node_index`` is advanced.
    ``skip_single_node_scoring`` selects a lone feasible node without scoring it.
    ``visit_order_ties`` (with ``search``) keeps the feasible nodes in the order the
    search visited them — upstream's feasible list at parallelism 1 — so that a tie goes
    to the first node visited rather than the first in snapshot order.
    A pod with ``nominated_node_name`` first tries only that node (``evaluateNominatedNode``)
    and, if it fits, is placed there unscored (``nominated_node_shortcut``); without
    ``search`` every node is still filtered for the report, with ``search`` no other node
    is (see :func:`_evaluate_nominated_node`).
    ``lean`` (with ``search``) leaves out of the result what only explanations read when
    the bulk path selects a node: ``statuses``, ``scores`` and ``totals`` stay empty.
    ``random_ties`` (with ``lean``): the caller picks among ``tied_nodes`` at random
    (``selectHost`` with parallel Filter workers), so the bulk path does not work out
    upstream's heap pick; ``selected_node`` is then the first tied node.

    With ``search``, Filter and Score run in bulk over the snapshot's
    :class:`~topospread.framework.node_table.NodeTable` when every active plugin offers
    its batch extension (``Framework.batch_enabled``); the decisions are those of the
    per-node path, which still handles a cycle where no node fits.
    """
    if not framework.handle.snapshot.node_infos:
        # schedulePod returns ErrNoNodesAvailable before any plugin runs.
        return CycleResult(
            CycleState(), PreFilterOutcome(None, None), {}, [], message=NO_NODES_AVAILABLE
        )
    if search is not None and pod.nominated_node_name:
        nominated = _evaluate_nominated_node(framework, pod)
        if nominated is not None:
            return nominated
    if search is not None:
        return _schedule_sampled(
            framework, pod, search, skip_single_node_scoring, visit_order_ties, lean, random_ties
        )
    state = CycleState()
    node_infos = framework.handle.snapshot.node_infos
    total = len(node_infos)
    statuses: dict[str, Status | None] = {}
    message: str | None = None
    rejections: NodeToStatus | None = None
    pre = framework.run_pre_filter_plugins(state, pod)
    if pre.status is not None and pre.status.code is Code.ERROR:
        statuses = dict.fromkeys((n.name for n in node_infos), pre.status)
        message = pre.status.message
    elif pre.status is not None and pre.status.is_rejected:
        statuses = dict.fromkeys((n.name for n in node_infos), pre.status)
        message = fit_error_message(total, {}, None, pre.status.message)
        rejections = NodeToStatus({}, pre.status)
    else:
        absent: Status | None = None
        allowed = None if pre.result is None else pre.result.node_names
        nominated_info, nominated_status = _nominated_node_fits(framework, state, pod)
        if allowed is not None:
            unschedulable = set(pre.plugins_with_nodes)
            if nominated_status is not None and nominated_status.plugin:
                # Diagnosis.AddPluginStatus on the nominated node's rejection adds to the
                # very set the absent nodes' message is then made from.
                unschedulable.add(nominated_status.plugin)
            plugins = " ".join(sorted(unschedulable))
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{plugins}]",),
            )
        explicit: dict[str, Status] = {}
        if nominated_status is not None and nominated_info is not None:
            # evaluateNominatedNode records the rejection in the diagnosis; a node that
            # PreFilter left out keeps it there (the search below does not visit it),
            # so the FitError and preemption see this status, not the absent one.
            explicit[nominated_info.name] = nominated_status
        for info in node_infos:
            if allowed is not None and info.name not in allowed:
                statuses[info.name] = absent
                continue
            status = framework.run_filter_plugins_with_nominated_pods(state, pod, info)
            statuses[info.name] = status
            if status is not None:
                explicit[info.name] = status
        if nominated_info is not None and nominated_status is None:
            # Every node was evaluated for the report; the nominated node alone decides.
            statuses[nominated_info.name] = None
            return CycleResult(
                state,
                pre,
                statuses,
                [nominated_info],
                selected_node=nominated_info.name,
                tied_nodes=(nominated_info.name,),
                nominated_node_shortcut=True,
            )
        errors = [s for s in explicit.values() if s.code is Code.ERROR]
        if errors:
            message = errors[0].message
        elif all(s is not None for s in statuses.values()):
            message = fit_error_message(total, explicit, absent)
            rejections = _node_to_status(explicit, absent)

    feasible = [info for info in node_infos if statuses.get(info.name) is None]
    result = CycleResult(state, pre, statuses, feasible, message=message)
    if rejections is not None:
        return _post_filter(framework, pod, result, rejections)
    return _score(framework, pod, result, skip_single_node_scoring)


def _node_to_status(explicit: Mapping[str, Status], absent: Status | None) -> NodeToStatus:
    if absent is None:
        return NodeToStatus(dict(explicit))
    return NodeToStatus(dict(explicit), absent)


def _post_filter(
    framework: Framework, pod: Pod, result: CycleResult, rejections: NodeToStatus
) -> CycleResult:
    # schedulingAlgorithm after a FitError: RunPostFilterPlugins when the profile has
    # PostFilter plugins; FitError.Error() then ends with the PostFilter message.
    if not framework.post_filter_plugins:
        return result
    post, status = framework.run_post_filter_plugins(result.state, pod, rejections)
    result.post_filter_ran = True
    result.post_filter = post
    result.post_filter_status = status
    if status.message and result.message is not None:
        result.message += f" {status.message}"
    return result


def _score(
    framework: Framework, pod: Pod, result: CycleResult, skip_single_node_scoring: bool
) -> CycleResult:
    # schedulePod after the search: the lone-node shortcut, then prioritizeNodes.
    feasible, state = result.feasible, result.state
    if not feasible or result.message is not None:
        return result
    if skip_single_node_scoring and len(feasible) == 1:
        result.selected_node = feasible[0].name
        result.tied_nodes = (feasible[0].name,)
        return result
    if not framework.plugins_at("score"):
        # prioritizeNodes: without score plugins (and extenders) every node scores 1; the
        # heap of equal scores pops the first.
        result.totals = {info.name: 1 for info in feasible}
        result.tied_nodes = tuple(info.name for info in feasible)
        result.selected_node = result.tied_nodes[0]
        return result
    status = framework.run_pre_score_plugins(state, pod, feasible)
    if status is not None:
        result.message = status.message
        return result
    node_scores, status = framework.run_score_plugins(state, pod, feasible)
    if status is not None:
        result.message = status.message
        return result
    for entry in node_scores:
        result.scores[entry.name] = entry.scores
        result.totals[entry.name] = entry.total_score
    best = max(result.totals.values())
    result.tied_nodes = tuple(info.name for info in feasible if result.totals[info.name] == best)
    ordered = [result.totals[info.name] for info in feasible]
    result.selected_node = feasible[upstream_pick(ordered)].name
    return result


def _schedule_sampled(
    framework: Framework,
    pod: Pod,
    search: NodeSearch,
    skip_single_node_scoring: bool,
    visit_order_ties: bool = False,
    lean: bool = False,
    random_ties: bool = False,
) -> CycleResult:
    # findNodesThatFitPod + findNodesThatPassFilters with parallelism 1. Nodes are
    # visited from nextStartNodeIndex; after K feasible nodes the scan goes on, recording
    # rejected nodes, until a (K+1)-th feasible node is found (dropped, as the worker
    # that finds it cancels and takes it back) or an Error stops it (the erroring node is
    # not recorded). processed = feasible + recorded rejections; the next start is
    # (start + processed) mod the number of ALL nodes, while the scan itself is modulo
    # the searched list (narrowed by PreFilter, taken here in snapshot order where
    # upstream walks a Go map).
    state = CycleState()
    node_infos = framework.handle.snapshot.node_infos
    total = len(node_infos)
    pre = framework.run_pre_filter_plugins(state, pod)
    if pre.status is not None and (pre.status.code is Code.ERROR or pre.status.is_rejected):
        # PreFilter failed: no search, the start index stays.
        statuses: dict[str, Status | None] = dict.fromkeys((n.name for n in node_infos), pre.status)
        if pre.status.code is Code.ERROR:
            return CycleResult(state, pre, statuses, [], message=pre.status.message)
        pre_message = fit_error_message(total, {}, None, pre.status.message)
        result = CycleResult(state, pre, statuses, [], message=pre_message)
        return _post_filter(framework, pod, result, NodeToStatus({}, pre.status))

    statuses = {}
    absent: Status | None = None
    nodes = node_infos
    allowed = None if pre.result is None else pre.result.node_names
    if allowed is not None:
        plugins = " ".join(sorted(pre.plugins_with_nodes))
        absent = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) didn't satisfy plugin(s) [{plugins}]",)
        )
        nodes = [info for info in node_infos if info.name in allowed]
        for info in node_infos:
            if info.name not in allowed:
                statuses[info.name] = absent
    searched = len(nodes)
    to_find = num_feasible_nodes_to_find(
        search.percentage_of_nodes_to_score,
        framework.profile.percentage_of_nodes_to_score,
        searched,
    )
    if not framework.plugins_at("score"):
        to_find = 1  # no scoring (and no extenders): any feasible node will do
    start = search.next_start_node_index
    if searched and framework.batch_enabled and framework.plugins_at("filter"):
        mask = framework.run_filter_plugins_batch(state, pod)
        if mask is not None:
            mask = _with_nominated_pods(framework, state, pod, mask)
        if mask is not None:
            found = _search_batch(framework, nodes, mask, start, to_find, visit_order_ties)
            if found is not None:
                rows, visited = found
                if total:
                    search.next_start_node_index = (start + len(visited)) % total
                return _score_batch(
                    framework,
                    pod,
                    state,
                    pre,
                    statuses,
                    (rows, visited, mask),
                    skip_single_node_scoring,
                    lean,
                    random_ties,
                )
    feasible_at: list[tuple[int, NodeInfo]] = []
    explicit: dict[str, Status] = {}
    error: Status | None = None
    if searched and not framework.plugins_at("filter"):
        for i in range(to_find):
            index = (start + i) % searched
            feasible_at.append((index, nodes[index]))
    else:
        for i in range(searched):
            index = (start + i) % searched
            info = nodes[index]
            status = framework.run_filter_plugins_with_nominated_pods(state, pod, info)
            if status is None:
                if len(feasible_at) == to_find:
                    break
                feasible_at.append((index, info))
            elif status.code is Code.ERROR:
                statuses[info.name] = status
                error = status
                break
            else:
                statuses[info.name] = status
                explicit[info.name] = status
    if total:
        search.next_start_node_index = (start + len(feasible_at) + len(explicit)) % total
    if not visit_order_ties:
        feasible_at.sort(key=lambda pair: pair[0])
    feasible = [info for _, info in feasible_at]
    for info in feasible:
        statuses[info.name] = None
    message: str | None = None
    if error is not None:
        message = error.message
    elif not feasible:
        message = fit_error_message(total, explicit, absent)
    result = CycleResult(state, pre, statuses, feasible, message=message)
    if error is None and not feasible:
        return _post_filter(framework, pod, result, _node_to_status(explicit, absent))
    return _score(framework, pod, result, skip_single_node_scoring)


def _search_batch(
    framework: Framework,
    nodes: Sequence[NodeInfo],
    mask: BoolArray,
    start: int,
    to_find: int,
    visit_order_ties: bool,
) -> tuple[IntArray, IntArray] | None:
    # The scan of _schedule_sampled over a precomputed verdict per node: visit ``nodes``
    # from ``start``; the rows of the feasible nodes found before the (to_find+1)-th
    # one, and the rows the scan processed (feasible + rejected), in visit order. None
    # when no node fits: the per-node scan then records every rejection for the
    # FitError and PostFilter.
    table = framework.handle.snapshot.table()
    searched = len(nodes)
    if searched == len(table):
        positions: IntArray = np.arange(searched, dtype=np.int64)
    else:
        row_of = table.row_of
        positions = np.fromiter((row_of[info.name] for info in nodes), np.int64, searched)
    first = start % searched
    order = np.concatenate((positions[first:], positions[:first]))
    hits = np.flatnonzero(mask[order])
    if not len(hits):
        return None
    if len(hits) > to_find:
        visited = int(hits[to_find])
        hits = hits[:to_find]
    else:
        visited = searched
    rows = order[hits]
    if not visit_order_ties:
        rows = np.sort(rows)  # ``positions`` ascend, so row order is snapshot order
    return rows, order[:visited]


def _score_batch(
    framework: Framework,
    pod: Pod,
    state: CycleState,
    pre: PreFilterOutcome,
    statuses: dict[str, Status | None],
    search: tuple[IntArray, IntArray, BoolArray],
    skip_single_node_scoring: bool,
    lean: bool,
    random_ties: bool,
) -> CycleResult:
    # _score for feasible nodes found in bulk: the same steps, arrays instead of dicts.
    rows, visited, mask = search
    table = framework.handle.snapshot.table()
    feasible: list[NodeInfo] = table.node_info_array[rows].tolist()
    if not lean:
        _record_rejections(framework, state, pod, statuses, visited, mask)
        for info in feasible:
            statuses[info.name] = None
    result = CycleResult(state, pre, statuses, feasible)
    if (skip_single_node_scoring and len(feasible) == 1) or not framework.plugins_at("score"):
        return _score(framework, pod, result, skip_single_node_scoring)
    state.feasible_rows = rows
    status = framework.run_pre_score_plugins(state, pod, feasible)
    if status is not None:
        result.message = status.message
        return result
    scores, status = framework.run_score_plugins_batch(state, pod, table, rows)
    if status is not None or scores is None:
        result.message = status.message if status is not None else "scoring failed"
        return result
    totals = scores.totals
    if not lean:
        names = [info.name for info in feasible]
        result.totals = dict(zip(names, totals.tolist(), strict=True))
        columns = {name: values.tolist() for name, values in scores.by_plugin.items()}
        for i, name in enumerate(names):
            result.scores[name] = {plugin: values[i] for plugin, values in columns.items()}
    tied = np.flatnonzero(totals == totals.max())
    tied_names = table.node_names[rows[tied]]
    # An object array of names reads as a sequence of them (len, index, iteration).
    result.tied_nodes = cast("Sequence[str]", tied_names) if lean else tuple(tied_names.tolist())
    pick = int(tied[0]) if len(tied) == 1 or (lean and random_ties) else upstream_pick(totals)
    result.selected_node = feasible[pick].name
    return result


def upstream_pick(totals: Sequence[int] | IntArray) -> int:
    """The index kube-scheduler v1.37.1 selects among nodes scored in feasible order:
    ``framework.NewSortedScoredNodes(list).Pop()`` — container/heap's ``Init`` then ``Pop``
    with ``Less`` = the higher TotalScore (the ``Randomizer`` that would break ties is set
    only when extenders score, so it is 0 here). ``Pop`` returns the root ``Init`` left,
    which among equal scores is the heap's choice, not always the first in order:
    totals 1 1 2 2 2 0 pick index 3.

    ``Init`` sifts down positions n/2-1 .. 0; what position ``i`` holds after its own
    sift-down is not touched again until its parent's, so the root holds ``i`` itself if
    it has the best total M (a child must be strictly higher to swap), else the holding
    of its left subtree if that subtree has an M (ties go left), else the right's: the
    first node with total M in *preorder* (node, left subtree, right subtree). With heap
    positions ``p = i + 1`` written in binary, the bits after the leading 1 are the path
    from the root (0 left, 1 right), so preorder is the order of those paths padded with
    zeros to one length, an ancestor before its descendants. No heap is built: that took
    a sixth of a cycle over 5,000 nodes in Python.
    """
    values = np.asarray(totals)
    positions = np.flatnonzero(values == values.max()) + 1
    lengths = np.frexp(positions.astype(np.float64))[1]
    padded = positions << (lengths.max() - lengths)
    first = np.lexsort((lengths, padded))[0]
    return int(positions[first]) - 1


def _record_rejections(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    statuses: dict[str, Status | None],
    visited: IntArray,
    mask: BoolArray,
) -> None:
    # The statuses the per-node scan records: each rejected node it visited, in visit
    # order, re-run per node for the exact first rejecting plugin and its reasons.
    infos = framework.handle.snapshot.table().node_infos
    for row in visited[~mask[visited]].tolist():
        info = infos[row]
        status = framework.run_filter_plugins_with_nominated_pods(state, pod, info)
        if status is not None:
            statuses[info.name] = status


def _evaluate_nominated_node(framework: Framework, pod: Pod) -> CycleResult | None:
    """``findNodesThatFitPod``'s first try for a pod nominated by an earlier preemption.

    ``evaluateNominatedNode``: after PreFilter, only ``pod.nominated_node_name`` is
    filtered (with the nominated pods, as ``findNodesThatPassFilters`` filters); if it
    passes, it is selected without scoring (``schedulePod`` takes a lone feasible node)
    and the search's start index stays. None — PreFilter failed, the node is gone, or it
    rejected the pod or erred — means the full search runs. It starts afresh here
    (PreFilter runs again on a new cycle state), where upstream goes on with the same
    cycle state and keeps the nominated node's rejection in the diagnosis: the two
    differ only when the search then leaves that node out (outside PreFilter's node set,
    or not reached in a search cut short), where upstream also counts it in the
    FitError and in ``nextStartNodeIndex``.
    """
    info = framework.handle.snapshot.get(pod.nominated_node_name)
    if info is None:
        return None  # upstream logs the error and searches every node
    state = CycleState()
    pre = framework.run_pre_filter_plugins(state, pod)
    if pre.status is not None:
        return None  # the full cycle reports the PreFilter failure
    if framework.plugins_at("filter"):
        status = framework.run_filter_plugins_with_nominated_pods(state, pod, info)
        if status is not None:
            return None
    return CycleResult(
        state,
        pre,
        {info.name: None},
        [info],
        selected_node=info.name,
        tied_nodes=(info.name,),
        nominated_node_shortcut=True,
    )


def _nominated_node_fits(
    framework: Framework, state: CycleState, pod: Pod
) -> tuple[NodeInfo | None, Status | None]:
    # findNodesThatFitPod after a successful PreFilter: a pod nominated by an earlier
    # preemption has that node filtered first, whatever PreFilter's node set, with the
    # same cycle state (evaluateNominatedNode, pkg/scheduler/schedule_one.go); a node that
    # passes (None status) is the lone feasible node, which schedulePod takes without
    # scoring. A rejection comes back with the node; a node that is gone or errs, as
    # (None, None): the cycle goes on to the full search.
    if not pod.nominated_node_name:
        return None, None
    info = framework.handle.snapshot.get(pod.nominated_node_name)
    if info is None:
        return None, None
    if not framework.plugins_at("filter"):
        return info, None
    status = framework.run_filter_plugins_with_nominated_pods(state, pod, info)
    if status is not None and status.code is Code.ERROR:
        return None, None
    return info, status


def _with_nominated_pods(
    framework: Framework, state: CycleState, pod: Pod, mask: BoolArray
) -> BoolArray | None:
    # RunFilterPluginsWithNominatedPods for the bulk search: nodes with nominated pods
    # are judged per node, with those pods; an Error there returns None so that the
    # per-node scan stops at it as upstream's does.
    names = framework.nominated_node_names
    if names is None:
        return mask
    table = framework.handle.snapshot.table()
    for name in names():
        row = table.row_of.get(name)
        if row is None:
            continue
        status = framework.run_filter_plugins_with_nominated_pods(state, pod, table.node_infos[row])
        if status is not None and status.code is Code.ERROR:
            return None
        mask[row] = status is None
    return mask


def _as_replica(pod: Pod) -> Pod:
    # What tells replicas of one template apart and no plugin reads for such a pod.
    meta = pod.metadata
    return replace(pod, metadata=replace(meta, name="", uid="", creation_timestamp=None))


def _memoizable(pod: Pod) -> bool:
    # Claims and volumes are named after their pod (ephemeral volumes, StatefulSet claims,
    # ResourceClaims from templates), and a nominated pod tries its node first.
    return not (
        pod.volumes
        or pod.volume_claims
        or pod.resource_claims
        or pod.resource_claim_refs
        or pod.nominated_node_name
    )


class FailureMemo:
    """The last cycle that found no node, kept to answer the next identical pod.

    A burst of pods that fit nowhere (the replicas of one ReplicaSet with a hard spread
    no domain can take) costs a full cycle each, Filter on every node and preemption's
    dry run included. A cycle is a function of the pod, the framework (its profile and
    the objects it lists), the snapshot (its nodes and their pods), the nominated pods
    and where the node search starts; when all of these are unchanged and the pod
    differs from the last one only in what tells replicas apart (name, uid, creation
    time), its cycle would repeat the last one step for step, so its result is that
    result and the search moves on as it did. Reused only when no pod was nominated
    (no preemption carried out, no nominated pods counted) and the pod names no volume
    or claim (those are named after the pod). The differential test places the same
    pods with and without the memo and compares every placement and message.
    """

    __slots__ = ("_framework", "_generation", "_next", "_pod", "_result", "_start", "hits")

    def __init__(self) -> None:
        self._framework: Framework | None = None
        self._generation = -1
        self._pod: Pod | None = None
        self._result: CycleResult | None = None
        self._start = -1
        self._next = -1
        self.hits = 0
        """Cycles answered from the memo."""

    def lookup(
        self, framework: Framework, pod: Pod, search: NodeSearch | None
    ) -> CycleResult | None:
        """The remembered result if ``pod``'s cycle would repeat it, else None."""
        result = self._result
        if (
            result is None
            or framework is not self._framework
            or framework.handle.snapshot.generation != self._generation
            or (search.next_start_node_index if search is not None else -1) != self._start
            or _has_nominations(framework)
            or not _memoizable(pod)
            or _as_replica(pod) != self._pod
        ):
            return None
        if search is not None:
            search.next_start_node_index = self._next
        self.hits += 1
        return result

    def remember(
        self,
        framework: Framework,
        pod: Pod,
        start: int,
        search: NodeSearch | None,
        result: CycleResult,
    ) -> None:
        """Keep ``result`` if it is a failure the memo may reuse (``start``: where the
        search began); forget the previous one otherwise."""
        post = result.post_filter
        if (
            result.selected_node is not None
            or (post is not None and post.nominated_node_name)
            or _has_nominations(framework)
            or not _memoizable(pod)
        ):
            self._result = None
            return
        self._framework = framework
        self._generation = framework.handle.snapshot.generation
        self._pod = _as_replica(pod)
        self._result = result
        self._start = start if search is not None else -1
        self._next = search.next_start_node_index if search is not None else -1


def _has_nominations(framework: Framework) -> bool:
    names = framework.nominated_node_names
    return names is not None and bool(tuple(names()))
