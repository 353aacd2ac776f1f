"""Writes sent from one thread over HTTP/2: libcurl's multi interface (pycurl).

A write process used to send each write on a thread of its own through urllib3 and
``http.client``: about 310 µs of Python per request on one thread (an Event POST,
2 cores), more with 80 threads contending for the GIL, and five times what libcurl's
multi interface takes for the same POST (62 µs, 32 in flight on one HTTP/2
connection). It is also how client-go talks to the API server: one TLS connection, the
requests multiplexed as HTTP/2 streams, a new connection only when the server's stream
limit is reached.

:class:`MultiplexedSender` drives every transfer from the thread that calls
:meth:`~MultiplexedSender.run`; :meth:`~MultiplexedSender.submit` may be called from
any thread. The connection comes from the same kubeconfig settings as the official
client's (its resolved ``Configuration``: server, CA, client certificate, bearer token
refreshed as it refreshes it). Settings it does not carry over (a proxy, a TLS server
name) make :func:`unsupported` name them, and the write process keeps its threads then.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import select
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlencode

import pycurl

from topospread.client.transport import Request
from topospread.errors import ClusterError, ClusterUnreachable

__all__ = ["Answer", "MultiplexedSender", "Outcome", "unsupported"]

Outcome = tuple[int, bytes, dict[str, str]] | ClusterError
"""A write's (status, body, headers), or the error that kept it from an answer."""
Answer = Callable[[int, Outcome], None]
"""Called on the sending thread with each request's id and its outcome."""

CONNECT_RETRIES: Final = 2
"""A request that could not connect is tried again this many times (as the urllib3
transport's ``Retry(connect=2)``); one that was sent is never repeated."""
MAX_ACTIVE: Final = 128
"""Transfers under way at once; the rest wait their turn: 128 stay under the API
server's 250 streams per HTTP/2 connection (Go's default), so one connection carries
them."""
_NOT_CONNECTED: Final = frozenset({pycurl.E_COULDNT_CONNECT, pycurl.E_COULDNT_RESOLVE_HOST})
_TLS_FAILED: Final = frozenset(
    {pycurl.E_SSL_CONNECT_ERROR, pycurl.E_PEER_FAILED_VERIFICATION, pycurl.E_SSL_CACERT_BADFILE}
)


def unsupported(configuration: Any) -> str | None:
    """What in ``configuration`` (the official client's) this sender does not apply, or
    None when it applies all of it."""
    if getattr(configuration, "proxy", None):
        return "a proxy"
    if getattr(configuration, "tls_server_name", None):
        return "tls-server-name"
    if getattr(configuration, "assert_hostname", None) is not None:
        return "assert_hostname"
    if not str(configuration.host).startswith(("https://", "http://")):
        return f"the server {configuration.host}"
    return None


class _Transfer:
    __slots__ = ("brief", "chunks", "request", "request_id", "tries")

    def __init__(self, request_id: int, request: Request, brief: bool) -> None:
        self.request_id = request_id
        self.request = request
        self.brief = brief
        self.chunks: list[bytes] = []
        self.tries = 0


