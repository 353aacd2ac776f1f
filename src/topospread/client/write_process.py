"""Writes sent from processes of their own: the API side off the scheduling process's GIL.

:class:`WriteProcessTransport` is a transport whose writes (POST, PUT, PATCH, DELETE) go
over a pipe to child processes, each connected from the same kubeconfig and sending them
from one thread over HTTP/2 (:class:`~topospread.client.multiplexed.MultiplexedSender`;
on a thread each through the official client's urllib3 pool where the kubeconfig asks
for what that sender does not apply); reads and watches stay on the local transport.
For the writing thread a write then costs a pickle and a pipe round trip instead of an
HTTP request over TLS (measured: about 0.27 ms of GIL time per bind and 0.18 ms per Event
through urllib3 in the scheduler process), and the children's HTTP work runs on other
cores.

A child ignores SIGINT and SIGTERM (the parent drains, and its last binds still need the
child) and exits when the parent closes the pipe, or dies; the writes a dead parent left in
the pipe are not sent (a killed leader's stale decisions). A child that exits is started
again; the writes it had in flight fail with :class:`ClusterUnreachable`, as a broken
connection fails them, and the callers' own retries take over (a bind is retried through
the scheduling queue, an Event is dropped).
"""

from __future__ import annotations

import collections
import contextlib
import io
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import IO, Final

from topospread.client.chained import FollowUp, Render
from topospread.client.cpus import pin_this_process
from topospread.client.frames import FrameWriter, read_frames, start_helper, write_frame
from topospread.client.transport import Answer, KubeTransport, Request, Response
from topospread.errors import (
    ClusterError,
    ClusterUnreachable,
    TopospreadError,
    TransportClosed,
)

__all__ = ["ConnectionSettings", "WriteProcessTransport"]

log = logging.getLogger("topospread.client.write_process")

READ_METHODS: Final = frozenset({"GET", "HEAD"})
RESTART_INTERVAL: Final = 1.0
"""A child that exits is started again at most once a second."""
ANSWER_LINGER: Final = 0.002
"""How long a child gathers answers before writing them to the parent together. At
5,000 pods on 5,000 Nodes (2 cores) the scheduler process took 3.15-3.60 CPU-s with 2 ms,
3.39-3.62 with none (only what was there at once), 3.61-4.22 answering one by one."""
ANSWER_SLACK: Final = 30.0
"""How much longer than the transport's own timeouts a write may wait for its child."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """What :func:`~topospread.client.config.connect` was given, for a child to connect
    the same way."""

    kubeconfig: str | None = None
    context: str | None = None
    kubectl_rules: bool = True
    pool_size: int = 64
    """Connections the child keeps open: as many as the writes the parent may have in flight."""

    def connect(self) -> KubeTransport:
        """A transport configured as the parent's."""
        from topospread.client.config import connect

        transport = connect(
            self.kubeconfig, self.context, kubectl_rules=self.kubectl_rules
        ).transport
        transport.widen_pool(self.pool_size)
        return transport


class _Waiter:
    """One write's answer; a lock held until it comes (cheaper to release than an Event
    to set: this runs once per bind and per Event)."""

    __slots__ = ("arrived", "result")

    def __init__(self) -> None:
        self.arrived = threading.Lock()
        self.arrived.acquire()
        self.result: Response | ClusterError | None = None

    def settle(self, result: Response | ClusterError) -> None:
        self.result = result
        self.arrived.release()

    def wait(self, timeout: float) -> bool:
        return self.arrived.acquire(timeout=timeout)


