"""Writes sent from a process of their own, against the real API server of the session.

Writes travel to the child and come back with the API server's own answer; reads stay
local; a child that dies fails the writes it held and is started again; an unreachable
server is one line naming it; closing lets every child exit. A write's follow-up is
rendered and sent by the child once the write succeeded, and never after a failure.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from topospread.client import write_process
from topospread.client.chained import FollowUp
from topospread.client.config import connect
from topospread.client.events import event_request
from topospread.client.transport import Request, Response
from topospread.client.write_process import ConnectionSettings, WriteProcessTransport
from topospread.errors import ClusterError, ClusterUnreachable
from topospread.testing.scheduling import wait_for

pytestmark = pytest.mark.cluster


def config_map(name: str) -> bytes:
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"written-by": "a write process"},
    }
    return json.dumps(document).encode()


def post(transport: WriteProcessTransport, name: str) -> int:
    request = Request("POST", "/api/v1/namespaces/default/configmaps", body=config_map(name))
    return transport.send(request).status


@pytest.fixture
def writes(admin_kubeconfig: Path) -> Iterator[WriteProcessTransport]:
    local = connect(admin_kubeconfig).transport
    transport = WriteProcessTransport(local, ConnectionSettings(str(admin_kubeconfig)))
    yield transport
    transport.close()


def test_a_write_is_sent_by_the_child_and_a_read_locally(writes, unique_name):
    name = unique_name("written")

    assert post(writes, name) == 201
    read = writes.send(Request("GET", f"/api/v1/namespaces/default/configmaps/{name}"))

    assert read.status == 200
    assert json.loads(read.data)["data"] == {"written-by": "a write process"}
    assert writes.writes == 1


def test_a_refused_write_comes_back_with_the_api_servers_answer(writes, unique_name):
    name = unique_name("twice")
    post(writes, name)

    again = writes.send(
        Request("POST", "/api/v1/namespaces/default/configmaps", body=config_map(name))
    )

    assert again.status == 409
    assert json.loads(again.data)["reason"] == "AlreadyExists"


def test_writes_from_many_threads_each_get_their_own_answer(writes, unique_name):
    names = [unique_name("many") for _ in range(40)]
    statuses: dict[str, int] = {}

    def write(name: str) -> None:
        statuses[name] = post(writes, name)

    threads = [threading.Thread(target=write, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert statuses == dict.fromkeys(names, 201)


def test_a_child_that_dies_fails_its_writes_and_is_started_again(writes, unique_name):
    (child,) = [process.pid for process in writes.children]
    os.kill(child, signal.SIGSTOP)
    failures: list[Exception] = []

    def write() -> None:
        try:
            post(writes, unique_name("held"))
        except ClusterUnreachable as error:
            failures.append(error)

    held = threading.Thread(target=write)
    held.start()
    wait_for(lambda: writes.in_flight == 1, 10, what="the write to reach the stopped child")
    os.kill(child, signal.SIGKILL)
    held.join(10)

    assert [str(error) for error in failures] == [
        f"cannot connect to {writes.server}: the write process exited with status -9"
    ]
    wait_for(lambda: writes.restarts == 1, 10, what="the child to be started again")
    assert [process.pid for process in writes.children] != [child]
    assert post(writes, unique_name("after")) == 201


def test_a_write_sent_without_waiting_reports_its_outcome_when_it_comes(writes, unique_name):
    name = unique_name("async")
    outcomes: list[object] = []
    arrived = threading.Event()

    def done(outcome: object) -> None:
        outcomes.append(outcome)
        arrived.set()

    body = config_map(name)
    writes.send_async(Request("POST", "/api/v1/namespaces/default/configmaps", body=body), done)
    assert arrived.wait(10)
    arrived.clear()
    writes.send_async(Request("POST", "/api/v1/namespaces/default/configmaps", body=body), done)
    assert arrived.wait(10)

    created, refused = outcomes
    assert isinstance(created, Response)
    assert created.status == 201
    assert created.data == b""  # a successful answer leaves its body in the child
    assert isinstance(refused, Response)
    assert refused.status == 409
    assert json.loads(refused.data)["reason"] == "AlreadyExists"
    with pytest.raises(ValueError, match="writes"):
        writes.send_async(Request("GET", "/api/v1/namespaces/default/configmaps"), done)


def test_a_write_sent_without_waiting_to_a_child_that_dies_fails(writes, unique_name):
    (child,) = [process.pid for process in writes.children]
    os.kill(child, signal.SIGSTOP)
    outcomes: list[object] = []
    request = Request(
        "POST", "/api/v1/namespaces/default/configmaps", body=config_map(unique_name("lost"))
    )
    writes.send_async(request, outcomes.append)
    wait_for(lambda: writes.in_flight == 1, 10, what="the write to reach the stopped child")
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: bool(outcomes), 10, what="the write to fail")

    (failure,) = outcomes
    assert isinstance(failure, ClusterUnreachable)
    assert "the write process exited with status -9" in str(failure)


def test_a_write_sent_without_waiting_to_a_child_that_hangs_times_out(
    admin_kubeconfig, unique_name
):
    transport = WriteProcessTransport(
        connect(admin_kubeconfig).transport,
        ConnectionSettings(str(admin_kubeconfig)),
        answer_timeout=1.5,
    )
    (child,) = [process.pid for process in transport.children]
    try:
        os.kill(child, signal.SIGSTOP)
        outcomes: list[object] = []
        request = Request(
            "POST", "/api/v1/namespaces/default/configmaps", body=config_map(unique_name("hung"))
        )
        transport.send_async(request, outcomes.append)
        wait_for(lambda: bool(outcomes), 10, what="the write to time out")
        (failure,) = outcomes
        assert isinstance(failure, ClusterUnreachable)
        assert str(failure).endswith(": timed out")
        assert transport.in_flight == 0
    finally:
        os.kill(child, signal.SIGKILL)
        transport.close()


def test_an_unreachable_server_is_one_line_naming_it(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "gone",
                        "cluster": {
                            "server": "https://127.0.0.1:1",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "nobody", "user": {"token": "x"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "nobody"}}],
                "current-context": "gone",
            }
        )
    )
    transport = WriteProcessTransport(
        connect(kubeconfig).transport, ConnectionSettings(str(kubeconfig))
    )
    try:
        with pytest.raises(ClusterUnreachable) as raised:
            post(transport, "never")
    finally:
        transport.close()

    assert str(raised.value) == "cannot connect to https://127.0.0.1:1: connection refused"


def test_closing_lets_every_child_exit(admin_kubeconfig):
    transport = WriteProcessTransport(
        connect(admin_kubeconfig).transport,
        ConnectionSettings(str(admin_kubeconfig)),
        processes=2,
    )
    children = list(transport.children)

    transport.close()

    assert [child.poll() for child in children] == [0, 0]


def test_a_child_that_cannot_connect_says_why_in_one_line(admin_kubeconfig, tmp_path, capfd):
    missing = tmp_path / "gone.kubeconfig"
    transport = WriteProcessTransport(
        connect(admin_kubeconfig).transport, ConnectionSettings(str(missing))
    )
    try:
        with pytest.raises(ClusterUnreachable, match="the write process exited with status 1"):
            post(transport, "never")
    finally:
        transport.close()

    errors = capfd.readouterr().err
    assert f"topospread write process: {missing}: kubeconfig file not found" in errors
    assert "Traceback" not in errors


@pytest.fixture
def pinned(admin_kubeconfig: Path) -> Iterator[tuple[WriteProcessTransport, int]]:
    """A write process given the highest core this process may use, and that core."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("CPU affinity is Linux's (sched_setaffinity)")
    core = max(os.sched_getaffinity(0))
    transport = WriteProcessTransport(
        connect(admin_kubeconfig).transport,
        ConnectionSettings(str(admin_kubeconfig)),
        cores=(core,),
    )
    yield transport, core
    transport.close()


