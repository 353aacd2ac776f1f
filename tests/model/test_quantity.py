"""Resource quantity parsing and the scheduler's rounding (``resource.Quantity``).

Expected values were checked against k8s.io/apimachinery v0.37.1
``ParseQuantity``/``Value``/``MilliValue``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from topospread.model.quantity import QuantityError, parse_quantity


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
        pytest.param("e3", id="an exponent without digits"),
        pytest.param("1e", id="an exponent without a power"),
        pytest.param("+", id="a lone sign"),
    ],
)
def test_invalid_quantities_are_rejected(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_negative_quantities_round_away_from_zero_like_go() -> None:
    assert parse_quantity("-1.5").value() == -2
    assert parse_quantity("-1.5m").milli_value() == -2
