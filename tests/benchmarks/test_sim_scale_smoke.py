"""The scale benchmark script keeps working (a seconds-long run, not a measurement)."""

from __future__ import annotations

import json


def test_sim_scale_runs_a_small_scenario(capsys, benchmark_script) -> None:
    module = benchmark_script("sim_scale")
    assert module.main(["--nodes", "12", "--pods", "30", "--zones", "3"]) == 0
    numbers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert numbers["nodes"] == 12
    assert numbers["scheduled"] == 30
    assert numbers["pods_per_second"] > 0
    assert numbers["peak_rss_mib"] > 0
