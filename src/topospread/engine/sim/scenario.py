"""What-if scenarios: a starting cluster and the steps that change it, parsed and checked.

A scenario is one YAML/JSON document (``kind: Scenario``,
``apiVersion: topospread.dev/v1alpha1``)::

    apiVersion: topospread.dev/v1alpha1
    kind: Scenario
    metadata: {name: story}
    description: A Deployment through a rollout and a zone failure.
    seed: 1                                   # optional; --seed overrides
    schedulerConfig: {...}                    # optional KubeSchedulerConfiguration (or {file: x})
    cluster:
      nodes: {zones: [a, b, c], perZone: 3, allocatable: {cpu: "4", memory: 16Gi, pods: 110}}
      objects: [...]                          # inline Kubernetes objects
      files: [more.yaml]                      # object files, relative to the scenario
    steps:
    - apply: {objects: [...]}                 # or {file: x.yaml}; workloads, pods, budgets,
                                              # and storage (StorageClass, PV, PVC, CSI kinds)
    - scale: {deployment: web, replicas: 3}   # or statefulSet: / replicaSet:
    - rollout: {deployment: web, image: web:2, labels: {...}, topologySpreadConstraints: [...]}
    - deletePods: {names: [...]}              # or {selector: {matchLabels: {...}}}
    - cordon: {nodes: [...]}                  # uncordon, drain, removeNodes: the same shape
    - failZone: {zone: a, mode: notReady}     # failNode: {nodes: [...]}; mode remove|notReady
    - addNodes: {zones: [d], perZone: 2}      # a node generator, or {objects: [Node...]}
    - labelNode: {nodes: [...], labels: {k: v, gone: null}}
    - taintNode: {nodes: [...], add: [{key: k, effect: NoSchedule}], remove: [k]}
    - wait: {seconds: 300}
    - setPool: {pool: zone-c, minSize: 0, maxSize: 3}   # node pools (the autoscaler's)
    - scalePool: {pool: zone-c, size: 2}                # a pool resized by hand
    - rebalance: {}                                     # topospread rebalance's evictions

Node pools are template Nodes annotated ``autoscaling.topospread.dev/pool`` (with
``min-size``, ``max-size``, optional ``provision-delay`` and ``priority``) among the cluster
objects: they are not nodes but what :mod:`topospread.model.pools` reads them as. With
pools, an autoscaler runs (``autoscaler: {kind: cluster-autoscaler, expander: least-waste,
scanInterval: 10, ...}``, every field optional; see :class:`AutoscalerSettings`).

Every step may carry a ``name``. ``nodes:`` in a step may be replaced by ``zone:`` (the
nodes whose ``topology.kubernetes.io/zone`` has that value when the step runs).

Pure: file references are resolved by a ``load`` callback that the I/O layer supplies.
Parsing reports every problem as a :class:`~topospread.errors.FieldError` whose path
starts at the document root (``steps[3].scale.replicas``), all raised at once as one
:class:`~topospread.errors.ValidationError` naming the scenario file. References are
checked statically too: a step may only scale, roll out or drain what exists by then.

The Kubernetes objects a scenario applies (``cluster.objects``, ``cluster.files``, ``apply``
steps inline or from files) are decoded strictly, as ``kubectl apply`` and the other
commands decode them: a misspelt field is refused (``strict decoding error: unknown field
"spec.replica"``), never dropped. A step naming an object that failed to load is not also
reported as naming nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from topospread.engine.autoscale import AUTOSCALERS, EXPANDERS
from topospread.errors import (
    DecodeError,
    ErrorType,
    FieldError,
    InputError,
    ValidationError,
    go_quote,
)
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.model.decode import (
    WORKLOAD_KINDS,
    decode_object,
    decode_workload,
    describe_document,
    validate_metadata,
)
from topospread.model.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    KubeObject,
    LabelSelector,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    ReplicaSet,
    StatefulSet,
    Taint,
    TopologySpreadConstraint,
)
from topospread.model.pools import NodePool, is_pool_template, template_pools
from topospread.model.quantity import Quantity, QuantityError, parse_quantity
from topospread.model.validation import (
    strict_field_errors,
    validate_label_selector,
    validate_labels,
    validate_node,
    validate_node_taints,
    validate_object,
    validate_pod,
    validate_pod_disruption_budget,
    validate_workload_spec,
)
from topospread.plugins.registry import args_decoders

__all__ = [
    "API_VERSION",
    "AUTOSCALER_KINDS",
    "EXPANDERS",
    "KIND",
    "STEP_KINDS",
    "AddNodes",
    "Apply",
    "AutoscalerSettings",
    "Cordon",
    "DeletePods",
    "Drain",
    "FailNodes",
    "LabelNodes",
    "Loader",
    "NodeGenerator",
    "NodeSet",
    "Rebalance",
    "RemoveNodes",
    "Rollout",
    "Scale",
    "ScalePool",
    "Scenario",
    "ScenarioObject",
    "SetPool",
    "Step",
    "StepAction",
    "TaintNodes",
    "Uncordon",
    "Wait",
    "WorkloadRef",
    "parse_scenario",
]

API_VERSION: Final = "topospread.dev/v1alpha1"
KIND: Final = "Scenario"

ScenarioObject = KubeObject | Deployment | PodDisruptionBudget
"""Anything a scenario may create: what the scheduler reads plus Deployments and budgets."""

Loader = Callable[[str], list[Any]]
"""Resolves a file reference (relative to the scenario) into its parsed documents."""


MAX_GENERATED_NODES: Final = 20_000
"""The most nodes one generator makes (zones × perZone): bigger than any scheduler_perf run."""

MAX_REPLICAS: Final = 100_000
"""The most replicas a scaled or applied workload may ask for."""

MAX_NAME_PATTERN_LENGTH: Final = 253

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def name_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a node name pattern (``{zone}``, ``{i}``, ``{{``, ``}}``)."""
    if len(pattern) > MAX_NAME_PATTERN_LENGTH:
        return f"must be no more than {MAX_NAME_PATTERN_LENGTH} characters"
    for match in _PLACEHOLDER.finditer(pattern):
        text = match.group(0)
        if text in ("{{", "}}"):
            continue
        if match.group(1) not in ("zone", "i"):
            return "may only use {zone} and {i} placeholders"
    return None


def expand_name_pattern(pattern: str, zone: str, index: int) -> str:
    """``pattern`` with ``{zone}`` and ``{i}`` replaced; no ``str.format``, nothing else read."""

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "{{":
            return "{"
        if text == "}}":
            return "}"
        return zone if match.group(1) == "zone" else str(index)

    return _PLACEHOLDER.sub(replace, pattern)


