"""The API server's defaulting of a pod, and the pod strategy's ``PrepareForCreate``.

Two of the steps :func:`topospread.model.admission.admit_pod` takes, in its order:

* ``SetDefaults_Pod`` (``pkg/apis/core/v1/defaults.go``), which runs on every decode and
  is idempotent: with ``hostNetwork``, a container port without ``hostPort`` gets
  ``hostPort = containerPort`` (containers and init containers), which NodePorts then
  counts. (Container requests defaulted from limits are applied when decoding.)
* for a pod that has not been through an API server (no ``metadata.uid``: a manifest, a
  controller's new pod), after the mutating admission plugins, the pod registry strategy's
  ``PrepareForCreate`` (``pkg/registry/core/pod/strategy.go``) as far as scheduling reads
  it: ``DropDisabledPodFields`` (``bindMountOptions`` dropped: ``VolumeBindMountOptions``
  is off), ``mutatePodAffinity`` and ``mutateTopologySpreadConstraints`` (each
  ``matchLabelKeys`` key the pod has a label for appended to the term's or constraint's
  non-nil ``labelSelector`` as ``key In [value]``, each ``mismatchLabelKeys`` key as
  ``key NotIn [value]``), and ``DefaultPodLevelResources`` (pod-level requests of cpu and
  memory from the containers' aggregate requests, then of any supported resource from
  pod-level limits; hugepages limits from the containers' aggregate limits).

Upstream appends the merged expressions on every create; topospread skips an expression
the selector already has, which selects the same pods, so that a pod admitted twice (a
capture re-read, a file written from an earlier answer) is not changed again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction

from topospread.model.objects import (
    Affinity,
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from topospread.model.quantity import Quantity
from topospread.model.resources import pod_request_amounts

__all__ = ["default_pod", "prepare_for_create"]

_CPU, _MEMORY, _HUGEPAGES_PREFIX = "cpu", "memory", "hugepages-"


def default_pod(pod: Pod) -> Pod:
    """``SetDefaults_Pod``'s host-network ports: ``hostPort`` 0 becomes ``containerPort``."""
    if not pod.host_network:
        return pod
    containers = _host_network_ports(pod.containers)
    init_containers = _host_network_ports(pod.init_containers)
    if containers is pod.containers and init_containers is pod.init_containers:
        return pod
    return replace(pod, containers=containers, init_containers=init_containers)


def _host_network_ports(containers: tuple[Container, ...]) -> tuple[Container, ...]:
    if not any(p.host_port == 0 for c in containers for p in c.ports):
        return containers
    return tuple(
        replace(
            c,
            ports=tuple(
                replace(p, host_port=p.container_port) if p.host_port == 0 else p for p in c.ports
            ),
        )
        if any(p.host_port == 0 for p in c.ports)
        else c
        for c in containers
    )


def prepare_for_create(pod: Pod) -> Pod:
    """``PrepareForCreate``'s steps that change what the scheduler reads."""
    pod = _drop_disabled_fields(pod)
    pod = _merge_label_keys(pod)
    return _default_pod_level_resources(pod)


# -- DropDisabledPodFields ------------------------------------------------------------------------


def _drop_disabled_fields(pod: Pod) -> Pod:
    # VolumeBindMountOptions is off at v1.37.1 and a new pod has no old spec using it.
    if not pod.ephemeral_bind_mount_options and not any(
        c.bind_mount_options for c in (*pod.containers, *pod.init_containers)
    ):
        return pod
    return replace(
        pod,
        containers=tuple(replace(c, bind_mount_options=False) for c in pod.containers),
        init_containers=tuple(replace(c, bind_mount_options=False) for c in pod.init_containers),
        ephemeral_bind_mount_options=False,
    )


# -- mutatePodAffinity / mutateTopologySpreadConstraints ----------------------------------------


def _append(
    selector: LabelSelector, keys: Sequence[str], operator: str, labels: Mapping[str, str]
) -> LabelSelector:
    expressions = list(selector.match_expressions)
    for key in keys:
        if key not in labels:
            continue
        requirement = LabelSelectorRequirement(key, operator, (labels[key],))
        if requirement not in expressions:
            expressions.append(requirement)
    if len(expressions) == len(selector.match_expressions):
        return selector
    return replace(selector, match_expressions=tuple(expressions))


