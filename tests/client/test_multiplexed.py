"""Writes sent from one thread over HTTP/2, against the real API server of the session.

Each write comes back with the API server's status (and its words when it refused), by
client certificate or bearer token; more writes than may be under way at once all get
their own answer; a server that never answers times out; kubeconfig settings the sender
does not apply are named.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from topospread.client.config import connect
from topospread.client.multiplexed import MAX_ACTIVE, MultiplexedSender, Outcome, unsupported
from topospread.client.transport import Request
from topospread.errors import ClusterUnreachable

pytestmark = pytest.mark.cluster

CONFIG_MAPS = "/api/v1/namespaces/default/configmaps"


def config_map(name: str) -> bytes:
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"sent": "over HTTP/2"},
    }
    return json.dumps(document).encode()


def send_all(
    kubeconfig: Path, requests: list[tuple[Request, bool]], timeout: tuple[float, float] = (5, 30)
) -> list[Outcome]:
    """Send ``(request, brief)`` pairs at once; their outcomes, in the same order."""
    transport = connect(kubeconfig).transport
    outcomes: dict[int, Outcome] = {}
    sender = MultiplexedSender(transport.api_client, timeout, outcomes.__setitem__)
    for request_id, (request, brief) in enumerate(requests):
        sender.submit(request_id, request, brief)
    sender.close()
    sender.run()
    return [outcomes[i] for i in range(len(requests))]


@pytest.mark.parametrize("kubeconfig", ["admin_kubeconfig", "admin_token_kubeconfig"])
def test_a_post_a_patch_and_a_delete_come_back_with_the_api_servers_status(
    kubeconfig, request, unique_name
):
    path = request.getfixturevalue(kubeconfig)
    name = unique_name("h2")
    patch = json.dumps({"data": {"patched": "yes"}}).encode()

    (created,) = send_all(path, [(Request("POST", CONFIG_MAPS, body=config_map(name)), False)])
    (patched,) = send_all(
        path,
        [
            (
                Request(
                    "PATCH",
                    f"{CONFIG_MAPS}/{name}",
                    body=patch,
                    content_type="application/merge-patch+json",
                ),
                False,
            )
        ],
    )
    (deleted,) = send_all(path, [(Request("DELETE", f"{CONFIG_MAPS}/{name}"), True)])

    assert not isinstance(created, Exception)
    assert created[0] == 201
    assert json.loads(created[1])["metadata"]["name"] == name
    assert not isinstance(patched, Exception)
    assert patched[0] == 200
    assert json.loads(patched[1])["data"] == {"sent": "over HTTP/2", "patched": "yes"}
    assert deleted == (200, b"", {})  # brief: a success's body is left out


def test_a_refused_write_keeps_the_api_servers_words_even_when_brief(admin_kubeconfig):
    (missing,) = send_all(admin_kubeconfig, [(Request("DELETE", f"{CONFIG_MAPS}/nowhere"), True)])

    assert not isinstance(missing, Exception)
    status, body, _ = missing
    assert status == 404
    assert json.loads(body)["message"] == 'configmaps "nowhere" not found'


def test_more_writes_than_may_be_under_way_each_get_their_own_answer(admin_kubeconfig, unique_name):
    names = [unique_name("many") for _ in range(MAX_ACTIVE + 72)]
    requests = [(Request("POST", CONFIG_MAPS, body=config_map(n)), False) for n in names]

    outcomes = send_all(admin_kubeconfig, requests)

    created = [
        json.loads(o[1])["metadata"]["name"] for o in outcomes if not isinstance(o, Exception)
    ]
    assert created == names
    deletions = [(Request("DELETE", f"{CONFIG_MAPS}/{n}"), True) for n in names]
    assert {
        o[0] for o in send_all(admin_kubeconfig, deletions) if not isinstance(o, Exception)
    } == {200}


@pytest.fixture
def silent_server(tmp_path: Path, admin_kubeconfig: Path) -> Iterator[Path]:
    """A kubeconfig naming a server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    document = json.loads(json.dumps(_yaml(admin_kubeconfig)))
    port = listener.getsockname()[1]
    for cluster in document["clusters"]:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{port}"
    silent = tmp_path / "silent.kubeconfig"
    silent.write_text(json.dumps(document))
    yield silent
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def _yaml(path: Path) -> dict:
    import yaml

    loaded: dict = yaml.safe_load(path.read_text())
    return loaded


def test_a_server_that_never_answers_times_out_in_one_line(silent_server):
    (outcome,) = send_all(
        silent_server, [(Request("POST", CONFIG_MAPS, body=config_map("x")), True)], (0.5, 0.5)
    )

    assert isinstance(outcome, ClusterUnreachable)
    assert str(outcome).endswith(": timed out")
    assert str(outcome).startswith("cannot connect to https://127.0.0.1:")


def test_a_request_with_a_timeout_of_its_own_ends_by_it_on_a_silent_server(silent_server):
    # The Lease's requests carry what is left of renewDeadline (client-go's context).
    transport = connect(silent_server).transport
    began = time.monotonic()
    with pytest.raises(ClusterUnreachable, match=r": timed out$"):
        transport.send(Request("GET", "/apis/coordination.k8s.io/v1", timeout=0.5))
    assert time.monotonic() - began < 1.5  # not the transport's 120 s read timeout


def test_a_proxy_or_a_tls_server_name_is_named_as_not_applied():
    plain = SimpleNamespace(host="https://api.test:6443", proxy=None, tls_server_name=None)
    proxied = SimpleNamespace(host="https://api.test:6443", proxy="http://proxy:3128")
    renamed = SimpleNamespace(host="https://10.0.0.1:6443", proxy=None, tls_server_name="api")

    assert unsupported(plain) is None
    assert unsupported(proxied) == "a proxy"
    assert unsupported(renamed) == "tls-server-name"


def test_the_process_that_starts_write_processes_imports_no_libcurl() -> None:
    # The scheduling process imports the write process's module to start one; only the
    # child sends through libcurl.
    code = (
        "import sys, topospread.client.write_process, topospread.client.watch_process\n"
        "print('pycurl' in sys.modules)"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
