"""The seam between topospread and an API server: one small request Protocol.

:class:`KubeTransport` sends requests through the official ``kubernetes`` client's REST
layer (urllib3, with the TLS, client-certificate, token and exec-plugin setup its kubeconfig
loader made) and hands back the raw response bytes: decoding is topospread's own, so there
is no second object model. :class:`FakeTransport` answers from a handler function, for
tests with no server. Every failure becomes a :class:`~topospread.errors.ClusterError`
whose one-line message names the server, and for 401/403/404 what was refused or missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlencode

from topospread.errors import (
    ClusterError,
    ClusterUnreachable,
    Forbidden,
    NotFound,
    Unauthorized,
)

__all__ = [
    "Answer",
    "AsyncWrites",
    "FakeTransport",
    "KubeTransport",
    "Request",
    "Response",
    "Transport",
    "raise_for_status",
    "status_message",
]

# Long enough for a page of 500 pods from a loaded API server, short enough that a dead one
# is reported in seconds rather than minutes: (connect, read) as urllib3 takes them.
DEFAULT_TIMEOUT = (10.0, 120.0)


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request to the API server."""

    method: str
    path: str
    """The absolute API path, e.g. ``/api/v1/pods``."""
    query: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    content_type: str = "application/json"
    timeout: float | None = None
    """The most seconds the whole request may take, connecting included, without retries
    (a context deadline in client-go: the Lease's renewDeadline); None: the transport's
    own timeouts."""


@dataclass(frozen=True, slots=True)
class Response:
    """The status and the raw body of an answer."""

    status: int
    data: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


class Transport(Protocol):
    """Sends requests to one API server; raises ClusterUnreachable when it cannot."""

    @property
    def server(self) -> str:
        """The server's URL, for messages."""
        ...

    def send(self, request: Request) -> Response:
        """Send ``request`` and return the answer, whatever its status."""
        ...


Answer = Callable[[Response | ClusterError], object]
"""Told a write's outcome by :meth:`AsyncWrites.send_async`."""


@runtime_checkable
class AsyncWrites(Protocol):
    """A transport that can send a write without the caller waiting for its answer."""

    @property
    def sends_async(self) -> bool:
        """Whether :meth:`send_async` can ever send (a wrapper over a transport that
        cannot always answers False)."""
        ...

    def send_async(self, request: Request, done: Answer) -> bool:
        """Hand ``request`` (a write) over; False when it cannot be sent at once (the
        caller sends it with ``send``). When True, ``done`` is called once with the
        answer, whose body is left out when its status is a success, or with the
        ClusterError the send raised; on another thread, which it must not block."""
        ...


