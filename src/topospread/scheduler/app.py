"""The scheduler component: its lifecycle, leader election, health and metrics endpoints.

States, each shown on ``/readyz?verbose`` and as ``topospread_scheduler_state``:

- ``starting``: the HTTP endpoints are up, the informers not yet started;
- ``syncing``: the informers list; ``/readyz`` answers 500;
- ``standby``: the cache is warm, another replica holds the Lease; ready;
- ``leader``: this replica holds the Lease and schedules (without leader election it
  goes straight here); ready;
- ``draining``: SIGTERM (or a lost Lease): no new cycles, in-flight binds finish;
- ``stopped``: the Lease is released and the informers stopped.

``/healthz`` and ``/livez`` answer 200 while the process works (a leader that has not
renewed its Lease for ``leaseDuration`` + 20 s is unhealthy, as upstream's
``HealthzAdaptor``); ``/metrics`` serves Prometheus' text format.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs

from topospread.client.transport import Transport
from topospread.scheduler.heap import HeapKeeper
from topospread.scheduler.informer import StreamingTransport
from topospread.scheduler.leader import LeaderElector
from topospread.scheduler.metrics import SchedulerMetrics
from topospread.scheduler.options import SchedulerOptions
from topospread.scheduler.scheduler import Scheduler

__all__ = ["JsonFormatter", "SchedulerApp", "configure_logging"]

log = logging.getLogger("topospread.scheduler.app")

LEADER_HEALTH_SLACK = 20.0
"""``leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)`` in kube-scheduler."""

_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None)))
_RECORD_FIELDS = _RECORD_FIELDS | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg and the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS:
                entry[key] = value if isinstance(value, int | float | str | bool) else str(value)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


class TextFormatter(logging.Formatter):
    """The message followed by the record's extra fields as ``key=value``."""

    def format(self, record: logging.LogRecord) -> str:
        extra = " ".join(
            f"{key}={value}" for key, value in vars(record).items() if key not in _RECORD_FIELDS
        )
        text = super().format(record)
        return f"{text} {extra}" if extra else text


def configure_logging(fmt: str = "json", verbosity: int = 0) -> None:
    """Structured logs on stderr: ``json`` (default) or ``text``; ``-v`` adds debug."""
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger("topospread")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbosity > 0 else logging.INFO)
    root.propagate = False


