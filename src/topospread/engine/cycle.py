"""One scheduling cycle of one pod: PreFilter → Filter → PreScore → Score → host selection.

Mirrors ``schedulePod`` / ``findNodesThatFitPod`` of ``pkg/scheduler/schedule_one.go``,
evaluating every node in snapshot order (the percentageOfNodesToScore cut-off is not
applied) and, unless told otherwise, scoring even a single feasible node. Ties for the
best total go to the first node in snapshot order; kube-scheduler picks at random.
Used by ``explain`` and by the simulator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from topospread.framework.cycle_state import CycleState
from topospread.framework.node_info import NodeInfo
from topospread.framework.runtime import Framework, PreFilterOutcome
from topospread.framework.status import Code, Status
from topospread.model.objects import Pod

__all__ = ["NO_NODE_AVAILABLE", "CycleResult", "fit_error_message", "schedule_one"]

NO_NODE_AVAILABLE = "0/{} nodes are available"


@dataclass(slots=True)
class CycleResult:
    """Everything one cycle decided, and the cycle state the plugins wrote."""

    state: CycleState
    pre_filter: PreFilterOutcome
    statuses: dict[str, Status | None]
    """Node name -> the rejecting status, or None for a feasible node (snapshot order)."""
    feasible: list[NodeInfo]
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    """Feasible node -> score plugin -> normalized score (before weight)."""
    totals: dict[str, int] = field(default_factory=dict)
    """Feasible node -> weighted total."""
    selected_node: str | None = None
    tied_nodes: tuple[str, ...] = ()
    message: str | None = None
    """The FailedScheduling message when no node is selected."""


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


def schedule_one(framework: Framework, pod: Pod) -> CycleResult:
    """Run one cycle of ``pod`` against the framework's snapshot."""
    state = CycleState()
    node_infos = framework.handle.snapshot.node_infos
    total = len(node_infos)
    statuses: dict[str, Status | None] = {}
    message: str | None = None
    pre = framework.run_pre_filter_plugins(state, pod)
    if pre.status is not None and pre.status.code is Code.ERROR:
        statuses = dict.fromkeys((n.name for n in node_infos), pre.status)
        message = pre.status.message
    elif pre.status is not None and pre.status.is_rejected:
        statuses = dict.fromkeys((n.name for n in node_infos), pre.status)
        message = fit_error_message(total, {}, None, pre.status.message)
    else:
        absent: Status | None = None
        allowed = None if pre.result is None else pre.result.node_names
        if allowed is not None:
            plugins = " ".join(sorted(pre.plugins_with_nodes))
            absent = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{plugins}]",),
            )
        explicit: dict[str, Status] = {}
        for info in node_infos:
            if allowed is not None and info.name not in allowed:
                statuses[info.name] = absent
                continue
            status = framework.run_filter_plugins(state, pod, info)
            statuses[info.name] = status
            if status is not None:
                explicit[info.name] = status
        errors = [s for s in explicit.values() if s.code is Code.ERROR]
        if errors:
            message = errors[0].message
        elif all(s is not None for s in statuses.values()):
            message = fit_error_message(total, explicit, absent)

    feasible = [info for info in node_infos if statuses.get(info.name) is None]
    result = CycleResult(state, pre, statuses, feasible, message=message)
    if not feasible or message is not None:
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
    result.selected_node = result.tied_nodes[0]
    return result
