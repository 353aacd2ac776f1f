"""Which cores a process and its write and watch processes run on.

A CPython process runs Python code on one core at a time (the GIL). Left to the kernel,
its threads spread over every core the host has, and each hand-off of the GIL between
them is a wake-up on another core. On a 16-core host (a Firecracker VM, BENCHMARKS.md)
that cost more than the work: 5,000 pods on 5,000 Nodes took 12.8 s and 28.6 CPU-s with
the scheduler and its write process free to roam, and 8.4 s and 14.7 CPU-s with each
kept to a core of its own. So on hosts with cores to spare, each process keeps to one.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = [
    "CorePlan",
    "default_write_processes",
    "pin_child",
    "pin_this_process",
    "plan_cores",
    "usable_cores",
]

MIN_CORES_TO_PIN = 4
"""Below this the API server, etcd and the rest need the cores as much as we do: nothing
is pinned (on 2 cores pinning was measured no faster, BENCHMARKS.md)."""


@dataclass(frozen=True, slots=True)
class CorePlan:
    """The core of the scheduling process, one per write process, and the watch
    process's."""

    scheduler: int
    write_processes: tuple[int, ...]
    watch_process: int | None = None


def default_write_processes(cores: int) -> int:
    """How many write processes send the scheduler's writes on a host where it may use
    ``cores`` cores.

    * none on one core: a child only adds a copy there;
    * one from 2 up: on 2 cores shared with the API server and etcd, one child made the
      run faster end to end than none (BENCHMARKS.md). Since a child sends over HTTP/2
      from one thread (``client/multiplexed.py``) it takes about half the scheduler
      process's CPU per pod (1.7-1.9 against 3.3-3.5 CPU-s for 5,000 pods, 2 cores), so
      one keeps up with the process that feeds it. (With a thread per write through
      urllib3 a child took 0.82-0.94 of its core on a 16-core host, and the default was
      two from 8 cores then; each more child is one more answer-reading thread in the
      scheduler process.)
    """
    return 1 if cores >= 2 else 0


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity on Linux; elsewhere, all of them)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return sorted(affinity(0))
    return list(range(os.cpu_count() or 1))


def plan_cores(
    cores: Sequence[int], write_processes: int, *, watch_process: bool = False
) -> CorePlan | None:
    """One core each, the highest first (interrupts favour the lowest): the scheduler,
    its write processes, then its watch process; None when the process may use fewer
    than :data:`MIN_CORES_TO_PIN` cores or fewer than one per process plus one to
    spare."""
    ordered = sorted(cores, reverse=True)
    processes = 1 + write_processes + int(watch_process)
    if len(ordered) < max(MIN_CORES_TO_PIN, processes + 1):
        return None
    return CorePlan(
        ordered[0],
        tuple(ordered[1 : 1 + write_processes]),
        ordered[1 + write_processes] if watch_process else None,
    )


def pin_this_process(cores: Collection[int]) -> bool:
    """Keep every thread of this process, and the threads and processes it starts later,
    to ``cores``; False where the platform cannot (no ``sched_setaffinity``)."""
    set_affinity = getattr(os, "sched_setaffinity", None)
    if set_affinity is None:
        return False
    try:
        threads = [int(task) for task in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        try:
            set_affinity(thread, set(cores))
        except OSError:  # a thread that just ended
            continue
    return True


def pin_child(pid: int, cores: Collection[int]) -> bool:
    """Keep a child process just started to ``cores`` from now on; False where the
    platform cannot, or the child is gone.

    A child inherits this process's core. Until it pins itself, its interpreter's
    start-up and its module's imports (0.21-0.23 s on the 2-core machine) would run on
    the scheduling process's core: for a write process, while the informers read and
    decode their first lists; for the watch process, while the first pods are scheduled."""
    set_affinity = getattr(os, "sched_setaffinity", None)
    if set_affinity is None:
        return False
    try:
        set_affinity(pid, set(cores))
    except OSError:
        return False
    return True
