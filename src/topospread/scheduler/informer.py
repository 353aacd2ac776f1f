"""List-then-watch informers, as client-go's reflector and shared informer do it.

A :class:`Reflector` lists a resource (``resourceVersion=0`` first, served from the API
server's watch cache, as ``reflector.go`` did before v1.35), hands the items to its store
as one replacement, then watches from the list's resourceVersion with
``allowWatchBookmarks``. With ``watch_list`` it takes the state as client-go's reflector
does by default since v1.35 (``WatchListClient``; KEP-3157) instead: one watch with
``sendInitialEvents=true`` streams every object, a bookmark marks the end of the state,
and the same stream goes on as the watch; where the server refuses that, it lists. Each
event moves the store forward and is dispatched to the handlers. The watch ends:

- normally after ``timeoutSeconds`` (a random 5-10 minutes, ``minWatchTimeout`` × (1+rand)):
  watch again from the last resourceVersion seen;
- with a dropped connection or an unreachable server: watch again from the last
  resourceVersion after a backoff (800 ms doubling to 30 s, with jitter; the
  ``wait.Backoff`` client-go's reflector uses), so that a restarted server resumes
  without a relist;
- with ``410 Gone`` / an ERROR event ``Expired`` (the resourceVersion was compacted):
  take the state again (a watch-list, or a list with ``resourceVersion=""``: a consistent
  read, as client-go's ``relistResourceVersion`` after an expiry) and replace the store.

The :class:`Store` keys objects ``namespace/name`` (``MetaNamespaceKeyFunc``) and turns a
replacement into the adds, updates and deletes that make the handlers' view equal to the
list (``DeltaFIFO.Replace``: objects missing from the list are deleted). Handlers run on
the reflector's thread, one event at a time.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import orjson

from topospread.client.source import Resource
from topospread.client.transport import Request, Transport, query, raise_for_status
from topospread.errors import ClusterError

__all__ = [
    "Backoff",
    "EventHandler",
    "Reflector",
    "Store",
    "StreamingTransport",
    "object_key",
]

log = logging.getLogger("topospread.scheduler.informer")

MIN_WATCH_TIMEOUT = 300.0
"""client-go's ``minWatchTimeout``: each watch lasts a random 1-2 times this long."""
INITIAL_EVENTS_END: Final = "k8s.io/initial-events-end"
"""The annotation of the BOOKMARK that ends a watch-list's initial events."""
LIST_PAGE_SIZE = 500
ABSENT_RELIST_SECONDS = 60.0
"""How often a resource the server does not serve (an optional API group, 404) is listed
again: until then the store is empty and counts as synced."""
"""Pages of a consistent relist (the initial ``resourceVersion=0`` list is not paged)."""


class StreamingTransport(Transport, Protocol):
    """A transport that can also hold a watch open and yield its lines."""

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """Send ``request`` and yield the response body line by line."""
        ...


class EventHandler(Protocol):
    """``cache.ResourceEventHandler``: told of every change, on the reflector's thread."""

    def on_add(self, resource: Resource, obj: dict[str, Any]) -> None:
        """A new object."""

    def on_update(self, resource: Resource, old: dict[str, Any], new: dict[str, Any]) -> None:
        """A changed object (or one relisted with a new resourceVersion)."""

    def on_delete(self, resource: Resource, obj: dict[str, Any]) -> None:
        """A deleted object (its last known state, when a relist found it gone)."""


