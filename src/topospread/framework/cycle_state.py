"""Per-cycle state shared by the plugins of one scheduling attempt (``fwk.CycleState``)."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

__all__ = ["CycleState", "StateData", "StateNotFoundError"]

S = TypeVar("S", bound="StateData")


class StateData(Protocol):
    """A value a plugin writes during PreFilter or PreScore and reads later in the cycle.

    ``clone`` must return a copy that later AddPod/RemovePod calls can change without
    affecting the original; immutable state may return itself.
    """

    def clone(self) -> StateData:
        """A copy safe to mutate independently."""
        ...


class StateNotFoundError(LookupError):
    """Raised by :meth:`CycleState.read` when a key was never written (e.g. PreFilter skipped)."""


class CycleState:
    """A typed key-value store for one scheduling cycle, plus the plugins to skip."""

    __slots__ = ("_data", "feasible_rows", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, StateData] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        """Plugins whose PreFilter returned Skip; their Filter is not run."""
        self.skip_score_plugins: frozenset[str] = frozenset()
        """Plugins whose PreScore returned Skip; their Score is not run."""
        self.feasible_rows: Any = None
        """When the cycle found the feasible nodes in bulk: their rows in the snapshot's
        node table (a NumPy int array), in the order PreScore receives the nodes."""

    def write(self, key: str, value: StateData) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = value

    def read(self, key: str, kind: type[S]) -> S:
        """The value under ``key``, checked to be a ``kind``."""
        try:
            value = self._data[key]
        except KeyError:
            raise StateNotFoundError(f'reading "{key}" from cycleState: not found') from None
        if not isinstance(value, kind):
            raise TypeError(f"{value!r} convert to {kind.__name__} error")
        return value

    def clone(self) -> CycleState:
        """A copy whose entries are cloned (``CycleState.Clone``)."""
        copy = CycleState()
        copy._data = {key: value.clone() for key, value in self._data.items()}
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        copy.feasible_rows = self.feasible_rows
        return copy
