"""The fixtures of tests/data/dynamicresources through ``topospread explain``: each node's
DynamicResources verdict and score as upstream gives them (tests/differential/
test_dynamic_resources.py checks the same fixtures against the oracle), and the one-line
refusal of what topospread does not decide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "dynamicresources"
UUR = "UnschedulableAndUnresolvable"
NO_FIT = (UUR, ("cannot allocate all claims",))
ELSEWHERE = (UUR, ("resourceclaim not available on the node",))
MISSING_KEY = (
    'running "DynamicResources" filter plugin: claim default/c: selector #0 on device '
    "gpu.example.com/{node}/gpu-0: CEL runtime error: no such key: vendor. consider using CEL "
    "optional chaining (.? followed by orValue()) or guarding the check with has() for "
    "optional fields"
)

# Per node: the normalized DynamicResources score of a feasible node, else (code, reasons).
Verdict = int | tuple[str, tuple[str, ...]]


def everywhere(reason: str) -> dict[str, Verdict]:
    return dict.fromkeys(("n1", "n2", "n3"), (UUR, (reason,)))


EXPECTED: dict[str, dict[str, Verdict]] = {
    "unallocated-fits": {"n1": 0, "n2": 0, "n3": NO_FIT},
    "cel-attribute": {"n1": NO_FIT, "n2": 0, "n3": NO_FIT},
    "cel-capacity": {"n1": 0, "n2": NO_FIT, "n3": NO_FIT},
    "cel-missing-key": {
        "n1": ("Error", (MISSING_KEY.format(node="n1"),)),
        "n2": ("Error", (MISSING_KEY.format(node="n2"),)),
        "n3": NO_FIT,
    },
    "count-2": {"n1": 0, "n2": NO_FIT, "n3": NO_FIT},
    "all-mode": {"n1": 0, "n2": 0, "n3": NO_FIT},
    "match-attribute": {"n1": 0, "n2": NO_FIT, "n3": NO_FIT},
    "distinct-attribute": {"n1": 0, "n2": NO_FIT, "n3": NO_FIT},
    "missing-claim": everywhere('could not find ResourceClaim "default/nope"'),
    "missing-class": everywhere("request gpu: device class nope does not exist"),
    "template-claim": {"n1": 0, "n2": 0, "n3": NO_FIT},
    "template-not-created": everywhere('pod "default/p": ResourceClaim not created yet'),
    "template-not-owner": everywhere(
        "ResourceClaim default/p-gpu-x was not created for Pod default/p (Pod is not owner)"
    ),
    "allocated-on-n2": {"n1": ELSEWHERE, "n2": 0, "n3": ELSEWHERE},
    "held-by-other-claim": {"n1": NO_FIT, "n2": NO_FIT, "n3": NO_FIT},
    # Raw scores 8 (the first subrequest, two devices) and 7 (the second), normalized.
    "first-available": {"n1": 100, "n2": 87, "n3": NO_FIT},
    "invalid-pool": {
        "n1": NO_FIT,
        "n2": NO_FIT,
        "n3": (UUR, ("invalid resource pools were encountered",)),
    },
    "shared-slice-node-selector": {"n1": NO_FIT, "n2": NO_FIT, "n3": 0},
}

REFUSED: dict[str, str] = {
    "unsupported-admin-access": "ResourceClaim default/c request gpu asks for admin access",
    "unsupported-device-taints": "device gpu-2 of ResourceSlice n1-gpus uses taints",
    "unsupported-device-taint-rule": "DeviceTaintRule broken-gpus may taint devices",
    "unsupported-extended-resource": (
        "the pod requests example.com/gpu, an extended resource provided by DeviceClass gpu "
        "(DRAExtendedResource)"
    ),
    "unsupported-cel": "uses lowerAscii",
}


def _explain(name: str, tmp_path: Path) -> tuple[int, str, str]:
    docs = [d for d in yaml.safe_load_all((FIXTURES / f"{name}.yaml").read_text("utf-8")) if d]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(docs[:-1]), "utf-8")
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(docs[-1]), "utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "explain",
            "--cluster",
            str(tmp_path / "cluster.yaml"),
            "--pod",
            str(tmp_path / "pod.yaml"),
            "--output",
            "json",
        ],
        catch_exceptions=False,
    )
    return result.exit_code, result.stdout, result.stderr


def test_every_fixture_has_an_expectation() -> None:
    assert sorted([*EXPECTED, *REFUSED]) == sorted(p.stem for p in FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_explain_reports_dynamic_resources(name: str, tmp_path: Path) -> None:
    code, stdout, stderr = _explain(name, tmp_path)
    assert code == 0, stderr
    got: dict[str, Verdict] = {}
    for node in json.loads(stdout)["nodes"]:
        verdict = node["filter"]
        if verdict["code"] == "Success":
            got[node["name"]] = node["scores"]["DynamicResources"]
        else:
            assert verdict["plugin"] == "DynamicResources"
            got[node["name"]] = (verdict["code"], tuple(verdict["reasons"]))
    assert got == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_is_not_decided_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    code, stdout, stderr = _explain(name, tmp_path)
    assert code == 2
    assert not stdout
    (line,) = stderr.strip().splitlines()
    assert "unsupported: cannot explain pod default/p" in line
    assert REFUSED[name] in line
