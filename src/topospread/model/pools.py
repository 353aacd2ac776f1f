"""Node pools that an autoscaler grows and shrinks: what topospread needs to know of them.

The third known limitation of topology spread (the seeds): the scheduler learns domains
only from existing nodes, so a zone whose node pool is at zero is not a domain until a node
exists there. An autoscaler that knows its pools can add it. A :class:`NodePool` is what a
Cluster Autoscaler node group or a Karpenter NodePool is to topospread: the nodes it could
add (one template Node per shape: zone, instance type, capacity type), how many it may
have, and how long a new node takes.

Two ways to describe pools, both pure here (the files are read by :mod:`topospread.io`):

* **Template Nodes** (any autoscaler): an ordinary Node annotated
  ``autoscaling.topospread.dev/pool: NAME`` and ``min-size`` / ``max-size`` (optional
  ``provision-delay`` in seconds, ``priority`` for the priority expander). Several templates
  with one pool name are the shapes of one pool (a node group spanning zones); its
  ``min-size``/``max-size`` are the pool's, and must agree. Existing nodes belong to a pool
  when they carry the label ``autoscaling.topospread.dev/pool`` (or Karpenter's
  ``karpenter.sh/nodepool``) with its name.
* **Karpenter NodePools** (``karpenter.sh/v1``) with instance types (the KWOK provider's
  ``instance_types.json`` shape): one template per instance type, zone and capacity type
  its offerings allow and the NodePool's requirements admit, labelled and tainted as
  Karpenter's KWOK provider labels the Node it creates; ``spec.limits`` bound the pool's
  total resources, ``spec.weight`` orders pools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from topospread.errors import FieldError, InputError
from topospread.model.objects import (
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeSelectorRequirement,
    ObjectMeta,
    ResourceList,
    Taint,
)
from topospread.model.quantity import Quantity, QuantityError, parse_quantity

__all__ = [
    "ANNOTATION_MAX_SIZE",
    "ANNOTATION_MIN_SIZE",
    "ANNOTATION_POOL",
    "ANNOTATION_PRIORITY",
    "ANNOTATION_PROVISION_DELAY",
    "CA_STATUS_NAME",
    "CA_STATUS_NAMESPACE",
    "GROUP_LABELS",
    "KARPENTER_API_VERSION",
    "LABEL_CAPACITY_TYPE",
    "LABEL_INSTANCE_TYPE",
    "LABEL_NODEPOOL",
    "LABEL_POOL",
    "InstanceType",
    "NodePool",
    "cluster_autoscaler_pools",
    "decode_instance_types",
    "is_pool_template",
    "karpenter_pools",
    "pool_of_node",
    "template_pools",
]

ANNOTATION_POOL: Final = "autoscaling.topospread.dev/pool"
ANNOTATION_MIN_SIZE: Final = "autoscaling.topospread.dev/min-size"
ANNOTATION_MAX_SIZE: Final = "autoscaling.topospread.dev/max-size"
ANNOTATION_PROVISION_DELAY: Final = "autoscaling.topospread.dev/provision-delay"
ANNOTATION_PRIORITY: Final = "autoscaling.topospread.dev/priority"
LABEL_POOL: Final = "autoscaling.topospread.dev/pool"
_ANNOTATION_PREFIX: Final = "autoscaling.topospread.dev/"
_ANNOTATIONS: Final = (
    ANNOTATION_MAX_SIZE,
    ANNOTATION_MIN_SIZE,
    ANNOTATION_POOL,
    ANNOTATION_PRIORITY,
    ANNOTATION_PROVISION_DELAY,
)
LABEL_NODEPOOL: Final = "karpenter.sh/nodepool"
LABEL_CAPACITY_TYPE: Final = "karpenter.sh/capacity-type"
LABEL_INSTANCE_TYPE: Final = "node.kubernetes.io/instance-type"
LABEL_ARCH: Final = "kubernetes.io/arch"
LABEL_OS: Final = "kubernetes.io/os"
KARPENTER_API_VERSION: Final = "karpenter.sh/v1"
DEFAULT_PROVISION_DELAY: Final = 60
"""Seconds from the decision to a Ready node when a template does not say (a cloud VM)."""

# Karpenter's KWOK provider reserves this much of every instance type for the kubelet
# (kwok/cloudprovider/helpers.go: InstanceTypeOverhead.KubeReserved).
_KUBE_RESERVED: Final = {"cpu": Fraction(1, 10), "memory": Fraction(10 * 2**20)}
# Karpenter's scheduling.Requirement operators (NodeSelectorRequirement's, with Gt/Lt).
_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
_INSTANCE_NAME: Final = re.compile(r"(?P<family>[a-z]+)-(?P<size>\d+x)-")


@dataclass(frozen=True, slots=True)
class NodePool:
    """A node group or NodePool: the nodes an autoscaler may add, and its bounds."""

    name: str
    templates: tuple[Node, ...]
    """One Node per shape a new node may have (zone, instance type, capacity type), in
    the order the autoscaler prefers them (cheapest first for Karpenter)."""
    min_size: int = 0
    max_size: int | None = None
    """None: bounded only by ``limits`` (Karpenter NodePools have no node count)."""
    source: str = "template"
    """``template`` (annotated Nodes) or ``karpenter`` (a NodePool)."""
    provision_delay: int = DEFAULT_PROVISION_DELAY
    priority: int = 0
    """Higher first: the priority expander's order, or a Karpenter NodePool's weight."""
    limits: ResourceList = field(default_factory=dict)
    """Karpenter ``spec.limits``: the most the pool's nodes may have in total."""
    prices: tuple[float, ...] = ()
    """Per template, the offering's price (Karpenter picks the cheapest that fits)."""

    @property
    def zones(self) -> tuple[str, ...]:
        """The zones its templates are in, in template order."""
        return tuple(
            dict.fromkeys(
                t.labels[LABEL_TOPOLOGY_ZONE]
                for t in self.templates
                if LABEL_TOPOLOGY_ZONE in t.labels
            )
        )


