"""The wide differential stream (issue 12, item 6): what the full-profile stream never
reaches, drawn on top of its building blocks.

* clusters of 1 to 500 nodes, weighted so that the average scenario stays affordable
  (:data:`NODE_COUNT_BUCKETS`; most scenarios are small, a few are large);
* up to 8 topology spread constraints over the usual keys and arbitrary ones, with odd but
  valid label keys and values (maximum-length prefixes, names and values, dots, dashes,
  underscores, one-character keys, the empty value);
* many Namespaces, labelled, and pods spread over them; namespaceSelectors;
* PodDisruptionBudgets (several, some covering the same pods), pods with equal or missing
  ``startTime``, priorities, ``preemptionPolicy: Never``;
* pending pods nominated to nodes (``status.nominatedNodeName``), which the scheduler's
  nominator hands to every Filter on that node;
* everything :func:`topospread.testing.scenarios._issue_12_cases` draws (host network,
  pod-level resources, PriorityClasses, a nominated incoming pod, crowded nodes, inline
  disks, declared features);
* configurations with several profiles (the pod picks one by ``schedulerName``), plugins
  disabled at one extension point or everywhere, custom score weights, and
  ``percentageOfNodesToScore`` globally and per profile.
* in :data:`~topospread.testing.dra.DRA_SHARE` of the scenarios, DynamicResources
  (:func:`topospread.testing.dra.add_dynamic_resources`): ResourceSlices on some nodes (a
  pool per node, some in two slices, older generations, incomplete pools, a pool for all
  nodes or one zone), DeviceClasses with CEL selectors, claims allocated and reserved for
  assigned pods (devices in use), and the incoming pod's claims by name and from
  templates, some allocated already (reserved for it, for a running pod, or for no one).

Scenario *i* of seed *s* is drawn from ``random.Random(f"{WIDE_STREAM}:{s}:{i}")``, the
same way as the other streams (see :func:`topospread.testing.scenarios._independent_draw`);
its DynamicResources part from a stream of its own (:data:`DRA_STREAM`), so that every
other part of a scenario is what it was before DynamicResources were added.
"""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from topospread.engine.cluster import Cluster
from topospread.engine.cycle import NodeSearch, schedule_one
from topospread.engine.explain import add_nominated_pods
from topospread.errors import ConfigError
from topospread.framework.config.decode import decode_configuration
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle
from topospread.framework.runtime import Framework
from topospread.framework.status import Code
from topospread.model.admission import admit_pod
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod
from topospread.model.validation import validate_object, validate_pod
from topospread.plugins.registry import in_tree_registry
from topospread.testing.dra import DRA_SHARE, add_dynamic_resources
from topospread.testing.scenarios import (
    HOSTNAME,
    IMAGE_SIZES,
    NODE_IMAGE_NAMES,
    TOPOLOGY_KEYS,
    ZONE,
    Scenario,
    _full_node,
    _independent_draw,
    _issue_12_cases,
    _sample,
    _valid,
    full_assigned_pods,
    full_configurations,
    full_incoming_pods,
    full_pod_spec,
    merge_match_label_keys,
    project_sampled,
    workload_objects,
)

__all__ = [
    "DRA_STREAM",
    "NODE_COUNT_BUCKETS",
    "ODD_KEYS",
    "ODD_VALUES",
    "WIDE_STREAM",
    "draw_wide_scenario",
    "draw_wide_scenarios",
    "node_tree_order",
    "sampled_result",
    "wide_configurations",
    "wide_scenarios",
]

Obj = dict[str, Any]

WIDE_STREAM = "topospread-wide-scenario"
"""Wide scenario *i* of seed *s* comes from ``random.Random(f"{WIDE_STREAM}:{s}:{i}")``."""
DRA_STREAM = "topospread-wide-dra"
"""The DynamicResources part of a wide scenario comes from
``random.Random(f"{DRA_STREAM}:{b}")``, ``b`` the scenario's bulk seed (its one draw of a
64-bit integer): the rest of the scenario is drawn exactly as without it."""

NODE_COUNT_BUCKETS: tuple[tuple[int, int, int], ...] = (
    # (weight, fewest nodes, most nodes): small clusters decide as often as before, the
    # large ones reach percentageOfNodesToScore's threshold (100) and preemption's
    # numCandidates (100) without making the average scenario expensive.
    (55, 1, 12),
    (25, 13, 49),
    (14, 50, 149),
    (6, 150, 500),
)
_NODE_BUCKETS = tuple(
    (low, high) for weight, low, high in NODE_COUNT_BUCKETS for _ in range(weight)
)

_PREFIX_253 = ".".join(("a" * 63, "b" * 63, "c" * 63, "d" * 61))
_NAME_63 = "Z" + "-_." * 20 + "z"
ODD_KEYS = (
    "example.com/rack-row",
    "k8s.io.x-y/Zone_1.a",
    f"{_PREFIX_253}/{_NAME_63}",
    "a",
)
"""Topology keys besides the usual four: a prefix, dots and dashes, the longest valid
key (a 253-character prefix and a 63-character name), a one-character key."""
ODD_VALUES = ("", "0", "Z", "a-b_c.d", "x" * 63, "A" * 62 + "9", "ip-10-0-0-1.ec2.internal")
"""Label values: empty, one character, every allowed punctuation, the longest valid."""
WIDE_KEYS = (*TOPOLOGY_KEYS, *ODD_KEYS)

