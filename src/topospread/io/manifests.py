"""Read manifests for ``audit`` and ``lint``: files or standard input, document by document.

Bytes are read by :func:`topospread.io.reader.read_input` (regular files and ``-``, size
capped) and parsed by :func:`topospread.io.loader.parse_documents` (YAML as kubectl reads
it), one YAML document at a time, so that a finding can name the line its object starts
on and ``# topospread:ignore RULE`` comments apply to the document they are in. Documents
are split as ``YAMLReader`` splits them: a line starting with ``---``, followed by nothing
but a comment. A JSON file is one document (or a top-level array of them). Every problem
is an :class:`~topospread.errors.InputError` naming the file; nothing here prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

import yaml
from yaml import nodes as yaml_nodes

from topospread.engine.audit import RULES, LintObject, ignored_in_text, validation_errors
from topospread.errors import DecodeError, FieldError, InputError, ValidationError
from topospread.io.loader import SeenObjects, _json_documents, parse_documents
from topospread.io.reader import display_name, read_input
from topospread.model.decode import validate_metadata
from topospread.model.objects import (
    KubeObject,
    Namespace,
    Node,
    PodDisruptionBudget,
    ReplicationController,
    Service,
)
from topospread.model.validation import required_containers, strict_field_errors, validate_object
from topospread.model.workloads import ManifestObject, decode_manifests, unknown_builtin_kind

__all__ = [
    "GENERATED_SUFFIX",
    "Document",
    "LintInput",
    "load_audit_objects",
    "load_lint_objects",
    "read_documents",
    "read_lint_objects",
]

_SEPARATOR = re.compile(rb"^---(.*)$")
SCENARIO_API_VERSION = "topospread.dev/v1alpha1"
_LINE = re.compile(r"\bline (\d+)")


@dataclass(frozen=True, slots=True)
class Document:
    """One YAML/JSON document of an input."""

    source: str
    line: int
    """1-based line where the document's content starts."""
    text: str
    data: Any
    offset: int = 0
    """Lines of the input before ``text``."""
    prefix: str = ""
    """Where ``data`` sits in ``text``: ``[2]`` for an element of a top-level JSON array."""


def _pieces(data: bytes, source: str) -> list[tuple[int, bytes]]:
    pieces: list[tuple[int, bytes]] = []
    start, lines = 1, list[bytes]()
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        match = _SEPARATOR.match(line.rstrip(b"\r\n"))
        if match is None:
            lines.append(line)
            continue
        rest = match.group(1).strip()
        if rest and not rest.startswith(b"#"):
            text = rest[:60].decode("utf-8", errors="replace")
            raise DecodeError(
                f"{source}:{number}", message=f"invalid Yaml document separator: {text}"
            )
        pieces.append((start, b"".join(lines)))
        start, lines = number + 1, []
    pieces.append((start, b"".join(lines)))
    return pieces


def _first_content_line(start: int, text: str) -> int:
    for offset, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return start + offset
    return start


def _shifted(offset: int, match: re.Match[str]) -> str:
    return f"line {offset + int(match.group(1))}"


def read_documents(path: str, errors: list[str] | None = None) -> list[Document]:
    """Every non-empty document of ``path`` (``-``: standard input), with its line and text.

    A YAML document that does not parse raises :class:`DecodeError`; with ``errors``, its
    line goes there instead and the file's other documents are still read (each document
    is parsed on its own, as kubectl's YAML reader splits them)."""
    data = read_input(path)
    source = display_name(path)
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            values = _json_documents(data, source)
        except DecodeError as exc:
            if exc.errors:
                raise  # valid JSON with duplicate keys
            # Not JSON: YAML in flow style, read document by document below.
        else:
            text = data.decode("utf-8", errors="replace")
            if len(values) == 1 and isinstance(values[0], list):
                return [
                    Document(source, 1, text, doc, prefix=f"[{n}]")
                    for n, doc in enumerate(values[0])
                ]
            if len(values) > 1:
                # Concatenated JSON values: their lines are not tracked.
                return [Document(source, 1, "", doc) for doc in values]
            return [Document(source, 1, text, doc) for doc in values]
    documents: list[Document] = []
    for start, piece in _pieces(data, source):
        text = piece.decode("utf-8", errors="replace")
        line = _first_content_line(start, text)
        try:
            parsed = parse_documents(piece, source)
        except DecodeError as exc:
            # The parser counts lines from the document's start; name the file's line.
            message = _LINE.sub(partial(_shifted, start - 1), exc.message, 1)
            if errors is None:
                raise DecodeError(source, message=message) from None
            errors.extend(DecodeError(source, message=message).lines())
            continue
        documents.extend(
            Document(source, line, text, doc, start - 1) for doc in parsed if doc is not None
        )
    return documents


