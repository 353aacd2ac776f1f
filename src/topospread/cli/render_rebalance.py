"""Text and HTML views of a rebalance plan. Only reads the plan's model
(:class:`~topospread.engine.rebalance.RebalancePlan`): the HTML page is built from it
with the report pages' shared skeleton, CSS and cluster pictures."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rich.console import Console

from topospread.cli.render_html import (
    Colours,
    Frame,
    SpreadRow,
    Waiting,
    frame_section,
    header,
    nav,
    page,
    skew_section,
)
from topospread.engine.audit import AuditReport
from topospread.engine.rebalance import Eviction, RebalancePlan

__all__ = ["rebalance_html", "render_plan"]

_SHORT_KEYS = {
    "topology.kubernetes.io/zone": "zone",
    "kubernetes.io/hostname": "hostname",
    "topology.kubernetes.io/region": "region",
}


def _short(key: str) -> str:
    return _SHORT_KEYS.get(key, key)


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _constraint_lines(report: AuditReport, workloads: Sequence[str]) -> list[str]:
    lines = []
    for w in report.workloads:
        if w.ref not in workloads:
            continue
        for c in w.constraints:
            if c.report is None:
                continue
            r = c.report
            counts = " ".join(f"{d}={n}" for d, n in r.domain_counts.items())
            verdict = "ok" if r.satisfied else "OVER"
            lines.append(
                f"  {w.ref} {_short(r.topology_key)} ({r.when_unsatisfiable}) "
                f"skew {r.skew}/maxSkew {r.max_skew} {verdict}: {counts}"
            )
    return lines


def render_plan(plan: RebalancePlan, console: Console) -> None:
    """The plan as text: targets before, each eviction, the state after, the verdict."""
    out = console.print
    if not plan.targets:
        out(
            "Nothing to rebalance: every workload in scope is within maxSkew on the "
            "constraints considered (DoNotSchedule; --include-soft adds ScheduleAnyway)."
        )
        return
    out("Over maxSkew now:")
    for line in _constraint_lines(plan.before, plan.targets):
        out(line, markup=False)
    steps = plan.evictions or plan.best_effort
    if steps:
        out("")
        out(
            "Evictions:"
            if plan.evictions
            else "Steps found before the search stopped (not a plan; nothing would be evicted):"
        )
    for e in steps:
        where = ", ".join(f"{_short(k)}={v}" for k, v in e.domains.items())
        tied = (
            f" — tied with {', '.join(n for n in e.tied_nodes if n != e.expected_node)}"
            f"{'' if e.certain else ' (outcome differs; planned for the worst)'}"
            if len(e.tied_nodes) > 1
            else ""
        )
        skews = ", ".join(f"{_short(s.topology_key)} {s.before}→{s.after}" for s in e.skew)
        out(
            f"  {e.step}. [batch {e.batch}] evict {e.pod} from {e.node} ({where}); "
            f"replacement → {e.expected_node}{tied}; skew {skews}",
            markup=False,
        )
    out("")
    if plan.converged:
        out("After (simulated):")
        for line in _constraint_lines(plan.after, plan.targets):
            out(line, markup=False)
        proof = (
            " (proven minimal: the lower bound is as many)"
            if plan.proven_minimal
            else f" (lower bound {plan.lower_bound})"
        )
        out(
            f"Balanced with {len(plan.evictions)} eviction(s) in {plan.batches} batch(es)"
            + proof
            + "."
        )
    else:
        out(f"Cannot reach balance: {plan.reason}", markup=False)
        out("Nothing would be evicted.")
    for p in plan.protected:
        out(f"  protected: {p}", markup=False)


# -- HTML -----------------------------------------------------------------------------------


def _verdict(plan: RebalancePlan) -> str:
    if plan.converged:
        return (
            f"Balanced with {len(plan.evictions)} eviction(s) in {plan.batches} batch(es) "
            f"(lower bound {plan.lower_bound})."
        )
    return f"Cannot reach balance: {plan.reason} Nothing would be evicted."


def _frame(
    report: AuditReport,
    anchor: str,
    heading: str,
    label: str,
    placed: frozenset[str] = frozenset(),
) -> Frame:
    return Frame(
        anchor=anchor,
        heading=heading,
        label=label,
        tick=label.lower(),
        caption=f"The cluster {heading[0].lower()}{heading[1:]}",
        layout=report.layout,
        spread=[
            SpreadRow(w.ref, w.source, c.report)
            for w in report.workloads
            for c in w.constraints
            if c.report is not None
        ],
        pending=[
            _waiting(p.pod, w.ref, p.message) for w in report.workloads for p in w.pending_pods
        ],
        placed=placed,
        placed_words="the replacement of an evicted pod (simulated)",
        notes=report.notes if anchor == "before" else (),
    )


def _waiting(pod: str, workload: str, message: str) -> Waiting:
    namespace, _, name = pod.partition("/")
    return Waiting(namespace, name, workload, message)


def _replacements(evictions: Sequence[Eviction]) -> frozenset[str]:
    # The replacements' namespace/name, as the picture names pods.
    return frozenset(
        f"{e.pod.split('/', 1)[0]}/{e.replacement}" for e in evictions if e.replacement
    )


def _evictions_section(plan: RebalancePlan, verdict: str) -> str:
    steps = plan.evictions or plan.best_effort
    rows = "".join(
        f'<tr><td class="num">{e.step}</td><td class="num">{e.batch}</td>'
        f"<td><code>{_e(e.pod)}</code></td><td>{_e(e.node)}</td>"
        f"<td>{_e(e.expected_node)}</td><td>{_e(', '.join(e.tied_nodes))}</td>"
        f"<td>{_e(', '.join(f'{_short(x.topology_key)} {x.before}→{x.after}' for x in e.skew))}"
        "</td></tr>\n"
        for e in steps
    )
    if not plan.targets:
        intro = (
            "Nothing to rebalance: every workload in scope is within maxSkew on the "
            "constraints considered."
        )
    elif plan.evictions:
        intro = f"{len(plan.evictions)} eviction(s), in order:"
    elif steps:
        intro = "Steps found before the search stopped (not a plan; nothing would be evicted):"
    else:
        intro = "No eviction helps."
    table = (
        '<table class="evictions"><thead><tr><th scope="col">#</th><th scope="col">batch</th>'
        '<th scope="col">evict</th><th scope="col">from node</th>'
        '<th scope="col">replacement lands on</th><th scope="col">tied nodes</th>'
        '<th scope="col">skew</th></tr></thead><tbody>\n' + rows + "</tbody></table>\n"
        if rows
        else ""
    )
    return (
        '<section id="plan" aria-labelledby="plan-title">\n'
        '<h2 id="plan-title">Evictions</h2>\n'
        f'<p class="{"ok" if plan.converged else "bad"}">{_e(verdict)}</p>\n'
        f"<p>{_e(intro)}</p>\n"
        + table
        + "".join(f'<p class="note">protected: {_e(p)}</p>\n' for p in plan.protected)
        + "".join(f'<p class="note">note: {_e(n)}</p>\n' for n in plan.notes)
        + "</section>\n"
    )


def rebalance_html(plan: RebalancePlan) -> str:
    """One self-contained page: the verdict and the evictions, each constraint's skew
    before and after them, and the cluster's picture and spread before and after
    (simulated; replacements outlined)."""
    verdict = _verdict(plan)
    before = _frame(plan.before, "before", "Before the evictions", "Before")
    after = _frame(
        plan.after,
        "after",
        "After the evictions (simulated)"
        if plan.converged
        else "After the steps found, were they taken (simulated; nothing would be evicted)",
        "After",
        _replacements(plan.evictions or plan.best_effort),
    )
    frames = [before, after] if plan.targets else [before]
    colours = Colours.of(frames)
    version = plan.before.kubernetes_version
    skew = (
        [
            skew_section(
                frames,
                "Skew before and after",
                "Per constraint over maxSkew now: skew (max count − global minimum) before "
                "the evictions and after them (simulated), against maxSkew (dashed). Points "
                "over maxSkew are red squares; each point links to its picture.",
                axis="",
            )
        ]
        if plan.targets
        else []
    )
    return page(
        tool="topospread rebalance",
        title="Rebalance plan",
        header=header(
            "topospread rebalance",
            "Rebalance plan",
            verdict,
            [
                ("kube-scheduler", version),
                ("Evictions", str(len(plan.evictions))),
                ("Batches", str(plan.batches)),
                ("Lower bound", str(plan.lower_bound)),
            ],
        ),
        nav=nav(
            "Contents",
            [("plan", "Evictions", "")]
            + ([("skew", "Skew before and after", "")] if skew else [])
            + [(f.anchor, f.heading, "") for f in frames],
        ),
        main=[
            _evictions_section(plan, verdict),
            *skew,
            *(
                frame_section(frame, frames[n - 1] if n else None, colours)
                for n, frame in enumerate(frames)
            ),
        ],
        footer=f"topospread rebalance · kube-scheduler {version} · a dry run: nothing evicted",
        skip=("plan", "Skip to the evictions"),
    )
