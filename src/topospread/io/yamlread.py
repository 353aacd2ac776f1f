"""YAML to JSON values as sigs.k8s.io/yaml v1.6.0 reads them (its goyaml.v2 fork).

Kubernetes tools read YAML with ``yaml.YAMLToJSON``: goyaml.v2 decodes the document into
``interface{}`` values with YAML 1.1-ish resolution of plain scalars (``resolve.go``),
``convertToJSONableObject`` turns map keys into strings, and ``encoding/json`` marshals
the result. This module gives the same JSON values as Python objects, from libyaml's
event stream (PyYAML's C parser; goyaml.v2 is a port of libyaml, so both accept and
refuse the same syntax), built iteratively so that nesting cannot exhaust the stack.

Rules, each from upstream:

- Plain scalars (``resolve.go``): ``y Y yes Yes YES true True TRUE on On ON`` are true,
  ``n N no No NO false False FALSE off Off OFF`` false, ``"" ~ null Null NULL`` null;
  ``.inf .nan`` and their spellings are floats (which ``encoding/json`` refuses: "json:
  unsupported value: +Inf"). Scalars starting with a digit or sign are tried, underscores
  removed, as ``strconv.ParseInt(s, 0, 64)`` (so ``0x1F``, ``0o17``, ``017``, ``0b1`` are
  integers), then ``ParseUint``, then as a float if they match
  ``^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$`` and do not overflow;
  sexagesimal ``1:00`` stays a string. Scalars starting with ``.`` are tried as floats.
- Timestamps stay the text they were written as (goyaml.v2 keeps a timestamp decoded into
  ``interface{}`` as its string); ``!!timestamp`` on text that is not one is an error.
- ``!!binary`` is base64-decoded into a string (``\\r`` and ``\\n`` ignored, as Go's
  decoder does); ``!!str`` keeps text; ``!!int``, ``!!float``, ``!!bool``, ``!!null``
  must resolve to their type ("cannot decode !!str `abc` as a !!int"), an integer being
  accepted as a ``!!float``. Other tags on scalars and every tag on collections
  (``!!set``, ``!!omap``) are ignored: a ``!!set`` is a mapping of nulls.
- Map keys become strings: integers in decimal, floats as ``FormatFloat(f, 'g', -1, 32)``,
  booleans ``true``/``false``; a null, list or map key is an error. ``<<`` merges
  mappings (goyaml.v2's merge keys). A key given twice is refused, as the strict
  converter (``YAMLToJSONStrict``, what kubectl applies) refuses it.
- Aliases are limited as goyaml.v2 limits them (``allowedAliasRatio``: "document contains
  excessive aliasing"), and nesting to :data:`MAX_DEPTH`.
- Documents are split on lines starting with ``---`` as
  ``k8s.io/apimachinery/pkg/util/yaml.YAMLReader`` splits them (only a comment may follow
  the marker); of each piece the first YAML document is read, as ``yaml.Unmarshal`` does.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
import struct
from datetime import datetime
from typing import Any, Final

from yaml import MarkedYAMLError, YAMLError
from yaml._yaml import CParser
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from topospread.errors import cut, go_quote

__all__ = ["MAX_DEPTH", "YamlSyntaxError", "parse_yaml_documents", "resolve_plain_scalar"]

MAX_DEPTH: Final = 1000
"""The deepest nesting of mappings and sequences accepted (a Kubernetes object nests about
fifteen deep; goyaml.v2 stops at 10,000, JSON decoders here at 1,024)."""


class YamlSyntaxError(ValueError):
    """A document sigs.k8s.io/yaml refuses; the message is goyaml.v2's where it has one."""


