"""Find the cluster to talk to, with the rules kubectl follows (client-go's clientcmd).

1. ``--kubeconfig FILE``: that file only; it must exist.
2. Otherwise ``$KUBECONFIG``: a list of files (``:``-separated, ``;`` on Windows), merged
   as kubectl merges them (the first file to set a value wins; missing files are skipped).
3. Otherwise ``~/.kube/config`` when it exists.
4. Otherwise the in-cluster service account (``KUBERNETES_SERVICE_HOST`` and the mounted
   token), as a pod running topospread would use.

``--context`` picks a context (default: ``current-context``); the namespace is the
context's, or the service account's in-cluster, or ``default``. Client certificates,
tokens, token files and exec credential plugins (EKS, GKE and AKS use them) are set up by
the official ``kubernetes`` client's loader, imported only here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topospread.client.transport import KubeTransport
from topospread.errors import KubeconfigError

__all__ = ["Connection", "connect", "kubeconfig_paths"]

_IN_CLUSTER_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True, slots=True)
class Connection:
    """A configured link to one API server."""

    transport: KubeTransport
    namespace: str
    """The namespace of the context (``default`` when it names none)."""
    context: str
    """The context's name, or ``in-cluster``."""

    @property
    def server(self) -> str:
        """The API server's URL."""
        return self.transport.server

    def close(self) -> None:
        """Release the connection pool."""
        self.transport.close()


def kubeconfig_paths(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """The kubeconfig files kubectl would read, in precedence order (may be empty)."""
    if explicit is not None:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        paths = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
        return [p for p in dict.fromkeys(paths) if p.is_file()]
    default = Path("~/.kube/config").expanduser()
    return [default] if default.is_file() else []


def connect(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    *,
    timeout: tuple[float, float] | None = None,
    kubectl_rules: bool = True,
) -> Connection:
    """Configure a :class:`Connection` from a kubeconfig or the in-cluster service account.

    ``kubectl_rules=False`` is kube-scheduler's rule for an empty
    ``clientConnection.kubeconfig`` (client-go's ``BuildConfigFromFlags("", "")``): the
    in-cluster service account only, no ``$KUBECONFIG`` or ``~/.kube/config``.
    Raises :class:`KubeconfigError` when no configuration is found or the context does
    not exist. Nothing is sent to the server here.
    """
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config_module

    # The official client is untyped; its three loader functions are used as documented.
    k8s_config: Any = k8s_config_module

    paths = kubeconfig_paths(kubeconfig) if kubectl_rules or kubeconfig else []
    if kubeconfig is not None and not paths[0].is_file():
        raise KubeconfigError(f"{paths[0]}: kubeconfig file not found")
    configuration: Any = k8s_client.Configuration()
    if paths:
        joined = os.pathsep.join(str(p) for p in paths)
        where = joined if len(paths) == 1 else f"KUBECONFIG={joined}"
        documents = [_kubeconfig_document(path) for path in paths]
        try:
            contexts, current = k8s_config.list_kube_config_contexts(config_file=joined)
        except k8s_config.ConfigException as exc:
            raise KubeconfigError(f"{where}: {_config_message(exc)}") from None
        except (OSError, ValueError) as exc:
            raise KubeconfigError(f"{where}: cannot read kubeconfig: {exc}") from None
        names = [c.get("name") for c in contexts or ()]
        # client-go: the first file that sets current-context wins; the Python client's
        # merger keeps the last one, so it is looked up here.
        chosen_name = context or _first_current_context(documents) or (current or {}).get("name")
        if not chosen_name:
            raise KubeconfigError(f"{where}: no current-context is set; pass --context")
        if chosen_name not in names:
            known = ", ".join(str(n) for n in names) or "none"
            raise KubeconfigError(
                f'{where}: context "{chosen_name}" does not exist (contexts: {known})'
            )
        chosen = next(c for c in contexts if c.get("name") == chosen_name)
        try:
            k8s_config.load_kube_config(
                config_file=joined,
                context=chosen_name,
                client_configuration=configuration,
                persist_config=False,
            )
        except k8s_config.ConfigException as exc:
            message = _config_message(exc)
            raise KubeconfigError(f"{where}: context {chosen_name}: {message}") from None
        except (OSError, ValueError) as exc:
            raise KubeconfigError(f"{where}: context {chosen_name}: {exc}") from None
        namespace = (chosen.get("context") or {}).get("namespace") or "default"
        name = str(chosen_name)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)
        except k8s_config.ConfigException as exc:
            raise KubeconfigError(f"in-cluster configuration: {_config_message(exc)}") from None
        namespace_file = _IN_CLUSTER_DIR / "namespace"
        namespace = (
            namespace_file.read_text(encoding="utf-8").strip()
            if namespace_file.is_file()
            else "default"
        )
        name = "in-cluster"
    elif not kubectl_rules:
        raise KubeconfigError(
            "no kubeconfig: clientConnection.kubeconfig is empty and this is not running in "
            "a cluster (KUBERNETES_SERVICE_HOST is not set); as kube-scheduler does, "
            "$KUBECONFIG and ~/.kube/config are not read: pass --kubeconfig FILE"
        )
    else:
        raise KubeconfigError(
            "no kubeconfig: pass --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config"
        )
    # One connection per list running in parallel (a dozen resources), and a few for the
    # writes of the scheduler and rebalance; the client's default is 5 per CPU.
    configuration.connection_pool_maxsize = max(32, configuration.connection_pool_maxsize or 0)
    api_client = k8s_client.ApiClient(configuration)
    transport = (
        KubeTransport(api_client) if timeout is None else KubeTransport(api_client, timeout=timeout)
    )
    return Connection(transport, namespace, name)


_YAML_KINDS = {
    str: "a string",
    list: "a list",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def _kubeconfig_document(path: Path) -> dict[str, Any]:
    """One kubeconfig file read as YAML, or :class:`KubeconfigError` in one line: the
    official client would fail on a file that is not one YAML mapping with a traceback
    (``yaml.composer.ComposerError``, ``TypeError``). An empty file reads as an empty
    mapping (the official client then names it as empty)."""
    import yaml

    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise KubeconfigError(f"{path}: cannot read kubeconfig: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        line = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark else ""
        problem = exc.problem or exc.context or type(exc).__name__
        raise KubeconfigError(f"{path}: cannot read kubeconfig: yaml: {line}{problem}") from None
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"{path}: cannot read kubeconfig: yaml: {exc}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise KubeconfigError(
            f"{path}: cannot read kubeconfig: expected a mapping (apiVersion, kind: Config, "
            f"clusters, users, contexts), found {_YAML_KINDS.get(type(document), 'a scalar')}"
        )
    return document


def _first_current_context(documents: list[dict[str, Any]]) -> str | None:
    for document in documents:
        current = document.get("current-context")
        if isinstance(current, str) and current:
            return current
    return None


def _config_message(exc: Exception) -> str:
    text = str(exc).strip()
    return text.removeprefix("Invalid kube-config file. ") or type(exc).__name__
