"""topospread decides like kube-scheduler v1.37.1 on thousands of random scenarios.

Each scenario (a small cluster, an incoming pod and a scheduler configuration; see
:mod:`topospread.testing.scenarios`) goes through the Go oracle, which links the real
upstream scheduler, and through :func:`topospread.engine.explain.explain`. Every node's
filter code, plugin and reasons, its scores and total, the selected node, the tied nodes
and the FailedScheduling message must be identical.

* the fixed seed (``TOPOSPREAD_DIFF_SEED`` overrides it) draws ``DEFAULT_COUNT`` scenarios;
* a fresh random seed draws ``FRESH_COUNT`` more each run (``TOPOSPREAD_DIFF_FRESH_SEED``
  replays one); the seed is shown in the terminal summary and in any failure;
* ``TOPOSPREAD_DIFF_N`` above ``DEFAULT_COUNT`` adds a long run of that many scenarios,
  marked ``long`` (``pytest -m long tests/differential``).

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


def agree_with_upstream(differential, oracle, seed: int, count: int, replay: str, report_run):
    started = time.monotonic()
    drawn = differential.draw(seed, count)
    comparison = differential.compare(oracle, drawn, seed)
    elapsed = time.monotonic() - started
    verdict = "agree" if not comparison.disagreements else "DISAGREE"
    report_run(
        f"seed {seed}: {count} scenarios {verdict} ({elapsed:.1f}s; replay: {replay}; "
        f"oracle: {oracle.description})"
    )
    assert not comparison.disagreements, comparison.report(replay)


def test_scenarios_from_the_fixed_seed_agree_with_upstream(
    differential, oracle, report_run
) -> None:
    seed = int(os.environ.get("TOPOSPREAD_DIFF_SEED", DEFAULT_SEED))
    replay = f"TOPOSPREAD_DIFF_SEED={seed} pytest tests/differential -k fixed_seed"
    agree_with_upstream(differential, oracle, seed, DEFAULT_COUNT, replay, report_run)


def test_scenarios_from_a_fresh_seed_agree_with_upstream(differential, oracle, report_run) -> None:
    fresh = os.environ.get("TOPOSPREAD_DIFF_FRESH_SEED")
    seed = int(fresh) if fresh else random.SystemRandom().randrange(2**32)
    replay = f"TOPOSPREAD_DIFF_FRESH_SEED={seed} pytest tests/differential -k fresh_seed"
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
        "pytest -m long tests/differential"
    )
    agree_with_upstream(differential, oracle, seed, LONG_COUNT, replay, report_run)