def is_pool_template(node: Node) -> bool:
    """Whether a Node in the inputs is a pool's template rather than a node of the cluster."""
    return ANNOTATION_POOL in node.metadata.annotations


def pool_of_node(node: Node) -> str | None:
    """The pool an existing node belongs to, from its labels."""
    return node.labels.get(LABEL_POOL) or node.labels.get(LABEL_NODEPOOL)


def _size(template: Node, annotation: str, errors: list[FieldError | str]) -> int | None:
    raw = template.metadata.annotations.get(annotation)
    if raw is None:
        return None
    if not re.fullmatch(r"\d{1,9}", raw.strip()):
        errors.append(
            FieldError.invalid(
                f"metadata.annotations[{annotation}]", raw, "must be a non-negative integer"
            )
        )
        return None
    return int(raw)


def template_pools(templates: Sequence[Node], source: str) -> tuple[NodePool, ...]:
    """Pools from annotated template Nodes (see the module docstring); one
    :class:`InputError` naming ``source`` lists every problem."""
    errors: list[FieldError | str] = []
    by_name: dict[str, list[Node]] = {}
    bounds: dict[str, tuple[int, int | None, int, int]] = {}
    for template in templates:
        name = template.metadata.annotations.get(ANNOTATION_POOL, "").strip()
        where = f"Node {template.name}"
        if not name:
            errors.append(f"{where}: metadata.annotations[{ANNOTATION_POOL}]: Required value")
            continue
        # An annotation of this prefix that is none of ours is a misspelling (max_size,
        # maxsize): read as absent, it would quietly leave the pool unbounded.
        problems: list[FieldError | str] = [
            FieldError.not_supported("metadata.annotations", key, _ANNOTATIONS)
            for key in template.metadata.annotations
            if key.startswith(_ANNOTATION_PREFIX) and key not in _ANNOTATIONS
        ]
        minimum = _size(template, ANNOTATION_MIN_SIZE, problems)
        maximum = _size(template, ANNOTATION_MAX_SIZE, problems)
        delay = _size(template, ANNOTATION_PROVISION_DELAY, problems)
        priority_text = template.metadata.annotations.get(ANNOTATION_PRIORITY, "0").strip()
        if not re.fullmatch(r"-?\d{1,9}", priority_text):
            problems.append(
                FieldError.invalid(
                    f"metadata.annotations[{ANNOTATION_PRIORITY}]",
                    priority_text,
                    "must be an integer",
                )
            )
            priority_text = "0"
        if minimum is not None and maximum is not None and maximum < minimum:
            problems.append(
                FieldError.invalid(
                    f"metadata.annotations[{ANNOTATION_MAX_SIZE}]",
                    maximum,
                    f"must be greater than or equal to min-size ({minimum})",
                )
            )
        if not template.allocatable or not any(
            q.amount > 0 for k, q in template.allocatable.items() if k in ("cpu", "memory", "pods")
        ):
            problems.append(
                f"status.allocatable: Required value: pool {name!r} has no usable template "
                "(a new node's allocatable cpu, memory and pods come from it)"
            )
        errors.extend(f"{where}: {p}" for p in problems)
        if problems:
            continue
        # No max-size: the pool is bounded by nothing topospread knows of.
        settled = (minimum or 0, maximum, delay if delay is not None else DEFAULT_PROVISION_DELAY,
                   int(priority_text))  # fmt: skip
        previous = bounds.setdefault(name, settled)
        if previous[:2] != settled[:2]:
            errors.append(
                f"{where}: pool {name!r} has min-size/max-size {settled[0]}/{settled[1]} here "
                f"but {previous[0]}/{previous[1]} on an earlier template"
            )
            continue
        by_name.setdefault(name, []).append(_as_template(template, name))
    if errors:
        raise InputError(source, errors)
    return tuple(
        NodePool(
            name,
            tuple(nodes),
            min_size=bounds[name][0],
            max_size=bounds[name][1],
            provision_delay=bounds[name][2],
            priority=bounds[name][3],
        )
        for name, nodes in by_name.items()
    )


