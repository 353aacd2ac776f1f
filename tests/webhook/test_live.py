"""``topospread webhook`` behind the real kube-apiserver: the shipped
ValidatingWebhookConfiguration (deploy/webhook), pointed at the command running on
127.0.0.1 with a CA made for the test, decides what the API server admits.

The webhook is scoped to this module's namespace (the session's cluster is shared with
other tests) and its configuration is deleted at the end.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.client.transport import Request
from topospread.testing.controlplane import ControlPlane
from topospread.testing.live import Kube

from .conftest import GHOST_SELECTOR_TEXT, Certificates, deployment

pytestmark = pytest.mark.cluster

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "webhook"
CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
DENIED = 'admission webhook "spread.topospread.dev" denied the request: '


@dataclass
class Webhook:
    namespace: str
    log: Path

    def reviews(self) -> list[dict[str, Any]]:
        """The review lines the webhook logged (-v)."""
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.startswith('{"uid"')]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _send(kube: Kube, method: str, path: str, body: Any = None, query=()) -> Any:
    data = None if body is None else json.dumps(body).encode()
    return kube.connection.transport.send(Request(method, path, tuple(query), data))


def _configuration(name: str, port: int, ca: bytes, namespace: str) -> dict[str, Any]:
    # The shipped manifest, with the two things a cluster-internal Service would provide
    # replaced: a URL on 127.0.0.1 and the test CA; scoped to the test's namespace.
    shipped = yaml.safe_load((DEPLOY / "webhook-configuration.yaml").read_text())
    config = copy.deepcopy(shipped)
    config["metadata"] = {"name": name}
    hook = config["webhooks"][0]
    hook["clientConfig"] = {
        "url": f"https://127.0.0.1:{port}/validate",
        "caBundle": base64.b64encode(ca).decode(),
    }
    hook["namespaceSelector"] = {"matchLabels": {"topospread-webhook-test": namespace}}
    return config


def _wait_until_served(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"topospread webhook exited: {log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail("topospread webhook did not listen within 20s")


@pytest.fixture(scope="module")
def webhook(
    kube: Kube, certificates: Certificates, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Webhook]:
    namespace = f"webhook-{secrets.token_hex(3)}"
    log = tmp_path_factory.mktemp("webhook") / "webhook.log"
    port = _free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "topospread.cli", "webhook", "-v",
             "--tls-cert-file", str(certificates.cert),
             "--tls-private-key-file", str(certificates.key),
             "--bind-address", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    name = f"topospread-{namespace}"
    try:
        _wait_until_served(port, process, log)
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace, "labels": {"topospread-webhook-test": namespace}},
            }
        )
        created = _send(
            kube, "POST", CONFIGURATIONS,
            _configuration(name, port, certificates.ca_bundle(), namespace),
        )  # fmt: skip
        assert created.status == 201, created.data
        _wait_until_enforced(kube, namespace)
        yield Webhook(namespace, log)
    finally:
        _send(kube, "DELETE", f"{CONFIGURATIONS}/{name}")
        process.terminate()
        process.wait(10)


def _create(kube: Kube, obj: dict[str, Any], *, dry_run: bool = False):
    namespace = obj["metadata"]["namespace"]
    query = (("dryRun", "All"),) if dry_run else ()
    return _send(kube, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", obj, query)


def _wait_until_enforced(kube: Kube, namespace: str) -> None:
    # The API server picks up a new configuration from its informer: retry a dry run (the
    # webhook has no side effects, so it is called for dry runs too) until it is denied.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = _create(kube, deployment("probe", namespace, ghost=True), dry_run=True)
        if answer.status == 400:
            return
        time.sleep(0.2)
    pytest.fail("the ValidatingWebhookConfiguration did not take effect within 30s")


def test_the_api_server_denies_a_ghost_selector_deployment_in_lints_words(webhook, kube):
    answer = _create(kube, deployment("ghost", webhook.namespace, ghost=True))

    status = json.loads(answer.data)
    assert answer.status == 400
    assert status["message"].startswith(
        DENIED + "ghost-selector: spec.template.spec.topologySpreadConstraints[0]: "
        + GHOST_SELECTOR_TEXT
    )  # fmt: skip
    missing = _send(kube, "GET", f"/apis/apps/v1/namespaces/{webhook.namespace}/deployments/ghost")
    assert missing.status == 404


def test_a_valid_deployment_is_admitted_and_its_replicaset_is_not_even_sent(webhook, kube):
    answer = _create(kube, deployment("valid", webhook.namespace))

    assert answer.status == 201, answer.data
    assert "Warning" not in answer.headers
    # kube-controller-manager creates the ReplicaSet; matchConditions keep it from the
    # webhook (it is controller-owned), so the webhook never logs a review of it.
    deadline = time.monotonic() + 30
    while not kube.list("ReplicaSet", webhook.namespace, "app=web"):
        assert time.monotonic() < deadline, "no ReplicaSet within 30s"
        time.sleep(0.2)
    reviewed = {(r["kind"], r["object"]) for r in webhook.reviews()}
    assert ("Deployment", f"{webhook.namespace}/valid") in reviewed
    assert not any(kind == "ReplicaSet" for kind, _ in reviewed)


def test_a_warning_finding_is_admitted_with_the_findings_text_as_a_warning(webhook, kube):
    obj = deployment("rolling", webhook.namespace)
    del obj["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["matchLabelKeys"]

    answer = _create(kube, obj)

    assert answer.status == 201, answer.data
    assert (
        "missing-pod-template-hash: spec.template.spec.topologySpreadConstraints[0]: "
        in (answer.headers["Warning"])
    )


def test_every_review_is_answered_well_inside_the_api_servers_timeout(webhook, kube):
    for i in range(5):
        _create(kube, deployment(f"timed-{i}", webhook.namespace), dry_run=True)

    took = [r["ms"] for r in webhook.reviews()]
    assert len(took) >= 5
    # timeoutSeconds is 5 and the webhook's own deadline 2 s; a review takes milliseconds.
    assert max(took) < 2000
    print(f"webhook review latency (ms): {sorted(took)}")


@pytest.fixture
def kubectl(control_plane: ControlPlane) -> list[str]:
    """The pinned kubectl that controlplane/build.sh builds beside the servers."""
    return [
        str(control_plane.binaries / "kubectl"),
        "--kubeconfig",
        str(control_plane.admin_kubeconfig),
    ]


def test_kubectl_apply_of_a_ghost_selector_is_refused_and_a_valid_one_applies(
    webhook, kubectl, tmp_path
):
    ghost, valid = tmp_path / "ghost.yaml", tmp_path / "valid.yaml"
    ghost.write_text(yaml.safe_dump(deployment("kubectl-ghost", webhook.namespace, ghost=True)))
    valid.write_text(yaml.safe_dump(deployment("kubectl-valid", webhook.namespace)))
    env = {**os.environ, "KUBECTL_COMMAND_HEADERS": "false"}

    refused = subprocess.run([*kubectl, "apply", "-f", ghost], capture_output=True, text=True,
                             env=env, timeout=60)  # fmt: skip
    applied = subprocess.run([*kubectl, "apply", "-f", valid], capture_output=True, text=True,
                             env=env, timeout=60)  # fmt: skip

    assert refused.returncode == 1
    assert DENIED + "ghost-selector: " in refused.stderr
    assert GHOST_SELECTOR_TEXT in refused.stderr
    assert applied.returncode == 0, applied.stderr
    assert re.search(r"deployment.apps/kubectl-valid (created|configured)", applied.stdout)
