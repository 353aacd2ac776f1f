"""Which cores the scheduler process and its write processes keep to."""

from __future__ import annotations

import os
import threading

import pytest

from topospread.client.cpus import (
    CorePlan,
    default_write_processes,
    pin_this_process,
    plan_cores,
    usable_cores,
)


def test_on_sixteen_cores_the_scheduler_takes_the_highest_and_each_writer_the_next():
    assert plan_cores(range(16), 2) == CorePlan(scheduler=15, write_processes=(14, 13))


def test_the_cores_a_process_may_use_are_planned_not_the_hosts():
    assert plan_cores([3, 9, 5, 7], 1) == CorePlan(scheduler=9, write_processes=(7,))


@pytest.mark.parametrize(
    ("cores", "writers"),
    [
        (range(2), 1),  # measured: on 2 cores pinning gained nothing
        (range(3), 0),
        (range(4), 3),  # no core left for anything else
    ],
)
def test_nothing_is_pinned_on_few_cores(cores, writers):
    assert plan_cores(cores, writers) is None


@pytest.mark.parametrize(("cores", "writers"), [(1, 0), (2, 1), (7, 1), (8, 1), (16, 1), (64, 1)])
def test_one_write_process_wherever_the_host_has_a_second_core(cores, writers):
    assert default_write_processes(cores) == writers


def test_two_write_processes_asked_for_on_sixteen_cores_each_keep_to_a_core_of_their_own():
    plan = plan_cores(range(16), 2)
    assert plan is not None
    assert len({plan.scheduler, *plan.write_processes}) == 3


def test_a_scheduler_without_write_processes_still_keeps_to_one_core():
    assert plan_cores(range(8), 0) == CorePlan(scheduler=7, write_processes=())


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux affinity")
def test_pinning_covers_running_threads_and_the_ones_started_later():
    before = os.sched_getaffinity(0)
    core = max(usable_cores())
    started = threading.Event()
    release = threading.Event()
    seen: dict[str, set[int]] = {}

    def early() -> None:
        started.set()
        release.wait(10)
        seen["early"] = os.sched_getaffinity(0)

    def late() -> None:
        seen["late"] = os.sched_getaffinity(0)

    runner = threading.Thread(target=early)
    runner.start()
    started.wait(10)
    try:
        assert pin_this_process({core})
        later = threading.Thread(target=late)
        later.start()
        later.join(10)
        release.set()
        runner.join(10)
        assert seen == {"early": {core}, "late": {core}}
    finally:
        release.set()
        for task in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(task), before)
            except OSError:
                continue


def test_a_watch_process_takes_the_core_after_the_write_processes():
    assert plan_cores(range(16), 1, watch_process=True) == CorePlan(
        scheduler=15, write_processes=(14,), watch_process=13
    )


def test_a_watch_process_still_leaves_a_core_to_spare():
    assert plan_cores(range(4), 1, watch_process=True) == CorePlan(3, (2,), 1)
    assert plan_cores(range(4), 2, watch_process=True) is None
