"""Scheduler profiles a cluster publishes in labelled ConfigMaps, read without a server."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from topospread.client.schedulers import SCHEDULER_CONFIG_LABEL, discover_schedulers
from topospread.client.transport import FakeTransport, Request, Response

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = yaml.safe_load((ROOT / "deploy" / "scheduler" / "config.yaml").read_text())

KUBE_SCHEDULER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
"""


def _config_map(namespace: str, name: str, text: str) -> dict:
    return {
        "metadata": {"namespace": namespace, "name": name,
                     "labels": {SCHEDULER_CONFIG_LABEL: "true"}},
        "data": {"config.yaml": text},
    }  # fmt: skip


def _answer(items_by_namespace: dict, forbidden: set):
    def handler(request: Request) -> Response:
        assert ("labelSelector", f"{SCHEDULER_CONFIG_LABEL}=true") in request.query
        namespace = (
            request.path.split("/namespaces/")[1].split("/")[0]
            if ("/namespaces/" in request.path)
            else None
        )
        if namespace in forbidden:
            status = {"kind": "Status", "message": "configmaps is forbidden", "code": 403}
            return Response(403, json.dumps(status).encode())
        items = [i for ns, listed in items_by_namespace.items() if namespace in (None, ns)
                 for i in listed]  # fmt: skip
        return Response(200, json.dumps({"items": items}).encode())

    return handler


def test_the_shipped_scheduler_configmap_publishes_the_topospread_profile():
    shipped = SHIPPED["data"]["config.yaml"]
    transport = FakeTransport(_answer({"topospread-system": [
        _config_map("topospread-system", "topospread-scheduler", shipped)]}, set()))  # fmt: skip

    found = discover_schedulers(transport)

    assert SHIPPED["metadata"]["labels"][SCHEDULER_CONFIG_LABEL] == "true"
    assert [p.scheduler_name for p in found.configuration.profiles] == [
        "default-scheduler",
        "topospread",
    ]
    assert found.sources == (("ConfigMap topospread-system/topospread-scheduler", ("topospread",)),)
    assert found.notes == ()


def test_kube_schedulers_own_published_profile_replaces_the_upstream_default():
    transport = FakeTransport(_answer({"kube-system": [
        _config_map("kube-system", "kube-scheduler", KUBE_SCHEDULER)]}, set()))  # fmt: skip

    found = discover_schedulers(transport)

    [profile] = found.configuration.profiles
    assert profile.scheduler_name == "default-scheduler"
    args = profile.plugin_config["PodTopologySpread"]
    assert [c.topology_key for c in args.default_constraints] == ["topology.kubernetes.io/zone"]


def test_without_cluster_wide_rights_the_schedulers_namespaces_are_read_one_by_one():
    shipped = SHIPPED["data"]["config.yaml"]
    transport = FakeTransport(_answer({"topospread-system": [
        _config_map("topospread-system", "topospread-scheduler", shipped)]},
        {None, "kube-system"}))  # fmt: skip

    found = discover_schedulers(transport)

    assert [p.scheduler_name for p in found.configuration.profiles][-1] == "topospread"
    assert found.notes == (
        "scheduler configurations: may not list ConfigMaps in kube-system (RBAC); profiles "
        "published there are unknown (deploy/rbac/scheduler-configs.yaml grants it)",
    )


def test_a_configuration_that_does_not_decode_is_a_note_and_the_rest_still_counts():
    # A misspelt field: kube-scheduler's strict decoding refuses the whole configuration.
    broken = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
             "profiles:\n- schedulerName: x\n  pluginz: {}\n"  # fmt: skip
    transport = FakeTransport(_answer({"a": [_config_map("a", "broken", broken)]}, set()))

    found = discover_schedulers(transport)

    assert [p.scheduler_name for p in found.configuration.profiles] == ["default-scheduler"]
    [note] = found.notes
    assert note.startswith("ConfigMap a/broken: ")
    assert note.endswith("; its profiles are unknown")


def test_a_scheduler_name_published_twice_is_taken_from_the_first_configmap():
    one = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
          "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: batch\n"  # fmt: skip
    transport = FakeTransport(
        _answer({"a": [_config_map("a", "one", one)], "b": [_config_map("b", "two", one)]}, set())
    )

    found = discover_schedulers(transport)

    batch = found.configuration.profile("batch")
    assert batch is not None
    # Its configuration's global percentage travels with the profile.
    assert batch.percentage_of_nodes_to_score == 30
    assert found.notes == (
        'schedulerName "batch" is defined by ConfigMap a/one and ConfigMap b/two: '
        "the first is used",
    )
