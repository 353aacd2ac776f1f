"""Objects read back from a server (they carry a uid) are decoded as stored, by files as by
the live paths: a capture or snapshot holding what an older server admitted is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.errors import ValidationError
from topospread.io import load_cluster, load_pod

STORED = Path(__file__).parents[1] / "data" / "stored" / "pod-ratcheted-node-affinity.yaml"


def test_a_stored_pod_that_a_create_would_refuse_is_read_from_a_file() -> None:
    pod = load_pod(STORED)
    assert pod.metadata.uid
    assert pod.affinity is not None


def test_the_same_pod_without_its_uid_is_refused_as_a_create_is(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "\n".join(line for line in STORED.read_text().splitlines() if "uid:" not in line)
    )
    with pytest.raises(ValidationError, match="old value!"):
        load_pod(manifest)


def test_a_snapshot_holding_it_is_a_cluster(tmp_path: Path) -> None:
    cluster, _ = load_cluster([STORED])
    assert [p.name for p in cluster.pending_pods] == ["stored-before-1-32"]