# -- the model -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeGenerator:
    """Identical nodes, ``perZone`` in each zone, named by ``name_pattern``."""

    zones: tuple[str, ...]
    per_zone: int
    allocatable: Mapping[str, Quantity]
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels; hostname and zone labels are always set."""
    taints: tuple[Taint, ...] = ()
    name_pattern: str = "node-{zone}-{i}"
    """``{zone}`` and ``{i}`` (1-based within the zone) are substituted."""

    def nodes(self) -> tuple[Node, ...]:
        """The nodes, zone by zone, in order."""
        result = []
        for zone in self.zones:
            for i in range(1, self.per_zone + 1):
                name = expand_name_pattern(self.name_pattern, zone, i)
                labels = {**self.labels, LABEL_HOSTNAME: name, LABEL_TOPOLOGY_ZONE: zone}
                result.append(
                    Node(
                        ObjectMeta(name=name, labels=labels),
                        taints=self.taints,
                        allocatable=dict(self.allocatable),
                    )
                )
        return tuple(result)


@dataclass(frozen=True, slots=True)
class NodeSet:
    """The nodes a step acts on: by name, or every node of a zone when the step runs."""

    names: tuple[str, ...] = ()
    zone: str | None = None

    def describe(self) -> str:
        """``zone a`` or the names, comma separated."""
        return f"zone {self.zone}" if self.zone is not None else ", ".join(self.names)


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    """A Deployment, ReplicaSet or StatefulSet by kind, namespace and name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Apply:
    """Create (or replace, by kind/namespace/name) objects."""

    objects: tuple[ScenarioObject, ...]


@dataclass(frozen=True, slots=True)
class Scale:
    """Set a workload's ``spec.replicas``."""

    workload: WorkloadRef
    replicas: int


@dataclass(frozen=True, slots=True)
class Rollout:
    """Change a workload's pod template; with no change given, a restart (annotation)."""

    workload: WorkloadRef
    image: str | None = None
    labels: Mapping[str, str | None] = field(default_factory=dict)
    """Merged into the template's labels; a None value removes the label."""
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] | None = None
    """Replaces the template's constraints when given (``[]`` removes them)."""
    node_selector: Mapping[str, str] | None = None
    """Replaces the template's nodeSelector when given."""


@dataclass(frozen=True, slots=True)
class DeletePods:
    """Delete pods by name or selector in one namespace; controllers replace theirs."""

    namespace: str
    names: tuple[str, ...] = ()
    selector: LabelSelector | None = None


@dataclass(frozen=True, slots=True)
class Cordon:
    """Mark nodes unschedulable."""

    nodes: NodeSet


@dataclass(frozen=True, slots=True)
class Uncordon:
    """Mark nodes schedulable again."""

    nodes: NodeSet


@dataclass(frozen=True, slots=True)
class Drain:
    """``kubectl drain``: cordon, then evict every pod, respecting PodDisruptionBudgets."""

    nodes: NodeSet


@dataclass(frozen=True, slots=True)
class FailNodes:
    """Nodes fail: ``remove`` deletes them, ``notReady`` taints them unreachable."""

    nodes: NodeSet
    mode: str = "notReady"