_TRUE = ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
_FALSE = ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
_NAN = float("nan")
_INF = float("inf")
_MAP: Final[dict[str, Any]] = {
    **dict.fromkeys(_TRUE, True),
    **dict.fromkeys(_FALSE, False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), _NAN),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), _INF),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -_INF),
}
_MERGE = "<<"
# resolve_table: the first byte decides which resolutions are tried.
_HINT_NUMBER = frozenset("+-0123456789")
_HINT_MAP = frozenset("yYnNtTfFoO~")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_INT = re.compile(
    r"(?P<sign>[-+]?)(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)"
    r"|0(?P<oct0>[0-7]*)|(?P<dec>[1-9][0-9]*))"
)
_GO_FLOAT = re.compile(
    r"[-+]?(?:(?:[0-9](?:_?[0-9])*)?\.?(?:[0-9](?:_?[0-9])*)?(?:[eE][-+]?[0-9](?:_?[0-9])*)?"
    r"|inf|infinity|nan)",
    re.IGNORECASE,
)
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1

_STR = "tag:yaml.org,2002:str"
_BINARY = "tag:yaml.org,2002:binary"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_RESOLVABLE = frozenset({_STR, _BOOL, _INT, _FLOAT, _TIMESTAMP})
_TIMESTAMP_FORMS = (
    re.compile(
        r"(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?"
        r"(Z|[-+]\d{2}:\d{2})"
    ),
    re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?()"),
    re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})()()()()()"),
)


