"""topospread decides like kube-scheduler v1.37.1 on thousands of random scenarios.

Each scenario (a small cluster, an incoming pod and a scheduler configuration; see
:mod:`topospread.testing.scenarios`) goes through the Go oracle, which links the real
upstream scheduler, and through :func:`topospread.engine.explain.explain`. Every node's
filter code, plugin and reasons, its scores and total, the selected node, the tied nodes
and the FailedScheduling message must be identical.

Two streams of scenarios, each tested the same way:

* **engine profile** (``scenarios``): the node filters and PodTopologySpread as the only
  score (``oracle/testdata/engine-profile.yaml``), spreading in depth;
* **full profile** (``full_scenarios``): the real default profile (no configuration) and
  the default profile with plugin arguments and weights varied, on clusters with
  resources of every kind, host ports, images, PreferNoSchedule taints, preferred node
  affinity and inter-pod (anti-)affinity across labelled Namespaces.

* the fixed seed (``TOPOSPREAD_DIFF_SEED`` overrides it) draws ``DEFAULT_COUNT`` scenarios;
* a fresh random seed draws ``FRESH_COUNT`` more each run (``TOPOSPREAD_DIFF_FRESH_SEED``
  replays one); the seed is shown in the terminal summary and in any failure;
* ``TOPOSPREAD_DIFF_N`` above ``DEFAULT_COUNT`` adds a long run of that many scenarios
  per stream, marked ``long`` (``pytest -m long tests/differential -k many_scenarios``
  for the engine profile, ``-k many_full`` for the full profile).

A disagreement is saved to ``regressions/<hash>.yaml`` and the test fails showing the
first disagreeing node.
"""

from __future__ import annotations

import os
import random
import time

import pytest

DEFAULT_SEED = 20260401
DEFAULT_COUNT = 500
FRESH_COUNT = 300
LONG_COUNT = int(os.environ.get("TOPOSPREAD_DIFF_N", DEFAULT_COUNT))

pytestmark = pytest.mark.differential


FULL_COUNT = 500
FULL_FRESH_COUNT = 200


def agree_with_upstream(
    differential, oracle, seed: int, count: int, replay: str, report_run, *, full: bool = False
):
    started = time.monotonic()
    drawn = (differential.draw_full if full else differential.draw)(seed, count)
    comparison = differential.compare(oracle, drawn, seed)
    elapsed = time.monotonic() - started
    verdict = "agree" if not comparison.disagreements else "DISAGREE"
    if comparison.preemption_only:
        first = comparison.preemption_only[0]
        verdict += (
            f" ({len(comparison.preemption_only)} more differ only in the preemption text, "
            f"not compared yet; first #{first.index}: {' '.join(' '.join(first.lines).split())})"
        )
    stream = "full profile" if full else "engine profile"
    report_run(
        f"{stream}, seed {seed}: {count} scenarios {verdict} ({elapsed:.1f}s; replay: {replay}; "
        f"oracle: {oracle.description})"
    )
    assert not comparison.disagreements, comparison.report(replay)


def test_scenarios_from_the_fixed_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = f"TOPOSPREAD_DIFF_SEED={seed} pytest tests/differential -k 'fixed_seed and not full'"
    agree_with_upstream(differential, oracle, seed, DEFAULT_COUNT, replay, report_run)


def test_scenarios_from_a_fresh_seed_agree_with_upstream(differential, oracle, report_run) -> None:
    fresh = os.environ.get("TOPOSPREAD_DIFF_FRESH_SEED")
    seed = int(fresh) if fresh else random.SystemRandom().randrange(2**32)
    replay = (
        f"TOPOSPREAD_DIFF_FRESH_SEED={seed} pytest tests/differential -k 'fresh_seed and not full'"
    )
    agree_with_upstream(differential, oracle, seed, FRESH_COUNT, replay, report_run)


@pytest.mark.long
@pytest.mark.skipif(
    LONG_COUNT <= DEFAULT_COUNT,
    reason=f"set TOPOSPREAD_DIFF_N above {DEFAULT_COUNT} for the long run",
)
def test_many_scenarios_agree_with_upstream(differential, oracle, report_run) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = (
        f"TOPOSPREAD_DIFF_SEED={seed} TOPOSPREAD_DIFF_N={LONG_COUNT} "
        "pytest -m long tests/differential -k many_scenarios"
    )
    agree_with_upstream(differential, oracle, seed, LONG_COUNT, replay, report_run)


# -- the full default profile ------------------------------------------------------------------


def test_full_profile_scenarios_from_the_fixed_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = f"TOPOSPREAD_DIFF_SEED={seed} pytest tests/differential -k 'full and fixed_seed'"
    agree_with_upstream(differential, oracle, seed, FULL_COUNT, replay, report_run, full=True)


def test_full_profile_scenarios_from_a_fresh_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    fresh = os.environ.get("TOPOSPREAD_DIFF_FRESH_SEED")
    seed = int(fresh) if fresh else random.SystemRandom().randrange(2**32)
    replay = f"TOPOSPREAD_DIFF_FRESH_SEED={seed} pytest tests/differential -k 'full and fresh_seed'"
    agree_with_upstream(differential, oracle, seed, FULL_FRESH_COUNT, replay, report_run, full=True)


@pytest.mark.long
@pytest.mark.skipif(
    LONG_COUNT <= FULL_COUNT,
    reason=f"set TOPOSPREAD_DIFF_N above {FULL_COUNT} for the long run",
)
def test_many_full_profile_scenarios_agree_with_upstream(differential, oracle, report_run) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = (
        f"TOPOSPREAD_DIFF_SEED={seed} TOPOSPREAD_DIFF_N={LONG_COUNT} "
        "pytest -m long tests/differential -k many_full"
    )
    agree_with_upstream(differential, oracle, seed, LONG_COUNT, replay, report_run, full=True)
