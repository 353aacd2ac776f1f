"""The audit's counts are the scheduler's: the same numbers PreFilter writes for the same pod."""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.engine.audit import Scope, audit
from topospread.engine.audit.workloads import group_workloads
from topospread.engine.cluster import Cluster
from topospread.engine.explain import explain
from topospread.framework.config.decode import default_configuration
from topospread.io import load_configuration
from topospread.io.manifests import load_audit_objects
from topospread.model.objects import Deployment
from topospread.model.workloads import CronJob, DaemonSet, Job

DATA = Path(__file__).resolve().parents[2] / "data"
AUDIT = DATA / "audit"
FIXTURES = sorted(p.name for p in AUDIT.glob("*.yaml"))


def objects_of(name: str) -> list:
    objects, _ = load_audit_objects([str(AUDIT / name)])
    return objects


def cluster_of(objects: list) -> Cluster:
    return Cluster.from_objects(
        o for o in objects if not isinstance(o, Deployment | DaemonSet | Job | CronJob)
    )


@pytest.mark.parametrize("name", FIXTURES)
def test_domain_counts_and_global_minimum_are_prefilters_for_the_same_pod(name: str) -> None:
    objects = objects_of(name)
    report = audit(objects)
    cluster = cluster_of(objects)
    workloads, _ = group_workloads(objects)
    counted = {w.ref: w.counted for w in workloads}
    checked = 0
    for w in report.workloads:
        pod = counted[w.ref]
        assert pod is not None
        prefilter = explain(cluster, pod, default_configuration()).hard_constraints
        hard = [c for c in w.constraints if c.hard]
        assert len(hard) == len(prefilter)
        for ours, theirs in zip(hard, prefilter, strict=True):
            assert ours.report is not None
            assert dict(ours.report.domain_counts) == dict(theirs.domain_counts)
            assert ours.report.global_min == theirs.min_match_num
            counts = list(theirs.domain_counts.values())
            assert ours.report.skew == (max(counts) - theirs.min_match_num if counts else 0)
            checked += 1
    if name not in ("defaults.yaml",):
        assert checked, "every fixture but the defaults one has a hard constraint"


def test_a_scale_down_left_zone_a_with_three_pods_so_skew_is_two() -> None:
    report = audit(objects_of("skewed.yaml"))
    (web,) = report.workloads
    (zone,) = web.constraints
    assert zone.report is not None
    assert dict(zone.report.domain_counts) == {"zone-a": 3, "zone-b": 1, "zone-c": 1}
    assert (zone.report.global_min, zone.report.skew, zone.report.satisfied) == (1, 2, False)
    assert [m.pod for m in zone.misplaced] == [
        "shop/web-7d9c5-q7rcl",
        "shop/web-7d9c5-x2b9k",
        "shop/web-7d9c5-m4n8p",
    ]


def test_mid_rollout_only_the_newest_replicasets_pods_are_counted() -> None:
    report = audit(objects_of("rollout.yaml"))
    (web,) = report.workloads
    assert web.counted_from == "ReplicaSet web-n3w00"
    assert web.constraints[0].report is not None
    assert dict(web.constraints[0].report.domain_counts) == {
        "zone-a": 1,
        "zone-b": 0,
        "zone-c": 1,
    }


def test_a_cordoned_zone_still_counts_with_nodetaintspolicy_ignore() -> None:
    (web,) = audit(objects_of("wedged.yaml")).workloads
    assert web.constraints[0].report is not None
    assert web.constraints[0].report.domain_counts["zone-c"] == 0
    assert web.constraints[0].report.global_min == 0


def test_with_nodetaintspolicy_honor_the_cordoned_zone_drops_out() -> None:
    (web,) = audit(objects_of("wedged-honor.yaml")).workloads
    assert web.constraints[0].report is not None
    assert dict(web.constraints[0].report.domain_counts) == {"zone-a": 1, "zone-b": 1}


