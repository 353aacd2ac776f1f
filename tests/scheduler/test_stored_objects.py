"""Objects read from a server are decoded as stored, on every live path: the scheduler's
informers (``decode_one``, the decoder alone on one object) and ``explain pod/NAME``
(``pod_to_schedule``, through ``decode_stored``) read them alike, and neither validates
again what the server already admitted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topospread.client.objects import decode_stored, pod_to_schedule
from topospread.errors import ValidationError
from topospread.io.loader import decode_objects
from topospread.model.objects import Pod
from topospread.scheduler.cache import decode_one

STORED = Path(__file__).parents[1] / "data" / "stored"


def _stored_pod() -> dict:
    return yaml.safe_load((STORED / "pod-ratcheted-node-affinity.yaml").read_text())


def test_create_time_validation_refuses_the_pod_as_a_manifest() -> None:
    # Without its uid the pod is a manifest, validated as a create (with it, stored).
    manifest = _stored_pod()
    del manifest["metadata"]["uid"]
    with pytest.raises(ValidationError, match='Invalid value: "old value!"'):
        decode_objects([manifest], "manifest")


def test_the_informer_and_explain_both_accept_the_stored_pod_and_read_it_alike() -> None:
    informed = decode_one(_stored_pod())
    explained, notes = pod_to_schedule(_stored_pod(), "https://server: pod shop/x")
    (stored,), skipped = decode_stored([_stored_pod()], "https://server")
    assert isinstance(informed, Pod)
    assert informed == explained == stored
    assert notes == []
    assert skipped == ()
    required = informed.affinity.node_affinity.required  # type: ignore[union-attr]
    assert [t.match_expressions[0].values for t in required.node_selector_terms] == [
        ("rack-1",),
        ("old value!",),
    ]


def test_the_informer_still_skips_what_cannot_be_decoded() -> None:
    broken = _stored_pod()
    broken["spec"]["containers"] = "not a list"
    assert decode_one(broken) is None
