"""NodePorts: a pod fits a node only if none of its host ports is taken there.

Upstream ``pkg/scheduler/framework/plugins/nodeports`` and ``fwk.HostPortInfo``
(v1.37.1):

* A pod's host ports are the ports with ``hostPort > 0`` of its regular containers and
  of its sidecars (init containers with ``restartPolicy: Always``); ordinary init
  containers do not hold ports (``util.GetHostPorts``).
* PreFilter returns Skip when the pod has none, so Filter does not run.
* Ports in use on a node are those of the node's pods, as ``(hostIP, protocol, port)``
  with an empty hostIP read as ``0.0.0.0`` and an empty protocol as ``TCP``.
* A wanted port conflicts when the same protocol and port are in use on the same IP
  or on ``0.0.0.0``; a wanted port on ``0.0.0.0`` conflicts with that protocol and port
  on any IP. Different protocols never conflict.
* A conflict is Unschedulable ``node(s) didn't have free ports for the requested pod
  ports`` (preemption may free the port).

Not modelled: the Skip for deferred in-place resizes behind the alpha
InPlacePodVerticalScalingSchedulerPreemption gate.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from topospread.framework.cycle_state import CycleState, StateNotFoundError
from topospread.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from topospread.framework.features import Features
from topospread.framework.interfaces import (
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from topospread.framework.node_info import NodeInfo
from topospread.framework.status import Code, Status, as_status
from topospread.model.objects import ContainerPort, Pod
from topospread.plugins import names

__all__ = [
    "DEFAULT_BIND_ALL_HOST_IP",
    "ERR_REASON",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "HostPortInfo",
    "NodePorts",
    "fits_ports",
    "host_ports",
    "new",
]

NAME: Final = names.NODE_PORTS

PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
"""The Filter reason (Unschedulable)."""

DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"
"""The host IP meaning "every address" (``fwk.DefaultBindAllHostIP``)."""


def host_ports(pod: Pod) -> tuple[ContainerPort, ...]:
    """The pod's ports with a host port, sidecars first (``util.GetHostPorts``)."""
    ports: list[ContainerPort] = []
    for container in pod.init_containers:
        if container.restart_policy != "Always":
            continue
        ports.extend(p for p in container.ports if p.host_port > 0)
    for container in pod.containers:
        ports.extend(p for p in container.ports if p.host_port > 0)
    return tuple(ports)


def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
    return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP"


class HostPortInfo:
    """Host ports in use on a node: IP -> set of (protocol, port) (``fwk.HostPortInfo``)."""

    __slots__ = ("_by_ip",)

    def __init__(self, ports: Iterable[ContainerPort] = ()) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}
        for port in ports:
            self.add(port.host_ip, port.protocol, port.host_port)

    def add(self, ip: str, protocol: str, port: int) -> None:
        """Record a port in use; ports <= 0 are ignored."""
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        """Forget a port (``HostPortInfo.Remove``), even if another pod still holds it."""
        ip, protocol = _sanitize(ip, protocol)
        used = self._by_ip.get(ip)
        if used is not None:
            used.discard((protocol, port))
            if not used:
                del self._by_ip[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Whether ``(ip, protocol, port)`` collides with a port in use (``CheckConflict``)."""
        if port <= 0:
            return False
        ip, protocol = _sanitize(ip, protocol)
        wanted = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(wanted in used for used in self._by_ip.values())
        return any(wanted in self._by_ip.get(key, ()) for key in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def __len__(self) -> int:
        return sum(len(used) for used in self._by_ip.values())


def fits_ports(wanted: Sequence[ContainerPort], in_use: HostPortInfo) -> bool:
    """Whether none of the wanted ports conflicts (``fitsPorts``)."""
    return not any(in_use.check_conflict(p.host_ip, p.protocol, p.host_port) for p in wanted)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's host ports; unaffected by other pods."""

    ports: tuple[ContainerPort, ...]

    def clone(self) -> _PreFilterState:
        return self


_CACHE_SIZE: Final = 16384


class NodePorts:
    """Rejects nodes where one of the pod's host ports is already in use."""

    def __init__(self) -> None:
        # NodeInfo keeps no used ports: memoise them per NodeInfo and generation.
        self._used: OrderedDict[int, tuple[NodeInfo, int, HostPortInfo]] = OrderedDict()

    @property
    def name(self) -> str:
        """``NodePorts``."""
        return NAME

    def used_ports(self, node_info: NodeInfo) -> HostPortInfo:
        """The host ports the node's pods hold (``NodeInfo.UsedPorts``)."""
        key = id(node_info)
        hit = self._used.get(key)
        if hit is not None and hit[0] is node_info and hit[1] == node_info.generation:
            return hit[2]
        used = HostPortInfo(port for pod in node_info.pods for port in host_ports(pod))
        for ip, protocol, port in node_info.dropped_ports:
            used.remove(ip, protocol, port)
        self._used[key] = (node_info, node_info.generation, used)
        self._used.move_to_end(key)
        if len(self._used) > _CACHE_SIZE:
            self._used.popitem(last=False)
        return used

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` (``nodeports/node_ports.go``): pods' ports are immutable,
        so only deletions free them; a new node needs no hint."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_schedulable_after_assigned_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    def is_schedulable_after_assigned_pod_deleted(
        self, pod: Pod, old: object | None, new: object | None
    ) -> QueueingHint:
        """``isSchedulableAfterAssignedPodDeleted``: the deleted pod was placed or
        nominated and held a host port the pod wants."""
        if not isinstance(old, Pod):
            return QueueingHint.QUEUE
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        ports = host_ports(old)
        if not ports:
            return QueueingHint.QUEUE_SKIP
        if fits_ports(host_ports(pod), HostPortInfo(ports)):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Collect the pod's host ports; Skip when it has none."""
        ports = host_ports(pod)
        if not ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node if a wanted host port is in use there."""
        try:
            wanted = state.read(PRE_FILTER_STATE_KEY, _PreFilterState).ports
        except StateNotFoundError:
            return as_status(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        except TypeError as exc:
            return as_status(exc)
        if fits_ports(wanted, self.used_ports(node_info)):
            return None
        return Status(Code.UNSCHEDULABLE, (ERR_REASON,))


def new(args: object | None, handle: Handle, features: Features) -> NodePorts:
    """The plugin factory (``nodeports.New``); takes no args."""
    return NodePorts()


if TYPE_CHECKING:
    _pre_filter: PreFilterPlugin = NodePorts()
    _filter: FilterPlugin = NodePorts()
