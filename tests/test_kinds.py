"""One table of object kinds (topospread.model.kinds.KINDS): decoding, the live reads, the
scheduler's informers, the anonymizer and the live tests derive from it, and the RBAC
manifests under deploy/ grant exactly what it says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.client.snapshot import ANONYMIZER_HOOKS
from topospread.client.source import AUDIT_RESOURCES, RESOURCES, SCHEDULER_RESOURCES
from topospread.errors import DecodeError
from topospread.model import decode
from topospread.model.decode import SUPPORTED_KINDS, decode_object
from topospread.model.kinds import KINDS, KINDS_BY_NAME, METADATA_ONLY, Decoder, Kind, Listing
from topospread.scheduler.scheduler import INFORMER_RESOURCES
from topospread.testing import live

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"

Grant = tuple[str, str, str, str]
"""(API group, resource, verb, resource name or "" for every object)."""

READER_GRANTS_OUTSIDE_THE_TABLE: frozenset[Grant] = frozenset(
    {
        # explain --autoscaler reads Cluster Autoscaler's status ConfigMap by name: other
        # ConfigMaps may hold what a reader should not see.
        ("", "configmaps", "get", "cluster-autoscaler-status"),
    }
)

SCHEDULER_READ_VERBS = frozenset({"get", "list", "watch"})
"""What an informer needs; the scheduler role's other verbs are the binding cycle's writes
(binds, statuses, Events, claims), which the table does not describe."""


def _minimal(kind: Kind) -> dict[str, Any]:
    metadata = {"name": "x", "namespace": "default"} if kind.namespaced else {"name": "x"}
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": metadata}


def _cluster_role_grants(path: Path, name: str) -> set[Grant]:
    documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    (role,) = [d for d in documents if d["kind"] == "ClusterRole" and d["metadata"]["name"] == name]
    return {
        (group, resource, verb, resource_name)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
        for resource_name in rule.get("resourceNames", [""])
    }


def test_each_kind_is_one_row_with_one_version() -> None:
    assert len(KINDS_BY_NAME) == len(KINDS)
    assert len({(k.group, k.plural) for k in KINDS}) == len(KINDS)


def test_the_decoder_reads_exactly_the_kinds_the_table_gives_a_decoder() -> None:
    assert dict(SUPPORTED_KINDS) == {
        (k.api_version, k.kind): k.kind for k in KINDS if k.decoder is not None
    }
    assert set(decode._CORE_DECODERS) == {k.kind for k in KINDS if k.decoder is Decoder.CORE}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
def test_decode_object_reads_a_kind_with_a_decoder_and_skips_one_without(kind: Kind) -> None:
    if kind.decoder is None:
        assert decode_object(_minimal(kind)) is None
        return
    try:
        obj = decode_object(_minimal(kind))
    except DecodeError:
        return  # read, and refused for a missing field: not skipped
    assert type(obj).__name__ == kind.kind


def test_each_resource_the_client_lists_is_its_row_of_the_table() -> None:
    assert list(RESOURCES) == [k.kind for k in KINDS]
    for kind in KINDS:
        resource = RESOURCES[kind.kind]
        assert resource.api_version == kind.api_version
        assert (resource.plural, resource.namespaced, resource.optional) == (
            kind.plural,
            kind.namespaced,
            kind.optional,
        )


def test_live_reads_list_the_scheduler_rows_and_audit_adds_the_audit_rows_in_table_order() -> None:
    scheduler = [k.kind for k in KINDS if k.listed is Listing.SCHEDULER]
    audit = [k.kind for k in KINDS if k.listed is Listing.AUDIT]
    assert [r.kind for r in SCHEDULER_RESOURCES] == scheduler
    assert [r.kind for r in AUDIT_RESOURCES] == scheduler + audit


def test_the_scheduler_runs_an_informer_for_each_watched_row_and_no_other() -> None:
    assert [r.kind for r in INFORMER_RESOURCES] == [k.kind for k in KINDS if k.watched]
    assert all(r is RESOURCES[r.kind] for r in INFORMER_RESOURCES)


def test_each_anonymizer_hook_the_table_names_exists_and_each_hook_is_named() -> None:
    named = {k.anonymizer for k in KINDS} - {METADATA_ONLY}
    assert named == set(ANONYMIZER_HOOKS)


def test_the_live_tests_can_write_every_kind_of_the_table() -> None:
    for kind in KINDS:
        assert live._RESOURCES[kind.kind].path("ns", "x") == RESOURCES[kind.kind].path("ns", "x")


def test_the_reader_role_grants_what_the_table_lists_and_nothing_else() -> None:
    expected = {
        (k.group, k.plural, verb, "") for k in KINDS for verb in k.reader_verbs
    } | READER_GRANTS_OUTSIDE_THE_TABLE
    grants = _cluster_role_grants(DEPLOY / "rbac" / "reader.yaml", "topospread-reader")
    assert grants == expected


def test_the_scheduler_role_lets_each_informer_list_and_watch_and_reads_nothing_else() -> None:
    expected = {
        (k.group, k.plural, verb, "") for k in KINDS if k.watched for verb in SCHEDULER_READ_VERBS
    }
    grants = _cluster_role_grants(DEPLOY / "scheduler" / "rbac.yaml", "topospread-scheduler")
    assert {g for g in grants if g[2] in SCHEDULER_READ_VERBS} == expected