@dataclass(frozen=True, slots=True)
class AddNodes:
    """New nodes, appended to the node order."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class RemoveNodes:
    """Delete nodes; their pods are deleted and replaced by their controllers."""

    nodes: NodeSet


@dataclass(frozen=True, slots=True)
class LabelNodes:
    """Set (or, with None, remove) node labels."""

    nodes: NodeSet
    labels: Mapping[str, str | None]


@dataclass(frozen=True, slots=True)
class TaintNodes:
    """Add taints and remove taints (by key, or ``key:Effect``)."""

    nodes: NodeSet
    add: tuple[Taint, ...] = ()
    remove: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Wait:
    """Let time pass (taint-based evictions, backoffs)."""

    seconds: int


@dataclass(frozen=True, slots=True)
class SetPool:
    """Change a node pool's bounds (a node group's min/max, as its cloud console would)."""

    pool: str
    min_size: int | None = None
    max_size: int | None = None


@dataclass(frozen=True, slots=True)
class ScalePool:
    """Set a pool's node count by hand: nodes added from its template, or removed newest
    first (their pods deleted and replaced by their controllers)."""

    pool: str
    size: int


@dataclass(frozen=True, slots=True)
class Rebalance:
    """Carry out ``topospread rebalance``'s plan: its evictions, one per second, each
    replacement placed by the scheduler before the next eviction."""

    max_evictions: int | None = None


AUTOSCALER_KINDS: Final = AUTOSCALERS


@dataclass(frozen=True, slots=True)
class AutoscalerSettings:
    """The autoscaler of a scenario with node pools; names and defaults are Cluster
    Autoscaler's flags (``--scan-interval`` 10s, ``--scale-down-unneeded-time`` 10m,
    ``--scale-down-utilization-threshold`` 0.5, ``--scale-down-delay-after-add`` 10m,
    ``--max-node-provision-time`` 15m, ``--scale-down-enabled``), except the expander:
    ``least-waste`` here (CA's own default is ``random``), as ``explain --node-pools``."""

    kind: str = "cluster-autoscaler"
    expander: str = "least-waste"
    scan_interval: int = 10
    scale_down_enabled: bool = True
    scale_down_unneeded_time: int = 600
    scale_down_utilization_threshold: float = 0.5
    scale_down_delay_after_add: int = 600
    max_node_provision_time: int = 900


StepAction = (
    Apply
    | Scale
    | Rollout
    | DeletePods
    | Cordon
    | Uncordon
    | Drain
    | FailNodes
    | AddNodes
    | RemoveNodes
    | LabelNodes
    | TaintNodes
    | Wait
    | SetPool
    | ScalePool
    | Rebalance
)
"""One thing that happens in a step."""


@dataclass(frozen=True, slots=True)
class Step:
    """One scenario step: an action, its YAML key and an optional name."""

    index: int
    kind: str
    """The action's key in the YAML, e.g. ``scale``, ``failZone``."""
    action: StepAction
    name: str = ""

    def title(self) -> str:
        """The name if given, else a one-line description of the action."""
        return self.name or describe_action(self.kind, self.action)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed, checked scenario."""

    name: str
    source: str
    """Where it was read from (a file name), for messages."""
    description: str
    seed: int | None
    configuration: SchedulerConfiguration
    objects: tuple[ScenarioObject, ...]
    """The starting cluster: generated nodes first, then inline objects, then files."""
    steps: tuple[Step, ...]
    pools: tuple[NodePool, ...] = ()
    """Node pools from the template Nodes among the cluster objects (not in ``objects``)."""
    autoscaler: AutoscalerSettings | None = None
    """Set whenever there are pools (defaults when the scenario gives no ``autoscaler``)."""
    local_storage: frozenset[tuple[str, str, str]] = frozenset()
    """(kind, namespace, name) of the Pods and workloads whose pods have ``emptyDir`` or
    ``hostPath`` volumes: Cluster Autoscaler does not move them."""


def describe_action(kind: str, action: StepAction) -> str:
    """A short human description of an action."""
    if isinstance(action, Apply):
        return "apply " + ", ".join(_object_label(o) for o in action.objects)
    if isinstance(action, Scale):
        return f"scale {action.workload} to {action.replicas}"
    if isinstance(action, Rollout):
        changes = []
        if action.image is not None:
            changes.append(f"image {action.image}")
        if action.labels:
            changes.append("labels " + ",".join(f"{k}={v}" for k, v in action.labels.items()))
        if action.topology_spread_constraints is not None:
            changes.append(f"{len(action.topology_spread_constraints)} spread constraint(s)")
        if action.node_selector is not None:
            changes.append("nodeSelector")
        return f"rollout {action.workload}" + (f" ({'; '.join(changes)})" if changes else "")
    if isinstance(action, DeletePods):
        what = ", ".join(action.names) if action.names else "selected pods"
        return f"delete pods {what} in {action.namespace}"
    if isinstance(action, FailNodes):
        return f"{kind} {action.nodes.describe()} ({action.mode})"
    if isinstance(action, AddNodes):
        return "add nodes " + ", ".join(n.name for n in action.nodes)
    if isinstance(action, Wait):
        return f"wait {action.seconds}s"
    if isinstance(action, LabelNodes):
        labels = ",".join(
            f"{k}={v}" if v is not None else f"{k}-" for k, v in action.labels.items()
        )
        return f"label {action.nodes.describe()} {labels}"
    if isinstance(action, TaintNodes):
        return f"taint {action.nodes.describe()}"
    if isinstance(action, SetPool):
        bounds = [
            f"{word} {value}"
            for word, value in (("minSize", action.min_size), ("maxSize", action.max_size))
            if value is not None
        ]
        return f"set pool {action.pool} " + ", ".join(bounds)
    if isinstance(action, ScalePool):
        return f"scale pool {action.pool} to {action.size} node(s)"
    if isinstance(action, Rebalance):
        return "rebalance (topospread rebalance's evictions)"
    return f"{kind} {action.nodes.describe()}"


def _object_label(obj: ScenarioObject) -> str:
    meta = obj.metadata
    return f"{type(obj).__name__} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"


# -- parsing -------------------------------------------------------------------------------------

STEP_KINDS: Final = (
    "addNodes",
    "apply",
    "cordon",
    "deletePods",
    "drain",
    "failNode",
    "failZone",
    "labelNode",
    "rebalance",
    "removeNodes",
    "rollout",
    "scale",
    "scalePool",
    "setPool",
    "taintNode",
    "uncordon",
    "wait",
)
"""Every step action key, sorted."""

_WORKLOAD_KEYS: Final = {
    "deployment": "Deployment",
    "replicaSet": "ReplicaSet",
    "statefulSet": "StatefulSet",
}
_FAIL_MODES: Final = ("notReady", "remove")
_TOP_LEVEL: Final = (
    "apiVersion",
    "kind",
    "metadata",
    "description",
    "seed",
    "schedulerConfig",
    "autoscaler",
    "cluster",
    "steps",
)


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


class _Parser:
    """Reads the document, collecting field errors and tracking what exists step by step."""

    def __init__(self, source: str, load: Loader | None) -> None:
        self.source = source
        self.load = load
        self.errors: list[FieldError | str] = []
        self.node_names: set[str] = set()
        self.zones: set[str] = set()
        self.workloads: set[tuple[str, str, str]] = set()
        self.local_storage: set[tuple[str, str, str]] = set()
        """(kind, namespace, name) of Pods and workloads whose pods mount emptyDir or
        hostPath volumes (the object model keeps no such volumes; CA's scale-down asks)."""
        self.pool_bounds: dict[str, tuple[int, int | None]] = {}
        """Pool name -> (min, max) as the steps so far leave them."""
        self.refused: set[tuple[str, str, str]] = set()
        """(kind, namespace, name) of the objects that failed to load: a step naming one
        is not also reported as naming nothing (its own errors say what is wrong)."""
        self.refused_nodes: set[str] = set()
        self.refused_zones: set[str] = set()

    # -- typed access ---------------------------------------------------------------------

    def type_error(self, path: str, value: object, expected: str) -> None:
        got = _json_type(value)
        shown = value if got not in ("object", "array") else got
        self.errors.append(FieldError.invalid(path, shown, f"expected {expected}, got {got}"))

    def mapping(self, value: object, path: str) -> Mapping[str, Any] | None:
        if not isinstance(value, dict):
            self.type_error(path, value, "object")
            return None
        return value

    def known_fields(self, data: Mapping[str, Any], path: str, known: Sequence[str]) -> None:
        for key in data:
            if key not in known:
                self.errors.append(
                    FieldError(
                        ErrorType.NOT_FOUND,
                        f"{path}.{key}" if path else str(key),
                        detail="unknown field (known: " + ", ".join(known) + ")",
                    )
                )

    def string(self, data: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.type_error(f"{path}.{key}", value, "string")
            return default
        return value

    def integer(self, data: Mapping[str, Any], key: str, path: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.type_error(f"{path}.{key}", value, "integer")
            return None
        return value

    def strings(self, data: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.type_error(f"{path}.{key}", value, "array of strings")
            return ()
        result = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                result.append(item)
            else:
                self.type_error(f"{path}.{key}[{i}]", item, "string")
        return tuple(result)

    def string_map(
        self, data: Mapping[str, Any], key: str, path: str, *, nullable: bool = False
    ) -> dict[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.type_error(f"{path}.{key}", value, "map of strings")
            return {}
        result: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(v, str) or (nullable and v is None):
                result[str(k)] = v
            elif isinstance(v, int | float) and not isinstance(v, bool):
                result[str(k)] = str(v)
            else:
                self.type_error(f"{path}.{key}[{k}]", v, "string")
        return result

    def required(self, data: Mapping[str, Any], key: str, path: str) -> bool:
        if data.get(key) is None:
            self.errors.append(FieldError.required(f"{path}.{key}"))
            return False
        return True

    # -- objects --------------------------------------------------------------------------

    def kube_object(self, raw: object, path: str) -> ScenarioObject | None:
        doc = self.mapping(raw, path)
        if doc is None:
            return None
        obj = self.checked_object(doc, path)
        if obj is None:
            self.refuse(doc)
        return obj

    def refuse(self, doc: Mapping[str, Any]) -> None:
        """Remember an object that failed to load (its errors are reported already)."""
        meta = doc.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(name, str) or not name:
            return
        kind = doc.get("kind")
        if kind == "Node":
            self.refused_nodes.add(name)
            labels = meta.get("labels")
            zone = labels.get(LABEL_TOPOLOGY_ZONE) if isinstance(labels, dict) else None
            if isinstance(zone, str):
                self.refused_zones.add(zone)
        elif isinstance(kind, str):
            namespace = meta.get("namespace")
            namespace = namespace if isinstance(namespace, str) and namespace else "default"
            self.refused.add((kind, namespace, name))

    def checked_object(self, doc: Mapping[str, Any], path: str) -> ScenarioObject | None:
        api_version, kind = doc.get("apiVersion"), doc.get("kind")
        try:
            obj: ScenarioObject | None
            if (str(api_version), str(kind)) in WORKLOAD_KINDS:
                obj = decode_workload(doc)
            else:
                obj = decode_object(doc)
        except DecodeError as exc:
            self.errors.extend(_prefixed(exc.errors, path))
            return None
        if obj is None:
            self.errors.append(
                FieldError.not_supported(
                    f"{path}.kind",
                    f"{api_version}/{kind}",
                    [
                        "apps/v1/Deployment",
                        "apps/v1/ReplicaSet",
                        "apps/v1/StatefulSet",
                        "policy/v1/PodDisruptionBudget",
                        "scheduling.k8s.io/v1/PriorityClass",
                        "storage.k8s.io/v1/CSIDriver",
                        "storage.k8s.io/v1/CSINode",
                        "storage.k8s.io/v1/CSIStorageCapacity",
                        "storage.k8s.io/v1/StorageClass",
                        "storage.k8s.io/v1/VolumeAttachment",
                        "v1/Node",
                        "v1/PersistentVolume",
                        "v1/PersistentVolumeClaim",
                        "v1/Pod",
                        "v1/ReplicationController",
                        "v1/Service",
                    ],
                )
            )
            return None
        unknown = _strict_problems(doc)
        if unknown:
            # As kubectl apply's strict field validation: the object is refused at decoding,
            # before validation (a misspelt required field is named, not reported missing).
            self.errors.extend(f"{path}: {problem}" for problem in unknown)
            return None
        problems = validate_metadata(obj)
        if problems:
            self.errors.extend(_prefixed(problems, path))
            return None
        if isinstance(obj, Deployment | ReplicaSet | StatefulSet):
            if obj.replicas is not None and obj.replicas > MAX_REPLICAS:
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.spec.replicas", obj.replicas, f"must be at most {MAX_REPLICAS:,}"
                    )
                )
                return None
            problems = validate_workload_spec(obj)
        elif isinstance(obj, PodDisruptionBudget):
            problems = validate_pod_disruption_budget(obj)
        elif isinstance(obj, Pod) and obj.metadata.uid:
            # Read back from a cluster (a capture, or --from-cluster): admitted already, with
            # matchLabelKeys merged into its selectors; validated as stored, not as a POST.
            problems = validate_pod(obj, create=False)
        else:
            problems = validate_object(obj)
        if problems:
            self.errors.extend(_prefixed(problems, path))
            return None
        spec = doc.get("spec")
        if isinstance(obj, Deployment | ReplicaSet | StatefulSet) and isinstance(spec, dict):
            template = spec.get("template")
            spec = template.get("spec") if isinstance(template, dict) else None
        volumes = spec.get("volumes") if isinstance(spec, dict) else None
        if isinstance(volumes, list) and any(
            isinstance(v, dict) and ("emptyDir" in v or "hostPath" in v) for v in volumes
        ):
            self.local_storage.add((type(obj).__name__, obj.metadata.namespace, obj.metadata.name))
        return obj

    def objects(self, items: object, path: str) -> list[ScenarioObject]:
        if not isinstance(items, list):
            self.type_error(path, items, "array of Kubernetes objects")
            return []
        result = []
        for i, raw in enumerate(items):
            obj = self.kube_object(raw, f"{path}[{i}]")
            if obj is not None:
                result.append(obj)
        return result

    def file_objects(self, name: object, path: str) -> list[ScenarioObject]:
        if not isinstance(name, str):
            self.type_error(path, name, "string (a file name)")
            return []
        if self.load is None:
            self.errors.append(FieldError.forbidden(path, "file references need a scenario file"))
            return []
        try:
            documents = self.load(name)
        except InputError as exc:
            self.errors.extend(f"{path}: {line}" for line in exc.lines())
            return []
        result = []
        for i, doc in enumerate(documents):
            if doc is None:
                continue
            items = doc.get("items") if isinstance(doc, dict) else None
            if isinstance(items, list) and str(doc.get("kind", "")).endswith("List"):
                result.extend(self.objects(items, f"{path}({name}) document {i + 1} items"))
                continue
            obj = self.kube_object(doc, f"{path}({name}) document {i + 1}")
            if obj is not None:
                result.append(obj)
        return result

    def file_objects_raw(self, name: object, path: str) -> list[Any]:
        if not isinstance(name, str):
            self.type_error(path, name, "string (a file name)")
            return []
        if self.load is None:
            self.errors.append(FieldError.forbidden(path, "file references need a scenario file"))
            return []
        try:
            return [d for d in self.load(name) if d is not None]
        except InputError as exc:
            self.errors.extend(f"{path}: {line}" for line in exc.lines())
            return []

    def track(self, objects: Sequence[ScenarioObject]) -> None:
        for obj in objects:
            if isinstance(obj, Node):
                self.node_names.add(obj.name)
                zone = obj.labels.get(LABEL_TOPOLOGY_ZONE)
                if zone is not None:
                    self.zones.add(zone)
            elif isinstance(obj, Deployment | ReplicaSet | StatefulSet):
                self.workloads.add((type(obj).__name__, obj.metadata.namespace, obj.metadata.name))

    # -- nodes ----------------------------------------------------------------------------

    def quantities(self, data: Mapping[str, Any], key: str, path: str) -> dict[str, Quantity]:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.type_error(f"{path}.{key}", value, "map of quantities")
            return {}
        result = {}
        for name, raw in value.items():
            where = f"{path}.{key}[{name}]"
            if isinstance(raw, bool) or not isinstance(raw, str | int):
                self.type_error(where, raw, "quantity")
                continue
            try:
                result[str(name)] = parse_quantity(str(raw))
            except QuantityError as exc:
                self.errors.append(FieldError.invalid(where, str(raw), str(exc)))
        return result

    def taints(self, data: Mapping[str, Any], key: str, path: str) -> tuple[Taint, ...]:
        value = data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.type_error(f"{path}.{key}", value, "array of taints")
            return ()
        result = []
        for i, raw in enumerate(value):
            where = f"{path}.{key}[{i}]"
            item = self.mapping(raw, where)
            if item is None:
                continue
            self.known_fields(item, where, ("key", "value", "effect"))
            result.append(
                Taint(
                    self.string(item, "key", where),
                    self.string(item, "effect", where),
                    self.string(item, "value", where),
                )
            )
        taints = tuple(result)
        self.errors.extend(
            FieldError(e.type, f"{path}.{key}" + e.field.removeprefix("taints"), e.value, e.detail)
            for e in validate_node_taints(taints, "taints")
        )
        return taints

    def generator(self, data: Mapping[str, Any], path: str) -> list[Node]:
        self.known_fields(
            data, path, ("zones", "perZone", "allocatable", "labels", "taints", "namePattern")
        )
        zones = self.strings(data, "zones", path)
        if not zones and "zones" not in data:
            self.errors.append(FieldError.required(f"{path}.zones"))
        per_zone = self.integer(data, "perZone", path)
        if per_zone is None:
            if "perZone" not in data:
                self.errors.append(FieldError.required(f"{path}.perZone"))
            per_zone = 0
        elif per_zone < 1:
            self.errors.append(
                FieldError.invalid(f"{path}.perZone", per_zone, "must be greater than zero")
            )
        allocatable = self.quantities(data, "allocatable", path) or {
            "cpu": parse_quantity("4"),
            "memory": parse_quantity("16Gi"),
            "pods": parse_quantity("110"),
        }
        labels = self.string_map(data, "labels", path)
        self.errors.extend(_prefixed(validate_labels(labels, "labels"), path))
        pattern = self.string(data, "namePattern", path, "node-{zone}-{i}")
        problem = name_pattern_problem(pattern)
        if problem is not None:
            self.errors.append(FieldError.invalid(f"{path}.namePattern", pattern, problem))
            return []
        if zones and per_zone > 0 and len(zones) * per_zone > MAX_GENERATED_NODES:
            self.errors.append(
                FieldError(
                    ErrorType.TOO_MANY,
                    f"{path}.perZone",
                    len(zones) * per_zone,
                    f"must have at most {MAX_GENERATED_NODES:,} nodes (zones × perZone)",
                )
            )
            return []
        generated = NodeGenerator(
            zones, max(per_zone, 0), allocatable, labels, self.taints(data, "taints", path), pattern
        ).nodes()
        nodes = []
        for node in generated:
            problems = validate_node(node)
            if problems:
                self.errors.extend(
                    f"{path}: generated node {go_quote(node.name)}: {p}" for p in problems
                )
                continue
            nodes.append(node)
        return nodes

    def new_nodes(self, nodes: Sequence[Node], path: str) -> list[Node]:
        fresh = []
        for node in nodes:
            if node.name in self.node_names:
                self.errors.append(FieldError.duplicate(path, f"node {node.name}"))
                continue
            fresh.append(node)
            self.track([node])
        return fresh

    def node_set(self, data: Mapping[str, Any], path: str) -> NodeSet | None:
        if "zone" in data:
            if "nodes" in data:
                self.errors.append(
                    FieldError.forbidden(f"{path}.zone", "may not be combined with nodes")
                )
                return None
            zone = self.string(data, "zone", path)
            if zone and zone not in self.zones:
                if zone not in self.refused_zones:
                    self.errors.append(FieldError(ErrorType.NOT_FOUND, f"{path}.zone", zone))
                return None
            return NodeSet(zone=zone)
        if not self.required(data, "nodes", path):
            return None
        names = self.strings(data, "nodes", path)
        seen: set[str] = set()
        for i, name in enumerate(names):
            if name in seen:
                self.errors.append(FieldError.duplicate(f"{path}.nodes[{i}]", name))
                return None
            seen.add(name)
            if name not in self.node_names and name not in self.refused_nodes:
                self.errors.append(FieldError(ErrorType.NOT_FOUND, f"{path}.nodes[{i}]", name))
        return NodeSet(names=names)

    # -- steps ----------------------------------------------------------------------------

    def workload(self, data: Mapping[str, Any], path: str) -> WorkloadRef | None:
        given = [key for key in _WORKLOAD_KEYS if key in data]
        if len(given) != 1:
            self.errors.append(
                FieldError.required(
                    path, "exactly one of deployment, replicaSet, statefulSet names the workload"
                )
            )
            return None
        key = given[0]
        name = self.string(data, key, path)
        namespace = self.string(data, "namespace", path, "default")
        ref = WorkloadRef(_WORKLOAD_KEYS[key], namespace, name)
        if (ref.kind, namespace, name) not in self.workloads:
            if (ref.kind, namespace, name) not in self.refused:
                self.errors.append(FieldError(ErrorType.NOT_FOUND, f"{path}.{key}", name))
            return None
        return ref

    def step(self, raw: object, index: int) -> Step | None:
        path = f"steps[{index}]"
        data = self.mapping(raw, path)
        if data is None:
            return None
        actions = [key for key in data if key != "name"]
        name = self.string(data, "name", path)
        if len(actions) != 1 or actions[0] not in STEP_KINDS:
            unknown = [a for a in actions if a not in STEP_KINDS]
            if unknown:
                self.errors.append(FieldError.not_supported(path, unknown[0], STEP_KINDS))
            else:
                self.errors.append(
                    FieldError.required(path, "exactly one action: " + ", ".join(STEP_KINDS))
                )
            return None
        kind = actions[0]
        where = f"{path}.{kind}"
        body = data[kind]
        if kind == "wait" and isinstance(body, int) and not isinstance(body, bool):
            body = {"seconds": body}
        args = self.mapping(body if body is not None else {}, where)
        if args is None:
            return None
        before = len(self.errors)
        action = self.action(kind, args, where)
        if action is None or len(self.errors) > before:
            return None
        return Step(index, kind, action, name)

    def action(self, kind: str, args: Mapping[str, Any], path: str) -> StepAction | None:
        if kind == "apply":
            self.known_fields(args, path, ("objects", "file"))
            objects: list[ScenarioObject] = []
            if "objects" in args:
                objects.extend(self.objects(args["objects"], f"{path}.objects"))
            if "file" in args:
                objects.extend(self.file_objects(args["file"], f"{path}.file"))
            if "objects" not in args and "file" not in args:
                self.errors.append(FieldError.required(f"{path}.objects"))
            nodes = [o for o in objects if isinstance(o, Node)]
            self.new_nodes(nodes, f"{path}.objects")
            self.track(objects)
            return Apply(tuple(objects))
        if kind == "scale":
            self.known_fields(args, path, (*_WORKLOAD_KEYS, "namespace", "replicas"))
            ref = self.workload(args, path)
            replicas = self.integer(args, "replicas", path)
            if replicas is None:
                if "replicas" not in args:
                    self.errors.append(FieldError.required(f"{path}.replicas"))
                return None
            if replicas > MAX_REPLICAS:
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.replicas", replicas, f"must be at most {MAX_REPLICAS:,}"
                    )
                )
                return None
            if replicas < 0:
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.replicas", replicas, "must be greater than or equal to 0"
                    )
                )
                return None
            return Scale(ref, replicas) if ref is not None else None
        if kind == "rollout":
            return self.rollout(args, path)
        if kind == "deletePods":
            self.known_fields(args, path, ("namespace", "names", "selector"))
            names = self.strings(args, "names", path)
            selector = None
            if "selector" in args:
                raw = self.mapping(args["selector"], f"{path}.selector")
                if raw is not None:
                    selector = _selector(self, raw, f"{path}.selector")
            if not names and selector is None:
                if "selector" not in args:  # else the selector's own errors say what is wrong
                    self.errors.append(FieldError.required(f"{path}.names", "or selector"))
                return None
            return DeletePods(self.string(args, "namespace", path, "default"), names, selector)
        if kind in ("cordon", "uncordon", "drain", "removeNodes"):
            self.known_fields(args, path, ("nodes", "zone"))
            target = self.node_set(args, path)
            if target is None:
                return None
            if kind == "cordon":
                return Cordon(target)
            if kind == "uncordon":
                return Uncordon(target)
            if kind == "drain":
                return Drain(target)
            return RemoveNodes(target)
        if kind in ("failNode", "failZone"):
            self.known_fields(args, path, ("nodes", "zone", "mode"))
            if kind == "failZone" and not self.required(args, "zone", path):
                return None
            mode = self.string(args, "mode", path, "notReady")
            if mode not in _FAIL_MODES:
                self.errors.append(FieldError.not_supported(f"{path}.mode", mode, _FAIL_MODES))
                return None
            target = self.node_set(args, path)
            return FailNodes(target, mode) if target is not None else None
        if kind == "addNodes":
            if "objects" in args:
                self.known_fields(args, path, ("objects",))
                objects = self.objects(args["objects"], f"{path}.objects")
                not_nodes = [o for o in objects if not isinstance(o, Node)]
                if not_nodes:
                    self.errors.append(
                        FieldError.invalid(
                            f"{path}.objects",
                            _object_label(not_nodes[0]),
                            "only Nodes may be added",
                        )
                    )
                    return None
                added = [o for o in objects if isinstance(o, Node)]
            else:
                added = self.generator(args, path)
            return AddNodes(tuple(self.new_nodes(added, path)))
        if kind == "labelNode":
            self.known_fields(args, path, ("nodes", "zone", "labels"))
            target = self.node_set(args, path)
            labels = self.string_map(args, "labels", path, nullable=True)
            present = {k: v for k, v in labels.items() if v is not None}
            self.errors.extend(_prefixed(validate_labels(present, "labels"), path))
            if not labels:
                self.errors.append(FieldError.required(f"{path}.labels"))
            if target is None:
                return None
            if target.zone is None:
                for name, value in labels.items():
                    if name == LABEL_TOPOLOGY_ZONE and isinstance(value, str):
                        self.zones.add(value)
            return LabelNodes(target, labels)
        if kind == "taintNode":
            self.known_fields(args, path, ("nodes", "zone", "add", "remove"))
            target = self.node_set(args, path)
            add = self.taints(args, "add", path)
            remove = self.strings(args, "remove", path)
            if not add and not remove:
                self.errors.append(FieldError.required(f"{path}.add", "or remove"))
            return TaintNodes(target, add, remove) if target is not None else None
        if kind == "setPool":
            self.known_fields(args, path, ("pool", "minSize", "maxSize"))
            pool = self.pool(args, path)
            minimum = self.non_negative(args, "minSize", path)
            maximum = self.non_negative(args, "maxSize", path)
            if "minSize" not in args and "maxSize" not in args:
                self.errors.append(FieldError.required(f"{path}.minSize", "or maxSize"))
            if pool is None:
                return None
            old_min, old_max = self.pool_bounds[pool]
            new_min = old_min if minimum is None else minimum
            new_max = old_max if maximum is None else maximum
            if new_max is not None and new_max < new_min:
                field_ = "maxSize" if maximum is not None else "minSize"
                value = maximum if maximum is not None else minimum
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.{field_}",
                        value,
                        f"maxSize ({new_max}) must be greater than or equal to minSize ({new_min})",
                    )
                )
                return None
            self.pool_bounds[pool] = (new_min, new_max)
            return SetPool(pool, minimum, maximum)
        if kind == "scalePool":
            self.known_fields(args, path, ("pool", "size"))
            pool = self.pool(args, path)
            size = self.non_negative(args, "size", path)
            if size is None:
                if "size" not in args:
                    self.errors.append(FieldError.required(f"{path}.size"))
                return None
            if pool is None:
                return None
            low, high = self.pool_bounds[pool]
            # A node group's size is set within its bounds (the cloud's API refuses more).
            if size < low or (high is not None and size > high):
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.size",
                        size,
                        f"must be within pool {pool}'s minSize {low} and maxSize {high}",
                    )
                )
                return None
            return ScalePool(pool, size)
        if kind == "rebalance":
            self.known_fields(args, path, ("maxEvictions",))
            limit = self.non_negative(args, "maxEvictions", path)
            return Rebalance(limit)
        # wait
        self.known_fields(args, path, ("seconds",))
        seconds = self.integer(args, "seconds", path)
        if seconds is None:
            if "seconds" not in args:
                self.errors.append(FieldError.required(f"{path}.seconds"))
            return None
        if seconds < 0:
            self.errors.append(
                FieldError.invalid(f"{path}.seconds", seconds, "must be greater than or equal to 0")
            )
            return None
        return Wait(seconds)

    def non_negative(self, data: Mapping[str, Any], key: str, path: str) -> int | None:
        value = self.integer(data, key, path)
        if value is not None and value < 0:
            self.errors.append(
                FieldError.invalid(f"{path}.{key}", value, "must be greater than or equal to 0")
            )
            return None
        return value

    def pool(self, data: Mapping[str, Any], path: str) -> str | None:
        if not self.required(data, "pool", path):
            return None
        name = self.string(data, "pool", path)
        if not name:
            return None
        if name not in self.pool_bounds:
            known = ", ".join(sorted(self.pool_bounds)) or "none: the scenario has no node pools"
            self.errors.append(
                FieldError(ErrorType.NOT_FOUND, f"{path}.pool", name, f"known pools: {known}")
            )
            return None
        return name

    def autoscaler(self, raw: object, has_pools: bool) -> AutoscalerSettings | None:
        path = "autoscaler"
        data = self.mapping(raw if raw is not None else {}, path)
        if data is None:
            return None
        known = (
            "kind",
            "expander",
            "scanInterval",
            "scaleDownEnabled",
            "scaleDownUnneededTime",
            "scaleDownUtilizationThreshold",
            "scaleDownDelayAfterAdd",
            "maxNodeProvisionTime",
        )
        self.known_fields(data, path, known)
        defaults = AutoscalerSettings()
        kind = self.string(data, "kind", path, defaults.kind)
        if kind not in AUTOSCALERS:
            self.errors.append(FieldError.not_supported(f"{path}.kind", kind, AUTOSCALERS))
        expander = self.string(data, "expander", path, defaults.expander)
        if expander not in EXPANDERS:
            self.errors.append(FieldError.not_supported(f"{path}.expander", expander, EXPANDERS))
        seconds: dict[str, int] = {}
        for key, default, least in (
            ("scanInterval", defaults.scan_interval, 1),
            ("scaleDownUnneededTime", defaults.scale_down_unneeded_time, 0),
            ("scaleDownDelayAfterAdd", defaults.scale_down_delay_after_add, 0),
            ("maxNodeProvisionTime", defaults.max_node_provision_time, 1),
        ):
            value = self.integer(data, key, path)
            if value is not None and value < least:
                self.errors.append(
                    FieldError.invalid(
                        f"{path}.{key}", value, f"must be at least {least} (seconds)"
                    )
                )
            seconds[key] = default if value is None or value < least else value
        threshold = data.get("scaleDownUtilizationThreshold")
        if threshold is None:
            threshold = defaults.scale_down_utilization_threshold
        elif isinstance(threshold, bool) or not isinstance(threshold, int | float):
            self.type_error(f"{path}.scaleDownUtilizationThreshold", threshold, "number")
            threshold = defaults.scale_down_utilization_threshold
        elif not 0 <= threshold <= 1:
            self.errors.append(
                FieldError.invalid(
                    f"{path}.scaleDownUtilizationThreshold", threshold, "must be between 0 and 1"
                )
            )
        enabled = data.get("scaleDownEnabled", True)
        if not isinstance(enabled, bool):
            self.type_error(f"{path}.scaleDownEnabled", enabled, "boolean")
            enabled = True
        if not has_pools:
            self.errors.append(
                FieldError.required(
                    "cluster.objects",
                    "an autoscaler needs node pools: template Nodes annotated "
                    "autoscaling.topospread.dev/pool",
                )
            )
        return AutoscalerSettings(
            kind,
            expander,
            seconds["scanInterval"],
            enabled,
            seconds["scaleDownUnneededTime"],
            float(threshold),
            seconds["scaleDownDelayAfterAdd"],
            seconds["maxNodeProvisionTime"],
        )

    def rollout(self, args: Mapping[str, Any], path: str) -> Rollout | None:
        self.known_fields(
            args,
            path,
            (
                *_WORKLOAD_KEYS,
                "namespace",
                "image",
                "labels",
                "annotations",
                "topologySpreadConstraints",
                "nodeSelector",
            ),
        )
        ref = self.workload(args, path)
        image = args.get("image")
        if image is not None and not isinstance(image, str):
            self.type_error(f"{path}.image", image, "string")
            image = None
        labels = self.string_map(args, "labels", path, nullable=True)
        annotations = self.string_map(args, "annotations", path, nullable=True)
        node_selector = (
            self.string_map(args, "nodeSelector", path) if "nodeSelector" in args else None
        )
        constraints: tuple[TopologySpreadConstraint, ...] | None = None
        if "topologySpreadConstraints" in args:
            doc = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "rollout"},
                "spec": {"topologySpreadConstraints": args["topologySpreadConstraints"]},
            }
            try:
                decoded = decode_object(doc)
            except DecodeError as exc:
                self.errors.extend(_rollout_paths(exc.errors, path))
                return None
            unknown = _strict_problems(doc, strip="spec.")
            if unknown:
                self.errors.extend(f"{path}: {problem}" for problem in unknown)
                return None
            assert isinstance(decoded, Pod)
            constraints = decoded.topology_spread_constraints
        if ref is None:
            return None
        rollout = Rollout(ref, image, labels, annotations, constraints, node_selector)
        return rollout


