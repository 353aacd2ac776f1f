"""``topospread audit`` end to end: exit codes as a CI gate, JSON, HTML, scoping, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from topospread.cli.commands import cli

ROOT = Path(__file__).resolve().parents[2]
AUDIT = ROOT / "tests" / "data" / "audit"
HARD_DEFAULTS = ROOT / "tests" / "data" / "lint" / "hard-defaults-config.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def audit_json(*args: str) -> tuple[int, dict]:
    code, out, err = run("audit", *args, "--output", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_a_healthy_cluster_exits_0_and_says_so() -> None:
    code, out, _ = run("audit", "--cluster", str(AUDIT / "balanced.yaml"))
    assert code == 0
    assert "Deployment/shop/web" in out
    assert "zone-a=2, zone-b=2, zone-c=1" in out
    assert "No findings." in out


def test_a_skewed_deployment_fails_the_gate_with_exit_1() -> None:
    code, out, _ = run("audit", "--cluster", str(AUDIT / "skewed.yaml"))
    assert code == 1
    assert "skew-over-max" in out
    assert "over maxSkew" in out


def test_fail_on_none_never_fails_and_fail_on_warning_fails_on_warnings() -> None:
    skewed, missing_key = str(AUDIT / "skewed.yaml"), str(AUDIT / "missing-key.yaml")
    assert run("audit", "--cluster", skewed, "--fail-on", "none")[0] == 0
    assert run("audit", "--cluster", missing_key)[0] == 0
    assert run("audit", "--cluster", missing_key, "--fail-on", "warning")[0] == 1


def test_disabling_the_rule_clears_the_gate() -> None:
    code, _, _ = run("audit", "--cluster", str(AUDIT / "skewed.yaml"), "--disable", "skew-over-max")
    assert code == 0


def test_json_has_the_issues_shape() -> None:
    code, document = audit_json("--cluster", str(AUDIT / "skewed.yaml"))
    assert code == 1
    (workload,) = document["workloads"]
    assert (workload["kind"], workload["namespace"], workload["name"]) == (
        "Deployment",
        "shop",
        "web",
    )
    assert (workload["replicas"], workload["pending"], workload["constraintSource"]) == (
        5,
        0,
        "pod",
    )
    (constraint,) = workload["constraints"]
    assert constraint["domainCounts"] == {"zone-a": 3, "zone-b": 1, "zone-c": 1}
    assert (constraint["globalMin"], constraint["skew"], constraint["satisfied"]) == (1, 2, False)
    assert constraint["minDomainsShortfall"] == 0
    assert constraint["selector"].startswith("app=web")
    (finding,) = document["findings"]
    assert finding["rule"] == "skew-over-max"
    assert finding["severity"] == "error"
    assert finding["object"] == "Deployment/shop/web"
    assert finding["fieldPath"] == "spec.template.spec.topologySpreadConstraints[0]"
    assert document["summary"] == {"error": 1, "warning": 0, "info": 0}


def test_pending_pods_are_listed_with_the_schedulers_reason() -> None:
    code, out, _ = run("audit", "--cluster", str(AUDIT / "wedged.yaml"))
    assert code == 1
    assert "Pending shop/web-7d9c5-m4n8p: 0/6 nodes are available" in out
    assert "wedged-domain" in out
    assert "pending-spread" in out


def test_cluster_defaults_from_config_are_audited() -> None:
    _, document = audit_json(
        "--cluster", str(AUDIT / "defaults.yaml"), "--config", str(HARD_DEFAULTS), "deployment/api"
    )
    (api,) = document["workloads"]
    assert api["constraintSource"] == "defaults"
    assert [f["rule"] for f in document["findings"]] == ["defaults-invisible-to-autoscaler"]


def test_scoping_by_namespace_selector_and_name() -> None:
    defaults = str(AUDIT / "defaults.yaml")
    names = lambda doc: [w["name"] for w in doc["workloads"]]  # noqa: E731
    assert names(audit_json("--cluster", defaults, "-n", "ops")[1]) == ["debug"]
    assert names(audit_json("--cluster", defaults, "-A")[1]) == ["api", "debug"]
    assert names(audit_json("--cluster", defaults, "-l", "app=api")[1]) == ["api"]
    assert names(audit_json("--cluster", defaults, "api")[1]) == ["api"]


def test_an_unknown_workload_is_bad_input() -> None:
    code, _, err = run("audit", "--cluster", str(AUDIT / "defaults.yaml"), "deployment/nope")
    assert code == 2
    assert "no workload 'deployment/nope' in scope" in err


# A pod of tests/data/rebalance/min-domains.yaml captured again, in a second file.
POD_CAPTURED_AGAIN = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-ca84d-p00
    namespace: shop
    uid: uid-web-ca84d-p00
    labels: {app: web, pod-template-hash: ca84d}
  spec:
    containers: [{name: app, image: registry.k8s.io/pause:3.10}]
    nodeName: node-a-1
"""


def test_a_pod_in_two_captures_is_bad_input_rather_than_counted_twice(tmp_path: Path) -> None:
    capture = ROOT / "tests" / "data" / "rebalance" / "min-domains.yaml"
    again = tmp_path / "pods.yaml"
    again.write_text(POD_CAPTURED_AGAIN, encoding="utf-8")
    code, out, err = run("audit", "--cluster", str(capture), "--cluster", str(again))
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"{again}: items[0]: duplicate Pod shop/web-ca84d-p00 (first in {capture}: document 9)"
    ]


