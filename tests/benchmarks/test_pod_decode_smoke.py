"""The pod decoding benchmark keeps working (a seconds-long run, not a measurement)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "pod_decode.py"


def test_pod_decode_times_every_case_and_reaches_the_cache(capsys) -> None:
    spec = importlib.util.spec_from_file_location("pod_decode", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--repeat", "1", "--round", "50"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 5
    for line in lines[1:]:
        assert float(line.split()[0]) > 0
