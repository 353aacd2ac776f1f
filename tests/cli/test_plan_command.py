"""`topospread plan`: the fewest nodes per pool through failures, in text and JSON; the
issue's examples: fewer zones beat every zone, a zone outage wedges a default spread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "plan"


def plan(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli,
        ["plan", *(str(a) for a in args), "--node-pools", str(DATA / "pools.yaml")],
        catch_exceptions=False,
    )
    return result.exit_code, result.stdout, result.stderr


def test_fifteen_pods_fit_four_nodes_in_one_zone_and_six_over_three() -> None:
    code, out, err = plan(DATA / "web.yaml", "-o", "json")
    assert code == 0, err
    answer = json.loads(out)
    assert (answer["nodes"], len(answer["byZone"])) == (4, 1)
    assert (answer["lowerBound"], answer["provenOptimal"]) == (4, True)
    assert "Insufficient cpu" in answer["binding"]
    every = answer["allZones"]
    assert every["byZone"] == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert "uses 1 of the 3 zones" in answer["notes"][0]


def test_surviving_a_zone_removal_takes_two_nodes_in_each_zone() -> None:
    code, out, err = plan(DATA / "web.yaml", "--survive", "zone-removal", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["byZone"] == {"zone-a": 2, "zone-b": 2, "zone-c": 2}


def test_a_zone_outage_wedges_the_default_spread_whatever_the_node_count() -> None:
    code, out, err = plan(DATA / "web.yaml", "--survive", "zone-loss")
    assert code == 1, err
    assert "No plan: no node count survives a zone outage" in out
    assert "nodeTaintsPolicy: Honor" in out


def test_with_node_taints_policy_honor_the_outage_is_survived_in_every_run() -> None:
    code, out, err = plan(
        DATA / "web-honor.yaml", "--survive", "zone-loss", "--runs", "4", "-o", "json"
    )
    assert code == 0, err
    answer = json.loads(out)
    assert (answer["succeeded"], answer["runs"]) == (4, 4)
    assert answer["byZone"] == {"zone-a": 2, "zone-b": 2, "zone-c": 2}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--confidence", "1.5"), "--confidence 1.5: must be in (0, 1]"),
        (("--runs", "0"), "--runs 0: must be at least 1"),
        (("--survive", "meteor"), "--survive 'meteor': one of zone-loss"),
    ],
    ids=["confidence", "runs", "survive"],
)
def test_bad_options_are_one_line_and_exit_2_before_any_run(
    args: tuple[str, ...], words: str
) -> None:
    code, out, err = plan(DATA / "web.yaml", *args)
    assert (code, out) == (2, "")
    assert words in err


@pytest.mark.parametrize(
    ("survive", "by_zone"),
    [
        ((), {"test-zone-a": 3}),
        (
            ("--survive", "zone-removal"),
            {"test-zone-a": 1, "test-zone-b": 1, "test-zone-c": 1, "test-zone-d": 1},
        ),
    ],
    ids=["no-failure", "zone-removal"],
)
def test_a_karpenter_nodepool_grows_into_other_zones_only_when_a_zone_may_go(
    survive: tuple[str, ...], by_zone: dict[str, int]
) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "plan",
            str(DATA / "inflate.yaml"),
            "--node-pools",
            str(DATA / "karpenter-nodepool.yaml"),
            "--instance-types",
            str(DATA.parent / "autoscaling" / "instance-types.json"),
            *survive,
            "-o",
            "json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["byZone"] == by_zone


def test_a_workload_of_more_replicas_than_plan_places_is_refused_at_once(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_text((DATA / "web.yaml").read_text().replace("replicas: 15", "replicas: 100000000"))
    code, out, err = plan(huge)
    assert (code, out) == (2, "")
    assert err.strip().endswith(
        "spec.replicas: Invalid value: 100000000: must be at most 100,000 "
        "(plan places every replica)"
    )
    assert len(err.strip().splitlines()) == 1