def _as_template(node: Node, pool: str) -> Node:
    # The pool's label marks every node made from it (pool_of_node).
    labels = {**node.labels, LABEL_POOL: pool}
    return replace(node, metadata=replace(node.metadata, labels=labels))


# -- Karpenter -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Offering:
    """An instance type's offering: a zone and capacity type at a price."""

    zone: str
    capacity_type: str
    price: float
    available: bool = True


@dataclass(frozen=True, slots=True)
class InstanceType:
    """An instance type of the KWOK provider's ``instance_types.json``."""

    name: str
    architecture: str
    operating_systems: tuple[str, ...]
    capacity: ResourceList
    offerings: tuple[Offering, ...]

    @property
    def allocatable(self) -> dict[str, Quantity]:
        """Capacity less the provider's kube-reserved (100m cpu, 10Mi memory)."""
        out = dict(self.capacity)
        for name, reserved in _KUBE_RESERVED.items():
            if name in out:
                out[name] = Quantity(
                    max(Fraction(0), out[name].amount - reserved), out[name].format
                )
        return out


def decode_instance_types(data: Any, source: str) -> tuple[InstanceType, ...]:
    """The KWOK provider's instance types (a JSON array of ``name``, ``architecture``,
    ``operatingSystems``, ``resources``, ``offerings[].{Price, Available, Requirements}``)."""
    if not isinstance(data, list):
        raise InputError(source, ["expected a JSON array of instance types"])
    errors: list[FieldError | str] = []
    out: list[InstanceType] = []
    for index, item in enumerate(data):
        where = f"[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            errors.append(f"{where}.name: Required value")
            continue
        resources: dict[str, Quantity] = {}
        for key, raw in (item.get("resources") or {}).items():
            try:
                resources[str(key)] = parse_quantity(str(raw), str(key))
            except QuantityError as exc:
                errors.append(FieldError.invalid(f"{where}.resources[{key}]", raw, str(exc)))
        offerings: list[Offering] = []
        for number, offering in enumerate(item.get("offerings") or []):
            values: dict[str, str] = {}
            for requirement in offering.get("Requirements") or []:
                if requirement.get("operator") == "In" and requirement.get("values"):
                    values[str(requirement.get("key"))] = str(requirement["values"][0])
            zone, capacity = values.get(LABEL_TOPOLOGY_ZONE), values.get(LABEL_CAPACITY_TYPE)
            if zone is None or capacity is None:
                errors.append(
                    f"{where}.offerings[{number}].Requirements: a zone and a capacity type "
                    "are required"
                )
                continue
            offerings.append(
                Offering(zone, capacity, float(offering.get("Price", 0.0)),
                         bool(offering.get("Available", True)))
            )  # fmt: skip
        out.append(
            InstanceType(
                item["name"],
                str(item.get("architecture", "")),
                tuple(str(o) for o in item.get("operatingSystems") or ()),
                resources,
                tuple(offerings),
            )
        )
    if errors:
        raise InputError(source, errors)
    return tuple(out)


def _requirements(
    raw: Any, where: str, errors: list[FieldError | str]
) -> tuple[NodeSelectorRequirement, ...]:
    out: list[NodeSelectorRequirement] = []
    for index, requirement in enumerate(raw or []):
        path = f"{where}[{index}]"
        if not isinstance(requirement, dict):
            errors.append(f"{path}: expected an object")
            continue
        operator = requirement.get("operator")
        if operator not in _OPERATORS:
            errors.append(
                FieldError.not_supported(f"{path}.operator", operator, sorted(_OPERATORS))
            )
            continue
        values = tuple(str(v) for v in requirement.get("values") or ())
        out.append(NodeSelectorRequirement(str(requirement.get("key", "")), operator, values))
    return tuple(out)


