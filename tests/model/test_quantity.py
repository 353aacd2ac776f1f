"""Resource quantity parsing and the scheduler's rounding (``resource.Quantity``).

Expected values were checked against k8s.io/apimachinery v0.37.1
``ParseQuantity``/``Value``/``MilliValue``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from topospread.model.quantity import QuantityError, is_negative_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "amount", "milli", "value"),
    [
        pytest.param("100m", Fraction(1, 10), 100, 1, id="100m is a tenth and reads as 1 unit"),
        pytest.param("1Gi", Fraction(2**30), 2**30 * 1000, 2**30, id="1Gi is 2 to the 30"),
        pytest.param(
            "500Mi", Fraction(500 * 2**20), 500 * 2**20 * 1000, 500 * 2**20, id="500Mi is binary"
        ),
        pytest.param("1e3", Fraction(1000), 1_000_000, 1000, id="1e3 is a decimal exponent"),
        pytest.param("1E3", Fraction(1000), 1_000_000, 1000, id="1E3 is an exponent too"),
        pytest.param("1E", Fraction(10**18), 10**21, 10**18, id="a bare E is exa"),
        pytest.param("+", Fraction(0), 0, 0, id="a lone sign is zero upstream"),
        pytest.param("e3", Fraction(0), 0, 0, id="an exponent without digits is zero"),
        pytest.param(".", Fraction(0), 0, 0, id="a lone dot is zero"),
        pytest.param("Ki", Fraction(0), 0, 0, id="a lone suffix is zero"),
        pytest.param("1.5", Fraction(3, 2), 1500, 2, id="1.5 rounds up to 2 units"),
        pytest.param("0.1m", Fraction(1, 10_000), 1, 1, id="0.1m rounds up to one milli"),
        pytest.param("3n", Fraction(3, 10**9), 1, 1, id="nano amounts round up"),
        pytest.param("1e-3", Fraction(1, 1000), 1, 1, id="a negative exponent"),
        pytest.param(".5", Fraction(1, 2), 500, 1, id="a leading dot is allowed"),
        pytest.param("5.", Fraction(5), 5000, 5, id="a trailing dot is allowed"),
        pytest.param("+2k", Fraction(2000), 2_000_000, 2000, id="a plus sign and k"),
        pytest.param("1Ki", Fraction(1024), 1_024_000, 1024, id="Ki is 1024"),
        pytest.param("0", Fraction(0), 0, 0, id="zero"),
    ],
)
def test_parse_quantity(text: str, amount: Fraction, milli: int, value: int) -> None:
    q = parse_quantity(text)
    assert q.amount == amount
    assert q.milli_value() == milli
    assert q.value() == value


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="an empty string"),
        pytest.param("abc", id="letters only"),
        pytest.param("1.2.3", id="two dots"),
        pytest.param("1Gib", id="an unknown suffix"),
        pytest.param("1KI", id="a wrongly cased binary suffix"),
        pytest.param(" 1", id="a leading space"),
        pytest.param("1 ", id="a trailing space"),
        pytest.param("1e", id="an exponent without a power"),
        pytest.param("1e99999999999999999999", id="an exponent beyond int64"),
        pytest.param("1" * 1001, id="longer than the limit"),
    ],
)
def test_invalid_quantities_are_rejected(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_negative_quantities_round_away_from_zero_like_go() -> None:
    assert parse_quantity("-1.5").value() == -2
    assert parse_quantity("-1.5m").milli_value() == -2


@pytest.mark.parametrize(
    ("text", "resource", "amount"),
    [
        # Checked with the oracle (kube-scheduler v1.37.1): these fit a 4-CPU node, since
        # positiveScaleInt64 gives up on overflow and MilliValue returns 0.
        pytest.param("1e99999999", "cpu", Fraction(0), id="a huge exponent reads as 0 cpu"),
        pytest.param("1.5e99999999", "memory", Fraction(0), id="and as 0 bytes"),
        pytest.param("100E", "cpu", Fraction(0), id="100E overflows to 0 millicores"),
        pytest.param("1e30", "cpu", Fraction(0), id="1e30 too"),
        pytest.param("1E", "cpu", Fraction(0), id="1E is 0 millicores"),
        pytest.param("1E", "memory", Fraction(10**18), id="but 10^18 bytes"),
        # MilliValue wraps: (2^63-1) * 1000 in int64 is -1000.
        pytest.param("9223372036854775807", "cpu", Fraction(-1), id="int64 max wraps"),
        pytest.param("9223372036854775807", "memory", Fraction(2**63 - 1), id="as Value"),
        pytest.param("1e-2147483648", "cpu", Fraction(1, 1000), id="tiny rounds up to 1n"),
    ],
)
def test_go_int64_readings(text: str, resource: str, amount: Fraction) -> None:
    assert parse_quantity(text, resource).amount == amount


def test_huge_exponents_are_answered_fast() -> None:
    import time

    started = time.process_time()
    for text in ("1e99999999", "1.5e2147483647", "-1e99999999", "1e4294967297"):
        parse_quantity(text, "cpu")
    assert time.process_time() - started < 0.5


def test_negative_is_the_written_sign() -> None:
    assert is_negative_quantity("-1e99999999")
    assert not is_negative_quantity("-0")
    assert not is_negative_quantity("9223372036854775807")
