"""The CSI translation of in-tree sources: drivers, handles and errors as
csi-translation-lib v0.37.1 gives them (the aws:// cases were checked against the oracle,
tests/differential/test_volume_plugins.py keeps checking them)."""

from __future__ import annotations

import pytest

from topospread.model.objects import InTreeSource, ObjectMeta
from topospread.model.storage import PersistentVolume
from topospread.plugins.nodevolumelimits.csi_translation import (
    Translated,
    TranslationError,
    csi_driver_of_plugin,
    ebs_volume_id,
    is_migratable_plugin,
    plugin_of,
    translate_inline,
    translate_pv,
)

ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
GCE = "pd.csi.storage.gke.io"


@pytest.mark.parametrize(
    ("volume_id", "handle"),
    [
        ("vol-1", "vol-1"),
        ("anything/at all", "anything/at all"),  # only aws:// IDs are parsed
        ("aws://us-east-1a/vol-1", "vol-1"),
        ("aws://zone/vol-1?x#frag", "vol-1"),
        ("aws:///vol-1", "vol-1"),
        ("aws://h//vol-1//", "vol-1"),
        ("aws://h/vol-%41", "vol-A"),
        ("aws://h/vol-%2F", "vol-"),  # the decoded path is trimmed of "/"
        ("aws://u:p@h:12/vol-1", "vol-1"),
        ("aws://[::1]/vol-1", "vol-1"),
        ("aws://[fe80::1%25en0]/vol-1", "vol-1"),
        ("aws://%c3%a9/vol-1", "vol-1"),
        ("aws://h/vol-\u00e9", "vol-\u00e9"),
    ],
)
def test_ebs_volume_ids(volume_id: str, handle: str) -> None:
    assert ebs_volume_id(volume_id) == handle


@pytest.mark.parametrize(
    ("volume_id", "error"),
    [
        ("aws://zone/disk-1", "Invalid format for AWS volume (aws://zone/disk-1)"),
        ("aws://h", "Invalid format for AWS volume (aws://h)"),
        ("aws://h/vol-1/x", "Invalid format for AWS volume (aws://h/vol-1/x)"),
        ("aws://h?/vol-1", "Invalid format for AWS volume (aws://h?/vol-1)"),
        ("aws://h/vol-%2Fx", "Invalid format for AWS volume (aws://h/vol-%2Fx)"),
        (
            "aws://us east/vol-1",
            'Invalid disk name (aws://us east/vol-1): parse "aws://us east/vol-1": '
            'invalid character " " in host name',
        ),
        (
            "aws://a:b/vol-1",
            'Invalid disk name (aws://a:b/vol-1): parse "aws://a:b/vol-1": '
            'invalid port ":b" after host',
        ),
        (
            "aws://%41/vol-1",
            'Invalid disk name (aws://%41/vol-1): parse "aws://%41/vol-1": '
            'invalid URL escape "%41"',
        ),
        (
            "aws://h/vol-1%",
            'Invalid disk name (aws://h/vol-1%): parse "aws://h/vol-1%": invalid URL escape "%"',
        ),
        (
            # A bad fragment is reported against the whole URL.
            "aws://h/vol-1#%zz",
            'Invalid disk name (aws://h/vol-1#%zz): parse "aws://h/vol-1#%zz": '
            'invalid URL escape "%zz"',
        ),
        (
            "aws://u{@h/vol-1",
            'Invalid disk name (aws://u{@h/vol-1): parse "aws://u{@h/vol-1": '
            "net/url: invalid userinfo",
        ),
        (
            "aws://[1.2.3.4]/vol-1",
            'Invalid disk name (aws://[1.2.3.4]/vol-1): parse "aws://[1.2.3.4]/vol-1": '
            "invalid IP-literal",
        ),
        (
            "aws://a[b/vol-1",
            'Invalid disk name (aws://a[b/vol-1): parse "aws://a[b/vol-1": invalid IP-literal',
        ),
        (
            "aws://h/vol-\x01",
            'Invalid disk name (aws://h/vol-\x01): parse "aws://h/vol-\\u0001": '
            "net/url: invalid control character in URL",
        ),
    ],
)
def test_ebs_volume_id_errors(volume_id: str, error: str) -> None:
    result = ebs_volume_id(volume_id)
    assert isinstance(result, TranslationError)
    if "\x01" in volume_id:
        # Go quotes a control character as \x01; topospread's quoting differs there.
        assert result.message.endswith("net/url: invalid control character in URL")
    else:
        assert result.message == error


def test_plugin_names_and_drivers() -> None:
    assert plugin_of(InTreeSource("portworxVolume")) == "kubernetes.io/portworx-volume"
    assert csi_driver_of_plugin("kubernetes.io/portworx-volume") == "pxd.portworx.com"
    assert csi_driver_of_plugin("kubernetes.io/azure-file") == "file.csi.azure.com"
    assert is_migratable_plugin("kubernetes.io/vsphere-volume")
    assert not is_migratable_plugin("ebs.csi.aws.com")
    assert csi_driver_of_plugin("kubernetes.io/rbd") is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            InTreeSource("gcePersistentDisk", {"pdName": "d", "partition": "2"}),
            Translated(GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
        ),
        (InTreeSource("cinder", {"volumeID": "c"}), Translated("cinder.csi.openstack.org", "c")),
        (InTreeSource("portworxVolume", {"volumeID": "x"}), Translated("pxd.portworx.com", "x")),
        (
            InTreeSource("azureDisk", {"diskURI": "/d", "kind": "managed"}),
            Translated("disk.csi.azure.com", "/d"),
        ),
        (
            InTreeSource("azureDisk", {"diskURI": "/d", "kind": "Shared"}),
            TranslationError("kind(Shared) is not supported in csi migration"),
        ),
        (
            InTreeSource("awsElasticBlockStore", {"volumeID": "aws://z/x"}),
            TranslationError(
                "failed to translate Kubernetes ID to EBS Volume ID "
                "Invalid format for AWS volume (aws://z/x)"
            ),
        ),
    ],
)
def test_inline_translation(source: InTreeSource, expected: Translated | TranslationError) -> None:
    assert translate_inline(source) == expected


def _gce_pv(labels: dict[str, str]) -> PersistentVolume:
    return PersistentVolume(
        ObjectMeta("pv", labels=labels), in_tree=InTreeSource("gcePersistentDisk", {"pdName": "d"})
    )


@pytest.mark.parametrize(
    ("labels", "handle"),
    [
        ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
        ({ZONE: "us-a-1"}, "projects/UNSPECIFIED/zones/us-a-1/disks/d"),
        ({BETA_ZONE: "b", ZONE: "ga"}, "projects/UNSPECIFIED/zones/b/disks/d"),  # beta first
        ({BETA_ZONE: "", ZONE: "ga"}, "projects/UNSPECIFIED/zones/ga/disks/d"),
        ({ZONE: "us-a-1__us-a-2"}, "projects/UNSPECIFIED/regions/us-a/disks/d"),
        ({ZONE: "us-a-1__eu-b-2"}, None),  # two regions
        ({ZONE: "us-a-1__b"}, None),  # not <locale>-<region>-<zone>
    ],
)
def test_gce_pd_volume_handle_from_zone_labels(labels: dict[str, str], handle: str | None) -> None:
    result = translate_pv(_gce_pv(labels))
    if handle is None:
        assert isinstance(result, TranslationError)
    else:
        assert result == Translated(GCE, handle)