WIDE_NAMESPACES = ("default", "ns1", "ns2", "kube-system", "team-a", "team-b", "n" * 63, "a-b-c")
_NAMESPACE_LABELS: tuple[Obj, ...] = (
    {},
    {"team": "x"},
    {"team": "y"},
    {"team": "x", "env": "prod"},
    {"env": "prod"},
    {"example.com/rack-row": "x" * 63},
)
_NAMESPACE_SELECTORS: tuple[Obj, ...] = (
    {},
    {"matchLabels": {"team": "x"}},
    {"matchExpressions": [{"key": "team", "operator": "In", "values": ["x", "y"]}]},
    {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
    {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
    {"matchLabels": {"example.com/rack-row": "x" * 63}},
)
_POD_ODD_LABEL = "example.com/rack-row"
_STARTS = ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-03-01T12:00:00Z", None)
_PDB_SELECTORS: tuple[Obj, ...] = (
    {"matchLabels": {"app": "web"}},
    {"matchLabels": {"app": "db"}},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {"matchLabels": {"tier": "fe"}},
    {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]},
    {},
)
_PROFILE_NAMES = ("default-scheduler", "second", "x" * 63)
_DISABLEABLE = (
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "InterPodAffinity",
    "PodTopologySpread",
    "NodePorts",
    "NodeUnschedulable",
    "DefaultPreemption",
    "VolumeRestrictions",
    "NodeDeclaredFeatures",
)
_POINTS = (
    "multiPoint",
    "multiPoint",
    "filter",
    "score",
    "score",
    "postFilter",
    "preScore",
    "preFilter",
)
"""Where a plugin is disabled: mostly everywhere or where it decides; rarely only at
PreFilter / PreScore, which upstream answers with an Error at Filter / Score."""
VOLUME_SHARE = 0.35
"""The share of scenarios with claims, volumes and the CSI objects."""
_PERCENTAGES = (None, None, None, 0, 1, 5, 30, 50, 100)


@functools.cache
def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


def _draw_choice(draw: st.DrawFn, options: tuple[Any, ...]) -> Any:
    return options[draw(_ints(0, len(options) - 1))]


def _pick(draw: st.DrawFn, options: tuple[Obj, ...]) -> Obj:
    """One of ``options`` (dicts are not hashable, so not through the cached samplers)."""
    return options[draw(_ints(0, len(options) - 1))]


# -- nodes ---------------------------------------------------------------------------------


def _node_names(count: int) -> tuple[str, ...]:
    if count <= 12:
        return tuple(f"n{i}" for i in range(count))  # the other streams' names
    width = len(str(count - 1))
    return tuple(f"node-{i:0{width}d}.example" for i in range(count))


def _wide_nodes(
    draw: st.DrawFn, names: tuple[str, ...], tight: bool, bulk: random.Random
) -> list[Obj]:
    """The first 12 nodes drawn one by one; the rest copies of them with their own name,
    zone and odd labels, chosen by ``bulk`` (a Hypothesis test case holds a few thousand
    choices, too few for hundreds of nodes drawn field by field)."""
    sizes = {image[0]: draw(_sample(IMAGE_SIZES)) for image in NODE_IMAGE_NAMES}
    # Few domains per odd key, so that they tie and collide as the usual ones do.
    alphabets = {
        key: tuple(draw(st.lists(_sample(ODD_VALUES), min_size=1, max_size=3))) for key in ODD_KEYS
    }
    big = len(names) > 12
    zones = ("a", "b", "c", "z3", "z4", "z5", "")
    templates: list[Obj] = []
    result = []
    for index, name in enumerate(names):
        if index < 12:
            node = _full_node(draw, name, names[:12], tight, sizes)
            templates.append(node)
            labels = node["metadata"]["labels"]
            if big and ZONE in labels:
                # More zones in larger clusters, still with "" and missing ones.
                labels[ZONE] = draw(_sample(zones))
            for key in ODD_KEYS:
                if draw(_ints(0, 3)) > 0:
                    labels[key] = draw(_sample(alphabets[key]))
        else:
            node = copy.deepcopy(bulk.choice(templates))
            node["metadata"]["name"] = name
            labels = node["metadata"]["labels"]
            if ZONE in labels or bulk.random() < 0.1:
                labels[ZONE] = bulk.choice(zones)
            for key in ODD_KEYS:
                labels.pop(key, None)
                if bulk.random() < 0.75:
                    labels[key] = bulk.choice(alphabets[key])
        if big and HOSTNAME in labels and bulk.random() < 0.97:
            labels[HOSTNAME] = name
        result.append(node)
    return result


def _zone_key(labels: dict[str, str]) -> tuple[str, str] | None:
    # utilnode.GetZoneKey: region and zone (the GA labels, else the beta ones); None when
    # both are empty.
    zone = labels.get(ZONE, labels.get("failure-domain.beta.kubernetes.io/zone", ""))
    region = labels.get(
        "topology.kubernetes.io/region", labels.get("failure-domain.beta.kubernetes.io/region", "")
    )
    return None if not zone and not region else (region, zone)


def node_tree_order(nodes: list[Obj]) -> list[Obj]:
    """The nodes in the order kube-scheduler's cache lists them (its node tree): zones in
    the order first seen, one node of each zone in turn. Feeding this order back gives the
    same order, so a cluster written this way is searched alike by both engines."""
    zones: dict[tuple[str, str] | None, list[Obj]] = {}
    for node in nodes:
        zones.setdefault(_zone_key(node["metadata"].get("labels", {})), []).append(node)
    ordered: list[Obj] = []
    for index in range(max((len(z) for z in zones.values()), default=0)):
        ordered.extend(z[index] for z in zones.values() if index < len(z))
    return ordered


# -- pods ----------------------------------------------------------------------------------


@functools.cache
def _odd_selector_values() -> st.SearchStrategy[list[str]]:
    return st.lists(_sample(ODD_VALUES), min_size=1, max_size=2, unique=True)


@st.composite
def _wide_selector(draw: st.DrawFn, labels: dict[str, str]) -> Obj | None:
    kind = draw(_sample(("own", "own", "own", "odd", "empty", "nil", "app")))
    if kind == "nil":
        return None
    if kind == "empty":
        return {}
    if kind == "app":
        return {"matchLabels": {"app": draw(_sample(("web", "db")))}}
    if kind == "odd":
        operator = draw(_sample(("In", "NotIn", "Exists", "DoesNotExist")))
        expression: Obj = {"key": _POD_ODD_LABEL, "operator": operator}
        if operator in ("In", "NotIn"):
            expression["values"] = draw(_odd_selector_values())
        return {"matchExpressions": [expression]}
    if not labels:
        return {}
    keys = draw(st.lists(_sample(tuple(labels)), min_size=1, max_size=2, unique=True))
    return {"matchLabels": {k: labels[k] for k in keys}}


@st.composite
def wide_spread_constraints(draw: st.DrawFn, labels: dict[str, str]) -> list[Obj]:
    """1-8 constraints, (topologyKey, whenUnsatisfiable) unique, over every key."""
    count = draw(_sample((1, 1, 2, 2, 3, 4, 5, 8)))
    pairs = draw(
        st.lists(
            st.tuples(_sample(WIDE_KEYS), _sample(("DoNotSchedule", "ScheduleAnyway"))),
            min_size=1,
            max_size=count,
            unique=True,
        )
    )
    result = []
    for key, action in pairs:
        constraint: Obj = {
            "maxSkew": draw(_sample((1, 1, 1, 2, 3, 7))),
            "topologyKey": key,
            "whenUnsatisfiable": action,
        }
        selector = draw(_wide_selector(labels))
        if selector is not None:
            constraint["labelSelector"] = selector
        if action == "DoNotSchedule" and draw(_ints(0, 3)) == 0:
            constraint["minDomains"] = draw(_sample((1, 2, 3, 5, 40)))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = draw(_sample((None, None, "Honor", "Ignore")))
            if value is not None:
                constraint[policy] = value
        if selector is not None and draw(_ints(0, 4)) == 0:
            used = set(selector.get("matchLabels", {})) | {
                e["key"] for e in selector.get("matchExpressions", [])
            }
            free = tuple(k for k in (*labels, "absent-key") if k not in used)
            if free:
                constraint["matchLabelKeys"] = draw(
                    st.lists(_sample(free), min_size=1, max_size=2, unique=True)
                )
        result.append(constraint)
    return result


def _with_odd_label(draw: st.DrawFn, pod: Obj) -> None:
    if draw(_ints(0, 2)) == 0:
        pod["metadata"].setdefault("labels", {})[_POD_ODD_LABEL] = draw(_sample(ODD_VALUES))


# -- the rest of the cluster ---------------------------------------------------------------


def _namespaces(draw: st.DrawFn, used: tuple[str, ...]) -> list[Obj]:
    objects = []
    for name in used:
        if name != "default" and draw(_ints(0, 9)) == 0:
            continue  # a namespace the cluster does not list (pods may still name it)
        metadata: Obj = {"name": name}
        labels = dict(_pick(draw, _NAMESPACE_LABELS))
        if labels:
            metadata["labels"] = labels
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
    return objects


def _budgets(draw: st.DrawFn, namespaces: tuple[str, ...]) -> list[Obj]:
    budgets = []
    for index in range(draw(_sample((0, 0, 1, 2, 3, 4)))):
        spec: Obj = {"selector": copy.deepcopy(_pick(draw, _PDB_SELECTORS))}
        if draw(_BOOLS):
            spec["minAvailable"] = draw(_sample((1, 2, "50%")))
        else:
            spec["maxUnavailable"] = draw(_sample((0, 1, "25%")))
        allowed = draw(_sample((0, 0, 1, 1, 2, 5)))
        status: Obj = {
            "disruptionsAllowed": allowed,
            "currentHealthy": 3,
            "desiredHealthy": 2,
            "expectedPods": 3,
            "observedGeneration": 1,
        }
        budgets.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {
                    "name": f"pdb{index}",
                    "namespace": draw(_sample(namespaces)),
                    "generation": 1,
                },
                "spec": spec,
                "status": status,
            }
        )
    return budgets


