"""The Event recorder: one Event per occurrence, a series for repeats, an Event the
server refused posted anew, and an Event that follows a write (the Scheduled Event after
its Binding) answered as the others are."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest

from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterUnreachable, TransportClosed
from topospread.scheduler import api as api_module
from topospread.scheduler.api import EventRecorder, RateLimitedTransport
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


class HeldAnswers:
    """Sends without waiting; the test releases the answers (``answer``), and can make
    every send refused (``refuse``: the rate limiter has no token)."""

    sends_async = True

    def __init__(self, api: Api) -> None:
        self.fake = FakeTransport(api)
        self.held: list[tuple[Request, Callable[[Response], object]]] = []
        self.refuse = False
        self.closed = False
        self.lock = threading.Lock()

    @property
    def server(self) -> str:
        return self.fake.server

    @property
    def requests(self) -> list[Request]:
        return self.fake.requests

    def send(self, request: Request) -> Response:
        return self.fake.send(request)

    def send_async(self, request: Request, done: Callable[[Response], object]) -> bool:
        if self.closed:
            raise TransportClosed("cannot connect to https://api.test: transport closed")
        if self.refuse:
            return False
        with self.lock:
            self.held.append((request, done))
        return True

    def answer(self) -> int:
        """Answer every write held now; how many."""
        with self.lock:
            held, self.held = self.held, []
        for request, done in held:
            done(self.fake.send(request))
        return len(held)


class AnsweredAtOnce(HeldAnswers):
    def send_async(self, request: Request, done: Callable[[Response], object]) -> bool:
        done(self.fake.send(request))
        return True


TRANSPORTS = {"waited-for": FakeTransport, "sent-without-waiting": AnsweredAtOnce}


def _recorder(transport) -> EventRecorder:
    return EventRecorder(transport, "host-a", workers=1)


POD = make_pod().name("web-1").obj()


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_repeated_event_becomes_a_series_of_the_first(kind) -> None:
    transport = TRANSPORTS[kind](Api())
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


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_an_event_the_server_refused_is_posted_anew_next_time(kind, caplog) -> None:
    api = Api()
    api.post_status = 500
    transport = TRANSPORTS[kind](api)
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


def test_without_waiting_every_event_is_sent_at_once_as_client_go_starts_a_goroutine_each():
    transport = HeldAnswers(Api())
    recorder = EventRecorder(transport, "host-a", workers=1)
    for i in range(50):
        recorder.event("ts", POD, "Normal", "Scheduled", "Binding", f"assigned {i}")
    assert len(transport.held) == 50
    assert transport.answer() == 50
    assert recorder.posted == 50
    assert recorder.pending == 0
    recorder.stop()


def test_with_an_in_flight_bound_the_rest_wait_and_follow_the_answers():
    transport = HeldAnswers(Api())
    recorder = EventRecorder(transport, "host-a", workers=1, in_flight=2)
    pods = [make_pod().name(f"web-{i}").obj() for i in range(5)]
    for pod in pods:
        recorder.event("ts", pod, "Normal", "Scheduled", "Binding", f"assigned {pod.name}")
    assert len(transport.held) == 2
    assert recorder.pending == 5
    answered = [transport.answer() for _ in range(4)]
    assert answered == [2, 2, 1, 0]  # each answer sent the next waiting Event
    assert recorder.posted == 5
    assert recorder.pending == 0
    notes = [json.loads(r.body)["note"] for r in transport.requests]
    assert notes == [f"assigned web-{i}" for i in range(5)]
    recorder.stop()


def test_an_event_the_rate_limiter_would_hold_is_sent_by_a_worker():
    transport = HeldAnswers(Api())
    transport.refuse = True
    recorder = _recorder(transport)
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert _wait(lambda: recorder.posted == 1)
    assert transport.held == []
    assert recorder.pending == 0
    recorder.stop()


def test_a_long_queue_the_closed_transport_refuses_is_emptied_in_a_loop(caplog):
    # Each refusal ends an Event at once; the next must not be sent from deeper in the
    # stack (10,000 Events would exceed the recursion limit).
    transport = HeldAnswers(Api())
    recorder = EventRecorder(transport, "host-a", workers=1, in_flight=1)
    for i in range(5000):
        recorder.event("ts", POD, "Normal", "Scheduled", "Binding", f"assigned {i}")
    assert recorder.pending == 5000
    transport.closed = True
    assert transport.answer() == 1
    assert recorder.pending == 0
    refused = [r for r in caplog.records if "transport closed" in r.getMessage()]
    assert len(refused) == 4999
    recorder.stop()


class Unreachable(Api):
    """Cannot be reached for the first ``outage`` requests, then answers."""

    def __init__(self, outage: int) -> None:
        super().__init__()
        self.outage = outage
        self.refused = 0

    def __call__(self, request: Request) -> Response:
        if self.refused < self.outage:
            self.refused += 1
            raise ClusterUnreachable("cannot connect to https://api.test: connection refused")
        return super().__call__(request)


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_an_event_the_server_could_not_be_reached_for_is_tried_again_after_sleeping(
    kind, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(api_module, "RETRY_SLEEP", 0.05)
    api = Unreachable(outage=3)
    transport = TRANSPORTS[kind](api)
    recorder = _recorder(transport)
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert _wait(lambda: recorder.posted == 1)
    recorder.stop()
    assert api.refused == 3
    tries = _writes(transport)
    assert [m for m, _ in tries] == ["POST"] * 4
    assert len({body["metadata"]["name"] for _, body in tries}) == 1  # the same Event
    retried = [r for r in caplog.records if "may retry after sleeping" in r.getMessage()]
    assert retried  # counted, one line a second at most


def test_an_event_is_given_up_after_twelve_tries_as_client_go_gives_up(monkeypatch, caplog):
    monkeypatch.setattr(api_module, "RETRY_SLEEP", 0.01)
    api = Unreachable(outage=100)
    recorder = _recorder(AnsweredAtOnce(api))
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert _wait(lambda: recorder.pending == 0)
    recorder.stop()
    assert api.refused == 12
    assert recorder.posted == 0
    assert any("retry limit exceeded" in r.getMessage() for r in caplog.records)


def test_an_outage_that_fails_many_events_at_once_is_one_line_counting_them(monkeypatch, caplog):
    monkeypatch.setattr(api_module, "RETRY_SLEEP", 60.0)
    recorder = _recorder(AnsweredAtOnce(Unreachable(outage=1000)))
    pods = [make_pod().name(f"web-{i}").obj() for i in range(200)]
    for pod in pods:
        recorder.event("ts", pod, "Normal", "Scheduled", "Binding", f"assigned {pod.name}")
    lines = [r.getMessage() for r in caplog.records if "may retry" in r.getMessage()]
    assert len(lines) == 1
    assert lines[0].startswith("cannot post 1 event (may retry after sleeping)")
    assert recorder.pending == 200  # all waiting for their next try


# -- an Event that follows a write (client/chained.py) -------------------------------------


def _sent(follow_up, transport) -> tuple[object, object]:
    """What a write process does with a follow-up once its write succeeded: render it,
    send it, and hand back its token with the answer."""
    request, token = follow_up.render(*follow_up.args)
    return token, transport.send(request)


def test_an_event_can_follow_a_write_and_is_answered_as_the_async_lanes_events_are():
    transport = HeldAnswers(Api())
    recorder = _recorder(transport)
    follow_up = recorder.follow_up("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert follow_up is not None
    assert recorder.pending == 1  # in flight until its fate is told
    assert transport.requests == []  # rendered where the write is sent, not here

    follow_up.done(*_sent(follow_up, transport))

    assert recorder.posted == 1
    assert recorder.pending == 0
    ((method, event),) = _writes(transport)
    assert method == "POST"
    assert event["metadata"]["name"].startswith("web-1.")
    assert (event["reportingController"], event["reportingInstance"]) == ("ts", "ts-host-a")
    assert (event["reason"], event["action"], event["note"]) == ("Scheduled", "Binding", "assigned")
    # Remembered for a series, as an Event posted after the answer would be.
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    recorder.flush()
    assert transport.answer() == 1
    assert [m for m, _ in _writes(transport)] == ["POST", "PATCH"]
    recorder.stop()


def test_an_event_whose_write_failed_is_not_sent_and_says_so():
    transport = HeldAnswers(Api())
    recorder = _recorder(transport)
    told: list[str] = []
    follow_up = recorder.follow_up(
        "ts", POD, "Normal", "Scheduled", "Binding", "assigned", not_sent=lambda: told.append("!")
    )
    assert follow_up is not None

    follow_up.done(None, None)

    assert told == ["!"]
    assert recorder.pending == 0
    assert recorder.posted == 0
    assert transport.requests == []
    recorder.stop()


def test_a_follow_up_event_the_server_could_not_be_reached_for_is_tried_again_under_its_name(
    monkeypatch,
):
    monkeypatch.setattr(api_module, "RETRY_SLEEP", 0.05)
    api = Unreachable(outage=1)
    transport = AnsweredAtOnce(api)
    recorder = _recorder(transport)
    follow_up = recorder.follow_up("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert follow_up is not None
    request, token = follow_up.render(*follow_up.args)
    try:
        transport.send(request)
    except ClusterUnreachable as error:
        follow_up.done(token, error)

    assert _wait(lambda: recorder.posted == 1)
    recorder.stop()
    names = [body["metadata"]["name"] for _, body in _writes(transport)]
    assert len(names) == 2
    assert names[0] == names[1]  # the same Event, tried again


def test_a_follow_up_event_lost_after_its_write_succeeded_is_tried_again_under_its_name(
    monkeypatch,
):
    # Its write process exited after sending it, maybe: tried again under the name it was
    # given, which the API server refuses if the first try got through.
    monkeypatch.setattr(api_module, "RETRY_SLEEP", 0.05)
    transport = AnsweredAtOnce(Api())
    recorder = _recorder(transport)
    follow_up = recorder.follow_up("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    assert follow_up is not None
    request, (name, _) = follow_up.render(*follow_up.args)
    transport.send(request)

    follow_up.done(None, ClusterUnreachable("cannot connect: the write process exited"))

    assert _wait(lambda: len(transport.requests) == 2)
    recorder.stop()
    assert name.startswith("web-1.")
    assert [body["metadata"]["name"] for _, body in _writes(transport)] == [name, name]


def test_an_event_does_not_follow_a_write_when_it_continues_a_series_or_has_no_token():
    transport = HeldAnswers(Api())
    recorder = _recorder(transport)
    recorder.event("ts", POD, "Normal", "Scheduled", "Binding", "assigned")
    transport.answer()
    # A repeat of an Event posted in the last 6 minutes is a PATCH of its series.
    assert recorder.follow_up("ts", POD, "Normal", "Scheduled", "Binding", "assigned") is None

    limited = RateLimitedTransport(HeldAnswers(Api()), qps=0.001, burst=1)
    assert limited.take_now()  # the only token
    assert _recorder(limited).follow_up("ts", POD, "Normal", "Scheduled", "Binding", "a") is None
    # A transport that must be waited for sends no write with a follow-up.
    assert _recorder(FakeTransport(Api())).follow_up("ts", POD, "N", "S", "B", "a") is None
    recorder.stop()
