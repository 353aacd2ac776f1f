"""``topospread rebalance`` on files: text, JSON, HTML, exit status, local storage read from
the YAML, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from topospread.cli.commands import cli

DATA = Path(__file__).parents[1] / "data" / "rebalance"


def _run(*args: str):
    return CliRunner().invoke(cli, ["rebalance", *args])


def test_text_plan_and_exit_zero() -> None:
    result = _run("--cluster", str(DATA / "scaled-down.yaml"))
    assert result.exit_code == 0, result.output
    assert "evict shop/web-" in result.output
    assert "Balanced with 1 eviction(s)" in result.output
    assert "proven minimal" in result.output


def test_json_and_html(tmp_path: Path) -> None:
    page = tmp_path / "plan.html"
    result = _run("--cluster", str(DATA / "min-domains.yaml"), "-o", "json", "--html", str(page))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["converged"] is True
    assert data["reason"] is None
    assert [e["step"] for e in data["evictions"]] == [1, 2]
    html = page.read_text()
    assert "Rebalance plan" in html
    assert "after the evictions (simulated)" in html
    assert "<svg" in html


def test_cannot_balance_exits_one_and_says_why() -> None:
    result = _run("--cluster", str(DATA / "no-capacity.yaml"))
    assert result.exit_code == 1
    assert "Cannot reach balance" in result.output
    assert "Insufficient cpu" in result.output
    assert "Nothing would be evicted" in result.output


def test_local_storage_is_read_from_the_files() -> None:
    refused = _run("--cluster", str(DATA / "local-storage.yaml"))
    assert refused.exit_code == 1
    assert "local storage" in refused.output
    allowed = _run("--cluster", str(DATA / "local-storage.yaml"), "--allow-local-storage")
    assert allowed.exit_code == 0, allowed.output


def test_usage_errors() -> None:
    result = _run("--cluster", str(DATA / "scaled-down.yaml"), "--apply")
    assert result.exit_code == 2
    missing = _run("--cluster", "/nonexistent.yaml")
    assert missing.exit_code == 2
    assert "Traceback" not in missing.output


def test_interval_needs_apply() -> None:
    result = _run("--interval", "60")
    assert result.exit_code == 2
    assert "--interval" in result.output


def test_lease_durations_client_go_refuses_are_a_usage_error() -> None:
    # Checked before any connection is made (no kubeconfig is read).
    result = _run("--apply", "--lease-duration", "5", "--renew-deadline", "10")
    assert result.exit_code == 2
    assert (
        "--lease-duration 5, --renew-deadline 10, --retry-period 2: "
        "leaseDuration must be greater than renewDeadline"
    ) in result.output
    assert "Traceback" not in result.output


def test_config_and_include_soft() -> None:
    result = _run(
        "--cluster",
        str(DATA / "defaults.yaml"),
        "--config",
        str(DATA / "defaults-config.yaml"),
    )
    assert result.exit_code == 0, result.output
    assert "Balanced with 1 eviction(s)" in result.output
    soft = _run("--cluster", str(DATA / "soft.yaml"))
    assert "--include-soft" in soft.output
    assert "Balanced" in _run("--cluster", str(DATA / "soft.yaml"), "--include-soft").output


def test_the_same_capture_given_twice_is_refused_one_line_per_object() -> None:
    capture = DATA / "min-domains.yaml"
    result = _run("--cluster", str(capture), "--cluster", str(capture))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "Evictions" not in result.output
    lines = result.output.splitlines()
    assert len(lines) == 14  # 6 Nodes, the Deployment, its ReplicaSet and 6 Pods
    assert lines[0] == (
        f"{capture}: document 1: duplicate Node node-a-1 (first in {capture}: document 1)"
    )
    assert lines[-1] == (
        f"{capture}: document 14: duplicate Pod shop/web-ca84d-p05 (first in {capture}: "
        "document 14)"
    )


def test_a_workload_that_is_not_in_scope_is_bad_input_as_audit_says() -> None:
    capture = str(DATA / "two-workloads.yaml")
    rebalance = _run("--cluster", capture, "deployment/nosuch")
    audit = CliRunner().invoke(cli, ["audit", "--cluster", capture, "deployment/nosuch"])
    assert rebalance.exit_code == audit.exit_code == 2
    assert rebalance.stderr == audit.stderr == "no workload 'deployment/nosuch' in scope\n"
    assert rebalance.stdout == ""


def test_a_workload_in_scope_is_still_planned_by_name() -> None:
    result = _run("--cluster", str(DATA / "two-workloads.yaml"), "deployment/web")
    assert result.exit_code == 0, result.output
    assert "evict shop/web-" in result.output
