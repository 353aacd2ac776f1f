"""Taint/toleration matching.

Cases follow k8s.io/api core/v1 toleration_test.go (v0.37.1: TestTolerationToleratesTaint
and TestCompareNumericValues) and component-helpers scheduling/corev1 helpers_test.go.
"""

from __future__ import annotations

import pytest

from topospread.model.objects import Taint, Toleration
from topospread.model.taints import (
    do_not_schedule_taints,
    find_matching_untolerated_taint,
    is_decimal_integer,
    toleration_tolerates_taint,
    tolerations_tolerate_taint,
)

SLA = "node.kubernetes.io/sla"


@pytest.mark.parametrize(
    ("toleration", "taint", "gate", "want"),
    [
        pytest.param(
            Toleration("foo", "Exists", effect="NoSchedule"),
            Taint("foo", "NoSchedule"),
            False,
            True,
            id="Exists with the same key and effect tolerates a valueless taint",
        ),
        pytest.param(
            Toleration("foo", "Exists", effect="NoSchedule"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            True,
            id="Exists tolerates any value",
        ),
        pytest.param(
            Toleration("", "Exists", effect="NoSchedule"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            True,
            id="an empty key with Exists tolerates every key",
        ),
        pytest.param(
            Toleration("foo", "Equal", "bar", "NoSchedule"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            True,
            id="Equal with the same key effect and value tolerates",
        ),
        pytest.param(
            Toleration("foo", "", "bar", "NoSchedule"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            True,
            id="an empty operator means Equal",
        ),
        pytest.param(
            Toleration("foo", "Equal", "value1", "NoSchedule"),
            Taint("foo", "NoSchedule", "value2"),
            False,
            False,
            id="Equal with another value does not tolerate",
        ),
        pytest.param(
            Toleration("foo", "Equal", "bar", "NoExecute"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            False,
            id="another effect does not tolerate",
        ),
        pytest.param(
            Toleration("foo", "Exists"),
            Taint("foo", "NoExecute"),
            False,
            True,
            id="an empty effect tolerates every effect",
        ),
        pytest.param(
            Toleration("other", "Exists"),
            Taint("foo", "NoExecute"),
            False,
            False,
            id="another key does not tolerate",
        ),
        pytest.param(
            Toleration("foo", "Bogus", "bar"),
            Taint("foo", "NoSchedule", "bar"),
            False,
            False,
            id="an unknown operator tolerates nothing",
        ),
        pytest.param(
            Toleration(SLA, "Gt", "750", "NoSchedule"),
            Taint(SLA, "NoSchedule", "950"),
            False,
            False,
            id="Gt tolerates nothing while the gate is off (its 1.37 default)",
        ),
        pytest.param(
            Toleration(SLA, "Gt", "950", "NoSchedule"),
            Taint(SLA, "NoSchedule", "800"),
            True,
            False,
            id="Gt rejects a smaller taint value",
        ),
        pytest.param(
            Toleration(SLA, "Gt", "750", "NoSchedule"),
            Taint(SLA, "NoSchedule", "950"),
            True,
            True,
            id="Gt tolerates a larger taint value",
        ),
        pytest.param(
            Toleration(SLA, "Lt", "800", "NoSchedule"),
            Taint(SLA, "NoSchedule", "950"),
            True,
            False,
            id="Lt rejects a larger taint value",
        ),
        pytest.param(
            Toleration(SLA, "Lt", "950", "NoSchedule"),
            Taint(SLA, "NoSchedule", "800"),
            True,
            True,
            id="Lt tolerates a smaller taint value",
        ),
        pytest.param(
            Toleration(SLA, "Gt", "950", "NoSchedule"),
            Taint(SLA, "NoSchedule", "950"),
            True,
            False,
            id="Gt rejects an equal value",
        ),
        pytest.param(
            Toleration(SLA, "Gt", "950", "NoSchedule"),
            Taint(SLA, "NoSchedule", "high"),
            True,
            False,
            id="Gt rejects a non-numeric taint value",
        ),
        pytest.param(
            Toleration("test-key", "Gt", "-100", "NoSchedule"),
            Taint("test-key", "NoSchedule", "-200"),
            True,
            False,
            id="Gt rejects a smaller negative value",
        ),
        pytest.param(
            Toleration("", "Lt", "100"),
            Taint("any", "NoSchedule", "5"),
            True,
            True,
            id="Lt with an empty key compares every taint",
        ),
    ],
)
def test_toleration_tolerates_taint(
    toleration: Toleration, taint: Taint, gate: bool, want: bool
) -> None:
    assert toleration_tolerates_taint(toleration, taint, gate) is want


@pytest.mark.parametrize(
    ("op", "toleration_value", "taint_value", "want"),
    [
        pytest.param("Gt", "100", "200", True, id="Gt with a greater taint value"),
        pytest.param("Gt", "200", "100", False, id="Gt with a smaller taint value"),
        pytest.param("Gt", "100", "100", False, id="Gt with an equal value"),
        pytest.param("Gt", "-100", "-50", True, id="Gt with greater negative numbers"),
        pytest.param("Gt", "-50", "-100", False, id="Gt with smaller negative numbers"),
        pytest.param("Gt", "0", "1", True, id="Gt from zero to one"),
        pytest.param(
            "Gt", "9223372036854775806", "9223372036854775807", True, id="Gt near max int64"
        ),
        pytest.param("Lt", "200", "100", True, id="Lt with a smaller taint value"),
        pytest.param("Lt", "100", "200", False, id="Lt with a greater taint value"),
        pytest.param("Lt", "100", "100", False, id="Lt with an equal value"),
        pytest.param("Lt", "-50", "-100", True, id="Lt with smaller negative numbers"),
        pytest.param("Lt", "-100", "-50", False, id="Lt with greater negative numbers"),
        pytest.param("Lt", "0", "-1", True, id="Lt from zero to minus one"),
        pytest.param("Gt", "abc", "100", False, id="a non-numeric toleration value fails"),
        pytest.param("Gt", "", "100", False, id="an empty toleration value fails"),
        pytest.param("Gt", "0100", "200", False, id="a leading zero in the toleration fails"),
        pytest.param("Gt", "+100", "200", False, id="a plus sign in the toleration fails"),
        pytest.param("Gt", "100.5", "200", False, id="a decimal point fails"),
        pytest.param("Gt", "-", "100", False, id="a lone minus fails"),
        pytest.param("Gt", "100", "xyz", False, id="a non-numeric taint value fails"),
        pytest.param("Gt", "100", "", False, id="an empty taint value fails"),
        pytest.param("Gt", "100", "0200", False, id="a leading zero in the taint fails"),
        pytest.param("Lt", "100", "+200", False, id="a plus sign in the taint fails"),
        pytest.param("Lt", "100", " 200 ", False, id="spaces in the taint fail"),
        pytest.param("Gt", "0", "0", False, id="Gt with both zero"),
        pytest.param("Lt", "0", "0", False, id="Lt with both zero"),
        pytest.param("Gt", "0", "9223372036854775807", True, id="Gt with max int64 as taint"),
        pytest.param("Lt", "0", "-9223372036854775808", True, id="Lt with min int64 as taint"),
        pytest.param("Gt", "0", "9223372036854775808", False, id="a value past int64 fails"),
        pytest.param("Gt", "-0", "1", False, id="minus zero fails"),
    ],
)
def test_numeric_comparison(op: str, toleration_value: str, taint_value: str, want: bool) -> None:
    toleration = Toleration("k", op, toleration_value, "NoSchedule")
    assert (
        toleration_tolerates_taint(toleration, Taint("k", "NoSchedule", taint_value), True) is want
    )


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param("0", True, id="zero is a decimal integer"),
        pytest.param("-12", True, id="a negative number is a decimal integer"),
        pytest.param("00", False, id="double zero is not"),
        pytest.param("٣", False, id="a non-ASCII digit is not"),
    ],
)
def test_is_decimal_integer(value: str, want: bool) -> None:
    assert is_decimal_integer(value) is want


TAINTS = (
    Taint("soft", "PreferNoSchedule"),
    Taint("a", "NoSchedule", "1"),
    Taint("b", "NoExecute"),
)


@pytest.mark.parametrize(
    ("tolerations", "include", "want"),
    [
        pytest.param((), do_not_schedule_taints, TAINTS[1], id="the first untolerated hard taint"),
        pytest.param(
            (Toleration("a", "Equal", "1"),),
            do_not_schedule_taints,
            TAINTS[2],
            id="tolerated taints are passed over",
        ),
        pytest.param(
            (Toleration("a", "Exists"), Toleration("b", "Exists")),
            do_not_schedule_taints,
            None,
            id="every hard taint tolerated",
        ),
        pytest.param((), None, TAINTS[0], id="no filter includes PreferNoSchedule"),
        pytest.param(
            (Toleration(operator="Exists"),), None, None, id="a wildcard toleration tolerates all"
        ),
    ],
)
def test_find_matching_untolerated_taint(tolerations, include, want) -> None:
    assert find_matching_untolerated_taint(TAINTS, tolerations, include) == want


def test_tolerations_tolerate_taint_needs_one_match() -> None:
    taint = Taint("a", "NoSchedule", "1")
    assert tolerations_tolerate_taint((Toleration("x", "Exists"), Toleration("a", "Exists")), taint)
    assert not tolerations_tolerate_taint((), taint)


@pytest.mark.parametrize(
    ("effect", "want"),
    [
        pytest.param("NoSchedule", True, id="NoSchedule blocks scheduling"),
        pytest.param("NoExecute", True, id="NoExecute blocks scheduling"),
        pytest.param("PreferNoSchedule", False, id="PreferNoSchedule does not"),
    ],
)
def test_do_not_schedule_taints(effect: str, want: bool) -> None:
    assert do_not_schedule_taints(Taint("k", effect)) is want