_BOOLS = st.booleans()


def _nominated_pods(
    draw: st.DrawFn, names: tuple[str, ...], namespaces: tuple[str, ...]
) -> list[Obj]:
    pods = []
    for index in range(draw(_sample((1, 1, 2, 3, 5)))):
        spec = copy.deepcopy(draw(full_pod_spec()))
        spec["priority"] = draw(_sample((0, 100, 1000, 5000)))
        namespace = draw(_sample(namespaces))
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"nominated{index}",
                    "namespace": namespace,
                    "uid": f"uid-{namespace}-nominated{index}",
                    "labels": {"app": draw(_sample(("web", "db"))), "tier": "fe"},
                },
                "spec": spec,
                "status": {"phase": "Pending", "nominatedNodeName": draw(_sample(names))},
            }
        )
    return pods


# -- volumes -------------------------------------------------------------------------------
#
# Claims and volumes for the incoming pod and some assigned pods: claims bound to zonal
# volumes (zone labels, node affinity), unbound Immediate claims, WaitForFirstConsumer
# claims with static volumes and with dynamic provisioning (allowedTopologies,
# CSIStorageCapacity for a driver with storageCapacity), ReadWriteOncePod claims in use,
# CSINodes with attach limits and migrated plugins, VolumeAttachments, generic ephemeral
# volumes, inline in-tree disks that migrate to CSI. Chosen with ``bulk`` (cheap, and
# volumes do not need Hypothesis's shrinking).

