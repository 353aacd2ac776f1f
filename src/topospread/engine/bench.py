"""A sequential scheduling loop: kube-scheduler's cycle for each pod in turn, nothing else.

What ``benchmarks/run.py`` times against the Go oracle's ``bench`` mode, which runs
upstream's own cycle the same way. For each pod, in order: one :func:`schedule_one` with
the scheduler-wide :class:`NodeSearch` (``percentageOfNodesToScore``, rotating start
index, parallelism 1) and the lone-node shortcut; ties for the best score go to the
first node the search visited (``visit_order_ties``); then the pod is *assumed* on the
chosen node — added to the one long-lived :class:`Snapshot`, as kube-scheduler's cache
assumes it before binding. No queue, no retries: a pod no node fits is recorded with its
FailedScheduling message and the loop moves on; the next pod identical to it, in a
cluster unchanged since, gets the same answer without a cycle (:class:`FailureMemo`). No
API server, no binding, no controllers (the simulator and the live scheduler run
:class:`~topospread.engine.loop.SchedulingLoop` with those; this one keeps only the
cycle, as the Go oracle's ``bench`` does).

Snapshot order is input order; kube-scheduler's cache lists nodes zone by zone in turn
(its node tree), so inputs meant to be compared with upstream list them that way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from topospread.engine.cluster import Cluster
from topospread.engine.cycle import FailureMemo, NodeSearch, schedule_one
from topospread.engine.loop import build_frameworks
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import PluginFactory
from topospread.model.admission import admit_pod
from topospread.model.objects import Pod
from topospread.plugins.registry import registry as plugin_registry

__all__ = ["Placement", "SequentialRun", "schedule_sequentially"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one pod went: ``node`` None when no node fitted (``message`` says why)."""

    pod: str
    node: str | None
    message: str = ""

    def line(self) -> str:
        """``namespace/name<TAB>node<TAB>message`` (node ``-`` when unscheduled), the
        format of the Go oracle's ``bench --placements``."""
        message = " ".join(self.message.split())
        return f"{self.pod}\t{self.node or '-'}\t{message}"


@dataclass(frozen=True, slots=True)
class SequentialRun:
    """Every placement, in pod order, and the wall time of the loop alone."""

    placements: tuple[Placement, ...]
    seconds: float
    reused: int = 0
    """Failed cycles answered by the memo instead of run again."""
    cpu_seconds: float = 0.0
    """The process's CPU time over the loop (user and system, every thread)."""

    @property
    def scheduled(self) -> int:
        """How many pods got a node."""
        return sum(1 for p in self.placements if p.node is not None)


def schedule_sequentially(
    cluster: Cluster,
    pods: Sequence[Pod],
    configuration: SchedulerConfiguration,
    *,
    registry: Mapping[str, PluginFactory] | None = None,
    features: Features = Features(),
    clock: Callable[[], float] = time.perf_counter,
    memo: bool = True,
) -> SequentialRun:
    """Schedule ``pods`` one after the other on ``cluster`` (setup, the pods' admission
    and the node table's resource columns included, is not timed). ``memo`` answers a
    pod identical to the last one that fit nowhere, in an unchanged cluster, without a
    cycle (:class:`FailureMemo`, as the scheduling loop does); False runs every cycle."""
    pods = [admit_pod(pod, cluster.admission) for pod in pods]
    snapshot = cluster.snapshot()
    handle = Handle(snapshot, cluster.objects, configuration.parallelism)
    plugins = registry if registry is not None else plugin_registry()
    frameworks = build_frameworks(configuration, plugins, handle, features)
    search = NodeSearch(configuration.percentage_of_nodes_to_score)
    failures = FailureMemo() if memo else None
    placements: list[Placement] = []
    # The node table's resource columns hold what Go's cache keeps in each NodeInfo
    # (Requested, NonZeroRequested), which the oracle builds before its clock starts.
    table = snapshot.table()
    table.usage(features.enable_pod_level_resources)
    cpu_began = time.process_time()
    began = clock()
    for pod in pods:
        framework = frameworks.get(pod.scheduler_name)
        if framework is None:
            message = f'no profile has schedulerName "{pod.scheduler_name}"'
            placements.append(Placement(pod.key, None, message))
            continue
        start = search.next_start_node_index
        result = failures.lookup(framework, pod, search) if failures is not None else None
        if result is None:
            result = schedule_one(
                framework,
                pod,
                search,
                skip_single_node_scoring=True,
                visit_order_ties=True,
                lean=True,
            )
            if failures is not None:
                failures.remember(framework, pod, start, search, result)
        node = result.selected_node
        if node is None:
            placements.append(Placement(pod.key, None, result.message or "no node selected"))
            continue
        info = snapshot.get(node)
        assert info is not None
        info.add_pod(replace(pod, node_name=node))
        placements.append(Placement(pod.key, node))
    seconds = clock() - began
    return SequentialRun(
        tuple(placements),
        seconds,
        failures.hits if failures else 0,
        time.process_time() - cpu_began,
    )
