"""``topospread simulate --html``: the report's structure, offline-ness, writing, a browser.

The browser tests run Debian's chromium headless (``scripts/setup.sh`` installs it when run
as root). Without it they are skipped, unless ``TOPOSPREAD_REQUIRE_BROWSER`` is set (CI
sets it), in which case they fail.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli
from topospread.cli.render_html import render_html, write_html
from topospread.engine.sim.result import (
    ConstraintReport,
    NodeLayout,
    PendingPod,
    PlacedPod,
    SimEvent,
    SimulationResult,
    StepResult,
    WorkloadSpread,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "src" / "topospread" / "examples" / "scenarios"
NAMES = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))
CHROMIUM = Path("/usr/bin/chromium")
BLUE = bytes.fromhex("0072B2")
"""The first workload revision's colour (and the skew line's)."""


class Page(HTMLParser):
    """Every start tag of a document, with its attributes, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [
            attrs
            for name, attrs in self.tags
            if name == tag and (cls is None or cls in attrs.get("class", "").split())
        ]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write_report(name: str, directory: Path) -> tuple[Path, str]:
    path = directory / f"{name}.html"
    code, _, err = run("simulate", name, "--html", str(path))
    assert code == 0, err
    assert err.strip().endswith(f"wrote {path}")
    return path, path.read_text(encoding="utf-8")


def steps_of(name: str) -> list[dict[str, object]]:
    code, out, _ = run("simulate", name, "--output", "json")
    assert code == 0
    steps: list[dict[str, object]] = json.loads(out)["steps"]
    return steps


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return write_report("story", tmp_path_factory.mktemp("report"))


# --- structure ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_each_bundled_scenario_gives_one_picture_per_step_and_a_skew_chart(
    name: str, tmp_path: Path
) -> None:
    _, text = write_report(name, tmp_path)
    page = Page(text)
    steps = steps_of(name)
    sections = page.find("section", "step")
    assert len(sections) == len(steps)
    assert len(page.find("svg", "cluster")) == len(steps)
    constraints = {
        (w["workload"], c["topologyKey"], c["whenUnsatisfiable"])  # type: ignore[index]
        for s in steps
        for w in s["spread"]  # type: ignore[attr-defined]
        for c in w["constraints"]
    }
    assert len(page.find("svg", "skew-chart")) == len(constraints) >= 1
    for svg in page.find("svg"):
        assert svg.get("role") == "img"
        assert svg.get("aria-labelledby") or svg.get("aria-label")


