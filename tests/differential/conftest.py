"""The Go oracle (upstream kube-scheduler v1.37.1) and the machinery shared by the
differential tests: drawing scenarios, running both engines, saving disagreements.

The oracle is ``oracle/bin/oracle`` (or ``$TOPOSPREAD_ORACLE``). It is (re)built with
``bash oracle/build.sh`` (or ``go build``) when missing or older than its sources and Go
is installed. When no oracle can be had the differential tests are skipped, saying why —
unless ``TOPOSPREAD_REQUIRE_ORACLE=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.errors import InputError
from topospread.testing.scenarios import (
    Scenario,
    differ_only_in_preemption,
    differences,
    python_result,
    run_python,
    scenario_documents,
    upstream_result,
)
from topospread.testing.scenarios import (
    draw_full_scenarios as full_scenario_stream,
)
from topospread.testing.scenarios import (
    draw_scenarios as scenario_stream,
)
from topospread.testing.wide import draw_wide_scenarios as wide_scenario_stream
from topospread.testing.wide import sampled_result

REPO = Path(__file__).resolve().parents[2]
ORACLE_DIR = REPO / "oracle"
REGRESSIONS = Path(__file__).resolve().parent / "regressions"
UPSTREAM_VERSION = "v1.37.1"
MAX_SAVED = 5
"""Regression files written per failing run: enough to see a pattern, not a flood."""
PREEMPTION_COMPARED = os.environ.get("TOPOSPREAD_DIFF_LENIENT_PREEMPTION") != "1"
"""The preemption part of the FailedScheduling message and the ``preemption`` result are
compared like everything else. ``TOPOSPREAD_DIFF_LENIENT_PREEMPTION=1`` only counts
scenarios that differ in nothing else, for bisecting a preemption change."""


# -- locating and building the oracle ----------------------------------------------------------


def _newest_source(directory: Path) -> float:
    sources = [*directory.glob("*.go"), directory / "go.mod", directory / "go.sum"]
    return max((p.stat().st_mtime for p in sources if p.exists()), default=0.0)


def _build(binary: Path) -> str | None:
    """Build the oracle; returns why it could not be built, or None."""
    if shutil.which("go") is None:
        return "Go is not installed"
    script = ORACLE_DIR / "build.sh"
    command = (
        ["bash", str(script)]
        if script.exists()
        else ["go", "build", "-o", str(binary.relative_to(ORACLE_DIR)), "."]
    )
    try:
        done = subprocess.run(
            command, cwd=ORACLE_DIR, capture_output=True, text=True, timeout=1800, check=False
        )
    except subprocess.TimeoutExpired:
        return f"`{' '.join(command)}` timed out"
    if done.returncode != 0 or not binary.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return f"`{' '.join(command)}` failed: " + " | ".join(tail)
    return None


def locate_oracle() -> tuple[Path | None, str]:
    """The oracle binary, building it if needed, or None and the reason there is none."""
    explicit = os.environ.get("TOPOSPREAD_ORACLE")
    if explicit:
        path = Path(explicit)
        if path.is_file() and os.access(path, os.X_OK):
            return path, f"TOPOSPREAD_ORACLE={path}"
        return None, f"TOPOSPREAD_ORACLE={path} is not an executable file"
    binary = ORACLE_DIR / "bin" / "oracle"
    if not ORACLE_DIR.is_dir():
        return None, f"no oracle sources at {ORACLE_DIR}"
    fresh = binary.exists() and binary.stat().st_mtime >= _newest_source(ORACLE_DIR)
    if fresh:
        return binary, str(binary)
    problem = _build(binary)
    if problem is None:
        return binary, f"{binary} (rebuilt)"
    if binary.exists() and not oracle_required():
        # A stale binary still runs the same upstream scheduler; only the wrapper moved on.
        # Where the oracle is required, its sources are what is proven: a failed rebuild
        # fails the run instead.
        return binary, f"{binary} (older than its sources; rebuilding failed: {problem})"
    return None, f"the Go oracle is unavailable: {problem}"


def oracle_required() -> bool:
    return os.environ.get("TOPOSPREAD_REQUIRE_ORACLE") == "1"


# -- running it --------------------------------------------------------------------------------


@dataclass
class Oracle:
    """``oracle batch``: one process answers a whole list of requests."""

    binary: Path
    description: str

    def run(
        self, requests: Sequence[dict[str, Any]], seed: int | None = None
    ) -> dict[str, dict[str, Any]]:
        """Responses (``result`` or ``error``) by request id. ``seed`` fixes upstream's own
        random choices (``oracle batch --seed``); None leaves them random, as upstream."""
        process = subprocess.Popen(
            [str(self.binary), "batch", *(["--seed", str(seed)] if seed is not None else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        streams: dict[str, str] = {}

        def drain(name: str, stream: Any) -> None:
            streams[name] = stream.read()

        # Read both pipes in threads while writing, so that neither side blocks the other.
        readers = [
            threading.Thread(target=drain, args=(name, stream), daemon=True)
            for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
        ]
        for reader in readers:
            reader.start()
        assert process.stdin is not None
        try:
            with process.stdin:
                for request in requests:
                    process.stdin.write(json.dumps(request) + "\n")
        except BrokenPipeError:
            pass  # the oracle died: its exit status and stderr are reported below
        for reader in readers:
            reader.join()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        stdout, stderr = streams["stdout"], streams["stderr"]
        if process.returncode != 0:
            raise RuntimeError(f"oracle batch exited {process.returncode}: {stderr.strip()}")
        responses = {}
        for line in stdout.splitlines():
            response = json.loads(line)
            responses[response["id"]] = response
        missing = [r["id"] for r in requests if r["id"] not in responses]
        if missing:
            raise RuntimeError(f"oracle batch gave no answer for {missing[:5]}: {stderr.strip()}")
        return responses

    def bench(self, workload: dict[str, Any], directory: Path) -> list[str]:
        """``oracle bench``: every pod of ``workload`` placed one after the other by
        upstream's cycle at parallelism 1; one placement line per pod."""
        source = directory / "workload.json"
        source.write_text(json.dumps(workload), encoding="utf-8")
        placements = directory / "go.tsv"
        subprocess.run(
            [str(self.binary), "bench", "--input", str(source), "--placements", str(placements)],
            check=True,
            capture_output=True,
            timeout=600,
        )
        return placements.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="session")
