"""A watch's body as it arrives: its lines, and ``KubeTransport.stream`` reading them from
a local HTTP server: the lines of a chunked body however its chunks fall, an error answer
whole, and a dropped, silent or cut connection as one line naming the server."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topospread.client.config import connect
from topospread.client.transport import KubeTransport, Request, body_lines
from topospread.errors import ClusterUnreachable


def chunked(*chunks: bytes, end: bytes = b"0\r\n\r\n") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + end


def split_lines(body: bytes) -> list[bytes]:
    """What the transport yielded before, from the whole body at once."""
    *whole, rest = body.split(b"\n")
    return [line for line in whole if line] + ([rest] if rest.strip() else [])


EVENTS = [b'{"type":"ADDED","object":{"n":%d}}\n' % n for n in range(3)]


# -- lines ----------------------------------------------------------------------------


def test_lines_are_the_non_empty_lines_and_a_non_blank_rest():
    pieces = [b"a\n\nb", b"c\n", b"\n", b"d\ne", b"f", b" \n", b"tail"]

    assert list(body_lines(pieces)) == [b"a", b"bc", b"d", b"ef ", b"tail"]


def test_a_blank_rest_is_not_a_line():
    assert list(body_lines([b"a\n", b" \r"])) == [b"a"]


@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\x00", b"\n")), max_size=10))
def test_lines_are_those_of_the_whole_body_split_on_lf(pieces):
    assert list(body_lines(pieces)) == split_lines(b"".join(pieces))


# -- KubeTransport.stream from a local server -----------------------------------------

Answer = Callable[[socket.socket], None]


class Server:
    """A local HTTP/1.1 server: each connection answers its requests with ``answer``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._closed = threading.Event()
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._open: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(None)
            self.connections += 1
            self._open.append(connection)
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                while _read_request(connection):
                    self.requests += 1
                    self.answer(connection)
            except OSError:
                pass

    def close(self) -> None:
        self._closed.set()
        self._accepting.join(5)
        self._listener.close()
        for connection in self._open:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(5)


def _read_request(connection: socket.socket) -> bool:
    head = b""
    while b"\r\n\r\n" not in head:
        data = connection.recv(65536)
        if not data:
            return False
        head += data
    return True


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"


def chunked_answer(*parts: bytes, headers: bytes = b"") -> Answer:
    def answer(connection: socket.socket) -> None:
        connection.sendall(HEAD + headers + b"\r\n")
        for part in parts:
            connection.sendall(part)

    return answer


def closing(answer: Answer) -> Answer:
    def then_close(connection: socket.socket) -> None:
        answer(connection)
        connection.shutdown(socket.SHUT_RDWR)

    return then_close


@pytest.fixture
def serve(tmp_path) -> Iterator[Callable[[Answer], tuple[Server, KubeTransport]]]:
    servers: list[Server] = []
    transports: list[KubeTransport] = []

    def start(answer: Answer) -> tuple[Server, KubeTransport]:
        server = Server(answer)
        kubeconfig = tmp_path / f"kubeconfig-{server.port}"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {"name": "local", "cluster": {"server": f"http://127.0.0.1:{server.port}"}}
                    ],
                    "users": [{"name": "u", "user": {"token": "x"}}],
                    "contexts": [{"name": "local", "context": {"cluster": "local", "user": "u"}}],
                    "current-context": "local",
                }
            )
        )
        transport = connect(kubeconfig, timeout=(5.0, 5.0)).transport
        servers.append(server)
        transports.append(transport)
        return server, transport

    yield start
    for transport in transports:
        transport.close()
    for server in servers:
        server.close()


WATCH = Request("GET", "/api/v1/pods", (("watch", "true"),))


def test_stream_yields_the_lines_of_the_chunked_body(serve):
    wire = chunked(EVENTS[0], EVENTS[1][:7], EVENTS[1][7:] + EVENTS[2] + b"partial")
    _, transport = serve(chunked_answer(wire[:9], wire[9:30], wire[30:]))

    assert list(transport.stream(WATCH)) == [
        *(event.rstrip(b"\n") for event in EVENTS),
        b"partial",
    ]


def test_stream_reuses_the_connection_of_a_body_read_to_its_end(serve):
    server, transport = serve(chunked_answer(chunked(EVENTS[0])))

    assert list(transport.stream(WATCH)) == [EVENTS[0].rstrip(b"\n")]
    assert list(transport.stream(WATCH)) == [EVENTS[0].rstrip(b"\n")]
    assert (server.requests, server.connections) == (2, 1)


def test_stream_yields_an_error_answer_whole(serve):
    status = b'{"kind":"Status","code":410,\n"reason":"Expired"}'

    def gone(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(status), status)
        )

    _, transport = serve(gone)

    assert list(transport.stream(WATCH)) == [status]


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (chunked(EVENTS[0], end=b""), "Response ended prematurely"),
        (
            b"%x\r\n%s" % (len(EVENTS[0]), EVENTS[0][:5]),
            f"('Connection broken: IncompleteRead(5 bytes read, {len(EVENTS[0]) - 5} more "
            f"expected)', IncompleteRead(5 bytes read, {len(EVENTS[0]) - 5} more expected))",
        ),
    ],
    ids=["between chunks", "inside a chunk"],
)
def test_a_dropped_connection_is_unreachable_in_urllib3s_words(serve, wire, message):
    server, transport = serve(closing(chunked_answer(wire)))

    with pytest.raises(ClusterUnreachable) as raised:
        list(transport.stream(WATCH))

    assert str(raised.value) == f"cannot connect to http://127.0.0.1:{server.port}: {message}"


def test_a_silent_server_is_a_read_timeout(serve):
    _, transport = serve(chunked_answer(chunked(EVENTS[0], end=b"")))
    received: list[bytes] = []

    with pytest.raises(ClusterUnreachable, match=r": timed out$"):
        received.extend(transport.stream(WATCH, read_timeout=0.3))

    assert received == [EVENTS[0].rstrip(b"\n")]


def test_a_malformed_chunk_is_unreachable(serve):
    _, transport = serve(chunked_answer(b"zz\r\n"))

    with pytest.raises(ClusterUnreachable, match=r"(?i)chunk"):
        list(transport.stream(WATCH))


def test_a_stream_cut_from_another_thread_stops_with_an_error(serve):
    _, transport = serve(chunked_answer(chunked(EVENTS[0], end=b"")))
    received: list[bytes] = []

    def cut_soon(cut: Callable[[], None]) -> None:
        threading.Timer(0.2, cut).start()

    with pytest.raises(ClusterUnreachable):
        received.extend(transport.stream(WATCH, on_open=cut_soon))

    assert received == [EVENTS[0].rstrip(b"\n")]
