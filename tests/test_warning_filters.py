"""The suite's warning filters: every warning fails a test, but for one standard-library leak
on the Python releases that have it (tests/conftest.py, CPython gh-113280)."""

from __future__ import annotations

import gc
import re
import select
import socket
import ssl
import struct
import warnings

import pytest
from tests.conftest import SSL_CREATE_LEAKS, UNCONNECTED_TLS_SOCKET_LEAK

NEVER_CONNECTED = (
    "unclosed <ssl.SSLSocket fd=31, family=2, type=1, proto=6, laddr=('127.0.0.1', 44556)>"
)
CONNECTED = (
    "unclosed <ssl.SSLSocket fd=31, family=2, type=1, proto=6, laddr=('127.0.0.1', 44556), "
    "raddr=('127.0.0.1', 6443)>"
)


def test_the_exception_matches_only_a_tls_socket_that_never_connected():
    assert re.match(UNCONNECTED_TLS_SOCKET_LEAK, NEVER_CONNECTED, re.IGNORECASE)
    assert not re.match(UNCONNECTED_TLS_SOCKET_LEAK, CONNECTED, re.IGNORECASE)
    assert not re.match(
        UNCONNECTED_TLS_SOCKET_LEAK,
        NEVER_CONNECTED.replace("ssl.SSLSocket", "socket.socket"),
        re.IGNORECASE,
    )


def test_a_connected_tls_socket_left_unclosed_still_fails():
    with pytest.raises(ResourceWarning):
        warnings.warn(CONNECTED, ResourceWarning, stacklevel=1)


@pytest.mark.skipif(not SSL_CREATE_LEAKS, reason="this Python closes the socket itself")
def test_the_standard_librarys_never_connected_socket_is_ignored_on_releases_that_leak_it():
    with warnings.catch_warnings(record=True) as seen:
        warnings.warn(NEVER_CONNECTED, ResourceWarning, stacklevel=1)
    assert seen == []


@pytest.mark.skipif(not SSL_CREATE_LEAKS, reason="this Python closes the socket itself")
def test_this_release_leaves_unclosed_the_tls_socket_of_a_connection_reset_before_its_handshake():
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname()) as client:
        peer, _ = server.accept()
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        peer.close()  # a reset, as from an API server killed mid-request
        select.select([client], [], [], 5)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(ConnectionResetError):
                ssl.create_default_context().wrap_socket(client, server_hostname="localhost")
            gc.collect()
    leaks = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert leaks
    assert all(re.match(UNCONNECTED_TLS_SOCKET_LEAK, leak, re.IGNORECASE) for leak in leaks)
