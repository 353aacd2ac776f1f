"""Watches read by a process of their own, against the real API server of the session.

A watch's lines come through the child as the API server sends them; requests go through
the wrapped transport; a cut ends a stream at once and the next one streams again; a
stream left before its end leaks nothing into the next; a child that dies, hangs or
cannot connect fails its stream in one line and the next watch starts another; closing
lets the child exit.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from topospread.client import watch_process
from topospread.client.config import connect
from topospread.client.transport import KubeTransport, Request, query
from topospread.client.watch_process import WatchProcessTransport
from topospread.client.write_process import ConnectionSettings
from topospread.errors import ClusterUnreachable, TransportClosed
from topospread.testing.scheduling import wait_for

pytestmark = pytest.mark.cluster

CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def local(admin_kubeconfig: Path) -> Iterator[KubeTransport]:
    transport = connect(admin_kubeconfig).transport
    yield transport
    transport.close()


@pytest.fixture
def watches(local: KubeTransport, admin_kubeconfig: Path) -> Iterator[WatchProcessTransport]:
    transport = WatchProcessTransport(local, ConnectionSettings(str(admin_kubeconfig)))
    yield transport
    transport.close()


def create_config_map(transport: KubeTransport, name: str, label: str) -> None:
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"watched": label}},
    }
    request = Request("POST", CONFIG_MAPS, body=json.dumps(document).encode())
    assert transport.send(request).status == 201


def watch_of(transport: KubeTransport, label: str) -> Request:
    """A watch of the config maps labelled ``label``, from now on."""
    listed = json.loads(transport.send(Request("GET", CONFIG_MAPS, query(limit=1))).data)
    return Request(
        "GET",
        CONFIG_MAPS,
        query(
            watch="true",
            labelSelector=f"watched={label}",
            resourceVersion=listed["metadata"]["resourceVersion"],
            timeoutSeconds=60,
        ),
    )


def streaming(
    watches: WatchProcessTransport, local: KubeTransport, label: str, name: str
) -> Iterator[bytes]:
    """A watch of the config maps labelled ``label`` through the child, its first event
    (the config map ``name``, created here) already read."""
    lines = watches.stream(watch_of(local, label), read_timeout=30)
    create_config_map(local, name, label)
    assert names(lines, 1) == [name]
    return lines


def names(lines: Iterator[bytes], count: int) -> list[str]:
    """The names of the next ``count`` objects the watch reports."""
    found = []
    for line in lines:
        found.append(json.loads(line)["object"]["metadata"]["name"])
        if len(found) == count:
            break
    return found


def test_a_watch_streams_through_the_child_as_it_does_locally(watches, local, unique_name):
    label = unique_name("through")
    request = watch_of(local, label)
    created = [unique_name("cm") for _ in range(3)]
    for name in created:
        create_config_map(local, name, label)

    through_child = names(watches.stream(request, read_timeout=30), 3)
    locally = names(local.stream(request, read_timeout=30), 3)

    assert through_child == locally == created
    assert watches.child is not None
    assert watches.child.pid != os.getpid()
    assert watches.streams == 1


def test_requests_go_through_the_wrapped_transport_without_a_child(watches):
    answer = watches.send(Request("GET", CONFIG_MAPS, query(limit=1)))

    assert answer.status == 200
    assert watches.child is None


def test_a_cut_ends_the_stream_at_once_and_the_next_watch_streams_again(
    watches, local, unique_name
):
    label = unique_name("cut")
    cuts: list[Callable[[], None]] = []
    lines = watches.stream(watch_of(local, label), read_timeout=30, on_open=cuts.append)
    threading.Timer(0.5, lambda: cuts[0]()).start()
    started = time.monotonic()

    with pytest.raises(ClusterUnreachable, match="watch cut"):
        next(lines)

    assert time.monotonic() - started < 5
    request = watch_of(local, label)
    create_config_map(local, unique_name("after-cut"), label)
    assert len(names(watches.stream(request, read_timeout=30), 1)) == 1
    assert watches.restarts == 0


def test_a_stream_left_before_its_end_leaks_nothing_into_the_next(watches, local, unique_name):
    first_label, second_label = unique_name("left"), unique_name("next")
    left = streaming(watches, local, first_label, unique_name("first"))
    second = watch_of(local, second_label)
    for _ in range(3):
        create_config_map(local, unique_name("more-of-first"), first_label)
    left.close()
    wanted = unique_name("second")
    create_config_map(local, wanted, second_label)

    assert names(watches.stream(second, read_timeout=30), 1) == [wanted]


def test_a_child_that_dies_fails_its_stream_and_the_next_watch_starts_another(
    watches, local, unique_name
):
    label = unique_name("dies")
    lines = streaming(watches, local, label, unique_name("seen"))
    assert watches.child is not None
    killed = watches.child.pid
    os.kill(killed, signal.SIGKILL)

    with pytest.raises(ClusterUnreachable, match="the watch process exited with status -9"):
        next(lines)

    request = watch_of(local, label)
    wanted = unique_name("after")
    create_config_map(local, wanted, label)
    assert names(watches.stream(request, read_timeout=30), 1) == [wanted]
    assert watches.restarts == 1
    assert watches.child.pid != killed


def test_a_child_that_hangs_is_given_up_and_replaced(local, admin_kubeconfig, unique_name):
    watches = WatchProcessTransport(
        local, ConnectionSettings(str(admin_kubeconfig)), hang_timeout=1.0
    )
    try:
        label = unique_name("hangs")
        lines = streaming(watches, local, label, unique_name("seen"))
        assert watches.child is not None
        stopped = watches.child
        os.kill(stopped.pid, signal.SIGSTOP)

        with pytest.raises(ClusterUnreachable, match="timed out"):
            next(lines)

        wait_for(lambda: stopped.poll() is not None, 10, what="the hung child to be killed")
        request = watch_of(local, label)
        create_config_map(local, unique_name("after"), label)
        assert len(names(watches.stream(request, read_timeout=30), 1)) == 1
        assert watches.restarts == 1
    finally:
        watches.close()


def test_a_refused_watch_is_the_api_servers_answer_as_a_local_watch_gives_it(watches, local):
    refused = Request("GET", "/api/v1/nothinglikethis", query(watch="true"))

    through_child = list(watches.stream(refused, read_timeout=30))
    locally = list(local.stream(refused, read_timeout=30))

    assert through_child == locally
    assert json.loads(through_child[0])["code"] == 404


def test_a_child_that_cannot_connect_says_why_in_one_line(local, tmp_path, capfd):
    missing = tmp_path / "gone.kubeconfig"
    watches = WatchProcessTransport(local, ConnectionSettings(str(missing)))
    try:
        with pytest.raises(ClusterUnreachable, match="the watch process exited with status 1"):
            next(watches.stream(Request("GET", CONFIG_MAPS, query(watch="true"))))
    finally:
        watches.close()

    errors = capfd.readouterr().err
    assert f"topospread watch process: {missing}: kubeconfig file not found" in errors
    assert "Traceback" not in errors


def test_closing_lets_the_child_exit_ends_its_stream_and_refuses_later_watches(
    watches, local, unique_name
):
    label = unique_name("close")
    lines = streaming(watches, local, label, unique_name("seen"))
    child = watches.child
    assert child is not None

    watches.close()

    assert child.poll() == 0
    with pytest.raises(ClusterUnreachable):
        next(lines)
    with pytest.raises(TransportClosed):
        next(watches.stream(watch_of(local, label)))


def test_cuts_crossing_their_streams_end_leave_the_child_serving(watches, local, unique_name):
    label = unique_name("cuts")
    for round_ in range(15):
        cuts: list[Callable[[], None]] = []
        request = watch_of(local, label)
        create_config_map(local, unique_name(f"round{round_}"), label)
        lines = watches.stream(request, read_timeout=30, on_open=cuts.append)
        assert len(names(lines, 1)) == 1
        # Cut from another thread, as Reflector.stop does, then left: the generator cuts
        # it again on its way out.
        threading.Timer(0.01 * (round_ % 4), cuts[0]).start()
        with pytest.raises(ClusterUnreachable, match="watch cut"):
            next(lines)
        lines.close()

    request = watch_of(local, label)
    wanted = unique_name("still-served")
    create_config_map(local, wanted, label)
    assert names(watches.stream(request, read_timeout=30), 1) == [wanted]
    assert watches.restarts == 0


def test_a_new_watch_ends_one_left_open_without_a_cut(watches, local, unique_name):
    first_label, second_label = unique_name("open"), unique_name("new")
    left_open = streaming(watches, local, first_label, unique_name("first"))
    second = watch_of(local, second_label)
    wanted = unique_name("second")
    create_config_map(local, wanted, second_label)

    started = time.monotonic()

    # The first generator is still referenced and was never closed.
    assert names(watches.stream(second, read_timeout=30), 1) == [wanted]
    assert time.monotonic() - started < 10  # not after the first watch's 60 s timeout
    assert left_open is not None


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's (sched_setaffinity)"
)
def test_the_child_keeps_to_its_core_from_its_start(local, admin_kubeconfig):
    core = max(os.sched_getaffinity(0))
    watches = WatchProcessTransport(local, ConnectionSettings(str(admin_kubeconfig)), core=core)
    try:
        child = watches._running_child()  # what the first watch starts
        # Checked at once: the child's own pinning comes after its interpreter's start.
        assert os.sched_getaffinity(child.process.pid) == {core}
    finally:
        watches.close()


def test_asked_to_the_child_forwards_events_without_managed_fields(
    local, admin_kubeconfig, unique_name
):
    watches = WatchProcessTransport(
        local, ConnectionSettings(str(admin_kubeconfig)), drop_managed_fields=True
    )
    try:
        label = unique_name("trimmed")
        request = watch_of(local, label)
        create_config_map(local, unique_name("cm"), label)

        (through_child,) = [json.loads(line) for line in take(watches.stream(request), 1)]
        (locally,) = [json.loads(line) for line in take(local.stream(request), 1)]
    finally:
        watches.close()

    assert "managedFields" in locally["object"]["metadata"]
    del locally["object"]["metadata"]["managedFields"]
    assert through_child == locally


def take(lines: Iterator[bytes], count: int) -> list[bytes]:
    taken = []
    for line in lines:
        taken.append(line)
        if len(taken) == count:
            break
    return taken


def test_an_event_is_forwarded_without_managed_fields_and_any_other_line_as_it_came():
    event = {"type": "MODIFIED", "object": {"metadata": {"name": "a", "managedFields": [{}]}}}
    status = {"kind": "Status", "code": 410, "reason": "Expired"}
    nested: dict = {"x": None}
    deepest = nested
    for _ in range(300):
        deepest["x"] = {"x": None}
        deepest = deepest["x"]
    too_deep = {"type": "MODIFIED", "object": {"metadata": {"managedFields": [{}]}, **nested}}

    trimmed = watch_process._without_managed_fields(json.dumps(event).encode())

    assert json.loads(trimmed) == {"type": "MODIFIED", "object": {"metadata": {"name": "a"}}}
    for line in (json.dumps(status).encode(), b"not json", json.dumps(too_deep).encode()):
        assert watch_process._without_managed_fields(line) == line
