"""The fixtures of tests/data/nodevolumelimits through ``topospread explain``: each file holds a
cluster, the incoming pod, maybe a configuration, and upstream's recorded answer
(tests/differential/test_volume_plugins.py re-asks the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.testing.scenarios import differences, scenario_from_documents, upstream_result

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "nodevolumelimits"
CASES = sorted(FIXTURES.glob("*.yaml"))


def test_there_are_fixtures() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_explain_answers_as_upstream_did(path: Path, tmp_path: Path) -> None:
    scenario, recorded = scenario_from_documents(list(yaml.safe_load_all(path.read_text())))
    assert recorded is not None
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(scenario.cluster))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(scenario.pod))
    args = ["explain", "--cluster", str(tmp_path / "cluster.yaml")]
    args += ["--pod", str(tmp_path / "pod.yaml"), "--output", "json"]
    if scenario.config is not None:
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(scenario.config))
        args += ["--config", str(tmp_path / "config.yaml")]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    ours = upstream_result(json.loads(result.stdout))
    problems = differences(ours, recorded)
    assert not problems, "\n".join([f"{path.name}: explain disagrees with upstream:", *problems])
