"""The API server's create-time defaulting (topospread.model.defaulting), one function for
every pod topospread reads; compared with the oracle in tests/differential."""

from __future__ import annotations

from typing import Any

from topospread.model.admission import admit_pod
from topospread.model.decode import decode_documents
from topospread.model.objects import Pod


def _pod(spec: dict[str, Any], **meta: Any) -> Pod:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", **meta},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }
    (pod,) = decode_documents([doc]).objects
    assert isinstance(pod, Pod)
    return pod


ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "topologyKey": "zone",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "matchLabelKeys": ["rev", "absent"],
                "mismatchLabelKeys": ["team"],
            }
        ]
    }
}


def test_host_network_ports_get_their_container_port_as_host_port() -> None:
    spec = {
        "hostNetwork": True,
        "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}],
        "initContainers": [
            {"name": "i", "image": "i", "ports": [{"containerPort": 81, "hostPort": 9}]}
        ],
    }
    pod = admit_pod(_pod(spec, uid="u"))  # SetDefaults_Pod applies to stored pods too
    assert pod.containers[0].ports[0].host_port == 80
    assert pod.init_containers[0].ports[0].host_port == 9


def test_without_host_network_ports_are_left_alone() -> None:
    spec = {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}
    assert admit_pod(_pod(spec)).containers[0].ports[0].host_port == 0


def test_affinity_label_keys_are_merged_once_on_create() -> None:
    pod = _pod({"affinity": ANTI}, labels={"app": "web", "rev": "3", "team": "a"})
    admitted = admit_pod(pod)
    assert admitted.affinity is not None
    (term,) = admitted.affinity.pod_anti_affinity_required
    assert term.label_selector is not None
    assert [(e.key, e.operator, e.values) for e in term.label_selector.match_expressions] == [
        ("rev", "In", ("3",)),
        ("team", "NotIn", ("a",)),
    ]
    assert admit_pod(admitted) == admitted


def test_stored_pods_are_not_merged() -> None:
    pod = _pod({"affinity": ANTI}, labels={"app": "web", "rev": "3"}, uid="u")
    assert admit_pod(pod) == pod


def test_pod_level_requests_come_from_container_requests_then_pod_limits() -> None:
    spec = {
        "resources": {"limits": {"cpu": "3", "memory": "2Gi"}},
        "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}}},
            {"name": "d", "image": "i", "resources": {"requests": {"cpu": "250m"}}},
        ],
    }
    requests = admit_pod(_pod(spec)).pod_resources_requests
    assert requests is not None
    assert {k: str(v) for k, v in requests.items()} == {"cpu": "750m", "memory": "2147483648"}


def test_bind_mount_options_are_dropped_on_create_only() -> None:
    spec = {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}],
            }
        ],
        "volumes": [{"name": "v", "emptyDir": {}}],
    }
    assert not admit_pod(_pod(spec)).containers[0].bind_mount_options
    assert admit_pod(_pod(spec, uid="u")).containers[0].bind_mount_options
