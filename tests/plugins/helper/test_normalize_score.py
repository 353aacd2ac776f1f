"""DefaultNormalizeScore.

Cases follow helper/normalize_score_test.go (v1.37.1, TestDefaultNormalizeScore).
"""

from __future__ import annotations

import pytest

from topospread.framework.interfaces import NodeScore
from topospread.plugins.helper import default_normalize_score, go_div

CASES = [
    pytest.param(
        False,
        [10, 20, 30, 40, 50],
        [20, 40, 60, 80, 100],
        id="scores scale so the largest becomes 100",
    ),
    pytest.param(
        True, [10, 20, 30, 40, 50], [80, 60, 40, 20, 0], id="reversed the largest becomes 0"
    ),
    pytest.param(
        False, [10, 20, 30, 40, 60], [16, 33, 50, 66, 100], id="integer division truncates"
    ),
    pytest.param(
        True,
        [10, 20, 30, 40, 60],
        [84, 67, 50, 34, 0],
        id="reversed truncation happens before subtracting",
    ),
    pytest.param(False, [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], id="all zero stays zero"),
    pytest.param(
        True, [0, 0, 0, 0, 0], [100, 100, 100, 100, 100], id="all zero reversed becomes 100"
    ),
    pytest.param(False, [], [], id="no scores is fine"),
    pytest.param(True, [1], [0], id="a single non-zero score reversed is 0"),
]


@pytest.mark.parametrize(("reverse", "raw", "expected"), CASES)
def test_default_normalize_score(reverse, raw, expected):
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores) is None
    assert [s.score for s in scores] == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0), (-200, 30, -6)],
)
def test_go_div_truncates_toward_zero(a, b, expected):
    assert go_div(a, b) == expected
