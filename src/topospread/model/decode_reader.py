"""The typed reader every decoder shares, and the fields several kinds share.

:class:`_Reader` reads a JSON-like tree and records errors instead of raising, so that all
problems of a document are reported together. :mod:`topospread.model.decode` (the core
kinds), :mod:`~topospread.model.decode_storage`, :mod:`~topospread.model.decode_resource`
and the scheduler configuration's decoder import it from here, below all of them: a
decoder module never imports another one's entry point, so decoding has no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from topospread.errors import FieldError
from topospread.model.objects import (
    IN_TREE_MIGRATABLE_SOURCES,
    CSIVolumeSource,
    InTreeSource,
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaimSpec,
)
from topospread.model.quantity import (
    Quantity,
    QuantityError,
    is_negative_quantity,
    parse_quantity,
)

T = TypeVar("T")

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# Quantities repeat across a cluster ("100m", "64Mi" in every replica); parsed ones are
# immutable, so each distinct spelling is parsed once. Bounded: hostile input with many
# distinct spellings only stops being cached.
_QUANTITY_CACHE_SIZE: Final = 4096
_QUANTITIES: dict[tuple[str, bool], Quantity] = {}


class _Reader:
    """Typed access to a JSON-like tree that records errors instead of raising."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def _type_error(self, path: str, value: object, expected: str) -> None:
        got = _json_type(value)
        self.errors.append(
            FieldError.invalid(
                path, value if got != "object" else got, f"expected {expected}, got {got}"
            )
        )

    def obj(self, data: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._type_error(_join(path, key), value, "object")
            return None
        return value

    def string(self, data: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self._type_error(_join(path, key), value, "string")
            return default
        return value

    def opt_string(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        if data.get(key) is None:
            return None
        return self.string(data, key, path)

    def integer(
        self, data: Mapping[str, Any], key: str, path: str, *, bits: int = 32
    ) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._type_error(_join(path, key), value, f"int{bits}")
            return None
        if isinstance(value, float):
            if not value.is_integer():
                self._type_error(_join(path, key), value, f"int{bits}")
                return None
            value = int(value)
        if bits == 32 and not _INT32_MIN <= value <= _INT32_MAX:
            self.errors.append(
                FieldError.invalid(_join(path, key), value, "out of range for int32")
            )
            return None
        if not _INT64_MIN <= value <= _INT64_MAX:
            self.errors.append(
                FieldError.invalid(_join(path, key), value, "out of range for int64")
            )
            return None
        return value

    def boolean(self, data: Mapping[str, Any], key: str, path: str) -> bool | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            self._type_error(_join(path, key), value, "boolean")
            return None
        return value

    def string_map(self, data: Mapping[str, Any], key: str, path: str) -> dict[str, str] | None:
        value = data.get(key)
        if value is None:
            return None
        where = _join(path, key)
        if not isinstance(value, dict):
            self._type_error(where, value, "map of strings")
            return None
        result: dict[str, str] = {}
        for k, v in value.items():
            if v is None:
                # encoding/json leaves a string at its zero value for a JSON null.
                result[str(k)] = ""
                continue
            if not isinstance(v, str):
                self._type_error(f"{where}[{k}]", v, "string")
                continue
            result[str(k)] = v
        return result

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        result: list[str] = []
        for item, where in self.items(data, key, path):
            if isinstance(item, str):
                result.append(item)
            elif item is None:
                result.append("")
            else:
                self._type_error(where, item, "string")
        return tuple(result)

    def items(self, data: Mapping[str, Any], key: str, path: str) -> Iterator[tuple[Any, str]]:
        value = data.get(key)
        if value is None:
            return
        where = _join(path, key)
        if not isinstance(value, list):
            self._type_error(where, value, "array")
            return
        for index, item in enumerate(value):
            yield item, f"{where}[{index}]"

    def objects(
        self,
        data: Mapping[str, Any],
        key: str,
        path: str,
        build: Callable[[Mapping[str, Any], str], T],
    ) -> tuple[T, ...]:
        result: list[T] = []
        for item, where in self.items(data, key, path):
            if not isinstance(item, dict):
                self._type_error(where, item, "object")
                continue
            result.append(build(item, where))
        return tuple(result)

    def resources(self, data: Mapping[str, Any], key: str, path: str) -> dict[str, Quantity]:
        value = data.get(key)
        if value is None:
            return {}
        where = _join(path, key)
        if not isinstance(value, dict):
            self._type_error(where, value, "map of quantities")
            return {}
        result: dict[str, Quantity] = {}
        for name, raw in value.items():
            if isinstance(raw, bool) or not isinstance(raw, str | int | float):
                self._type_error(f"{where}[{name}]", raw, "quantity")
                continue
            # Quantity.UnmarshalJSON trims spaces around the text before parsing it.
            text = raw.strip() if isinstance(raw, str) else _number_text(raw)
            # Only cpu is read as a MilliValue; it matters when int64 arithmetic overflows.
            cache_key = (text, name == "cpu")
            quantity = _QUANTITIES.get(cache_key)
            if quantity is None:
                try:
                    quantity = parse_quantity(text, str(name))
                except QuantityError as exc:
                    self.errors.append(FieldError.invalid(f"{where}[{name}]", text, str(exc)))
                    continue
                if len(_QUANTITIES) < _QUANTITY_CACHE_SIZE:
                    _QUANTITIES[cache_key] = quantity
            if is_negative_quantity(text):
                # ValidateNonnegativeQuantity (pkg/apis/core/validation): requests, limits,
                # overhead, capacity and allocatable are all checked with it.
                self.errors.append(
                    FieldError.invalid(
                        f"{where}[{name}]", text, "must be greater than or equal to 0"
                    )
                )
                continue
            result[str(name)] = quantity
        return result


def _number_text(value: int | float) -> str:
    # A JSON number where a quantity string is expected: Quantity.UnmarshalJSON parses the
    # number's JSON text, which Go's encoder writes without a trailing ".0".
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _meta(r: _Reader, doc: Mapping[str, Any], *, namespaced: bool) -> ObjectMeta:
    meta = r.obj(doc, "metadata", "") or {}
    owners = r.objects(
        meta,
        "ownerReferences",
        "metadata",
        lambda o, p: OwnerReference(
            api_version=r.string(o, "apiVersion", p),
            kind=r.string(o, "kind", p),
            name=r.string(o, "name", p),
            uid=r.string(o, "uid", p),
            controller=r.boolean(o, "controller", p),
        ),
    )
    namespace = r.string(meta, "namespace", "metadata")
    if namespaced and not namespace:
        namespace = "default"
    return ObjectMeta(
        # generateName is only a request to the API server to make up a name; a stored
        # object always has metadata.name, and one without it is refused by the loader.
        name=r.string(meta, "name", "metadata"),
        namespace=namespace if namespaced else "",
        uid=r.string(meta, "uid", "metadata"),
        labels=r.string_map(meta, "labels", "metadata") or {},
        annotations=r.string_map(meta, "annotations", "metadata") or {},
        deletion_timestamp=r.opt_string(meta, "deletionTimestamp", "metadata"),
        owner_references=owners,
        creation_timestamp=_time(r, meta, "creationTimestamp", "metadata"),
    )


def _label_selector(
    r: _Reader, data: Mapping[str, Any], key: str, path: str
) -> LabelSelector | None:
    raw = r.obj(data, key, path)
    if raw is None:
        return None
    where = _join(path, key)
    return LabelSelector(
        match_labels=r.string_map(raw, "matchLabels", where) or {},
        match_expressions=r.objects(
            raw,
            "matchExpressions",
            where,
            lambda e, p: LabelSelectorRequirement(
                key=r.string(e, "key", p),
                operator=r.string(e, "operator", p),
                values=r.strings(e, "values", p),
            ),
        ),
    )


def _node_selector_requirement(r: _Reader, e: Mapping[str, Any], p: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(
        key=r.string(e, "key", p),
        operator=r.string(e, "operator", p),
        values=r.strings(e, "values", p),
    )


def _node_selector_term(r: _Reader, t: Mapping[str, Any], p: str) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=r.objects(
            t, "matchExpressions", p, lambda e, q: _node_selector_requirement(r, e, q)
        ),
        match_fields=r.objects(
            t, "matchFields", p, lambda e, q: _node_selector_requirement(r, e, q)
        ),
    )


# The scalar fields of each migratable in-tree source that CSI translation
# (k8s.io/csi-translation-lib) reads, with their JSON types; nested objects (secretRef) are
# not read by it.
_IN_TREE_FIELDS: Final[Mapping[str, Mapping[str, str]]] = {
    "awsElasticBlockStore": {
        "volumeID": "string",
        "fsType": "string",
        "partition": "int",
        "readOnly": "bool",
    },
    "azureDisk": {
        "diskName": "string",
        "diskURI": "string",
        "cachingMode": "string",
        "fsType": "string",
        "readOnly": "bool",
        "kind": "string",
    },
    "azureFile": {
        "secretName": "string",
        "secretNamespace": "string",
        "shareName": "string",
        "readOnly": "bool",
    },
    "cinder": {"volumeID": "string", "fsType": "string", "readOnly": "bool"},
    "gcePersistentDisk": {
        "pdName": "string",
        "fsType": "string",
        "partition": "int",
        "readOnly": "bool",
    },
    "portworxVolume": {"volumeID": "string", "fsType": "string", "readOnly": "bool"},
    "vsphereVolume": {
        "volumePath": "string",
        "fsType": "string",
        "storagePolicyName": "string",
        "storagePolicyID": "string",
    },
}


# SetDefaults_AzureDiskVolumeSource: what the API server stores for unset fields.
_AZURE_DISK_DEFAULTS: Final[Mapping[str, str]] = {
    "cachingMode": "ReadWrite",
    "fsType": "ext4",
    "readOnly": "false",
    "kind": "Shared",
}


def _in_tree_source(r: _Reader, volume: Mapping[str, Any], p: str) -> InTreeSource | None:
    # A volume (or PV spec) sets at most one source (validation); the first found is kept.
    for kind in IN_TREE_MIGRATABLE_SOURCES:
        raw = r.obj(volume, kind, p)
        if raw is None:
            continue
        where = _join(p, kind)
        fields: dict[str, str] = {}
        for name, typ in _IN_TREE_FIELDS[kind].items():
            if raw.get(name) is None:
                continue
            if typ == "bool":
                flag = r.boolean(raw, name, where)
                if flag is not None:
                    fields[name] = "true" if flag else "false"
            elif typ == "int":
                number = r.integer(raw, name, where)
                if number is not None:
                    fields[name] = str(number)
            else:
                fields[name] = r.string(raw, name, where)
        if kind == "azureDisk":
            fields = {**_AZURE_DISK_DEFAULTS, **fields}
        return InTreeSource(kind, fields)
    return None


def _csi_source(r: _Reader, data: Mapping[str, Any], p: str) -> CSIVolumeSource | None:
    raw = r.obj(data, "csi", p)
    if raw is None:
        return None
    where = _join(p, "csi")
    return CSIVolumeSource(
        driver=r.string(raw, "driver", where),
        volume_handle=r.string(raw, "volumeHandle", where),
        read_only=bool(r.boolean(raw, "readOnly", where)),
    )


def _storage_request(r: _Reader, spec: Mapping[str, Any], p: str) -> Quantity | None:
    resources = r.obj(spec, "resources", p)
    if resources is None:
        return None
    where = _join(p, "resources")
    requests = r.obj(resources, "requests", where)
    if requests is None or requests.get("storage") is None:
        return None
    raw = requests["storage"]
    at = f"{where}.requests[storage]"
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        r._type_error(at, raw, "quantity")
        return None
    text = raw.strip() if isinstance(raw, str) else _number_text(raw)
    try:
        quantity = parse_quantity(text, "storage")
    except QuantityError as exc:
        r.errors.append(FieldError.invalid(at, text, str(exc)))
        return None
    if is_negative_quantity(text) or quantity.amount == 0:
        # ValidatePersistentVolumeClaimSpec: ValidatePositiveQuantityValue, reported under
        # resources[storage] (upstream keys the resources path, not requests).
        r.errors.append(FieldError.invalid(f"{where}[storage]", text, "must be greater than zero"))
        return None
    return quantity


def _claim_spec(r: _Reader, spec: Mapping[str, Any], p: str) -> PersistentVolumeClaimSpec:
    # SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem.
    return PersistentVolumeClaimSpec(
        access_modes=r.strings(spec, "accessModes", p),
        selector=_label_selector(r, spec, "selector", p),
        storage_request=_storage_request(r, spec, p),
        storage_class_name=r.opt_string(spec, "storageClassName", p),
        volume_name=r.string(spec, "volumeName", p),
        volume_mode=r.string(spec, "volumeMode", p) or "Filesystem",
        volume_attributes_class_name=r.opt_string(spec, "volumeAttributesClassName", p),
    )


def _time(r: _Reader, data: Mapping[str, Any], key: str, path: str) -> str | None:
    # metav1.Time: RFC 3339 on the wire; YAML written by hand may leave it unquoted, which
    # a YAML loader turns into a datetime.
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.isoformat()
    if not isinstance(value, str):
        r._type_error(_join(path, key), value, "RFC 3339 time")
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
        r.errors.append(FieldError.invalid(_join(path, key), value, "expected an RFC 3339 time"))
        return None
    return value
