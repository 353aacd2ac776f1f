"""The command line keeps numpy's OpenBLAS to one thread unless the user chose a number."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import os
from topospread.cli import single_threaded_numerics
single_threaded_numerics()
import numpy
print(os.environ["OPENBLAS_NUM_THREADS"], len(os.listdir("/proc/self/task")))
"""


def probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    answer = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return answer.stdout.split()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux threads in /proc")
def test_numpy_starts_no_blas_threads_under_the_command_line():
    assert probe() == ["1", "1"]


def test_a_number_the_user_chose_is_kept():
    assert probe(OPENBLAS_NUM_THREADS="3")[0] == "3"
