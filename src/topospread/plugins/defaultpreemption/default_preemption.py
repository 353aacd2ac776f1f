"""DefaultPreemption: when no node fits, find lower-priority pods whose eviction makes room.

Upstream ``pkg/scheduler/framework/plugins/defaultpreemption`` and the evaluator of
``pkg/scheduler/framework/preemption`` (v1.37.1), for single pods (``GenericWorkload`` is
off by default, so every victim is one pod; pod groups are not modelled). The decision is
computed without side effects: no eviction, no ``nominatedNodeName`` written back.

Where topospread is deterministic and upstream is not (documented, never a different
rule):

* the dry run starts at offset 0 of the candidate nodes, in snapshot order (upstream: a
  random offset into nodes listed from a Go map) and runs them one at a time (upstream:
  in parallel, so with more candidate nodes than it needs the set it stops at varies);
* victims are ordered by Go's ``sort.Slice`` algorithm itself (:mod:`..helper.gosort`):
  unstable beyond 12 elements, and reproduced exactly. A pod without ``status.startTime``
  counts as started "now" (``util.GetPodStartTime``), read when its victim is made: the
  victims of a node are made in node order, so such pods compare as started after every
  recorded time in the past and after each other in node order (issue 12);
* candidates still tied after every criterion of ``pickOneNodeForPreemption`` go to the
  first in dry-run order (upstream: Go map order); :attr:`PostFilterResult.tied_nodes`
  lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from time import time
from typing import TYPE_CHECKING, Final

from topospread.errors import ConfigError
from topospread.framework.config.types import DefaultPreemptionArgs
from topospread.framework.cycle_state import CycleState
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, NodeToStatus, PostFilterResult
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status, as_status
from topospread.model.labels import Selector
from topospread.model.objects import Pod, PodDisruptionBudget
from topospread.plugins import names
from topospread.plugins.helper.gosort import go_sort_slice
from topospread.plugins.podtopologyspread.common import SelectorError, label_selector_as_selector

if TYPE_CHECKING:
    from topospread.framework.runtime import Framework

__all__ = [
    "NAME",
    "NOT_HELPFUL_REASON",
    "NO_VICTIMS_REASON",
    "Candidate",
    "DefaultPreemption",
    "calculate_num_candidates",
    "filter_victims_with_pdb_violation",
    "more_important_pod",
    "new",
    "pick_one_node_for_preemption",
    "pod_priority",
    "pod_terminating_by_preemption",
]

NAME: Final = names.DEFAULT_PREEMPTION

NO_VICTIMS_REASON: Final = "No preemption victims found for incoming pod"
"""SelectVictimsOnNode's UnschedulableAndUnresolvable reason on a node without victims."""
NOT_HELPFUL_REASON: Final = "Preemption is not helpful for scheduling"
"""The status of every node the dry run did not evaluate, in the FitError it reports."""

_NO_NODE_AVAILABLE = "0/{} nodes are available"
_MAX_INT32 = 2**31 - 1


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    return pod.priority if pod.priority is not None else 0


def _start_time(pod: Pod) -> float:
    # util.GetPodStartTime: status.startTime, or "now" for a pod that has not started —
    # later than any recorded start, so +inf here.
    if pod.start_time is None:
        return float("inf")
    return datetime.fromisoformat(pod.start_time).timestamp()


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """``MoreImportantVictim`` for single pods: higher priority, then the earlier start."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return _start_time(pod1) < _start_time(pod2)


_StartKey = tuple[float, int, int]


def _victim_start_keys(pods: Sequence[Pod]) -> dict[int, _StartKey]:
    # preemption.NewVictim stores util.GetPodStartTime of each pod of the node, in node
    # order: the recorded start, or time.Now() at that moment, later for each later pod.
    now = time()
    keys: dict[int, _StartKey] = {}
    for index, pod in enumerate(pods):
        if pod.start_time is None:
            keys[id(pod)] = (now, 1, index)
        else:
            keys[id(pod)] = (datetime.fromisoformat(pod.start_time).timestamp(), 0, 0)
    return keys


def _importance_order(pods: list[Pod], start_keys: Mapping[int, _StartKey]) -> list[Pod]:
    # sort.Slice with MoreImportantVictim (pkg/scheduler/framework/preemption/util.go) for
    # single pods: higher priority first, then the earlier stored start time; Go's own
    # unstable algorithm decides the order of victims equal on both.
    def more_important(a: Pod, b: Pod) -> bool:
        pa, pb = pod_priority(a), pod_priority(b)
        if pa != pb:
            return pa > pb
        return start_keys[id(a)] < start_keys[id(b)]

    ordered = list(pods)
    go_sort_slice(ordered, more_important)
    return ordered


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """``PodTerminatingByPreemption``: terminating, and the first DisruptionTarget condition
    is True with reason ``PreemptionByScheduler``."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.conditions:
        if condition.type == "DisruptionTarget":
            return condition.status == "True" and condition.reason == "PreemptionByScheduler"
    return False