def test_each_child_keeps_to_the_core_it_was_given_even_after_a_restart(pinned, unique_name):
    transport, core = pinned
    assert post(transport, unique_name("pinned")) == 201
    (child,) = transport.children
    assert thread_affinities(child.pid) == {core}
    os.kill(child.pid, signal.SIGKILL)
    wait_for(lambda: transport.restarts == 1, 10, what="the child to be started again")
    assert post(transport, unique_name("pinned-again")) == 201
    (again,) = transport.children
    assert thread_affinities(again.pid) == {core}


def test_a_child_keeps_to_its_core_from_its_start_not_after_its_imports(pinned):
    transport, core = pinned
    (child,) = transport.children
    # Checked at once: the child's own pinning comes after its interpreter's start.
    assert os.sched_getaffinity(child.pid) == {core}


def test_cores_name_one_core_per_child(admin_kubeconfig):
    with pytest.raises(ValueError, match="one core per process"):
        WriteProcessTransport(
            connect(admin_kubeconfig).transport,
            ConnectionSettings(str(admin_kubeconfig)),
            processes=2,
            cores=(0,),
        )


def thread_affinities(pid: int) -> set[int]:
    """The cores any thread of ``pid`` may run on."""
    cores: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        cores |= os.sched_getaffinity(int(task))
    return cores


