"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

``tryAcquireOrRenew``: read the Lease (create it when missing); when it is held by someone
else whose record has not changed for ``leaseDuration`` *as observed on our own clock*
(never by comparing the holder's timestamps with ours), take it, bumping
``leaseTransitions``; when held by us, renew it. Writes carry the read resourceVersion,
so two candidates cannot both win (the loser gets 409). The leader renews every
``retryPeriod`` and gives up when it could not renew for ``renewDeadline``; a candidate
retries every ``retryPeriod`` (with up to 20 % jitter). ``release`` on shutdown empties
the holder with a one-second lease, so a standby takes over at its next retry.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from topospread.client.transport import Request, Transport
from topospread.errors import ClusterError

__all__ = ["LeaderElector", "LeaseRecord", "micro_time"]

log = logging.getLogger("topospread.scheduler.leader")


def micro_time(at: float | None = None) -> str:
    """``metav1.MicroTime`` in RFC 3339 with microseconds, UTC."""
    moment = datetime.fromtimestamp(time.time() if at is None else at, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The fields of a Lease's spec that leader election reads."""

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


class LeaderElector:
    """Campaigns for one Lease on its own thread; calls back on winning and losing."""

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
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
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
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.is_leader = False
        self.last_renew = 0.0
        """When we last renewed (our clock), for the health check."""

    @property
    def _path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def start(self) -> None:
        """Campaign on a daemon thread until :meth:`stop`."""
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()

    def stop(self, *, release: bool = True) -> None:
        """Stop campaigning; a leader releases the Lease (``ReleaseOnCancel``)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.retry_period * 2 + 5)
        if release and self.is_leader:
            self.release()

    def _run(self) -> None:
        # acquire: retry until we hold the lease.
        while not self._stop.is_set():
            if self._try_acquire_or_renew():
                break
            self._stop.wait(self.retry_period * (1 + 0.2 * random.random()))
        if self._stop.is_set():
            return
        self.is_leader = True
        log.info(
            "became leader",
            extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity},
        )
        self._on_started()
        # renew: every retryPeriod; give up after renewDeadline without success.
        while not self._stop.wait(self.retry_period):
            deadline = self.last_renew + self.renew_deadline
            renewed = False
            while not self._stop.is_set() and self._clock() < deadline:
                if self._try_acquire_or_renew():
                    renewed = True
                    break
                self._stop.wait(min(self.retry_period / 2, max(0.0, deadline - self._clock())))
            if self._stop.is_set():
                return
            if not renewed:
                self.is_leader = False
                log.error("leader election lost", extra={"lease": f"{self.namespace}/{self.name}"})
                self._on_stopped()
                return

    def _try_acquire_or_renew(self) -> bool:
        now = time.time()
        try:
            response = self.transport.send(Request("GET", self._path))
        except ClusterError as error:
            log.warning("cannot read the lease: %s", error)
            return False
        mine = LeaseRecord(
            self.identity, int(self.lease_duration), micro_time(now), micro_time(now), 0
        )
        if response.status == 404:
            return self._write("POST", mine, None)
        if response.status != 200:
            log.warning("cannot read the lease: HTTP %s", response.status)
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
            response = self.transport.send(Request(method, path, body=json.dumps(body).encode()))
        except ClusterError as error:
            log.warning("cannot write the lease: %s", error)
            return False
        if response.status not in (200, 201):
            if response.status != 409:
                log.warning(
                    "cannot write the lease: HTTP %s %s",
                    response.status,
                    response.data[:200].decode(errors="replace"),
                )
            return False
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
        try:
            response = self.transport.send(Request("GET", self._path))
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
            log.info("released the lease", extra={"lease": f"{self.namespace}/{self.name}"})
        return released