def filter_victims_with_pdb_violation(
    victims: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[tuple[Pod, int]], list[Pod]]:
    """``FilterVictimsWithPDBViolation``: (violating victims with their count, the others).

    Each PDB's ``status.disruptionsAllowed`` is spent by the matching victims in the given
    order; a victim whose eviction takes a budget below zero violates it. A PDB with a nil
    or empty selector matches nothing here; pods in ``status.disruptedPods`` do not spend.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    selectors: list[Selector | None] = []
    for pdb in pdbs:
        try:
            selectors.append(label_selector_as_selector(pdb.selector))
        except SelectorError:
            selectors.append(None)  # an invalid selector matches no pod

    def violating(pod: Pod) -> bool:
        if not pod.labels:
            return False
        for i, pdb in enumerate(pdbs):
            if pdb.metadata.namespace != pod.namespace:
                continue
            selector = selectors[i]
            if selector is None or selector.empty or not selector.matches(pod.labels):
                continue
            if pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    violating_victims: list[tuple[Pod, int]] = []
    non_violating: list[Pod] = []
    for pod in victims:
        if violating(pod):
            violating_victims.append((pod, 1))
        else:
            non_violating.append(pod)
    return violating_victims, non_violating


def calculate_num_candidates(args: DefaultPreemptionArgs, num_nodes: int) -> int:
    """``calculateNumCandidates``: percentage of the nodes, at least the absolute minimum,
    at most all of them."""
    n = num_nodes * args.min_candidate_nodes_percentage // 100
    n = max(n, args.min_candidate_nodes_absolute)
    return min(n, num_nodes)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption makes room: its victims (most important first) and the
    number of PDB violations their eviction causes (``extenderv1.Victims``)."""

    name: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> tuple[str, ...]:
    """``pickOneNodeForPreemption``: the candidates left after each criterion in turn.

    Fewest PDB violations; lowest highest-victim priority; smallest sum of priorities
    (each shifted by 2^31 so negative priorities do not favour more victims); fewest
    victims; latest earliest start among the highest-priority victims. The first of the
    result is the pick; more than one means upstream chooses among them by map order.
    """
    if not candidates:
        return ()

    def highest_priority(c: Candidate) -> int:
        return -pod_priority(c.victims[0])

    def sum_priorities(c: Candidate) -> int:
        return -sum(pod_priority(p) + _MAX_INT32 + 1 for p in c.victims)

    def latest_start(c: Candidate) -> float:
        # util.GetEarliestPodStartTime over the victims of the highest priority.
        top = max(pod_priority(p) for p in c.victims)
        return min(_start_time(p) for p in c.victims if pod_priority(p) == top)

    score_funcs = (
        lambda c: -c.num_pdb_violations,
        highest_priority,
        sum_priorities,
        lambda c: -len(c.victims),
        latest_start,
    )
    remaining = list(candidates)
    for func in score_funcs:
        scores = [func(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            break
    return tuple(c.name for c in remaining)


def _fit_error(num_all_nodes: int, statuses: Mapping[str, Status], absent: Status) -> str:
    # FitError.Error() of the dry run's NodeToStatus (framework.FitError, no PreFilter msg).
    histogram: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            histogram[reason] = histogram.get(reason, 0) + 1
    if len(statuses) < num_all_nodes:
        for reason in absent.reasons:
            histogram[reason] = histogram.get(reason, 0) + num_all_nodes - len(statuses)
    message = _NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    if parts:
        message += " " + ", ".join(parts) + "."
    return message


def _aggregate(errors: Sequence[str]) -> str:
    # utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated in
    # brackets.
    unique = list(dict.fromkeys(errors))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


class DefaultPreemption:
    """The PostFilter plugin that preempts lower-priority pods (``DefaultPreemption``)."""

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._framework: Framework | None = None

    def bind_framework(self, framework: Framework) -> None:
        """Called by the framework that runs this plugin: upstream's handle *is* the
        framework, through which the plugin runs AddPod/RemovePod and the Filters."""
        self._framework = framework

    @property
    def name(self) -> str:
        """``DefaultPreemption``."""
        return NAME

    # -- PostFilter ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``defaultpreemption/default_preemption.go``): with
        SchedulerAsyncPreemption (beta, on in v1.37) a pod its PreEnqueue held back while
        its victims are deleted waits for a deletion. topospread has no such PreEnqueue
        (victims are deleted before the pod is retried), so no pod carries this plugin as
        its rejector; declared for fidelity. The hint (the deleted pod was a victim of this
        pod) is not evaluated: the event always queues."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
        ]

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``PostFilter``: ``Evaluator.Preempt`` without actuation; messages get the
        ``preemption: `` prefix."""
        result, status = self.preempt(state, pod, filtered_node_status_map)
        if status.message:
            return result, Status(status.code, (f"preemption: {status.message}",))
        return result, status

    def preempt(
        self, state: CycleState, pod: Pod, m: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """``Evaluator.Preempt``: eligibility, candidates, the best one (no eviction)."""
        # 1) Is the preemptor eligible? (evaluate)
        eligible, reason = self.pod_eligible_to_preempt_others(pod, m.get(pod.nominated_node_name))
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, (reason,))
        # 2) Candidates from a dry run.
        all_nodes = self._handle.snapshot.node_infos
        if not all_nodes:
            return None, as_status("no nodes available")
        candidates, node_statuses, errors = self.find_candidates(state, pod, m)
        if errors and not candidates:
            return None, as_status(_aggregate(errors))
        if not candidates:
            message = _fit_error(
                len(all_nodes),
                node_statuses,
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL_REASON,)),
            )
            # A result with no node clears the pod's nominatedNodeName.
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, (message,))
        # 3) No extenders. 4) The best candidate (SelectCandidate).
        victims = {c.name: c.victims for c in candidates}
        tied: tuple[str, ...] = (candidates[0].name,)
        if len(candidates) > 1:
            tied = pick_one_node_for_preemption(candidates)
        best = tied[0]
        message = (
            f"found a potential placement for pod on node {best}, "
            f"preempting {len(victims[best])} victims"
        )
        return PostFilterResult(best, victims, tied), Status(Code.SUCCESS, (message,))

    # -- the evaluator's steps ----------------------------------------------------------

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: not with ``preemptionPolicy: Never``, nor while
        lower-priority victims of an earlier preemption terminate on the nominated node
        (unless that node is now UnschedulableAndUnresolvable)."""
        if pod.preemption_policy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self._handle.snapshot.get(nominated)
            if info is not None:
                priority = pod_priority(pod)
                for victim in info.pods:
                    if pod_priority(victim) < priority and pod_terminating_by_preemption(victim):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def find_candidates(
        self, state: CycleState, pod: Pod, m: NodeToStatus
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``findCandidates``: dry-run the nodes that failed only as Unschedulable."""
        potential = m.nodes_for_status_code(self._handle.snapshot.node_infos, Code.UNSCHEDULABLE)
        if not potential:
            return [], {}, []
        pdbs = self._handle.objects.pod_disruption_budgets
        # GetOffsetAndNumCandidates: the offset is random upstream; 0 here.
        return self.dry_run_preemption(
            state, pod, potential, pdbs, 0, calculate_num_candidates(self.args, len(potential))
        )

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``DryRunPreemption``, one node at a time from ``offset``.

        Stops once ``num_candidates`` candidates are found, at least one of them without
        PDB violations; each list keeps at most ``num_candidates``. Candidates without
        violations come first. Returns the candidates, the statuses of nodes that are not
        candidates, and the error messages.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        count = len(potential_nodes)
        for i in range(count):
            info = potential_nodes[(offset + i) % count]
            victims, num_violations, status = self.select_victims_on_node(
                state.clone(), pod, info.clone(), pdbs
            )
            if status is None and victims:
                candidate = Candidate(info.name, tuple(victims), num_violations)
                target = non_violating if num_violations == 0 else violating
                if len(target) < num_candidates:
                    target.append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status is None:
                status = as_status(f'expected at least one victim pod on node "{info.name}"')
            if status.code is Code.ERROR:
                errors.append(status.message)
            statuses[info.name] = status
        return non_violating + violating, statuses, errors

    def select_victims_on_node(
        self,
        state: CycleState,
        preemptor: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """``SelectVictimsOnNode`` on a cloned state and node: remove every lower-priority
        pod; if the preemptor then fits, add them back most important first (PDB-violating
        ones before the others) and keep as victims those whose return makes it not fit."""
        framework = self._framework
        if framework is None:
            return [], 0, as_status("DefaultPreemption is not bound to a framework")
        priority = pod_priority(preemptor)

        def remove(victim: Pod) -> Status | None:
            node_info.remove_pod(victim)
            return framework.run_pre_filter_extension_remove_pod(
                state, preemptor, victim, node_info
            )

        def add(victim: Pod) -> Status | None:
            node_info.add_pod(victim)
            return framework.run_pre_filter_extension_add_pod(state, preemptor, victim, node_info)

        start_keys = _victim_start_keys(node_info.pods)
        potential = [p for p in node_info.pods if pod_priority(p) < priority]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_REASON,))
        for victim in potential:
            status = remove(victim)
            if status is not None:
                return [], 0, status
        # Affinity of the preemptor to a victim is deliberately not considered upstream.
        status = framework.run_filter_plugins_with_nominated_pods(state, preemptor, node_info)
        if status is not None and status.code is not Code.SUCCESS:
            return [], 0, status

        potential = _importance_order(potential, start_keys)
        violating_victims, non_violating_victims = filter_victims_with_pdb_violation(
            potential, pdbs
        )
        victims: list[Pod] = []

        def reprieve(victim: Pod) -> tuple[bool, Status | None]:
            status = add(victim)
            if status is not None:
                return False, status
            fits = framework.run_filter_plugins_with_nominated_pods(state, preemptor, node_info)
            if fits is not None and fits.code is not Code.SUCCESS:
                status = remove(victim)
                if status is not None:
                    return False, status
                victims.append(victim)
                return False, None
            return True, None

        num_violating = 0
        for victim, count in violating_victims:
            fits, status = reprieve(victim)
            if status is not None:
                return [], 0, status
            if not fits:
                num_violating += count
        for victim in non_violating_victims:
            _, status = reprieve(victim)
            if status is not None:
                return [], 0, status
        if violating_victims and non_violating_victims:
            victims = _importance_order(victims, start_keys)
        return victims, num_violating, None


def new(args: object | None, handle: Handle, features: Features) -> DefaultPreemption:
    """The registry factory; ``args`` is the defaulted v1 form (a dict) or typed args."""
    if args is None:
        typed = DefaultPreemptionArgs()
    elif isinstance(args, DefaultPreemptionArgs):
        typed = args
    elif isinstance(args, Mapping):
        typed = DefaultPreemptionArgs.from_v1(args)
    else:
        raise ConfigError(
            "", [f"want args to be of type DefaultPreemptionArgs, got {type(args).__name__}"]
        )
    return DefaultPreemption(typed, handle)
