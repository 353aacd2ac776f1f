"""Kubernetes resource quantities (``k8s.io/apimachinery/pkg/api/resource.Quantity``).

Parsed as ``resource.ParseQuantity`` parses them (``parseQuantityString``,
``suffixHandler.interpret``): an optional sign, digits with an optional ``.``, then a
suffix that is a decimal SI unit (n, u, m, "", k, M, G, T, P, E), a binary one (Ki, Mi,
Gi, Ti, Pi, Ei) or a decimal exponent (``e3``, ``E-2``, read with ``ParseInt(..., 64)`` and
truncated to int32). Upstream accepts a missing number (``+``, ``.``, ``Ki`` and ``e3``
are all zero), and so does this.

The scheduler reads a quantity through ``MilliValue`` (CPU) and ``Value`` (the rest).
Upstream keeps small values as an ``int64Amount`` (value, scale) and others as an
``inf.Dec`` rounded up to nano units, with binary and decimal-SI values capped at
2^63-1; its ``ScaledValue`` then works in int64 and overflows silently:
``1e99999999`` reads as 0 (``positiveScaleInt64`` gives up and returns 0), ``100E`` too.
:func:`parse_quantity` computes ``MilliValue`` and ``Value`` exactly as that Go code
does, in bounded time whatever the exponent, and keeps :attr:`Quantity.amount` as the
exact value when both readings agree with it; otherwise ``amount`` is what the scheduler
reads for the resource: the ``MilliValue`` for cpu, the ``Value`` for the rest
(``9223372036854775807`` cpu reads as -1000 millicores upstream, and here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

__all__ = [
    "MAX_QUANTITY_LENGTH",
    "Quantity",
    "QuantityError",
    "is_negative_quantity",
    "parse_quantity",
    "quantity_text",
]

MAX_QUANTITY_LENGTH: Final = 1000
"""The longest quantity text read (a real one has at most about 30 characters)."""

_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_SUFFIX_WRONG = "unable to parse quantity's suffix"
_DECIMAL_SI: Final = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SI: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")
_INT64_MAX: Final = 2**63 - 1
_INT64_MIN: Final = -(2**63)
_UINT64: Final = 2**64
_MAX_INT64_FACTORS: Final = 18


class QuantityError(ValueError):
    """A string that is not a valid quantity; the message matches upstream's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A resource amount as the scheduler reads it."""

    amount: Fraction
    """The value in base units (cores, bytes, counts), as the scheduler reads it."""
    format: str = field(default="DecimalSI", compare=False)
    """``DecimalSI``, ``BinarySI`` or ``DecimalExponent``, from the suffix it was written
    with: how upstream prints it (:func:`quantity_text`); not part of its value."""

    def milli_value(self) -> int:
        """The value in thousandths, rounded away from zero (``Quantity.MilliValue``)."""
        return _away_from_zero(self.amount * 1000)

    def value(self) -> int:
        """The value in base units, rounded away from zero (``Quantity.Value``)."""
        return _away_from_zero(self.amount)

    def __str__(self) -> str:
        if self.amount.denominator == 1:
            return str(self.amount.numerator)
        return f"{self.milli_value()}m"


def _away_from_zero(amount: Fraction) -> int:
    # ScaledValue rounds the magnitude up: 1.5 -> 2 and -1.5 -> -2.
    return math.ceil(amount) if amount >= 0 else -math.ceil(-amount)


def _wrap(value: int) -> int:
    """Two's-complement int64, as Go's ``big.Int.Int64`` and int64 multiplication give."""
    value %= _UINT64
    return value - _UINT64 if value > _INT64_MAX else value


