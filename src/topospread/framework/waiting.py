"""Pods waiting at Permit (``framework/runtime/waiting_pods_map.go``).

A Permit plugin may answer Wait with a timeout: the pod stays assumed on its node and
its binding cycle waits until every plugin that asked to wait has allowed it
(:meth:`WaitingPod.allow`, usually called by the plugin itself while another pod's cycle
runs, as a gang's last member lets the others go), or one rejects it
(:meth:`WaitingPod.reject`), or a plugin's wait times out (``rejected due to timeout
after waiting 10s at plugin X``). Plugins find waiting pods through
``Handle.waiting_pods`` (upstream's ``GetWaitingPod`` / ``IterateOverWaitingPods``).

The framework does no I/O and starts no timers: the scheduling loop arms each plugin's
timeout on its port's clock (threads for the live scheduler, the simulated clock for
``simulate``) and is told when the pod's wait is over (:meth:`WaitingPod.on_resolved`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from topospread.framework.status import Code, Status
from topospread.model.objects import Pod

__all__ = [
    "MAX_PERMIT_WAIT",
    "WaitingPod",
    "WaitingPods",
    "go_duration",
    "timeout_message",
    "waiting_key",
]

MAX_PERMIT_WAIT: Final = 15 * 60.0
"""``maxTimeout``: a plugin's Wait is cut to 15 minutes."""


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for the timeouts plugins give (``10s``, ``1m30s``,
    ``500ms``, ``1h0m0s``)."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _trim(nanos / size) + unit
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _trim(rest / 1e9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(value: float) -> str:
    return f"{value:.9f}".rstrip("0").rstrip(".")


def timeout_message(seconds: float, plugin: str) -> str:
    """Why a wait that timed out was rejected (``newWaitingPod``'s timer)."""
    return f"rejected due to timeout after waiting {go_duration(seconds)} at plugin {plugin}"


def waiting_key(pod: Pod) -> str:
    """How the waiting pods are keyed: the pod's uid (its key when it has none)."""
    return pod.metadata.uid or pod.key


class WaitingPod:
    """A pod waiting at Permit for the plugins that asked it to wait."""

    def __init__(self, pod: Pod, timeouts: Mapping[str, float]) -> None:
        self.pod = pod
        self.timeouts = {plugin: min(t, MAX_PERMIT_WAIT) for plugin, t in timeouts.items()}
        """Plugin -> how long it lets the pod wait (at most :data:`MAX_PERMIT_WAIT`)."""
        self._pending = set(self.timeouts)
        self._lock = threading.Lock()
        self._status: Status | None = None
        self._listeners: list[Callable[[Status], None]] = []

    def pending_plugins(self) -> list[str]:
        """The plugins that have not allowed the pod yet."""
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        """``Allow``: once the last waiting plugin allows, the wait succeeds."""
        with self._lock:
            self._pending.discard(plugin)
            if self._pending or self._status is not None:
                return
            self._status = Status(Code.SUCCESS)
        self._notify()

    def reject(self, plugin: str, message: str) -> None:
        """``Reject``: the wait ends Unschedulable, attributed to ``plugin``."""
        with self._lock:
            if self._status is not None:
                return
            self._status = Status(Code.UNSCHEDULABLE, (message,), plugin or None)
        self._notify()

    @property
    def status(self) -> Status | None:
        """How the wait ended; None while it goes on."""
        with self._lock:
            return self._status

    def on_resolved(self, listener: Callable[[Status], None]) -> None:
        """Call ``listener`` with the outcome once the wait is over (at once if it is)."""
        with self._lock:
            status = self._status
            if status is None:
                self._listeners.append(listener)
                return
        listener(status)

    def _notify(self) -> None:
        with self._lock:
            listeners, self._listeners = self._listeners, []
            status = self._status
        assert status is not None
        for listener in listeners:
            listener(status)


class WaitingPods:
    """Every pod waiting at Permit, by uid (``waitingPodsMap``), shared by the profiles."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        """A pod starts waiting."""
        with self._lock:
            self._pods[waiting_key(waiting.pod)] = waiting

    def remove(self, uid: str) -> None:
        """The pod's wait is over."""
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        """``GetWaitingPod``."""
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        """``IterateOverWaitingPods``."""
        with self._lock:
            pods = list(self._pods.values())
        return iter(pods)

    def reject(self, uid: str, plugin: str, message: str) -> bool:
        """``RejectWaitingPod``: True when such a pod was waiting."""
        waiting = self.get(uid)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True
