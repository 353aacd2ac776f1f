"""What ``topospread scheduler`` reads from its KubeSchedulerConfiguration besides profiles.

The profiles, ``percentageOfNodesToScore``, ``parallelism`` and the backoff seconds are
decoded by the engine's own decoder (:func:`decode_configuration`); this module adds the
component fields kube-scheduler reads from the same document: ``leaderElection``
(``LeaderElectionConfiguration``) and ``clientConnection``
(``ClientConnectionConfiguration``), defaulted as ``SetDefaults_KubeSchedulerConfiguration``
defaults them and validated as ``ValidateLeaderElectionConfiguration`` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from topospread.errors import ConfigError, FieldError, InputError
from topospread.framework.config.decode import decode_configuration, default_configuration
from topospread.framework.config.types import SchedulerConfiguration
from topospread.framework.waiting import go_duration
from topospread.io.loader import load_documents
from topospread.io.reader import display_name
from topospread.plugins.registry import args_decoders

__all__ = [
    "ClientConnection",
    "LeaderElection",
    "SchedulerOptions",
    "load_options",
    "options_from_document",
    "parse_duration",
]

JITTER_FACTOR: Final = 1.2
"""client-go's leader election ``JitterFactor``: renewDeadline must exceed retryPeriod × it."""


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """``leaderElection``, kube-scheduler's defaults."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class ClientConnection:
    """``clientConnection``: kube-scheduler defaults qps 50 and burst 100."""

    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """Everything the scheduler component runs with."""

    configuration: SchedulerConfiguration = field(default_factory=default_configuration)
    leader_election: LeaderElection = LeaderElection()
    client_connection: ClientConnection = ClientConnection()
    pod_max_in_unschedulable_pods_duration: float = 300.0
    """kube-scheduler's ``--pod-max-in-unschedulable-pods-duration`` (not in the v1 file)."""


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go ``time.Duration`` string (``15s``, ``1m30s``, ``500ms``); None if
    it is not one."""
    if text in ("0", ""):
        return 0.0 if text == "0" else None
    sign = -1.0 if text.startswith("-") else 1.0
    rest = text.lstrip("+-")
    total, position = 0.0, 0
    for match in _DURATION.finditer(rest):
        if match.start() != position:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(rest) or position == 0:
        return None
    return sign * total


def _section(doc: Mapping[str, Any], key: str, errors: list[FieldError]) -> Mapping[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(FieldError.invalid(key, value, "expected object"))
        return {}
    return value


def _duration(
    data: Mapping[str, Any], key: str, path: str, default: float, errors: list[FieldError]
) -> float:
    value = data.get(key)
    if value is None:
        return default
    seconds = parse_duration(value) if isinstance(value, str) else None
    if seconds is None:
        errors.append(FieldError.invalid(f"{path}.{key}", value, "expected a duration like 15s"))
        return default
    return seconds


def options_from_document(
    doc: Mapping[str, Any], source: str, *, pod_max_in_unschedulable: float = 300.0
) -> SchedulerOptions:
    """Decode the configuration document; raises :class:`ConfigError` with every problem.

    As kube-scheduler: a field that does not decode (``retryPeriod: soon``) stops before
    validation; otherwise every validation error is reported together, clientConnection's
    and leaderElection's first (``ValidateKubeSchedulerConfiguration``)."""
    errors: list[FieldError] = []
    le = _section(doc, "leaderElection", errors)
    path = "leaderElection"
    elect = le.get("leaderElect", True)
    if not isinstance(elect, bool):
        errors.append(FieldError.invalid(f"{path}.leaderElect", elect, "expected boolean"))
        elect = True
    defaults = LeaderElection()
    leader = LeaderElection(
        leader_elect=elect,
        lease_duration=_duration(le, "leaseDuration", path, defaults.lease_duration, errors),
        renew_deadline=_duration(le, "renewDeadline", path, defaults.renew_deadline, errors),
        retry_period=_duration(le, "retryPeriod", path, defaults.retry_period, errors),
        resource_lock=str(le.get("resourceLock") or defaults.resource_lock),
        resource_name=str(le.get("resourceName") or defaults.resource_name),
        resource_namespace=str(le.get("resourceNamespace") or defaults.resource_namespace),
    )
    cc = _section(doc, "clientConnection", errors)
    qps = cc.get("qps", 50.0)
    burst = cc.get("burst", 100)
    if not isinstance(qps, int | float) or isinstance(qps, bool):
        errors.append(FieldError.invalid("clientConnection.qps", qps, "expected number"))
        qps = 50.0
    if not isinstance(burst, int) or isinstance(burst, bool):
        errors.append(FieldError.invalid("clientConnection.burst", burst, "expected integer"))
        burst = 100
    kubeconfig = cc.get("kubeconfig") or ""
    if not isinstance(kubeconfig, str):
        errors.append(
            FieldError.invalid("clientConnection.kubeconfig", kubeconfig, "expected string")
        )
        kubeconfig = ""
    if errors:
        raise ConfigError(source, errors)
    configuration = decode_configuration(
        doc,
        source,
        args_decoders=args_decoders(),
        validated_first=[*_client_problems(burst), *_leader_problems(leader)],
    )
    return SchedulerOptions(
        configuration,
        leader,
        # SetDefaults: a qps of 0 means the default 50 (a negative one, no limit).
        ClientConnection(kubeconfig, float(qps) or 50.0, burst or 100),
        pod_max_in_unschedulable,
    )


def _client_problems(burst: int) -> list[FieldError]:
    # component-base ValidateClientConnectionConfiguration.
    if burst < 0:
        return [FieldError.invalid("clientConnection.burst", burst, "must be non-negative")]
    return []


def _leader_problems(leader: LeaderElection) -> list[FieldError]:
    """component-base ``ValidateLeaderElectionConfiguration`` and kube-scheduler's own
    resourceLock rule, in their words (a duration shown as Go prints it)."""
    path = "leaderElection"
    if not leader.leader_elect:
        return []
    problems = [
        FieldError.invalid(f"{path}.{name}", go_duration(value), "must be greater than zero")
        for name, value in (
            ("leaseDuration", leader.lease_duration),
            ("renewDeadline", leader.renew_deadline),
            ("retryPeriod", leader.retry_period),
        )
        if value <= 0
    ]
    if leader.lease_duration <= leader.renew_deadline:
        # Upstream shows the renewDeadline as the value.
        problems.append(
            FieldError.invalid(
                f"{path}.leaseDuration",
                go_duration(leader.renew_deadline),
                "must be greater than `RenewDeadline`",
            )
        )
    if leader.resource_lock != "leases":
        problems.append(
            FieldError.invalid(
                f"{path}.resourceLock", leader.resource_lock, 'resourceLock value must be "leases"'
            )
        )
    return problems


def load_options(
    path: Path | str | None, *, pod_max_in_unschedulable: float = 300.0
) -> SchedulerOptions:
    """Read ``--config FILE`` (upstream's defaults without one)."""
    if path is None:
        return SchedulerOptions(pod_max_in_unschedulable_pods_duration=pod_max_in_unschedulable)
    source = display_name(path)
    documents = [d for d in load_documents(path) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise InputError(source, message="expected one KubeSchedulerConfiguration document")
    return options_from_document(
        documents[0], source, pod_max_in_unschedulable=pod_max_in_unschedulable
    )
