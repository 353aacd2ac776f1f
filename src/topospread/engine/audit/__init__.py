"""``topospread audit`` and ``lint``: spread problems found with the scheduler's own counting.

The live-cluster mode and the file mode both call :func:`audit` with decoded objects;
:func:`lint` checks manifests before they are applied.
"""

from topospread.engine.audit.audit import (
    AuditReport,
    LintObject,
    LintReport,
    PendingReport,
    Scope,
    WorkloadAudit,
    audit,
    count_constraints,
    lint,
    validation_errors,
)
from topospread.engine.audit.checks import ConstraintAudit, MisplacedPod, spread_feasible
from topospread.engine.audit.findings import (
    OPT_IN_RULES,
    RULES,
    Finding,
    Rule,
    Severity,
    rank_findings,
)
from topospread.engine.audit.scope import (
    ignored_in_text,
    parse_domains,
    parse_label_selector,
    parse_workload_name,
)

__all__ = [
    "OPT_IN_RULES",
    "RULES",
    "AuditReport",
    "ConstraintAudit",
    "Finding",
    "LintObject",
    "LintReport",
    "MisplacedPod",
    "PendingReport",
    "Rule",
    "Scope",
    "Severity",
    "WorkloadAudit",
    "audit",
    "count_constraints",
    "ignored_in_text",
    "lint",
    "parse_domains",
    "parse_label_selector",
    "parse_workload_name",
    "rank_findings",
    "spread_feasible",
    "validation_errors",
]
