"""Scheduling outcomes as values (``fwk.Code`` and ``fwk.Status`` upstream).

``None`` stands for success wherever a status is returned, as a nil ``*Status`` does
upstream; :func:`is_success` treats both alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

__all__ = ["Code", "Status", "as_status", "is_success"]


class Code(IntEnum):
    """Status codes, in upstream order."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    """The node does not fit now; preemption may help."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """The node does not fit and preempting pods there cannot change that."""
    WAIT = 4
    SKIP = 5
    """From PreFilter/PreScore: this plugin has nothing to do; its Filter/Score are not run."""
    PENDING = 6

    @property
    def label(self) -> str:
        """The upstream ``Code.String()`` spelling, e.g. ``UnschedulableAndUnresolvable``."""
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict: a code, the reasons a node was rejected, and who said so."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str | None = None
    """The plugin that produced the status; the framework fills it in."""
    error: BaseException | None = field(default=None, compare=False)
    """The error an Error status wraps (``Status.AsError``): the binding cycle tells a
    pod that is gone (:class:`~topospread.framework.binding.BindingGone`) by it."""

    @classmethod
    def of(cls, code: Code, *reasons: str) -> Status:
        """A status with the given code and reasons."""
        return cls(code, reasons)

    @property
    def is_rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable (``Status.IsRejected``)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def is_skip(self) -> bool:
        """Whether the code is Skip."""
        return self.code is Code.SKIP

    @property
    def message(self) -> str:
        """The reasons joined by ", " (``Status.Message``)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """A copy attributed to ``plugin``."""
        return replace(self, plugin=plugin)


def is_success(status: Status | None) -> bool:
    """True for ``None`` and for a Success status."""
    return status is None or status.code is Code.SUCCESS


def as_status(error: BaseException | str) -> Status:
    """An Error status carrying the error's text (``fwk.AsStatus``)."""
    return Status(
        Code.ERROR, (str(error),), error=error if isinstance(error, BaseException) else None
    )