def _scenario_objects(data: Any) -> list[tuple[str, Any]] | None:
    # A topospread Scenario (simulate): lint the objects it applies inline, from
    # cluster.objects and every step's apply.objects (file references are not followed).
    if not (
        isinstance(data, dict)
        and data.get("apiVersion") == SCENARIO_API_VERSION
        and data.get("kind") == "Scenario"
    ):
        return None
    found: list[tuple[str, Any]] = []
    cluster = data.get("cluster")
    if isinstance(cluster, dict) and isinstance(cluster.get("objects"), list):
        found.extend((f"cluster.objects[{n}]", o) for n, o in enumerate(cluster["objects"]))
    steps = data.get("steps")
    for s, step in enumerate(steps if isinstance(steps, list) else ()):
        apply = step.get("apply") if isinstance(step, dict) else None
        if isinstance(apply, dict) and isinstance(apply.get("objects"), list):
            found.extend(
                (f"steps[{s}].apply.objects[{n}]", o) for n, o in enumerate(apply["objects"])
            )
    return found


def _expand_lists(where: str, data: Any) -> list[tuple[str, Any]]:
    # ``List`` and every ``*List`` kind: their items, each at its path in the document.
    if isinstance(data, dict):
        kind = data.get("kind")
        items = data.get("items")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            return [
                found
                for n, item in enumerate(items)
                for found in _expand_lists(f"{where}items[{n}].", item)
            ]
    return [(where.removesuffix("."), data)]


def _raw_objects(data: Any) -> list[tuple[str, Any]]:
    """The objects of one document with their paths in it (``items[2]``, ``""``)."""
    inline = _scenario_objects(data)
    if inline is None:
        return _expand_lists("", data)
    return [found for where, obj in inline for found in _expand_lists(f"{where}.", obj)]


_PATH_TOKEN = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