class _Chained:
    """A write with a follow-up (:meth:`WriteProcessTransport.send_async_then`): waiting
    for the write's answer, then (``armed``, the write succeeded) for the follow-up's,
    under the follow-up's own request id."""

    __slots__ = ("armed", "done", "follow_up", "follow_up_id")

    def __init__(self, done: Answer, follow_up: FollowUp, follow_up_id: int) -> None:
        self.done = done
        self.follow_up = follow_up
        self.follow_up_id = follow_up_id
        self.armed = False

    def fail(self, error: ClusterError) -> None:
        """Neither answer will come (the child exited, or the answer is too late)."""
        if self.armed:
            _follow_up_done(self.follow_up, None, error)
            return
        _follow_up_done(self.follow_up, None, None)
        _settle(self.done, error)


class _Child:
    """One writing process, the pipes to it, and the thread that reads its answers."""

    def __init__(self, settings: ConnectionSettings, index: int, core: int | None) -> None:
        self.process, self.writer, answers = start_helper(
            "topospread.client.write_process", json.dumps(asdict(settings)), core
        )
        self.index = index
        self.reader = open(answers, "rb")  # noqa: SIM115 - closed by the reading thread
        self.lock = threading.Lock()
        self.pending: dict[int, _Waiter | Answer | _Chained] = {}
        self.started = time.monotonic()

    def close_writer(self) -> None:
        with self.lock, contextlib.suppress(OSError):
            self.writer.close()


