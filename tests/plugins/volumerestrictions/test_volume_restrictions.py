"""VolumeRestrictions' inline-disk conflicts without the oracle (tests/differential
compares them with upstream)."""

from __future__ import annotations

from typing import Any

import pytest

from topospread.model.decode import decode_documents
from topospread.model.objects import Pod
from topospread.plugins.volumerestrictions import is_volume_conflict


def _pod(volume: dict[str, Any]) -> Pod:
    (pod,) = decode_documents(
        [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {
                    "containers": [{"name": "c", "image": "i"}],
                    "volumes": [{"name": "d", **volume}],
                },
            }
        ]
    ).objects
    assert isinstance(pod, Pod)
    return pod


GCE = {"gcePersistentDisk": {"pdName": "a"}}
GCE_RO = {"gcePersistentDisk": {"pdName": "a", "readOnly": True}}
AWS_RO = {"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}}
ISCSI = {"iscsi": {"targetPortal": "p:3260", "iqn": "iqn.x", "lun": 0}}
ISCSI_RO_OTHER = {"iscsi": {"targetPortal": "q:3260", "iqn": "iqn.x", "lun": 3, "readOnly": True}}
RBD = {"rbd": {"monitors": ["m1", "m2"], "image": "i"}}
RBD_POOL = {"rbd": {"monitors": ["m2"], "pool": "rbd", "image": "i"}}
RBD_OTHER = {"rbd": {"monitors": ["m1"], "pool": "x", "image": "i"}}


@pytest.mark.parametrize(
    ("mine", "theirs", "conflict"),
    [
        (GCE, GCE, True),
        (GCE_RO, GCE_RO, False),
        (GCE_RO, GCE, True),
        (AWS_RO, AWS_RO, True),  # EBS conflicts even read-only
        (ISCSI, ISCSI_RO_OTHER, True),  # same IQN, any portal or LUN
        (ISCSI_RO_OTHER, ISCSI_RO_OTHER, False),
        (RBD, RBD_POOL, True),  # the pool defaults to "rbd"
        (RBD, RBD_OTHER, False),
        (GCE, AWS_RO, False),
    ],
)
def test_conflicts(mine: dict[str, Any], theirs: dict[str, Any], conflict: bool) -> None:
    (volume,) = _pod(mine).inline_volumes
    assert is_volume_conflict(volume, _pod(theirs)) is conflict
