"""``topospread simulate`` end to end: bundled scenarios against golden output, JSON, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "src" / "topospread" / "examples" / "scenarios"
UPDATE_GOLDEN = os.environ.get("TOPOSPREAD_UPDATE_GOLDEN") == "1"
NAMES = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("name", NAMES)
def test_each_bundled_scenario_prints_its_golden_output(name: str) -> None:
    code, out, err = run("simulate", name)
    assert code == 0, err
    golden = SCENARIOS / f"{name}.out"
    if UPDATE_GOLDEN:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_without_an_argument_the_story_runs() -> None:
    assert run("simulate")[1] == run("simulate", "story")[1]


def test_list_names_every_bundled_scenario() -> None:
    code, out, _ = run("simulate", "--list")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == NAMES
    # Each with its description's first sentence, whole however the YAML wraps it.
    assert all(line.rstrip().endswith((".", "!", "?")) for line in out.splitlines())


def test_json_output_has_the_documented_shape_and_is_deterministic() -> None:
    code, out, _ = run("simulate", "story", "--output", "json", "--seed", "5")
    assert code == 0
    document = json.loads(out)
    assert set(document) == {"scenario", "description", "seed", "kubernetesVersion", "steps"}
    assert document["seed"] == 5
    first = document["steps"][1]
    assert set(first) == {
        "index",
        "kind",
        "title",
        "started",
        "settled",
        "schedulingAttempts",
        "placements",
        "events",
        "pending",
        "layout",
        "spread",
        "notes",
    }
    assert len(first["placements"]) == 9
    spread = first["spread"][0]
    assert spread["workload"] == "Deployment/default/web"
    assert spread["constraints"][0]["domainCounts"] == {"zone-a": 3, "zone-b": 3, "zone-c": 3}
    assert run("simulate", "story", "--output", "json", "--seed", "5")[1] == out


def test_a_scenario_file_with_an_error_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "story.yaml"
    text = (SCENARIOS / "story.yaml").read_text(encoding="utf-8")
    path.write_text(text + "- scale: {deployment: web, replicas: -1}\n", encoding="utf-8")
    code, out, err = run("simulate", str(path))
    assert code == 2
    assert out == ""
    assert err == (
        f"{path}: steps[4].scale.replicas: Invalid value: -1: must be greater than or equal to 0\n"
    )


def test_a_misspelt_field_of_an_applied_object_exits_2_naming_it_as_lint_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "scale-down-imbalance.yaml"
    text = (SCENARIOS / "scale-down-imbalance.yaml").read_text(encoding="utf-8")
    misspelt = text.replace(
        "whenUnsatisfiable: DoNotSchedule\n",
        "whenUnsatisfiable: DoNotSchedule\n              NodeTaintsPolicy: Honor\n",
    )
    assert misspelt != text
    path.write_text(misspelt, encoding="utf-8")
    code, out, err = run("simulate", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"{path}: steps[0].apply.objects[0]: Deployment api: strict decoding error: unknown "
        'field "spec.template.spec.topologySpreadConstraints[0].NodeTaintsPolicy"\n'
    )


def test_an_unknown_bundled_name_is_a_usage_error() -> None:
    code, _, err = run("simulate", "nope")
    assert code == 2
    assert 'no scenario file or bundled scenario "nope"' in err


def test_the_autoscaling_story_reports_pool_sizes_per_step_in_json_and_html(
    tmp_path: Path,
) -> None:
    page = tmp_path / "story.html"
    code, out, _ = run("simulate", "autoscaling-story", "--output", "json", "--html", str(page))
    assert code == 0
    steps = json.loads(out)["steps"]
    sizes = [{p["pool"]: p["nodes"] for p in s["pools"]} for s in steps]
    assert [s["zone-c"] for s in sizes] == [0, 1, 0, 0, 1, 1]
    assert steps[1]["pools"][2] == {
        "pool": "zone-c", "nodes": 1, "upcoming": 0, "minSize": 0, "maxSize": 3,
        "byZone": {"zone-c": 1},
    }  # fmt: skip
    html = page.read_text(encoding="utf-8")
    assert html.count("<h3>Node pools</h3>") == len(steps)
    assert "scale-up: pool zone-c +1 node(s)" in html


def test_scenarios_without_pools_have_no_pools_key() -> None:
    steps = json.loads(run("simulate", "story", "--output", "json")[1])["steps"]
    assert all("pools" not in s for s in steps)


DATA = ROOT / "tests" / "data" / "scenarios"


def test_a_workload_of_a_scheduler_no_profile_serves_has_its_own_constraints() -> None:
    code, out, err = run("simulate", str(DATA / "unserved-scheduler.yaml"), "--output", "json")
    assert code == 0, err
    (batch,) = json.loads(out)["steps"][0]["spread"]
    assert (batch["workload"], batch["pending"]) == ("Deployment/shop/batch", 3)
    assert batch["constraintSource"] == "pod"


def test_a_spread_on_a_key_no_node_carries_says_the_pods_cannot_schedule() -> None:
    code, out, err = run("simulate", str(DATA / "key-on-no-node.yaml"))
    assert code == 0, err
    assert "pods cannot schedule" in out
    assert "minDomains" not in out
    assert " ok" not in out
    code, out, err = run("simulate", str(DATA / "key-on-no-node.yaml"), "--output", "json")
    (web,) = json.loads(out)["steps"][0]["spread"]
    assert web["constraints"][0]["minDomainsShortfall"] == 0


def test_json_names_a_workload_the_same_way_in_layout_pending_and_spread() -> None:
    code, out, _ = run("simulate", "min-domains", "--output", "json")
    assert code == 0
    for step in json.loads(out)["steps"]:
        spread = {w["workload"] for w in step["spread"]}
        placed = {p["workload"] for n in step["layout"] for p in n["pods"] if p["workload"]}
        pending = {p["workload"] for p in step["pending"] if p["workload"]}
        assert placed | pending <= spread, (placed, pending, spread)
        assert all(w.count("/") == 2 for w in placed | pending)
