"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

One implementation for every writer that must act alone: ``topospread scheduler`` (a
standby replica keeps a warm cache) and ``topospread rebalance --apply`` (a second process
waits). It follows ``k8s.io/client-go/tools/leaderelection/leaderelection.go`` (v0.37.1):

- ``tryAcquireOrRenew``: read the Lease (create it when missing); when it is held by
  someone else whose record has not changed for its ``leaseDurationSeconds`` *as observed
  on our own clock* (``isLeaseValid``: never by comparing the holder's timestamps with
  ours), take it, bumping ``leaseTransitions``; when held by us, renew it (``renewTime``,
  keeping ``acquireTime`` and ``leaseTransitions``). Writes carry the resourceVersion read,
  so two candidates cannot both win: the loser gets 409 Conflict and tries again at its
  next retry (optimistic concurrency, as ``LeaseLock.Update``).
- ``acquire``: ``tryAcquireOrRenew`` every ``retryPeriod`` with up to ``JitterFactor``
  (1.2) jitter (``wait.JitterUntil``) until it succeeds.
- ``renew``: every ``retryPeriod``, ``tryAcquireOrRenew`` polled every ``retryPeriod``
  until it succeeds or ``renewDeadline`` has passed since the last renewal
  (``wait.PollUntilContextTimeout``); on failure leadership is lost
  (``OnStoppedLeading``), and never regained by that elector.
- ``IsLeader``: the last observed record names us. :meth:`LeaderElector.leading` adds that
  the renew loop has not given up and that we renewed within ``renewDeadline``, so that a
  holder whose writes stall stops acting before anyone else may take over.
- ``release`` (``ReleaseOnCancel``): the holder empties ``holderIdentity`` with a
  one-second ``leaseDurationSeconds``, so a waiting candidate takes over at its next retry.
- ``NewLeaderElector``'s checks: leaseDuration > renewDeadline > retryPeriod × 1.2 > 0
  (:func:`check_timing`, in its words).
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from topospread.client.transport import Request, Response, Transport, raise_for_status
from topospread.errors import ClusterError

__all__ = [
    "JITTER_FACTOR",
    "LeaderElector",
    "LeaseRecord",
    "check_timing",
    "micro_time",
]

log = logging.getLogger("topospread.leaderelection")

JITTER_FACTOR: Final = 1.2
"""client-go's ``JitterFactor``: retries wait retryPeriod × (1 + up to 0.2)."""


_SECOND: list[tuple[int, str]] = [(-1, "")]
"""The last whole second :func:`micro_time` formatted (an Event each bind asks for one)."""


def micro_time(at: float | None = None) -> str:
    """``metav1.MicroTime`` in RFC 3339 with microseconds, UTC."""
    # As datetime.fromtimestamp rounds: the fraction to the nearest microsecond.
    fraction, whole = math.modf(time.time() if at is None else at)
    second, micros = int(whole), round(fraction * 1_000_000)
    if micros >= 1_000_000:
        second, micros = second + 1, micros - 1_000_000
    cached_second, prefix = _SECOND[0]
    if cached_second != second:
        prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _SECOND[0] = (second, prefix)
    return f"{prefix}.{micros:06d}Z"


def check_timing(lease_duration: float, renew_deadline: float, retry_period: float) -> str | None:
    """``NewLeaderElector``'s checks of the three durations; the first problem, in its words."""
    if lease_duration <= renew_deadline:
        return "leaseDuration must be greater than renewDeadline"
    if renew_deadline <= JITTER_FACTOR * retry_period:
        return "renewDeadline must be greater than retryPeriod*JitterFactor"
    for name, value in (
        ("leaseDuration", lease_duration),
        ("renewDeadline", renew_deadline),
        ("retryPeriod", retry_period),
    ):
        if value <= 0:
            return f"{name} must be greater than zero"
    return None


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The fields of a Lease's spec that leader election reads (``LeaderElectionRecord``)."""

    holder: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    transitions: int

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> LeaseRecord:
        return cls(
            str(spec.get("holderIdentity") or ""),
            int(spec.get("leaseDurationSeconds") or 0),
            str(spec.get("acquireTime") or ""),
            str(spec.get("renewTime") or ""),
            int(spec.get("leaseTransitions") or 0),
        )

    def spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.transitions,
        }


def _new_holding(told: LeaseRecord | None, seen: LeaseRecord) -> bool:
    # Another holder, or the same one after a new acquisition.
    return told is None or (told.holder, told.acquire_time) != (seen.holder, seen.acquire_time)