class SchedulerApp:
    """One scheduler replica: the scheduler, its Lease campaign and its HTTP endpoints."""

    def __init__(
        self,
        transport: StreamingTransport,
        options: SchedulerOptions,
        *,
        bind_address: str = "0.0.0.0",
        port: int | None = 10251,
        identity: str | None = None,
        bind_workers: int = 16,
        seed: int | None = None,
        lease_transport: StreamingTransport | None = None,
        event_transport: Transport | None = None,
        heap: HeapKeeper | None = None,
        watch_list: bool = False,
        pod_transport: StreamingTransport | None = None,
    ) -> None:
        self.options = options
        self.heap = heap
        self.metrics = SchedulerMetrics()
        self.hostname = socket.gethostname()
        self.identity = identity or f"{self.hostname}_{uuid.uuid4()}"
        self.scheduler = Scheduler(
            transport,
            options,
            metrics=self.metrics,
            bind_workers=bind_workers,
            hostname=self.hostname,
            seed=seed,
            event_transport=event_transport,
            watch_list=watch_list,
            pod_transport=pod_transport,
        )
        self.state = "starting"
        self.lost_lease = False
        self._stopped = threading.Event()
        self._stopping = threading.Lock()
        self._loop: threading.Thread | None = None
        le = options.leader_election
        self.elector: LeaderElector | None = None
        if le.leader_elect:
            self.elector = LeaderElector(
                lease_transport or transport,
                namespace=le.resource_namespace,
                name=le.resource_name,
                identity=self.identity,
                lease_duration=le.lease_duration,
                renew_deadline=le.renew_deadline,
                retry_period=le.retry_period,
                on_started_leading=self._started_leading,
                on_stopped_leading=self._stopped_leading,
            )
            self.metrics.leader.labels(le.resource_name).set(0)
        self._server: ThreadingHTTPServer | None = None
        if port != 0:
            self._server = _health_server(self, bind_address, port or 0)

    @property
    def port(self) -> int | None:
        """The port the endpoints listen on (None when disabled)."""
        return self._server.server_address[1] if self._server is not None else None

    def _set_state(self, state: str) -> None:
        self.state = state
        self.metrics.set_state(state)
        log.info("state", extra={"state": state, "identity": self.identity})

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Serve the endpoints, sync the informers, then campaign (or lead at once)."""
        if self._server is not None:
            threading.Thread(target=self._server.serve_forever, name="health", daemon=True).start()
        self._set_state("syncing")
        if self.heap is not None:
            self.heap.started()
        self.scheduler.start_informers()
        threading.Thread(target=self._after_sync, name="startup", daemon=True).start()

    def _after_sync(self) -> None:
        while not self.scheduler.wait_for_sync(1.0):
            if self._stopped.is_set() or self.state == "draining":
                return
        if self.state != "syncing":
            return
        if self.heap is not None:
            self.heap.synced()
        if self.elector is None:
            self._started_leading()
            return
        self._set_state("standby")
        self.elector.start()

    def _started_leading(self) -> None:
        if self.state in ("draining", "stopped"):
            return
        if self.elector is not None:
            self.metrics.leader.labels(self.options.leader_election.resource_name).set(1)
        self._set_state("leader")
        on_idle = self.heap.idle if self.heap is not None else None
        self._loop = threading.Thread(
            target=self.scheduler.run, args=(on_idle,), name="schedule", daemon=True
        )
        self._loop.start()

    def _stopped_leading(self) -> None:
        # kube-scheduler exits when it loses the Lease ("leaderelection lost"): a replica
        # that may have missed decisions of the new leader must not schedule again.
        self.lost_lease = True
        self.metrics.leader.labels(self.options.leader_election.resource_name).set(0)
        threading.Thread(target=self.stop, kwargs={"release": False}, daemon=True).start()

    def stop(self, *, release: bool = True, drain_timeout: float = 30.0) -> None:
        """Drain: stop cycles, finish in-flight binds, release the Lease, then post the
        queued Events and stop the informers.

        The Lease goes before the Events: a standby waits for it, and after a burst
        thousands of Events can be waiting (5,000 pods on 5,000 Nodes left 6 s of them
        on 2 cores), which would hold a rolling update's scheduling for that long."""
        with self._stopping:
            if self.state == "stopped":
                return
            self._set_state("draining")
            self.scheduler.stop_scheduling(drain_timeout=drain_timeout)
            if self._loop is not None:
                self._loop.join(5)
            if self.elector is not None:
                self.elector.stop(release=release and not self.lost_lease)
                self.metrics.leader.labels(self.options.leader_election.resource_name).set(0)
            self.scheduler.stop(drain_timeout=drain_timeout)
            self._set_state("stopped")
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
            self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until stopped; True if it stopped."""
        return self._stopped.wait(timeout)

    def run_until_signalled(self) -> int:
        """Run until SIGTERM or SIGINT, then drain; exit status 1 if the Lease was lost."""

        def handle(signum: int, _frame: object) -> None:
            log.info("signal received, draining", extra={"signal": signal.Signals(signum).name})
            threading.Thread(target=self.stop, name="shutdown", daemon=True).start()

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
        self.start()
        while not self._stopped.wait(0.5):
            pass
        return 1 if self.lost_lease else 0

    # -- health --------------------------------------------------------------------------

    def checks(self) -> dict[str, tuple[bool, str]]:
        """The named checks of ``/readyz`` (``/healthz`` uses ping and leaderElection)."""
        checks: dict[str, tuple[bool, str]] = {"ping": (True, "ok")}
        synced = self.scheduler.synced
        checks["informer-sync"] = (synced, "ok" if synced else "informers not synced")
        ready = self.state in ("standby", "leader")
        checks["state"] = (ready, self.state)
        healthy = True
        if self.elector is not None and self.elector.is_leader:
            limit = self.options.leader_election.lease_duration + LEADER_HEALTH_SLACK
            healthy = time.monotonic() - self.elector.last_renew <= limit
        checks["leaderElection"] = (healthy, "ok" if healthy else "lease not renewed")
        return checks


TEXT = "text/plain; charset=utf-8"


def _health_server(app: SchedulerApp, address: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        server_version = "topospread-scheduler"
        protocol_version = "HTTP/1.1"
        health_checks: ClassVar[tuple[str, ...]] = ("ping", "leaderElection")

        def do_GET(self) -> None:
            self._answer(send_body=True)

        def do_HEAD(self) -> None:
            self._answer(send_body=False)

        def _answer(self, *, send_body: bool) -> None:
            path, _, query = self.path.partition("?")
            if path == "/metrics":
                body = app.metrics.exposition()
                self._reply(200, body, "text/plain; version=0.0.4", send_body)
                return
            endpoint, _, single = path.strip("/").partition("/")
            if endpoint not in ("healthz", "livez", "readyz"):
                self._reply(404, b"404 page not found\n", TEXT, send_body)
                return
            checks = app.checks()
            names = self.health_checks if endpoint != "readyz" else tuple(checks)
            if single:
                # /readyz/<check>, as the apiserver's healthz handlers serve each check.
                if single not in names:
                    self._reply(404, b"404 page not found\n", TEXT, send_body)
                    return
                passed, detail = checks[single]
                answer = "ok" if passed else f"internal server error: {detail}\n"
                self._reply(200 if passed else 500, answer.encode(), TEXT, send_body)
                return
            ok = all(checks[n][0] for n in names)
            verbose = "verbose" in parse_qs(query, keep_blank_values=True)
            if ok and not verbose:
                self._reply(200, b"ok", TEXT, send_body)
                return
            # The apiserver's listing (a failed check's reason withheld unless verbose was
            # asked), then this scheduler's state; 500 when a check fails, as upstream.
            lines = []
            for name in names:
                passed, detail = checks[name]
                shown = detail if verbose else "reason withheld"
                lines.append(f"[+]{name} ok" if passed else f"[-]{name} failed: {shown}")
            verdict = "passed" if ok else "failed"
            lines += [f"state: {app.state}", f"{endpoint} check {verdict}", ""]
            self._reply(200 if ok else 500, "\n".join(lines).encode(), TEXT, send_body)

        def _reply(self, code: int, body: bytes, content_type: str, send_body: bool) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer((address, port), Handler)
    server.daemon_threads = True
    return server


def pid() -> int:
    """This process's id (for logs)."""
    return os.getpid()