def test_the_report_references_nothing_outside_itself(story: tuple[Path, str]) -> None:
    _, text = story
    page = Page(text)
    assert "http://" not in text
    assert "https://" not in text
    assert not [a for a in page.find("script") if "src" in a]
    assert not page.find("link")
    assert not page.find("img")
    assert not page.find("iframe")
    assert "@import" not in text
    assert "url(" not in text
    csp = [m for m in page.find("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp
    assert "default-src 'none'" in csp[0]["content"]


def test_ids_are_unique_and_every_anchor_lands(story: tuple[Path, str]) -> None:
    page = Page(story[1])
    ids = [attrs["id"] for _, attrs in page.tags if "id" in attrs]
    assert len(ids) == len(set(ids))
    targets = {attrs["href"][1:] for _, attrs in page.tags if attrs.get("href", "").startswith("#")}
    assert targets
    assert targets <= set(ids)
    for _, attrs in page.tags:
        for ref in attrs.get("aria-labelledby", "").split():
            assert ref in ids


def test_the_story_report_shows_what_the_steps_did(story: tuple[Path, str]) -> None:
    _, text = story
    page = Page(text)
    words = " ".join(page.text)
    assert "story" in words
    assert "A 9-replica Deployment spread by zone" in words
    assert "v1.37.1" in words
    for step in ("deploy web (9 replicas)", "zone-a becomes unreachable", "zone-a recovers"):
        assert step in words
    # The failZone step: unreachable nodes marked, three pending pods and their message.
    assert len(page.find("g", "failed")) == 3
    assert len(page.find("g", "pending")) == 3
    assert "FailedScheduling: 0/9 nodes are available: 3 node(s) had untolerated taint(s)" in words
    assert "over maxSkew" in words
    assert "web-5cf7755778" in words
    # The rollout step names the action as well as the step.
    assert "rollout Deployment default/web (image registry.k8s.io/nginx:1.28)" in words


def test_the_skew_chart_marks_points_over_max_skew(story: tuple[Path, str]) -> None:
    page = Page(story[1])
    over = page.find("rect", "over")
    # Hard zone: step 3 is over maxSkew 1 (the rollout ends 3/3/3); soft hostname: steps
    # 2, 3, 4.
    assert len([r for r in over if "point" in r["class"]]) == 4
    assert len(page.find("path", "threshold")) == 2


def test_html_and_output_json_combine(tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    code, out, _ = run("simulate", "story", "--seed", "3", "-o", "json", "--html", str(path))
    assert code == 0
    assert out == run("simulate", "story", "--seed", "3", "-o", "json")[1]
    assert "<dt>Seed</dt><dd>3</dd>" in path.read_text(encoding="utf-8")


def test_an_unwritable_destination_is_one_message_and_no_file(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "r.html"
    code, out, err = run("simulate", "one-constraint", "--html", str(path))
    assert code == 2
    assert err == f"{path}: no such directory: {path.parent}\n"
    assert out == ""  # checked before the simulation ran
    assert not path.parent.exists()


def test_a_directory_as_the_html_target_is_refused_up_front(tmp_path: Path) -> None:
    code, out, err = run("simulate", "one-constraint", "--html", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "is a directory" in err


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.html"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    code, _, _ = run("simulate", "one-constraint", "--html", str(link))
    assert code == 0
    assert link.is_symlink()
    assert "<!DOCTYPE html>" in real.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    from topospread.cli import render_html

    def broken(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render_html.os, "fsync", broken)
    target = tmp_path / "r.html"
    with pytest.raises(OSError, match="No space"):
        render_html.write_html("<p>x</p>", target)
    assert list(tmp_path.iterdir()) == []


def test_list_takes_no_html(tmp_path: Path) -> None:
    code, _, err = run("simulate", "--list", "--html", str(tmp_path / "r.html"))
    assert code == 2
    assert "--list takes no SCENARIO and no --html" in err


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_html("<p>half</p>" + "\ud800", path)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    write_html("<p>new</p>", path)
    assert path.read_text(encoding="utf-8") == "<p>new</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert path.stat().st_mode & 0o644 == 0o644


def _result(nodes: int, description: str = "") -> SimulationResult:
    layout = tuple(
        NodeLayout(
            f"n{i}",
            f"z{i % 4}",
            unschedulable=i == 1,
            taints=("dedicated=gpu:NoSchedule",) if i == 2 else (),
            pods=tuple(PlacedPod(f"p{i}-{k}", "ns", "Deployment/d", "d-1") for k in range(i % 9)),
        )
        for i in range(nodes)
    )
    constraint = ConstraintReport(
        "topology.kubernetes.io/zone", "DoNotSchedule", 1, 1, "app=d", {"z0": 3, "z1": 5}, 3, 2, 0
    )
    step = StepResult(
        index=0,
        kind="apply",
        title="<b>apply</b> & co",
        started=1,
        settled=2,
        events=(SimEvent(1, "scheduled", "ns/p1-0", "n1"),),
        layout=layout,
        pending=(PendingPod("d-1-x", "ns", "Deployment/d", "0/3 nodes <are> available", 1),),
        spread=(WorkloadSpread("Deployment/ns/d", 8, 1, "pod", "d-1", (constraint,)),),
        scheduling_attempts=2,
        notes=("a <note>",),
    )
    return SimulationResult("s", description, 7, "v1.37.1", (step,))


def test_text_is_escaped_everywhere() -> None:
    text = render_html(_result(3, '<script>alert(1)</script> & "quotes"'))
    assert "<script>alert(1)" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;" in text
    assert "&lt;b&gt;apply&lt;/b&gt; &amp; co" in text
    assert "0/3 nodes &lt;are&gt; available" in text
    assert "a &lt;note&gt;" in text
    page = Page(text)
    assert len(page.find("script")) == 1
    assert not page.find("b")


def test_node_states_are_marked() -> None:
    page = Page(render_html(_result(4)))
    assert len(page.find("g", "cordoned")) == 1
    assert len(page.find("g", "tainted")) == 1
    assert len(page.find("g", "ready")) == 2


def test_a_large_cluster_is_drawn_compactly() -> None:
    text = render_html(_result(200))
    page = Page(text)
    assert len(page.find("g", "node")) == 200
    assert not page.find("text", "node-name")
    assert len(text) < 600_000


# --- a real browser ----------------------------------------------------------------------


def _chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    if os.environ.get("TOPOSPREAD_REQUIRE_BROWSER"):
        pytest.fail(f"TOPOSPREAD_REQUIRE_BROWSER is set but {CHROMIUM} is missing")
    pytest.skip(
        f"{CHROMIUM} not installed (scripts/setup.sh installs Debian's chromium when run as "
        "root); set TOPOSPREAD_REQUIRE_BROWSER=1 to fail instead"
    )


def _browser(profile: Path, *args: str) -> subprocess.Popen[str]:
    command = [
        str(_chromium()),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LANG": "C.UTF-8"},
    )


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("chromium did not finish within 60 s")
    assert process.returncode == 0, err[-2000:]
    return out, err


def _console_messages(stderr: str) -> list[str]:
    # --enable-logging=stderr --v=0 prints each console message and uncaught exception as
    # `[pid:tid:time:INFO:CONSOLE:line] "text", source: url (line)` (console.error included).
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def _png_pixels(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct pixel values of an 8-bit RGB/RGBA, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    assert header is not None
    width, height, depth, colour_type, _, _, interlace = header
    assert (depth, interlace) == (8, 0)
    bpp = {2: 3, 6: 4}[colour_type]
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    assert len(raw) == height * (stride + 1)
    prior = bytearray(stride)
    pixels: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prior, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + (left + prior[i]) // 2) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prior[i], (prior[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.update(bytes(line[i : i + 3]) for i in range(0, stride, bpp))
        prior = line
    return width, height, pixels


def test_the_console_check_catches_errors(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><p>x</p><script>console.error('bad'); missingFunction();</script>",
        encoding="utf-8",
    )
    process = _browser(
        tmp_path / "profile", "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()
    )
    _, err = _finish(process)
    messages = _console_messages(err)
    assert any("bad" in m for m in messages), err[-2000:]
    assert any("Uncaught ReferenceError" in m for m in messages), err[-2000:]


def test_chromium_renders_the_report_without_console_errors(
    story: tuple[Path, str], tmp_path: Path
) -> None:
    path, _ = story
    shot = tmp_path / "report.png"
    screenshot = _browser(
        tmp_path / "profile-shot",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        path.as_uri(),
    )
    dump = _browser(
        tmp_path / "profile-dom",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        path.as_uri() + "#step-2",
    )
    dom, err = _finish(dump)
    _finish(screenshot)

    assert _console_messages(err) == []
    # The DOM after the script ran: the content, and the pager the script adds.
    page = Page(dom)
    words = " ".join(page.text)
    assert "story" in words
    for node in ("node-zone-a-1", "node-zone-b-3", "node-zone-c-2"):
        assert node in words
    assert len(page.find("svg", "skew-chart")) == 2
    assert len(page.find("svg", "cluster")) == 5
    assert page.find("input")
    assert len(page.find("button")) == 2
    assert "js" in page.find("html")[0].get("class", "").split()
    pager = [a for a in page.find("div") if a.get("id") == "pager"]
    assert pager
    assert "hidden" not in pager[0]
    # The script read the address's step and labelled the pager with it.
    assert "3 / 5: Step 2: roll out a new image" in words

    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1280, 2000)
    assert len(pixels) > 50, f"screenshot has {len(pixels)} distinct colour(s)"
    assert BLUE in pixels, "no pod or skew line colour in the screenshot"


def test_pager_counts_every_step(story: tuple[Path, str]) -> None:
    # The script pages through section.step; the report has one per step (initial included).
    counts = Counter(re.findall(r'<section class="step" id="(step-[a-z0-9]+)"', story[1]))
    assert list(counts) == ["step-initial", "step-1", "step-2", "step-3", "step-4"]


def test_without_chromium_the_browser_tests_skip_or_fail(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(globals(), "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("TOPOSPREAD_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        _chromium()
    monkeypatch.setenv("TOPOSPREAD_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="TOPOSPREAD_REQUIRE_BROWSER is set"):
        _chromium()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("audit", "--cluster", "tests/data/audit/skewed.yaml"), "Cluster now"),
        (
            ("rebalance", "--cluster", "tests/data/rebalance/min-domains.yaml"),
            "After the evictions (simulated)",
        ),
    ],
    ids=["audit", "rebalance"],
)
def test_chromium_renders_the_audit_and_rebalance_pages_without_console_errors(
    args: tuple[str, ...], expected: str, tmp_path: Path
) -> None:
    path = tmp_path / "page.html"
    result = CliRunner().invoke(cli, [args[0], args[1], str(ROOT / args[2]), "--html", str(path)])
    assert f"wrote {path}" in result.stderr, result.output
    shot = tmp_path / "page.png"
    screenshot = _browser(
        tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1280,1400", path.as_uri()
    )
    dump = _browser(
        tmp_path / "profile-dom", "--enable-logging=stderr", "--v=0", "--dump-dom", path.as_uri()
    )
    dom, err = _finish(dump)
    _finish(screenshot)
    assert _console_messages(err) == []
    page = Page(dom)
    assert expected in " ".join(page.text)
    assert page.find("svg", "cluster")
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1280, 1400)
    assert len(pixels) > 50, f"screenshot has {len(pixels)} distinct colour(s)"
    assert BLUE in pixels, "no pod colour in the screenshot"
