"""Dynamic resource allocation objects of a real API server: a Pending pod whose claim
asks for a GPU by a CEL selector is explained alike live, from a snapshot, from an
anonymized snapshot, and by upstream's own code (the oracle) on both snapshots."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.client.source import DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_SLICES, Resource
from topospread.client.transport import Request, raise_for_status
from topospread.testing.live import node, pod

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "oracle" / "bin" / "oracle"
DRIVER = "gpu.example.com"
A100 = f'device.attributes["{DRIVER}"].model == "a100"'
TAINT = "topospread.dev/dra-story"


def _create(kube: Any, resource: Resource, obj: dict[str, Any]) -> None:
    response = kube.connection.transport.send(
        Request(
            "POST",
            resource.path(obj["metadata"].get("namespace")),
            body=json.dumps(obj).encode(),
            content_type="application/json",
        )
    )
    raise_for_status(response, kube.connection.server, verb="create", resource=resource.plural)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _slice(name: str, node_name: str, model: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": model}}}],
        },
    }


@pytest.fixture
def dra_story(kube: Any, unique_name: Any) -> dict[str, str]:
    run = unique_name("dra")
    for i, model in enumerate(("a100", "t4", "a100")):
        item = node(f"{run}-n{i}", f"{run}-z{i}")
        # Tainted, so other tests' pods stay off them; the story's pod tolerates it.
        item["spec"] = {"taints": [{"key": TAINT, "value": run, "effect": "NoSchedule"}]}
        item["metadata"]["labels"]["topospread.dev/test"] = run
        kube.create(item)
        _create(kube, RESOURCE_SLICES, _slice(f"{run}-n{i}-gpus", f"{run}-n{i}", model))
    _create(
        kube,
        DEVICE_CLASSES,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": f"{run}-gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    )
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": run}})
    _create(
        kube,
        RESOURCE_CLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "a100", "namespace": run},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": f"{run}-gpu",
                                "selectors": [{"cel": {"expression": A100}}],
                            },
                        }
                    ]
                }
            },
        },
    )
    item = pod("trainer", run, {"app": "trainer"})
    item["spec"]["nodeSelector"] = {"topospread.dev/test": run}
    item["spec"]["tolerations"] = [{"key": TAINT, "operator": "Exists"}]
    item["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "a100"}]
    item["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    kube.create(item)
    return {"namespace": run}


def _nodes(result: dict[str, Any], prefix: str = "") -> list[tuple[str, str, list[str]]]:
    return sorted(
        (n["name"], n["filter"]["code"], n["filter"]["reasons"])
        for n in result["nodes"]
        if n["name"].startswith(prefix)
    )


def test_a_pod_with_a_claim_is_explained_alike_live_from_snapshots_and_by_upstream(
    dra_story: dict[str, str], admin_kubeconfig: Path, tmp_path: Path
) -> None:
    namespace = dra_story["namespace"]
    code, live_out, err = _run(
        "explain", f"{namespace}/trainer", "--kubeconfig", str(admin_kubeconfig), "-o", "json"
    )
    assert code == 0, err
    live = json.loads(live_out)
    # The A100s are on n0 and n2; n1's T4 does not match the claim's selector.
    assert live["tiedNodes"] == [f"{namespace}-n0", f"{namespace}-n2"] or live["selectedNode"] in (
        f"{namespace}-n0",
        f"{namespace}-n2",
    )
    mine = {n["name"]: n["filter"] for n in live["nodes"] if n["name"].startswith(namespace)}
    assert mine[f"{namespace}-n1"]["plugin"] == "DynamicResources"
    assert mine[f"{namespace}-n0"]["code"] == mine[f"{namespace}-n2"]["code"] == "Success"

    verdicts = []
    for extra in ((), ("--anonymize",)):
        snapshot = tmp_path / f"snapshot{len(extra)}.yaml"
        code, _, err = _run(
            "snapshot", "-o", str(snapshot), *extra, "--kubeconfig", str(admin_kubeconfig)
        )
        assert code == 0, err
        items = yaml.safe_load(snapshot.read_text())["items"]
        [trainer] = [
            i
            for i in items
            if i["kind"] == "Pod"
            and not i["spec"].get("nodeName")
            and i["spec"].get("resourceClaims")
        ]
        pod_file = tmp_path / f"pod{len(extra)}.json"
        pod_file.write_text(json.dumps(trainer))
        code, ours, err = _run(
            "explain", "--cluster", str(snapshot), "--pod", str(pod_file), "-o", "json"
        )
        assert code == 0, err
        ours_result = json.loads(ours)
        if not extra:
            assert ours_result == live
        answers = [[(n["filter"]["code"], n["filter"]["reasons"]) for n in ours_result["nodes"]]]
        if ORACLE.is_file():
            done = subprocess.run(
                [str(ORACLE), "explain", "--cluster", str(snapshot), "--pod", str(pod_file)],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            )
            upstream = json.loads(done.stdout)
            answers.append(
                [(n["filter"]["code"], n["filter"]["reasons"]) for n in upstream["nodes"]]
            )
        elif os.environ.get("TOPOSPREAD_REQUIRE_ORACLE") == "1":
            pytest.fail("TOPOSPREAD_REQUIRE_ORACLE=1 but the oracle is not built", pytrace=False)
        assert all(a == answers[0] for a in answers)
        verdicts.append(answers[0])
    # The anonymized snapshot is judged as the original, node for node.
    assert verdicts[0] == verdicts[1]
