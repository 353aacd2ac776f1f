"""VolumeBinding on the fixtures of tests/data/volumebinding, compared with the Go oracle
(upstream v1.37.1): filter codes, plugins and reasons, scores, totals, the selected node
and the FailedScheduling message must be identical.

Each fixture is a multi-document YAML file whose last document is the incoming pod. Every
case runs twice: with the other volume plugins (VolumeRestrictions, VolumeZone,
NodeVolumeLimits) disabled in both engines, so that the comparison is about VolumeBinding
alone, and with the default profile. So do the random volume scenarios drawn below.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    upstream_result,
)

pytestmark = pytest.mark.differential

ZONE = "topology.kubernetes.io/zone"

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "volumebinding"
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "disabled": [
                        {"name": "VolumeRestrictions"},
                        {"name": "VolumeZone"},
                        {"name": "NodeVolumeLimits"},
                    ]
                }
            },
        }
    ],
}


def fixture_scenario(path: Path, config: dict[str, Any] | None = CONFIG) -> Scenario:
    """The fixture's cluster and incoming pod (its last document)."""
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return Scenario(docs[:-1], docs[-1], config)


CASES = sorted(FIXTURES.glob("*.yaml"))


PROFILES = {"volume-binding-alone": CONFIG, "default-profile": None}


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture_agrees_with_upstream(oracle: Any, path: Path, profile: str) -> None:
    scenario = fixture_scenario(path, PROFILES[profile])
    response = oracle.run([scenario.request(path.stem)])[path.stem]
    assert "result" in response, f"upstream rejected {path.name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    problems = differences(ours, theirs)
    assert not problems, "\n".join([f"{path.name}: topospread disagrees with upstream:", *problems])


# -- random volume scenarios ---------------------------------------------------------------------

ZONES = ("a", "b", "c")
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
MIGRATED_PLUGINS = ["kubernetes.io/gce-pd", "kubernetes.io/aws-ebs", "kubernetes.io/cinder"]
MIGRATED_ZONE_KEYS = ("topology.gke.io/zone", "topology.ebs.csi.aws.com/zone")
SIZES = ("1Gi", "2Gi", "5Gi", "5Gi", "10Gi", "20Gi", "1500Mi")
TRACKED_DRIVER = "tracked.csi.example.com"
PLAIN_DRIVER = "csi.example.com"


def _draw_volume_scenario(rng: random.Random, index: int) -> Scenario:
    objects: list[dict[str, Any]] = []
    nodes = [f"n{i}" for i in range(rng.randint(2, 6))]
    for name in nodes:
        labels = {"kubernetes.io/hostname": name, ZONE: rng.choice(ZONES)}
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
        for key in MIGRATED_ZONE_KEYS:
            if rng.random() < 0.3:
                labels[key] = rng.choice(ZONES)
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
    for name in nodes:
        if rng.random() < 0.3:
            plugins = rng.sample(MIGRATED_PLUGINS, rng.randint(1, len(MIGRATED_PLUGINS)))
            objects.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {
                        "name": name,
                        "annotations": {
                            "storage.alpha.kubernetes.io/migrated-plugins": ",".join(plugins)
                        },
                    },
                    "spec": {"drivers": []},
                }
            )
    classes: list[dict[str, Any]] = [
        _class("local", "kubernetes.io/no-provisioner", wait=True),
        _class("immediate", PLAIN_DRIVER, wait=False),
        _class("wffc", PLAIN_DRIVER, wait=True, zones=_some(rng, ZONES, 0.5)),
        _class("tracked", TRACKED_DRIVER, wait=True, zones=_some(rng, ZONES, 0.3)),
        _class("noprov", "", wait=True),
    ]
    objects.extend(c for c in classes if rng.random() < 0.9)
    # DefaultStorageClass (issue 25): a claim created without a class gets the default one.
    # Marked on the objects as given, so the classes left out above are never the default.
    defaults = [c for c in classes if c in objects and rng.random() < 0.2]
    for default in defaults:
        default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    if rng.random() < 0.8:
        objects.append(_driver(TRACKED_DRIVER, capacity=True))
    if rng.random() < 0.5:
        objects.append(_driver(PLAIN_DRIVER, capacity=False))
    # One CSIStorageCapacity per zone at most: with two sufficient ones for a node,
    # upstream's lister order (random) picks the capacity the score uses.
    objects.extend(_capacity(rng, zone) for zone in ZONES if rng.random() < 0.7)
    claim_names = [f"c{i}" for i in range(rng.randint(1, 3))]
    volume_names = [f"pv{i}" for i in range(rng.randint(0, 8))]
    # FindMatchingVolume returns the first volume pre-bound to a claim in the order of
    # upstream's PV cache (random): one claimRef per claim keeps the answer deterministic.
    referenced: set[str] = set()
    objects.extend(_volume(rng, name, nodes, claim_names, referenced) for name in volume_names)
    pod_volumes: list[dict[str, Any]] = []
    for name in claim_names:
        if rng.random() < 0.05:
            pod_volumes.append({"name": name, "persistentVolumeClaim": {"claimName": "missing"}})
            continue
        pod_volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        objects.append(_claim(rng, name, volume_names, nodes))
    if rng.random() < 0.2:
        owner = "pod-uid" if rng.random() < 0.8 else "someone-else"
        claim = _claim(rng, "p-eph", volume_names, nodes)
        claim["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner, "controller": True}
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
    if rng.random() < 0.1:
        pod_volumes = [{"name": "scratch", "emptyDir": {}}]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "pod-uid"},
        "spec": {"containers": [{"name": "c", "image": "img"}], "volumes": pod_volumes},
    }
    if rng.random() < 0.3:
        # Busy nodes: the pod needs preemption where its volumes fit.
        pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
        pod["spec"]["priority"] = 100
        objects.extend(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"busy-{name}", "namespace": "default", "uid": f"busy-{name}"},
                "spec": {
                    "nodeName": name,
                    "priority": rng.choice((0, 200)),
                    "containers": [
                        {"name": "c", "image": "img", "resources": {"requests": {"cpu": "3"}}}
                    ],
                },
            }
            for name in nodes
            if rng.random() < 0.6
        )
    return Scenario(objects, pod, CONFIG, tags=("volumes",))


