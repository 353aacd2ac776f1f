"""``simulate --runs N``: one scenario over many draws, as distributions.

Which of several equally scored nodes kube-scheduler takes varies with the order its
parallel Filter workers finish, so a rollout or a zone failure has a
distribution of outcomes. Each run is the same scenario with ``tie_break="random"`` and
its own seed (``seed``, ``seed + 1``, ...): a run's result depends on the scenario and its
seed only, whichever executor runs it (one process, a process pool, Ray). This module is
the pure part: a run's summary, and the statistics over runs. Executors live at the edge
(:mod:`topospread.execution`).

Per step, over runs: pods Pending when the step settles, the largest skew per workload
constraint, evictions (taint, drain and preemption), nodes per node pool, and the time the
step took to settle (time to recover). Each as min, median, mean with a 95 % confidence
interval (normal approximation, 1.96 standard errors; exact when every run agrees) and
max, with a histogram of the values. The worst run (most pods Pending over all steps,
then the largest skew) is kept whole for its step-by-step story.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from topospread.engine.sim.result import SimulationResult

__all__ = ["Distribution", "RunSummary", "StepStats", "SweepReport", "summarize", "sweep_report"]


@dataclass(frozen=True, slots=True)
class StepSummary:
    """One step of one run, as counted for the distributions."""

    pending: int
    skew: Mapping[str, int]
    """``workload topologyKey`` -> skew."""
    evictions: int
    pools: Mapping[str, int]
    """Pool -> nodes (including those being provisioned)."""
    recover_seconds: int


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What the distributions read of one run (small: sent back by every worker)."""

    seed: int
    steps: tuple[StepSummary, ...]

    @property
    def badness(self) -> tuple[int, int]:
        """Pending pods over all steps, then the largest skew: the worst run has most."""
        pending = sum(s.pending for s in self.steps)
        skew = max((v for s in self.steps for v in s.skew.values()), default=0)
        return pending, skew


def summarize(seed: int, result: SimulationResult) -> RunSummary:
    """A run's summary (see the module docstring)."""
    steps = []
    for step in result.steps:
        skew: dict[str, int] = {}
        for spread in step.spread:
            for constraint in spread.constraints:
                key = f"{spread.workload} {constraint.topology_key}"
                skew[key] = max(skew.get(key, 0), constraint.skew)
        steps.append(
            StepSummary(
                pending=len(step.pending),
                skew=skew,
                evictions=sum(1 for e in step.events if e.kind in ("evicted", "preempted")),
                pools={p.pool: p.nodes + p.upcoming for p in step.pools},
                recover_seconds=step.settled - step.started,
            )
        )
    return RunSummary(seed, tuple(steps))


@dataclass(frozen=True, slots=True)
class Distribution:
    """A metric over runs."""

    values: tuple[int, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """95 % confidence interval of the mean (normal approximation)."""
        if len(self.values) < 2:
            return self.mean, self.mean
        half = 1.96 * statistics.stdev(self.values) / math.sqrt(len(self.values))
        return self.mean - half, self.mean + half

    def histogram(self) -> dict[int, int]:
        """Value -> runs, in value order."""
        counts: dict[int, int] = {}
        for value in sorted(self.values):
            counts[value] = counts.get(value, 0) + 1
        return counts

    def to_json(self) -> dict[str, object]:
        low, high = self.interval
        values = self.values or (0,)
        return {
            "min": min(values),
            "median": statistics.median(values),
            "mean": round(self.mean, 4),
            "ci95": [round(low, 4), round(high, 4)],
            "max": max(values),
            "histogram": {str(k): v for k, v in self.histogram().items()},
        }


@dataclass(frozen=True, slots=True)
class StepStats:
    """One step's distributions over runs."""

    index: int
    title: str
    pending: Distribution
    evictions: Distribution
    recover_seconds: Distribution
    skew: Mapping[str, Distribution] = field(default_factory=dict)
    pools: Mapping[str, Distribution] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.index,
            "title": self.title,
            "pending": self.pending.to_json(),
            "evictions": self.evictions.to_json(),
            "recoverSeconds": self.recover_seconds.to_json(),
            "skew": {k: v.to_json() for k, v in self.skew.items()},
            "pools": {k: v.to_json() for k, v in self.pools.items()},
        }


@dataclass(frozen=True, slots=True)
class SweepReport:
    """``simulate --runs N``: the distributions and the worst run."""

    scenario: str
    runs: int
    seed: int
    steps: tuple[StepStats, ...]
    worst: RunSummary
    worst_result: SimulationResult
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "scenario": self.scenario,
            "runs": self.runs,
            "seeds": [self.seed, self.seed + self.runs - 1],
            "steps": [s.to_json() for s in self.steps],
            "worstRun": {"seed": self.worst.seed, "result": self.worst_result.to_json()},
            "notes": list(self.notes),
        }


def sweep_report(
    scenario: str,
    seed: int,
    summaries: Sequence[RunSummary],
    titles: Sequence[tuple[int, str]],
    worst_result: SimulationResult,
    notes: Sequence[str] = (),
) -> SweepReport:
    """The distributions of ``summaries`` (in seed order) per step of ``titles``."""
    ordered = sorted(summaries, key=lambda s: s.seed)
    steps = []
    for position, (index, title) in enumerate(titles):
        at = [s.steps[position] for s in ordered if position < len(s.steps)]
        keys = sorted({k for s in at for k in s.skew})
        pools = sorted({k for s in at for k in s.pools})
        steps.append(
            StepStats(
                index,
                title,
                Distribution(tuple(s.pending for s in at)),
                Distribution(tuple(s.evictions for s in at)),
                Distribution(tuple(s.recover_seconds for s in at)),
                {k: Distribution(tuple(s.skew.get(k, 0) for s in at)) for k in keys},
                {k: Distribution(tuple(s.pools.get(k, 0) for s in at)) for k in pools},
            )
        )
    worst = max(ordered, key=lambda s: (s.badness, -s.seed))
    return SweepReport(
        scenario, len(ordered), seed, tuple(steps), worst, worst_result, tuple(notes)
    )
