"""A pod the API server holds though a create would now refuse it — stored by an older
release, before validation was tightened — is explained by ``explain pod/NAME`` and
scheduled by ``topospread scheduler``: both decode server objects as stored.

The pod is written to etcd as a v1.31 API server would have stored it (JSON, which the
API server's storage decoder reads beside protobuf): a term of its required node affinity
lists "old value!", which v1.32+ refuses on create (kubernetes#128212) and keeps on update;
that term never matches, the other one selects the target node.
"""

from __future__ import annotations

import base64
import copy
import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.client.config import connect
from topospread.client.transport import Request
from topospread.testing.live import node
from topospread.testing.scheduling import wait_for

pytestmark = pytest.mark.cluster

STORED = Path(__file__).parents[1] / "data" / "stored" / "pod-ratcheted-node-affinity.yaml"


def _etcd_put(etcd_url: str, key: str, value: dict[str, Any]) -> None:
    body = {
        "key": base64.b64encode(key.encode()).decode(),
        "value": base64.b64encode(json.dumps(value).encode()).decode(),
    }
    request = urllib.request.Request(
        f"{etcd_url}/v3/kv/put", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_a_pod_stored_by_an_older_server_is_explained_and_scheduled(
    control_plane, kube, admin_kubeconfig, run_scheduler, scheduler_name, unique_name, tmp_path
) -> None:
    namespace, rack = unique_name("stored"), unique_name("rack")
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    target, other = unique_name("stored-a"), unique_name("stored-b")
    for name, labels in ((target, {"rack": rack}), (other, {"rack": f"{rack}-other"})):
        member = node(name, "zone-a")
        member["metadata"]["labels"].update(labels)
        kube.create(member)

    pod = yaml.safe_load(STORED.read_text())
    del pod["metadata"]["resourceVersion"]
    pod["metadata"].update(namespace=namespace, uid=str(uuid.uuid4()))
    pod["spec"]["schedulerName"] = scheduler_name
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = [rack]
    name = pod["metadata"]["name"]

    connection = connect(admin_kubeconfig)
    try:
        # A create is refused today...
        created = copy.deepcopy(pod)
        del created["metadata"]["uid"], created["metadata"]["creationTimestamp"]
        path = f"/api/v1/namespaces/{namespace}/pods"
        refused = connection.transport.send(
            Request("POST", path, body=json.dumps(created).encode())
        )
        assert refused.status == 422
        assert 'Invalid value: "old value!"' in json.loads(refused.data)["message"]
        # ...but the server holds and serves what an older release stored.
        _etcd_put(control_plane.etcd_url, f"/registry/pods/{namespace}/{name}", pod)
        served = connection.transport.send(Request("GET", f"{path}/{name}"))
        assert served.status == 200, served.data
    finally:
        connection.close()

    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": scheduler_name}],
            }
        )
    )
    explained = CliRunner().invoke(
        cli,
        [
            "explain",
            f"{namespace}/{name}",
            "--kubeconfig",
            str(admin_kubeconfig),
            "--config",
            str(config),
            "-o",
            "json",
        ],
    )
    assert explained.exit_code == 0, explained.output
    answer = json.loads(explained.stdout)
    assert answer["selectedNode"] == target, answer["message"]

    run_scheduler(admin_kubeconfig, scheduler_name)

    def bound() -> bool:
        return bool(kube.get("Pod", name, namespace)["spec"].get("nodeName"))

    wait_for(bound, 30, what="the stored pod to be bound")
    assert kube.get("Pod", name, namespace)["spec"]["nodeName"] == target
