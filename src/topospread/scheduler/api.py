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

import collections
import heapq
import itertools
import logging
import queue as queue_module
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from topospread.client.chained import ChainedWrites, FollowUp
from topospread.client.events import ObjectReference, event_request
from topospread.client.transport import Answer, AsyncWrites, Request, Response, Transport
from topospread.errors import ClusterError, TransportClosed
from topospread.model.objects import Pod
from topospread.scheduler.informer import StreamingTransport
from topospread.scheduler.leader import micro_time

__all__ = [
    "NOTE_LENGTH_LIMIT",
    "EventRecorder",
    "RateLimitedTransport",
    "binding_request",
    "delete_pod",
    "patch_pod_status",
    "truncate_message",
]

log = logging.getLogger("topospread.scheduler.api")

NOTE_LENGTH_LIMIT: Final = 1024
"""``validation.NoteLengthLimit`` of events.k8s.io: longer notes are cut (``truncateMessage``)."""
SERIES_WINDOW: Final = 6 * 60.0
"""Isomorphic events within this long become one series (client-go ``events`` package)."""
FAILURE_LOG_INTERVAL: Final = 1.0
"""Seconds between the lines that count the Events to be tried again."""
_First = tuple[str, float]
"""A new Event's name and time, kept for its next tries."""
MAX_EVENT_TRIES: Final = 12
RETRY_SLEEP: Final = 10.0
"""client-go's events broadcaster (``attemptRecording``): an Event the API server could
not be reached for is tried again, up to 12 times, 10 s apart (the first wait a random
part of that, so that clients do not retry in step after an outage); one it answered with
an error is not."""


def _pod_reference(pod: Pod) -> ObjectReference:
    return ("Pod", "v1", pod.namespace, pod.name, pod.metadata.uid)


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
        self._async_inner = inner if isinstance(inner, AsyncWrites) and inner.sends_async else None
        self._chained_inner = inner if isinstance(inner, ChainedWrites) and inner.chains else None
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

    def take_now(self) -> bool:
        """A token if one is there now, without waiting."""
        if self.qps <= 0:
            return True
        with self._lock:
            now = time.monotonic()
            tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            if tokens < 1:
                self._tokens = tokens
                return False
            self._tokens = tokens - 1
        return True

    @property
    def sends_async(self) -> bool:
        """Whether the inner transport sends without waiting."""
        return self._async_inner is not None

    def send_async(self, request: Request, done: Answer) -> bool:
        """Through the inner transport's ``send_async`` when it has one and a token is
        there now; False otherwise (``send`` waits for the token)."""
        inner = self._async_inner
        if inner is None or not self.take_now():
            return False
        return inner.send_async(request, done)

    @property
    def chains(self) -> bool:
        """Whether the inner transport can chain a follow-up to a write
        (:class:`~topospread.client.chained.ChainedWrites`)."""
        return self._chained_inner is not None

    def send_async_then(self, request: Request, done: Answer, follow_up: FollowUp) -> bool:
        """:meth:`send_async` with a follow-up; the follow-up's own token is the caller's
        to take (from the limiter of the client that would send it)."""
        inner = self._chained_inner
        if inner is None or not self.take_now():
            return False
        return inner.send_async_then(request, done, follow_up)

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


def binding_request(pod: Pod, node: str) -> Request:
    """POST ``pods/NAME/binding`` (``DefaultBinder``), the pod's uid as precondition."""
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.metadata.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    return Request("POST", _pod_path(pod, "binding"), body=orjson.dumps(body))


