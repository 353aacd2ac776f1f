"""Prometheus metrics under kube-scheduler's names (``pkg/scheduler/metrics``).

Each scheduler instance has its own registry, so several can live in one process (tests).
Buckets are upstream's. ``topospread_scheduler_state`` is ours: 1 for the lifecycle state
the component is in (starting, syncing, standby, leader, draining, stopped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["STATES", "SchedulerMetrics"]

STATES = ("starting", "syncing", "standby", "leader", "draining", "stopped")


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class _PendingCollector(Collector):
    def __init__(self, pending: Callable[[], dict[str, int]]) -> None:
        self._pending = pending

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
            "number of pods in unschedulablePods that the scheduler attempted to schedule "
            "and failed; 'gated' is the number of unschedulable pods that the scheduler "
            "never attempted to schedule because they are gated.",
            labels=["queue"],
        )
        for queue, count in self._pending().items():
            family.add_metric([queue], count)
        yield family


class SchedulerMetrics:
    """The metrics one scheduler exports."""

    def __init__(self) -> None:
        # kube-scheduler exports no *_created series.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the "
            "scheduling queue and might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=_exponential(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=_exponential(1, 2, 5),
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=_exponential(1, 2, 7),
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master. 'name' is the string used to identify the lease.",
            ["name"],
            registry=r,
        )
        self.state = Gauge(
            "topospread_scheduler_state",
            "1 for the lifecycle state the scheduler is in.",
            ["state"],
            registry=r,
        )
        self.binds = Counter(
            "topospread_scheduler_binds",
            "Bind requests by outcome: bound, conflict (bound or deleted by someone else), "
            "error (forgotten and requeued).",
            ["result"],
            registry=r,
        )
        self.relists = Counter(
            "topospread_scheduler_informer_errors",
            "List and watch failures of the informers, by resource.",
            ["resource"],
            registry=r,
        )
        # The labelled children each bound pod updates, looked up once: ``labels()`` took
        # as long as the update itself (about 1.5 µs against 0.5-1 µs).
        self._scheduled_children: dict[str, tuple[Counter, Histogram]] = {}
        self._sli_children: dict[int, Histogram] = {}
        self._bind_children: dict[str, Counter] = {}
        self.set_state("starting")

    def pod_scheduled(
        self, profile: str, attempt_seconds: float, attempts: int, sli_seconds: float | None
    ) -> None:
        """A pod bound: ``PodScheduled`` and ``PodSchedulingAttempts`` of upstream's
        ``metrics`` package (the SLI only for a pod whose first attempt is known)."""
        children = self._scheduled_children.get(profile)
        if children is None:
            children = (
                self.schedule_attempts.labels("scheduled", profile),
                self.attempt_duration.labels("scheduled", profile),
            )
            self._scheduled_children[profile] = children
        attempts_counter, duration = children
        attempts_counter.inc()
        duration.observe(attempt_seconds)
        if sli_seconds is not None:
            bucket = min(attempts, 15)
            sli = self._sli_children.get(bucket)
            if sli is None:
                sli = self._sli_children[bucket] = self.sli_duration.labels(str(bucket))
            sli.observe(sli_seconds)
        self.pod_scheduling_attempts.observe(attempts)

    def bind_outcome(self, outcome: str) -> None:
        """One Binding's outcome: ``bound``, ``conflict`` or ``error``."""
        child = self._bind_children.get(outcome)
        if child is None:
            child = self._bind_children[outcome] = self.binds.labels(outcome)
        child.inc()

    def set_state(self, state: str) -> None:
        """Mark ``state`` as the current one."""
        for name in STATES:
            self.state.labels(name).set(1 if name == state else 0)

    def watch_queue(self, pending: Callable[[], dict[str, int]]) -> None:
        """Export ``scheduler_pending_pods`` from the queue's counts at scrape time."""
        self.registry.register(_PendingCollector(pending))

    def exposition(self) -> bytes:
        """The text format for ``/metrics``."""
        return generate_latest(self.registry)
