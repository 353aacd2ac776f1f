"""Objects the API server would refuse are refused before any planning: one line per
problem naming the file, the object and the field path, exit 2, no traceback (issue 22,
item 13; upstream's words: validateServicePort and IsValidPortNum/IsValidPortName,
v1.ContainerImage decoding, ValidatePodDisruptionBudgetSpec, validateExtenders)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli

DATA = Path(__file__).parents[1] / "data"
HOSTILE = DATA / "rebalance" / "hostile"


def _refusal(*args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["rebalance", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        (
            "node-images",
            [
                "document 1 (Node node-a-1): status.images[1]: Invalid value: "
                '"registry.k8s.io/etcd:3.5.21-0": expected object, got string',
                "document 1 (Node node-a-1): status.images[2].names: Invalid value: "
                '"registry.k8s.io/coredns/coredns:v1.12.0": expected array, got string',
                "document 1 (Node node-a-1): status.images[3].sizeBytes: Invalid value: "
                '"30.5MB": expected int64, got string',
            ],
        ),
        (
            "service-ports",
            [
                "document 32 (Service shop/web): spec.ports[1].port: Invalid value: 90901: "
                "must be between 1 and 65535, inclusive",
                "document 32 (Service shop/web): spec.ports[2].targetPort: Invalid value: "
                "70000: must be between 1 and 65535, inclusive",
                "document 32 (Service shop/web): spec.ports[3].targetPort: Invalid value: "
                '"grpc--port": must not contain consecutive hyphens',
            ],
        ),
        (
            "budget-policy",
            [
                "document 14 (PodDisruptionBudget shop/web): spec.unhealthyPodEvictionPolicy: "
                'Unsupported value: "IfHealthy": supported values: "AlwaysAllow", '
                '"IfHealthyBudget"',
            ],
        ),
    ],
)
def test_objects_the_api_server_refuses_are_refused_with_their_field_paths(
    name: str, lines: list[str]
) -> None:
    path = HOSTILE / f"{name}.yaml"
    assert _refusal("--cluster", str(path)) == [f"{path}: {line}" for line in lines]


def test_a_scheduler_configuration_with_a_negative_extender_weight_is_refused() -> None:
    config = DATA / "config" / "negative-extender-weight.yaml"
    assert _refusal(
        "--cluster", str(DATA / "rebalance" / "soft.yaml"), "--config", str(config)
    ) == [
        f"{config}: extenders[0].weight: Invalid value: -2: must have a positive weight "
        "applied to it"
    ]


def test_a_scheduler_configuration_with_a_negative_score_weight_is_refused() -> None:
    config = DATA / "config" / "negative-score-weight.yaml"
    assert _refusal(
        "--cluster", str(DATA / "rebalance" / "soft.yaml"), "--config", str(config)
    ) == [
        f"{config}: creating profile for scheduler name default-scheduler: score plugins: "
        "total score of Score plugins could overflow"
    ]