class _Locator:
    """Lines of field paths in one document's text (for findings' ``line``).

    The text is composed into YAML nodes (which carry their marks) on first use only:
    most objects have no finding.
    """

    def __init__(self, document: Document) -> None:
        self.document = document
        self._root: yaml_nodes.Node | None = None
        self._composed = False

    def _compose(self) -> yaml_nodes.Node | None:
        if not self._composed:
            self._composed = True
            try:
                self._root = yaml.compose(self.document.text, Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                self._root = None
        return self._root

    def line(self, path: str) -> int | None:
        """1-based line in the input of the deepest node of ``path`` present (``a.b[0].c``);
        None when not even the first step of the path is found."""
        node = self._compose() if self.document.text else None
        found: int | None = None
        for key, index in _PATH_TOKEN.findall(f"{self.document.prefix}{path}"):
            token = key or index
            child: yaml_nodes.Node | None = None
            if isinstance(node, yaml_nodes.MappingNode):
                for k, v in node.value:
                    if isinstance(k, yaml_nodes.ScalarNode) and k.value == token:
                        child, found = v, k.start_mark.line
                        break
            elif (
                isinstance(node, yaml_nodes.SequenceNode)
                and token.isdigit()
                and int(token) < len(node.value)
            ):
                child = node.value[int(token)]
                found = child.start_mark.line
            if child is None:
                break
            node = child
        return None if found is None else found + 1 + self.document.offset


@dataclass(frozen=True, slots=True)
class LintInput:
    """What ``lint`` reads: the objects, notes, and every input problem (one line each)."""

    items: list[LintObject]
    notes: list[str]
    errors: list[str]
    """``FILE[:LINE]: problem`` for each unreadable file or object; the rest is linted."""


def _spread_paths(value: Any, path: str = "", depth: int = 0) -> list[str]:
    # Where a custom resource carries topologySpreadConstraints (its operator copies them
    # into the pods it creates), so that a skipped object is not silently unchecked.
    found: list[str] = []
    if depth > 12:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if key == "topologySpreadConstraints" and isinstance(item, list) and item:
                found.append(here)
            else:
                found.extend(_spread_paths(item, here, depth + 1))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found.extend(_spread_paths(item, f"{path}[{n}]", depth + 1))
    return found


def _generated_name(obj: ManifestObject, raw: Mapping[str, Any]) -> ManifestObject:
    # An object with only metadata.generateName (kubectl create) is named after it in
    # findings: the API server appends five random characters when it creates it.
    meta = raw.get("metadata")
    generate = meta.get("generateName") if isinstance(meta, dict) else None
    if obj.metadata.name or not isinstance(generate, str) or not generate:
        return obj
    return replace(obj, metadata=replace(obj.metadata, name=f"{generate}{GENERATED_SUFFIX}"))


GENERATED_SUFFIX = "(generateName)"
"""Appended to ``metadata.generateName`` to name an object that has no name yet."""


def _strict_problems(raw: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(field path, message) of what the API server refuses before or beside the rules
    topospread validates: strict decoding's unknown fields (the object is refused before
    validation runs), else missing containers."""
    unknown = strict_field_errors(raw)
    if unknown:
        return tuple((e.field, str(e)) for e in unknown)
    return tuple((e.field, str(e)) for e in required_containers(raw))


def read_lint_objects(paths: Sequence[str]) -> LintInput:
    """Manifests to lint, each with its file, line, field-path lines and ignore comments;
    notes on skipped objects; and one line per unreadable file or object, which does not
    keep the other files and objects from being linted."""
    known = tuple(RULES)
    result = LintInput([], [], [])
    for path in paths:
        try:
            documents = read_documents(path, result.errors)
        except InputError as exc:
            result.errors.extend(exc.lines())
            continue
        for document in documents:
            locator = _Locator(document)
            ignored = ignored_in_text(document.text, known)
            for where, raw in _raw_objects(document.data):
                line = (locator.line(where) if where else None) or document.line
                place = f"{document.source}:{line}"
                unknown = unknown_builtin_kind(raw) if isinstance(raw, dict) else None
                if unknown is not None:
                    # kubectl apply: "resource mapping not found ... no matches for kind".
                    result.errors.append(f"{place}: resource mapping not found: {unknown}")
                    continue
                try:
                    decoded = decode_manifests([raw], "")
                except InputError as exc:
                    result.errors.extend(f"{place}: {e}" for e in (exc.errors or (exc.message,)))
                    continue
                for _, obj in decoded.objects:
                    assert isinstance(raw, dict)
                    prefix = f"{where}." if where else ""
                    result.items.append(
                        LintObject(
                            _generated_name(obj, raw),
                            document.source,
                            line,
                            ignored,
                            partial(_prefixed_line, locator, prefix),
                            _strict_problems(raw),
                        )
                    )
                for skipped in decoded.skipped:
                    spread = _spread_paths(raw) if isinstance(raw, dict) else []
                    why = (
                        f": a kind lint does not read, though it carries "
                        f"topologySpreadConstraints at {', '.join(spread[:3])} that its "
                        "controller passes to the pods it creates; those are not checked"
                        if spread
                        else ""
                    )
                    result.notes.append(f"{place}: skipped {skipped}{why}")
    return result


def _prefixed_line(locator: _Locator, prefix: str, path: str) -> int | None:
    return locator.line(prefix + path)


def load_lint_objects(paths: Sequence[str]) -> tuple[list[LintObject], list[str]]:
    """Manifests to lint, each with its file, line and ignore comments; also notes.

    Raises :class:`InputError` with every problem when any file or object is unreadable
    (:func:`read_lint_objects` reports them beside the objects instead).
    """
    read = read_lint_objects(paths)
    if read.errors:
        raise InputError("", read.errors)
    return read.items, read.notes


def _problems(obj: ManifestObject) -> list[FieldError]:
    # Names as every command validates them (ValidateObjectMeta with the kind's name rule,
    # a DNS subdomain for all but Namespaces and Services); it reads only the metadata,
    # which DaemonSets, Jobs and CronJobs have as the other kinds do.
    problems = validate_metadata(cast("KubeObject", obj))
    if isinstance(obj, Node | Service | ReplicationController | Namespace | PodDisruptionBudget):
        return problems + validate_object(obj)
    return problems + validation_errors(obj)


def _places(documents: Sequence[Document]) -> list[tuple[str, Any]]:
    # Every object of a file with its place, as the cluster loader names it: ``document 2``
    # (files of several documents), ``items[3]``, ``document 2.items[3]``.
    found: list[tuple[str, Any]] = []
    for number, document in enumerate(documents, start=1):
        label = f"document {number}" if len(documents) > 1 else ""
        found.extend(
            (f"{label}.{where}" if label and where else label or where, raw)
            for where, raw in _expand_lists("", document.data)
        )
    return found


def load_audit_objects(paths: Iterable[str]) -> tuple[list[ManifestObject], list[str]]:
    """Objects of cluster captures for ``audit --cluster`` and ``rebalance`` (``-``:
    standard input), validated as the API server stored them — names and namespaces as
    ``explain`` validates them — and, for objects never admitted (no ``metadata.uid``),
    as it admits them (strict fields, containers); also notes on skipped kinds.

    The same kind/namespace/name twice, in one file or across files, is refused naming
    both places, as ``explain`` refuses it: the API server holds one object per key."""
    objects: list[ManifestObject] = []
    notes: list[str] = []
    seen = SeenObjects()
    for path in paths:
        source = display_name(path)
        places = _places(read_documents(path))
        raws = [raw for _, raw in places]
        decoded = decode_manifests(raws, source)
        problems: list[FieldError | str] = []
        for index, obj in decoded.objects:
            meta = obj.metadata
            label = (
                f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"
            )
            raw = raws[index]
            admitted = bool(meta.uid)
            strict = () if admitted or not isinstance(raw, dict) else _strict_problems(raw)
            problems.extend(f"{label}: {message}" for _, message in strict)
            problems.extend(f"{label}: {e}" for e in _problems(obj))
            duplicate = seen.add(obj, source, places[index][0])
            if duplicate is not None:
                problems.append(duplicate)
            objects.append(obj)
        if problems:
            raise ValidationError(source, problems)
        notes.extend(f"{path}: skipped {s} (kind not audited)" for s in decoded.skipped)
    return objects, notes
