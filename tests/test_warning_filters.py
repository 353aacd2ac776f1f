"""The suite's warning filters: every warning fails a test, but for one standard-library leak
on the Python releases that have it (tests/conftest.py, CPython gh-113280)."""

from __future__ import annotations

import re
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