_CSI = "csi.example.com"
_TRACKED = "tracked.csi.example.com"
_EBS = "ebs.csi.aws.com"
_PD = "pd.csi.storage.gke.io"
_SIZES = ("1Gi", "2Gi", "5Gi", "10Gi", "20Gi", "1500Mi")
_VOLUME_ZONES = ("a", "b", "c", "z3")
_CLAIM_KINDS = (
    *("bound",) * 5,
    *("immediate",) * 2,
    *("static",) * 3,
    *("dynamic",) * 3,
    *("tracked",) * 3,
    "rwop",
    "missing-class",
)


def _storage_class(name: str, provisioner: str, wait: bool, zones: list[str] | None) -> Obj:
    obj: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate",
    }
    if zones:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return obj


def _zones(bulk: random.Random) -> list[str]:
    return sorted(bulk.sample(_VOLUME_ZONES, bulk.randint(1, 2)))


def _persistent_volume(
    bulk: random.Random, name: str, storage_class: str, names: tuple[str, ...]
) -> Obj:
    spec: Obj = {
        "capacity": {"storage": bulk.choice(_SIZES)},
        "accessModes": bulk.choice(
            (
                ["ReadWriteOnce"],
                ["ReadWriteOnce"],
                ["ReadWriteOnce", "ReadOnlyMany"],
                ["ReadWriteMany"],
            )
        ),
        "storageClassName": storage_class,
        "persistentVolumeReclaimPolicy": "Retain",
    }
    metadata: Obj = {"name": name}
    source = bulk.random()
    zones = _zones(bulk)
    if source < 0.2:
        spec["awsElasticBlockStore"] = {"volumeID": f"vol-{name}"}
    elif source < 0.35:
        spec["gcePersistentDisk"] = {"pdName": name}
    else:
        spec["csi"] = {"driver": bulk.choice((_CSI, _CSI, _EBS, _TRACKED)), "volumeHandle": name}
    if bulk.random() < 0.5:
        metadata["labels"] = {ZONE: "__".join(zones)}
    roll = bulk.random()
    if roll < 0.45:
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    elif roll < 0.6:
        term = {
            "matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": [bulk.choice(names)]}
            ]
        }
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": "Available"},
    }