def oracle_lookup() -> tuple[Path | None, str]:
    """Where the oracle is (built once per session), or why there is none."""
    return locate_oracle()


@pytest.fixture(scope="session")
def oracle_or_none(oracle_lookup: tuple[Path | None, str]) -> Oracle | None:
    """The oracle, None when it is unavailable (fails instead when CI requires it)."""
    binary, reason = oracle_lookup
    if binary is None:
        if oracle_required():
            pytest.fail(f"TOPOSPREAD_REQUIRE_ORACLE=1 but {reason}", pytrace=False)
        return None
    return Oracle(binary, reason)


@pytest.fixture(scope="session")
def oracle(oracle_or_none: Oracle | None, oracle_lookup: tuple[Path | None, str]) -> Oracle:
    """The oracle; the test is skipped when it is unavailable."""
    if oracle_or_none is None:
        pytest.skip(oracle_lookup[1])
    return oracle_or_none


# -- drawing scenarios -------------------------------------------------------------------------


def draw_scenarios(seed: int, count: int) -> list[Scenario]:
    """``count`` independent scenarios from ``seed`` (how and why: the comment above
    :func:`topospread.testing.scenarios.draw_scenarios`)."""
    drawn = scenario_stream(seed, count)
    assert len(drawn) == count, f"drew {len(drawn)} scenarios, not {count}"
    return drawn


def draw_full_scenarios(seed: int, count: int) -> list[Scenario]:
    """``count`` independent full-profile scenarios from ``seed``."""
    drawn = full_scenario_stream(seed, count)
    assert len(drawn) == count, f"drew {len(drawn)} scenarios, not {count}"
    return drawn


def draw_wide_scenarios(seed: int, count: int, start: int = 0) -> list[Scenario]:
    """Wide scenarios ``start`` .. ``start + count - 1`` of the stream for ``seed``."""
    if start == 0:
        drawn = wide_scenario_stream(seed, count)
    else:
        from topospread.testing.wide import draw_wide_scenario

        drawn = [draw_wide_scenario(seed, index) for index in range(start, start + count)]
    assert len(drawn) == count, f"drew {len(drawn)} scenarios, not {count}"
    return drawn


# -- comparing ---------------------------------------------------------------------------------


@dataclass
class Disagreement:
    index: int
    scenario: Scenario
    upstream: dict[str, Any] | None
    lines: list[str]
    saved: Path | None = None


@dataclass
class Comparison:
    """The outcome of running a list of scenarios through both engines."""

    seed: int
    count: int
    seconds: float
    disagreements: list[Disagreement] = field(default_factory=list)
    preemption_only: list[Disagreement] = field(default_factory=list)
    """Disagreements only in the preemption text (not failures unless PREEMPTION_COMPARED)."""
    upstream_random: list[Disagreement] = field(default_factory=list)
    """Disagreements where the oracle itself, run again, answered differently in every
    field that disagrees (see :func:`upstream_randomness`); not failures."""
    reruns: int = 0
    """Scenarios run through the oracle again to look for upstream randomness."""

    def report(self, replay: str) -> str:
        first = self.disagreements[0]
        where = f"saved to {first.saved.relative_to(REPO)}" if first.saved else "not saved"
        return "\n".join(
            [
                f"{len(self.disagreements)} of {self.count} scenarios (seed {self.seed}) "
                f"disagree with upstream {UPSTREAM_VERSION}.",
                f"First: scenario #{first.index}, {where}.",
                *first.lines,
                f"Replay: {replay}",
                "Saved: " + ", ".join(str(d.saved.name) for d in self.disagreements if d.saved),
            ]
        )