def _admits(requirements: Iterable[NodeSelectorRequirement], labels: Mapping[str, str]) -> bool:
    for r in requirements:
        value = labels.get(r.key)
        if r.operator == "In" and value not in r.values:
            return False
        if r.operator == "NotIn" and value in r.values:
            return False
        if r.operator == "Exists" and value is None:
            return False
        if r.operator == "DoesNotExist" and value is not None:
            return False
        if r.operator in ("Gt", "Lt"):
            if value is None or not value.lstrip("-").isdigit() or not r.values:
                return False
            bound = int(r.values[0])
            if (r.operator == "Gt" and int(value) <= bound) or (
                r.operator == "Lt" and int(value) >= bound
            ):
                return False
    return True


def karpenter_pools(
    nodepools: Sequence[Mapping[str, Any]], instance_types: Sequence[InstanceType], source: str
) -> tuple[NodePool, ...]:
    """Pools from ``karpenter.sh/v1`` NodePools: a template per instance type, zone and
    capacity type that an available offering has and the NodePool's requirements (and its
    template's labels) admit, cheapest first; ``spec.limits`` and ``spec.weight`` kept."""
    errors: list[FieldError | str] = []
    pools: list[NodePool] = []
    for doc in nodepools:
        meta = doc.get("metadata") or {}
        name = str(meta.get("name", ""))
        where = f"NodePool {name}"
        spec = doc.get("spec") or {}
        template = spec.get("template") or {}
        template_meta = template.get("metadata") or {}
        template_spec = template.get("spec") or {}
        problems: list[FieldError | str] = []
        requirements = _requirements(
            template_spec.get("requirements"), "spec.template.spec.requirements", problems
        )
        taints = tuple(
            Taint(str(t.get("key", "")), str(t.get("effect", "")), str(t.get("value", "")))
            for t in template_spec.get("taints") or ()
            if isinstance(t, dict)
        )
        labels = {str(k): str(v) for k, v in (template_meta.get("labels") or {}).items()}
        limits: dict[str, Quantity] = {}
        for key, raw in (spec.get("limits") or {}).items():
            try:
                limits[str(key)] = parse_quantity(str(raw), str(key))
            except QuantityError as exc:
                problems.append(FieldError.invalid(f"spec.limits[{key}]", raw, str(exc)))
        weight = spec.get("weight", 0)
        if not isinstance(weight, int) or isinstance(weight, bool):
            problems.append(FieldError.invalid("spec.weight", weight, "must be an integer"))
            weight = 0
        if not instance_types and not problems:
            problems.append(
                "no instance types: give --instance-types (the KWOK provider's instance_types.json)"
            )
        shapes: list[tuple[float, Node]] = []
        for itype in instance_types:
            for offering in itype.offerings:
                if not offering.available:
                    continue
                node_labels = {
                    **labels,
                    LABEL_NODEPOOL: name,
                    LABEL_INSTANCE_TYPE: itype.name,
                    LABEL_ARCH: itype.architecture,
                    LABEL_OS: itype.operating_systems[0] if itype.operating_systems else "linux",
                    LABEL_TOPOLOGY_ZONE: offering.zone,
                    LABEL_CAPACITY_TYPE: offering.capacity_type,
                    **_kwok_instance_labels(itype),
                }
                if not _admits(requirements, node_labels):
                    continue
                shapes.append(
                    (
                        offering.price,
                        Node(
                            ObjectMeta(f"{name}-{itype.name}-{offering.zone}-{offering.capacity_type}",
                                       labels=node_labels),
                            taints=taints,
                            allocatable=itype.allocatable,
                        ),
                    )
                )  # fmt: skip
        if not shapes and not problems:
            problems.append(
                "no instance type offering is admitted by spec.template.spec.requirements: "
                "the pool can add no node"
            )
        errors.extend(f"{where}: {p}" for p in problems)
        if problems:
            continue
        shapes.sort(key=lambda s: s[0])
        pools.append(
            NodePool(
                name,
                tuple(node for _, node in shapes),
                source="karpenter",
                provision_delay=5,
                priority=weight,
                limits=limits,
                prices=tuple(price for price, _ in shapes),
            )
        )
    if errors:
        raise InputError(source, errors)
    # Karpenter tries NodePools by weight, highest first (then by name).
    pools.sort(key=lambda p: (-p.priority, p.name))
    return tuple(pools)