class MultiplexedSender:
    """Sends writes concurrently from one thread; each outcome goes to ``answer``."""

    def __init__(
        self,
        api_client: Any,
        timeout: tuple[float, float],
        answer: Answer,
    ) -> None:
        """``api_client``: the official client's ``ApiClient`` (its configuration and
        default headers); ``timeout``: (connect, read) seconds, the read part bounding the
        rest of the transfer."""
        self._api = api_client
        self._configuration = api_client.configuration
        self._server = str(self._configuration.host).rstrip("/")
        self._timeout = timeout
        self._answer = answer
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
        # The socket interface: libcurl names the sockets to watch and when to call it
        # back, and each call handles only the transfers of a socket that is ready.
        self._poller = select.poll()
        self._watched: set[int] = set()
        self._deadline: float | None = None
        self._multi.setopt(pycurl.M_SOCKETFUNCTION, self._watch)
        self._multi.setopt(pycurl.M_TIMERFUNCTION, self._set_timer)
        self._idle: list[pycurl.Curl] = []
        self._active: dict[pycurl.Curl, _Transfer] = {}
        self._incoming: collections.deque[_Transfer] = collections.deque()
        self._lock = threading.Lock()
        self._closing = False
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._poller.register(self._wake_read, select.POLLIN)

    def submit(self, request_id: int, request: Request, brief: bool) -> None:
        """Queue a write (from any thread); ``brief``: a success's body is left out."""
        with self._lock:
            self._incoming.append(_Transfer(request_id, request, brief))
        self._wake()

    def close(self) -> None:
        """No more writes: :meth:`run` returns once the queued ones are answered."""
        with self._lock:
            self._closing = True
        self._wake()

    def _wake(self) -> None:
        # A full pipe: the loop has wake-ups enough waiting.
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_write, b"\0")

    def run(self) -> None:
        """Send and answer until :meth:`close` and every queued write is answered."""
        waiting: collections.deque[_Transfer] = collections.deque()
        try:
            while True:
                with self._lock:
                    waiting.extend(self._incoming)
                    self._incoming.clear()
                    closing = self._closing
                while waiting and len(self._active) < MAX_ACTIVE:
                    self._start_or_fail(waiting.popleft())
                if closing and not self._active and not waiting:
                    return
                self._wait_and_act()
                self._collect()
        finally:
            for handle in list(self._active) + self._idle:
                handle.close()
            self._multi.close()
            os.close(self._wake_read)
            os.close(self._wake_write)

    def _watch(self, what: int, fd: int, _multi: object, _data: object) -> None:
        if what == pycurl.POLL_REMOVE:
            if fd in self._watched:
                self._poller.unregister(fd)
                self._watched.discard(fd)
            return
        mask = 0
        if what in (pycurl.POLL_IN, pycurl.POLL_INOUT):
            mask |= select.POLLIN
        if what in (pycurl.POLL_OUT, pycurl.POLL_INOUT):
            mask |= select.POLLOUT
        if fd in self._watched:
            self._poller.modify(fd, mask)
        else:
            self._poller.register(fd, mask)
            self._watched.add(fd)

    def _set_timer(self, milliseconds: int) -> None:
        self._deadline = None if milliseconds < 0 else time.monotonic() + milliseconds / 1000

    def _wait_and_act(self) -> None:
        wait_ms = 1000
        if self._deadline is not None:
            wait_ms = max(0, min(wait_ms, int((self._deadline - time.monotonic()) * 1000)))
        for fd, events in self._poller.poll(wait_ms):
            if fd == self._wake_read:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self._wake_read, 4096):
                        pass
                continue
            flags = 0
            if events & select.POLLIN:
                flags |= pycurl.CSELECT_IN
            if events & select.POLLOUT:
                flags |= pycurl.CSELECT_OUT
            if events & (select.POLLERR | select.POLLHUP):
                flags |= pycurl.CSELECT_ERR
            self._multi.socket_action(fd, flags)
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._deadline = None
            self._multi.socket_action(pycurl.SOCKET_TIMEOUT, 0)

    def _collect(self) -> None:
        while True:
            queued, succeeded, failed = self._multi.info_read()
            for handle in succeeded:
                self._finish(handle, None, "")
            for handle, code, message in failed:
                self._finish(handle, code, message)
            if not queued:
                return

    def _start_or_fail(self, transfer: _Transfer) -> None:
        try:
            self._start(transfer)
        except pycurl.error as error:
            for handle, started in list(self._active.items()):
                if started is transfer:
                    del self._active[handle]
            detail = error.args[-1] if error.args else error
            message = f"cannot connect to {self._configuration.host}: {detail}"
            self._answer(transfer.request_id, ClusterUnreachable(message))

    def _start(self, transfer: _Transfer) -> None:
        handle = self._idle.pop() if self._idle else pycurl.Curl()
        handle.reset()
        request = transfer.request
        url = self._server + request.path
        if request.query:
            url += "?" + urlencode(request.query)
        headers = ["Accept: application/json", "Expect:"]
        if request.body is not None:
            headers.append(f"Content-Type: {request.content_type}")
        headers += self._auth_headers()
        handle.setopt(pycurl.URL, url)
        handle.setopt(pycurl.HTTPHEADER, headers)
        if request.method == "POST" or request.body is not None:
            handle.setopt(pycurl.POSTFIELDS, request.body or b"")
        if request.method != "POST":
            handle.setopt(pycurl.CUSTOMREQUEST, request.method)
        handle.setopt(pycurl.WRITEFUNCTION, transfer.chunks.append)
        self._configure(handle)
        transfer.tries += 1
        self._active[handle] = transfer
        self._multi.add_handle(handle)

    def _configure(self, handle: pycurl.Curl) -> None:
        configuration = self._configuration
        handle.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS)
        handle.setopt(pycurl.PIPEWAIT, 1)
        handle.setopt(pycurl.NOSIGNAL, 1)
        handle.setopt(pycurl.CONNECTTIMEOUT_MS, int(self._timeout[0] * 1000))
        handle.setopt(pycurl.TIMEOUT_MS, int(sum(self._timeout) * 1000))
        if configuration.verify_ssl:
            if configuration.ssl_ca_cert:
                handle.setopt(pycurl.CAINFO, configuration.ssl_ca_cert)
            else:
                # No CA in the kubeconfig: the system's, as Python's ssl module finds it
                # for the urllib3 pool (SSL_CERT_FILE and SSL_CERT_DIR included).
                system = ssl.get_default_verify_paths()
                if system.cafile:
                    handle.setopt(pycurl.CAINFO, system.cafile)
                if system.capath:
                    handle.setopt(pycurl.CAPATH, system.capath)
        else:
            handle.setopt(pycurl.SSL_VERIFYPEER, 0)
            handle.setopt(pycurl.SSL_VERIFYHOST, 0)
        if configuration.cert_file:
            handle.setopt(pycurl.SSLCERT, configuration.cert_file)
        if configuration.key_file:
            handle.setopt(pycurl.SSLKEY, configuration.key_file)

    def _auth_headers(self) -> list[str]:
        # auth_settings() runs the client's refresh hook (exec plugins, rotated token
        # files), as each request through the official client does.
        headers = [f"{name}: {value}" for name, value in self._api.default_headers.items()]
        token = self._configuration.auth_settings().get("BearerToken")
        if token and token.get("value"):
            headers.append(f"{token['key']}: {token['value']}")
        return headers

    def _finish(self, handle: pycurl.Curl, code: int | None, message: str) -> None:
        transfer = self._active.pop(handle)
        self._multi.remove_handle(handle)
        if code is None:
            status = int(handle.getinfo(pycurl.RESPONSE_CODE))
            self._idle.append(handle)
            body = b"" if transfer.brief and status < 300 else b"".join(transfer.chunks)
            self._answer(transfer.request_id, (status, body, {}))
            return
        os_error = int(handle.getinfo(pycurl.OS_ERRNO))
        self._idle.append(handle)
        if code in _NOT_CONNECTED and transfer.tries <= CONNECT_RETRIES:
            transfer.chunks.clear()
            self._start_or_fail(transfer)
            return
        message = self._unreachable(code, message, os_error)
        self._answer(transfer.request_id, ClusterUnreachable(message))

    def _unreachable(self, code: int, message: str, os_error: int) -> str:
        # The urllib3 transport's wording (transport._unreachable) for the same failures.
        server = self._configuration.host
        if code == pycurl.E_COULDNT_CONNECT and os_error == errno.ECONNREFUSED:
            return f"cannot connect to {server}: connection refused"
        if code == pycurl.E_COULDNT_RESOLVE_HOST:
            return f"cannot connect to {server}: unknown host"
        if code == pycurl.E_OPERATION_TIMEDOUT:
            return f"cannot connect to {server}: timed out"
        if code in _TLS_FAILED:
            return f"cannot connect to {server}: TLS handshake failed: {message}"
        return f"cannot connect to {server}: {message}"
