"""The terminal view of a simulation: per step, zones → nodes → pods, skew tables, pending pods.

Small clusters get the picture of the Kubernetes docs' diagrams (a column per node,
grouped by zone, a row per pod); larger ones a zone summary. Colours (when the terminal
supports them) tell ReplicaSets / revisions apart. Only reads the result model.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from topospread.engine.sim.result import (
    ConstraintReport,
    NodeLayout,
    SimulationResult,
    StepResult,
)
from topospread.engine.sim.sweep import SweepReport

__all__ = ["MAX_NODES_PICTURED", "render_simulation"]

MAX_NODES_PICTURED = 12
"""Above this many nodes, zones are summarised instead of drawn node by node."""
_MAX_PODS_PER_CELL = 6
_PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan", "bright_magenta")


def render_simulation(result: SimulationResult, console: Console) -> None:
    """Print every step of ``result``."""
    console.print(
        Text.assemble(
            ("Scenario ", "bold"),
            (result.scenario, "bold"),
            f"  seed {result.seed}  (kube-scheduler {result.kubernetes_version})",
        )
    )
    if result.description:
        console.print(Text(result.description))
    colours: dict[str, str] = {}
    for step in result.steps:
        console.print()
        _render_step(step, console, colours)


def _colour(group: str, colours: dict[str, str]) -> str:
    if group not in colours:
        colours[group] = _PALETTE[len(colours) % len(_PALETTE)]
    return colours[group]


def _render_step(step: StepResult, console: Console, colours: dict[str, str]) -> None:
    label = "Initial cluster" if step.index < 0 else f"Step {step.index + 1}: {step.title}"
    when = f"t={step.started}s" + (f" → {step.settled}s" if step.settled != step.started else "")
    console.rule(Text.assemble((label, "bold"), f"  ({step.kind}, {when})"), align="left")
    counts = Counter(e.kind for e in step.events)
    summary = [
        f"{counts[kind]} {word}"
        for kind, word in (
            ("created", "created"),
            ("scheduled", "scheduled"),
            ("deleted", "deleted"),
            ("evicted", "evicted"),
            ("preempted", "preempted"),
            ("node", "node change(s)"),
        )
        if counts[kind]
    ]
    summary.append(f"{step.scheduling_attempts} scheduling attempt(s)")
    summary.append(f"{len(step.pending)} pending")
    console.print(Text("  " + ", ".join(summary)))
    _pools(step, console)
    if len(step.layout) <= MAX_NODES_PICTURED * 4:
        _picture(step.layout, console, colours)
    else:
        _zone_summary(step.layout, console)
    _legend(step.layout, console, colours)
    _spread(step, console)
    _pending(step, console)
    for note in step.notes:
        console.print(Text(f"  note: {note}", style="yellow"))


def _pools(step: StepResult, console: Console) -> None:
    # Scenarios with an autoscaler: its decisions, then every pool's size once settled.
    for event in step.events:
        if event.kind == "autoscaler":
            console.print(
                Text.assemble(("  autoscaler ", "bold"), f"t={event.time}s: {event.detail}")
            )
    if not step.pools:
        return
    sizes = []
    for pool in step.pools:
        text = f"{pool.pool} {pool.nodes}"
        if pool.upcoming:
            text += f" (+{pool.upcoming} provisioning)"
        bound = "∞" if pool.max_size is None else str(pool.max_size)
        sizes.append(f"{text} [{pool.min_size}..{bound}]")
    console.print(Text("  node pools: " + ", ".join(sizes)))


def _node_state(node: NodeLayout) -> Text:
    text = Text()
    if node.unschedulable:
        text.append(" cordoned", style="yellow")
    if any(t.endswith((":NoExecute", ":NoSchedule")) for t in node.taints):
        text.append(" tainted", style="red")
    return text


def _letter(group: str, colours: dict[str, str]) -> tuple[str, str]:
    # Each ReplicaSet / revision gets a letter (readable without colour) and a colour.
    colour = _colour(group, colours)
    index = list(colours).index(group)
    return chr(ord("A") + index % 26), colour


def _picture(nodes: Sequence[NodeLayout], console: Console, colours: dict[str, str]) -> None:
    # Zones as columns, a line per node, a letter per pod (the docs' "P" diagrams).
    if not nodes:
        console.print("  (no nodes)")
        return
    zones: dict[str, list[NodeLayout]] = {}
    for node in nodes:
        zones.setdefault(node.zone, []).append(node)
    table = Table(padding=(0, 1), show_edge=True)
    cells: list[Text] = []
    for zone, members in zones.items():
        pods = sum(len(n.pods) for n in members)
        table.add_column(Text(f"{zone or '(no zone)'}  {pods} pod(s)", style="bold"), no_wrap=True)
        cell = Text()
        for i, node in enumerate(members):
            if i:
                cell.append("\n")
            cell.append(node.name)
            cell.append_text(_node_state(node))
            cell.append(" ")
            for pod in node.pods[:_MAX_PODS_PER_CELL]:
                letter, colour = _letter(pod.group or pod.name, colours)
                cell.append(letter, style=f"bold {colour}")
            if len(node.pods) > _MAX_PODS_PER_CELL:
                cell.append(f"+{len(node.pods) - _MAX_PODS_PER_CELL}", style="dim")
        cells.append(cell)
    table.add_row(*cells)
    console.print(table)


def _zone_summary(nodes: Sequence[NodeLayout], console: Console) -> None:
    table = Table(title=None, padding=(0, 1))
    table.add_column("zone")
    table.add_column("nodes", justify="right")
    table.add_column("cordoned/tainted", justify="right")
    table.add_column("pods", justify="right")
    table.add_column("pods per node (min–max)", justify="right")
    zones: dict[str, list[NodeLayout]] = {}
    for node in nodes:
        zones.setdefault(node.zone, []).append(node)
    for zone, members in zones.items():
        per_node = [len(n.pods) for n in members]
        impaired = sum(1 for n in members if n.unschedulable or n.taints)
        table.add_row(
            zone or "(no zone)",
            str(len(members)),
            str(impaired),
            str(sum(per_node)),
            f"{min(per_node)}–{max(per_node)}",
        )
    console.print(table)


def _legend(nodes: Sequence[NodeLayout], console: Console, colours: dict[str, str]) -> None:
    groups: dict[str, str] = {}
    for node in nodes:
        for pod in node.pods:
            groups.setdefault(pod.group or pod.name, pod.workload)
    if not groups or len(groups) > 8:
        return
    text = Text("  ")
    for i, (group, workload) in enumerate(groups.items()):
        letter, colour = _letter(group, colours)
        if i:
            text.append("   ")
        text.append(letter, style=f"bold {colour}")
        text.append(f" = {group}")
        if workload and not workload.endswith("/" + group):
            text.append(f" ({workload})", style="dim")
    console.print(text)


_SHORT_KEYS = {
    "topology.kubernetes.io/zone": "zone",
    "kubernetes.io/hostname": "hostname",
    "topology.kubernetes.io/region": "region",
}


def _status(c: ConstraintReport) -> Text:
    # Without any eligible domain a hard constraint is not "ok": every node is
    # UnschedulableAndUnresolvable for it, for lack of the key (audit's no-eligible-nodes).
    if c.no_eligible_domains:
        if c.when_unsatisfiable == "DoNotSchedule":
            return Text("pods cannot schedule", style="red")
        return Text("spreads nothing", style="yellow")
    return Text("ok", style="green") if c.satisfied else Text("over maxSkew", style="red")


def _spread(step: StepResult, console: Console) -> None:
    rows = [(w, c) for w in step.spread for c in w.constraints]
    if not rows:
        return
    table = Table(padding=(0, 1), title_justify="left")
    table.add_column("workload", no_wrap=True)
    table.add_column("constraint", no_wrap=True)
    table.add_column("domain counts")
    table.add_column("min", justify="right")
    table.add_column("skew", justify="right")
    table.add_column("maxSkew", justify="right")
    table.add_column("", no_wrap=True)
    for workload, c in rows:
        mode = "hard" if c.when_unsatisfiable == "DoNotSchedule" else "soft"
        counts = ", ".join(f"{k}={v}" for k, v in c.domain_counts.items())
        if len(counts) > 40:
            values = list(c.domain_counts.values())
            counts = f"{len(values)} domains, {min(values)}..{max(values)} pods"
        status = _status(c)
        if c.min_domains_shortfall:
            status.append(f", {c.min_domains_shortfall} domain(s) short of minDomains", "yellow")
        table.add_row(
            workload.workload.split("/", 1)[1],
            f"{mode} {_SHORT_KEYS.get(c.topology_key, c.topology_key)}",
            counts or "(no eligible domains)",
            str(c.global_min),
            str(c.skew),
            str(c.max_skew),
            status,
        )
    console.print(table)


def _pending(step: StepResult, console: Console) -> None:
    if not step.pending:
        return
    shown = step.pending[:10]
    for pod in shown:
        console.print(
            Text.assemble(
                ("  Pending ", "bold red"), f"{pod.namespace}/{pod.name}: ", (pod.message, "dim")
            )
        )
    if len(step.pending) > len(shown):
        console.print(Text(f"  ... and {len(step.pending) - len(shown)} more pending pod(s)"))


def render_sweep(report: SweepReport, console: Console) -> None:
    """``simulate --runs N``: per step, each metric's distribution; then the worst run."""
    console.print(
        f"[bold]Scenario {report.scenario}[/bold]: {report.runs} runs, seeds "
        f"{report.seed}..{report.seed + report.runs - 1} (random tie-breaks)"
    )
    for step in report.steps:
        table = Table(title=step.title, title_justify="left", show_edge=False)
        for column in ("metric", "min", "median", "mean [95% CI]", "max", "histogram"):
            table.add_column(column)
        rows = [("pods Pending", step.pending), ("evictions", step.evictions),
                ("seconds to settle", step.recover_seconds)]  # fmt: skip
        rows += [(f"skew {key}", d) for key, d in step.skew.items()]
        rows += [(f"nodes {key}", d) for key, d in step.pools.items()]
        for label, d in rows:
            low, high = d.interval
            values = d.values or (0,)
            histogram = " ".join(f"{v}×{n}" for v, n in d.histogram().items())
            table.add_row(
                label,
                str(min(values)),
                f"{statistics.median(values):g}",
                f"{d.mean:.2f} [{low:.2f}, {high:.2f}]",
                str(max(values)),
                histogram,
            )
        console.print(table)
    console.print(
        f"\n[bold]The worst run[/bold] (seed {report.worst.seed}: most pods Pending, then "
        "the largest skew), step by step:\n"
    )
    render_simulation(report.worst_result, console)
