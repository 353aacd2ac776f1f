"""The rule options audit, lint and the webhook share: ``--disable``, ``--enable``,
``--allowed-topology-keys``, and ``--fail-on``'s threshold."""

from __future__ import annotations

from collections.abc import Sequence

from topospread.engine.audit import OPT_IN_RULES, RULES, Finding, Severity
from topospread.errors import InputError

__all__ = ["UNSERVED_RULE", "allowed_topology_keys", "disabled_rules", "enabled_rules", "fails"]

UNSERVED_RULE = "unserved-scheduler-name"
"""The rule id of :func:`topospread.cli.live.unserved_pending_findings` (a live-audit rule
of this edge, not of the engine's catalogue)."""


def disabled_rules(values: Sequence[str]) -> frozenset[str]:
    """``--disable`` (repeatable, or comma-separated): rules of the engine's catalogue or the
    live audit's own; an unknown one is bad input."""
    rules = frozenset(r.strip() for v in values for r in v.split(",") if r.strip())
    known = (*RULES, UNSERVED_RULE)
    unknown = sorted(rules - set(known))
    if unknown:
        raise InputError(
            "--disable",
            message=f"unknown rule(s) {', '.join(unknown)} (rules: {', '.join(known)})",
        )
    return rules


def enabled_rules(values: Sequence[str]) -> frozenset[str]:
    """``--enable``: opt-in rules only."""
    rules = frozenset(r.strip() for v in values for r in v.split(",") if r.strip())
    unknown = sorted(rules - OPT_IN_RULES)
    if unknown:
        raise InputError(
            "--enable",
            message=f"not an opt-in rule: {', '.join(unknown)} "
            f"(opt-in rules: {', '.join(sorted(OPT_IN_RULES))})",
        )
    return rules


def allowed_topology_keys(value: str | None) -> frozenset[str] | None:
    """``--allowed-topology-keys KEY,...``; None when not given."""
    if value is None:
        return None
    return frozenset(k.strip() for k in value.split(",") if k.strip())


def fails(findings: Sequence[Finding], fail_on: str) -> bool:
    """Whether a finding is at or above ``--fail-on`` (``none``: never)."""
    if fail_on == "none":
        return False
    threshold = Severity(fail_on).rank
    return any(f.severity.rank <= threshold for f in findings)