def _selector(parser: _Parser, raw: Mapping[str, Any], path: str) -> LabelSelector | None:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "selector"},
        "spec": {"selector": raw},
    }
    try:
        decoded = decode_object(doc)
    except DecodeError as exc:
        parser.errors.extend(_prefixed(exc.errors, path.rsplit(".", 1)[0], strip="spec."))
        return None
    unknown = _strict_problems(doc, strip="spec.")
    if unknown:
        parser.errors.extend(f"{path.rsplit('.', 1)[0]}: {problem}" for problem in unknown)
        return None
    assert isinstance(decoded, ReplicaSet)
    problems = validate_label_selector(decoded.selector, "selector")
    parser.errors.extend(_prefixed(problems, path.rsplit(".", 1)[0]))
    return decoded.selector if not problems else None


def _strict_problems(doc: Mapping[str, Any], *, strip: str = "") -> list[str]:
    """The fields of one object that strict decoding refuses, worded as the loader words
    them for explain, lint and plan (``Deployment web: strict decoding error: unknown field
    "spec.replica"``). ``strip``: a wrapper's prefix, for the Kubernetes fields a step holds
    (a rollout's constraints, a selector), which are then named as the step names them.

    Objects read back from a server (with a uid: a capture, ``--from-cluster``) were
    admitted already, and a newer server may know fields this one lacks: not checked.
    """
    meta = doc.get("metadata")
    if isinstance(meta, dict) and meta.get("uid"):
        return []
    found = strict_field_errors(doc)
    if strip:
        return [str(replace(e, field=e.field.removeprefix(strip))) for e in found]
    return [f"{describe_document(doc)}: {e}" for e in found]


