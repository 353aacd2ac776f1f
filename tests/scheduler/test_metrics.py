"""The metrics a bound pod and a Binding's outcome update, under kube-scheduler's names."""

from __future__ import annotations

from topospread.scheduler.metrics import SchedulerMetrics


def samples(metrics: SchedulerMetrics) -> dict[str, float]:
    text = metrics.exposition().decode()
    return {
        name: float(value)
        for name, _, value in (line.rpartition(" ") for line in text.splitlines())
        if name and not name.startswith("#")
    }


def test_a_bound_pod_counts_its_attempt_its_duration_and_its_sli_by_attempts():
    metrics = SchedulerMetrics()

    metrics.pod_scheduled("ts", 0.003, 1, 0.02)
    metrics.pod_scheduled("ts", 0.004, 20, 9.0)
    metrics.pod_scheduled("other", 0.005, 2, None)

    seen = samples(metrics)
    assert seen['scheduler_schedule_attempts_total{profile="ts",result="scheduled"}'] == 2
    assert seen['scheduler_schedule_attempts_total{profile="other",result="scheduled"}'] == 1
    duration = "scheduler_scheduling_attempt_duration_seconds"
    assert seen[f'{duration}_count{{profile="ts",result="scheduled"}}'] == 2
    assert seen[f'{duration}_sum{{profile="ts",result="scheduled"}}'] == 0.007
    sli = "scheduler_pod_scheduling_sli_duration_seconds"
    assert seen[f'{sli}_count{{attempts="1"}}'] == 1
    assert seen[f'{sli}_count{{attempts="15"}}'] == 1  # 15 and more share a label
    assert f'{sli}_count{{attempts="2"}}' not in seen  # no first attempt known
    assert seen["scheduler_pod_scheduling_attempts_count"] == 3
    assert seen["scheduler_pod_scheduling_attempts_sum"] == 23


def test_each_bindings_outcome_is_counted_by_result():
    metrics = SchedulerMetrics()

    for outcome in ("bound", "bound", "conflict", "error"):
        metrics.bind_outcome(outcome)

    seen = samples(metrics)
    assert seen['topospread_scheduler_binds_total{result="bound"}'] == 2
    assert seen['topospread_scheduler_binds_total{result="conflict"}'] == 1
    assert seen['topospread_scheduler_binds_total{result="error"}'] == 1
