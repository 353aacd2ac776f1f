"""Every audit rule that needs the pods or the nodes fires on its fixture and stays quiet on
a healthy one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from topospread.engine.audit import RULES, Scope, Severity, audit
from topospread.io import load_configuration
from topospread.io.manifests import load_audit_objects
from topospread.model.objects import Deployment, Pod, ReplicaSet

DATA = Path(__file__).resolve().parents[2] / "data"
AUDIT = DATA / "audit"
HARD_DEFAULTS = DATA / "lint" / "hard-defaults-config.yaml"


def rules_found(name: str, config: Path | None = None) -> dict[str, list]:
    objects, _ = load_audit_objects([str(AUDIT / name)])
    report = audit(objects, load_configuration(config))
    found: dict[str, list] = {}
    for finding in report.findings:
        found.setdefault(finding.rule, []).append(finding)
    return found


FIRES = [
    ("skew-over-max", "skewed.yaml", None),
    ("pending-spread", "wedged.yaml", None),
    ("pending-spread", "min-domains.yaml", None),
    ("wedged-domain", "wedged.yaml", None),
    ("min-domains-shortfall", "min-domains.yaml", None),
    ("ghost-selector", "ghost.yaml", None),
    ("missing-topology-key", "missing-key.yaml", None),
    ("zone-hostname-conflict", "conflict.yaml", None),
    ("defaults-invisible-to-autoscaler", "defaults.yaml", HARD_DEFAULTS),
]
QUIET = [
    ("skew-over-max", "balanced.yaml", None),
    ("pending-spread", "wedged-honor.yaml", None),
    ("wedged-domain", "wedged-honor.yaml", None),
    ("min-domains-shortfall", "balanced.yaml", None),
    ("ghost-selector", "balanced.yaml", None),
    ("missing-topology-key", "balanced.yaml", None),
    ("zone-hostname-conflict", "balanced.yaml", None),
    ("defaults-invisible-to-autoscaler", "defaults.yaml", None),
]


@pytest.mark.parametrize(("rule", "fixture", "config"), FIRES)
def test_the_rule_fires_on_its_fixture(rule: str, fixture: str, config: Path | None) -> None:
    assert rule in RULES
    assert rule in rules_found(fixture, config)


@pytest.mark.parametrize(("rule", "fixture", "config"), QUIET)
def test_the_rule_stays_quiet_on_a_healthy_fixture(
    rule: str, fixture: str, config: Path | None
) -> None:
    assert rule not in rules_found(fixture, config)


def test_a_balanced_cluster_has_no_findings_at_all() -> None:
    assert rules_found("balanced.yaml") == {}


def test_skew_over_max_on_a_hard_constraint_is_an_error_with_the_numbers() -> None:
    (finding,) = rules_found("skewed.yaml")["skew-over-max"]
    assert finding.severity is Severity.ERROR
    assert finding.ref == "Deployment/shop/web"
    assert finding.field_path == "spec.template.spec.topologySpreadConstraints[0]"
    assert "zone-a=3, zone-b=1, zone-c=1" in finding.message
    assert "skew 2" in finding.message
    assert "maxSkew 1" in finding.message


def _soft(pod: Pod | None) -> Pod | None:
    if pod is None:
        return None
    constraints = tuple(
        replace(c, when_unsatisfiable="ScheduleAnyway") for c in pod.topology_spread_constraints
    )
    return replace(pod, topology_spread_constraints=constraints)


def test_skew_over_max_on_a_soft_constraint_is_a_warning() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "skewed.yaml")])
    soft = [
        replace(o, template=_soft(o.template)) if isinstance(o, Deployment | ReplicaSet) else o
        for o in objects
    ]
    (finding,) = audit(soft).findings
    assert (finding.rule, finding.severity) == ("skew-over-max", Severity.WARNING)


def test_the_wedge_names_the_cordoned_zone_and_the_fix() -> None:
    (finding,) = rules_found("wedged.yaml")["wedged-domain"]
    assert "zone zone-c: all 2 node(s) are cordoned" in finding.message
    assert "nodeTaintsPolicy: Honor" in finding.fix


def test_pending_because_of_spread_quotes_the_schedulers_message() -> None:
    (finding,) = rules_found("min-domains.yaml")["pending-spread"]
    assert finding.message.startswith("3 pod(s) Pending")
    assert "6 node(s) didn't match pod topology spread constraints" in finding.message


def test_a_pending_pod_is_judged_with_its_claims_and_their_volumes() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "pinned-volumes.yaml")])
    report = audit(objects, load_configuration(None))
    (pending,) = [p for w in report.workloads for p in w.pending_pods]
    assert pending.pod == "shop/db-4"
    # Node affinity filters before VolumeBinding: zone-b and zone-c fail the selector,
    # zone-a the volume's affinity.
    assert "1 node(s) didn't match PersistentVolume's node affinity" in pending.message
    assert "2 node(s) didn't match Pod's node affinity/selector" in pending.message


def test_min_domains_shortfall_is_an_error_when_the_replicas_cannot_fit() -> None:
    (finding,) = rules_found("min-domains.yaml")["min-domains-shortfall"]
    assert finding.severity is Severity.ERROR
    assert "minDomains 4 but only 3 eligible zone domain(s)" in finding.message


def test_findings_come_most_severe_first() -> None:
    # Three fixtures of one cluster shape (the same Nodes and shop/web in each): the
    # objects of each that the ones before did not have, so every severity is there.
    objects: list[Any] = []
    seen: set[tuple[str, str, str]] = set()
    for name in ("missing-key.yaml", "ghost.yaml", "defaults.yaml"):
        loaded, _ = load_audit_objects([str(AUDIT / name)])
        for obj in loaded:
            key = (type(obj).__name__, obj.metadata.namespace, obj.metadata.name)
            if key not in seen:
                seen.add(key)
                objects.append(obj)
    severities = [f.severity.rank for f in audit(objects).findings]
    assert len(set(severities)) >= 2
    assert severities == sorted(severities)


def test_a_daemonset_is_left_out_with_a_note() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "defaults.yaml")])
    report = audit(objects)
    assert all(w.kind != "DaemonSet" for w in report.workloads)
    assert any("DaemonSet/ops/agent" in note for note in report.notes)


def test_bare_pods_are_grouped_as_a_pod_workload() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "defaults.yaml")])
    report = audit(objects)
    assert [w.ref for w in report.workloads] == ["Deployment/shop/api", "Pod/ops/debug"]


def test_scope_by_namespace_label_and_name() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "defaults.yaml")])
    assert [
        w.name for w in audit(objects, scope=Scope(namespaces=frozenset({"ops"}))).workloads
    ] == ["debug"]
    assert [
        w.name for w in audit(objects, scope=Scope(kind="Deployment", name="api")).workloads
    ] == ["api"]
    assert audit(objects, scope=Scope(kind="StatefulSet", name="api")).workloads == ()


def test_an_ignore_annotation_and_disabled_rules_silence_findings() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "skewed.yaml")])
    assert audit(objects, disabled=frozenset({"skew-over-max"})).findings == ()
    annotated = [
        replace(
            o,
            metadata=replace(
                o.metadata, annotations={"topospread.dev/ignore": "ghost-selector, skew-over-max"}
            ),
        )
        if isinstance(o, Deployment)
        else o
        for o in objects
    ]
    assert audit(annotated).findings == ()


def test_a_tainted_node_without_the_key_is_not_reported_as_missing_it() -> None:
    from topospread.model.objects import Node, Taint

    objects, _ = load_audit_objects([str(AUDIT / "missing-key.yaml")])
    control_plane = Taint("node-role.kubernetes.io/control-plane", "NoSchedule")
    tainted = [
        replace(o, taints=(control_plane,)) if isinstance(o, Node) and o.name == "node-x-1" else o
        for o in objects
    ]
    assert audit(tainted).findings == ()


def _skew_fix(objects: list) -> str:
    report = audit(objects, load_configuration(None))
    (finding,) = [f for f in report.findings if f.rule == "skew-over-max"]
    return finding.fix


def test_pods_whose_volumes_pin_their_zone_are_not_advised_to_be_deleted() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "pinned-volumes.yaml")])
    fix = _skew_fix(objects)
    assert fix.startswith("deleting pods does not help here: their volumes pin them")
    assert "shop/db-0: data-db-0 -> pvc-0 in zone-a" in fix


def test_a_volume_every_zone_can_use_leaves_its_pod_free_to_move() -> None:
    from topospread.model.storage import PersistentVolume

    objects, _ = load_audit_objects([str(AUDIT / "pinned-volumes.yaml")])
    # Volumes of db-0 and db-1 become regional (no node affinity): two pods can move,
    # which is the excess in zone-a, so deleting is the advice again, with db-3 kept.
    regional = {"pvc-0", "pvc-1"}
    objects = [
        replace(o, node_affinity=None)
        if isinstance(o, PersistentVolume) and o.name in regional
        else o
        for o in objects
    ]
    fix = _skew_fix(objects)
    assert fix.startswith("delete the excess pods in zone-a")
    assert fix.endswith(
        "; not the pods whose volumes pin them to their domain "
        "(shop/db-3: data-db-3 -> pvc-3 in zone-a)"
    )


def test_a_workload_whose_scheduler_has_no_profile_is_not_said_to_lack_a_spread() -> None:
    # Its pods carry a hard zone constraint of their own; only the scheduler is missing.
    objects, _ = load_audit_objects([str(DATA / "lint" / "unserved-scheduler.yaml")])
    report = audit(objects)
    (batch,) = report.workloads
    assert batch.source == "pod"
    assert batch.notes == ('no scheduler profile is named "topospread": not counted',)
    assert report.findings == ()


def test_a_key_no_node_carries_leaves_no_eligible_node_and_no_min_domains_shortfall() -> None:
    found = rules_found("key-on-no-node.yaml")
    assert "min-domains-shortfall" not in found
    (finding,) = found["no-eligible-nodes"]
    assert "none of the 3 node(s) the pods may run on has the label example.com/rack" in (
        finding.message
    )
    assert "minDomains" not in finding.message + finding.fix
    # Its Pending pods are asked for the label, not for capacity or a larger maxSkew.
    (pending,) = found["pending-spread"]
    assert pending.fix == "label the nodes with example.com/rack, or spread on a key they carry"


def test_min_domains_left_unset_is_never_short_even_without_any_domain() -> None:
    objects, _ = load_audit_objects([str(AUDIT / "key-on-no-node.yaml")])
    (web,) = audit(objects).workloads
    report = web.constraints[0].report
    assert report is not None
    assert (dict(report.domain_counts), report.min_domains) == ({}, 1)
    assert report.min_domains_shortfall == 0
