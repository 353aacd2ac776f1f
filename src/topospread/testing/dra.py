"""Dynamic resource allocation objects for the differential tests: builders of
ResourceSlices, DeviceClasses, ResourceClaims and pods referencing them, and
:func:`add_dynamic_resources`, which puts them into a wide scenario
(:mod:`topospread.testing.wide`).

Only what topospread decides is built (its README, "What is supported", DynamicResources):
no admin access, capacity requests, counters, device taints, DeviceTaintRules, binding
conditions, extended resources backed by a DeviceClass, nor CEL outside the evaluated
subset. A scenario topospread refuses would test nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

__all__ = [
    "API",
    "BIG_CLASS_SELECTOR",
    "DRA_SHARE",
    "DRIVER",
    "GPU_CLASS",
    "MODELS",
    "NIC_DRIVER",
    "POD_UID",
    "SELECTORS",
    "add_dynamic_resources",
    "allocation",
    "claim",
    "device",
    "device_class",
    "incoming",
    "node",
    "ref",
    "request",
    "slice_",
]

Obj = dict[str, Any]
DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
API = "resource.k8s.io/v1"
POD_UID = "uid-incoming"

MODELS = ("a100", "t4", "h100")
SELECTORS = (
    f'device.attributes["{DRIVER}"].model == "a100"',
    f'device.attributes["{DRIVER}"].model != "t4"',
    f'device.attributes["{DRIVER}"].index >= 1',
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("24Gi")) > 0',
    f'device.attributes["{DRIVER}"].version.isGreaterThan(semver("1.2.0"))',
    f'has(device.attributes["{DRIVER}"].version) && '
    f'device.attributes["{DRIVER}"].version.major() == 2',
    f'device.attributes["{DRIVER}"].model in ["a100", "h100"]',
    f'device.driver == "{NIC_DRIVER}"',
    f'device.attributes["{DRIVER}"].index == "1" || device.attributes["{DRIVER}"].index == 1u',
    f'device.attributes["{DRIVER}"].index > "a"',
)
"""Request selectors: attributes, capacity, the quantity and semver libraries, a missing
key (a runtime error), heterogeneous equality and a mismatched comparison (no such
overload)."""
BIG_CLASS_SELECTOR = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'


# -- builders ------------------------------------------------------------------------------


def node(name: str, zone: str = "a") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
    }


def device(
    name: str, model: str = "a100", index: int = 0, memory: str = "40Gi", **attrs: Obj
) -> Obj:
    attributes: Obj = {"model": {"string": model}, f"{DRIVER}/index": {"int": index}}
    attributes.update(attrs)
    return {"name": name, "attributes": attributes, "capacity": {"memory": {"value": memory}}}


def slice_(
    name: str,
    devices: list[Obj],
    *,
    node_name: str | None = None,
    pool: str | None = None,
    generation: int = 1,
    count: int = 1,
    driver: str = DRIVER,
    **spec: Any,
) -> Obj:
    body: Obj = {
        "driver": driver,
        "pool": {
            "name": pool or node_name or name,
            "generation": generation,
            "resourceSliceCount": count,
        },
        "devices": devices,
    }
    if node_name is not None:
        body["nodeName"] = node_name
    body.update(spec)
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def device_class(name: str, *expressions: str) -> Obj:
    return {
        "apiVersion": API,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def request(
    name: str, cls: str = "gpu", *selectors: str, count: int | None = None, mode: str | None = None
) -> Obj:
    exactly: Obj = {"deviceClassName": cls}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if count is not None:
        exactly["count"] = count
    if mode is not None:
        exactly["allocationMode"] = mode
    return {"name": name, "exactly": exactly}


def claim(
    name: str,
    requests: list[Obj],
    *,
    constraints: list[Obj] | None = None,
    allocation: Obj | None = None,
    reserved_for: list[Obj] | None = None,
    owner: bool = False,
    namespace: str = "default",
    owner_name: str = "p",
    owner_uid: str = POD_UID,
    uid: str | None = None,
) -> Obj:
    """A ResourceClaim; ``owner``: controlled by the pod ``owner_name`` (as one generated
    from a template for it)."""
    meta: Obj = {"name": name, "namespace": namespace}
    if uid is not None:
        meta["uid"] = uid
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner_name,
                "uid": owner_uid,
                "controller": True,
            }
        ]
    devices: Obj = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    result: Obj = {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": devices},
    }
    status: Obj = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for:
        status["reservedFor"] = reserved_for
    if status:
        result["status"] = status
    return result


def allocation(
    node_name: str | None,
    *devices: tuple[str, str, str] | tuple[str, str, str, str],
    node_selector: Obj | None = None,
) -> Obj:
    """An allocation of ``devices`` — (driver, pool, device[, request], the request
    ``gpu`` by default) — available on ``node_name`` only, or where ``node_selector``
    says, or (neither) everywhere."""
    result: Obj = {
        "devices": {
            "results": [
                {
                    "request": d[3] if len(d) > 3 else "gpu",
                    "driver": d[0],
                    "pool": d[1],
                    "device": d[2],
                }
                for d in devices
            ]
        }
    }
    if node_name is not None:
        result["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
    elif node_selector is not None:
        result["nodeSelector"] = node_selector
    return result


def incoming(*refs: Obj, statuses: list[Obj] | None = None) -> Obj:
    result: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": POD_UID},
        "spec": {"containers": [{"name": "c", "image": "img"}], "resourceClaims": list(refs)},
    }
    if statuses is not None:
        result["status"] = {"resourceClaimStatuses": statuses}
    return result


def ref(name: str, claim_name: str | None = None, template: str | None = None) -> Obj:
    entry: Obj = {"name": name}
    if claim_name is not None:
        entry["resourceClaimName"] = claim_name
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    return entry


GPU_CLASS = device_class("gpu", f'device.driver == "{DRIVER}"')


# -- DynamicResources in a wide scenario ---------------------------------------------------

DRA_SHARE = 0.15
"""The share of wide scenarios with DynamicResources objects and an incoming pod that
references claims."""

_ZONE = "topology.kubernetes.io/zone"
_CLASSES = ("gpu", "gpu", "gpu", "gpu", "any", "big", "fast")
_MEMORIES = ("16Gi", "24Gi", "40Gi", "80Gi")
_VERSIONS = ("1.0.0", "1.2.3", "2.0.0", "2.1.0-rc.1")


def _reference(pod: Obj) -> Obj:
    """A ``status.reservedFor`` entry for ``pod``."""
    return {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


def _requests(rng: random.Random, classes: Sequence[str]) -> tuple[list[Obj], list[Obj]]:
    """1-2 requests (ExactCount, All, firstAvailable) and maybe a constraint across them."""
    requests = []
    for r in range(rng.choice((1, 1, 2))):
        selectors = rng.sample(SELECTORS, rng.choice((0, 0, 0, 0, 1, 1, 2)))
        cls = rng.choice(classes) if rng.random() < 0.97 else "missing"
        if rng.random() < 0.15:
            requests.append(
                {
                    "name": f"r{r}",
                    "firstAvailable": [
                        {"name": "two", "deviceClassName": cls, "count": 2},
                        {
                            "name": "one",
                            "deviceClassName": cls,
                            **(
                                {"selectors": [{"cel": {"expression": e}} for e in selectors]}
                                if selectors
                                else {}
                            ),
                        },
                    ],
                }
            )
        else:
            mode = "All" if rng.random() < 0.08 else None
            count = None if mode else rng.choice((None, None, None, 1, 2))
            requests.append(request(f"r{r}", cls, *selectors, count=count, mode=mode))
    constraints = []
    if len(requests) > 1 and rng.random() < 0.4:
        key = rng.choice(("matchAttribute", "distinctAttribute"))
        constraints.append({key: rng.choice((f"{DRIVER}/model", f"{DRIVER}/index"))})
    return requests, constraints


def _node_devices(rng: random.Random) -> list[Obj]:
    devices = []
    for d in range(rng.choice((0, 1, 2, 2, 3, 4, 4, 6))):
        extra: dict[str, Obj] = {}
        if rng.random() < 0.6:
            extra["version"] = {"version": rng.choice(_VERSIONS)}
        devices.append(
            device(
                f"dev-{d}",
                rng.choice(MODELS),
                rng.randint(0, 2),
                rng.choice(_MEMORIES),
                **extra,
            )
        )
    return devices


def _slices(
    rng: random.Random, names: Sequence[str], nodes: dict[str, Obj]
) -> tuple[list[Obj], dict[str | None, list[tuple[str, str]]], Obj | None]:
    """ResourceSlices: a pool per chosen node (sometimes in two slices, beside an older
    generation, or incomplete), NIC slices, a pool for all nodes or for one zone. Returns
    them, the allocatable GPU devices (pool, device) by node (``None``: the pool for all
    nodes) and the node selector of the zone pool."""
    objects: list[Obj] = []
    devices_by_node: dict[str | None, list[tuple[str, str]]] = {}
    count = min(len(names), rng.choice((1, 2, 3, 4, 4, 6, 8, 12, 16)))
    for name in rng.sample(list(names), count):
        devices = _node_devices(rng)
        generation = rng.choice((1, 1, 2))
        complete = True
        if devices and rng.random() < 0.2:
            # One pool in two slices (listed in reverse name order), both on the node.
            half = len(devices) // 2
            for part, chunk in (("b", devices[half:]), ("a", devices[:half])):
                objects.append(
                    slice_(
                        f"{name}-gpus-{part}",
                        chunk,
                        node_name=name,
                        pool=name,
                        count=2,
                        generation=generation,
                    )
                )
        elif devices or rng.random() < 0.5:
            slices = 2 if rng.random() < 0.08 else 1  # 2: incomplete, one slice missing
            complete = slices == 1
            objects.append(
                slice_(f"{name}-gpus", devices, node_name=name, count=slices, generation=generation)
            )
            if generation == 2 and rng.random() < 0.3:
                # An older generation of the same pool: ignored. (Never two counts within
                # one generation: upstream's answer would follow its informer's order.)
                objects.append(slice_(f"{name}-old", [device("old-0")], node_name=name, pool=name))
        if complete:
            devices_by_node[name] = [(name, d["name"]) for d in devices]
        if rng.random() < 0.15:
            objects.append(
                slice_(f"{name}-nics", [device("nic-0", "nic")], node_name=name, driver=NIC_DRIVER)
            )
    if rng.random() < 0.25:
        objects.append(slice_("shared", [device("s-0", "h100")], pool="shared", allNodes=True))
        devices_by_node[None] = [("shared", "s-0")]
    zone_selector = None
    zones = sorted({n["metadata"].get("labels", {}).get(_ZONE, "") for n in nodes.values()} - {""})
    if zones and rng.random() < 0.15:
        zone = rng.choice(zones)
        zone_selector = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": _ZONE, "operator": "In", "values": [zone]}]}
            ]
        }
        objects.append(
            slice_(
                "zone-pool",
                [device("z-0", "a100", 1, "80Gi"), device("z-1", "t4", 2, "16Gi")],
                pool="zone-pool",
                nodeSelector=zone_selector,
            )
        )
    return objects, devices_by_node, zone_selector


def add_dynamic_resources(
    rng: random.Random, cluster: list[Obj], pod: Obj, names: Sequence[str]
) -> list[str]:
    """Add DeviceClasses, ResourceSlices and ResourceClaims to ``cluster`` (some allocated,
    some held by assigned pods, which then reference them) and claims to the incoming
    ``pod``, by name and from templates; returns the tags reached."""
    tags = ["dra"]
    nodes = {o["metadata"]["name"]: o for o in cluster if o.get("kind") == "Node"}
    objects: list[Obj] = [GPU_CLASS, device_class("any"), device_class("big", BIG_CLASS_SELECTOR)]
    classes = ["gpu", "any", "big"]
    if rng.random() < 0.5:
        objects.append(
            device_class(
                "fast",
                f'device.driver == "{DRIVER}"',
                f'device.attributes["{DRIVER}"].model in ["a100", "h100"]',
            )
        )
        classes.append("fast")
    weighted = [c for c in _CLASSES if c in classes]
    slices, devices_by_node, zone_selector = _slices(rng, names, nodes)
    objects.extend(slices)
    if zone_selector is not None:
        tags.append("dra-zone-pool")
    if None in devices_by_node:
        tags.append("dra-shared-pool")
    free = {n: list(d) for n, d in devices_by_node.items()}
    zone_free = ["z-0", "z-1"] if zone_selector is not None else []

    def take(where: str | None) -> tuple[str, str] | None:
        left = free.get(where)
        if not left:
            return None
        return left.pop(rng.randrange(len(left)))

    # Devices in use: claims allocated on a node and reserved for pods assigned there.
    assigned = [
        o
        for o in cluster
        if o.get("kind") == "Pod"
        and o["spec"].get("nodeName")
        and o["spec"]["nodeName"] in devices_by_node
    ]
    users = rng.sample(assigned, min(len(assigned), rng.choice((0, 1, 1, 2, 3))))
    for index, user in enumerate(users):
        where = user["spec"]["nodeName"]
        held = take(where)
        if held is None:
            continue
        namespace = user["metadata"].get("namespace", "default")
        name = f"held-{index}"
        objects.append(
            claim(
                name,
                [request("gpu")],
                allocation=allocation(where, (DRIVER, *held)),
                reserved_for=[_reference(user)],
                namespace=namespace,
                uid=f"uid-rc-{namespace}-{name}",
            )
        )
        user["spec"].setdefault("resourceClaims", []).append(
            {"name": "held", "resourceClaimName": name}
        )
        tags.append("dra-in-use")
    if devices_by_node and rng.random() < 0.3:
        # Allocated, reserved for nobody (its pod is gone): the devices are still taken.
        where = rng.choice(sorted(devices_by_node, key=str))
        held = take(where)
        if held is not None:
            objects.append(
                claim(
                    "orphan",
                    [request("gpu")],
                    allocation=allocation(where, (DRIVER, *held)),
                    uid="uid-rc-orphan",
                )
            )
            tags.append("dra-in-use")

    # The incoming pod's claims.
    metadata = pod["metadata"]
    metadata.setdefault("uid", POD_UID)
    pod_name, pod_uid = metadata["name"], metadata["uid"]
    namespace = metadata.get("namespace", "default")
    refs: list[Obj] = []
    statuses: list[Obj] = []
    for index in range(rng.choice((1, 1, 1, 1, 2, 2, 3))):
        entry = f"e{index}"
        requests, constraints = _requests(rng, weighted)
        if any("firstAvailable" in r for r in requests):
            tags.append("dra-first-available")
        generated = rng.random() < 0.4
        name = (
            f"{pod_name}-{entry}-{rng.choice(('x7k2p', 'q9z4m', 'b5n8c'))}"
            if generated
            else f"c{index}"
        )
        alloc = None
        reserved: list[Obj] = []
        if rng.random() < 0.25:
            # Allocated earlier: on a node, in the pool for all nodes, or in the zone pool.
            first = requests[0]
            subrequest = (
                f"{first['name']}/{first['firstAvailable'][-1]['name']}"
                if "firstAvailable" in first
                else first["name"]
            )
            where = rng.choice(sorted(devices_by_node, key=str)) if devices_by_node else None
            held = take(where)
            on_node = None
            if held is not None:
                on_node = where
                alloc = allocation(where, (DRIVER, *held, subrequest))
            elif zone_free:
                alloc = allocation(
                    None,
                    (DRIVER, "zone-pool", zone_free.pop(), subrequest),
                    node_selector=zone_selector,
                )
        if alloc is not None:
            tags.append("dra-allocated")
            roll = rng.random()
            if roll < 0.3:
                # Reserved for this pod already (an earlier attempt got that far).
                reserved = [{"resource": "pods", "name": pod_name, "uid": pod_uid}]
            elif roll < 0.55 and not generated:
                # Shared with a pod already running where the devices are.
                sharers = [
                    o
                    for o in cluster
                    if o.get("kind") == "Pod"
                    and o["metadata"].get("namespace", "default") == namespace
                    and o["spec"].get("nodeName") in (nodes if on_node is None else (on_node,))
                ]
                if sharers:
                    sharer = rng.choice(sharers)
                    reserved = [_reference(sharer)]
                    sharer["spec"].setdefault("resourceClaims", []).append(
                        {"name": f"shared-{index}", "resourceClaimName": name}
                    )
                    tags.append("dra-shared-claim")
        owned = True
        if generated:
            tags.append("dra-template")
            owned = rng.random() < 0.95
            if not owned:
                tags.append("dra-not-owner")
            template = f"t{index}"
            objects.append(
                {
                    "apiVersion": API,
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": template, "namespace": namespace},
                    "spec": {"spec": {"devices": _devices_spec(requests, constraints)}},
                }
            )
            refs.append(ref(entry, template=template))
            status = rng.random()
            if status < 0.92:
                statuses.append({"name": entry, "resourceClaimName": name})
            elif status < 0.96:
                statuses.append({"name": entry})  # no claim was needed
            else:
                tags.append("dra-not-created")
        elif rng.random() < 0.03:
            tags.append("dra-missing-claim")
            refs.append(ref(entry, "absent"))
        else:
            refs.append(ref(entry, name))
        objects.append(
            claim(
                name,
                requests,
                constraints=constraints,
                allocation=alloc,
                reserved_for=reserved,
                namespace=namespace,
                owner=generated,
                owner_name=pod_name,
                owner_uid=pod_uid if owned else "uid-someone-else",
                uid=f"uid-rc-{namespace}-{name}",
            )
        )
    pod["spec"]["resourceClaims"] = refs
    if statuses:
        pod.setdefault("status", {})["resourceClaimStatuses"] = statuses
    cluster.extend(objects)
    return tags


def _devices_spec(requests: list[Obj], constraints: list[Obj]) -> Obj:
    spec: Obj = {"requests": requests}
    if constraints:
        spec["constraints"] = constraints
    return spec