def _split(text: str) -> tuple[bool, str, str, str]:
    # parseQuantityString: (positive, num, denom, suffix).
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    # suffixHandler.interpret: (base, exponent, format).
    if suffix in _DECIMAL_SI:
        return 10, _DECIMAL_SI[suffix], "DecimalSI"
    if suffix in _BINARY_SI:
        return 2, _BINARY_SI[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if not body or not set(body) <= _DIGITS:
            raise QuantityError(_SUFFIX_WRONG)
        parsed = int(digits)
        if not _INT64_MIN <= parsed <= _INT64_MAX:
            raise QuantityError(_SUFFIX_WRONG)
        # int32(parsed): the exponent is truncated to 32 bits.
        exponent = parsed % 2**32
        return 10, exponent - 2**32 if exponent >= 2**31 else exponent, "DecimalExponent"
    raise QuantityError(_SUFFIX_WRONG)


def _int64_multiply(a: int, b: int) -> tuple[int, bool]:
    if a in (0, 1) or b in (0, 1):
        return _wrap(a * b), True
    if _INT64_MIN in (a, b):
        return 0, False
    product = _wrap(a * b)
    return product, _go_div(product, b) == a


def _go_div(a: int, b: int) -> int:
    # Go's integer division truncates toward zero.
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _positive_scale(base: int, scale: int) -> int:
    # positiveScaleInt64, whose result ScaledValue takes without looking at ok.
    direct = {0: 1, 1: 10, 2: 100, 3: 1000, 6: 10**6, 9: 10**9}
    if scale in direct:
        return base if scale == 0 else _int64_multiply(base, direct[scale])[0]
    value = base
    for _ in range(scale):
        value, ok = _int64_multiply(value, 10)
        if not ok:
            return 0
    return value


def _negative_scale(base: int, scale: int) -> int:
    # negativeScaleInt64: divide by 10^scale, rounding away from zero.
    divisor = 10 ** min(scale, 40)
    quotient = _go_div(base, divisor)
    if quotient * divisor != base:
        quotient += 1 if base > 0 else -1
    return quotient


def _int_amount_scaled(value: int, scale: int, new_scale: int) -> int:
    # int64Amount.AsScaledInt64.
    if scale < new_scale:
        return _negative_scale(value, new_scale - scale)
    return _positive_scale(value, scale - new_scale)


def _dec_scaled(mantissa: int, power: int, new_scale: int) -> int:
    """``scaledValue`` of an ``inf.Dec`` at scale 9 whose unscaled value is mantissa*10^power."""
    dif = 9 + new_scale
    if power >= dif:
        # An exact division; Int64() keeps the low 64 bits, so a modular power suffices.
        return _wrap(mantissa * pow(10, power - dif, _UINT64))
    unscaled = mantissa * 10**power
    if unscaled < _INT64_MAX and dif < 19:
        low = _wrap(unscaled)
        divide = 10**dif
        result = _go_div(low, divide)
        return result + 1 if low - result * divide != 0 else result
    quotient, remainder = divmod(unscaled, 10**dif)
    return _wrap(_wrap(quotient) + 1) if remainder else _wrap(quotient)


def parse_quantity(text: str, resource: str | None = None) -> Quantity:
    """Parse a quantity as ``resource.ParseQuantity``; raises :class:`QuantityError` with its words.

    ``resource`` names what it measures: when Go's int64 arithmetic makes the scheduler
    read something other than the exact value, ``cpu`` keeps the ``MilliValue`` reading
    and every other resource the ``Value`` reading.
    """
    if not text:
        raise QuantityError(_FORMAT_WRONG)
    if len(text) > MAX_QUANTITY_LENGTH:
        raise QuantityError(f"longer than {MAX_QUANTITY_LENGTH} characters")
    if text == "0":
        return Quantity(Fraction(0))
    positive, num, denom, suffix = _split(text)
    base, exponent, form = _interpret(suffix)
    quantity = _parse(positive, num, denom, base, exponent, form, text, resource)
    return quantity if form == "DecimalSI" else replace(quantity, format=form)


def _parse(
    positive: bool,
    num: str,
    denom: str,
    base: int,
    exponent: int,
    form: str,
    text: str,
    resource: str | None,
) -> Quantity:
    digits = int(num + denom)
    exact_power = exponent - len(denom) if base == 10 else -len(denom)
    binary = 2**exponent if base == 2 else 1
    sign = 1 if positive else -1

    # The fast path of ParseQuantity: an int64Amount when the digits fit.
    if base == 10:
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        precision = -1
    scale = (exponent if base == 10 else 0) - len(denom)
    if precision >= 0 and scale >= -9 and digits <= _INT64_MAX:
        product, ok = _int64_multiply(digits, binary)
        if ok:
            value = sign * product
            milli = _int_amount_scaled(value, scale, -3)
            units = _int_amount_scaled(value, scale, 0)
            return _settle(sign, digits * binary, exact_power, milli, units, resource)

    # The inf.Dec path: the exact value, rounded up to nano units, capped for SI formats.
    if not digits:
        return Quantity(Fraction(0))
    if exact_power > 40:
        if form != "DecimalExponent":
            return _settle_capped(text, sign, resource)
        mantissa = sign * digits * binary
        milli = _dec_scaled(mantissa, exact_power + 9, -3)
        units = _dec_scaled(mantissa, exact_power + 9, 0)
        return _settle(sign, None, None, milli, units, resource)
    if exact_power < -(len(str(digits)) + 20):
        # Far below a nano unit: rounded up to one nano.
        return _settle(sign, None, None, sign, sign, resource)
    amount = Fraction(digits * binary) * Fraction(10) ** exact_power
    if amount > _INT64_MAX and form != "DecimalExponent":
        return _settle_capped(text, sign, resource)
    nano = math.ceil(amount * 10**9)
    milli = _dec_scaled(sign * nano, 0, -3)
    units = _dec_scaled(sign * nano, 0, 0)
    return _settle(sign, digits * binary, exact_power, milli, units, resource)


def is_negative_quantity(text: str) -> bool:
    """Whether a valid quantity's written value is below zero (``Cmp(Quantity{}) < 0``).

    Read from the text: the scheduler's int64 reading may have wrapped to either sign.
    """
    if not text.startswith("-"):
        return False
    _, num, denom, _ = _split(text)
    return (num + denom).strip("0") != ""


def _settle_capped(text: str, sign: int, resource: str | None) -> Quantity:
    # maxAllowed: an inf.Dec of 2^63-1 at scale 0; MilliValue multiplies it by 1000 in int64.
    milli = _wrap(sign * _INT64_MAX * 1000)
    return _settle(sign, None, None, milli, sign * _INT64_MAX, resource)


def _settle(
    sign: int,
    magnitude: int | None,
    power: int | None,
    milli: int,
    units: int,
    resource: str | None,
) -> Quantity:
    if magnitude is not None and power is not None and power <= 40:
        exact = sign * Fraction(magnitude) * Fraction(10) ** power
        if _away_from_zero(exact * 1000) == milli and _away_from_zero(exact) == units:
            return Quantity(exact)
    # Go's int64 reading differs from the exact value: keep what the scheduler reads, the
    # MilliValue for cpu (NodeResourcesFit's MilliCPU) and the Value for everything else.
    if resource == "cpu":
        return Quantity(Fraction(milli, 1000))
    return Quantity(Fraction(units))


_SI_SUFFIXES: Final = {power: suffix for suffix, power in _DECIMAL_SI.items()}
_BINARY_SUFFIXES: Final = {power // 10: suffix for suffix, power in _BINARY_SI.items()}


def quantity_text(quantity: Quantity) -> str:
    """``Quantity.String()``: the canonical text in the quantity's format.

    Decimal: the smallest integer mantissa whose exponent is a multiple of 3 (``100m``,
    ``1500M``, ``2k``), with an SI suffix, or ``eN`` for ``DecimalExponent`` and exponents
    past the SI table. Binary: an integer times the largest power of 1024 that divides it
    (``1Gi``), for magnitudes of at least 1024 that are whole; otherwise decimal.
    Values below one nano unit are shown rounded up to it, as upstream stores them.
    """
    amount = quantity.amount
    if amount == 0:
        return "0"
    form = quantity.format
    if form == "BinarySI" and (abs(amount) < 1024 or amount.denominator != 1):
        form = "DecimalSI"
    if form == "BinarySI":
        mantissa, power = int(amount), 0
        while mantissa % 1024 == 0 and power < max(_BINARY_SUFFIXES):
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_SUFFIXES.get(power, '')}"
    sign = -1 if amount < 0 else 1
    nano = math.ceil(abs(amount) * 10**9)
    mantissa, power = nano, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        power += 1
    while power % 3:
        mantissa *= 10
        power -= 1
    mantissa *= sign
    if form == "DecimalSI" and power in _SI_SUFFIXES:
        return f"{mantissa}{_SI_SUFFIXES[power]}"
    return f"{mantissa}e{power}" if power else str(mantissa)