def _prefixed(
    errors: Sequence[FieldError | str], prefix: str, *, strip: str = ""
) -> list[FieldError | str]:
    result: list[FieldError | str] = []
    for e in errors:
        if isinstance(e, FieldError):
            rest = e.field.removeprefix(strip) if strip else e.field
            result.append(
                FieldError(e.type, f"{prefix}.{rest}" if rest else prefix, e.value, e.detail)
            )
        else:
            result.append(f"{prefix}: {e}")
    return result


def _rollout_paths(errors: Sequence[FieldError | str], path: str) -> list[FieldError | str]:
    # Errors of the rolled-out template, reported where the user wrote the change.
    mapped: list[FieldError | str] = []
    for e in errors:
        if not isinstance(e, FieldError):
            mapped.append(f"{path}: {e}")
            continue
        rest = e.field
        for template_path, step_field in (
            ("spec.topologySpreadConstraints", "topologySpreadConstraints"),
            ("spec.nodeSelector", "nodeSelector"),
            ("metadata.labels", "labels"),
        ):
            if rest.startswith(template_path):
                rest = step_field + rest.removeprefix(template_path)
                break
        else:
            rest = "template." + rest
        mapped.append(FieldError(e.type, f"{path}.{rest}", e.value, e.detail))
    return mapped


