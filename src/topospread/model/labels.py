"""Label selectors with the semantics of k8s.io/apimachinery/pkg/labels.

Three facts matter for topology spreading and are easy to get wrong:

* a nil ``labelSelector`` converts to :data:`NOTHING`, which matches no pod;
* ``labelSelector: {}`` converts to :data:`EVERYTHING`, which matches every pod and is
  *empty* (``Selector.empty`` is true), while :data:`NOTHING` is not empty;
* requirements are kept sorted by key, as ``internalSelector.Add`` keeps them.

Selectors here are built from objects that already passed validation, so keys and
values are not re-validated (upstream ``NewRequirement`` would).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "Operator",
    "Requirement",
    "Selector",
    "parse_int64",
    "selector_from_set",
]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def parse_int64(text: str) -> int | None:
    """Parse like Go's ``strconv.ParseInt(text, 10, 64)``; ``None`` on any error."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


class Operator(Enum):
    """Selector operators (``selection.Operator``)."""

    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` requirement of a selector."""

    key: str
    """The label key."""
    operator: Operator
    """How the label's value is compared."""
    values: frozenset[str] = frozenset()
    """The compared values; empty for Exists and DoesNotExist."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement (``Requirement.Matches``)."""
        op = self.operator
        if op is Operator.IN or op is Operator.EQUALS or op is Operator.DOUBLE_EQUALS:
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op is Operator.NOT_IN or op is Operator.NOT_EQUALS:
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        # Gt / Lt: the label must exist and parse as an int64, as must the single value.
        value = labels.get(self.key)
        if value is None or len(self.values) != 1:
            return False
        have = parse_int64(value)
        want = parse_int64(next(iter(self.values)))
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        values = ",".join(sorted(self.values))
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op is Operator.IN:
            return f"{self.key} in ({values})"
        if op is Operator.NOT_IN:
            return f"{self.key} notin ({values})"
        if op is Operator.GREATER_THAN:
            return f"{self.key}>{values}"
        if op is Operator.LESS_THAN:
            return f"{self.key}<{values}"
        return f"{self.key}{op.value}{values}"


@dataclass(frozen=True, slots=True)
class Selector:
    """A label selector: the AND of its requirements, or NOTHING when ``requirements`` is None."""

    requirements: tuple[Requirement, ...] | None
    """Sorted by key; ``()`` selects everything, ``None`` selects nothing."""

    @property
    def empty(self) -> bool:
        """True only for a selector without requirements (``Selector.Empty``); NOTHING is not."""
        return self.requirements is not None and not self.requirements

    @property
    def is_nothing(self) -> bool:
        """True for the selector a nil labelSelector converts to."""
        return self.requirements is None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set is selected."""
        requirements = self.requirements
        if requirements is None:
            return False
        return all(requirement.matches(labels) for requirement in requirements)

    def add(self, extra: Iterable[Requirement]) -> Selector:
        """A copy with more requirements, kept sorted by key (``internalSelector.Add``).

        Adding to NOTHING yields NOTHING, as ``nothingSelector.Add`` does.
        """
        if self.requirements is None:
            return self
        merged = sorted((*self.requirements, *extra), key=lambda r: r.key)
        return Selector(tuple(merged))

    def __str__(self) -> str:
        if self.requirements is None:
            return "<nothing>"
        if not self.requirements:
            return "<everything>"
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector(())
"""Matches every label set; what ``labelSelector: {}`` converts to."""

NOTHING = Selector(None)
"""Matches no label set; what a nil ``labelSelector`` converts to."""


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """An equality selector ``k1=v1,k2=v2`` (``labels.SelectorFromSet``); empty set ⇒ EVERYTHING."""
    return Selector(
        tuple(
            Requirement(key, Operator.EQUALS, frozenset((value,)))
            for key, value in sorted(labels.items())
        )
    )
