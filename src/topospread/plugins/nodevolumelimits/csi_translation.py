"""In-tree volume sources seen as the CSI volumes they migrate to: the driver a source is
counted against and the volume handle that identifies the disk.

Facts from ``k8s.io/csi-translation-lib`` v0.37.1 (``CSITranslator`` and its plugins),
reduced to what NodeVolumeLimits reads of a translated volume — its driver and
``volumeHandle`` — and to the sources it translates at all. Seven in-tree plugins are
migratable (a pod volume or PV with one of their sources is "migratable"); NodeVolumeLimits
counts five of them (AWS EBS, Azure Disk, Cinder, GCE PD, Portworx) and stops at the
migration check for Azure File and vSphere, so those two are never translated here.

Handles:

* AWS EBS: ``volumeID`` as is, unless it starts with ``aws://``: then it is parsed as Go's
  ``net/url.Parse`` parses it and its path, trimmed of ``/``, must match ``^vol-[^/]*$``;
* Azure Disk: ``diskURI``; only ``kind: Managed`` (any case) translates, and the API
  server defaults an unset kind to ``Shared``, so a disk without a kind does not;
* Cinder and Portworx: ``volumeID``;
* GCE PD inline: ``projects/UNSPECIFIED/zones/UNSPECIFIED/disks/<pdName>``; as a PV, the
  zone comes from the volume's beta zone label, else its GA one: one zone gives a zonal
  handle, several (``__``-separated) a regional one for their common region (each zone
  must read ``<locale>-<region>-<zone>``, all in one region), none the unspecified zone.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Final

from topospread.errors import go_quote
from topospread.model.objects import InTreeSource
from topospread.model.storage import PersistentVolume

__all__ = [
    "AWS_EBS_DRIVER",
    "GCE_PD_DRIVER",
    "PLUGIN_OF_SOURCE",
    "Translated",
    "TranslationError",
    "csi_driver_of_plugin",
    "ebs_volume_id",
    "is_migratable_plugin",
    "translate_inline",
    "translate_pv",
]

AWS_EBS_DRIVER: Final = "ebs.csi.aws.com"
AZURE_DISK_DRIVER: Final = "disk.csi.azure.com"
AZURE_FILE_DRIVER: Final = "file.csi.azure.com"
CINDER_DRIVER: Final = "cinder.csi.openstack.org"
GCE_PD_DRIVER: Final = "pd.csi.storage.gke.io"
PORTWORX_DRIVER: Final = "pxd.portworx.com"
VSPHERE_DRIVER: Final = "csi.vsphere.vmware.com"

PLUGIN_OF_SOURCE: Final = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", AWS_EBS_DRIVER),
    "azureDisk": ("kubernetes.io/azure-disk", AZURE_DISK_DRIVER),
    "azureFile": ("kubernetes.io/azure-file", AZURE_FILE_DRIVER),
    "cinder": ("kubernetes.io/cinder", CINDER_DRIVER),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", GCE_PD_DRIVER),
    "portworxVolume": ("kubernetes.io/portworx-volume", PORTWORX_DRIVER),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", VSPHERE_DRIVER),
}
"""Volume source field -> (in-tree plugin name, CSI driver it migrates to)."""

_DRIVER_OF_PLUGIN: Final = dict(PLUGIN_OF_SOURCE.values())

_UNSPECIFIED: Final = "UNSPECIFIED"
_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
_GA_ZONE: Final = "topology.kubernetes.io/zone"
_MULTI_ZONE_DELIMITER: Final = "__"


@dataclass(frozen=True, slots=True)
class Translated:
    """The CSI view of an in-tree volume."""

    driver: str
    volume_handle: str


@dataclass(frozen=True, slots=True)
class TranslationError:
    """Why a source does not translate, in upstream's words."""

    message: str


def is_migratable_plugin(plugin_name: str) -> bool:
    """``IsMigratableIntreePluginByName``."""
    return plugin_name in _DRIVER_OF_PLUGIN


def csi_driver_of_plugin(plugin_name: str) -> str | None:
    """``GetCSINameFromInTreeName``: the CSI driver an in-tree plugin migrates to."""
    return _DRIVER_OF_PLUGIN.get(plugin_name)


