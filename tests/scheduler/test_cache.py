"""The scheduler cache's pod decoder reads a spec once for a pod's versions and for the
replicas of one template, and decodes every pod as decoding it afresh would."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
import yaml

from topospread.model.decode import decode_object
from topospread.model.objects import Pod
from topospread.scheduler.cache import PodDecoder

REPLICA = yaml.safe_load(
    """
apiVersion: v1
kind: Pod
metadata:
  name: web-7d4b9c-aaaaa
  namespace: shop
  uid: 0f7c5a0e-0000-4000-8000-000000000001
  creationTimestamp: "2026-11-28T10:00:00Z"
  resourceVersion: "100"
  labels: {app: web, pod-template-hash: 7d4b9c}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: rs-1, controller: true}
spec:
  schedulerName: topospread
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [pod-template-hash]
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
  containers:
  - name: web
    image: nginx:1.27
    resources: {requests: {cpu: 250m, memory: 256Mi}}
status: {phase: Pending, qosClass: Burstable}
"""
)


def replica(index: int, **labels: str) -> dict[str, Any]:
    doc = copy.deepcopy(REPLICA)
    meta = doc["metadata"]
    meta["name"] = f"web-7d4b9c-{index:05d}"
    meta["uid"] = f"0f7c5a0e-0000-4000-8000-{index:012d}"
    meta["resourceVersion"] = str(100 + index)
    meta["labels"].update(labels)
    return doc


def bound(doc: dict[str, Any], node: str) -> dict[str, Any]:
    new = copy.deepcopy(doc)
    new["spec"]["nodeName"] = node
    new["metadata"]["resourceVersion"] = str(int(new["metadata"]["resourceVersion"]) + 1000)
    new["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return new


def key(doc: dict[str, Any]) -> str:
    return f"{doc['metadata']['namespace']}/{doc['metadata']['name']}"


def decoded(decoder: PodDecoder, doc: dict[str, Any]) -> Pod:
    pod = decoder.decode(key(doc), doc)
    assert isinstance(pod, Pod)
    assert pod == decode_object(doc)
    return pod


def test_the_replicas_of_a_template_share_its_decoded_spec() -> None:
    decoder = PodDecoder()
    first = decoded(decoder, replica(1))
    second = decoded(decoder, replica(2))
    assert second.name == "web-7d4b9c-00002"
    assert second.containers is first.containers
    assert second.volumes is first.volumes
    assert second.topology_spread_constraints is first.topology_spread_constraints


def test_a_bind_report_is_decoded_from_the_pod_it_follows() -> None:
    decoder = PodDecoder()
    doc = replica(1)
    pending = decoded(decoder, doc)
    on_node = decoded(decoder, bound(doc, "node-a"))
    assert on_node.node_name == "node-a"
    assert on_node.metadata is pending.metadata
    assert on_node.containers is pending.containers


def test_a_replica_bound_elsewhere_serves_as_the_template_of_a_pending_one() -> None:
    decoder = PodDecoder()
    on_node = decoded(decoder, bound(replica(1), "node-a"))
    pending = decoded(decoder, replica(2))
    assert pending.node_name == ""
    assert pending.containers is on_node.containers


def test_a_pending_replica_serves_as_the_template_of_one_created_bound() -> None:
    decoder = PodDecoder()
    pending = decoded(decoder, replica(1))
    on_node = decoded(decoder, bound(replica(2), "node-b"))
    assert on_node.node_name == "node-b"
    assert on_node.containers is pending.containers


def test_a_pod_with_the_same_labels_and_another_spec_is_read_afresh() -> None:
    decoder = PodDecoder()
    first = decoded(decoder, replica(1))
    other = replica(2)
    other["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert decoded(decoder, other).containers != first.containers


def test_pods_of_other_namespaces_or_labels_are_not_siblings() -> None:
    decoder = PodDecoder()
    first = decoded(decoder, replica(1))
    elsewhere = replica(2)
    elsewhere["metadata"]["namespace"] = "other"
    assert decoded(decoder, elsewhere).containers is not first.containers
    assert decoded(decoder, replica(3, track="canary")).containers is not first.containers


def test_only_the_newest_templates_are_remembered() -> None:
    decoder = PodDecoder(siblings=2)
    first = decoded(decoder, replica(1, template="a"))
    decoded(decoder, replica(2, template="b"))
    decoded(decoder, replica(3, template="c"))
    assert decoded(decoder, replica(4, template="a")).containers is not first.containers


def test_a_gone_pod_still_serves_as_its_replicas_template() -> None:
    decoder = PodDecoder()
    doc = replica(1)
    first = decoded(decoder, doc)
    decoder.forget(key(doc))
    again = decoded(decoder, doc)
    assert again.containers is first.containers


@pytest.mark.parametrize(
    "labels",
    [
        {"app": ["not", "a", "string"]},  # no template: decoded whole
        {"app": {"x": 1}},
        {"app": 5},  # a template key: decoded from it, the metadata refused
    ],
)
def test_a_pod_whose_labels_cannot_be_read_is_skipped_and_logged(
    labels: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    decoder = PodDecoder()
    decoded(decoder, replica(1))
    doc = replica(2)
    doc["metadata"]["labels"] = labels
    with caplog.at_level(logging.WARNING, logger="topospread.scheduler.cache"):
        assert decoder.decode(key(doc), doc) is None
    assert "metadata.labels" in caplog.text


def test_a_replica_with_claim_statuses_is_decoded_whole() -> None:
    decoder = PodDecoder()
    first = decoded(decoder, replica(1))
    other = replica(2)
    other["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "c"}]
    assert decoded(decoder, other).containers is not first.containers
