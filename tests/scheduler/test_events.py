"""The Event recorder: one Event per occurrence, a series for repeats, and an Event the
server refused posted anew."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from topospread.client.transport import FakeTransport, Request, Response
from topospread.scheduler.api import EventRecorder
from topospread.testing import make_pod


class Api:
    """Answers Event POSTs with ``post_status`` and PATCHes with 200."""

    def __init__(self) -> None:
        self.post_status = 201

    def __call__(self, request: Request) -> Response:
        if request.method == "POST":
            return Response(self.post_status, b"{}")
        return Response(200, b"{}")


def _writes(transport: FakeTransport) -> list[tuple[str, dict]]:
    return [(r.method, json.loads(r.body)) for r in transport.requests]


def _recorder(transport: FakeTransport) -> EventRecorder:
    return EventRecorder(transport, "host-a", workers=1)


POD = make_pod().name("web-1").obj()


def test_a_repeated_event_becomes_a_series_of_the_first() -> None:
    transport = FakeTransport(Api())
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


def test_an_event_the_server_refused_is_posted_anew_next_time(caplog) -> None:
    api = Api()
    api.post_status = 500
    transport = FakeTransport(api)
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


def _wait(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return condition()