class WriteProcessTransport:
    """Reads and watches through ``local``; writes through ``processes`` child processes."""

    def __init__(
        self,
        local: KubeTransport,
        settings: ConnectionSettings,
        *,
        processes: int = 1,
        answer_timeout: float | None = None,
        cores: Sequence[int] = (),
    ) -> None:
        """``cores``, when given, holds the core each child keeps to (one per child)."""
        if processes < 1:
            raise ValueError("processes must be at least 1")
        if cores and len(cores) != processes:
            raise ValueError("cores must name one core per process")
        self.cores = tuple(cores)
        self.local = local
        self.settings = settings
        self.answer_timeout = answer_timeout or sum(local.timeout) + ANSWER_SLACK
        self.restarts = 0
        """Children started again after one exited."""
        self.writes = 0
        """Writes handed to the children."""
        self._ids = itertools.count()
        self._closed = False
        self._state = threading.Lock()
        self._children = [self._start(index) for index in range(processes)]
        self._deadlines: collections.deque[tuple[float, _Child, int]] = collections.deque()
        """The writes sent without waiting, in the order sent, with when they time out."""
        self._expiring: threading.Thread | None = None
        self._closing = threading.Event()

    @property
    def server(self) -> str:
        """The local transport's server."""
        return self.local.server

    @property
    def children(self) -> list[subprocess.Popen[bytes]]:
        """The child processes now running."""
        return [child.process for child in self._children]

    @property
    def in_flight(self) -> int:
        """Writes sent to a child and not answered yet."""
        with self._state:
            return sum(len(child.pending) for child in self._children)

    def _start(self, index: int) -> _Child:
        child = _Child(self.settings, index, self.cores[index] if self.cores else None)
        threading.Thread(
            target=self._read_answers, args=(child,), name=f"write-process-{index}", daemon=True
        ).start()
        return child

    def send(self, request: Request) -> Response:
        """A read through the local transport; a write through a child, waiting for it."""
        if request.method in READ_METHODS:
            return self.local.send(request)
        waiter = _Waiter()
        request_id, child = self._hand_over(request, waiter, brief=False)
        if not waiter.wait(self.answer_timeout):
            child.pending.pop(request_id, None)
            raise ClusterUnreachable(f"cannot connect to {self.server}: timed out")
        result = waiter.result
        if isinstance(result, ClusterError):
            raise result
        assert result is not None
        return result

    @property
    def sends_async(self) -> bool:
        """Always: every write goes through a child."""
        return True

    def send_async(self, request: Request, done: Answer) -> bool:
        """A write through a child without waiting for it (always True): ``done`` gets the
        outcome, on the thread that reads the child's answers (it must not block), with
        the body only when the status is an error. Raises :class:`ClusterUnreachable` at
        once when no child can take the write."""
        if request.method in READ_METHODS:
            raise ValueError("send_async is for writes")
        request_id, child = self._hand_over(request, done, brief=True)
        self._expire_later(child, request_id)
        return True

    @property
    def chains(self) -> bool:
        """Always: every child can send a follow-up."""
        return True

    def send_async_then(self, request: Request, done: Answer, follow_up: FollowUp) -> bool:
        """:meth:`send_async` of ``request``, and ``follow_up`` rendered and sent by the same
        child once ``request``'s answer is a success (always True; see
        :class:`~topospread.client.chained.ChainedWrites`)."""
        if request.method in READ_METHODS:
            raise ValueError("send_async_then is for writes")
        follow_up_id = next(self._ids)
        chained = _Chained(done, follow_up, follow_up_id)
        then = (follow_up_id, follow_up.render, follow_up.args)
        request_id, child = self._hand_over(request, chained, brief=True, then=then)
        self._expire_later(child, request_id)
        return True

    def _expire_later(self, child: _Child, request_id: int) -> None:
        self._deadlines.append((time.monotonic() + self.answer_timeout, child, request_id))
        if self._expiring is None:
            with self._state:
                if self._expiring is None:
                    self._expiring = threading.Thread(
                        target=self._expire, name="write-process-timeouts", daemon=True
                    )
                    self._expiring.start()

    def _expire(self) -> None:
        """Once a second, fail the writes sent without waiting whose answer is later than
        :attr:`answer_timeout` (a child that hangs), as :meth:`send` stops waiting."""
        while not self._closing.wait(1.0):
            now = time.monotonic()
            while self._deadlines:
                deadline, child, request_id = self._deadlines[0]
                if deadline > now and request_id in child.pending:
                    break
                self._deadlines.popleft()
                waiting = child.pending.pop(request_id, None)
                if waiting is not None:
                    _settle(
                        waiting, ClusterUnreachable(f"cannot connect to {self.server}: timed out")
                    )

    def _hand_over(
        self,
        request: Request,
        answer: _Waiter | Answer | _Chained,
        *,
        brief: bool,
        then: tuple[int, Render, tuple[object, ...]] | None = None,
    ) -> tuple[int, _Child]:
        request_id = next(self._ids)
        with self._state:
            if self._closed:
                raise TransportClosed(f"cannot connect to {self.server}: transport closed")
            child = self._children[request_id % len(self._children)]
            child.pending[request_id] = answer
            self.writes += 1
        try:
            # Plain tuples cross the pipe: a slotted dataclass pickles through Python code.
            fields = (request.method, request.path, request.query, request.body)
            frame = (request_id, ((*fields, request.content_type), brief, then))
            write_frame(child.writer, child.lock, frame)
        except (OSError, ValueError):
            child.pending.pop(request_id, None)
            raise ClusterUnreachable(
                f"cannot connect to {self.server}: the write process exited"
            ) from None
        return request_id, child

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """Watches stay on the local transport."""
        return self.local.stream(request, read_timeout=read_timeout, on_open=on_open)

    def _read_answers(self, child: _Child) -> None:
        for request_id, answer in read_frames(child.reader):
            waiting = child.pending.pop(request_id, None)
            if waiting is None:
                continue
            if type(waiting) is not _Chained:
                # (status, body, headers), or the ClusterError the child's send raised.
                _settle(waiting, answer if isinstance(answer, ClusterError) else Response(*answer))
                continue
            if waiting.armed:
                # A follow-up's answer: (its render's token, the answer).
                token, result = answer
                _follow_up_done(
                    waiting.follow_up,
                    token,
                    result if isinstance(result, ClusterError) else Response(*result),
                )
                continue
            result = answer if isinstance(answer, ClusterError) else Response(*answer)
            if isinstance(result, ClusterError) or result.status >= 300:
                # The child sends no follow-up after a failure; told first, so that the
                # first write's own answer finds its follow-up settled.
                _follow_up_done(waiting.follow_up, None, None)
                _settle(waiting.done, result)
                continue
            # Its follow-up's answer comes later on this same pipe.
            waiting.armed = True
            with self._state:
                child.pending[waiting.follow_up_id] = waiting
            self._expire_later(child, waiting.follow_up_id)
            _settle(waiting.done, result)
        child.reader.close()
        status = child.process.wait()
        with self._state:
            orphans = list(child.pending.values())
            child.pending.clear()
            closed = self._closed
        for waiting in orphans:
            _settle(
                waiting,
                ClusterUnreachable(
                    f"cannot connect to {self.server}: the write process exited "
                    f"with status {status}"
                ),
            )
        if closed:
            return
        log.warning(
            "write process exited; starting it again",
            extra={"status": status, "in_flight": len(orphans)},
        )
        time.sleep(max(0.0, child.started + RESTART_INTERVAL - time.monotonic()))
        child.close_writer()
        with self._state:
            if self._closed:
                return
            self._children[child.index] = self._start(child.index)
            self.restarts += 1

    def close(self, timeout: float = 10.0) -> None:
        """Let the children finish the writes in flight and exit; close the local transport."""
        with self._state:
            self._closed = True
            children = list(self._children)
        self._closing.set()
        for child in children:
            child.close_writer()
        deadline = time.monotonic() + timeout
        for child in children:
            try:
                child.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
        self.local.close()