def _some(rng: random.Random, values: Sequence[str], chance: float) -> list[str] | None:
    if rng.random() >= chance:
        return None
    return sorted(rng.sample(list(values), rng.randint(1, len(values))))


def _class(
    name: str, provisioner: str, *, wait: bool, zones: list[str] | None = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner or "example.com/none",
        "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate",
    }
    if not provisioner:
        obj["provisioner"] = "kubernetes.io/no-provisioner"
    if zones:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return obj


def _driver(name: str, *, capacity: bool) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"storageCapacity": capacity},
    }


def _capacity(rng: random.Random, zone: str) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
        "storageClassName": "tracked",
        "capacity": rng.choice(("0", "3Gi", "8Gi", "50Gi", "100Gi")),
    }
    if rng.random() < 0.9:
        obj["nodeTopology"] = {"matchLabels": {ZONE: zone}}
    if rng.random() < 0.2:
        obj["maximumVolumeSize"] = rng.choice(("2Gi", "10Gi"))
    return obj


def _affinity(rng: random.Random, nodes: Sequence[str]) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.3:
        return None
    if roll < 0.6:
        expr = {"key": ZONE, "operator": "In", "values": _some(rng, ZONES, 1.0)}
    elif roll < 0.7:
        key = rng.choice(("failure-domain.beta.kubernetes.io/zone", *MIGRATED_ZONE_KEYS))
        expr = {"key": key, "operator": "In", "values": _some(rng, ZONES, 1.0)}
    elif roll < 0.9:
        expr = {"key": "kubernetes.io/hostname", "operator": "In", "values": [rng.choice(nodes)]}
    else:
        expr = {"key": "disk", "operator": "Exists"}
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}