def plugin_of(source: InTreeSource) -> str:
    """``GetInTreePluginNameFromSpec``: the in-tree plugin serving ``source``."""
    return PLUGIN_OF_SOURCE[source.kind][0]


def translate_inline(source: InTreeSource) -> Translated | TranslationError:
    """``TranslateInTreeInlineVolumeToCSI`` of a pod volume's source."""
    return _translate(source, None)


def translate_pv(pv: PersistentVolume) -> Translated | TranslationError:
    """``TranslateInTreePVToCSI`` of a PersistentVolume with an in-tree source."""
    if pv.in_tree is None:
        return TranslationError(f"could not find in-tree plugin translation logic for {pv.name}")
    return _translate(pv.in_tree, pv)


def _translate(source: InTreeSource, pv: PersistentVolume | None) -> Translated | TranslationError:
    fields = source.fields
    kind = source.kind
    if kind == "awsElasticBlockStore":
        handle = ebs_volume_id(fields.get("volumeID", ""))
        if isinstance(handle, TranslationError):
            return TranslationError(
                f"failed to translate Kubernetes ID to EBS Volume ID {handle.message}"
            )
        return Translated(AWS_EBS_DRIVER, handle)
    if kind == "azureDisk":
        disk_kind = fields.get("kind")
        if disk_kind is not None and not _equal_fold_ascii(disk_kind, "Managed"):
            return TranslationError(f"kind({disk_kind}) is not supported in csi migration")
        return Translated(AZURE_DISK_DRIVER, fields.get("diskURI", ""))
    if kind == "cinder":
        return Translated(CINDER_DRIVER, fields.get("volumeID", ""))
    if kind == "portworxVolume":
        return Translated(PORTWORX_DRIVER, fields.get("volumeID", ""))
    if kind == "gcePersistentDisk":
        pd_name = fields.get("pdName", "")
        if pv is None:
            return Translated(GCE_PD_DRIVER, _gce_zonal(_UNSPECIFIED, pd_name))
        return _gce_pv_handle(pv, pd_name)
    # Azure File and vSphere: NodeVolumeLimits never asks (their migration is off there).
    return TranslationError(f"translation of {kind} volumes is not modelled")


def _equal_fold_ascii(text: str, ascii_word: str) -> bool:
    # strings.EqualFold against an ASCII word: no non-ASCII rune folds onto these letters.
    return text.isascii() and text.lower() == ascii_word.lower()


def _gce_zonal(zone: str, pd_name: str) -> str:
    return f"projects/{_UNSPECIFIED}/zones/{zone}/disks/{pd_name}"


def _gce_pv_handle(pv: PersistentVolume, pd_name: str) -> Translated | TranslationError:
    labels = pv.metadata.labels
    zones_label = labels.get(_BETA_ZONE, "") or labels.get(_GA_ZONE, "")
    zones = zones_label.split(_MULTI_ZONE_DELIMITER)
    if len(zones) == 1:
        return Translated(GCE_PD_DRIVER, _gce_zonal(zones[0] or _UNSPECIFIED, pd_name))
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            return TranslationError(
                "failed to get region from zones: zone in unexpected format, "
                f"expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        return TranslationError(
            "failed to get region from zones: multiple or no regions gotten from zones"
        )
    (region,) = regions
    return Translated(GCE_PD_DRIVER, f"projects/{_UNSPECIFIED}/regions/{region}/disks/{pd_name}")


# -- AWS volume IDs: Go's net/url.Parse, as far as an "aws://" ID reaches it -----------------

_AWS_VOLUME: Final = re.compile(r"vol-[^/]*")
"""``awsVolumeRegMatch`` (``^vol-[^/]*$``), applied with ``fullmatch``: Go's ``$`` does
not match before a trailing newline as Python's does."""

_HEX: Final = frozenset("0123456789abcdefABCDEF")
_HOST_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$&'()*+,;=:[]<>\""
)
"""ASCII bytes a URL host may hold unescaped (``shouldEscape(c, encodeHost)`` is false)."""
_USERINFO_OK: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@"
)


class _URLError(Exception):
    """A ``net/url`` parse error, with Go's text."""