def _settle(waiting: _Waiter | Answer | _Chained, result: Response | ClusterError) -> None:
    if isinstance(waiting, _Waiter):
        waiting.settle(result)
        return
    if isinstance(waiting, _Chained):
        # Only failures reach a chained write here (an answer that never came).
        assert isinstance(result, ClusterError)
        waiting.fail(result)
        return
    try:
        waiting(result)
    except Exception:  # the reading thread must go on for the other writes
        log.exception("a write's completion failed")


def _follow_up_done(
    follow_up: FollowUp, token: object | None, answer: Response | ClusterError | None
) -> None:
    try:
        follow_up.done(token, answer)
    except Exception:  # the reading thread must go on for the other writes
        log.exception("a follow-up's completion failed")


def _serve(settings: ConnectionSettings, requests: io.BufferedReader, answers: IO[bytes]) -> None:
    transport = settings.connect()
    parent = os.getppid()
    writer = FrameWriter(answers, ANSWER_LINGER)
    # Imported here: the scheduling process that starts this one needs no libcurl.
    from topospread.client.multiplexed import unsupported

    if unsupported(transport.api_client.configuration) is None:
        _serve_multiplexed(transport, requests, writer, parent)
    else:
        _serve_on_threads(transport, requests, writer, parent, settings.pool_size)
    writer.close()


def _serve_multiplexed(
    transport: KubeTransport, requests: io.BufferedReader, writer: FrameWriter, parent: int
) -> None:
    """Every write from this thread over HTTP/2 (:mod:`topospread.client.multiplexed`)."""
    follow_ups: dict[int, _Then] = {}
    """A write's follow-up, by the write's request id, until the write is answered."""
    tokens: dict[int, object] = {}
    """A follow-up's token, by its request id, until it is answered."""

    def answer(request_id: int, result: object) -> None:
        if tokens and request_id in tokens:
            writer.put(request_id, (tokens.pop(request_id), result))
            return
        writer.put(request_id, result)
        then = follow_ups.pop(request_id, None) if follow_ups else None
        if then is None or not _succeeded(result) or os.getppid() != parent:
            return
        rendered = _render(then, transport, writer)
        if rendered is not None:
            follow_up_id, request, token = rendered
            tokens[follow_up_id] = token
            sender.submit(follow_up_id, request, True)

    from topospread.client.multiplexed import MultiplexedSender

    sender = MultiplexedSender(transport.api_client, transport.timeout, answer)

    def read() -> None:
        try:
            for request_id, (fields, brief, then) in read_frames(requests):
                # A parent that died (SIGKILL, a lost Lease) no longer decides anything:
                # the writes still in the pipe are its stale decisions, so they are not sent.
                if os.getppid() == parent:
                    if then is not None:
                        follow_ups[request_id] = then
                    sender.submit(request_id, Request(*fields), brief)
        finally:
            sender.close()

    threading.Thread(target=read, name="requests", daemon=True).start()
    sender.run()


