"""YAML text that Kubernetes tools read back as the values it was written from.

PyYAML's emitter decides whether a string may be written plain with its own YAML 1.1
resolver, which is not the resolver kubectl and the API machinery read with (goyaml.v2,
see :mod:`topospread.io.yamlread`): ``9715e4``, ``1_000`` or ``0o17`` are strings to
PyYAML and numbers to goyaml.v2, so a label value such as ``9715e4`` written plain comes
back as the float 97150000 ("expected string, got number"). Every string that goyaml.v2
would not read back as that same string is written double-quoted.
"""

from __future__ import annotations

from typing import Any

import yaml

from topospread.io.yamlread import resolve_plain_scalar

__all__ = ["dump_yaml"]

_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _GoReadableDumper(_BaseDumper):  # type: ignore[misc]
    """The C dumper with strings quoted wherever goyaml.v2 would resolve them otherwise."""


def _represent_str(dumper: Any, text: str) -> Any:
    if resolve_plain_scalar(text) is not text:
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
    return dumper.represent_str(text)


_GoReadableDumper.add_representer(str, _represent_str)


def dump_yaml(document: Any) -> str:
    """``document`` as block-style YAML, keys in their given order, one line per scalar."""
    text: str = yaml.dump(
        document,
        Dumper=_GoReadableDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    return text