def _volume(
    rng: random.Random, name: str, nodes: Sequence[str], claims: Sequence[str], referenced: set[str]
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": rng.choice(SIZES)},
        "accessModes": rng.choice(
            (["ReadWriteOnce"], ["ReadWriteOnce", "ReadOnlyMany"], ["ReadWriteMany"])
        ),
        "storageClassName": rng.choice(("local", "local", "wffc", "tracked", "other")),
        "csi": {"driver": PLAIN_DRIVER, "volumeHandle": name},
    }
    if rng.random() < 0.1:
        spec["volumeMode"] = "Block"
    if rng.random() < 0.1:
        spec["volumeAttributesClassName"] = "gold"
    meta: dict[str, Any] = {"name": name}
    roll = rng.random()
    if roll < 0.15:
        del spec["csi"]
        spec["gcePersistentDisk"] = {"pdName": name}
    elif roll < 0.3:
        del spec["csi"]
        volume_id = rng.choice((f"vol-{name}", f"aws://a/vol-{name}", "aws://a/bad", "aws://a"))
        spec["awsElasticBlockStore"] = {"volumeID": volume_id}
    if roll < 0.3 and rng.random() < 0.5:
        zone_key = rng.choice((ZONE, "failure-domain.beta.kubernetes.io/zone"))
        zones = rng.choice(
            (
                "__".join(_some(rng, ZONES, 1.0) or ["a"]),
                "us-east1-b__us-east1-c",
                "us-east1-b__us-west1-a",
            )
        )
        meta["labels"] = {zone_key: zones}
    if rng.random() < 0.05:
        meta.setdefault("annotations", {})[BETA_CLASS] = rng.choice(("local", "wffc"))
    affinity = _affinity(rng, nodes)
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    phase = rng.choice(("Available", "Available", "Available", "Bound", "Released"))
    if phase != "Available" or rng.random() < 0.15:
        claim = rng.choice(claims)
        if claim not in referenced:
            referenced.add(claim)
            spec["claimRef"] = {"name": claim, "namespace": "default", "uid": f"uid-{claim}"}
    if rng.random() < 0.3:
        meta.setdefault("labels", {})["tier"] = rng.choice(("fast", "slow"))
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def _claim(
    rng: random.Random, name: str, volumes: Sequence[str], nodes: Sequence[str]
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    spec: dict[str, Any] = {
        "accessModes": rng.choice((["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadOnlyMany"])),
        "resources": {"requests": {"storage": rng.choice(SIZES)}},
    }
    cls = rng.choice(CLAIM_CLASSES)
    if cls is not None:
        spec["storageClassName"] = cls
    status: dict[str, Any] = {"phase": "Pending"}
    roll = rng.random()
    if roll < 0.25 and volumes:
        spec["volumeName"] = rng.choice([*volumes, "gone"])
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        status["phase"] = "Bound"
    elif roll < 0.3 and volumes:
        spec["volumeName"] = rng.choice(volumes)
    elif roll < 0.4:
        meta["annotations"] = {"volume.kubernetes.io/selected-node": rng.choice(nodes)}
    elif roll < 0.42:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        meta["finalizers"] = ["kubernetes.io/pvc-protection"]
    elif roll < 0.44:
        spec["volumeName"] = "gone"
        status["phase"] = "Lost"
    if rng.random() < 0.15:
        spec["selector"] = {"matchLabels": {"tier": "fast"}}
    if rng.random() < 0.05:
        spec["volumeMode"] = "Block"
    if rng.random() < 0.05:
        spec["volumeAttributesClassName"] = "gold"
    if rng.random() < 0.05:
        meta.setdefault("annotations", {})[BETA_CLASS] = rng.choice(("local", "wffc", ""))
    if cls is None and "volumeName" not in spec and rng.random() < 0.6:
        del meta["uid"]  # not created yet: the API server's DefaultStorageClass applies
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


CLAIM_CLASSES = (
    *("local",) * 6,
    *("wffc",) * 4,
    *("tracked",) * 4,
    *("noprov", "immediate", "missing", None),
)
RANDOM_SEED = int(os.environ.get("TOPOSPREAD_VOLUME_DIFF_SEED", "12"))
RANDOM_COUNT = int(os.environ.get("TOPOSPREAD_VOLUME_DIFF_N", "2000"))


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_random_volume_scenarios_agree_with_upstream(
    oracle: Any, differential: Any, report_run: Any, profile: str
) -> None:
    rng = random.Random(RANDOM_SEED)
    drawn = [
        dataclasses.replace(_draw_volume_scenario(rng, i), config=PROFILES[profile])
        for i in range(RANDOM_COUNT)
    ]
    comparison = differential.compare(oracle, drawn, RANDOM_SEED, rerun=True, save=0)
    report_run(
        f"volume binding ({profile}): {RANDOM_COUNT} scenarios (seed {RANDOM_SEED}), "
        f"{len(comparison.disagreements)} disagreements, "
        f"{len(comparison.upstream_random)} explained by upstream randomness"
    )
    assert not comparison.disagreements, comparison.report(
        f"TOPOSPREAD_VOLUME_DIFF_SEED={RANDOM_SEED} TOPOSPREAD_VOLUME_DIFF_N={RANDOM_COUNT} "
        f"pytest {__file__}"
    )


def _profile(**profile: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", **profile}],
    }


VARIANTS: dict[str, dict[str, Any]] = {
    # Filter without PreFilter state: upstream's Error is the cycle state's bare "not found".
    "no-prefilter": _profile(plugins={"preFilter": {"disabled": [{"name": "VolumeBinding"}]}}),
    "no-prescore": _profile(plugins={"preScore": {"disabled": [{"name": "VolumeBinding"}]}}),
    "no-filter": _profile(plugins={"filter": {"disabled": [{"name": "VolumeBinding"}]}}),
    "custom-shape": _profile(
        pluginConfig=[
            {
                "name": "VolumeBinding",
                "args": {
                    "shape": [
                        {"utilization": 0, "score": 0},
                        {"utilization": 30, "score": 7},
                        {"utilization": 100, "score": 10},
                    ]
                },
            }
        ]
    ),
    "weight-5": _profile(plugins={"score": {"enabled": [{"name": "VolumeBinding", "weight": 5}]}}),
}
VARIANT_FIXTURES = ("static-binding", "static-scores", "storage-capacity", "bound-zonal")


@pytest.mark.parametrize("fixture", VARIANT_FIXTURES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_configuration_variants_agree_with_upstream(
    oracle: Any, variant: str, fixture: str
) -> None:
    scenario = fixture_scenario(FIXTURES / f"{fixture}.yaml", VARIANTS[variant])
    response = oracle.run([scenario.request(fixture)])[fixture]
    assert "result" in response, f"upstream rejected {fixture}: {response.get('error')}"
    problems = differences(python_result(run_python(scenario)), upstream_result(response["result"]))
    assert not problems, "\n".join([f"{fixture} ({variant}):", *problems])
