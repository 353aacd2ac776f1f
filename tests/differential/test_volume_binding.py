"""VolumeBinding on the fixtures of tests/data/volumebinding, compared with the Go oracle
(upstream v1.37.1): filter codes, plugins and reasons, scores, totals, the selected node
and the FailedScheduling message must be identical.

Each fixture is a multi-document YAML file whose last document is the incoming pod. The
other volume plugins (VolumeRestrictions, VolumeZone, NodeVolumeLimits) are disabled in
both engines, so that the comparison is about VolumeBinding alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    upstream_result,
)

pytestmark = pytest.mark.differential

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "volumebinding"
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "disabled": [
                        {"name": "VolumeRestrictions"},
                        {"name": "VolumeZone"},
                        {"name": "NodeVolumeLimits"},
                    ]
                }
            },
        }
    ],
}


def fixture_scenario(path: Path, config: dict[str, Any] | None = CONFIG) -> Scenario:
    """The fixture's cluster and incoming pod (its last document)."""
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return Scenario(docs[:-1], docs[-1], config)


CASES = sorted(FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture_agrees_with_upstream(oracle: Any, path: Path) -> None:
    scenario = fixture_scenario(path)
    response = oracle.run([scenario.request(path.stem)])[path.stem]
    assert "result" in response, f"upstream rejected {path.name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    problems = differences(ours, theirs)
    assert not problems, "\n".join([f"{path.name}: topospread disagrees with upstream:", *problems])