# -- a write with a follow-up (client/chained.py) ----------------------------------------


class Outcomes:
    """Records, in order, the first write's answer and the follow-up's fate."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []
        self.follow_up_settled = threading.Event()

    def first(self, answer: object) -> None:
        self.seen.append(("first", answer))

    def follow_up(self, token: object, answer: object) -> None:
        self.seen.append(("follow-up", (token, answer)))
        self.follow_up_settled.set()


def event_about(name: str, outcomes: Outcomes, note: str) -> FollowUp:
    """A follow-up that posts an Event about the ConfigMap ``name``."""
    regarding = ("ConfigMap", "v1", "default", name, "")
    args = ("topospread-test", "topospread-test-host", "Normal", "Written", "Write", note)
    args += (regarding,)
    return FollowUp(event_request, args, outcomes.follow_up)


def events_with_note(transport: WriteProcessTransport, note: str) -> list[dict]:
    listing = transport.send(Request("GET", "/apis/events.k8s.io/v1/namespaces/default/events"))
    return [e for e in json.loads(listing.data)["items"] if e.get("note") == note]


@pytest.fixture(params=["http/2 from one thread", "urllib3 threads"])
def chaining_writes(request, admin_kubeconfig, tmp_path) -> Iterator[WriteProcessTransport]:
    """Write processes of both kinds: the HTTP/2 sender, and the urllib3 threads a
    kubeconfig with a TLS server name gets (one the API server's certificate names)."""
    kubeconfig = admin_kubeconfig
    if request.param == "urllib3 threads":
        config = yaml.safe_load(admin_kubeconfig.read_text())
        config["clusters"][0]["cluster"]["tls-server-name"] = "localhost"
        kubeconfig = tmp_path / "tls-server-name.kubeconfig"
        kubeconfig.write_text(json.dumps(config))
    transport = WriteProcessTransport(
        connect(kubeconfig).transport, ConnectionSettings(str(kubeconfig))
    )
    yield transport
    transport.close()


def test_a_follow_up_is_rendered_and_sent_by_the_child_once_its_write_succeeded(
    chaining_writes, unique_name
):
    name = unique_name("followed")
    outcomes = Outcomes()
    request = Request("POST", "/api/v1/namespaces/default/configmaps", body=config_map(name))
    before = time.time()

    assert chaining_writes.send_async_then(
        request, outcomes.first, event_about(name, outcomes, f"wrote {name}")
    )
    assert outcomes.follow_up_settled.wait(10)

    (_, first), (_, (token, answer)) = outcomes.seen
    assert [kind for kind, _ in outcomes.seen] == ["first", "follow-up"]
    assert isinstance(first, Response)
    assert first.status == 201
    assert isinstance(answer, Response)
    assert answer.status == 201
    event_name, sent_at = token
    assert event_name.startswith(f"{name}.")
    assert before <= sent_at <= time.time()
    (event,) = events_with_note(chaining_writes, f"wrote {name}")
    assert event["metadata"]["name"] == event_name
    assert event["regarding"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "namespace": "default",
        "name": name,
    }
    assert event["reportingController"] == "topospread-test"
    assert event["reportingInstance"] == "topospread-test-host"
    assert (event["type"], event["reason"], event["action"]) == ("Normal", "Written", "Write")
    assert chaining_writes.in_flight == 0


def test_the_follow_up_of_a_refused_write_is_not_sent(chaining_writes, unique_name):
    name = unique_name("refused")
    assert post(chaining_writes, name) == 201
    outcomes = Outcomes()
    request = Request("POST", "/api/v1/namespaces/default/configmaps", body=config_map(name))

    chaining_writes.send_async_then(
        request, outcomes.first, event_about(name, outcomes, f"twice {name}")
    )
    assert outcomes.follow_up_settled.wait(10)

    # Told before the write's own answer, which finds the follow-up settled.
    (_, (token, answer)), (_, first) = outcomes.seen
    assert (token, answer) == (None, None)
    assert isinstance(first, Response)
    assert first.status == 409
    assert events_with_note(chaining_writes, f"twice {name}") == []
    assert chaining_writes.in_flight == 0


def test_a_follow_up_that_cannot_be_rendered_comes_back_as_an_error(chaining_writes, unique_name):
    name = unique_name("unrendered")
    outcomes = Outcomes()
    request = Request("POST", "/api/v1/namespaces/default/configmaps", body=config_map(name))
    broken = FollowUp(event_request, ("too", "few"), outcomes.follow_up)

    chaining_writes.send_async_then(request, outcomes.first, broken)
    assert outcomes.follow_up_settled.wait(10)

    (_, first), (_, (token, answer)) = outcomes.seen
    assert isinstance(first, Response)
    assert first.status == 201
    assert token is None
    assert isinstance(answer, ClusterError)
    assert "cannot render a follow-up write" in str(answer)


def test_a_follow_up_lost_with_its_child_after_the_write_succeeded_is_reported_lost(
    admin_kubeconfig,
):
    # The child's answers are played by the test: the write's success, then the pipe
    # closes before the follow-up's answer (the child exited), as a SIGKILL at that
    # moment would leave it.
    transport = closed_transport(admin_kubeconfig)
    outcomes = Outcomes()
    follow_up = event_about("lost", outcomes, "never")
    child = PlayedChild()
    first_id, follow_up_id = 7, 8
    child.pending[first_id] = write_process._Chained(outcomes.first, follow_up, follow_up_id)
    child.answer(first_id, (201, b"", {}))
    child.exit()

    transport._read_answers(child)  # type: ignore[arg-type]

    (_, first), (_, (token, answer)) = outcomes.seen
    assert isinstance(first, Response)
    assert first.status == 201
    assert token is None
    assert isinstance(answer, ClusterUnreachable)
    assert "the write process exited with status -9" in str(answer)


def test_a_write_and_its_follow_up_lost_with_their_child_fail_the_write_only(admin_kubeconfig):
    transport = closed_transport(admin_kubeconfig)
    outcomes = Outcomes()
    child = PlayedChild()
    child.pending[7] = write_process._Chained(
        outcomes.first, event_about("lost", outcomes, "never"), 8
    )
    child.exit()

    transport._read_answers(child)  # type: ignore[arg-type]

    (_, (token, answer)), (_, first) = outcomes.seen
    assert (token, answer) == (None, None)
    assert isinstance(first, ClusterUnreachable)


def closed_transport(kubeconfig: Path) -> WriteProcessTransport:
    """A transport whose own children have exited: what reads a played child's answers."""
    transport = WriteProcessTransport(
        connect(kubeconfig).transport, ConnectionSettings(str(kubeconfig))
    )
    transport.close()
    return transport


class PlayedChild:
    """Stands in for a write process: the answers the test writes, then an exit by SIGKILL."""

    def __init__(self) -> None:
        read, self._write = os.pipe()
        self.reader = open(read, "rb")  # noqa: SIM115 - closed by _read_answers
        self.pending: dict[int, object] = {}
        self.process = self
        self.index = 0

    def answer(self, request_id: int, result: object) -> None:
        data = pickle.dumps((request_id, result))
        os.write(self._write, struct.pack("!I", len(data)) + data)

    def exit(self) -> None:
        os.close(self._write)

    def wait(self) -> int:
        return -9
