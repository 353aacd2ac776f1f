"""The scheduler's writes to the API server: binds, pod status, preemption, Events.

Every write is a raw request through the transport seam (the Python clients trip on the
Binding answer). :class:`RateLimitedTransport` applies ``clientConnection.qps``/``burst``
as client-go's token bucket does (watches are not limited). :class:`EventRecorder` posts
``events.k8s.io/v1`` Events from a background thread, as client-go's event broadcaster
does: named ``<pod>.<hex nanoseconds>``, ``reportingController`` the profile's scheduler
name, ``reportingInstance`` ``<controller>-<hostname>``; an Event isomorphic to one
posted in the last 6 minutes becomes a ``series`` update of that one.
"""

from __future__ import annotations

import json
import logging
import queue as queue_module
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from topospread.client.transport import Request, Response, Transport
from topospread.errors import ClusterError
from topospread.model.objects import Pod
from topospread.scheduler.informer import StreamingTransport
from topospread.scheduler.leader import micro_time

__all__ = [
    "NOTE_LENGTH_LIMIT",
    "EventRecorder",
    "RateLimitedTransport",
    "bind_pod",
    "delete_pod",
    "patch_pod_status",
    "truncate_message",
]

log = logging.getLogger("topospread.scheduler.api")

NOTE_LENGTH_LIMIT: Final = 1024
"""``validation.NoteLengthLimit`` of events.k8s.io: longer notes are cut (``truncateMessage``)."""
SERIES_WINDOW: Final = 6 * 60.0
"""Isomorphic events within this long become one series (client-go ``events`` package)."""


def truncate_message(message: str) -> str:
    """``truncateMessage`` of ``schedule_one.go``: at most 1024 bytes, ending `` ...``."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class RateLimitedTransport:
    """A token bucket of ``qps`` with ``burst`` in front of ``send`` (``flowcontrol``)."""

    def __init__(self, inner: StreamingTransport, qps: float, burst: int) -> None:
        self.inner = inner
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    @property
    def server(self) -> str:
        """The inner transport's server."""
        return self.inner.server

    def _take(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)

    def close(self) -> None:
        """Close the inner transport (when it can be closed)."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def send(self, request: Request) -> Response:
        """Wait for a token, then send."""
        self._take()
        return self.inner.send(request)

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """Watches are not rate limited."""
        return self.inner.stream(request, read_timeout=read_timeout, on_open=on_open)


def _pod_path(pod: Pod, sub: str = "") -> str:
    path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
    return f"{path}/{sub}" if sub else path


def bind_pod(transport: Transport, pod: Pod, node: str) -> Response:
    """POST ``pods/NAME/binding`` (``DefaultBinder``), the pod's uid as precondition."""
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.metadata.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    return transport.send(
        Request("POST", _pod_path(pod, "binding"), body=json.dumps(body).encode())
    )


def patch_pod_status(transport: Transport, pod: Pod, status: Mapping[str, Any]) -> Response:
    """A strategic merge patch of ``pods/NAME/status`` (conditions merge by type)."""
    return transport.send(
        Request(
            "PATCH",
            _pod_path(pod, "status"),
            body=json.dumps({"status": status}).encode(),
            content_type="application/strategic-merge-patch+json",
        )
    )


def delete_pod(transport: Transport, pod: Pod) -> Response:
    """DELETE the pod with its uid as precondition (a victim must be the one chosen)."""
    body = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": pod.metadata.uid},
    }
    return transport.send(Request("DELETE", _pod_path(pod), body=json.dumps(body).encode()))


@dataclass(slots=True)
class _Posted:
    name: str
    namespace: str
    count: int
    first: float


class EventRecorder:
    """Posts Events in the background; never blocks the scheduler (drops when 10,000
    are waiting, as the broadcaster's channel drops)."""

    def __init__(
        self, transport: Transport, hostname: str, *, capacity: int = 10_000, workers: int = 4
    ) -> None:
        self.transport = transport
        self.hostname = hostname
        self._queue: queue_module.Queue[tuple[Any, ...] | None] = queue_module.Queue(capacity)
        self._posted: dict[tuple[str, ...], _Posted] = {}
        self._lock = threading.Lock()
        # A few senders: one request at a time cannot keep up with a scheduler binding
        # hundreds of pods a second (each Event is a round trip to the API server).
        self._threads = [
            threading.Thread(target=self._run, name=f"event-recorder-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()
        self.posted = 0

    def event(
        self,
        controller: str,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: Pod | None = None,
    ) -> None:
        """Queue one Event about ``pod``."""
        try:
            self._queue.put_nowait((controller, pod, event_type, reason, action, note, related))
        except queue_module.Full:
            log.warning("event dropped: too many waiting", extra={"pod": pod.key, "reason": reason})

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until the queued Events are posted (or ``timeout``)."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty() and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        """Post what is queued, then end the thread."""
        deadline = time.monotonic() + 10
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._post(*item)
            except ClusterError as error:
                log.warning("cannot post an event: %s", error)

    def _post(
        self,
        controller: str,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: Pod | None,
    ) -> None:
        now = time.time()
        key = (pod.metadata.uid, pod.key, reason, action, event_type, note, controller)
        with self._lock:
            previous = self._posted.get(key)
            if previous is not None and now - previous.first < SERIES_WINDOW:
                previous.count += 1
                count = previous.count
            else:
                previous = None
        if previous is not None:
            patch = {"series": {"count": count, "lastObservedTime": micro_time(now)}}
            path = f"/apis/events.k8s.io/v1/namespaces/{previous.namespace}/events/{previous.name}"
            response = self.transport.send(
                Request(
                    "PATCH",
                    path,
                    body=json.dumps(patch).encode(),
                    content_type="application/merge-patch+json",
                )
            )
            if response.status < 300:
                return
        name = f"{pod.name}.{time.time_ns():x}"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": pod.namespace},
            "eventTime": micro_time(now),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.hostname}",
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": note,
            "regarding": {
                "kind": "Pod",
                "apiVersion": "v1",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.metadata.uid,
            },
        }
        if related is not None:
            body["related"] = {
                "kind": "Pod",
                "apiVersion": "v1",
                "namespace": related.namespace,
                "name": related.name,
                "uid": related.metadata.uid,
            }
        path = f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events"
        response = self.transport.send(Request("POST", path, body=json.dumps(body).encode()))
        if response.status >= 300:
            log.warning(
                "event not posted: HTTP %s",
                response.status,
                extra={"pod": pod.key, "reason": reason},
            )
            return
        with self._lock:
            self.posted += 1
            if len(self._posted) > 50_000:
                self._posted = {
                    k: v for k, v in self._posted.items() if now - v.first < SERIES_WINDOW
                }
            self._posted[key] = _Posted(name, pod.namespace, 1, now)
