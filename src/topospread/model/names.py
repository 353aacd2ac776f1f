"""Syntax checks for label keys, label values and DNS names, worded as the API server words them.

Each check returns the list of problems found, empty when the value is valid, exactly
like k8s.io/apimachinery's ``pkg/api/validate/content`` functions (``IsLabelKey``,
``IsLabelValue``, ``IsDNS1123Subdomain``, ``IsDNS1123Label``) that
``pkg/util/validation`` re-exports as ``IsQualifiedName`` and ``IsValidLabelValue``.
The messages, including the quoted regular expressions and examples, are the ones
users see from ``kubectl apply``.

Lengths are counted in bytes of UTF-8, as Go's ``len`` counts them.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_KEY_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "empty_error",
    "is_decimal_integer",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_key",
    "is_qualified_name",
    "is_valid_label_value",
    "max_len_error",
    "regex_error",
]

LABEL_KEY_MAX_LENGTH: Final = 63
LABEL_VALUE_MAX_LENGTH: Final = 63
DNS1123_LABEL_MAX_LENGTH: Final = 63
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253

_LABEL_KEY_CHAR_FMT: Final = "[A-Za-z0-9]"
_LABEL_KEY_EXT_CHAR_FMT: Final = "[-A-Za-z0-9_.]"
_LABEL_KEY_FMT: Final = f"({_LABEL_KEY_CHAR_FMT}{_LABEL_KEY_EXT_CHAR_FMT}*)?{_LABEL_KEY_CHAR_FMT}"
_LABEL_KEY_ERR_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)

_LABEL_VALUE_FMT: Final = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_ERR_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
    "or '-', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_RE: Final = re.compile(_DNS1123_LABEL_FMT)

_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_ERR_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)

_DECIMAL_INTEGER_ERR_MSG: Final = "must be a valid decimal integer in canonical form"


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8"))


def _matches(pattern: re.Pattern[str], value: str) -> bool:
    # Go anchors these patterns with ^...$; fullmatch is the equivalent (Python's $
    # would also accept a trailing newline).
    return pattern.fullmatch(value) is not None


def regex_error(msg: str, regex: str, *examples: str) -> str:
    """The message for a value that does not match ``regex``, as ``content.RegexError`` words it."""
    if not examples:
        return f"{msg} (regex used for validation is '{regex}')"
    quoted = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {quoted}regex used for validation is '{regex}')"


def max_len_error(length: int) -> str:
    """The message for a value longer than ``length`` bytes."""
    return f"must be no more than {length} bytes"


def empty_error() -> str:
    """The message for a value that must not be empty."""
    return "must be non-empty"


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with ``value`` as a lowercase RFC 1123 subdomain (a node or object name)."""
    errs: list[str] = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _matches(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """Problems with ``value`` as a lowercase RFC 1123 label (a namespace name)."""
    errs: list[str] = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1123_LABEL_RE, value):
        # A valid subdomain that is not a valid label can only be wrong by its dots,
        # the length having been checked already.
        if _matches(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(
                regex_error(_DNS1123_LABEL_ERR_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc")
            )
    return errs


def is_label_key(value: str) -> list[str]:
    """Problems with ``value`` as a label key: an optional DNS subdomain prefix and ``/``, a name.

    This is ``IsQualifiedName`` too; the two are the same check upstream.
    """
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        # More than one '/': upstream reports this alone and checks nothing else.
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_ERR_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif _byte_len(name) > LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + max_len_error(LABEL_KEY_MAX_LENGTH))
    # The pattern is checked even after an empty or over-long name, so an empty name
    # yields two messages, as upstream.
    if not _matches(_LABEL_KEY_RE, name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_ERR_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


is_qualified_name = is_label_key
"""``validation.IsQualifiedName``: the label key check under its older name."""


def is_valid_label_value(value: str) -> list[str]:
    """Problems with ``value`` as a label value (empty is valid)."""
    errs: list[str] = []
    if _byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _matches(_LABEL_VALUE_RE, value):
        errs.append(
            regex_error(_LABEL_VALUE_ERR_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


def is_decimal_integer(value: str) -> list[str]:
    """Problems with ``value`` as a canonical decimal integer (``content.IsDecimalInteger``)."""
    if not value:
        return [empty_error()]
    digits = value[1:] if value[0] == "-" else value
    if not digits:
        return [_DECIMAL_INTEGER_ERR_MSG]
    if digits[0] == "0":
        # Only a bare "0" is canonical; "-0" and leading zeros are not.
        return [] if value == "0" else [_DECIMAL_INTEGER_ERR_MSG]
    if not all("0" <= ch <= "9" for ch in digits):
        return [_DECIMAL_INTEGER_ERR_MSG]
    return []
