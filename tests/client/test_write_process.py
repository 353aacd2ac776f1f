"""Writes sent from a process of their own, against the real API server of the session.

Writes travel to the child and come back with the API server's own answer; reads stay
local; a child that dies fails the writes it held and is started again; an unreachable
server is one line naming it; closing lets every child exit.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from topospread.client.config import connect
from topospread.client.transport import Request, Response
from topospread.client.write_process import ConnectionSettings, WriteProcessTransport
from topospread.errors import ClusterUnreachable
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


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux affinity")
def test_each_child_keeps_to_the_core_it_was_given_even_after_a_restart(
    admin_kubeconfig, unique_name
):
    core = max(os.sched_getaffinity(0))
    transport = WriteProcessTransport(
        connect(admin_kubeconfig).transport,
        ConnectionSettings(str(admin_kubeconfig)),
        cores=(core,),
    )
    try:
        assert post(transport, unique_name("pinned")) == 201
        (child,) = transport.children
        assert thread_affinities(child.pid) == {core}
        os.kill(child.pid, signal.SIGKILL)
        wait_for(lambda: transport.restarts == 1, 10, what="the child to be started again")
        assert post(transport, unique_name("pinned-again")) == 201
        (again,) = transport.children
        assert thread_affinities(again.pid) == {core}
    finally:
        transport.close()


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
