"""The HTTPS server of ``topospread webhook``: the standard library's ``http.server`` and
``ssl``, a thread per connection and a bounded pool for the reviews themselves.

Why this shape:

- The API server keeps idle HTTP/1.1 connections to a webhook open and reuses them; a
  thread per connection (``ThreadingHTTPServer``) lets idle ones wait without holding
  anything but a small thread, closed after ``IDLE_SECONDS``.
- The CPU work (decoding and linting) runs in a ``ThreadPoolExecutor`` of ``workers``
  threads, so a burst queues there instead of starting unbounded work; the connection
  thread waits for it at most the deadline (queueing included) and then answers with
  :func:`~topospread.webhook.review.fail_verdict`, so admission is never held up longer
  than the deadline plus a few milliseconds. A review that overran finishes in the
  background and is discarded.
- The deadline is the smaller of ``Policy.deadline_seconds`` and the API server's own
  ``?timeout=`` (it appends its webhook ``timeoutSeconds`` to the URL) less a margin, so
  that the answer arrives before the API server gives up and applies ``failurePolicy``.
- The TLS handshake is done in the connection's thread (not in the accept loop, where a
  slow client would stall every other one). The serving certificate and key are read
  again when their files change (cert-manager and kubelet rotate mounted Secrets), checked
  at most every ``RELOAD_CHECK_SECONDS``.

No third-party HTTP server is needed for a JSON-in, JSON-out endpoint at admission rates;
this keeps the webhook's image and its attack surface to the standard library.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from topospread.errors import TopospreadError
from topospread.io.manifests import GENERATED_SUFFIX
from topospread.webhook.review import (
    AdmissionRequest,
    Policy,
    ReviewError,
    Verdict,
    decide,
    fail_verdict,
    parse_review,
    response,
)

__all__ = ["REVIEW_PATH", "TLSFiles", "WebhookServer", "api_server_timeout", "server_context"]

REVIEW_PATH: Final = "/validate"
HEALTH_PATHS: Final = frozenset({"/healthz", "/readyz", "/livez"})
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
"""An AdmissionReview holds the object twice (UPDATE); etcd's 1.5 MiB object limit
keeps real ones far below this."""
IDLE_SECONDS: Final = 60.0
HANDSHAKE_SECONDS: Final = 10.0
RELOAD_CHECK_SECONDS: Final = 10.0
API_SERVER_MARGIN_SECONDS: Final = 0.5
"""Left of the API server's own timeout for the answer to travel back."""

_GO_DURATION: Final = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m)$")
_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0}

log = logging.getLogger("topospread.webhook")


def api_server_timeout(query: str) -> float | None:
    """The ``timeout`` query parameter the API server sends (``10s``), in seconds."""
    values = parse_qs(query).get("timeout")
    match = _GO_DURATION.match(values[0]) if values else None
    return float(match.group(1)) * _UNITS[match.group(2)] if match else None


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """The serving certificate (chain, PEM) and its private key (PEM)."""

    cert: Path
    key: Path

    def mtimes(self) -> tuple[float, float]:
        """Both files' modification times (a change means a rotated certificate)."""
        return self.cert.stat().st_mtime, self.key.stat().st_mtime