def ebs_volume_id(kubernetes_id: str) -> str | TranslationError:
    """``KubernetesVolumeIDToEBSVolumeID``: the EBS volume ID of an ``awsElasticBlockStore``
    ``volumeID``, or the error upstream returns."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        path = _url_path(kubernetes_id)
    except _URLError as exc:
        return TranslationError(f"Invalid disk name ({kubernetes_id}): {exc}")
    aws_id = path.strip("/")
    if _AWS_VOLUME.fullmatch(aws_id) is None:
        return TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _url_path(raw: str) -> str:
    # url.Parse for a string starting "aws://": the fragment is cut off first, the query
    # next, then the authority (userinfo@host:port) up to the first "/"; what is left is
    # the path, percent-decoded. Every part is checked as Go checks it.
    without_fragment, _, fragment = raw.partition("#")
    try:
        path = _parse_without_fragment(without_fragment)
    except _URLError as exc:
        raise _URLError(f"parse {go_quote(without_fragment)}: {exc}") from None
    if fragment:
        try:
            _unescape(fragment, host=False)
        except _URLError as exc:
            raise _URLError(f"parse {go_quote(raw)}: {exc}") from None
    return path


def _parse_without_fragment(url: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise _URLError("net/url: invalid control character in URL")
    rest = url[len("aws:") :]
    rest = rest.partition("?")[0]  # the query, and a lone trailing "?" (ForceQuery)
    authority = rest[2:]
    slash = authority.find("/")
    path = ""
    if slash >= 0:
        authority, path = authority[:slash], authority[slash:]
    _parse_authority(authority)
    return _unescape(path, host=False)


def _parse_authority(authority: str) -> None:
    at = authority.rfind("@")
    _parse_host(authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    if any(c not in _USERINFO_OK for c in userinfo):
        raise _URLError("net/url: invalid userinfo")
    for part in userinfo.split(":", 1):
        _unescape(part, host=False)


def _parse_host(host: str) -> None:
    bracket = host.rfind("[")
    if bracket > 0:
        raise _URLError("invalid IP-literal")
    if bracket == 0:
        close = host.rfind("]")
        if close < 0:
            raise _URLError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
        _unescape(colon_port, host=True)
        literal = host[1:close]
        # RFC 6874: "%25" starts a zone, which may escape more than a host may.
        zone_at = literal.find("%25")
        address = _unescape(literal if zone_at < 0 else literal[:zone_at], host=True)
        if zone_at >= 0:
            address += _unescape(literal[zone_at:], host=False)
        # netip.ParseAddr: only an IPv6 address may be bracketed. (Go's wording of why an
        # address does not parse is not reproduced; the verdict is.)
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            raise _URLError(
                f"invalid host: ParseAddr({go_quote(address)}): unable to parse IP"
            ) from None
        if parsed.version == 4:
            raise _URLError("invalid IP-literal")
        return
    colon = host.rfind(":")
    if colon >= 0 and not _valid_optional_port(host[colon:]):
        raise _URLError(f"invalid port {go_quote(host[colon:])} after host")
    _unescape(host, host=True)


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _unescape(text: str, *, host: bool) -> str:
    # Go's unescape over the UTF-8 bytes; decoded bytes that are not UTF-8 are kept as
    # surrogate escapes, so distinct IDs stay distinct.
    data = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x25:  # "%"
            pair = data[i + 1 : i + 3]
            if len(pair) < 2 or not all(chr(b) in _HEX for b in pair):
                bad = data[i : i + 3].decode("utf-8", "surrogateescape")
                raise _URLError(f"invalid URL escape {go_quote(bad)}")
            if host and int(chr(pair[0]), 16) < 8 and data[i : i + 3] != b"%25":
                raise _URLError(f"invalid URL escape {go_quote(data[i : i + 3].decode())}")
            out.append(int(pair.decode(), 16))
            i += 3
            continue
        if host and byte < 0x80 and chr(byte) not in _HOST_OK:
            raise _URLError(f"invalid character {go_quote(chr(byte))} in host name")
        out.append(byte)
        i += 1
    return out.decode("utf-8", "surrogateescape")