def test_minDomains_above_the_domains_forces_the_global_minimum_to_zero() -> None:
    (web,) = audit(objects_of("min-domains.yaml")).workloads
    report = web.constraints[0].report
    assert report is not None
    assert (report.global_min, report.min_domains_shortfall) == (0, 1)


def test_without_constraints_of_its_own_a_deployment_gets_the_system_defaults() -> None:
    report = audit(objects_of("defaults.yaml"))
    api = next(w for w in report.workloads if w.name == "api")
    assert api.source == "defaults"
    assert [(c.constraint.topology_key, c.hard) for c in api.constraints] == [
        ("kubernetes.io/hostname", False),
        ("topology.kubernetes.io/zone", False),
    ]
    assert api.constraints[1].report is not None
    assert dict(api.constraints[1].report.domain_counts) == {
        "zone-a": 1,
        "zone-b": 1,
        "zone-c": 1,
    }


def test_list_defaults_from_the_configuration_are_counted_with_the_controllers_selector() -> None:
    configuration = load_configuration(DATA / "lint" / "hard-defaults-config.yaml")
    report = audit(objects_of("defaults.yaml"), configuration, Scope(name="api"))
    (api,) = report.workloads
    (zone,) = api.constraints
    assert zone.hard
    assert zone.report is not None
    assert zone.constraint.selector.matches({"app": "api", "pod-template-hash": "4e5f6"})
    assert dict(zone.report.domain_counts) == {"zone-a": 1, "zone-b": 1, "zone-c": 1}


def test_pending_pods_carry_kube_schedulers_failedscheduling_message() -> None:
    (web,) = audit(objects_of("wedged.yaml")).workloads
    (pending,) = web.pending_pods
    assert pending.pod == "shop/web-7d9c5-m4n8p"
    assert pending.message.startswith("0/6 nodes are available: 2 node(s) were unschedulable")
    assert "didn't match pod topology spread constraints" in pending.message


def test_json_has_the_documented_shape() -> None:
    document = audit(objects_of("skewed.yaml")).to_json()
    assert {"workloads", "findings"} <= set(document)
    (workload,) = document["workloads"]  # type: ignore[misc]
    assert {
        "kind",
        "namespace",
        "name",
        "replicas",
        "pending",
        "constraintSource",
        "constraints",
    } <= set(workload)
    (constraint,) = workload["constraints"]
    assert {
        "topologyKey",
        "whenUnsatisfiable",
        "maxSkew",
        "minDomains",
        "selector",
        "domainCounts",
        "globalMin",
        "skew",
        "satisfied",
        "minDomainsShortfall",
    } <= set(constraint)
    (finding,) = document["findings"]  # type: ignore[misc]
    assert set(finding) >= {"rule", "severity", "object", "fieldPath", "message", "fix"}
    assert finding["object"] == "Deployment/shop/web"
    assert finding["fieldPath"] == "spec.template.spec.topologySpreadConstraints[0]"


def test_a_statefulset_is_counted_for_the_revision_of_its_highest_ordinal() -> None:
    report = audit(objects_of("statefulset-and-cronjob.yaml"), scope=Scope(kind="StatefulSet"))
    (db,) = report.workloads
    assert db.counted_from == "revision db-new"
    assert db.constraints[0].report is not None
    assert dict(db.constraints[0].report.domain_counts) == {"zone-a": 1, "zone-b": 0, "zone-c": 0}


def test_cronjob_pods_are_matched_through_their_job_and_finished_pods_are_left_out() -> None:
    report = audit(objects_of("statefulset-and-cronjob.yaml"), scope=Scope(kind="CronJob"))
    (cron,) = report.workloads
    assert (cron.ref, cron.pods, cron.replicas) == ("CronJob/data/report", 2, 2)
    assert report.notes == ("pod data/report-29000000-ccccc is Succeeded: not counted",)
    (finding,) = report.findings
    assert finding.rule == "skew-over-max"
    assert finding.field_path == "spec.jobTemplate.spec.template.spec.topologySpreadConstraints[0]"
    assert "hostname counts node-a-1=2, node-a-2=0" in finding.message
