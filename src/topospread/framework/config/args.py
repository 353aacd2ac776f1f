"""Args of plugins from outside the package: how their ``pluginConfig`` args are decoded.

kube-scheduler decodes a plugin's ``pluginConfig[].args`` strictly with the ``<Name>Args``
kind registered in its scheme; an out-of-tree plugin compiled into the binary registers
its own kind there, and its args are then decoded, defaulted and refused exactly like an
in-tree plugin's. Here a plugin from another distribution does the same by giving its
factory an :data:`ArgsDecoder` (see
:class:`~topospread.framework.runtime.PluginFactoryWithArgs`):

* the decoder receives the args object as written (a JSON-like mapping; ``{}`` when the
  plugin is enabled without a ``pluginConfig`` entry, as upstream defaults a registered
  kind) and returns the plugin's typed, defaulted args;
* it refuses args by raising :class:`ArgsError` with the unknown fields (found with
  :func:`unknown_fields`) and every other problem as a
  :class:`~topospread.errors.FieldError` whose path is relative to ``args``.

:func:`~topospread.framework.config.decode.decode_configuration` words those problems as
it words an in-tree plugin's: ``decoding .profiles[0].pluginConfig[1]: decoding args for
plugin RatioSpread: strict decoding error: unknown field "policies[0].ratio"`` and
``profiles[0].pluginConfig[1].args.policies[0].maxSkew: Invalid value: 0: ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from topospread.errors import FieldError, go_quote
from topospread.framework.config.strict import _LIST, _unknown

__all__ = ["ArgsDecoder", "ArgsError", "FieldSpec", "prefixed", "unknown_fields"]

ArgsDecoder: TypeAlias = Callable[[Mapping[str, Any]], object]
"""Decodes one plugin's args object strictly into its typed, defaulted args."""

FieldSpec: TypeAlias = "Mapping[str, FieldSpec] | tuple[FieldSpec] | None"
"""The known fields of an args object: ``None`` for a field whose value is not checked
for fields (a scalar, or a map with free keys), a mapping for a nested object, a
one-element tuple for a list of the element's spec."""


class ArgsError(Exception):
    """A plugin's args refused by its decoder."""

    def __init__(self, *, unknown: Sequence[str] = (), errors: Sequence[FieldError] = ()) -> None:
        self.unknown = tuple(unknown)
        """Paths of unknown fields, relative to ``args`` (``policies[0].ratio``)."""
        self.errors = tuple(errors)
        """Every other problem, each with a path relative to ``args``."""
        super().__init__("; ".join([*self.unknown_messages(), *map(str, errors)]))

    def unknown_messages(self) -> list[str]:
        """The unknown fields in the strict codec's words."""
        return [f"strict decoding error: unknown field {go_quote(p)}" for p in self.unknown]


def _spec(spec: FieldSpec) -> Any:
    if spec is None:
        return "any"
    if isinstance(spec, tuple):
        return _LIST(_spec(spec[0]))
    return {key: _spec(value) for key, value in spec.items()}


def unknown_fields(args: Mapping[str, Any], fields: Mapping[str, FieldSpec]) -> list[str]:
    """The paths of the fields of ``args`` that ``fields`` does not know, sorted, as the
    strict codec finds them (case-sensitive names; ``apiVersion`` and ``kind`` are always
    known, as every args kind embeds ``TypeMeta``)."""
    found: list[str] = []
    _unknown(dict(args), {"apiVersion": "any", "kind": "any", **_spec(fields)}, "", found)
    return found


def prefixed(path: str, errors: Iterable[FieldError]) -> list[FieldError]:
    """``errors`` with their relative paths put under ``path`` (``profiles[0].…args``)."""
    return [
        FieldError(
            e.type,
            f"{path}.{e.field}" if e.field and not e.field.startswith("[") else f"{path}{e.field}",
            e.value,
            e.detail,
        )
        for e in errors
    ]
