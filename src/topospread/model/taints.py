"""Taint and toleration matching (``Toleration.ToleratesTaint`` and the corev1 helpers).

Rules from k8s.io/api core/v1 ``toleration.go`` and
k8s.io/component-helpers ``scheduling/corev1/helpers.go`` at v1.37.1:

* a non-empty toleration effect must equal the taint's effect;
* a non-empty toleration key must equal the taint's key;
* ``Equal`` (or an empty operator) compares values; ``Exists`` matches any value;
* ``Gt``/``Lt`` compare the values as decimal int64 (taint value > or < toleration
  value) only when the alpha gate ``TaintTolerationComparisonOperators`` is on (off by
  default in 1.37); with it off such a toleration tolerates nothing. Both values must be
  canonical decimal integers (``content.IsDecimalInteger``: no sign other than a leading
  ``-``, no leading zeros, no ``-0``) that fit in an int64;
* any other operator tolerates nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from topospread.model.objects import Taint, TaintEffect, Toleration

__all__ = [
    "TAINT_NODE_UNSCHEDULABLE",
    "do_not_schedule_taints",
    "find_matching_untolerated_taint",
    "is_decimal_integer",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]

TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
"""The taint key that mirrors ``spec.unschedulable`` (``v1.TaintNodeUnschedulable``)."""

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def is_decimal_integer(value: str) -> bool:
    """Whether ``value`` is ``0`` or a non-zero integer without leading zeros or ``+``.

    ``content.IsDecimalInteger``: ``-`` may lead; ``-0``, ``007`` and ``+1`` are rejected.
    """
    digits = value[1:] if value.startswith("-") else value
    if not digits or not digits.isascii() or not digits.isdigit():
        return False
    if digits[0] == "0":
        return value == "0"
    return True


def _parse_decimal_int64(value: str) -> int | None:
    if not is_decimal_integer(value):
        return None
    number = int(value)
    if number < _INT64_MIN or number > _INT64_MAX:
        return None
    return number


def toleration_tolerates_taint(
    toleration: Toleration,
    taint: Taint,
    comparison_operators: bool = False,
) -> bool:
    """Whether one toleration tolerates one taint (``Toleration.ToleratesTaint``)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator
    if operator in ("", "Equal"):
        return toleration.value == taint.value
    if operator == "Exists":
        return True
    if operator in ("Lt", "Gt"):
        if not comparison_operators:
            return False
        wanted = _parse_decimal_int64(toleration.value)
        if wanted is None:
            return False
        actual = _parse_decimal_int64(taint.value)
        if actual is None:
            return False
        return actual < wanted if operator == "Lt" else actual > wanted
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration],
    taint: Taint,
    comparison_operators: bool = False,
) -> bool:
    """Whether any of the tolerations tolerates the taint (``TolerationsTolerateTaint``)."""
    return any(toleration_tolerates_taint(t, taint, comparison_operators) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    include: Callable[[Taint], bool] | None = None,
    comparison_operators: bool = False,
) -> Taint | None:
    """The first taint, among those ``include`` accepts, that no toleration tolerates.

    ``FindMatchingUntoleratedTaint``: ``None`` means every included taint is tolerated;
    a ``None`` filter includes every taint.
    """
    for taint in taints:
        if include is not None and not include(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_operators):
            return taint
    return None


def do_not_schedule_taints(taint: Taint) -> bool:
    """Whether a taint keeps pods off a node: NoSchedule or NoExecute.

    ``helper.DoNotScheduleTaintsFilterFunc``; PreferNoSchedule only affects scoring.
    """
    return taint.effect in (TaintEffect.NO_SCHEDULE.value, TaintEffect.NO_EXECUTE.value)
