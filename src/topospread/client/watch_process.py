"""A watch read by a process of its own: its lines come to the reader over a pipe.

The scheduler's pod informer reads one watch event per bind. Read in the scheduling
process, each event costs a TLS read, urllib3's chunk parsing and a wake-up of the
informer's thread, which takes the GIL from the scheduling thread in the middle of a
cycle. :class:`WatchProcessTransport` sends its watches from a child process instead:
the child reads the stream and writes its lines to the pipe together, 2 ms after the
first of them, and the informer's thread reads whatever the pipe holds in one read.
5,000 pods on 5,000 Nodes (2 cores, four runs each, alternating): the scheduling
process took 6.69 CPU-s (median) with the pod watch in a child against 7.42 without
(BENCHMARKS.md).

Requests (the informer's lists) go through the transport it wraps. A child that exits
fails the stream it was reading with :class:`ClusterUnreachable`, as a dropped
connection does, and the next watch starts it again (at most once a second). The child
exits when the parent closes the pipe, or dies.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import IO, Any, Final

import orjson

from topospread.client.frames import (
    FrameWriter,
    read_frames,
    start_helper,
    take_frames,
    write_frame,
)
from topospread.client.transport import DEFAULT_TIMEOUT, Request, Response, Transport
from topospread.client.write_process import (
    ANSWER_SLACK,
    RESTART_INTERVAL,
    ConnectionSettings,
    run_helper,
)
from topospread.errors import ClusterError, ClusterUnreachable, TransportClosed

__all__ = ["WatchProcessTransport"]

log = logging.getLogger("topospread.client.watch_process")

LINE_LINGER: Final = 0.002
"""How long the child gathers lines before writing them to the parent together."""

_CUT: Final = None
"""The order that stops a stream (the other order is the watch to open)."""


class _Child:
    """One watching process, the pipes to it, and the frames read from it."""

    def __init__(self, settings: ConnectionSettings, core: int | None, server: str) -> None:
        self.process, self.writer, self.lines = start_helper(
            "topospread.client.watch_process", json.dumps(asdict(settings)), core
        )
        self.server = server
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        self.frames: collections.deque[tuple[int, Any]] = collections.deque()
        self.pending = b""
        self.cut_streams: set[int] = set()
        self.exited = False
        self.poller = select.poll()
        self.poller.register(self.lines, select.POLLIN)
        self.poller.register(self.wake_read, select.POLLIN)
        self.state = threading.Lock()
        """Guards the descriptors below against their release: the reader and the
        cutting thread may outlive a restart or a close."""
        self.closed = False
        self.readers = 0

    def order(self, stream_id: int, order: object) -> bool:
        """Send an order for a stream; False when the child is gone."""
        try:
            write_frame(self.writer, self.lock, (stream_id, order))
        except (OSError, ValueError):
            return False
        return True

    def cut(self, stream_id: int) -> None:
        """End a stream now (from any thread, at most once): its reader fails at once,
        the child stops reading it."""
        with self.state:
            if self.closed or stream_id in self.cut_streams:
                return
            self.cut_streams.add(stream_id)
            self._wake()
        self.order(stream_id, _CUT)

    def _wake(self) -> None:
        # A full pipe: the reader has wake-ups enough waiting.
        with contextlib.suppress(OSError):
            os.write(self.wake_write, b"\0")

    def next_lines(self, stream_id: int, timeout: float) -> list[object]:
        """The next payloads of ``stream_id`` (lines, then None at its end or the error
        that ended it), waiting up to ``timeout`` seconds for them."""
        with self.state:
            if self.closed:
                raise TransportClosed(f"cannot connect to {self.server}: transport closed")
            self.readers += 1
        try:
            return self._next_lines(stream_id, time.monotonic() + timeout)
        finally:
            self._leave()

    def _leave(self) -> None:
        with self.state:
            self.readers -= 1
            if self.closed and not self.readers:
                self._release()

    def _next_lines(self, stream_id: int, deadline: float) -> list[object]:
        while True:
            if stream_id in self.cut_streams:
                raise ClusterUnreachable(f"cannot connect to {self.server}: watch cut")
            if self.closed:
                raise TransportClosed(f"cannot connect to {self.server}: transport closed")
            payloads = []
            while self.frames:
                frame_id, payload = self.frames.popleft()
                # The tail of a stream the reader left is dropped.
                if frame_id == stream_id:
                    payloads.append(payload)
            if payloads:
                return payloads
            if self.exited:
                try:
                    status: object = self.process.wait(RESTART_INTERVAL)
                except subprocess.TimeoutExpired:
                    status = "unknown"
                raise ClusterUnreachable(
                    f"cannot connect to {self.server}: the watch process exited "
                    f"with status {status}"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.process.kill()  # a child that hangs: the next watch starts another
                raise ClusterUnreachable(f"cannot connect to {self.server}: timed out")
            for fd, _events in self.poller.poll(remaining * 1000):
                if fd == self.wake_read:
                    os.read(self.wake_read, 4096)
                    continue
                data = os.read(self.lines, 1 << 20)
                if not data:
                    self.exited = True
                    continue
                frames, self.pending = take_frames(self.pending + data if self.pending else data)
                self.frames.extend(frames)

    def close(self, timeout: float) -> None:
        """Close the pipe (the child exits) and wait for it; the descriptors go once no
        reader is left (one still waiting is woken and fails)."""
        with self.lock, contextlib.suppress(OSError):
            self.writer.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with self.state:
            if self.closed:
                return
            self.closed = True
            if self.readers:
                self._wake()
            else:
                self._release()

    def _release(self) -> None:
        for fd in (self.lines, self.wake_read, self.wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)


class WatchProcessTransport:
    """Sends through ``requests``; streams its watches from a child process."""

    def __init__(
        self,
        requests: Transport,
        settings: ConnectionSettings,
        *,
        core: int | None = None,
        hang_timeout: float | None = None,
        drop_managed_fields: bool = False,
    ) -> None:
        """``settings``: how the child connects (as ``requests`` does); ``core``, when
        given, the core the child keeps to; ``hang_timeout``: how long a stream may go
        without a line before its child counts as hung and is replaced (default: the
        stream's read timeout and 30 s more; the child's own read timeout ends a silent
        stream before that); ``drop_managed_fields``: the child leaves each event's
        ``metadata.managedFields`` out of the lines it forwards, for a reader that drops
        them anyway (kube-scheduler's pod informer, kubernetes#119556): a bind's report
        is then 1.5 KB instead of 2.5, and the reader parses it in 7.8 µs instead of 12.8
        (2 cores)."""
        self.requests = requests
        self.drop_managed_fields = drop_managed_fields
        self.settings = settings
        self.core = core
        self.hang_timeout = hang_timeout
        self.restarts = 0
        """Children started again after one exited."""
        self.streams = 0
        """Watches streamed through a child."""
        self._child: _Child | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def server(self) -> str:
        """The wrapped transport's server."""
        return self.requests.server

    @property
    def child(self) -> subprocess.Popen[bytes] | None:
        """The child process now running, if one was started."""
        return self._child.process if self._child is not None else None

    def send(self, request: Request) -> Response:
        """Through the wrapped transport."""
        return self.requests.send(request)

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """The watch's lines as the child reads them; :class:`ClusterUnreachable` when the
        stream fails, is cut, or the child exits. ``on_open`` receives the function that
        cuts the stream (from any thread)."""
        child = self._running_child()
        with self._lock:
            self.streams += 1
            stream_id = self.streams
        fields = (request.method, request.path, request.query)
        if not child.order(stream_id, (fields, read_timeout, self.drop_managed_fields)):
            child.exited = True
        if on_open is not None:
            on_open(lambda: child.cut(stream_id))
        wait = self.hang_timeout or (
            (read_timeout if read_timeout is not None else DEFAULT_TIMEOUT[1]) + ANSWER_SLACK
        )
        ended = False
        try:
            while True:
                for payload in child.next_lines(stream_id, wait):
                    if type(payload) is bytes:
                        yield payload
                        continue
                    ended = True
                    if payload is None:
                        return
                    assert isinstance(payload, ClusterError)
                    raise payload
        finally:
            if not ended:
                # Left before its end (a relist, a stop): the child reads it no longer.
                child.cut(stream_id)

    def _running_child(self) -> _Child:
        with self._lock:
            if self._closed:
                raise TransportClosed(f"cannot connect to {self.server}: transport closed")
            child = self._child
            if child is not None and (child.exited or child.process.poll() is not None):
                self._child = None
                child.close(RESTART_INTERVAL)
                log.warning(
                    "watch process exited; starting it again",
                    extra={"status": child.process.returncode},
                )
                time.sleep(max(0.0, child.started + RESTART_INTERVAL - time.monotonic()))
                self.restarts += 1
                child = None
            if child is None:
                child = self._child = _Child(self.settings, self.core, self.server)
            return child

    def close(self, timeout: float = 10.0) -> None:
        """Let the child exit (the wrapped transport stays open)."""
        with self._lock:
            self._closed = True
            child, self._child = self._child, None
        if child is not None:
            child.close(timeout)


def _serve(settings: ConnectionSettings, orders: io.BufferedReader, lines: IO[bytes]) -> None:
    transport = settings.connect()
    writer = FrameWriter(lines, LINE_LINGER)
    opened: collections.deque[tuple[int, tuple[Any, ...], float | None, bool]] = collections.deque()
    cuts: dict[int, Callable[[], None]] = {}
    """The cut of the stream being read, by its id."""
    cut_early: set[int] = set()
    """Streams cut before they were opened."""
    state = threading.Condition()
    closing = False
    serving: int | None = None
    """The stream being read."""

    def stop(stream_id: int) -> None:
        """Cut a stream, or have it cut as soon as it opens (under ``state``)."""
        cut = cuts.get(stream_id)
        if cut is None:
            cut_early.add(stream_id)
            return
        # The response may be closed already (a cut that crossed the stream's end).
        with contextlib.suppress(Exception):
            cut()

    def read_orders() -> None:
        nonlocal closing
        try:
            for stream_id, order in read_frames(orders):
                with state:
                    if order is _CUT:
                        stop(stream_id)
                        continue
                    # The parent reads one stream at a time: a new watch ends the ones
                    # it left (say, a generator not closed yet).
                    cut_early.update(queued for queued, *_ in opened)
                    if serving is not None:
                        stop(serving)
                    opened.append((stream_id, *order))
                    state.notify()
        finally:
            # The parent closed the pipe or died: nobody reads the lines.
            with state:
                closing = True
                if serving is not None:
                    stop(serving)
                state.notify()

    def on_open(stream_id: int) -> Callable[[Callable[[], None]], None]:
        def register(cut: Callable[[], None]) -> None:
            with state:
                cuts[stream_id] = cut
                if stream_id in cut_early or closing:
                    stop(stream_id)

        return register

    threading.Thread(target=read_orders, name="orders", daemon=True).start()
    while True:
        with state:
            while not opened and not closing:
                state.wait()
            if closing:
                break
            stream_id, fields, read_timeout, drop_managed_fields = opened.popleft()
            if stream_id in cut_early:
                continue
            serving = stream_id
        try:
            watch = Request(*fields)
            for line in transport.stream(
                watch, read_timeout=read_timeout, on_open=on_open(stream_id)
            ):
                if drop_managed_fields:
                    line = _without_managed_fields(line)
                writer.put(stream_id, line)
            writer.put(stream_id, None)
        except ClusterError as error:
            writer.put(stream_id, error)
        except Exception as error:  # every failure must reach the reader
            writer.put(
                stream_id, ClusterUnreachable(f"cannot connect to {transport.server}: {error}")
            )
        finally:
            with state:
                cuts.pop(stream_id, None)
                serving = None
    writer.close()


def _without_managed_fields(line: bytes) -> bytes:
    """A watch event's line without its object's ``metadata.managedFields``; any other
    line as it came."""
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    found = event.get("object") if isinstance(event, dict) else None
    metadata = found.get("metadata") if isinstance(found, dict) else None
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return line
    del metadata["managedFields"]
    try:
        return orjson.dumps(event)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (255 levels)
        return line


def main(argv: list[str]) -> int:
    """``python -m topospread.client.watch_process SETTINGS ORDERS_FD LINES_FD [CORE]``."""
    return run_helper(argv, "watch process", _serve)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
