"""``simulate --runs N`` over executors (see :mod:`topospread.engine.sim.sweep`).

A run is ``simulate(scenario, seed, tie_break="random")`` summarized; its result depends on
the scenario and the seed only, so every executor gives the same report for the same seeds:

* ``workers=1``: in this process;
* a process pool (the default: every local core): the parsed scenario is in the parent
  before the pool forks, so workers share it (copy-on-write) instead of parsing or
  receiving it per run; each run sends back only its small summary;
* Ray (``ray_address``; ``local`` starts an instance in this process): the scenario is put
  in the object store once and every task reads it from there.

A run that raises, or whose worker dies, is retried once (in this process for the pool, by
Ray's own task retry otherwise); one that fails again is reported by seed, never dropped.
The worst run is simulated again here, whole, for its step-by-step story.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any

from topospread.engine.sim.scenario import Scenario
from topospread.engine.sim.simulator import simulate
from topospread.engine.sim.sweep import RunSummary, SweepReport, summarize, sweep_report
from topospread.errors import InputError, TopospreadError

__all__ = ["SweepError", "run_one", "run_sweep"]

Progress = Callable[[int, int], None]
"""Called with (runs done, runs in all) as runs complete."""

_SHARED: Scenario | None = None
"""The scenario the pool's workers inherit when they fork."""


class SweepError(TopospreadError):
    """Runs failed twice: their seeds and errors."""


def run_one(scenario: Scenario, seed: int) -> RunSummary:
    """One run: the scenario with random ties drawn from ``seed``, summarized."""
    return summarize(seed, simulate(scenario, seed, tie_break="random"))


def _run_shared(seed: int) -> RunSummary:
    assert _SHARED is not None, "the pool forks after the scenario is shared"
    return run_one(_SHARED, seed)


def run_sweep(
    scenario: Scenario,
    runs: int,
    seed: int = 0,
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
) -> SweepReport:
    """Run ``scenario`` ``runs`` times with seeds ``seed`` .. ``seed + runs - 1``."""
    if runs < 1:
        raise InputError("", message=f"--runs {runs}: must be at least 1")
    if workers is not None and workers < 1:
        raise InputError("", message=f"--workers {workers}: must be at least 1")
    seeds = list(range(seed, seed + runs))
    notes: list[str] = []
    if ray_address is not None:
        summaries = _on_ray(scenario, seeds, ray_address, progress, notes)
    else:
        count = workers if workers is not None else (os.cpu_count() or 1)
        count = min(count, runs)
        if count == 1:
            summaries = []
            for done, s in enumerate(seeds, 1):
                summaries.append(run_one(scenario, s))
                if progress is not None:
                    progress(done, runs)
        else:
            summaries = _on_pool(scenario, seeds, count, progress, notes)
        notes.insert(0, f"{runs} run(s) on {count} local worker process(es)")
    titles = [(step.index, step.title()) for step in scenario.steps]
    titles.insert(0, (-1, "initial cluster"))
    worst = max(summaries, key=lambda s: (s.badness, -s.seed))
    worst_result = simulate(scenario, worst.seed, tie_break="random")
    return sweep_report(scenario.name, seed, summaries, titles, worst_result, notes)


def _on_pool(
    scenario: Scenario, seeds: list[int], workers: int, progress: Progress | None, notes: list[str]
) -> list[RunSummary]:
    global _SHARED
    _SHARED = scenario
    done: dict[int, RunSummary] = {}
    failed: dict[int, str] = {}
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures: dict[Future[RunSummary], int] = {pool.submit(_run_shared, s): s for s in seeds}
            for future in as_completed(futures):
                s = futures[future]
                try:
                    done[s] = future.result()
                except Exception as exc:  # a worker's error or death: retried below
                    failed[s] = f"{type(exc).__name__}: {exc}"
                if progress is not None:
                    progress(len(done) + len(failed), len(seeds))
    finally:
        _SHARED = None
    _retry(scenario, failed, done, notes)
    return [done[s] for s in seeds]


def _retry(
    scenario: Scenario, failed: dict[int, str], done: dict[int, RunSummary], notes: list[str]
) -> None:
    lost: list[str] = []
    for s, why in sorted(failed.items()):
        try:
            done[s] = run_one(scenario, s)
            notes.append(f"run {s} failed ({why}) and succeeded when retried")
        except Exception as exc:
            lost.append(f"seed {s}: {why}; retried: {type(exc).__name__}: {exc}")
    if lost:
        raise SweepError("runs failed twice: " + "; ".join(lost))


def _check_reachable(address: str) -> None:
    # ray.init retries an unreachable GCS for minutes; a refused or silent port is said at
    # once, before any run starts.
    host_port = address.removeprefix("ray://")
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(
            "", message=f"--ray {address}: expected HOST:PORT, ray://HOST:PORT or local"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    except OSError as exc:
        raise InputError(
            "", message=f"--ray {address}: cannot connect to the Ray cluster: {exc.strerror or exc}"
        ) from None


def _on_ray(
    scenario: Scenario,
    seeds: list[int],
    address: str,
    progress: Progress | None,
    notes: list[str],
) -> list[RunSummary]:
    try:
        import ray as ray_module
    except ImportError:
        raise InputError("", message="--ray needs Ray: pip install 'topospread[ray]'") from None
    ray: Any = ray_module  # Ray's API is partly untyped
    if address != "local":
        _check_reachable(address)
    try:
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise InputError(
            "", message=f"--ray {address}: cannot connect to the Ray cluster: {exc}"
        ) from None
    try:
        nodes = len(ray.nodes())
        cpus = int(ray.cluster_resources().get("CPU", 0))
        shared = ray.put(scenario)
        task: Any = ray.remote(max_retries=1, retry_exceptions=True)(run_one)
        pending = {task.remote(shared, s): s for s in seeds}
        done: dict[int, RunSummary] = {}
        failed: dict[int, str] = {}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                s = pending.pop(ref)
                try:
                    done[s] = ray.get(ref)
                except Exception as exc:  # failed after Ray's own retry
                    failed[s] = f"{type(exc).__name__}: {exc}"
            if progress is not None:
                progress(len(done) + len(failed), len(seeds))
        if failed:
            lost = "; ".join(f"seed {s}: {why}" for s, why in sorted(failed.items()))
            raise SweepError(f"runs failed twice (Ray retried each once): {lost}")
        notes.insert(0, f"{len(seeds)} run(s) on Ray at {address} ({nodes} node(s), {cpus} CPU)")
        return [done[s] for s in seeds]
    finally:
        ray.shutdown()