# A pod named as one of tests/data/audit/balanced.yaml's, in another namespace.
SAME_NAME_IN_OPS = """\
apiVersion: v1
kind: Pod
metadata:
  name: web-7d9c5-q7rcl
  namespace: ops
  uid: uid-ops-web-7d9c5-q7rcl
spec:
  containers: [{name: app, image: registry.k8s.io/pause:3.10}]
  nodeName: node-a-1
"""


def test_the_same_pod_name_in_another_namespace_is_another_pod(tmp_path: Path) -> None:
    ops = tmp_path / "ops.yaml"
    ops.write_text(SAME_NAME_IN_OPS, encoding="utf-8")
    code, out, err = run("audit", "--cluster", str(AUDIT / "balanced.yaml"), "--cluster", str(ops))
    assert code == 0, err
    assert "duplicate" not in err
    assert "No findings." in out


def test_html_report_is_written_atomically_with_findings_and_pictures(tmp_path: Path) -> None:
    target = tmp_path / "audit.html"
    code, _, err = run("audit", "--cluster", str(AUDIT / "skewed.yaml"), "--html", str(target))
    assert code == 1
    assert f"wrote {target}" in err
    page = target.read_text(encoding="utf-8")
    assert "topospread audit" in page
    assert "topospread simulate" not in page
    assert 'id="findings"' in page
    assert "skew-over-max" in page
    assert "<svg" in page
    assert "web-7d9c5-q7rcl" in page
    assert 'class="bars"' in page  # the simulate report's spread bars
    assert "Cluster now" in page
    assert [p.name for p in tmp_path.iterdir()] == ["audit.html"]


def test_bad_input_exits_2_with_one_line_per_problem(tmp_path: Path) -> None:
    broken = tmp_path / "cluster.yaml"
    broken.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      topologySpreadConstraints:\n"
        "      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
        " labelSelector: {matchLabels: {app: web}}}\n"
        "      containers: [{name: web, image: nginx}]\n",
        encoding="utf-8",
    )
    code, _, err = run("audit", "--cluster", str(broken))
    assert code == 2
    assert err.strip() == (
        f"{broken}: Deployment default/web: spec.template.spec.topologySpreadConstraints[0]"
        ".maxSkew: Invalid value: 0: must be greater than zero"
    )
    assert "Traceback" not in err


def test_a_missing_file_an_unknown_rule_and_no_cluster_are_bad_input() -> None:
    assert run("audit", "--cluster", "/nonexistent.yaml")[0] == 2
    code, _, err = run("audit", "--cluster", str(AUDIT / "skewed.yaml"), "--disable", "nope")
    assert code == 2
    assert "unknown rule(s) nope" in err
    assert run("audit")[0] == 2


def test_a_capture_piped_on_stdin_is_audited() -> None:
    text = (AUDIT / "skewed.yaml").read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["audit", "--cluster", "-", "-o", "json"], input=text)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["findings"][0]["rule"] == "skew-over-max"


def test_a_spread_on_a_key_no_node_carries_says_the_pods_cannot_schedule_not_ok() -> None:
    code, out, _ = run("audit", "--cluster", str(AUDIT / "key-on-no-node.yaml"))
    assert code == 1
    (row,) = [line for line in out.splitlines() if "hard example.com/rack" in line]
    assert "(no eligible domains)" in row
    assert "pods cannot schedule" in row
    assert " ok" not in row
    assert "minDomains" not in out


def test_json_has_no_min_domains_shortfall_when_min_domains_was_never_set() -> None:
    _, document = audit_json("--cluster", str(AUDIT / "key-on-no-node.yaml"))
    (workload,) = document["workloads"]
    (constraint,) = workload["constraints"]
    assert (constraint["domainCounts"], constraint["minDomains"]) == ({}, 1)
    assert constraint["minDomainsShortfall"] == 0


def test_a_workload_for_a_scheduler_no_profile_serves_keeps_its_own_constraint_source() -> None:
    unserved = ROOT / "tests" / "data" / "lint" / "unserved-scheduler.yaml"
    code, document = audit_json("--cluster", str(unserved))
    assert code == 0
    (workload,) = document["workloads"]
    assert workload["constraintSource"] == "pod"
    assert workload["notes"] == ['no scheduler profile is named "topospread": not counted']
    assert document["findings"] == []


def test_a_namespace_without_workloads_is_said_in_kubectls_words() -> None:
    result = CliRunner().invoke(
        cli, ["audit", "--cluster", str(AUDIT / "skewed.yaml"), "-n", "nosuch"]
    )
    assert result.exit_code == 0
    assert "note: No resources found in nosuch namespace." in result.stderr


def test_the_notes_of_reading_the_files_are_in_the_json_too() -> None:
    custom = ROOT / "tests" / "data" / "lint" / "custom-resource.yaml"
    result = CliRunner().invoke(
        cli,
        ["audit", "--cluster", str(AUDIT / "skewed.yaml"), "--cluster", str(custom), "-o", "json"],
    )
    (note,) = [n for n in json.loads(result.stdout)["notes"] if "Kafka" in n]
    assert note.endswith("skipped kafka.strimzi.io/v1beta2/Kafka events (kind not audited)")
    assert f"note: {note}" in result.stderr
