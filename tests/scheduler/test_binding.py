"""The live binding port's Bind, waited for or answered later, and the rate limiter's
send without waiting."""

from __future__ import annotations

import pytest

from topospread.client.transport import FakeTransport, Request, Response
from topospread.errors import ClusterUnreachable
from topospread.framework.binding import BindingError, BindingGone
from topospread.scheduler.api import RateLimitedTransport
from topospread.scheduler.binding import ApiBinding
from topospread.scheduler.cache import SchedulerCache
from topospread.testing import make_pod

POD = make_pod().name("web-1").obj()
ALREADY_BOUND = (
    b'{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be '
    b'fulfilled on pods/binding \\"web-1\\": pod web-1 is already assigned to node \\"n1\\"",'
    b'"reason":"Conflict","code":409}'
)


class Answering:
    """Answers every write with ``answer`` (a status and body, or an error to raise),
    at once, without waiting (``send_async``) or not (``send``)."""

    sends_async = True

    def __init__(self, answer: Response | ClusterUnreachable) -> None:
        self.answer = answer
        self.sent: list[Request] = []

    @property
    def server(self) -> str:
        return "https://api.test"

    def send(self, request: Request) -> Response:
        self.sent.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def send_async(self, request, done) -> bool:
        self.sent.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        done(self.answer)
        return True


ANSWERS = {
    "bound": (Response(201, b"{}"), None, ""),
    "gone": (Response(409, ALREADY_BOUND), BindingGone, "is already assigned to node"),
    "refused": (Response(500, b"{}"), BindingError, "HTTP 500"),
    "unreachable": (
        ClusterUnreachable("cannot connect to https://api.test: refused"),
        BindingError,
        "cannot connect",
    ),
}


@pytest.mark.parametrize("case", ANSWERS)
def test_a_bind_answered_later_fails_as_the_bind_waited_for_would(case):
    answer, error, words = ANSWERS[case]
    outcomes_waited: list[str] = []
    waited = ApiBinding(Answering(answer), SchedulerCache(), on_bind=outcomes_waited.append)
    failure: BindingError | None = None
    try:
        waited.bind_pod(POD, "n1")
    except BindingError as raised:
        failure = raised

    outcomes_later: list[str] = []
    transport = Answering(answer)
    later = ApiBinding(transport, SchedulerCache(), on_bind=outcomes_later.append)
    told: list[BindingError | None] = []
    assert later.bind_pod_async(POD, "n1", told.append)

    (reported,) = told
    assert type(reported) is type(failure)
    assert str(reported) == str(failure)
    assert (error is None) == (failure is None)
    if error is not None:
        assert isinstance(failure, error)
        assert words in str(failure)
    assert outcomes_later == outcomes_waited
    (request,) = transport.sent
    assert request.path == "/api/v1/namespaces/default/pods/web-1/binding"


def test_a_port_whose_transport_cannot_send_without_waiting_says_so():
    binding = ApiBinding(FakeTransport(lambda r: Response(201, b"{}")), SchedulerCache())
    assert not binding.sends_async
    assert not binding.bind_pod_async(POD, "n1", lambda error: None)
    assert ApiBinding(Answering(Response(201, b"{}")), SchedulerCache()).sends_async


def test_the_rate_limiter_sends_without_waiting_only_while_it_has_tokens():
    inner = Answering(Response(201, b"{}"))
    limited = RateLimitedTransport(inner, qps=0.001, burst=2)  # type: ignore[arg-type]
    answers: list[object] = []
    request = Request("POST", "/api/v1/namespaces/default/configmaps", body=b"{}")
    assert limited.send_async(request, answers.append)
    assert limited.send_async(request, answers.append)
    assert not limited.send_async(request, answers.append)  # would wait: the caller sends
    assert len(answers) == 2
    unlimited = RateLimitedTransport(inner, qps=0, burst=1)  # type: ignore[arg-type]
    assert all(unlimited.send_async(request, answers.append) for _ in range(10))
    waiting_only = RateLimitedTransport(FakeTransport(lambda r: Response(201, b"{}")), 0, 1)  # type: ignore[arg-type]
    assert limited.sends_async
    assert not waiting_only.sends_async
    assert not waiting_only.send_async(request, answers.append)
    # A port over a rate limiter whose transport cannot send without waiting says so.
    assert not ApiBinding(waiting_only, SchedulerCache()).sends_async
    assert ApiBinding(limited, SchedulerCache()).sends_async