class KubeTransport:
    """A :class:`Transport` over the official client's configured urllib3 pool."""

    def __init__(self, api_client: Any, *, timeout: tuple[float, float] = DEFAULT_TIMEOUT) -> None:
        self._api = api_client
        self._timeout = timeout

    @property
    def server(self) -> str:
        """The server's URL from the kubeconfig."""
        return str(self._api.configuration.host)

    @property
    def timeout(self) -> tuple[float, float]:
        """The (connect, read) timeouts of each request."""
        return self._timeout

    @property
    def api_client(self) -> Any:
        """The official client's ``ApiClient``: its resolved configuration and headers."""
        return self._api

    def widen_pool(self, size: int) -> None:
        """Keep up to ``size`` connections open (the official client sizes its urllib3 pool
        5 × cores): concurrent writes would otherwise open a new TLS connection for most
        requests. Call before the first request."""
        pool = self._api.rest_client.pool_manager
        pool.connection_pool_kw["maxsize"] = max(
            int(pool.connection_pool_kw.get("maxsize") or 1), size
        )

    def send(self, request: Request) -> Response:
        """Send one request; connection and TLS failures raise ClusterUnreachable."""
        import urllib3

        headers = {"Accept": "application/json"}
        if request.body is not None:
            headers["Content-Type"] = request.content_type
        method, url, headers, _, _ = self._api.param_serialize(
            method=request.method,
            resource_path=request.path,
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        if request.query:
            url += "?" + urlencode(request.query)
        pool = self._api.rest_client.pool_manager
        timeout = urllib3.Timeout(connect=self._timeout[0], read=self._timeout[1])
        retries = urllib3.Retry(total=2, connect=2, read=0, redirect=0, status=0)
        if request.timeout is not None:
            seconds = max(request.timeout, 0.001)
            timeout = urllib3.Timeout(total=seconds, connect=min(self._timeout[0], seconds))
            retries = urllib3.Retry(total=0, redirect=0, status=0)
        try:
            raw = pool.request(
                method,
                url,
                body=request.body,
                headers=headers,
                timeout=timeout,
                preload_content=True,
                retries=retries,
            )
        except urllib3.exceptions.MaxRetryError as exc:
            raise ClusterUnreachable(_unreachable(self.server, exc.reason)) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ClusterUnreachable(_unreachable(self.server, exc)) from None
        return Response(raw.status, raw.data, dict(raw.headers))

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """Send a long-running GET (a watch) and yield the body line by line as it arrives.

        A non-2xx answer is yielded whole as one line (a ``metav1.Status``); a dropped
        connection raises ClusterUnreachable. ``read_timeout`` bounds the wait for the next
        bytes (None: the transport's read timeout). ``on_open`` receives a function that
        another thread may call to cut the stream short (the blocked read then fails).
        """
        import urllib3

        method, url, headers, _, _ = self._api.param_serialize(
            method=request.method,
            resource_path=request.path,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        if request.query:
            url += "?" + urlencode(request.query)
        pool = self._api.rest_client.pool_manager
        read = self._timeout[1] if read_timeout is None else read_timeout
        try:
            raw = pool.request(
                method,
                url,
                headers=headers,
                timeout=urllib3.Timeout(connect=self._timeout[0], read=read),
                preload_content=False,
                retries=urllib3.Retry(total=0, redirect=0),
            )
        except urllib3.exceptions.MaxRetryError as exc:
            raise ClusterUnreachable(_unreachable(self.server, exc.reason)) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ClusterUnreachable(_unreachable(self.server, exc)) from None
        if on_open is not None:
            on_open(raw.shutdown)
        try:
            if not 200 <= raw.status < 300:
                yield raw.read()
                return
            yield from body_lines(raw.stream(65536))
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ClusterUnreachable(_unreachable(self.server, exc)) from None
        finally:
            # A watch is rarely read to its end: its connection is not reused.
            raw.close()
            raw.release_conn()

    def close(self) -> None:
        """Release the connection pool."""
        self._api.close()


def body_lines(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The non-empty lines of the body that arrives in ``pieces``, without their LF; at
    the end, what follows the last LF if it is not blank.

    The lines splitting the whole body on LF would give, found with ``find``, which looks
    for the LF with memchr: ``bytes.split`` compares byte by byte, which was 17,000 of the
    68,000 instructions (callgrind) that reading a 3.5 KB watch event over TLS cost.
    """
    parts: list[bytes] = []
    for piece in pieces:
        start = 0
        newline = piece.find(b"\n")
        while newline >= 0:
            if parts:
                parts.append(piece[start:newline])
                line = b"".join(parts)
                parts.clear()
            else:
                line = piece[start:newline]
            if line:
                yield line
            start = newline + 1
            newline = piece.find(b"\n", start)
        if start < len(piece):
            parts.append(piece[start:])
    rest = b"".join(parts)
    if rest.strip():
        yield rest


_SSL_DETAIL = re.compile(r"\] (.*?)(?: \(_ssl\.c:\d+\))?['\")]*$")


def _unreachable(server: str, reason: object) -> str:
    import urllib3

    text = str(reason)
    if isinstance(reason, urllib3.exceptions.SSLError) or "CERTIFICATE_VERIFY_FAILED" in text:
        # urllib3 nests the ssl error in reprs: "SSLError(SSLCertVerificationError(1,
        # '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ... (_ssl.c:1006)'))".
        found = _SSL_DETAIL.search(text)
        detail = found.group(1) if found else text
        return f"cannot connect to {server}: TLS handshake failed: {detail}"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):
        if "refused" in text.lower():
            return f"cannot connect to {server}: connection refused"
        if "Name or service not known" in text or "nodename nor servname" in text:
            return f"cannot connect to {server}: unknown host"
    if isinstance(reason, urllib3.exceptions.TimeoutError):
        return f"cannot connect to {server}: timed out"
    return f"cannot connect to {server}: {text}"


class FakeTransport:
    """A :class:`Transport` answering from ``handler(request)``, for tests without a server."""

    def __init__(
        self, handler: Callable[[Request], Response], server: str = "https://fake.invalid"
    ) -> None:
        self._handler = handler
        self._server = server
        self.requests: list[Request] = []
        """Every request sent, in order."""

    @property
    def server(self) -> str:
        """The made-up server URL."""
        return self._server

    def send(self, request: Request) -> Response:
        """Record ``request`` and return the handler's answer."""
        self.requests.append(request)
        return self._handler(request)

    def stream(
        self,
        request: Request,
        *,
        read_timeout: float | None = None,
        on_open: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[bytes]:
        """Record ``request`` and yield the non-empty lines of the handler's answer."""
        self.requests.append(request)
        yield from (line for line in self._handler(request).data.split(b"\n") if line)


def _status_message(data: bytes) -> tuple[str, str, Mapping[str, Any]]:
    # A failed request returns a metav1.Status: {"message", "reason", "details"}.
    try:
        status = json.loads(data)
    except ValueError:
        return data[:200].decode("utf-8", "replace").strip(), "", {}
    if not isinstance(status, dict):
        return "", "", {}
    details = status.get("details")
    return (
        str(status.get("message") or ""),
        str(status.get("reason") or ""),
        details if isinstance(details, dict) else {},
    )


def status_message(response: Response) -> str:
    """The API server's own words for a failed ``response`` (its Status ``message``), or
    ``HTTP <code>`` when it gave none."""
    return _status_message(response.data)[0] or f"HTTP {response.status}"


def raise_for_status(
    response: Response,
    server: str,
    *,
    verb: str,
    resource: str,
    group: str = "",
    namespace: str | None = None,
    name: str | None = None,
) -> None:
    """Raise the ClusterError that a non-2xx ``response`` means, in one line.

    ``verb``, ``group`` and ``resource`` say what was attempted, as RBAC names it, so that a
    403 can name the rule that would grant it.
    """
    if 200 <= response.status < 300:
        return
    message, reason, _ = _status_message(response.data)
    if response.status == 401:
        raise Unauthorized(
            f"{server}: 401 Unauthorized: the server did not accept the credentials of the "
            "kubeconfig context (expired token or certificate, or a failing exec plugin?)"
        )
    if response.status == 403:
        scope = f'in namespace "{namespace}"' if namespace else "at the cluster scope"
        rule = f'{{apiGroups: ["{group}"], resources: ["{resource}"], verbs: ["{verb}"]}}'
        text = message or f'cannot {verb} resource "{resource}" {scope}'
        kind = "Role" if namespace else "ClusterRole"
        raise Forbidden(f"{server}: 403 Forbidden: {text}; a {kind} rule {rule} grants it")
    if response.status == 404 and name is not None:
        # The server's own words (as kubectl prints them), and where it looked.
        text = message or f'{resource} "{name}" not found'
        raise NotFound(f'{text} in namespace "{namespace}"' if namespace else text)
    summary = message or reason or f"HTTP {response.status}"
    raise ClusterError(f"{server}: {response.status} {summary} ({verb} {resource})")


def query(**params: object) -> tuple[tuple[str, str], ...]:
    """Query parameters without the ones that are None, as strings."""
    return tuple((k, str(v)) for k, v in params.items() if v is not None)


def join_query(items: Sequence[tuple[str, str]]) -> str:
    """``a=1&b=2`` for messages and fakes."""
    return urlencode(items)
