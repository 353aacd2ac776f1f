"""The differential harness proves what it claims: upstream's randomness excuses only an
answer upstream itself gave, a shared refusal must be in the same words, and a required
oracle whose rebuild fails is not replaced by a stale binary."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"


def _answer(selected: str, message: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "pod": "default/p",
        "nodes": [],
        "selectedNode": selected,
        "tiedNodes": [selected],
        "message": message,
        **extra,
    }


def test_an_answer_upstream_gave_in_one_of_its_runs_is_upstream_randomness(differential) -> None:
    runs = [_answer("n1"), _answer("n2")]
    random_, varying = differential.upstream_randomness(_answer("n2"), runs)
    assert random_
    assert "selectedNode" in varying


def test_an_answer_mixing_fields_of_different_runs_is_a_disagreement(differential) -> None:
    # The preemption block and the selected node both vary between runs, but no run gave
    # this combination: before issue 25 such an answer passed as "randomness".
    runs = [
        _answer("n1", preemption={"nominatedNode": "n1"}),
        _answer("n2", preemption={"nominatedNode": "n2"}),
    ]
    mixed = _answer("n1", preemption={"nominatedNode": "n2"})
    random_, varying = differential.upstream_randomness(mixed, runs)
    assert not random_
    assert {"selectedNode", "preemption"} <= varying


def test_an_answer_that_differs_where_upstream_never_varies_is_a_disagreement(differential) -> None:
    runs = [_answer("n1"), _answer("n1")]
    assert differential.upstream_randomness(_answer("n2"), runs) == (False, set())


def test_only_a_refusal_in_the_same_words_counts_as_agreeing(differential) -> None:
    words = 'pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found'
    assert differential.same_refusal(f"pod: {words}", words)
    assert differential.same_refusal(words, words)
    assert not differential.same_refusal(f"pod: {words}", 'pods "p" is forbidden: other')
    assert not differential.same_refusal(f"pod: {words}", None)


def test_a_required_oracle_whose_rebuild_fails_fails_the_run(
    differential, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    binary = ORACLE_DIR / "bin" / "oracle"
    if not binary.exists():
        pytest.skip("no oracle binary to make stale")
    # A Go toolchain that cannot build: the binary is older than a touched source.
    fake_go = tmp_path / "go"
    fake_go.write_text("#!/bin/sh\necho 'build failed on purpose' >&2\nexit 1\n")
    fake_go.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TOPOSPREAD_ORACLE", raising=False)
    source = ORACLE_DIR / "main.go"
    stat = source.stat()
    future = time.time() + 3600
    os.utime(source, (future, future))
    try:
        monkeypatch.setenv("TOPOSPREAD_REQUIRE_ORACLE", "1")
        found, reason = differential.locate_oracle()
        assert found is None
        assert "build failed on purpose" in reason
        monkeypatch.setenv("TOPOSPREAD_REQUIRE_ORACLE", "0")
        found, reason = differential.locate_oracle()
        assert found == binary
        assert "older than its sources" in reason
    finally:
        os.utime(source, (stat.st_atime, stat.st_mtime))
