"""Broken inputs through the real command line: never a traceback, a hang or a blow-up.

Every case runs in a forked child limited to 2 GiB of address space and 20 s; it must end
with status 0, 1 or 2, print no traceback, and on status 2 name the file on every line.
The default run (a few hundred cases) fits CI; ``TOPOSPREAD_FUZZ_N=100000`` with ``-m long``
is the long run recorded in ``tests/fuzz/RESULTS.md``.
"""

from __future__ import annotations

import collections
import json
import os
import sys

import pytest
from tests.fuzz.cases import run_many

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks with rlimits (Linux)")

SEED = 20261123


def _report(results) -> tuple[list[str], dict[str, object]]:
    failures = []
    kinds: collections.Counter[str] = collections.Counter()
    codes: collections.Counter[str] = collections.Counter()
    slowest = 0.0
    biggest = 0
    for outcome, problems in results:
        kinds[outcome.case.kind] += 1
        codes[str(outcome.exit_code if outcome.signal is None else f"signal {outcome.signal}")] += 1
        slowest = max(slowest, outcome.seconds)
        biggest = max(biggest, outcome.max_rss_bytes)
        if problems:
            failures.append(
                f"case {outcome.case.number} ({outcome.case.command}, {outcome.case.kind}): "
                f"{'; '.join(problems)}\n{outcome.stderr[-1500:]}"
            )
    summary = {
        "cases": len(results),
        "failures": len(failures),
        "tracebacks": sum("traceback" in "".join(p) for _, p in results),
        "crashes": sum(o.signal is not None and o.seconds <= 20 for o, _ in results),
        "over 20 s": sum(o.seconds > 20 for o, _ in results),
        "over 2 GiB": sum(o.max_rss_bytes > 2 * 1024**3 for o, _ in results),
        "exit codes": dict(codes),
        "kinds": dict(kinds),
        "slowest s": round(slowest, 2),
        "largest peak RSS MiB": round(biggest / 2**20),
    }
    return failures, summary


def test_broken_inputs_are_handled() -> None:
    count = int(os.environ.get("TOPOSPREAD_FUZZ_SHORT_N", "300"))
    failures, summary = _report(run_many(count, SEED))
    assert not failures, f"{summary}\n" + "\n\n".join(failures[:10])


@pytest.mark.long
def test_broken_inputs_long_run() -> None:
    count = int(os.environ.get("TOPOSPREAD_FUZZ_N", "100000"))
    seed = int(os.environ.get("TOPOSPREAD_FUZZ_SEED", str(SEED + 1)))
    # TOPOSPREAD_FUZZ_SHARD=k/n runs the k-th of n equal parts (k from 0), for parallel runs.
    shard, shards = (int(x) for x in os.environ.get("TOPOSPREAD_FUZZ_SHARD", "0/1").split("/"))
    size = -(-count // shards)
    start = shard * size
    failures, summary = _report(run_many(max(0, min(size, count - start)), seed, start))
    out = os.environ.get("TOPOSPREAD_FUZZ_REPORT")
    if out:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump({"seed": seed, **summary, "first failures": failures[:50]}, handle, indent=2)
    assert not failures, f"{summary}\n" + "\n\n".join(failures[:10])
