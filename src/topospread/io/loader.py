"""Read YAML or JSON files of Kubernetes objects, as ``kubectl get -o yaml|json`` writes them.

Multi-document YAML, ``kind: List`` and every ``*List`` kind are accepted. YAML is parsed
with libyaml's C loader when available (large object lists), JSON with the standard
library. Every problem is raised as an :class:`~topospread.errors.InputError` naming the
file; nothing here prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from topospread.engine.cluster import Cluster
from topospread.errors import DecodeError, FieldError, InputError, ValidationError
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.model.decode import decode_documents
from topospread.model.objects import KubeObject, Node, Pod
from topospread.model.validation import validate_node, validate_object, validate_pod

__all__ = ["decode_objects", "load_cluster", "load_configuration", "load_documents", "load_pod"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DecodeError(str(path), message="no such file") from None
    except IsADirectoryError:
        raise DecodeError(str(path), message="is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise DecodeError(str(path), message=f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DecodeError(str(path), message=exc.strerror or str(exc)) from None


def load_documents(path: Path | str) -> list[Any]:
    """Parse a file into its documents (JSON if it starts with ``{`` or ``[``, else YAML)."""
    path = Path(path)
    text = _read_text(path)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DecodeError(
                str(path),
                message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            ) from None
        return data if isinstance(data, list) else [data]
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DecodeError(str(path), message=f"invalid YAML{where}: {problem}") from None


def _objects(path: Path | str) -> tuple[list[KubeObject], tuple[str, ...]]:
    decoded = decode_documents(load_documents(path), str(path))
    return list(decoded.objects), decoded.skipped


def _validate(path: str, objects: Iterable[KubeObject], *, name_objects: bool = True) -> None:
    errors: list[FieldError | str] = []
    for obj in objects:
        if isinstance(obj, Pod):
            # A pod read back from a cluster (it has a uid) was already admitted, with its
            # matchLabelKeys merged into the selector; validate it as stored, not as a POST.
            problems = validate_pod(obj, create=not obj.metadata.uid)
        elif isinstance(obj, Node):
            problems = validate_node(obj)
        else:
            problems = validate_object(obj)
        if not name_objects:
            errors.extend(problems)
            continue
        meta = obj.metadata
        label = f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"
        errors.extend(f"{label}: {problem}" for problem in problems)
    if errors:
        raise ValidationError(path, errors)


def decode_objects(
    items: Sequence[Any], source: str
) -> tuple[list[KubeObject], tuple[str, ...]]:
    """Decode and validate already-parsed objects (API list items, documents) from ``source``.

    The path every input takes after parsing: files, standard input and API responses.
    Returns the objects and ``apiVersion/Kind name`` of each skipped object.
    """
    decoded = decode_documents(list(items), source)
    _validate(source, decoded.objects)
    return list(decoded.objects), decoded.skipped


def load_cluster(paths: Sequence[Path | str]) -> tuple[Cluster, list[str]]:
    """Read cluster files into a :class:`Cluster`; also returns notes on skipped objects."""
    objects: list[KubeObject] = []
    notes: list[str] = []
    for path in paths:
        found, skipped = _objects(path)
        _validate(str(path), found)
        objects.extend(found)
        notes.extend(f"{path}: skipped {what} (kind not used by the scheduler)" for what in skipped)
    return Cluster.from_objects(objects), notes


def load_pod(path: Path | str) -> Pod:
    """Read the file holding exactly one Pod: the pod to schedule."""
    found, _ = _objects(path)
    pods = [obj for obj in found if isinstance(obj, Pod)]
    if len(pods) != 1:
        raise InputError(str(path), message=f"expected exactly one Pod, found {len(pods)}")
    _validate(str(path), pods, name_objects=False)
    return pods[0]


def load_configuration(path: Path | str | None) -> SchedulerConfiguration:
    """Read a KubeSchedulerConfiguration, or return upstream's defaults when ``path`` is None."""
    if path is None:
        return default_configuration()
    documents = [d for d in load_documents(path) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise InputError(str(path), message="expected one KubeSchedulerConfiguration document")
    return decode_configuration(documents[0], str(path))
