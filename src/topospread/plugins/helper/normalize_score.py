"""Score normalization shared by several plugins (upstream ``helper/normalize_score.go``).

``DefaultNormalizeScore`` maps raw scores in ``[0, max(scores)]`` onto
``[0, max_priority]`` with int64 arithmetic: ``score = max_priority * score // max``,
then ``max_priority - score`` when reversed. When every score is 0 the scores stay 0,
or all become ``max_priority`` when reversed. NodeAffinity normalizes this way,
TaintToleration normalizes reversed.
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.interfaces import NodeScore
from topospread.framework.status import Status

__all__ = ["default_normalize_score", "go_div"]


def go_div(numerator: int, denominator: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` on integers does.

    Python's ``//`` floors instead: ``-7 // 2 == -4`` while Go gives ``-3``.
    """
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


def default_normalize_score(
    max_priority: int, reverse: bool, scores: Sequence[NodeScore]
) -> Status | None:
    """Rewrite ``scores`` in place onto ``0..max_priority`` (``helper.DefaultNormalizeScore``).

    The input scores are assumed non-negative, as upstream assumes. Always succeeds.
    """
    max_count = 0
    for entry in scores:
        max_count = max(max_count, entry.score)
    if max_count == 0:
        if reverse:
            for entry in scores:
                entry.score = max_priority
        return None
    for entry in scores:
        score = go_div(max_priority * entry.score, max_count)
        if reverse:
            score = max_priority - score
        entry.score = score
    return None
