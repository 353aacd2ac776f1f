"""Every lint rule fires on its manifest and stays quiet on a clean one; the API server's
validation is reported in its own words, at the path in the workload."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from topospread.engine.audit import RULES, Severity, lint, parse_domains
from topospread.io import load_cluster, load_configuration
from topospread.io.manifests import load_lint_objects

DATA = Path(__file__).resolve().parents[2] / "data"
LINT = DATA / "lint"
AUDIT = DATA / "audit"
HARD_DEFAULTS = LINT / "hard-defaults-config.yaml"
ZONE_AND_HOSTNAME = "zone-and-hostname-spread"
RECOMMENDED_KEYS = ("topology.kubernetes.io/zone", "kubernetes.io/hostname")


def linted(
    name: str,
    *,
    domains: str | None = None,
    cluster: str | None = None,
    config: Path | None = None,
    enabled: frozenset[str] = frozenset(),
    allowed_keys: frozenset[str] | None = None,
) -> dict[str, list]:
    items, _ = load_lint_objects([str(LINT / name)])
    report = lint(
        items,
        load_configuration(config),
        domains=parse_domains(domains) if domains else None,
        cluster=load_cluster([AUDIT / cluster])[0] if cluster else None,
        enabled=enabled,
        allowed_keys=allowed_keys,
    )
    found: dict[str, list] = {}
    for finding in report.findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


CASES = [
    # rule, fires on, quiet on (file, domains, cluster, config)
    ("api-validation", ("invalid.yaml",), ("clean.yaml",)),
    ("missing-selector", ("missing-selector.yaml",), ("clean.yaml",)),
    ("empty-selector", ("empty-selector.yaml",), ("clean.yaml",)),
    ("ghost-selector", ("ghost-selector.yaml",), ("clean.yaml",)),
    ("missing-pod-template-hash", ("no-template-hash.yaml",), ("recreate.yaml",)),
    ("max-skew-never-binds", ("max-skew.yaml",), ("clean.yaml",)),
    ("min-domains-shortfall", ("min-domains.yaml", "zone=3"), ("min-domains.yaml", "zone=5")),
    (
        "zone-hostname-conflict",
        ("zone-and-hostname.yaml", "zone=3,hostname=4"),
        ("zone-and-hostname.yaml", "zone=3,hostname=6"),
    ),
    (
        "zone-hostname-conflict",
        ("zone-and-hostname.yaml", None, "conflict.yaml"),
        ("zone-and-hostname.yaml", None, "balanced.yaml"),
    ),
    ("wedged-domain", ("clean.yaml", None, "wedged.yaml"), ("clean.yaml", None, "balanced.yaml")),
    (
        "missing-topology-key",
        ("clean.yaml", None, "missing-key.yaml"),
        ("clean.yaml", None, "balanced.yaml"),
    ),
    (
        "defaults-invisible-to-autoscaler",
        ("no-constraints.yaml", None, None, HARD_DEFAULTS),
        ("no-constraints.yaml",),
    ),
    (
        "no-eligible-nodes",
        ("node-selector-nothing.yaml", None, "balanced.yaml"),
        ("clean.yaml", None, "balanced.yaml"),
    ),
    ("unknown-topology-key", ("bare-topology-keys.yaml",), ("clean.yaml",)),
    (
        "soft-spread-void",
        ("soft-rack.yaml", None, "balanced.yaml"),
        ("clean.yaml", None, "balanced.yaml"),
    ),
    (
        "topology-key-not-allowed",
        ("clean.yaml", None, None, None, {"allowed_keys": frozenset({"kubernetes.io/hostname"})}),
        ("clean.yaml", None, None, None, {"allowed_keys": frozenset(RECOMMENDED_KEYS)}),
    ),
    ("no-spread", ("no-spread.yaml",), ("clean.yaml",)),
    (
        "zone-and-hostname-spread",
        ("hostname-only.yaml", None, None, None, {"enabled": frozenset({ZONE_AND_HOSTNAME})}),
        ("clean.yaml", None, None, None, {"enabled": frozenset({ZONE_AND_HOSTNAME})}),
    ),
    (
        "zone-and-hostname-spread",
        ("hostname-only.yaml", None, None, None, {"enabled": frozenset({ZONE_AND_HOSTNAME})}),
        ("hostname-only.yaml",),
    ),
    ("selector-overlap", ("selector-overlap.yaml",), ("clean.yaml",)),
]


def _run(case: tuple) -> dict[str, list]:
    name, domains, cluster, config, options = (*case, None, None, None, None)[:5]
    return linted(name, domains=domains, cluster=cluster, config=config, **(options or {}))


@pytest.mark.parametrize(("rule", "fires", "quiet"), CASES)
def test_the_rule_fires_on_its_manifest(rule: str, fires: tuple, quiet: tuple) -> None:
    assert rule in RULES
    assert rule in _run(fires)


@pytest.mark.parametrize(("rule", "fires", "quiet"), CASES)
def test_the_rule_stays_quiet_on_a_clean_manifest(rule: str, fires: tuple, quiet: tuple) -> None:
    assert rule not in _run(quiet)


# The node pool rules fire and stay quiet in tests/engine/audit/test_pool_rules.py.
POOL_RULES = {"domains-only-in-pools-at-zero", "min-domains-unreachable",
              "pools-cannot-survive-zone-loss"}  # fmt: skip


def test_every_rule_is_exercised_here_or_by_the_audit_fixtures() -> None:
    needs_pods = {rule for rule, r in RULES.items() if r.needs == "pods"}
    assert needs_pods == {"skew-over-max", "pending-spread"}
    assert {rule for rule, *_ in CASES} | needs_pods | POOL_RULES == set(RULES)


def test_a_clean_manifest_has_no_findings() -> None:
    assert linted("clean.yaml") == {}
    assert linted("clean.yaml", domains="zone=3,hostname=6") == {}


def test_validation_speaks_the_api_servers_words_at_the_workloads_paths() -> None:
    messages = [f.message for f in linted("invalid.yaml")["api-validation"]]
    assert messages == [
        "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: "
        "must be greater than zero",
        "spec.template.spec.topologySpreadConstraints[1].minDomains: Invalid value: 2: "
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ]


def test_a_cronjobs_findings_point_into_its_job_template() -> None:
    (finding,) = linted("kinds.yaml")["missing-selector"]
    assert finding.ref == "CronJob/batch/report"
    assert finding.field_path == "spec.jobTemplate.spec.template.spec.topologySpreadConstraints[0]"
    # The line of the constraint ("- maxSkew: 1"), not of the object's first line.
    assert (finding.source, finding.line) == (str(LINT / "kinds.yaml"), 19)


def test_every_kind_with_a_pod_template_is_checked_and_a_daemonset_is_skipped() -> None:
    items, _ = load_lint_objects([str(LINT / "kinds.yaml")])
    report = lint(items)
    assert report.checked == (
        "CronJob/batch/report",
        "Job/batch/migrate",
        "ReplicaSet/shop/cache",
        "Pod/shop/probe",
    )
    assert any("DaemonSet/ops/agent" in note for note in report.notes)


def test_an_ignore_comment_and_an_ignore_annotation_silence_the_ghost_selector() -> None:
    assert linted("ignored.yaml") == {}


def test_hard_problems_are_errors_and_rollout_hygiene_is_a_warning() -> None:
    assert linted("ghost-selector.yaml")["ghost-selector"][0].severity is Severity.ERROR
    hygiene = linted("no-template-hash.yaml")["missing-pod-template-hash"][0]
    assert hygiene.severity is Severity.WARNING
    assert "matchLabelKeys: [pod-template-hash]" in hygiene.fix


def test_labelselector_empty_with_matchlabelkeys_is_rescued_by_admission() -> None:
    items, _ = load_lint_objects([str(LINT / "empty-selector.yaml")])
    (item,) = items
    template = item.obj.template
    constraint = replace(template.topology_spread_constraints[0], match_label_keys=("app",))
    fixed = replace(item.obj, template=replace(template, topology_spread_constraints=(constraint,)))
    assert lint([replace(item, obj=fixed)]).findings == ()


def test_a_bare_zone_key_is_not_called_the_zone_and_a_soft_one_names_what_it_turns_off() -> None:
    hard, soft = linted("bare-topology-keys.yaml")["unknown-topology-key"]
    assert hard.message.startswith('topology key "zone" is not a label nodes carry by default')
    assert hard.severity is Severity.WARNING
    assert soft.message.startswith("topology key example.com/rack is not a label")
    assert "ignored in PodTopologySpread's Score" in soft.message
    assert "topology.kubernetes.io/zone maxSkew 1 ScheduleAnyway one(s) do nothing" in soft.message


def test_a_cluster_whose_nodes_carry_the_key_silences_the_unknown_key_rule() -> None:
    assert "unknown-topology-key" not in linted("bare-topology-keys.yaml", cluster="balanced.yaml")


def test_no_eligible_node_names_the_node_selection_not_min_domains() -> None:
    found = linted("node-selector-nothing.yaml", cluster="balanced.yaml")
    assert "min-domains-shortfall" not in found
    (finding,) = found["no-eligible-nodes"]
    assert "none of the 6 node(s) matches the pods' nodeSelector" in finding.message
    assert "minDomains" not in finding.message + finding.fix


def test_a_cluster_without_nodes_is_named_as_such_not_as_a_selector_matching_none() -> None:
    found = linted("clean.yaml", cluster="../lint/cluster-without-nodes.yaml")
    (finding,) = found["no-eligible-nodes"]
    assert "the cluster has no nodes" in finding.message
    assert "nodeSelector" not in finding.message


def test_a_single_replica_with_soft_spreads_needs_no_template_hash() -> None:
    assert linted("single-replica-soft.yaml") == {}


def test_the_template_hash_finding_is_one_per_workload() -> None:
    (finding,) = linted("selector-overlap.yaml")["missing-pod-template-hash"]
    assert finding.ref == "Deployment/shop/web"


def test_a_generate_name_pod_is_named_after_its_generate_name() -> None:
    (finding,) = linted("strict-fields.yaml")["api-validation"][1:]
    assert finding.ref == "Pod/default/spreading-pod-(generateName)"


def test_a_strict_decoding_error_replaces_validation_and_points_at_the_field() -> None:
    pod, job = sorted(linted("strict-fields.yaml")["api-validation"], key=lambda f: f.ref)[::-1]
    assert pod.message.startswith("strict decoding error: unknown field")
    assert (pod.line, job.line) == (13, 28)


def test_a_second_schedulers_workload_with_its_own_spread_is_not_called_unspread() -> None:
    # No profile serves schedulerName "topospread"; the constraints are there all the same.
    assert "no-spread" not in linted("unserved-scheduler.yaml")


def test_a_second_schedulers_workload_is_asked_only_for_the_spread_it_lacks() -> None:
    found = linted("unserved-scheduler.yaml", enabled=frozenset({ZONE_AND_HOSTNAME}))
    (finding,) = found[ZONE_AND_HOSTNAME]
    assert "3 replicas without a spread constraint on kubernetes.io/hostname:" in finding.message