_Then = tuple[int, Render, tuple[object, ...]]
"""A follow-up as it crosses the pipe: its request id, its render and the render's args."""


def _succeeded(result: object) -> bool:
    return isinstance(result, tuple) and 200 <= result[0] < 300


def _render(
    then: _Then, transport: KubeTransport, writer: FrameWriter
) -> tuple[int, Request, object] | None:
    """A follow-up's id, request and token; None, the parent told why, when its render
    failed."""
    follow_up_id, render, args = then
    try:
        request, token = render(*args)
    except Exception as error:  # the parent is told, and the other writes go on
        failure = ClusterError(f"{transport.server}: cannot render a follow-up write: {error}")
        writer.put(follow_up_id, (None, failure))
        return None
    return follow_up_id, request, token


def _serve_on_threads(
    transport: KubeTransport,
    requests: io.BufferedReader,
    writer: FrameWriter,
    parent: int,
    threads: int,
) -> None:
    """Each write on a thread of its own, through the official client's urllib3 pool (a
    kubeconfig with a proxy or a TLS server name, which the multiplexed sender does not
    apply)."""

    def send(request: Request, brief: bool) -> tuple[int, bytes, Mapping[str, str]] | ClusterError:
        try:
            response = transport.send(request)
        except ClusterError as error:
            return error
        except Exception as error:  # every failure must reach the caller
            return ClusterUnreachable(f"cannot connect to {transport.server}: {error}")
        if brief and response.status < 300:
            # send_async: the caller reads the body of an error only.
            return (response.status, b"", {})
        return (response.status, response.data, response.headers)

    def answer(request_id: int, request: Request, brief: bool, then: _Then | None) -> None:
        if os.getppid() != parent:
            return  # a dead parent's stale decision, as above
        result = send(request, brief)
        writer.put(request_id, result)
        if then is None or not _succeeded(result) or os.getppid() != parent:
            return
        rendered = _render(then, transport, writer)
        if rendered is not None:
            follow_up_id, follow_up, token = rendered
            writer.put(follow_up_id, (token, send(follow_up, True)))

    with ThreadPoolExecutor(threads, thread_name_prefix="write") as executor:
        for request_id, (fields, brief, then) in read_frames(requests):
            executor.submit(answer, request_id, Request(*fields), brief, then)


def main(argv: list[str]) -> int:
    """``python -m topospread.client.write_process SETTINGS REQUESTS_FD ANSWERS_FD [CORE]``."""
    return run_helper(argv, "write process", _serve)


def run_helper(
    argv: list[str],
    name: str,
    serve: Callable[[ConnectionSettings, io.BufferedReader, IO[bytes]], None],
) -> int:
    """A helper process's life from its command line (``SETTINGS IN_FD OUT_FD [CORE]``,
    as :func:`~topospread.client.frames.start_helper` passes it): kept to its core,
    deaf to SIGINT and SIGTERM (the parent drains, and its last requests still need the
    child), ``serve`` until the parent closes the pipe; exit status 1, with one line
    saying why, when it cannot connect."""
    if len(argv) > 3 and argv[3]:
        pin_this_process({int(argv[3])})
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    settings = ConnectionSettings(**json.loads(argv[0]))
    with open(int(argv[1]), "rb") as orders, open(int(argv[2]), "wb") as results:
        try:
            serve(settings, orders, results)
        except TopospreadError as error:
            # The kubeconfig changed under a running scheduler, say: one line, and the
            # parent fails what it had sent and starts a child again.
            print(f"topospread {name}: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
