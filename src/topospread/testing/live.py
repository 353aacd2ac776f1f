"""Helpers for live tests and benchmarks: writes through topospread's own transport.

The product reads clusters and writes only where the user asks (the scheduler, rebalance
--apply); tests also need to create the objects they read, which :class:`Kube` does with a
few raw requests (no second client library), and :func:`node` / :func:`pod` build the
objects as a kubelet and a controller would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from topospread.client.config import Connection
from topospread.client.source import RESOURCES, Resource
from topospread.client.transport import Request, raise_for_status

__all__ = ["Kube", "node", "pod"]

_RESOURCES: dict[str, Resource] = {
    **RESOURCES,
    # What only the tests write or read: their own service accounts and tokens, published
    # scheduler configurations, and RBAC for the least-privilege tests.
    "ServiceAccount": Resource("", "v1", "serviceaccounts", "ServiceAccount"),
    "ConfigMap": Resource("", "v1", "configmaps", "ConfigMap"),
    "ClusterRole": Resource(
        "rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False
    ),
    "ClusterRoleBinding": Resource(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
}
"""Every kind of the table (:data:`topospread.model.kinds.KINDS`) and the tests' own."""


@dataclass
class Kube:
    """An admin connection with the few writes the live tests need."""

    connection: Connection

    def _send(self, method: str, path: str, body: Mapping[str, Any], content_type: str) -> Any:
        response = self.connection.transport.send(
            # Compact, as kubectl sends it: the API server keeps opaque fields (a DRA
            # config's parameters) byte for byte, and JSON clients can only update objects
            # whose stored bytes are what a JSON encoder writes again.
            Request(
                method,
                path,
                body=json.dumps(body, separators=(",", ":")).encode(),
                content_type=content_type,
            )
        )
        raise_for_status(response, self.connection.server, verb=method.lower(), resource=path)
        return json.loads(response.data)

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``obj``; a Node's ``status`` is then set through the status subresource."""
        resource = _RESOURCES[obj["kind"]]
        namespace = obj.get("metadata", {}).get("namespace", "default")
        created: dict[str, Any] = self._send(
            "POST", resource.path(namespace), obj, "application/json"
        )
        if obj["kind"] == "Node" and "status" in obj:
            path = resource.path(None, obj["metadata"]["name"]) + "/status"
            created = self._send(
                "PATCH", path, {"status": obj["status"]}, "application/merge-patch+json"
            )
        return created

    def get(self, kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
        """GET one object."""
        path = _RESOURCES[kind].path(namespace, name)
        response = self.connection.transport.send(Request("GET", path))
        raise_for_status(response, self.connection.server, verb="get", resource=path, name=name)
        found: dict[str, Any] = json.loads(response.data)
        return found

    def list(
        self, kind: str, namespace: str = "default", label_selector: str = ""
    ) -> list[dict[str, Any]]:
        """The items of one (unpaginated) list."""
        query = (("labelSelector", label_selector),) if label_selector else ()
        path = _RESOURCES[kind].path(namespace)
        response = self.connection.transport.send(Request("GET", path, query))
        raise_for_status(response, self.connection.server, verb="list", resource=path)
        items: list[dict[str, Any]] = json.loads(response.data)["items"]
        return items

    def token(self, service_account: str, namespace: str, seconds: int = 3600) -> str:
        """A bound token for ``service_account`` from the TokenRequest API."""
        path = _RESOURCES["ServiceAccount"].path(namespace, service_account) + "/token"
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        answer = self._send("POST", path, request, "application/json")
        return str(answer["status"]["token"])

    def bind(self, pod_name: str, node_name: str, namespace: str = "default") -> None:
        """Bind a pod as a scheduler does (the answer is a Status, not the pod)."""
        path = _RESOURCES["Pod"].path(namespace, pod_name) + "/binding"
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod_name},
            "target": {"kind": "Node", "name": node_name},
        }
        self._send("POST", path, binding, "application/json")

    def patch(
        self, kind: str, name: str, patch: Mapping[str, Any], namespace: str = "default"
    ) -> dict[str, Any]:
        """A JSON merge patch."""
        path = _RESOURCES[kind].path(namespace, name)
        result: dict[str, Any] = self._send("PATCH", path, patch, "application/merge-patch+json")
        return result


def node(name: str, zone: str, *, cpu: str = "4", memory: str = "8Gi") -> dict[str, Any]:
    """A Node as a kubelet would register it, Ready, in ``zone``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
            },
        },
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def pod(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    *,
    node_name: str = "",
    spread: list[dict[str, Any]] | None = None,
    cpu: str = "100m",
    requests: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Pod, bound to ``node_name`` if given (created bound, as a kubelet-less test can).
    Its container requests ``cpu`` and 64Mi of memory, or exactly ``requests`` when given
    (none at all for ``{}``)."""
    container: dict[str, Any] = {"name": "app", "image": "registry.k8s.io/pause:3.10"}
    wanted = {"cpu": cpu, "memory": "64Mi"} if requests is None else dict(requests)
    if wanted:
        container["resources"] = {"requests": wanted}
    spec: dict[str, Any] = {"containers": [container]}
    if node_name:
        spec["nodeName"] = node_name
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }
