"""Kubernetes resource quantities (``k8s.io/apimachinery/pkg/api/resource.Quantity``).

A quantity is ``<sign><digits>[.<digits>]<suffix>`` where the suffix is a binary SI
unit (Ki, Mi, Gi, Ti, Pi, Ei), a decimal SI unit (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (``e3``, ``E-2``). Values are kept exactly as fractions; the scheduler
reads them through :meth:`Quantity.milli_value` (CPU) and :meth:`Quantity.value`
(everything else), both of which round up like Go's ``ScaledValue``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Quantity", "QuantityError", "parse_quantity"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(.*)", re.ASCII)
_EXPONENT = re.compile(r"[eE]([+-]?\d+)", re.ASCII)


class QuantityError(ValueError):
    """A string that is not a valid quantity; the message matches upstream's."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact resource amount."""

    amount: Fraction
    """The value in base units (cores, bytes, counts)."""

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


def parse_quantity(text: str) -> Quantity:
    """Parse a quantity exactly; raises :class:`QuantityError` like ``resource.ParseQuantity``."""
    if not text:
        raise QuantityError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    match = _NUMBER.fullmatch(text.strip() if text != text.strip() else text)
    if match is None or text != text.strip():
        raise QuantityError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    sign, whole, fraction, suffix = match.groups()
    if not whole and not fraction:
        raise QuantityError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    digits = Fraction(int(whole or "0"))
    if fraction:
        digits += Fraction(int(fraction), 10 ** len(fraction))
    if suffix in _BINARY:
        scale = Fraction(_BINARY[suffix])
    elif suffix in _DECIMAL:
        scale = _DECIMAL[suffix]
    else:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            raise QuantityError("unable to parse quantity's suffix")
        power = int(exponent.group(1))
        scale = Fraction(10) ** power
    amount = digits * scale
    return Quantity(-amount if sign == "-" else amount)
