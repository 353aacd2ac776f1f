"""The HTML report of a simulation: one self-contained page with SVG pictures and a skew chart.

The page opens offline: CSS and a small script are inline, there are no fonts, images or
links to fetch (a Content-Security-Policy forbids any), and SVG is inline HTML. It shows a
header (scenario, seed, kube-scheduler version), a chart of each spread constraint's skew
over the steps with maxSkew as a threshold line, then per step: a picture of the cluster
(zones → nodes → pods, a colour and a letter per ReplicaSet or revision, pending pods apart,
cordoned, tainted and removed nodes marked), the spread table, placements, pending pods
with kube-scheduler's FailedScheduling message, and the step's events. Without JavaScript
every step is on the page and the step list is anchors; the script only adds paging.

Only reads the engine's result model (and, when given, the scenario for each step's action).
Standard library only: markup is built as strings, every piece of text goes through
:func:`html.escape`.

The other reports are built from their own models with the same parts: :func:`page` (the
skeleton, CSS and, for stepped pages, the script), :func:`header`, :func:`nav`,
:func:`skew_section` and :func:`frame_section` over :class:`Frame` (one picture of the
cluster with its spread and Pending pods): ``audit --html`` in
:mod:`topospread.cli.render_audit`, ``rebalance --html`` in
:mod:`topospread.cli.render_rebalance`.
"""

from __future__ import annotations

import math
import os
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from pathlib import Path

from topospread.engine.sim.result import (
    ConstraintReport,
    NodeLayout,
    SimulationResult,
    StepResult,
)
from topospread.engine.sim.scenario import Scenario, describe_action
from topospread.engine.sim.sweep import SweepReport

__all__ = [
    "Colours",
    "Frame",
    "SpreadRow",
    "Waiting",
    "frame_section",
    "header",
    "html_target_problem",
    "nav",
    "page",
    "render_html",
    "render_sweep_html",
    "skew_section",
    "write_html",
]

_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
"""Okabe–Ito colours (told apart with colour-blindness); each pod also carries a letter."""
_PENDING_COLOUR = "#8a8a8a"
_OVER = "#C0392B"
_LINE = "#0072B2"
_FAILED_TAINTS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
_SHORT_KEYS = {
    "topology.kubernetes.io/zone": "zone",
    "kubernetes.io/hostname": "hostname",
    "topology.kubernetes.io/region": "region",
}
_MAX_OPEN_ROWS = 20
"""Placement tables longer than this start collapsed."""
_MAX_DOMAIN_BARS = 16
"""Above this many domains a constraint's counts are summarised instead of drawn as bars."""


def render_html(result: SimulationResult, scenario: Scenario | None = None) -> str:
    """The whole report as one HTML document (text)."""
    return _simulation_page(result, scenario)


def _simulation_page(
    result: SimulationResult, scenario: Scenario | None, lead: Sequence[str] = ()
) -> str:
    # ``lead``: sections before the skew chart (the distributions of simulate --runs).
    actions = (
        {s.index: describe_action(s.kind, s.action) for s in scenario.steps} if scenario else {}
    )
    ids = [_step_id(i) for i in range(len(result.steps))]
    frames = [_step_frame(step, anchor) for step, anchor in zip(result.steps, ids, strict=True)]
    colours = Colours.of(frames)
    steps = [
        _step_section(step, frames, position, colours, actions)
        for position, step in enumerate(result.steps)
    ]
    return page(
        tool="topospread simulate",
        title=result.scenario,
        header=header(
            "topospread simulate",
            result.scenario,
            result.description,
            [
                ("Seed", str(result.seed)),
                ("kube-scheduler", result.kubernetes_version),
                ("Steps", str(max(len(result.steps) - 1, 0))),
            ],
        ),
        nav=nav("Steps", [("skew", "Skew over time", "")] + [_nav_entry(f) for f in frames]),
        main=[
            *lead,
            skew_section(frames, "Skew over time", _SIMULATE_SKEW_HINT, axis="step"),
            '<div id="pager" class="pager" hidden></div>\n',
            '<div id="steps">\n',
            *steps,
            "</div>\n",
        ],
        footer=f"topospread simulate · kube-scheduler {result.kubernetes_version} · "
        f"seed {result.seed}",
        skip=("steps", "Skip to the steps"),
        pager=True,
    )


_SIMULATE_SKEW_HINT = (
    "Per constraint: skew (max count − global minimum) after each step, against maxSkew "
    "(dashed). Points over maxSkew are red squares; each point links to its step."
)


def page(
    *,
    tool: str,
    title: str,
    header: str,
    nav: str,
    main: Sequence[str],
    footer: str,
    skip: tuple[str, str],
    pager: bool = False,
    css: str = "",
) -> str:
    """The page skeleton every report shares: offline (a Content-Security-Policy forbids
    fetching anything; CSS inline), the ``header``, the ``nav``, ``main``'s sections in
    ``<main id="main">``, the ``footer`` line; ``skip`` is the skip link's target id and
    text. ``pager`` adds the script that pages through ``section.step`` elements; ``css``
    joins the shared CSS."""
    script = f"<script>{_SCRIPT}</script>\n" if pager else ""
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
            f"<title>{_e(title)} — {_e(tool)}</title>\n",
            f"<style>{_CSS}{css}</style>\n</head>\n<body>\n",
            f'<a class="skip" href="#{_e(skip[0])}">{_e(skip[1])}</a>\n',
            header,
            nav,
            '<main id="main">\n',
            *main,
            "</main>\n",
            f"<footer><p>{_e(footer)}</p></footer>\n",
            script,
            "</body>\n</html>\n",
        ]
    )


def html_target_problem(path: Path) -> str | None:
    """Why ``path`` cannot take the report, checked before any long work; None if it can.

    The report is written beside the target and renamed over it, so the target's folder
    must exist and be writable; the target must not be a folder. A symbolic link is
    written through: its target gets the report and the link stays.
    """
    target = _through_links(path)
    if target.is_dir():
        return "is a directory"
    folder = target.parent
    if not folder.exists():
        return f"no such directory: {folder}"
    if not folder.is_dir():
        return f"not a directory: {folder}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in {folder}: permission denied"
    return None