def patch_pod_status(transport: Transport, pod: Pod, status: Mapping[str, Any]) -> Response:
    """A strategic merge patch of ``pods/NAME/status`` (conditions merge by type)."""
    return transport.send(
        Request(
            "PATCH",
            _pod_path(pod, "status"),
            body=orjson.dumps({"status": status}),
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
    return transport.send(Request("DELETE", _pod_path(pod), body=orjson.dumps(body)))


@dataclass(slots=True)
class _Posted:
    name: str
    namespace: str
    count: int
    first: float


EventItem = tuple[str, Pod, str, str, str, str, "Pod | None"]
"""(controller, pod, type, reason, action, note, related): one Event to post."""


class EventRecorder:
    """Posts Events in the background; never blocks the scheduler.

    Through a transport that sends without waiting
    (:class:`~topospread.client.transport.AsyncWrites`: the write processes), an Event is
    sent by the thread that records it, as client-go's broadcaster starts a goroutine per
    Event (``recordToSink``): as many are in flight as are recorded, ``in_flight`` at
    most when given (then the next waiting one is sent by the thread that reads an
    answer). Otherwise, and when the rate limiter would make a send wait, ``workers``
    threads send them, and an Event is dropped when ``capacity`` are waiting for them (as
    the broadcaster's channel drops)."""

    def __init__(
        self,
        transport: Transport,
        hostname: str,
        *,
        capacity: int = 10_000,
        workers: int = 4,
        in_flight: int | None = None,
    ) -> None:
        self.transport = transport
        self.hostname = hostname
        self.capacity = capacity
        self.workers = workers
        self._queue: queue_module.Queue[EventItem | None] = queue_module.Queue(capacity)
        self._posted: dict[tuple[str, ...], _Posted] = {}
        self._lock = threading.Lock()
        self._sender = (
            transport if isinstance(transport, AsyncWrites) and transport.sends_async else None
        )
        self._waiting: collections.deque[EventItem] = collections.deque()
        """Events for the async lane while ``in_flight`` of them are in flight."""
        self._in_flight = 0
        self._lane_width = in_flight if in_flight is not None else sys.maxsize
        """How many Events of the async lane may be in flight."""
        self._pump = threading.local()
        """Per thread: whether :meth:`_next` is sending, and how many slots were freed."""
        # A few senders: one request at a time cannot keep up with a scheduler binding
        # hundreds of pods a second (each Event is a round trip to the API server).
        self._threads = [
            threading.Thread(target=self._run, name=f"event-recorder-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()
        self.posted = 0
        self._retries: list[tuple[float, int, EventItem, int, _First | None]] = []
        """(when, order, Event, tries so far, its name and time): Events to try again, a
        heap. A new Event is tried again under the same name, as client-go does."""
        self._retry_order = itertools.count()
        self._retry_ready = threading.Condition(self._lock)
        self._stopping = False
        self._unlogged_failures = 0
        self._failure_logged_at = -FAILURE_LOG_INTERVAL
        threading.Thread(target=self._retry_loop, name="event-retries", daemon=True).start()

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
        item: EventItem = (controller, pod, event_type, reason, action, note, related)
        if self._sender is not None:
            with self._lock:
                start = self._in_flight < self._lane_width
                if start:
                    self._in_flight += 1
                elif len(self._waiting) < self.capacity:
                    self._waiting.append(item)
                    return
            if start:
                self._post_async(item)
                return
        try:
            self._queue.put_nowait(item)
        except queue_module.Full:
            log.warning("event dropped: too many waiting", extra={"pod": pod.key, "reason": reason})

    @property
    def pending(self) -> int:
        """Events recorded and not yet answered."""
        with self._lock:
            return self._queue.qsize() + len(self._waiting) + self._in_flight + len(self._retries)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until the queued Events are posted (or ``timeout``)."""
        deadline = time.monotonic() + timeout
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        """Post what is queued (for at most 10 s), then end the threads."""
        deadline = time.monotonic() + 10
        waiting = self.pending
        if waiting:
            log.info("posting the queued Events", extra={"events": waiting})
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.02)
        with self._lock:
            in_flight = self._in_flight
            waiting = len(self._waiting) + self._queue.qsize() + len(self._retries)
            self._stopping = True
            self._retry_ready.notify()
        if in_flight or waiting:
            log.warning(
                "stopping with Events not posted",
                extra={"in_flight": in_flight, "waiting": waiting},
            )
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- the threads' lane ---------------------------------------------------------------

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._post(item)

    # -- tries again (client-go's attemptRecording) ----------------------------------------

    def _failed(
        self, item: EventItem, tries: int, error: ClusterError, first: _First | None
    ) -> None:
        if self._stopping or isinstance(error, TransportClosed):
            log.warning("cannot post an event: %s", error)
            return
        if tries >= MAX_EVENT_TRIES:
            log.warning("cannot post an event (retry limit exceeded): %s", error)
            return
        delay = RETRY_SLEEP * (random.random() if tries == 1 else 1.0)
        now = time.monotonic()
        with self._lock:
            entry = (now + delay, next(self._retry_order), item, tries, first)
            heapq.heappush(self._retries, entry)
            self._retry_ready.notify()
            # One line a second at most: an outage fails every Event in flight at once.
            self._unlogged_failures += 1
            if now - self._failure_logged_at < FAILURE_LOG_INTERVAL:
                return
            failures, self._unlogged_failures = self._unlogged_failures, 0
            self._failure_logged_at = now
        log.warning(
            "cannot post %d event%s (may retry after sleeping): %s",
            failures,
            "" if failures == 1 else "s",
            error,
        )

    def _retry_loop(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and (
                    not self._retries or self._retries[0][0] > time.monotonic()
                ):
                    wait = self._retries[0][0] - time.monotonic() if self._retries else None
                    self._retry_ready.wait(wait)
                if self._stopping:
                    return
                _, _, item, tries, first = heapq.heappop(self._retries)
                if self._sender is not None:
                    self._in_flight += 1
            if self._sender is not None:
                self._post_async(item, tries, first)
            else:
                self._post(item, tries, first)

    def _post(self, item: EventItem, tries: int = 0, first: _First | None = None) -> None:
        now = first[1] if first is not None else time.time()
        name = first[0] if first is not None else None
        try:
            if first is None:
                series = self._series(item, now)
                if series is not None and self.transport.send(series).status < 300:
                    return
            name, request = self._new_event(item, now, name)
            response = self.transport.send(request)
        except ClusterError as error:
            self._failed(item, tries + 1, error, (name, now) if name is not None else None)
            return
        self._answered(item, name, now, response)

    # -- the async lane ------------------------------------------------------------------

    def _post_async(self, item: EventItem, tries: int = 0, first: _First | None = None) -> None:
        """Send ``item`` (tried ``tries`` times before) without waiting; its answer sends
        the next waiting Event."""
        if first is not None:
            self._post_new_async(item, first[1], tries, first[0])
            return
        now = time.time()
        series = self._series(item, now)
        if series is None:
            self._post_new_async(item, now, tries)
            return

        def patched(answer: Response | ClusterError) -> None:
            if isinstance(answer, Response) and answer.status < 300:
                self._next()
            elif isinstance(answer, ClusterError):
                self._failed(item, tries + 1, answer, None)
                self._next()
            else:
                self._post_new_async(item, now, tries)

        self._send_async(item, series, patched, tries, None)

    def _post_new_async(
        self, item: EventItem, now: float, tries: int, name: str | None = None
    ) -> None:
        name, request = self._new_event(item, now, name)
        first = (name, now)

        def posted(answer: Response | ClusterError) -> None:
            if isinstance(answer, ClusterError):
                self._failed(item, tries + 1, answer, first)
            else:
                self._answered(item, first[0], now, answer)
            self._next()

        self._send_async(item, request, posted, tries, first)

    def _send_async(
        self,
        item: EventItem,
        request: Request,
        done: Answer,
        tries: int,
        first: _First | None,
    ) -> None:
        assert self._sender is not None
        try:
            sent = self._sender.send_async(request, done)
        except ClusterError as error:
            self._failed(item, tries + 1, error, first)
            self._next()
            return
        if not sent:
            # The rate limiter would wait: a sender thread waits instead.
            try:
                self._queue.put_nowait(item)
            except queue_module.Full:
                log.warning("event dropped: too many waiting", extra={"pod": item[1].key})
            self._next()

    def _next(self) -> None:
        """One Event of the async lane is done: send the next waiting one, if any.

        A send that ends at once (refused while the transport is closed, handed to the
        threads, answered on this thread) calls this again from inside the send: that
        call only counts, and the outer call sends the next, so a queue of 10,000 Events
        the closed transport refuses is a loop, not a recursion 10,000 deep."""
        local = self._pump
        if getattr(local, "running", False):
            local.freed += 1
            return
        local.running, local.freed = True, 1
        try:
            while local.freed:
                local.freed -= 1
                with self._lock:
                    if not self._waiting:
                        self._in_flight -= 1
                        continue
                    item = self._waiting.popleft()
                self._post_async(item)
        finally:
            local.running = False

    # -- what both lanes send --------------------------------------------------------------

    @staticmethod
    def _key(item: EventItem) -> tuple[str, ...]:
        controller, pod, event_type, reason, action, note, _related = item
        return (pod.metadata.uid, pod.key, reason, action, event_type, note, controller)

    def _series(self, item: EventItem, now: float) -> Request | None:
        """The PATCH that makes ``item`` the next of a series posted in the last
        :data:`SERIES_WINDOW`; None when there is no such series."""
        key = self._key(item)
        with self._lock:
            previous = self._posted.get(key)
            if previous is None or now - previous.first >= SERIES_WINDOW:
                return None
            previous.count += 1
            count = previous.count
        patch = {"series": {"count": count, "lastObservedTime": micro_time(now)}}
        path = f"/apis/events.k8s.io/v1/namespaces/{previous.namespace}/events/{previous.name}"
        return Request(
            "PATCH",
            path,
            body=orjson.dumps(patch),
            content_type="application/merge-patch+json",
        )

    def _new_event(
        self, item: EventItem, now: float, name: str | None = None
    ) -> tuple[str, Request]:
        controller, pod, event_type, reason, action, note, related = item
        request, (name, _) = event_request(
            *self._event_args(controller, pod, event_type, reason, action, note),
            _pod_reference(related) if related is not None else None,
            now,
            name,
        )
        return name, request

    def _event_args(
        self, controller: str, pod: Pod, event_type: str, reason: str, action: str, note: str
    ) -> tuple[str, str, str, str, str, str, ObjectReference]:
        """:func:`~topospread.client.events.event_request`'s first arguments, for ``pod``."""
        instance = f"{controller}-{self.hostname}"
        return controller, instance, event_type, reason, action, note, _pod_reference(pod)

    # -- Events that follow a write (client/chained.py) ------------------------------------

    def follow_up(
        self,
        controller: str,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        *,
        not_sent: Callable[[], object] | None = None,
    ) -> FollowUp | None:
        """An Event about ``pod`` to be posted as the follow-up of a write
        (:class:`~topospread.client.chained.FollowUp`): rendered and sent by the write
        process once the write succeeded, then answered here as the async lane's Events
        are (counted in :attr:`pending`, tried again after a failure, remembered for a
        series). ``not_sent`` is called when the write failed and the Event was not sent.
        None when the Event cannot go that way now: no write process, a series to
        continue, the lane full, or no token from the Events' rate limiter (then it is
        recorded with :meth:`event` as usual). The token is taken now, when the write is
        handed over: a write that then fails spends one token the Event does not use."""
        if self._sender is None:
            return None
        item: EventItem = (controller, pod, event_type, reason, action, note, None)
        take_now = getattr(self.transport, "take_now", None)
        with self._lock:
            if self._stopping or self._in_flight >= self._lane_width:
                return None
            previous = self._posted.get(self._key(item))
            if previous is not None and time.time() - previous.first < SERIES_WINDOW:
                return None
            if take_now is not None and not take_now():
                return None
            self._in_flight += 1

        # Named here, dated where it is sent: an Event lost with its write process after
        # it may have been created is tried again under the same name, which the API
        # server refuses (409) if the first try got through, so a pod never has two.
        created = time.time_ns()
        name = f"{pod.name}.{created:x}"

        def done(token: object | None, answer: Response | ClusterError | None) -> None:
            if answer is None:
                if not_sent is not None:
                    not_sent()
            elif isinstance(answer, ClusterError):
                first = token if isinstance(token, tuple) else (name, created / 1e9)
                self._failed(item, 1, answer, first)
            elif isinstance(token, tuple):
                self._answered(item, token[0], token[1], answer)
            self._next()

        args = self._event_args(controller, pod, event_type, reason, action, note)
        # event_request(..., regarding, related=None, now=None: when sent, name)
        return FollowUp(event_request, (*args, None, None, name), done)

    def _answered(self, item: EventItem, name: str, now: float, response: Response) -> None:
        """A new Event's answer: remembered for its series when posted."""
        pod = item[1]
        if response.status >= 300:
            log.warning(
                "event not posted: HTTP %s",
                response.status,
                extra={"pod": pod.key, "reason": item[3]},
            )
            return
        key = self._key(item)
        with self._lock:
            self.posted += 1
            if len(self._posted) > 50_000:
                self._posted = {
                    k: v for k, v in self._posted.items() if now - v.first < SERIES_WINDOW
                }
            self._posted[key] = _Posted(name, pod.namespace, 1, now)