def _claim(name: str, namespace: str, storage_class: str | None, mode: str, size: str) -> Obj:
    spec: Obj = {"accessModes": [mode], "resources": {"requests": {"storage": size}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-claim-{namespace}-{name}"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _bind(claim: Obj, volume: Obj) -> None:
    metadata = claim["metadata"]
    claim["spec"]["volumeName"] = volume["metadata"]["name"]
    claim["spec"]["storageClassName"] = volume["spec"]["storageClassName"]
    metadata["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    claim["status"] = {
        "phase": "Bound",
        "accessModes": volume["spec"]["accessModes"],
        "capacity": volume["spec"]["capacity"],
    }
    volume["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": metadata["namespace"],
        "name": metadata["name"],
        "uid": metadata["uid"],
    }
    volume["status"] = {"phase": "Bound"}


def _volumes(
    bulk: random.Random, cluster: list[Obj], pod: Obj, names: tuple[str, ...]
) -> list[str]:
    """Add storage objects and claims for the incoming pod (and some assigned pods);
    returns the tags reached."""
    tags = ["volumes"]
    objects: list[Obj] = []
    classes = {
        "immediate": _storage_class("immediate", _CSI, False, None),
        "static": _storage_class("static", "kubernetes.io/no-provisioner", True, None),
        "wffc": _storage_class("wffc", _CSI, True, _zones(bulk) if bulk.random() < 0.5 else None),
        "tracked": _storage_class(
            "tracked", _TRACKED, True, _zones(bulk) if bulk.random() < 0.3 else None
        ),
        "ebs": _storage_class("ebs", _EBS, True, None),
    }
    objects.extend(c for name, c in classes.items() if name != "tracked" or bulk.random() < 0.9)
    if bulk.random() < 0.8:
        tags.append("csi-storage-capacity")
        objects.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIDriver",
                "metadata": {"name": _TRACKED},
                "spec": {"storageCapacity": True, "attachRequired": bulk.random() < 0.5},
            }
        )
        for zone in _VOLUME_ZONES:
            if bulk.random() < 0.7:
                capacity: Obj = {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
                    "storageClassName": "tracked",
                    "capacity": bulk.choice(("0", "3Gi", "8Gi", "50Gi")),
                    "nodeTopology": {"matchLabels": {ZONE: zone}},
                }
                if bulk.random() < 0.2:
                    capacity["maximumVolumeSize"] = bulk.choice(("2Gi", "10Gi"))
                objects.append(capacity)
    if bulk.random() < 0.5:
        objects.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIDriver",
                "metadata": {"name": _CSI},
                "spec": {"attachRequired": True},
            }
        )
    # CSINodes: attach limits per driver, in-tree plugins migrated to CSI.
    limited = bulk.sample(names, min(len(names), bulk.randint(0, 12)))
    for node in limited:
        tags.append("csi-nodes")
        drivers = []
        for driver in bulk.sample((_CSI, _EBS, _PD, _TRACKED), bulk.randint(0, 3)):
            entry: Obj = {"name": driver, "nodeID": f"{node}-{driver}"}
            if bulk.random() < 0.8:
                entry["allocatable"] = {"count": bulk.choice((0, 1, 1, 2, 3, 39))}
            if bulk.random() < 0.5:
                entry["topologyKeys"] = [ZONE]
            drivers.append(entry)
        csi_node: Obj = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": node},
            "spec": {"drivers": drivers},
        }
        if bulk.random() < 0.5:
            csi_node["metadata"]["annotations"] = {
                "storage.alpha.kubernetes.io/migrated-plugins": bulk.choice(
                    ("kubernetes.io/aws-ebs", "kubernetes.io/aws-ebs,kubernetes.io/gce-pd")
                )
            }
        objects.append(csi_node)
    # Volumes: some static (class "static", maybe prebound), some bound below.
    volumes = [
        _persistent_volume(bulk, f"pv{i}", bulk.choice(("static", "static", "ebs", "other")), names)
        for i in range(bulk.randint(0, 6))
    ]
    namespace = pod["metadata"].get("namespace", "default")
    pod_volumes: list[Obj] = []
    for index in range(bulk.randint(1, 3)):
        kind = bulk.choice(_CLAIM_KINDS)
        name = f"claim{index}"
        size = bulk.choice(_SIZES)
        if kind == "bound":
            volume = _persistent_volume(
                bulk, f"bound{index}", bulk.choice(("static", "ebs")), names
            )
            claim = _claim(name, namespace, None, "ReadWriteOnce", size)
            _bind(claim, volume)
            volumes.append(volume)
            tags.append("bound-claims")
        elif kind == "rwop":
            claim = _claim(name, namespace, "wffc", "ReadWriteOncePod", size)
            volume = _persistent_volume(bulk, f"rwop{index}", "wffc", names)
            volume["spec"]["accessModes"] = ["ReadWriteOncePod"]
            _bind(claim, volume)
            volumes.append(volume)
            tags.append("read-write-once-pod")
            users = [
                o
                for o in cluster
                if o.get("kind") == "Pod"
                and o["metadata"].get("namespace") == namespace
                and o["spec"].get("nodeName")
            ]
            if users and bulk.random() < 0.6:
                user = bulk.choice(users)
                user["spec"].setdefault("volumes", []).append(
                    {"name": "shared", "persistentVolumeClaim": {"claimName": name}}
                )
                tags.append("rwop-in-use")
        else:
            storage_class = {
                "immediate": "immediate",
                "static": "static",
                "dynamic": "wffc",
                "tracked": "tracked",
                "missing-class": "absent",
            }[kind]
            claim = _claim(name, namespace, storage_class, "ReadWriteOnce", size)
            if kind == "immediate":
                tags.append("unbound-immediate")
            elif kind == "static":
                tags.append("wffc-static")
                if volumes and bulk.random() < 0.2:
                    # Prebound: claimRef without a bind (two prebound volumes make
                    # upstream's pick depend on its cache order: detected, not avoided).
                    target = bulk.choice(volumes)
                    if "claimRef" not in target["spec"]:
                        target["spec"]["claimRef"] = {
                            "namespace": namespace,
                            "name": name,
                        }
            else:
                tags.append("wffc-dynamic")
            if bulk.random() < 0.05:
                claim["metadata"]["annotations"] = {
                    "volume.kubernetes.io/selected-node": bulk.choice(names)
                }
        objects.append(claim)
        pod_volumes.append({"name": f"v{index}", "persistentVolumeClaim": {"claimName": name}})
    if bulk.random() < 0.2:
        # A generic ephemeral volume: the claim <pod>-<volume>, owned by the pod.
        tags.append("ephemeral")
        pod["metadata"]["uid"] = "uid-incoming"
        claim = _claim(
            f"{pod['metadata']['name']}-eph",
            namespace,
            bulk.choice(("wffc", "static", "tracked")),
            "ReadWriteOnce",
            "1Gi",
        )
        owner = "uid-incoming" if bulk.random() < 0.85 else "uid-someone-else"
        claim["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "incoming",
                "uid": owner,
                "controller": True,
            }
        ]
        objects.append(claim)
        pod_volumes.append(
            {
                "name": "eph",
                "ephemeral": {
                    "volumeClaimTemplate": {
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        }
                    }
                },
            }
        )
    if bulk.random() < 0.25:
        tags.append("inline-migrated")
        pod_volumes.append(
            {
                "name": "inline",
                "awsElasticBlockStore": {"volumeID": f"vol-inline-{bulk.randint(0, 2)}"},
            }
        )
    # Assigned pods using bound claims count against attach limits on their nodes.
    assigned = [o for o in cluster if o.get("kind") == "Pod" and o["spec"].get("nodeName")]
    for index, user in enumerate(bulk.sample(assigned, min(len(assigned), bulk.randint(0, 4)))):
        user_namespace = user["metadata"]["namespace"]
        volume = _persistent_volume(bulk, f"used{index}", "static", names)
        claim = _claim(f"used{index}", user_namespace, None, "ReadWriteOnce", "1Gi")
        _bind(claim, volume)
        volumes.append(volume)
        objects.append(claim)
        user["spec"].setdefault("volumes", []).append(
            {"name": f"used{index}", "persistentVolumeClaim": {"claimName": f"used{index}"}}
        )
        if "csi" in volume["spec"] and bulk.random() < 0.5:
            tags.append("volume-attachments")
            objects.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "VolumeAttachment",
                    "metadata": {"name": f"va-{index}"},
                    "spec": {
                        "attacher": volume["spec"]["csi"]["driver"],
                        "nodeName": bulk.choice(names),
                        "source": {"persistentVolumeName": volume["metadata"]["name"]},
                    },
                    "status": {"attached": bulk.random() < 0.8},
                }
            )
    # A pod may mount a volume once: drop repeats the inline disks of other cases added.
    existing = pod["spec"].setdefault("volumes", [])
    existing.extend(v for v in pod_volumes if all(v["name"] != e["name"] for e in existing))
    cluster.extend(volumes)
    cluster.extend(objects)
    return tags