def _through_links(path: Path) -> Path:
    # Follow a symbolic link (chains too) to the file it names, even a dangling one.
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextmanager
def _signals_unwind() -> Iterator[None]:
    # SIGTERM and SIGHUP end the process without running cleanups; while the temporary
    # file exists they raise SystemExit instead, so it is removed. (SIGKILL cannot be.)
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def write_html(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file beside it, then a rename.

    A symbolic link is written through (the file it names is replaced, the link kept). On
    any error or interruption the temporary file is removed and the target is left as
    it was.
    """
    target = _through_links(path)
    with _signals_unwind():
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - removed on every path below
            "w",
            encoding="utf-8",
            dir=target.parent,
            prefix=f".{target.name[:100]}.",
            suffix=".tmp",
            delete=False,
        )
        temporary = Path(handle.name)
        try:
            with handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            umask = os.umask(0)
            os.umask(umask)
            temporary.chmod(0o666 & ~umask)
            temporary.replace(target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _step_id(position: int) -> str:
    return "step-initial" if position == 0 else f"step-{position}"


def _step_label(step: StepResult) -> str:
    return "Initial cluster" if step.index < 0 else f"Step {step.index + 1}"


def _step_heading(step: StepResult) -> str:
    return "Initial cluster" if step.index < 0 else f"Step {step.index + 1}: {step.title}"


# --- frames: the pictures of the cluster a page shows --------------------------------


@dataclass(frozen=True)
class Waiting:
    """A Pending pod as a picture and a list show it."""

    namespace: str
    name: str
    workload: str
    message: str
    attempts: int | None = None
    """Scheduling attempts (a simulation counts them; a read cluster does not)."""


@dataclass(frozen=True)
class SpreadRow:
    """One counted constraint of one workload, a row of the spread table."""

    workload: str
    """``Kind/namespace/name``."""
    template: str
    """Where its constraints come from (the pod template's own, defaults)."""
    constraint: ConstraintReport


@dataclass(frozen=True)
class Frame:
    """One picture of the cluster on a page, with its spread and its Pending pods: a
    simulation's step, the audited cluster, a rebalance plan's before or after."""

    anchor: str
    heading: str
    """The section's heading (and the navigation's entry)."""
    label: str
    """Short, for chart descriptions: ``Step 3``, ``Before``."""
    tick: str
    """The chart's x-axis label."""
    caption: str
    """What the picture shows, before its counts: ``Cluster after Step 3: ...``."""
    layout: Sequence[NodeLayout]
    spread: Sequence[SpreadRow]
    pending: Sequence[Waiting] = ()
    placed: frozenset[str] = frozenset()
    """``namespace/name`` of pods outlined as new in this picture."""
    placed_words: str = "placed in this step"
    notes: Sequence[str] = ()


def _step_frame(step: StepResult, anchor: str) -> Frame:
    heading = _step_heading(step)
    return Frame(
        anchor=anchor,
        heading=heading,
        label=_step_label(step),
        tick="init" if step.index < 0 else str(step.index + 1),
        caption=f"Cluster after {heading}",
        layout=step.layout,
        spread=[SpreadRow(w.workload, w.template, c) for w in step.spread for c in w.constraints],
        pending=[
            Waiting(p.namespace, p.name, p.workload, p.message, p.attempts) for p in step.pending
        ],
        placed=frozenset(e.pod for e in step.placements),
        notes=step.notes,
    )


# --- colours -------------------------------------------------------------------------


@dataclass
class Colours:
    """A colour and a letter per pod group, in order of first appearance (as the text view)."""

    groups: dict[str, int]
    workload_groups: dict[str, str]
    """Workload -> its last seen group (what a pending pod of it most likely belongs to)."""

    @classmethod
    def of(cls, frames: Sequence[Frame]) -> Colours:
        groups: dict[str, int] = {}
        latest: dict[str, str] = {}
        for frame in frames:
            for node in frame.layout:
                for pod in node.pods:
                    group = pod.group or pod.name
                    groups.setdefault(group, len(groups))
                    if pod.workload:
                        latest[pod.workload] = group
        return cls(groups, latest)

    def fill(self, group: str) -> str:
        return (
            _PALETTE[self.groups[group] % len(_PALETTE)]
            if group in self.groups
            else (_PENDING_COLOUR)
        )

    def letter(self, group: str) -> str:
        return chr(ord("A") + self.groups[group] % 26) if group in self.groups else "?"

    def ink(self, group: str) -> str:
        """Black or white, whichever reads better on the group's fill."""
        return _ink(self.fill(group))

    def pending_group(self, pod: Waiting) -> str:
        """The group a pending pod is drawn as: its ReplicaSet by name, else its workload's."""
        prefix = pod.name.rsplit("-", 1)[0]
        if prefix in self.groups:
            return prefix
        return self.workload_groups.get(pod.workload, "")


def _ink(fill: str) -> str:
    r, g, b = (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return "#000" if luminance > 0.22 else "#fff"


# --- header, navigation --------------------------------------------------------------


def header(tool: str, title: str, description: str, facts: Sequence[tuple[str, str]]) -> str:
    """The page's header: the command, the title, a description, facts as a list."""
    described = f'<p class="description">{_e(description)}</p>\n' if description else ""
    return (
        "<header>\n"
        f'<p class="tool">{_e(tool)}</p>\n<h1>{_e(title)}</h1>\n'
        f"{described}"
        '<dl class="facts">'
        + "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in facts)
        + "</dl>\n</header>\n"
    )


def nav(title: str, entries: Sequence[tuple[str, str, str]]) -> str:
    """The table of contents: ``(anchor, text, badge markup)`` per entry."""
    items = [f'<li><a href="#{a}">{_e(text)}</a>{badge}</li>' for a, text, badge in entries]
    return (
        f'<nav class="toc" aria-label="{_e(title)}">\n<h2>{_e(title)}</h2>\n<ul>\n'
        + "\n".join(items)
        + "\n</ul>\n</nav>\n"
    )


def _nav_entry(frame: Frame) -> tuple[str, str, str]:
    badge = ""
    if frame.pending:
        badge = f' <span class="badge pending">{len(frame.pending)} pending</span>'
    elif any(not r.constraint.satisfied for r in frame.spread):
        badge = ' <span class="badge over">over maxSkew</span>'
    return frame.anchor, frame.heading, badge


# --- skew over time ------------------------------------------------------------------


@dataclass
class _Series:
    """One constraint of one workload across the steps (``None`` where it does not exist)."""

    workload: str
    constraint: ConstraintReport
    points: list[ConstraintReport | None]


def _series(frames: Sequence[Frame]) -> list[_Series]:
    found: dict[tuple[str, str, str, int], _Series] = {}
    for position, frame in enumerate(frames):
        seen: Counter[tuple[str, str, str]] = Counter()
        for row in frame.spread:
            c = row.constraint
            occurrence = seen[(row.workload, c.topology_key, c.when_unsatisfiable)]
            seen[(row.workload, c.topology_key, c.when_unsatisfiable)] += 1
            key = (row.workload, c.topology_key, c.when_unsatisfiable, occurrence)
            if key not in found:
                found[key] = _Series(row.workload, c, [None] * len(frames))
            found[key].points[position] = c
    return list(found.values())


def _constraint_name(c: ConstraintReport) -> str:
    mode = "hard" if c.when_unsatisfiable == "DoNotSchedule" else "soft"
    return f"{mode} {_SHORT_KEYS.get(c.topology_key, c.topology_key)}"


def _workload_name(workload: str) -> str:
    # "Deployment/default/web" -> "Deployment web" (namespace shown when not default)
    kind, _, rest = workload.partition("/")
    namespace, _, name = rest.partition("/")
    if not name:
        return workload
    return f"{kind} {name}" if namespace == "default" else f"{kind} {namespace}/{name}"


def skew_section(frames: Sequence[Frame], heading: str, hint: str, *, axis: str) -> str:
    """``<section id="skew">``: a chart per constraint of its skew across ``frames``, each
    point linking to its frame; ``axis`` names the x axis."""
    series = _series(frames)
    if not series:
        body = "<p>No workload has spread constraints.</p>\n"
    else:
        body = (
            '<div class="charts">\n'
            + "".join(_skew_chart(s, frames, n, heading, axis) for n, s in enumerate(series))
            + "</div>\n"
        )
    return (
        '<section id="skew" class="skew" aria-labelledby="skew-title">\n'
        f'<h2 id="skew-title">{_e(heading)}</h2>\n'
        f'<p class="hint">{_e(hint)}</p>\n' + body + "</section>\n"
    )


def _skew_chart(
    series: _Series, frames: Sequence[Frame], number: int, heading: str, axis: str
) -> str:
    width, height = 520, 210
    left, right, top, bottom = 44, 16, 34, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [p.skew for p in series.points if p] + [p.max_skew for p in series.points if p]
    y_max = max(max(values, default=1) + 1, 2)
    count = len(frames)

    def x(i: int) -> float:
        return left + (plot_w / 2 if count == 1 else plot_w * i / (count - 1))

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / y_max

    c = series.constraint
    title = f"{_workload_name(series.workload)}: {_constraint_name(c)} ({c.topology_key})"
    described = "; ".join(
        f"{frame.label} skew {p.skew} (maxSkew {p.max_skew})" if p else f"{frame.label} no pods"
        for frame, p in zip(frames, series.points, strict=True)
    )
    out = [
        f'<figure class="chart"><svg class="skew-chart" role="img" viewBox="0 0 {width} {height}"'
        f' aria-labelledby="chart-{number}-t chart-{number}-d">'
        f'<title id="chart-{number}-t">{_e(heading)} — {_e(title)}</title>'
        f'<desc id="chart-{number}-d">{_e(described)}</desc>'
        f'<text class="chart-title" x="{left}" y="18">{_e(title)}</text>'
    ]
    step_tick = max(1, math.ceil(y_max / 6))
    out.extend(
        f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
        f'<text class="tick" x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>'
        for v in range(0, y_max + 1, step_tick)
    )
    label_every = max(1, math.ceil(count / 12))
    for i, frame in enumerate(frames):
        if i % label_every == 0 or i == count - 1:
            out.append(
                f'<text class="tick" x="{x(i):.1f}" y="{height - bottom + 16}" '
                f'text-anchor="middle">{_e(frame.tick)}</text>'
            )
    out.append(
        f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 6}" '
        f'text-anchor="middle">{_e(axis)}</text>'
        f'<text class="axis" x="12" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">skew</text>'
    )
    # maxSkew: a dashed threshold, a step function should a rollout change it.
    threshold = [(i, p.max_skew) for i, p in enumerate(series.points) if p]
    path = []
    for n, (i, m) in enumerate(threshold):
        x0 = x(i) if n == 0 else (x(threshold[n - 1][0]) + x(i)) / 2
        x1 = x(i) if n == len(threshold) - 1 else (x(i) + x(threshold[n + 1][0])) / 2
        if count == 1:
            x0, x1 = left, width - right
        path.append(f"{'M' if n == 0 else 'L'}{x0:.1f},{y(m):.1f} L{x1:.1f},{y(m):.1f}")
    if path:
        last = threshold[-1][1]
        out.append(f'<path class="threshold" d="{" ".join(path)}"><title>maxSkew</title></path>')
        out.append(
            f'<text class="threshold-label" x="{width - right}" y="{y(last) - 5:.1f}" '
            f'text-anchor="end">maxSkew {last}</text>'
        )
    # The skew line, broken where the workload has no pods.
    segment: list[str] = []
    segments: list[list[str]] = []
    for i, p in enumerate(series.points):
        if p is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(p.skew):.1f}")
    if segment:
        segments.append(segment)
    out.extend(
        f'<polyline class="skew-line" points="{" ".join(s)}"/>' for s in segments if len(s) > 1
    )
    for i, (frame, p) in enumerate(zip(frames, series.points, strict=True)):
        if p is None:
            continue
        tip = f"{frame.heading}: skew {p.skew}, maxSkew {p.max_skew}"
        if p.min_domains_shortfall:
            tip += f", {p.min_domains_shortfall} domain(s) short of minDomains"
        mark = (
            f'<rect class="point over" x="{x(i) - 5:.1f}" y="{y(p.skew) - 5:.1f}" '
            'width="10" height="10"/>'
            if not p.satisfied
            else f'<circle class="point" cx="{x(i):.1f}" cy="{y(p.skew):.1f}" r="5"/>'
        )
        out.append(
            f'<a href="#{frame.anchor}" aria-label="{_e(tip)}"><title>{_e(tip)}</title>{mark}</a>'
        )
    out.append("</svg></figure>\n")
    return "".join(out)


# --- one step ------------------------------------------------------------------------


def _step_section(
    step: StepResult,
    frames: Sequence[Frame],
    position: int,
    colours: Colours,
    actions: dict[int, str],
) -> str:
    frame = frames[position]
    previous = frames[position - 1] if position else None
    ids = [f.anchor for f in frames]
    anchor = frame.anchor
    heading = frame.heading
    when = f"t={step.started}s" + (f" → {step.settled}s" if step.settled != step.started else "")
    action = actions.get(step.index, "")
    meta = [f'<span class="kind">{_e(step.kind)}</span>']
    if action and action != step.title:
        meta.append(f"<span>{_e(action)}</span>")
    meta.append(f"<span>{_e(when)}</span>")
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
    pager = ['<nav class="step-links" aria-label="Neighbouring steps">']
    if position > 0:
        pager.append(f'<a href="#{ids[position - 1]}" rel="prev">← previous</a>')
    pager.append('<a href="#main">↑ top</a>')
    if position + 1 < len(ids):
        pager.append(f'<a href="#{ids[position + 1]}" rel="next">next →</a>')
    pager.append("</nav>")
    return (
        f'<section class="step" id="{anchor}" aria-labelledby="{anchor}-title">\n'
        f'<h2 id="{anchor}-title">{_e(heading)}</h2>\n'
        f'<p class="meta">{" · ".join(meta)}</p>\n'
        f'<p class="summary">{_e(", ".join(summary))}</p>\n'
        + _ClusterPicture(frame, previous, colours).svg()
        + _legend(frame, colours)
        + _notes(frame)
        + _pools(step)
        + _spread_table(frame)
        + _pending_list(frame, colours)
        + _placements(step)
        + _events(step)
        + "".join(pager)
        + "\n</section>\n"
    )


def frame_section(frame: Frame, previous: Frame | None, colours: Colours) -> str:
    """``<section class="frame">``: the frame's heading, its picture (nodes gone since
    ``previous`` greyed), legend, notes, spread table and Pending pods."""
    return (
        f'<section class="frame" id="{frame.anchor}" aria-labelledby="{frame.anchor}-title">\n'
        f'<h2 id="{frame.anchor}-title">{_e(frame.heading)}</h2>\n'
        + _ClusterPicture(frame, previous, colours).svg()
        + _legend(frame, colours)
        + _notes(frame)
        + _spread_table(frame)
        + _pending_list(frame, colours)
        + "</section>\n"
    )


def _notes(frame: Frame) -> str:
    return "".join(f'<p class="note">note: {_e(n)}</p>\n' for n in frame.notes)


def _legend(frame: Frame, colours: Colours) -> str:
    groups: dict[str, tuple[str, int]] = {}
    for node in frame.layout:
        for pod in node.pods:
            group = pod.group or pod.name
            workload, n = groups.get(group, (pod.workload, 0))
            groups[group] = (workload, n + 1)
    items = []
    for group, (workload, n) in groups.items():
        suffix = f" ({_e(workload)})" if workload and not workload.endswith("/" + group) else ""
        items.append(
            f'<li><span class="swatch" style="background:{colours.fill(group)};'
            f'color:{colours.ink(group)}">{colours.letter(group)}</span>'
            f"{_e(group)}{suffix} — {n} pod(s)</li>"
        )
    keys = []
    if frame.placed:
        keys.append(
            '<li><span class="swatch placed" aria-hidden="true"></span>'
            f"outlined: {_e(frame.placed_words)}</li>"
        )
    if frame.pending:
        keys.append('<li><span class="swatch pend" aria-hidden="true"></span>pending</li>')
    return '<ul class="legend" aria-label="Legend">' + "".join(items) + "".join(keys) + "</ul>\n"


def _spread_table(frame: Frame) -> str:
    rows = frame.spread
    if not rows:
        return ""
    out = [
        "<h3>Spread</h3>\n",
        '<table class="spread"><thead><tr><th scope="col">workload</th>'
        '<th scope="col">constraint</th><th scope="col">domain counts</th>'
        '<th scope="col">min</th><th scope="col">skew</th><th scope="col">maxSkew</th>'
        '<th scope="col">status</th></tr></thead><tbody>\n',
    ]
    for row in rows:
        c = row.constraint
        if c.no_eligible_domains:
            # Not within anything: no node is in a domain (no-eligible-nodes).
            status = (
                '<span class="bad">✗ no eligible domain: the pods cannot schedule</span>'
                if c.when_unsatisfiable == "DoNotSchedule"
                else '<span class="warn">no eligible domain: spreads nothing</span>'
            )
        elif c.satisfied:
            status = '<span class="ok">✓ within maxSkew</span>'
        else:
            status = '<span class="bad">✗ over maxSkew</span>'
        if c.min_domains_shortfall:
            status += (
                f'<br><span class="warn">{c.min_domains_shortfall} domain(s) short of '
                f"minDomains {c.min_domains}</span>"
            )
        out.append(
            f"<tr><td>{_e(_workload_name(row.workload))}"
            f'<div class="sub">{_e(row.template)}</div></td>'
            f"<td>{_e(_constraint_name(c))}"
            f'<div class="sub">{_e(c.topology_key)} · {_e(c.selector)}</div></td>'
            f"<td>{_domain_bars(c)}</td>"
            f'<td class="num">{c.global_min}</td><td class="num">{c.skew}</td>'
            f'<td class="num">{c.max_skew}</td><td class="status">{status}</td></tr>\n'
        )
    out.append("</tbody></table>\n")
    return "".join(out)


def _domain_bars(c: ConstraintReport) -> str:
    """A bar per eligible domain, with the ceiling globalMin + maxSkew as a dashed line."""
    counts = dict(c.domain_counts)
    if not counts:
        return "(no eligible domains)"
    text = ", ".join(f"{k}={v}" for k, v in counts.items())
    if len(counts) > _MAX_DOMAIN_BARS:
        values = list(counts.values())
        return _e(f"{len(values)} domains, {min(values)}..{max(values)} pods")
    ceiling = c.global_min + c.max_skew
    top = max([*counts.values(), ceiling, 1])
    label_w = min(max(len(d) for d in counts) * 6.2 + 6, 130)
    bar_max, row_h, count_w = 150, 15, 24
    width = label_w + bar_max + count_w
    height = len(counts) * row_h + 4
    scale = bar_max / top
    parts = [
        f'<svg class="bars" role="img" width="{width:.0f}" height="{height}" '
        f'viewBox="0 0 {width:.0f} {height}" aria-label="{_e("domain counts: " + text)}">'
    ]
    for n, (domain, value) in enumerate(counts.items()):
        y = 2 + n * row_h
        w = value * scale
        over = " over" if value > ceiling else ""
        parts.append(
            f"<g><title>{_e(domain)}: {value} pod(s)</title>"
            f'<text class="bar-label" x="{label_w - 6:.0f}" y="{y + 11}" text-anchor="end">'
            f"{_e(_fit(domain, (label_w - 6) / 6.2))}</text>"
            f'<rect class="bar{over}" x="{label_w:.0f}" y="{y + 2}" width="{w:.1f}" '
            f'height="{row_h - 4}"/>'
            f'<text class="bar-value" x="{label_w + w + 4:.1f}" y="{y + 11}">{value}</text></g>'
        )
    x = label_w + ceiling * scale
    parts.append(
        f'<line class="ceiling" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}">'
        f"<title>global minimum {c.global_min} + maxSkew {c.max_skew} = {ceiling}: "
        "a domain above this line is over maxSkew</title></line>"
    )
    parts.append("</svg>")
    return "".join(parts)


def _pending_list(frame: Frame, colours: Colours) -> str:
    if not frame.pending:
        return ""
    items = []
    for pod in frame.pending:
        group = colours.pending_group(pod)
        attempts = "" if pod.attempts is None else f" · {pod.attempts} attempt(s)"
        items.append(
            f'<li><span class="swatch pend" style="border-color:{colours.fill(group)}">'
            f"{colours.letter(group)}</span><code>{_e(pod.namespace)}/{_e(pod.name)}</code>"
            f' <span class="sub">{_e(pod.workload)}{attempts}</span>'
            f'<div class="message">FailedScheduling: {_e(pod.message)}</div></li>'
        )
    return (
        f'<h3>Pending <span class="count">({len(frame.pending)})</span></h3>\n'
        f'<ul class="pending">{"".join(items)}</ul>\n'
    )


def _placements(step: StepResult) -> str:
    placed = step.placements
    if not placed:
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(e.pod)}</code></td><td>{_e(e.node)}</td>"
        f'<td class="num">{e.time}s</td></tr>'
        for e in placed
    )
    opened = " open" if len(placed) <= _MAX_OPEN_ROWS else ""
    return (
        f'<details class="placements"{opened}><summary><h3>Placements '
        f'<span class="count">({len(placed)})</span></h3></summary>'
        '<table><thead><tr><th scope="col">pod</th><th scope="col">node</th>'
        f'<th scope="col">time</th></tr></thead><tbody>{rows}</tbody></table></details>\n'
    )