def _drop_managed_fields(obj: dict[str, Any]) -> None:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (``MetaNamespaceKeyFunc``)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    name = str(meta.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def _resource_version(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


@dataclass
class Store:
    """The objects of one resource by key, as the last list and watch events left them."""

    resource: Resource
    handler: EventHandler
    items: dict[str, dict[str, Any]] = field(default_factory=dict)

    def replace(self, objects: list[dict[str, Any]]) -> None:
        """Make the store equal to a fresh list, telling the handler what changed."""
        fresh = {object_key(obj): obj for obj in objects}
        for key, old in list(self.items.items()):
            if key not in fresh:
                del self.items[key]
                self.handler.on_delete(self.resource, old)
        for key, obj in fresh.items():
            old_obj = self.items.get(key)
            self.items[key] = obj
            if old_obj is None:
                self.handler.on_add(self.resource, obj)
            elif _resource_version(old_obj) != _resource_version(obj):
                self.handler.on_update(self.resource, old_obj, obj)

    def apply(self, kind: str, obj: dict[str, Any]) -> None:
        """One watch event: ADDED, MODIFIED or DELETED."""
        key = object_key(obj)
        old = self.items.get(key)
        if kind == "DELETED":
            if old is not None:
                del self.items[key]
            self.handler.on_delete(self.resource, obj)
            return
        self.items[key] = obj
        if old is None:
            self.handler.on_add(self.resource, obj)
        else:
            self.handler.on_update(self.resource, old, obj)


@dataclass
class Backoff:
    """``wait.Backoff``-style delays: ``initial`` doubling to ``maximum``, ±``jitter``."""

    initial: float = 0.8
    maximum: float = 30.0
    jitter: float = 0.1
    current: float = 0.0

    def next(self) -> float:
        """The next delay (and double the one after)."""
        self.current = self.initial if self.current == 0 else min(self.maximum, self.current * 2)
        return self.current * (1 + self.jitter * random.random())

    def reset(self) -> None:
        """Back to ``initial`` after a success."""
        self.current = 0.0


class _Expired(Exception):
    """The watch's resourceVersion is too old (410 Gone): relist."""


class _NotServed(Exception):
    """An optional resource the server does not serve (404 on list)."""


class Reflector:
    """Keeps one :class:`Store` in step with the API server, on its own thread.

    ``field_selector`` narrows the list and watch (the scheduler's pod informer leaves out
    Succeeded and Failed pods). ``synced`` is set once the first list reached the store.
    """

    def __init__(
        self,
        transport: StreamingTransport,
        resource: Resource,
        handler: EventHandler,
        *,
        field_selector: str | None = None,
        lock: threading.RLock | None = None,
        watch_timeout: Callable[[], float] | None = None,
        on_error: Callable[[str], None] | None = None,
        watch_list: bool = False,
        drop_managed_fields: bool = False,
    ) -> None:
        self.transport = transport
        self.drop_managed_fields = drop_managed_fields
        """Leave each object's ``metadata.managedFields`` out of the store, as
        kube-scheduler's pod informer does (kubernetes#119556): nothing here reads them,
        and they are about 40% of a pod's JSON."""
        self.watch_list = watch_list
        """Sync with a watch-list stream first (client-go's default since v1.35), and list
        only when the server refuses it; False: list, then watch."""
        self.resource = resource
        self.store = Store(resource, handler)
        self.field_selector = field_selector
        self.lock = lock if lock is not None else threading.RLock()
        """Held while the store and the handlers change (shared with the cache)."""
        self.synced = threading.Event()
        self.last_resource_version = ""
        self.lists = 0
        """Lists done (1 after the first sync; more after expiries)."""
        self.streamed = 0
        """Of :attr:`lists`, those streamed by a watch-list."""
        self.watches = 0
        """Watches opened."""
        self._watch_timeout = watch_timeout or (lambda: MIN_WATCH_TIMEOUT * (1 + random.random()))
        self._on_error = on_error
        self._stop = threading.Event()
        self._dropped = threading.Event()
        self._cut: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None
        self._backoff = Backoff()

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Run on a daemon thread until :meth:`stop`."""
        self._thread = threading.Thread(
            target=self.run, name=f"reflector-{self.resource.plural}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """End the watch now and wait for the thread."""
        self._stop.set()
        cut = self._cut
        if cut is not None:
            with contextlib.suppress(OSError):
                cut()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stop.is_set()

    def cut_watch(self) -> None:
        """Drop the current watch connection (as a network failure would)."""
        cut = self._cut
        if cut is not None:
            self._dropped.set()
            cut()

    def run(self) -> None:
        """ListAndWatch until stopped; errors back off and retry, never end the loop."""
        relist_version = "0"
        while not self._stop.is_set():
            rest: Iterator[bytes] | None = None
            try:
                rest = self._watch_list() if self.watch_list else None
                if rest is None and not self._stop.is_set():
                    self._list(relist_version)
            except _NotServed:
                self._stop.wait(ABSENT_RELIST_SECONDS)
                continue
            except ClusterError as error:
                # Retried after the backoff with the same resourceVersion, as client-go
                # retries a failed list.
                self._report(f"list {self.resource.plural}: {error}")
                self._stop.wait(self._backoff.next())
                continue
            except Exception:
                # A handler's bug must not end the informer: report it and start over.
                log.exception("list failed", extra={"resource": self.resource.plural})
                relist_version = ""
                self._stop.wait(self._backoff.next())
                continue
            self._backoff.reset()
            try:
                if rest is not None:
                    self._follow(rest)  # the watch-list's stream goes on as a watch
                self._watch_loop()
            except _Expired:
                relist_version = ""
                log.info("watch expired, relisting", extra={"resource": self.resource.plural})
            except Exception:
                log.exception("watch failed, relisting", extra={"resource": self.resource.plural})
                relist_version = ""
                self._stop.wait(self._backoff.next())

    def _report(self, message: str) -> None:
        log.warning(message)
        if self._on_error is not None:
            self._on_error(message)

    # -- list ----------------------------------------------------------------------------

    def _list(self, resource_version: str) -> None:
        items: list[dict[str, Any]] = []
        token: str | None = None
        list_version = ""
        while True:
            # A resourceVersion=0 list comes whole from the watch cache (no paging).
            params = query(
                resourceVersion=resource_version if token is None else None,
                limit=LIST_PAGE_SIZE if resource_version != "0" else None,
                fieldSelector=self.field_selector,
                **{"continue": token},
            )
            response = self.transport.send(Request("GET", self.resource.path(), params))
            if response.status == 410 and token is not None:
                items, token, resource_version = [], None, ""
                continue
            if response.status == 404 and self.resource.optional and token is None:
                # A server without the API group (resource.k8s.io off) has none of them.
                with self.lock:
                    self.store.replace([])
                self.synced.set()
                raise _NotServed
            raise_for_status(
                response,
                self.transport.server,
                verb="list",
                resource=self.resource.plural,
                group=self.resource.group,
            )
            try:
                page = orjson.loads(response.data)
            except orjson.JSONDecodeError as exc:
                raise ClusterError(
                    f"{self.transport.server}: list {self.resource.plural}: not JSON ({exc})"
                ) from None
            for item in page.get("items") or ():
                item.setdefault("apiVersion", self.resource.api_version)
                item.setdefault("kind", self.resource.kind)
                if self.drop_managed_fields:
                    _drop_managed_fields(item)
                items.append(item)
            metadata = page.get("metadata") or {}
            list_version = str(metadata.get("resourceVersion", ""))
            token = metadata.get("continue") or None
            if not token:
                break
        with self.lock:
            self.store.replace(items)
            self.last_resource_version = list_version
            self.lists += 1
        self.synced.set()

    # -- watch ---------------------------------------------------------------------------

    def _watch_loop(self) -> None:
        while not self._stop.is_set():
            timeout = self._watch_timeout()
            params = query(
                watch="true",
                resourceVersion=self.last_resource_version,
                allowWatchBookmarks="true",
                timeoutSeconds=int(timeout),
                fieldSelector=self.field_selector,
            )
            request = Request("GET", self.resource.path(), params)
            self.watches += 1
            self._follow(
                self.transport.stream(request, read_timeout=timeout + 60, on_open=self._opened)
            )

    def _follow(self, lines: Iterator[bytes]) -> None:
        """A watch's events applied until its stream ends; a dropped or failed stream is
        reported and backs off (the watch is then opened again from the last
        resourceVersion)."""
        try:
            for line in lines:
                if self._stop.is_set():
                    return
                self._event(line)
            if self._dropped.is_set():
                # Cut by cut_watch(): a closed socket may read as a clean end.
                raise ClusterError(f"watch {self.resource.plural}: connection dropped")
            self._backoff.reset()
        except ClusterError as error:
            self._dropped.clear()
            if self._stop.is_set():
                return
            self._report(f"watch {self.resource.plural}: {error}")
            self._stop.wait(self._backoff.next())
        finally:
            self._cut = None

    # -- watch-list ------------------------------------------------------------------------

    def _watch_list(self) -> Iterator[bytes] | None:
        """The resource's state as a stream, as client-go's reflector takes it since v1.35
        (``WatchListClient``; KEP-3157): a watch with ``sendInitialEvents=true`` from a
        consistent ``resourceVersion=""`` sends every object as ADDED, then a BOOKMARK
        annotated ``k8s.io/initial-events-end`` at the state's resourceVersion. The store
        then holds that state (synced) and the rest of the stream, returned, is the watch
        that follows. None when the server refused or the stream ended or failed before
        that bookmark: the caller lists instead, as client-go falls back to a list.

        The first sync (an empty store) hands each object to the handlers as it arrives,
        so decoding keeps pace with the server's sending instead of waiting for the whole
        answer; a later one replaces the store at the bookmark, so that objects gone meanwhile
        are reported deleted (``DeltaFIFO.Replace``)."""
        timeout = self._watch_timeout()
        params = query(
            watch="true",
            sendInitialEvents="true",
            resourceVersionMatch="NotOlderThan",
            allowWatchBookmarks="true",
            timeoutSeconds=int(timeout),
            fieldSelector=self.field_selector,
        )
        self.watches += 1
        lines = iter(
            self.transport.stream(
                Request("GET", self.resource.path(), params),
                read_timeout=timeout + 60,
                on_open=self._opened,
            )
        )
        as_they_come = not self.store.items
        initial: dict[str, dict[str, Any]] = {}
        reason = "stopped"
        try:
            for line in lines:
                if self._stop.is_set():
                    break
                event = self._watch_event(line)
                if event is None:
                    continue
                kind, obj = event
                if kind == "BOOKMARK":
                    annotations = (obj.get("metadata") or {}).get("annotations") or {}
                    if annotations.get(INITIAL_EVENTS_END) != "true":
                        continue
                    with self.lock:
                        if not as_they_come:
                            self.store.replace(list(initial.values()))
                        self.last_resource_version = _resource_version(obj)
                        self.lists += 1
                        self.streamed += 1
                    self.synced.set()
                    return lines
                if as_they_come:
                    with self.lock:
                        self.store.apply(kind, obj)
                elif kind == "DELETED":
                    initial.pop(object_key(obj), None)
                else:
                    initial[object_key(obj)] = obj
            else:
                reason = "the stream ended before its initial events did"
        except (ClusterError, _Expired) as error:
            reason = str(error) or "expired"
        close = getattr(lines, "close", None)
        if close is not None:
            close()  # the connection goes now, not when the generator is collected
        self._dropped.clear()
        self._cut = None
        if not self._stop.is_set():
            log.warning(
                "watch-list failed, listing instead",
                extra={"resource": self.resource.plural, "reason": reason},
            )
        return None

    def _opened(self, cut: Callable[[], None]) -> None:
        self._cut = cut
        if self._stop.is_set():
            cut()

    def _event(self, line: bytes) -> None:
        event = self._watch_event(line)
        if event is None:
            return
        kind, obj = event
        version = _resource_version(obj)
        if kind == "BOOKMARK":
            self.last_resource_version = version
            return
        with self.lock:
            self.store.apply(kind, obj)
            self.last_resource_version = version

    def _watch_event(self, line: bytes) -> tuple[str, dict[str, Any]] | None:
        """A watch line as its type (ADDED, MODIFIED, DELETED or BOOKMARK) and object;
        None for a line to skip. An ERROR raises: :class:`_Expired` for a 410."""
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._report(f"watch {self.resource.plural}: a line that is not JSON")
            return None
        kind = event.get("type")
        obj = event.get("object")
        if kind is None and event.get("kind") == "Status":
            # The whole answer was an error status (the watch request itself failed).
            obj, kind = event, "ERROR"
        if not isinstance(obj, dict):
            return None
        if kind == "ERROR":
            code = obj.get("code")
            if code == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise _Expired()
            raise ClusterError(
                f"{self.transport.server}: watch {self.resource.plural}: "
                f"{obj.get('message') or obj.get('reason') or code}"
            )
        if kind == "BOOKMARK":
            return kind, obj
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return None
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        if self.drop_managed_fields:
            _drop_managed_fields(obj)
        return kind, obj
