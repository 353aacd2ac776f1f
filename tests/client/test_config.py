"""Choosing the cluster as kubectl does: --kubeconfig, KUBECONFIG lists, contexts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from topospread.client.config import connect, kubeconfig_paths
from topospread.client.live import parse_pod_reference
from topospread.errors import KubeconfigError


def _kubeconfig(
    path: Path, contexts: dict[str, str], current: str | None, namespace: str = ""
) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": name, "cluster": {"server": server, "insecure-skip-tls-verify": True}}
            for name, server in contexts.items()
        ],
        "users": [{"name": name, "user": {"token": f"token-{name}"}} for name in contexts],
        "contexts": [
            {
                "name": name,
                "context": {
                    "cluster": name,
                    "user": name,
                    **({"namespace": namespace} if namespace else {}),
                },
            }
            for name in contexts
        ],
    }
    if current:
        config["current-context"] = current
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_current_context_of_an_explicit_kubeconfig_is_used(tmp_path: Path) -> None:
    path = _kubeconfig(
        tmp_path / "a", {"one": "https://one:6443", "two": "https://two:6443"}, "two", "shop"
    )
    connection = connect(path)
    assert (connection.server, connection.context, connection.namespace) == (
        "https://two:6443",
        "two",
        "shop",
    )


def test_context_picks_another_context_and_the_namespace_defaults_to_default(
    tmp_path: Path,
) -> None:
    path = _kubeconfig(
        tmp_path / "a", {"one": "https://one:6443", "two": "https://two:6443"}, "two"
    )
    connection = connect(path, "one")
    assert (connection.server, connection.namespace) == ("https://one:6443", "default")


def test_an_unknown_context_is_named_with_the_ones_that_exist(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path / "a", {"one": "https://one:6443"}, "one")
    with pytest.raises(KubeconfigError, match=r'context "prod" does not exist \(contexts: one\)$'):
        connect(path, "prod")


def test_a_missing_kubeconfig_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="nope: kubeconfig file not found"):
        connect(tmp_path / "nope")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            "apiVersion: v1\nkind: Config\n---\napiVersion: v1\n",
            "yaml: line 3: but found another document",
        ),
        ("clusters: [\n", "yaml: line 2: expected the node content, but found '<stream end>'"),
        ('"just a string"\n', "expected a mapping .*, found a string"),
    ],
    ids=["two documents", "unclosed list", "a string"],
)
def test_a_kubeconfig_that_is_not_one_yaml_mapping_is_refused_in_one_line(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(content)
    with pytest.raises(KubeconfigError, match=f"^{path}: cannot read kubeconfig: {problem}$"):
        connect(path)


def test_an_empty_kubeconfig_is_named_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("")
    with pytest.raises(KubeconfigError, match=f"^{path}: .*file is empty$"):
        connect(path)


def test_kubeconfig_files_listed_in_KUBECONFIG_are_merged_first_file_first(
    tmp_path: Path, monkeypatch
) -> None:
    first = _kubeconfig(tmp_path / "first", {"one": "https://one:6443"}, "two")
    second = _kubeconfig(tmp_path / "second", {"two": "https://two:6443"}, "one")
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing'}:{second}")
    assert kubeconfig_paths() == [first, second]
    # current-context comes from the first file that sets it; its context from the second.
    connection = connect()
    assert (connection.context, connection.server) == ("two", "https://two:6443")


def test_no_kubeconfig_and_no_service_account_says_what_to_do(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(
        KubeconfigError, match="no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG"
    ):
        connect()


@pytest.mark.parametrize(
    ("reference", "namespace", "expected"),
    [
        ("pod/web-1", None, ("web-1", None)),
        ("pods/web-1", "shop", ("web-1", "shop")),
        ("shop/web-1", None, ("web-1", "shop")),
        ("web-1", "shop", ("web-1", "shop")),
        ("Pod/web-1", None, ("web-1", None)),
        ("PO/web-1", "shop", ("web-1", "shop")),
    ],
)
def test_a_pod_is_named_as_kubectl_names_it(reference, namespace, expected) -> None:
    assert parse_pod_reference(reference, namespace) == expected


@pytest.mark.parametrize(
    ("reference", "words"),
    [
        ("deployment/web", "explain takes a pod (pod/NAME), not a deployment"),
        ("Deploy/web", "explain takes a pod (pod/NAME), not a deploy"),
        ("pod/", "pod/: expected pod/NAME, NAMESPACE/NAME or NAME"),
        ("/web", "/web: expected pod/NAME"),
        ("shop/pod/web", "shop/pod/web: expected pod/NAME"),
    ],
)
def test_a_reference_to_something_other_than_a_pod_is_refused(reference, words) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        parse_pod_reference(reference, "shop")


def test_a_namespace_given_twice_differently_is_refused() -> None:
    with pytest.raises(ValueError, match="names namespace shop, but --namespace says web"):
        parse_pod_reference("shop/web-1", "web")


def test_kube_schedulers_rule_reads_no_kubeconfig_from_the_environment(
    tmp_path: Path, monkeypatch
) -> None:
    path = _kubeconfig(tmp_path / "a", {"one": "https://one:6443"}, "one")
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(KubeconfigError, match=r"clientConnection\.kubeconfig is empty"):
        connect(kubectl_rules=False)
    # Named explicitly, a kubeconfig is used as ever.
    assert connect(path, kubectl_rules=False).server == "https://one:6443"


def test_kube_schedulers_rule_uses_the_service_account_inside_a_pod(
    tmp_path: Path, monkeypatch
) -> None:
    import kubernetes.config.incluster_config as incluster

    import topospread.client.config as client_config

    mounted = tmp_path / "serviceaccount"
    mounted.mkdir()
    (mounted / "token").write_text("a-token")
    (mounted / "ca.crt").write_text("a CA bundle (not read until a request is sent)")
    (mounted / "namespace").write_text("kube-system")
    monkeypatch.setattr(incluster, "SERVICE_TOKEN_FILENAME", str(mounted / "token"))
    monkeypatch.setattr(incluster, "SERVICE_CERT_FILENAME", str(mounted / "ca.crt"))
    monkeypatch.setattr(client_config, "_IN_CLUSTER_DIR", mounted)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    # A kubeconfig in the environment is not what kube-scheduler would use.
    other = _kubeconfig(tmp_path / "a", {"one": "https://one:6443"}, "one")
    monkeypatch.setenv("KUBECONFIG", str(other))
    connection = connect(kubectl_rules=False)
    assert (connection.server, connection.namespace, connection.context) == (
        "https://10.0.0.1:443",
        "kube-system",
        "in-cluster",
    )
