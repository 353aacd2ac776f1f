"""The Event recorder: one Event per occurrence, a series for repeats, whether the
transport waits for each write or hands it over and answers later (the write processes).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest

from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterError
from topospread.scheduler.api import EventRecorder, RateLimitedTransport, async_sender
from topospread.testing import make_pod


class Api:
    """Answers Event POSTs with ``post_status`` and PATCHes with 200."""

    def __init__(self) -> None:
        self.post_status = 201

    def __call__(self, request: Request) -> Response:
        if request.method == "POST":
            return Response(self.post_status, b"{}")
        return Response(200, b"{}")


class HandsOver(FakeTransport):
    """A transport with ``send_async``: the answer comes later, from another thread."""

    def send_async(self, request: Request, done: Callable[[Response | ClusterError], object]):
        answer = self.send(request)
        threading.Thread(target=done, args=(answer,)).start()


def _writes(transport: FakeTransport) -> list[tuple[str, dict]]:
    return [(r.method, json.loads(r.body)) for r in transport.requests]


def _recorder(transport: FakeTransport) -> EventRecorder:
    return EventRecorder(transport, "host-a", workers=1)


POD = make_pod().name("web-1").obj()


@pytest.mark.parametrize("kind", [FakeTransport, HandsOver])
def test_a_repeated_event_becomes_a_series_of_the_first(kind) -> None:
    transport = kind(Api())
    recorder = _recorder(transport)
    for _ in range(3):
        recorder.event("ts", POD, "Warning", "FailedScheduling", "Scheduling", "0/3 nodes")
        recorder.flush()
        assert _wait(lambda: recorder.posted == 1)
    recorder.stop()
    (method, first), *patches = _writes(transport)
    assert (method, first["reason"], first["note"]) == ("POST", "FailedScheduling", "0/3 nodes")
    assert [(m, p["series"]["count"]) for m, p in patches] == [("PATCH", 2), ("PATCH", 3)]
    assert all(r.path.endswith(first["metadata"]["name"]) for r in transport.requests[1:])


@pytest.mark.parametrize("kind", [FakeTransport, HandsOver])
def test_an_event_the_server_refused_is_posted_anew_next_time(kind, caplog) -> None:
    api = Api()
    api.post_status = 500
    transport = kind(api)
    recorder = _recorder(transport)
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    recorder.flush()
    assert _wait(lambda: any("not posted: HTTP 500" in r.getMessage() for r in caplog.records))
    assert recorder.posted == 0
    api.post_status = 201
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    recorder.flush()
    assert _wait(lambda: recorder.posted == 1)
    recorder.stop()
    assert [m for m, _ in _writes(transport)] == ["POST", "POST"]


def test_the_write_processes_are_used_behind_the_rate_limiter() -> None:
    hands_over = HandsOver(Api())
    limited = RateLimitedTransport(hands_over, qps=1000, burst=10)
    send = async_sender(limited)
    assert send is not None
    answers: list[object] = []
    send(Request("POST", "/x", body=b"{}"), answers.append)
    assert _wait(lambda: len(answers) == 1)
    assert async_sender(RateLimitedTransport(FakeTransport(Api()), qps=10, burst=1)) is None
    assert async_sender(FakeTransport(Api())) is None


def _wait(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return condition()