def server_context(files: TLSFiles) -> ssl.SSLContext:
    """A TLS 1.2+ server context with the certificate and key; raises ``ssl.SSLError`` or
    ``OSError`` when they cannot be read or do not match."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(files.cert, files.key)
    return context


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Restarts (a rolling update of the webhook's Deployment) bind the port again at once.
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: WebhookServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        context = self.owner.current_context()
        return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            request.settimeout(HANDSHAKE_SECONDS)
            request.do_handshake()
        except (OSError, ssl.SSLError) as exc:
            log.debug("TLS handshake with %s failed: %s", client_address, exc)
            return
        request.settimeout(IDLE_SECONDS)
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.warning("connection from %s failed", client_address, exc_info=True)


POST: Final = "POST"
TEXT: Final = "text/plain; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes: with Nagle's algorithm the body waits for the
    # client's delayed ACK (40 ms per review on Linux).
    disable_nagle_algorithm = True
    server: _Server
    server_version = "topospread-webhook"
    sys_version = ""

    def version_string(self) -> str:
        """The Server header: the name alone (the default adds the Python version)."""
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)

    def _send(
        self,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        allow: str | None = None,
    ) -> None:
        self.send_response(code)
        if allow is not None:
            self.send_header("Allow", allow)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in HEALTH_PATHS:
            self._send(200, b"ok\n", TEXT)
        elif path == REVIEW_PATH:
            self._send(405, b"POST an AdmissionReview\n", TEXT, POST)
        else:
            self._send(404, b"not found\n", TEXT)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if url.path != REVIEW_PATH:
            self._send(404, b"not found\n", TEXT)
            return
        media = self.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if media.lower() != "application/json":
            # The API server sends application/json; a form or text body is not a review.
            self.close_connection = True
            self._send(415, b"expected Content-Type: application/json\n", TEXT)
            return
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            self._send(411, b"Content-Length required\n", TEXT)
            return
        if int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            self._send(413, b"request body too large\n", TEXT)
            return
        body = self.rfile.read(int(length))
        try:
            request = parse_review(body)
        except ReviewError as exc:
            self._send(400, f"{exc}\n".encode(), TEXT)
            return
        answer = self.server.owner.review(request, api_server_timeout(url.query))
        self._send(200, json.dumps(response(request.uid, answer)).encode())


class WebhookServer:
    """Serves :data:`REVIEW_PATH` over TLS until :meth:`shutdown`."""

    def __init__(
        self,
        policy: Policy,
        tls: TLSFiles,
        address: str = "0.0.0.0",
        port: int = 8443,
        *,
        workers: int = 4,
        decide_review: Callable[[AdmissionRequest, Policy], Verdict] = decide,
    ) -> None:
        self.policy = policy
        self.tls = tls
        self._decide = decide_review
        self._context = server_context(tls)
        self._mtimes = tls.mtimes()
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="topospread-review")
        self._http = _Server((address, port), self)
        self._serving = False

    @property
    def port(self) -> int:
        """The bound port (the one chosen when ``port`` was 0)."""
        return int(self._http.server_address[1])

    def current_context(self) -> ssl.SSLContext:
        """The TLS context, rebuilt when the certificate files changed."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked < RELOAD_CHECK_SECONDS:
                return self._context
            self._checked = now
            try:
                mtimes = self.tls.mtimes()
                if mtimes != self._mtimes:
                    self._context = server_context(self.tls)
                    self._mtimes = mtimes
                    log.info("reloaded the serving certificate %s", self.tls.cert)
            except (OSError, ssl.SSLError) as exc:
                # Half-written during a rotation: keep serving the old one, try again later.
                log.warning("serving certificate not reloaded: %s", exc)
            return self._context

    def review(self, request: AdmissionRequest, api_server_seconds: float | None) -> Verdict:
        """Decide within the deadline; otherwise (or on an internal error) the policy's
        failure answer."""
        deadline = self.policy.deadline_seconds
        if api_server_seconds is not None:
            deadline = min(deadline, max(api_server_seconds - API_SERVER_MARGIN_SECONDS, 0.05))
        started = time.perf_counter()
        future: Future[Verdict] = self._pool.submit(self._decide, request, self.policy)
        try:
            verdict = future.result(timeout=deadline)
        except FutureTimeout:
            future.cancel()
            verdict = fail_verdict(f"no decision within {deadline:g}s", self.policy)
        except TopospreadError as exc:
            # An object this release cannot read (the API server decoded it, so its types
            # are a newer server's): not reviewed, under the failure policy, no traceback.
            log.warning("review of %s: cannot read the object: %s", request.uid, exc)
            verdict = fail_verdict(f"cannot read the object: {exc}", self.policy)
        except Exception as exc:  # the failure policy covers every internal error
            log.error("review of %s failed", request.uid, exc_info=True)
            verdict = fail_verdict(f"review failed: {exc}", self.policy)
        log.info(
            "%s",
            json.dumps(
                {
                    "uid": request.uid,
                    "operation": request.operation,
                    "kind": request.kind,
                    "object": f"{request.namespace}/{_object_name(request)}",
                    "allowed": verdict.allowed,
                    "warnings": len(verdict.warnings),
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                }
            ),
        )
        return verdict

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` is called (from another thread)."""
        self._serving = True
        self._http.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop accepting, close the socket and drop queued reviews."""
        if self._serving:
            # (BaseServer.shutdown waits for a serve_forever loop: only when one ran.)
            self._http.shutdown()
        self._http.server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def start_background(self) -> threading.Thread:
        """Serve in a daemon thread (tests, embedding); :meth:`shutdown` stops it."""
        thread = threading.Thread(target=self.serve_forever, name="topospread-webhook", daemon=True)
        thread.start()
        return thread


def _object_name(request: AdmissionRequest) -> str:
    """The request's name; a CREATE of an object with only ``generateName`` has none yet
    (the API server makes it up after admission), so that, as lint names it."""
    if request.name:
        return request.name
    meta = (request.object or {}).get("metadata")
    generate = meta.get("generateName") if isinstance(meta, dict) else None
    return f"{generate}{GENERATED_SUFFIX}" if isinstance(generate, str) and generate else ""
