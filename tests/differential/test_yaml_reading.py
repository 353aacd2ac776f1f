"""YAML read as the oracle reads it (sigs.k8s.io/yaml), and fuzz cases both accept decided alike.

Each spelling is written unquoted where Kubernetes tools resolve it with goyaml.v2's rules
(a node label value, a label key, a quantity, an integer field); topospread and the oracle
must accept or refuse the same files, and where both accept, decide every node alike.
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.fuzz.cases import command_line, draw_case, write_case

from topospread.cli.commands import cli

NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: node-a
    labels: {{kubernetes.io/hostname: node-a, {key}: {value}}}
  status: {{allocatable: {{cpu: {cpu}, memory: 8Gi, pods: "110"}}}}
- apiVersion: v1
  kind: Node
  metadata:
    name: node-b
    labels: {{kubernetes.io/hostname: node-b, k: other}}
  status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{selector_key}: "{selector_value}"}}
  priority: {priority}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""

# (label key, label value, cpu, selector key, selector value, priority)
SPELLINGS = [
    ("k", "y", '"4"', "k", "true", 0),
    ("k", "'y'", '"4"', "k", "y", 0),
    ("k", "1:00", '"4"', "k", "1:00", 0),
    ("k", "1:00", '"4"', "k", "60", 0),
    ("k", "0o1", '"4"', "k", "1", 0),
    ("k", "~", '"4"', "k", "", 0),
    ("k", "2024-01-01", '"4"', "k", "2024-01-01", 0),
    ("k", "2023-02-29", '"4"', "k", "2023-02-29", 0),
    ("k", "!!str 1e0", '"4"', "k", "1e0", 0),
    ("k", "!!binary dmFsdWU=", '"4"', "k", "value", 0),
    ("k", "!!binary ***", '"4"', "k", "value", 0),
    ("k", "!!int abc", '"4"', "k", "abc", 0),
    ("k", "!!bool maybe", '"4"', "k", "maybe", 0),
    ("k", "!custom v", '"4"', "k", "v", 0),
    ("k", "1_000", '"4"', "k", "1000", 0),
    ("k", "on", '"4"', "k", "on", 0),
    ("k", ".inf", '"4"', "k", "x", 0),
    ("y", "v", '"4"', "true", "v", 0),
    ("1.5", "v", '"4"', "1.5", "v", 0),
    ("k", "v", "1e0", "k", "v", 0),
    ("k", "v", "0.5", "k", "v", 0),
    ("k", "v", "1e99999999", "k", "v", 0),
    ("k", "v", '"1e99999999"', "k", "v", 0),
    ("k", "v", "0x10", "k", "v", 0),
    ("k", "v", "012", "k", "v", 0),
    ("k", "v", "+4", "k", "v", 0),
    ("k", "v", '"4"', "k", "v", "1e0"),
    ("k", "v", '"4"', "k", "v", "0x10"),
    ("k", "v", '"4"', "k", "v", "1.5"),
    ("k", "v", '"4"', "k", "v", "99999999999"),
]


def _ours(cluster: Path, pod: Path) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(
        cli, ["explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json"]
    )
    assert "Traceback" not in result.output
    parsed = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, parsed, result.stderr


def _theirs(binary: Path, cluster: Path, pod: Path) -> tuple[int, dict | None]:
    run = subprocess.run(
        [str(binary), "explain", "--cluster", str(cluster), "--pod", str(pod)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return run.returncode, json.loads(run.stdout) if run.returncode == 0 else None


def _verdicts(result: dict) -> dict[str, object]:
    return {
        "nodes": {n["name"]: n["filter"]["code"] for n in result["nodes"]},
        "selected": result.get("selectedNode"),
    }


@pytest.mark.differential
@pytest.mark.parametrize(
    ("key", "value", "cpu", "selector_key", "selector_value", "priority"),
    SPELLINGS,
    ids=[f"{s[0]}={s[1]},cpu={s[2]},prio={s[5]}" for s in SPELLINGS],
)
def test_yaml_spellings_are_read_as_the_oracle_reads_them(
    oracle, tmp_path: Path, key, value, cpu, selector_key, selector_value, priority
) -> None:
    cluster, pod = tmp_path / "cluster.yaml", tmp_path / "pod.yaml"
    cluster.write_text(NODES.format(key=key, value=value, cpu=cpu), encoding="utf-8")
    pod.write_text(
        POD.format(selector_key=selector_key, selector_value=selector_value, priority=priority),
        encoding="utf-8",
    )
    our_code, ours, errors = _ours(cluster, pod)
    their_code, theirs = _theirs(oracle.binary, cluster, pod)
    if our_code != 0 and their_code == 0:
        # The oracle decodes without the API server's validation; topospread validates
        # too. Such a refusal must be a validation rule on the value as read, never a
        # reading error.
        assert "a valid label must be" in errors, errors
        return
    assert (our_code == 0) == (their_code == 0), (our_code, their_code, errors)
    if ours is not None and theirs is not None:
        assert _verdicts(ours) == _verdicts(theirs)


@pytest.mark.differential
def test_fuzz_cases_both_accept_are_decided_alike(oracle) -> None:
    compared = 0
    for number in range(1500):
        case = draw_case(number, random.Random(7_000_003 + number))
        if case.command != "explain" or case.special or "config.yaml" in case.files:
            continue
        with tempfile.TemporaryDirectory(prefix="fuzz-diff-") as tmp:
            folder = Path(tmp)
            write_case(case, folder)
            args = command_line(case, folder)
            cluster, pod = Path(args[2]), Path(args[4])
            _, ours, _ = _ours(cluster, pod)
            if ours is None:
                continue
            _, theirs = _theirs(oracle.binary, cluster, pod)
            if theirs is None:
                continue
            assert _verdicts(ours) == _verdicts(theirs), f"case {number} ({case.kind})"
            compared += 1
    assert compared >= 10
