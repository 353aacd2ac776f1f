"""Read manifests for ``audit`` and ``lint``: files or standard input, document by document.

Each YAML document is parsed on its own so that a finding can name the line its object
starts on and ``# topospread:ignore RULE`` comments apply to the document they are in.
JSON files (``kubectl get -o json``) are one document. Every problem is an
:class:`~topospread.errors.InputError` naming the file; nothing here prints.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from topospread.engine.audit import RULES, LintObject, ignored_in_text, validation_errors
from topospread.errors import DecodeError, FieldError, InputError, ValidationError
from topospread.io.loader import load_documents
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

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$")
STDIN = "-"


@dataclass(frozen=True, slots=True)
class Document:
    """One YAML/JSON document of a file."""

    source: str
    line: int
    """1-based line where the document's text starts."""
    text: str
    data: Any


def _read(path: str) -> str:
    if path == STDIN:
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DecodeError(path, message="no such file") from None
    except IsADirectoryError:
        raise DecodeError(path, message="is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise DecodeError(path, message=f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DecodeError(path, message=exc.strerror or str(exc)) from None


def _chunks(text: str) -> list[tuple[int, str]]:
    # YAML documents: split at "---" lines (a block scalar's content is indented, so a
    # separator at column 0 always ends the document).
    chunks: list[tuple[int, str]] = []
    start, lines = 1, list[str]()
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if _SEPARATOR.match(line.rstrip("\r\n")):
            chunks.append((start, "".join(lines)))
            start, lines = number + 1, []
        else:
            lines.append(line)
    chunks.append((start, "".join(lines)))
    return chunks


def _first_content_line(start: int, text: str) -> int:
    for offset, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "...":
            return start + offset
    return start


def read_documents(path: str) -> list[Document]:
    """Every document of ``path`` (``-``: standard input), with its line and text."""
    text = _read(path)
    name = "<stdin>" if path == STDIN else path
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DecodeError(
                name, message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
        items = data if isinstance(data, list) else [data]
        return [Document(name, 1, text, item) for item in items]
    documents = []
    for start, chunk in _chunks(text):
        try:
            data = yaml.load(chunk, Loader=_Loader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {start + mark.line} column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise DecodeError(name, message=f"invalid YAML{where}: {problem}") from None
        if data is not None:
            documents.append(Document(name, _first_content_line(start, chunk), chunk, data))
    return documents


def _decode(document: Document) -> tuple[list[ManifestObject], list[str]]:
    decoded = decode_manifests([document.data], document.source)
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
    """Objects of cluster captures for ``audit --cluster``, validated as the API server
    stored them; also notes on skipped kinds."""
    objects: list[ManifestObject] = []
    notes: list[str] = []
    for path in paths:
        decoded = decode_manifests(load_documents(path), str(path))
        problems: list[FieldError | str] = []
        for _, obj in decoded.objects:
            meta = obj.metadata
            label = (
                f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"
            )
            problems.extend(f"{label}: {e}" for e in _problems(obj))
            objects.append(obj)
        if problems:
            raise ValidationError(str(path), problems)
        notes.extend(f"{path}: skipped {s} (kind not audited)" for s in decoded.skipped)
    return objects, notes
