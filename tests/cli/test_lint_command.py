"""``topospread lint`` end to end: the bundled examples, Helm output on stdin, SARIF, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.engine.audit import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "topospread" / "examples"
LINT = ROOT / "tests" / "data" / "lint"
AUDIT = ROOT / "tests" / "data" / "audit"
EXAMPLE_DIRS = sorted(p for p in EXAMPLES.iterdir() if (p / "pod.yaml").exists())
DOCS_EXAMPLES = ("one-constraint", "two-constraints", "one-constraint-with-nodeaffinity")


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_bundled_examples_lint_clean_but_for_the_docs_bare_topology_keys() -> None:
    files = [str(p) for d in EXAMPLE_DIRS for p in (d / "pod.yaml", d / "cluster.yaml")]
    code, out, err = run("lint", *files, "-o", "json")
    assert code == 0, out + err
    # The docs' examples spread on "zone" and "node", labels their cluster sets by hand:
    # without --cluster that is a warning; with it (below) nothing is reported.
    findings = json.loads(out)["findings"]
    assert {f["rule"] for f in findings} == {"unknown-topology-key"}
    assert {f["message"].split(" is ")[0] for f in findings} == {
        'topology key "zone"',
        'topology key "node"',
    }


@pytest.mark.parametrize("example", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_each_example_pod_lints_against_its_own_cluster(example: Path) -> None:
    code, out, err = run(
        "lint", str(example / "pod.yaml"), "--cluster", str(example / "cluster.yaml"), "-o", "json"
    )
    assert code == 0, err
    rules = [f["rule"] for f in json.loads(out)["findings"]]
    # The min-domains example asks for more zones than its cluster has, on purpose.
    assert rules == (["min-domains-shortfall"] if example.name == "min-domains" else [])


def test_helm_output_on_stdin_is_linted_document_by_document() -> None:
    text = (LINT / "helm-rendered.yaml").read_text(encoding="utf-8")
    code, out, err = run("lint", "-", "-o", "json", stdin=text)
    assert code == 1
    assert "skipped v1/ServiceAccount release-shop" in err
    document = json.loads(out)
    assert document["checked"] == [
        "Deployment/default/release-shop",
        "Deployment/default/release-shop-worker",
    ]
    found = {(f["rule"], f["object"], f["source"], f["line"]) for f in document["findings"]}
    # Each line is the constraint's, where a code-scanning annotation belongs.
    assert found == {
        ("missing-pod-template-hash", "Deployment/default/release-shop", "<stdin>", 52),
        ("ghost-selector", "Deployment/default/release-shop-worker", "<stdin>", 81),
    }
    lines = text.splitlines()
    assert lines[51].strip() == "- maxSkew: 1"
    assert lines[80].strip() == "- maxSkew: 1"


def test_sarif_is_a_valid_2_1_0_log_with_rules_and_locations() -> None:
    code, out, _ = run("lint", str(LINT / "ghost-selector.yaml"), "--output", "sarif")
    assert code == 1
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "topospread"
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    (result,) = run_["results"]
    assert result["ruleId"] == "ghost-selector"
    assert driver["rules"][result["ruleIndex"]]["id"] == "ghost-selector"
    assert result["level"] == "error"
    assert result["message"]["text"]
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == str(LINT / "ghost-selector.yaml")
    assert physical["region"]["startLine"] == 16  # the constraint, not the object
    assert location["logicalLocations"][0]["fullyQualifiedName"] == (
        "Deployment/shop/web:spec.template.spec.topologySpreadConstraints[0]"
    )


def test_sarif_of_a_clean_file_has_no_results() -> None:
    code, out, _ = run("lint", str(LINT / "clean.yaml"), "-o", "sarif")
    assert code == 0
    assert json.loads(out)["runs"][0]["results"] == []


def test_exit_codes_0_clean_1_findings_2_bad_input(tmp_path: Path) -> None:
    assert run("lint", str(LINT / "clean.yaml"))[0] == 0
    assert run("lint", str(LINT / "ghost-selector.yaml"))[0] == 1
    assert run("lint", str(LINT / "no-template-hash.yaml"))[0] == 0
    assert run("lint", str(LINT / "no-template-hash.yaml"), "--fail-on", "warning")[0] == 1
    assert run("lint", str(LINT / "ghost-selector.yaml"), "--fail-on", "none")[0] == 0
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n"
        "kind: Deployment\napiVersion: apps/v1\nspec: [a\nmetadata: {}\n",
        encoding="utf-8",
    )
    code, _, err = run("lint", str(broken))
    assert code == 2
    assert err.strip() == f"{broken}: yaml: line 8: did not find expected ',' or ']'"
    assert run("lint", str(tmp_path / "missing.yaml"))[0] == 2


def test_a_field_of_the_wrong_type_names_the_file_line_and_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: many\n",
        encoding="utf-8",
    )
    code, _, err = run("lint", str(bad))
    assert code == 2
    assert err.strip() == (
        f'{bad}:5: Deployment web: spec.replicas: Invalid value: "many": expected int32, got string'
    )


def test_api_validation_findings_use_the_api_servers_wording() -> None:
    code, out, _ = run("lint", str(LINT / "invalid.yaml"), "-o", "json")
    assert code == 1
    messages = [f["message"] for f in json.loads(out)["findings"]]
    assert (
        "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: "
        "must be greater than zero"
    ) in messages


def test_domains_enable_the_domain_rules_and_bad_domains_are_bad_input() -> None:
    manifest = str(LINT / "zone-and-hostname.yaml")
    assert run("lint", manifest)[0] == 0
    code, out, _ = run("lint", manifest, "--domains", "zone=3,hostname=4")
    assert code == 1
    assert "zone-hostname-conflict" in out
    assert run("lint", manifest, "--domains", "zone=3,hostname=6")[0] == 0
    code, _, err = run("lint", manifest, "--domains", "zone")
    assert code == 2
    assert "--domains" in err


def test_a_cluster_file_enables_the_node_rules() -> None:
    code, out, _ = run("lint", str(LINT / "clean.yaml"), "--cluster", str(AUDIT / "wedged.yaml"))
    assert code == 1
    assert "wedged-domain" in out


def test_disable_and_ignore_comments_silence_rules() -> None:
    assert run("lint", str(LINT / "ghost-selector.yaml"), "--disable", "ghost-selector")[0] == 0
    code, out, _ = run("lint", str(LINT / "ignored.yaml"))
    assert code == 0
    assert "No findings." in out


def test_the_bundled_scenarios_are_linted_from_the_objects_they_apply() -> None:
    scenarios = sorted(str(p) for p in (EXAMPLES / "scenarios").glob("*.yaml"))
    code, out, _ = run("lint", *scenarios, "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert "Deployment/default/keyed" in document["checked"]
    flagged = {(Path(f["source"]).name, f["object"]) for f in document["findings"]}
    # rollout-match-label-keys contrasts a Deployment without pod-template-hash ("plain")
    # with one that has it ("keyed"); only the first is flagged.
    assert ("rollout-match-label-keys.yaml", "Deployment/default/plain") in flagged
    assert ("rollout-match-label-keys.yaml", "Deployment/default/keyed") not in flagged
    assert {f["rule"] for f in document["findings"]} == {"missing-pod-template-hash"}


def test_the_docs_flow_style_examples_are_read_as_kubectl_reads_them() -> None:
    files = [str(LINT / f"docs-{n}.yaml") for n in DOCS_EXAMPLES]
    code, out, err = run("lint", *files, "-o", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["errors"] == []
    assert document["checked"] == ["Pod/default/mypod"] * 3
    # The constraint's line inside the flow mapping: "topologyKey" of the first entry's line.
    lines = {(Path(f["source"]).name, f["line"]) for f in document["findings"]}
    assert ("docs-one-constraint.yaml", 15) in lines
    text = (LINT / "docs-one-constraint.yaml").read_text(encoding="utf-8").splitlines()
    assert text[14].strip() == "topologySpreadConstraints: [{"


def test_explain_reads_a_docs_flow_style_pod_too() -> None:
    cluster = EXAMPLES / "two-constraints" / "cluster.yaml"
    pod = LINT / "docs-two-constraints.yaml"
    code, out, err = run("explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json")
    assert code == 0, err
    bundled = EXAMPLES / "two-constraints" / "pod.yaml"
    _, expected, _ = run("explain", "--cluster", str(cluster), "--pod", str(bundled), "-o", "json")
    assert json.loads(out)["selectedNode"] == json.loads(expected)["selectedNode"] == "node4"


def test_one_unreadable_file_does_not_empty_the_report(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x\n", encoding="utf-8")
    ghost = str(LINT / "ghost-selector.yaml")
    code, out, err = run("lint", ghost, str(broken), str(LINT / "clean.yaml"))
    assert code == 2
    assert "ghost-selector" in out
    assert "1 input problem(s)" in out
    assert err.strip().splitlines() == [
        f"{broken}: yaml: line 4: did not find expected ',' or '}}'"
    ]
    code, out, _ = run("lint", ghost, str(broken), "-o", "json")
    assert code == 2
    document = json.loads(out)
    assert [f["rule"] for f in document["findings"]] == ["ghost-selector"]
    assert len(document["errors"]) == 1
    assert document["errors"][0].startswith(f"{broken}: yaml: line 4")
    code, out, _ = run("lint", ghost, str(broken), "-o", "sarif")
    assert code == 2
    (run_,) = json.loads(out)["runs"]
    assert [r["ruleId"] for r in run_["results"]] == ["ghost-selector"]
    (invocation,) = run_["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith(str(broken))


def test_an_unknown_field_and_missing_containers_are_refused_as_kubectl_refuses_them() -> None:
    code, out, _ = run("lint", str(LINT / "strict-fields.yaml"), "-o", "json")
    assert code == 1
    found = {(f["object"], f["fieldPath"], f["message"]) for f in json.loads(out)["findings"]}
    assert found == {
        (
            "Pod/default/spreading-pod-(generateName)",
            "spec.topologySpreadConstraints[0].NodeAffinityPolicy",
            'strict decoding error: unknown field "spec.topologySpreadConstraints[0]'
            '.NodeAffinityPolicy"',
        ),
        (
            "Job/default/empty",
            "spec.template.spec.containers",
            "spec.template.spec.containers: Required value",
        ),
    }


def test_explain_and_audit_refuse_the_unknown_field_with_the_same_words(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  containers: [{name: c, image: pause}]\n  topologySpreadConstraints:\n"
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
        " NodeAffinityPolicy: Honor}\n",
        encoding="utf-8",
    )
    cluster = str(EXAMPLES / "one-constraint" / "cluster.yaml")
    field = "spec.topologySpreadConstraints[0].NodeAffinityPolicy"
    words = f'strict decoding error: unknown field "{field}"'
    code, _, err = run("explain", "--cluster", cluster, "--pod", str(pod))
    assert code == 2
    assert err.strip() == f"{pod}: Pod p: {words}"
    code, _, err = run("audit", "--cluster", cluster, "--cluster", str(pod))
    assert code == 2
    assert err.strip() == f"{pod}: Pod default/p: {words}"


def test_a_node_name_the_api_server_refuses_is_refused_by_explain_audit_and_rebalance(
    tmp_path: Path,
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: A1, labels: {kubernetes.io/hostname: A1}}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n",
        encoding="utf-8",
    )
    pod = EXAMPLES / "one-constraint" / "pod.yaml"
    codes = [
        run("explain", "--cluster", str(cluster), "--pod", str(pod))[0],
        run("audit", "--cluster", str(cluster))[0],
        run("rebalance", "--cluster", str(cluster))[0],
    ]
    assert codes == [2, 2, 2]
    _, _, err = run("audit", "--cluster", str(cluster))
    assert 'metadata.name: Invalid value: "A1": a lowercase RFC 1123 subdomain' in err


def test_a_skipped_custom_resource_with_spread_constraints_is_a_json_note() -> None:
    code, out, _ = run("lint", str(LINT / "custom-resource.yaml"), "-o", "json")
    assert code == 0
    (note,) = json.loads(out)["notes"]
    assert "skipped kafka.strimzi.io/v1beta2/Kafka events" in note
    assert "spec.kafka.template.pod.topologySpreadConstraints" in note


def test_a_document_that_is_not_yaml_sinks_only_itself_not_the_files_others() -> None:
    code, out, _ = run("lint", str(LINT / "one-broken-document.yaml"), "-o", "json")
    assert code == 2
    report = json.loads(out)
    assert report["checked"] == ["Deployment/default/first", "Deployment/default/third"]
    (error,) = report["errors"]
    assert error.endswith("document.yaml: yaml: line 14: did not find expected node content")


def test_a_misspelt_or_removed_built_in_kind_is_refused_as_kubectl_refuses_it() -> None:
    code, _, err = run("lint", str(LINT / "misspelt-kinds.yaml"))
    assert code == 2
    problems = [line for line in err.splitlines() if not line.startswith("note:")]
    assert [line.split(": ", 1)[1] for line in problems] == [
        'resource mapping not found: no matches for kind "Deploymnet" in version "apps/v1"',
        'resource mapping not found: no matches for kind "pod" in version "v1"',
        'resource mapping not found: no matches for kind "Deployment" in version "apps/v1beta1"',
    ]
    # A kind of another group is a custom resource lint does not read: a note.
    assert "skipped example.com/v1/Widget custom" in err


def test_opt_in_rules_and_allowed_keys_are_options() -> None:
    manifest = str(LINT / "hostname-only.yaml")
    assert "zone-and-hostname-spread" not in run("lint", manifest, "-o", "json")[1]
    code, out, _ = run("lint", manifest, "--enable", "zone-and-hostname-spread", "-o", "json")
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["zone-and-hostname-spread"]
    code, _, err = run("lint", manifest, "--enable", "ghost-selector")
    assert code == 2
    assert "not an opt-in rule: ghost-selector" in err
    code, out, _ = run("lint", manifest, "--allowed-topology-keys", "topology.kubernetes.io/zone")
    assert code == 1
    assert "topology-key-not-allowed" in out
