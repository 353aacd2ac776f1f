"""``events.k8s.io/v1`` Events as client-go's event recorder writes them."""

from __future__ import annotations

import time
from typing import Any

import orjson

from topospread.client.leaderelection import micro_time
from topospread.client.transport import Request

__all__ = ["ObjectReference", "event_request"]

ObjectReference = tuple[str, str, str, str, str]
"""(kind, apiVersion, namespace, name, uid): what an Event is about (``regarding``) or
involves (``related``)."""


def event_request(
    controller: str,
    instance: str,
    event_type: str,
    reason: str,
    action: str,
    note: str,
    regarding: ObjectReference,
    related: ObjectReference | None = None,
    now: float | None = None,
    name: str | None = None,
) -> tuple[Request, tuple[str, float]]:
    """The POST of a new Event, and its (name, time) for the tries that may follow.

    Named ``<regarding's name>.<hex nanoseconds>`` and dated ``now`` (the present when
    None), as client-go's ``events`` recorder names and dates a new Event; a later try of
    the same Event passes the first try's ``name`` and ``now`` back."""
    at = time.time() if now is None else now
    namespace, regarding_name = regarding[2], regarding[3]
    event_name = name or f"{regarding_name}.{time.time_ns():x}"
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": namespace},
        "eventTime": micro_time(at),
        "reportingController": controller,
        "reportingInstance": instance,
        "action": action,
        "reason": reason,
        "type": event_type,
        "note": note,
        "regarding": _reference(regarding),
    }
    if related is not None:
        body["related"] = _reference(related)
    path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    return Request("POST", path, body=orjson.dumps(body)), (event_name, at)


def _reference(reference: ObjectReference) -> dict[str, str]:
    kind, api_version, namespace, name, uid = reference
    return {
        "kind": kind,
        "apiVersion": api_version,
        "namespace": namespace,
        "name": name,
        "uid": uid,
    }
