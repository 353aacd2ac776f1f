"""Pod resource requests and node capacity as kube-scheduler counts them.

Mirrors ``k8s.io/component-helpers/resource.PodRequests`` and the scheduler's
``framework.Resource`` / ``PodInfo.CalculateResource`` at v1.37.1:

* regular containers are summed;
* init containers run one at a time, each beside the sidecars (init containers with
  ``restartPolicy: Always``) declared before it, so the init phase needs
  ``max_i(init_i + sum(sidecars before i))`` and, for a sidecar, the running sidecar total;
  sidecars also run beside the regular containers, so they are added to the sum; the
  pod needs the larger of the two phases, resource by resource;
* with the PodLevelResources gate (beta, on by default in 1.37) pod-level
  ``spec.resources.requests`` of cpu, memory and ``hugepages-*`` replace the aggregate;
* ``spec.overhead`` is added last;
* amounts are summed exactly and only then read as millicores (cpu) or base units
  (everything else), rounding up like ``Quantity.MilliValue``/``Value``.

Pod status (in-place resize, DRA node-allocatable claims) is not modelled, so the
status-based terms the scheduler takes the maximum with all equal the spec.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from topospread.model.objects import Container, Node, Pod
from topospread.model.quantity import Quantity

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "PodResource",
    "Resource",
    "ResourceVector",
    "is_extended_resource_name",
    "is_pod_level_requests_set",
    "is_scalar_resource_name",
    "node_allocatable",
    "pod_request_amounts",
    "pod_requests",
    "pod_resource",
    "requests_signature",
    "sum_pod_resources",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""CPU (millicores) assumed for a container without a cpu request, for scoring only."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Memory (bytes) assumed for a container without a memory request, for scoring only."""

_HUGEPAGES_PREFIX: Final = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_NATIVE_PREFIX: Final = "kubernetes.io/"
_REQUESTS_PREFIX: Final = "requests."
_SUBDOMAIN_RE: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_NAME_RE: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

Amounts = dict[str, Fraction]
"""Exact resource amounts by name, like a ``v1.ResourceList``."""


def _is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_PREFIX in name


def _is_qualified_name(name: str) -> bool:
    parts = name.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or _SUBDOMAIN_RE.fullmatch(prefix) is None:
            return False
    last = parts[-1]
    return 0 < len(last) <= 63 and _NAME_RE.fullmatch(last) is not None


