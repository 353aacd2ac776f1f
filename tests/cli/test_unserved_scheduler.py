"""A Pending pod whose schedulerName no known profile serves is an audit finding."""

from __future__ import annotations

from pathlib import Path

from topospread.cli.live import UNSERVED_RULE, unserved_pending_findings
from topospread.client.schedulers import combine_configurations
from topospread.engine.audit import Scope, Severity, audit
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.io.manifests import load_audit_objects
from topospread.model.workloads import decode_manifests


def _pod(name: str, scheduler: str, node: str = "") -> dict:
    spec: dict = {"schedulerName": scheduler, "containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}",
                     "labels": {"app": name}},
        "spec": spec,
    }  # fmt: skip


def _objects(*pods: dict) -> list:
    decoded = decode_manifests([{"apiVersion": "v1", "kind": "List", "items": list(pods)}])
    return [obj for _, obj in decoded.objects]


def test_a_pending_pod_of_a_scheduler_nobody_runs_is_an_error():
    objects = _objects(_pod("batch", "volcano"), _pod("web", "default-scheduler"))

    [finding] = unserved_pending_findings(objects, default_configuration(), Scope())

    assert finding.rule == UNSERVED_RULE
    assert finding.severity is Severity.ERROR
    assert finding.ref == "Pod/shop/batch"
    assert finding.field_path == "spec.schedulerName"
    assert finding.message == (
        '1 pod(s) Pending with schedulerName "volcano", which no known scheduler profile '
        'serves ("default-scheduler"): no scheduler will place them'
    )


def test_a_published_profile_serves_its_pods():
    published = decode_configuration(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "volcano"}]},
        "ConfigMap x/y",
    )  # fmt: skip
    configuration, _ = combine_configurations([("ConfigMap x/y", published)])

    objects = _objects(_pod("batch", "volcano"))

    assert unserved_pending_findings(objects, configuration, Scope()) == []


def test_bound_pods_and_pods_out_of_scope_are_not_findings():
    objects = _objects(_pod("bound", "volcano", node="n1"), _pod("batch", "volcano"))

    in_other_namespace = Scope(namespaces=frozenset({"other"}))

    assert unserved_pending_findings(objects, default_configuration(), in_other_namespace) == []
    assert [
        f.ref for f in unserved_pending_findings(objects, default_configuration(), Scope())
    ] == ["Pod/shop/batch"]


def test_an_unserved_workload_with_a_spread_of_its_own_gets_only_the_unserved_finding():
    # shop/batch: three replicas, a hard zone constraint, schedulerName "topospread".
    fixture = Path(__file__).resolve().parents[1] / "data" / "lint" / "unserved-scheduler.yaml"
    manifests, _ = load_audit_objects([str(fixture)])
    objects = [*manifests, *_objects(_pod("batch-0", "topospread"))]
    configuration = default_configuration()

    report = audit(objects, configuration)
    unserved = unserved_pending_findings(objects, configuration, Scope())

    assert {w.ref: w.source for w in report.workloads}["Deployment/shop/batch"] == "pod"
    assert [f.rule for f in (*report.findings, *unserved)] == [UNSERVED_RULE]
