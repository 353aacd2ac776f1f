"""The pod decoding benchmark keeps working (a seconds-long run, not a measurement)."""

from __future__ import annotations


def test_pod_decode_times_every_case_and_reaches_the_cache(capsys, benchmark_script) -> None:
    module = benchmark_script("pod_decode")
    assert module.main(["--repeat", "1", "--round", "50"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 5
    for line in lines[1:]:
        assert float(line.split()[0]) > 0
