"""Text rendering of an :class:`~topospread.engine.explain.Explanation` for a person."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from topospread import KUBERNETES_VERSION
from topospread.engine.autoscale import NewNode, ScaleUp
from topospread.engine.explain import (
    Explanation,
    HardConstraintReport,
    NodeResult,
)
from topospread.framework.status import Code
from topospread.plugins import names
from topospread.plugins.podtopologyspread.common import Constraint

__all__ = ["render_explanation"]


def _describe(c: Constraint, action: str) -> str:
    parts = [
        f"topologyKey={c.topology_key}",
        f"maxSkew={c.max_skew}",
        f"whenUnsatisfiable={action}",
        f"selector={c.selector}",
    ]
    if action == "DoNotSchedule":
        parts.append(f"minDomains={c.min_domains}")
    parts += [
        f"nodeAffinityPolicy={c.node_affinity_policy.value}",
        f"nodeTaintsPolicy={c.node_taints_policy.value}",
    ]
    return " ".join(parts)


def _global_min_sentence(report: HardConstraintReport) -> str:
    c = report.constraint
    domains = len(report.domain_counts)
    if domains == 0 and c.min_domains <= 1:
        # minDomains was left unset: the domains are missing, not minDomains' doing.
        return "no eligible domain, so no node can host the pod"
    if report.min_forced_to_zero:
        if domains == 0:
            return f"no eligible domain < minDomains {c.min_domains}, so the global minimum is 0"
        return (
            f"{domains} eligible domain(s) < minDomains {c.min_domains}, so the global minimum is 0"
        )
    at_min = [d for d, n in report.domain_counts.items() if n == report.min_match_num]
    where = ", ".join(repr(d) if d == "" else d for d in at_min[:4])
    more = f" and {len(at_min) - 4} more" if len(at_min) > 4 else ""
    return (
        f"{domains} eligible domain(s) ≥ minDomains {c.min_domains}, so the global minimum "
        f"is {report.min_match_num} (the smallest count, in {where}{more})"
    )


def _render_hard(console: Console, explanation: Explanation) -> None:
    for number, report in enumerate(explanation.hard_constraints, 1):
        console.print(
            f"  [bold]hard #{number}[/bold] {_describe(report.constraint, 'DoNotSchedule')}"
        )
        table = Table(box=None, padding=(0, 2), show_edge=False)
        table.add_column(f"    {report.constraint.topology_key}")
        table.add_column("matching pods", justify="right")
        for domain, count in report.domain_counts.items():
            table.add_row(f"    {domain!r}" if domain == "" else f"    {domain}", str(count))
        if not report.domain_counts:
            table.add_row("    (no eligible domain)", "")
        console.print(table)
        console.print(f"    {_global_min_sentence(report)}")


def _render_soft(console: Console, explanation: Explanation) -> None:
    for number, report in enumerate(explanation.soft_constraints, 1):
        console.print(
            f"  [bold]soft #{number}[/bold] {_describe(report.constraint, 'ScheduleAnyway')}"
        )
        console.print(
            f"    weight ln({report.size} + 2) = {report.weight:.4f}"
            + ("  (hostname: counted per node)" if not report.domain_counts else "")
        )
        if report.domain_counts:
            table = Table(box=None, padding=(0, 2), show_edge=False)
            table.add_column(f"    {report.constraint.topology_key}")
            table.add_column("matching pods", justify="right")
            for domain, count in report.domain_counts.items():
                table.add_row(f"    {domain!r}" if domain == "" else f"    {domain}", str(count))
            console.print(table)
    if explanation.soft_ignored_nodes:
        console.print(
            "    nodes lacking a soft constraint's key score 0: "
            + ", ".join(explanation.soft_ignored_nodes)
        )


def _node_arithmetic(explanation: Explanation, node: NodeResult) -> list[str]:
    lines = []
    for number, report in enumerate(explanation.hard_constraints, 1):
        check = report.checks.get(node.name)
        if check is None:
            continue
        key = report.constraint.topology_key
        if check.topology_value is None:
            lines.append(f"hard #{number}: node has no label {key} → cannot host the pod")
            continue
        verdict = "≤" if check.skew <= report.constraint.max_skew else ">"
        ok = "ok" if verdict == "≤" else "violates maxSkew"
        eligible = (
            ""
            if check.topology_value in report.domain_counts
            else (" [not an eligible domain (node inclusion policies), so it counts 0]")
        )
        lines.append(
            f"hard #{number}: {key}={check.topology_value}: {check.match_num} matching "
            f"+ {check.self_match} self − {check.min_match_num} min = skew {check.skew} "
            f"{verdict} maxSkew {report.constraint.max_skew} ({ok}){eligible}"
        )
    return lines


_CODE_STYLE = {
    Code.SUCCESS: ("fits", "green"),
    Code.UNSCHEDULABLE: ("Unschedulable", "yellow"),
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: ("UnschedulableAndUnresolvable", "red"),
    Code.ERROR: ("Error", "red"),
}


def _render_nodes(console: Console, explanation: Explanation) -> None:
    console.print("\n[bold]Nodes[/bold]")
    for node in explanation.nodes:
        label, style = _CODE_STYLE.get(node.filter.code, (node.filter.code.label, "red"))
        line = Text("  ")
        line.append(node.name, style="bold")
        line.append("  ")
        line.append(("✓ " if node.filter.passed else "✗ ") + label, style=style)
        if not node.filter.passed:
            who = f"{node.filter.plugin}: " if node.filter.plugin else ""
            line.append(f"  {who}{'; '.join(node.filter.reasons)}")
        console.print(line)
        for plugin, verdict in node.verdicts.items():
            if not verdict.passed and plugin != node.filter.plugin:
                console.print(
                    f"      also rejected by {plugin} ({verdict.code.label}): "
                    f"{'; '.join(verdict.reasons)}  [dim](kube-scheduler stops at the first)[/dim]"
                )
        rejected_earlier = (
            not node.filter.passed and node.filter.plugin != names.POD_TOPOLOGY_SPREAD
        )
        for text in _node_arithmetic(explanation, node):
            suffix = (
                " [dim](not reached: rejected by an earlier filter)[/dim]"
                if rejected_earlier
                else ""
            )
            console.print(f"      {text}{suffix}")


def _render_scores(console: Console, explanation: Explanation) -> None:
    feasible = [n for n in explanation.nodes if n.total_score is not None]
    if not feasible:
        return
    plugins = [p for p in explanation.score_weights if any(p in n.scores for n in feasible)]
    console.print("\n[bold]Scores[/bold] (feasible nodes; normalized 0..100, then × weight)")
    table = Table(box=None, padding=(0, 2), show_edge=False)
    table.add_column("  node")
    if names.POD_TOPOLOGY_SPREAD in plugins:
        table.add_column("spread raw", justify="right")
    for plugin in plugins:
        table.add_column(f"{plugin} ×{explanation.score_weights[plugin]}", justify="right")
    table.add_column("total", justify="right")
    for node in feasible:
        row = [f"  {node.name}"]
        if names.POD_TOPOLOGY_SPREAD in plugins:
            row.append(str(node.raw_scores.get(names.POD_TOPOLOGY_SPREAD, "")))
        row += [str(node.scores[p]) if p in node.scores else "-" for p in plugins]
        row.append(str(node.total_score))
        table.add_row(*row)
    console.print(table)
    if not plugins:
        console.print("  (no score plugin had anything to score)")


def _no_eligible_domain(report: HardConstraintReport) -> str:
    """Why no node can host the pod, in the words of audit's no-eligible-nodes: a node
    without the key is UnschedulableAndUnresolvable, whatever minDomains says."""
    key = report.constraint.topology_key
    nodes = len(report.checks)
    labelled = sum(1 for check in report.checks.values() if check.topology_value is not None)
    if not labelled:
        return (
            f"no {key} domain is eligible: none of the {nodes} node(s) has the label {key}, "
            "so every node is UnschedulableAndUnresolvable for PodTopologySpread and the pod "
            f"cannot schedule; label the nodes with {key}, or spread on a key they carry"
        )
    others = f" and the other {nodes - labelled} lack it" if labelled < nodes else ""
    return (
        f"no {key} domain is eligible: the constraint's node inclusion policies leave out "
        f"the {labelled} node(s) with the label {key}{others}, so the pod cannot schedule; "
        "check nodeAffinityPolicy and nodeTaintsPolicy against the nodes' taints"
    )


def _hints(explanation: Explanation) -> list[str]:
    hints = []
    for number, report in enumerate(explanation.hard_constraints, 1):
        c = report.constraint
        if not report.domain_counts and report.checks:
            hints.append(f"hard #{number}: {_no_eligible_domain(report)}")
        elif report.min_forced_to_zero:
            hints.append(
                f"hard #{number}: only {len(report.domain_counts)} eligible domain(s) for "
                f"minDomains {c.min_domains}, so each domain takes at most maxSkew "
                f"({c.max_skew}) matching pods; add {c.topology_key} domains or lower minDomains"
            )
        elif any(check.topology_value is None for check in report.checks.values()):
            missing = sum(1 for check in report.checks.values() if check.topology_value is None)
            hints.append(
                f"hard #{number}: {missing} node(s) lack the label {c.topology_key} "
                "and can never host this pod"
            )
    return hints


def _render_preemption(console: Console, explanation: Explanation) -> None:
    report = explanation.preemption
    if report is None:
        return
    if report.nominated_node is None:
        console.print(
            "\n[bold]Preemption[/bold]: evicting lower-priority pods frees no node for this pod"
        )
        return
    console.print(
        f"\n[bold]Preemption[/bold]: nominated node {report.nominated_node}; "
        "the pod waits there for its victims to be evicted"
    )
    for node, victims in report.victims.items():
        mark = "  ← nominated" if node == report.nominated_node else ""
        console.print(f"  {node}  evict {', '.join(victims)}{mark}", markup=False)
    tied = [n for n in report.tied_nodes if n != report.nominated_node]
    if tied:
        console.print(
            f"  tied with {', '.join(tied)}: kube-scheduler picks one of the tied "
            "candidates at random; topospread shows the first"
        )


def render_explanation(explanation: Explanation, console: Console) -> None:
    """Print the explanation: constraints, per-node verdicts with arithmetic, scores, outcome."""
    pod = explanation.pod
    console.print(
        f"[bold]Pod {pod.key}[/bold]  profile {explanation.profile}  "
        f"(kube-scheduler {KUBERNETES_VERSION})"
    )
    hard, soft = explanation.hard_constraints, explanation.soft_constraints
    source = {
        "pod": "the pod's own constraints",
        "defaults": "cluster default constraints (the pod has none of its own)",
        "none": "no constraints",
    }[explanation.spread_source]
    console.print(
        f"\n[bold]Topology spread[/bold]: {len(hard)} hard, {len(soft)} soft, from {source}"
    )
    if not hard and not soft:
        console.print("  PodTopologySpread has nothing to check for this pod.")
    _render_hard(console, explanation)
    _render_soft(console, explanation)
    _render_nodes(console, explanation)
    _render_scores(console, explanation)
    console.print()
    if explanation.selected_node is not None:
        tied = [n for n in explanation.tied_nodes if n != explanation.selected_node]
        console.print(f"[bold green]Selected node: {explanation.selected_node}[/bold green]")
        if tied:
            console.print(
                f"  tied with {', '.join(tied)}: kube-scheduler takes the node its score "
                "heap pops over the feasible nodes in order (here, input order); with "
                "parallel Filter workers that order, and so its pick, varies"
            )
    elif explanation.message is not None:
        console.print("[bold red]Pending[/bold red]: " + explanation.message, markup=True)
        for hint in _hints(explanation):
            console.print(f"  hint: {hint}")
        _render_preemption(console, explanation)
    unimplemented = sorted({p for ps in explanation.unimplemented.values() for p in ps})
    if unimplemented:
        filters = sorted(
            {
                *explanation.unimplemented.get("pre_filter", ()),
                *explanation.unimplemented.get("filter", ()),
            }
        )
        scores = sorted(set(explanation.unimplemented.get("score", ())))
        console.print(
            "\nNot implemented in topospread yet, so not part of this answer:", style="dim"
        )
        if filters:
            console.print(
                f"  filters: {', '.join(filters)} (they have nothing to check for "
                "this pod: it uses no volumes and no resource claims)",
                style="dim",
            )
        if scores:
            console.print(
                f"  scores: {', '.join(scores)} (the totals and the selected node leave them out)",
                style="dim",
            )


def render_scale_up(scale_up: ScaleUp, console: Console) -> None:
    """Print what the autoscaler would add and where the pod lands then, beside today."""
    console.print(f"\n[bold]With node pools[/bold] ({scale_up.autoscaler})")
    if scale_up.chosen is None:
        console.print(f"  No scale-up: {scale_up.reason}")
        for option in scale_up.options:
            if not option.helps:
                console.print(f"  pool {option.pool}: {option.why}")
        return
    chosen = scale_up.chosen
    zones = ", ".join(f"{zone or '(no zone)'}: {count}" for zone, count in _zones(chosen.nodes))
    today = (
        "the pod fits no node"
        if scale_up.today.selected_node is None
        else f"the pod fits {scale_up.today.selected_node}; for the other pending pods"
    )
    console.print(
        f"  Today: {today}. {scale_up.autoscaler} adds {len(chosen.nodes)} "
        f"node(s) from pool {chosen.pool} ({zones}) for {chosen.pods} pending pod(s)"
        + (f", chosen by the {scale_up.expander} expander" if len(scale_up.options) > 1 else "")
    )
    for node in chosen.nodes:
        shape = f" {node.instance_type}" if node.instance_type else ""
        console.print(
            f"    + {node.name}{shape} in {node.zone or '(no zone)'}: {', '.join(node.pods)}"
        )
    for option in scale_up.options:
        if option is chosen:
            continue
        if option.helps:
            console.print(
                f"  pool {option.pool} would help too: {len(option.nodes)} node(s), "
                f"{option.pods} pod(s), waste {option.waste:.2f}"
                if option.waste is not None
                else f"  pool {option.pool} would help too"
            )
        else:
            console.print(f"  pool {option.pool} would not help: {option.why}")
    after = scale_up.after
    if after is not None:
        if after.selected_node is not None:
            console.print(
                f"  [bold green]After the scale-up, kube-scheduler places it on "
                f"{after.selected_node}[/bold green]"
            )
        else:
            console.print(f"  [bold red]Even after the scale-up: {after.message}[/bold red]")


def _zones(nodes: Sequence[NewNode]) -> list[tuple[str | None, int]]:
    counts: dict[str | None, int] = {}
    for node in nodes:
        counts[node.zone] = counts.get(node.zone, 0) + 1
    return list(counts.items())
