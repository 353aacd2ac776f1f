"""DynamicResources (ResourceClaims with structured parameters) compared with the Go oracle.

Hand-made cases reach each rule (allocated claims and their node selector, unallocated
claims that fit or do not, CEL selectors on attributes and capacity, constraints, All,
firstAvailable and its score, missing and template claims, incomplete and invalid pools,
devices held by other claims, PostFilter's deallocation); a seeded generator draws many
more. Both engines' compared fields (verdicts, reasons, scores, message) must be equal.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.testing.dra import (
    BIG_CLASS_SELECTOR,
    DRIVER,
    GPU_CLASS,
    MODELS,
    SELECTORS,
    allocation,
    claim,
    device,
    device_class,
    incoming,
    node,
    ref,
    request,
    slice_,
)
from topospread.testing.scenarios import (
    Scenario,
    differences,
    python_result,
    run_python,
    upstream_result,
)

pytestmark = pytest.mark.differential

Obj = dict[str, Any]


def base_cluster() -> list[Obj]:
    return [
        node("n1"),
        node("n2"),
        node("n3", "b"),
        GPU_CLASS,
        slice_("n1-gpus", [device("gpu-0"), device("gpu-1", index=1)], node_name="n1"),
        slice_("n2-gpus", [device("gpu-0", model="t4", memory="16Gi")], node_name="n2"),
    ]


def agree(oracle: Any, scenario: Scenario, name: str) -> Obj:
    response = oracle.run([scenario.request(name)])[name]
    assert "result" in response, f"upstream rejected {name}: {response.get('error')}"
    theirs = upstream_result(response["result"])
    ours = python_result(run_python(scenario))
    problems = differences(ours, theirs)
    assert not problems, "\n".join([f"{name}: topospread disagrees with upstream:", *problems])
    return theirs


def _cases() -> list[tuple[str, Scenario]]:
    gpu = [request("gpu")]
    cases: list[tuple[str, Scenario]] = []

    def add(name: str, extra: list[Obj], pod: Obj, cluster: list[Obj] | None = None) -> None:
        cases.append((name, Scenario([*(cluster or base_cluster()), *extra], pod, None)))

    add("unallocated-fits", [claim("c", gpu)], incoming(ref("gpu", "c")))
    add(
        "cel-attribute",
        [claim("c", [request("gpu", "gpu", f'device.attributes["{DRIVER}"].model == "t4"')])],
        incoming(ref("gpu", "c")),
    )
    add(
        "cel-capacity",
        [
            claim(
                "c",
                [
                    request(
                        "gpu",
                        "gpu",
                        f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("20Gi"))',
                    )
                ],
            )
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "cel-missing-key",
        [claim("c", [request("gpu", "gpu", f'device.attributes["{DRIVER}"].vendor == "x"')])],
        incoming(ref("gpu", "c")),
    )
    add(
        "cel-no-such-overload",
        [claim("c", [request("gpu", "gpu", f'device.attributes["{DRIVER}"].model > 1')])],
        incoming(ref("gpu", "c")),
    )
    add("count-2", [claim("c", [request("gpu", count=2)])], incoming(ref("gpu", "c")))
    add("count-3-none", [claim("c", [request("gpu", count=3)])], incoming(ref("gpu", "c")))
    add("all-mode", [claim("c", [request("gpu", mode="All")])], incoming(ref("gpu", "c")))
    add(
        "match-attribute",
        [
            claim(
                "c",
                [request("a"), request("b")],
                constraints=[{"matchAttribute": f"{DRIVER}/model"}],
            )
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "distinct-attribute",
        [
            claim(
                "c",
                [request("a"), request("b")],
                constraints=[{"distinctAttribute": f"{DRIVER}/index"}],
            )
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "all-constraint-error",
        [
            claim(
                "c",
                [request("a", mode="All")],
                constraints=[{"matchAttribute": f"{DRIVER}/index"}],
            )
        ],
        incoming(ref("gpu", "c")),
    )
    add("missing-claim", [], incoming(ref("gpu", "nope")))
    add("missing-class", [claim("c", [request("gpu", "nope")])], incoming(ref("gpu", "c")))
    add(
        "template-claim",
        [claim("p-gpu-x", gpu, owner=True)],
        incoming(
            ref("gpu", template="t"), statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x"}]
        ),
    )
    add("template-not-created", [], incoming(ref("gpu", template="t")))
    add(
        "template-no-claim-needed",
        [],
        incoming(ref("gpu", template="t"), statuses=[{"name": "gpu"}]),
    )
    add(
        "template-not-owner",
        [claim("p-gpu-x", gpu)],
        incoming(
            ref("gpu", template="t"), statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x"}]
        ),
    )
    add(
        "allocated-on-n2",
        [claim("c", gpu, allocation=allocation("n2", (DRIVER, "n2", "gpu-0")))],
        incoming(ref("gpu", "c")),
    )
    add(
        "allocated-deallocatable",
        [
            claim("c", gpu, allocation=allocation("n2", (DRIVER, "n2", "gpu-0"))),
            {**node("n2"), "spec": {"unschedulable": True}},
        ],
        incoming(ref("gpu", "c")),
        cluster=[n for n in base_cluster() if n["metadata"]["name"] != "n2"],
    )
    add(
        "held-by-other-claim",
        [
            claim("other", gpu, allocation=allocation("n2", (DRIVER, "n2", "gpu-0"))),
            claim("c", [request("gpu", "gpu", f'device.attributes["{DRIVER}"].model == "t4"')]),
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "first-available",
        [
            claim(
                "c",
                [
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {
                                "name": "big",
                                "deviceClassName": "gpu",
                                "count": 2,
                            },
                            {"name": "one", "deviceClassName": "gpu"},
                        ],
                    }
                ],
            )
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "incomplete-pool",
        [slice_("n3-a", [device("gpu-0")], node_name="n3", count=2)],
        incoming(ref("gpu", "c")),
        cluster=[*base_cluster(), claim("c", [request("gpu", count=1)])],
    )
    add(
        "invalid-pool",
        [
            slice_("n3-a", [device("gpu-0")], node_name="n3", count=2),
            slice_("n3-b", [device("gpu-0")], node_name="n3", count=2),
            claim("c", [request("gpu", count=3)]),
        ],
        incoming(ref("gpu", "c")),
    )
    add(
        "shared-slice-node-selector",
        [
            slice_(
                "zone-b-nics",
                [device("nic-0", model="nic")],
                pool="zone-b",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "topology.kubernetes.io/zone",
                                    "operator": "In",
                                    "values": ["b"],
                                }
                            ]
                        }
                    ]
                },
            ),
            claim("c", [request("gpu", "gpu", f'device.attributes["{DRIVER}"].model == "nic"')]),
        ],
        incoming(ref("gpu", "c")),
    )
    return cases


@pytest.mark.parametrize(("name", "scenario"), _cases(), ids=[c[0] for c in _cases()])
def test_hand_made(oracle: Any, name: str, scenario: Scenario) -> None:
    agree(oracle, scenario, name)


# -- a seeded generator ---------------------------------------------------------------------------


def random_scenario(rng: random.Random) -> Scenario:
    nodes = [node(f"n{i}", rng.choice("ab")) for i in range(rng.randint(1, 4))]
    cluster: list[Obj] = [
        *nodes,
        GPU_CLASS,
        device_class("any"),
        device_class("big", BIG_CLASS_SELECTOR),
    ]
    devices_by_node: dict[str, list[str]] = {}
    for n in nodes:
        name = n["metadata"]["name"]
        devices = []
        for d in range(rng.randint(0, 4)):
            extra: dict[str, Obj] = {}
            if rng.random() < 0.6:
                extra["version"] = {
                    "version": rng.choice(("1.0.0", "1.2.3", "2.0.0", "2.1.0-rc.1"))
                }
            devices.append(
                device(
                    f"dev-{d}",
                    rng.choice(MODELS),
                    rng.randint(0, 2),
                    rng.choice(("16Gi", "24Gi", "40Gi", "80Gi")),
                    **extra,
                )
            )
        devices_by_node[name] = [d["name"] for d in devices]
        count = 2 if rng.random() < 0.1 else 1
        generation = rng.choice((1, 1, 2))
        if devices and rng.random() < 0.2:
            # One pool in two slices (listed in reverse name order), both on the node.
            half = len(devices) // 2
            for part, chunk in (("b", devices[half:]), ("a", devices[:half])):
                cluster.append(
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
            cluster.append(
                slice_(f"{name}-gpus", devices, node_name=name, count=count, generation=generation)
            )
            if generation == 2 and rng.random() < 0.3:
                # A slice of an older generation of the same pool: ignored. (Slices of one
                # generation disagreeing on resourceSliceCount would make upstream's answer
                # depend on its informer's list order.)
                cluster.append(slice_(f"{name}-old", [device("old-0")], node_name=name, pool=name))
        if rng.random() < 0.15:
            cluster.append(
                slice_(
                    f"{name}-nics",
                    [device("nic-0", "nic")],
                    node_name=name,
                    driver="nic.example.com",
                )
            )
    if rng.random() < 0.3:
        cluster.append(slice_("shared", [device("s-0", "h100")], pool="shared", allNodes=True))
    # Other claims holding devices.
    for i in range(rng.randint(0, 2)):
        n = rng.choice(nodes)["metadata"]["name"]
        if devices_by_node[n]:
            held = rng.choice(devices_by_node[n])
            cluster.append(
                claim(f"held-{i}", [request("gpu")], allocation=allocation(n, (DRIVER, n, held)))
            )
    refs = []
    statuses = []
    for i in range(rng.randint(1, 3)):
        kind = rng.random()
        requests = []
        for r in range(rng.randint(1, 2)):
            selectors = rng.sample(SELECTORS, rng.choice((0, 0, 1, 1, 2)))
            mode = "All" if rng.random() < 0.1 else None
            count = None if mode else rng.choice((None, None, 1, 2))
            cls = "gpu" if rng.random() < 0.7 else rng.choice(("any", "big", "big", "missing"))
            if rng.random() < 0.15:
                requests.append(
                    {
                        "name": f"r{r}",
                        "firstAvailable": [
                            {"name": "two", "deviceClassName": cls, "count": 2},
                            {
                                "name": "one",
                                "deviceClassName": cls,
                                "selectors": [{"cel": {"expression": e}} for e in selectors],
                            },
                        ],
                    }
                )
            else:
                requests.append(request(f"r{r}", cls, *selectors, count=count, mode=mode))
        constraints = []
        if len(requests) > 1 and rng.random() < 0.4:
            key = rng.choice(("matchAttribute", "distinctAttribute"))
            constraints.append({key: rng.choice((f"{DRIVER}/model", f"{DRIVER}/index"))})
        alloc = None
        if rng.random() < 0.2:
            n = rng.choice(nodes)["metadata"]["name"]
            if devices_by_node[n]:
                alloc = allocation(n, (DRIVER, n, rng.choice(devices_by_node[n])))
        if kind < 0.6:
            cluster.append(claim(f"c{i}", requests, constraints=constraints, allocation=alloc))
            refs.append(ref(f"e{i}", f"c{i}" if rng.random() < 0.95 else "missing"))
        else:
            cluster.append(
                claim(f"p-e{i}", requests, constraints=constraints, allocation=alloc, owner=True)
            )
            refs.append(ref(f"e{i}", template="t"))
            if rng.random() < 0.95:
                statuses.append({"name": f"e{i}", "resourceClaimName": f"p-e{i}"})
    return Scenario(cluster, incoming(*refs, statuses=statuses or None), None)


GENERATED = 300
SEED = 20261124


def test_generated(oracle: Any) -> None:
    rng = random.Random(SEED)
    scenarios = {f"dra-{i}": random_scenario(rng) for i in range(GENERATED)}
    responses = oracle.run([s.request(name) for name, s in scenarios.items()])
    failures = []
    for name, scenario in scenarios.items():
        response = responses[name]
        assert "result" in response, f"upstream rejected {name}: {response.get('error')}"
        problems = differences(
            python_result(run_python(scenario)), upstream_result(response["result"])
        )
        if problems:
            failures.append("\n".join([f"{name}:", *problems]))
    assert not failures, f"{len(failures)}/{GENERATED} disagree:\n" + "\n".join(failures[:3])


# -- the explain fixtures and the feature gates ----------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "dynamicresources"


@pytest.mark.parametrize(
    "name", sorted(p.stem for p in FIXTURES.glob("*.yaml") if not p.stem.startswith("unsupported-"))
)
def test_fixture_agrees(oracle: Any, name: str) -> None:
    docs = [d for d in yaml.safe_load_all((FIXTURES / f"{name}.yaml").read_text("utf-8")) if d]
    agree(oracle, Scenario(docs[:-1], docs[-1], None), name)


# The gates the plugin and its allocator assume (v1.37.1 defaults): DRA and the
# prioritized list on (so Score runs); the gates whose paths topospread does not take off.
ASSUMED_GATES = {
    "DynamicResourceAllocation": True,
    "DRAPrioritizedList": True,
    "DRAExtendedResource": True,
    "DRAAdminAccess": True,
    "DRAPartitionableDevices": True,
    "DRADeviceTaints": True,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRAResourceClaimDeviceStatus": True,
    "DRAWorkloadResourceClaims": False,
    "DRANodeAllocatableResources": False,
    "DRADeviceCompatibilityGroups": False,
    "DRAListTypeAttributes": False,
    "DRAOptionalNodeOperations": False,
    "DRADerivedAttributes": False,
    "GenericWorkload": False,
}


def test_oracle_dra_feature_gates_are_the_assumed_defaults(oracle: Any) -> None:
    output = subprocess.run(
        [str(oracle.binary), "version"], check=True, capture_output=True, text=True
    ).stdout
    gates = json.loads(output)["featureGates"]
    assert {name: gates.get(name) for name in ASSUMED_GATES} == ASSUMED_GATES
