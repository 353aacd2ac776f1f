"""The scheduler's informers list the storage objects and its cache hands them to the
volume plugins, as kube-scheduler's listers do."""

from __future__ import annotations

from pathlib import Path

from topospread.client.source import STORAGE_RESOURCES
from topospread.io import decode_objects, load_documents
from topospread.model.storage import PersistentVolume, PersistentVolumeClaim
from topospread.scheduler.cache import OBJECT_FIELDS, SchedulerCache
from topospread.scheduler.scheduler import INFORMER_RESOURCES

DATA = Path(__file__).resolve().parents[1] / "data" / "storage"


def test_the_scheduler_watches_every_storage_kind() -> None:
    assert set(STORAGE_RESOURCES) <= set(INFORMER_RESOURCES)
    assert {r.kind for r in STORAGE_RESOURCES} <= set(OBJECT_FIELDS)


def test_listed_storage_objects_reach_the_frameworks_and_leave_when_deleted() -> None:
    documents = [d for d in load_documents(DATA / "cluster.yaml") if d is not None]
    objects, _ = decode_objects(documents, "informer", admitted=True)
    cache = SchedulerCache()
    for obj in objects:
        cache.set_object(obj)
    listed = cache.cluster_objects()
    assert isinstance(listed.persistent_volume("pv-data-web-0"), PersistentVolume)
    assert isinstance(listed.persistent_volume_claim("shop", "data-web-0"), PersistentVolumeClaim)
    assert listed.csi_node("node-a") is not None
    assert len(list(listed.volume_attachments_on("node-b"))) == 1
    generation = cache.objects_generation
    cache.delete_object(OBJECT_FIELDS["PersistentVolume"], "/pv-data-web-0")
    assert cache.objects_generation > generation
    assert cache.cluster_objects().persistent_volume("pv-data-web-0") is None
