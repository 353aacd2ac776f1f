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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from topospread.engine.audit import RULES, LintObject, ignored_in_text, validation_errors
from topospread.errors import DecodeError, FieldError, InputError, ValidationError
from topospread.io.loader import parse_documents
from topospread.io.reader import display_name, read_input
from topospread.model.objects import (
    Namespace,
    Node,
    PodDisruptionBudget,
    ReplicationController,
    Service,
)
from topospread.model.validation import validate_object
from topospread.model.workloads import ManifestObject, decode_manifests

__all__ = ["Document", "load_audit_objects", "load_lint_objects", "read_documents"]

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


def read_documents(path: str) -> list[Document]:
    """Every non-empty document of ``path`` (``-``: standard input), with its line and text."""
    data = read_input(path)
    source = display_name(path)
    if data.lstrip()[:1] in (b"{", b"["):
        text = data.decode("utf-8", errors="replace")
        return [Document(source, 1, text, doc) for doc in parse_documents(data, source)]
    documents: list[Document] = []
    for start, piece in _pieces(data, source):
        text = piece.decode("utf-8", errors="replace")
        line = _first_content_line(start, text)
        try:
            parsed = parse_documents(piece, source)
        except DecodeError as exc:
            # The parser counts lines from the document's start; name the file's line.
            message = _LINE.sub(partial(_shifted, start - 1), exc.message, 1)
            raise DecodeError(source, message=message) from None
        documents.extend(Document(source, line, text, doc) for doc in parsed if doc is not None)
    return documents


def _scenario_objects(data: Any) -> list[Any] | None:
    # A topospread Scenario (simulate): lint the objects it applies inline, from
    # cluster.objects and every step's apply.objects (file references are not followed).
    if not (
        isinstance(data, dict)
        and data.get("apiVersion") == SCENARIO_API_VERSION
        and data.get("kind") == "Scenario"
    ):
        return None
    found: list[Any] = []
    cluster = data.get("cluster")
    if isinstance(cluster, dict) and isinstance(cluster.get("objects"), list):
        found.extend(cluster["objects"])
    steps = data.get("steps")
    for step in steps if isinstance(steps, list) else ():
        apply = step.get("apply") if isinstance(step, dict) else None
        if isinstance(apply, dict) and isinstance(apply.get("objects"), list):
            found.extend(apply["objects"])
    return found


def _decode(document: Document) -> tuple[list[ManifestObject], list[str]]:
    inline = _scenario_objects(document.data)
    decoded = decode_manifests(inline if inline is not None else [document.data], document.source)
    return [obj for _, obj in decoded.objects], list(decoded.skipped)


def load_lint_objects(paths: Sequence[str]) -> tuple[list[LintObject], list[str]]:
    """Manifests to lint, each with its file, line and ignore comments; also notes."""
    known = tuple(RULES)
    items: list[LintObject] = []
    notes: list[str] = []
    errors: list[InputError] = []
    for path in paths:
        try:
            documents = read_documents(path)
        except InputError as exc:
            errors.append(exc)
            continue
        for document in documents:
            try:
                objects, skipped = _decode(document)
            except InputError as exc:
                errors.append(
                    DecodeError(
                        f"{document.source}:{document.line}",
                        exc.errors,
                        message=None if exc.errors else exc.message,
                    )
                )
                continue
            ignored = ignored_in_text(document.text, known)
            items.extend(
                LintObject(obj, document.source, document.line, ignored) for obj in objects
            )
            notes.extend(f"{document.source}:{document.line}: skipped {s}" for s in skipped)
    if errors:
        raise InputError("", [line for exc in errors for line in exc.lines()])
    return items, notes


def _problems(obj: ManifestObject) -> list[FieldError]:
    if isinstance(obj, Node | Service | ReplicationController | Namespace | PodDisruptionBudget):
        return validate_object(obj)
    return validation_errors(obj)


def load_audit_objects(paths: Iterable[str]) -> tuple[list[ManifestObject], list[str]]:
    """Objects of cluster captures for ``audit --cluster`` (``-``: standard input),
    validated as the API server stored them; also notes on skipped kinds."""
    objects: list[ManifestObject] = []
    notes: list[str] = []
    for path in paths:
        decoded = decode_manifests([d.data for d in read_documents(path)], display_name(path))
        problems: list[FieldError | str] = []
        for _, obj in decoded.objects:
            meta = obj.metadata
            label = (
                f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"
            )
            problems.extend(f"{label}: {e}" for e in _problems(obj))
            objects.append(obj)
        if problems:
            raise ValidationError(display_name(path), problems)
        notes.extend(f"{path}: skipped {s} (kind not audited)" for s in decoded.skipped)
    return objects, notes