def validate_rolled_out_template(template: Pod, path: str) -> list[FieldError | str]:
    """Validate a template after a rollout's changes, with paths of the rollout step."""
    return _rollout_paths(validate_pod(template), path)


def parse_scenario(document: object, source: str, load: Loader | None = None) -> Scenario:
    """Parse and check one scenario document; ``source`` names it in errors.

    Raises :class:`ValidationError` (every problem, paths from the document root) or
    :class:`ConfigError` for an invalid ``schedulerConfig``.
    """
    p = _Parser(source, load)
    doc = p.mapping(document, "")
    if doc is None:
        raise ValidationError(source, [f"expected a {KIND} object, got {_json_type(document)}"])
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise ValidationError(
            source,
            [
                f'expected apiVersion "{API_VERSION}" and kind "{KIND}", got '
                f'"{doc.get("apiVersion")}" and "{doc.get("kind")}"'
            ],
        )
    p.known_fields(doc, "", _TOP_LEVEL)
    metadata = p.mapping(doc.get("metadata") or {}, "metadata") or {}
    name = p.string(metadata, "name", "metadata") or source.rsplit("/", 1)[-1].removesuffix(".yaml")
    description = doc.get("description") or ""
    if not isinstance(description, str):
        p.type_error("description", description, "string")
        description = ""
    seed = p.integer(doc, "seed", "") if "seed" in doc else None

    configuration = default_configuration()
    raw_config = doc.get("schedulerConfig")
    if raw_config is not None:
        config_doc = p.mapping(raw_config, "schedulerConfig")
        if config_doc is not None and set(config_doc) == {"file"}:
            documents = p.file_objects_raw(config_doc["file"], "schedulerConfig.file")
            config_doc = documents[0] if len(documents) == 1 else None
        if config_doc is not None:
            configuration = decode_configuration(
                config_doc, f"{source}: schedulerConfig", args_decoders=args_decoders()
            )

    objects: list[ScenarioObject] = []
    cluster = p.mapping(doc.get("cluster") or {}, "cluster") or {}
    p.known_fields(cluster, "cluster", ("nodes", "objects", "files"))
    generators = cluster.get("nodes")
    if generators is not None:
        items = generators if isinstance(generators, list) else [generators]
        for i, raw in enumerate(items):
            where = f"cluster.nodes[{i}]" if isinstance(generators, list) else "cluster.nodes"
            gen = p.mapping(raw, where)
            if gen is not None:
                objects.extend(p.new_nodes(p.generator(gen, where), where))
    templates: list[Node] = []

    def not_templates(found: list[ScenarioObject]) -> list[ScenarioObject]:
        # Template Nodes describe what a pool may add; they are no nodes of the cluster.
        templates.extend(o for o in found if isinstance(o, Node) and is_pool_template(o))
        return [o for o in found if not (isinstance(o, Node) and is_pool_template(o))]

    if "objects" in cluster:
        inline = not_templates(p.objects(cluster["objects"], "cluster.objects"))
        p.new_nodes([o for o in inline if isinstance(o, Node)], "cluster.objects")
        objects.extend(inline)
    files = cluster.get("files")
    if files is not None:
        if not isinstance(files, list):
            p.type_error("cluster.files", files, "array of file names")
        else:
            for i, name_ in enumerate(files):
                found = not_templates(p.file_objects(name_, f"cluster.files[{i}]"))
                p.new_nodes([o for o in found if isinstance(o, Node)], f"cluster.files[{i}]")
                objects.extend(found)
    p.track(objects)
    pools: tuple[NodePool, ...] = ()
    if templates:
        try:
            pools = template_pools(templates, source)
        except InputError as exc:
            p.errors.extend(f"cluster: {line.removeprefix(source + ': ')}" for line in exc.lines())
        for pool in pools:
            p.pool_bounds[pool.name] = (pool.min_size, pool.max_size)
            for zone in pool.zones:
                p.zones.add(zone)
    settings = (
        p.autoscaler(doc.get("autoscaler"), bool(templates))
        if "autoscaler" in doc or templates
        else None
    )

    steps: list[Step] = []
    raw_steps = doc.get("steps")
    if raw_steps is None:
        raw_steps = []
    if not isinstance(raw_steps, list):
        p.type_error("steps", raw_steps, "array of steps")
        raw_steps = []
    for index, raw in enumerate(raw_steps):
        step = p.step(raw, index)
        if step is not None:
            steps.append(step)
    if p.errors:
        raise ValidationError(source, p.errors)
    return Scenario(
        name,
        source,
        description,
        seed,
        configuration,
        tuple(objects),
        tuple(steps),
        pools,
        settings,
        frozenset(p.local_storage),
    )
