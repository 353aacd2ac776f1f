"""Scenario inputs an attacker would write: every one refused quickly, in one line each."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from topospread.engine.sim.scenario import expand_name_pattern, name_pattern_problem, parse_scenario
from topospread.errors import InputError
from topospread.io.loader import parse_documents
from topospread.io.scenarios import load_scenario

HEADER = """
apiVersion: topospread.dev/v1alpha1
kind: Scenario
metadata: {name: t}
"""


def errors_of(text: str) -> list[str]:
    started = time.process_time()
    with pytest.raises(InputError) as info:
        parse_scenario(parse_documents(text.encode(), "s.yaml")[0], "s.yaml")
    assert time.process_time() - started < 2
    return info.value.lines()


@pytest.mark.parametrize(
    "pattern",
    ["{i:>100000000}", "{zone.__class__.__mro__}", "{0}", "{}", "{zone!r}", "{", "}", "x" * 300],
)
def test_name_patterns_take_only_zone_and_i(pattern: str) -> None:
    assert name_pattern_problem(pattern) is not None


def test_name_patterns_expand_without_format() -> None:
    assert name_pattern_problem("n-{zone}-{i}-{{x}}") is None
    assert expand_name_pattern("n-{zone}-{i}-{{x}}", "a", 3) == "n-a-3-{x}"


def test_a_hostile_name_pattern_is_one_error() -> None:
    lines = errors_of(
        HEADER + 'cluster: {nodes: {zones: [a], perZone: 1, namePattern: "{i:>100000000}"}}'
    )
    assert lines == [
        's.yaml: cluster.nodes.namePattern: Invalid value: "{i:>100000000}": '
        "may only use {zone} and {i} placeholders"
    ]


def test_a_billion_nodes_are_refused_before_any_is_made() -> None:
    lines = errors_of(HEADER + "cluster: {nodes: {zones: [a, b], perZone: 1000000000}}")
    assert lines == [
        "s.yaml: cluster.nodes.perZone: Too many: 2000000000: "
        "must have at most 20,000 nodes (zones × perZone)"
    ]


def test_a_billion_replicas_are_refused() -> None:
    text = (
        HEADER
        + """cluster: {nodes: {zones: [a], perZone: 1}}
steps:
- apply:
    objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 1000000000
        selector: {matchLabels: {app: web}}
        template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}
- scale: {deployment: web, replicas: 999999999}
"""
    )
    lines = errors_of(text)
    assert any(
        "spec.replicas: Invalid value: 1000000000: must be at most 100,000" in x for x in lines
    )
    assert all(x.startswith("s.yaml: ") for x in lines)


def test_a_node_named_twice_is_a_duplicate() -> None:
    text = (
        HEADER
        + """cluster: {nodes: {zones: [a], perZone: 2}}
steps:
- removeNodes: {nodes: [node-a-1, node-a-1]}
"""
    )
    assert errors_of(text) == ['s.yaml: steps[0].removeNodes.nodes[1]: Duplicate value: "node-a-1"']


def test_file_references_stay_in_the_scenario_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n", encoding="utf-8")
    folder = tmp_path / "story"
    folder.mkdir()
    scenario = folder / "s.yaml"
    scenario.write_text(
        HEADER + "cluster: {nodes: {zones: [a], perZone: 1}}\nsteps:\n"
        "- apply: {file: ../secret.yaml}\n- apply: {file: /etc/passwd}\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        load_scenario(scenario)
    lines = info.value.lines()
    assert len(lines) == 2
    assert all("Forbidden: a file reference must stay inside" in line for line in lines)
    assert not any("hunter2" in line or "root:" in line for line in lines)


def test_a_very_long_scenario_name_on_the_command_line_is_one_usage_error() -> None:
    from click.testing import CliRunner

    from topospread.cli.commands import cli

    result = CliRunner().invoke(cli, ["simulate", "x" * 5000])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "more characters" in result.output
