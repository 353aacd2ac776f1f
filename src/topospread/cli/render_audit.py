"""Text, SARIF and HTML views of ``audit`` and ``lint`` results. Only reads the result model."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from topospread import KUBERNETES_VERSION, __version__
from topospread.cli.render_html import (
    Colours,
    Frame,
    SpreadRow,
    Waiting,
    frame_section,
    header,
    nav,
    page,
    write_html,
)
from topospread.engine.audit import RULES, AuditReport, Finding, LintReport, Severity

__all__ = [
    "SARIF_SCHEMA",
    "audit_html",
    "render_audit",
    "render_lint",
    "sarif",
    "write_audit_html",
]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SHORT_KEYS = {
    "topology.kubernetes.io/zone": "zone",
    "kubernetes.io/hostname": "hostname",
    "topology.kubernetes.io/region": "region",
}
_MAX_COUNTS = 48
"""Characters of domain counts shown before they are summarised."""


def _counts_text(counts: dict[str, int]) -> str:
    text = ", ".join(f"{k}={v}" for k, v in counts.items())
    if len(text) > _MAX_COUNTS:
        values = list(counts.values())
        text = f"{len(values)} domains, {min(values)}..{max(values)} pods"
    return text or "(no eligible domains)"


def _status(satisfied: bool, no_eligible_domains: bool, *, hard: bool) -> Text:
    """A counted constraint's verdict. Without any eligible domain a hard constraint is not
    "ok": every node is UnschedulableAndUnresolvable for it (no-eligible-nodes)."""
    if no_eligible_domains:
        if hard:
            return Text("pods cannot schedule", style="red")
        return Text("spreads nothing", style="yellow")
    return Text("ok", style="green") if satisfied else Text("over maxSkew", style="red")


def _summary_text(findings: Sequence[Finding]) -> str:
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    return (
        f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), "
        f"{counts[Severity.INFO]} info"
    )


def _findings_table(findings: Sequence[Finding], console: Console, *, locations: bool) -> None:
    if not findings:
        console.print(Text("No findings.", style="green"))
        return
    table = Table(padding=(0, 1), show_lines=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("object" if not locations else "where", overflow="fold")
    table.add_column("finding", overflow="fold")
    for f in findings:
        where = f"{f.ref}\n{f.field_path}"
        if locations and f.source:
            where = f"{f.source}:{f.line}\n" + where if f.line else f"{f.source}\n" + where
        table.add_row(
            Text(f.severity.value, style=_STYLES[f.severity]),
            f.rule,
            where,
            Text.assemble(f.message, "\n", ("fix: ", "bold"), f.fix),
        )
    console.print(table)


def render_audit(report: AuditReport, console: Console) -> None:
    """Workloads with their counted constraints and pending pods, then the findings."""
    console.print(
        Text.assemble(
            ("Audit ", "bold"),
            f"{len(report.workloads)} workload(s): {_summary_text(report.findings)}  "
            f"(kube-scheduler {report.kubernetes_version})",
        )
    )
    for w in report.workloads:
        console.print()
        replicas = "" if w.replicas is None else f"{w.replicas} desired, "
        console.print(
            Text.assemble(
                (w.ref, "bold"),
                f"  {replicas}{w.pods} pod(s), {w.pending} pending; constraints: {w.source}; "
                f"counted: {w.counted_from}",
            )
        )
        if w.constraints:
            table = Table(padding=(0, 1))
            table.add_column("constraint", no_wrap=True)
            table.add_column("domain counts")
            table.add_column("min", justify="right")
            table.add_column("skew", justify="right")
            table.add_column("maxSkew", justify="right")
            table.add_column("", no_wrap=True)
            for c in w.constraints:
                mode = "hard" if c.hard else "soft"
                key = c.constraint.topology_key
                # A bare key (zone) is quoted: it is not topology.kubernetes.io/zone.
                label = f"{mode} {_SHORT_KEYS.get(key) or (key if '/' in key else repr(key))}"
                r = c.report
                if r is None:
                    table.add_row(label, "(not counted)", "", "", str(c.constraint.max_skew), "")
                    continue
                status = _status(r.satisfied, r.no_eligible_domains, hard=c.hard)
                if r.min_domains_shortfall:
                    status.append(
                        f", {r.min_domains_shortfall} domain(s) short of minDomains", "yellow"
                    )
                table.add_row(
                    label,
                    _counts_text(dict(r.domain_counts)),
                    str(r.global_min),
                    str(r.skew),
                    str(r.max_skew),
                    status,
                )
            console.print(table)
            for c in w.constraints:
                if c.misplaced:
                    pods = ", ".join(f"{m.pod} ({m.domain})" for m in c.misplaced[:8])
                    more = f" and {len(c.misplaced) - 8} more" if len(c.misplaced) > 8 else ""
                    console.print(
                        Text(f"  in domains over globalMin + maxSkew: {pods}{more}", style="red")
                    )
        for p in w.pending_pods:
            console.print(
                Text.assemble(("  Pending ", "bold red"), f"{p.pod}: ", (p.message, "dim"))
            )
        for note in w.notes:
            console.print(Text(f"  note: {note}", style="yellow"))
    console.print()
    console.print(Text("Findings", style="bold"))
    _findings_table(report.findings, console, locations=False)


def render_lint(report: LintReport, console: Console) -> None:
    """The findings, with file and line, most severe first."""
    console.print(
        Text.assemble(
            ("Lint ", "bold"),
            f"{len(report.checked)} object(s): {_summary_text(report.findings)}  "
            f"(kube-scheduler {KUBERNETES_VERSION})",
        )
    )
    if report.errors:
        console.print(
            Text(f"{len(report.errors)} input problem(s), listed on stderr", style="bold red")
        )
    _findings_table(report.findings, console, locations=True)


def sarif(report: LintReport) -> dict[str, object]:
    """The findings as a SARIF 2.1.0 log, one run, every rule described in the driver."""
    rule_ids = list(RULES)
    rules = [
        {
            "id": rule.id,
            "name": "".join(part.capitalize() for part in rule.id.split("-")),
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": f"{rule.summary} (severity: {rule.severity})."},
            "defaultConfiguration": {
                "level": "error" if rule.severity.startswith("error") else "warning"
            },
            "properties": {"needs": rule.needs},
        }
        for rule in RULES.values()
    ]
    results = []
    for f in report.findings:
        location: dict[str, object] = {
            "logicalLocations": [
                {"fullyQualifiedName": f"{f.ref}:{f.field_path}", "kind": "member"}
            ]
        }
        if f.source:
            physical: dict[str, object] = {
                "artifactLocation": {"uri": "stdin" if f.source == "<stdin>" else f.source}
            }
            if f.line is not None:
                physical["region"] = {"startLine": f.line}
            location["physicalLocation"] = physical
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": rule_ids.index(f.rule),
                "level": _SARIF_LEVELS[f.severity],
                "message": {"text": f"{f.ref} {f.field_path}: {f.message}. Fix: {f.fix}."},
                "locations": [location],
                "properties": {"object": f.ref, "fieldPath": f.field_path, "fix": f.fix},
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "topospread",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/",
                        "rules": rules,
                    }
                },
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": not report.errors,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": error}}
                            for error in report.errors
                        ],
                    }
                ],
                "properties": {"kubernetesVersion": KUBERNETES_VERSION},
            }
        ],
    }


def _findings_html(report: AuditReport) -> str:
    rows = [
        (
            f'<tr class="finding-{f.severity.value}"><td>{escape(f.severity.value)}</td>'
            f"<td><code>{escape(f.rule)}</code></td>"
            f"<td><code>{escape(f.ref)}</code><br><code>{escape(f.field_path)}</code></td>"
            f"<td>{escape(f.message)}<br><strong>fix:</strong> {escape(f.fix)}</td></tr>\n"
        )
        for f in report.findings
    ]
    body = (
        '<table class="findings"><thead><tr><th scope="col">severity</th>'
        '<th scope="col">rule</th><th scope="col">object</th><th scope="col">finding</th>'
        "</tr></thead><tbody>\n" + "".join(rows) + "</tbody></table>\n"
        if rows
        else "<p>No findings.</p>\n"
    )
    return (
        '<section id="findings" aria-labelledby="findings-title">\n'
        f'<h2 id="findings-title">Findings: {escape(_summary_text(report.findings))}</h2>\n'
        + body
        + "</section>\n"
    )


_FINDINGS_CSS = (
    ".finding-error td:first-child { color: var(--bad); font-weight: bold; }\n"
    ".finding-warning td:first-child { color: var(--warn); }\n"
    ".findings td:nth-child(2) code { white-space: nowrap; }\n"
)


def _cluster_frame(report: AuditReport) -> Frame:
    def waiting(pod: str, workload: str, message: str) -> Waiting:
        namespace, _, name = pod.partition("/")
        return Waiting(namespace, name, workload, message)

    return Frame(
        anchor="cluster-now",
        heading="Cluster now",
        label="Now",
        tick="now",
        caption="The cluster now",
        layout=report.layout,
        spread=[
            SpreadRow(w.ref, w.source, c.report)
            for w in report.workloads
            for c in w.constraints
            if c.report is not None
        ],
        pending=[
            waiting(p.pod, w.ref, p.message) for w in report.workloads for p in w.pending_pods
        ],
        notes=report.notes,
    )


def audit_html(report: AuditReport, title: str = "cluster audit") -> str:
    """One self-contained page: the findings, then the cluster as it is now (its picture,
    each workload's constraints with their domain counts as bars, the Pending pods and
    kube-scheduler's message for each)."""
    frame = _cluster_frame(report)
    summary = _summary_text(report.findings)
    return page(
        tool="topospread audit",
        title=title,
        header=header(
            "topospread audit",
            title,
            f"{len(report.workloads)} workload(s); {summary}.",
            [
                ("kube-scheduler", report.kubernetes_version),
                ("Workloads", str(len(report.workloads))),
                ("Findings", str(len(report.findings))),
            ],
        ),
        nav=nav(
            "Contents",
            [("findings", f"Findings: {summary}", ""), (frame.anchor, frame.heading, "")],
        ),
        main=[_findings_html(report), frame_section(frame, None, Colours.of([frame]))],
        footer=f"topospread audit · kube-scheduler {report.kubernetes_version}",
        skip=("findings", "Skip to the findings"),
        css=_FINDINGS_CSS,
    )


def write_audit_html(report: AuditReport, path: Path) -> None:
    """Write :func:`audit_html` to ``path`` atomically."""
    write_html(audit_html(report), path)
