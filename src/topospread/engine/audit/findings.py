"""Findings of ``audit`` and ``lint``: the rule catalogue, severities and one finding.

Rule ids are stable (they appear in ``--disable``, ``# topospread:ignore`` comments,
SARIF and JSON); a rule's severity may depend on ``whenUnsatisfiable`` (a hard constraint's
problem is an error, the same problem in a soft one a warning).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = ["OPT_IN_RULES", "RULES", "Finding", "Rule", "Severity", "rank_findings"]


class Severity(StrEnum):
    """How bad a finding is; ``--fail-on`` compares against this order."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for error, 1 for warning, 2 for info (most severe first)."""
        return _RANKS[self]


_RANKS: Final = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule of the catalogue."""

    id: str
    severity: str
    """The severity it is reported with, e.g. ``error (hard) / warning (soft)``."""
    summary: str
    """One line: what the rule finds."""
    needs: str
    """What it needs to run: ``manifest``, ``domains`` (lint --domains or a cluster),
    ``nodes`` (a cluster's nodes) or ``pods`` (audit: the pods that exist)."""
    opt_in: bool = False
    """A policy, reported only when asked for (``--enable RULE``)."""


RULES: Final[Mapping[str, Rule]] = {
    rule.id: rule
    for rule in (
        Rule(
            "api-validation",
            "error",
            "the API server would reject the object (its own wording and field path)",
            "manifest",
        ),
        Rule(
            "skew-over-max",
            "error (hard) / warning (soft)",
            "the pods now sit with a skew above maxSkew",
            "pods",
        ),
        Rule(
            "min-domains-shortfall",
            "error when replicas cannot fit, else warning",
            "fewer eligible domains than minDomains: the global minimum is forced to 0",
            "domains",
        ),
        Rule(
            "pending-spread",
            "error",
            "pods are Pending because of topology spread (kube-scheduler's message)",
            "pods",
        ),
        Rule(
            "ghost-selector",
            "error (hard) / warning (soft)",
            "the labelSelector matches none of the workload's own pods, so it spreads nothing",
            "manifest",
        ),
        Rule(
            "missing-selector",
            "error (hard) / warning (soft)",
            "a constraint without labelSelector matches no pod at all",
            "manifest",
        ),
        Rule(
            "empty-selector",
            "error (hard) / warning (soft)",
            "labelSelector: {} counts no pods in kube-scheduler v1.37.1 (kubernetes#141339)",
            "manifest",
        ),
        Rule(
            "missing-pod-template-hash",
            "warning (hard) / info (soft)",
            "a rolling-update Deployment without pod-template-hash in matchLabelKeys",
            "manifest",
        ),
        Rule(
            "wedged-domain",
            "error",
            "a domain whose nodes are all tainted or cordoned still counts "
            "(nodeTaintsPolicy: Ignore) and holds the global minimum down",
            "nodes",
        ),
        Rule(
            "missing-topology-key",
            "warning (hard) / info (soft)",
            "nodes lack the constraint's topology key: they drop out of every count",
            "nodes",
        ),
        Rule(
            "max-skew-never-binds",
            "warning",
            "maxSkew is at least the replica count, so the constraint can never reject a node",
            "manifest",
        ),
        Rule(
            "zone-hostname-conflict",
            "error",
            "hard zone and hostname constraints cannot both hold for the replicas "
            "and the domain sizes",
            "domains",
        ),
        Rule(
            "no-eligible-nodes",
            "error",
            "no node is eligible for a hard constraint: none matches the pods' node selection "
            "or carries the topology key",
            "nodes",
        ),
        Rule(
            "unknown-topology-key",
            "warning",
            "the topology key is not a label nodes carry by default (checked against the "
            "nodes with --cluster)",
            "manifest",
        ),
        Rule(
            "soft-spread-void",
            "warning",
            "no node has a ScheduleAnyway constraint's key, so Score ignores every node and "
            "none of the pod's soft constraints does anything",
            "nodes",
        ),
        Rule(
            "topology-key-not-allowed",
            "error",
            "a constraint's topology key is not in --allowed-topology-keys",
            "manifest + --allowed-topology-keys",
        ),
        Rule(
            "no-spread",
            "warning (nothing spreads) / info (only the System defaults)",
            "a workload of two or more replicas with no spread constraints or required pod "
            "anti-affinity of its own",
            "manifest",
        ),
        Rule(
            "zone-and-hostname-spread",
            "warning",
            "a workload of three or more replicas without both a zone and a hostname "
            "constraint (opt-in policy)",
            "manifest + --enable",
            opt_in=True,
        ),
        Rule(
            "selector-overlap",
            "warning (hard) / info (soft)",
            "a constraint's labelSelector or the workload's selector also matches another "
            "workload's pod template labels",
            "manifests linted together",
        ),
        Rule(
            "domains-only-in-pools-at-zero",
            "warning (hard) / info (soft)",
            "a constraint's domains exist only in node pools at zero nodes, which the "
            "scheduler does not know until a node exists there",
            "nodes + --node-pools",
        ),
        Rule(
            "min-domains-unreachable",
            "error",
            "minDomains exceeds the domains the existing nodes and every node pool can "
            "ever offer the pods",
            "nodes + --node-pools",
        ),
        Rule(
            "pools-cannot-survive-zone-loss",
            "warning",
            "without one zone, the other zones' nodes and pools at max-size cannot hold the "
            "replicas within the zone constraint's maxSkew",
            "nodes + --node-pools",
        ),
        Rule(
            "defaults-invisible-to-autoscaler",
            "warning",
            "hard cluster default constraints apply, which cluster-autoscaler and Karpenter "
            "do not see",
            "manifest",
        ),
    )
}
"""Every rule, in the order the README lists them."""

OPT_IN_RULES: Final = frozenset(rule.id for rule in RULES.values() if rule.opt_in)
"""Rules left out unless enabled."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: which rule, how bad, where, why (with the numbers) and the fix."""

    rule: str
    severity: Severity
    ref: str
    """The object: ``Kind/namespace/name``."""
    field_path: str
    """Where in the object, e.g. ``spec.template.spec.topologySpreadConstraints[0]``."""
    message: str
    fix: str
    source: str = ""
    """The file the object came from (lint), or ``""``."""
    line: int | None = None
    """1-based line of the object in ``source``, when known."""

    def to_json(self) -> dict[str, object]:
        """``{"rule", "severity", "object", "fieldPath", "message", "fix"}`` (+ source, line)."""
        result: dict[str, object] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "object": self.ref,
            "fieldPath": self.field_path,
            "message": self.message,
            "fix": self.fix,
        }
        if self.source:
            result["source"] = self.source
        if self.line is not None:
            result["line"] = self.line
        return result


def rank_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first; then by object, field path and rule, for a stable order."""
    return sorted(findings, key=lambda f: (f.severity.rank, f.ref, f.field_path, f.rule, f.message))
