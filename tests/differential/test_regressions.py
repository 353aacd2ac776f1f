"""Every scenario topospread once got wrong still decides like upstream.

Each file in ``regressions/`` (format: ``regressions/README.md``) is run through
topospread and, when available, the Go oracle. The upstream outcome recorded in the file
is the expectation when there is no oracle, so the normal suite keeps checking them; with
the oracle, both the live answer and the recorded one must match topospread.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topospread.testing.scenarios import (
    differences,
    python_result,
    run_python,
    scenario_from_documents,
    upstream_result,
)

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(REGRESSIONS.glob("*.yaml"))


def load(path: Path):
    with path.open(encoding="utf-8") as handle:
        return scenario_from_documents(list(yaml.safe_load_all(handle)))


def test_there_are_regression_scenarios_to_check() -> None:
    assert FILES, f"no scenario files in {REGRESSIONS}"


@pytest.mark.differential
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_topospread_decides_the_saved_scenario_like_upstream(path: Path, oracle_or_none) -> None:
    scenario, recorded = load(path)
    assert recorded is not None, f"{path.name} records no upstream outcome"
    ours = python_result(run_python(scenario))
    problems = differences(ours, recorded)
    assert not problems, "\n".join(
        [f"{path.name}: topospread disagrees with the recorded upstream outcome:", *problems]
    )
    if oracle_or_none is not None:
        response = oracle_or_none.run([scenario.request(path.stem)])[path.stem]
        assert "result" in response, f"upstream rejected {path.name}: {response.get('error')}"
        live = upstream_result(response["result"])
        stale = differences(live, recorded)
        assert not stale, "\n".join(
            [f"{path.name}: the recorded outcome is stale; upstream now says:", *stale]
        )