# -- configurations ------------------------------------------------------------------------


@st.composite
def wide_configurations(draw: st.DrawFn) -> tuple[Obj | None, tuple[str, ...]]:
    """A configuration (None: the default one) and the schedulerNames it serves."""
    if draw(_ints(0, 4)) == 0:
        return None, ("default-scheduler",)
    count = draw(_sample((1, 1, 2, 2, 3)))
    profiles = []
    for index in range(count):
        base = draw(full_configurations())
        profile: Obj = (
            copy.deepcopy(base["profiles"][0])
            if base is not None
            else {"schedulerName": "default-scheduler"}
        )
        profile["schedulerName"] = _PROFILE_NAMES[index]
        plugins = profile.setdefault("plugins", {})
        for _ in range(draw(_sample((0, 0, 1, 2, 3)))):
            point = draw(_sample(_POINTS))
            name = draw(_sample(_DISABLEABLE))
            block = plugins.setdefault(point, {})
            disabled = block.setdefault("disabled", [])
            if {"name": name} not in disabled and all(
                e.get("name") != name for e in block.get("enabled", [])
            ):
                disabled.append({"name": name})
        if draw(_ints(0, 3)) == 0 and "multiPoint" not in plugins:
            # Weights through multiPoint (the score block may carry its own).
            plugins["multiPoint"] = {
                "enabled": [
                    {"name": draw(_sample(("ImageLocality", "TaintToleration"))), "weight": 7}
                ]
            }
        if not plugins:
            del profile["plugins"]
        percentage = draw(_sample(_PERCENTAGES))
        if percentage is not None:
            profile["percentageOfNodesToScore"] = percentage
        profiles.append(profile)
    config: Obj = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": profiles,
    }
    percentage = draw(_sample(_PERCENTAGES))
    if percentage is not None:
        config["percentageOfNodesToScore"] = percentage
    try:
        decode_configuration(config, "config")
    except ConfigError:
        assume(False)
    return config, tuple(p["schedulerName"] for p in profiles)