def is_extended_resource_name(name: str) -> bool:
    """Whether ``name`` is an extended resource (``v1helper.IsExtendedResourceName``).

    It must be outside ``*kubernetes.io/``, not start with ``requests.``, and be a
    qualified name once prefixed with ``requests.``.
    """
    if _is_native(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return _is_qualified_name(_REQUESTS_PREFIX + name)


def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, ``kubernetes.io/``-prefixed or attachable-volumes resources."""
    return (
        is_extended_resource_name(name)
        or name.startswith(_HUGEPAGES_PREFIX)
        or _NATIVE_PREFIX in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


def _is_supported_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Whether ``spec.resources.requests`` names cpu, memory or a hugepages size."""
    requests = pod.pod_resources_requests
    return bool(requests) and any(_is_supported_pod_level_resource(n) for n in requests or ())


def _add(total: Amounts, extra: Mapping[str, Fraction]) -> None:
    for name, amount in extra.items():
        # A first amount is kept as it is: Fraction(0) + amount would build two Fractions.
        current = total.get(name)
        total[name] = amount if current is None else current + amount


def _max(total: Amounts, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def _container_requests(container: Container, non_missing: Mapping[str, Fraction]) -> Amounts:
    requests = {name: q.amount for name, q in container.requests.items()}
    # applyNonMissing: only requests absent from the container are filled in;
    # an explicit zero stays zero.
    for name, amount in non_missing.items():
        if name not in requests:
            requests[name] = amount
    return requests


def _aggregate_container_requests(pod: Pod, non_missing: Mapping[str, Fraction]) -> Amounts:
    result: Amounts = {}
    for container in pod.containers:
        _add(result, _container_requests(container, non_missing))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for container in pod.init_containers:
        requests = _container_requests(container, non_missing)
        if container.restart_policy == "Always":
            _add(result, requests)
            _add(sidecars, requests)
            phase = sidecars
        else:
            phase = dict(requests)
            _add(phase, sidecars)
        _max(init_peak, phase)
    _max(result, init_peak)
    return result


def pod_request_amounts(
    pod: Pod,
    *,
    pod_level_resources: bool = True,
    exclude_overhead: bool = False,
    non_missing: Mapping[str, Fraction] | None = None,
) -> Amounts:
    """Exact pod requests by resource name (``resource.PodRequests``).

    ``pod_level_resources`` is the PodLevelResources gate (``SkipPodLevelResources`` is
    its negation); ``non_missing`` fills requests a container leaves unset
    (``NonMissingContainerRequests``).
    """
    requests = _aggregate_container_requests(pod, non_missing or {})
    if pod_level_resources and is_pod_level_requests_set(pod):
        for name, quantity in (pod.pod_resources_requests or {}).items():
            if _is_supported_pod_level_resource(name):
                requests[name] = quantity.amount
    if not exclude_overhead and pod.overhead:
        _add(requests, {name: q.amount for name, q in pod.overhead.items()})
    return requests


def _milli(amount: Fraction) -> int:
    return math.ceil(amount * 1000)


def _base(amount: Fraction) -> int:
    return math.ceil(amount)


@dataclass(frozen=True, slots=True)
class Resource:
    """Resource amounts as the scheduler keeps them (``framework.Resource``).

    CPU is in millicores, the rest in base units (bytes, counts). ``scalar_resources``
    holds extended, hugepages, ``kubernetes.io/``-prefixed and attachable-volumes
    resources. Values are immutable: ``+`` and ``-`` return new ones, as NodeInfo's
    AddPod/RemovePod need.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_amounts(cls, amounts: Mapping[str, Fraction]) -> Resource:
        """Sum a resource list into a Resource (``NewResource`` / ``Resource.Add``).

        Names that are neither cpu, memory, pods, ephemeral-storage nor scalar are dropped.
        """
        milli_cpu = memory = ephemeral = pods = 0
        scalars: dict[str, int] = {}
        for name, amount in amounts.items():
            if name == CPU:
                milli_cpu += _milli(amount)
            elif name == MEMORY:
                memory += _base(amount)
            elif name == PODS:
                pods += _base(amount)
            elif name == EPHEMERAL_STORAGE:
                ephemeral += _base(amount)
            elif is_scalar_resource_name(name):
                scalars[name] = scalars.get(name, 0) + _base(amount)
        return cls(milli_cpu, memory, ephemeral, pods, scalars)

    @classmethod
    def from_list(cls, resources: Mapping[str, Quantity]) -> Resource:
        """A Resource from a ``ResourceList`` of quantities (``NewResource``)."""
        return cls.from_amounts({name: q.amount for name, q in resources.items()})

    @classmethod
    def max_of(cls, amounts: Mapping[str, Fraction]) -> Resource:
        """``SetMaxResource`` on an empty Resource: each value, floored at zero.

        Unlike :meth:`from_amounts` it ignores ``pods`` and keeps zero scalars, as the
        NodeResourcesFit PreFilter state does.
        """
        milli_cpu = memory = ephemeral = 0
        scalars: dict[str, int] = {}
        for name, amount in amounts.items():
            if name == MEMORY:
                memory = max(memory, _base(amount))
            elif name == CPU:
                milli_cpu = max(milli_cpu, _milli(amount))
            elif name == EPHEMERAL_STORAGE:
                ephemeral = max(ephemeral, _base(amount))
            elif is_scalar_resource_name(name):
                scalars[name] = max(scalars.get(name, 0), _base(amount))
        return cls(milli_cpu, memory, ephemeral, 0, scalars)

    def scalar(self, name: str) -> int:
        """A scalar resource's amount; 0 when absent."""
        return self.scalar_resources.get(name, 0)

    def add(self, other: Resource) -> Resource:
        """The sum of two Resources (NodeInfo AddPod); scalar keys are unioned."""
        scalars = dict(self.scalar_resources)
        for name, value in other.scalar_resources.items():
            scalars[name] = scalars.get(name, 0) + value
        return Resource(
            self.milli_cpu + other.milli_cpu,
            self.memory + other.memory,
            self.ephemeral_storage + other.ephemeral_storage,
            self.allowed_pod_number + other.allowed_pod_number,
            scalars,
        )

    def subtract(self, other: Resource) -> Resource:
        """The difference of two Resources (NodeInfo RemovePod); keys stay, possibly at 0."""
        scalars = dict(self.scalar_resources)
        for name, value in other.scalar_resources.items():
            scalars[name] = scalars.get(name, 0) - value
        return Resource(
            self.milli_cpu - other.milli_cpu,
            self.memory - other.memory,
            self.ephemeral_storage - other.ephemeral_storage,
            self.allowed_pod_number - other.allowed_pod_number,
            scalars,
        )

    def __add__(self, other: Resource) -> Resource:
        return self.add(other)

    def __sub__(self, other: Resource) -> Resource:
        return self.subtract(other)

    @property
    def is_zero(self) -> bool:
        """No cpu, memory, ephemeral storage and no scalar entries at all (even zero ones)."""
        return (
            self.milli_cpu == 0
            and self.memory == 0
            and self.ephemeral_storage == 0
            and not self.scalar_resources
        )


ResourceVector = Resource
"""The name the plugins use for a pod's requests; the same type as :class:`Resource`."""


@dataclass(frozen=True, slots=True)
class PodResource:
    """What an assigned pod adds to its node (``fwk.PodResource``).

    ``resource`` feeds ``NodeInfo.Requested``; ``non0_cpu``/``non0_mem`` feed
    ``NonZeroRequested``, where unset container requests count as 100m / 200Mi.
    """

    resource: Resource
    non0_cpu: int
    non0_mem: int


def requests_signature(pod: Pod) -> Hashable:
    """Everything :func:`pod_request_amounts` reads of a pod, as a value: pods with equal
    signatures (the replicas of one template) request exactly the same, so what is
    computed from the requests of one serves the others."""
    return (
        tuple([tuple(c.requests.items()) for c in pod.containers]),
        tuple([(c.restart_policy, tuple(c.requests.items())) for c in pod.init_containers]),
        tuple(pod.overhead.items()),
        None if pod.pod_resources_requests is None else tuple(pod.pod_resources_requests.items()),
    )


_BY_SIGNATURE_SIZE: Final = 4096
_by_signature: dict[tuple[str, Hashable, bool], object] = {}
"""Results per (function, :func:`requests_signature`, PodLevelResources gate); cleared
when full (a cluster has far fewer pod shapes than pods)."""


def _remember(key: tuple[str, Hashable, bool], value: object) -> None:
    if len(_by_signature) >= _BY_SIGNATURE_SIZE:
        _by_signature.clear()
    _by_signature[key] = value


def pod_requests(pod: Pod, *, pod_level_resources: bool = True) -> Resource:
    """The incoming pod's requests as NodeResourcesFit's PreFilter computes them.

    ``computePodResourceRequest``: ``PodRequests`` then ``SetMaxResource`` on an empty
    Resource (so negative amounts read as 0 and ``pods`` is ignored). Memoised per
    :func:`requests_signature`.
    """
    key = ("pod_requests", requests_signature(pod), pod_level_resources)
    hit = _by_signature.get(key)
    if isinstance(hit, Resource):
        return hit
    result = Resource.max_of(pod_request_amounts(pod, pod_level_resources=pod_level_resources))
    _remember(key, result)
    return result


def _non_missing_requests(requests: Mapping[str, Fraction], pod_level_set: bool) -> Amounts:
    # getNonMissingContainerRequests: without pod-level requests every container
    # gets the defaults; with them, only resources missing at both levels do.
    defaults = {
        CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
        MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
    }
    if not pod_level_set:
        return defaults
    return {name: amount for name, amount in defaults.items() if name not in requests}


# Large enough for every pod of a 150,000-pod cluster: explain and the simulator sum each
# node's pods per cycle, and a smaller LRU thrashes once the cluster outgrows it.
_CACHE_SIZE: Final = 1 << 18
_cache: OrderedDict[tuple[int, bool], tuple[Pod, PodResource]] = OrderedDict()


def pod_resource(pod: Pod, *, pod_level_resources: bool = True) -> PodResource:
    """What ``pod`` adds to its node's requested totals (``PodInfo.CalculateResource``).

    Memoised per pod object (by identity, holding the pod), like PodInfo's cache, and per
    :func:`requests_signature` (the same template's replicas, a pod and its assumed or
    bound copy).
    """
    key = (id(pod), pod_level_resources)
    hit = _cache.get(key)
    if hit is not None and hit[0] is pod:
        _cache.move_to_end(key)
        return hit[1]
    shape = ("pod_resource", requests_signature(pod), pod_level_resources)
    known = _by_signature.get(shape)
    if isinstance(known, PodResource):
        result = known
    else:
        result = _calculate_pod_resource(pod, pod_level_resources)
        _remember(shape, result)
    _cache[key] = (pod, result)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


def _calculate_pod_resource(pod: Pod, pod_level_resources: bool) -> PodResource:
    requests = pod_request_amounts(pod, pod_level_resources=pod_level_resources)
    pod_level_set = pod_level_resources and is_pod_level_requests_set(pod)
    non_missing = _non_missing_requests(requests, pod_level_set)
    non_zero = requests
    if non_missing:
        non_zero = pod_request_amounts(
            pod, pod_level_resources=pod_level_resources, non_missing=non_missing
        )
    return PodResource(
        Resource.from_amounts(requests),
        _milli(non_zero.get(CPU, Fraction(0))),
        _base(non_zero.get(MEMORY, Fraction(0))),
    )


def sum_pod_resources(
    pods: Iterable[Pod], *, pod_level_resources: bool = True
) -> tuple[Resource, Resource]:
    """``(requested, non_zero_requested)`` of a node's pods, as NodeInfo accumulates them.

    ``non_zero_requested`` carries only cpu and memory.
    """
    requested = Resource()
    non0_cpu = non0_mem = 0
    for pod in pods:
        res = pod_resource(pod, pod_level_resources=pod_level_resources)
        requested = requested.add(res.resource)
        non0_cpu += res.non0_cpu
        non0_mem += res.non0_mem
    return requested, Resource(milli_cpu=non0_cpu, memory=non0_mem)


def node_allocatable(node: Node) -> Resource:
    """The node's allocatable resources (``NewResource(node.Status.Allocatable)``).

    ``allowed_pod_number`` comes from allocatable ``pods``.
    """
    return Resource.from_list(node.allocatable)
