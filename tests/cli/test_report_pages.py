"""``audit --html`` and ``rebalance --html``: pages built from the audit report and the
rebalance plan themselves, with the simulate report's skeleton, CSS and cluster pictures,
and none of its wording."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from topospread.cli.commands import cli

DATA = Path(__file__).resolve().parents[1] / "data"

SIMULATION_WORDING = (
    "topospread simulate",
    "Seed",
    "Skew over time",
    "Initial cluster",
    "Cluster after",
    "scheduling attempt",
    "attempt(s)",
    "placed in this step",
    "Skip to the steps",
    'class="step"',
    'id="pager"',
    "<script",
)
"""What the simulate report says about its steps and seed, which no other page has."""


class Page(HTMLParser):
    """Start tags with their attributes, and the text."""

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

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())

    def find(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [
            attrs
            for name, attrs in self.tags
            if name == tag and (cls is None or cls in attrs.get("class", "").split())
        ]


def _page(tmp_path: Path, *args: str) -> tuple[str, dict[str, object]]:
    """The page ``args --html`` writes, and the same command's JSON."""
    path = tmp_path / "page.html"
    runner = CliRunner()
    written = runner.invoke(cli, [*args, "--html", str(path)])
    assert f"wrote {path}" in written.stderr, written.output
    as_json = runner.invoke(cli, [*args, "-o", "json"])
    return path.read_text(encoding="utf-8"), json.loads(as_json.stdout)


def _well_formed(text: str) -> Page:
    page = Page(text)
    ids = [attrs["id"] for _, attrs in page.tags if "id" in attrs]
    assert len(ids) == len(set(ids))
    targets = {a["href"][1:] for _, a in page.tags if a.get("href", "").startswith("#")}
    assert targets <= set(ids)
    assert all(a.get("href", "#").startswith("#") for _, a in page.tags)
    for _, attrs in page.tags:
        for ref in attrs.get("aria-labelledby", "").split():
            assert ref in ids
    csp = [m for m in page.find("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp
    assert "default-src 'none'" in csp[0]["content"]
    for svg in page.find("svg"):
        assert svg.get("role") == "img"
    return page


def _no_simulation_wording(text: str) -> None:
    left = [w for w in SIMULATION_WORDING if w in text]
    assert not left, f"simulation wording on the page: {left}"


def test_the_audit_page_names_its_findings_and_the_cluster_now(tmp_path: Path) -> None:
    text, report = _page(tmp_path, "audit", "--cluster", str(DATA / "audit" / "skewed.yaml"))
    page = _well_formed(text)
    _no_simulation_wording(text)
    words = page.words
    assert "topospread audit" in words
    findings = report["findings"]
    assert isinstance(findings, list)
    assert findings
    rows = page.find("tr")
    for finding in findings:
        assert finding["rule"] in words
        assert " ".join(finding["message"].split()) in words
        assert " ".join(finding["fix"].split()) in words
        assert any(f"finding-{finding['severity']}" in r.get("class", "") for r in rows)
    assert "Findings: 1 error(s), 0 warning(s), 0 info" in words
    # The cluster as it is now: one picture, the spread with its domain bars, no chart of
    # skew over steps (an audit has one state).
    assert "Cluster now" in words
    assert len(page.find("svg", "cluster")) == 1
    assert page.find("svg", "bars")
    assert not page.find("svg", "skew-chart")
    assert "over maxSkew" in words
    assert "web-7d9c5-q7rcl" in text


def test_the_audit_page_lists_pending_pods_with_their_message(tmp_path: Path) -> None:
    text, report = _page(tmp_path, "audit", "--cluster", str(DATA / "audit" / "wedged.yaml"))
    _no_simulation_wording(text)
    page = Page(text)
    pending = [p for w in report["workloads"] for p in w["pendingPods"]]  # type: ignore[attr-defined]
    assert pending
    assert len(page.find("g", "pending")) == len(pending)
    for pod in pending:
        assert pod["pod"] in page.words
        assert f"FailedScheduling: {' '.join(pod['message'].split())}" in page.words


def test_the_rebalance_page_names_its_evictions_before_and_after(tmp_path: Path) -> None:
    text, plan = _page(
        tmp_path, "rebalance", "--cluster", str(DATA / "rebalance" / "min-domains.yaml")
    )
    page = _well_formed(text)
    _no_simulation_wording(text)
    words = page.words
    assert "topospread rebalance" in words
    assert "Rebalance plan" in words
    assert "Balanced with 2 eviction(s) in 2 batch(es)" in words
    evictions = plan["evictions"]
    assert isinstance(evictions, list)
    assert len(evictions) == 2
    table = words[words.index("Evictions") :]
    for eviction in evictions:
        assert eviction["pod"] in table
        assert eviction["node"] in table
        assert eviction["expectedNode"] in table
    # Before and after the evictions: a picture each, the replacements outlined after.
    assert [s.get("id") for s in page.find("section", "frame")] == ["before", "after"]
    assert "after the evictions (simulated)" in text
    assert len(page.find("svg", "cluster")) == 2
    assert len(page.find("g", "placed")) == len(evictions)
    assert "the replacement of an evicted pod" in words
    # Each constraint over maxSkew charted before and after, over maxSkew first.
    charts = page.find("svg", "skew-chart")
    assert charts
    assert "Skew before and after" in words
    assert len([r for r in page.find("rect", "over") if "point" in r["class"]]) == len(charts)


def test_the_rebalance_page_of_an_impossible_plan_says_nothing_would_be_evicted(
    tmp_path: Path,
) -> None:
    text, plan = _page(
        tmp_path, "rebalance", "--cluster", str(DATA / "rebalance" / "no-capacity.yaml")
    )
    _well_formed(text)
    _no_simulation_wording(text)
    words = Page(text).words
    assert plan["converged"] is False
    assert f"Cannot reach balance: {' '.join(str(plan['reason']).split())}" in words
    assert "Nothing would be evicted" in words
    assert "Balanced with" not in words


@pytest.mark.parametrize("data", ["scaled-down.yaml", "two-workloads.yaml", "soft.yaml"])
def test_every_rebalance_page_is_well_formed(tmp_path: Path, data: str) -> None:
    text, _ = _page(tmp_path, "rebalance", "--cluster", str(DATA / "rebalance" / data))
    _well_formed(text)
    _no_simulation_wording(text)