# -- whole scenarios -----------------------------------------------------------------------


def _valid_object(obj: Obj) -> bool:
    if obj.get("kind") in ("Node", "Pod", "Service", "ReplicationController", "ReplicaSet"):
        return _valid(obj)
    (decoded,) = decode_documents([copy.deepcopy(obj)]).objects
    return not validate_object(decoded)


@st.composite
def wide_scenarios(draw: st.DrawFn) -> Scenario:
    """One wide scenario (see the module docstring)."""
    tags: list[str] = []
    low, high = draw(_sample(_NODE_BUCKETS))
    node_count = draw(_ints(low, high))
    names = _node_names(node_count)
    tight = draw(_ints(0, 9)) < 4
    bulk_seed = draw(st.integers(0, 2**64 - 1))
    bulk = random.Random(bulk_seed)
    # DynamicResources come from a stream of their own, so that adding them left every
    # other draw of a scenario as it was.
    dra = random.Random(f"{DRA_STREAM}:{bulk_seed}")
    nodes = _wide_nodes(draw, names, tight, bulk)
    if node_count >= 100:
        nodes = node_tree_order(nodes)
    namespaces = tuple(
        dict.fromkeys(("default", *draw(st.lists(_sample(WIDE_NAMESPACES), max_size=7))))
    )
    if len(namespaces) > 3:
        tags.append("many-namespaces")
    cluster: list[Obj] = _namespaces(draw, namespaces)
    cluster.extend(nodes)
    workloads, owned = draw(workload_objects())
    pod_strategy = full_assigned_pods(names[:12], owned)
    pod_count = draw(_ints(0, min(24 + node_count, 3 * node_count)))
    start_times: set[str | None] = set()
    templates: list[Obj] = []
    for index in range(pod_count):
        if index < 36:
            # Drawn one by one; beyond, copies placed and labelled by ``bulk``.
            pod = copy.deepcopy(draw(pod_strategy))
            templates.append(pod)
            choose: Any = functools.partial(_draw_choice, draw)
        else:
            pod = copy.deepcopy(bulk.choice(templates))
            choose = bulk.choice
        if pod["spec"]["nodeName"] != "gone-node" and node_count > 12:
            pod["spec"]["nodeName"] = names[bulk.randrange(node_count)]
        if choose((True, False, False)):
            pod["metadata"]["namespace"] = choose(namespaces)
            pod["metadata"].pop("ownerReferences", None)
        labels = pod["metadata"].setdefault("labels", {})
        labels.pop(_POD_ODD_LABEL, None)
        if choose((True, False, False)):
            labels[_POD_ODD_LABEL] = choose(ODD_VALUES)
        pod["status"].pop("startTime", None)
        started = choose(_STARTS)
        if started is not None:
            pod["status"]["startTime"] = started
        start_times.add(started)
        pod["metadata"]["name"] = f"p{index}"
        pod["metadata"]["uid"] = f"uid-{pod['metadata']['namespace']}-p{index}"
        cluster.append(pod)
    if None in start_times and len(start_times) > 1:
        tags.append("start-time-missing")
    cluster.extend(workloads)
    budgets = _budgets(draw, namespaces)
    if budgets:
        tags.append("pdbs" if len(budgets) == 1 else "several-pdbs")
    cluster.extend(budgets)
    if draw(_ints(0, 4)) == 0:
        tags.append("nominated-pods")
        cluster.extend(_nominated_pods(draw, names, namespaces))
    for obj in cluster:
        assume(_valid_object(obj))

    pod = draw(full_incoming_pods(names[:12], owned))
    spec = pod["spec"]
    if draw(_ints(0, 9)) == 0 and pod["metadata"].get("namespace", "default") == "default":
        pod["metadata"]["namespace"] = draw(_sample(namespaces))
        pod["metadata"].pop("ownerReferences", None)
    _with_odd_label(draw, pod)
    if draw(_ints(0, 2)) > 0:
        labels = pod["metadata"].get("labels", {})
        spec["topologySpreadConstraints"] = draw(wide_spread_constraints(labels))
        merge_match_label_keys(pod)
        if len(spec["topologySpreadConstraints"]) > 3:
            tags.append("many-constraints")
        if any(c["topologyKey"] in ODD_KEYS for c in spec["topologySpreadConstraints"]):
            tags.append("odd-keys")
    for kind in ("podAffinity", "podAntiAffinity"):
        for term in (
            spec.get("affinity", {})
            .get(kind, {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", [])
        ):
            if draw(_ints(0, 3)) == 0:
                term["namespaceSelector"] = copy.deepcopy(_pick(draw, _NAMESPACE_SELECTORS))
                tags.append("namespace-selector")
    if node_count > 12 and "nodeName" in spec and draw(_BOOLS):
        spec["nodeName"] = names[-1]
    if draw(_ints(0, 4)) == 0:
        spec["priority"] = draw(_sample((1000, 5000, 100000)))
        tags.append("high-priority")
        if draw(_ints(0, 2)) == 0:
            spec["preemptionPolicy"] = "Never"
            tags.append("preemption-never")
    config, scheduler_names = draw(wide_configurations())
    scheduler_name = draw(_sample(scheduler_names))
    if scheduler_name != "default-scheduler":
        spec["schedulerName"] = scheduler_name
    if config is not None:
        if len(config["profiles"]) > 1:
            tags.append("several-profiles")
        if "percentageOfNodesToScore" in config or any(
            "percentageOfNodesToScore" in p for p in config["profiles"]
        ):
            tags.append("percentage-of-nodes")
        if any(
            "disabled" in block
            for p in config["profiles"]
            for block in p.get("plugins", {}).values()
        ):
            tags.append("disabled-plugins")
    (decoded,) = decode_documents([copy.deepcopy(pod)]).objects
    assert isinstance(decoded, Pod)
    assume(not validate_pod(decoded))
    tags.extend(_issue_12_cases(draw, cluster, pod, names))
    if bulk.random() < VOLUME_SHARE:
        before = len(cluster)
        tags.extend(_volumes(bulk, cluster, pod, names))
        for obj in cluster[before:]:
            assume(_valid_object(obj))
        (decoded,) = decode_documents([copy.deepcopy(pod)]).objects
        assert isinstance(decoded, Pod)
        assume(not validate_pod(decoded))
    if dra.random() < DRA_SHARE:
        before = len(cluster)
        users = [o for o in cluster if o.get("kind") == "Pod"]
        tags.extend(add_dynamic_resources(dra, cluster, pod, names))
        for obj in cluster[before:]:
            assume(_valid_object(obj))
        for obj in (*users, pod):
            if obj is pod or "resourceClaims" in obj["spec"]:
                (decoded,) = decode_documents([copy.deepcopy(obj)]).objects
                assert isinstance(decoded, Pod)
                assume(not validate_pod(decoded))
    if node_count >= 100:
        tags.append("nodes-100+")
    elif node_count >= 50:
        tags.append("nodes-50+")
    if "hostNetwork" in spec:
        tags.append("host-network")
    if "resources" in spec:
        tags.append("pod-resources")
    # Where percentageOfNodesToScore can cut the search short, compare kube-scheduler's
    # own search too (the oracle has no nominated-node shortcut there).
    sampled = node_count >= 100 and not pod.get("status", {}).get("nominatedNodeName")
    if sampled:
        tags.append("sampled-search")
    return Scenario(cluster, pod, config, tuple(dict.fromkeys(tags)), sampled=sampled)


def sampled_result(scenario: Scenario) -> Obj:
    """topospread's cycle with kube-scheduler's node search (``NodeSearch``: the
    percentageOfNodesToScore cut-off from start index 0, a lone feasible node unscored,
    ties in visit order), projected as :func:`project_sampled` (compared with the
    oracle's ``"sampled"``)."""
    objects = decode_documents(copy.deepcopy(scenario.cluster)).objects
    cluster = Cluster.from_objects(objects)
    (pod,) = decode_documents([copy.deepcopy(scenario.pod)]).objects
    assert isinstance(pod, Pod)
    configuration = decode_configuration(
        scenario.config
        or {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        "config",
    )
    pod = admit_pod(pod, cluster.admission)
    profile = next(p for p in configuration.profiles if p.scheduler_name == pod.scheduler_name)
    handle = Handle(cluster.snapshot(), cluster.objects, configuration.parallelism)
    framework = Framework(profile, in_tree_registry(), handle, Features())
    add_nominated_pods(framework, cluster, configuration)
    search = NodeSearch(configuration.percentage_of_nodes_to_score)
    cycle = schedule_one(
        framework, pod, search, skip_single_node_scoring=True, visit_order_ties=True
    )
    # A Filter's Error ends findNodesThatFitPod with no feasible list at all.
    failed = any(s is not None and s.code is Code.ERROR for s in cycle.statuses.values())
    return project_sampled(
        {
            "feasible": [] if failed else [info.name for info in cycle.feasible],
            "tiedNodes": list(cycle.tied_nodes),
            "message": cycle.message,
        }
    )


def draw_wide_scenario(seed: int, index: int) -> Scenario:
    """Wide scenario number ``index`` of the stream for ``seed``."""
    return _independent_draw(seed, index, wide_scenarios(), WIDE_STREAM)


def draw_wide_scenarios(seed: int, count: int) -> list[Scenario]:
    """The first ``count`` wide scenarios of the stream for ``seed`` (deterministic)."""
    strategy = wide_scenarios()
    return [_independent_draw(seed, index, strategy, WIDE_STREAM) for index in range(count)]
