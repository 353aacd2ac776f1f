"""benchmarks/run.py keeps working: every workload at a tiny scale through topospread's
loop and the Go oracle's ``bench``, with identical placements (seconds, not a measurement).

Needs the oracle (located, and rebuilt when stale, as the differential tests do): skipped
with the reason when there is none, failed instead when ``TOPOSPREAD_REQUIRE_ORACLE=1``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench_run(load_module: Callable[[str, Path], ModuleType]) -> ModuleType:
    return load_module("bench_run", REPO / "benchmarks" / "run.py")


@pytest.fixture(scope="module")
def oracle(load_module: Callable[[str, Path], ModuleType]) -> Path:
    differential = load_module(
        "differential_conftest", REPO / "tests" / "differential" / "conftest.py"
    )
    binary, reason = differential.locate_oracle()
    if binary is None:
        if os.environ.get("TOPOSPREAD_REQUIRE_ORACLE") == "1":
            pytest.fail(f"TOPOSPREAD_REQUIRE_ORACLE=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return Path(binary)


def test_every_workload_places_every_pod_as_upstream(
    bench_run: ModuleType, oracle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "BENCHMARKS.md"
    code = bench_run.main(
        ["--scale", "0.004", "--pod-scale", "1", "--oracle", str(oracle), "--output", str(output)]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    text = output.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(bench_run.WORKLOADS)
    assert all("| yes |" in row for row in rows[1:]), text
    assert "Both engines placed every pod of every workload on the same node." in text
    assert "Command: `python benchmarks/run.py --scale 0.004" in text
    assert "nproc = " in text
    header = [cell.strip() for cell in rows[0].split("|")]
    for row in rows[1:]:
        cells = dict(zip(header, (cell.strip() for cell in row.split("|")), strict=True))
        # Both report the CPU of their loop (the oracle since it reports cpuSeconds).
        float(cells["loop CPU s topospread"])
        float(cells["loop CPU s Go"])


def _outcome(bench_run: ModuleType, *, tie: str | None):
    numbers = {
        "nodes": 10,
        "existingPods": 0,
        "pods": 5,
        "scheduled": 5,
        "podsPerSecond": 100.0,
        "cpuSeconds": 0.05,
        "peakRssMiB": 50.0,
    }
    return bench_run.Outcome(
        bench_run.WORKLOADS[0], (10,), dict(numbers), dict(numbers), True, None, None, tie
    )


def test_placements_that_differ_by_ties_above_parallelism_1_are_not_called_identical(
    bench_run: ModuleType,
) -> None:
    tied = _outcome(bench_run, tie="pod #1 default/p-1: topospread -> n1, Go -> n2")
    row = list(bench_run.table([tied]))[-1]
    assert "not compared (ties; from pod #1 default/p-1)" in row
    assert "| yes |" not in row
    text = "\n".join(bench_run.summary([tied], 16))
    assert "Go's 16 Filter/Score workers" in text
    assert "parity is checked at parallelism 1" in text
    assert "Both engines placed every pod of every workload on the same node." not in text


def test_at_parallelism_1_the_same_placements_are_identical(bench_run: ModuleType) -> None:
    same = _outcome(bench_run, tie=None)
    assert "| yes |" in list(bench_run.table([same]))[-1]
    text = "\n".join(bench_run.summary([same], 1))
    assert "both single-threaded" in text
    assert "Both engines placed every pod of every workload on the same node." in text


def test_workload_selection_and_bad_usage(bench_run: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        bench_run.main(["--workloads", "NoSuchWorkload", "--oracle", str(tmp_path / "x")])
    assert bench_run.main(["--oracle", str(tmp_path / "missing")]) == 2


def test_first_mismatch_is_reported(bench_run: ModuleType, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "py.tsv", tmp_path / "go.tsv"
    ours.write_text("ns/a\tn1\t\nns/b\tn2\t\nns/c\tn3\t\n", encoding="utf-8")
    theirs.write_text("ns/a\tn1\t\nns/b\tn3\t\nns/c\tn2\t\n", encoding="utf-8")
    assert bench_run.compare_placements(ours, theirs) == "pod #1 ns/b: topospread -> n2, Go -> n3"
    theirs.write_text("ns/a\tn1\t\nns/b\tn2\t\n", encoding="utf-8")
    assert bench_run.compare_placements(ours, theirs) == "3 placements from topospread, 2 from Go"
    ours.write_text("ns/a\t-\twhy\n", encoding="utf-8")
    theirs.write_text("ns/a\t-\twhy not\n", encoding="utf-8")
    assert bench_run.compare_placements(ours, theirs) is None  # same placement
    worded = bench_run.compare_placements(ours, theirs, messages=True)
    assert (
        worded
        == "pod #0 ns/a: unschedulable in both, but topospread says 'why' and Go says 'why not'"
    )
    theirs.write_text("ns/a\t-\twhy\n", encoding="utf-8")
    assert bench_run.compare_placements(ours, theirs, messages=True) is None


@pytest.mark.parametrize("scale", [0.004, 1.0])
def test_workload_sizes(bench_run: ModuleType, scale: float) -> None:
    sizes = {w.name: w.scaled(scale, 1.0) for w in bench_run.WORKLOADS}
    if scale == 1.0:
        assert sizes["TopologySpreading"] == (5000, 5000, 5000)
        assert sizes["DefaultTopologySpreading"] == (5000, 5000, 50000)
        assert sizes["SchedulingWithNodeInclusionPolicy"] == (4000, 1000, 4000)
        assert sizes["PodTopologySpread/zone+hostname"] == (1000, 10000, 1000)
    assert all(min(counts) >= 1 for counts in sizes.values())
