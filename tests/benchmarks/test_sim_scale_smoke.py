"""The scale benchmark script keeps working (a seconds-long run, not a measurement)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sim_scale.py"


def test_sim_scale_runs_a_small_scenario(capsys) -> None:
    spec = importlib.util.spec_from_file_location("sim_scale", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--nodes", "12", "--pods", "30", "--zones", "3"]) == 0
    numbers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert numbers["nodes"] == 12
    assert numbers["scheduled"] == 30
    assert numbers["pods_per_second"] > 0
    assert numbers["peak_rss_mib"] > 0