def _kwok_instance_labels(itype: InstanceType) -> dict[str, str]:
    # karpenter.kwok.sh/instance-{family,size,cpu,memory}, as the provider labels nodes.
    match = _INSTANCE_NAME.match(itype.name)
    labels = {}
    if match:
        labels["karpenter.kwok.sh/instance-family"] = match["family"]
        labels["karpenter.kwok.sh/instance-size"] = match["size"]
    cpu = itype.capacity.get("cpu")
    if cpu is not None:
        labels["karpenter.kwok.sh/instance-cpu"] = str(cpu.value())
    memory = itype.capacity.get("memory")
    if memory is not None:
        labels["karpenter.kwok.sh/instance-memory"] = str(memory.value() // 2**20)
    return labels


# -- Cluster Autoscaler -------------------------------------------------------------------------

CA_STATUS_NAMESPACE: Final = "kube-system"
CA_STATUS_NAME: Final = "cluster-autoscaler-status"
"""The ConfigMap Cluster Autoscaler writes its status to (``--write-status-configmap``,
``--status-config-map-name``), data key ``status``: YAML of ``ClusterAutoscalerStatus``
(``clusterstate/api/types.go``): ``nodeGroups[].name`` and ``.health.{minSize, maxSize,
cloudProviderTarget, nodeCounts.registered.total}``."""

# Node labels that name a node's group, by provider (the group's name is their value):
# topospread's own, Karpenter's, EKS managed groups, eksctl, GKE, AKS, kops.
GROUP_LABELS: Final = (
    LABEL_POOL,
    LABEL_NODEPOOL,
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "kops.k8s.io/instancegroup",
)


def _group_of(node: Node) -> set[str]:
    return {node.labels[k] for k in GROUP_LABELS if k in node.labels}


def cluster_autoscaler_pools(
    status: Any, nodes: Sequence[Node], templates: Sequence[NodePool], source: str
) -> tuple[NodePool, ...]:
    """Node groups from Cluster Autoscaler's status (the parsed ``status`` YAML): min and
    max sizes from it; templates from ``templates`` (pools of annotated Nodes) by name, else
    from the group's existing nodes (a node belongs to the group a label of
    :data:`GROUP_LABELS` names). A group at zero nodes without a template is refused: its
    nodes' labels, taints and allocatable are unknown."""
    if not isinstance(status, dict) or not isinstance(status.get("nodeGroups"), list):
        raise InputError(
            source, message="not a Cluster Autoscaler status: no nodeGroups (is it v1.30 or newer?)"
        )
    given = {p.name: p for p in templates}
    errors: list[FieldError | str] = []
    pools: list[NodePool] = []
    for index, group in enumerate(status["nodeGroups"]):
        where = f"nodeGroups[{index}]"
        if not isinstance(group, dict) or not isinstance(group.get("name"), str):
            errors.append(f"{where}.name: Required value")
            continue
        name = group["name"]
        health = group.get("health") or {}
        sizes = {}
        for key in ("minSize", "maxSize"):
            value = health.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                errors.append(
                    FieldError.invalid(
                        f"{where}.health.{key}", value, "must be a non-negative integer"
                    )
                )
            sizes[key] = value if isinstance(value, int) else 0
        if sizes["maxSize"] < sizes["minSize"]:
            errors.append(
                FieldError.invalid(
                    f"{where}.health.maxSize", sizes["maxSize"],
                    f"must be greater than or equal to minSize ({sizes['minSize']})",
                )
            )  # fmt: skip
        members = [n for n in nodes if name in _group_of(n)]
        if name in given:
            shapes = given[name].templates
        elif members:
            shapes = (_from_member(members[0], name),)
        else:
            errors.append(
                f"node group {name!r} is at zero nodes and has no template: give one in "
                f"--node-pools (a Node annotated {ANNOTATION_POOL}: {name})"
            )
            continue
        pools.append(
            NodePool(name, tuple(_as_template(t, name) for t in shapes), sizes["minSize"],
                     sizes["maxSize"], source="cluster-autoscaler")
        )  # fmt: skip
    if errors:
        raise InputError(source, errors)
    return tuple(pools)


def _from_member(node: Node, group: str) -> Node:
    # A group's nodes share their template: an existing one stands for the next, less what
    # is its own (name, hostname, uid).
    labels = {k: v for k, v in node.labels.items() if k != "kubernetes.io/hostname"}
    meta = ObjectMeta(f"{group}-template", labels=labels)
    return replace(node, metadata=meta, unschedulable=False)