def _pools(step: StepResult) -> str:
    # Scenarios with an autoscaler: its decisions in the step, then each pool's size.
    if not step.pools:
        return ""
    decisions = "".join(
        f'<li><span class="num">{e.time}s</span> {_e(e.detail)}</li>'
        for e in step.events
        if e.kind == "autoscaler"
    )
    rows = "".join(
        f'<tr><td>{_e(p.pool)}</td><td class="num">{p.nodes}</td>'
        f'<td class="num">{p.upcoming}</td><td class="num">{p.min_size}</td>'
        f'<td class="num">{"∞" if p.max_size is None else p.max_size}</td>'
        f"<td>{_e(_by_zone(p.by_zone))}</td></tr>"
        for p in step.pools
    )
    return (
        (f'<h3>Autoscaler</h3><ul class="autoscaler">{decisions}</ul>\n' if decisions else "")
        + '<h3>Node pools</h3><table class="pools"><thead><tr><th scope="col">pool</th>'
        '<th scope="col">nodes</th><th scope="col">provisioning</th>'
        '<th scope="col">minSize</th><th scope="col">maxSize</th>'
        '<th scope="col">by zone</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>\n"
    )


def _by_zone(zones: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{zone or '(no zone)'}: {count}" for zone, count in zones)


def _events(step: StepResult) -> str:
    if not step.events:
        return ""
    rows = "".join(
        f'<tr><td class="num">{e.time}s</td><td>{_e(e.kind)}</td><td>{_e(e.pod)}</td>'
        f"<td>{_e(e.node)}</td><td>{_e(e.detail)}</td></tr>"
        for e in step.events
    )
    return (
        f'<details class="events"><summary><h3>Events <span class="count">({len(step.events)})'
        "</span></h3></summary>"
        '<table><thead><tr><th scope="col">time</th><th scope="col">kind</th>'
        '<th scope="col">pod</th><th scope="col">node</th><th scope="col">detail</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></details>\n"
    )


# --- the cluster picture -------------------------------------------------------------


@dataclass(frozen=True)
class _Geometry:
    pod: int
    gap: int
    per_row: int
    pad: int
    label: int
    """Height of a node's name and state lines (0: names only in tooltips)."""
    max_rows: int
    zone_cols: int
    letters: bool

    @property
    def node_w(self) -> int:
        return 2 * self.pad + self.per_row * self.pod + (self.per_row - 1) * self.gap


_NORMAL = _Geometry(
    pod=16, gap=3, per_row=5, pad=8, label=30, max_rows=6, zone_cols=9, letters=True
)
_COMPACT = _Geometry(
    pod=7, gap=2, per_row=8, pad=4, label=0, max_rows=8, zone_cols=16, letters=False
)
_COMPACT_ABOVE = 100
"""Above this many nodes, the picture shrinks: small pods, names only in tooltips."""
_MAX_WIDTH = 1136
_ZONE_PAD, _ZONE_HEAD, _ZONE_GAP, _NODE_GAP = 10, 26, 14, 8


@dataclass(frozen=True)
class _NodeBox:
    node: NodeLayout
    removed: bool


class _ClusterPicture:
    """Zones as boxes side by side (wrapping), nodes in a grid inside, pods as squares."""

    def __init__(self, frame: Frame, previous: Frame | None, colours: Colours) -> None:
        self.frame = frame
        self.colours = colours
        self.anchor = frame.anchor
        self.geometry = _COMPACT if len(frame.layout) > _COMPACT_ABOVE else _NORMAL
        self.placed = frame.placed
        self.placed_tip = _e(f" — {frame.placed_words}")
        # Nodes removed since the previous frame stay in the picture, greyed, where they were.
        boxes = {n.name: _NodeBox(n, removed=False) for n in frame.layout}
        before = previous.layout if previous is not None else ()
        order = list(dict.fromkeys([n.name for n in (*before, *frame.layout)]))
        if previous is not None:
            for node in previous.layout:
                if node.name not in boxes:
                    gone = NodeLayout(node.name, node.zone, node.unschedulable, node.taints, ())
                    boxes[node.name] = _NodeBox(gone, removed=True)
        self.zones: dict[str, list[_NodeBox]] = {}
        for name in order:
            box = boxes[name]
            self.zones.setdefault(box.node.zone, []).append(box)

    def svg(self) -> str:
        g = self.geometry
        most = max((len(b.node.pods) for boxes in self.zones.values() for b in boxes), default=0)
        rows = min(max(1, math.ceil(most / g.per_row)), g.max_rows)
        node_h = g.label + g.pad + rows * g.pod + (rows - 1) * g.gap + g.pad
        blocks: list[tuple[int, int, str]] = []  # width, height, markup at (0, 0)
        for zone, boxes in self.zones.items():
            blocks.append(self._zone(zone, boxes, node_h, rows))
        if self.frame.pending:
            blocks.append(self._pending())
        if not blocks:
            blocks.append((200, 40, '<text class="empty" x="10" y="24">(no nodes)</text>'))
        # Flow the blocks left to right, wrapping at _MAX_WIDTH.
        placed: list[str] = []
        x = y = row_h = width = 0
        for w, h, markup in blocks:
            if x and x + w > _MAX_WIDTH:
                x, y, row_h = 0, y + row_h + _ZONE_GAP, 0
            placed.append(f'<g transform="translate({x},{y})">{markup}</g>')
            width = max(width, x + w)
            x += w + _ZONE_GAP
            row_h = max(row_h, h)
        height = y + row_h
        compact = " compact" if g is _COMPACT else ""
        nodes = len(self.frame.layout)
        pods = sum(len(n.pods) for n in self.frame.layout)
        title = (
            f"{self.frame.caption}: {nodes} node(s) in "
            f"{len(self.zones)} zone(s), {pods} pod(s) placed, {len(self.frame.pending)} pending"
        )
        desc = "; ".join(
            f"{zone or 'no zone'}: "
            + ", ".join(
                f"{b.node.name} {len(b.node.pods)} pod(s){self._state_words(b)}" for b in boxes
            )
            for zone, boxes in self.zones.items()
        )
        return (
            f'<figure class="picture"><svg class="cluster{compact}" role="img" '
            f'viewBox="-2 -2 {width + 4} {height + 4}" width="{width + 4}" '
            f'aria-labelledby="{self.anchor}-svg-t {self.anchor}-svg-d">'
            f'<title id="{self.anchor}-svg-t">{_e(title)}</title>'
            f'<desc id="{self.anchor}-svg-d">{_e(desc)}</desc>'
            + "".join(placed)
            + "</svg></figure>\n"
        )

    @staticmethod
    def _state_words(box: _NodeBox) -> str:
        words = _node_states(box)
        return f" ({', '.join(words)})" if words else ""

    def _columns_to_fit(self) -> int:
        """Node columns per zone that put every zone side by side (at least 1)."""
        g, zones = self.geometry, max(len(self.zones), 1)
        per_zone = (_MAX_WIDTH - (zones - 1) * _ZONE_GAP) / zones - 2 * _ZONE_PAD + _NODE_GAP
        return max(1, int(per_zone // (g.node_w + _NODE_GAP)))

    def _zone(
        self, zone: str, boxes: Sequence[_NodeBox], node_h: int, rows: int
    ) -> tuple[int, int, str]:
        g = self.geometry
        cols = min(len(boxes), g.zone_cols, self._columns_to_fit())
        grid_rows = math.ceil(len(boxes) / cols)
        width = 2 * _ZONE_PAD + cols * g.node_w + (cols - 1) * _NODE_GAP
        height = _ZONE_HEAD + _ZONE_PAD + grid_rows * node_h + (grid_rows - 1) * _NODE_GAP
        pods = sum(len(b.node.pods) for b in boxes)
        label = f"{zone or '(no zone)'} · {pods} pod(s)"
        out = [
            f'<g class="zone"><title>zone {_e(zone or "(none)")}: {len(boxes)} node(s), '
            f"{pods} pod(s)</title>"
            f'<rect class="zone-box" width="{width}" height="{height}" rx="8"/>'
            f'<text class="zone-label" x="{_ZONE_PAD}" y="18">{_e(_fit(label, (width - 12) / 7.4))}'
            "</text></g>"
        ]
        for n, box in enumerate(boxes):
            x = _ZONE_PAD + (n % cols) * (g.node_w + _NODE_GAP)
            y = _ZONE_HEAD + (n // cols) * (node_h + _NODE_GAP)
            out.append(self._node(box, x, y, node_h, rows))
        return width, height, "".join(out)

    def _node(self, box: _NodeBox, x: int, y: int, node_h: int, rows: int) -> str:
        g = self.geometry
        node = box.node
        states = _node_states(box)
        if box.removed:
            kind = "removed"
        elif "unreachable" in states or "not ready" in states:
            kind = "failed"
        elif "cordoned" in states:
            kind = "cordoned"
        elif "tainted" in states:
            kind = "tainted"
        else:
            kind = "ready"
        tip = f"{node.name} ({node.zone or 'no zone'}): {len(node.pods)} pod(s)"
        if states:
            tip += "; " + ", ".join(states)
        if node.taints:
            tip += "; taints: " + ", ".join(node.taints)
        out = [
            f'<g class="node {kind}" transform="translate({x},{y})"><title>{_e(tip)}</title>'
            f'<rect class="node-box" width="{g.node_w}" height="{node_h}" rx="4"/>'
        ]
        if kind in ("failed", "removed"):
            out.append(
                f'<path class="cross" d="M4,4 L{g.node_w - 4},{node_h - 4} '
                f'M{g.node_w - 4},4 L4,{node_h - 4}"/>'
            )
        if g.label:
            chars = (g.node_w - 2 * g.pad) / 6.3
            out.append(
                f'<text class="node-name" x="{g.pad}" y="14">{_e(_fit(node.name, chars))}</text>'
            )
            if states:
                out.append(
                    f'<text class="node-state" x="{g.pad}" y="26">'
                    f"{_e(_fit(' · '.join(states), chars * 1.1))}</text>"
                )
        capacity = rows * g.per_row
        shown = node.pods if len(node.pods) <= capacity else node.pods[: capacity - 1]
        for n, pod in enumerate(shown):
            px = g.pad + (n % g.per_row) * (g.pod + g.gap)
            py = g.label + g.pad + (n // g.per_row) * (g.pod + g.gap)
            group = pod.group or pod.name
            full = f"{pod.namespace}/{pod.name}"
            out.append(
                self._pod(px, py, group, f"{full} ({group}) on {node.name}", full in self.placed)
            )
        if len(shown) < len(node.pods):
            n = len(shown)
            px = g.pad + (n % g.per_row) * (g.pod + g.gap)
            py = g.label + g.pad + (n // g.per_row) * (g.pod + g.gap)
            out.append(
                f'<text class="more" x="{px}" y="{py + g.pod - 3}">+{len(node.pods) - n}</text>'
            )
        out.append("</g>")
        return "".join(out)

    def _pod(self, x: float, y: float, group: str, tip: str, placed: bool) -> str:
        g = self.geometry
        fill, ink = self.colours.fill(group), self.colours.ink(group)
        cls = "pod placed" if placed else "pod"
        letter = ""
        if g.letters:
            letter = (
                f'<text x="{x + g.pod / 2}" y="{y + g.pod - 4}" text-anchor="middle" '
                f'fill="{ink}">{self.colours.letter(group)}</text>'
            )
        return (
            f'<g class="{cls}"><title>{_e(tip)}{self.placed_tip if placed else ""}'
            f'</title><rect x="{x}" y="{y}" width="{g.pod}" height="{g.pod}" rx="3" '
            f'fill="{fill}"/>{letter}</g>'
        )

    def _pending(self) -> tuple[int, int, str]:
        g = self.geometry
        size = max(g.pod, 16)
        per_row = 10
        count = len(self.frame.pending)
        rows = math.ceil(count / per_row)
        width = 2 * _ZONE_PAD + min(count, per_row) * (size + 6) - 6
        width = max(width, 150)
        height = _ZONE_HEAD + _ZONE_PAD + rows * (size + 6) - 6 + 4
        out = [
            f'<g class="pending-area"><title>{count} pending pod(s)</title>'
            f'<rect class="pending-box" width="{width}" height="{height}" rx="8"/>'
            f'<text class="zone-label" x="{_ZONE_PAD}" y="18">Pending · {count} pod(s)</text></g>'
        ]
        for n, pod in enumerate(self.frame.pending):
            group = self.colours.pending_group(pod)
            cx = _ZONE_PAD + (n % per_row) * (size + 6) + size / 2
            cy = _ZONE_HEAD + 2 + (n // per_row) * (size + 6) + size / 2
            out.append(
                f'<g class="pod pending"><title>{_e(pod.namespace)}/{_e(pod.name)} pending: '
                f"{_e(pod.message)}</title>"
                f'<circle cx="{cx}" cy="{cy}" r="{size / 2 - 1}" '
                f'stroke="{self.colours.fill(group)}"/>'
                f'<text x="{cx}" y="{cy + 4}" text-anchor="middle">'
                f"{self.colours.letter(group)}</text></g>"
            )
        return width, height, "".join(out)


def _node_states(box: _NodeBox) -> list[str]:
    if box.removed:
        return ["removed"]
    node = box.node
    words = []
    keys = {t.split(":", 1)[0].split("=", 1)[0] for t in node.taints}
    if "node.kubernetes.io/unreachable" in keys:
        words.append("unreachable")
    if "node.kubernetes.io/not-ready" in keys:
        words.append("not ready")
    if node.unschedulable:
        words.append("cordoned")
    others = [
        t
        for t in node.taints
        if t.split(":", 1)[0].split("=", 1)[0]
        not in (*_FAILED_TAINTS, "node.kubernetes.io/unschedulable")
    ]
    if any(t.endswith((":NoSchedule", ":NoExecute")) for t in others):
        words.append("tainted")
    return words


def _fit(text: str, chars: float) -> str:
    """``text`` cut to about ``chars`` characters, with an ellipsis."""
    limit = max(int(chars), 4)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CSS = """
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de;
  --bg: #ffffff; --panel: #f6f8fa; --ok: #1a7f37; --bad: #C0392B; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  "Liberation Sans", "DejaVu Sans", Arial, sans-serif; }
header, main, nav.toc, footer { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 20px; }
h1 { margin: 0 0 6px; font-size: 28px; }
h2 { font-size: 21px; margin: 0 0 6px; }
h3 { font-size: 16px; margin: 14px 0 6px; display: inline-block; }
.tool { margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: .06em;
  font-size: 12px; }
.description { max-width: 80ch; margin: 0 0 10px; }
.facts { display: flex; gap: 24px; margin: 0 0 12px; }
.facts div { display: flex; gap: 6px; } .facts dt { color: var(--muted); } .facts dd { margin: 0;
  font-weight: 600; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; }
nav.toc { border-top: 1px solid var(--line); border-bottom: 1px solid var(--line);
  padding-top: 8px; padding-bottom: 8px; }
nav.toc h2 { font-size: 14px; color: var(--muted); margin: 0 0 4px; }
nav.toc ul { margin: 0; padding-left: 0; list-style: none; columns: 2 320px; }
a { color: #0550ae; }
.badge { font-size: 12px; border-radius: 9px; padding: 0 7px; margin-left: 4px;
  border: 1px solid currentColor; }
.badge.pending { color: var(--warn); } .badge.over { color: var(--bad); }
section { padding: 18px 0 10px; border-bottom: 1px solid var(--line); scroll-margin-top: 52px; }
.hint { color: var(--muted); margin: 0 0 8px; font-size: 14px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr));
  gap: 10px; }
figure { margin: 0; }
.chart svg { width: 100%; height: auto; background: var(--panel); border-radius: 6px; }
.chart-title { font-size: 13px; font-weight: 600; fill: var(--ink); }
.tick, .axis { font-size: 11px; fill: var(--muted); }
.grid { stroke: #e3e7eb; stroke-width: 1; }
.threshold { fill: none; stroke: var(--bad); stroke-width: 2; stroke-dasharray: 6 4; }
.threshold-label { font-size: 11px; fill: var(--bad); font-weight: 600; paint-order: stroke;
  stroke: #f6f8fa; stroke-width: 4px; stroke-linejoin: round; }
.skew-line { fill: none; stroke: #0072B2; stroke-width: 2.5; }
.point { fill: #0072B2; stroke: #fff; stroke-width: 1.5; }
.point.over { fill: var(--bad); }
.meta { margin: 0; color: var(--muted); } .meta span + span::before { content: ""; }
.kind { font-family: ui-monospace, "DejaVu Sans Mono", monospace; color: var(--ink);
  background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; }
.summary { margin: 2px 0 10px; }
.picture { overflow-x: auto; }
.picture svg { max-width: 100%; height: auto; display: block; }
.zone-box { fill: #f3f6f9; stroke: #8c959f; stroke-width: 1.2; }
.zone-label { font-size: 13px; font-weight: 600; fill: var(--ink); }
.node-box { fill: #fff; stroke: #57606a; stroke-width: 1.2; }
.node-name { font-size: 11px; fill: var(--ink); }
.node-state { font-size: 10px; font-weight: 700; fill: var(--bad); }
.node.cordoned .node-box { stroke: #bf8700; stroke-width: 2.5; stroke-dasharray: 5 3;
  fill: #fff8e1; }
.node.cordoned .node-state { fill: #7d4e00; }
.node.tainted .node-box { stroke: #8250df; stroke-width: 2; fill: #fbf8ff; }
.node.tainted .node-state { fill: #6639ba; }
.node.failed .node-box { stroke: var(--bad); stroke-width: 2.5; fill: #fdecea; }
.node.removed .node-box { stroke: #8c959f; stroke-width: 1.5; stroke-dasharray: 4 3;
  fill: #eef1f4; }
.node.removed .node-name { fill: var(--muted); } .node.removed .node-state { fill: var(--muted); }
.cross { stroke: var(--bad); stroke-width: 1.2; opacity: .35; }
.node.removed .cross { stroke: #8c959f; }
.pod text { font-size: 11px; font-weight: 700; pointer-events: none; }
.pod.placed rect { stroke: #1b1f24; stroke-width: 2; }
.compact .pod.placed rect { stroke-width: 1; }
.more { font-size: 11px; fill: var(--muted); }
.pending-box { fill: #fff; stroke: var(--warn); stroke-width: 1.5; stroke-dasharray: 6 4; }
.pod.pending circle { fill: #fff; stroke-width: 2.5; stroke-dasharray: 3 2; }
.pod.pending text { fill: var(--ink); }
.legend { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-wrap: wrap;
  gap: 4px 18px; font-size: 14px; }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-flex; align-items: center; justify-content: center; width: 18px;
  height: 18px; border-radius: 3px; font-size: 11px; font-weight: 700; flex: none; }
.swatch.placed { border: 2px solid #1b1f24; background: #fff; }
.swatch.pend { border: 2px dashed var(--warn); border-radius: 50%; background: #fff;
  color: var(--ink); }
table { border-collapse: collapse; margin: 4px 0 8px; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--panel); }
td.status { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sub { color: var(--muted); font-size: 12px; }
.ok { color: var(--ok); font-weight: 600; } .bad { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); }
.bars { display: block; }
.bar { fill: #0072B2; } .bar.over { fill: var(--bad); }
.bar-value, .bar-label { font-size: 10px; fill: var(--ink); }
.ceiling { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 4 3; }
ul.pending { margin: 0; padding: 0; list-style: none; }
ul.pending li { margin: 0 0 8px; display: block; }
ul.pending .swatch { margin-right: 6px; vertical-align: middle; }
.message { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px;
  background: #fff8e1; border-left: 3px solid var(--warn); padding: 4px 8px; margin-top: 3px; }
details summary { cursor: pointer; }
details summary h3 { margin: 8px 0 4px; }
.count { color: var(--muted); font-weight: 400; }
.note { color: var(--warn); margin: 4px 0; }
.step-links { display: flex; gap: 16px; margin-top: 8px; font-size: 14px; }
.pager { position: sticky; top: 0; z-index: 2; background: rgba(255,255,255,.96);
  border-bottom: 1px solid var(--line); padding: 6px 0; display: flex; gap: 10px;
  align-items: center; }
.pager[hidden] { display: none; }
.pager button { font: inherit; padding: 2px 12px; border: 1px solid #8c959f; border-radius: 5px;
  background: var(--panel); cursor: pointer; }
.pager button:disabled { opacity: .45; cursor: default; }
.pager .where { font-weight: 600; }
footer { color: var(--muted); font-size: 13px; padding-bottom: 24px; }
@media print { .pager, .step-links { display: none; } section { break-inside: avoid; } }
"""

_SCRIPT = """
(function () {
  "use strict";
  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  var bar = document.getElementById("pager");
  if (!steps.length || !bar) { return; }
  var single = false;
  var current = 0;
  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text) { node.textContent = text; }
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  var prev = el("button", "\\u2190 Previous", {type: "button", "aria-label": "Previous step"});
  var next = el("button", "Next \\u2192", {type: "button", "aria-label": "Next step"});
  var where = el("span", "", {"class": "where", "aria-live": "polite"});
  var toggleLabel = el("label", "");
  var toggle = el("input", "", {type: "checkbox", id: "one-at-a-time"});
  toggleLabel.appendChild(toggle);
  toggleLabel.appendChild(document.createTextNode(" one step at a time"));
  [prev, next, where, toggleLabel].forEach(function (n) { bar.appendChild(n); });
  function indexOfHash() {
    var id = decodeURIComponent(location.hash.replace(/^#/, ""));
    for (var i = 0; i < steps.length; i++) { if (steps[i].id === id) { return i; } }
    return -1;
  }
  function render() {
    steps.forEach(function (s, i) { s.hidden = single && i !== current; });
    prev.disabled = current === 0;
    next.disabled = current === steps.length - 1;
    var title = steps[current].querySelector("h2");
    where.textContent = (current + 1) + " / " + steps.length + ": " +
      (title ? title.textContent : "");
  }
  function go(i) {
    current = Math.max(0, Math.min(steps.length - 1, i));
    render();
    if (location.hash !== "#" + steps[current].id) { location.hash = steps[current].id; }
    else { steps[current].scrollIntoView(); }
  }
  prev.addEventListener("click", function () { go(current - 1); });
  next.addEventListener("click", function () { go(current + 1); });
  toggle.addEventListener("change", function () { single = toggle.checked; go(current); });
  window.addEventListener("hashchange", function () {
    var i = indexOfHash();
    if (i >= 0) { current = i; render(); }
  });
  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (/^(INPUT|TEXTAREA|SELECT)$/.test(tag) || event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    if (event.key === "ArrowRight") { go(current + 1); }
    else if (event.key === "ArrowLeft") { go(current - 1); }
  });
  var start = indexOfHash();
  current = start >= 0 ? start : 0;
  bar.hidden = false;
  document.documentElement.className += " js";
  render();
})();
"""


def render_sweep_html(report: SweepReport, scenario: Scenario | None = None) -> str:
    """``simulate --runs N --html``: the distributions (a histogram per metric and step),
    then the worst run's whole report."""
    parts = [
        '<section id="runs" aria-labelledby="runs-title">\n',
        f'<h2 id="runs-title">{report.runs} runs (seeds {report.seed}–'
        f"{report.seed + report.runs - 1}): distributions</h2>\n",
        f"<p>Random tie-breaks per run; below it, the worst run (seed {report.worst.seed}: "
        "most pods Pending, then the largest skew), step by step.</p>\n",
    ]
    for step in report.steps:
        metrics = [("pods Pending", step.pending), ("evictions", step.evictions),
                   ("seconds to settle", step.recover_seconds)]  # fmt: skip
        metrics += [(f"skew {key}", d) for key, d in step.skew.items()]
        metrics += [(f"nodes in pool {key}", d) for key, d in step.pools.items()]
        parts.append(f"<h3>{_e(step.title)}</h3>\n")
        for label, distribution in metrics:
            low, high = distribution.interval
            parts.append(
                f'<table class="histogram"><caption>{_e(label)}: mean '
                f"{distribution.mean:.2f} (95% CI {low:.2f}–{high:.2f})</caption>\n"
                '<tr><th scope="col">value</th><th scope="col">runs</th></tr>\n'
            )
            for value, runs in distribution.histogram().items():
                width = round(100 * runs / max(1, report.runs))
                parts.append(
                    f'<tr><td>{value}</td><td><span class="bar" style="display:inline-block;'
                    f'background:#4a7ab5;height:0.8em;width:{width}%"></span> {runs}</td></tr>\n'
                )
            parts.append("</table>\n")
    parts.append("</section>\n")
    return _simulation_page(report.worst_result, scenario, lead=["".join(parts)])