def save_regression(disagreement: Disagreement, seed: int) -> Path:
    """Write the scenario as ``regressions/<hash>.yaml`` with upstream's outcome."""
    scenario = disagreement.scenario
    path = REGRESSIONS / f"{scenario.digest()}.yaml"
    note = (
        f"found by the differential test, seed {seed}, scenario #{disagreement.index}; "
        "topospread disagreed: " + " ".join(" ".join(disagreement.lines).split())
    )
    documents = scenario_documents(scenario, disagreement.upstream, note)
    REGRESSIONS.mkdir(exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.write(f"# Differential scenario {scenario.digest()} (upstream {UPSTREAM_VERSION}).\n")
        out.write("# Format: see README.md in this directory.\n")
        yaml.safe_dump_all(documents, out, sort_keys=False, explicit_start=True)
    return path


RERUN_SEEDS = (1, 2, 3, 4, 5)
"""``oracle batch --seed`` values a disagreeing scenario is run again with."""


def _differing_fields(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    """The compared fields (per node: ``node:<name>``) in which two results differ."""
    fields = {
        key
        for key in (
            "pod",
            "selectedNode",
            "tiedNodes",
            "message",
            "nominatedNodeShortcut",
            "sampled",
        )
        if a.get(key) != b.get(key)
    }
    if (a.get("preemption") or None) != (b.get("preemption") or None):
        fields.add("preemption")
    nodes_a = {n["name"]: n for n in a.get("nodes", [])}
    nodes_b = {n["name"]: n for n in b.get("nodes", [])}
    if list(nodes_a) != list(nodes_b):
        fields.add("node list")
    fields.update(f"node:{name}" for name in nodes_a if nodes_a[name] != nodes_b.get(name))
    return fields


def upstream_randomness(
    python: dict[str, Any], answers: Sequence[dict[str, Any]]
) -> tuple[bool, set[str]]:
    """Whether a disagreement is explained by upstream's own randomness, and in which fields
    the oracle's answers differ among themselves.

    ``answers`` are the oracle's results for one scenario from several runs (different
    ``--seed``s). The disagreement is upstream's randomness only if the oracle's answers
    differ between runs *and* topospread's answer is one of them, whole. An answer that
    mixes fields of several runs, or differs from all of them in a field that varies
    (a whole preemption block, a message), is a disagreement."""
    varying: set[str] = set()
    for other in answers[1:]:
        varying |= _differing_fields(answers[0], other)
    if not varying:
        return False, varying
    return any(not differences(python, a) for a in answers), varying


def same_refusal(upstream: str, python: str | None) -> bool:
    """Whether topospread refused an input as the oracle did: the same words, which the
    oracle prefixes with the input they come from (``pod: ``, ``cluster: ``) and writes on
    one line with single spaces (upstream's ``is 2Gi.  No limit`` arrives as ``2Gi. No``)."""
    if not python:
        return False
    python = " ".join(python.split())
    return upstream == python or upstream.endswith(": " + python)


def compare(
    oracle: Oracle,
    drawn: Sequence[Scenario],
    seed: int,
    *,
    rerun: bool = False,
    start: int = 0,
    save: int = MAX_SAVED,
) -> Comparison:
    """Run every scenario through both engines; save the first few disagreements.

    ``rerun``: a disagreeing scenario goes through the oracle again with each of
    :data:`RERUN_SEEDS`; if upstream's own answers differ between runs in every field
    that disagrees, it is counted in ``upstream_random`` instead (never saved).
    ``start`` numbers the scenarios (``drawn[0]`` is scenario #start of the seed);
    ``save`` is how many disagreements are written to ``regressions/``."""
    started = time.monotonic()
    requests = [scenario.request(str(i)) for i, scenario in enumerate(drawn)]
    outcome: dict[str, Any] = {}

    def ask() -> None:
        try:
            outcome["responses"] = oracle.run(requests)
        except Exception as exc:  # reported below, in the test's thread
            outcome["error"] = exc

    # The oracle works on one core while Python explains on the other.
    asking = threading.Thread(target=ask)
    asking.start()
    ours: list[dict[str, Any] | str] = []
    refusals: list[str | None] = []
    for scenario in drawn:
        refusal = None
        try:
            mine = python_result(run_python(scenario))
            if scenario.sampled:
                mine["sampled"] = sampled_result(scenario)
            ours.append(mine)
        except Exception as exc:
            ours.append(f"python raised {type(exc).__name__}: {exc}")
            if isinstance(exc, InputError):
                refusal = str(exc)
        refusals.append(refusal)
    asking.join()
    if "error" in outcome:
        raise outcome["error"]
    responses = outcome["responses"]
    comparison = Comparison(seed, len(drawn), 0.0)
    for index, (scenario, mine) in enumerate(zip(drawn, ours, strict=True)):
        response = responses[str(index)]
        if "error" in response:
            theirs = None
            lines = [f"upstream rejected the scenario: {response['error']}"]
            if isinstance(mine, str):
                lines.append(mine)
            if same_refusal(response["error"], refusals[index]):
                lines = []  # refused by both, in the same words (an admission plugin, say)
        else:
            theirs = upstream_result(response["result"])
            lines = [mine] if isinstance(mine, str) else differences(mine, theirs)
        if (
            lines
            and not PREEMPTION_COMPARED
            and theirs is not None
            and not isinstance(mine, str)
            and differ_only_in_preemption(mine, theirs)
        ):
            comparison.preemption_only.append(Disagreement(start + index, scenario, theirs, lines))
        elif lines:
            comparison.disagreements.append(Disagreement(start + index, scenario, theirs, lines))
    if rerun and comparison.disagreements:
        _look_for_upstream_randomness(oracle, comparison, ours, start)
    for disagreement in comparison.disagreements[:save]:
        disagreement.saved = save_regression(disagreement, seed)
    comparison.seconds = time.monotonic() - started
    return comparison


def _look_for_upstream_randomness(
    oracle: Oracle, comparison: Comparison, ours: Sequence[Any], start: int
) -> None:
    suspects = [d for d in comparison.disagreements if d.upstream is not None]
    requests = [d.scenario.request(str(d.index)) for d in suspects]
    comparison.reruns += len(requests)
    runs = [oracle.run(requests, seed=rerun_seed) for rerun_seed in RERUN_SEEDS]
    kept = [d for d in comparison.disagreements if d.upstream is None]
    for d in suspects:
        answers = [d.upstream]
        for responses in runs:
            response = responses[str(d.index)]
            if "result" in response:
                answers.append(upstream_result(response["result"]))
        mine = ours[d.index - start]
        random_, varying = (
            (False, set())
            if isinstance(mine, str)
            else upstream_randomness(mine, [a for a in answers if a is not None])
        )
        if random_:
            d.lines = [f"upstream varies between runs in: {', '.join(sorted(varying))}", *d.lines]
            comparison.upstream_random.append(d)
        else:
            if varying:
                d.lines.append(f"(upstream also varies in: {', '.join(sorted(varying))})")
            kept.append(d)
    kept.sort(key=lambda d: d.index)
    comparison.disagreements = kept


@dataclass(frozen=True)
class Differential:
    """What the differential tests use, handed out as a fixture (tests import nothing
    from this conftest: with ``--import-mode=importlib`` it is not an importable module)."""

    regressions: Path = REGRESSIONS
    upstream_version: str = UPSTREAM_VERSION

    @staticmethod
    def draw(seed: int, count: int) -> list[Scenario]:
        return draw_scenarios(seed, count)

    @staticmethod
    def draw_full(seed: int, count: int) -> list[Scenario]:
        return draw_full_scenarios(seed, count)

    @staticmethod
    def draw_wide(seed: int, count: int, start: int = 0) -> list[Scenario]:
        return draw_wide_scenarios(seed, count, start)

    @staticmethod
    def upstream_randomness(
        python: dict[str, Any], answers: Sequence[dict[str, Any]]
    ) -> tuple[bool, set[str]]:
        return upstream_randomness(python, answers)

    @staticmethod
    def same_refusal(upstream: str, python: str | None) -> bool:
        return same_refusal(upstream, python)

    @staticmethod
    def locate_oracle() -> tuple[Path | None, str]:
        return locate_oracle()

    @staticmethod
    def compare(
        oracle: Oracle,
        drawn: Sequence[Scenario],
        seed: int,
        *,
        rerun: bool = False,
        start: int = 0,
        save: int = MAX_SAVED,
    ) -> Comparison:
        return compare(oracle, drawn, seed, rerun=rerun, start=start, save=save)


@pytest.fixture(scope="session")
def differential() -> Differential:
    return Differential()


# -- reporting seeds ---------------------------------------------------------------------------

_RUNS: list[str] = []


@pytest.fixture
def report_run() -> Iterator[Any]:
    """Lets a test add a line (seed, count, time) to the terminal summary."""
    return _RUNS.append


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _RUNS:
        terminalreporter.section("differential runs")
        for line in _RUNS:
            terminalreporter.write_line(line)