def _short(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org") else tag


def _is_timestamp(text: str) -> bool:
    # parseTimestamp: four digits and '-', then one of allowedTimestampFormats (time.Parse,
    # which checks the calendar: 2023-02-29 is not a date).
    if len(text) < 5 or not text[:4].isdigit() or text[4] != "-":
        return False
    for form in _TIMESTAMP_FORMS:
        match = form.fullmatch(text)
        if match is None:
            continue
        year, month, day, hour, minute, second = (int(g) if g else 0 for g in match.groups()[:6])
        try:
            datetime(year, month, day, hour, minute, second)
        except ValueError:
            continue
        return True
    return False


def _go_parse_int(text: str) -> int | None:
    # strconv.ParseInt(s, 0, 64), falling back to ParseUint (no sign) for values above int64.
    match = _GO_INT.fullmatch(text)
    if match is None:
        return None
    groups = match.groupdict()
    base, text = next(
        (base, groups[name])
        for name, base in (("hex", 16), ("oct", 8), ("bin", 2), ("oct0", 8), ("dec", 10))
        if groups[name] is not None
    )
    digits = text.lstrip("0") or "0"
    if len(digits) > 64:
        # More digits than any 64-bit value has in base 2 or more: out of range.
        return None
    value = int(digits, base)
    if groups["sign"] == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if value <= _UINT64_MAX and not groups["sign"]:
        return value
    return None


def _go_parse_float(text: str) -> float | None:
    # strconv.ParseFloat(s, 64): Go float syntax (underscores between digits, inf, nan);
    # an out-of-range value is an error (ErrRange), so it is not a float.
    if not _GO_FLOAT.fullmatch(text) or not any(c.isalnum() for c in text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if value in (_INF, -_INF) and "inf" not in text.lower():
        return None
    return value


def resolve_plain_scalar(text: str) -> Any:
    """goyaml.v2's ``resolve("", text)`` of a plain scalar: its value (``text`` for strings)."""
    if text.isdigit() and text.isascii() and len(text) < 19 and (text[0] != "0" or len(text) == 1):
        # The common case, a small decimal integer (ParseInt's answer, without the regex).
        return int(text)
    if not text:
        return None
    first = text[0]
    if first in _HINT_MAP or first == ".":
        value = _MAP.get(text, text)
        if value is text and first == ".":
            number = _go_parse_float(text)
            return text if number is None else number
        return value
    if first in _HINT_NUMBER:
        found = _MAP.get(text, _MISSING)
        if found is not _MISSING:
            return found
        plain = text.replace("_", "") if "_" in text else text
        integer = _go_parse_int(plain)
        if integer is not None:
            return integer
        if _YAML_FLOAT.fullmatch(plain):
            number = _go_parse_float(plain)
            if number is not None:
                return number
        if plain.startswith(("0b", "-0b")):
            digits = plain[2:] if plain[0] == "0" else plain[3:]
            if digits and set(digits) <= {"0", "1"}:
                value = int(digits, 2) * (-1 if plain[0] == "-" else 1)
                if _INT64_MIN <= value <= _UINT64_MAX:
                    return value
    return text


_MISSING = object()
_MERGE_KEY = object()


def _kind_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if value is None:
        return "null"
    return "str"


def _resolve_tagged(tag: str, text: str) -> Any:
    if tag == _BINARY:
        try:
            data = base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            raise YamlSyntaxError("!!binary value contains invalid base64 data") from None
        return data.decode("utf-8", errors="replace")
    if tag == _STR:
        return text
    if tag == _NULL:
        if text in ("", "~", "null", "Null", "NULL"):
            return None
        raise YamlSyntaxError(
            f"cannot decode !!{_kind_name(resolve_plain_scalar(text))} `{cut(text)}` as a !!null"
        )
    if tag not in _RESOLVABLE:
        return text
    if tag == _TIMESTAMP:
        if _is_timestamp(text):
            return text
        raise YamlSyntaxError(
            f"cannot decode !!{_kind_name(resolve_plain_scalar(text))} `{cut(text)}` "
            "as a !!timestamp"
        )
    value = resolve_plain_scalar(text)
    kind = _kind_name(value)
    if value is text and _is_timestamp(text):
        kind = "timestamp"
    wanted = {_INT: "int", _FLOAT: "float", _BOOL: "bool"}[tag]
    if kind == wanted:
        return value
    if wanted == "float" and kind == "int":
        return float(value)
    raise YamlSyntaxError(f"cannot decode !!{kind} `{cut(text)}` as a !!{wanted}")


def _float32_key(value: float) -> str:
    # strconv.FormatFloat(f, 'g', -1, 32): the shortest decimal that reads back as the same
    # float32, in %e form when the exponent is < -4 or >= 6 (shortest 'g' uses precision 6).
    if value != value:
        return ".nan"
    if value in (_INF, -_INF):
        return ".inf" if value > 0 else "-.inf"
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return ".inf" if value > 0 else "-.inf"
    if single == 0:
        return "-0" if str(single).startswith("-") else "0"
    for digits in range(1, 10):
        text = f"{single:.{digits}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    sign = "-" if mantissa.startswith("-") else ""
    significand = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    if exponent < -4 or exponent >= 6:
        body = significand[0] + ("." + significand[1:] if len(significand) > 1 else "")
        return f"{sign}{body}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{significand}"
    if point >= len(significand):
        return sign + significand + "0" * (point - len(significand))
    return f"{sign}{significand[:point]}.{significand[point:]}"


def _key_string(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        if key > _INT64_MAX:
            raise YamlSyntaxError(f"unsupported map key of type: uint64, key: {key}")
        return str(key)
    if isinstance(key, float):
        return _float32_key(key)
    if key is None:
        raise YamlSyntaxError("unsupported map key: null")
    kind = "a sequence" if isinstance(key, list) else "a mapping"
    raise YamlSyntaxError(f"invalid map key: {kind}")


def _allowed_alias_ratio(count: int) -> float:
    # goyaml.v2 decode.go allowedAliasRatio: 99% of decodes may come from aliases up to
    # 400,000 decodes, scaling down to 10% at 4,000,000.
    if count <= 400_000:
        return 0.99
    if count >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * ((count - 400_000) / 3_600_000)


def _check_json(value: Any) -> None:
    if value != value:
        raise YamlSyntaxError("json: unsupported value: NaN")
    raise YamlSyntaxError(f"json: unsupported value: {'+Inf' if value > 0 else '-Inf'}")


def _line(event: Any) -> int:
    mark = getattr(event, "start_mark", None)
    return (mark.line + 1) if mark is not None else 0


def _read_document(parser: Any) -> Any:
    """Build the next document's value from the event stream (StreamEnd: ``_MISSING``).

    One loop over libyaml's events with the open collections on an explicit stack (no
    recursion, whatever the nesting); the current collection and its pending key are kept
    in locals, the hot path being a plain scalar placed in a mapping.
    """
    get = parser.get_event
    event = get()
    if isinstance(event, StreamStartEvent):
        event = get()
    if isinstance(event, StreamEndEvent):
        return _MISSING
    if not isinstance(event, DocumentStartEvent):
        raise YamlSyntaxError("did not find expected <document start>")
    anchors: dict[str, tuple[Any, int]] = {}
    # The enclosing collections: (container, is_map, pending key, anchor, count at start).
    stack: list[tuple[Any, bool, Any, str | None, int]] = []
    root: list[Any] = []
    cur: Any = root
    cur_is_map = False
    key: Any = _MISSING
    count = 0
    alias_count = 0
    scalar_cls, mapping_cls, sequence_cls = ScalarEvent, MappingStartEvent, SequenceStartEvent
    map_end, seq_end, alias_cls = MappingEndEvent, SequenceEndEvent, AliasEvent
    resolve, table = resolve_plain_scalar, _MAP
    float_cls, str_cls = float, str
    numeric = _HINT_NUMBER | {"."}
    missing, merge_key = _MISSING, _MERGE_KEY
    merged: dict[int, tuple[dict[str, Any], set[str]]] = {}

    while True:
        event = get()
        cls = event.__class__
        count += 1
        if alias_count > 100 and count > 1000 and alias_count / count > _allowed_alias_ratio(count):
            raise YamlSyntaxError("document contains excessive aliasing")
        if cls is scalar_cls:
            text = event.value
            tag = event.tag
            if tag is None and event.implicit[0]:
                if text[:1] in numeric:
                    value = resolve(text)
                    if value.__class__ is float_cls and (value != value or value in (_INF, -_INF)):
                        _check_json(value)
                else:
                    value = table.get(text, text)
                    if value.__class__ is float_cls:
                        _check_json(value)
                if cur_is_map and key is missing and text == _MERGE:
                    key = merge_key
                    count -= 1
                    continue
            elif tag is None or tag == "!":
                value = text
            else:
                if cur_is_map and key is missing and tag == _MERGE_TAG:
                    key = merge_key
                    count -= 1
                    continue
                try:
                    value = _resolve_tagged(tag, text)
                except YamlSyntaxError as exc:
                    raise YamlSyntaxError(f"line {_line(event)}: {exc}") from None
                if value.__class__ is float_cls and (value != value or value in (_INF, -_INF)):
                    _check_json(value)
            if event.anchor is not None:
                anchors[event.anchor] = (value, 1)
        elif cls is mapping_cls or cls is sequence_cls:
            if len(stack) >= MAX_DEPTH:
                raise YamlSyntaxError(
                    f"line {_line(event)}: exceeded the maximum nesting depth of {MAX_DEPTH}"
                )
            if cur_is_map and key is missing:
                kind = "a mapping" if cls is mapping_cls else "a sequence"
                raise YamlSyntaxError(f"line {_line(event)}: invalid map key: {kind}")
            stack.append((cur, cur_is_map, key, event.anchor, count))
            cur_is_map = cls is mapping_cls
            cur = {} if cur_is_map else []
            key = missing
            continue
        elif cls is map_end or cls is seq_end:
            value = cur
            cur, cur_is_map, key, anchor, started = stack.pop()
            if anchor is not None:
                anchors[anchor] = (value, count - started + 1)
        elif cls is alias_cls:
            found = anchors.get(event.anchor)
            if found is None:
                raise YamlSyntaxError(
                    f"line {_line(event)}: unknown anchor '{event.anchor}' referenced"
                )
            value, size = found
            count += size
            alias_count += size
            if (
                alias_count > 100
                and count > 1000
                and alias_count / count > _allowed_alias_ratio(count)
            ):
                raise YamlSyntaxError("document contains excessive aliasing")
            if cur_is_map and key is missing and isinstance(value, list | dict):
                kind = "a sequence" if isinstance(value, list) else "a mapping"
                raise YamlSyntaxError(f"line {_line(event)}: invalid map key: {kind}")
        elif cls is DocumentEndEvent:
            return root[0] if root else None
        else:
            raise YamlSyntaxError(f"unexpected YAML event {cls.__name__}")
        # Place the finished value in the current collection.
        if not cur_is_map:
            cur.append(value)
        elif key is missing:
            key = value
        elif key is merge_key:
            # Keys a merge brings in may be given again after it (they override).
            key = missing
            before = set(cur)
            _merge(cur, value, event)
            merged.setdefault(id(cur), (cur, set()))[1].update(set(cur) - before)
        else:
            name = key if key.__class__ is str_cls else _key_string(key)
            if name in cur and not _overridable(merged, cur, name):
                # goyaml's words (the strict YAML-to-JSON conversion), then the API server's
                # strict field validation's, with the field's path in the object.
                raise YamlSyntaxError(
                    f"line {_line(event)}: key {_go_quote_key(key)} already set in map "
                    f"(strict decoding error: duplicate field {go_quote(_field_path(stack, name))})"
                )
            cur[name] = value
            key = missing


def _field_path(stack: list[tuple[Any, bool, Any, str | None, int]], name: str) -> str:
    # The path of key ``name`` of the mapping being built: each enclosing collection holds
    # the one inside it at its pending key (a mapping) or at its next index (a sequence).
    path = ""
    for container, is_map, key, _, _ in stack[1:]:
        if is_map:
            text = key if isinstance(key, str) else _key_string(key)
            path = f"{path}.{text}" if path else text
        else:
            path = f"{path}[{len(container)}]"
    return f"{path}.{name}" if path else name


def _overridable(merged: dict[int, tuple[dict[str, Any], set[str]]], cur: Any, name: str) -> bool:
    entry = merged.get(id(cur))
    return entry is not None and entry[0] is cur and name in entry[1]


def _go_quote_key(key: Any) -> str:
    if isinstance(key, str):
        return go_quote(cut(key))
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _merge(target: dict[str, Any], value: Any, event: Any) -> None:
    # decoder.merge: a mapping, or a sequence of mappings (earlier ones take precedence).
    if isinstance(value, dict):
        target.update(value)
        return
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        for item in reversed(value):
            target.update(item)
        return
    raise YamlSyntaxError(
        f"line {_line(event)}: map merge requires map or sequence of maps as the value"
    )


_SEPARATOR = re.compile(rb"^---(.*)$", re.MULTILINE)


def _split_documents(data: bytes) -> list[bytes]:
    # YAMLReader.Read: a line starting with "---" ends a document; only a comment may follow.
    if not data.startswith(b"---") and b"\n---" not in data:
        return [data] if data.strip() else []
    pieces: list[bytes] = []
    start = 0
    for match in _SEPARATOR.finditer(data):
        rest = match.group(1).strip()
        if rest and not rest.startswith(b"#"):
            text = rest[:60].decode("utf-8", errors="replace")
            raise YamlSyntaxError(f"invalid Yaml document separator: {text}")
        pieces.append(data[start : match.start()])
        start = match.end() + 1
    pieces.append(data[start:])
    return [piece for piece in pieces if piece.strip()]


_MANAGED_FIELDS_KEY = re.compile(rb"managedFields:[ \t]*\n")
_BLOCKS: dict[int, re.Pattern[bytes]] = {}


def _block_pattern(indent: int) -> re.Pattern[bytes]:
    # The lines of a block under a key at ``indent``: blank, deeper, or "- " at the same
    # indentation (goyaml.v2 and kubectl write sequences unindented under their key).
    pattern = _BLOCKS.get(indent)
    if pattern is None:
        spaces = b" " * indent
        pattern = re.compile(
            rb"(?:[ \t]*\n|" + spaces + rb" [^\n]*\n|" + spaces + rb"-(?:[ \t][^\n]*)?\n)+"
        )
        _BLOCKS[indent] = pattern
    return pattern


# What a block may not contain to be checked by syntax alone: anchors, aliases, tags,
# merge keys and the floats JSON cannot hold all need the full reading.
_NEEDS_READING = re.compile(rb"[&*!]|<<|\.(?:inf|Inf|INF|nan|NaN|NAN)\b")


def _cut_managed_fields(piece: bytes) -> tuple[bytes, str, int] | None:
    """``piece`` with each block-style ``managedFields`` replaced by a marker, or None.

    ``metadata.managedFields`` (the server-side-apply field sets) is most of a kubectl
    capture and nothing the scheduler reads. A block that libyaml parses on its own and
    that holds nothing whose JSON value could fail (anchors, tags, merges, .inf) is
    replaced by a marker string; the caller checks that every marker ends up exactly at
    some object's ``metadata.managedFields`` and reads the whole piece otherwise.
    Duplicate keys inside a skipped block are not looked for (the oracle, reading with
    the non-strict ``YAMLToJSON``, takes the last).
    """
    blocks: list[bytes] = []
    nonce = secrets.token_hex(8).encode()
    out: list[bytes] = []
    done = 0
    for key in _MANAGED_FIELDS_KEY.finditer(piece):
        line_start = piece.rfind(b"\n", 0, key.start()) + 1
        indent = key.start() - line_start
        if key.start() < done or piece[line_start : key.start()] != b" " * indent:
            continue
        block = _block_pattern(indent).match(piece, key.end())
        if block is None or _NEEDS_READING.search(block.group(0)):
            continue
        out.append(piece[done : key.start()])
        out.append(b"managedFields: __skipped_%s_%d__\n" % (nonce, len(blocks)))
        blocks.append(block.group(0))
        done = block.end()
    out.append(piece[done:])
    cut = b"".join(out)
    if not blocks:
        return None
    parser = CParser(b"".join(b"---\nmanagedFields:\n" + block for block in blocks))
    try:
        parser.raw_parse()
    except YAMLError:
        return None
    finally:
        parser.dispose()
    return cut, f"__skipped_{nonce.decode()}_", len(blocks)


def _drop_markers(document: Any, prefix: str) -> int:
    # Remove each marker from metadata.managedFields of the objects (and List items).
    found = 0
    items = document.get("items") if isinstance(document, dict) else None
    for obj in items if isinstance(items, list) else (document,):
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict):
            continue
        value = meta.get("managedFields")
        if isinstance(value, str) and value.startswith(prefix):
            del meta["managedFields"]
            found += 1
    return found


def parse_yaml_documents(data: bytes, *, skip_managed_fields: bool = False) -> list[Any]:
    """The JSON value of every document of ``data``, as sigs.k8s.io/yaml converts them.

    Empty documents give ``None``. Raises :class:`YamlSyntaxError` with goyaml.v2's words
    (prefixed by ``document N:`` when there are several documents). With
    ``skip_managed_fields`` the ``metadata.managedFields`` of objects are checked for
    syntax but not built (and are absent from the result): for readers that never look
    at them.
    """
    pieces = _split_documents(data)
    documents: list[Any] = []
    for index, piece in enumerate(pieces):
        try:
            value = _MISSING
            if skip_managed_fields and b"managedFields:" in piece:
                skipped = _cut_managed_fields(piece)
                if skipped is not None:
                    cut, prefix, count = skipped
                    value = _read_piece(cut)
                    if _drop_markers(value, prefix) != count:
                        value = _MISSING
            if value is _MISSING:
                value = _read_piece(piece)
        except YamlSyntaxError as exc:
            raise _numbered(exc, index, len(pieces)) from None
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = exc.problem or exc.context or "unknown problem parsing YAML content"
            raise _numbered(YamlSyntaxError(f"{where}{problem}"), index, len(pieces)) from None
        except YAMLError as exc:
            raise _numbered(YamlSyntaxError(str(exc).splitlines()[0]), index, len(pieces)) from None
        documents.append(value)
    return documents


def _read_piece(piece: bytes) -> Any:
    parser = CParser(piece)
    try:
        value = _read_document(parser)
    finally:
        parser.dispose()
    return None if value is _MISSING else value


def _numbered(exc: YamlSyntaxError, index: int, total: int) -> YamlSyntaxError:
    if total == 1:
        return YamlSyntaxError(f"yaml: {exc}")
    return YamlSyntaxError(f"document {index + 1}: yaml: {exc}")