def _merge_term(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    # applyMatchLabelKeysAndMismatchLabelKeys: a nil selector matches nothing and stays nil.
    if (not term.match_label_keys and not term.mismatch_label_keys) or term.label_selector is None:
        return term
    selector = _append(term.label_selector, term.match_label_keys, "In", labels)
    selector = _append(selector, term.mismatch_label_keys, "NotIn", labels)
    return term if selector is term.label_selector else replace(term, label_selector=selector)


def _merge_weighted(
    term: WeightedPodAffinityTerm, labels: Mapping[str, str]
) -> WeightedPodAffinityTerm:
    merged = _merge_term(term.term, labels)
    return term if merged is term.term else replace(term, term=merged)


def _merge_affinity(affinity: Affinity, labels: Mapping[str, str]) -> Affinity:
    return replace(
        affinity,
        pod_affinity_required=tuple(_merge_term(t, labels) for t in affinity.pod_affinity_required),
        pod_affinity_preferred=tuple(
            _merge_weighted(t, labels) for t in affinity.pod_affinity_preferred
        ),
        pod_anti_affinity_required=tuple(
            _merge_term(t, labels) for t in affinity.pod_anti_affinity_required
        ),
        pod_anti_affinity_preferred=tuple(
            _merge_weighted(t, labels) for t in affinity.pod_anti_affinity_preferred
        ),
    )


def _merge_constraint(
    constraint: TopologySpreadConstraint, labels: Mapping[str, str]
) -> TopologySpreadConstraint:
    if not constraint.match_label_keys or constraint.label_selector is None:
        return constraint
    selector = _append(constraint.label_selector, constraint.match_label_keys, "In", labels)
    if selector is constraint.label_selector:
        return constraint
    return replace(constraint, label_selector=selector)


def _merge_label_keys(pod: Pod) -> Pod:
    labels = pod.metadata.labels
    constraints = tuple(_merge_constraint(c, labels) for c in pod.topology_spread_constraints)
    affinity = pod.affinity if pod.affinity is None else _merge_affinity(pod.affinity, labels)
    if constraints == pod.topology_spread_constraints and affinity == pod.affinity:
        return pod
    return replace(pod, topology_spread_constraints=constraints, affinity=affinity)


# -- DefaultPodLevelResources ----------------------------------------------------------------------


def _supported(name: str) -> bool:
    # resourcehelper.IsSupportedPodLevelResource.
    return name in (_CPU, _MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


def _default_pod_level_resources(pod: Pod) -> Pod:
    # pkg/api/pod/util.go DefaultPodLevelResources (PodLevelResources and
    # PodLevelResourcesFixDefaulting on): hugepage limits, then requests; the limits it
    # defaults for cpu and memory are not read by the scheduler.
    requests = dict(pod.pod_resources_requests or {})
    limits = dict(pod.pod_resources_limits or {})
    if not requests and not limits:
        return pod
    container_limits = pod_request_amounts(
        replace(
            pod,
            containers=tuple(replace(c, requests=c.limits) for c in pod.containers),
            init_containers=tuple(replace(c, requests=c.limits) for c in pod.init_containers),
        ),
        pod_level_resources=False,
        exclude_overhead=True,
    )
    for name, amount in container_limits.items():
        if name.startswith(_HUGEPAGES_PREFIX) and name not in requests and name not in limits:
            limits[name] = _quantity(amount)
    container_requests = pod_request_amounts(pod, pod_level_resources=False, exclude_overhead=True)
    for name, amount in container_requests.items():
        # Only overcommittable resources (cpu, memory) come from the containers.
        if name in (_CPU, _MEMORY) and name not in requests:
            requests[name] = _quantity(amount)
    for name, quantity in limits.items():
        if name not in requests and _supported(name):
            requests[name] = quantity
    new_requests = requests or pod.pod_resources_requests
    new_limits = limits or pod.pod_resources_limits
    if new_requests == pod.pod_resources_requests and new_limits == pod.pod_resources_limits:
        return pod
    return replace(pod, pod_resources_requests=new_requests, pod_resources_limits=new_limits)


def _quantity(amount: Fraction) -> Quantity:
    return Quantity(amount)
