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
from topospread.model.decode import decode_object, decode_pod_update
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
