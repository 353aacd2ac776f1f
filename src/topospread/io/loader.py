"""Read Kubernetes objects from files, standard input and API responses: one path for all.

Bytes are read by :mod:`topospread.io.reader` (regular files and standard input, capped),
parsed as JSON (orjson) when they start with ``{`` or ``[`` and as YAML otherwise
(:mod:`topospread.io.yamlread`, the way sigs.k8s.io/yaml reads it), decoded by
:mod:`topospread.model.decode` into typed objects with the API server's defaulting, and
validated: every object must have a valid name and namespace and pass the API server's
rules for the fields topospread reads; the same kind/namespace/name twice is refused,
naming both places. Multi-document YAML, ``kind: List``, every ``*List`` kind and raw API
lists (``{"kind": "PodList", "items": [...]}`` whose items lack kind and apiVersion) are
accepted. Every problem is raised as an :class:`~topospread.errors.InputError` naming the
source; nothing here prints.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import orjson

from topospread.engine.cluster import Cluster
from topospread.errors import (
    ConfigError,
    DecodeError,
    FieldError,
    InputError,
    ValidationError,
    go_quote,
)
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.io.reader import display_name, read_input
from topospread.io.yamlread import YamlSyntaxError, parse_yaml_documents
from topospread.model.decode import decode_documents, describe_document, validate_metadata
from topospread.model.objects import KubeObject, Node, Pod
from topospread.model.validation import (
    required_containers,
    strict_field_errors,
    validate_node,
    validate_object,
    validate_pod,
)
from topospread.model.workloads import ManifestObject

__all__ = [
    "SeenObjects",
    "decode_api_json",
    "decode_objects",
    "load_cluster",
    "load_configuration",
    "load_documents",
    "load_pod",
    "parse_documents",
    "paused_gc",
    "skip_notes",
]


@contextmanager
def _no_gc() -> Iterator[None]:
    # Parsing builds millions of small containers and no cycles; the cyclic collector
    # would walk them again and again (an eightfold slowdown on a 50 MB capture).
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


paused_gc = _no_gc
"""A context that pauses the cyclic garbage collector while large acyclic inputs are built."""


def _json_documents(data: bytes, source: str) -> list[Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if not exc.msg.startswith("unexpected content after document"):
            raise DecodeError(
                source, message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        return _json_stream(data, source)
    _check_duplicate_keys(data, source)
    return [value]


_DUPLICATE_CHECK_BYTES = 2 * 1024**2
"""JSON inputs up to this size are checked for duplicate keys: manifests are small, and
API output (which never has duplicates) is neither read twice nor slowed down."""


class _Pairs(dict[str, Any]):
    """A JSON object that remembers the keys given twice in it."""

    duplicates: list[str]

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.duplicates = [] if len(self) == len(pairs) else _twice(pairs)


def _twice(pairs: list[tuple[str, Any]]) -> list[str]:
    seen: set[str] = set()
    twice: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in twice:
            twice.append(key)
        seen.add(key)
    return twice


def _duplicate_paths(value: Any, path: str = "") -> Iterator[str]:
    if isinstance(value, _Pairs):
        # In input order: a key's place is where it first appears.
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            if key in value.duplicates:
                yield here
            yield from _duplicate_paths(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _duplicate_paths(item, f"{path}[{index}]")


def _check_duplicate_keys(data: bytes, source: str) -> None:
    # The API server's strict field validation refuses a JSON body with a key given twice
    # (orjson keeps the last silently); the path is the field's in the input.
    if len(data) > _DUPLICATE_CHECK_BYTES or b'"uid":' in data:
        return  # objects read back from a server, which stores no duplicate keys
    import json

    try:
        value = json.loads(data, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return
    found = list(_duplicate_paths(value))
    if found:
        raise DecodeError(
            source, [f"strict decoding error: duplicate field {go_quote(p)}" for p in found]
        )


def _json_stream(data: bytes, source: str) -> list[Any]:
    # Several JSON values one after the other, as the oracle's json.Decoder reads them.
    import json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError(source, message="invalid JSON: not UTF-8") from None
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    try:
        while True:
            while position < len(text) and text[position] in " \t\r\n":
                position += 1
            if position >= len(text):
                return values
            value, position = decoder.raw_decode(text, position)
            values.append(value)
    except json.JSONDecodeError as exc:
        raise DecodeError(
            source, message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise DecodeError(source, message="invalid JSON: nested too deeply") from None


def parse_documents(data: bytes, source: str, *, skip_managed_fields: bool = False) -> list[Any]:
    """The documents of YAML or JSON bytes as JSON values (JSON when it starts with ``{``/``[``).

    A top-level JSON array is a list of documents. Empty YAML documents are ``None``.
    ``skip_managed_fields``: YAML objects' ``metadata.managedFields`` are checked for
    syntax but not built (see :func:`~topospread.io.yamlread.parse_yaml_documents`).
    """
    stripped = data.lstrip()
    with _no_gc():
        if stripped[:1] in (b"{", b"["):
            try:
                documents = _json_documents(data, source)
            except DecodeError as json_error:
                # YAMLOrJSONDecoder: input that looks like JSON but is not (YAML flow
                # style: unquoted keys, trailing commas) is read as YAML; when both fail,
                # the JSON decoder's error is the one reported. Valid JSON with duplicate
                # keys (errors by field) is refused as it is.
                if json_error.errors:
                    raise
                try:
                    return parse_yaml_documents(data, skip_managed_fields=skip_managed_fields)
                except YamlSyntaxError:
                    raise json_error from None
            if len(documents) == 1 and isinstance(documents[0], list):
                return list(documents[0])
            return documents
        try:
            return parse_yaml_documents(data, skip_managed_fields=skip_managed_fields)
        except YamlSyntaxError as exc:
            raise DecodeError(source, message=str(exc)) from None


def load_documents(path: Path | str, *, skip_managed_fields: bool = False) -> list[Any]:
    """Read and parse a file (or ``-``, standard input) into its documents."""
    return parse_documents(
        read_input(path), display_name(path), skip_managed_fields=skip_managed_fields
    )


def _problems(obj: KubeObject) -> list[FieldError]:
    problems = validate_metadata(obj)
    if isinstance(obj, Pod):
        # A pod read back from a cluster (it has a uid) was already admitted, with its
        # matchLabelKeys merged into the selector; validate it as stored, not as a POST.
        problems.extend(validate_pod(obj, create=not obj.metadata.uid))
    elif isinstance(obj, Node):
        problems.extend(validate_node(obj))
    else:
        problems.extend(validate_object(obj))
    return problems


def _key(obj: ManifestObject) -> str:
    meta = obj.metadata
    return f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"


class SeenObjects:
    """The objects read so far by kind/namespace/name, to refuse duplicates.

    kube-scheduler's informers (and the API server behind them) hold one object per key;
    the same capture given twice would count every pod twice. The same name in another
    namespace, or of another kind, is another object. Shared by every reader of files
    (``explain``, ``lint --cluster``, ``audit``, ``rebalance``), so that all refuse the
    same duplicates in the same words.
    """

    def __init__(self) -> None:
        self.places: dict[str, str] = {}

    def add(self, obj: ManifestObject, source: str, where: str = "") -> str | None:
        """Record ``obj``, read from ``source`` at ``where`` (``document 2``, ``items[3]``);
        when its key was read before, the problem, worded for a line prefixed by
        ``source``: ``document 2: duplicate Pod default/web (first in FILE: document 1)``.

        An object without a name is refused by validation, not reported as a duplicate
        (the API server names each ``generateName`` object apart)."""
        if not obj.metadata.name:
            return None
        key = _key(obj)
        first = self.places.get(key)
        if first is None:
            self.places[key] = ": ".join(part for part in (source, where) if part)
            return None
        return f"{where + ': ' if where else ''}duplicate {key} (first in {first})"


def _decode(
    documents: Sequence[Any],
    source: str,
    seen: SeenObjects,
    *,
    name_objects: bool = True,
    admitted: bool = False,
    files: bool = False,
) -> tuple[list[KubeObject], tuple[str, ...]]:
    with _no_gc():
        decoded = decode_documents(list(documents), source)
    errors: list[FieldError | str] = []
    if files and not admitted:
        errors.extend(_manifest_problems(documents))
    for obj, where in zip(decoded.objects, decoded.places, strict=True):
        label = _key(obj)
        # An object with a uid was read back from a server: it is decoded as stored, as
        # the live paths decode it (client.objects.decode_stored), not validated as a POST
        # (a server keeps what an older one admitted: kubernetes#128212's label values).
        problems = [] if admitted or obj.metadata.uid else _problems(obj)
        if name_objects:
            errors.extend(f"{label}: {problem}" for problem in problems)
        else:
            errors.extend(problems)
        duplicate = seen.add(obj, source, where)
        if duplicate is not None:
            errors.append(duplicate)
    if errors:
        raise ValidationError(source, errors)
    return list(decoded.objects), decoded.skipped


def _manifest_problems(documents: Sequence[Any]) -> Iterator[str]:
    # What the API server refuses on create besides the fields the scheduler reads:
    # strict decoding's unknown fields, then missing containers. Objects read back from
    # a server (with a uid) were admitted; a newer server may know fields this one lacks.
    for document in documents:
        items = document.get("items") if isinstance(document, dict) else None
        kind = document.get("kind") if isinstance(document, dict) else None
        is_list = isinstance(kind, str) and kind.endswith("List") and isinstance(items, list)
        for raw in items if is_list and isinstance(items, list) else (document,):
            if not isinstance(raw, dict):
                continue
            meta = raw.get("metadata")
            if isinstance(meta, dict) and meta.get("uid"):
                continue
            problems: Sequence[object] = strict_field_errors(raw) or required_containers(raw)
            label = describe_document(raw)
            yield from (f"{label}: {problem}" for problem in problems)


def decode_objects(
    documents: Sequence[Any], source: str, *, admitted: bool = False
) -> tuple[list[KubeObject], tuple[str, ...]]:
    """Decode and validate parsed JSON documents, as files are; the entry point for API data.

    ``documents`` are JSON values: objects, ``List``/``*List`` objects, raw API list
    responses (``{"kind": "NodeList", "items": [...]}``, items without kind/apiVersion).
    Returns the objects topospread reads, in input order, and ``apiVersion/Kind name`` of
    each skipped object. Raises :class:`DecodeError` or :class:`ValidationError` naming
    ``source``, the place (``items[3]``) and the field path of every problem, and refuses
    the same kind/namespace/name twice.

    ``admitted``: the objects were read back from an API server, which validated them on
    admission; they are decoded (types, quantities, duplicates) but not validated again,
    since validation ratchets: a server may keep objects that newer rules would refuse.
    """
    return _decode(documents, source, SeenObjects(), admitted=admitted)


def decode_api_json(data: bytes, source: str) -> tuple[list[KubeObject], tuple[str, ...]]:
    """:func:`decode_objects` on the bytes of an API response (or any JSON/YAML input)."""
    return _decode(parse_documents(data, source), source, SeenObjects())


def load_cluster(paths: Sequence[Path | str]) -> tuple[Cluster, list[str]]:
    """Read cluster files into a :class:`Cluster`; also returns notes on skipped objects.

    An object present twice, in one file or across files, is refused with both places.
    """
    objects: list[KubeObject] = []
    notes: list[str] = []
    seen = SeenObjects()
    for path in paths:
        source = display_name(path)
        found, skipped = _decode(
            load_documents(path, skip_managed_fields=True), source, seen, files=True
        )
        objects.extend(found)
        notes.extend(skip_notes(skipped, source))
    return Cluster.from_objects(objects), notes


# Kinds a capture holds for the other commands (topospread snapshot lists them for simulate
# and audit) that the scheduler's cache does not use: skipped without a note.
_QUIETLY_SKIPPED = ("apps/v1/Deployment ", "apps/v1/DaemonSet ")


def skip_notes(skipped: Iterable[str], source: str) -> list[str]:
    """A note per skipped object (``apps/v1/Kind name``) of a kind nobody reads here."""
    return [
        f"{source}: skipped {what} (kind not used by the scheduler)"
        for what in skipped
        if not what.startswith(_QUIETLY_SKIPPED)
    ]


def load_pod(path: Path | str) -> Pod:
    """Read the file holding exactly one Pod: the pod to schedule."""
    source = display_name(path)
    found, skipped = _decode(
        load_documents(path, skip_managed_fields=True),
        source,
        SeenObjects(),
        name_objects=False,
        files=True,
    )
    pods = [obj for obj in found if isinstance(obj, Pod)]
    if len(pods) != 1:
        detail = f"; skipped {', '.join(skipped[:3])}" if skipped else ""
        raise InputError(source, message=f"expected exactly one Pod, found {len(pods)}{detail}")
    return pods[0]


def load_configuration(path: Path | str | None) -> SchedulerConfiguration:
    """Read a KubeSchedulerConfiguration, or return upstream's defaults when ``path`` is None."""
    if path is None:
        return default_configuration()
    source = display_name(path)
    documents = [d for d in load_documents(path) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise InputError(source, message="expected one KubeSchedulerConfiguration document")
    # The installed plugins' args kinds decode their pluginConfig strictly; imported
    # here, as the check below, so that commands given no configuration never load them.
    from topospread.plugins.registry import args_decoders

    configuration = decode_configuration(documents[0], source, args_decoders=args_decoders())
    _check_plugins_exist(configuration, source)
    return configuration


def _check_plugins_exist(configuration: SchedulerConfiguration, source: str) -> None:
    # frameworkImpl.NewFramework refuses a plugin name it has no factory for; checked here
    # so that the message names the configuration file.
    from topospread.framework.config.types import IN_TREE_PLUGINS
    from topospread.plugins.registry import refused_plugins, registry

    plugins = registry()
    # A refused entry point is why its plugin does not exist: said beside the error.
    refused = {
        line.split(" = ", 1)[0].removeprefix("plugin entry point "): line
        for line in refused_plugins()
    }
    errors: list[FieldError | str] = []
    for profile in configuration.profiles:
        names = [
            ref.name
            for plugin_set in (getattr(profile.plugins, f.name) for f in fields(profile.plugins))
            for ref in plugin_set.enabled
        ]
        errors.extend(
            f'profile "{profile.scheduler_name}": plugin "{name}" does not exist'
            + (f" ({refused[name]})" if name in refused else "")
            for name in dict.fromkeys(names)
            if name not in plugins and name not in IN_TREE_PLUGINS
        )
    if errors:
        raise ConfigError(source, errors)
