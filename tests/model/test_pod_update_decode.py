"""A pod's next version decodes to what decoding it afresh gives, spec read or not.

The scheduler's pod informer decodes the report of a bind (``spec.nodeName`` set, the
node's topology labels and a PodScheduled condition added) from the version before it:
``decode_pod_update`` reads only the metadata and status when the rest of the spec is
unchanged. Whatever the pod, the result equals ``decode_object`` of the new version.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from topospread.errors import DecodeError
from topospread.model.decode import _POD_META_READ, decode_object, decode_pod_update
from topospread.model.objects import Pod
from topospread.testing.scenarios import draw_full_scenarios, draw_scenarios

POD_DOCS = [s.pod for s in draw_full_scenarios(20261127, 40)] + [
    s.pod for s in draw_scenarios(20261127, 40)
]


def _decoded(doc: dict[str, Any]) -> Pod:
    pod = decode_object(doc)
    assert isinstance(pod, Pod)
    return pod


def _bound(doc: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(doc)
    new["spec"]["nodeName"] = "node-7"
    new.setdefault("metadata", {}).setdefault("labels", {})["topology.kubernetes.io/zone"] = "z"
    new["metadata"]["resourceVersion"] = "42"
    new["status"] = {
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "startTime": "2026-11-27T10:00:00Z",
        "phase": "Pending",
    }
    return new


@pytest.mark.parametrize("index", range(len(POD_DOCS)))
def test_a_bind_report_decodes_as_the_whole_pod_would(index: int) -> None:
    doc = copy.deepcopy(POD_DOCS[index])
    doc.setdefault("spec", {})
    new = _bound(doc)
    assert decode_pod_update(new, doc, _decoded(doc)) == decode_object(new)


@pytest.mark.parametrize("index", range(0, len(POD_DOCS), 7))
def test_a_changed_spec_is_read_again(index: int) -> None:
    doc = copy.deepcopy(POD_DOCS[index])
    doc.setdefault("spec", {})
    new = _bound(doc)
    new["spec"]["tolerations"] = [{"key": "added", "operator": "Exists"}]
    new["spec"]["priority"] = 7
    updated = decode_pod_update(new, doc, _decoded(doc))
    assert updated == decode_object(new)
    assert isinstance(updated, Pod)
    assert updated.priority == 7


def test_a_bad_field_in_the_new_metadata_is_reported_as_decoding_reports_it() -> None:
    doc = copy.deepcopy(POD_DOCS[0])
    doc.setdefault("spec", {})
    new = _bound(doc)
    new["metadata"]["labels"] = {"app": 3}
    with pytest.raises(DecodeError) as reused:
        decode_pod_update(new, doc, _decoded(doc))
    with pytest.raises(DecodeError) as afresh:
        decode_object(new)
    assert str(reused.value) == str(afresh.value)


def _sibling(doc: dict[str, Any]) -> dict[str, Any]:
    # Another replica of the same template: its own name, uid and creation time.
    new = copy.deepcopy(doc)
    meta = new.setdefault("metadata", {})
    meta["name"] = f"{meta.get('name', 'pod')}-sibling"
    meta["uid"] = "5b0c6a1e-0000-4000-8000-00000000beef"
    meta["creationTimestamp"] = "2026-11-28T10:00:00Z"
    new["status"] = {"phase": "Pending"}
    return new


@pytest.mark.parametrize("index", range(len(POD_DOCS)))
def test_a_replica_decodes_from_its_sibling_as_the_whole_pod_would(index: int) -> None:
    doc = copy.deepcopy(POD_DOCS[index])
    doc.setdefault("spec", {})
    new = _sibling(doc)
    assert decode_pod_update(new, doc, _decoded(doc)) == decode_object(new)


def test_a_bind_that_changes_only_the_resource_version_keeps_the_decoded_metadata() -> None:
    doc = copy.deepcopy(POD_DOCS[0])
    doc.setdefault("spec", {})
    previous = _decoded(doc)
    new = copy.deepcopy(doc)
    new["spec"]["nodeName"] = "node-7"
    new["metadata"]["resourceVersion"] = "43"
    new["metadata"]["managedFields"] = [{"manager": "kube-scheduler", "operation": "Update"}]
    updated = decode_pod_update(new, doc, previous)
    assert isinstance(updated, Pod)
    assert updated.metadata is previous.metadata
    assert updated == decode_object(new)


CHANGED_METADATA = {
    "name": "renamed",
    "namespace": "elsewhere",
    "uid": "5b0c6a1e-0000-4000-8000-000000000001",
    "labels": {"app": "changed"},
    "annotations": {"note": "changed"},
    "ownerReferences": [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u-1",
            "controller": True,
        }
    ],
    "deletionTimestamp": "2026-11-28T11:00:00Z",
    "creationTimestamp": "2026-11-28T09:00:00Z",
}


@pytest.mark.parametrize("field", sorted(CHANGED_METADATA))
def test_a_changed_metadata_field_is_read_again(field: str) -> None:
    doc = copy.deepcopy(POD_DOCS[1])
    doc.setdefault("spec", {})
    new = _bound(doc)
    new["metadata"][field] = CHANGED_METADATA[field]
    assert decode_pod_update(new, doc, _decoded(doc)) == decode_object(new)


class _Recording(dict[str, Any]):
    """A metadata mapping that remembers which fields were read."""

    read: set[str]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_the_metadata_fields_compared_are_all_that_decoding_a_pod_reads() -> None:
    doc = copy.deepcopy(POD_DOCS[0])
    metadata = _Recording(doc.get("metadata") or {})
    metadata.read = set()
    doc["metadata"] = metadata
    decode_object(doc)
    assert metadata.read == set(_POD_META_READ)


@pytest.mark.parametrize("index", range(0, len(POD_DOCS), 9))
def test_a_field_dropped_from_the_spec_as_the_pod_is_bound_is_read_again(index: int) -> None:
    doc = copy.deepcopy(POD_DOCS[index])
    doc.setdefault("spec", {})["priority"] = 3
    new = _bound(doc)
    del new["spec"]["priority"]
    updated = decode_pod_update(new, doc, _decoded(doc))
    assert updated == decode_object(new)
    assert isinstance(updated, Pod)
    assert updated.priority is None


def test_a_replica_in_another_namespace_reads_its_ephemeral_volumes_again() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "one", "uid": "u-a"},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "volumes": [
                {
                    "name": "scratch",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}},
                            }
                        }
                    },
                }
            ],
        },
    }
    elsewhere = copy.deepcopy(doc)
    elsewhere["metadata"] = {"name": "b", "namespace": "two", "uid": "u-b"}
    updated = decode_pod_update(elsewhere, doc, _decoded(doc))
    assert updated == decode_object(elsewhere)
    assert updated != decode_pod_update(
        elsewhere | {"metadata": doc["metadata"]}, doc, _decoded(doc)
    )


def test_claim_statuses_in_either_status_are_read_afresh() -> None:
    doc = copy.deepcopy(POD_DOCS[0])
    doc.setdefault("spec", {})
    with_statuses = _sibling(doc)
    with_statuses["status"]["resourceClaimStatuses"] = [{"name": "gpu"}]
    assert decode_pod_update(with_statuses, doc, _decoded(doc)) == decode_object(with_statuses)
    assert decode_pod_update(doc, with_statuses, _decoded(with_statuses)) == decode_object(doc)
