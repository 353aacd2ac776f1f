"""The wide stream (issue 12, item 6) decides like kube-scheduler v1.37.1.

Scenarios of :mod:`topospread.testing.wide` — clusters of 1 to 500 nodes, up to 8 spread
constraints over odd keys and values, many Namespaces, PodDisruptionBudgets, start times,
priorities and ``preemptionPolicy: Never``, nominated pending pods, several profiles with
disabled plugins, weights and ``percentageOfNodesToScore``, and in some DynamicResources
(ResourceSlices, DeviceClasses, claims allocated, in use, by name and from templates) —
go through the Go oracle and ``explain`` and are compared like the other streams.

Where upstream itself is random (a random offset into more than ``numCandidates``
preemption candidates, candidates tied on every criterion, the order its parallel dry run
finishes in), a disagreeing scenario is run through the oracle again with other seeds
(``oracle batch --seed``); it counts as upstream randomness only when the oracle's own
answers differ between runs in every field that disagrees. Nothing is tolerated otherwise.

* ``WIDE_COUNT`` scenarios of the fixed seed and ``WIDE_FRESH_COUNT`` of a fresh seed on
  every run (the fresh seed is in the terminal summary; ``TOPOSPREAD_DIFF_FRESH_SEED``
  replays it);
* ``TOPOSPREAD_DIFF_N`` above ``WIDE_COUNT`` adds the long run (``pytest -m long
  tests/differential -k many_wide``), compared in chunks of ``CHUNK`` so that memory stays
  flat; ``TOPOSPREAD_DIFF_START`` skips the first scenarios (to resume), and
  ``TOPOSPREAD_DIFF_PROGRESS=FILE`` appends one JSON line per chunk.
"""

from __future__ import annotations

import json
import os
import random
import resource
import time
from collections import Counter

import pytest

pytestmark = pytest.mark.differential

DEFAULT_SEED = 20260401
WIDE_COUNT = 150
WIDE_FRESH_COUNT = 30
CHUNK = 500
LONG_COUNT = int(os.environ.get("TOPOSPREAD_DIFF_N", WIDE_COUNT))


def _summary(comparison, tags: Counter[str], count: int) -> str:
    parts = [f"{count - len(comparison.disagreements) - len(comparison.upstream_random)} agree"]
    if comparison.upstream_random:
        parts.append(f"{len(comparison.upstream_random)} differ only where upstream is random")
    if comparison.disagreements:
        parts.append(f"{len(comparison.disagreements)} DISAGREE")
    reached = ", ".join(f"{tag} {n}" for tag, n in sorted(tags.items()))
    return "; ".join(parts) + f" (reached: {reached})"


def wide_agree(
    differential, oracle, seed: int, count: int, replay: str, report_run
) -> Counter[str]:
    started = time.monotonic()
    drawn = differential.draw_wide(seed, count)
    comparison = differential.compare(oracle, drawn, seed, rerun=True)
    tags = Counter(tag for scenario in drawn for tag in scenario.tags)
    report_run(
        f"wide, seed {seed}: {count} scenarios: {_summary(comparison, tags, count)} "
        f"({time.monotonic() - started:.1f}s; replay: {replay})"
    )
    assert not comparison.disagreements, comparison.report(replay)
    return tags


def test_wide_scenarios_from_the_fixed_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = f"TOPOSPREAD_DIFF_SEED={seed} pytest tests/differential -k 'wide and fixed_seed'"
    tags = wide_agree(differential, oracle, seed, WIDE_COUNT, replay, report_run)
    # The stream still reaches DynamicResources (about 15 % of the scenarios).
    assert tags["dra"] >= WIDE_COUNT // 20, f"only {tags['dra']} DynamicResources scenarios"


def test_wide_scenarios_from_a_fresh_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    fresh = os.environ.get("TOPOSPREAD_DIFF_FRESH_SEED")
    seed = int(fresh) if fresh else random.SystemRandom().randrange(2**32)
    replay = f"TOPOSPREAD_DIFF_FRESH_SEED={seed} pytest tests/differential -k 'wide and fresh_seed'"
    wide_agree(differential, oracle, seed, WIDE_FRESH_COUNT, replay, report_run)


@pytest.mark.long
@pytest.mark.skipif(
    LONG_COUNT <= WIDE_COUNT,
    reason=f"set TOPOSPREAD_DIFF_N above {WIDE_COUNT} for the long run",
)
def test_many_wide_scenarios_agree_with_upstream(differential, oracle, report_run) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    first = int(os.environ.get("TOPOSPREAD_DIFF_START", 0))
    progress = os.environ.get("TOPOSPREAD_DIFF_PROGRESS")
    replay = (
        f"TOPOSPREAD_DIFF_SEED={seed} TOPOSPREAD_DIFF_N={LONG_COUNT} "
        "pytest -m long tests/differential -k many_wide"
    )
    started = time.monotonic()
    cpu_started = time.process_time()
    tags: Counter[str] = Counter()
    disagreements = []
    upstream_random = []
    reruns = 0
    for start in range(first, LONG_COUNT, CHUNK):
        count = min(CHUNK, LONG_COUNT - start)
        drawn = differential.draw_wide(seed, count, start)
        saved = sum(d.saved is not None for d in disagreements)
        comparison = differential.compare(
            oracle, drawn, seed, rerun=True, start=start, save=max(0, 5 - saved)
        )
        tags.update(tag for scenario in drawn for tag in scenario.tags)
        disagreements += comparison.disagreements
        upstream_random += comparison.upstream_random
        reruns += comparison.reruns
        if progress:
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            with open(progress, "a", encoding="utf-8") as out:
                line = {
                    "seed": seed,
                    "done": start + count,
                    "wall": round(time.monotonic() - started, 1),
                    "cpu": round(time.process_time() - cpu_started, 1),
                    "oracle_cpu": round(children.ru_utime + children.ru_stime, 1),
                    "disagree": [d.index for d in disagreements],
                    "upstream_random": [d.index for d in upstream_random],
                    "reruns": reruns,
                    "tags": dict(sorted(tags.items())),
                }
                out.write(json.dumps(line) + "\n")
    total = LONG_COUNT - first
    agree = total - len(disagreements) - len(upstream_random)
    report_run(
        f"wide, seed {seed}: scenarios {first}..{LONG_COUNT - 1}: {agree} agree, "
        f"{len(upstream_random)} differ only where upstream is random "
        f"(#{', #'.join(str(d.index) for d in upstream_random[:20])}), "
        f"{len(disagreements)} disagree; {reruns} re-run; "
        f"reached: {dict(sorted(tags.items()))} "
        f"({time.monotonic() - started:.0f}s; replay: {replay})"
    )
    assert not disagreements, "\n".join(
        [
            f"{len(disagreements)} of {total} wide scenarios (seed {seed}) disagree with upstream: "
            + ", ".join(f"#{d.index}" for d in disagreements[:50]),
            *disagreements[0].lines,
        ]
    )