class LeaderElector:
    """Campaigns for one Lease; calls back on winning and losing.

    Two ways to run it: :meth:`start` campaigns and renews on a daemon thread (the
    scheduler: a standby keeps serving while it waits), or :meth:`acquire` blocks the
    caller until the Lease is ours and :meth:`start_renewing` keeps it on a daemon thread
    (``rebalance --apply``: nothing to do while another process holds it).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        on_started_leading: Callable[[], None] = lambda: None,
        on_stopped_leading: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transport = transport
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._clock = clock
        self._observed: LeaseRecord | None = None
        self._observed_at = 0.0
        self._resource_version = ""
        self._lock = threading.Lock()
        """One ``tryAcquireOrRenew`` at a time (the renew thread and :meth:`confirm`)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost = False
        self.is_leader = False
        self.last_renew = 0.0
        """When we last renewed (our clock), for the health check."""
        self.last_error: ClusterError | None = None
        """Why the last read or write of the Lease failed (None after a success or 409)."""
        self._window_end: float | None = None
        """The end of the renewal under way (our clock), bounding its requests."""
        self._raised: tuple[type[ClusterError], ...] = ()
        """The failures :meth:`acquire` raises to its caller, not logged here as well."""

    @property
    def lease(self) -> str:
        """``namespace/name``, for messages."""
        return f"{self.namespace}/{self.name}"

    @property
    def observed(self) -> LeaseRecord | None:
        """The Lease as last read or written by us."""
        return self._observed

    @property
    def _path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    # -- the two ways to run ----------------------------------------------------------------

    def start(self) -> None:
        """Campaign on a daemon thread until :meth:`stop`: acquire, then renew."""
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()

    def acquire(
        self,
        *,
        wait: bool = True,
        on_held: Callable[[LeaseRecord], None] = lambda _: None,
        fatal: tuple[type[ClusterError], ...] = (),
    ) -> bool:
        """Block until we hold the Lease (client-go ``acquire``); True when we do.

        ``wait=False`` tries once. ``on_held`` is told of each new holder seen while we
        wait (a new holder, or the same one after a takeover). A failure of a type in
        ``fatal`` (say, Forbidden) is raised instead of retried. False after :meth:`stop`.
        """
        told: LeaseRecord | None = None
        self._raised = fatal
        while not self._stop.is_set():
            if self.try_acquire_or_renew():
                self._became_leader()
                return True
            if self.last_error is not None and isinstance(self.last_error, fatal):
                raise self.last_error
            seen = self._observed
            held_by_other = seen is not None and seen.holder not in ("", self.identity)
            if held_by_other and seen is not None and _new_holding(told, seen):
                told = seen
                on_held(seen)
            if not wait:
                return False
            self._stop.wait(self.retry_period * (1 + (JITTER_FACTOR - 1) * random.random()))
        return False

    def start_renewing(self) -> None:
        """Renew the Lease we hold on a daemon thread until :meth:`stop` or until lost."""
        self._thread = threading.Thread(target=self._renew_loop, name="lease-renew", daemon=True)
        self._thread.start()

    def stop(self, *, release: bool = True) -> None:
        """Stop campaigning; a leader releases the Lease (``ReleaseOnCancel``)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.retry_period * 2 + 5)
        if release and self.is_leader:
            self.release()

    # -- whether we may act -----------------------------------------------------------------

    def leading(self) -> bool:
        """Whether we may act now, without a request: we became leader, the renew loop has
        not given up, the last record we observed names us (client-go ``IsLeader``) and we
        renewed within ``renewDeadline`` (on our clock; renewDeadline < leaseDuration, so no
        other candidate can have taken the Lease by expiry yet)."""
        observed = self._observed
        return (
            self.is_leader
            and not self._lost
            and observed is not None
            and observed.holder == self.identity
            and self._clock() - self.last_renew < self.renew_deadline
        )

    def confirm(self) -> bool:
        """Renew now and say whether we still lead: a check made just before an action
        that only the leader may take. A Lease written by another identity is seen here
        (its record names someone else); a failed write leaves :meth:`leading` to decide."""
        if not self.is_leader or self._lost:
            return False
        self.try_acquire_or_renew()
        return self.leading()

    def why_not_leading(self) -> str:
        """One line on why :meth:`leading` is False, for messages."""
        observed = self._observed
        if observed is not None and observed.holder and observed.holder != self.identity:
            return f"lost the Lease {self.lease}: it is now held by {observed.holder}"
        if observed is not None and observed.holder != self.identity:
            return f"lost the Lease {self.lease}: it was released"
        since = self._clock() - self.last_renew
        detail = f": {self.last_error}" if self.last_error is not None else ""
        return (
            f"could not renew the Lease {self.lease} for {since:.1f} s "
            f"(renewDeadline {self.renew_deadline:g} s){detail}"
        )

    # -- client-go's loops ------------------------------------------------------------------

    def _run(self) -> None:
        if not self.acquire():
            return
        self._renew_loop()

    def _became_leader(self) -> None:
        self.is_leader = True
        log.info("became leader", extra={"lease": self.lease, "identity": self.identity})
        self._on_started()

    def _renew_loop(self) -> None:
        # renew: every retryPeriod; give up after renewDeadline without success.
        while not self._stop.wait(self.retry_period):
            deadline = self.last_renew + self.renew_deadline
            renewed = False
            # Every request of the window ends by its deadline (client-go passes the
            # window's context to each call): a server that hangs instead of refusing
            # loses us the Lease on time rather than after the transport's read timeout.
            self._window_end = deadline
            try:
                while not self._stop.is_set() and self._clock() < deadline:
                    if self.try_acquire_or_renew():
                        renewed = True
                        break
                    self._stop.wait(min(self.retry_period, max(0.0, deadline - self._clock())))
            finally:
                self._window_end = None
            if self._stop.is_set():
                return
            if not renewed:
                self._lost = True
                self.is_leader = False
                log.error("leader election lost", extra={"lease": self.lease})
                self._on_stopped()
                return

    def _timeout(self) -> float:
        """How long a Lease request may take: what is left of the renewal window, else
        (acquiring, releasing) renewDeadline."""
        if self._window_end is None:
            return self.renew_deadline
        return max(self._window_end - self._clock(), 0.001)

    def try_acquire_or_renew(self) -> bool:
        """One ``tryAcquireOrRenew``: True when we hold the Lease after it."""
        with self._lock:
            return self._try_acquire_or_renew()

    def _try_acquire_or_renew(self) -> bool:
        now = time.time()
        try:
            response = self.transport.send(Request("GET", self._path, timeout=self._timeout()))
        except ClusterError as error:
            self.last_error = error
            log.warning("cannot read the lease: %s", error)
            return False
        mine = LeaseRecord(
            self.identity, int(self.lease_duration), micro_time(now), micro_time(now), 0
        )
        if response.status == 404:
            return self._write("POST", mine, None)
        if response.status != 200:
            self._failed(response, "get")
            return False
        lease = json.loads(response.data)
        spec = lease.get("spec") or {}
        record = LeaseRecord.from_spec(spec)
        self._resource_version = str(lease["metadata"].get("resourceVersion", ""))
        if record != self._observed:
            self._observed = record
            self._observed_at = self._clock()
        held_by_other = record.holder and record.holder != self.identity
        duration = record.lease_duration_seconds or self.lease_duration
        if held_by_other and self._observed_at + duration > self._clock():
            self.last_error = None
            return False
        if record.holder == self.identity:
            mine = LeaseRecord(
                self.identity,
                int(self.lease_duration),
                record.acquire_time,
                micro_time(now),
                record.transitions,
            )
        else:
            mine = LeaseRecord(
                self.identity,
                int(self.lease_duration),
                micro_time(now),
                micro_time(now),
                record.transitions + 1,
            )
        return self._write("PUT", mine, lease)

    def _failed(self, response: Response, verb: str) -> None:
        server = str(getattr(self.transport, "server", "the API server"))
        try:
            raise_for_status(
                response,
                server,
                verb=verb,
                resource="leases",
                group="coordination.k8s.io",
                namespace=self.namespace,
            )
        except ClusterError as error:
            self.last_error = error
            if not isinstance(error, self._raised):  # else the caller reports it, once
                log.warning("lease %s: %s", verb, error)

    def _write(self, method: str, record: LeaseRecord, lease: dict[str, Any] | None) -> bool:
        body: dict[str, Any] = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.spec(),
        }
        if lease is not None:
            body["metadata"]["resourceVersion"] = self._resource_version
        path = self._path if method == "PUT" else self._path.rsplit("/", 1)[0]
        try:
            response = self.transport.send(
                Request(method, path, body=json.dumps(body).encode(), timeout=self._timeout())
            )
        except ClusterError as error:
            self.last_error = error
            log.warning("cannot write the lease: %s", error)
            return False
        if response.status not in (200, 201):
            if response.status == 409:
                # Someone wrote the Lease since we read it: read again at the next retry.
                self.last_error = None
            else:
                self._failed(response, "update" if method == "PUT" else "create")
            return False
        self.last_error = None
        self._observed = record
        self._observed_at = self._clock()
        self.last_renew = self._clock()
        return True

    def release(self) -> bool:
        """Give the lease up: no holder, a one-second duration (client-go ``release``)."""
        if self._observed is None or self._observed.holder != self.identity:
            return False
        now = micro_time()
        record = LeaseRecord("", 1, now, now, self._observed.transitions)
        with self._lock:
            try:
                response = self.transport.send(Request("GET", self._path, timeout=self._timeout()))
                if response.status != 200:
                    return False
                lease = json.loads(response.data)
                self._resource_version = str(lease["metadata"].get("resourceVersion", ""))
                if LeaseRecord.from_spec(lease.get("spec") or {}).holder != self.identity:
                    return False
            except ClusterError:
                return False
            released = self._write("PUT", record, lease)
        if released:
            self.is_leader = False
            log.info("released the lease", extra={"lease": self.lease})
        return released
